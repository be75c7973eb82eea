/* Row kernels: see rows.h. The padding part of each row (t < shift) multiplies a zero, exactly as the
 * GPU kernels do when they stage zeros, so an accumulator's sign of zero matches theirs too. */
#include "cpu/rows.h"

#include "numerics/activation.h"
#include "numerics/arith.h"
#include "reference/dtype.h"

static int64_t clamp_shift(int64_t shift, int64_t L) { return shift < L ? shift : L; }

C1D_CLONES void c1d_row_fma(float *restrict acc, const float *restrict x_row, float w, int64_t shift,
                            int64_t L) {
  int64_t t0 = clamp_shift(shift, L);
  for (int64_t t = 0; t < t0; t++) acc[t] = c1d_fma(0.0f, w, acc[t]);
  const float *xs = x_row - shift;
  for (int64_t t = t0; t < L; t++) acc[t] = c1d_fma(xs[t], w, acc[t]);
}

C1D_CLONES void c1d_row_kahan(float *restrict sum, float *restrict comp, const float *restrict x_row,
                              float w, int64_t shift, int64_t L) {
  int64_t t0 = clamp_shift(shift, L);
  for (int64_t t = 0; t < t0; t++) c1d_kahan_step(&sum[t], &comp[t], c1d_mul(0.0f, w));
  const float *xs = x_row - shift;
  for (int64_t t = t0; t < L; t++) c1d_kahan_step(&sum[t], &comp[t], c1d_mul(xs[t], w));
}

C1D_CLONES void c1d_row_add(float *restrict acc, const float *restrict v, int64_t L) {
  for (int64_t t = 0; t < L; t++) acc[t] = c1d_add(acc[t], v[t]);
}

void c1d_row_fill(float *row, float value, int64_t L) {
  for (int64_t t = 0; t < L; t++) row[t] = value;
}

C1D_CLONES void c1d_row_fma_hist(float *restrict acc, const float *restrict x_row, const float *restrict hist,
                                 int64_t pad, float w, int64_t shift, int64_t L) {
  if (!hist) {
    c1d_row_fma(acc, x_row, w, shift, L);
    return;
  }
  int64_t t0 = clamp_shift(shift, L);
  const float *hs = hist + pad - shift;
  for (int64_t t = 0; t < t0; t++) acc[t] = c1d_fma(hs[t], w, acc[t]);
  const float *xs = x_row - shift;
  for (int64_t t = t0; t < L; t++) acc[t] = c1d_fma(xs[t], w, acc[t]);
}

void c1d_row_finish(float *row, int act, int dt, int64_t L) {
  if (act == C1D_ACT_SILU)
    for (int64_t t = 0; t < L; t++) row[t] = c1d_silu_f32(row[t]);
  if (dt != C1D_DTYPE_F32)
    for (int64_t t = 0; t < L; t++) row[t] = c1d_round_to_dtype((c1d_dtype)dt, row[t]);
}
