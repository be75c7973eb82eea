/* libconvlab's API (include/convlab/convlab.h): the problem handle, the verdict, the result's accessors.
 * The verdict is convlab explain's own: the tensors become the runner's inputs and its one candidate
 * row, and harness/explain_outputs.h runs them and says the words, as it does for the program. What is
 * here is only what a library adds: arguments checked as values with a message, device memory copied to
 * the host (host_memory.h), and every string kept in the result. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convlab/convlab.h"
#include "harness/explain_outputs.h"
#include "harness/input_files.h"
#include "harness/report.h"
#include "lib/host_memory.h"
#include "numerics/bounds.h"
#include "reference/dtype.h"

#define VERSION_TEXT_(a, b, c) #a "." #b "." #c
#define VERSION_TEXT(a, b, c) VERSION_TEXT_(a, b, c)

struct convlab_problem {
  c1d_shape shape;
};

struct convlab_result {
  convlab_verdict verdict;
  char where[16];
  double detection_limit;
  char headline[600], region[512];
  char *reason, *text, *summary, *json; /* owned */
};

// --- errors ----------------------------------------------------------------------------------------

static _Thread_local char last_error[512];

static convlab_status fail(convlab_status st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static convlab_status fail(convlab_status st, const char *fmt, ...) {
  char line[sizeof last_error];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  memcpy(last_error, line, sizeof line);
  return st;
}

/* A failure of convlab's own code: its status as the API's, its detail as the message. */
static convlab_status failed(c1d_status st) {
  const char *detail = c1d_error_detail();
  convlab_status out;
  switch (st) {
    case C1D_OK: return CONVLAB_OK;
    case C1D_ERR_INVALID_SHAPE: out = CONVLAB_ERR_INVALID_SHAPE; break;
    case C1D_ERR_OVERFLOW: out = CONVLAB_ERR_OVERFLOW; break;
    case C1D_ERR_NO_MEMORY: out = CONVLAB_ERR_NO_MEMORY; break;
    case C1D_ERR_NONFINITE: out = CONVLAB_ERR_NONFINITE; break;
    case C1D_ERR_USAGE: out = CONVLAB_ERR_INVALID_ARGUMENT; break;
    case C1D_ERR_NO_DEVICE:
    case C1D_ERR_DEVICE_MEMORY:
    case C1D_ERR_CUDA:
    case C1D_ERR_CUDNN:
    case C1D_ERR_CUBLAS: out = CONVLAB_ERR_DEVICE; break;
    default: out = CONVLAB_ERR_INTERNAL;
  }
  return fail(out, "%s", detail[0] ? detail : c1d_strerror(st));
}

const char *convlab_version(void) {
  return VERSION_TEXT(CONVLAB_VERSION_MAJOR, CONVLAB_VERSION_MINOR, CONVLAB_VERSION_PATCH);
}

int convlab_has_cuda(void) {
#ifdef C1D_HAVE_CUDA
  return 1;
#else
  return 0;
#endif
}

const char *convlab_last_error(void) { return last_error; }

const char *convlab_status_name(convlab_status status) {
  switch (status) {
    case CONVLAB_OK: return "ok";
    case CONVLAB_ERR_INVALID_ARGUMENT: return "invalid argument";
    case CONVLAB_ERR_INVALID_SHAPE: return "invalid shape";
    case CONVLAB_ERR_OVERFLOW: return "size overflow";
    case CONVLAB_ERR_NONFINITE: return "non-finite input";
    case CONVLAB_ERR_NO_MEMORY: return "out of host memory";
    case CONVLAB_ERR_DEVICE: return "CUDA error";
    case CONVLAB_ERR_INTERNAL: return "internal error";
  }
  return "unknown status";
}

/* The two enums list the verdicts in one order (checked here, at compile time). */
_Static_assert((int)CONVLAB_FP32_ROUNDING == (int)C1D_VERDICT_FP32_ROUNDING &&
                   (int)CONVLAB_INCONCLUSIVE == (int)C1D_VERDICT_INCONCLUSIVE &&
                   (int)CONVLAB_VERDICT_COUNT == (int)C1D_VERDICT_COUNT,
               "convlab_verdict and c1d_verdict differ");

const char *convlab_verdict_name(convlab_verdict verdict) {
  if ((unsigned)verdict >= CONVLAB_VERDICT_COUNT) return "?";
  return c1d_verdict_name((c1d_verdict)verdict);
}

// --- the problem -----------------------------------------------------------------------------------

/* Commits s into p when it validates; else p is unchanged and the message names the size. */
static convlab_status commit(convlab_problem *p, const c1d_shape *s) {
  c1d_status st = c1d_shape_validate(s);
  if (st != C1D_OK) return failed(st);
  p->shape = *s;
  return CONVLAB_OK;
}

convlab_status convlab_problem_create(convlab_problem **out, int64_t N, int64_t C, int64_t O, int64_t L, int64_t K) {
  if (!out) return fail(CONVLAB_ERR_INVALID_ARGUMENT, "convlab_problem_create: out is NULL");
  *out = NULL;
  convlab_problem *p = calloc(1, sizeof *p);
  if (!p) return fail(CONVLAB_ERR_NO_MEMORY, "out of memory for a problem");
  const c1d_shape s = {.N = N, .C = C, .O = O, .L = L, .K = K, .D = 1, .G = 1};
  convlab_status st = commit(p, &s);
  if (st != CONVLAB_OK) {
    free(p);
    return st;
  }
  *out = p;
  return CONVLAB_OK;
}

convlab_status convlab_problem_create_from_shapes(convlab_problem **out, const int64_t x_shape[3],
                                                  const int64_t *w_shape, int w_ndim, const int64_t *b_shape,
                                                  const int64_t *states_shape, const int64_t y_shape[3], int64_t D,
                                                  int64_t groups, convlab_activation act, convlab_layout layout) {
  if (!out) return fail(CONVLAB_ERR_INVALID_ARGUMENT, "convlab_problem_create_from_shapes: out is NULL");
  *out = NULL;
  if (!x_shape || !w_shape || !y_shape)
    return fail(CONVLAB_ERR_INVALID_ARGUMENT, "convlab_problem_create_from_shapes: %s is NULL",
                !x_shape ? "x_shape" : !w_shape ? "w_shape" : "y_shape");
  if (w_ndim != 2 && w_ndim != 3)
    return fail(CONVLAB_ERR_INVALID_ARGUMENT, "w_ndim must be 3 (O, C/G, K) or 2 (C, K) (got %d)", w_ndim);
  if (groups < 0) return fail(CONVLAB_ERR_INVALID_SHAPE, "groups must be positive, or 0 for w's (got %lld)", (long long)groups);
  if (D < 1) return fail(CONVLAB_ERR_INVALID_SHAPE, "D (dilation) must be positive (got %lld)", (long long)D);
  if (act != CONVLAB_ACT_NONE && act != CONVLAB_ACT_SILU)
    return fail(CONVLAB_ERR_INVALID_ARGUMENT, "activation must be CONVLAB_ACT_NONE or CONVLAB_ACT_SILU (got %d)", (int)act);
  if (layout != CONVLAB_NCL && layout != CONVLAB_NLC)
    return fail(CONVLAB_ERR_INVALID_ARGUMENT, "layout must be CONVLAB_NCL or CONVLAB_NLC (got %d)", (int)layout);
  c1d_tensor_shape t[5];
  memset(t, 0, sizeof t);
  const int64_t *shapes[5] = {x_shape, w_shape, b_shape, states_shape, y_shape};
  const int ndims[5] = {3, w_ndim, 1, 3, 3};
  for (int i = 0; i < 5; i++)
    if (shapes[i]) {
      t[i].ndim = ndims[i];
      memcpy(t[i].shape, shapes[i], (size_t)ndims[i] * sizeof *shapes[i]);
    }
  const c1d_input_problem pb = {.D = D, .G = groups, .act = act == CONVLAB_ACT_SILU ? C1D_ACT_SILU : C1D_ACT_NONE,
                                .layout = layout == CONVLAB_NLC ? C1D_LAYOUT_NLC : C1D_LAYOUT_NCL};
  c1d_shape s;
  c1d_status st = c1d_input_shapes_derive(t, &pb, &s);
  if (st != C1D_OK) return failed(st);
  convlab_problem *p = calloc(1, sizeof *p);
  if (!p) return fail(CONVLAB_ERR_NO_MEMORY, "out of memory for a problem");
  p->shape = s;
  *out = p;
  return CONVLAB_OK;
}

void convlab_problem_destroy(convlab_problem *p) { free(p); }

/* The setters' common start: p must be a problem; s is the copy to change. */
#define SETTER_START(fn)                                                          \
  if (!p) return fail(CONVLAB_ERR_INVALID_ARGUMENT, "%s: the problem is NULL", fn); \
  c1d_shape s = p->shape

convlab_status convlab_problem_set_dilation(convlab_problem *p, int64_t D) {
  SETTER_START("convlab_problem_set_dilation");
  s.D = D;
  return commit(p, &s);
}

convlab_status convlab_problem_set_groups(convlab_problem *p, int64_t G) {
  SETTER_START("convlab_problem_set_groups");
  if (G < 1) return fail(CONVLAB_ERR_INVALID_SHAPE, "groups G must be positive (got %lld)", (long long)G);
  s.G = G;
  return commit(p, &s);
}

convlab_status convlab_problem_set_bias(convlab_problem *p, int has_bias) {
  SETTER_START("convlab_problem_set_bias");
  s.bias = has_bias != 0;
  return commit(p, &s);
}

convlab_status convlab_problem_set_initial_states(convlab_problem *p, int has_states) {
  SETTER_START("convlab_problem_set_initial_states");
  s.states = has_states != 0;
  return commit(p, &s);
}

convlab_status convlab_problem_set_activation(convlab_problem *p, convlab_activation act) {
  SETTER_START("convlab_problem_set_activation");
  if (act != CONVLAB_ACT_NONE && act != CONVLAB_ACT_SILU)
    return fail(CONVLAB_ERR_INVALID_ARGUMENT, "activation must be CONVLAB_ACT_NONE or CONVLAB_ACT_SILU (got %d)", (int)act);
  s.act = act == CONVLAB_ACT_SILU ? C1D_ACT_SILU : C1D_ACT_NONE;
  return commit(p, &s);
}

convlab_status convlab_problem_set_layout(convlab_problem *p, convlab_layout layout) {
  SETTER_START("convlab_problem_set_layout");
  if (layout != CONVLAB_NCL && layout != CONVLAB_NLC)
    return fail(CONVLAB_ERR_INVALID_ARGUMENT, "layout must be CONVLAB_NCL or CONVLAB_NLC (got %d)", (int)layout);
  s.layout = layout == CONVLAB_NLC ? C1D_LAYOUT_NLC : C1D_LAYOUT_NCL;
  return commit(p, &s);
}

convlab_status convlab_problem_set_dtype(convlab_problem *p, convlab_tensor tensor, convlab_dtype dtype) {
  SETTER_START("convlab_problem_set_dtype");
  static const c1d_dtype types[3] = {C1D_DTYPE_F32, C1D_DTYPE_BF16, C1D_DTYPE_F16};
  if ((unsigned)dtype >= 3)
    return fail(CONVLAB_ERR_INVALID_ARGUMENT, "dtype must be CONVLAB_F32, CONVLAB_BF16 or CONVLAB_F16 (got %d)", (int)dtype);
  const c1d_dtype d = types[dtype];
  switch (tensor) {
    case CONVLAB_X: s.dt.x = d; break;
    case CONVLAB_W: s.dt.w = d; break;
    case CONVLAB_B: s.dt.b = d; break;
    case CONVLAB_INITIAL_STATES: s.dt.s = d; break;
    case CONVLAB_Y: s.dt.y = d; break;
    case CONVLAB_ALL: s.dt = (c1d_dtypes){d, d, d, d, d}; break;
    default:
      return fail(CONVLAB_ERR_INVALID_ARGUMENT, "tensor must be CONVLAB_X, _W, _B, _INITIAL_STATES, _Y or _ALL (got %d)",
                  (int)tensor);
  }
  return commit(p, &s);
}

// --- the verdict -----------------------------------------------------------------------------------

/* The tensors of a call, in the order of convlab_explain's arguments. */
static const char *const tensor_names[5] = {"x", "w", "b", "initial_states", "y"};

/* The tensors the problem needs are given, and only those: a pointer too many is a mistake too (a bias
 * passed to a problem declared without one would be silently left out of the verdict). */
static convlab_status check_pointers(const c1d_shape *s, const void *const v[5]) {
  const int needed[5] = {1, 1, s->bias, s->states, 1};
  static const char *const how[5] = {"", "", " (convlab_problem_set_bias)", " (convlab_problem_set_initial_states)", ""};
  for (int i = 0; i < 5; i++) {
    if (needed[i] && !v[i])
      return fail(CONVLAB_ERR_INVALID_ARGUMENT, "%s is NULL but the problem needs it%s", tensor_names[i], how[i]);
    if (!needed[i] && v[i])
      return fail(CONVLAB_ERR_INVALID_ARGUMENT, "%s is given but the problem has none%s", tensor_names[i], how[i]);
  }
  return CONVLAB_OK;
}

/* What the call holds: the tensors' host copies and converted arrays, the run. Released as one. */
typedef struct call_state {
  void *owned[5];          /* device memory copied to the host */
  c1d_input_tensors tensors;
  c1d_run_results res;
} call_state;

static void call_release(call_state *c) {
  for (int i = 0; i < 5; i++) free(c->owned[i]);
  c1d_input_tensors_free(&c->tensors);
  c1d_run_results_free(&c->res);
}

/* The text that f (an open_memstream) collected, or NULL when it could not be had. */
static char *text_of(void (*write)(FILE *, const c1d_trial_result *, const c1d_shape *, const c1d_flag_suggestion *),
                     const c1d_trial_result *t, const c1d_shape *s, const c1d_flag_suggestion *sug) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f) return NULL;
  write(f, t, s, sug);
  if (fclose(f) != 0) {
    free(buf);
    return NULL;
  }
  return buf;
}

static void write_text(FILE *f, const c1d_trial_result *t, const c1d_shape *s, const c1d_flag_suggestion *sug) {
  c1d_explain_print(f, &t->explanation, &t->metrics, s, sug);
}

static void write_summary(FILE *f, const c1d_trial_result *t, const c1d_shape *s, const c1d_flag_suggestion *sug) {
  (void)s;
  c1d_explain_print_short(f, &t->explanation, sug);
}

/* The result of the one candidate t: every string made now, so that the accessors cannot fail. */
static convlab_status make_result(const c1d_trial_result *t, const c1d_shape *s, const c1d_flag_suggestion *sug,
                                  convlab_result **out) {
  const c1d_explanation *e = &t->explanation;
  convlab_result *r = calloc(1, sizeof *r);
  if (!r) return fail(CONVLAB_ERR_NO_MEMORY, "out of memory for a result");
  r->verdict = (convlab_verdict)e->verdict;
  snprintf(r->where, sizeof r->where, "%s", e->where);
  r->detection_limit = e->detect_limit_32;
  c1d_verdict_headline(e, r->headline, sizeof r->headline);
  c1d_explain_region(e, r->region, sizeof r->region);
  r->reason = strdup(e->reason);
  r->text = text_of(write_text, t, s, sug);
  r->summary = text_of(write_summary, t, s, sug);
  cJSON *o = c1d_explain_json(e, &t->metrics, s, "y", sug, NULL);
  char *json = o ? cJSON_Print(o) : NULL;
  cJSON_Delete(o);
  r->json = json ? strdup(json) : NULL; /* ours to free() whatever cJSON's allocator */
  if (json) cJSON_free(json);
  if (!r->reason || !r->text || !r->summary || !r->json) {
    convlab_result_destroy(r);
    return fail(CONVLAB_ERR_NO_MEMORY, "out of memory for the result's text");
  }
  *out = r;
  return CONVLAB_OK;
}

convlab_status convlab_explain(const convlab_problem *p, const void *x, const void *w, const void *b,
                               const void *initial_states, const void *y, convlab_result **out) {
  if (!out) return fail(CONVLAB_ERR_INVALID_ARGUMENT, "convlab_explain: out is NULL");
  *out = NULL;
  if (!p) return fail(CONVLAB_ERR_INVALID_ARGUMENT, "convlab_explain: the problem is NULL");
  const c1d_shape *s = &p->shape;
  const void *const given[5] = {x, w, b, initial_states, y};
  convlab_status rc = check_pointers(s, given);
  if (rc != CONVLAB_OK) return rc;

  c1d_run_config cfg;
  c1d_candidate cand = {"y", NULL};
  c1d_flag_suggestion sug;
  call_state c;
  memset(&c, 0, sizeof c);
  c1d_explain_config(&cfg, C1D_DEFAULT_LAMBDA);
  cfg.shape = *s;
  cfg.candidates = &cand;
  cfg.n_candidates = 1;
  c1d_status st = c1d_run_check_memory(&cfg, "this problem"); /* before anything is copied */
  if (st != C1D_OK) return failed(st);

  const int64_t counts[5] = {c1d_x_count(s), c1d_w_count(s), c1d_b_count(s), c1d_s_count(s), c1d_y_count(s)};
  const c1d_dtype types[5] = {s->dt.x, s->dt.w, s->dt.b, s->dt.s, s->dt.y};
  const void *host[5] = {NULL, NULL, NULL, NULL, NULL};
  for (int i = 0; i < 5 && st == C1D_OK; i++)
    if (given[i])
      st = c1d_lib_host_view(given[i], (size_t)counts[i] * (size_t)c1d_dtype_size(types[i]), tensor_names[i], &host[i],
                             &c.owned[i]);
  const c1d_input_memory m = {host[0], host[1], host[2], host[3], host[4]};
  if (st == C1D_OK) st = c1d_input_memory_load(&m, s, &c.tensors);
  if (st == C1D_OK) {
    cfg.x = c.tensors.x;
    cfg.w = c.tensors.w;
    cfg.b = c.tensors.b;
    cfg.st = c.tensors.s;
    cand.y = c.tensors.y;
    st = c1d_explain_outputs(&cfg, &c.res, &sug);
  }
  rc = st == C1D_OK ? make_result(&c.res.impls[0].trials[0], s, &sug, out) : failed(st);
  call_release(&c);
  return rc;
}

void convlab_result_destroy(convlab_result *r) {
  if (!r) return;
  free(r->reason);
  free(r->text);
  free(r->summary);
  free(r->json);
  free(r);
}

convlab_verdict convlab_result_verdict(const convlab_result *r) { return r ? r->verdict : CONVLAB_INCONCLUSIVE; }
const char *convlab_result_where(const convlab_result *r) { return r ? r->where : ""; }
const char *convlab_result_headline(const convlab_result *r) { return r ? r->headline : ""; }
const char *convlab_result_reason(const convlab_result *r) { return r ? r->reason : ""; }
const char *convlab_result_region(const convlab_result *r) { return r ? r->region : ""; }
double convlab_result_detection_limit(const convlab_result *r) { return r ? r->detection_limit : NAN; }
const char *convlab_result_text(const convlab_result *r) { return r ? r->text : ""; }
const char *convlab_result_summary(const convlab_result *r) { return r ? r->summary : ""; }
const char *convlab_result_json(const convlab_result *r) { return r ? r->json : ""; }
