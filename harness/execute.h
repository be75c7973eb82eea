/* Running and timing one implementation, on the CPU (monotonic clock around run()) or the GPU (CUDA
 * events around run() only, L2 flushed before each timed run). Internal to the runner; the GPU half
 * compiles to stubs that return C1D_ERR_NO_DEVICE in a build without CUDA. */
#ifndef C1D_EXECUTE_H
#define C1D_EXECUTE_H

#include <stddef.h>

#include "reference/impl.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct c1d_timing {
  double median_ms, min_ms;
  int repeats;
  int repeat_checked, repeat_identical; /* the first and the last run's outputs compared */
} c1d_timing;

/* Median and minimum of n times (n >= 1); the median of an even count is the mean of the middle two.
 * Sorts ms in place. */
void c1d_timing_summarize(double *ms, int n, c1d_timing *t);

/* setup (if any), an optional warm-up run, `repeats` timed runs, teardown. y is NaN-poisoned before
 * every run, so it holds the last run's output: every element the implementation wrote, NaN elsewhere.
 * With first (N*O*L floats of scratch, or NULL), the first run's output is kept there and compared
 * bit for bit with the last one's (t->repeat_checked, t->repeat_identical): a race shows up here.
 * Returns the first failure of setup() or run() (its detail is left in c1d_error_detail), or
 * C1D_ERR_NO_MEMORY. ex is initialised by the caller and keeps what the implementation reported. */
c1d_status c1d_execute_cpu(const c1d_impl *impl, const c1d_shape *s, const float *x, const float *w,
                           const float *b, float *y, float *first, int repeats, int warmup,
                           c1d_exec *ex, c1d_timing *t);

// --- GPU ---------------------------------------------------------------------------------------

/* Device copies of one trial's inputs and a timer; created only when something runs on the GPU. */
typedef struct c1d_gpu_session c1d_gpu_session;

/* NULL when a CUDA device is usable; else why not (c1d_gpu_unavailable, or "built without CUDA"). */
const char *c1d_gpu_why_unavailable(void);

/* 1 when this build contains the float64 GPU oracle (gpu/oracle_f64.cu). */
int c1d_gpu_oracle_built(void);

/* Allocates device x, w, b (and the initial states) for shape s and a timer. C1D_ERR_NO_DEVICE,
 * C1D_ERR_DEVICE_MEMORY, ...; *out is NULL on failure. */
c1d_status c1d_gpu_session_create(const c1d_shape *s, c1d_gpu_session **out);
void c1d_gpu_session_destroy(c1d_gpu_session *g); /* NULL does nothing */

/* Copies this trial's inputs to the device as float32 (N, C, L) arrays (b is NULL iff !s->bias, states
 * iff !s->states); the host arrays are borrowed until the next upload, for the typed and channel-last
 * forms that implementations with those caps read (made on first use, reference/impl.h). */
c1d_status c1d_gpu_session_upload(c1d_gpu_session *g, const float *x, const float *w, const float *b,
                                  const float *states);

/* The float64 GPU oracle on the uploaded inputs, into host y and mag (N*O*L doubles each). */
c1d_status c1d_gpu_session_oracle(c1d_gpu_session *g, double *y, double *mag);

/* The GPU sequence on the uploaded inputs, in the form impl's caps ask for (ex->states set to the
 * device states): device y allocated and poisoned, setup, warm-up, `repeats` runs each after an L2
 * flush and a fresh poison, timed by CUDA events around run() only; the last output is downloaded into
 * y_host as float32 (N, O, L) (the warm-up's into first, when given, and compared); teardown; device y
 * freed. budget_ms > 0: fewer runs (at least C1D_MIN_TIMED_RUNS) when `repeats` of them would
 * take longer than that by the warm-up's time (the default run's slow kernels). */
/* The device-to-device copy bandwidth (bytes read + written over the median time of `repeats` copies
 * of `bytes`, each after an L2 flush; gpu/device.h's c1d_gpu_copy_bandwidth): a memory-bound kernel's
 * ceiling. C1D_ERR_NO_DEVICE without CUDA. */
c1d_status c1d_gpu_copy_gbps(size_t bytes, int repeats, double *gbps);

#define C1D_MIN_TIMED_RUNS 5
c1d_status c1d_execute_gpu(c1d_gpu_session *g, const c1d_impl *impl, float *y_host, float *first,
                           int repeats, double budget_ms, c1d_exec *ex, c1d_timing *t);

#ifdef __cplusplus
}
#endif
#endif
