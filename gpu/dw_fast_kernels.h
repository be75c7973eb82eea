/* gpu_dw_fast's vector kernels (gpu/dw_fast.cu says what they compute), as templates over x's element
 * type TX and the taps K. Each element type's 112 kernels (9 paths and 5 PLAIN copies x K = 1..8; bf16 and
 * fp16 also the PLAIN step in 8-byte vectors and the pairs kernel: 128) are instantiated in a file of their
 * own (dw_fast_f32.cu,
 * dw_fast_bf16.cu, dw_fast_f16.cu): 72 of them in one file took 74 s of nvcc (cicc 31 s, ptxas 41 s) on
 * the 2-core machines, the longest step of every build; in three files they compile side by side. */
#ifndef C1D_DW_FAST_KERNELS_H
#define C1D_DW_FAST_KERNELS_H

#include <cuda_fp16.h>
#include <cuda_pipeline_primitives.h>

#include "gpu/grouped_element.h"
#include "gpu/launch.h"
#include "gpu/pack_round.h"

#define DW_THREADS 256
/* 16-byte vectors per thread in the (N, C, L) row kernel: four, or two where the history spans two vectors
 * (fp32, K >= 6: four made ptxas put 4 bytes on the stack). */
static constexpr __host__ __device__ int dw_ncl_vectors(int V, int K) { return (K - 1 + V - 1) / V > 1 ? 2 : 4; }
#define DW_MAX_K 8       /* the vector paths' template range */
/* The channel-last register and dilated kernels (the ring kernel's strips: dw_nlc_ring_strip) */
#define DW_NLC_RUN 4     /* positions per chunk (rows in flight per thread) in the register kernel */
#define DW_NLC_STRIP 64  /* the longest strip of positions a thread walks */
#define DW_NLC_MIN_STRIP 4 /* and the shortest the launcher picks (one chunk) */
/* The largest channel-last problem of the flat kernel (dw_nlc_flat in the launcher), in 16-byte row reads:
 * vectors x positions x K (each output vector reads its K tap rows; the strip kernels read each row once).
 * On the H200 (2026-12-05, the decode grid in bf16, fp16 and fp32, both clocks) the flat kernel won up to
 * 2^19 (K = 2 to 2^17-2^18 vectors x positions, K = 4 to 2^17) and lost beyond, to 60 % of the copy at
 * K = 4 on large problems where the ring kernels reach 95 %: notes/depthwise.md. */
#define DW_NLC_FLAT_MAX (INT64_C(1) << 19)

/* VB: the bytes of a vector, 16, or 8 for the PLAIN 16-bit step kernel (half the channels per thread:
 * twice the threads on the smallest problems) */
template <int TX, int VB = 16>
struct dw_vec {
  static constexpr int BYTES = TX == C1D_DTYPE_F32 ? 4 : 2;
  static constexpr int V = VB / BYTES; /* elements per vector */
  /* Blocks per SM the channel-last kernels are built for: two (128 registers) while V*K weights and a
   * K-row window fit, one beyond (no spills either way: checked with -Xptxas -v). */
  static constexpr int NLC_BLOCKS(int K) { return V * K > 32 ? 1 : 2; }
  /* and the ring kernel's blocks of DW_NLC_RING_THREADS (its rows in flight in shared memory): the most
   * for which its V*K weights, V biases and K-row window fit without spills (checked with -Xptxas -v:
   * at six blocks, 80 registers, bf16 K = 3 and fp32 K = 6 spilled; at four, 128, bf16 K = 7) */
  static constexpr int NLC_RING_BLOCKS(int K) { return V * K <= 20 ? 6 : V * K <= 48 ? 4 : 2; }
  /* and the rolling ring kernel's, whose K running sums of V floats replace a window of K raw rows (the
   * most blocks without spills, from -Xptxas -v without a minimum: bf16 K = 4, 152 registers) */
  static constexpr int NLC_ROLL_BLOCKS(int K) { return V * K <= 8 ? 6 : V * K <= 24 ? 4 : V * K <= 40 ? 3 : 2; }
  /* and the pairs kernel's (16-bit x, V / 2 channels a thread): ptxas wants about 40 + 8K registers
   * (fp16 K = 5 and 7 spilled at 6 and 5 blocks) */
  static constexpr int NLC_PAIR_BLOCKS(int K) { return K <= 3 ? 8 : K == 4 ? 7 : K <= 6 ? 5 : 4; }
  /* and the tile kernel's: three (85 registers) while the V*K weights fit in 32 (48 KB of rows in flight
   * per SM, the copy 32), two beyond (-Xptxas -v: four blocks, 64 registers, spilled at bf16 K = 4 with
   * 2 and 4 rows a thread; these do not spill) */
  static constexpr int NLC_TILE_BLOCKS(int K) { return V * K <= 32 ? 3 : 2; }
};

/* A raw vector of VB bytes. */
template <int VB>
struct dw_raw;
template <>
struct dw_raw<16> {
  typedef uint4 t;
};
template <>
struct dw_raw<8> {
  typedef uint2 t;
};

/* The common case, compiled apart (PLAIN): w, b, the states and y all of x's type and no activation.
 * The kernel for every combination holds a branch per type and an inline SiLU per output, tens of KB
 * of code; with the L2 flushed, a small problem waits on the fetch of its instructions. In the PLAIN
 * copy the shape's types and activation are constants, so those branches fold away. */
template <int TX, bool PLAIN>
static __device__ __forceinline__ c1d_shape dw_shape_of(const c1d_shape &s) {
  c1d_shape r = s;
  if constexpr (PLAIN) {
    r.dt.w = r.dt.b = r.dt.s = r.dt.y = (c1d_dtype)TX;
    r.act = C1D_ACT_NONE;
  }
  return r;
}

// --- 16-byte vectors ---------------------------------------------------------------------------------

template <int VB>
static __device__ __forceinline__ typename dw_raw<VB>::t dw_load_raw(const void *p) {
  return __ldg((const typename dw_raw<VB>::t *)p);
}
static __device__ __forceinline__ uint4 dw_load16(const void *p) { return dw_load_raw<16>(p); }

/* The first n (<= 8) 16-bit elements of a raw vector, bf16 or fp16, as float32 (exact). */
static __device__ __forceinline__ void dw_unpack16(const uint4 &r, bool bf16, float *out, int n = 8) {
  const uint32_t w[4] = {r.x, r.y, r.z, r.w};
#pragma unroll
  for (int j = 0; j < 8; j++)
    if (j < n) {
      const uint16_t h = (uint16_t)(j % 2 ? w[j / 2] >> 16 : w[j / 2] & 0xffffu);
      out[j] = bf16 ? c1d_bf16_bits_to_float(h) : __half2float(__ushort_as_half(h));
    }
}

/* out[j] := element first + j of a tensor of type d (j = 0..N-1) as float32, every load issued before
 * the first conversion (c1d_load_typed in a loop converts each element before the next load leaves: N
 * round trips in a row). */
template <int N>
static __device__ __forceinline__ void dw_load_floats(const void *p, c1d_dtype d, int64_t first, float *out) {
  if (d == C1D_DTYPE_F32) {
#pragma unroll
    for (int j = 0; j < N; j++) out[j] = __ldg((const float *)p + first + j);
    return;
  }
  unsigned short h[N];
#pragma unroll
  for (int j = 0; j < N; j++) h[j] = __ldg((const unsigned short *)p + first + j);
#pragma unroll
  for (int j = 0; j < N; j++)
    out[j] = d == C1D_DTYPE_BF16 ? c1d_bf16_bits_to_float(h[j]) : __half2float(__ushort_as_half(h[j]));
}

/* The same for N a multiple of 4 at an aligned place (the vector paths' weights, biases and states: the
 * launcher checks that w, b and s start 16-byte aligned, and then every V or V*K elements the kernels
 * read start 16-byte aligned, or 8-byte for 16-bit elements when N % 8 != 0): 16 (or 8) bytes per load
 * (a scalar load per element cost a wavefront per lane: the channel-last weights took longer than the
 * strip they served). */
template <int N>
static __device__ __forceinline__ void dw_load_floats_aligned(const void *p, c1d_dtype d, int64_t first,
                                                              float *out) {
  static_assert(N % 4 == 0, "whole 8- or 16-byte vectors");
  if (d == C1D_DTYPE_F32) {
#pragma unroll
    for (int q = 0; q < N / 4; q++) {
      const uint4 v = __ldg((const uint4 *)((const float *)p + first) + q);
      out[4 * q] = __uint_as_float(v.x), out[4 * q + 1] = __uint_as_float(v.y);
      out[4 * q + 2] = __uint_as_float(v.z), out[4 * q + 3] = __uint_as_float(v.w);
    }
    return;
  }
  const bool bf16 = d == C1D_DTYPE_BF16;
  if constexpr (N % 8 == 0) {
#pragma unroll
    for (int q = 0; q < N / 8; q++) dw_unpack16(__ldg((const uint4 *)((const uint16_t *)p + first) + q), bf16, out + 8 * q);
  } else {
#pragma unroll
    for (int q = 0; q < N / 4; q++) {
      const uint2 v = __ldg((const uint2 *)((const uint16_t *)p + first) + q);
      dw_unpack16(make_uint4(v.x, v.y, 0, 0), bf16, out + 4 * q, 4);
    }
  }
}

/* A depthwise weight's index: w is (C, 1, K), so c1d_w_index(s, c, c, k) = c * K + k, without its
 * divisions by the group size (64-bit, per weight). */
static __device__ __forceinline__ int64_t dw_w_first(const c1d_shape &s, int64_t c) { return c * s.K; }

/* The V elements of a raw 16-byte vector of type TX as float32 (exact conversions: the values of
 * c1d_bf16_bits_to_float and c1d_f16_bits_to_float). */
template <int TX>
static __device__ __forceinline__ void dw_unpack(const uint4 &r, float *out) {
  if constexpr (TX == C1D_DTYPE_F32) {
    out[0] = __uint_as_float(r.x), out[1] = __uint_as_float(r.y);
    out[2] = __uint_as_float(r.z), out[3] = __uint_as_float(r.w);
  } else {
    dw_unpack16(r, TX == C1D_DTYPE_BF16, out);
  }
}
/* and of a raw 8-byte vector (16-bit elements only) */
template <int TX>
static __device__ __forceinline__ void dw_unpack(const uint2 &r, float *out) {
  static_assert(TX != C1D_DTYPE_F32, "8-byte vectors hold 16-bit elements");
  dw_unpack16(make_uint4(r.x, r.y, 0, 0), TX == C1D_DTYPE_BF16, out, 4);
}

/* y[e .. e+V) := v rounded to y's type d (e a multiple of V: the stores are aligned). Streaming stores
 * (st.global.cs, evict-first): y is written once and not read back, x's rows keep the L2. */
template <int V>
static __device__ __forceinline__ void dw_store(void *y, c1d_dtype d, int64_t e, const float *v) {
  if (d == C1D_DTYPE_F32) {
#pragma unroll
    for (int q = 0; q < V / 4; q++)
      __stcs((uint4 *)((float *)y + e + 4 * q), make_uint4(__float_as_uint(v[4 * q]), __float_as_uint(v[4 * q + 1]),
                                                           __float_as_uint(v[4 * q + 2]), __float_as_uint(v[4 * q + 3])));
    return;
  }
  uint32_t w[V / 2];
  bool any_nan = false;
#pragma unroll
  for (int j = 0; j < V; j++) any_nan |= v[j] != v[j];
  if (!any_nan) { /* the paired hardware rounding: the reference's bits but for NaNs (gpu/pack_round.h) */
#pragma unroll
    for (int j = 0; j < V / 2; j++)
      w[j] = d == C1D_DTYPE_BF16 ? c1d_pack2_bf16_rn(v[2 * j], v[2 * j + 1]) : c1d_pack2_f16_rn(v[2 * j], v[2 * j + 1]);
  } else {
#pragma unroll
    for (int j = 0; j < V / 2; j++) {
      const uint32_t lo = d == C1D_DTYPE_BF16 ? c1d_float_to_bf16_bits(v[2 * j]) : c1d_float_to_f16_bits(v[2 * j]);
      const uint32_t hi =
          d == C1D_DTYPE_BF16 ? c1d_float_to_bf16_bits(v[2 * j + 1]) : c1d_float_to_f16_bits(v[2 * j + 1]);
      w[j] = lo | hi << 16;
    }
  }
  if constexpr (V == 8)
    __stcs((uint4 *)((uint16_t *)y + e), make_uint4(w[0], w[1], w[2], w[3]));
  else
    __stcs((uint2 *)((uint16_t *)y + e), make_uint2(w[0], w[1]));
}

/* The V outputs of K taps: acc_j = b; acc_j = fma(tap k's input of output j, w_k, acc_j) for k = 0..K-1,
 * then the activation. in(j, k) is tap k's input of output j. */
template <int K, int V, typename In>
static __device__ __forceinline__ void dw_outputs(const c1d_shape &s, const float *wk, float bias, In in, float *out) {
#pragma unroll
  for (int j = 0; j < V; j++) {
    float acc = bias;
#pragma unroll
    for (int k = 0; k < K; k++) acc = c1d_fma(in(j, k), wk[k], acc);
    out[j] = c1d_activate(s, acc);
  }
}

/* The flat kernels (one vector or one output per thread) run where their count fits 31 bits (the launcher
 * checks): 32-bit divisions, where a 64-bit one (a called routine) costs more than the taps. */
#define DW_FLAT_MAX INT32_MAX
static __device__ __forceinline__ void dw_split(uint32_t a, uint32_t d, uint32_t *q, uint32_t *r) {
  *q = a / d;
  *r = a - *q * d;
}

// --- (N, C, L), D = 1 or K = 1 -------------------------------------------------------------------------

/* The window of vector vi of row `row` (x's elements t0 - H .. t0 + V - 1, t0 = vi * V) as floats, from
 * its own raw vector and the P raw vectors before it (prev[p-1] = vector vi - p); before t = 0 (vi < P)
 * the initial states or zeros, read one by one. */
template <int TX, int K>
static __device__ __forceinline__ void dw_ncl_window(const c1d_shape &s, const void *x, const void *st, int64_t n,
                                                     int64_t c, int64_t vi, const uint4 &own, const uint4 *prev,
                                                     float *win) {
  constexpr int V = dw_vec<TX>::V, P = (K - 1 + V - 1) / V, H = P * V;
  dw_unpack<TX>(own, win + H);
#pragma unroll
  for (int p = 1; p <= P; p++) dw_unpack<TX>(prev[p - 1], win + H - p * V);
  if (H > 0 && vi < P) { /* the window reaches before t = 0 (a row's first vectors): read it one by one */
    const int64_t t0 = vi * V;
#pragma unroll
    for (int i = 0; i < H; i++) win[i] = t0 - H + i >= -(K - 1) ? c1d_xs_typed(s, false, x, st, n, c, t0 - H + i) : 0.0f;
  }
}

/* The row kernel (C1D_DW_NCL_KERNEL=rows, or beyond 2^31 vectors), for long rows: a warp's lanes hold
 * consecutive vectors of one row, U per thread, every load in flight before the first use; the P vectors
 * before a lane's come from the lanes before it by warp shuffles, and lanes 0 .. P-1 load theirs (one
 * 16-byte load each, issued with the others). Three blocks per SM (85 registers): without a minimum ptxas
 * picked 64 registers and spilled. */
template <int TX, int K>
__global__ void __launch_bounds__(DW_THREADS, 3)
    dw_fast_ncl_kernel(const c1d_shape s, const void *__restrict__ x, const void *__restrict__ w,
                       const void *__restrict__ b, const void *__restrict__ st, void *__restrict__ y,
                       int64_t /* strip: unused */) {
  constexpr int V = dw_vec<TX>::V, U = dw_ncl_vectors(V, K);
  constexpr int P = (K - 1 + V - 1) / V, H = P * V; /* vectors / elements of history before a vector */
  const int64_t LV = s.L / V;
  const int lane = threadIdx.x & 31;
  /* blockDim.x is a multiple of 32: a warp shares its row, and its lanes hold consecutive vectors. Grid: x
   * over a row's vectors, y over channels, z over batches (no division: a 64-bit one is a called routine). */
  C1D_FOR_BLOCK_Z(n, s.N)
  for (int64_t c = (int64_t)blockIdx.y * blockDim.y + threadIdx.y; c < s.C; c += (int64_t)gridDim.y * blockDim.y) {
    const int64_t row = n * s.C + c;
    const unsigned char *xr = (const unsigned char *)x + row * s.L * dw_vec<TX>::BYTES;
    for (int64_t v0 = (int64_t)blockIdx.x * blockDim.x * U; v0 < LV; v0 += (int64_t)gridDim.x * blockDim.x * U) {
      uint4 own[U], edge[U * (P > 0 ? P : 1)]; /* edge[u * P + p - 1]: vector vi[u] - p, lanes < p */
      int64_t vi[U];
#pragma unroll
      for (int u = 0; u < U; u++) { /* every load in flight before the first use */
        vi[u] = v0 + u * blockDim.x + threadIdx.x;
        own[u] = vi[u] < LV ? dw_load16(xr + vi[u] * 16) : make_uint4(0, 0, 0, 0);
#pragma unroll
        for (int p = 1; p <= P; p++)
          edge[u * P + p - 1] = lane < p && vi[u] >= p && vi[u] < LV ? dw_load16(xr + (vi[u] - p) * 16) : make_uint4(0, 0, 0, 0);
      }
      float wk[K];
      dw_load_floats<K>(w, s.dt.w, dw_w_first(s, c), wk);
      const float bias = s.bias ? c1d_load_typed(b, s.dt.b, c) : 0.0f;
#pragma unroll
      for (int u = 0; u < U; u++) {
        uint4 prev[P > 0 ? P : 1];
#pragma unroll
        for (int p = 1; p <= P; p++) { /* the vector p before: lane - p's, or the lane's own load */
          prev[p - 1].x = __shfl_up_sync(0xffffffffu, own[u].x, p);
          prev[p - 1].y = __shfl_up_sync(0xffffffffu, own[u].y, p);
          prev[p - 1].z = __shfl_up_sync(0xffffffffu, own[u].z, p);
          prev[p - 1].w = __shfl_up_sync(0xffffffffu, own[u].w, p);
          if (lane < p) prev[p - 1] = edge[u * P + p - 1];
        }
        if (vi[u] < LV) {
          float win[H + V], out[V]; /* win[i] = xs[t0 - H + i], t0 = vi * V */
          dw_ncl_window<TX, K>(s, x, st, n, c, vi[u], own[u], prev, win);
          dw_outputs<K, V>(s, wk, bias, [&](int j, int k) { return win[H + j + k - (K - 1)]; }, out);
          dw_store<V>(y, s.dt.y, row * s.L + vi[u] * V, out);
        }
      }
    }
  }
}

/* The flat (N, C, L) kernel, the launcher's default: one vector per thread over the flat (row, vector)
 * index, so that every lane works whatever the row length; the P vectors before it are loaded (L1 hits:
 * the neighbouring threads' own vectors). 32 registers: 88 % occupancy at the anchor (issue 24). */
template <int TX, int K>
__global__ void __launch_bounds__(DW_THREADS)
    dw_fast_ncl_short_kernel(const c1d_shape s, const void *__restrict__ x, const void *__restrict__ w,
                             const void *__restrict__ b, const void *__restrict__ st, void *__restrict__ y,
                             int64_t /* strip: unused */) {
  constexpr int V = dw_vec<TX>::V, P = (K - 1 + V - 1) / V, H = P * V;
  const uint32_t LV = (uint32_t)(s.L / V), total = (uint32_t)(s.N * s.C * LV); /* <= DW_FLAT_MAX */
  for (uint32_t f = blockIdx.x * blockDim.x + threadIdx.x; f < total; f += gridDim.x * blockDim.x) {
    uint32_t row, vi, n, c;
    dw_split(f, LV, &row, &vi);
    dw_split(row, (uint32_t)s.C, &n, &c);
    const unsigned char *xr = (const unsigned char *)x + row * s.L * dw_vec<TX>::BYTES;
    const uint4 own = dw_load16(xr + vi * 16);
    uint4 prev[P > 0 ? P : 1];
#pragma unroll
    for (int p = 1; p <= P; p++) prev[p - 1] = vi >= p ? dw_load16(xr + (vi - p) * 16) : make_uint4(0, 0, 0, 0);
    float wk[K];
    dw_load_floats<K>(w, s.dt.w, dw_w_first(s, c), wk);
    const float bias = s.bias ? c1d_load_typed(b, s.dt.b, c) : 0.0f;
    float win[H + V], out[V];
    dw_ncl_window<TX, K>(s, x, st, n, c, vi, own, prev, win);
    dw_outputs<K, V>(s, wk, bias, [&](int j, int k) { return win[H + j + k - (K - 1)]; }, out);
    dw_store<V>(y, s.dt.y, row * s.L + vi * V, out);
  }
}

// --- channel-last (N, L, C) ------------------------------------------------------------------------------

/* Row tt (>= 0) of x, or (tt < 0) of the initial states or zeros, for channels c0 .. c0+V-1. */
template <int TX>
static __device__ __forceinline__ void dw_nlc_row(const c1d_shape &s, const void *x, const void *st, int64_t n,
                                                  int64_t c0, int64_t tt, float *out) {
  constexpr int V = dw_vec<TX>::V;
  if (tt >= 0) {
    dw_unpack<TX>(dw_load16((const unsigned char *)x + c1d_x_index_nlc(&s, n, c0, tt) * dw_vec<TX>::BYTES), out);
  } else if (s.states) { /* channel-last states: the V channels are adjacent */
    dw_load_floats_aligned<V>(st, s.dt.s, c1d_s_index_nlc(&s, n, c0, tt), out);
  } else {
#pragma unroll
    for (int j = 0; j < V; j++) out[j] = 0.0f;
  }
}

/* The weights and biases of channels c0 .. c0+V-1 as float32. */
template <int TX, int K, int V = dw_vec<TX>::V>
static __device__ __forceinline__ void dw_nlc_weights(const c1d_shape &s, const void *w, const void *b, int64_t c0,
                                                      float (*wk)[K], float *bias) {
  float flat[V * K]; /* channels c0 .. c0+V-1's K weights each: contiguous in w */
  dw_load_floats_aligned<V * K>(w, s.dt.w, dw_w_first(s, c0), flat);
  if (s.bias) {
    dw_load_floats_aligned<V>(b, s.dt.b, c0, bias);
  } else {
#pragma unroll
    for (int j = 0; j < V; j++) bias[j] = 0.0f;
  }
#pragma unroll
  for (int j = 0; j < V; j++)
#pragma unroll
    for (int k = 0; k < K; k++) wk[j][k] = flat[j * K + k];
}

/* Position t's V outputs from its K tap rows rows[k] (channels c0 .. c0+V-1), stored at y's row t. */
template <int TX, int K, int V = dw_vec<TX>::V>
static __device__ __forceinline__ void dw_nlc_outputs(const c1d_shape &s, const float (*wk)[K], const float *bias,
                                                      const float (*rows)[V], void *y, int64_t n, int64_t c0,
                                                      int64_t t) {
  float out[V];
#pragma unroll
  for (int j = 0; j < V; j++) {
    float acc = bias[j];
#pragma unroll
    for (int k = 0; k < K; k++) acc = c1d_fma(rows[k][j], wk[j][k], acc);
    out[j] = c1d_activate(s, acc);
  }
  dw_store<V>(y, s.dt.y, c1d_y_index_nlc(&s, n, c0, t), out);
}

/* Position t's V outputs from the K tap rows of raw x rows win[k] (row t - (K-1) + k), stored at y's
 * element e (row t's channel c0). Unpacked per use (one shift or mask per bf16 element): the float window
 * would not fit 128 registers. */
template <int TX, int K>
static __device__ __forceinline__ void dw_nlc_outputs_raw(const c1d_shape &s, const float (*wk)[K], const float *bias,
                                                          const uint4 *win, void *y, int64_t e) {
  constexpr int V = dw_vec<TX>::V;
  float acc[V];
#pragma unroll
  for (int j = 0; j < V; j++) acc[j] = bias[j];
#pragma unroll
  for (int k = 0; k < K; k++) { /* k outer, j inner: each output still sums b, then tap 0, 1, ... */
    float row[V];
    dw_unpack<TX>(win[k], row);
#pragma unroll
    for (int j = 0; j < V; j++) acc[j] = c1d_fma(row[j], wk[j][k], acc[j]);
  }
#pragma unroll
  for (int j = 0; j < V; j++) acc[j] = c1d_activate(s, acc[j]);
  dw_store<V>(y, s.dt.y, e, acc);
}

/* Row tt of x, or (tt < 0) of the states or zeros, as a raw vector of x's type (the launcher sends states
 * of another type elsewhere; zeros are +0 bits in every type). */
template <int TX>
static __device__ __forceinline__ uint4 dw_nlc_raw_row(const c1d_shape &s, const unsigned char *x0, const void *st,
                                                       int64_t stride, int64_t n, int64_t c0, int64_t tt) {
  if (tt >= 0) return dw_load16(x0 + tt * stride);
  if (!s.states) return make_uint4(0, 0, 0, 0);
  return dw_load16((const unsigned char *)st + c1d_s_index_nlc(&s, n, c0, tt) * dw_vec<TX>::BYTES);
}

/* Row r (raw, channels c0 .. c0+V-1) into the K outputs it is a tap of: output r + m takes it as tap
 * K-1-m, and acc[(base + m) % K] holds output r + m's running sum (the caller unrolls, so the indices are
 * constants). The newest output (m = K-1) starts from its bias; each output still sums b, then tap 0, 1,
 * ..., K-1 in order, as grouped_naive does, but the row is unpacked once rather than once per tap. m
 * from m_first: the outputs before a strip are not kept. VB = 8: half a row (the pairs kernel). */
template <int TX, int K, int VB = 16>
static __device__ __forceinline__ void dw_nlc_feed(const float (*wk)[K], const float *bias,
                                                   const typename dw_raw<VB>::t &r, int base, int m_first,
                                                   float (*acc)[dw_vec<TX, VB>::V]) {
  constexpr int V = dw_vec<TX, VB>::V;
  float xv[V];
  dw_unpack<TX>(r, xv);
#pragma unroll
  for (int m = 0; m < K; m++) {
    if (m < m_first) continue;
    const int slot = (base + m) % K, k = K - 1 - m;
#pragma unroll
    for (int j = 0; j < V; j++) acc[slot][j] = c1d_fma(xv[j], wk[j][k], m == K - 1 ? bias[j] : acc[slot][j]);
  }
}

/* The channel-last ring: each thread's next DW_NLC_STAGES rows in flight, in shared memory rather than
 * registers (cp.async: the copy needs no register until the row is used), in blocks of
 * DW_NLC_RING_THREADS (16 rows of 128 threads: 32 KB, under the 48 KB of static shared memory). Call D on
 * the H200 (notes/depthwise.md): 8 rows at two blocks of 256 per SM (bf16 K = 4, 118 registers) reached
 * 68-87 % of the copy, 8 rows at three blocks (fp32 K = 4) 98 %: the bytes in flight per SM set the speed. */
#define DW_NLC_STAGES 16
#define DW_NLC_RING_THREADS 128

/* cp.async.wait_group N: this thread's copies but the newest N groups have landed (__pipeline_wait_prior
 * stops at 8). */
template <int N>
static __device__ __forceinline__ void dw_wait_copies() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

/* A ring kernel's strip (batch n, V channels from c0, positions t_begin .. t_end-1): its first rows leave
 * for the ring column (cp.async, nothing past the strip), then body(n, c0, x0, t_begin, t_end, next): x0
 * x's row 0 at c0, next the row to copy after them. P = 1: DW_NLC_STAGES rows, one commit group each.
 * P = 2 (the pairs kernel): adjacent lanes share a column, each copying the rows of its parity; two
 * batches of BATCH rows, one group each. */
template <int TX, int P, int BATCH, typename Body>
static __device__ __forceinline__ void dw_ring_strip(const c1d_shape &s, const void *x, int64_t strip, int64_t n,
                                                     int64_t cv, int64_t sp, uint4 (*ring)[DW_NLC_RING_THREADS / P],
                                                     Body body) {
  const int tid = threadIdx.y * blockDim.x + threadIdx.x, column = tid / P, part = tid % P;
  const int64_t c0 = cv * dw_vec<TX>::V, stride = s.C * dw_vec<TX>::BYTES;
  const unsigned char *x0 = (const unsigned char *)x + c1d_x_index_nlc(&s, n, c0, 0) * dw_vec<TX>::BYTES;
  const int64_t t_begin = sp * strip, t_end = t_begin + strip < s.L ? t_begin + strip : s.L;
  const unsigned char *next = x0 + t_begin * stride; /* the next row to copy into the ring */
  if constexpr (P == 1) {
#pragma unroll
    for (int i = 0; i < DW_NLC_STAGES; i++, next += stride) { /* rows t_begin .. t_begin+15, a group each */
      if (t_begin + i < t_end) __pipeline_memcpy_async(&ring[i][column], next, 16);
      __pipeline_commit();
    }
  } else {
#pragma unroll
    for (int batch = 0; batch < 2; batch++) {
#pragma unroll 1 /* unrolled, the offsets i * stride were hoisted out of the loops, in 64-bit registers */
      for (int i = part; i < BATCH && t_begin + batch * BATCH + i < t_end; i += P)
        __pipeline_memcpy_async(&ring[batch * BATCH + i][column], next + (batch * BATCH + i) * stride, 16);
      __pipeline_commit();
    }
    next += 2 * BATCH * stride;
  }
  body(n, c0, x0, t_begin, t_end, next);
}

/* The ring kernels' walk over this thread's strips (dw_ring_strip each). Grid: x over channel vectors
 * (P threads each), y over strips, z over batches. P = 2: the launcher's grid covers the problem, one
 * strip a thread (the loops' 64-bit counters cost the pairs kernel 17 registers). */
template <int TX, int P = 1, int BATCH = 1, typename Body>
static __device__ __forceinline__ void dw_ring_strips(const c1d_shape &s, const void *x, int64_t strip,
                                                      uint4 (*ring)[DW_NLC_RING_THREADS / P], Body body) {
  const int64_t CV = s.C / dw_vec<TX>::V, strips = c1d_ceil_div(s.L, strip);
  if constexpr (P == 2) {
    const int64_t cv = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) / P;
    const int64_t sp = (int64_t)blockIdx.y * blockDim.y + threadIdx.y;
    if (cv < CV && sp < strips) dw_ring_strip<TX, P, BATCH>(s, x, strip, blockIdx.z, cv, sp, ring, body);
  } else {
    C1D_FOR_BLOCK_Z(n, s.N)
    for (int64_t cv = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; cv < CV; cv += (int64_t)gridDim.x * blockDim.x)
      for (int64_t sp = (int64_t)blockIdx.y * blockDim.y + threadIdx.y; sp < strips;
           sp += (int64_t)gridDim.y * blockDim.y)
        dw_ring_strip<TX, P, BATCH>(s, x, strip, n, cv, sp, ring, body);
  }
}

/* D = 1 (or K = 1), the default channel-last kernel. A thread owns V channels over a strip of `strip`
 * consecutive positions (the launcher's choice: long enough that the weights and the K-1 rows before
 * the strip, loaded once per strip, cost little; short enough to fill the device). Its x rows stream
 * through a ring of DW_NLC_STAGES rows in shared memory (one 16-byte cp.async each, DW_NLC_STAGES in
 * flight), each row sliding through a K-row window of raw vectors in registers: the bytes in flight per
 * SM no longer take registers, which had held the register kernel below to two blocks per SM. The rows
 * before the strip (x, or the initial states or zeros before t = 0: states in x's type, the launcher
 * checks) are loaded with the weights, all in one round trip. A thread reads back only its own ring
 * column: no barrier. Grid: x over channel vectors, y over strips, z over batches. */
template <int TX, int K, bool PLAIN>
__global__ void __launch_bounds__(DW_NLC_RING_THREADS, dw_vec<TX>::NLC_RING_BLOCKS(K))
    dw_fast_nlc_kernel(const c1d_shape shape, const void *__restrict__ x, const void *__restrict__ w,
                       const void *__restrict__ b, const void *__restrict__ st, void *__restrict__ y,
                       const int64_t strip) {
  const c1d_shape s = dw_shape_of<TX, PLAIN>(shape);
  constexpr int V = dw_vec<TX>::V, S = DW_NLC_STAGES;
  __shared__ uint4 ring[S][DW_NLC_RING_THREADS];
  const int tid = threadIdx.y * blockDim.x + threadIdx.x;
  const int64_t stride = s.C * dw_vec<TX>::BYTES;
  dw_ring_strips<TX>(s, x, strip, ring, [&](int64_t n, int64_t c0, const unsigned char *x0, int64_t t_begin,
                                            int64_t t_end, const unsigned char *next) {
    /* the copies have left (dw_ring_strips); then the window's loads, then the weights (converted at
     * once: the conversion waits for them, and with the copies in flight that wait is the only round trip) */
    uint4 win[K]; /* win[k]: row t - (K-1) + k for the position t being computed */
#pragma unroll
    for (int i = 0; i < K - 1; i++) win[i + 1] = dw_nlc_raw_row<TX>(s, x0, st, stride, n, c0, t_begin - (K - 1) + i);
    float wk[V][K], bias[V]; /* per strip: L1 hits after a thread's first (most threads have one strip) */
    dw_nlc_weights<TX, K>(s, w, b, c0, wk, bias);
    int64_t e = c1d_y_index_nlc(&s, n, c0, t_begin); /* y's element of position t, channel c0 */
#pragma unroll 1 /* unrolled, the PLAIN fp32 kernels spilled at six blocks per SM */
    for (int64_t t = t_begin; t < t_end; t++, e += s.O, next += stride) {
      const int slot = (int)(t - t_begin) & (S - 1); /* holds row t */
      dw_wait_copies<S - 1>(); /* row t's group has landed (one group committed per row) */
#pragma unroll
      for (int k = 0; k + 1 < K; k++) win[k] = win[k + 1];
      win[K - 1] = ring[slot][tid];
      dw_nlc_outputs_raw<TX, K>(s, wk, bias, win, y, e);
      /* the slot is refilled after its row was used (in-order issue: the read has returned) */
      if (t + S < t_end) __pipeline_memcpy_async(&ring[slot][tid], next, 16);
      __pipeline_commit();
    }
  });
}

/* The ring kernel with running sums (the launcher's for fp32 from K = 3 without SiLU;
 * C1D_DW_NLC_KERNEL=rolling): the same ring and strips, but each row, unpacked once, goes into the K
 * running sums it is a tap of (dw_nlc_feed; the positions are unrolled by K so that the sums rotate
 * without moves), where the window kernel above unpacks each 16-bit row K times and shifts its window
 * every position. The K sums of V floats take more registers than a window of K raw rows: fewer blocks
 * per SM (NLC_ROLL_BLOCKS). On the H200 (notes/depthwise.md, fifth session) fp32 K = 4 gained up to 6
 * points of the copy on medium problems; with SiLU, and for bf16 K = 4, it lost. */
template <int TX, int K, bool PLAIN>
__global__ void __launch_bounds__(DW_NLC_RING_THREADS, dw_vec<TX>::NLC_ROLL_BLOCKS(K))
    dw_fast_nlc_rolling_kernel(const c1d_shape shape, const void *__restrict__ x, const void *__restrict__ w,
                               const void *__restrict__ b, const void *__restrict__ st, void *__restrict__ y,
                               const int64_t strip) {
  const c1d_shape s = dw_shape_of<TX, PLAIN>(shape);
  constexpr int V = dw_vec<TX>::V, S = DW_NLC_STAGES;
  __shared__ uint4 ring[S][DW_NLC_RING_THREADS];
  const int tid = threadIdx.y * blockDim.x + threadIdx.x;
  const int64_t stride = s.C * dw_vec<TX>::BYTES;
  dw_ring_strips<TX>(s, x, strip, ring, [&](int64_t n, int64_t c0, const unsigned char *x0, int64_t t_begin,
                                            int64_t t_end, const unsigned char *next) {
    /* the copies have left (dw_ring_strips); then the rows before the strip, then the weights (converted
     * at once: the conversion waits for them, and with the copies in flight that wait is the only round
     * trip) */
    uint4 before[K > 1 ? K - 1 : 1]; /* rows t_begin - (K-1) .. t_begin - 1 */
#pragma unroll
    for (int i = 0; i < K - 1; i++) before[i] = dw_nlc_raw_row<TX>(s, x0, st, stride, n, c0, t_begin - (K - 1) + i);
    float wk[V][K], bias[V]; /* per strip: L1 hits after a thread's first (most threads have one strip) */
    dw_nlc_weights<TX, K>(s, w, b, c0, wk, bias);
    float acc[K][V]; /* acc[(t - t_begin) % K]: output t's running sum */
#pragma unroll
    for (int i = 0; i < K - 1; i++) /* output t_begin + m - (K-1-i) sits at slot m - (K-1-i) */
      dw_nlc_feed<TX, K>(wk, bias, before[i], i + 1, K - 1 - i, acc);
    int64_t e = c1d_y_index_nlc(&s, n, c0, t_begin); /* y's element of position t, channel c0 */
#pragma unroll 1 /* K positions an iteration: the sums' slots are constants */
    for (int64_t t0 = t_begin; t0 < t_end; t0 += K) {
#pragma unroll
      for (int j = 0; j < K; j++) {
        const int64_t t = t0 + j;
        if (t >= t_end) break;
        const int slot = (int)(t - t_begin) & (S - 1); /* holds row t */
        dw_wait_copies<S - 1>(); /* row t's group has landed (one group committed per row) */
        dw_nlc_feed<TX, K>(wk, bias, ring[slot][tid], j, 0, acc);
        /* the slot is refilled after its row was used (in-order issue: the read has returned) */
        if (t + S < t_end) __pipeline_memcpy_async(&ring[slot][tid], next, 16);
        __pipeline_commit();
        float out[V];
#pragma unroll
        for (int q = 0; q < V; q++) out[q] = c1d_activate(s, acc[j][q]);
        dw_store<V>(y, s.dt.y, e, out);
        e += s.O, next += stride;
      }
    }
  });
}

/* The ring kernel in thread pairs (16-bit x, PLAIN; C1D_DW_NLC_KERNEL=pairs): lanes 2i and 2i+1 share
 * one ring column of 16-byte rows and read an 8-byte half each (V / 2 channels), fed into K running sums
 * as in the rolling kernel. Per thread, half the rolling kernel's weights, biases and sums: twice the
 * threads at more blocks per SM (NLC_PAIR_BLOCKS), with the copies still 16 bytes (an 8-byte ring, which
 * doubled the copies, lost: notes/depthwise.md). Each thread copies the rows of its parity, so the pair
 * meets (__syncwarp over its two lanes) before a row is read or its slot refilled. The ring is two
 * batches of B rows (a multiple of K, at least 8): at a batch's first row the pair refills the other
 * half, which both have read, with the batch after this one (one group), waits for this batch and meets
 * again: B to 2B - 1 rows in flight. The refills stay out of the loop unrolled by K (a refill per row
 * there cost ptxas 30 registers). */
static constexpr __host__ __device__ int dw_pair_batch(int K) { return K * ((8 + K - 1) / K); }
template <int TX, int K>
__global__ void __launch_bounds__(DW_NLC_RING_THREADS, dw_vec<TX>::NLC_PAIR_BLOCKS(K))
    dw_fast_nlc_pairs_kernel(const c1d_shape shape, const void *__restrict__ x, const void *__restrict__ w,
                             const void *__restrict__ b, const void *__restrict__ st, void *__restrict__ y,
                             const int64_t strip) {
  static_assert(TX != C1D_DTYPE_F32, "pairs hold 16-bit halves");
  const c1d_shape s = dw_shape_of<TX, true>(shape); /* PLAIN only */
  constexpr int H = dw_vec<TX, 8>::V, B = dw_pair_batch(K); /* H channels a thread, B rows a batch */
  __shared__ uint4 ring[2 * B][DW_NLC_RING_THREADS / 2];
  const int tid = threadIdx.y * blockDim.x + threadIdx.x, column = tid / 2, half = tid % 2;
  const unsigned pair = 3u << ((threadIdx.x & 31) & ~1); /* the two lanes (blockDim.x is a multiple of 32) */
  const int64_t stride = s.C * dw_vec<TX>::BYTES;
  dw_ring_strips<TX, 2, B>(s, x, strip, ring, [&](int64_t n, int64_t c0, const unsigned char *x0, int64_t t_begin,
                                                  int64_t t_end, const unsigned char *next) {
    const int64_t h0 = c0 + half * H; /* this thread's first channel */
    uint2 before[K > 1 ? K - 1 : 1];  /* its halves of rows t_begin - (K-1) .. t_begin - 1 */
#pragma unroll
    for (int i = 0; i < K - 1; i++) {
      const int64_t tt = t_begin - (K - 1) + i;
      before[i] = tt >= 0    ? dw_load_raw<8>(x0 + tt * stride + half * 8)
                  : s.states ? dw_load_raw<8>((const unsigned char *)st + c1d_s_index_nlc(&s, n, h0, tt) * 2)
                             : make_uint2(0, 0);
    }
    float wk[H][K], bias[H];
    dw_nlc_weights<TX, K, H>(s, w, b, h0, wk, bias);
    float acc[K][H]; /* acc[(t - t_begin) % K]: output t's running sum */
#pragma unroll
    for (int i = 0; i < K - 1; i++) dw_nlc_feed<TX, K, 8>(wk, bias, before[i], i + 1, K - 1 - i, acc);
    int64_t e = c1d_y_index_nlc(&s, n, h0, t_begin); /* y's element of position t, channel h0 */
    const int len = (int)(t_end - t_begin);            /* positions r = t - t_begin: 32-bit counters */
    int this_half = 0;                                 /* the ring half of the batch from r0 */
#pragma unroll 1
    for (int r0 = 0; r0 < len; r0 += B, this_half ^= B) {
      if (r0 > 0) {
        __syncwarp(pair); /* both have read the previous batch: rows r0 + B .. r0 + 2B - 1 into its half */
#pragma unroll 1
        for (int i = half; i < B && r0 + B + i < len; i += 2)
          __pipeline_memcpy_async(&ring[(B ^ this_half) + i][column], next + i * stride, 16);
        __pipeline_commit();
        next += B * stride;
      }
      dw_wait_copies<1>(); /* this thread's copies of this batch have landed (the next batch's may not) */
      __syncwarp(pair);    /* and the partner's */
#pragma unroll 1 /* K positions an iteration: the sums' slots are constants */
      for (int q = 0; q < B && r0 + q < len; q += K) {
#pragma unroll
        for (int j = 0; j < K; j++) {
          if (r0 + q + j >= len) break;
          const uint2 own = ((const uint2 *)&ring[this_half + q + j][column])[half];
          dw_nlc_feed<TX, K, 8>(wk, bias, own, j, 0, acc);
          dw_store<H>(y, s.dt.y, e, acc[j]);
          e += s.O;
        }
      }
    }
    __syncwarp(pair); /* both have read the strip's last rows before the next strip's copies land */
  });
}

/* The register-pipelined channel-last kernel (C1D_DW_NLC_KERNEL=registers; measured against the ring kernel
 * above). D = 1 (or K = 1). A thread owns V channels over a strip of `strip` consecutive positions (the
 * launcher's choice: long enough that the weights, loaded once per strip, cost little; short enough to
 * fill the device). The strip's first K-1 positions of a sequence (their taps reach the initial states or
 * the causal zeros) gather their rows one by one; the rest is walked in chunks of TT positions: the next
 * chunk's TT rows are loaded (16 bytes each, in flight together) before this chunk's outputs are
 * computed, and each row slides through a K-row window of raw vectors in registers. Grid: x over channel
 * vectors, y over strips, z over batches. */
template <int TX, int K>
__global__ void __launch_bounds__(DW_THREADS, dw_vec<TX>::NLC_BLOCKS(K))
    dw_fast_nlc_registers_kernel(const c1d_shape s, const void *__restrict__ x, const void *__restrict__ w,
                       const void *__restrict__ b, const void *__restrict__ st, void *__restrict__ y,
                       const int64_t strip) {
  constexpr int V = dw_vec<TX>::V, TT = DW_NLC_RUN;
  const int64_t CV = s.C / V, strips = c1d_ceil_div(s.L, strip), stride = s.C * dw_vec<TX>::BYTES;
  C1D_FOR_BLOCK_Z(n, s.N)
  for (int64_t cv = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; cv < CV; cv += (int64_t)gridDim.x * blockDim.x) {
    const int64_t c0 = cv * V;
    const unsigned char *x0 = (const unsigned char *)x + c1d_x_index_nlc(&s, n, c0, 0) * dw_vec<TX>::BYTES;
    float wk[V][K], bias[V];
    dw_nlc_weights<TX, K>(s, w, b, c0, wk, bias);
    for (int64_t sp = (int64_t)blockIdx.y * blockDim.y + threadIdx.y; sp < strips;
         sp += (int64_t)gridDim.y * blockDim.y) {
      int64_t t_begin = sp * strip;
      const int64_t t_end = t_begin + strip < s.L ? t_begin + strip : s.L;
      for (; t_begin < K - 1 && t_begin < t_end; t_begin++) { /* taps before t = 0: states or zeros */
        float rows[K][V];
#pragma unroll
        for (int k = 0; k < K; k++) dw_nlc_row<TX>(s, x, st, n, c0, t_begin - (K - 1) + k, rows[k]);
        dw_nlc_outputs<TX, K>(s, wk, bias, rows, y, n, c0, t_begin);
      }
      if (t_begin >= t_end) continue;
      uint4 raw[TT]; /* this chunk's rows t .. t+TT-1 */
#pragma unroll
      for (int i = 0; i < TT; i++)
        raw[i] = t_begin + i < t_end ? dw_load16(x0 + (t_begin + i) * stride) : make_uint4(0, 0, 0, 0);
      uint4 win[K]; /* win[k]: row t - (K-1) + k for the position t being computed */
#pragma unroll
      for (int i = 0; i < K - 1; i++) win[i + 1] = dw_load16(x0 + (t_begin - (K - 1) + i) * stride);
      for (int64_t t = t_begin; t < t_end; t += TT) {
        uint4 next[TT]; /* the next chunk's rows, in flight while this chunk computes */
#pragma unroll
        for (int i = 0; i < TT; i++)
          next[i] = t + TT + i < t_end ? dw_load16(x0 + (t + TT + i) * stride) : make_uint4(0, 0, 0, 0);
#pragma unroll
        for (int i = 0; i < TT; i++) {
#pragma unroll
          for (int k = 0; k + 1 < K; k++) win[k] = win[k + 1];
          win[K - 1] = raw[i];
          if (t + i < t_end) dw_nlc_outputs_raw<TX, K>(s, wk, bias, win, y, c1d_y_index_nlc(&s, n, c0, t + i));
        }
#pragma unroll
        for (int i = 0; i < TT; i++) raw[i] = next[i];
      }
    }
  }
}

/* D > 1: each position's K tap rows loaded (the newest from memory, the others mostly L1/L2 hits), over
 * strips as above. */
template <int TX, int K>
__global__ void __launch_bounds__(DW_THREADS, dw_vec<TX>::NLC_BLOCKS(K))
    dw_fast_nlc_dilated_kernel(const c1d_shape s, const void *__restrict__ x, const void *__restrict__ w,
                               const void *__restrict__ b, const void *__restrict__ st, void *__restrict__ y,
                               const int64_t strip) {
  constexpr int V = dw_vec<TX>::V;
  const int64_t CV = s.C / V, strips = c1d_ceil_div(s.L, strip), pad = c1d_pad(&s);
  C1D_FOR_BLOCK_Z(n, s.N)
  for (int64_t cv = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; cv < CV; cv += (int64_t)gridDim.x * blockDim.x) {
    const int64_t c0 = cv * V;
    float wk[V][K], bias[V];
    dw_nlc_weights<TX, K>(s, w, b, c0, wk, bias);
    for (int64_t sp = (int64_t)blockIdx.y * blockDim.y + threadIdx.y; sp < strips;
         sp += (int64_t)gridDim.y * blockDim.y)
      for (int64_t t = sp * strip; t < sp * strip + strip && t < s.L; t++) {
        float rows[K][V];
#pragma unroll
        for (int k = 0; k < K; k++) dw_nlc_row<TX>(s, x, st, n, c0, t - pad + k * s.D, rows[k]);
        dw_nlc_outputs<TX, K>(s, wk, bias, rows, y, n, c0, t);
      }
  }
}

/* Small channel-last problems (the launcher's choice up to DW_NLC_FLAT_MAX vectors x positions, or
 * C1D_DW_NLC_KERNEL=flat): one thread per output row vector, in the shape of the (N, C, L) flat kernel.
 * Over the flat (batch, position, channel vector) index, so consecutive threads write consecutive 16 bytes;
 * its K tap rows (16 bytes each: the newest from memory, the others L1/L2 hits of the neighbouring
 * positions' threads), V*K weights and V biases are all loaded before the first FMA, in 32-bit index
 * arithmetic (the launcher sends it at most 2^31 elements), with no ring and no strip. The ring kernels
 * pay a strip's prologue (its weights and K - 1 earlier rows) and walk it one position after another: on
 * a problem of a few hundred KB they run a few warps per SM, each waiting on its own chain (issue 24's
 * seventh session: N=1 C=2048 L=64 K=4 bf16 at 3.5 us against a copy of 2.6). Any D; states of x's type
 * (others take the register kernel). Each output still sums b, then tap 0, 1, ..., K-1 in order. */
template <int TX, int K, bool PLAIN>
__global__ void __launch_bounds__(DW_THREADS)
    dw_fast_nlc_flat_kernel(const c1d_shape shape, const void *__restrict__ x, const void *__restrict__ w,
                            const void *__restrict__ b, const void *__restrict__ st, void *__restrict__ y,
                            int64_t /* strip: unused */) {
  const c1d_shape s = dw_shape_of<TX, PLAIN>(shape);
  constexpr int V = dw_vec<TX>::V, BYTES = dw_vec<TX>::BYTES;
  const uint32_t CV = (uint32_t)(s.C / V), L = (uint32_t)s.L, C = (uint32_t)s.C, D = (uint32_t)s.D;
  const uint32_t total = (uint32_t)(s.N * s.L) * CV, pad = (uint32_t)(K - 1) * D; /* <= DW_FLAT_MAX */
  const unsigned char *xb = (const unsigned char *)x;
  for (uint32_t f = blockIdx.x * blockDim.x + threadIdx.x; f < total; f += gridDim.x * blockDim.x) {
    uint32_t pos, cv, n, t; /* pos = n * L + t */
    dw_split(f, CV, &pos, &cv);
    dw_split(pos, L, &n, &t);
    const uint32_t c0 = cv * V;
    uint4 win[K]; /* tap k's row: x's row t - pad + k*D, or before t = 0 the states' (x's type) or zeros */
#pragma unroll
    for (int k = 0; k < K; k++) {
      const uint32_t back = pad - (uint32_t)k * D; /* rows before t */
      win[k] = t >= back ? dw_load16(xb + (size_t)((pos - back) * C + c0) * BYTES) : make_uint4(0, 0, 0, 0);
    }
    if (s.states && t < pad) { /* a sequence's first positions: their taps before t = 0 read the states */
#pragma unroll
      for (int k = 0; k < K; k++) {
        const int64_t tt = (int64_t)t - pad + k * D;
        if (tt < 0) win[k] = dw_load16((const unsigned char *)st + c1d_s_index_nlc(&s, n, c0, tt) * BYTES);
      }
    }
    float wk[V][K], bias[V];
    dw_nlc_weights<TX, K>(s, w, b, c0, wk, bias);
    dw_nlc_outputs_raw<TX, K>(s, wk, bias, win, y, (int64_t)pos * C + c0);
  }
}

/* The tile kernel's rows a thread. Measured on an H100 (notes/depthwise.md, 2026-12-05 evening), bf16 over
 * the decode grid: R = 1 reached 57-80 % of the copy on medium and large problems, R = 2 75-87, R = 4 95-100
 * (three blocks of 256 threads an SM: 48 KB of rows in flight, the copy's 32). */
#define DW_NLC_TILE_ROWS 4

/* Channel-last 16-bit problems beyond the flat kernel's reach (the launcher's choice: dw_nlc_tile;
 * C1D_DW_NLC_KERNEL=tile asks for it on any type): the flat kernel's one thread per output row vector,
 * R = DW_NLC_TILE_ROWS of them a thread, but a block owns a tile of blockDim.x channel vectors x
 * R * blockDim.y consecutive positions of one batch, and the K - 1 tap rows before each position come
 * from shared memory, where each thread left its own rows and the first K - 1 rows of threads the K - 1
 * rows before the tile. The flat kernel reads each row K times (through the L1 and L2: its cost where the
 * problem is large); the strip kernels read it once, but walk a strip one position after another, with
 * fewer rows in flight. Here every row is read 1 + (K-1)/(R * blockDim.y) times (16 channel vectors x 16
 * threads' rows: 3/64 more at K = 4) and every load of a thread (its R rows, a row before the tile, its
 * weights and biases) leaves before the first FMA: one round trip, R rows in flight a thread. Thread
 * (tx, ty) owns positions t0 + ty + r * blockDim.y (r < R), so that each of a warp's loads reads whole
 * lines. D = 1; states of x's type. Each output still sums b, then tap 0, 1, ..., K-1 in order. Grid: over
 * the flat (batch, position tile, channel tile) index, 32-bit (the launcher sends it at most 2^31
 * elements). Dynamic shared memory: (R * blockDim.y + K - 1) x blockDim.x rows of 16 bytes. */
template <int TX, int K, bool PLAIN>
__global__ void __launch_bounds__(DW_THREADS, dw_vec<TX>::NLC_TILE_BLOCKS(K))
    dw_fast_nlc_tile_kernel(const c1d_shape shape, const void *__restrict__ x, const void *__restrict__ w,
                            const void *__restrict__ b, const void *__restrict__ st, void *__restrict__ y,
                            int64_t /* strip: unused */) {
  extern __shared__ uint4 dw_tile[]; /* dw_tile[i * blockDim.x + tx]: the tile's position t0 - (K-1) + i */
  const c1d_shape s = dw_shape_of<TX, PLAIN>(shape);
  constexpr int V = dw_vec<TX>::V, BYTES = dw_vec<TX>::BYTES, R = DW_NLC_TILE_ROWS;
  const uint32_t CV = (uint32_t)(s.C / V), L = (uint32_t)s.L, C = (uint32_t)s.C;
  const uint32_t tx = threadIdx.x, ty = threadIdx.y, bx = blockDim.x, by = blockDim.y, span = R * by;
  const uint32_t tiles_c = (CV + bx - 1) / bx, tiles_t = (L + span - 1) / span, tiles = (uint32_t)s.N * tiles_t * tiles_c;
  const unsigned char *xb = (const unsigned char *)x;
  for (uint32_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) { /* uniform over the block */
    uint32_t rest, tc, n, tt;
    dw_split(tile, tiles_c, &rest, &tc);
    dw_split(rest, tiles_t, &n, &tt);
    const uint32_t cv = tc * bx + tx, t0 = tt * span, c0 = cv * V, row0 = n * L + t0; /* row0: x's row of t0 */
    const bool column = cv < CV;
    uint4 own[R]; /* rows t0 + ty + r * by */
#pragma unroll
    for (int r = 0; r < R; r++) {
      const uint32_t i = ty + r * by;
      own[r] = column && t0 + i < L ? dw_load16(xb + (size_t)((row0 + i) * C + c0) * BYTES) : make_uint4(0, 0, 0, 0);
    }
    uint4 before = make_uint4(0, 0, 0, 0); /* the first K - 1 rows of threads: row t0 - (K-1) + ty */
    if (K > 1 && ty < K - 1 && column) {
      const int64_t h = (int64_t)t0 - (K - 1) + ty;
      if (h >= 0)
        before = dw_load16(xb + (size_t)((row0 + ty - (K - 1)) * C + c0) * BYTES);
      else if (s.states)
        before = dw_load16((const unsigned char *)st + c1d_s_index_nlc(&s, n, c0, h) * BYTES);
    }
    float wk[V][K], bias[V];
    if (column) dw_nlc_weights<TX, K>(s, w, b, c0, wk, bias);
#pragma unroll
    for (int r = 0; r < R; r++) dw_tile[(ty + r * by + K - 1) * bx + tx] = own[r];
    if (K > 1 && ty < K - 1) dw_tile[ty * bx + tx] = before;
    __syncthreads();
#pragma unroll
    for (int r = 0; r < R; r++) {
      const uint32_t i = ty + r * by;
      if (!column || t0 + i >= L) continue;
      uint4 win[K]; /* win[k]: position t0 + i - (K-1) + k */
#pragma unroll
      for (int k = 0; k < K - 1; k++) win[k] = dw_tile[(i + k) * bx + tx];
      win[K - 1] = own[r];
      dw_nlc_outputs_raw<TX, K>(s, wk, bias, win, y, (int64_t)(row0 + i) * C + c0);
    }
    __syncthreads(); /* every read of this tile done before the next tile's rows land */
  }
}

// --- L = 1: a decode step, either layout -----------------------------------------------------------------

/* L = 1 (D = 1 or K = 1 with (N, C, L) states): x and y hold one row of C per batch in either layout. A
 * thread owns V adjacent channels over the flat (batch, channel vector) index: x and y as one 16-byte
 * vector each, the V*K weights contiguous; taps 0..K-2 read the initial states or zeros: channel-last
 * states are rows of C (V elements each), (N, C, L) ones runs of K-1 per channel (the V channels'
 * V*(K-1) contiguous). Every load is issued before the first FMA. VB = 8 (16-bit x, PLAIN only): 8-byte
 * vectors, twice the threads on small problems. */
template <int TX, int K, bool PLAIN, int VB = 16>
__global__ void __launch_bounds__(DW_THREADS)
    dw_fast_step_kernel(const c1d_shape shape, const void *__restrict__ x, const void *__restrict__ w,
                        const void *__restrict__ b, const void *__restrict__ st, void *__restrict__ y,
                        int64_t /* strip: unused */) {
  const c1d_shape s = dw_shape_of<TX, PLAIN>(shape);
  constexpr int V = dw_vec<TX, VB>::V;
  const uint32_t CV = (uint32_t)(s.C / V), total = (uint32_t)(s.N * CV); /* <= DW_FLAT_MAX */
  for (uint32_t f = blockIdx.x * blockDim.x + threadIdx.x; f < total; f += gridDim.x * blockDim.x) {
    uint32_t n, cv;
    dw_split(f, CV, &n, &cv);
    const int64_t c0 = (int64_t)cv * V, at = (int64_t)n * s.C + c0; /* x's and y's element */
    const typename dw_raw<VB>::t own = dw_load_raw<VB>((const unsigned char *)x + at * dw_vec<TX>::BYTES);
    float xs[K][V]; /* tap k's inputs of the V channels */
    if constexpr (K > 1) {
      if (!s.states) {
#pragma unroll
        for (int k = 0; k < K - 1; k++)
#pragma unroll
          for (int j = 0; j < V; j++) xs[k][j] = 0.0f;
      } else if (s.layout == C1D_LAYOUT_NLC) {
#pragma unroll
        for (int k = 0; k < K - 1; k++)
          dw_load_floats_aligned<V>(st, s.dt.s, c1d_s_index_nlc(&s, n, c0, (k - (K - 1)) * s.D), xs[k]);
      } else {
        float sv[V * (K - 1)]; /* channel c0 + j's states at sv[j*(K-1) .. j*(K-1) + K-2] */
        dw_load_floats_aligned<V *(K - 1)>(st, s.dt.s, c1d_s_index(&s, n, c0, -(K - 1)), sv);
#pragma unroll
        for (int k = 0; k < K - 1; k++)
#pragma unroll
          for (int j = 0; j < V; j++) xs[k][j] = sv[j * (K - 1) + k];
      }
    }
    float wk[V][K], bias[V];
    dw_nlc_weights<TX, K, V>(s, w, b, c0, wk, bias);
    dw_unpack<TX>(own, xs[K - 1]);
    dw_nlc_outputs<TX, K, V>(s, wk, bias, xs, y, n, c0, 0); /* y's element at: its row t = 0 */
  }
}

// --- the vector kernel for a path ---------------------------------------------------------------------

/* The last argument: positions per thread (the channel-last kernels' strip; the (N, C, L) kernel ignores it). */
typedef void (*dw_kernel_fn)(const c1d_shape, const void *, const void *, const void *, const void *, void *,
                             int64_t);

/* The vector kernel for x's type TX and K taps: (N, C, L) rows or flat, channel-last with D = 1 or
 * dilated, or the L = 1 step; `plain` (the launcher's test: every tensor of x's type, no activation)
 * picks the PLAIN copies of the ring and step kernels, DW_STEP_8 the step's 8-byte copy and DW_NLC_PAIRS
 * the pairs kernel (16-bit x, PLAIN only: NULL otherwise). */
enum dw_path {
  DW_NCL, DW_NCL_SHORT, DW_NLC, DW_NLC_ROLLING, DW_NLC_PAIRS, DW_NLC_REGISTERS, DW_NLC_DILATED, DW_NLC_FLAT,
  DW_NLC_TILE, DW_STEP, DW_STEP_8
};
/* The kernels that exist for 16-bit x alone, PLAIN: the step's 8-byte copy and the pairs kernel. */
template <int TX>
static dw_kernel_fn dw_pick_16_bit(dw_path path, int64_t K) {
  if constexpr (TX == C1D_DTYPE_F32) {
    return NULL;
  } else {
    switch (K) {
#define DW_CASE(k) \
  case k:          \
    return path == DW_STEP_8 ? dw_fast_step_kernel<TX, k, true, 8> : dw_fast_nlc_pairs_kernel<TX, k>;
      DW_CASE(1) DW_CASE(2) DW_CASE(3) DW_CASE(4) DW_CASE(5) DW_CASE(6) DW_CASE(7) DW_CASE(8)
#undef DW_CASE
    }
    return NULL;
  }
}
template <int TX>
static dw_kernel_fn dw_pick(dw_path path, int64_t K, bool plain) {
  if (path == DW_STEP_8 || path == DW_NLC_PAIRS) return plain ? dw_pick_16_bit<TX>(path, K) : NULL;
  switch (K) {
#define DW_CASE(k)                                                                                \
  case k:                                                                                         \
    return path == DW_NCL             ? dw_fast_ncl_kernel<TX, k>                                 \
           : path == DW_NCL_SHORT     ? dw_fast_ncl_short_kernel<TX, k>                           \
           : path == DW_NLC           ? (plain ? dw_fast_nlc_kernel<TX, k, true>                  \
                                               : dw_fast_nlc_kernel<TX, k, false>)                \
           : path == DW_NLC_ROLLING   ? (plain ? dw_fast_nlc_rolling_kernel<TX, k, true>          \
                                               : dw_fast_nlc_rolling_kernel<TX, k, false>)        \
           : path == DW_NLC_REGISTERS ? dw_fast_nlc_registers_kernel<TX, k>                       \
           : path == DW_NLC_FLAT      ? (plain ? dw_fast_nlc_flat_kernel<TX, k, true>             \
                                               : dw_fast_nlc_flat_kernel<TX, k, false>)           \
           : path == DW_NLC_TILE      ? (plain ? dw_fast_nlc_tile_kernel<TX, k, true>             \
                                               : dw_fast_nlc_tile_kernel<TX, k, false>)           \
           : path == DW_STEP          ? (plain ? dw_fast_step_kernel<TX, k, true>                 \
                                               : dw_fast_step_kernel<TX, k, false>)               \
                                      : dw_fast_nlc_dilated_kernel<TX, k>;
    DW_CASE(1) DW_CASE(2) DW_CASE(3) DW_CASE(4) DW_CASE(5) DW_CASE(6) DW_CASE(7) DW_CASE(8)
#undef DW_CASE
  }
  return NULL;
}

/* dw_pick for each element type, each instantiated in its own file. */
dw_kernel_fn c1d_dw_fast_pick_f32(dw_path path, int64_t K, bool plain);
dw_kernel_fn c1d_dw_fast_pick_bf16(dw_path path, int64_t K, bool plain);
dw_kernel_fn c1d_dw_fast_pick_f16(dw_path path, int64_t K, bool plain);

#endif
