/* gpu_tiled_smem: the story's shared-memory kernel. A block of 8 warps computes 8 output channels
 * (one per warp) x 32 positions (one per lane) of one batch row n. For each stage of input channels
 * the block stages, per channel, the 32+(K-1)*D inputs its positions read (+0 before t = 0 and past
 * L) and each warp's K weights per channel, synchronises, and every thread adds its K products per
 * channel in the naive order:
 *   acc = b[o] (or +0); for c = 0..C-1, for k = 0..K-1: acc = fma(x, w[o,c,k], acc)
 * so it equals gpu_naive and cpu/naive.c bit for bit. A stage holds up to 32 channels (fewer when the
 * window is wide) so that its two barriers are paid once per stage, not once per channel; staging
 * several channels at once changes no element's order.
 * Threads whose (o, t) lies outside the tensor still stage and reach every barrier; they only skip the
 * final store. Limits: one channel's window plus its 8*K weights must fit in 48 KiB of shared memory
 * (supported() says so otherwise). K = 4 has its own instance (weights read four at a time). */
#include "gpu/launch.h"
#include "numerics/arith.h"

#define TILED_WARPS 8                       /* output channels per block */
#define TILED_THREADS (32 * TILED_WARPS)
#define TILED_MAX_STAGE 32                  /* input channels per stage, at most */
#define TILED_SMEM_BYTES (48 * 1024)        /* no opt-in needed below this */

/* Floats of shared memory for a stage of cc channels: the windows, padded to 16 bytes, then the
 * weights of the 8 output channels. */
static int64_t tiled_stage_floats(const c1d_shape *s, int64_t cc) {
  const int64_t W = 32 + c1d_pad(s);
  return ((cc * W + 3) & ~INT64_C(3)) + TILED_WARPS * cc * s->K;
}

// --- kernel -------------------------------------------------------------------------------------

/* KT > 0: K known at compile time (KT % 4 == 0 reads weights as float4); KT == 0: K from s. */
template <int KT>
__global__ void __launch_bounds__(TILED_THREADS)
    tiled_smem_kernel(const c1d_shape s, const int stage, const float *__restrict__ x,
                      const float *__restrict__ w, const float *__restrict__ b,
                      float *__restrict__ y) {
  extern __shared__ float4 tiled_smem_raw[]; /* float4: 16-byte alignment for the weight reads */
  float *const xs = reinterpret_cast<float *>(tiled_smem_raw);
  const int K = KT > 0 ? KT : (int)s.K;
  const int pad = (int)c1d_pad(&s); /* supported() bounds it by 12 Ki */
  const int W = 32 + pad;           /* window of one channel */
  const int D = K > 1 ? (int)s.D : 0; /* (K-1)*D <= pad; with K = 1, D is never used */
  float *const ws = xs + ((stage * W + 3) & ~3);
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int wrow = stage * K; /* one warp's weights per stage */

  C1D_FOR_BLOCK_Z(n, s.N)
  C1D_FOR_BLOCK_Y(ob, c1d_ceil_div(s.O, TILED_WARPS))
  C1D_FOR_BLOCK_X(tb, c1d_ceil_div(s.L, 32)) {
    const int64_t o = ob * TILED_WARPS + warp, t0 = tb * 32, t = t0 + lane;
    const bool o_in = o < s.O;
    const int64_t o_read = o_in ? o : s.O - 1; /* rows past O stage zeros; never read past w */
    float acc = (s.bias && o_in) ? b[o] : 0.0f;

    for (int64_t c0 = 0; c0 < s.C; c0 += stage) {
      const int ccn = (int)(s.C - c0 < stage ? s.C - c0 : stage);
      /* The windows: one warp per channel row, one lane per input time. */
      for (int cc = warp; cc < ccn; cc += TILED_WARPS) {
        const float *xr = x + c1d_x_index(&s, n, c0 + cc, 0);
        for (int j = lane; j < W; j += 32) {
          const int64_t ts = t0 - pad + j;
          xs[cc * W + j] = (ts >= 0 && ts < s.L) ? xr[ts] : 0.0f;
        }
      }
      /* This warp's weights w[o, c0 .. c0+ccn, 0 .. K): contiguous in w. */
      {
        const float *wr = w + c1d_w_index(&s, o_read, c0, 0);
        for (int j = lane; j < ccn * K; j += 32) ws[warp * wrow + j] = o_in ? wr[j] : 0.0f;
      }
      __syncthreads();

      const float *xt = xs + lane;
      const float *wt = ws + warp * wrow;
      for (int cc = 0; cc < ccn; cc++, xt += W, wt += K) {
        if constexpr (KT > 0 && KT % 4 == 0) {
#pragma unroll
          for (int q = 0; q < KT / 4; q++) {
            const float4 wv = *reinterpret_cast<const float4 *>(wt + 4 * q);
            acc = c1d_fma(xt[(4 * q + 0) * D], wv.x, acc);
            acc = c1d_fma(xt[(4 * q + 1) * D], wv.y, acc);
            acc = c1d_fma(xt[(4 * q + 2) * D], wv.z, acc);
            acc = c1d_fma(xt[(4 * q + 3) * D], wv.w, acc);
          }
        } else {
          for (int k = 0; k < K; k++) acc = c1d_fma(xt[k * D], wt[k], acc);
        }
      }
      __syncthreads(); /* the next stage overwrites what this one read */
    }
    if (o_in && t < s.L) y[c1d_y_index(&s, n, o, t)] = acc;
  }
}

// --- launcher and descriptor --------------------------------------------------------------------

static const char *tiled_supported(const c1d_shape *s) {
  if (c1d_pad(s) > TILED_SMEM_BYTES / 4 || tiled_stage_floats(s, 1) * 4 > TILED_SMEM_BYTES)
    return "one input channel's window of 32+(K-1)*D floats plus 8*K weights exceeds the 48 KiB of "
           "shared memory a block may use";
  return NULL;
}

static c1d_status launch_tiled_smem(const c1d_shape *s, const float *x, const float *w,
                                    const float *b, float *y, c1d_exec *ex) {
  c1d_status st = C1D_OK;
  const char *why = tiled_supported(s);
  if (why) return c1d_fail(C1D_ERR_UNSUPPORTED, "gpu_tiled_smem: %s (K=%lld, D=%lld)", why,
                           (long long)s->K, (long long)s->D);
  int64_t stage = s->C < TILED_MAX_STAGE ? s->C : TILED_MAX_STAGE;
  while (stage > 1 && tiled_stage_floats(s, stage) * 4 > TILED_SMEM_BYTES) stage--;
  const size_t smem = (size_t)tiled_stage_floats(s, stage) * sizeof(float);
  const dim3 grid = c1d_grid(c1d_ceil_div(s->L, 32), c1d_ceil_div(s->O, TILED_WARPS), s->N);
  const cudaStream_t stream = c1d_stream_of(ex);
  if (s->K == 4) {
    tiled_smem_kernel<4><<<grid, TILED_THREADS, smem, stream>>>(*s, (int)stage, x, w, b, y);
    C1D_LAUNCHED("tiled_smem_kernel<4>");
  } else {
    tiled_smem_kernel<0><<<grid, TILED_THREADS, smem, stream>>>(*s, (int)stage, x, w, b, y);
    C1D_LAUNCHED("tiled_smem_kernel<0>");
  }
done:
  return st;
}

extern "C" const c1d_impl c1d_gpu_tiled_smem = {
    .name = "gpu_tiled_smem",
    .summary = "fp32; 8 warps = 8 out-channels x 32 positions, inputs staged in shared memory; "
               "the naive order",
    .backend = C1D_BACKEND_GPU,
    .precision = C1D_PREC_FP32,
    .twin = "naive",
    .twin_bit_exact = 1,
    .supported = tiled_supported,
    .setup = NULL,
    .teardown = NULL,
    .run = launch_tiled_smem,
};
