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

static void pack_window_portable(const float *src, double *xp, float *ax) {
  for (int j = 0; j < NR; j++) {
    xp[j] = (double)src[j];
    ax[j] = fabsf(src[j]);
  }
}

const c1d_oracle_kernels c1d_oracle_portable_kernels = {
    .name = "portable",
    .microkernel = microkernel_portable,
    .pack_window = pack_window_portable,
    .stream_line = NULL, /* plain copies */
};
