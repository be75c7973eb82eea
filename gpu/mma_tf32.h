/* The tensor-core engine of gpu_tf32 and gpu_3xtf32: an implicit GEMM on mma.sync.m16n8k8 TF32 with
 * M = O (rows of the weight matrix A), N = output times, and the reduction index r = c*KP + k over
 * channels and taps, KP = K padded to 1, 2, 4 or 8 so that a k-step of 8 covers whole channels (padded
 * taps carry zero weights and read tap K-1's input, so they add 0 * x).
 *
 * A (weights) is rewritten once per run by mma_weights_kernel into fragment order, already rounded to
 * TF32 (cvt.rna, as c1d_round_tf32_rna) and, for 3xTF32, split into big = tf32(w) and
 * small = tf32(w - big): for each 16-row m-tile and 8-wide k-step, 32 lanes x {a0,a1,a2,a3}, so that a
 * lane fetches its whole A fragment with one 16-byte shared load. Rows past O, channels past C are zero.
 * B (im2col of x) is never built: a lane's fragment b0 = B[tig][gid], b1 = B[tig+4][gid] is read from the
 * staged x window (gpu/conv_stage.h) at channel c = r / KP, time t + min(k, K-1)*D - pad, then rounded
 * (and split) in registers.
 *
 * Block: 256 threads, 128 output channels x BN = 32*NT times of one batch row; warps 2 (M) x 4 (N), warp
 * tile 64 x 8*NT, that is 4 x NT mma tiles. Slabs of CS channels (their windows and the block's A
 * fragments) go through MMA_STAGES shared-memory buffers by cp.async, one barrier per slab.
 * The tensor core sums each mma's eight products exactly and rounds the result toward zero (measured:
 * notes/fast-kernels.md), so an accumulator that lives in the tensor core loses about 0.3 ulp of its own
 * magnitude per mma, always toward zero. The modes differ in where the running sum lives:
 *   MMA_1X        acc = b; per k-step: acc = mma(A_big, B_big, acc)                     (gpu_tf32;
 *                 the truncation adds ~2e-6 to TF32's 3e-4)
 *   MMA_3X        per k-step: acc = mma(A_small, B_big, acc); acc = mma(A_big, B_small, acc);
 *                 acc = mma(A_big, B_big, acc)   (CUTLASS example 27's order; 384 truncations of the
 *                 sum per output: relative L2 7e-6)                                  (gpu_3xtf32_plain)
 *   MMA_3X_FOLD   per k-step: t = mma(A_small, B_big, 0); t = mma(A_big, B_small, t);
 *                 t = mma(A_big, B_big, t); acc = acc + t (IEEE __fadd_rn): the tensor core only
 *                 truncates the k-step's own partial; the sum is rounded to nearest     (gpu_3xtf32)
 *   MMA_3X_SLAB   the three mma into a slab accumulator that starts at +0 for every 8 channels, then
 *                 acc = acc + slab (second accumulator set: 64 x 32 warp tile)     (gpu_3xtf32_slab)
 * Limits (mma_supported): K <= 8; the slab (three buffers) within 227 KiB of shared memory. CUDA C++. */
#ifndef C1D_GPU_MMA_TF32_H
#define C1D_GPU_MMA_TF32_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "gpu/conv_stage.h"
#include "gpu/device.h"
#include "gpu/launch.h"
#include "numerics/arith.h"

#define MMA_THREADS 256
#define MMA_BM 128
#define MMA_STAGES 3

enum { MMA_1X = 1, MMA_3X = 3, MMA_3X_SLAB = 4, MMA_3X_FOLD = 5,
       /* tuning round 3: per (mt, nt) tile, loop order B (CH k-steps, all NT) then per m-tile its A */
       MMA_3X_C1 = 6, /* MMA_3X_FOLD's arithmetic, new loop order, k-steps unrolled */
       MMA_3X_C2 = 7, /* t = +0, two k-steps' 6 mma into t, then acc = acc + t (rn) */
       MMA_3X_C4 = 8, /* four k-steps (a whole 8-channel slab at KP = 4) per t */
       MMA_3X_SPL = 9 /* per k-step: sacc = mma(As, Bb, sacc); sacc = mma(Ab, Bs, sacc) (the small
                         cross products accumulate in the tensor core over all of C); t = mma(Ab, Bb, 0);
                         acc = acc + t (rn); at the end acc = acc + sacc (rn) */
};

// --- the plan: every size that setup and run must agree on --------------------------------------

typedef struct mma_plan {
  int mode, kp, cs, nt, bn, nparts, minb;
  int64_t opad;  /* O rounded up to MMA_BM */
  int64_t kst;   /* k-steps over the padded reduction: ceil(C/cs)*cs*kp/8 */
  int64_t smem;  /* dynamic shared memory bytes */
  int xw;        /* x row stride in shared memory */
} mma_plan;

static inline int mma_kp(int64_t K) { return K <= 1 ? 1 : K <= 2 ? 2 : K <= 4 ? 4 : 8; }

/* Slab width: 16 channels for 1xTF32 with the 64 x 64 warp tile (and K <= 4), else 8. */
static inline __host__ __device__ constexpr int mma_cs(int mode, int nt, int kp) {
  return (mode == MMA_1X && kp < 8 && nt == 8) ? 16 : 8;
}

static inline int64_t mma_smem_bytes(const c1d_shape *s, int cs, int kp, int xw, int nparts) {
  const int64_t kss = (int64_t)cs * kp / 8;
  return MMA_STAGES * ((int64_t)cs * xw + 1024 * kss * nparts) * (int64_t)sizeof(float);
}

/* nt: mma tiles per warp along the times (8: warp tile 64 x 64, one block per SM; 4: 64 x 32, with
 * minb = 2 blocks per SM where the registers allow). */
static inline mma_plan mma_make_plan(const c1d_shape *s, int mode, int nt, int minb) {
  mma_plan p;
  p.mode = mode;
  p.kp = mma_kp(s->K);
  p.nt = nt;
  p.minb = minb;
  p.bn = 32 * p.nt;
  p.nparts = mode == MMA_1X ? 1 : 2;
  p.xw = (int)c1d_window_stride(s, p.bn);
  p.cs = mma_cs(mode, nt, p.kp);
  if (p.cs == 16 && mma_smem_bytes(s, 16, p.kp, p.xw, p.nparts) > C1D_SMEM_OPTIN_MAX) p.cs = 8; /* wide pads */
  p.smem = mma_smem_bytes(s, p.cs, p.kp, p.xw, p.nparts);
  p.opad = c1d_ceil_div(s->O, MMA_BM) * MMA_BM;
  p.kst = c1d_ceil_div(s->C, p.cs) * p.cs * p.kp / 8;
  return p;
}

/* NULL, or why the instance cannot run the shape. all_k = 0: built for K = 3, 4 only (variants). */
static inline const char *mma_supported(const c1d_shape *s, int mode, int nt, int minb, int all_k) {
  if (s->K > 8) return "K > 8: the tensor-core kernels cover at most 8 taps per channel";
  if (!all_k && mma_kp(s->K) != 4) return "this variant is built for K = 3 and 4 only";
  if (c1d_pad(s) > (INT64_C(1) << 20) || mma_make_plan(s, mode, nt, minb).smem > C1D_SMEM_OPTIN_MAX)
    return "the staged windows of (K-1)*D + 256 inputs per channel, three stages deep, exceed the "
           "227 KiB of shared memory a block may use";
  return NULL;
}

// --- device helpers --------------------------------------------------------------------------------

static __device__ __forceinline__ uint32_t mma_tf32_rna(float v) {
  uint32_t r;
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(v));
  return r;
}

/* d = a * b + d on one 16x8x8 TF32 tile. */
static __device__ __forceinline__ void mma_16x8x8(float (&d)[4], const uint32_t (&a)[4],
                                                  uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// --- weights into fragment order --------------------------------------------------------------------

/* One thread per (m-tile, k-step, lane): writes {a0,a1,a2,a3} (big) and, with nparts = 2, the small
 * parts, at wt[((mtile*kst + ks)*nparts + part)*128 + lane*4]. */
static __global__ void mma_weights_kernel(const c1d_shape s, int kp, int nparts, int64_t kst,
                                          int64_t mtiles, const float *__restrict__ w,
                                          float *__restrict__ wt) {
  const int64_t total = mtiles * kst * 32;
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total;
       i += (int64_t)gridDim.x * blockDim.x) {
    const int lane = (int)(i & 31), gid = lane >> 2, tig = lane & 3;
    const int64_t ks = (i >> 5) % kst, mt = (i >> 5) / kst;
    float v[4];
#pragma unroll
    for (int e = 0; e < 4; e++) {
      const int64_t o = mt * 16 + gid + (e & 1) * 8, r = ks * 8 + tig + (e >> 1) * 4;
      const int64_t c = r / kp, k = r % kp;
      v[e] = (o < s.O && c < s.C && k < s.K) ? w[c1d_w_index(&s, o, c, k)] : 0.0f;
    }
    float4 big, small;
    float *bp = &big.x, *sp = &small.x;
#pragma unroll
    for (int e = 0; e < 4; e++) c1d_split_tf32(v[e], &bp[e], &sp[e]);
    float *dst = wt + ((mt * kst + ks) * nparts) * 128 + lane * 4;
    *reinterpret_cast<float4 *>(dst) = big;
    if (nparts == 2) *reinterpret_cast<float4 *>(dst + 128) = small;
  }
}

// --- the convolution kernel ---------------------------------------------------------------------------

template <int MODE, int NT, int KP, int CS, int MINB>
__global__ void __launch_bounds__(MMA_THREADS, MINB)
    mma_conv_kernel(const c1d_shape s, const int xw, const int64_t kst, const int xvec, const int yvec,
                    const float *__restrict__ x, const float *__restrict__ wt,
                    const float *__restrict__ b, float *__restrict__ y) {
  constexpr int BN = 32 * NT, MT = 4, KSS = CS * KP / 8, CPS = 8 / KP;
  constexpr int NPARTS = MODE == MMA_1X ? 1 : 2;
  constexpr int WFLOATS = 8 * KSS * NPARTS * 128; /* the block's 8 m-tiles, one slab */
  extern __shared__ float4 mma_smem_raw[];
  float *const smem = reinterpret_cast<float *>(mma_smem_raw);
  const int stage_floats = CS * xw + WFLOATS;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, gid = lane >> 2, tig = lane & 3;
  const int wm = warp & 1, wn = warp >> 1;
  const int K = (int)s.K, D = K > 1 ? (int)s.D : 0, pad = (K - 1) * D;
  const int pada = (pad + 3) & ~3;
  /* The lane's two rows of B within a k-step, as offsets into the staged window. */
  int offb[2];
#pragma unroll
  for (int h = 0; h < 2; h++) {
    const int r = tig + 4 * h, c_rel = r / KP, k = r % KP;
    offb[h] = c_rel * xw + (k < K ? k : K - 1) * D + pada - pad + wn * 8 * NT + gid;
  }
  const int64_t nslab = kst / KSS;

  C1D_FOR_BLOCK_Z(n, s.N)
  C1D_FOR_BLOCK_Y(ob, c1d_ceil_div(s.O, MMA_BM))
  C1D_FOR_BLOCK_X(tb, c1d_ceil_div(s.L, BN)) {
    const int64_t o0 = ob * MMA_BM, t0 = tb * BN;
    float acc[MT][NT][4];
#pragma unroll
    for (int mt = 0; mt < MT; mt++) {
      const int64_t oa = o0 + wm * 64 + mt * 16 + gid, obb = oa + 8;
      const float ba = (s.bias && oa < s.O) ? b[oa] : 0.0f, bb = (s.bias && obb < s.O) ? b[obb] : 0.0f;
#pragma unroll
      for (int nt = 0; nt < NT; nt++) acc[mt][nt][0] = acc[mt][nt][1] = ba, acc[mt][nt][2] = acc[mt][nt][3] = bb;
    }
    constexpr int SMT = MODE == MMA_3X_SPL ? MT : 1, SNT = MODE == MMA_3X_SPL ? NT : 1;
    float sacc[SMT][SNT][4]; /* MMA_3X_SPL's small-product accumulator (tensor core) */
#pragma unroll
    for (int mt = 0; mt < SMT; mt++)
#pragma unroll
      for (int nt = 0; nt < SNT; nt++)
#pragma unroll
        for (int e = 0; e < 4; e++) sacc[mt][nt][e] = 0.0f;
    /* Issues slab sl's copies into buffer sl % STAGES. */
    auto stage = [&](int64_t sl) {
      float *st = smem + (int)(sl % MMA_STAGES) * stage_floats;
      c1d_stage_x_window(st, x, s, n, sl * CS, CS, t0, BN, xw, pada, xvec);
      float *ws = st + CS * xw;
      constexpr int CHUNKS = KSS * NPARTS * 32; /* 16-byte chunks per m-tile per slab */
      for (int i = threadIdx.x; i < 8 * CHUNKS; i += MMA_THREADS) {
        const int mtl = i / CHUNKS, q = i - mtl * CHUNKS;
        const float *src = wt + (((ob * 8 + mtl) * kst + sl * KSS) * NPARTS) * 128 + q * 4;
        c1d_cp_async16(ws + mtl * (CHUNKS * 4) + q * 4, src, true);
      }
    };
#pragma unroll
    for (int sl = 0; sl < MMA_STAGES - 1; sl++) {
      if (sl < nslab) stage(sl);
      c1d_cp_async_commit();
    }

    for (int64_t sl = 0; sl < nslab; sl++) {
      c1d_cp_async_wait<MMA_STAGES - 2>();
      __syncthreads();
      if (sl + MMA_STAGES - 1 < nslab) stage(sl + MMA_STAGES - 1);
      c1d_cp_async_commit();
      const float *xs = smem + (int)(sl % MMA_STAGES) * stage_floats;
      const float *ws = xs + CS * xw;
      constexpr int TMT = MODE == MMA_3X_SLAB ? MT : 1, TNT = MODE == MMA_3X_SLAB ? NT : 1;
      float tmp[TMT][TNT][4]; /* the slab accumulator of MMA_3X_SLAB */
      if constexpr (MODE == MMA_3X_SLAB) {
#pragma unroll
        for (int mt = 0; mt < MT; mt++)
#pragma unroll
          for (int nt = 0; nt < NT; nt++)
#pragma unroll
            for (int e = 0; e < 4; e++) tmp[mt][nt][e] = 0.0f;
      }
      if constexpr (MODE >= MMA_3X_C1) {
        constexpr int CH = MODE == MMA_3X_C2 ? 2 : MODE == MMA_3X_C4 ? 4 : 1;
        static_assert(KSS % CH == 0, "a chain must not straddle slabs");
        /* at two blocks per SM (128 registers) one chain at a time: unrolled chains spilled */
        constexpr int CH_UNROLL = MINB >= 2 ? 1 : KSS / CH;
#pragma unroll CH_UNROLL
        for (int ks0 = 0; ks0 < KSS; ks0 += CH) {
          uint32_t bfr[CH][NT][4]; /* big b0, b1, small b0, b1 */
#pragma unroll
          for (int c = 0; c < CH; c++) {
            const float *xk = xs + (ks0 + c) * CPS * xw;
#pragma unroll
            for (int nt = 0; nt < NT; nt++) {
              const float v0 = xk[offb[0] + nt * 8], v1 = xk[offb[1] + nt * 8];
              const uint32_t bb0 = mma_tf32_rna(v0), bb1 = mma_tf32_rna(v1);
              bfr[c][nt][0] = bb0, bfr[c][nt][1] = bb1;
              bfr[c][nt][2] = mma_tf32_rna(c1d_sub(v0, __uint_as_float(bb0)));
              bfr[c][nt][3] = mma_tf32_rna(c1d_sub(v1, __uint_as_float(bb1)));
            }
          }
#pragma unroll
          for (int mt = 0; mt < MT; mt++) {
            uint32_t ab[CH][4], as[CH][4];
#pragma unroll
            for (int c = 0; c < CH; c++) {
              const float *src = ws + ((wm * MT + mt) * KSS * NPARTS + (ks0 + c) * NPARTS) * 128 + lane * 4;
              const uint4 v = *reinterpret_cast<const uint4 *>(src);
              const uint4 u = *reinterpret_cast<const uint4 *>(src + 128);
              ab[c][0] = v.x, ab[c][1] = v.y, ab[c][2] = v.z, ab[c][3] = v.w;
              as[c][0] = u.x, as[c][1] = u.y, as[c][2] = u.z, as[c][3] = u.w;
            }
#pragma unroll
            for (int nt = 0; nt < NT; nt++) {
              float t[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
              for (int c = 0; c < CH; c++) {
                if constexpr (MODE == MMA_3X_SPL) {
                  mma_16x8x8(sacc[mt % SMT][nt % SNT], as[c], bfr[c][nt][0], bfr[c][nt][1]);
                  mma_16x8x8(sacc[mt % SMT][nt % SNT], ab[c], bfr[c][nt][2], bfr[c][nt][3]);
                } else {
                  mma_16x8x8(t, as[c], bfr[c][nt][0], bfr[c][nt][1]);
                  mma_16x8x8(t, ab[c], bfr[c][nt][2], bfr[c][nt][3]);
                }
                mma_16x8x8(t, ab[c], bfr[c][nt][0], bfr[c][nt][1]);
              }
#pragma unroll
              for (int e = 0; e < 4; e++) acc[mt][nt][e] = c1d_add(acc[mt][nt][e], t[e]);
            }
          }
        }
      } else {
      /* MMA_3X_FOLD holds 32 more registers of partial sums in flight: one k-step at a time keeps
       * it under 255 registers without spilling. */
      constexpr int KS_UNROLL = MODE == MMA_3X_FOLD ? 1 : KSS;
#pragma unroll KS_UNROLL
      for (int ks = 0; ks < KSS; ks++) {
        uint32_t abig[MT][4], asmall[MT][4];
#pragma unroll
        for (int mt = 0; mt < MT; mt++) {
          const float *src = ws + ((wm * MT + mt) * KSS * NPARTS + ks * NPARTS) * 128 + lane * 4;
          const uint4 v = *reinterpret_cast<const uint4 *>(src);
          abig[mt][0] = v.x, abig[mt][1] = v.y, abig[mt][2] = v.z, abig[mt][3] = v.w;
          if constexpr (NPARTS == 2) {
            const uint4 u = *reinterpret_cast<const uint4 *>(src + 128);
            asmall[mt][0] = u.x, asmall[mt][1] = u.y, asmall[mt][2] = u.z, asmall[mt][3] = u.w;
          }
        }
        const float *xk = xs + ks * CPS * xw;
#pragma unroll
        for (int nt = 0; nt < NT; nt++) {
          const float v0 = xk[offb[0] + nt * 8], v1 = xk[offb[1] + nt * 8];
          const uint32_t bb0 = mma_tf32_rna(v0), bb1 = mma_tf32_rna(v1);
          if constexpr (MODE == MMA_1X) {
#pragma unroll
            for (int mt = 0; mt < MT; mt++) mma_16x8x8(acc[mt][nt], abig[mt], bb0, bb1);
          } else if constexpr (MODE == MMA_3X_FOLD) {
            const uint32_t bs0 = mma_tf32_rna(c1d_sub(v0, __uint_as_float(bb0)));
            const uint32_t bs1 = mma_tf32_rna(c1d_sub(v1, __uint_as_float(bb1)));
#pragma unroll
            for (int mt = 0; mt < MT; mt++) {
              float t[4] = {0.0f, 0.0f, 0.0f, 0.0f};
              mma_16x8x8(t, asmall[mt], bb0, bb1);
              mma_16x8x8(t, abig[mt], bs0, bs1);
              mma_16x8x8(t, abig[mt], bb0, bb1);
#pragma unroll
              for (int e = 0; e < 4; e++) acc[mt][nt][e] = c1d_add(acc[mt][nt][e], t[e]);
            }
          } else {
            const uint32_t bs0 = mma_tf32_rna(c1d_sub(v0, __uint_as_float(bb0)));
            const uint32_t bs1 = mma_tf32_rna(c1d_sub(v1, __uint_as_float(bb1)));
#pragma unroll
            for (int mt = 0; mt < MT; mt++) {
              float(&d)[4] = MODE == MMA_3X_SLAB ? tmp[mt % TMT][nt % TNT] : acc[mt][nt];
              mma_16x8x8(d, asmall[mt], bb0, bb1);
              mma_16x8x8(d, abig[mt], bs0, bs1);
              mma_16x8x8(d, abig[mt], bb0, bb1);
            }
          }
        }
      }
      } /* MODE < MMA_3X_C1 */
      if constexpr (MODE == MMA_3X_SLAB) {
#pragma unroll
        for (int mt = 0; mt < MT; mt++)
#pragma unroll
          for (int nt = 0; nt < NT; nt++)
#pragma unroll
            for (int e = 0; e < 4; e++) acc[mt][nt][e] = c1d_add(acc[mt][nt][e], tmp[mt][nt][e]);
      }
    }
    if constexpr (MODE == MMA_3X_SPL) {
#pragma unroll
      for (int mt = 0; mt < MT; mt++)
#pragma unroll
        for (int nt = 0; nt < NT; nt++)
#pragma unroll
          for (int e = 0; e < 4; e++) acc[mt][nt][e] = c1d_add(acc[mt][nt][e], sacc[mt % SMT][nt % SNT][e]);
    }
    c1d_cp_async_wait<0>();
    __syncthreads();

    /* epilogue: c0,c1 at (row gid, times 2*tig, 2*tig+1); c2,c3 at row gid+8 */
#pragma unroll
    for (int mt = 0; mt < MT; mt++)
#pragma unroll
      for (int h = 0; h < 2; h++) {
        const int64_t o = o0 + wm * 64 + mt * 16 + gid + 8 * h;
        if (o >= s.O) continue;
        float *yr = y + c1d_y_index(&s, n, o, 0);
#pragma unroll
        for (int nt = 0; nt < NT; nt++) {
          const int64_t t = t0 + wn * 8 * NT + nt * 8 + 2 * tig;
          const float v0 = acc[mt][nt][2 * h], v1 = acc[mt][nt][2 * h + 1];
          if (yvec && t + 1 < s.L) {
            *reinterpret_cast<float2 *>(yr + t) = make_float2(v0, v1);
          } else {
            if (t < s.L) yr[t] = v0;
            if (t + 1 < s.L) yr[t + 1] = v1;
          }
        }
      }
  }
}

// --- host side: state, setup, run ---------------------------------------------------------------------

typedef struct mma_state {
  float *wt; /* fragment-order weights, opad/16 * kst * nparts * 128 floats */
  mma_plan plan;
} mma_state;

static inline void mma_teardown(c1d_exec *ex) {
  mma_state *st = (mma_state *)ex->state;
  if (!st) return;
  c1d_gpu_free(st->wt);
  free(st);
  ex->state = NULL;
}

static inline c1d_status mma_setup(const c1d_shape *s, c1d_exec *ex, int mode, int nt, int minb,
                                   int all_k, const char *name) {
  const char *why = mma_supported(s, mode, nt, minb, all_k);
  if (why) return c1d_fail(C1D_ERR_UNSUPPORTED, "%s: %s", name, why);
  mma_state *st = (mma_state *)calloc(1, sizeof *st);
  if (!st) return c1d_fail(C1D_ERR_NO_MEMORY, "cannot allocate the %s state", name);
  st->plan = mma_make_plan(s, mode, nt, minb);
  ex->state = st;
  const size_t bytes =
      (size_t)(st->plan.opad / 16) * (size_t)st->plan.kst * st->plan.nparts * 128 * sizeof(float);
  c1d_status rc = c1d_gpu_malloc((void **)&st->wt, bytes, "fragment-order TF32 weights");
  if (rc != C1D_OK) mma_teardown(ex);
  return rc;
}

template <int MODE, int NT, int KP, int CS, int MINB>
static c1d_status mma_launch_conv_cs(const c1d_shape *s, const mma_plan *p, const float *x,
                                     const float *wt, const float *b, float *y, cudaStream_t stream) {
  c1d_status st = C1D_OK;
  const dim3 grid = c1d_grid(c1d_ceil_div(s->L, p->bn), c1d_ceil_div(s->O, MMA_BM), s->N);
  const int xvec = c1d_x_rows_aligned(s, x), yvec = s->L % 2 == 0 && ((uintptr_t)y & 7) == 0;
  C1D_CUDA(cudaFuncSetAttribute(mma_conv_kernel<MODE, NT, KP, CS, MINB>,
                                cudaFuncAttributeMaxDynamicSharedMemorySize, (int)p->smem));
  mma_conv_kernel<MODE, NT, KP, CS, MINB><<<grid, MMA_THREADS, (size_t)p->smem, stream>>>(
      *s, p->xw, p->kst, xvec, yvec, x, wt, b, y);
  C1D_LAUNCHED("mma_conv_kernel");
done:
  return st;
}

/* The plan's slab width (16 or 8) picks the instance. */
template <int MODE, int NT, int KP, int MINB>
static c1d_status mma_launch_conv(const c1d_shape *s, const mma_plan *p, const float *x,
                                  const float *wt, const float *b, float *y, cudaStream_t stream) {
  if constexpr (mma_cs(MODE, NT, KP) == 16) {
    if (p->cs == 16) return mma_launch_conv_cs<MODE, NT, KP, 16, MINB>(s, p, x, wt, b, y, stream);
  }
  return mma_launch_conv_cs<MODE, NT, KP, 8, MINB>(s, p, x, wt, b, y, stream);
}

static inline c1d_status mma_launch_weights(const c1d_shape *s, const mma_plan *p, const float *w,
                                            float *wt, cudaStream_t stream) {
  c1d_status st = C1D_OK;
  const int64_t total = p->opad / 16 * p->kst * 32;
  const int64_t blocks = c1d_ceil_div(total, 256);
  mma_weights_kernel<<<(unsigned)(blocks < 65535 ? blocks : 65535), 256, 0, stream>>>(
      *s, p->kp, p->nparts, p->kst, p->opad / 16, w, wt);
  C1D_LAUNCHED("mma_weights_kernel");
done:
  return st;
}

/* The run of an instance: weights into fragment order, then the convolution. ALL_K = false: only the
 * KP = 4 kernel is built (variants). */
template <int MODE, int NT, int MINB, bool ALL_K>
static c1d_status mma_run(const c1d_shape *s, const float *x, const float *w, const float *b, float *y,
                          c1d_exec *ex, const char *name) {
  constexpr bool X1 = MODE == MMA_1X;
  mma_state *ms = ex ? (mma_state *)ex->state : NULL;
  if (!ms) return c1d_fail(C1D_ERR_INTERNAL, "%s run without setup", name);
  const mma_plan *p = &ms->plan;
  const cudaStream_t stream = c1d_stream_of(ex);
  c1d_status st = mma_launch_weights(s, p, w, ms->wt, stream);
  if (st != C1D_OK) return st;
  if constexpr (ALL_K) {
    switch (p->kp) {
      case 1: st = mma_launch_conv<MODE, NT, 1, MINB>(s, p, x, ms->wt, b, y, stream); break;
      case 2: st = mma_launch_conv<MODE, NT, 2, MINB>(s, p, x, ms->wt, b, y, stream); break;
      case 4: st = mma_launch_conv<MODE, NT, 4, MINB>(s, p, x, ms->wt, b, y, stream); break;
      default: st = mma_launch_conv<MODE, NT, 8, MINB>(s, p, x, ms->wt, b, y, stream); break;
    }
  } else {
    if (p->kp != 4) return c1d_fail(C1D_ERR_UNSUPPORTED, "%s is built for K = 3 and 4 only", name);
    st = mma_launch_conv<MODE, NT, 4, MINB>(s, p, x, ms->wt, b, y, stream);
  }
  if (st != C1D_OK) return st;
  ex->algo[0] = '\0';
  snprintf(ex->math, sizeof ex->math, "%s",
           X1 ? "TF32 tensor cores (mma.sync m16n8k8, rna inputs)"
              : "3xTF32 tensor cores (small*big + big*small + big*big)");
  ex->used_tf32 = 1;
  return C1D_OK;
}

#endif
