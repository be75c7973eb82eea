/* naive: the story's first kernel, and the order every "naive-order" GPU kernel must reproduce.
 * Per output: acc = b[o] (or +0), then for c = 0..C-1, for k = 0..K-1: acc = fma(x, w[o,c,k], acc),
 * with x = 0 where the tap reads before t = 0 (the fma is still performed). Float32 throughout.
 * Twin of gpu_naive, gpu_tiled_smem and gpu_fp32_fast. */
#include "cpu/rows.h"
#include "reference/impl.h"

static c1d_status naive_run(const c1d_shape *s, const float *x, const float *w, const float *b,
                            float *y, c1d_exec *ex) {
#pragma omp parallel for schedule(dynamic, 1)
  for (int64_t no = 0; no < s->N * s->O; no++) {
    const int64_t n = no / s->O, o = no % s->O;
    float *acc = y + c1d_y_index(s, n, o, 0);
    c1d_row_fill(acc, s->bias ? b[o] : 0.0f, s->L);
    for (int64_t c = 0; c < s->C; c++)
      for (int64_t k = 0; k < s->K; k++)
        c1d_row_fma(acc, x + c1d_x_index(s, n, c, 0), w[c1d_w_index(s, o, c, k)],
                    -c1d_source_time(s, 0, k), s->L);
  }
  return C1D_OK;
}

const c1d_impl c1d_cpu_naive = {
    .name = "naive",
    .summary = "fp32; acc=b, fma over c outer, k inner (the naive order)",
    .backend = C1D_BACKEND_CPU,
    .precision = C1D_PREC_FP32,
    .run = naive_run,
};
