/* The HTML report (report_html.h). The page in order: header, summary table, comparisons, the TF32
 * panel, one section per implementation. Plots are drawn by svg.h; the CSS below gives them colours.
 * Every number shown comes from the run's results; nothing is recomputed from outputs. */
#include "harness/report_html.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "harness/svg.h"
#include "harness/version.h"
#include "numerics/bounds.h"
#include "numerics/classifier.h"
#include "reference/dtype.h"

#define PLOT_W 430.0
#define PLOT_H 250.0
#define WIDE_W 1306.0 /* three plots and their gaps */
#define MAX_ROWS 64   /* rows in the TF32 panel's plots */

static const char css[] =
    "body{font:14px/1.45 system-ui,'DejaVu Sans',sans-serif;margin:20px 24px;color:#222;max-width:1340px}"
    "h1{font-size:22px;margin:0 0 6px}h2{font-size:18px;margin:30px 0 6px;padding-bottom:3px;"
    "border-bottom:1px solid #ddd}h2 .sub{font-size:13px;font-weight:normal;color:#666}"
    "p{margin:4px 0}.meta b{color:#555;font-weight:600}code{font-size:12px;background:#f4f4f4;"
    "padding:1px 4px;word-break:break-all}.dim{color:#777}"
    "table{border-collapse:collapse;font-size:13px;margin:8px 0}th{background:#f3f3f3}"
    "td,th{padding:3px 8px;border-bottom:1px solid #e6e6e6;text-align:right;vertical-align:top}"
    ".l{text-align:left}td{white-space:nowrap}td.why{white-space:normal;max-width:560px;font-size:12px;color:#444}"
    ".v{display:inline-block;padding:0 6px;border-radius:3px;color:#fff;font-size:12px;white-space:nowrap}"
    ".v-ok{background:#2e7d32}.v-warn{background:#e65100}.v-bug{background:#c62828}.v-grey{background:#757575}"
    ".plots{display:flex;flex-wrap:wrap;gap:8px;margin-top:8px}"
    "figure{margin:0}figcaption{font-size:12px;color:#555;max-width:430px}"
    "svg.plot{background:#fff;border:1px solid #e2e2e2}"
    "svg .title{font-size:13px;font-weight:600}svg .tick,svg .key,svg .marker{font-size:11px;fill:#444}"
    "svg .label{font-size:12px;fill:#333}svg .note{font-size:13px;fill:#888}"
    "svg .grid{stroke:#eee}svg .frame{fill:none;stroke:#999}"
    "svg .bar{fill:#4c78a8}svg .bar-beyond{fill:#d62728}"
    "svg path.mean,svg path.max,svg path.fp32,svg path.tf32,svg .legend line{fill:none;stroke-width:1.6;"
    "stroke-linecap:round;stroke-linejoin:round}"
    "svg .mean,svg .fp32{stroke:#4c78a8}svg .max{stroke:#d62728}svg .tf32{stroke:#f58518}"
    "svg .fp32,svg .tf32{stroke-opacity:.8}"
    "svg .mk{stroke:#333;stroke-dasharray:5 3}svg .mk2{stroke:#999;stroke-dasharray:2 3;stroke-width:1.4}"
    "svg .mk-tf32{stroke:#f58518;stroke-dasharray:6 3;stroke-width:2}"
    "svg .mk-fp32{stroke:#4c78a8;stroke-dasharray:6 3;stroke-width:2}"
    "svg circle.dot-fp32{fill:#4c78a8}svg circle.dot-tf32{fill:#f58518}";

// --- one row over its trials ---------------------------------------------------------------------

typedef struct row_view {
  const c1d_impl_result *ir;
  const c1d_trial_result *worst; /* the ok trial with the largest relative L2; NULL when none ran */
  const c1d_trial_result *verdict; /* the trial with the most severe verdict (as the console shows) */
  int ok_trials;
  c1d_log_hist abs, ratio;       /* summed over the ok trials */
  c1d_profile t, o;              /* mean averaged and max maxed over the ok trials */
} row_view;

static void add_profile(c1d_profile *sum, const c1d_profile *p, int first) {
  if (first) {
    *sum = *p;
    return;
  }
  if (p->bins != sum->bins) return; /* one shape per run: cannot happen */
  for (int i = 0; i < p->bins; i++) {
    sum->mean[i] += p->mean[i];
    if (p->max[i] > sum->max[i]) sum->max[i] = p->max[i];
  }
}

static void view_row(const c1d_impl_result *ir, row_view *v) {
  memset(v, 0, sizeof *v);
  v->ir = ir;
  for (int i = 0; i < ir->n_trials; i++) {
    const c1d_trial_result *t = &ir->trials[i];
    if (t->status != C1D_OK) continue;
    if (!v->worst || t->metrics.rel_l2 > v->worst->metrics.rel_l2 || isnan(t->metrics.rel_l2)) v->worst = t;
    if (v->ok_trials == 0) {
      v->abs = t->abs_err_hist;
      v->ratio = t->bound_ratio_hist;
    } else {
      c1d_log_hist_merge(&v->abs, &t->abs_err_hist);
      c1d_log_hist_merge(&v->ratio, &t->bound_ratio_hist);
    }
    add_profile(&v->t, &t->err_t, v->ok_trials == 0);
    add_profile(&v->o, &t->err_o, v->ok_trials == 0);
    v->ok_trials++;
  }
  int same = 0;
  v->verdict = c1d_worst_verdict(ir->trials, ir->n_trials, &same);
  for (int i = 0; i < v->t.bins && v->ok_trials > 1; i++) v->t.mean[i] /= v->ok_trials;
  for (int i = 0; i < v->o.bins && v->ok_trials > 1; i++) v->o.mean[i] /= v->ok_trials;
}

/* Inputs rounded to TF32: by what the implementation is, did, or (without either) how its errors look. */
static int is_tf32_row(const row_view *v) {
  const c1d_impl *impl = v->ir->impl;
  if (!v->worst) return 0;
  if (impl && impl->precision == C1D_PREC_TF32) return 1;
  if (impl && impl->precision == C1D_PREC_TF32_ALLOWED && v->worst->used_tf32 >= 0) return v->worst->used_tf32;
  return v->worst->explained && v->worst->explanation.verdict == C1D_VERDICT_TF32_INPUTS;
}

/* The rounding models' statistics on this run's inputs (first explained trial), or NULL. */
static const c1d_explanation *models_of(const c1d_run_results *r) {
  for (int i = 0; i < r->n_impls; i++)
    for (int j = 0; j < r->impls[i].n_trials; j++)
      if (r->impls[i].trials[j].status == C1D_OK && r->impls[i].trials[j].explained)
        return &r->impls[i].trials[j].explanation;
  return NULL;
}

/* NaN (shown as a dash, no line drawn) where the model does not apply: TF32 on bf16 inputs. */
static double model_rel_l2(const c1d_explanation *e, int model) {
  return c1d_model_applies(e, model) ? e->models[model].rel_l2 : NAN;
}

// --- text helpers --------------------------------------------------------------------------------

/* The explainer's reason without its "; detection limit: ... every element" clause: the page says the
 * detection limit once, under the summary (detection_limit_once). */
static void escape_reason(FILE *f, const char *reason) {
  static const char clause[] = "; detection limit: ", end[] = "every element";
  const char *at = strstr(reason, clause), *stop = at ? strstr(at, end) : NULL;
  if (!stop) {
    c1d_svg_escape(f, reason);
    return;
  }
  char before[sizeof ((c1d_explanation *)0)->reason];
  snprintf(before, sizeof before, "%.*s", (int)(at - reason), reason);
  c1d_svg_escape(f, before);
  c1d_svg_escape(f, stop + sizeof end - 1);
}

/* The verdict's first sentence in bold, as convlab explain prints it first. */
static void headline(FILE *f, const c1d_explanation *e) {
  char line[600];
  c1d_verdict_headline(e, line, sizeof line);
  fputs("<b>", f);
  c1d_svg_escape(f, line);
  fputs("</b> ", f);
}

static void sci(FILE *f, double v) {
  if (isnan(v))
    fputs("&ndash;", f);
  else if (v == 0.0)
    fputs("0", f);
  else
    fprintf(f, "%.2e", v);
}

static void pct(FILE *f, int64_t part, int64_t count) {
  if (count <= 0)
    fputs("&ndash;", f);
  else if (part == 0)
    fputs("0", f);
  else
    fprintf(f, "%.3g%%", 100.0 * (double)part / (double)count);
}

static const char *verdict_class(c1d_verdict v) {
  switch (v) {
    case C1D_VERDICT_FP32_ROUNDING: return "v-ok";
    case C1D_VERDICT_TF32_INPUTS:
    case C1D_VERDICT_REDUCED_PRECISION: return "v-warn";
    case C1D_VERDICT_INCONCLUSIVE: return "v-grey";
    default: return "v-bug";
  }
}

static void badge(FILE *f, const char *cls, const char *text) {
  fprintf(f, "<span class=\"v %s\">", cls);
  c1d_svg_escape(f, text);
  fputs("</span>", f);
}

/* The verdict badge of a row: its verdict, or what happened instead. */
static void row_badge(FILE *f, const row_view *v) {
  if (v->ir->state == C1D_RESULT_SKIPPED)
    badge(f, "v-grey", "skipped");
  else if (v->ir->state == C1D_RESULT_FAILED)
    badge(f, "v-bug", "failed");
  else if (v->verdict)
    badge(f, verdict_class(v->verdict->explanation.verdict), c1d_verdict_name(v->verdict->explanation.verdict));
  else
    fputs("<span class=\"dim\">not explained</span>", f);
}

/* Why: the explainer's reason, the skip reason or the first trial's error. */
static const char *row_reason(const row_view *v) {
  if (v->ir->state == C1D_RESULT_SKIPPED) return v->ir->skip_reason;
  for (int i = 0; i < v->ir->n_trials; i++)
    if (v->ir->trials[i].status != C1D_OK) return v->ir->trials[i].error;
  return v->verdict ? v->verdict->explanation.reason : "";
}

/* "2 of 5 trials: bug-localized" when the trials disagree, else nothing. */
static void verdict_spread(FILE *f, const c1d_impl_result *ir) {
  int count[C1D_VERDICT_COUNT] = {0}, kinds = 0, explained = 0;
  for (int i = 0; i < ir->n_trials; i++) {
    const c1d_trial_result *t = &ir->trials[i];
    if (t->status != C1D_OK || !t->explained || (unsigned)t->explanation.verdict >= C1D_VERDICT_COUNT) continue;
    kinds += count[t->explanation.verdict]++ == 0;
    explained++;
  }
  if (kinds < 2) return;
  fputs(" <span class=\"dim\">(trials:", f);
  for (int v = 0; v < C1D_VERDICT_COUNT; v++)
    if (count[v]) fprintf(f, " %s %d of %d;", c1d_verdict_name((c1d_verdict)v), count[v], explained);
  fputs(")</span>", f);
}

static double median_time(const c1d_impl_result *ir) {
  double t[ir->n_trials > 0 ? ir->n_trials : 1];
  int n = 0;
  for (int i = 0; i < ir->n_trials; i++)
    if (ir->trials[i].status == C1D_OK && ir->trials[i].repeats > 0) {
      int j = n++;
      for (; j > 0 && t[j - 1] > ir->trials[i].time_median_ms; j--) t[j] = t[j - 1];
      t[j] = ir->trials[i].time_median_ms;
    }
  return n == 0 ? NAN : n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

// --- header and tables ---------------------------------------------------------------------------

/* y in bf16 or fp16: the metrics' ULPs and bounds are in y's type (numerics/metrics.h). */
static int narrow_y(const c1d_run_results *r) {
  return r->shape.dt.y == C1D_DTYPE_BF16 || r->shape.dt.y == C1D_DTYPE_F16;
}

static void header(FILE *f, const c1d_report_meta *meta, const c1d_run_results *r) {
  char shape[160];
  c1d_shape_format(&r->shape, shape, sizeof shape);
  fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>convlab report: ", f);
  c1d_svg_escape(f, shape);
  fprintf(f, "</title>\n<style>%s</style></head>\n<body>\n<h1>convlab report</h1>\n", css);
  fputs("<p class=\"meta\"><b>shape</b> ", f);
  c1d_svg_escape(f, shape);
  fprintf(f, " (n = C&middot;K = %lld products per output, %.3g GFLOP) &nbsp;<b>inputs</b> ",
          (long long)(r->shape.C * r->shape.K), r->flops / 1e9);
  if (r->from_files)
    fputs("from files", f);
  else
    fprintf(f, "%s, seed %llu", c1d_dist_name(r->dist), (unsigned long long)r->seed);
  fprintf(f, ", %d trial%s &nbsp;<b>oracle</b> float64 on the %s%s%s%s, %.2f s</p>\n", r->trials,
          r->trials == 1 ? "" : "s", r->oracle ? r->oracle : "?", r->oracle_kernel ? " (" : "",
          r->oracle_kernel ? r->oracle_kernel : "", r->oracle_kernel ? " kernel)" : "", r->oracle_ms / 1e3);
  if (meta->machine) {
    fputs("<p class=\"meta\"><b>machine</b> ", f);
    c1d_svg_escape(f, meta->machine->cpu);
    fprintf(f, ", %d threads; ", meta->machine->threads);
    c1d_svg_escape(f, meta->machine->has_gpu ? meta->machine->gpu_name : meta->machine->gpu_reason);
    fputs("</p>\n", f);
  }
  if (meta->command) {
    fputs("<p class=\"meta\"><b>command</b> <code>", f);
    c1d_svg_escape(f, meta->command);
    fputs("</code></p>\n", f);
  }
  fprintf(f, "<p class=\"dim\">Errors are |y &minus; ref| against the float64 oracle. With m = |b| + "
             "&Sigma;|w&middot;x| per output and u = 2<sup>&minus;24</sup>, the deterministic bound is "
             "&gamma;<sub>n</sub>&middot;m and the probabilistic one &lambda;&middot;&radic;n&middot;u&middot;m "
             "(&lambda; = %g)",
          r->lambda);
  if (narrow_y(r))
    fprintf(f, ", each plus half an ulp of %s (y's type: the contract's one rounding of the output), so "
               "that a correctly rounded output is within both; ULPs are %s's",
            c1d_dtype_name(r->shape.dt.y), c1d_dtype_name(r->shape.dt.y));
  fprintf(f, "; allclose uses atol = %g, rtol = %g.</p>\n", C1D_DEFAULT_ATOL, C1D_DEFAULT_RTOL);
}

static void summary_table(FILE *f, const c1d_run_results *r) {
  fputs("<h2>Summary</h2>\n<table class=\"summary\"><tr><th class=\"l\">implementation</th>"
        "<th class=\"l\">backend</th><th class=\"l\">precision</th><th class=\"l\">verdict</th>"
        "<th>rel L2</th><th>max |err|</th><th>fail allclose</th><th>&gt; det. bound</th>"
        "<th>time ms</th><th class=\"l\">why</th></tr>\n",
        f);
  for (int i = 0; i < r->n_impls; i++) {
    row_view v;
    view_row(&r->impls[i], &v);
    const c1d_metrics *m = v.worst ? &v.worst->metrics : NULL;
    fputs("<tr><td class=\"l\"><a href=\"#impl-", f);
    c1d_svg_escape(f, v.ir->name);
    fputs("\">", f);
    c1d_svg_escape(f, v.ir->name);
    fprintf(f, "</a></td><td class=\"l\">%s</td><td class=\"l\">%s</td><td class=\"l\">", v.ir->backend,
            v.ir->precision);
    row_badge(f, &v);
    fputs("</td><td>", f);
    sci(f, m ? m->rel_l2 : NAN);
    fputs("</td><td>", f);
    sci(f, m ? m->max_abs : NAN);
    fputs("</td><td>", f);
    pct(f, m ? m->fail_default : 0, m ? m->count : 0);
    fputs("</td><td>", f);
    pct(f, m ? m->beyond_det : 0, m ? m->count : 0);
    fputs("</td><td>", f);
    const double ms = median_time(v.ir);
    if (isnan(ms))
      fputs("&ndash;", f);
    else
      fprintf(f, "%.3f", ms);
    fputs("</td><td class=\"l why\">", f);
    if (v.ir->state == C1D_RESULT_RAN && v.verdict) headline(f, &v.verdict->explanation);
    escape_reason(f, row_reason(&v));
    verdict_spread(f, v.ir);
    fputs("</td></tr>\n", f);
  }
  c1d_unavailable_group g;
  if (c1d_report_unavailable(r, &g, 1)) { /* what the run left out, as the console's line */
    char text[1024];
    c1d_unavailable_text(&g, text, sizeof text);
    fputs("<tr class=\"unavailable\"><td class=\"l why\" colspan=\"10\">", f);
    c1d_svg_escape(f, text);
    fputs("</td></tr>\n", f);
  }
  fputs("</table>\n", f);
  if (r->trials > 1)
    fputs("<p class=\"dim\">With several trials each number is the worst trial's, and the verdict is the "
          "most severe one among the trials; the time is the median over trials.</p>\n", f);
}

static void comparisons_table(FILE *f, const c1d_run_results *r) {
  if (r->n_comparisons == 0) return;
  fputs("<h2>Comparisons</h2>\n<p class=\"dim\">A against B's output promoted to double; bounds use "
        "2u.</p>\n<table><tr><th class=\"l\">A</th><th class=\"l\">B</th><th>trial</th><th>rel L2</th>"
        "<th>max |err|</th><th>fail allclose</th><th class=\"l\">why</th></tr>\n", f);
  for (int i = 0; i < r->n_comparisons; i++)
    for (int j = 0; j < r->comparisons[i].n_trials; j++) {
      const c1d_trial_result *t = &r->comparisons[i].trials[j];
      const int ok = t->status == C1D_OK;
      fputs("<tr><td class=\"l\">", f);
      c1d_svg_escape(f, r->comparisons[i].a);
      fputs("</td><td class=\"l\">", f);
      c1d_svg_escape(f, r->comparisons[i].b);
      fprintf(f, "</td><td>%d</td><td>", j);
      sci(f, ok ? t->metrics.rel_l2 : NAN);
      fputs("</td><td>", f);
      sci(f, ok ? t->metrics.max_abs : NAN);
      fputs("</td><td>", f);
      pct(f, ok ? t->metrics.fail_default : 0, ok ? t->metrics.count : 0);
      fputs("</td><td class=\"l why\">", f);
      /* Which side carries the difference (the runner's attribution), or why there is no comparison. */
      escape_reason(f, !ok ? t->error : t->explained ? t->explanation.reason : "");
      fputs("</td></tr>\n", f);
    }
  fputs("</table>\n", f);
}

// --- histograms ----------------------------------------------------------------------------------

/* Counts of a histogram as bars: one per bin, and one bin-wide bar on each side for the values below
 * and above the range, when there are any, so that nothing counted is out of sight (a bug's huge
 * errors above, a compensated sum's tiny ones below). */
typedef struct hist_bars {
  int n;
  double x0[C1D_HIST_MAX_BINS + 2], x1[C1D_HIST_MAX_BINS + 2], count[C1D_HIST_MAX_BINS + 2];
} hist_bars;

static void bars_of(const c1d_log_hist *h, hist_bars *b) {
  b->n = 0;
  for (int i = h->below ? -1 : 0; i < h->bins + (h->above ? 1 : 0); i++, b->n++) {
    b->x0[b->n] = c1d_log_hist_edge(h, i);
    b->x1[b->n] = c1d_log_hist_edge(h, i + 1);
    b->count[b->n] = (double)(i < 0 ? h->below : i < h->bins ? h->counts[i] : h->above);
  }
}

/* The edges of the first and last non-empty bars, widened into [*lo, *hi]. */
static void widen_to_counts(const c1d_log_hist *h, double *lo, double *hi) {
  hist_bars b;
  bars_of(h, &b);
  for (int i = 0; i < b.n; i++)
    if (b.count[i] > 0) {
      if (b.x0[i] < *lo) *lo = b.x0[i];
      if (b.x1[i] > *hi) *hi = b.x1[i];
    }
}

/* The bars as percent of all outputs (zeros and non-finite included); returns the tallest. */
static double hist_percent(const c1d_log_hist *h, hist_bars *b) {
  const double total = (double)c1d_log_hist_total(h);
  double top = 0.0;
  bars_of(h, b);
  for (int i = 0; i < b->n; i++) {
    b->count[i] = total > 0 ? 100.0 * b->count[i] / total : 0.0;
    if (b->count[i] > top) top = b->count[i];
  }
  return top;
}

/* What the bars cannot show, and which bars count what lies outside the range. */
static void hist_caption(FILE *f, const c1d_log_hist *h, const char *what) {
  const double total = (double)c1d_log_hist_total(h);
  fprintf(f, "<figcaption>%s", what);
  if (h->zero) fprintf(f, " Exactly zero: %.3g%% of outputs.", 100.0 * (double)h->zero / total);
  if (h->below) fprintf(f, " The first bar counts the %lld below the range.", (long long)h->below);
  if (h->above) fprintf(f, " The last bar counts the %lld above the range.", (long long)h->above);
  if (h->nonfinite) fprintf(f, " Not finite: %lld.", (long long)h->nonfinite);
  fputs("</figcaption></figure>\n", f);
}

static void plot_abs_hist(FILE *f, const row_view *v, double lo, double hi, double atol) {
  hist_bars b;
  const double top = hist_percent(&v->abs, &b);
  c1d_svg_plot p;
  fputs("<figure>", f);
  c1d_svg_begin(&p, f, PLOT_W, PLOT_H, "|error| distribution",
                (c1d_svg_axis){C1D_SVG_LOG, lo, hi, "|y \xe2\x88\x92 ref|", NULL, 0},
                (c1d_svg_axis){C1D_SVG_LINEAR, 0.0, top > 0 ? top * 1.1 : 1.0, "% of outputs", NULL, 0});
  c1d_svg_vline(&p, atol, "mk2", "atol");
  c1d_svg_bars(&p, b.n, b.x0, b.x1, b.count, "bar");
  if (top == 0.0) c1d_svg_note(&p, v->abs.zero ? "every output is exact" : "no error in the range");
  c1d_svg_end(&p);
  hist_caption(f, &v->abs, "Bars: share of the outputs per quarter decade of |error|.");
}

static void plot_ratio_hist(FILE *f, const row_view *v, const c1d_run_results *r) {
  double within[C1D_HIST_MAX_BINS + 2], beyond[C1D_HIST_MAX_BINS + 2];
  const c1d_log_hist *h = &v->ratio;
  hist_bars b;
  const double top = hist_percent(h, &b);
  for (int i = 0; i < b.n; i++) {
    within[i] = b.x1[i] <= 1.0 + 1e-12 ? b.count[i] : 0.0;
    beyond[i] = b.x1[i] <= 1.0 + 1e-12 ? 0.0 : b.count[i];
  }
  const int64_t n = r->shape.C * r->shape.K + 1;
  const double prob = c1d_bound_prob(n, 1.0, C1D_U_FP32, r->lambda) / c1d_bound_det(n, 1.0, C1D_U_FP32);
  double lo = prob, hi = 2.0;
  widen_to_counts(h, &lo, &hi);
  c1d_svg_plot p;
  fputs("<figure>", f);
  c1d_svg_begin(&p, f, PLOT_W, PLOT_H, "|error| / deterministic bound",
                (c1d_svg_axis){C1D_SVG_LOG, lo, hi, "|y \xe2\x88\x92 ref| / (\xce\xb3\xe2\x82\x99\xc2\xb7m)", NULL, 0},
                (c1d_svg_axis){C1D_SVG_LINEAR, 0.0, top > 0 ? top * 1.1 : 1.0, "% of outputs", NULL, 0});
  c1d_svg_vline(&p, 1.0, "mk", "deterministic");
  if (!narrow_y(r)) c1d_svg_vline(&p, prob, "mk2", "probabilistic"); /* with y's rounding: per element */
  c1d_svg_bars(&p, b.n, b.x0, b.x1, within, "bar");
  c1d_svg_bars(&p, b.n, b.x0, b.x1, beyond, "bar-beyond");
  if (top == 0.0) c1d_svg_note(&p, h->zero ? "every output is exact" : "no error in the range");
  c1d_svg_end(&p);
  hist_caption(f, h, narrow_y(r) ? "Red bars lie beyond the deterministic bound: not float32 accumulation and "
                                   "one rounding to y's type."
                                 : "Red bars lie beyond the deterministic bound: not rounding in float32.");
}

// --- profiles ------------------------------------------------------------------------------------

/* Mean and max |error| per bin of an axis of `length` indices (t or o); `over` completes the caption
 * "each point: the outputs at <width> <over>". */
static void plot_profile(FILE *f, const c1d_profile *pr, int64_t length, double width, const char *title,
                         const char *axis, const char *over, double marker, const char *marker_label) {
  double x[C1D_PROFILE_BINS], lo = INFINITY, hi = 0.0;
  const int bins = pr->bins < C1D_PROFILE_BINS ? pr->bins : C1D_PROFILE_BINS;
  for (int i = 0; i < bins; i++) {
    const double start = (double)i * (double)pr->width, end = start + (double)pr->width;
    x[i] = 0.5 * (start + (end < (double)length ? end : (double)length));
    if (pr->mean[i] > 0.0 && pr->mean[i] < lo) lo = pr->mean[i];
    if (pr->max[i] > hi) hi = pr->max[i];
  }
  if (!(lo < INFINITY)) lo = hi > 0.0 ? hi / 10.0 : 1e-8;
  c1d_svg_plot p;
  fputs("<figure>", f);
  c1d_svg_begin(&p, f, width, PLOT_H, title, (c1d_svg_axis){C1D_SVG_LINEAR, 0.0, (double)length, axis, NULL, 0},
                (c1d_svg_axis){C1D_SVG_LOG, lo, hi > lo ? hi : lo * 10.0, "|y \xe2\x88\x92 ref|", NULL, 0});
  if (marker > 0.0) c1d_svg_vline(&p, marker, "mk2", marker_label);
  c1d_svg_line(&p, bins, x, pr->mean, "mean");
  c1d_svg_line(&p, bins, x, pr->max, "max");
  static const char *const cls[2] = {"mean", "max"}, *const keys[2] = {"mean", "max"};
  c1d_svg_legend(&p, 2, cls, keys);
  if (bins == 0)
    c1d_svg_note(&p, "no profile recorded");
  else if (hi == 0.0)
    c1d_svg_note(&p, "every output is exact");
  c1d_svg_end(&p);
  fprintf(f, "<figcaption>Mean and max of |error|; each point: the outputs at %lld %s.</figcaption></figure>\n",
          (long long)pr->width, over);
}

// --- the TF32 panel ------------------------------------------------------------------------------

static void tf32_distributions(FILE *f, const c1d_run_results *r, double lo, double hi) {
  double top = 0.0;
  for (int i = 0; i < r->n_impls; i++) {
    row_view v;
    hist_bars b;
    view_row(&r->impls[i], &v);
    if (v.worst) top = fmax(top, hist_percent(&v.abs, &b));
  }
  c1d_svg_plot p;
  fputs("<figure>", f);
  c1d_svg_begin(&p, f, 660.0, 300.0, "|error| of TF32 rows against FP32 rows",
                (c1d_svg_axis){C1D_SVG_LOG, lo, hi, "|y \xe2\x88\x92 ref|", NULL, 0},
                (c1d_svg_axis){C1D_SVG_LINEAR, 0.0, top > 0 ? top * 1.1 : 1.0, "% of outputs", NULL, 0});
  for (int i = 0; i < r->n_impls; i++) {
    row_view v;
    hist_bars b;
    double mid[C1D_HIST_MAX_BINS + 2];
    view_row(&r->impls[i], &v);
    if (!v.worst) continue;
    hist_percent(&v.abs, &b);
    for (int k = 0; k < b.n; k++) mid[k] = sqrt(b.x0[k] * b.x1[k]);
    c1d_svg_line(&p, b.n, mid, b.count, is_tf32_row(&v) ? "tf32" : "fp32");
  }
  static const char *const cls[2] = {"tf32", "fp32"}, *const keys[2] = {"TF32 rows", "FP32 and other rows"};
  c1d_svg_legend(&p, 2, cls, keys);
  c1d_svg_end(&p);
  fputs("<figcaption>One line per implementation: the share of outputs per quarter decade of "
        "|error|.</figcaption></figure>\n", f);
}

/* Each row's relative L2 (dots) against the models' predictions on the same inputs (lines). */
static void tf32_rel_l2(FILE *f, const c1d_run_results *r, const c1d_explanation *models) {
  const char *names[MAX_ROWS];
  double rel[MAX_ROWS];
  int tf32[MAX_ROWS], n = 0;
  const double m_tf32 = model_rel_l2(models, C1D_MODEL_TF32_RNA), m_fp32 = model_rel_l2(models, C1D_MODEL_FP32);
  double lo = INFINITY, hi = 0.0;
  for (int i = 0; i < r->n_impls && n < MAX_ROWS; i++) {
    row_view v;
    view_row(&r->impls[i], &v);
    if (!v.worst) continue;
    names[n] = v.ir->name;
    rel[n] = v.worst->metrics.rel_l2;
    tf32[n] = is_tf32_row(&v);
    n++;
  }
  const double all[2] = {m_tf32, m_fp32};
  for (int i = 0; i < n + 2; i++) {
    const double x = i < n ? rel[i] : all[i - n];
    if (x > 0.0 && x < lo) lo = x;
    if (x > hi && isfinite(x)) hi = x;
  }
  /* rows top to bottom: category n-1-i is row i; the empty top category leaves room for the labels */
  const char *shown[MAX_ROWS + 1];
  for (int i = 0; i < n; i++) shown[n - 1 - i] = names[i];
  shown[n] = "";
  c1d_svg_plot p;
  fputs("<figure>", f);
  c1d_svg_begin(&p, f, 660.0, fmax(300.0, 110.0 + 22.0 * n), "relative L2: observed and predicted",
                (c1d_svg_axis){C1D_SVG_LOG, lo < INFINITY ? lo / 2 : 1e-8, hi > 0 ? hi * 2 : 1e-3,
                               "||y \xe2\x88\x92 ref||\xe2\x82\x82 / ||ref||\xe2\x82\x82", NULL, 0},
                (c1d_svg_axis){C1D_SVG_CATEGORY, 0, 0, NULL, shown, n + 1});
  c1d_svg_vline(&p, m_tf32, "mk-tf32", "TF32 model");
  c1d_svg_vline(&p, m_fp32, "mk-fp32", "fp32 model");
  for (int i = 0; i < n; i++) {
    char tip[160];
    snprintf(tip, sizeof tip, "%s: %.3g", names[i], rel[i]);
    c1d_svg_dot(&p, rel[i], n - 1 - i + 0.5, 5.0, tf32[i] ? "dot-tf32" : "dot-fp32", tip);
  }
  if (n == 0) c1d_svg_note(&p, "no implementation produced an output");
  c1d_svg_end(&p);
  fputs("<figcaption>Dots: each implementation's relative L2 (orange: TF32 rows). Dashed lines: the "
        "rounding models on the same inputs, TF32 inputs (round to nearest) and the fp32 naive "
        "order.</figcaption></figure>\n", f);
}

static void tf32_table(FILE *f, const c1d_run_results *r, const c1d_explanation *models) {
  int rows = 0;
  for (int i = 0; i < r->n_impls; i++) {
    row_view v;
    view_row(&r->impls[i], &v);
    if (!is_tf32_row(&v)) continue;
    if (rows++ == 0)
      fputs("<table><tr><th class=\"l\">TF32 row</th><th class=\"l\">used TF32</th><th>observed rel L2</th>"
            "<th>TF32 model (rna)</th><th>TF32 model (truncated)</th><th>observed / model</th>"
            "<th class=\"l\">verdict</th></tr>\n", f);
    const c1d_explanation *e = v.worst->explained ? &v.worst->explanation : NULL;
    const double model = model_rel_l2(e, C1D_MODEL_TF32_RNA);
    fputs("<tr><td class=\"l\">", f);
    c1d_svg_escape(f, v.ir->name);
    fprintf(f, "</td><td class=\"l\">%s</td><td>",
            v.worst->used_tf32 < 0 ? "not reported" : v.worst->used_tf32 ? "yes" : "no");
    sci(f, v.worst->metrics.rel_l2);
    fputs("</td><td>", f);
    sci(f, model);
    fputs("</td><td>", f);
    sci(f, model_rel_l2(e, C1D_MODEL_TF32_TRUNC));
    fputs("</td><td>", f);
    if (model > 0.0)
      fprintf(f, "%.3f", v.worst->metrics.rel_l2 / model);
    else
      fputs("&ndash;", f);
    fputs("</td><td class=\"l\">", f);
    row_badge(f, &v);
    fputs("</td></tr>\n", f);
  }
  if (rows)
    fputs("</table>\n", f);
  else if (models && !c1d_model_applies(models, C1D_MODEL_TF32_RNA))
    fputs("<p>No TF32 row in this run, and no TF32 model applies: rounding these inputs to TF32 changes "
          "nothing (bf16 and fp16 values are TF32 values).</p>\n", f);
  else
    fputs("<p>No TF32 row in this run. The TF32 model's line shows what rounding the inputs to TF32 "
          "would cost on these inputs.</p>\n", f);
}

static void tf32_panel(FILE *f, const c1d_run_results *r, double lo, double hi) {
  const c1d_explanation *models = models_of(r);
  fputs("<h2 id=\"tf32\">TF32 against FP32</h2>\n<p class=\"dim\">TF32 keeps 10 mantissa bits of each "
        "input: its error does not shrink with more careful summation and does not grow with n. A "
        "relative L2 near the TF32 model's says the inputs were rounded to TF32.</p>\n"
        "<div class=\"plots\">", f);
  tf32_distributions(f, r, lo, hi);
  tf32_rel_l2(f, r, models);
  fputs("</div>\n", f);
  tf32_table(f, r, models);
}

// --- one section per implementation --------------------------------------------------------------

static void region_line(FILE *f, const c1d_explanation *e) {
  const c1d_region *g = &e->region;
  if (g->count <= 0) return;
  fprintf(f, "<p><b>Where:</b> %lld outputs (%.3g%%)", (long long)g->count, 100.0 * g->fraction);
  if (g->kind[0]) {
    fputs(", ", f);
    c1d_svg_escape(f, g->kind);
  }
  fputs(": n ", f);
  c1d_svg_escape(f, g->n);
  fputs(", o ", f);
  c1d_svg_escape(f, g->o);
  fputs(", t ", f);
  c1d_svg_escape(f, g->t);
  fputs(".</p>\n", f);
}

static int shows_limit(const c1d_trial_result *t) {
  return t && t->explained && !c1d_verdict_is_bug(t->explanation.verdict) &&
         t->explanation.verdict != C1D_VERDICT_INCONCLUSIVE;
}

/* "6.4e-07", or "6.4e-07 to 6.5e-07" when the rows' values differ at the precision shown. */
static void span(FILE *f, const char *fmt, double lo, double hi) {
  char a[32], b[32];
  snprintf(a, sizeof a, fmt, lo);
  snprintf(b, sizeof b, fmt, hi);
  fputs(a, f);
  if (strcmp(a, b)) fprintf(f, " to %s", b);
}

/* The detection limit, said once under the summary for every row that is not a bug: each row's own
 * (it depends a little on the row's errors) is in the JSON; here their range. */
static void detection_limit_once(FILE *f, const c1d_run_results *r) {
  double lo32 = INFINITY, hi32 = 0.0, lo_all = INFINITY, hi_all = 0.0, lo_x = INFINITY, hi_x = 0.0, alpha = 0.0;
  int rows = 0;
  for (int i = 0; i < r->n_impls; i++) {
    row_view v;
    view_row(&r->impls[i], &v);
    if (!shows_limit(v.worst)) continue;
    const c1d_explanation *e = &v.worst->explanation;
    const double x = e->reference_rms > 0 ? e->detect_limit_32 / e->reference_rms : 0.0;
    lo32 = fmin(lo32, e->detect_limit_32), hi32 = fmax(hi32, e->detect_limit_32);
    lo_all = fmin(lo_all, e->detect_limit_all), hi_all = fmax(hi_all, e->detect_limit_all);
    lo_x = fmin(lo_x, x), hi_x = fmax(hi_x, x);
    alpha = e->alpha;
    rows++;
  }
  if (!rows) return;
  fprintf(f, "<p><b>Detection limit</b> (%s): no error beyond rounding larger than ",
          rows > 1 ? "each row that is not a bug" : "the row that is not a bug");
  span(f, "%.2g", lo32, hi32);
  fputs(" (", f);
  span(f, "%.3g", lo_x, hi_x);
  fputs(" times the naive order's rms rounding error) affects any region of 32 or more elements; none "
        "larger than ", f);
  span(f, "%.2g", lo_all, hi_all);
  fprintf(f, " affects every element (false-alarm probability %.0e).</p>\n", alpha);
}

/* The decision: the test that fired (the detection limit of the other rows is said once, under the
 * summary). */
static void decision_line(FILE *f, const c1d_explanation *e) {
  if ((c1d_verdict_is_bug(e->verdict) || e->verdict == C1D_VERDICT_INCONCLUSIVE) && e->test[0]) {
    fputs("<p><b>Decided by:</b> ", f);
    c1d_svg_escape(f, e->test);
    fprintf(f, " (false-alarm probability %.0e)%s.</p>\n", e->alpha,
            e->certain ? "; some elements beyond the worst-case bound: certainly a bug" : "");
  }
}

static int same_hist(const c1d_log_hist *a, const c1d_log_hist *b) {
  return a->bins == b->bins && a->zero == b->zero && a->below == b->below && a->above == b->above &&
         a->nonfinite == b->nonfinite && !memcmp(a->counts, b->counts, (size_t)a->bins * sizeof a->counts[0]);
}

/* Sums (means, L2 norms) are reduced in parallel in whatever order the threads finish, so equal outputs
 * can differ in their last bits; maxima and counts cannot. */
static int same_sum(double a, double b) { return fabs(a - b) <= 1e-12 * fmax(fabs(a), fabs(b)); }

static int same_profile(const c1d_profile *a, const c1d_profile *b) {
  if (a->bins != b->bins || a->width != b->width) return 0;
  for (int i = 0; i < a->bins; i++)
    if (a->max[i] != b->max[i] || !same_sum(a->mean[i], b->mean[i])) return 0;
  return 1;
}

/* Two rows with every histogram count, profile value and metric equal almost surely produced the same
 * outputs (twins, libraries that chose the naive order): one set of plots stands for both. */
static int same_statistics(const row_view *a, const row_view *b) {
  const c1d_metrics *x = &a->worst->metrics, *y = &b->worst->metrics;
  return a->ok_trials == b->ok_trials && same_sum(x->rel_l2, y->rel_l2) && x->max_abs == y->max_abs &&
         x->argmax_abs == y->argmax_abs && x->ulp_p50 == y->ulp_p50 && x->ulp_p99 == y->ulp_p99 &&
         same_hist(&a->abs, &b->abs) && same_hist(&a->ratio, &b->ratio) && same_profile(&a->t, &b->t) &&
         same_profile(&a->o, &b->o);
}

/* The first row before `index` with the same statistics as v, or NULL. */
static const c1d_impl_result *earlier_twin(const c1d_run_results *r, int index, const row_view *v) {
  for (int j = 0; j < index && v->worst; j++) {
    row_view w;
    view_row(&r->impls[j], &w);
    if (w.worst && same_statistics(v, &w)) return w.ir;
  }
  return NULL;
}

static void impl_section(FILE *f, const c1d_run_results *r, int index, double lo, double hi) {
  row_view view;
  const row_view *v = &view;
  view_row(&r->impls[index], &view);
  fputs("<h2 id=\"impl-", f);
  c1d_svg_escape(f, v->ir->name);
  fputs("\">", f);
  c1d_svg_escape(f, v->ir->name);
  fprintf(f, " <span class=\"sub\">%s &middot; %s</span></h2>\n<p class=\"dim\">", v->ir->backend,
          v->ir->precision);
  c1d_svg_escape(f, v->ir->summary ? v->ir->summary : "");
  fputs("</p>\n<p>", f);
  row_badge(f, v);
  fputs(" ", f);
  if (v->ir->state == C1D_RESULT_RAN && v->verdict) headline(f, &v->verdict->explanation);
  escape_reason(f, row_reason(v));
  fputs("</p>\n", f);
  if (!v->worst) return;
  if (v->worst->explained) {
    region_line(f, &v->worst->explanation);
    decision_line(f, &v->worst->explanation);
  }
  const c1d_impl_result *twin = earlier_twin(r, index, v);
  if (twin) {
    fputs("<p class=\"dim\">Every histogram count, profile value and metric equals <a href=\"#impl-", f);
    c1d_svg_escape(f, twin->name);
    fputs("\">", f);
    c1d_svg_escape(f, twin->name);
    fputs("</a>'s: almost surely the same outputs, bit for bit. Its plots stand for this one.</p>\n", f);
    return;
  }
  fputs("<div class=\"plots\">", f);
  plot_abs_hist(f, v, lo, hi, r->atol);
  plot_ratio_hist(f, v, r);
  plot_profile(f, &v->o, r->shape.O, PLOT_W, "error by output channel o", "output channel o",
               v->o.width == 1 ? "output channel o (every n, t)" : "consecutive channels o (every n, t)", 0.0, NULL);
  plot_profile(f, &v->t, r->shape.L, WIDE_W, "error along the position t", "position t",
               v->t.width == 1 ? "position t (every n, o)" : "consecutive positions t (every n, o)",
               (double)c1d_pad(&r->shape), "end of causal padding");
  fputs("</div>\n", f);
}

// --- the page ------------------------------------------------------------------------------------

void c1d_report_html(FILE *f, const c1d_report_meta *meta, const c1d_run_results *r) {
  /* one |error| range for every histogram, so that rows compare at a glance */
  double lo = INFINITY, hi = 0.0;
  for (int i = 0; i < r->n_impls; i++) {
    row_view v;
    view_row(&r->impls[i], &v);
    if (v.worst) widen_to_counts(&v.abs, &lo, &hi);
  }
  if (!(lo < hi)) {
    lo = 1e-9;
    hi = 1e-3;
  }
  header(f, meta, r);
  summary_table(f, r);
  detection_limit_once(f, r);
  comparisons_table(f, r);
  tf32_panel(f, r, lo, hi);
  for (int i = 0; i < r->n_impls; i++) impl_section(f, r, i, lo, hi);
  fprintf(f, "<p class=\"dim\" style=\"margin-top:30px\">convlab %s &middot; compile flags: <code>",
          C1D_VERSION);
#ifdef C1D_COMPILE_FLAGS
  c1d_svg_escape(f, C1D_COMPILE_FLAGS);
#else
  fputs("unknown", f);
#endif
  fputs("</code></p>\n</body></html>\n", f);
}
