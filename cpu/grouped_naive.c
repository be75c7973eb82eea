/* grouped_naive: the naive order for every problem (groups, depthwise, initial states, SiLU, any element
 * types), and the low-precision contract that kernels such as Dao-AILab's causal-conv1d document:
 * exact products of the given values (an fma holds the product exactly), a float32 sum, the activation
 * in float32, one rounding to the output's type.
 * Per output: acc = b[o] (or +0), then for c over o's group, for k = 0..K-1: acc = fma(xs, w[o,c,k], acc),
 * xs the input or, before t = 0, the initial state (or 0, the fma still performed); then SiLU
 * (numerics/activation.h) and the rounding to y's type. The CPU twin of gpu_grouped and gpu_dw_naive. */
#include <stddef.h>

#include "cpu/rows.h"
#include "reference/impl.h"

static c1d_status grouped_naive_run(const c1d_shape *s, const float *x, const float *w, const float *b,
                                    float *y, c1d_exec *ex) {
  const int64_t cg = c1d_cin_per_group(s), pad = c1d_pad(s);
  const float *st = ex ? ex->states : NULL;
#pragma omp parallel for schedule(dynamic, 1)
  for (int64_t no = 0; no < s->N * s->O; no++) {
    const int64_t n = no / s->O, o = no % s->O, c0 = c1d_group_first_c(s, o);
    float *acc = y + c1d_y_index(s, n, o, 0);
    c1d_row_fill(acc, s->bias ? b[o] : 0.0f, s->L);
    for (int64_t c = c0; c < c0 + cg; c++)
      for (int64_t k = 0; k < s->K; k++)
        c1d_row_fma_hist(acc, x + c1d_x_index(s, n, c, 0), s->states ? st + c1d_s_index(s, n, c, -pad) : NULL,
                         pad, w[c1d_w_index(s, o, c, k)], -c1d_source_time(s, 0, k), s->L);
    c1d_row_finish(acc, s->act, s->dt.y, s->L);
  }
  return C1D_OK;
}

/* On the plain problem it computes naive's bits exactly: naive is the row that runs there. */
static const char *grouped_naive_supported(const c1d_shape *s) {
  return c1d_shape_is_plain(s) ? "the plain problem (naive computes the same bits)" : NULL;
}

const c1d_impl c1d_cpu_grouped_naive = {
    .name = "grouped_naive",
    .summary = "the contract: exact products (fma), fp32 sum in the naive order over o's group, "
               "fp32 SiLU, one rounding to y's type; any groups, states, types",
    .backend = C1D_BACKEND_CPU,
    .precision = C1D_PREC_FP32,
    .caps = C1D_CAP_GROUPS | C1D_CAP_STATES | C1D_CAP_SILU | C1D_CAP_DTYPES,
    .supported = grouped_naive_supported,
    .run = grouped_naive_run,
};
