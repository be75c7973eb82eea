/* The oracle's AVX-512 kernels (x86 with AVX-512F): the whole MR x NR = 8 x 16 micro-tile in registers,
 * y's sums in 2*MR zmm of doubles and the chunk's m partials in MR zmm of floats (24 of 32 registers);
 * per step two x loads, one |x| load and 2*MR broadcasts feed 3*MR fmas. Same bits as every kernel
 * set (reference/oracle_kernels.h). */
#include "reference/oracle_kernels.h"

#if C1D_ORACLE_X86
#include <immintrin.h>
#include <stdint.h>

enum { MR = C1D_ORACLE_MR, NR = C1D_ORACLE_NR };
_Static_assert(C1D_ORACLE_MR == 8 && C1D_ORACLE_NR == 16, "the AVX-512 kernel is written for 8 x 16");
#define FOR_ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)

__attribute__((target("avx512f"))) static void microkernel_avx512(const double *xp, const float *ax,
                                                                  const double *wp, const float *aw,
                                                                  int64_t steps, const double *in,
                                                                  double *out) {
#define LOAD_ROW(i)                                        \
  __m512d y##i##0 = _mm512_load_pd(in + (i) * NR);         \
  __m512d y##i##1 = _mm512_load_pd(in + (i) * NR + 8);     \
  __m512 m##i = _mm512_setzero_ps();
  FOR_ROWS(LOAD_ROW)
#undef LOAD_ROW
  for (int64_t st = 0; st < steps; st++, xp += NR, ax += NR, wp += MR, aw += MR) {
    const __m512d x0 = _mm512_load_pd(xp), x1 = _mm512_load_pd(xp + 8);
    const __m512 a = _mm512_load_ps(ax);
#define STEP(i)                                             \
  {                                                         \
    const __m512d wv = _mm512_set1_pd(wp[i]);               \
    y##i##0 = _mm512_fmadd_pd(wv, x0, y##i##0);             \
    y##i##1 = _mm512_fmadd_pd(wv, x1, y##i##1);             \
    m##i = _mm512_fmadd_ps(_mm512_set1_ps(aw[i]), a, m##i); \
  }
    FOR_ROWS(STEP)
#undef STEP
  }
  /* m = m + (double)partial, lane by lane. */
#define STORE_ROW(i)                                                                               \
  _mm512_store_pd(out + (i) * NR, y##i##0);                                                        \
  _mm512_store_pd(out + (i) * NR + 8, y##i##1);                                                    \
  {                                                                                                \
    const double *mi = in + MR * NR + (i) * NR;                                                    \
    const __m512d lo = _mm512_cvtps_pd(_mm512_castps512_ps256(m##i));                              \
    const __m512d hi =                                                                             \
        _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(m##i), 1)));       \
    _mm512_store_pd(out + MR * NR + (i) * NR, _mm512_add_pd(_mm512_load_pd(mi), lo));             \
    _mm512_store_pd(out + MR * NR + (i) * NR + 8, _mm512_add_pd(_mm512_load_pd(mi + 8), hi));     \
  }
  FOR_ROWS(STORE_ROW)
#undef STORE_ROW
}
#undef FOR_ROWS

__attribute__((target("avx512f"))) static void pack_window_avx512(const float *src, double *xp, float *ax) {
  const __m512 v = _mm512_loadu_ps(src);
  _mm512_store_pd(xp, _mm512_cvtps_pd(_mm512_castps512_ps256(v)));
  _mm512_store_pd(xp + 8, _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1))));
  _mm512_store_ps(ax, _mm512_castsi512_ps(_mm512_and_epi32(_mm512_castps_si512(v), _mm512_set1_epi32(INT32_MAX))));
}

__attribute__((target("avx512f"))) static void stream_line_avx512(double *dst, const double *src) {
  _mm512_stream_pd(dst, _mm512_loadu_pd(src));
}

const c1d_oracle_kernels c1d_oracle_avx512_kernels = {
    .name = "avx512",
    .microkernel = microkernel_avx512,
    .pack_window = pack_window_avx512,
    .stream_line = stream_line_avx512,
};
#endif
