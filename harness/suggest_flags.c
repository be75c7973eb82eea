/* A forgotten flag: the other readings of one output's tensors, scored on a sample, the closest
 * explained on a prefix of the rows and times beside the declared reading; see suggest_flags.h. */
#include "harness/suggest_flags.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/explain.h"
#include "numerics/trace.h"
#include "reference/models.h"
#include "reference/oracle.h"

#define SCREEN_POINTS 1024
/* Outputs of the prefix explained: a quarter of the explainer's sample. A reading that is a bug tries every
 * model there: at the whole sample, the two readings of 65536 outputs of 1024 terms took 3 s beside a
 * 32 s explanation (2 cores); at a quarter, 1 s. */
#define PREFIX_OUTPUTS (C1D_EXPLAIN_SAMPLE / 4)
#define MAX_READINGS 24 /* the activation flipped, at most 15 dilations, the other layout */

/* One reading of the tensors: its shape, and x and y as it sees them (the other layout reads transposed
 * copies, owned). */
typedef struct reading {
  c1d_shape s;
  const float *x, *y;
  float *owned_x, *owned_y;
  char flag[48];
} reading;

/* (N, A, A) with the last two dimensions swapped, in a new array: (N, C, L) read as (N, L, C). */
static float *swapped(const float *v, int64_t N, int64_t A) {
  float *out = malloc((size_t)(N * A * A > 0 ? N * A * A : 1) * sizeof *out);
  if (!out) return NULL;
  for (int64_t n = 0; n < N; n++)
    for (int64_t a = 0; a < A; a++)
      for (int64_t b = 0; b < A; b++) out[(n * A + b) * A + a] = v[(n * A + a) * A + b];
  return out;
}

// --- the readings ---------------------------------------------------------------------------------

/* Every reading with one flag changed, into r; how many, or -1 without memory. */
static int other_readings(const c1d_shape *s, const float *x, const float *y, reading *r) {
  int n = 0;
  r[n] = (reading){.s = *s, .x = x, .y = y};
  r[n].s.act = s->act == C1D_ACT_NONE ? C1D_ACT_SILU : C1D_ACT_NONE;
  snprintf(r[n].flag, sizeof r[n].flag, "--activation %s", s->act == C1D_ACT_NONE ? "silu" : "none");
  n++;
  /* Initial states (N, C, (K-1)*D) pin D; with K = 1 it changes nothing. Beyond (K-1)*D' >= L every
   * output reads one tap: those dilations are one reading that explains nothing a smaller one would not. */
  static const int64_t dilations[] = {1, 2, 3, 4, 5, 6, 7, 8, 16, 32, 64, 128, 256, 512, 1024};
  for (size_t i = 0; i < sizeof dilations / sizeof *dilations && !s->states && s->K > 1; i++) {
    const int64_t d = dilations[i];
    if (d == s->D || (s->K - 1) * d >= s->L) continue;
    r[n] = (reading){.s = *s, .x = x, .y = y};
    r[n].s.D = d;
    if (c1d_shape_validate(&r[n].s) != C1D_OK) continue;
    snprintf(r[n].flag, sizeof r[n].flag, "--dilation %lld", (long long)d);
    n++;
  }
  c1d_error_clear(); /* a dilation refused above is no error of the caller's */
  /* x (N, A, B) and y (N, P, Q) fit both layouts only when A = B = P = Q: C = L = O. The states keep
   * their (N, C, (K-1)*D) in either layout. */
  if (s->C == s->L && s->O == s->L) {
    r[n] = (reading){.s = *s};
    r[n].s.layout = s->layout == C1D_LAYOUT_NCL ? C1D_LAYOUT_NLC : C1D_LAYOUT_NCL;
    r[n].x = r[n].owned_x = swapped(x, s->N, s->C);
    r[n].y = r[n].owned_y = swapped(y, s->N, s->O);
    snprintf(r[n].flag, sizeof r[n].flag, "--layout %s", r[n].s.layout == C1D_LAYOUT_NLC ? "nlc" : "ncl");
    if (!r[n].owned_x || !r[n].owned_y) {
      free(r[n].owned_x), free(r[n].owned_y);
      return -1;
    }
    n++;
  }
  return n;
}

/* How far y is from reading r's exact outputs at the sample idx: relative L2 over the finite outputs. */
static double distance(const reading *r, const float *w, const float *b, const float *st, const int64_t *idx,
                       int64_t count) {
  const c1d_model_spec exact = {.x = C1D_ROUND_NONE, .w = C1D_ROUND_NONE}; /* every rounding off */
  c1d_model_inputs mi;
  c1d_model_inputs_view(r->x, w, st, exact, &mi);
  const c1d_shape *s = &r->s;
  double diff = 0.0, size = 0.0;
#pragma omp parallel for schedule(dynamic, 16) reduction(+ : diff, size)
  for (int64_t j = 0; j < count; j++) {
    const int64_t i = idx[j], t = i % s->L, o = (i / s->L) % s->O, n = i / (s->L * s->O);
    double v;
    c1d_model_eval_at(s, &mi, b, n, o, t, &v, NULL, NULL);
    if (!isfinite(r->y[i])) continue;
    diff += ((double)r->y[i] - v) * ((double)r->y[i] - v);
    size += v * v;
  }
  c1d_model_inputs_free(&mi);
  return size > 0.0 ? sqrt(diff / size) : sqrt(diff);
}

/* The verdict on reading r's first rows x steps outputs, a problem of its own: causal, so the prefix in
 * time needs no input after it, and the states of the first rows are a prefix of st. */
static c1d_status verdict_on_prefix(const reading *r, const float *w, const float *b, const float *st, int64_t rows,
                                    int64_t steps, c1d_verdict *verdict) {
  c1d_shape p = r->s;
  p.N = rows;
  p.L = steps;
  const c1d_shape *s = &r->s;
  const int64_t nx = c1d_x_count(&p), ny = c1d_y_count(&p);
  float *x = malloc((size_t)nx * sizeof *x), *y = malloc((size_t)ny * sizeof *y);
  double *ref = malloc((size_t)ny * sizeof *ref), *mag = malloc((size_t)ny * sizeof *mag),
         *pre = malloc((size_t)ny * sizeof *pre);
  c1d_explanation *e = malloc(sizeof *e);
  c1d_explainer ex;
  memset(&ex, 0, sizeof ex);
  c1d_status rc = C1D_OK;
  if (!x || !y || !ref || !mag || !pre || !e) {
    rc = c1d_fail(C1D_ERR_NO_MEMORY, "cannot allocate the check of another flag (%lld outputs)", (long long)ny);
    goto done;
  }
  for (int64_t n = 0; n < rows; n++) {
    for (int64_t c = 0; c < s->C; c++)
      memcpy(x + (n * s->C + c) * steps, r->x + (n * s->C + c) * s->L, (size_t)steps * sizeof *x);
    for (int64_t o = 0; o < s->O; o++)
      memcpy(y + (n * s->O + o) * steps, r->y + (n * s->O + o) * s->L, (size_t)steps * sizeof *y);
  }
  const float *bias = p.bias ? b : NULL, *states = p.states ? st : NULL;
  if ((rc = c1d_oracle_f64_ex(&p, x, w, bias, states, ref, mag, pre, NULL, NULL)) != C1D_OK) goto done;
  const c1d_explainer_inputs in = {.x = x, .w = w, .b = bias, .st = states, .ref = ref, .mag = mag, .pre = pre};
  if ((rc = c1d_explainer_prepare_ex(&ex, &p, &in)) != C1D_OK) goto done;
  if ((rc = c1d_explainer_explain(&ex, y, 0, 0, e)) == C1D_OK) *verdict = e->verdict;
done:
  c1d_explainer_release(&ex);
  free(x), free(y), free(ref), free(mag), free(pre), free(e);
  return rc;
}

// --- the suggestion -------------------------------------------------------------------------------

static int is_rounding(c1d_verdict v) {
  return v == C1D_VERDICT_FP32_ROUNDING || v == C1D_VERDICT_TF32_INPUTS || v == C1D_VERDICT_REDUCED_PRECISION;
}

c1d_status c1d_suggest_flag(const c1d_shape *s, const float *x, const float *w, const float *b, const float *st,
                            const float *y, c1d_flag_suggestion *out) {
  memset(out, 0, sizeof *out);
  double clock = c1d_trace_now();
  reading r[MAX_READINGS];
  const int n = other_readings(s, x, y, r);
  const int64_t total = c1d_y_count(s), count = total < SCREEN_POINTS ? total : SCREEN_POINTS;
  int64_t *idx = malloc((size_t)(count > 0 ? count : 1) * sizeof *idx);
  c1d_status rc = C1D_OK;
  if (n < 0 || !idx) {
    rc = c1d_fail(C1D_ERR_NO_MEMORY, "cannot allocate the check of other flags");
    goto done;
  }
  c1d_explain_sample_indices(s, count, idx);
  const reading declared = {.s = *s, .x = x, .y = y};
  const double d0 = distance(&declared, w, b, st, idx, count);
  int best = -1;
  double best_d = INFINITY;
  for (int i = 0; i < n; i++) {
    const double d = distance(&r[i], w, b, st, idx, count);
    if (d < best_d) best = i, best_d = d;
  }
  c1d_trace_stage("suggest: other flags on the sample", &clock);
  /* "Far better" first, so a real bug (whose declared reading is already close) costs no explanation. */
  if (best < 0 || !(best_d <= 0.5 * d0)) goto done;
  const int64_t target = PREFIX_OUTPUTS, per_row = s->O * s->L;
  const int64_t rows = per_row >= target ? 1 : (target / per_row < s->N ? target / per_row : s->N);
  const int64_t span = (s->K - 1) * (s->D > r[best].s.D ? s->D : r[best].s.D);
  int64_t steps = s->L;
  if (per_row > target) { /* enough times to see every tap of either dilation well past the left edge */
    steps = target / s->O > 4 * span + 64 ? target / s->O : 4 * span + 64;
    if (steps > s->L) steps = s->L;
  }
  /* The other reading first: rounding is quick to establish, and where it is not, nothing more is needed. */
  c1d_verdict as_other = C1D_VERDICT_INCONCLUSIVE, as_declared = C1D_VERDICT_INCONCLUSIVE;
  if ((rc = verdict_on_prefix(&r[best], w, b, st, rows, steps, &as_other)) != C1D_OK || !is_rounding(as_other))
    goto done;
  if ((rc = verdict_on_prefix(&declared, w, b, st, rows, steps, &as_declared)) != C1D_OK) goto done;
  c1d_trace_stage("suggest: the closest and the declared reading explained on a prefix", &clock);
  if (as_declared != C1D_VERDICT_BUG_LOCALIZED && as_declared != C1D_VERDICT_BUG_GLOBAL) goto done;
  snprintf(out->flag, sizeof out->flag, "%s", r[best].flag);
  out->verdict = as_other;
  out->rows = rows;
  out->steps = steps;
done:
  for (int i = 0; i < n; i++) free(r[i].owned_x), free(r[i].owned_y);
  free(idx);
  return rc;
}
