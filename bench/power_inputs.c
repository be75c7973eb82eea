/* The power benchmark's inputs: convlab's five distributions (harness/inputs.h: each tensor in its own
 * type, initial states like x), and two at the edges of the float32 range built from conv_init: every
 * x = 1e-40 (so every product is subnormal) with the bias scaled by 1e-40 too, and conv_init scaled by
 * a power of two (exact: relative errors unchanged) so that the largest possible magnitude m is at most
 * 2^125, within a factor 8 of float32's largest value (those two only on the plain problem).
 * Also a problem's data (power_case): the inputs, the oracle, and inputs rounded to narrower formats. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench/power_internal.h"
#include "harness/inputs.h"
#include "numerics/arith.h"
#include "reference/oracle.h"

uint64_t power_mix(uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

const char *c1d_power_dist_name(int dist) {
  static const char *const names[C1D_POWER_DIST_COUNT] = {
      "conv_init", "normal", "uniform", "integer", "ill_conditioned", "subnormal", "near_overflow"};
  return (unsigned)dist < C1D_POWER_DIST_COUNT ? names[dist] : "?";
}

static c1d_dist convlab_dist(c1d_power_dist d) {
  switch (d) {
    case C1D_POWER_NORMAL: return C1D_DIST_NORMAL;
    case C1D_POWER_UNIFORM: return C1D_DIST_UNIFORM;
    case C1D_POWER_INTEGER: return C1D_DIST_INTEGER;
    case C1D_POWER_ILL_CONDITIONED: return C1D_DIST_ILL_CONDITIONED;
    default: return C1D_DIST_CONV_INIT;
  }
}

void power_generate(const c1d_power_problem *p, float *x, float *w, float *b, float *st) {
  const c1d_shape *s = &p->shape;
  c1d_generate(s, convlab_dist(p->dist), p->seed, x, w, b);
  if (s->states) c1d_generate_states(s, convlab_dist(p->dist), p->seed, st);
  const int64_t nx = c1d_x_count(s);
  if (p->dist == C1D_POWER_SUBNORMAL) {
    for (int64_t i = 0; i < nx; i++) x[i] = 1e-40f;
    for (int64_t o = 0; o < c1d_b_count(s); o++) b[o] = (float)((double)b[o] * 1e-40);
  } else if (p->dist == C1D_POWER_NEAR_OVERFLOW) {
    /* m <= max_o (|b_o| + sum |w_o..|) * max |x|: scale x and b so that this bound is <= 2^125. */
    double max_x = 0.0, max_row = 0.0;
    for (int64_t i = 0; i < nx; i++) max_x = fmax(max_x, fabs((double)x[i]));
    for (int64_t o = 0; o < s->O; o++) {
      double row = s->bias ? fabs((double)b[o]) : 0.0;
      for (int64_t j = 0; j < c1d_terms(s); j++) row += fabs((double)w[o * c1d_terms(s) + j]);
      max_row = fmax(max_row, row);
    }
    const int e = (int)floor(125.0 - log2(max_row * fmax(max_x, 1.0)));
    for (int64_t i = 0; i < nx; i++) x[i] = ldexpf(x[i], e);
    for (int64_t o = 0; o < c1d_b_count(s); o++) b[o] = ldexpf(b[o], e);
  }
}

// --- a problem's data -------------------------------------------------------------------------------

c1d_status power_case_make(const c1d_power_problem *p, power_case *c) {
  memset(c, 0, sizeof *c);
  c->p = *p;
  c->s = p->shape;
  const c1d_shape *s = &c->s;
  const int64_t ny = c1d_y_count(s);
  c->x = malloc((size_t)c1d_x_count(s) * sizeof *c->x);
  c->w = malloc((size_t)c1d_w_count(s) * sizeof *c->w);
  c->b = s->bias ? malloc((size_t)s->O * sizeof *c->b) : NULL;
  c->st = s->states ? malloc((size_t)c1d_s_count(s) * sizeof *c->st) : NULL;
  c->ref = malloc((size_t)ny * sizeof *c->ref);
  c->mag = malloc((size_t)ny * sizeof *c->mag);
  c->pre = malloc((size_t)ny * sizeof *c->pre);
  if (!c->x || !c->w || (s->bias && !c->b) || (s->states && !c->st) || !c->ref || !c->mag || !c->pre) {
    power_case_free(c);
    return c1d_fail(C1D_ERR_NO_MEMORY, "power: cannot allocate problem %d", p->index);
  }
  power_generate(p, c->x, c->w, c->b, c->st);
  c1d_status st = c1d_oracle_f64_ex(s, c->x, c->w, c->b, c->st, c->ref, c->mag, c->pre, NULL, NULL);
  if (st != C1D_OK) {
    power_case_free(c);
    return st;
  }
  c->xr[0] = c->x;
  c->wr[0] = c->w;
  c->ref_r[0] = c->ref;
  c->mag_r[0] = c->mag;
  c->pre_r[0] = c->pre;
  for (int64_t i = 0; i < c1d_x_count(s); i++) c->max_abs_x = fmax(c->max_abs_x, fabs((double)c->x[i]));
  for (int64_t i = 0; i < c1d_s_count(s); i++) c->max_abs_x = fmax(c->max_abs_x, fabs((double)c->st[i]));
  for (int64_t i = 0; i < c1d_w_count(s); i++) c->max_abs_w = fmax(c->max_abs_w, fabs((double)c->w[i]));
  for (int64_t i = 0; i < ny; i++) c->max_abs_ref = fmax(c->max_abs_ref, fabs(c->ref[i]));
  for (int64_t i = 0; i < ny; i++) c->max_mag = fmax(c->max_mag, c->mag[i]);
  return C1D_OK;
}

static float round_to(int in, float v) {
  switch (in) {
    case POWER_IN_TF32_RNA: return c1d_round_tf32_rna(v);
    case POWER_IN_TF32_TRUNC: return c1d_round_tf32_trunc(v);
    case POWER_IN_BF16: return c1d_round_bf16(v);
    case POWER_IN_FP16: return c1d_round_fp16(v);
    default: return v;
  }
}

c1d_status power_case_rounded(power_case *c, int in) {
  if (c->xr[in]) return C1D_OK;
  const c1d_shape *s = &c->s;
  const int64_t nx = c1d_x_count(s), nw = c1d_w_count(s), ny = c1d_y_count(s);
  float *x = malloc((size_t)nx * sizeof *x), *w = malloc((size_t)nw * sizeof *w);
  double *ref = malloc((size_t)ny * sizeof *ref), *mag = malloc((size_t)ny * sizeof *mag);
  double *pre = malloc((size_t)ny * sizeof *pre);
  if (!x || !w || !ref || !mag || !pre) {
    free(x);
    free(w);
    free(ref);
    free(mag);
    free(pre);
    return c1d_fail(C1D_ERR_NO_MEMORY, "power: cannot allocate rounded inputs");
  }
  /* The weights alone (bf16 weights beside bf16 activations), or both; states are never rounded here:
   * the orders with rounded x run on the plain problem only. */
  for (int64_t i = 0; i < nx; i++) x[i] = in == POWER_IN_BF16_W ? c->x[i] : round_to(in, c->x[i]);
  for (int64_t i = 0; i < nw; i++) w[i] = in == POWER_IN_BF16_W ? c1d_round_bf16(c->w[i]) : round_to(in, c->w[i]);
  /* The bias is added in float32 by every reduced-precision path here: it is not rounded. */
  c1d_status st = c1d_oracle_f64_ex(s, x, w, c->b, c->st, ref, mag, pre, NULL, NULL);
  c->xr[in] = x;
  c->wr[in] = w;
  c->ref_r[in] = ref;
  c->mag_r[in] = mag;
  c->pre_r[in] = pre;
  return st;
}

void power_case_free(power_case *c) {
  for (int in = 1; in < POWER_IN_COUNT; in++) {
    free(c->xr[in]);
    free(c->wr[in]);
    free(c->ref_r[in]);
    free(c->mag_r[in]);
    free(c->pre_r[in]);
  }
  free(c->x);
  free(c->w);
  free(c->b);
  free(c->st);
  free(c->ref);
  free(c->mag);
  free(c->pre);
  memset(c, 0, sizeof *c);
}
