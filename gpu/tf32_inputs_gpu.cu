/* gpu_tf32_inputs: the TF32 model on the GPU, the bit-exact twin of the CPU `tf32_inputs`. x and w are
 * rounded to TF32 with c1d_round_tf32_rna (cvt.rna's rounding: nearest, ties away) into scratch buffers
 * allocated in setup, then every output is accumulated in the naive order of cpu/naive.c: acc = b[o]
 * (unrounded) or +0, then for c = 0..C-1, for k = 0..K-1, acc = fma(x', w', acc) with x' = 0 where the
 * tap reads before t = 0 (the fma with zero is still performed, as the CPU does). Every fma is explicit
 * (c1d_fma = __fmaf_rn) and the file is built with --fmad=false, so the bits equal the CPU twin's.
 * It predicts a TF32 library path's error statistically (tensor cores sum in another order); its use is
 * speed: the model at the headline shape in milliseconds instead of the CPU's seconds.
 * Layout: a thread owns OB = 8 consecutive output channels at one (n, t), so each x' load feeds 8 fmas;
 * the weights of a block are uniform across the warp (broadcast loads). Rounding is in the timed run. */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#include "gpu/check.h"
#include "gpu/device.h"
#include "numerics/arith.h"
#include "reference/impl.h"

#define OB 8
#define THREADS 256

// --- kernels -------------------------------------------------------------------------------------

__global__ void tf32_round_kernel(const float *__restrict__ in, float *__restrict__ out, int64_t count) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < count;
       i += (int64_t)gridDim.x * blockDim.x)
    out[i] = c1d_round_tf32_rna(in[i]);
}

/* grid.x: blocks of THREADS positions t; grid.y: n * ceil(O/OB) + output-channel group. */
__global__ void tf32_inputs_kernel(c1d_shape s, const float *__restrict__ xr,
                                   const float *__restrict__ wr, const float *__restrict__ b,
                                   float *__restrict__ y) {
  const int64_t groups = (s.O + OB - 1) / OB;
  const int64_t n = blockIdx.y / groups, o0 = (blockIdx.y % groups) * OB;
  const int64_t t = blockIdx.x * (int64_t)THREADS + threadIdx.x;
  if (t >= s.L) return;
  float acc[OB];
#pragma unroll
  for (int j = 0; j < OB; j++) acc[j] = (o0 + j < s.O && s.bias) ? b[o0 + j] : 0.0f;
  for (int64_t c = 0; c < s.C; c++) {
    const float *xrow = xr + c1d_x_index(&s, n, c, 0);
    for (int64_t k = 0; k < s.K; k++) {
      const int64_t src = c1d_source_time(&s, t, k);
      const float xv = src >= 0 ? xrow[src] : 0.0f;
#pragma unroll
      for (int j = 0; j < OB; j++)
        if (o0 + j < s.O) acc[j] = c1d_fma(xv, wr[c1d_w_index(&s, o0 + j, c, k)], acc[j]);
    }
  }
#pragma unroll
  for (int j = 0; j < OB; j++)
    if (o0 + j < s.O) y[c1d_y_index(&s, n, o0 + j, t)] = acc[j];
}

// --- descriptor ----------------------------------------------------------------------------------

typedef struct tf32_state {
  float *xr, *wr;
} tf32_state;

static unsigned grid_for(int64_t count) {
  int64_t blocks = (count + THREADS - 1) / THREADS;
  return (unsigned)(blocks < 1 ? 1 : blocks > 65536 ? 65536 : blocks);
}

static const char *tf32_supported(const c1d_shape *s) {
  const int64_t groups = (s->O + OB - 1) / OB;
  if (s->N * groups > 65535) return "N * ceil(O/8) exceeds the grid's y dimension (65535)";
  if ((s->L + THREADS - 1) / THREADS > 2147483647) return "L exceeds the grid's x dimension";
  return NULL;
}

static void tf32_teardown(c1d_exec *ex) {
  tf32_state *st = (tf32_state *)ex->state;
  if (!st) return;
  c1d_gpu_free(st->xr);
  c1d_gpu_free(st->wr);
  free(st);
  ex->state = NULL;
}

static c1d_status tf32_setup(const c1d_shape *s, c1d_exec *ex) {
  c1d_status st = C1D_OK;
  tf32_state *t = (tf32_state *)calloc(1, sizeof *t);
  if (!t) return c1d_fail(C1D_ERR_NO_MEMORY, "cannot allocate the gpu_tf32_inputs state");
  ex->state = t;
  if ((st = c1d_gpu_malloc((void **)&t->xr, (size_t)c1d_x_count(s) * sizeof(float),
                           "TF32-rounded x")) ||
      (st = c1d_gpu_malloc((void **)&t->wr, (size_t)c1d_w_count(s) * sizeof(float),
                           "TF32-rounded w")))
    tf32_teardown(ex);
  return st;
}

static c1d_status tf32_run(const c1d_shape *s, const float *x, const float *w, const float *b, float *y,
                           c1d_exec *ex) {
  c1d_status st = C1D_OK;
  tf32_state *t = (tf32_state *)ex->state;
  cudaStream_t stream = (cudaStream_t)ex->stream;
  if (!t) return c1d_fail(C1D_ERR_INTERNAL, "gpu_tf32_inputs run without setup");
  tf32_round_kernel<<<grid_for(c1d_x_count(s)), THREADS, 0, stream>>>(x, t->xr, c1d_x_count(s));
  C1D_LAUNCHED("tf32_round_kernel (x)");
  tf32_round_kernel<<<grid_for(c1d_w_count(s)), THREADS, 0, stream>>>(w, t->wr, c1d_w_count(s));
  C1D_LAUNCHED("tf32_round_kernel (w)");
  {
    dim3 grid((unsigned)((s->L + THREADS - 1) / THREADS), (unsigned)(s->N * ((s->O + OB - 1) / OB)));
    tf32_inputs_kernel<<<grid, THREADS, 0, stream>>>(*s, t->xr, t->wr, b, y);
    C1D_LAUNCHED("tf32_inputs_kernel");
  }
  ex->algo[0] = '\0';
  snprintf(ex->math, sizeof ex->math, "%s", "TF32-rounded inputs (rna), fp32 fma, naive order");
  ex->used_tf32 = 1;
done:
  return st;
}

extern "C" const c1d_impl c1d_gpu_tf32_inputs = {
    "gpu_tf32_inputs",
    "model of TF32 on the GPU: x, w rounded to TF32 (rna), fp32 fma in the naive order; twin of "
    "tf32_inputs",
    C1D_BACKEND_GPU,
    C1D_PREC_TF32,
    "tf32_inputs",
    1, /* bit-exact twin */
    C1D_TIER_MAIN,
    tf32_supported,
    tf32_setup,
    tf32_teardown,
    tf32_run,
};
