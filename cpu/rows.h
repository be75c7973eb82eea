/* Row kernels shared by the CPU implementations. Each output element keeps its own accumulation order;
 * the loops run across positions t, where lanes are independent outputs, so vectorising them changes
 * no element's arithmetic. Clones for x86-64-v4 (AVX-512) and v3 (AVX2+FMA) are picked at run time;
 * every clone performs the same IEEE operations (fmaf is a correctly rounded fma everywhere). */
#ifndef C1D_CPU_ROWS_H
#define C1D_CPU_ROWS_H

#include <stdint.h>

#include "numerics/clones.h" /* C1D_CLONES marks the row loops */
#include "reference/problem.h"

/* acc[t] = fma(xs(t), w, acc[t]) for t in [0, L), where xs(t) = x_row[t - shift] and 0 for t < shift:
 * one tap of one input channel, with the causal zero padding of the definition (fma with a zero). */
void c1d_row_fma(float *acc, const float *x_row, float w, int64_t shift, int64_t L);

/* c1d_row_fma with a history: for t < shift the tap reads hist[pad - shift + t] (the initial states'
 * row of length pad = (K-1)*D) instead of zero; hist NULL is c1d_row_fma. */
void c1d_row_fma_hist(float *acc, const float *x_row, const float *hist, int64_t pad, float w,
                      int64_t shift, int64_t L);

/* The activation and the output's rounding over a row: y[t] = round_to(dt, act(acc[t])). */
void c1d_row_finish(float *row, int act, int dt, int64_t L);

/* Kahan step per t: p = xs(t)*w rounded, then sum[t] += p with compensation comp[t]. */
void c1d_row_kahan(float *sum, float *comp, const float *x_row, float w, int64_t shift, int64_t L);

/* acc[t] = acc[t] + v[t]. */
void c1d_row_add(float *acc, const float *v, int64_t L);

/* Sets every element of row to value. */
void c1d_row_fill(float *row, float value, int64_t L);

#endif
