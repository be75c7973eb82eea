/* gpu_dw_fast: the depthwise causal conv1d (G = C = O) at memory speed. Each output keeps grouped_naive's
 * order, so its bits are the CPU twin's:
 *   acc = b[c] (or +0); for k = 0..K-1: acc = fma(xs[n, c, t + k*D - (K-1)*D], w[c, 0, k], acc)
 * xs the input, or before t = 0 the initial state (or +0, the fma still performed); then SiLU in float32
 * (numerics/activation.h) and one rounding to y's type. Vectorisation changes only which thread holds
 * which value: a thread owns V adjacent outputs (V = 16 bytes of x: 8 bf16/fp16 or 4 fp32 elements).
 *
 * Paths (the launcher picks one; K <= 8 and 16-byte aligned x and y for the vector ones):
 *  - L = 1 (a decode step; D = 1, or no (N, C, L) states), C % V == 0: x and y are one row of C per batch
 *    in both layouts. A thread owns V channels: one 16-byte load and store, its V*K weights and the
 *    states in 16-byte loads where aligned, every load in flight before the first FMA. 16-bit x where
 *    every tensor has x's type and there is no activation, N * C < 2^17 (or C % 8 == 4): 8-byte vectors
 *    (4 channels a thread, twice the threads).
 *  - (N, C, L), D = 1 or K = 1, L % V == 0: one vector per thread over the flat (row, vector) index, the
 *    vectors before it loaded too (L1 hits) and, before t = 0, the initial states or zeros. With
 *    C1D_DW_NCL_KERNEL=rows, or beyond 2^31 vectors, rows of at least 128 vectors (64 for fp32 K >= 6)
 *    take the row kernel: a warp's lanes hold four consecutive vectors each (two for fp32 K >= 6), the
 *    K-1 inputs before a vector come from the neighbouring lane by warp shuffles.
 *    The K taps index registers at compile-time offsets (K is a template parameter); V outputs leave as
 *    one 16-byte store (or two, or one 8-byte one, by y's type).
 *  - channel-last (N, L, C), C % V == 0, D = 1, at most DW_NLC_FLAT_MAX row reads (vectors x positions
 *    x K: small problems, decode-like prefills) or C1D_DW_NLC_KERNEL=flat: the flat
 *    kernel, one thread per output row vector over the flat (batch, position, channel vector) index,
 *    its K tap rows, weights and biases loaded together.
 *  - channel-last (N, L, C), 16-bit x, PLAIN, C % V == 0, D = 1, K <= 4, L >= 32, beyond the flat kernel's
 *    reach (or C1D_DW_NLC_KERNEL=tile): the tile kernel, one thread per output row vector, four a thread,
 *    a block over a tile of 16 channel vectors x 64 positions whose rows before each position come from
 *    shared memory (each row read from memory about once, every load in flight before the first FMA).
 *  - channel-last (N, L, C), C % V == 0, any D, beyond: a thread owns V adjacent channels over a strip of
 *    consecutive positions (its weights loaded once per strip). D = 1 (the ring kernel): strips of 4 to
 *    32; the strip's rows stream through a ring of 16 rows per thread in shared memory (cp.async: the
 *    bytes in flight take no registers), each row sliding through a K-row window in registers (fp32
 *    K >= 3 without SiLU: each row into the K running sums it is a tap of, the rolling kernel; 16-bit x
 *    from K = 4, PLAIN: two threads share a ring column, each summing half the row, the pairs kernel,
 *    strips of 4 to 32 by the waves they fill). Initial
 *    states in a type other than x's, or C1D_DW_NLC_KERNEL=registers: the register kernel (strips of 4
 *    to 64, TT = 4 rows in flight in registers while the previous 4 compute). D > 1: the K tap rows of
 *    each position are loaded (16 bytes each; all but the newest are L1/L2 hits). Each position's V
 *    outputs: one store.
 *  - anything else (unaligned rows, L % V != 0 in (N, C, L), (N, C, L) with D > 1, C % V != 0): one
 *    thread per output over y's flat index, its K inputs and weights loaded before the first FMA; K > 8
 *    or more than 2^31 outputs: the same with a loop over the taps (gpu/grouped_element.h).
 * Element types: x's picks the vector width (a template parameter); w, b and s are read in their own
 * types; y is written in its type. Every element type combination (packed bf16/fp16 arrays). Where every
 * tensor has x's type and there is no activation, the step and ring kernels run as PLAIN copies, their
 * types constants (small problems wait on the fetch of a kernel's instructions; C1D_DW_PLAIN=0 turns
 * them off, for comparisons).
 * The vector kernels are templates in gpu/dw_fast_kernels.h, instantiated per element type in
 * dw_fast_f32.cu, dw_fast_bf16.cu and dw_fast_f16.cu (so that they compile side by side).
 * Limits: int64 index arithmetic; grids loop past the launch limits. */
#include <stdlib.h>
#include <string.h>

#include "gpu/dw_fast.h"
#include "gpu/dw_fast_kernels.h"

// --- one thread per output -------------------------------------------------------------------------------

/* One thread per output over y's flat index, so that consecutive threads write consecutive elements
 * in either layout, whatever the shape (L = 1 in (N, C, L) included). */
template <bool NLC>
__global__ void __launch_bounds__(DW_THREADS)
    dw_fast_element_kernel(const c1d_shape s, const void *__restrict__ x, const void *__restrict__ w,
                           const void *__restrict__ b, const void *__restrict__ st, void *__restrict__ y) {
  const int64_t fast_n = NLC ? s.C : s.L, slow_n = NLC ? s.L : s.C, total = s.N * s.C * s.L;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += (int64_t)gridDim.x * blockDim.x) {
    const int64_t fast = i % fast_n, rest = i / fast_n, slow = rest % slow_n, n = rest / slow_n;
    const int64_t c = NLC ? fast : slow, t = NLC ? slow : fast;
    c1d_store_typed(y, s.dt.y, c1d_y_at_layout(s, NLC, n, c, t), c1d_grouped_output(s, NLC, x, w, b, st, n, c, t));
  }
}

/* One thread per output for K <= 8 (the paths without vectors: L % V != 0 or L = 1 in (N, C, L), dilated
 * (N, C, L), unaligned tensors, C % V != 0 channel-last): the K tap inputs (x, or before t = 0 the states
 * or zeros) and the K weights all loaded before the first FMA; 32-bit index arithmetic (the launcher
 * sends it at most 2^31 outputs).
 * The flat index f is y's own (either layout). */
template <int K, bool NLC>
__global__ void __launch_bounds__(DW_THREADS)
    dw_fast_scalar_kernel(const c1d_shape s, const void *__restrict__ x, const void *__restrict__ w,
                          const void *__restrict__ b, const void *__restrict__ st, void *__restrict__ y) {
  const uint32_t total = (uint32_t)(s.N * s.C * s.L); /* <= DW_FLAT_MAX */
  const int64_t pad = c1d_pad(&s);
  for (uint32_t f = blockIdx.x * blockDim.x + threadIdx.x; f < total; f += gridDim.x * blockDim.x) {
    uint32_t n, c, t, rest;
    if (NLC) {
      dw_split(f, (uint32_t)s.C, &rest, &c);
      dw_split(rest, (uint32_t)s.L, &n, &t);
    } else {
      dw_split(f, (uint32_t)s.L, &rest, &t);
      dw_split(rest, (uint32_t)s.C, &n, &c);
    }
    uint32_t raw[K]; /* tap k's input bits: x's type for src >= 0, the states' before */
#pragma unroll
    for (int k = 0; k < K; k++) {
      const int64_t src = (int64_t)t + k * s.D - pad;
      const bool in_x = src >= 0, in_s = !in_x && s.states;
      const void *p = in_x ? x : st;
      const int64_t i = in_x ? c1d_x_at_layout(s, NLC, n, c, src) : c1d_s_at_layout(s, NLC, n, c, src);
      const c1d_dtype d = in_x ? s.dt.x : s.dt.s;
      raw[k] = !(in_x || in_s)         ? 0u
               : d == C1D_DTYPE_F32 ? __ldg((const unsigned *)p + i)
                                    : (uint32_t)__ldg((const unsigned short *)p + i);
    }
    float wk[K];
    dw_load_floats<K>(w, s.dt.w, dw_w_first(s, c), wk);
    float acc = s.bias ? c1d_load_typed(b, s.dt.b, c) : 0.0f;
#pragma unroll
    for (int k = 0; k < K; k++) {
      const int64_t src = (int64_t)t + k * s.D - pad;
      const c1d_dtype d = src >= 0 ? s.dt.x : s.dt.s; /* zero bits are +0 in every type */
      const float xv = d == C1D_DTYPE_F32    ? __uint_as_float(raw[k])
                       : d == C1D_DTYPE_BF16 ? c1d_bf16_bits_to_float((uint16_t)raw[k])
                                             : __half2float(__ushort_as_half((unsigned short)raw[k]));
      acc = c1d_fma(xv, wk[k], acc);
    }
    c1d_store_typed(y, s.dt.y, f, c1d_activate(s, acc));
  }
}

/* dw_fast_scalar_kernel for K = 1..8 in the layout. */
template <bool NLC>
static void (*dw_scalar_for(int64_t K))(const c1d_shape, const void *, const void *, const void *, const void *,
                                         void *) {
  switch (K) {
    case 1: return dw_fast_scalar_kernel<1, NLC>;
    case 2: return dw_fast_scalar_kernel<2, NLC>;
    case 3: return dw_fast_scalar_kernel<3, NLC>;
    case 4: return dw_fast_scalar_kernel<4, NLC>;
    case 5: return dw_fast_scalar_kernel<5, NLC>;
    case 6: return dw_fast_scalar_kernel<6, NLC>;
    case 7: return dw_fast_scalar_kernel<7, NLC>;
    case 8: return dw_fast_scalar_kernel<8, NLC>;
  }
  return NULL;
}

// --- launcher ---------------------------------------------------------------------------------------------

/* Whether the environment variable `name` is `value` (C1D_DW_NCL_KERNEL=rows asks for the (N, C, L) row
 * kernel where the flat one would run: benchmarks and tests compare them). */
static bool dw_env_is(const char *name, const char *value) {
  const char *e = getenv(name);
  return e && !strcmp(e, value);
}

/* Every tensor of x's type and no activation: the PLAIN kernels (gpu/dw_fast_kernels.h), unless
 * C1D_DW_PLAIN=0 asks for the kernel of every combination (benchmarks and tests compare them). */
static bool dw_plain(const c1d_shape *s) {
  const c1d_dtype t = s->dt.x;
  return s->dt.w == t && s->dt.y == t && (!s->bias || s->dt.b == t) && (!s->states || s->dt.s == t) &&
         s->act == C1D_ACT_NONE && !dw_env_is("C1D_DW_PLAIN", "0");
}

static dw_kernel_fn dw_pick_for(const c1d_shape *s, dw_path path) {
  const bool plain = dw_plain(s); /* and where it is false, no 8-byte step (DW_STEP_8) */
  return s->dt.x == C1D_DTYPE_F32    ? c1d_dw_fast_pick_f32(path, s->K, plain)
         : s->dt.x == C1D_DTYPE_BF16 ? c1d_dw_fast_pick_bf16(path, s->K, plain)
                                     : c1d_dw_fast_pick_f16(path, s->K, plain);
}

/* Threads along the vectorised index (a multiple of 32, at most `threads`), the rest of the block
 * along the other one. */
static dim3 dw_block(int64_t along, int threads = DW_THREADS) {
  int64_t bx = c1d_ceil_div(along, 32) * 32;
  if (bx > threads) bx = threads;
  return dim3((unsigned)bx, (unsigned)(threads / bx));
}

/* The channel-last strip: the longest (up to DW_NLC_STRIP positions) that still gives the device about
 * 2^17 threads, but at least DW_NLC_MIN_STRIP: a thread loads its V*K weights once per strip (16-byte
 * loads, all in flight: one round trip), so long strips save loads and short ones fill the device. */
static int64_t dw_nlc_strip(const c1d_shape *s, int V) {
  int64_t strip = DW_NLC_STRIP;
  while (strip > DW_NLC_MIN_STRIP && s->N * (s->C / V) * c1d_ceil_div(s->L, strip) < (INT64_C(1) << 17)) strip /= 2;
  return strip;
}

/* The channel-last strip that C1D_DW_NLC_STRIP asks for (the strip kernels' tests and sweeps), or 0. */
static int64_t dw_forced_strip(void) {
  const char *e = getenv("C1D_DW_NLC_STRIP");
  const long long strip = e ? atoll(e) : 0;
  return strip >= 1 ? strip : 0;
}

/* The ring kernel's strip: from 4 positions, doubled while the threads would exceed 2^16 (about one
 * wave of resident threads), up to 16 where its blocks are six per SM (fp32 K <= 5, 16-bit K <= 2) and 32
 * at four or fewer (the startup of a strip, one round trip, is covered by fewer other blocks). Chosen from
 * the H200 sweeps of strips 1..256 (notes/depthwise.md): strips of 1 and 2 won only on the smallest
 * problems, and a rule that started there (call H) lost more on the medium ones than it gained.
 * C1D_DW_NLC_STRIP fixes it, for those sweeps. */
static int64_t dw_nlc_ring_strip(const c1d_shape *s, int V) {
  const int64_t forced = dw_forced_strip();
  if (forced) return forced;
  const int64_t most = V * s->K <= 20 ? 16 : 32;
  int64_t strip = DW_NLC_MIN_STRIP;
  while (strip < most && s->N * (s->C / V) * c1d_ceil_div(s->L, strip) > (INT64_C(1) << 16)) strip *= 2;
  return strip;
}

/* The L = 1 step's vectors for 16-bit x where the PLAIN kernel runs: 8 bytes (4 channels a thread) where
 * 16-byte ones would give fewer than 2^14 threads (N * C < 2^17), 16 beyond. Measured on the H200
 * (notes/depthwise.md, fifth session): at N <= 8, K = 4 steps took 79-85 % of the copy in 16 bytes and
 * 84-95 % in 8 (K = 2 within noise); at N = 64, 16 bytes did better. (An 8-byte ring kernel for
 * channel-last L > 1 lost to the 16-byte one everywhere: twice the copies and loop steps per byte.)
 * C1D_DW_VECTOR_BYTES=8 or 16 fixes the choice (benchmarks and tests compare them); 8 bytes also serve
 * C % 8 == 4 and starts aligned to 8 bytes only. */
static int dw_step_vector_bytes(const c1d_shape *s, uintptr_t starts, bool plain) {
  if (s->dt.x == C1D_DTYPE_F32 || !plain || s->K > DW_MAX_K) return 16;
  const bool fit16 = (starts & 15u) == 0 && s->C % 8 == 0, fit8 = (starts & 7u) == 0 && s->C % 4 == 0;
  if (!fit8) return 16;
  if (!fit16 || dw_env_is("C1D_DW_VECTOR_BYTES", "8")) return 8;
  if (dw_env_is("C1D_DW_VECTOR_BYTES", "16")) return 16;
  return s->N * (s->C / 8) < (INT64_C(1) << 14) ? 8 : 16;
}

/* Whether the channel-last ring kernel runs with running sums rather than its K-row window (the
 * launcher's choice; C1D_DW_NLC_KERNEL=rolling or window fixes it): fp32 from K = 3, without SiLU.
 * Measured on the H200 (notes/depthwise.md, fifth session): fp32 K = 4 gained up to 6 points of the copy
 * on medium problems and lost none beyond noise; with SiLU (issue-bound) it fell from 60 to 48 % at the
 * anchor, at four blocks per SM instead of six; bf16 and fp16 K = 4, at three blocks instead of four,
 * lost up to 16 points on medium problems, and K = 2 gained only within noise. */
static bool dw_nlc_rolls(const c1d_shape *s) {
  return s->dt.x == C1D_DTYPE_F32 && s->K >= 3 && s->act == C1D_ACT_NONE;
}

/* The pairs kernel's strip, from the blocks it gives (64 ring columns each) against the device's slots
 * for them (NLC_PAIR_BLOCKS per SM): from 4 positions, doubled while the blocks exceed one wave, up to
 * 16 for K <= 4 and 32 beyond (a strip also reads the K - 1 rows before it and the weights); then 32
 * where 16 gives between one wave and one and a half (the second, mostly empty wave costs more than
 * longer strips). From the H200's sweeps under fixed strips (sixth session, bf16; K = 4 at seven blocks
 * per SM): 2^19 vectors x positions best at 16, 2^20 at 32 (86-87 % against 82), 2^21 and beyond at 16
 * (2-3 points over 32), 2^17 and below at 4; K = 6 and 8 at 32 where 16 lost 6 to 13 points.
 * C1D_DW_NLC_STRIP fixes it. */
static int64_t dw_nlc_pair_strip(const c1d_shape *s, int V) {
  const int64_t forced = dw_forced_strip();
  if (forced) return forced;
  int device = 0, sms = 132;
  if (cudaGetDevice(&device) != cudaSuccess || cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess)
    (void)cudaGetLastError(); /* keep the H200's count: only the strip depends on it */
  const int64_t slots = (int64_t)sms * dw_vec<C1D_DTYPE_BF16>::NLC_PAIR_BLOCKS((int)s->K); /* as for fp16 */
  const int64_t columns = DW_NLC_RING_THREADS / 2;
  auto blocks = [&](int64_t strip) { return c1d_ceil_div(s->N * (s->C / V) * c1d_ceil_div(s->L, strip), columns); };
  int64_t strip = 4;
  while (strip < (s->K <= 4 ? 16 : 32) && blocks(strip) > slots) strip *= 2;
  if (strip == 16 && blocks(16) > slots && 2 * blocks(16) < 3 * slots) strip = 32;
  return strip;
}

/* Whether the channel-last ring runs in thread pairs (dw_fast_nlc_pairs_kernel): the launcher's choice
 * for 16-bit x from K = 4 where every tensor has x's type and there is no activation (PLAIN), unless
 * C1D_DW_NLC_KERNEL names another ring kernel (=pairs asks for it from K = 1). Its grid covers the
 * problem, one strip a thread, so not beyond the grid's limits. Returns its strip (dw_nlc_pair_strip),
 * or 0 where the window or rolling kernel runs. Measured on the H200 (notes/depthwise.md,
 * sixth session), bf16 against the window kernel: K = 4 82-88 % of the copy on medium problems where
 * the window kernel had 80-85; K = 6 and 8 85 % where it had 55-75; K = 2 and 3 mixed, up to 7 points
 * lower. */
static int64_t dw_nlc_pairs(const c1d_shape *s, bool plain, int V) {
  if (s->dt.x == C1D_DTYPE_F32 || !plain) return 0;
  if (dw_env_is("C1D_DW_NLC_KERNEL", "window") || dw_env_is("C1D_DW_NLC_KERNEL", "rolling")) return 0;
  if (s->K < 4 && !dw_env_is("C1D_DW_NLC_KERNEL", "pairs")) return 0;
  const int64_t strip = dw_nlc_pair_strip(s, V);
  const dim3 block = dw_block(2 * (s->C / V), DW_NLC_RING_THREADS);
  const int64_t gx = c1d_ceil_div(2 * (s->C / V), block.x), gy = c1d_ceil_div(c1d_ceil_div(s->L, strip), block.y);
  return gx <= C1D_GRID_X_MAX && gy <= C1D_GRID_YZ_MAX && s->N <= C1D_GRID_YZ_MAX ? strip : 0;
}

/* What the flat and tile kernels (one thread per output row vector over a 32-bit index, states read as raw
 * vectors of x's type) need of a channel-last problem, and its row reads (vectors x positions x K), on
 * which the launcher's rule hands a problem from the flat kernel to the tile or strip kernels. */
static bool dw_nlc_rows_fit(const c1d_shape *s) {
  return !(s->states && s->dt.s != s->dt.x) && s->N * s->L * s->C <= DW_FLAT_MAX;
}
static int64_t dw_nlc_row_reads(const c1d_shape *s, int V) { return s->N * s->L * (s->C / V) * s->K; }

/* Whether a channel-last problem takes the flat kernel (dw_fast_nlc_flat_kernel: one thread per output
 * row vector, no ring): D = 1 problems of at most DW_NLC_FLAT_MAX row reads (vectors x positions x K),
 * where the ring kernels leave most of the device waiting on a few threads' strips, unless
 * C1D_DW_NLC_KERNEL names another kernel (=ring: the launcher's own choice among the strip kernels) or
 * C1D_DW_NLC_STRIP asks for a strip (the tests and sweeps of the strip kernels); C1D_DW_NLC_KERNEL=flat
 * asks for it at any size and D. States of another type than x's keep the register kernel. */
static bool dw_nlc_flat(const c1d_shape *s, int V, bool dilated) {
  if (!dw_nlc_rows_fit(s)) return false;
  const char *e = getenv("C1D_DW_NLC_KERNEL");
  if (e && *e) return !strcmp(e, "flat");
  return !dw_forced_strip() && !dilated && dw_nlc_row_reads(s, V) <= DW_NLC_FLAT_MAX;
}

/* Whether a channel-last problem takes the tile kernel (dw_fast_nlc_tile_kernel: one thread per output row
 * vector, four a thread, the rows before a tile's positions through shared memory): 16-bit x, PLAIN, K <= 4,
 * D = 1, L >= 32, beyond the flat kernel's DW_NLC_FLAT_MAX row reads, unless C1D_DW_NLC_KERNEL names another
 * kernel (=tile asks for it on any type, PLAIN or not, K and L) or C1D_DW_NLC_STRIP asks for a strip.
 * Measured on an H100 (notes/depthwise.md, 2026-12-05 evening), bf16 and fp16 over the decode grid
 * against the pairs and window ring kernels: 2-5 points of the copy more from 2^20 vectors x positions at
 * K = 4 and from 2^19 at K = 2, up to 100 %; at 2^19 and K = 4 5 points fewer as one launch and 3 more in a
 * stream. Not chosen where it was not measured or lost: fp32 (its rolling ring reached 97-104 %, the
 * tile kernel 93-99), SiLU and mixed types, K > 4 (two blocks an SM), and L < 32 (a tile of 64 positions
 * would idle most threads). States of another type than x's keep the register kernel. */
static bool dw_nlc_tile(const c1d_shape *s, int V, bool dilated, bool plain) {
  if (!dw_nlc_rows_fit(s) || dilated) return false;
  const char *e = getenv("C1D_DW_NLC_KERNEL");
  if (e && *e) return !strcmp(e, "tile");
  return !dw_forced_strip() && s->dt.x != C1D_DTYPE_F32 && plain && s->K <= 4 && s->L >= 32 &&
         dw_nlc_row_reads(s, V) > DW_NLC_FLAT_MAX;
}

/* The tile kernel's block: 16 channel vectors (256 bytes of a row) x 16 threads along the positions (a
 * tile of 64), or 32 x 8 where L < 64; fewer vectors where a row has fewer. On the H100, 16 and 32
 * vectors were within a point or two of each other; 8 lost 3 points at the anchor and 13-20 where the
 * tile's 128 positions exceeded L = 64. C1D_DW_NLC_TILE_VECTORS=1..32, a power of two, fixes it (the
 * sweeps, the tests). */
static dim3 dw_nlc_tile_block(const c1d_shape *s, int V) {
  const char *e = getenv("C1D_DW_NLC_TILE_VECTORS");
  int64_t bx = e && *e ? atoll(e) : s->L >= 64 ? 16 : 32;
  if (bx < 1 || bx > 32 || (bx & (bx - 1))) bx = 16;
  while (bx > 1 && bx / 2 >= s->C / V) bx /= 2;
  return dim3((unsigned)bx, (unsigned)(DW_THREADS / bx));
}

/* Asks for the largest shared-memory share of the L1 for a ring kernel, once per kernel: its blocks
 * are built to fit 2 to 6 per SM with 32 KB each (a hint the driver may override; a race only repeats it). */
static void dw_prefer_shared(dw_kernel_fn kernel) {
  enum { CAP = 5 * 3 * DW_MAX_K }; /* the ring kernels (window, rolling: PLAIN or not; pairs) x 3 types x K = 1..8 */
  static dw_kernel_fn done[CAP];
  static int n_done;
  for (int i = 0; i < n_done && i < CAP; i++)
    if (done[i] == kernel) return;
  if (cudaFuncSetAttribute((const void *)kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                           cudaSharedmemCarveoutMaxShared) != cudaSuccess)
    (void)cudaGetLastError(); /* only a hint: its failure is not the launch's */
  if (n_done < CAP) done[n_done++] = kernel;
}

/* The launcher's routes: which kernel a problem takes, named as c1d_dw_fast_last_kernel reports it. */
enum dw_route {
  DW_ROUTE_STEP, DW_ROUTE_STEP_8, DW_ROUTE_NCL_ROWS, DW_ROUTE_NCL_SHORT, DW_ROUTE_NLC_TILE, DW_ROUTE_NLC_FLAT,
  DW_ROUTE_NLC_DILATED, DW_ROUTE_NLC_REGISTERS, DW_ROUTE_NLC_PAIRS, DW_ROUTE_NLC_ROLLING, DW_ROUTE_NLC_WINDOW,
  DW_ROUTE_SCALAR, DW_ROUTE_ELEMENT
};
static const char *const dw_route_names[] = {
    "dw_fast_step_kernel",          "dw_fast_step_kernel<8 bytes>", "dw_fast_ncl_kernel",
    "dw_fast_ncl_short_kernel",     "dw_fast_nlc_tile_kernel",      "dw_fast_nlc_flat_kernel",
    "dw_fast_nlc_dilated_kernel",   "dw_fast_nlc_registers_kernel", "dw_fast_nlc_pairs_kernel",
    "dw_fast_nlc_rolling_kernel",   "dw_fast_nlc_kernel",           "dw_fast_scalar_kernel",
    "dw_fast_element_kernel"};

/* The route of problem s whose tensors start at addresses whose bits are or-ed in `starts` (the vector
 * paths need 16-byte aligned starts), under the environment's overrides; *strip: the channel-last strip
 * kernels' positions a thread (the others ignore it). Host code alone: no device is asked but by the pairs
 * kernel's strip (its SM count, with the H200's as the fallback). */
static dw_route dw_route_of(const c1d_shape *s, uintptr_t starts, int64_t *strip) {
  const bool nlc = s->layout == C1D_LAYOUT_NLC; /* the runner gives channel-last memory then (C1D_CAP_CHANNEL_LAST) */
  const int V = s->dt.x == C1D_DTYPE_F32 ? 4 : 8;
  const bool vectors = (starts & 15u) == 0 && s->K <= DW_MAX_K;
  const bool dilated = s->D > 1 && s->K > 1, plain = dw_plain(s);
  const int step_bytes = s->L == 1 && !dilated ? dw_step_vector_bytes(s, starts, plain) : 16;
  const bool ncl_vectors = vectors && !nlc && s->L % V == 0 && !dilated;
  const int64_t outputs = s->N * s->C * s->L;
  const bool flat_fits = outputs / V <= DW_FLAT_MAX, long_rows = s->L / V >= 32 * dw_ncl_vectors(V, (int)s->K);
  *strip = 0;
  if (step_bytes == 8 && s->N * (s->C / 4) <= DW_FLAT_MAX) return DW_ROUTE_STEP_8; /* else the 16-byte step */
  if (vectors && s->L == 1 && s->C % V == 0 && flat_fits && (nlc || !dilated || !s->states))
    return DW_ROUTE_STEP; /* one row per batch: the same memory in both layouts */
  if (ncl_vectors)
    return !flat_fits || (long_rows && dw_env_is("C1D_DW_NCL_KERNEL", "rows")) ? DW_ROUTE_NCL_ROWS : DW_ROUTE_NCL_SHORT;
  if (!vectors || !nlc || s->C % V != 0)
    return s->K <= DW_MAX_K && outputs <= DW_FLAT_MAX ? DW_ROUTE_SCALAR : DW_ROUTE_ELEMENT;
  if (dw_nlc_tile(s, V, dilated, plain)) return DW_ROUTE_NLC_TILE;
  if (dw_nlc_flat(s, V, dilated)) return DW_ROUTE_NLC_FLAT;
  /* the strip kernels; the ring ones take states as raw vectors of x's type */
  const bool registers = dw_env_is("C1D_DW_NLC_KERNEL", "registers") || (s->states && s->dt.s != s->dt.x);
  if (dilated || registers) {
    *strip = dw_nlc_strip(s, V);
    return dilated ? DW_ROUTE_NLC_DILATED : DW_ROUTE_NLC_REGISTERS;
  }
  const int64_t pair_strip = dw_nlc_pairs(s, plain, V); /* 0: not the pairs kernel */
  if (pair_strip > 0) {
    *strip = pair_strip;
    return DW_ROUTE_NLC_PAIRS;
  }
  *strip = dw_nlc_ring_strip(s, V);
  const bool rolling = dw_env_is("C1D_DW_NLC_KERNEL", "rolling") ||
                       (dw_nlc_rolls(s) && !dw_env_is("C1D_DW_NLC_KERNEL", "window"));
  return rolling ? DW_ROUTE_NLC_ROLLING : DW_ROUTE_NLC_WINDOW;
}

extern "C" const char *c1d_dw_fast_kernel_for(const c1d_shape *s) {
  int64_t strip;
  return dw_route_names[dw_route_of(s, 0, &strip)];
}

static const char *dw_last_kernel = "none"; /* c1d_dw_fast_last_kernel; set before each launch */
extern "C" const char *c1d_dw_fast_last_kernel(void) { return dw_last_kernel; }

static c1d_status launch_dw_fast(const c1d_shape *s, const float *x, const float *w, const float *b, float *y,
                                 c1d_exec *ex) {
  c1d_status st = C1D_OK;
  const int V = s->dt.x == C1D_DTYPE_F32 ? 4 : 8;
  const void *states = ex ? ex->states : NULL;
  /* the vector paths read x, w, b and the states 16 bytes at a time from 16-byte aligned starts */
  const uintptr_t starts = (uintptr_t)x | (uintptr_t)y | (uintptr_t)w | (s->bias ? (uintptr_t)b : 0) |
                           (s->states ? (uintptr_t)states : 0);
  cudaStream_t stream = c1d_stream_of(ex);
  int64_t strip = 0;
  const dw_route route = dw_route_of(s, starts, &strip);
  dw_kernel_fn kernel = NULL;
  dw_last_kernel = dw_route_names[route];
  switch (route) {
    case DW_ROUTE_STEP:
    case DW_ROUTE_STEP_8: {
      const int step_v = route == DW_ROUTE_STEP_8 ? 4 : V; /* channels a thread */
      kernel = dw_pick_for(s, route == DW_ROUTE_STEP_8 ? DW_STEP_8 : DW_STEP);
      const dim3 grid = c1d_grid(c1d_ceil_div(s->N * (s->C / step_v), DW_THREADS), 1, 1);
      kernel<<<grid, DW_THREADS, 0, stream>>>(*s, x, w, b, states, y, 0);
      break;
    }
    case DW_ROUTE_NCL_ROWS: {
      kernel = dw_pick_for(s, DW_NCL);
      const int U = dw_ncl_vectors(V, (int)s->K);
      const dim3 block = dw_block(c1d_ceil_div(s->L / V, U));
      const dim3 grid = c1d_grid(c1d_ceil_div(s->L / V, (int64_t)block.x * U), c1d_ceil_div(s->C, block.y), s->N);
      kernel<<<grid, block, 0, stream>>>(*s, x, w, b, states, y, 0);
      break;
    }
    case DW_ROUTE_NCL_SHORT: {
      kernel = dw_pick_for(s, DW_NCL_SHORT);
      const dim3 grid = c1d_grid(c1d_ceil_div(s->N * s->C * (s->L / V), DW_THREADS), 1, 1);
      kernel<<<grid, DW_THREADS, 0, stream>>>(*s, x, w, b, states, y, 0);
      break;
    }
    case DW_ROUTE_NLC_TILE: {
      kernel = dw_pick_for(s, DW_NLC_TILE);
      const dim3 block = dw_nlc_tile_block(s, V);
      const int64_t span = (int64_t)DW_NLC_TILE_ROWS * block.y; /* positions a tile */
      const int64_t tiles = s->N * c1d_ceil_div(s->L, span) * c1d_ceil_div(s->C / V, block.x);
      const size_t shared = (size_t)(span + s->K - 1) * block.x * 16;
      kernel<<<c1d_grid(tiles, 1, 1), block, shared, stream>>>(*s, x, w, b, states, y, 0);
      break;
    }
    case DW_ROUTE_NLC_FLAT: {
      kernel = dw_pick_for(s, DW_NLC_FLAT);
      const dim3 grid = c1d_grid(c1d_ceil_div(s->N * s->L * (s->C / V), DW_THREADS), 1, 1);
      kernel<<<grid, DW_THREADS, 0, stream>>>(*s, x, w, b, states, y, 0);
      break;
    }
    case DW_ROUTE_NLC_DILATED:
    case DW_ROUTE_NLC_REGISTERS:
    case DW_ROUTE_NLC_PAIRS:
    case DW_ROUTE_NLC_ROLLING:
    case DW_ROUTE_NLC_WINDOW: {
      const bool ring = route != DW_ROUTE_NLC_DILATED && route != DW_ROUTE_NLC_REGISTERS;
      const bool pairs = route == DW_ROUTE_NLC_PAIRS;
      kernel = dw_pick_for(s, route == DW_ROUTE_NLC_DILATED     ? DW_NLC_DILATED
                              : route == DW_ROUTE_NLC_REGISTERS ? DW_NLC_REGISTERS
                              : pairs                           ? DW_NLC_PAIRS
                              : route == DW_ROUTE_NLC_ROLLING   ? DW_NLC_ROLLING
                                                                : DW_NLC);
      const int64_t along = pairs ? 2 * (s->C / V) : s->C / V; /* threads along the channels */
      const dim3 block = dw_block(along, ring ? DW_NLC_RING_THREADS : DW_THREADS);
      if (ring) dw_prefer_shared(kernel);
      const dim3 grid =
          c1d_grid(c1d_ceil_div(along, block.x), c1d_ceil_div(c1d_ceil_div(s->L, strip), block.y), s->N);
      kernel<<<grid, block, 0, stream>>>(*s, x, w, b, states, y, strip);
      break;
    }
    case DW_ROUTE_SCALAR: {
      const dim3 grid = c1d_grid(c1d_ceil_div(s->N * s->C * s->L, DW_THREADS), 1, 1);
      const bool nlc = s->layout == C1D_LAYOUT_NLC;
      (nlc ? dw_scalar_for<true>(s->K) : dw_scalar_for<false>(s->K))<<<grid, DW_THREADS, 0, stream>>>(*s, x, w, b,
                                                                                                      states, y);
      break;
    }
    case DW_ROUTE_ELEMENT: {
      const dim3 grid = c1d_grid(c1d_ceil_div(s->N * s->C * s->L, DW_THREADS), 1, 1);
      if (s->layout == C1D_LAYOUT_NLC)
        dw_fast_element_kernel<true><<<grid, DW_THREADS, 0, stream>>>(*s, x, w, b, states, y);
      else
        dw_fast_element_kernel<false><<<grid, DW_THREADS, 0, stream>>>(*s, x, w, b, states, y);
      break;
    }
  }
  C1D_LAUNCHED(dw_last_kernel);
done:
  return st;
}

extern "C" const c1d_impl c1d_gpu_dw_fast = {
    .name = "gpu_dw_fast",
    .summary = "depthwise at memory speed: 16-byte vectors along t (N,C,L) or c (N,L,C, rows streamed through a "
               "cp.async ring in shared memory); grouped_naive's order per output, fp32 SiLU, one rounding to "
               "y's type",
    .backend = C1D_BACKEND_GPU,
    .precision = C1D_PREC_FP32,
    .twin = "grouped_naive",
    .twin_bit_exact = 1,
    .run = launch_dw_fast,
    .caps = C1D_CAP_GROUPS | C1D_CAP_DEPTHWISE_ONLY | C1D_CAP_STATES | C1D_CAP_SILU | C1D_CAP_DTYPES |
            C1D_CAP_CHANNEL_LAST,
};
