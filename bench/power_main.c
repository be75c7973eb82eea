/* bench_power: the power benchmark of convlab's explainer (bench/power.h), `make power`.
 *
 *   bench_power [--campaign full|reduced] [--no-torch] [--check] [--quiet] [--out FILE]
 *   bench_power --shard I/N [--out FILE] ...        the I-th of N slices; its records to FILE
 *   bench_power --merge FILE... [--check]           the table from the shards' files
 *
 * A job array spreads a campaign with no scheduler of ours: Slurm `--array=1-N` running
 * `bench_power --shard $SLURM_ARRAY_TASK_ID/N`, or `parallel bench_power --shard {}/8 ::: $(seq 8)`,
 * then one `--merge`. Exit status: 0 done (whatever the explainer scored), 1 a failure (or, with
 * --check, a criterion of issue 12 or 15 that fails), 2 a bad command line. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/power.h"
#include "harness/atomic_file.h"

static int usage(const char *why) {
  fprintf(stderr, "bench_power: %s\n", why);
  fprintf(stderr,
          "usage: bench_power [--campaign full|reduced] [--no-torch] [--shard I/N] [--out FILE] [--check] "
          "[--quiet]\n       bench_power --merge FILE... [--check]\n");
  return 2;
}

/* "I/N" with 1 <= I <= N. */
static int parse_shard(const char *text, int *shard, int *shards) {
  char *end;
  const long i = strtol(text, &end, 10);
  if (end == text || *end != '/') return 0;
  const char *rest = end + 1;
  const long n = strtol(rest, &end, 10);
  if (end == rest || *end || n < 1 || n > 100000 || i < 1 || i > n) return 0;
  *shard = (int)i - 1;
  *shards = (int)n;
  return 1;
}

static int report(const c1d_power_results *res, int check) {
  c1d_power_tally t;
  if (c1d_power_tally_make(res, &t) != C1D_OK) {
    fprintf(stderr, "bench_power: %s\n", c1d_error_detail());
    return 1;
  }
  c1d_power_print(stdout, res, &t);
  const c1d_power_verdicts v = c1d_power_judge(&t, -1);
  c1d_power_tally_free(&t);
  if (!v.correct_in_bound) return 1; /* the benchmark itself is wrong: never a result */
  return check && !(v.no_false_alarm && v.detect_10x && v.locate_30x && v.stages_named) ? 1 : 0;
}

static int merge(int argc, char **argv, int first, int check) {
  c1d_power_results res;
  memset(&res, 0, sizeof res);
  unsigned char *seen = NULL;
  int rc = 0;
  for (int i = first; i < argc && rc == 0; i++) {
    if (strcmp(argv[i], "--check") == 0) continue;
    if (c1d_power_read(argv[i], &res, &seen) != C1D_OK) {
      fprintf(stderr, "bench_power: %s\n", c1d_error_detail());
      rc = 1;
    }
  }
  if (rc == 0 && !seen) rc = usage("--merge needs at least one shard file");
  for (int s = 0; rc == 0 && s < res.shards; s++)
    if (!seen[s]) {
      fprintf(stderr, "bench_power: shard %d/%d is missing from the merge\n", s + 1, res.shards);
      rc = 1;
    }
  if (rc == 0) rc = report(&res, check);
  free(seen);
  c1d_power_results_free(&res);
  return rc;
}

int main(int argc, char **argv) {
  const char *campaign_name = "full", *out = NULL;
  int shard = 0, shards = 1, sharded = 0, check = 0, quiet = 0, torch = 1;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--merge") == 0) {
      for (int j = 1; j < argc; j++)
        if (strcmp(argv[j], "--check") == 0) check = 1;
      if (i != 1 && !(i == 2 && check)) return usage("--merge takes only shard files (and --check)");
      return merge(argc, argv, i + 1, check);
    } else if (strcmp(a, "--campaign") == 0 && i + 1 < argc) {
      campaign_name = argv[++i];
    } else if (strcmp(a, "--shard") == 0 && i + 1 < argc) {
      if (!parse_shard(argv[++i], &shard, &shards)) return usage("--shard wants I/N with 1 <= I <= N");
      sharded = 1;
    } else if (strcmp(a, "--out") == 0 && i + 1 < argc) {
      out = argv[++i];
    } else if (strcmp(a, "--no-torch") == 0) {
      torch = 0;
    } else if (strcmp(a, "--check") == 0) {
      check = 1;
    } else if (strcmp(a, "--quiet") == 0) {
      quiet = 1;
    } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      printf("bench_power: the explainer's detection rate per bug class and size, and its false alarms "
             "over correct outputs convlab did not compute\n"
             "  --campaign NAME  full (default, `make power`) or reduced (tests/test_power.c's)\n"
             "  --shard I/N      run the I-th of N slices of the campaign, write its records (--out)\n"
             "  --out FILE       the records file (default with --shard: power-shard-I-of-N.tsv)\n"
             "  --merge FILE...  print the table from the shards' record files\n"
             "  --no-torch       leave PyTorch's conv1d out of the correct outputs\n"
             "  --check          exit 1 when one of the criteria of issues 12 and 15 fails\n"
             "  --quiet          no progress lines on stderr\n");
      return 0;
    } else {
      char why[160];
      snprintf(why, sizeof why, "unknown or incomplete option '%s'", a);
      return usage(why);
    }
  }
  c1d_power_campaign camp;
  if (c1d_power_campaign_named(campaign_name, &camp) != C1D_OK) return usage(c1d_error_detail());
  camp.use_torch = torch;
  char default_out[64];
  if (sharded && !out) {
    snprintf(default_out, sizeof default_out, "power-shard-%d-of-%d.tsv", shard + 1, shards);
    out = default_out;
  }
  if (out) { /* a records file that cannot be written is said before the campaign runs, not after */
    c1d_atomic_file probe;
    if (c1d_atomic_open(&probe, out) != C1D_OK) {
      fprintf(stderr, "bench_power: %s\n", c1d_error_detail());
      return 1;
    }
    c1d_atomic_abort(&probe);
  }
  c1d_power_results res;
  memset(&res, 0, sizeof res);
  int rc = 0;
  if (c1d_power_execute(&camp, shard, shards, &res, quiet ? NULL : stderr) != C1D_OK) {
    fprintf(stderr, "bench_power: %s\n", c1d_error_detail());
    rc = 1;
  } else if (out && c1d_power_write(out, &res) != C1D_OK) {
    fprintf(stderr, "bench_power: %s\n", c1d_error_detail());
    rc = 1;
  } else if (sharded) {
    printf("bench_power: shard %d/%d of campaign %s: %d problems, %lld records in %.1f s, written to %s\n",
           shard + 1, shards, camp.name, res.problems, (long long)res.count, res.seconds, out);
  } else {
    rc = report(&res, check);
  }
  c1d_power_results_free(&res);
  return rc;
}
