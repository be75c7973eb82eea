/* The power benchmark's own float32 accumulation orders (written here, not taken from cpu/, so that the
 * explainer is judged on outputs convlab did not compute). Every operation is an explicit single
 * rounding (numerics/arith.h, compiled without contraction). Terms are the products of o's group's
 * channels (all of them for the dense conv) and of the taps that read a value: x, or before t = 0 the
 * initial states (without states, padding taps are skipped). SiLU follows in float32, by convlab's
 * c1d_silu_f32 or, in some orders, libm's expf. Each order is one function of one output element, run
 * over all elements in parallel (the result does not depend on the thread count). */
#include <math.h>
#include <stdlib.h>

#include "bench/power_internal.h"
#include "numerics/activation.h"
#include "numerics/arith.h"
#include "numerics/clones.h"

typedef struct sum_ctx {
  const c1d_shape *s;
  const float *x, *w, *b, *st;
  const float *xs, *ws;    /* 3xTF32: the small parts (x and w then hold the big parts) */
  const int64_t *perm;     /* the random channel order (within a group) */
  int param;
} sum_ctx;

/* The input tap k reads for output t: x, the initial state before t = 0 (x's own: the 3xTF32 split
 * runs on the plain problem only), or the causal zero. */
static inline __attribute__((always_inline)) float xv(const sum_ctx *q, const float *x, int64_t n, int64_t c, int64_t t, int64_t k) {
  return c1d_x_at(q->s, x, x == q->x ? q->st : NULL, n, c, c1d_source_time(q->s, t, k));
}

float power_silu_libm(float v) { return v / (1.0f + expf(-v)); }

static inline __attribute__((always_inline)) float wv(const sum_ctx *q, const float *w, int64_t o, int64_t c, int64_t k) {
  return w[c1d_w_index(q->s, o, c, k)];
}

static inline __attribute__((always_inline)) float bias(const sum_ctx *q, int64_t o) { return q->b ? q->b[o] : 0.0f; }

/* The scratch an element needs: the pairwise tree holds every term, tap_partial one partial a tap. */
static int64_t scratch_size(int acc, const c1d_shape *s) {
  if (acc == POWER_ACC_PAIRWISE) return c1d_terms(s);
  if (acc == POWER_ACC_TAP_PARTIAL) return s->K;
  return 1;
}

/* The sum of one output element over channels c0 .. c0+C-1 (o's group). */
static inline __attribute__((always_inline)) float element_sum(int acc, const sum_ctx *q, int64_t n, int64_t o, int64_t t, float *scratch) {
  const c1d_shape *s = q->s;
  const int64_t k0 = c1d_first_tap(s, t), c0 = c1d_group_first_c(s, o), C = c0 + c1d_cin_per_group(s), K = s->K;
  float acc_v = 0.0f, part;
  switch (acc) {
    case POWER_ACC_NAIVE:
      acc_v = bias(q, o);
      for (int64_t c = c0; c < C; c++)
        for (int64_t k = k0; k < K; k++) acc_v = c1d_fma(xv(q, q->x, n, c, t, k), wv(q, q->w, o, c, k), acc_v);
      return acc_v;
    case POWER_ACC_NAIVE_NOFMA:
      acc_v = bias(q, o);
      for (int64_t c = c0; c < C; c++)
        for (int64_t k = k0; k < K; k++)
          acc_v = c1d_add(acc_v, c1d_mul(xv(q, q->x, n, c, t, k), wv(q, q->w, o, c, k)));
      return acc_v;
    case POWER_ACC_REVERSED:
      acc_v = bias(q, o);
      for (int64_t c = C - 1; c >= c0; c--)
        for (int64_t k = K - 1; k >= k0; k--)
          acc_v = c1d_fma(xv(q, q->x, n, c, t, k), wv(q, q->w, o, c, k), acc_v);
      return acc_v;
    case POWER_ACC_RANDOM:
      acc_v = bias(q, o);
      for (int64_t j = 0; j < C - c0; j++) {
        const int64_t c = c0 + q->perm[j];
        for (int64_t k = k0; k < K; k++) acc_v = c1d_fma(xv(q, q->x, n, c, t, k), wv(q, q->w, o, c, k), acc_v);
      }
      return acc_v;
    case POWER_ACC_PAIRWISE: {
      int64_t m = 0;
      for (int64_t c = c0; c < C; c++)
        for (int64_t k = k0; k < K; k++) scratch[m++] = c1d_mul(xv(q, q->x, n, c, t, k), wv(q, q->w, o, c, k));
      if (m == 0) return bias(q, o);
      while (m > 1) { /* adjacent pairs, the odd last term carried up */
        int64_t h = 0;
        for (int64_t i = 0; i + 1 < m; i += 2) scratch[h++] = c1d_add(scratch[i], scratch[i + 1]);
        if (m % 2) scratch[h++] = scratch[m - 1];
        m = h;
      }
      return c1d_add(scratch[0], bias(q, o));
    }
    case POWER_ACC_BLOCKED:
      for (int64_t cb = c0; cb < C; cb += q->param) {
        part = 0.0f;
        for (int64_t c = cb; c < C && c < cb + q->param; c++)
          for (int64_t k = k0; k < K; k++) part = c1d_fma(xv(q, q->x, n, c, t, k), wv(q, q->w, o, c, k), part);
        acc_v = c1d_add(acc_v, part);
      }
      return c1d_add(acc_v, bias(q, o));
    case POWER_ACC_TILED: {
      /* Reduction index r = k*Cg + j (tap-major, as an im2col GEMM with tap-major rows), tiles of param. */
      acc_v = bias(q, o);
      const int64_t Cg = C - c0, R = Cg * K;
      for (int64_t r0 = k0 * Cg; r0 < R; r0 += q->param) {
        part = 0.0f;
        for (int64_t r = r0; r < R && r < r0 + q->param; r++) {
          const int64_t k = r / Cg, c = c0 + r % Cg;
          part = c1d_fma(xv(q, q->x, n, c, t, k), wv(q, q->w, o, c, k), part);
        }
        acc_v = c1d_add(acc_v, part);
      }
      return acc_v;
    }
    case POWER_ACC_KAHAN: {
      float sum = bias(q, o), comp = 0.0f;
      for (int64_t c = c0; c < C; c++)
        for (int64_t k = k0; k < K; k++)
          c1d_kahan_step(&sum, &comp, c1d_mul(xv(q, q->x, n, c, t, k), wv(q, q->w, o, c, k)));
      return sum;
    }
    case POWER_ACC_TAP_PARTIAL:
      for (int64_t k = 0; k < K; k++) scratch[k] = 0.0f;
      for (int64_t c = c0; c < C; c++)
        for (int64_t k = k0; k < K; k++) scratch[k] = c1d_fma(xv(q, q->x, n, c, t, k), wv(q, q->w, o, c, k), scratch[k]);
      acc_v = bias(q, o);
      for (int64_t k = 0; k < K; k++) acc_v = c1d_add(acc_v, scratch[k]);
      return acc_v;
    case POWER_ACC_3XTF32:
      acc_v = bias(q, o);
      for (int64_t c = c0; c < C; c++)
        for (int64_t k = k0; k < K; k++) {
          const float xb = xv(q, q->x, n, c, t, k), xsm = xv(q, q->xs, n, c, t, k);
          const float wb = wv(q, q->w, o, c, k), wsm = wv(q, q->ws, o, c, k);
          acc_v = c1d_fma(xsm, wb, acc_v);
          acc_v = c1d_fma(xb, wsm, acc_v);
          acc_v = c1d_fma(xb, wb, acc_v);
        }
      return acc_v;
    case POWER_ACC_BF16_PRODUCTS: /* the bug of vLLM issue 52887: bf16 products before an fp32 sum */
      acc_v = bias(q, o);
      for (int64_t j = 0; j < (C - c0) * (K - k0); j++) {
        const int64_t r = q->param ? (C - c0) * (K - k0) - 1 - j : j;
        const int64_t c = c0 + r / (K - k0), k = k0 + r % (K - k0);
        acc_v = c1d_add(acc_v, c1d_round_bf16(c1d_mul(xv(q, q->x, n, c, t, k), wv(q, q->w, o, c, k))));
      }
      return acc_v;
    case POWER_ACC_FP16_SUMS: /* sums kept in fp16: every partial rounded to fp16 at once */
      acc_v = c1d_round_fp16(bias(q, o));
      for (int64_t j = 0; j < (C - c0) * (K - k0); j++) {
        const int64_t r = q->param ? (C - c0) * (K - k0) - 1 - j : j;
        const int64_t c = c0 + r / (K - k0), k = k0 + r % (K - k0);
        acc_v = c1d_round_fp16(c1d_fma(xv(q, q->x, n, c, t, k), wv(q, q->w, o, c, k), acc_v));
      }
      return acc_v;
    case POWER_ACC_BF16_SUMS: /* PyTorch's own bf16 path: a float32 product and add, each rounded to bf16 */
      acc_v = c1d_round_bf16(bias(q, o));
      for (int64_t c = c0; c < C; c++)
        for (int64_t k = k0; k < K; k++)
          acc_v = c1d_round_bf16(c1d_add(acc_v, c1d_round_bf16(c1d_mul(xv(q, q->x, n, c, t, k), wv(q, q->w, o, c, k)))));
      return acc_v;
  }
  return 0.0f;
}

/* The element, then SiLU in float32: libm's in the orders that keep rounded products (pairwise, blocked,
 * tap-partial, Kahan), convlab's everywhere else. */
static inline __attribute__((always_inline)) float element(int acc, const sum_ctx *q, int64_t n, int64_t o, int64_t t, float *scratch) {
  const float v = element_sum(acc, q, n, o, t, scratch);
  if (q->s->act != C1D_ACT_SILU) return v;
  const int libm = acc == POWER_ACC_PAIRWISE || acc == POWER_ACC_BLOCKED || acc == POWER_ACC_TAP_PARTIAL ||
                   acc == POWER_ACC_KAHAN;
  return libm ? power_silu_libm(v) : c1d_silu_f32(v);
}

/* Elements [i0, i1) of y, inlined into one clone per instruction set (numerics/clones.h): where the CPU
 * has FMA, fmaf is one instruction instead of a call into libm (the calls were half of test_power's
 * time); the same bits in every clone. */
C1D_CLONES static void sum_range(int acc, const sum_ctx *q, int64_t i0, int64_t i1, float *y, float *scratch) {
  const c1d_shape *s = q->s;
  for (int64_t i = i0; i < i1; i++) {
    const int64_t t = i % s->L, o = (i / s->L) % s->O, n = i / (s->L * s->O);
    y[i] = element(acc, q, n, o, t, scratch);
  }
}

c1d_status power_sum(int acc, int param, uint64_t seed, const c1d_shape *s, const float *x,
                     const float *w, const float *b, const float *st, float *y) {
  sum_ctx q = {s, x, w, b, st, NULL, NULL, NULL, param};
  int64_t *perm = NULL;
  float *split = NULL;
  if (acc == POWER_ACC_RANDOM) {
    const int64_t cg = c1d_cin_per_group(s);
    perm = malloc((size_t)cg * sizeof *perm);
    if (!perm) return c1d_fail(C1D_ERR_NO_MEMORY, "power: cannot allocate a channel order");
    for (int64_t c = 0; c < cg; c++) perm[c] = c;
    for (int64_t c = cg - 1; c > 0; c--) { /* Fisher-Yates, seeded */
      const int64_t j = (int64_t)(power_mix(seed * 7919u + (uint64_t)c) % (uint64_t)(c + 1));
      const int64_t tmp = perm[c];
      perm[c] = perm[j];
      perm[j] = tmp;
    }
    q.perm = perm;
  }
  if (acc == POWER_ACC_3XTF32) {
    const int64_t nx = c1d_x_count(s), nw = c1d_w_count(s);
    split = malloc((size_t)(2 * nx + 2 * nw) * sizeof *split);
    if (!split) return c1d_fail(C1D_ERR_NO_MEMORY, "power: cannot allocate the 3xTF32 split");
    float *xb = split, *xs = split + nx, *wb = split + 2 * nx, *ws = split + 2 * nx + nw;
    for (int64_t i = 0; i < nx; i++) c1d_split_tf32(x[i], &xb[i], &xs[i]);
    for (int64_t i = 0; i < nw; i++) c1d_split_tf32(w[i], &wb[i], &ws[i]);
    q.x = xb;
    q.xs = xs;
    q.w = wb;
    q.ws = ws;
  }
  const int64_t total = c1d_y_count(s), scratch_n = scratch_size(acc, s);
  int failed = 0;
#pragma omp parallel
  {
    float *scratch = malloc((size_t)scratch_n * sizeof *scratch);
    if (!scratch) {
#pragma omp atomic write
      failed = 1;
    }
    enum { CHUNK = 256 };
#pragma omp for schedule(static)
    for (int64_t i0 = 0; i0 < total; i0 += CHUNK)
      if (scratch) sum_range(acc, &q, i0, i0 + CHUNK < total ? i0 + CHUNK : total, y, scratch);
    free(scratch);
  }
  free(perm);
  free(split);
  return failed ? c1d_fail(C1D_ERR_NO_MEMORY, "power: cannot allocate per-thread scratch") : C1D_OK;
}
