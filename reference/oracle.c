/* The float64 oracle: y in double and m = |b| + sum|w*x| (double, with float32 partial sums) in one
 * pass over float32 inputs.
 *
 * y's accumulation order, fixed for every element whatever the thread count, blocking or instruction set:
 *   acc = b[o] (or +0), then for c = 0..C-1, for k = 0..K-1: acc = acc + w[o,c,k]*x[n,c,t+k*D-pad],
 * padding taps included (their product is zero, which leaves a nonzero sum unchanged). Each product of
 * two floats has at most 48 significant bits, so it is exact in double and fma(w, x, acc) rounds exactly
 * like acc + w*x: the AVX-512 and AVX2 microkernels (explicit fma) and the portable C one (mul then add
 * under -ffp-contract=off) give the same bits.
 *
 * m's order: the same taps, split into reduction chunks of kc = max(KC/K, 1)*K channel-taps (whole
 * channels; the split depends on K only). Per chunk a float32 partial p = 0, then p = fmaf(|w|, |x|, p)
 * in tap order (one rounding per tap: _mm512_fmadd_ps, _mm256_fmadd_ps or fmaf, the same bits); then
 * the double m = |b| (or +0), m = m + (double)p chunk after chunk.
 * Error: each partial is within gamma_kc(2^-24) = kc*2^-24/(1 - kc*2^-24) of its exact sum (all terms
 * are >= 0), and the double adds add about (C*K/kc + 1)*2^-53, so m is accurate to about 4e-6 relative
 * for KC = 64 (c1d_oracle_mag_rel_bound gives the bound; every error bound built on m scales with it).
 * This holds while every |w*x| is a normal float32: a product above FLT_MAX makes m infinite, and
 * products below 2^-126 lose relative accuracy (they are not exact in float32 as they are in double).
 *
 * Blocking, as in a GEMM whose B is the im2col of x (never materialised):
 *  - w is packed once into micro-panels of MR output channels, in double [step = c*K + k][w x MR] and in
 *    float [step][|w| x MR], chunk-major, so that one reduction chunk's panels for every channel block
 *    are contiguous.
 *  - One OpenMP task is a tile (n, up to OB_MAX output channels, TB positions). Its reduction runs in
 *    the chunks above; per chunk the tile's tap windows of x are converted into micro-panels of NR
 *    positions, double [step][x x NR] and float [step][|x| x NR] (zero where a tap reads before t=0 or
 *    past L). One x micro-panel stays in L1 while the chunk's w panels stream past it from L2.
 *  - Running double sums (y and m) live in a per-thread tile buffer between chunks (spilling a running
 *    sum to memory does not change its order). The microkernels (one file per instruction set,
 *    reference/oracle_kernels.h) hold a micro-tile's sums in registers; all their loads are aligned.
 *    Finished rows go out with streaming stores.
 *  - The kernel set is chosen at run time: AVX-512 where the CPU has it, else AVX2 + FMA, else the
 *    portable C one; C1D_ORACLE_KERNEL=avx512|avx2|portable forces one (c1d_oracle_kernel_select).
 * The computation is bound by fma throughput: per channel-tap and micro-tile 2*MR double fmas for y (as a
 * DGEMM of the same shape) and MR float fmas for m, 1.5 times a DGEMM's fma instructions.
 *
 * Limits: shapes that pass c1d_shape_validate. Scratch: about 12*O*C*K bytes of packed w, plus per
 * thread 16*OB_MAX*TB + 12*KC*TB bytes (under 1 MiB). */
#include "reference/oracle.h"

#include "numerics/activation.h"
#include "numerics/clones.h"

#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "reference/oracle_kernels.h"

#if C1D_ORACLE_X86
#include <immintrin.h>
#endif

enum {
  MR = C1D_ORACLE_MR, /* output channels per microkernel */
  NR = C1D_ORACLE_NR, /* positions per microkernel */
  OB_MAX = 264, /* output channels per tile at most (a multiple of MR): each x panel serves 33 w panels */
  TB = 128,     /* positions per tile (a multiple of NR): the tile's sums, OB_MAX*TB*16 bytes, stay in L2 */
  KC = C1D_ORACLE_KC, /* channel-taps per reduction chunk: a 12 KiB x micro-panel stays in L1 */
  ACC_BLOCK = C1D_ORACLE_ACC_BLOCK /* one micro-tile of double sums: MR x NR y, then MR x NR m */
};

/* Everything the tile workers share. */
typedef struct oracle_plan {
  const c1d_shape *s;
  const float *x;
  const double *wp;    /* packed w, chunk-major; see pack_w */
  const float *awp;    /* packed |w|, the same layout */
  const double *bias;  /* per micro-row, an ACC_BLOCK whose rows hold b[o] and |b[o]| (0 without bias) */
  double *y, *mag;
  int64_t n_micro_rows, cchunk, ob, n_ob, n_tb, n_tiles;
} oracle_plan;

// --- which kernels run ----------------------------------------------------------------------------

static const char *const kernel_names[] = {"portable", "avx2", "avx512"};

const char *c1d_oracle_kernel_name(c1d_oracle_kernel k) {
  return (unsigned)k < sizeof kernel_names / sizeof kernel_names[0] ? kernel_names[k] : "?";
}

int c1d_oracle_kernel_available(c1d_oracle_kernel k) {
  if (k == C1D_ORACLE_KERNEL_PORTABLE) return 1;
#if C1D_ORACLE_X86
  __builtin_cpu_init();
  if (k == C1D_ORACLE_KERNEL_AVX2) return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  if (k == C1D_ORACLE_KERNEL_AVX512) return __builtin_cpu_supports("avx512f");
#endif
  return 0;
}

c1d_status c1d_oracle_kernel_select(c1d_oracle_kernel *k) {
  const char *forced = getenv("C1D_ORACLE_KERNEL");
  if (forced && forced[0]) {
    for (int i = 0; i < C1D_ORACLE_KERNEL_COUNT; i++)
      if (strcmp(forced, kernel_names[i]) == 0) {
        if (!c1d_oracle_kernel_available((c1d_oracle_kernel)i))
          return c1d_fail(C1D_ERR_UNSUPPORTED, "C1D_ORACLE_KERNEL=%s, but this CPU cannot run it (%s)", forced,
                          i == C1D_ORACLE_KERNEL_AVX512 ? "no AVX-512F"
                          : C1D_ORACLE_X86              ? "no AVX2 with FMA"
                                                        : "not an x86 CPU");
        *k = (c1d_oracle_kernel)i;
        return C1D_OK;
      }
    return c1d_fail(C1D_ERR_USAGE, "C1D_ORACLE_KERNEL must be avx512, avx2 or portable (got '%.40s')", forced);
  }
  *k = C1D_ORACLE_KERNEL_PORTABLE;
  for (int i = C1D_ORACLE_KERNEL_COUNT - 1; i > 0; i--)
    if (c1d_oracle_kernel_available((c1d_oracle_kernel)i)) {
      *k = (c1d_oracle_kernel)i;
      break;
    }
  return C1D_OK;
}

static const c1d_oracle_kernels *kernels_of(c1d_oracle_kernel k) {
#if C1D_ORACLE_X86
  if (k == C1D_ORACLE_KERNEL_AVX512) return &c1d_oracle_avx512_kernels;
  if (k == C1D_ORACLE_KERNEL_AVX2) return &c1d_oracle_avx2_kernels;
#endif
  return &c1d_oracle_portable_kernels;
}

// --- operand packing ----------------------------------------------------------------------------

/* w into micro-panels, chunk-major so that one chunk's panels for every micro-row are contiguous:
 * the chunk of channels c0..c0+cc (kc = cc*K channel-taps) starts at c0*K*n_micro_rows*MR, and in it
 * micro-row om, step (c-c0)*K + k holds w[om*MR+i, c, k] at wp[i] and |w| at awp[i] (0 past O). */
static void pack_w(const c1d_shape *s, const float *w, double *wp, float *awp, int64_t n_micro_rows,
                   int64_t cchunk) {
  const int64_t C = s->C, K = s->K;
#pragma omp parallel for schedule(static)
  for (int64_t om = 0; om < n_micro_rows; om++)
    for (int64_t c0 = 0; c0 < C; c0 += cchunk) {
      const int64_t cc = C - c0 < cchunk ? C - c0 : cchunk, kc = cc * K;
      int64_t at = c0 * K * n_micro_rows * MR + om * kc * MR;
      for (int64_t c = c0; c < c0 + cc; c++)
        for (int64_t k = 0; k < K; k++, at += MR)
          for (int i = 0; i < MR; i++) {
            const int64_t o = om * MR + i;
            const float v = o < s->O ? w[c1d_w_index(s, o, c, k)] : 0.0f;
            wp[at + i] = (double)v;
            awp[at + i] = fabsf(v);
          }
    }
}

/* Positions t0..t0+tcols (a multiple of NR) of channels c0..c0+cc of batch n into x micro-panels:
 * xp[tm][step = c*K + k][j] = x[n, c0+c, t0 + tm*NR + j + k*D - pad] and ax[..][j] = |that| in float,
 * 0 where the source time is before 0 (causal padding) or at/after L. kc = cc*K. */
static void pack_x(const c1d_shape *s, const float *x, int64_t n, int64_t c0, int64_t cc, int64_t t0,
                   int64_t tcols, int64_t kc, double *xp, float *ax, c1d_oracle_window_fn window) {
  const int64_t K = s->K, L = s->L, pad = c1d_pad(s);
  for (int64_t c = 0; c < cc; c++) {
    const float *row = x + c1d_x_index(s, n, c0 + c, 0);
    for (int64_t k = 0; k < K; k++) {
      const int64_t step = c * K + k, shift = t0 + k * s->D - pad;
      for (int64_t tm = 0; tm < tcols / NR; tm++) {
        const int64_t at = (tm * kc + step) * NR, src = shift + tm * NR;
        if (src >= 0 && src + NR <= L)
          window(row + src, xp + at, ax + at);
        else /* a few windows a row */
          c1d_oracle_pack_edge(row, src, L, xp + at, ax + at);
      }
    }
  }
}

/* Copies n doubles of a tile row to the output: the whole 64-byte lines of dst by the kernel set's
 * streaming stores (where it has them), the partial lines at either end, which a neighbouring tile may
 * share, by ordinary stores. */
static void copy_out(double *dst, const double *src, int64_t n, c1d_oracle_stream_fn stream_line) {
  if (!stream_line) {
    memcpy(dst, src, (size_t)n * sizeof *dst);
    return;
  }
  int64_t head = (int64_t)(((64 - ((uintptr_t)dst & 63)) & 63) / sizeof(double));
  if (((uintptr_t)dst & 7) != 0 || head > n) head = n; /* not double-aligned, or no whole line */
  int64_t i = 0;
  for (; i < head; i++) dst[i] = src[i];
  for (; i + 8 <= n; i += 8) stream_line(dst + i, src + i);
  for (; i < n; i++) dst[i] = src[i];
}

// --- one tile -----------------------------------------------------------------------------------

/* Computes the tile (n, o0..o0+ob, t0..t0+TB) into acc ([im][tm] micro-tiles, ACC_BLOCK doubles each),
 * the first chunk starting from the bias blocks, and copies the part inside the tensor to y and mag.
 * xp and ax hold one chunk's x micro-panels. */
static void run_tile(const oracle_plan *p, const c1d_oracle_kernels *kern,
                     int64_t tile, double *acc, double *xp, float *ax) {
  const c1d_shape *s = p->s;
  const int64_t ob_i = tile % p->n_ob, tb_i = (tile / p->n_ob) % p->n_tb, n = tile / (p->n_ob * p->n_tb);
  const int64_t o0 = ob_i * p->ob, t0 = tb_i * TB, C = s->C, K = s->K;
  const int64_t orows = s->O - o0 < p->ob ? s->O - o0 : p->ob;      /* real channels in the tile */
  const int64_t omicro = (orows + MR - 1) / MR;                       /* micro-rows, the last may pad */
  const int64_t tlen = s->L - t0 < TB ? s->L - t0 : TB;               /* real positions in the tile */
  const int64_t tmicro = (tlen + NR - 1) / NR;

  for (int64_t c0 = 0; c0 < C; c0 += p->cchunk) {
    const int64_t cc = C - c0 < p->cchunk ? C - c0 : p->cchunk, kc = cc * K;
    const int64_t wchunk = c0 * K * p->n_micro_rows * MR;
    pack_x(s, p->x, n, c0, cc, t0, tmicro * NR, kc, xp, ax, kern->pack_window);
    for (int64_t tm = 0; tm < tmicro; tm++) {
      const int64_t xat = tm * kc * NR;
      for (int64_t im = 0; im < omicro; im++) {
        const int64_t om = o0 / MR + im, wat = wchunk + om * kc * MR;
        double *blk = acc + (im * tmicro + tm) * ACC_BLOCK;
        kern->microkernel(xp + xat, ax + xat, p->wp + wat, p->awp + wat, kc,
               c0 == 0 ? p->bias + om * ACC_BLOCK : blk, blk);
      }
    }
  }

  /* Gather each output row from its micro-tiles into a contiguous run, then copy it out. */
  double *row = xp; /* the x micro-panels are no longer needed */
  for (int64_t i = 0; i < orows; i++) {
    const int64_t im = i / MR, r = i % MR, at = c1d_y_index(s, n, o0 + i, t0);
    for (int pass = 0; pass < (p->mag ? 2 : 1); pass++) {
      for (int64_t tm = 0; tm < tmicro; tm++)
        memcpy(row + tm * NR, acc + (im * tmicro + tm) * ACC_BLOCK + pass * MR * NR + r * NR,
               NR * sizeof(double));
      copy_out((pass ? p->mag : p->y) + at, row, tlen, kern->stream_line);
    }
  }
}

double c1d_oracle_mag_rel_bound(const c1d_shape *s) {
  const int64_t cchunk = KC / s->K > 0 ? KC / s->K : 1;
  const double kc = (double)(cchunk * s->K), chunks = (double)((s->C + cchunk - 1) / cchunk);
  return kc * 0x1p-24 / (1.0 - kc * 0x1p-24) + (chunks + 1.0) * 0x1p-53 / (1.0 - (chunks + 1.0) * 0x1p-53);
}

// --- entry points -------------------------------------------------------------------------------

static void *alloc_doubles(int64_t count, size_t *bytes) {
  *bytes = ((size_t)count * sizeof(double) + 63) & ~(size_t)63; /* aligned_alloc wants a multiple */
  return aligned_alloc(64, *bytes ? *bytes : 64);
}

/* What the oracle allocates, in doubles: shared by c1d_oracle_f64 and c1d_oracle_f64_scratch_bytes. */
typedef struct oracle_sizes {
  int64_t n_micro_rows, cchunk, ob, acc_len, xp_len, per_thread, nw;
} oracle_sizes;

static oracle_sizes sizes_of(const c1d_shape *s) {
  oracle_sizes z;
  z.n_micro_rows = (s->O + MR - 1) / MR;
  z.cchunk = KC / s->K > 0 ? KC / s->K : 1;
  const int64_t kc_max = z.cchunk * s->K;
  z.ob = z.n_micro_rows * MR < OB_MAX ? z.n_micro_rows * MR : OB_MAX;
  /* Per thread, in doubles: the tile's sums and its x micro-panels for one chunk (x in double, then |x|
   * in float). Every part starts on a 64-byte boundary (acc_len and xp_len are multiples of 8). */
  z.acc_len = (z.ob / MR) * (TB / NR) * ACC_BLOCK;
  z.xp_len = TB * kc_max;
  z.per_thread = z.acc_len + z.xp_len + z.xp_len / 2;
  z.nw = z.n_micro_rows * MR * s->C * s->K; /* packed w entries */
  return z;
}

double c1d_oracle_f64_scratch_bytes(const c1d_shape *s) {
  const oracle_sizes z = sizes_of(s);
  return 8.0 * ((double)(z.nw + (z.nw + 1) / 2) + (double)(z.n_micro_rows * ACC_BLOCK) +
                (double)omp_get_max_threads() * (double)z.per_thread);
}

/* The fast dense oracle (the blocking above), for the plain problem. */
static c1d_status dense_oracle(const c1d_shape *s, const float *x, const float *w, const float *b, double *y,
                               double *mag, c1d_progress_fn progress, void *user) {
  c1d_status st = c1d_shape_validate(s);
  if (st != C1D_OK) return st;
  if (s->bias && !b) return c1d_fail(C1D_ERR_INVALID_SHAPE, "oracle: bias flag is 1 but b is NULL");
  c1d_oracle_kernel which;
  if ((st = c1d_oracle_kernel_select(&which)) != C1D_OK) return st;
  const c1d_oracle_kernels *kern = kernels_of(which);

  double *wp = NULL, *bias = NULL, *scratch = NULL;
  size_t bytes = 0;
  const oracle_sizes z = sizes_of(s);
  const int64_t n_micro_rows = z.n_micro_rows, cchunk = z.cchunk, ob = z.ob;
  const int64_t acc_len = z.acc_len, xp_len = z.xp_len, per_thread = z.per_thread, nw = z.nw;
  const int nthreads = omp_get_max_threads();

  wp = alloc_doubles(nw + (nw + 1) / 2, &bytes); /* w in double, then |w| in float */
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

  float *awp = (float *)(wp + nw);
  pack_w(s, w, wp, awp, n_micro_rows, cchunk);
  /* The sum starts at the bias (the definition's order); rows past O start at zero. */
  for (int64_t o = 0; o < n_micro_rows * MR; o++) {
    const double bv = (s->bias && o < s->O) ? (double)b[o] : 0.0;
    double *blk = bias + (o / MR) * ACC_BLOCK + (o % MR) * NR;
    for (int j = 0; j < NR; j++) {
      blk[j] = bv;
      blk[MR * NR + j] = fabs(bv);
    }
  }

  oracle_plan plan = {.s = s, .x = x, .wp = wp, .awp = awp, .bias = bias, .y = y, .mag = mag,
                      .n_micro_rows = n_micro_rows, .cchunk = cchunk, .ob = ob};
  plan.n_ob = (s->O + ob - 1) / ob;
  plan.n_tb = (s->L + TB - 1) / TB;
  plan.n_tiles = s->N * plan.n_ob * plan.n_tb;
  int64_t done = 0;

#pragma omp parallel num_threads(nthreads)
  {
    const int tid = omp_get_thread_num();
    double *acc = scratch + (int64_t)tid * per_thread, *xp = acc + acc_len;
    float *ax = (float *)(xp + xp_len);
    double reported = 0.0;
#pragma omp for schedule(dynamic, 1) nowait
    for (int64_t tile = 0; tile < plan.n_tiles; tile++) {
      run_tile(&plan, kern, tile, acc, xp, ax);
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
#if C1D_ORACLE_X86
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

// --- every problem: groups, initial states, SiLU ---------------------------------------------------

/* y[t] += wv*x[t-shift] and m[t] += |wv*x[t-shift]| for t in [shift, L): one tap of one input channel
 * over a row, the padding taps (t < shift) skipped as the definition skips them. Each product is exact
 * in double, so every lane's sum is the definition's whatever the vector width. */
C1D_CLONES static void row_add_products(double *restrict y, double *restrict m, const float *restrict x_row,
                                        double wv, int64_t shift, int64_t L) {
  const float *xs = x_row - shift;
  if (m)
    for (int64_t t = shift; t < L; t++) {
      const double p = wv * (double)xs[t];
      y[t] = y[t] + p;
      m[t] = m[t] + fabs(p);
    }
  else
    for (int64_t t = shift; t < L; t++) y[t] = y[t] + wv * (double)xs[t];
}

/* Grouped convolution by its definition in double (few terms per output: the depthwise case), y and m:
 * per output acc = b, then c over o's group, k = 0..K-1, the padding taps skipped; row by row, so that
 * the lanes are positions. */
static void grouped_direct(const c1d_shape *s, const float *x, const float *w, const float *b, double *y,
                           double *mag) {
  const int64_t cg = c1d_cin_per_group(s), L = s->L;
#pragma omp parallel for schedule(dynamic, 1)
  for (int64_t no = 0; no < s->N * s->O; no++) {
    const int64_t n = no / s->O, o = no % s->O, c0 = c1d_group_first_c(s, o);
    double *yr = y + c1d_y_index(s, n, o, 0), *mr = mag ? mag + c1d_y_index(s, n, o, 0) : NULL;
    const double bv = s->bias ? (double)b[o] : 0.0;
    for (int64_t t = 0; t < L; t++) {
      yr[t] = bv;
      if (mr) mr[t] = fabs(bv);
    }
    for (int64_t c = c0; c < c0 + cg; c++)
      for (int64_t k = 0; k < s->K; k++) {
        const int64_t shift = -c1d_source_time(s, 0, k); /* t - source time: (K-1-k)*D */
        if (shift < L)
          row_add_products(yr, mr, x + c1d_x_index(s, n, c, 0), (double)w[c1d_w_index(s, o, c, k)], shift, L);
      }
  }
}

/* Grouped convolution with many terms per output: the dense oracle per group, on copies of its
 * channels (w, b and the outputs of a group are contiguous already). */
static c1d_status grouped_by_dense(const c1d_shape *s, const float *x, const float *w, const float *b,
                                   double *y, double *mag, c1d_progress_fn progress, void *user) {
  const int64_t G = c1d_groups(s), cg = c1d_cin_per_group(s), og = c1d_cout_per_group(s);
  c1d_shape g = {.N = s->N, .C = cg, .O = og, .L = s->L, .K = s->K, .D = s->D, .bias = s->bias};
  float *xg = malloc((size_t)(s->N * cg * s->L) * sizeof *xg);
  double *yg = malloc((size_t)(s->N * og * s->L) * sizeof *yg), *mg = mag ? malloc((size_t)(s->N * og * s->L) * sizeof *mg) : NULL;
  c1d_status st = C1D_OK;
  if (!xg || !yg || (mag && !mg)) {
    st = c1d_fail(C1D_ERR_NO_MEMORY, "oracle: cannot allocate one group's copies");
    goto done;
  }
  for (int64_t gi = 0; gi < G && st == C1D_OK; gi++) {
    for (int64_t n = 0; n < s->N; n++)
      memcpy(xg + n * cg * s->L, x + c1d_x_index(s, n, gi * cg, 0), (size_t)(cg * s->L) * sizeof *xg);
    if ((st = dense_oracle(&g, xg, w + gi * og * cg * s->K, s->bias ? b + gi * og : NULL, yg, mg, NULL, NULL)) != C1D_OK)
      break;
    for (int64_t n = 0; n < s->N; n++) {
      memcpy(y + c1d_y_index(s, n, gi * og, 0), yg + n * og * s->L, (size_t)(og * s->L) * sizeof *yg);
      if (mag) memcpy(mag + c1d_y_index(s, n, gi * og, 0), mg + n * og * s->L, (size_t)(og * s->L) * sizeof *mg);
    }
    if (progress) progress((double)(gi + 1) / (double)G, user);
  }
done:
  free(xg);
  free(yg);
  free(mg);
  return st;
}

c1d_status c1d_oracle_f64_ex(const c1d_shape *s, const float *x, const float *w, const float *b,
                             const float *st_in, double *y, double *mag, double *pre, c1d_progress_fn progress,
                             void *user) {
  c1d_status st = c1d_shape_validate(s);
  if (st != C1D_OK) return st;
  if (s->states && !st_in) return c1d_fail(C1D_ERR_INVALID_SHAPE, "oracle: the problem has states but s is NULL");
  /* The sum alone: dense, no states, no activation (element types do not matter: exact products). */
  c1d_shape p = *s;
  p.act = C1D_ACT_NONE;
  p.dt = (c1d_dtypes){0};
  p.layout = C1D_LAYOUT_NCL;
  const int64_t pad = c1d_pad(s), L = s->L;
  float *xe = NULL;
  double *ye = NULL, *me = NULL;
  const float *xs = x;
  double *yd = y, *md = mag;
  if (s->states) {
    /* The states before x: a causal conv over L + (K-1)*D positions whose last L are the outputs. */
    p.states = 0;
    p.L = L + pad;
    xe = malloc((size_t)(s->N * s->C * p.L) * sizeof *xe);
    ye = malloc((size_t)(s->N * s->O * p.L) * sizeof *ye);
    me = mag ? malloc((size_t)(s->N * s->O * p.L) * sizeof *me) : NULL;
    if (!xe || !ye || (mag && !me)) {
      st = c1d_fail(C1D_ERR_NO_MEMORY, "oracle: cannot allocate the inputs with their states");
      goto done;
    }
    for (int64_t n = 0; n < s->N; n++)
      for (int64_t c = 0; c < s->C; c++) {
        memcpy(xe + (n * s->C + c) * p.L, st_in + c1d_s_index(s, n, c, -pad), (size_t)pad * sizeof *xe);
        memcpy(xe + (n * s->C + c) * p.L + pad, x + c1d_x_index(s, n, c, 0), (size_t)L * sizeof *xe);
      }
    xs = xe, yd = ye, md = me;
  }
  if (c1d_groups(&p) == 1)
    st = dense_oracle(&p, xs, w, b, yd, md, progress, user);
  else if (c1d_terms(&p) <= 256)
    grouped_direct(&p, xs, w, b, yd, md);
  else
    st = grouped_by_dense(&p, xs, w, b, yd, md, progress, user);
  if (st != C1D_OK) goto done;
  if (s->states)
    for (int64_t r = 0; r < s->N * s->O; r++) {
      memcpy(y + r * L, ye + r * p.L + pad, (size_t)L * sizeof *y);
      if (mag) memcpy(mag + r * L, me + r * p.L + pad, (size_t)L * sizeof *mag);
    }
  const int64_t ny = c1d_y_count(s);
  if (pre) memcpy(pre, y, (size_t)ny * sizeof *pre);
  if (s->act == C1D_ACT_SILU) {
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < ny; i++) y[i] = c1d_silu_f64(y[i]);
  }
done:
  free(xe);
  free(ye);
  free(me);
  return st;
}

c1d_status c1d_oracle_f64(const c1d_shape *s, const float *x, const float *w, const float *b, double *y,
                          double *mag, c1d_progress_fn progress, void *user) {
  if (c1d_shape_is_plain(s) || (c1d_groups(s) == 1 && !s->states && s->act == C1D_ACT_NONE))
    return dense_oracle(s, x, w, b, y, mag, progress, user);
  return c1d_oracle_f64_ex(s, x, w, b, NULL, y, mag, NULL, progress, user);
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
