/* The explainer's rounding models; see models.h. The full-output passes run the float64 oracle on rounded
 * copies of the inputs (or, for the tensor-core bias and the squared products, plain row loops in double
 * across positions t); the one-element functions follow the definition's loops. */
#include "reference/models.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "numerics/activation.h"
#include "numerics/arith.h"
#include "numerics/clones.h"
#include "reference/dtype.h"
#include "reference/oracle.h"

static float round_tf32_rne(float f) {
  uint32_t u = c1d_float_bits(f);
  if ((u & 0x7f800000u) == 0x7f800000u) return f; /* Inf, NaN */
  u += 0x0fffu + ((u >> 13) & 1u);
  return c1d_bits_float(u & 0xffffe000u);
}

float c1d_round_as(c1d_rounding r, float v) {
  switch (r) {
    case C1D_ROUND_TF32_RNA: return c1d_round_tf32_rna(v);
    case C1D_ROUND_TF32_RNE: return round_tf32_rne(v);
    case C1D_ROUND_TF32_TRUNC: return c1d_round_tf32_trunc(v);
    case C1D_ROUND_BF16: return c1d_round_bf16(v);
    case C1D_ROUND_FP16: return c1d_round_fp16(v);
    default: return v;
  }
}

static void round_copy(c1d_rounding r, const float *in, float *out, int64_t count) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < count; i++) out[i] = c1d_round_as(r, in[i]);
}

static void split_copy(const float *in, float *big, float *small, int64_t count) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < count; i++) c1d_split_tf32(in[i], &big[i], &small[i]);
}

c1d_status c1d_model_inputs_make(const c1d_shape *s, const float *x, const float *w, const float *st,
                                 c1d_model_spec spec, c1d_model_inputs *out) {
  const int64_t nx = c1d_x_count(s), nw = c1d_w_count(s), ns = c1d_s_count(s);
  memset(out, 0, sizeof *out);
  out->spec = spec;
  const int two = spec.split3;
  out->x1 = malloc((size_t)nx * sizeof *out->x1);
  out->w1 = malloc((size_t)nw * sizeof *out->w1);
  if (ns) out->s1 = malloc((size_t)ns * sizeof *out->s1);
  if (two) {
    out->x2 = malloc((size_t)nx * sizeof *out->x2);
    out->w2 = malloc((size_t)nw * sizeof *out->w2);
    if (ns) out->s2 = malloc((size_t)ns * sizeof *out->s2);
  }
  if (!out->x1 || !out->w1 || (ns && !out->s1) || (two && (!out->x2 || !out->w2 || (ns && !out->s2)))) {
    c1d_model_inputs_free(out);
    return c1d_fail(C1D_ERR_NO_MEMORY, "rounding model: cannot allocate rounded copies of the inputs");
  }
  if (two) {
    split_copy(x, out->x1, out->x2, nx);
    split_copy(w, out->w1, out->w2, nw);
    if (ns) split_copy(st, out->s1, out->s2, ns);
  } else {
    round_copy(spec.x, x, out->x1, nx);
    round_copy(spec.w, w, out->w1, nw);
    if (ns) round_copy(spec.x, st, out->s1, ns);
  }
  return C1D_OK;
}

void c1d_model_inputs_free(c1d_model_inputs *mi) {
  if (!mi->on_read) free(mi->x1), free(mi->s1), free(mi->w1), free(mi->x2), free(mi->s2), free(mi->w2);
  memset(mi, 0, sizeof *mi);
}

void c1d_model_inputs_view(const float *x, const float *w, const float *st, c1d_model_spec spec,
                           c1d_model_inputs *out) {
  memset(out, 0, sizeof *out);
  out->spec = spec;
  out->on_read = 1;
  out->x1 = (float *)x, out->w1 = (float *)w, out->s1 = (float *)st; /* read only */
}

/* The model's product of input (n, c, src) and weight index iw, exactly, in float64. */
static inline double model_product(const c1d_shape *s, const c1d_model_inputs *mi, int64_t n, int64_t c,
                                   int64_t src, int64_t iw) {
  /* The model's factors: big parts (or the rounded values) x1, w1 and, split, small parts x2, w2. A view
   * rounds or splits as it reads, to the values c1d_model_inputs_make stores. */
  float x1, w1, x2 = 0.0f, w2 = 0.0f;
  int split = 0;
  if (mi->on_read) {
    const float xv = c1d_x_at(s, mi->x1, mi->s1, n, c, src), wv = mi->w1[iw];
    if ((split = mi->spec.split3) != 0) {
      c1d_split_tf32(xv, &x1, &x2);
      c1d_split_tf32(wv, &w1, &w2);
    } else {
      x1 = c1d_round_as(mi->spec.x, xv);
      w1 = c1d_round_as(mi->spec.w, wv);
    }
  } else {
    x1 = c1d_x_at(s, mi->x1, mi->s1, n, c, src), w1 = mi->w1[iw];
    if ((split = mi->x2 != NULL) != 0) x2 = c1d_x_at(s, mi->x2, mi->s2, n, c, src), w2 = mi->w2[iw];
  }
  const double p = (double)x1 * (double)w1;
  if (mi->spec.products != C1D_ROUND_NONE) return (double)c1d_round_as(mi->spec.products, (float)p);
  if (!split) return p;
  return p + (double)x1 * (double)w2 + (double)x2 * (double)w1;
}

static double act_of(const c1d_shape *s, double v) { return s->act == C1D_ACT_SILU ? c1d_silu_f64(v) : v; }

/* The value the activation sees: the sum itself, or (pre_act_to_y) the sum as stored in y's type, as a
 * framework does that runs the convolution and the activation as two operators on bf16/fp16 tensors. */
static double pre_act(const c1d_shape *s, const c1d_model_inputs *mi, double v) {
  if (!mi->spec.pre_act_to_y || s->act == C1D_ACT_NONE) return v;
  return (double)c1d_round_to_dtype(s->dt.y, (float)v);
}
static double act_slope(const c1d_shape *s, double v) { return s->act == C1D_ACT_SILU ? c1d_silu_deriv_f64(v) : 1.0; }

c1d_status c1d_model_delta_full(const c1d_shape *s, const c1d_model_inputs *mi, const float *b,
                                const double *ref, float *delta) {
  const int64_t ny = c1d_y_count(s);
  if (mi->spec.products != C1D_ROUND_NONE || mi->spec.sums != C1D_ROUND_NONE) {
    /* Rounded products (or sums) are no product of rounded inputs: element by element. */
#pragma omp parallel for schedule(dynamic, 64)
    for (int64_t i = 0; i < ny; i++) {
      const int64_t t = i % s->L, o = (i / s->L) % s->O, n = i / (s->L * s->O);
      double v;
      c1d_model_eval_at(s, mi, b, n, o, t, &v, NULL, NULL);
      delta[i] = (float)(v - ref[i]);
    }
    return C1D_OK;
  }
  c1d_shape sum = *s, no_bias = *s;
  sum.act = C1D_ACT_NONE; /* the exact sums first, the activation once on their total */
  no_bias.act = C1D_ACT_NONE;
  no_bias.bias = 0;
  double *p = malloc((size_t)ny * sizeof *p), *q = mi->x2 ? malloc((size_t)ny * sizeof *q) : NULL;
  c1d_status st = C1D_OK;
  if (!p || (mi->x2 && !q)) {
    st = c1d_fail(C1D_ERR_NO_MEMORY, "rounding model: cannot allocate its output");
    goto done;
  }
  /* The (big) products with the bias, then for 3xTF32 big*small and small*big, each summed in double. */
  if ((st = c1d_oracle_f64_ex(&sum, mi->x1, mi->w1, b, mi->s1, p, NULL, NULL, NULL, NULL)) != C1D_OK) goto done;
  if (mi->x2) {
    if ((st = c1d_oracle_f64_ex(&no_bias, mi->x1, mi->w2, NULL, mi->s1, q, NULL, NULL, NULL, NULL)) != C1D_OK)
      goto done;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < ny; i++) p[i] += q[i];
    if ((st = c1d_oracle_f64_ex(&no_bias, mi->x2, mi->w1, NULL, mi->s2, q, NULL, NULL, NULL, NULL)) != C1D_OK)
      goto done;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < ny; i++) p[i] += q[i];
  }
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < ny; i++) delta[i] = (float)(act_of(s, pre_act(s, mi, p[i])) - ref[i]);
done:
  free(p);
  free(q);
  return st;
}

// --- tensor-core truncation bias ------------------------------------------------------------------

/* -kappa's unit: half the float32 spacing at acc (2^-149 at the subnormals), toward zero; 0 at 0 (and
 * at NaN). Branch-free on the bits, so that the row loops below vectorise. */
static inline double half_ulp_toward_zero(double acc) {
  uint64_t bits;
  memcpy(&bits, &acc, sizeof bits);
  int64_t ue = (int64_t)((bits >> 52) & 0x7ff) - 23; /* biased exponent of the float32 spacing at |acc| */
  ue = ue < 1023 - 149 ? 1023 - 149 : ue;
  const uint64_t ub = ((uint64_t)ue << 52) | (bits & 0x8000000000000000ull); /* with acc's sign */
  double u;
  memcpy(&u, &ub, sizeof u);
  return acc > 0.0 || acc < 0.0 ? -0.5 * u : 0.0;
}

void c1d_model_eval_at(const c1d_shape *s, const c1d_model_inputs *mi, const float *b, int64_t n,
                       int64_t o, int64_t t, double *value, double *beta_pad, double *beta_live) {
  double acc = s->bias ? (double)b[o] : 0.0, pad = 0.0, live = 0.0;
  const c1d_rounding sums = mi->spec.sums;
  int live_in_step = 0;  /* the current padded step holds a product that reads a value */
  int64_t live_count = 0;
  const int64_t cg = c1d_cin_per_group(s), c0 = c1d_group_first_c(s, o);
  const int64_t k0 = c1d_first_tap(s, t), total = cg * s->K, live_total = cg * (s->K - k0);
  for (int64_t c = c0; c < c0 + cg; c++) {
    const int64_t wrow = c1d_w_index(s, o, c, 0);
    for (int64_t k = 0; k < s->K; k++) {
      if (k >= k0) {
        acc += model_product(s, mi, n, c, c1d_source_time(s, t, k), wrow + k);
        /* acc and the product are floats: (float) is their float32 sum, then the store to bf16 (PyTorch's
         * float add and bf16 store: two roundings, as it does them) */
        if (sums != C1D_ROUND_NONE) acc = (double)c1d_round_as(sums, (float)acc);
        live_in_step = 1;
        if (++live_count % C1D_TC_STEP == 0 || live_count == live_total) live += half_ulp_toward_zero(acc);
      }
      const int64_t j = (c - c0) * s->K + k;
      if ((j + 1) % C1D_TC_STEP == 0 || j + 1 == total) {
        if (live_in_step) pad += half_ulp_toward_zero(acc);
        live_in_step = 0;
      }
    }
  }
  const double slope = act_slope(s, acc);
  *value = act_of(s, pre_act(s, mi, acc));
  if (beta_pad) *beta_pad = pad * slope;
  if (beta_live) *beta_live = live * slope;
}

/* The row loops of c1d_tc_bias_full, lanes independent: each product is exact in double (and 3xTF32's
 * three are added in model_product's order), so every clone gives the same bits. */
C1D_CLONES static void row_add_products(double *restrict acc, const float *restrict x, double wv, int64_t count) {
  for (int64_t i = 0; i < count; i++) acc[i] = acc[i] + (double)x[i] * wv;
}

C1D_CLONES static void row_add_split(double *restrict acc, const float *restrict x1, const float *restrict x2,
                                     double w1, double w2, int64_t count) {
  for (int64_t i = 0; i < count; i++) {
    const double a = (double)x1[i];
    acc[i] = acc[i] + ((a * w1 + a * w2) + (double)x2[i] * w1);
  }
}

C1D_CLONES static void row_add_half_ulps(double *restrict beta, const double *restrict acc, int64_t count) {
  for (int64_t i = 0; i < count; i++) beta[i] = beta[i] + half_ulp_toward_zero(acc[i]);
}

/* One whole step of C1D_TC_STEP terms (8) over positions that read x on every term: each position's sum
 * stays in a register through the step's eight products (added in the terms' order), then its
 * truncation bias: one load and store of acc per step, not per term. */
C1D_CLONES static void row_step(double *restrict acc, double *restrict beta, const float *const *xs, const double *w,
                                int64_t count) {
  const float *restrict x0 = xs[0], *restrict x1 = xs[1], *restrict x2 = xs[2], *restrict x3 = xs[3];
  const float *restrict x4 = xs[4], *restrict x5 = xs[5], *restrict x6 = xs[6], *restrict x7 = xs[7];
  const double w0 = w[0], w1 = w[1], w2 = w[2], w3 = w[3], w4 = w[4], w5 = w[5], w6 = w[6], w7 = w[7];
  for (int64_t i = 0; i < count; i++) {
    double a = acc[i];
    a = a + (double)x0[i] * w0;
    a = a + (double)x1[i] * w1;
    a = a + (double)x2[i] * w2;
    a = a + (double)x3[i] * w3;
    a = a + (double)x4[i] * w4;
    a = a + (double)x5[i] * w5;
    a = a + (double)x6[i] * w6;
    a = a + (double)x7[i] * w7;
    acc[i] = a;
    beta[i] = beta[i] + half_ulp_toward_zero(a);
  }
}

/* Positions per block of a row: its running sums and biases stay in the first-level cache while every
 * term passes over them. */
#define TC_BLOCK 512

/* As c1d_model_eval_at, a block of a row's positions at a time. From position `full` on (every position
 * with states; else from the causal padding's end) every term reads a value: there each step holds live
 * terms and the live count is the step count, so beta_live is beta_pad, and a vector loop per term does
 * the work. Before it, the terms are counted one by one as the definition counts them. */
c1d_status c1d_tc_bias_full(const c1d_shape *s, const c1d_model_inputs *mi, const float *b,
                            float *beta_pad, float *beta_live) {
  int failed = 0;
  const int64_t cg = c1d_cin_per_group(s), total = cg * s->K, L = s->L, blocks = (L + TC_BLOCK - 1) / TC_BLOCK;
  const int64_t full = s->states ? 0 : (c1d_pad(s) < L ? c1d_pad(s) : L);
  const int vector_products = mi->spec.products == C1D_ROUND_NONE;
  /* From the padding's end, plain products (no split, no rounding) go a whole step at a time (row_step). */
  const int by_steps = vector_products && !mi->x2 && C1D_TC_STEP == 8;
#pragma omp parallel
  {
    /* index u = t - t0 */
    double *acc = malloc(TC_BLOCK * sizeof *acc), *bp = malloc(TC_BLOCK * sizeof *bp);
    double *bl = malloc(TC_BLOCK * sizeof *bl);
    int64_t *cnt = malloc(TC_BLOCK * sizeof *cnt);
    unsigned char *live = malloc(TC_BLOCK);
    const int ok = acc && bp && bl && cnt && live;
    if (!ok) {
#pragma omp atomic write
      failed = 1;
    }
#pragma omp for schedule(dynamic, 4)
    for (int64_t job = 0; job < s->N * s->O * blocks; job++) {
      if (!ok) continue;
      const int64_t no = job / blocks, t0 = job % blocks * TC_BLOCK, t_end = t0 + TC_BLOCK < L ? t0 + TC_BLOCK : L;
      const int64_t n = no / s->O, o = no % s->O, c0 = c1d_group_first_c(s, o);
      /* [t0, t1): term by term below; [t1, t_end): every term reads x, by steps */
      const int64_t pad = c1d_pad(s), t1 = by_steps ? (pad < t0 ? t0 : pad < t_end ? pad : t_end) : t_end;
      const int64_t edge_end = full < t1 ? full : t1; /* [t0, edge_end): counted one by one */
      const int64_t vec0 = full > t0 ? full : t0;    /* [vec0, t1): every term live */
      for (int64_t u = 0; u < t1 - t0; u++) {
        acc[u] = s->bias ? (double)b[o] : 0.0;
        bp[u] = bl[u] = 0.0;
        cnt[u] = 0;
        live[u] = 0;
      }
      for (int64_t c = c0; c < c0 + cg; c++)
        for (int64_t k = 0; k < s->K; k++) {
          const int64_t shift = -c1d_source_time(s, 0, k); /* tap k reads x[t - shift] */
          const int64_t iw = c1d_w_index(s, o, c, k);
          /* With states every position reads a value; without, the taps before t = 0 are padding. */
          for (int64_t t = s->states ? t0 : (shift > t0 ? shift : t0); t < edge_end; t++) {
            const int64_t u = t - t0;
            acc[u] += model_product(s, mi, n, c, t - shift, iw);
            live[u] = 1;
            if (++cnt[u] % C1D_TC_STEP == 0 || cnt[u] == cg * (s->K - c1d_first_tap(s, t)))
              bl[u] += half_ulp_toward_zero(acc[u]);
          }
          /* the rest: positions reading the states (t < shift) one by one, then x's row */
          const int64_t row_from = shift > vec0 ? (shift < t1 ? shift : t1) : vec0;
          for (int64_t t = vec0; t < row_from; t++) acc[t - t0] += model_product(s, mi, n, c, t - shift, iw);
          if (row_from < t1) {
            const int64_t xi = c1d_x_index(s, n, c, row_from - shift), u = row_from - t0, count = t1 - row_from;
            if (!vector_products)
              for (int64_t t = row_from; t < t1; t++) acc[t - t0] += model_product(s, mi, n, c, t - shift, iw);
            else if (mi->x2)
              row_add_split(acc + u, mi->x1 + xi, mi->x2 + xi, (double)mi->w1[iw], (double)mi->w2[iw], count);
            else
              row_add_products(acc + u, mi->x1 + xi, (double)mi->w1[iw], count);
          }
          const int64_t j = (c - c0) * s->K + k;
          if ((j + 1) % C1D_TC_STEP == 0 || j + 1 == total) {
            for (int64_t u = 0; u < edge_end - t0; u++) {
              if (live[u]) bp[u] += half_ulp_toward_zero(acc[u]);
              live[u] = 0;
            }
            if (vec0 < t1) row_add_half_ulps(bp + (vec0 - t0), acc + (vec0 - t0), t1 - vec0);
          }
        }
      if (t1 < t_end) {
        /* init as above (the loop there ran to t1 only) */
        for (int64_t u = t1 - t0; u < t_end - t0; u++) acc[u] = s->bias ? (double)b[o] : 0.0, bp[u] = 0.0;
        for (int64_t j0 = 0; j0 < total; j0 += C1D_TC_STEP) {
          const int64_t nj = total - j0 < C1D_TC_STEP ? total - j0 : C1D_TC_STEP;
          const float *xs[C1D_TC_STEP];
          double wv[C1D_TC_STEP];
          for (int64_t jj = 0; jj < nj; jj++) {
            const int64_t c = c0 + (j0 + jj) / s->K, k = (j0 + jj) % s->K;
            xs[jj] = mi->x1 + c1d_x_index(s, n, c, t1 + c1d_source_time(s, 0, k)); /* x at t1 - shift */
            wv[jj] = (double)mi->w1[c1d_w_index(s, o, c, k)];
          }
          if (nj == C1D_TC_STEP) {
            row_step(acc + (t1 - t0), bp + (t1 - t0), xs, wv, t_end - t1);
          } else { /* the last, partial step: term by term */
            for (int64_t jj = 0; jj < nj; jj++) row_add_products(acc + (t1 - t0), xs[jj], wv[jj], t_end - t1);
            row_add_half_ulps(bp + (t1 - t0), acc + (t1 - t0), t_end - t1);
          }
        }
      }
      float *op = beta_pad + c1d_y_index(s, n, o, 0), *ol = beta_live + c1d_y_index(s, n, o, 0);
      for (int64_t t = t0; t < t_end; t++) {
        const int64_t u = t - t0;
        const double slope = act_slope(s, acc[u]);
        op[t] = (float)(bp[u] * slope);
        ol[t] = (float)((t < edge_end ? bl[u] : bp[u]) * slope);
      }
    }
    free(acc), free(bp), free(bl), free(cnt), free(live);
  }
  return failed ? c1d_fail(C1D_ERR_NO_MEMORY, "rounding model: cannot allocate row buffers") : C1D_OK;
}

// --- squared products ------------------------------------------------------------------------------

double c1d_sq_products_at(const c1d_shape *s, const float *x, const float *w, const float *st, int64_t n,
                          int64_t o, int64_t t) {
  double sum = 0.0;
  const int64_t cg = c1d_cin_per_group(s), c0 = c1d_group_first_c(s, o);
  for (int64_t c = c0; c < c0 + cg; c++)
    for (int64_t k = c1d_first_tap(s, t); k < s->K; k++) {
      const double p = (double)c1d_x_at(s, x, st, n, c, c1d_source_time(s, t, k)) * (double)w[c1d_w_index(s, o, c, k)];
      sum += p * p;
    }
  return sum;
}

c1d_status c1d_sq_products_full(const c1d_shape *s, const float *x, const float *w, const float *st, float *sq) {
#pragma omp parallel for schedule(dynamic, 16)
  for (int64_t i = 0; i < c1d_y_count(s); i++) {
    const int64_t t = i % s->L, o = (i / s->L) % s->O, n = i / (s->L * s->O);
    sq[i] = (float)c1d_sq_products_at(s, x, w, st, n, o, t);
  }
  return C1D_OK;
}

// --- an arbitrary order ----------------------------------------------------------------------------

static uint64_t splitmix(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

void c1d_term_permutation(int64_t count, uint64_t seed, int32_t *perm) {
  for (int64_t i = 0; i < count; i++) perm[i] = (int32_t)i;
  uint64_t state = seed;
  for (int64_t i = count - 1; i > 0; i--) {
    const int64_t j = (int64_t)(splitmix(&state) % (uint64_t)(i + 1));
    const int32_t tmp = perm[i];
    perm[i] = perm[j];
    perm[j] = tmp;
  }
}

float c1d_permuted_fp32_at(const c1d_shape *s, const float *x, const float *w, const float *b, const float *st,
                           const int32_t *perm, int64_t n, int64_t o, int64_t t) {
  float acc = s->bias ? b[o] : 0.0f;
  const int64_t c0 = c1d_group_first_c(s, o);
  for (int64_t j = 0; j < c1d_terms(s); j++) {
    const int64_t c = c0 + perm[j] / s->K, k = perm[j] % s->K;
    acc = c1d_fma(c1d_x_at(s, x, st, n, c, c1d_source_time(s, t, k)), w[c1d_w_index(s, o, c, k)], acc);
  }
  return s->act == C1D_ACT_SILU ? c1d_silu_f32(acc) : acc;
}
