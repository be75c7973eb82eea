/* CPU execution and timing: NaN poison before every run (outside the timed region), an optional
 * warm-up, then `repeats` runs each timed by CLOCK_MONOTONIC around run() alone. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness/execute.h"

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

void c1d_timing_summarize(double *ms, int n, c1d_timing *t) {
  qsort(ms, (size_t)n, sizeof *ms, cmp_double);
  t->repeats = n;
  t->min_ms = ms[0];
  t->median_ms = n % 2 ? ms[n / 2] : 0.5 * (ms[n / 2 - 1] + ms[n / 2]);
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* 0xFF bytes form the quiet NaN 0xFFFFFFFF, the same poison as c1d_gpu_poison. */
static void poison(float *y, int64_t count) { memset(y, 0xff, (size_t)count * sizeof *y); }

c1d_status c1d_execute_cpu(const c1d_impl *impl, const c1d_shape *s, const float *x, const float *w,
                           const float *b, float *y, float *first, int repeats, int warmup,
                           c1d_exec *ex, c1d_timing *t) {
  c1d_status st = C1D_OK;
  int set_up = 0;
  const int64_t ny = c1d_y_count(s);
  double *ms = malloc((size_t)repeats * sizeof *ms);
  if (!ms) return c1d_fail(C1D_ERR_NO_MEMORY, "cannot allocate %d timings", repeats);
  if (impl->setup) {
    if ((st = impl->setup(s, ex)) != C1D_OK) goto done;
    set_up = 1;
  }
  if (warmup) {
    poison(y, ny);
    if ((st = impl->run(s, x, w, b, y, ex)) != C1D_OK) goto done;
  }
  for (int r = 0; r < repeats; r++) {
    /* The first run's output (the warm-up's, or the first timed one's) is kept for the race check. */
    if (first && r == (warmup ? 0 : 1)) memcpy(first, y, (size_t)ny * sizeof *y);
    poison(y, ny);
    double t0 = now_ms();
    st = impl->run(s, x, w, b, y, ex);
    ms[r] = now_ms() - t0;
    if (st != C1D_OK) goto done;
  }
  c1d_timing_summarize(ms, repeats, t);
  t->repeat_checked = first && (warmup || repeats > 1);
  t->repeat_identical = t->repeat_checked && memcmp(first, y, (size_t)ny * sizeof *y) == 0;
done:
  if (set_up && impl->teardown) impl->teardown(ex);
  free(ms);
  return st;
}
