/* The causal conv1d of conv1d.h, tiled in time as a GPU kernel would be (a block of CONV1D_TILE
 * positions, the weights of one output channel at a time), with a float32 sum over c and k in order: a
 * correct kernel, whose outputs differ from the exact ones by float32 rounding only (but for the planted
 * bug, conv1d.h). */
#include "conv1d.h"

void conv1d(const float *x, const float *w, const float *b, float *y, int N, int C, int O, int L, int K, int D) {
  for (int n = 0; n < N; n++)
    for (int o = 0; o < O; o++)
      for (int t0 = 0; t0 < L; t0 += CONV1D_TILE)
        for (int t = t0; t < t0 + CONV1D_TILE && t < L; t++)
          y[((long)n * O + o) * L + t] = conv1d_output(x, w, b, n, o, t, C, L, K, D);
}
