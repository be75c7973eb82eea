/* GPU execution and timing through gpu/device.h. Inputs are uploaded once per trial and shared by every
 * GPU implementation; each implementation gets its own poisoned output buffer. Without CUDA in the
 * build, every entry point reports C1D_ERR_NO_DEVICE. */
#include <stdlib.h>
#include <string.h>

#include "harness/execute.h"

#ifdef C1D_HAVE_CUDA
#include "gpu/device.h"
#ifdef C1D_HAVE_GPU_ORACLE
#include "gpu/oracle_f64.h"
#endif

struct c1d_gpu_session {
  c1d_shape s;
  float *x, *w, *b;
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

void c1d_gpu_session_destroy(c1d_gpu_session *g) {
  if (!g) return;
  c1d_gpu_free(g->x);
  c1d_gpu_free(g->w);
  c1d_gpu_free(g->b);
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
  if ((st = c1d_gpu_timer_create(&g->timer)) != C1D_OK) goto done;
  *out = g;
  g = NULL;
done:
  c1d_gpu_session_destroy(g);
  return st;
}

c1d_status c1d_gpu_session_upload(c1d_gpu_session *g, const float *x, const float *w, const float *b) {
  c1d_status st = c1d_gpu_upload(g->x, x, (size_t)c1d_x_count(&g->s) * sizeof(float));
  if (st == C1D_OK) st = c1d_gpu_upload(g->w, w, (size_t)c1d_w_count(&g->s) * sizeof(float));
  if (st == C1D_OK && g->s.bias)
    st = c1d_gpu_upload(g->b, b, (size_t)c1d_b_count(&g->s) * sizeof(float));
  return st;
}

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

c1d_status c1d_execute_gpu(c1d_gpu_session *g, const c1d_impl *impl, float *y_host, float *first,
                           int repeats, double budget_ms, c1d_exec *ex, c1d_timing *t) {
  c1d_status st = C1D_OK;
  double warm_ms = 0.0;
  const c1d_shape *s = &g->s;
  const int64_t ny = c1d_y_count(s);
  float *y = NULL;
  int set_up = 0;
  double *ms = malloc((size_t)repeats * sizeof *ms);
  if (!ms) return c1d_fail(C1D_ERR_NO_MEMORY, "cannot allocate %d timings", repeats);
  if ((st = c1d_gpu_malloc((void **)&y, (size_t)ny * sizeof(float), "the output y")) != C1D_OK)
    goto done;
  if (impl->setup) {
    if ((st = impl->setup(s, ex)) != C1D_OK) goto done;
    set_up = 1;
  }
  /* Warm-up: first-launch costs (module load, algorithm caches) stay out of the timings. */
  if ((st = c1d_gpu_poison(y, ny)) != C1D_OK) goto done;
  if ((st = c1d_gpu_timer_start(g->timer)) != C1D_OK) goto done;
  if ((st = impl->run(s, g->x, g->w, g->b, y, ex)) != C1D_OK) goto done;
  if ((st = c1d_gpu_timer_stop(g->timer, &warm_ms)) != C1D_OK) goto done;
  if (first && (st = c1d_gpu_download(first, y, (size_t)ny * sizeof(float))) != C1D_OK) goto done;
  if (budget_ms > 0 && warm_ms * repeats > budget_ms && repeats > C1D_MIN_TIMED_RUNS) {
    const int fit = (int)(budget_ms / warm_ms);
    repeats = fit > C1D_MIN_TIMED_RUNS ? fit : C1D_MIN_TIMED_RUNS;
  }
  for (int r = 0; r < repeats; r++) {
    if ((st = c1d_gpu_poison(y, ny)) != C1D_OK) goto done;
    if ((st = c1d_gpu_flush_l2()) != C1D_OK) goto done;
    if ((st = c1d_gpu_timer_start(g->timer)) != C1D_OK) goto done;
    if ((st = impl->run(s, g->x, g->w, g->b, y, ex)) != C1D_OK) goto done;
    if ((st = c1d_gpu_timer_stop(g->timer, &ms[r])) != C1D_OK) goto done;
  }
  if ((st = c1d_gpu_download(y_host, y, (size_t)ny * sizeof(float))) != C1D_OK) goto done;
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
c1d_status c1d_gpu_session_upload(c1d_gpu_session *g, const float *x, const float *w, const float *b) {
  return no_cuda();
}
c1d_status c1d_gpu_session_oracle(c1d_gpu_session *g, double *y, double *mag) { return no_cuda(); }
c1d_status c1d_execute_gpu(c1d_gpu_session *g, const c1d_impl *impl, float *y_host, float *first,
                           int repeats, double budget_ms, c1d_exec *ex, c1d_timing *t) {
  return no_cuda();
}

#endif
