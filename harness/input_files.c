/* Loading a user's tensors: shapes checked first, data second (see input_files.h). One function derives
 * the problem from descriptions of the tensors (shape and element type, whichever file held them), so
 * .npy files and safetensors cases are checked by the same rules with the same messages. */
#include "harness/input_files.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/escape.h"
#include "harness/packing.h"
#include "harness/safetensors.h"

enum { ROLE_X, ROLE_W, ROLE_B, ROLE_S, ROLE_Y, ROLES };

/* One tensor as the shape checks see it. */
typedef struct tensor_desc {
  const char *file; /* the .npy file, or NULL for a tensor of a case (then named by role) */
  const char *role; /* "x", "w", "b", "initial_states", "y" */
  int present;
  int ndim;
  int64_t shape[C1D_NPY_MAX_DIMS];
  c1d_dtype dtype;
} tensor_desc;

static const char *name_of(const tensor_desc *d) { return d->file ? d->file : d->role; }

static void format_shape(const tensor_desc *d, char *buf, int size) {
  c1d_npy_header h = {.ndim = d->ndim};
  memcpy(h.shape, d->shape, sizeof h.shape);
  c1d_npy_format_shape(&h, buf, size);
}

/* Refuses a tensor that has neither ndim nor alt_ndim (0: none) dimensions. */
static c1d_status want_ndim(const tensor_desc *d, int ndim, int alt_ndim, const char *layout) {
  if (d->ndim == ndim || (alt_ndim && d->ndim == alt_ndim)) return C1D_OK;
  char shape[128];
  format_shape(d, shape, sizeof shape);
  if (d->file)
    return c1d_fail(C1D_ERR_INVALID_SHAPE, "%s: %s must have %s, got shape %s", d->file, d->role, layout, shape);
  return c1d_fail(C1D_ERR_INVALID_SHAPE, "%s must have %s, got shape %s", d->role, layout, shape);
}

/* Refuses a dimension `got` of a that differs from `expect` (taken from b). */
static c1d_status same(const tensor_desc *a, const char *letter, int64_t got, const tensor_desc *b,
                       int64_t expect) {
  if (got == expect) return C1D_OK;
  return c1d_fail(C1D_ERR_INVALID_SHAPE, "%s has %s=%lld but %s has %s=%lld", name_of(a), letter,
                  (long long)got, name_of(b), letter, (long long)expect);
}

/* O, K and G from w: (O, C/G, K) with G = C / C/G (or the declared G, which must agree), or the
 * depthwise (C, K). */
static c1d_status weight_shape(const tensor_desc *w, const tensor_desc *x, int64_t declared_g, c1d_shape *s) {
  c1d_status st = want_ndim(w, 3, 2, "3 dimensions (O, C/G, K), or 2 (C, K) for a depthwise conv");
  if (st != C1D_OK) return st;
  if (w->ndim == 2) {
    if (w->shape[0] != s->C)
      return c1d_fail(C1D_ERR_INVALID_SHAPE, "%s is a depthwise (C, K) weight with C=%lld but %s has C=%lld",
                      name_of(w), (long long)w->shape[0], name_of(x), (long long)s->C);
    if (declared_g > 0 && declared_g != s->C)
      return c1d_fail(C1D_ERR_INVALID_SHAPE, "--groups %lld disagrees with the depthwise weight %s (C, K): G = C = %lld",
                      (long long)declared_g, name_of(w), (long long)s->C);
    s->O = s->C;
    s->K = w->shape[1];
    s->G = s->C;
    return C1D_OK;
  }
  const int64_t cg = w->shape[1];
  s->O = w->shape[0];
  s->K = w->shape[2];
  if (declared_g > 1) {
    if (cg * declared_g != s->C)
      return c1d_fail(C1D_ERR_INVALID_SHAPE, "%s has C/G=%lld but %s has C=%lld: with --groups %lld, C/G is %lld",
                      name_of(w), (long long)cg, name_of(x), (long long)s->C, (long long)declared_g,
                      (long long)(s->C / declared_g));
    s->G = declared_g;
    return C1D_OK;
  }
  if (declared_g == 1 && cg != s->C) return same(w, "C", cg, x, s->C);
  if (cg <= 0 || s->C % cg != 0)
    return c1d_fail(C1D_ERR_INVALID_SHAPE, "%s has C=%lld but %s has C=%lld (a grouped w (O, C/G, K) needs C/G "
                    "to divide C)", name_of(w), (long long)cg, name_of(x), (long long)s->C);
  s->G = s->C / cg;
  return C1D_OK;
}

/* "with --layout nlc, x (2, 4, 32) reads as N=2 L=4 C=32 and w (6, 4, 3) as O=6 C/G=4 K=3": what the
 * layout made of the shapes, for a mismatch that a wrong layout, not the user's groups, explains. */
static const char *reading(const tensor_desc *x, const tensor_desc *w, const c1d_shape *s, int nlc, char *buf,
                           size_t size) {
  char xs[128], ws[128];
  format_shape(x, xs, sizeof xs);
  format_shape(w, ws, sizeof ws);
  snprintf(buf, size, "with %s, %s %s reads as N=%lld %s=%lld %s=%lld and %s %s as O=%lld C/G=%lld K=%lld",
           nlc ? "--layout nlc" : "the layout ncl (the default)", name_of(x), xs, (long long)s->N, nlc ? "L" : "C",
           (long long)(nlc ? s->L : s->C), nlc ? "C" : "L", (long long)(nlc ? s->C : s->L), name_of(w), ws,
           (long long)s->O, (long long)(w->ndim == 3 ? w->shape[1] : 1), (long long)s->K);
  return buf;
}

/* The problem of the tensors d[ROLES] (x and w present) under the declarations pb; a shape that does
 * not validate is said after `files` (NULL: alone). */
static c1d_status derive(const tensor_desc *d, const c1d_input_problem *pb, const char *files, c1d_shape *s) {
  const int nlc = pb->layout == C1D_LAYOUT_NLC;
  const tensor_desc *x = &d[ROLE_X], *w = &d[ROLE_W], *b = &d[ROLE_B], *st = &d[ROLE_S], *y = &d[ROLE_Y];
  c1d_status rc;
  memset(s, 0, sizeof *s);
  if ((rc = want_ndim(x, 3, 0, nlc ? "3 dimensions (N, L, C) (--layout nlc)" : "3 dimensions (N, C, L)")) != C1D_OK)
    return rc;
  s->N = x->shape[0];
  s->C = x->shape[nlc ? 2 : 1];
  s->L = x->shape[nlc ? 1 : 2];
  s->D = pb->D > 0 ? pb->D : 1;
  s->act = pb->act;
  s->layout = pb->layout;
  s->dt.x = x->dtype;
  if ((rc = weight_shape(w, x, pb->G, s)) != C1D_OK) return rc;
  if (pb->G == 0 && s->G > 1 && s->O % s->G != 0) { /* groups nobody declared: the shapes do not fit */
    char how[512];
    return c1d_fail(C1D_ERR_INVALID_SHAPE, "%s; these do not fit: C/G=%lld of C=%lld makes %lld groups, and "
                    "O=%lld is not a multiple of %lld", reading(x, w, s, nlc, how, sizeof how),
                    (long long)(s->C / s->G), (long long)s->C, (long long)s->G, (long long)s->O, (long long)s->G);
  }
  s->dt.w = w->dtype;
  if (b->present) {
    if ((rc = want_ndim(b, 1, 0, "1 dimension (O,)")) != C1D_OK) return rc;
    if ((rc = same(b, "O", b->shape[0], w, s->O)) != C1D_OK) return rc;
    s->bias = 1;
    s->dt.b = b->dtype;
  }
  s->states = st->present;
  if (st->present) s->dt.s = st->dtype;
  if ((rc = c1d_shape_validate(s)) != C1D_OK) {
    char why[400]; /* a copy: c1d_fail must not format the detail buffer into itself */
    snprintf(why, sizeof why, "%s", c1d_error_detail());
    return files ? c1d_fail(rc, "%s: %s", files, why) : rc;
  }
  if (st->present) {
    char shape[128];
    format_shape(st, shape, sizeof shape);
    if (st->ndim != 3 || st->shape[0] != s->N || st->shape[1] != s->C || st->shape[2] != c1d_pad(s))
      return c1d_fail(C1D_ERR_INVALID_SHAPE, "%s has shape %s, but this problem's initial states are (N, C, (K-1)*D) "
                      "= (%lld, %lld, %lld)", name_of(st), shape, (long long)s->N, (long long)s->C,
                      (long long)c1d_pad(s));
  }
  if (y->present) {
    if ((rc = want_ndim(y, 3, 0, nlc ? "3 dimensions (N, L, O) (--layout nlc)" : "3 dimensions (N, O, L)")) != C1D_OK)
      return rc;
    if ((rc = same(y, "N", y->shape[0], x, s->N)) != C1D_OK) return rc;
    if ((rc = same(y, "O", y->shape[nlc ? 2 : 1], w, s->O)) != C1D_OK) return rc;
    if ((rc = same(y, "L", y->shape[nlc ? 1 : 2], x, s->L)) != C1D_OK) return rc;
    s->dt.y = y->dtype;
  }
  return C1D_OK;
}

// --- .npy files ----------------------------------------------------------------------------------

static c1d_status describe_npy(const char *path, const char *role, tensor_desc *d) {
  memset(d, 0, sizeof *d);
  if (!path) return C1D_OK;
  c1d_npy_header h;
  c1d_status st = c1d_npy_probe(path, &h);
  if (st != C1D_OK) return st;
  if (!strcmp(role, "y") && h.dtype == C1D_NPY_F8)
    return c1d_fail(C1D_ERR_FORMAT, "%s: a candidate output must be float32 ('<f4') or float16 ('<f2'), got "
                    "'%s' (its bits are what is judged; save y.astype(np.float32) if that is the output)",
                    path, c1d_npy_dtype_name(h.dtype));
  *d = (tensor_desc){.file = path, .role = role, .present = 1, .ndim = h.ndim,
                     .dtype = h.dtype == C1D_NPY_F2 ? C1D_DTYPE_F16 : C1D_DTYPE_F32};
  memcpy(d->shape, h.shape, sizeof d->shape);
  return C1D_OK;
}

c1d_status c1d_input_files_shape_of(const c1d_input_paths *p, const c1d_input_problem *pb, c1d_shape *s) {
  tensor_desc d[ROLES];
  const char *paths[ROLES] = {p->x, p->w, p->b, p->s, p->y};
  static const char *const roles[ROLES] = {"x", "w", "b", "initial states", "y"};
  for (int r = 0; r < ROLES; r++) {
    c1d_status st = describe_npy(paths[r], roles[r], &d[r]);
    if (st != C1D_OK) return st;
  }
  char files[400];
  snprintf(files, sizeof files, "%s, %s", p->x, p->w);
  return derive(d, pb, files, s);
}

c1d_status c1d_input_files_shape(const c1d_input_paths *p, int64_t D, c1d_shape *s) {
  const c1d_input_problem pb = {.D = D};
  return c1d_input_files_shape_of(p, &pb, s);
}

/* (N, A, B) -> (N, B, A) in a new array: a channel-last tensor into (N, C, L). */
static c1d_status to_channel_first(float **v, int64_t N, int64_t A, int64_t B) {
  float *out = malloc((size_t)(N * A * B > 0 ? N * A * B : 1) * sizeof *out);
  if (!out) return c1d_fail(C1D_ERR_NO_MEMORY, "out of memory transposing a channel-last tensor");
  for (int64_t n = 0; n < N; n++)
    for (int64_t a = 0; a < A; a++)
      for (int64_t b = 0; b < B; b++) out[(n * B + b) * A + a] = (*v)[(n * A + a) * B + b];
  free(*v);
  *v = out;
  return C1D_OK;
}

/* where: the .npy file, or the tensor's name in a case. */
static c1d_status check_finite(const char *where, const float *v, int64_t count) {
  for (int64_t i = 0; i < count; i++)
    if (!isfinite(v[i]))
      return c1d_fail(C1D_ERR_NONFINITE, "%s: element %lld is %g; inputs must be finite", where, (long long)i,
                      (double)v[i]);
  return C1D_OK;
}

/* One tensor: read, check that its header still gives `count` elements, and (for inputs) finiteness. */
static c1d_status load_one(const char *path, int is_input, int64_t count, float **data,
                           c1d_npy_header *h, c1d_npy_conversion *conv) {
  c1d_status st = c1d_npy_read_f32(path, is_input, data, h, conv);
  if (st != C1D_OK) return st;
  if (h->count != count)
    return c1d_fail(C1D_ERR_FORMAT, "%s changed while being read (%lld elements, expected %lld)", path,
                    (long long)h->count, (long long)count);
  return is_input ? check_finite(path, *data, count) : C1D_OK;
}

c1d_status c1d_input_files_load(const c1d_input_paths *p, const c1d_shape *s, c1d_input_tensors *t) {
  c1d_status st;
  memset(t, 0, sizeof *t);
  const int nlc = s->layout == C1D_LAYOUT_NLC;
  if ((st = load_one(p->x, 1, c1d_x_count(s), &t->x, &t->hx, &t->cx)) != C1D_OK) goto done;
  if (nlc && (st = to_channel_first(&t->x, s->N, s->L, s->C)) != C1D_OK) goto done;
  if ((st = load_one(p->w, 1, c1d_w_count(s), &t->w, &t->hw, &t->cw)) != C1D_OK) goto done;
  if (p->b && (st = load_one(p->b, 1, c1d_b_count(s), &t->b, &t->hb, &t->cb)) != C1D_OK) goto done;
  if (p->s && (st = load_one(p->s, 1, c1d_s_count(s), &t->s, &t->hs, &t->cs)) != C1D_OK) goto done;
  if (p->y) st = c1d_input_files_load_output(p->y, s, &t->y);
done:
  if (st != C1D_OK) c1d_input_tensors_free(t);
  return st;
}

c1d_status c1d_input_files_load_output(const char *path, const c1d_shape *s, float **y) {
  c1d_npy_header h;
  c1d_status st = load_one(path, 0, c1d_y_count(s), y, &h, NULL);
  if (st == C1D_OK && s->layout == C1D_LAYOUT_NLC) st = to_channel_first(y, s->N, s->L, s->O);
  if (st != C1D_OK) {
    free(*y);
    *y = NULL;
  }
  return st;
}

// --- safetensors cases ---------------------------------------------------------------------------

static const char *const case_names[ROLES] = {"x", "w", "b", "initial_states", "y"};

/* The case's tensors as descriptions; anything but the five names is refused. */
static c1d_status describe_case(const char *path, const c1d_st_file *f, tensor_desc *d) {
  for (int i = 0; i < f->n; i++) {
    int known = 0;
    for (int r = 0; r < ROLES; r++) known |= !strcmp(f->tensors[i].name, case_names[r]);
    char shown[80];
    if (!known)
      return c1d_fail(C1D_ERR_FORMAT, "%s: tensor '%s' is not part of a case (x, w, b, initial_states, y)", path,
                      c1d_escape(f->tensors[i].name, strlen(f->tensors[i].name), shown, sizeof shown));
  }
  for (int r = 0; r < ROLES; r++) {
    const c1d_st_tensor *t = c1d_st_find(f, case_names[r]);
    memset(&d[r], 0, sizeof d[r]);
    d[r].role = case_names[r];
    if (!t) {
      if (r == ROLE_B || r == ROLE_S) continue;
      return c1d_fail(C1D_ERR_FORMAT, "%s: no tensor '%s' (a case holds x, w and y, and optionally b and "
                      "initial_states)", path, case_names[r]);
    }
    d[r].present = 1;
    d[r].ndim = t->ndim;
    d[r].dtype = t->dtype;
    memcpy(d[r].shape, t->shape, sizeof t->shape);
  }
  return C1D_OK;
}

/* Takes the data of tensor `name` out of f. */
static float *take_data(c1d_st_file *f, const char *name) {
  for (int i = 0; i < f->n; i++)
    if (!strcmp(f->tensors[i].name, name)) {
      float *v = f->tensors[i].data;
      f->tensors[i].data = NULL;
      return v;
    }
  return NULL;
}

/* The detail of the last failure, after "path: ". */
static c1d_status in_file(const char *path, c1d_status st) {
  char why[400]; /* a copy: c1d_fail must not format the detail buffer into itself */
  snprintf(why, sizeof why, "%s", c1d_error_detail());
  return c1d_fail(st, "%s: %s", path, why);
}

c1d_status c1d_input_case_shape(const char *path, const c1d_input_problem *pb, c1d_shape *s, c1d_st_file *f) {
  tensor_desc d[ROLES];
  c1d_status st = c1d_st_open(path, f);
  if (st != C1D_OK) return st;
  if ((st = describe_case(path, f, d)) == C1D_OK && (st = derive(d, pb, NULL, s)) != C1D_OK)
    st = in_file(path, st);
  if (st != C1D_OK) c1d_st_free(f);
  return st;
}

c1d_status c1d_input_case_load(const char *path, c1d_st_file *f, const c1d_shape *s, c1d_input_tensors *t) {
  memset(t, 0, sizeof *t);
  c1d_status st = c1d_st_load(path, f);
  if (st != C1D_OK) return st;
  t->x = take_data(f, "x");
  t->w = take_data(f, "w");
  t->b = take_data(f, "b");
  t->s = take_data(f, "initial_states");
  t->y = take_data(f, "y");
  const struct { const char *role; const float *v; int64_t n; } inputs[4] = {
      {"x", t->x, c1d_x_count(s)}, {"w", t->w, c1d_w_count(s)}, {"b", t->b, c1d_b_count(s)},
      {"initial_states", t->s, c1d_s_count(s)}};
  for (int i = 0; i < 4 && st == C1D_OK; i++)
    if ((st = check_finite(inputs[i].role, inputs[i].v, inputs[i].n)) != C1D_OK) st = in_file(path, st);
  if (st == C1D_OK && s->layout == C1D_LAYOUT_NLC && (st = to_channel_first(&t->x, s->N, s->L, s->C)) == C1D_OK)
    st = to_channel_first(&t->y, s->N, s->L, s->O);
  c1d_st_free(f);
  if (st != C1D_OK) c1d_input_tensors_free(t);
  return st;
}

c1d_status c1d_input_case_read(const char *path, const c1d_input_problem *pb, c1d_shape *s,
                               c1d_input_tensors *t) {
  c1d_st_file f;
  memset(t, 0, sizeof *t);
  c1d_status st = c1d_input_case_shape(path, pb, s, &f);
  return st == C1D_OK ? c1d_input_case_load(path, &f, s, t) : st;
}

// --- tensors in memory (libconvlab) -------------------------------------------------------------

c1d_status c1d_input_shapes_derive(const c1d_tensor_shape t[5], const c1d_input_problem *pb, c1d_shape *s) {
  static const char *const roles[ROLES] = {"x", "w", "b", "initial_states", "y"};
  tensor_desc d[ROLES];
  for (int r = 0; r < ROLES; r++) {
    d[r] = (tensor_desc){.role = roles[r], .present = t[r].ndim > 0, .ndim = t[r].ndim, .dtype = t[r].dtype};
    memcpy(d[r].shape, t[r].shape, sizeof d[r].shape);
  }
  if (!d[ROLE_X].present || !d[ROLE_W].present)
    return c1d_fail(C1D_ERR_INVALID_SHAPE, "%s has no shape (x and w are required)", d[ROLE_X].present ? "w" : "x");
  return derive(d, pb, NULL, s);
}

/* count elements of type d at v as float32 values in a new array (*out), exact for every type. */
static c1d_status widen(const char *role, c1d_dtype d, const void *v, int64_t count, float **out) {
  *out = malloc((size_t)(count > 0 ? count : 1) * sizeof **out);
  if (!*out) return c1d_fail(C1D_ERR_NO_MEMORY, "out of memory copying %s (%lld elements)", role, (long long)count);
  c1d_unpack_tensor(*out, v, d, 1, 1, count, 0);
  return C1D_OK;
}

c1d_status c1d_input_memory_load(const c1d_input_memory *m, const c1d_shape *s, c1d_input_tensors *t) {
  memset(t, 0, sizeof *t);
  const int nlc = s->layout == C1D_LAYOUT_NLC;
  const struct { const char *role; const void *v; c1d_dtype d; int64_t n; float **out; } in[4] = {
      {"x", m->x, s->dt.x, c1d_x_count(s), &t->x}, {"w", m->w, s->dt.w, c1d_w_count(s), &t->w},
      {"b", m->b, s->dt.b, c1d_b_count(s), &t->b}, {"initial_states", m->s, s->dt.s, c1d_s_count(s), &t->s}};
  c1d_status st = C1D_OK;
  for (int i = 0; i < 4 && st == C1D_OK; i++)
    if (in[i].v && (st = widen(in[i].role, in[i].d, in[i].v, in[i].n, in[i].out)) == C1D_OK)
      st = check_finite(in[i].role, *in[i].out, in[i].n); /* in the order given, as a file's */
  if (st == C1D_OK && m->y) st = widen("y", s->dt.y, m->y, c1d_y_count(s), &t->y);
  if (st == C1D_OK && nlc) st = to_channel_first(&t->x, s->N, s->L, s->C);
  if (st == C1D_OK && nlc && t->y) st = to_channel_first(&t->y, s->N, s->L, s->O);
  if (st != C1D_OK) c1d_input_tensors_free(t);
  return st;
}

void c1d_input_tensors_free(c1d_input_tensors *t) {
  if (!t) return;
  free(t->x);
  free(t->w);
  free(t->b);
  free(t->y);
  free(t->s);
  memset(t, 0, sizeof *t);
}
