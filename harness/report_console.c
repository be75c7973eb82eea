/* The console table: one line per implementation, at most 100 columns. With several trials a line shows
 * the worst of each error metric over the trials and the median of the per-trial median times, so a
 * trial that goes wrong cannot hide behind an average. Names are never cut: one longer than its column
 * (file:NAME rows) gets a line of its own above its figures, and notes wrap instead of ending early. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/escape.h"
#include "harness/report.h"
#include "harness/version.h"
#include "reference/dtype.h"

#define WIDTH 100
#define NAME_WIDTH 18

/* The worst over trials of the figures a line shows. */
typedef struct line_figures {
  double time_ms, gflops, max_abs, rel_l2, ulp50, ulp99, ulpmax;
  double fail_pct, det_pct, prob_pct, user_pct;
  int64_t nonfinite;
} line_figures;

static double pct(int64_t part, int64_t count) { return count > 0 ? 100.0 * (double)part / (double)count : 0.0; }

static double worse(double a, double b) { return isnan(a) ? b : (b > a ? b : a); }

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static line_figures summarize(const c1d_trial_result *trials, int n) {
  line_figures f = {.time_ms = NAN, .gflops = NAN, .max_abs = NAN, .rel_l2 = NAN, .ulp50 = NAN,
                    .ulp99 = NAN, .ulpmax = NAN, .fail_pct = NAN, .det_pct = NAN, .prob_pct = NAN,
                    .user_pct = NAN};
  double times[n > 0 ? n : 1];
  int timed = 0;
  for (int i = 0; i < n; i++) {
    const c1d_trial_result *t = &trials[i];
    const c1d_metrics *m = &t->metrics;
    if (t->status != C1D_OK) continue;
    if (t->repeats > 0) times[timed++] = t->time_median_ms;
    f.max_abs = worse(f.max_abs, m->max_abs);
    f.rel_l2 = worse(f.rel_l2, m->rel_l2);
    f.ulp50 = worse(f.ulp50, m->ulp_p50);
    f.ulp99 = worse(f.ulp99, m->ulp_p99);
    f.ulpmax = worse(f.ulpmax, m->ulp_max);
    f.fail_pct = worse(f.fail_pct, pct(m->fail_default, m->count));
    f.user_pct = worse(f.user_pct, pct(m->fail_user, m->count));
    f.det_pct = worse(f.det_pct, pct(m->beyond_det, m->count));
    f.prob_pct = worse(f.prob_pct, pct(m->beyond_prob, m->count));
    if (m->nonfinite > f.nonfinite) f.nonfinite = m->nonfinite;
  }
  if (timed > 0) {
    qsort(times, (size_t)timed, sizeof times[0], cmp_double);
    f.time_ms = timed % 2 ? times[timed / 2] : 0.5 * (times[timed / 2 - 1] + times[timed / 2]);
  }
  return f;
}

// --- cell formatting: each cell fits its column whatever the value -----------------------------

static const char *fmt_time(char *b, double ms) {
  if (isnan(ms)) return "-";
  snprintf(b, 16, ms < 1000.0 ? "%.3f" : ms < 1e6 ? "%.1f" : "%.2e", ms);
  return b;
}

static const char *fmt_rate(char *b, double v) {
  if (isnan(v)) return "-";
  snprintf(b, 16, v < 1e5 ? "%.1f" : "%.1e", v);
  return b;
}

static const char *fmt_sci(char *b, double v) {
  if (isnan(v)) return "-";
  if (v == 0.0) return "0";
  snprintf(b, 16, "%.2e", v);
  return b;
}

/* ULP distances and counts: integers below 1e5, else 1e+09 style. */
static const char *fmt_count(char *b, double v) {
  if (isnan(v)) return "-";
  if (isinf(v)) return "inf";
  snprintf(b, 16, v < 1e5 ? "%.0f" : "%.0e", v);
  return b;
}

/* Percentages in at most 5 characters; a non-zero share never prints as 0. */
static const char *fmt_pct(char *b, double p) {
  if (isnan(p)) return "-";
  if (p == 0.0) return "0";
  if (p < 0.01) return "<0.01";
  snprintf(b, 16, p < 10.0 ? "%.2f" : p < 100.0 ? "%.1f" : "%.0f", p);
  return b;
}

// --- lines -------------------------------------------------------------------------------------

static void print_header(FILE *f) {
  fprintf(f, "%-*s %8s %7s %8s %8s %5s %5s %5s %5s %5s %6s %6s\n", NAME_WIDTH, "name", "time ms", "GFLOP/s",
          "max abs", "rel L2", "ulp50", "ulp99", "ulpmx", "fail%", ">det%", ">prob%", "nonfin");
}

/* The name in its column, or on a line of its own when longer; then the column is blank. */
static void print_name(FILE *f, const char *raw) {
  char name[400];
  c1d_escape_text(raw, name, sizeof name); /* a row may be named after the user's file */
  if ((int)strlen(name) > NAME_WIDTH)
    fprintf(f, "%s\n%-*s ", name, NAME_WIDTH, "");
  else
    fprintf(f, "%-*s ", NAME_WIDTH, name);
}

static void print_figures(FILE *f, const char *name, const line_figures *v) {
  char b[11][16];
  print_name(f, name);
  fprintf(f, "%8s %7s %8s %8s %5s %5s %5s %5s %5s %6s %6s\n", fmt_time(b[0], v->time_ms),
          fmt_rate(b[1], v->gflops), fmt_sci(b[2], v->max_abs), fmt_sci(b[3], v->rel_l2),
          fmt_count(b[4], v->ulp50), fmt_count(b[5], v->ulp99), fmt_count(b[6], v->ulpmax),
          fmt_pct(b[7], v->fail_pct), fmt_pct(b[8], v->det_pct), fmt_pct(b[9], v->prob_pct),
          fmt_count(b[10], (double)v->nonfinite));
}

/* text cut at spaces into lines: the first `room` wide (the caller has printed what precedes it), the
 * others under the name column. */
static void wrap_text(FILE *f, const char *text, int room) {
  const int indent = NAME_WIDTH + 1;
  while (*text) {
    int len = (int)strlen(text), cut = len;
    if (len > room) {
      cut = room;
      while (cut > 0 && text[cut] != ' ') cut--;
      if (cut == 0) cut = room;
    }
    fprintf(f, "%.*s\n", cut, text);
    text += cut;
    while (*text == ' ') text++;
    if (*text) fprintf(f, "%*s", indent, "");
    room = WIDTH - indent;
  }
}

/* Text wrapped to the table width under the name column, the first line after the name. */
static void print_wrapped(FILE *f, const char *lead, const char *raw) {
  char shown[4096];
  print_name(f, lead);
  wrap_text(f, c1d_escape_text(raw, shown, sizeof shown), WIDTH - NAME_WIDTH - 1); /* may quote a path */
}

/* A line of its own from the first column, wrapped under the name column. */
static void print_line_wrapped(FILE *f, const char *text) { wrap_text(f, text, WIDTH); }

/* The implementations left out because they cannot run here: one line for the group. */
static void print_unavailable(FILE *f, const c1d_run_results *r) {
  c1d_unavailable_group g;
  if (!c1d_report_unavailable(r, &g, 1)) return;
  char text[1024];
  c1d_unavailable_text(&g, text, sizeof text);
  print_line_wrapped(f, text);
}

/* "name  label: text", wrapped: a reason is never cut off. */
static void print_note_line(FILE *f, const char *name, const char *label, const char *text) {
  char line[800];
  snprintf(line, sizeof line, "%s: %s", label, text);
  print_wrapped(f, name, line);
}

static const char *first_error(const c1d_impl_result *ir) {
  for (int i = 0; i < ir->n_trials; i++)
    if (ir->trials[i].status != C1D_OK) return ir->trials[i].error;
  return "";
}

static void print_impl(FILE *f, const c1d_impl_result *ir, double flops) {
  if (ir->state == C1D_RESULT_SKIPPED) {
    print_note_line(f, ir->name, "skipped", ir->skip_reason);
    return;
  }
  if (ir->state == C1D_RESULT_FAILED) {
    print_note_line(f, ir->name, "FAILED", first_error(ir));
    return;
  }
  line_figures v = summarize(ir->trials, ir->n_trials);
  v.gflops = isnan(v.time_ms) ? NAN : flops / (v.time_ms * 1e6);
  print_figures(f, ir->name, &v);
}

static void print_title(FILE *f, const c1d_report_meta *meta, const c1d_run_results *r) {
  char shape[128];
  c1d_shape_format(&r->shape, shape, sizeof shape);
  fprintf(f, "convlab %s: %s, %.3g GFLOP\n", C1D_VERSION, shape, r->flops * 1e-9);
  char xs[600], ws[600], bs[600];
  if (r->from_files) /* the paths as the user gave them, escaped: one line whatever they hold */
    fprintf(f, "inputs: x %s, w %s%s%s\n", c1d_escape_text(meta->x_path ? meta->x_path : "?", xs, sizeof xs),
            c1d_escape_text(meta->w_path ? meta->w_path : "?", ws, sizeof ws), meta->b_path ? ", b " : "",
            c1d_escape_text(meta->b_path ? meta->b_path : "", bs, sizeof bs));
  else if (r->trials == 1)
    fprintf(f, "inputs: %s, seed %llu\n", c1d_dist_name(r->dist), (unsigned long long)r->seed);
  else
    fprintf(f, "inputs: %s, %d trials, seeds %llu..%llu (errors: worst trial; time: median)\n",
            c1d_dist_name(r->dist), r->trials, (unsigned long long)r->seed,
            (unsigned long long)(r->seed + (uint64_t)r->trials - 1));
  if (r->cpu_batch_rows > 0 && r->cpu_batch_rows < r->shape.N)
    fprintf(f, "CPU rows: batch rows 0..%lld of %lld (%.1f%% of N*L; their statistics cover that part, the GPU "
               "rows all of it)\n",
            (long long)r->cpu_batch_rows - 1, (long long)r->shape.N,
            100.0 * (double)r->cpu_batch_rows / (double)r->shape.N);
  fprintf(f, "oracle: float64 on the %s", r->oracle);
  if (r->oracle_kernel) fprintf(f, " (%s kernel)", r->oracle_kernel);
  fprintf(f, ", %.2f s", r->oracle_ms * 1e-3);
  if (meta->machine)
    fprintf(f, "; %d CPU threads%s%s", meta->machine->threads, meta->machine->has_gpu ? ", " : "",
            meta->machine->has_gpu ? meta->machine->gpu_name : "");
  fprintf(f, "\n\n");
}

/* With tolerances other than KernelBench's, the failing share at the user's tolerances. */
static void print_user_tolerance(FILE *f, const c1d_run_results *r) {
  if (r->atol == C1D_DEFAULT_ATOL && r->rtol == C1D_DEFAULT_RTOL) return;
  fprintf(f, "failing allclose(atol=%g, rtol=%g):", r->atol, r->rtol);
  int col = 40;
  for (int i = 0; i < r->n_impls; i++) {
    const c1d_impl_result *ir = &r->impls[i];
    if (ir->state != C1D_RESULT_RAN) continue;
    char b[16], item[128], name[100];
    line_figures v = summarize(ir->trials, ir->n_trials);
    int n = snprintf(item, sizeof item, " %s %s%%", c1d_escape_text(ir->name, name, sizeof name),
                     fmt_pct(b, v.user_pct));
    if (col + n > WIDTH) {
      fputs("\n ", f);
      col = 1;
    }
    fputs(item, f);
    col += n;
  }
  fputs("\n", f);
}

static void print_comparison(FILE *f, const c1d_comparison *cmp) {
  char a[200], b[200];
  fprintf(f, "\ncompare: %s against %s's output as the reference (bounds with 2u)\n",
          c1d_escape_text(cmp->a, a, sizeof a), c1d_escape_text(cmp->b, b, sizeof b));
  for (int i = 0; i < cmp->n_trials; i++)
    if (cmp->trials[i].status != C1D_OK) {
      print_note_line(f, cmp->a, "no comparison", cmp->trials[i].error);
      return;
    }
  line_figures v = summarize(cmp->trials, cmp->n_trials);
  print_figures(f, cmp->a, &v);
}

/* One verdict per row (the most severe trial's), in plain words, and the TF32 model beside TF32 rows. */
static void print_verdict(FILE *f, const char *name, const c1d_impl_result *ir,
                          const c1d_trial_result *trials, int n) {
  int same = 0;
  const c1d_trial_result *t = c1d_worst_verdict(trials, n, &same);
  if (!t) return;
  char text[sizeof t->explanation.reason + 64];
  snprintf(text, sizeof text, "%s%s: %s", c1d_verdict_name(t->explanation.verdict),
           n > 1 ? (same == n ? " (every trial)" : " (the worst trial)") : "", t->explanation.reason);
  print_wrapped(f, name, text);
  const double predicted = ir ? c1d_tf32_prediction(ir, t) : NAN;
  if (!isnan(predicted)) {
    snprintf(text, sizeof text, "tf32 model: predicted rel L2 %.2e, observed %.2e (observed/predicted %.2f)",
             predicted, t->metrics.rel_l2, t->metrics.rel_l2 / predicted);
    print_wrapped(f, "", text);
  }
}

static void print_verdicts(FILE *f, const c1d_run_results *r) {
  int any = 0;
  for (int i = 0; i < r->n_impls; i++) any |= r->impls[i].state == C1D_RESULT_RAN;
  if (!any) {
    fprintf(f, "\nverdicts: none (nothing ran here)\n");
    return;
  }
  fprintf(f, "\nverdicts (is it a bug, or is it rounding?):\n");
  for (int i = 0; i < r->n_impls; i++)
    if (r->impls[i].state == C1D_RESULT_RAN)
      print_verdict(f, r->impls[i].name, &r->impls[i], r->impls[i].trials, r->impls[i].n_trials);
  for (int i = 0; i < r->n_comparisons; i++) {
    char name[200], shown[400];
    snprintf(name, sizeof name, "%s vs %s", r->comparisons[i].a, r->comparisons[i].b);
    fprintf(f, "%s:\n", c1d_escape_text(name, shown, sizeof shown));
    print_verdict(f, "", NULL, r->comparisons[i].trials, r->comparisons[i].n_trials);
  }
}

/* What the columns measure. With a bf16 or fp16 y the ULPs are that type's and the bounds the contract's
 * (float32 accumulation and one rounding to y's type): a correctly rounded output shows 0 in them. */
static void print_legend(FILE *f, const c1d_run_results *r) {
  const c1d_dtype y = r->shape.dt.y;
  if (y != C1D_DTYPE_BF16 && y != C1D_DTYPE_F16) {
    fprintf(f, "\nulp: distance to the oracle rounded to float32. fail%%: failing allclose(atol=1e-4,"
               " rtol=1e-4).\n>det%%, >prob%%: beyond float32's bounds, deterministic (gamma_n*m) and "
               "probabilistic (lambda=%g), in\nevery row: TF32 and bf16 rows exceed them by design; "
               "their verdicts hold them to their own bounds.\n",
            r->lambda);
    return;
  }
  const char *t = c1d_dtype_name(y);
  fprintf(f, "\nulp (%s): distance in %s ulps (y's type) to the oracle rounded once to %s.\n"
             "fail%%: failing allclose(atol=1e-4, rtol=1e-4), float32's check: a %s output can fail it by its\n"
             "one rounding alone. >det%%, >prob%%: beyond the contract's bounds, float32's deterministic\n"
             "(gamma_n*m) and probabilistic (lambda=%g) bounds plus half an ulp of %s (y's one rounding):\n"
             "a correctly rounded output is within them.\n",
          t, t, t, t, r->lambda, t);
}

void c1d_report_console(FILE *f, const c1d_report_meta *meta, const c1d_run_results *r) {
  print_title(f, meta, r);
  print_header(f);
  for (int i = 0; i < r->n_impls; i++) print_impl(f, &r->impls[i], r->flops);
  print_unavailable(f, r);
  for (int i = 0; i < r->n_comparisons; i++) print_comparison(f, &r->comparisons[i]);
  print_legend(f, r);
  print_user_tolerance(f, r);
  print_verdicts(f, r);
}
