/* The float64 GPU oracle: y = b + sum_{c,k} w*x and m = |b| + sum_{c,k} |w|*|x| in double from float32
 * inputs (every product of two floats is exact in double), for shapes too large for the CPU oracle.
 *
 * MMA path (compute capability 9.0+, K <= 12, (K-1)*D <= 96): an implicit GEMM on the FP64 tensor
 * cores, mma.sync.m16n8k8.f64. Per batch row n, Y (O x L) = W (O x C*K) * X (C*K x L) with
 * X[(c,k), t] = x[n, c, t + k*D - (K-1)*D]. A block of 8 warps owns 64 output channels x 128
 * positions; each warp a 32 x 32 tile (2 x 4 fragments), accumulating y and m in registers. The
 * reduction runs in chunks of 8 input channels: the block stages the chunk's x window (8 rows of
 * 128+(K-1)*D inputs, zero before t = 0 and past L) and its weights (K x 8 x 64) in shared memory as
 * doubles, double-buffered, the next chunk's loads in flight while the current one is multiplied.
 * Within a chunk, one m16n8k8 step per tap k covers its 8 channels; m uses the same fragments with
 * the sign bits cleared. Fixed summation order, the same on every run and every launch:
 *   acc = b[o]; for each chunk of 8 channels (ascending), for k = 0..K-1: acc = mma(acc, 8 products)
 * (inside one mma the hardware's own fixed order).
 *
 * Direct path (any shape): one thread per output, acc = b; for c, for k: acc = fma(w, x, acc),
 * padding taps skipped. Slow; for shapes the MMA path does not take, and as a cross-check.
 *
 * Also here: the descriptor gpu_oracle_f64 (the oracle as an implementation: y rounded to float32). */
#include <stdint.h>
#include <stdio.h>

#include "gpu/device.h"
#include "gpu/launch.h"
#include "gpu/oracle_f64.h"
#include "gpu/oracle_f64_paths.h"

namespace {

constexpr int MMA_THREADS = 256;
constexpr int MMA_OM = 64;         /* output channels per block */
constexpr int MMA_OT = 128;        /* positions per block */
constexpr int MMA_CHUNK = 8;       /* input channels per chunk: the k of one m16n8k8 */
constexpr int MMA_PAD_MAX = 96;    /* largest (K-1)*D on the MMA path */
constexpr int MMA_K_MAX = 12;      /* largest K on the MMA path (weights staged in 3 loads per row) */
constexpr int MMA_SA = MMA_OM + 4; /* weight row stride in doubles; 4 mod 16: conflict-free fragments */
constexpr int MMA_XI = (MMA_OT + MMA_PAD_MAX + 31) / 32; /* window loads per lane per chunk */

/* Row stride of the staged x window: at least OT+pad doubles and 4 mod 16, so that the 16 lanes of a
 * half-warp reading a B fragment (rows tq, columns g) hit 16 different banks. */
int mma_x_stride(const c1d_shape *s) {
  return (int)(((MMA_OT + c1d_pad(s) - 4 + 15) / 16) * 16 + 4);
}

/* Doubles of one stage buffer: the window (8 rows) then the weights (K*8 rows of 64). */
int64_t mma_buffer_doubles(const c1d_shape *s) {
  return (int64_t)MMA_CHUNK * mma_x_stride(s) + s->K * MMA_CHUNK * MMA_SA;
}

// --- MMA path -----------------------------------------------------------------------------------

/* d += a * b on one 16x8x8 tile. Fragments (g = lane/4, q = lane%4):
 * a = A[g][q], A[g+8][q], A[g][q+4], A[g+8][q+4]; b = B[q][g], B[q+4][g];
 * d = D[g][2q], D[g][2q+1], D[g+8][2q], D[g+8][2q+1]. */
__device__ __forceinline__ void mma_16x8x8(double (&d)[4], const double (&a)[4],
                                           const double (&b)[2]) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};"
      : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
      : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(b[0]), "d"(b[1]));
#else
  __trap(); /* the host never launches the MMA path below compute capability 9.0 */
#endif
}

/* WI: weight loads per lane per output-channel row, ceil(8K/32). MAG: also compute m. */
template <int WI, bool MAG>
__global__ void __launch_bounds__(MMA_THREADS, 1)
    oracle_mma_kernel(const c1d_shape s, const int sx, const float *__restrict__ x,
                      const float *__restrict__ w, const float *__restrict__ b,
                      double *__restrict__ y, double *__restrict__ mag) {
  extern __shared__ double2 oracle_smem_raw[];
  double *const smem = reinterpret_cast<double *>(oracle_smem_raw);
  const int K = (int)s.K;
  const int pad = (int)c1d_pad(&s); /* <= MMA_PAD_MAX */
  const int D = K > 1 ? (int)s.D : 0;
  const int xw = MMA_OT + pad;      /* window width */
  const int buf = MMA_CHUNK * sx + K * MMA_CHUNK * MMA_SA;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int g = lane >> 2, tq = lane & 3;
  const int wm = warp & 1, wn = warp >> 1; /* warp tile: o [wm*32, +32), t [wn*32, +32) */
  const int rowlen = MMA_CHUNK * K;        /* one output channel's weights per chunk */
  const int64_t nchunks = c1d_ceil_div(s.C, MMA_CHUNK);

  /* Where each of this lane's weight loads goes: w[o, c0+cc, kk] -> row kk*8+cc of the stage. */
  int woff[WI];
#pragma unroll
  for (int i = 0; i < WI; i++) {
    const int j = lane + 32 * i, cc = j / K, kk = j - cc * K;
    woff[i] = j < rowlen ? (kk * MMA_CHUNK + cc) * MMA_SA : -1;
  }

  C1D_FOR_BLOCK_Z(n, s.N)
  C1D_FOR_BLOCK_Y(obk, c1d_ceil_div(s.O, MMA_OM))
  C1D_FOR_BLOCK_X(tbk, c1d_ceil_div(s.L, MMA_OT)) {
    const int64_t o0 = obk * MMA_OM, t0 = tbk * MMA_OT;
    double acc[2][4][4], macc[2][4][4];
#pragma unroll
    for (int i = 0; i < 2; i++)
#pragma unroll
      for (int h = 0; h < 2; h++) {
        const int64_t o = o0 + wm * 32 + i * 16 + g + 8 * h;
        const double bv = (s.bias && o < s.O) ? (double)b[o] : 0.0;
#pragma unroll
        for (int j = 0; j < 4; j++) {
          acc[i][j][2 * h] = acc[i][j][2 * h + 1] = bv;
          if (MAG) macc[i][j][2 * h] = macc[i][j][2 * h + 1] = fabs(bv);
        }
      }

    float xv[MMA_XI], wv[8][WI];
    /* Global -> registers: the window row of channel c0+warp, and this warp's 8 weight rows. */
    auto load = [&](int64_t c0) {
      const int64_t c = c0 + warp;
      const bool c_in = c < s.C;
      const float *xr = x + c1d_x_index(&s, n, c_in ? c : 0, 0);
#pragma unroll
      for (int i = 0; i < MMA_XI; i++) {
        const int j = lane + 32 * i;
        const int64_t ts = t0 - pad + j;
        xv[i] = (c_in && j < xw && ts >= 0 && ts < s.L) ? xr[ts] : 0.0f;
      }
      const int64_t row_avail = (s.C - c0) * K; /* weights of channels that exist */
#pragma unroll
      for (int r = 0; r < 8; r++) {
        const int64_t o = o0 + warp + 8 * r;
        const bool o_in = o < s.O;
        const float *wr = w + c1d_w_index(&s, o_in ? o : 0, c0, 0);
#pragma unroll
        for (int i = 0; i < WI; i++) {
          const int j = lane + 32 * i;
          wv[r][i] = (o_in && j < rowlen && j < row_avail) ? wr[j] : 0.0f;
        }
      }
    };
    /* Registers -> a stage buffer, as doubles (exact). */
    auto store = [&](double *dst) {
      double *xs = dst, *ws = dst + MMA_CHUNK * sx;
#pragma unroll
      for (int i = 0; i < MMA_XI; i++) {
        const int j = lane + 32 * i;
        if (j < xw) xs[warp * sx + j] = (double)xv[i];
      }
#pragma unroll
      for (int r = 0; r < 8; r++)
#pragma unroll
        for (int i = 0; i < WI; i++)
          if (woff[i] >= 0) ws[woff[i] + warp + 8 * r] = (double)wv[r][i];
    };

    load(0);
    store(smem);
    __syncthreads();
    for (int64_t ch = 0; ch < nchunks; ch++) {
      const double *cur = smem + (ch & 1) * buf;
      const bool more = ch + 1 < nchunks;
      if (more) load((ch + 1) * MMA_CHUNK);

      const double *xs = cur, *ws = cur + MMA_CHUNK * sx;
      for (int kk = 0; kk < K; kk++) {
        double a[2][4], bf[4][2];
        const double *wk = ws + (kk * MMA_CHUNK + tq) * MMA_SA + wm * 32 + g;
#pragma unroll
        for (int i = 0; i < 2; i++) {
          a[i][0] = wk[i * 16];
          a[i][1] = wk[i * 16 + 8];
          a[i][2] = wk[4 * MMA_SA + i * 16];
          a[i][3] = wk[4 * MMA_SA + i * 16 + 8];
        }
        const double *xk = xs + tq * sx + wn * 32 + g + kk * D;
#pragma unroll
        for (int j = 0; j < 4; j++) {
          bf[j][0] = xk[j * 8];
          bf[j][1] = xk[4 * sx + j * 8];
        }
#pragma unroll
        for (int i = 0; i < 2; i++)
#pragma unroll
          for (int j = 0; j < 4; j++) mma_16x8x8(acc[i][j], a[i], bf[j]);
        if (MAG) {
#pragma unroll
          for (int i = 0; i < 2; i++)
#pragma unroll
            for (int e = 0; e < 4; e++) a[i][e] = fabs(a[i][e]);
#pragma unroll
          for (int j = 0; j < 4; j++) {
            bf[j][0] = fabs(bf[j][0]);
            bf[j][1] = fabs(bf[j][1]);
          }
#pragma unroll
          for (int i = 0; i < 2; i++)
#pragma unroll
            for (int j = 0; j < 4; j++) mma_16x8x8(macc[i][j], a[i], bf[j]);
        }
      }

      if (more) store(smem + ((ch + 1) & 1) * buf);
      __syncthreads(); /* the next chunk is staged; nobody reads this one any more */
    }

#pragma unroll
    for (int i = 0; i < 2; i++)
#pragma unroll
      for (int h = 0; h < 2; h++) {
        const int64_t o = o0 + wm * 32 + i * 16 + g + 8 * h;
        if (o >= s.O) continue;
#pragma unroll
        for (int j = 0; j < 4; j++)
#pragma unroll
          for (int e = 0; e < 2; e++) {
            const int64_t t = t0 + wn * 32 + j * 8 + 2 * tq + e;
            if (t < s.L) {
              const int64_t idx = c1d_y_index(&s, n, o, t);
              y[idx] = acc[i][j][2 * h + e];
              if (MAG) mag[idx] = macc[i][j][2 * h + e];
            }
          }
      }
  }
}

template <int WI, bool MAG>
c1d_status launch_mma_as(const c1d_shape *s, const float *x, const float *w, const float *b,
                         double *y, double *mag, cudaStream_t stream) {
  c1d_status st = C1D_OK;
  const int sx = mma_x_stride(s);
  const size_t smem = 2 * (size_t)mma_buffer_doubles(s) * sizeof(double);
  const dim3 grid = c1d_grid(c1d_ceil_div(s->L, MMA_OT), c1d_ceil_div(s->O, MMA_OM), s->N);
  C1D_CUDA(cudaFuncSetAttribute(oracle_mma_kernel<WI, MAG>,
                                cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
  oracle_mma_kernel<WI, MAG><<<grid, MMA_THREADS, smem, stream>>>(*s, sx, x, w, b, y, mag);
  C1D_LAUNCHED("oracle_mma_kernel");
done:
  return st;
}

c1d_status launch_mma(const c1d_shape *s, const float *x, const float *w, const float *b, double *y,
                      double *mag, cudaStream_t stream) {
  const int wi = (int)c1d_ceil_div(MMA_CHUNK * s->K, 32);
  if (mag) {
    if (wi == 1) return launch_mma_as<1, true>(s, x, w, b, y, mag, stream);
    if (wi == 2) return launch_mma_as<2, true>(s, x, w, b, y, mag, stream);
    return launch_mma_as<3, true>(s, x, w, b, y, mag, stream);
  }
  if (wi == 1) return launch_mma_as<1, false>(s, x, w, b, y, mag, stream);
  if (wi == 2) return launch_mma_as<2, false>(s, x, w, b, y, mag, stream);
  return launch_mma_as<3, false>(s, x, w, b, y, mag, stream);
}

// --- direct path --------------------------------------------------------------------------------

template <bool MAG>
__global__ void __launch_bounds__(C1D_ELEMENT_BLOCK)
    oracle_direct_kernel(const c1d_shape s, const float *__restrict__ x,
                         const float *__restrict__ w, const float *__restrict__ b,
                         double *__restrict__ y, double *__restrict__ mag) {
  C1D_FOR_BLOCK_Z(n, s.N)
  C1D_FOR_BLOCK_Y(o, s.O)
  for (int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; t < s.L;
       t += (int64_t)gridDim.x * blockDim.x) {
    double acc = s.bias ? (double)b[o] : 0.0;
    double m = fabs(acc);
    const int64_t k0 = c1d_first_tap(&s, t); /* taps before k0 read the zero padding */
    for (int64_t c = 0; c < s.C; c++) {
      const float *xc = x + c1d_x_index(&s, n, c, 0);
      const float *wc = w + c1d_w_index(&s, o, c, 0);
      for (int64_t k = k0; k < s.K; k++) {
        const double xv = (double)xc[c1d_source_time(&s, t, k)], wk = (double)wc[k];
        acc = __fma_rn(wk, xv, acc);
        if (MAG) m = __fma_rn(fabs(wk), fabs(xv), m);
      }
    }
    const int64_t idx = c1d_y_index(&s, n, o, t);
    y[idx] = acc;
    if (MAG) mag[idx] = m;
  }
}

c1d_status launch_direct(const c1d_shape *s, const float *x, const float *w, const float *b,
                         double *y, double *mag, cudaStream_t stream) {
  c1d_status st = C1D_OK;
  const dim3 grid = c1d_grid(c1d_ceil_div(s->L, C1D_ELEMENT_BLOCK), s->O, s->N);
  if (mag) {
    oracle_direct_kernel<true><<<grid, C1D_ELEMENT_BLOCK, 0, stream>>>(*s, x, w, b, y, mag);
  } else {
    oracle_direct_kernel<false><<<grid, C1D_ELEMENT_BLOCK, 0, stream>>>(*s, x, w, b, y, mag);
  }
  C1D_LAUNCHED("oracle_direct_kernel");
done:
  return st;
}

// --- entry points -------------------------------------------------------------------------------

int mma_takes(const c1d_shape *s) { return s->K <= MMA_K_MAX && c1d_pad(s) <= MMA_PAD_MAX; }

/* 1 when device 0 has FP64 m16n8k8 (compute capability 9.0 or later). */
int device_has_fp64_mma(void) {
  static int known = -1;
  if (known < 0) {
    int major = 0;
    known = c1d_gpu_unavailable() == NULL &&
            cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0) == cudaSuccess &&
            major >= 9;
  }
  return known;
}

c1d_status oracle_on(c1d_gpu_oracle_path path, const c1d_shape *s, const float *x, const float *w,
                     const float *b, double *y, double *mag, cudaStream_t stream) {
  c1d_status st = c1d_shape_validate(s);
  if (st != C1D_OK) return st;
  if (s->bias && !b) return c1d_fail(C1D_ERR_INVALID_SHAPE, "gpu oracle: bias flag is 1 but b is NULL");
  if (c1d_gpu_unavailable()) return c1d_fail(C1D_ERR_NO_DEVICE, "%s", c1d_gpu_unavailable());
  if (path == C1D_ORACLE_PATH_MMA) {
    if (!mma_takes(s))
      return c1d_fail(C1D_ERR_UNSUPPORTED,
                      "gpu oracle: the MMA path needs K <= %d and (K-1)*D <= %d (K=%lld, D=%lld)",
                      MMA_K_MAX, MMA_PAD_MAX, (long long)s->K, (long long)s->D);
    if (!device_has_fp64_mma())
      return c1d_fail(C1D_ERR_UNSUPPORTED,
                      "gpu oracle: the MMA path needs FP64 m16n8k8 (compute capability 9.0+)");
    return launch_mma(s, x, w, b, y, mag, stream);
  }
  return launch_direct(s, x, w, b, y, mag, stream);
}

} // namespace

extern "C" c1d_gpu_oracle_path c1d_gpu_oracle_f64_path(const c1d_shape *s) {
  return mma_takes(s) && device_has_fp64_mma() ? C1D_ORACLE_PATH_MMA : C1D_ORACLE_PATH_DIRECT;
}

extern "C" const char *c1d_gpu_oracle_path_name(c1d_gpu_oracle_path path) {
  return path == C1D_ORACLE_PATH_MMA ? "mma" : "direct";
}

extern "C" c1d_status c1d_gpu_oracle_f64_on(c1d_gpu_oracle_path path, const c1d_shape *s,
                                            const float *x, const float *w, const float *b,
                                            double *y, double *mag) {
  return oracle_on(path, s, x, w, b, y, mag, 0);
}

extern "C" c1d_status c1d_gpu_oracle_f64(const c1d_shape *s, const float *x, const float *w,
                                         const float *b, double *y, double *mag) {
  return oracle_on(c1d_gpu_oracle_f64_path(s), s, x, w, b, y, mag, 0);
}

// --- the oracle as an implementation: y rounded to float32 ----------------------------------------

namespace {

__global__ void round_to_float_kernel(const double *__restrict__ src, float *__restrict__ dst,
                                      int64_t count) {
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < count;
       i += (int64_t)gridDim.x * blockDim.x)
    dst[i] = __double2float_rn(src[i]);
}

/* setup(): the float64 output buffer, owned by ex->state until teardown(). */
c1d_status oracle_impl_setup(const c1d_shape *s, c1d_exec *ex) {
  double *y64 = NULL;
  c1d_status st = c1d_gpu_malloc((void **)&y64, (size_t)c1d_y_count(s) * sizeof(double),
                                 "the float64 oracle's output");
  ex->state = st == C1D_OK ? y64 : NULL;
  return st;
}

void oracle_impl_teardown(c1d_exec *ex) {
  c1d_gpu_free(ex->state);
  ex->state = NULL;
}

c1d_status oracle_impl_run(const c1d_shape *s, const float *x, const float *w, const float *b,
                           float *y, c1d_exec *ex) {
  c1d_status st = C1D_OK;
  double *y64 = ex ? (double *)ex->state : NULL, *owned = NULL;
  const cudaStream_t stream = c1d_stream_of(ex);
  const int64_t count = c1d_y_count(s);
  if (!y64) { /* run without setup: a buffer for this call only */
    st = c1d_gpu_malloc((void **)&owned, (size_t)count * sizeof(double), "the float64 oracle's output");
    if (st != C1D_OK) return st;
    y64 = owned;
  }
  if ((st = oracle_on(c1d_gpu_oracle_f64_path(s), s, x, w, b, y64, NULL, stream)) != C1D_OK) goto done;
  round_to_float_kernel<<<c1d_grid(c1d_ceil_div(count, 256), 1, 1), 256, 0, stream>>>(y64, y, count);
  C1D_LAUNCHED("round_to_float_kernel");
  if (ex) {
    snprintf(ex->math, sizeof ex->math, "%s",
             c1d_gpu_oracle_f64_path(s) == C1D_ORACLE_PATH_MMA ? "FP64 tensor cores (DMMA)"
                                                                 : "FP64 FMA (DFMA)");
    ex->used_tf32 = 0;
  }
done:
  if (owned) {
    cudaError_t e = cudaStreamSynchronize(stream);
    if (e != cudaSuccess && st == C1D_OK)
      st = c1d_fail(C1D_ERR_CUDA, "cudaStreamSynchronize failed: %s", cudaGetErrorString(e));
    c1d_gpu_free(owned);
  }
  return st;
}

} // namespace

extern "C" const c1d_impl c1d_gpu_oracle_f64_impl = {
    .name = "gpu_oracle_f64",
    .summary = "fp64 from fp32 inputs on FP64 tensor cores; b, then per 8-channel chunk tap by tap; "
               "rounded to fp32",
    .backend = C1D_BACKEND_GPU,
    .precision = C1D_PREC_FP64,
    .twin = NULL,
    .twin_bit_exact = 0,
    .supported = NULL,
    .setup = oracle_impl_setup,
    .teardown = oracle_impl_teardown,
    .run = oracle_impl_run,
};
