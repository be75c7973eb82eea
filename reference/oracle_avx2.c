/* The oracle's AVX2 + FMA kernels (x86 without AVX-512: AMD Zen 1-4 before AVX-512, Intel client
 * parts, Haswell to Alder Lake). 16 ymm registers do not hold the 8 x 16 micro-tile (it would take
 * 48), so the microkernel walks it as four sub-blocks of 4 rows x 8 positions, each over every step
 * of the chunk: y's sums in 8 ymm of doubles, m's float partials in 4 ymm of floats, the step's x
 * (2 ymm) and |x| (1 ymm) and one broadcast register: 16 in all, no spills. Per step a sub-block does
 * 12 fmas for 3 vector loads and 8 broadcasts, which keeps two FMA pipes busy on CPUs that load two
 * or three values a cycle. Every element keeps its own chain (reference/oracle_kernels.h), so the bits
 * are the other kernels'. */
#include "reference/oracle_kernels.h"

#if C1D_ORACLE_X86
#include <immintrin.h>
#include <stdint.h>

enum { MR = C1D_ORACLE_MR, NR = C1D_ORACLE_NR, SUB_ROWS = 4, SUB_COLS = 8 };
_Static_assert(C1D_ORACLE_MR % SUB_ROWS == 0 && C1D_ORACLE_NR % SUB_COLS == 0, "sub-blocks tile the micro-tile");
#define FOR_SUB_ROWS(X) X(0) X(1) X(2) X(3)

/* Rows r0..r0+3, positions j0..j0+7 of the micro-tile: xp, ax, wp, aw point at the sub-block's first
 * column or row in step 0, in and out at its first y sum. */
__attribute__((target("avx2,fma"), always_inline)) static inline void sub_block_avx2(
    const double *xp, const float *ax, const double *wp, const float *aw, int64_t steps, const double *in,
    double *out) {
#define LOAD_ROW(i)                                         \
  __m256d y##i##0 = _mm256_load_pd(in + (i) * NR);          \
  __m256d y##i##1 = _mm256_load_pd(in + (i) * NR + 4);      \
  __m256 m##i = _mm256_setzero_ps();
  FOR_SUB_ROWS(LOAD_ROW)
#undef LOAD_ROW
  for (int64_t st = 0; st < steps; st++, xp += NR, ax += NR, wp += MR, aw += MR) {
    const __m256d x0 = _mm256_load_pd(xp), x1 = _mm256_load_pd(xp + 4);
    const __m256 a = _mm256_load_ps(ax);
#define STEP(i)                                                   \
  {                                                               \
    const __m256d wv = _mm256_broadcast_sd(wp + (i));             \
    y##i##0 = _mm256_fmadd_pd(wv, x0, y##i##0);                   \
    y##i##1 = _mm256_fmadd_pd(wv, x1, y##i##1);                   \
    m##i = _mm256_fmadd_ps(_mm256_broadcast_ss(aw + (i)), a, m##i); \
  }
    FOR_SUB_ROWS(STEP)
#undef STEP
  }
  /* m = m + (double)partial, lane by lane. */
#define STORE_ROW(i)                                                                              \
  _mm256_store_pd(out + (i) * NR, y##i##0);                                                       \
  _mm256_store_pd(out + (i) * NR + 4, y##i##1);                                                   \
  {                                                                                               \
    const double *mi = in + MR * NR + (i) * NR;                                                   \
    _mm256_store_pd(out + MR * NR + (i) * NR,                                                     \
                    _mm256_add_pd(_mm256_load_pd(mi), _mm256_cvtps_pd(_mm256_castps256_ps128(m##i)))); \
    _mm256_store_pd(out + MR * NR + (i) * NR + 4,                                                 \
                    _mm256_add_pd(_mm256_load_pd(mi + 4), _mm256_cvtps_pd(_mm256_extractf128_ps(m##i, 1)))); \
  }
  FOR_SUB_ROWS(STORE_ROW)
#undef STORE_ROW
}
#undef FOR_SUB_ROWS

__attribute__((target("avx2,fma"))) static void microkernel_avx2(const double *xp, const float *ax,
                                                                 const double *wp, const float *aw,
                                                                 int64_t steps, const double *in,
                                                                 double *out) {
  /* Each sub-block reads only its own part of `in` before writing the same part of `out`, so in == out
   * is safe. */
  for (int r0 = 0; r0 < MR; r0 += SUB_ROWS)
    for (int j0 = 0; j0 < NR; j0 += SUB_COLS)
      sub_block_avx2(xp + j0, ax + j0, wp + r0, aw + r0, steps, in + r0 * NR + j0, out + r0 * NR + j0);
}

__attribute__((target("avx2,fma"))) static void pack_window_avx2(const float *src, double *xp, float *ax) {
  const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(INT32_MAX));
  for (int h = 0; h < NR; h += 8) {
    const __m256 v = _mm256_loadu_ps(src + h);
    _mm256_store_pd(xp + h, _mm256_cvtps_pd(_mm256_castps256_ps128(v)));
    _mm256_store_pd(xp + h + 4, _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)));
    _mm256_store_ps(ax + h, _mm256_and_ps(v, abs_mask));
  }
}

__attribute__((target("avx2,fma"))) static void stream_line_avx2(double *dst, const double *src) {
  _mm256_stream_pd(dst, _mm256_loadu_pd(src));
  _mm256_stream_pd(dst + 4, _mm256_loadu_pd(src + 4));
}

const c1d_oracle_kernels c1d_oracle_avx2_kernels = {
    .name = "avx2",
    .microkernel = microkernel_avx2,
    .pack_window = pack_window_avx2,
    .stream_line = stream_line_avx2,
};
#endif
