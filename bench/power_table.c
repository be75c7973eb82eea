/* The power benchmark's tables, from the tallies of a campaign (whole, or merged from shards), one set
 * per family of problems (the dense fp32 conv of issue 12, the operator of issue 15), then the operator's
 * variants and the stages named. Every figure is a count of explained outputs; percentages are of the
 * runs in the same cell. */
#include <stdio.h>
#include <string.h>

#include "bench/power_internal.h"

static const char *const short_dist[C1D_POWER_DIST_COUNT] = {
    "conv_init", "normal", "uniform", "integer", "ill_cond", "subnorm", "near_ovf"};
static const char *const short_verdict[C1D_VERDICT_COUNT] = {
    "fp32", "tf32", "reduced", "bug-loc", "bug-glob", "nonfin", "inconcl"};

static int pct(int64_t part, int64_t whole) {
  return whole ? (int)((100 * part + whole / 2) / whole) : 0;
}

static void detection_table(FILE *out, const c1d_power_tally *t, int fam, int big) {
  fprintf(out, "%-26s %6s %13s", "bug class", "runs", "region elems");
  for (int s = 0; s < C1D_POWER_SIZE_COUNT; s++) fprintf(out, " %6gx [loc]", c1d_power_sizes[s]);
  fprintf(out, "\n");
  for (int bug = 0; bug < t->bugs; bug++) {
    const c1d_power_cell *row = C1D_POWER_CELL(t, fam, bug, 0);
    int64_t runs = 0, lo = -1, hi = 0;
    for (int s = 0; s < C1D_POWER_SIZE_COUNT; s++) {
      const c1d_power_cell *c = &row[s];
      const int64_t n = big ? c->big_runs : c->runs - c->big_runs;
      if (n > runs) runs = n;
      if (c->runs && (lo < 0 || c->min_region < lo)) lo = c->min_region;
      if (c->max_region > hi) hi = c->max_region;
    }
    if (runs == 0) continue;
    char region[32];
    if (lo == hi) snprintf(region, sizeof region, "%lld", (long long)lo);
    else snprintf(region, sizeof region, "%lld-%lld", (long long)lo, (long long)hi);
    if (!big) snprintf(region, sizeof region, "< %d", C1D_POWER_MIN_REGION);
    fprintf(out, "%-26s %6lld %13s", c1d_power_bug_name(bug), (long long)runs, region);
    for (int s = 0; s < C1D_POWER_SIZE_COUNT; s++) {
      const c1d_power_cell *c = &row[s];
      const int64_t n = big ? c->big_runs : c->runs - c->big_runs;
      const int64_t called = big ? c->big_called : c->called - c->big_called;
      const int64_t located = big ? c->big_located : c->located - c->big_located;
      if (n == 0) fprintf(out, " %12s", "-");
      else fprintf(out, " %6d%% [%3d]", pct(called, n), pct(located, n));
    }
    fprintf(out, "\n");
  }
}

static void verdict_header(FILE *out, const char *first, int width) {
  fprintf(out, "%-*s %6s", width, first, "runs");
  for (int v = 0; v < C1D_VERDICT_COUNT; v++) fprintf(out, " %8s", short_verdict[v]);
  fprintf(out, "\n");
}

static void verdict_row(FILE *out, const char *name, int width, const int64_t *counts) {
  int64_t runs = 0;
  for (int v = 0; v < C1D_VERDICT_COUNT; v++) runs += counts[v];
  if (runs == 0) return;
  fprintf(out, "%-*s %6lld", width, name, (long long)runs);
  for (int v = 0; v < C1D_VERDICT_COUNT; v++) fprintf(out, " %8lld", (long long)counts[v]);
  fprintf(out, "\n");
}

/* One family's tables: detection, false alarms, verdicts per order and per distribution. */
static void family_tables(FILE *out, const c1d_power_tally *t, int fam) {
  fprintf(out, "\n=== %s: %lld correct runs, %lld bug runs ===\n", c1d_power_family_name(fam),
          (long long)t->family_correct[fam], (long long)t->family_bug_runs[fam]);
  fprintf(out, "\nDetection by bug class and size: %% of runs called a bug [%% also located in the right "
               "region]\nRuns whose bug region holds >= %d elements, and global bugs (the criteria's "
               "runs):\n", C1D_POWER_MIN_REGION);
  detection_table(out, t, fam, 1);
  int small = 0;
  for (int b = 0; b < t->bugs; b++)
    for (int s = 0; s < C1D_POWER_SIZE_COUNT; s++) {
      const c1d_power_cell *c = C1D_POWER_CELL(t, fam, b, s);
      small |= c->runs > c->big_runs;
    }
  if (small) {
    fprintf(out, "Runs whose local bug region holds < %d elements (outside the criteria):\n",
            C1D_POWER_MIN_REGION);
    detection_table(out, t, fam, 0);
  }

  fprintf(out, "\nFalse alarms: %lld of %lld correct runs called a bug\n", (long long)t->family_alarms[fam],
          (long long)t->family_correct[fam]);
  fprintf(out, "%-17s", "bug verdicts/runs");
  for (int d = 0; d < C1D_POWER_DIST_COUNT; d++) fprintf(out, " %9s", short_dist[d]);
  fprintf(out, "\n");
  for (int o = 0; o < t->orders; o++) {
    int64_t runs = 0;
    for (int d = 0; d < C1D_POWER_DIST_COUNT; d++) runs += t->correct[C1D_POWER_OD(t, fam, o, d)];
    if (!runs) continue;
    fprintf(out, "%-17s", c1d_power_order_name(o));
    for (int d = 0; d < C1D_POWER_DIST_COUNT; d++) {
      char cell[24];
      const int64_t n = t->correct[C1D_POWER_OD(t, fam, o, d)], a = t->alarms[C1D_POWER_OD(t, fam, o, d)];
      if (n) snprintf(cell, sizeof cell, "%lld/%lld", (long long)a, (long long)n);
      else snprintf(cell, sizeof cell, "-");
      fprintf(out, " %9s", cell);
    }
    fprintf(out, "\n");
  }

  fprintf(out, "\nVerdicts of the correct runs, per order:\n");
  verdict_header(out, "order", 17);
  for (int o = 0; o < t->orders; o++)
    verdict_row(out, c1d_power_order_name(o), 17, &t->verdict_by_order[C1D_POWER_OV(t, fam, o, 0)]);
  fprintf(out, "\nVerdicts of the correct runs, per input distribution (ill_conditioned may be "
               "inconclusive, never a bug):\n");
  verdict_header(out, "distribution", 17);
  for (int d = 0; d < C1D_POWER_DIST_COUNT; d++)
    verdict_row(out, c1d_power_dist_name(d), 17, &t->verdict_by_dist[C1D_POWER_DV(fam, d, 0)]);
}

/* The operator's variants (groups, types, SiLU, states): correct runs and bugs at 10x and 30x. */
static void variant_table(FILE *out, const c1d_power_tally *t) {
  int any = 0;
  for (int i = 0; i < t->variant_count; i++) any |= t->variants[i].family == C1D_POWER_OPERATOR;
  if (!any) return;
  fprintf(out, "\nIssue 15's variants: correct runs (called a bug, verdicts) and bugs with regions >= %d or "
               "global (10x: %% called a bug, 30x: %% located right)\n", C1D_POWER_MIN_REGION);
  fprintf(out, "%-34s %7s %6s %6s %7s %7s %6s %6s\n", "variant", "correct", "alarms", "fp32", "reduced",
          "inconcl", "10x", "30x");
  for (int i = 0; i < t->variant_count; i++) {
    const c1d_power_variant_row *v = &t->variants[i];
    if (v->family != C1D_POWER_OPERATOR) continue;
    char d10[16] = "-", l30[16] = "-";
    if (v->runs10) snprintf(d10, sizeof d10, "%d%%", pct(v->called10, v->runs10));
    if (v->runs30) snprintf(l30, sizeof l30, "%d%%", pct(v->located30, v->runs30));
    fprintf(out, "%-34s %7lld %6lld %6lld %7lld %7lld %6s %6s\n", v->name, (long long)v->correct,
            (long long)v->alarms, (long long)v->verdicts[C1D_VERDICT_FP32_ROUNDING],
            (long long)v->verdicts[C1D_VERDICT_REDUCED_PRECISION], (long long)v->verdicts[C1D_VERDICT_INCONCLUSIVE],
            d10, l30);
  }
}

/* Outputs that lose precision at a known stage: named right when reduced-precision with that stage. */
static void stage_table(FILE *out, const c1d_power_tally *t) {
  if (!t->stage_total) return;
  fprintf(out, "\nStages named (precision lost at a known stage: the verdict must be reduced-precision with "
               "that `where`): %lld of %lld named right\n(no loss: runs whose output equals the contract's on "
               "every element, counted as correct runs above)\n", (long long)t->stage_named_total,
          (long long)t->stage_total);
  fprintf(out, "%-18s %-13s %7s %6s %6s", "output", "stage", "no loss", "runs", "named");
  for (int v = 0; v < C1D_VERDICT_COUNT; v++) fprintf(out, " %8s", short_verdict[v]);
  fprintf(out, "\n");
  for (int o = 0; o < t->orders; o++) {
    if (!c1d_power_order_stage(o)) continue;
    int64_t unlost = 0;
    for (int fam = 0; fam < C1D_POWER_FAMILY_COUNT; fam++)
      for (int d = 0; d < C1D_POWER_DIST_COUNT; d++) unlost += t->correct[C1D_POWER_OD(t, fam, o, d)];
    if (!t->stage_runs[o] && !unlost) continue;
    fprintf(out, "%-18s %-13s %7lld %6lld %5d%%", c1d_power_order_name(o), c1d_power_order_stage(o),
            (long long)unlost, (long long)t->stage_runs[o], pct(t->stage_named[o], t->stage_runs[o]));
    for (int v = 0; v < C1D_VERDICT_COUNT; v++)
      fprintf(out, " %8lld", (long long)t->stage_verdicts[o * C1D_VERDICT_COUNT + v]);
    fprintf(out, "\n");
  }
}

/* One example of each kind of failure, with the explainer's own reason. */
static void examples(FILE *out, const c1d_power_results *res) {
  int shown = 0;
  enum { MAX_SEEN = 64 };
  unsigned char order_done[C1D_POWER_FAMILY_COUNT][MAX_SEEN] = {{0}};
  unsigned char bug_done[C1D_POWER_FAMILY_COUNT][MAX_SEEN] = {{0}};
  for (int64_t i = 0; i < res->count; i++) {
    const c1d_power_record *r = &res->records[i];
    if (r->bug >= 0 || r->order >= MAX_SEEN || order_done[r->family][r->order]) continue;
    const char *stage = r->lost ? c1d_power_order_stage(r->order) : NULL;
    if (stage ? r->located : !r->called_bug) continue;
    order_done[r->family][r->order] = 1;
    if (stage)
      fprintf(out, "  not named %s, %s on %s %s (n = %lld): %s%s%s: %s\n", stage, c1d_power_order_name(r->order),
              r->variant, c1d_power_dist_name(r->dist), (long long)r->terms, c1d_verdict_name(r->verdict),
              r->where[0] ? " in " : "", r->where, r->reason);
    else
      fprintf(out, "  false alarm, %s on %s %s (n = %lld): %s: %s\n", c1d_power_order_name(r->order), r->variant,
              c1d_power_dist_name(r->dist), (long long)r->terms, c1d_verdict_name(r->verdict), r->reason);
    shown++;
  }
  for (int64_t i = 0; i < res->count; i++) {
    const c1d_power_record *r = &res->records[i];
    if (r->bug < 0 || r->bug >= MAX_SEEN || bug_done[r->family][r->bug] || r->located || r->size != 2) continue;
    if (!c1d_power_bug_is_global(r->bug) && r->region_elems < C1D_POWER_MIN_REGION) continue;
    bug_done[r->family][r->bug] = 1;
    fprintf(out, "  missed at 30x, %s in %s on %s %s (n = %lld, %lld elements): %s, region %s: %s\n",
            c1d_power_bug_name(r->bug), c1d_power_order_name(r->order), r->variant, c1d_power_dist_name(r->dist),
            (long long)r->terms, (long long)r->region_elems, c1d_verdict_name(r->verdict),
            c1d_region_class_name(r->cls), r->reason);
    shown++;
  }
  if (!shown) fprintf(out, "  none\n");
}

static void criteria(FILE *out, const c1d_power_tally *t, int fam) {
  const c1d_power_verdicts v = c1d_power_judge(t, fam);
  fprintf(out, "  %s:\n", c1d_power_family_name(fam));
  fprintf(out, "  [%s] no correct run called a bug (%lld of %lld were)\n", v.no_false_alarm ? "PASS" : "FAIL",
          (long long)t->family_alarms[fam], (long long)t->family_correct[fam]);
  for (int k = 0; k < 2; k++) {
    const int size = k == 0 ? 1 : 2;
    int classes = 0, good = 0;
    for (int bug = 0; bug < t->bugs; bug++) {
      const c1d_power_cell *c = C1D_POWER_CELL(t, fam, bug, size);
      if (!c->big_runs) continue;
      classes++;
      good += k == 0 ? (double)c->big_called >= 0.95 * (double)c->big_runs
                     : c->big_called == c->big_runs && c->big_located == c->big_runs;
    }
    fprintf(out, "  [%s] %gx: %s in every class (regions >= %d elements, and global): %d of %d classes\n",
            (k == 0 ? v.detect_10x : v.locate_30x) ? "PASS" : "FAIL", c1d_power_sizes[size],
            k == 0 ? ">= 95 % called a bug" : "100 % called a bug in the right region", C1D_POWER_MIN_REGION,
            good, classes);
  }
}

void c1d_power_print(FILE *out, const c1d_power_results *res, const c1d_power_tally *t) {
  fprintf(out, "convlab power benchmark: campaign %s, %d problems, %lld correct runs, %lld stage runs, %lld bug "
               "runs%s\n",
          res->campaign, res->problems, (long long)t->correct_runs, (long long)t->stage_total,
          (long long)t->bug_runs, res->torch ? "" : " (PyTorch's conv1d left out: --no-torch)");
  if (res->shards > 1) fprintf(out, "merged from %d shards\n", res->shards);
  int ran[C1D_POWER_FAMILY_COUNT];
  for (int fam = 0; fam < C1D_POWER_FAMILY_COUNT; fam++) {
    ran[fam] = t->family_correct[fam] > 0 || t->family_bug_runs[fam] > 0;
    if (ran[fam]) family_tables(out, t, fam);
  }
  variant_table(out, t);
  stage_table(out, t);

  const c1d_power_verdicts all = c1d_power_judge(t, -1);
  fprintf(out, "\nThe criteria of issues 12 and 15 (each family judged on its own runs):\n");
  for (int fam = 0; fam < C1D_POWER_FAMILY_COUNT; fam++)
    if (ran[fam]) criteria(out, t, fam);
  fprintf(out, "  [%s] every stage run named reduced-precision with its stage (%lld of %lld)\n",
          all.stages_named ? "PASS" : "FAIL", (long long)t->stage_named_total, (long long)t->stage_total);
  fprintf(out, "  [%s] the benchmark's correct outputs are inside their proof bounds (%lld are not)\n",
          all.correct_in_bound ? "PASS" : "FAIL", (long long)t->out_of_bound);

  fprintf(out, "\nExamples, with the explainer's reason (the first false alarm or misnamed stage of each order, "
               "the first miss at 30x of each class, per family):\n");
  examples(out, res);
  fprintf(out, "\nCampaign time: %.1f s%s\n", res->seconds, res->shards > 1 ? " (summed over the shards)" : "");
}
