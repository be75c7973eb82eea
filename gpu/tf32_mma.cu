/* gpu_tf32: TF32 tensor cores as cuDNN uses them when TF32 is allowed, written out. x and w are rounded
 * to TF32 once (cvt.rna.tf32.f32: nearest, ties away; w in the fragment-order rewrite of each run, x as
 * its fragments leave shared memory), then an implicit GEMM on mma.sync.m16n8k8 accumulates in FP32,
 * starting from b[o] (gpu/mma_tf32.h, mode MMA_1X). Block tile 128 output channels x 256 times, warp
 * tile 64 x 64, slabs of 16 channels (8 when K > 4 or the pad is wide) through three cp.async buffers.
 * (A 64 x 32 warp tile at two blocks per SM measured 9 % slower: notes/fast-kernels.md.)
 * Accuracy: the input rounding dominates (relative L2 about 3e-4 on normal data); the tensor core sums
 * each k-step of 8 products in its own (non-IEEE) way, so the CPU model `tf32_inputs` (TF32 inputs, FP32
 * fma in the naive order) is a statistical twin: same relative L2 within a few percent, not the same bits.
 * Also here: c1d_tf32_mma_probe, which reads how the tensor core rounds an accumulation (see notes).
 * Limits: K <= 8 (taps padded to 1, 2, 4 or 8); the slab within 227 KiB of shared memory. */
#include "gpu/mma_tf32.h"

static const char *tf32_mma_supported(const c1d_shape *s) { return mma_supported(s, MMA_1X, 8, 1, 1); }

static c1d_status tf32_mma_setup(const c1d_shape *s, c1d_exec *ex) {
  return mma_setup(s, ex, MMA_1X, 8, 1, 1, "gpu_tf32");
}

static c1d_status tf32_mma_run(const c1d_shape *s, const float *x, const float *w, const float *b,
                               float *y, c1d_exec *ex) {
  return mma_run<MMA_1X, 8, 1, true>(s, x, w, b, y, ex, "gpu_tf32");
}

extern "C" const c1d_impl c1d_gpu_tf32 = {
    .name = "gpu_tf32",
    .summary = "tf32; inputs rounded (rna), mma.sync m16n8k8 implicit GEMM, fp32 accumulate from b",
    .backend = C1D_BACKEND_GPU,
    .precision = C1D_PREC_TF32,
    .twin = "tf32_inputs",
    .twin_bit_exact = 0,
    .mutant = 0,
    .supported = tf32_mma_supported,
    .setup = tf32_mma_setup,
    .teardown = mma_teardown,
    .run = tf32_mma_run,
};

// --- probe: how one mma rounds its accumulation -----------------------------------------------------

/* Case i: D = C + sum_j A[0][j] * B[j][0] with C = c[i] and the eight products p[i][0..7] formed as
 * p * 1.0 (exact in TF32). Lane 0 writes D[0][0] to out[i]. */
static __global__ void tf32_probe_kernel(const float *c, const float *p, float *out, int cases) {
  const int lane = threadIdx.x, gid = lane >> 2, tig = lane & 3;
  for (int i = 0; i < cases; i++) {
    uint32_t a[4];
    /* A row 0 holds the products, B column 0 holds ones: a0 = A[gid][tig], a2 = A[gid][tig+4] */
    a[0] = gid == 0 ? __float_as_uint(p[8 * i + tig]) : 0u;
    a[1] = 0u;
    a[2] = gid == 0 ? __float_as_uint(p[8 * i + tig + 4]) : 0u;
    a[3] = 0u;
    const uint32_t one = __float_as_uint(1.0f);
    const uint32_t b0 = gid == 0 ? one : 0u, b1 = gid == 0 ? one : 0u; /* B[tig][gid], B[tig+4][gid] */
    float d[4] = {lane == 0 ? c[i] : 0.0f, 0.0f, 0.0f, 0.0f};
    mma_16x8x8(d, a, b0, b1);
    if (lane == 0) out[i] = d[0];
  }
}

/* Runs the probe cases on the device (host arrays in, host array out). C1D_ERR_CUDA on failure. */
extern "C" c1d_status c1d_tf32_mma_probe(const float *c, const float *p, float *out, int cases) {
  c1d_status st = C1D_OK;
  float *dc = NULL, *dp = NULL, *dout = NULL;
  C1D_CUDA(cudaMalloc((void **)&dc, sizeof(float) * cases));
  C1D_CUDA(cudaMalloc((void **)&dp, sizeof(float) * 8 * cases));
  C1D_CUDA(cudaMalloc((void **)&dout, sizeof(float) * cases));
  C1D_CUDA(cudaMemcpy(dc, c, sizeof(float) * cases, cudaMemcpyHostToDevice));
  C1D_CUDA(cudaMemcpy(dp, p, sizeof(float) * 8 * cases, cudaMemcpyHostToDevice));
  tf32_probe_kernel<<<1, 32>>>(dc, dp, dout, cases);
  C1D_LAUNCHED("tf32_probe_kernel");
  C1D_CUDA(cudaMemcpy(out, dout, sizeof(float) * cases, cudaMemcpyDeviceToHost));
done:
  cudaFree(dc);
  cudaFree(dp);
  cudaFree(dout);
  return st;
}
