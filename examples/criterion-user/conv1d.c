/* The causal conv1d of conv1d.h, tiled in time as a GPU kernel would be (a block of CONV1D_TILE
 * positions, the weights of one output channel at a time), with a float32 sum over c and k in order: a
 * correct kernel, whose outputs differ from the exact ones by float32 rounding only.
 *
 * Built with -DPLANTED_BUG it carries a bug of the kind that survives allclose: at the last 4 positions
 * of each tile, output channel 5 reads tap 0 of input channel 0 through a staging copy that keeps 10 of
 * x's 23 mantissa bits. The error is below 2^-10 |w x| (6e-5 for |w| <= 1/16 and |x| <= 1), under
 * allclose's atol of 1e-4, and a hundred times float32's rounding noise: no correct kernel makes it. */
#include "conv1d.h"

#include <stdint.h>
#include <string.h>

#ifdef PLANTED_BUG
static float staged(float v, int o, int c, int t) {
  if (o != 5 || c != 0 || t % CONV1D_TILE < CONV1D_TILE - 4) return v;
  uint32_t u;
  memcpy(&u, &v, sizeof u);
  u &= ~UINT32_C(0x1fff); /* the staging buffer's type holds 10 mantissa bits */
  memcpy(&v, &u, sizeof v);
  return v;
}
#else
static float staged(float v, int o, int c, int t) {
  (void)o;
  (void)c;
  (void)t;
  return v;
}
#endif

void conv1d(const float *x, const float *w, const float *b, float *y, int N, int C, int O, int L, int K, int D) {
  for (int n = 0; n < N; n++)
    for (int o = 0; o < O; o++)
      for (int t0 = 0; t0 < L; t0 += CONV1D_TILE)
        for (int t = t0; t < t0 + CONV1D_TILE && t < L; t++) {
          float acc = b[o];
          for (int c = 0; c < C; c++)
            for (int k = 0; k < K; k++) {
              const int src = t - (K - 1 - k) * D;
              if (src < 0) continue; /* the causal zeros */
              const float v = x[((long)n * C + c) * L + src];
              acc += w[((long)o * C + c) * K + k] * (k == 0 ? staged(v, o, c, t) : v);
            }
          y[((long)n * O + o) * L + t] = acc;
        }
}
