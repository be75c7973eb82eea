/* The float64 oracle: y and m = |b| + sum|w*x| in one pass over float32 inputs promoted to double.
 *
 * Accumulation order, fixed for every element whatever the thread count, blocking or instruction set:
 *   acc = b[o] (or +0), then for c = 0..C-1, for k = 0..K-1: acc = acc + w[o,c,k]*x[n,c,t+k*D-pad],
 * padding taps included (their product is zero, which leaves a nonzero sum unchanged). Each product of
 * two floats has at most 48 significant bits, so it is exact in double and fma(w, x, acc) rounds exactly
 * like acc + w*x: the AVX-512 microkernel (explicit fma) and the portable C one (mul then add under
 * -ffp-contract=off) give the same bits. m is summed in the same order from |b|, |w| and |x|.
 *
 * Blocking, as in a GEMM whose B is the im2col of x (never materialised):
 *  - w is packed once into micro-panels of MR output channels, [step = c*K + k][w x MR, |w| x MR],
 *    chunk-major, so that one reduction chunk's panels for every channel block are contiguous.
 *  - One OpenMP task is a tile (n, up to OB_MAX output channels, TB positions). Its reduction runs in
 *    chunks of about KC channel-taps; per chunk the tile's tap windows of x are converted into micro-panels
 *    of NR positions, [step][x x NR, |x| x NR] (zero where a tap reads before t=0 or past L). One x
 *    micro-panel stays in L1 while the chunk's w panels stream past it from L2.
 *  - Running sums live in a per-thread tile buffer between chunks (spilling a running sum to memory does
 *    not change its order). The AVX-512 microkernel holds MR x NR y sums and MR x NR m sums in 24 zmm
 *    registers; all its loads are aligned. Finished rows go out with streaming stores.
 * The whole computation is bound by fma throughput: it performs twice the fmas of a DGEMM of the same
 * shape (one for y, one for m).
 *
 * Limits: shapes that pass c1d_shape_validate. Scratch: about 16*O*C*K bytes of packed w, plus per
 * thread 16*(OB_MAX*TB + KC*TB) bytes (under 1 MiB). */
#include "reference/oracle.h"

#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define C1D_X86 1
#endif

enum {
  MR = 6,       /* output channels per microkernel */
  NR = 16,      /* positions per microkernel (two zmm of doubles) */
  OB_MAX = 264, /* output channels per tile at most (a multiple of MR): each x panel serves 44 w panels */
  TB = 128,     /* positions per tile (a multiple of NR): the tile's sums, OB_MAX*TB*16 bytes, stay in L2 */
  KC = 64       /* channel-taps per reduction chunk: a 16 KiB x micro-panel stays in L1 */
};
enum { ACC_BLOCK = 2 * MR * NR }; /* one micro-tile of sums: MR x NR y, then MR x NR m */

/* Everything the tile workers share. */
typedef struct oracle_plan {
  const c1d_shape *s;
  const float *x;
  const double *wp;    /* packed w, chunk-major; see pack_w */
  const double *bias;  /* per micro-row, an ACC_BLOCK whose rows hold b[o] and |b[o]| (0 without bias) */
  double *y, *mag;
  int64_t n_micro_rows, cchunk, ob, n_ob, n_tb, n_tiles;
} oracle_plan;

/* One microkernel call on a micro-tile of MR rows x NR positions: starting from the sums in the block
 * `in` (MR x NR y sums, then MR x NR m sums), adds `steps` channel-taps read from the x micro-panel bp
 * ([step][x x NR, |x| x NR]) and the w micro-panel wp ([step][w x MR, |w| x MR]), and stores the sums
 * to the block `out` (which may be `in`). */
typedef void (*microkernel_fn)(const double *bp, const double *wp, int64_t steps, const double *in,
                               double *out);

/* Copies n doubles from an L2-resident tile row to the output tensor. */
typedef void (*copy_fn)(double *dst, const double *src, int64_t n);

/* Converts tap windows of x into x micro-panels; see pack_x_generic. */
typedef void (*pack_fn)(const c1d_shape *s, const float *x, int64_t n, int64_t c0, int64_t cc,
                        int64_t t0, int64_t tcols, int64_t kc, double *bp);

// --- microkernels -------------------------------------------------------------------------------

static void microkernel_generic(const double *bp, const double *wp, int64_t steps, const double *in,
                                double *out) {
  double ya[MR][NR], ma[MR][NR];
  memcpy(ya, in, sizeof ya);
  memcpy(ma, in + MR * NR, sizeof ma);
  for (int64_t st = 0; st < steps; st++, bp += 2 * NR, wp += 2 * MR) {
    const double *xv = bp, *av = bp + NR;
    for (int i = 0; i < MR; i++) {
      const double wv = wp[i], aw = wp[MR + i];
      for (int j = 0; j < NR; j++) {
        ya[i][j] = ya[i][j] + wv * xv[j]; /* exact product, one rounding: equals fma */
        ma[i][j] = ma[i][j] + aw * av[j];
      }
    }
  }
  memcpy(out, ya, sizeof ya);
  memcpy(out + MR * NR, ma, sizeof ma);
}

static void copy_generic(double *dst, const double *src, int64_t n) {
  memcpy(dst, src, (size_t)n * sizeof(double));
}

#if C1D_X86
__attribute__((target("avx512f"))) static void microkernel_avx512(const double *bp, const double *wp,
                                                                  int64_t steps, const double *in,
                                                                  double *out) {
#define LOAD_ROW(i)                                                 \
  __m512d y##i##0 = _mm512_load_pd(in + (i) * NR);                  \
  __m512d y##i##1 = _mm512_load_pd(in + (i) * NR + 8);              \
  __m512d m##i##0 = _mm512_load_pd(in + MR * NR + (i) * NR);        \
  __m512d m##i##1 = _mm512_load_pd(in + MR * NR + (i) * NR + 8);
  LOAD_ROW(0) LOAD_ROW(1) LOAD_ROW(2) LOAD_ROW(3) LOAD_ROW(4) LOAD_ROW(5)
#undef LOAD_ROW
  for (int64_t st = 0; st < steps; st++, bp += 2 * NR, wp += 2 * MR) {
    const __m512d x0 = _mm512_load_pd(bp), x1 = _mm512_load_pd(bp + 8);
    const __m512d a0 = _mm512_load_pd(bp + NR), a1 = _mm512_load_pd(bp + NR + 8);
#define STEP(i)                                                   \
  {                                                               \
    const __m512d wv = _mm512_set1_pd(wp[i]);                     \
    y##i##0 = _mm512_fmadd_pd(wv, x0, y##i##0);                   \
    y##i##1 = _mm512_fmadd_pd(wv, x1, y##i##1);                   \
    const __m512d aw = _mm512_set1_pd(wp[MR + (i)]);              \
    m##i##0 = _mm512_fmadd_pd(aw, a0, m##i##0);                   \
    m##i##1 = _mm512_fmadd_pd(aw, a1, m##i##1);                   \
  }
    STEP(0) STEP(1) STEP(2) STEP(3) STEP(4) STEP(5)
#undef STEP
  }
#define STORE_ROW(i)                                           \
  _mm512_store_pd(out + (i) * NR, y##i##0);                    \
  _mm512_store_pd(out + (i) * NR + 8, y##i##1);                \
  _mm512_store_pd(out + MR * NR + (i) * NR, m##i##0);          \
  _mm512_store_pd(out + MR * NR + (i) * NR + 8, m##i##1);
  STORE_ROW(0) STORE_ROW(1) STORE_ROW(2) STORE_ROW(3) STORE_ROW(4) STORE_ROW(5)
#undef STORE_ROW
}

/* Whole 64-byte lines of the destination by streaming stores (the output is written once and not
 * read back here, so it need not pass through the caches); the partial lines at either end, which a
 * neighbouring tile may share, by ordinary stores. */
__attribute__((target("avx512f"))) static void copy_stream_avx512(double *dst, const double *src,
                                                                  int64_t n) {
  int64_t head = (int64_t)(((64 - ((uintptr_t)dst & 63)) & 63) / sizeof(double));
  if (((uintptr_t)dst & 7) != 0 || head > n) head = n; /* not double-aligned, or no whole line */
  int64_t i = 0;
  for (; i < head; i++) dst[i] = src[i];
  for (; i + 8 <= n; i += 8) _mm512_stream_pd(dst + i, _mm512_loadu_pd(src + i));
  for (; i < n; i++) dst[i] = src[i];
}
#endif

// --- operand packing ----------------------------------------------------------------------------

/* w into micro-panels, chunk-major so that one chunk's panels for every micro-row are contiguous:
 * the chunk of channels c0..c0+cc (kc = cc*K channel-taps) starts at c0*K*n_micro_rows*2*MR, and in it
 * micro-row om, step (c-c0)*K + k holds w[om*MR+i, c, k] at [i] and |w| at [MR+i] (0 past O). */
static void pack_w(const c1d_shape *s, const float *w, double *wp, int64_t n_micro_rows,
                   int64_t cchunk) {
  const int64_t C = s->C, K = s->K;
#pragma omp parallel for schedule(static)
  for (int64_t om = 0; om < n_micro_rows; om++)
    for (int64_t c0 = 0; c0 < C; c0 += cchunk) {
      const int64_t cc = C - c0 < cchunk ? C - c0 : cchunk, kc = cc * K;
      double *dst = wp + c0 * K * n_micro_rows * 2 * MR + om * kc * 2 * MR;
      for (int64_t c = c0; c < c0 + cc; c++)
        for (int64_t k = 0; k < K; k++, dst += 2 * MR)
          for (int i = 0; i < MR; i++) {
            const int64_t o = om * MR + i;
            const double v = o < s->O ? (double)w[c1d_w_index(s, o, c, k)] : 0.0;
            dst[i] = v;
            dst[MR + i] = fabs(v);
          }
    }
}

/* Positions t0..t0+tcols of channels c0..c0+cc of batch n into x micro-panels:
 * bp[tm][step = c*K + k][j] = x[n, c0+c, t0 + tm*NR + j + k*D - pad], bp[..][NR + j] = |that|, and 0
 * where the source time is before 0 (causal padding) or at/after L (columns past the tensor). */
static void pack_x_generic(const c1d_shape *s, const float *x, int64_t n, int64_t c0, int64_t cc,
                           int64_t t0, int64_t tcols, int64_t kc, double *bp) {
  const int64_t K = s->K, L = s->L, pad = c1d_pad(s);
  for (int64_t c = 0; c < cc; c++) {
    const float *row = x + c1d_x_index(s, n, c0 + c, 0);
    for (int64_t k = 0; k < K; k++) {
      const int64_t step = c * K + k, shift = t0 + k * s->D - pad;
      for (int64_t tm = 0; tm < tcols / NR; tm++) {
        double *dst = bp + (tm * kc + step) * 2 * NR;
        for (int j = 0; j < NR; j++) {
          const int64_t src = shift + tm * NR + j;
          const double v = (src >= 0 && src < L) ? (double)row[src] : 0.0;
          dst[j] = v;
          dst[NR + j] = fabs(v);
        }
      }
    }
  }
}

#if C1D_X86
__attribute__((target("avx512f"))) static void pack_x_avx512(const c1d_shape *s, const float *x,
                                                             int64_t n, int64_t c0, int64_t cc,
                                                             int64_t t0, int64_t tcols, int64_t kc,
                                                             double *bp) {
  const int64_t K = s->K, L = s->L, pad = c1d_pad(s);
  const __m512i abs_mask = _mm512_set1_epi64(INT64_MAX);
  for (int64_t c = 0; c < cc; c++) {
    const float *row = x + c1d_x_index(s, n, c0 + c, 0);
    for (int64_t k = 0; k < K; k++) {
      const int64_t step = c * K + k, shift = t0 + k * s->D - pad;
      for (int64_t tm = 0; tm < tcols / NR; tm++) {
        double *dst = bp + (tm * kc + step) * 2 * NR;
        const int64_t src = shift + tm * NR;
        __m512 v;
        if (src >= 0 && src + NR <= L) {
          v = _mm512_loadu_ps(row + src);
        } else { /* a window that crosses t=0 or L: lanes outside the row read as zero */
          const int64_t lo = src < 0 ? -src : 0, hi = L - src < NR ? L - src : NR;
          const uint32_t mask = hi > lo ? (((1u << (hi - lo)) - 1u) << lo) & 0xffffu : 0u;
          /* A masked-out lane is never accessed, so the unmasked lanes alone must lie in the row. */
          v = _mm512_maskz_loadu_ps((__mmask16)mask,
                                   (const void *)((uintptr_t)row + (uintptr_t)(src * 4)));
        }
        const __m512d lo8 = _mm512_cvtps_pd(_mm512_castps512_ps256(v));
        const __m512d hi8 =
            _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
        _mm512_store_pd(dst, lo8);
        _mm512_store_pd(dst + 8, hi8);
        _mm512_store_pd(dst + NR, _mm512_castsi512_pd(_mm512_and_epi64(_mm512_castpd_si512(lo8), abs_mask)));
        _mm512_store_pd(dst + NR + 8,
                        _mm512_castsi512_pd(_mm512_and_epi64(_mm512_castpd_si512(hi8), abs_mask)));
      }
    }
  }
}
#endif

/* The AVX-512 kernels where the CPU has them, unless C1D_ORACLE_NO_AVX512 is set to something other
 * than "0" (tests use it to check that both paths give the same bits). */
static int use_avx512(void) {
  const char *off = getenv("C1D_ORACLE_NO_AVX512");
  if (off && off[0] && strcmp(off, "0") != 0) return 0;
#if C1D_X86
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") ? 1 : 0;
#else
  return 0;
#endif
}

// --- one tile -----------------------------------------------------------------------------------

/* Computes the tile (n, o0..o0+ob, t0..t0+TB) into acc ([im][tm] micro-tiles, ACC_BLOCK doubles each),
 * the first chunk starting from the bias blocks, and copies the part inside the tensor to y and mag. */
static void run_tile(const oracle_plan *p, microkernel_fn kernel, pack_fn pack, copy_fn copy,
                     int64_t tile, double *acc, double *bp) {
  const c1d_shape *s = p->s;
  const int64_t ob_i = tile % p->n_ob, tb_i = (tile / p->n_ob) % p->n_tb, n = tile / (p->n_ob * p->n_tb);
  const int64_t o0 = ob_i * p->ob, t0 = tb_i * TB, C = s->C, K = s->K;
  const int64_t orows = s->O - o0 < p->ob ? s->O - o0 : p->ob;      /* real channels in the tile */
  const int64_t omicro = (orows + MR - 1) / MR;                       /* micro-rows, the last may pad */
  const int64_t tlen = s->L - t0 < TB ? s->L - t0 : TB;               /* real positions in the tile */
  const int64_t tmicro = (tlen + NR - 1) / NR;

  for (int64_t c0 = 0; c0 < C; c0 += p->cchunk) {
    const int64_t cc = C - c0 < p->cchunk ? C - c0 : p->cchunk, kc = cc * K;
    const double *wchunk = p->wp + c0 * K * p->n_micro_rows * 2 * MR;
    pack(s, p->x, n, c0, cc, t0, tmicro * NR, kc, bp);
    for (int64_t tm = 0; tm < tmicro; tm++) {
      const double *bpt = bp + tm * kc * 2 * NR;
      for (int64_t im = 0; im < omicro; im++) {
        const int64_t om = o0 / MR + im;
        double *blk = acc + (im * tmicro + tm) * ACC_BLOCK;
        kernel(bpt, wchunk + om * kc * 2 * MR, kc, c0 == 0 ? p->bias + om * ACC_BLOCK : blk, blk);
      }
    }
  }

  /* Gather each output row from its micro-tiles into a contiguous run, then copy it out. */
  double *row = bp; /* the x micro-panels are no longer needed */
  for (int64_t i = 0; i < orows; i++) {
    const int64_t im = i / MR, r = i % MR, at = c1d_y_index(s, n, o0 + i, t0);
    for (int pass = 0; pass < (p->mag ? 2 : 1); pass++) {
      for (int64_t tm = 0; tm < tmicro; tm++)
        memcpy(row + tm * NR, acc + (im * tmicro + tm) * ACC_BLOCK + pass * MR * NR + r * NR,
               NR * sizeof(double));
      copy((pass ? p->mag : p->y) + at, row, tlen);
    }
  }
}

// --- entry points -------------------------------------------------------------------------------

static void *alloc_doubles(int64_t count, size_t *bytes) {
  *bytes = ((size_t)count * sizeof(double) + 63) & ~(size_t)63; /* aligned_alloc wants a multiple */
  return aligned_alloc(64, *bytes ? *bytes : 64);
}

c1d_status c1d_oracle_f64(const c1d_shape *s, const float *x, const float *w, const float *b, double *y,
                          double *mag, c1d_progress_fn progress, void *user) {
  c1d_status st = c1d_shape_validate(s);
  if (st != C1D_OK) return st;
  if (s->bias && !b) return c1d_fail(C1D_ERR_INVALID_SHAPE, "oracle: bias flag is 1 but b is NULL");

  double *wp = NULL, *bias = NULL, *scratch = NULL;
  size_t bytes = 0;
  const int64_t n_micro_rows = (s->O + MR - 1) / MR;
  const int64_t cchunk = KC / s->K > 0 ? KC / s->K : 1;
  const int64_t kc_max = cchunk * s->K;
  const int64_t ob = n_micro_rows * MR < OB_MAX ? n_micro_rows * MR : OB_MAX;
  /* Per thread: the tile's sums and its x micro-panels for one chunk. */
  const int64_t acc_len = (ob / MR) * (TB / NR) * ACC_BLOCK, bp_len = (TB / NR) * kc_max * 2 * NR;
  const int64_t per_thread = acc_len + bp_len;
  const int nthreads = omp_get_max_threads();

  wp = alloc_doubles(n_micro_rows * MR * 2 * s->C * s->K, &bytes);
  if (!wp) {
    st = c1d_fail(C1D_ERR_NO_MEMORY, "oracle: cannot allocate %zu bytes for packed w and |w|", bytes);
    goto cleanup;
  }
  bias = alloc_doubles(n_micro_rows * ACC_BLOCK, &bytes);
  if (!bias) {
    st = c1d_fail(C1D_ERR_NO_MEMORY, "oracle: cannot allocate %zu bytes for bias blocks", bytes);
    goto cleanup;
  }
  scratch = alloc_doubles((int64_t)nthreads * per_thread, &bytes);
  if (!scratch) {
    st = c1d_fail(C1D_ERR_NO_MEMORY, "oracle: cannot allocate %zu bytes of per-thread tiles (%d threads)",
                  bytes, nthreads);
    goto cleanup;
  }

  const int avx512 = use_avx512();
  microkernel_fn kernel = microkernel_generic;
  pack_fn pack = pack_x_generic;
  copy_fn copy = copy_generic;
#if C1D_X86
  if (avx512) {
    kernel = microkernel_avx512;
    pack = pack_x_avx512;
    copy = copy_stream_avx512;
  }
#endif
  pack_w(s, w, wp, n_micro_rows, cchunk);
  /* The sum starts at the bias (the definition's order); rows past O start at zero. */
  for (int64_t o = 0; o < n_micro_rows * MR; o++) {
    const double bv = (s->bias && o < s->O) ? (double)b[o] : 0.0;
    double *blk = bias + (o / MR) * ACC_BLOCK + (o % MR) * NR;
    for (int j = 0; j < NR; j++) {
      blk[j] = bv;
      blk[MR * NR + j] = fabs(bv);
    }
  }

  oracle_plan plan = {.s = s, .x = x, .wp = wp, .bias = bias, .y = y, .mag = mag,
                      .n_micro_rows = n_micro_rows, .cchunk = cchunk, .ob = ob};
  plan.n_ob = (s->O + ob - 1) / ob;
  plan.n_tb = (s->L + TB - 1) / TB;
  plan.n_tiles = s->N * plan.n_ob * plan.n_tb;
  int64_t done = 0;

#pragma omp parallel num_threads(nthreads)
  {
    const int tid = omp_get_thread_num();
    double *acc = scratch + (int64_t)tid * per_thread, *bp = acc + acc_len;
    double reported = 0.0;
#pragma omp for schedule(dynamic, 1) nowait
    for (int64_t tile = 0; tile < plan.n_tiles; tile++) {
      run_tile(&plan, kernel, pack, copy, tile, acc, bp);
      int64_t now;
#pragma omp atomic capture
      now = ++done;
      /* Only the calling (master) thread reports, about every 2 %. */
      if (tid == 0 && progress) {
        const double f = (double)now / (double)plan.n_tiles;
        if (f - reported >= 0.02 && f < 1.0) {
          reported = f;
          progress(f, user);
        }
      }
    }
#if C1D_X86
    _mm_sfence(); /* streaming stores become visible before the region's closing barrier */
#endif
  }
  if (progress) progress(1.0, user);
  st = C1D_OK;

cleanup:
  free(wp);
  free(bias);
  free(scratch);
  return st;
}

void c1d_oracle_direct(const c1d_shape *s, const float *x, const float *w, const float *b, double *y) {
  for (int64_t n = 0; n < s->N; n++)
    for (int64_t o = 0; o < s->O; o++)
      for (int64_t t = 0; t < s->L; t++) {
        double acc = s->bias ? (double)b[o] : 0.0;
        for (int64_t c = 0; c < s->C; c++)
          for (int64_t k = 0; k < s->K; k++) {
            const int64_t src = c1d_source_time(s, t, k);
            if (src < 0) continue;
            acc += (double)w[c1d_w_index(s, o, c, k)] * (double)x[c1d_x_index(s, n, c, src)];
          }
        y[c1d_y_index(s, n, o, t)] = acc;
      }
}
