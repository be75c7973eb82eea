/* The power benchmark's tables, from the tallies of a campaign (whole, or merged from shards). Every
 * figure is a count of explained outputs; percentages are of the runs in the same cell. */
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

static void detection_table(FILE *out, const c1d_power_tally *t, int big) {
  fprintf(out, "%-26s %6s %13s", "bug class", "runs", "region elems");
  for (int s = 0; s < C1D_POWER_SIZE_COUNT; s++) fprintf(out, " %6gx [loc]", c1d_power_sizes[s]);
  fprintf(out, "\n");
  for (int bug = 0; bug < t->bugs; bug++) {
    const c1d_power_cell *row = &t->cells[bug * C1D_POWER_SIZE_COUNT];
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

static void verdict_header(FILE *out, const char *first) {
  fprintf(out, "%-16s %6s", first, "runs");
  for (int v = 0; v < C1D_VERDICT_COUNT; v++) fprintf(out, " %8s", short_verdict[v]);
  fprintf(out, "\n");
}

static void verdict_row(FILE *out, const char *name, const int64_t *counts) {
  int64_t runs = 0;
  for (int v = 0; v < C1D_VERDICT_COUNT; v++) runs += counts[v];
  if (runs == 0) return;
  fprintf(out, "%-16s %6lld", name, (long long)runs);
  for (int v = 0; v < C1D_VERDICT_COUNT; v++) fprintf(out, " %8lld", (long long)counts[v]);
  fprintf(out, "\n");
}

/* One example of each kind of failure, with the explainer's own reason. */
static void examples(FILE *out, const c1d_power_results *res, const c1d_power_tally *t) {
  int shown = 0;
  unsigned char order_done[64] = {0}, bug_done[64] = {0};
  for (int64_t i = 0; i < res->count; i++) {
    const c1d_power_record *r = &res->records[i];
    if (r->bug < 0 && r->called_bug && r->order < 64 && !order_done[r->order]) {
      order_done[r->order] = 1;
      fprintf(out, "  false alarm, %s on %s (n = %lld): %s: %s\n", c1d_power_order_name(r->order),
              c1d_power_dist_name(r->dist), (long long)r->terms, c1d_verdict_name(r->verdict), r->reason);
      shown++;
    }
  }
  for (int64_t i = 0; i < res->count; i++) {
    const c1d_power_record *r = &res->records[i];
    if (r->bug < 0 || r->bug >= 64 || bug_done[r->bug] || r->located || r->size != 2) continue;
    if (!c1d_power_bug_is_global(r->bug) && r->region_elems < C1D_POWER_MIN_REGION) continue;
    bug_done[r->bug] = 1;
    fprintf(out, "  missed at 30x, %s in %s on %s (n = %lld, %lld elements): %s, region %s: %s\n",
            c1d_power_bug_name(r->bug), c1d_power_order_name(r->order), c1d_power_dist_name(r->dist),
            (long long)r->terms, (long long)r->region_elems, c1d_verdict_name(r->verdict),
            c1d_region_class_name(r->cls), r->reason);
    shown++;
  }
  if (!shown) fprintf(out, "  none\n");
  (void)t;
}

void c1d_power_print(FILE *out, const c1d_power_results *res, const c1d_power_tally *t) {
  fprintf(out, "convlab power benchmark: campaign %s, %d problems, %lld correct runs, %lld bug runs%s\n",
          res->campaign, res->problems, (long long)t->correct_runs, (long long)t->bug_runs,
          res->torch ? "" : " (PyTorch's conv1d left out: --no-torch)");
  if (res->shards > 1) fprintf(out, "merged from %d shards\n", res->shards);

  fprintf(out, "\nDetection by bug class and size: %% of runs called a bug [%% also located in the right "
               "region]\nRuns whose bug region holds >= %d elements, and global bugs (the criteria's "
               "runs):\n", C1D_POWER_MIN_REGION);
  detection_table(out, t, 1);
  int small = 0;
  for (int i = 0; i < t->bugs * C1D_POWER_SIZE_COUNT; i++) small |= t->cells[i].runs > t->cells[i].big_runs;
  if (small) {
    fprintf(out, "Runs whose local bug region holds < %d elements (outside the criteria):\n",
            C1D_POWER_MIN_REGION);
    detection_table(out, t, 0);
  }

  fprintf(out, "\nFalse alarms: %lld of %lld correct runs called a bug; %lld correct outputs outside "
               "their proof bound (the benchmark's self-check)\n",
          (long long)t->false_alarms, (long long)t->correct_runs, (long long)t->out_of_bound);
  fprintf(out, "%-16s", "bug verdicts/runs");
  for (int d = 0; d < C1D_POWER_DIST_COUNT; d++) fprintf(out, " %9s", short_dist[d]);
  fprintf(out, "\n");
  for (int o = 0; o < t->orders; o++) {
    int64_t runs = 0;
    for (int d = 0; d < C1D_POWER_DIST_COUNT; d++) runs += t->correct[o * C1D_POWER_DIST_COUNT + d];
    if (!runs) continue;
    fprintf(out, "%-16s", c1d_power_order_name(o));
    for (int d = 0; d < C1D_POWER_DIST_COUNT; d++) {
      char cell[24];
      const int64_t n = t->correct[o * C1D_POWER_DIST_COUNT + d], a = t->alarms[o * C1D_POWER_DIST_COUNT + d];
      if (n) snprintf(cell, sizeof cell, "%lld/%lld", (long long)a, (long long)n);
      else snprintf(cell, sizeof cell, "-");
      fprintf(out, " %9s", cell);
    }
    fprintf(out, "\n");
  }

  fprintf(out, "\nVerdicts of the correct runs, per order:\n");
  verdict_header(out, "order");
  for (int o = 0; o < t->orders; o++)
    verdict_row(out, c1d_power_order_name(o), &t->verdict_by_order[o * C1D_VERDICT_COUNT]);
  fprintf(out, "\nVerdicts of the correct runs, per input distribution (ill_conditioned may be "
               "inconclusive, never a bug):\n");
  verdict_header(out, "distribution");
  for (int d = 0; d < C1D_POWER_DIST_COUNT; d++)
    verdict_row(out, c1d_power_dist_name(d), &t->verdict_by_dist[d * C1D_VERDICT_COUNT]);

  const c1d_power_verdicts v = c1d_power_judge(t);
  fprintf(out, "\nIssue 12's criteria:\n");
  fprintf(out, "  [%s] no correct run called a bug (%lld of %lld were)\n", v.no_false_alarm ? "PASS" : "FAIL",
          (long long)t->false_alarms, (long long)t->correct_runs);
  for (int k = 0; k < 2; k++) {
    const int size = k == 0 ? 1 : 2;
    int classes = 0, good = 0;
    for (int bug = 0; bug < t->bugs; bug++) {
      const c1d_power_cell *c = &t->cells[bug * C1D_POWER_SIZE_COUNT + size];
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
  fprintf(out, "  [%s] the benchmark's correct outputs are inside their proof bounds (%lld are not)\n",
          v.correct_in_bound ? "PASS" : "FAIL", (long long)t->out_of_bound);

  fprintf(out, "\nExamples, with the explainer's reason (the first false alarm of each order, the first "
               "miss at 30x of each class):\n");
  examples(out, res, t);
  fprintf(out, "\nCampaign time: %.1f s%s\n", res->seconds, res->shards > 1 ? " (summed over the shards)" : "");
}
