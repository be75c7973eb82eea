/* tf32_inputs: the model of TF32 hardware. x and w are rounded to TF32 (10 mantissa bits, round to
 * nearest with ties away, as cvt.rna.tf32.f32), then accumulated in float32 in the naive order
 * (b first, unrounded; c outer, k inner; fma). Tensor cores sum in another order, so this predicts the
 * error of a TF32 path statistically (its relative L2), not bit for bit. */
#include <stdlib.h>

#include "cpu/rows.h"
#include "numerics/arith.h"
#include "reference/impl.h"

extern const c1d_impl c1d_cpu_naive;

static c1d_status tf32_inputs_run(const c1d_shape *s, const float *x, const float *w, const float *b,
                                  float *y, c1d_exec *ex) {
  const int64_t nx = c1d_x_count(s), nw = c1d_w_count(s);
  float *xr = malloc((size_t)nx * sizeof *xr), *wr = malloc((size_t)nw * sizeof *wr);
  c1d_status st = C1D_OK;
  if (!xr || !wr) {
    st = c1d_fail(C1D_ERR_NO_MEMORY, "tf32_inputs: cannot allocate %.1f MB for rounded inputs",
                  (double)(nx + nw) * 4e-6);
    goto done;
  }
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < nx; i++) xr[i] = c1d_round_tf32_rna(x[i]);
  for (int64_t i = 0; i < nw; i++) wr[i] = c1d_round_tf32_rna(w[i]);
  st = c1d_cpu_naive.run(s, xr, wr, b, y, ex);
done:
  free(xr);
  free(wr);
  return st;
}

const c1d_impl c1d_cpu_tf32_inputs = {
    .name = "tf32_inputs",
    .summary = "model of TF32: x, w rounded to TF32 (rna), then fp32 fma in the naive order",
    .backend = C1D_BACKEND_CPU,
    .precision = C1D_PREC_TF32,
    .run = tf32_inputs_run,
};
