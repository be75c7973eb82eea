/* The oracle's portable kernels: plain C for every CPU without the x86 kernels (aarch64, POWER, x86
 * without AVX2). The loops over NR positions are independent lanes, written so that the compiler
 * vectorises them (gcc -O3: NEON on aarch64, where fmaf is one instruction, and SSE2 for y on x86).
 * y's multiply-then-add is one rounding of an exact product (-ffp-contract=off keeps it two
 * operations; either way the bits are the fma's); m's fmaf is explicit, as the contract wants. */
#include "reference/oracle_kernels.h"

#include <math.h>
#include <string.h>

enum { MR = C1D_ORACLE_MR, NR = C1D_ORACLE_NR };

static void microkernel_portable(const double *xp, const float *ax, const double *wp, const float *aw,
                                 int64_t steps, const double *in, double *out) {
  double ya[MR][NR];
  float mp[MR][NR];
  memcpy(ya, in, sizeof ya);
  memset(mp, 0, sizeof mp); /* +0.0f */
  for (int64_t st = 0; st < steps; st++, xp += NR, ax += NR, wp += MR, aw += MR) {
    for (int i = 0; i < MR; i++)
      for (int j = 0; j < NR; j++) ya[i][j] = ya[i][j] + wp[i] * xp[j];
    for (int i = 0; i < MR; i++)
      for (int j = 0; j < NR; j++) mp[i][j] = fmaf(aw[i], ax[j], mp[i][j]);
  }
  memcpy(out, ya, sizeof ya);
  for (int i = 0; i < MR; i++)
    for (int j = 0; j < NR; j++) out[MR * NR + i * NR + j] = in[MR * NR + i * NR + j] + (double)mp[i][j];
}

static void pack_x_portable(const c1d_shape *s, const float *x, int64_t n, int64_t c0, int64_t cc,
                            int64_t t0, int64_t tcols, int64_t kc, double *xp, float *ax) {
  const int64_t K = s->K, L = s->L, pad = c1d_pad(s);
  for (int64_t c = 0; c < cc; c++) {
    const float *row = x + c1d_x_index(s, n, c0 + c, 0);
    for (int64_t k = 0; k < K; k++) {
      const int64_t step = c * K + k, shift = t0 + k * s->D - pad;
      for (int64_t tm = 0; tm < tcols / NR; tm++) {
        const int64_t at = (tm * kc + step) * NR, src = shift + tm * NR;
        if (src >= 0 && src + NR <= L) { /* the whole window inside the row: a straight loop */
          for (int j = 0; j < NR; j++) {
            xp[at + j] = (double)row[src + j];
            ax[at + j] = fabsf(row[src + j]);
          }
          continue;
        }
        for (int j = 0; j < NR; j++) {
          const float v = (src + j >= 0 && src + j < L) ? row[src + j] : 0.0f;
          xp[at + j] = (double)v;
          ax[at + j] = fabsf(v);
        }
      }
    }
  }
}

static void copy_portable(double *dst, const double *src, int64_t n) {
  memcpy(dst, src, (size_t)n * sizeof(double));
}

const c1d_oracle_kernels c1d_oracle_portable_kernels = {
    .name = "portable",
    .microkernel = microkernel_portable,
    .pack_x = pack_x_portable,
    .copy_out = copy_portable,
};
