/* The power benchmark of convlab's explainer (issues 12 and 15): the explainer measured like a detector.
 *
 * A campaign is a list of problems (shape x input distribution x seed). The shapes are of two families:
 * the dense fp32 conv of issue 12, and the operator as people write it (issue 15: groups and depthwise,
 * bf16/fp16 tensors, SiLU, initial states). On each problem the benchmark computes, with its own code,
 * correct outputs that convlab did not compute (float32 accumulation orders, reduced-precision inputs and
 * storage, OpenBLAS SGEMM on im2col, PyTorch's CPU conv1d; on issue 15's problems the contract in
 * several orders, each rounded once to y's type), asks the explainer about each (a bug verdict there is
 * a false alarm), then injects bugs of known classes into correct outputs at 3x, 10x, 30x and 100x the
 * rms error that the fitting model leaves unexplained, and records whether each was called a bug and
 * located in the right region class. Outputs that lose precision at a known stage (bf16 products, fp16
 * sums, ...) are no bug: their verdict must be reduced-precision with that stage as `where` (named right).
 *
 * The explainer is used only through its public interface (harness/explain.h). Everything is seeded:
 * a campaign gives the same records on every run, and its shards (--shard I/N) together give the records
 * of the whole. Extending it: a correct output is one line of the order table (power_orders.c), a bug
 * class one line of the bug table (power_bugs.c), a distribution one case in power_inputs.c. */
#ifndef C1D_POWER_H
#define C1D_POWER_H

#include <stdint.h>
#include <stdio.h>

#include "numerics/classifier.h"
#include "reference/problem.h"

#ifdef __cplusplus
extern "C" {
#endif

// --- what a campaign is made of -----------------------------------------------------------------

/* convlab's five distributions, and two at the edges of the float32 range. */
typedef enum c1d_power_dist {
  C1D_POWER_CONV_INIT,       /* x ~ N(0,1), w and b ~ U(+-1/sqrt(C*K)): convlab's default */
  C1D_POWER_NORMAL,          /* x, w, b ~ N(0,1) */
  C1D_POWER_UNIFORM,         /* x, w, b ~ U(-1,1) */
  C1D_POWER_INTEGER,         /* small integers: every float32 sum exact */
  C1D_POWER_ILL_CONDITIONED, /* cancelling channel pairs: m ~ 1e3 |y| */
  C1D_POWER_SUBNORMAL,       /* every x = 1e-40 (subnormal products), conv_init w, b scaled by 1e-40 */
  C1D_POWER_NEAR_OVERFLOW,   /* conv_init scaled by a power of two so that max m is about 2^125 */
  C1D_POWER_DIST_COUNT
} c1d_power_dist;

const char *c1d_power_dist_name(int dist);

/* Correct outputs: their number, names and one-line summaries (power_orders.c). */
int c1d_power_order_count(void);
const char *c1d_power_order_name(int order);
const char *c1d_power_order_summary(int order);
/* The index of the order called name, or -1. */
int c1d_power_order_find(const char *name);
/* For an output that loses precision at a known stage: the `where` its verdict must name
 * ("products", "accumulation", "inputs", "output"); NULL for the correct outputs. */
const char *c1d_power_order_stage(int order);

/* The two families of problems: the dense fp32 conv (issue 12) and the operator of issue 15. */
enum { C1D_POWER_DENSE, C1D_POWER_OPERATOR, C1D_POWER_FAMILY_COUNT };
const char *c1d_power_family_name(int family);
/* The family of a shape: dense for the plain problem (c1d_shape_is_plain), else the operator's. */
int c1d_power_family_of(const c1d_shape *s);
/* A short name of what the shape is beside the plain problem ("dw bf16 silu states", "g8 fp32",
 * "dw x:bf16 w:f32 ..."), into buf (always terminated); "dense fp32" for the plain problem. */
void c1d_power_variant_of(const c1d_shape *s, char *buf, int size);

/* Bug classes (power_bugs.c). global: the bug's region is every element (located right when the
 * verdict is bug-global or the region class everywhere, or expected: one tap's weights are that tap);
 * else expected is the region class. */
int c1d_power_bug_count(void);
const char *c1d_power_bug_name(int bug);
int c1d_power_bug_is_global(int bug);
c1d_region_class c1d_power_bug_expected(int bug);
int c1d_power_bug_find(const char *name);

/* Bug sizes, as multiples of the unexplained rms error. */
#define C1D_POWER_SIZE_COUNT 4
extern const double c1d_power_sizes[C1D_POWER_SIZE_COUNT]; /* 3, 10, 30, 100 */

/* The criteria of issue 12 apply to bugs whose region holds at least this many elements (and to every
 * global bug). */
#define C1D_POWER_MIN_REGION 32

typedef struct c1d_power_campaign {
  const char *name;           /* "full", "reduced": recorded in shard files, checked by merge */
  const c1d_shape *shapes;
  const unsigned *shape_dists; /* per shape, the distributions that make sense on it (NULL: all) */
  int shape_count;
  int seeds;                  /* seeds 1..seeds for every (shape, distribution) */
  unsigned dists;             /* bit (1u << dist): distributions with correct runs */
  unsigned bug_dists;         /* distributions on which bugs are injected */
  unsigned sizes;             /* bit (1u << size index): the bug sizes run */
  int correct_runs;           /* 1: explain every correct output; 0: only use them as bug bases */
  int use_torch;              /* 1: PyTorch's conv1d is one of the correct outputs */
} c1d_power_campaign;

/* The campaign of `make power` (over 1000 correct runs) and the reduced one of tests/test_power.c. */
c1d_power_campaign c1d_power_full_campaign(void);
c1d_power_campaign c1d_power_reduced_campaign(void);
/* C1D_OK and *out for "full" or "reduced"; C1D_ERR_USAGE naming an unknown one. */
c1d_status c1d_power_campaign_named(const char *name, c1d_power_campaign *out);

/* Problems of a campaign, numbered 0..count-1; shard i of n runs the problems p with p % n == i. */
typedef struct c1d_power_problem {
  int index;
  c1d_shape shape;
  int shape_index;
  c1d_power_dist dist;
  uint64_t seed;
  int bugs;                   /* 1: bugs are injected on this problem */
} c1d_power_problem;

int c1d_power_problem_count(const c1d_power_campaign *camp);
c1d_power_problem c1d_power_problem_at(const c1d_power_campaign *camp, int index);

// --- what a campaign records ---------------------------------------------------------------------

/* One explained output: a correct run (bug < 0), a stage run (bug < 0, an order with a stage whose
 * output differs from the contract's somewhere: lost) or a bug run. A stage's output equal to the
 * contract's on every element lost nothing: it counts as a correct run. */
typedef struct c1d_power_record {
  int problem;
  c1d_power_dist dist;
  int family;                 /* C1D_POWER_DENSE or C1D_POWER_OPERATOR */
  char variant[40];           /* c1d_power_variant_of the problem's shape */
  int64_t terms;              /* n = (C/G)*K */
  int order;                  /* the correct output, or the bug's base */
  int bug;                    /* bug class, or -1 */
  int size;                   /* index into c1d_power_sizes, or -1 */
  int64_t region_elems;       /* elements the bug changed the intended value of (0 for correct runs) */
  double scale;               /* the unexplained rms error the size multiplies (0 for correct runs) */
  c1d_verdict verdict;
  c1d_region_class cls;
  int called_bug;             /* c1d_verdict_is_bug */
  int located;                /* bug runs: the right region class; stage runs: the right stage */
  int lost;                   /* orders with a stage: the output differs from the contract's (naive) */
  int in_bound;               /* correct runs: inside the bound that proves it correct (self-check) */
  char where[16];             /* the verdict's stage (reduced-precision), "" otherwise */
  char reason[160];           /* the explainer's reason, kept for false alarms and misses only */
} c1d_power_record;

typedef struct c1d_power_results {
  char campaign[32];
  int shard, shards;          /* 0/1 for a whole campaign */
  int torch;                  /* 1 when PyTorch was among the correct outputs */
  int problems;               /* problems run */
  double seconds;             /* wall time of the campaign (summed over merged shards) */
  c1d_power_record *records;
  int64_t count, cap;
} c1d_power_results;

/* Runs shard `shard` of `shards` of camp, appending records to res (zero it first); progress lines go
 * to log (may be NULL). C1D_ERR_NO_MEMORY, C1D_ERR_IO (PyTorch's process or its files), or the status
 * of a failed step, with the detail. */
c1d_status c1d_power_execute(const c1d_power_campaign *camp, int shard, int shards, c1d_power_results *res,
                             FILE *log);

void c1d_power_results_free(c1d_power_results *res);

/* Writes res as a shard file (tab-separated, one record a line, atomically). C1D_ERR_IO on failure. */
c1d_status c1d_power_write(const char *path, const c1d_power_results *res);

/* Reads a shard file and merges it into res (campaign, shard count and torch must agree with what res
 * holds already, and a shard may come only once: seen[shard] is set, seen has res->shards entries,
 * allocated here when *seen is NULL; the caller frees it). C1D_ERR_IO / C1D_ERR_FORMAT naming the file
 * and line. */
c1d_status c1d_power_read(const char *path, c1d_power_results *res, unsigned char **seen);

// --- what it shows -----------------------------------------------------------------------------------

typedef struct c1d_power_cell {
  int64_t runs, called, located;           /* every run */
  int64_t big_runs, big_called, big_located; /* runs whose region holds >= C1D_POWER_MIN_REGION, or global */
  int64_t min_region, max_region;
} c1d_power_cell;

/* Per variant of the operator (c1d_power_variant_of): its correct runs and its bugs at 10x and 30x. */
typedef struct c1d_power_variant_row {
  char name[40];
  int family;
  int64_t correct, alarms, exact_verdicts; /* correct runs; called a bug; fp32-rounding */
  int64_t verdicts[C1D_VERDICT_COUNT];
  int64_t runs10, called10, runs30, located30; /* bug runs with regions >= 32 or global */
} c1d_power_variant_row;

#define C1D_POWER_MAX_VARIANTS 64

/* Sums over the records, per family. Arrays are allocated here; c1d_power_tally_free releases them. */
typedef struct c1d_power_tally {
  int orders, bugs;
  c1d_power_cell *cells;                   /* [family][bug][size] */
  int64_t *correct;                        /* [family][order][dist]: correct runs */
  int64_t *alarms;                         /* [family][order][dist]: of them called a bug */
  int64_t *verdict_by_order;               /* [family][order][verdict]: correct runs */
  int64_t *verdict_by_dist;                /* [family][dist][verdict] */
  int64_t *stage_runs, *stage_named;       /* [order]: stage runs (precision lost), of them named right */
  int64_t *stage_verdicts;                 /* [order][verdict] of the stage runs */
  int64_t correct_runs, false_alarms, out_of_bound, bug_runs, stage_total, stage_named_total;
  int64_t family_correct[C1D_POWER_FAMILY_COUNT], family_alarms[C1D_POWER_FAMILY_COUNT];
  int64_t family_bug_runs[C1D_POWER_FAMILY_COUNT];
  c1d_power_variant_row variants[C1D_POWER_MAX_VARIANTS];
  int variant_count;
} c1d_power_tally;

/* Index helpers of the tally's arrays. */
#define C1D_POWER_CELL(t, fam, bug, size) (&(t)->cells[((fam) * (t)->bugs + (bug)) * C1D_POWER_SIZE_COUNT + (size)])
#define C1D_POWER_OD(t, fam, order, dist) (((fam) * (t)->orders + (order)) * C1D_POWER_DIST_COUNT + (dist))
#define C1D_POWER_OV(t, fam, order, v) (((fam) * (t)->orders + (order)) * C1D_VERDICT_COUNT + (v))
#define C1D_POWER_DV(fam, dist, v) (((fam) * C1D_POWER_DIST_COUNT + (dist)) * C1D_VERDICT_COUNT + (v))

/* C1D_ERR_NO_MEMORY, or C1D_OK and *t. */
c1d_status c1d_power_tally_make(const c1d_power_results *res, c1d_power_tally *t);
void c1d_power_tally_free(c1d_power_tally *t);

/* The criteria of issue 12's "Done when" that the benchmark measures, for one family of problems (its
 * bug classes judged on that family's runs alone), and issue 15's stages. */
typedef struct c1d_power_verdicts {
  int no_false_alarm;       /* no correct run called a bug */
  int detect_10x;           /* >= 95 % at 10x in every class, over runs with regions >= 32 or global */
  int locate_30x;           /* 100 % called a bug with the right region at 30x, same runs */
  int correct_in_bound;     /* the benchmark's self-check: every correct output inside its proof bound */
  int stages_named;         /* every stage run named reduced-precision with its stage (1 when none ran) */
} c1d_power_verdicts;

/* family: C1D_POWER_DENSE, C1D_POWER_OPERATOR, or -1 for both (each judged on its own, both must pass;
 * a family without runs is left out). */
c1d_power_verdicts c1d_power_judge(const c1d_power_tally *t, int family);

/* The tables, per family: detection per class and size, false alarms per order and distribution,
 * verdicts per order and per distribution (ill-conditioned among them); then the operator's variants,
 * the stages named, the criteria, a few misses with their reasons, and the campaign's time. */
void c1d_power_print(FILE *out, const c1d_power_results *res, const c1d_power_tally *t);

#ifdef __cplusplus
}
#endif
#endif
