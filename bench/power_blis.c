/* The BLIS order of the power benchmark: im2col in float32, then BLIS's SGEMM (bli_sgemm, its own
 * kernels and blocking for this CPU: skx, haswell, zen, ...) per batch element and group onto y prefilled
 * with the bias, as power_sgemm.c does with OpenBLAS. libblis is opened at run time (RTLD_LOCAL): BLIS
 * also exports cblas_sgemm and sgemm_, which must not take OpenBLAS's place in this program. One BLIS
 * thread, so that the output does not depend on the machine's core count. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>

#include "bench/power_internal.h"

/* bli_sgemm's ABI (blis.h: trans_t an enum, BLIS_NO_TRANSPOSE = 0; dim_t and inc_t a signed long). */
typedef void (*bli_sgemm_fn)(int transa, int transb, long m, long n, long k, const float *alpha, const float *a,
                             long rs_a, long cs_a, const float *b, long rs_b, long cs_b, const float *beta, float *c,
                             long rs_c, long cs_c);
typedef void (*bli_threads_fn)(long n);

static bli_sgemm_fn sgemm_fn;

static void open_blis(void) {
#ifndef C1D_POWER_NO_BLIS /* left out of the sanitizer builds (bench/CMakeLists.txt) */
  void *lib = dlopen("libblis.so.4", RTLD_NOW | RTLD_LOCAL);
  bli_threads_fn threads = lib ? (bli_threads_fn)dlsym(lib, "bli_thread_set_num_threads") : NULL;
  bli_sgemm_fn fn = lib ? (bli_sgemm_fn)dlsym(lib, "bli_sgemm") : NULL;
  if (fn && threads) {
    threads(1);
    sgemm_fn = fn;
  }
#endif
}

static bli_sgemm_fn blis_sgemm(void) {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, open_blis);
  return sgemm_fn;
}

int power_blis_available(void) { return blis_sgemm() != NULL; }

c1d_status power_blis(const c1d_shape *s, const float *x, const float *w, const float *b, const float *st,
                      float *y) {
  bli_sgemm_fn sgemm = blis_sgemm();
  if (!sgemm) return c1d_fail(C1D_ERR_UNSUPPORTED, "power: libblis.so.4 cannot be opened (apt-get install libblis-dev)");
  const int64_t CK = s->C * s->K, L = s->L, G = c1d_groups(s), og = c1d_cout_per_group(s);
  const int64_t gk = c1d_terms(s); /* (C/G)*K: the reduction of one group */
  float *col = malloc((size_t)(CK * L) * sizeof *col);
  if (!col) return c1d_fail(C1D_ERR_NO_MEMORY, "power: cannot allocate im2col (%lld floats)", (long long)(CK * L));
  const float one = 1.0f;
  for (int64_t n = 0; n < s->N; n++) {
    float *yn = power_im2col_and_bias(s, x, b, st, n, col, y);
    /* row-major: row strides gk, L and L, column strides 1 */
    for (int64_t g = 0; g < G; g++)
      sgemm(0, 0, (long)og, (long)L, (long)gk, &one, w + g * og * gk, (long)gk, 1, col + g * gk * L, (long)L, 1, &one,
            yn + g * og * L, (long)L, 1);
  }
  if (s->act == C1D_ACT_SILU)
    for (int64_t i = 0; i < c1d_y_count(s); i++) y[i] = power_silu_libm(y[i]);
  free(col);
  return C1D_OK;
}
