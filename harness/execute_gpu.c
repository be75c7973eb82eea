/* GPU execution and timing through gpu/device.h. Inputs are uploaded once per trial and shared by every
 * GPU implementation; each implementation gets its own poisoned output buffer. The inputs live on the
 * device in up to four forms (views): float32 (N, C, L), which every implementation without caps reads,
 * and, made on first use in a trial, each tensor in its own element type (C1D_CAP_DTYPES) and/or in
 * channel-last order (C1D_CAP_CHANNEL_LAST on a problem of layout NLC); such an implementation's output
 * comes back in its type and order and is converted to float32 (N, O, L) on the host (harness/packing.h).
 * Without CUDA in the build, every entry point reports C1D_ERR_NO_DEVICE. */
#include <stdlib.h>
#include <string.h>

#include "harness/execute.h"

#ifdef C1D_HAVE_CUDA
#include "gpu/device.h"
#include "harness/packing.h"
#ifdef C1D_HAVE_GPU_ORACLE
#include "gpu/oracle_f64.h"
#endif

/* One form of the trial's inputs on the device; view 0 is float32 (N, C, L). */
typedef struct gpu_view {
  int typed, nlc;            /* tensors in their own element types; x, s (and y) channel-last */
  void *x, *w, *b, *st;      /* device arrays (b, st NULL when the problem has none) */
  int ready;                 /* holds this trial's inputs */
} gpu_view;

struct c1d_gpu_session {
  c1d_shape s;
  float *x, *w, *b, *st;     /* view 0's arrays (the GPU oracle reads them too) */
  gpu_view views[4];         /* indexed by typed * 2 + nlc */
  const float *hx, *hw, *hb, *hst; /* this trial's host inputs, borrowed until the next upload */
  c1d_gpu_timer *timer;
};

const char *c1d_gpu_why_unavailable(void) { return c1d_gpu_unavailable(); }

int c1d_gpu_oracle_built(void) {
#ifdef C1D_HAVE_GPU_ORACLE
  return 1;
#else
  return 0;
#endif
}

static void free_view(gpu_view *v) {
  c1d_gpu_free(v->x);
  c1d_gpu_free(v->w);
  c1d_gpu_free(v->b);
  c1d_gpu_free(v->st);
  memset(v, 0, sizeof *v);
}

void c1d_gpu_session_destroy(c1d_gpu_session *g) {
  if (!g) return;
  for (int i = 1; i < 4; i++) free_view(&g->views[i]);
  c1d_gpu_free(g->x);
  c1d_gpu_free(g->w);
  c1d_gpu_free(g->b);
  c1d_gpu_free(g->st);
  c1d_gpu_timer_destroy(g->timer);
  free(g);
}

c1d_status c1d_gpu_session_create(const c1d_shape *s, c1d_gpu_session **out) {
  c1d_status st = C1D_OK;
  c1d_gpu_session *g = calloc(1, sizeof *g);
  *out = NULL;
  if (!g) return c1d_fail(C1D_ERR_NO_MEMORY, "cannot allocate a GPU session");
  g->s = *s;
  if ((st = c1d_gpu_malloc((void **)&g->x, (size_t)c1d_x_count(s) * sizeof(float), "x")) != C1D_OK)
    goto done;
  if ((st = c1d_gpu_malloc((void **)&g->w, (size_t)c1d_w_count(s) * sizeof(float), "w")) != C1D_OK)
    goto done;
  if (s->bias &&
      (st = c1d_gpu_malloc((void **)&g->b, (size_t)c1d_b_count(s) * sizeof(float), "b")) != C1D_OK)
    goto done;
  if (s->states &&
      (st = c1d_gpu_malloc((void **)&g->st, (size_t)c1d_s_count(s) * sizeof(float), "the initial states")) != C1D_OK)
    goto done;
  if ((st = c1d_gpu_timer_create(&g->timer)) != C1D_OK) goto done;
  g->views[0] = (gpu_view){0, 0, g->x, g->w, g->b, g->st, 0};
  *out = g;
  g = NULL;
done:
  c1d_gpu_session_destroy(g);
  return st;
}

c1d_status c1d_gpu_session_upload(c1d_gpu_session *g, const float *x, const float *w, const float *b,
                                  const float *states) {
  const c1d_shape *s = &g->s;
  c1d_status st = c1d_gpu_upload(g->x, x, (size_t)c1d_x_count(s) * sizeof(float));
  if (st == C1D_OK) st = c1d_gpu_upload(g->w, w, (size_t)c1d_w_count(s) * sizeof(float));
  if (st == C1D_OK && s->bias) st = c1d_gpu_upload(g->b, b, (size_t)c1d_b_count(s) * sizeof(float));
  if (st == C1D_OK && s->states) st = c1d_gpu_upload(g->st, states, (size_t)c1d_s_count(s) * sizeof(float));
  g->hx = x, g->hw = w, g->hb = b, g->hst = states;
  g->views[0].ready = st == C1D_OK;
  for (int i = 1; i < 4; i++) g->views[i].ready = 0;
  return st;
}

// --- views ---------------------------------------------------------------------------------------

static int any_low_precision(const c1d_shape *s) {
  return s->dt.x || s->dt.w || s->dt.b || s->dt.s || s->dt.y;
}

/* The view impl reads: typed when it takes element types and the problem has any but float32,
 * channel-last when it takes that layout and the problem has it. */
static int view_index(const c1d_gpu_session *g, const c1d_impl *impl) {
  const int typed = (impl->caps & C1D_CAP_DTYPES) && any_low_precision(&g->s);
  const int nlc = (impl->caps & C1D_CAP_CHANNEL_LAST) && g->s.layout == C1D_LAYOUT_NLC;
  return typed * 2 + nlc;
}

static c1d_dtype type_in(const gpu_view *v, c1d_dtype d) { return v->typed ? d : C1D_DTYPE_F32; }

/* One tensor into its view form: host src (outer, rows, cols) packed, then uploaded into *dev (allocated
 * on the view's first use). */
static c1d_status put_tensor(void **dev, const float *src, c1d_dtype d, int64_t outer, int64_t rows, int64_t cols,
                             int transpose, const char *what) {
  const size_t bytes = c1d_packed_bytes(d, outer * rows * cols);
  c1d_status st = C1D_OK;
  if (!*dev && (st = c1d_gpu_malloc(dev, bytes, what)) != C1D_OK) return st;
  void *host = malloc(bytes ? bytes : 1);
  if (!host) return c1d_fail(C1D_ERR_NO_MEMORY, "cannot allocate %.2f GiB to pack %s", bytes / 1073741824.0, what);
  c1d_pack_tensor(host, src, d, outer, rows, cols, transpose);
  st = c1d_gpu_upload(*dev, host, bytes);
  free(host);
  return st;
}

/* The view impl reads, filled with this trial's inputs. */
static c1d_status get_view(c1d_gpu_session *g, const c1d_impl *impl, gpu_view **out) {
  const c1d_shape *s = &g->s;
  const int i = view_index(g, impl);
  gpu_view *v = &g->views[i];
  c1d_status st = C1D_OK;
  *out = v;
  if (v->ready) return C1D_OK;
  if (!g->hx) return c1d_fail(C1D_ERR_INTERNAL, "GPU session used before an upload");
  v->typed = i / 2, v->nlc = i % 2;
  if ((st = put_tensor(&v->x, g->hx, type_in(v, s->dt.x), s->N, s->C, s->L, v->nlc, "x")) != C1D_OK) return st;
  if ((st = put_tensor(&v->w, g->hw, type_in(v, s->dt.w), 1, 1, c1d_w_count(s), 0, "w")) != C1D_OK) return st;
  if (s->bias && (st = put_tensor(&v->b, g->hb, type_in(v, s->dt.b), 1, 1, s->O, 0, "b")) != C1D_OK) return st;
  if (s->states &&
      (st = put_tensor(&v->st, g->hst, type_in(v, s->dt.s), s->N, s->C, c1d_pad(s), v->nlc, "the initial states")) != C1D_OK)
    return st;
  v->ready = 1;
  return C1D_OK;
}

/* Device y of view v (bytes) into host y_host as float32 (N, O, L). */
static c1d_status fetch_output(const c1d_shape *s, const gpu_view *v, const void *y, float *y_host) {
  const c1d_dtype d = type_in(v, s->dt.y);
  const size_t bytes = c1d_packed_bytes(d, c1d_y_count(s));
  if (d == C1D_DTYPE_F32 && !v->nlc) return c1d_gpu_download(y_host, y, bytes);
  void *host = malloc(bytes ? bytes : 1);
  if (!host) return c1d_fail(C1D_ERR_NO_MEMORY, "cannot allocate %.2f GiB for the output", bytes / 1073741824.0);
  c1d_status st = c1d_gpu_download(host, y, bytes);
  if (st == C1D_OK) c1d_unpack_tensor(y_host, host, d, s->N, s->O, s->L, v->nlc);
  free(host);
  return st;
}

// --- runs ----------------------------------------------------------------------------------------

c1d_status c1d_gpu_session_oracle(c1d_gpu_session *g, double *y, double *mag) {
#ifdef C1D_HAVE_GPU_ORACLE
  c1d_status st = C1D_OK;
  const size_t bytes = (size_t)c1d_y_count(&g->s) * sizeof(double);
  double *dy = NULL, *dmag = NULL;
  if ((st = c1d_gpu_malloc((void **)&dy, bytes, "the oracle's y")) != C1D_OK) goto done;
  if ((st = c1d_gpu_malloc((void **)&dmag, bytes, "the oracle's magnitude")) != C1D_OK) goto done;
  if ((st = c1d_gpu_oracle_f64(&g->s, g->x, g->w, g->b, dy, dmag)) != C1D_OK) goto done;
  if ((st = c1d_gpu_download(y, dy, bytes)) != C1D_OK) goto done;
  st = c1d_gpu_download(mag, dmag, bytes);
done:
  c1d_gpu_free(dy);
  c1d_gpu_free(dmag);
  return st;
#else
  return c1d_fail(C1D_ERR_NO_DEVICE, "this build has no GPU oracle (gpu/oracle_f64.cu)");
#endif
}

c1d_status c1d_gpu_copy_gbps(size_t bytes, int repeats, double *gbps) {
  return c1d_gpu_copy_bandwidth(bytes, repeats, gbps);
}

c1d_status c1d_execute_gpu(c1d_gpu_session *g, const c1d_impl *impl, float *y_host, float *first,
                           int repeats, double budget_ms, c1d_exec *ex, c1d_timing *t) {
  c1d_status st = C1D_OK;
  double warm_ms = 0.0;
  const c1d_shape *s = &g->s;
  const int64_t ny = c1d_y_count(s);
  gpu_view *v = NULL;
  void *y = NULL;
  size_t y_bytes = 0;
  int set_up = 0;
  double *ms = malloc((size_t)repeats * sizeof *ms);
  if (!ms) return c1d_fail(C1D_ERR_NO_MEMORY, "cannot allocate %d timings", repeats);
  if ((st = get_view(g, impl, &v)) != C1D_OK) goto done;
  y_bytes = c1d_packed_bytes(type_in(v, s->dt.y), ny);
  if ((st = c1d_gpu_malloc(&y, y_bytes ? y_bytes : 1, "the output y")) != C1D_OK) goto done;
  ex->states = v->st;
  if (impl->setup) {
    if ((st = impl->setup(s, ex)) != C1D_OK) goto done;
    set_up = 1;
  }
  /* Warm-up: first-launch costs (module load, algorithm caches) stay out of the timings. */
  if ((st = c1d_gpu_poison_bytes(y, y_bytes)) != C1D_OK) goto done;
  if ((st = c1d_gpu_timer_start(g->timer)) != C1D_OK) goto done;
  if ((st = impl->run(s, v->x, v->w, v->b, y, ex)) != C1D_OK) goto done;
  if ((st = c1d_gpu_timer_stop(g->timer, &warm_ms)) != C1D_OK) goto done;
  if (first && (st = fetch_output(s, v, y, first)) != C1D_OK) goto done;
  if (budget_ms > 0 && warm_ms * repeats > budget_ms && repeats > C1D_MIN_TIMED_RUNS) {
    const int fit = (int)(budget_ms / warm_ms);
    repeats = fit > C1D_MIN_TIMED_RUNS ? fit : C1D_MIN_TIMED_RUNS;
  }
  for (int r = 0; r < repeats; r++) {
    if ((st = c1d_gpu_poison_bytes(y, y_bytes)) != C1D_OK) goto done;
    if ((st = c1d_gpu_flush_l2()) != C1D_OK) goto done;
    if ((st = c1d_gpu_timer_start(g->timer)) != C1D_OK) goto done;
    if ((st = impl->run(s, v->x, v->w, v->b, y, ex)) != C1D_OK) goto done;
    if ((st = c1d_gpu_timer_stop(g->timer, &ms[r])) != C1D_OK) goto done;
  }
  if ((st = fetch_output(s, v, y, y_host)) != C1D_OK) goto done;
  c1d_timing_summarize(ms, repeats, t);
  t->repeat_checked = first != NULL;
  t->repeat_identical = first && memcmp(first, y_host, (size_t)ny * sizeof(float)) == 0;
done:
  if (set_up && impl->teardown) impl->teardown(ex);
  c1d_gpu_free(y);
  free(ms);
  return st;
}

#else /* no CUDA in this build */

static c1d_status no_cuda(void) {
  return c1d_fail(C1D_ERR_NO_DEVICE, "built without CUDA (nvcc was not found at configure time)");
}
const char *c1d_gpu_why_unavailable(void) {
  return "built without CUDA (nvcc was not found at configure time)";
}
int c1d_gpu_oracle_built(void) { return 0; }
c1d_status c1d_gpu_session_create(const c1d_shape *s, c1d_gpu_session **out) {
  *out = NULL;
  return no_cuda();
}
void c1d_gpu_session_destroy(c1d_gpu_session *g) {}
c1d_status c1d_gpu_session_upload(c1d_gpu_session *g, const float *x, const float *w, const float *b,
                                  const float *states) {
  return no_cuda();
}
c1d_status c1d_gpu_session_oracle(c1d_gpu_session *g, double *y, double *mag) { return no_cuda(); }
c1d_status c1d_gpu_copy_gbps(size_t bytes, int repeats, double *gbps) {
  *gbps = 0.0;
  return no_cuda();
}
c1d_status c1d_execute_gpu(c1d_gpu_session *g, const c1d_impl *impl, float *y_host, float *first,
                           int repeats, double budget_ms, c1d_exec *ex, c1d_timing *t) {
  return no_cuda();
}

#endif
