/* The mismatch classifier: is a candidate output a bug, or rounding? A statistical decision with a stated
 * false-alarm probability, and worst-case bounds as the proof for "certainly a bug".
 *
 * What it is given (the explainer, harness/explain.h, computes it on the very inputs of the run):
 *  - the float64 oracle y, the magnitude m = |b| + sum|w*x| and the number of terms per position;
 *  - the reference noise (numerics/noise.h): the naive order's own float32 error on these inputs, pooled
 *    into a per-element scale sigma (per output channel and position class, never below the local level
 *    of a 32-position segment), with its tails;
 *  - rounding models: deterministic predictions of the error of inputs rounded to TF32 (to nearest away
 *    or even, truncated, mixed), fp16, bf16 or of 3xTF32 split products; the expected truncation bias of
 *    tensor-core accumulation; the sum of squared products; and the float32 sum in an arbitrary order,
 *    each on a fixed sample of elements, and on every element on demand.
 *
 * How it decides:
 *  1. Non-finite outputs: a bug where the oracle is finite and no order could overflow (m <= FLT_MAX);
 *     an Inf where the exact result itself exceeds float32 is the correctly rounded value.
 *  2. An output format fingerprint (the low 16 or 13 mantissa bits of nearly every output zero, where
 *     the oracle's own float32 values do not show it): outputs stored in bf16 or fp16; the residual is
 *     then measured beyond the rounding interval of that format.
 *  3. The explanation: on the sample, each candidate explanation (a model's prediction, float32
 *     accumulation rounded to nearest or truncated as tensor cores do with a fitted scale kappa of the
 *     bias model, optionally an allowance of 2^-22 per product) leaves a residual r = a - y - prediction.
 *     It fits when the median of (r / sigma)^2 is at most F^2 = 6.25 times the naive order's own. The first
 *     fitting explanation in a fixed order (tightest first) explains the bulk.
 *  4. The tests, on every element, with q = r / (F sigma): under "rounding only" the candidate's noise
 *     is at most F times the naive order's, so sum q^2 over any region is at most what the reference
 *     noise gives. Four families share the false-alarm probability alpha (C1D_ALPHA): the whole output;
 *     regions (each batch, output channel, position, 32-position block, tile seam class, 8x32 tile,
 *     32-position row segment, the left and right edges: a gamma law with the reference's mean and
 *     variance of q^2, Bonferroni over every region); counts of |q| beyond 2.5..6 (a Poisson law at an upper bound of the
 *     reference's own tail frequency, or the normal one if larger: scattered elements); counts of isolated
 *     elements (|r| beyond 8 times the rms of its 32-position row segment's others, where r is float32
 *     arithmetic on the inputs as given: stale values, which sit beyond their quiet neighbours); single elements
 *     (beyond the normal quantile at alpha/M and four times the reference's largest). A firing test is a bug,
 *     localised by the elements that carry it; elements beyond the explanation's worst-case bound make
 *     it certain.
 *  5. No explanation fits: a bug, global or localised as the tests find, unless the inputs are
 *     order-sensitive (an arbitrary order's error exceeds the naive order's by more than twice) and the
 *     errors fit that arbitrary order: inconclusive.
 *  6. Every verdict that is not a bug carries a detection limit: the smallest offset on a region of 32
 *     elements, and on every element, that the tests would have caught. */
#ifndef C1D_CLASSIFIER_H
#define C1D_CLASSIFIER_H

#include <stdint.h>

#include "numerics/noise.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum c1d_verdict {
  C1D_VERDICT_FP32_ROUNDING,
  C1D_VERDICT_TF32_INPUTS,
  C1D_VERDICT_REDUCED_PRECISION,
  C1D_VERDICT_BUG_LOCALIZED,
  C1D_VERDICT_BUG_GLOBAL,
  C1D_VERDICT_NON_FINITE,
  C1D_VERDICT_INCONCLUSIVE,
  C1D_VERDICT_COUNT
} c1d_verdict;

/* "fp32-rounding", "tf32-inputs", "reduced-precision", "bug-localized", "bug-global", "non-finite",
 * "inconclusive". */
const char *c1d_verdict_name(c1d_verdict v);
/* 1 for the bug verdicts and non-finite. */
int c1d_verdict_is_bug(c1d_verdict v);

/* The family-wise false-alarm probability of a bug verdict on an output whose errors are rounding
 * only (under the model stated in this header: noise at most F times the naive order's, tails no
 * heavier than the reference's own or a normal law's). */
#define C1D_ALPHA 1e-6
/* How much noisier than the naive order another correct one may be (amplitude): 3xTF32 with its
 * three roundings per product on a float32 accumulator comes to about sqrt(3); 2.5 leaves a margin. */
#define C1D_ORDER_FACTOR 2.5

/* Median and 90th percentile of z = |a - y| / (u32 * m) over a sample, and relative L2 over it. */
typedef struct c1d_error_stats {
  int available;
  double z50, z90, rel_l2;
} c1d_error_stats;

/* The rounding models. The first four keep their indices (reports read them by index). */
enum {
  C1D_MODEL_FP32,             /* exact products, float32 accumulation (the naive order's picture) */
  C1D_MODEL_TF32_RNA,         /* x, w rounded to TF32, ties away (cuDNN) */
  C1D_MODEL_TF32_TRUNC,       /* x, w truncated to TF32 (fp32 registers fed to tensor cores) */
  C1D_MODEL_BF16_INPUTS,      /* x, w rounded to bf16 */
  C1D_MODEL_TF32_RNE,         /* x, w rounded to TF32, ties to even (cuBLAS) */
  C1D_MODEL_FP16_INPUTS,      /* x, w rounded to fp16 */
  C1D_MODEL_TF32_XRNA_WTRUNC, /* x to nearest, w truncated */
  C1D_MODEL_TF32_XTRUNC_WRNA, /* x truncated, w to nearest */
  C1D_MODEL_3XTF32,           /* 3xTF32 split products (big*big + big*small + small*big) */
  C1D_MODEL_BF16_PRODUCTS,    /* each product rounded to bf16 before a float32 sum */
  C1D_MODEL_BF16_WEIGHTS,     /* w rounded to bf16, x as given (fp32 weights used as bf16) */
  C1D_MODEL_PRE_ACT_ROUNDED,  /* with SiLU and bf16/fp16 y: the sum stored in y's type, then SiLU on it in
                                 that type (two operators, as PyTorch's F.silu(conv1d(...)) on bf16) */
  C1D_MODEL_BF16_SUMS,        /* from the bias, each product and each running sum rounded to bf16, taps in
                                 order (PyTorch 1.13's CPU bf16 path without AVX-512 bf16) */
  C1D_MODEL_COUNT
};
/* "fp32 accumulation (naive order)", "tf32 inputs (round to nearest)", ... */
const char *c1d_model_name(int model);
/* "fp32", "tf32_rna", ...: a stable key for reports. */
const char *c1d_model_key(int model);

/* How the accumulation of a fitted explanation rounds. */
typedef enum c1d_accumulation {
  C1D_ACC_NEAREST,   /* float32, round to nearest, some order */
  C1D_ACC_TRUNCATED, /* float32 steps of exact products, truncated (tensor cores): kappa * bias model */
  C1D_ACC_FP16,      /* sums kept in fp16: the naive order's noise times 2^13, growing with n like it */
  C1D_ACC_BF16,      /* sums kept in bf16: times 2^16 */
} c1d_accumulation;

/* Where the offending elements are, as a class that programs compare (the kind text says it in words). */
typedef enum c1d_region_class {
  C1D_REGION_NONE,              /* no offending element */
  C1D_REGION_EVERYWHERE,        /* every batch, nearly every channel, position and tile */
  C1D_REGION_LEFT_EDGE,         /* t < (K-1)*D, the causal padding */
  C1D_REGION_RIGHT_EDGE,        /* the last positions of every row */
  C1D_REGION_LAST_PARTIAL_TILE, /* the positions after the last whole tile of 32 */
  C1D_REGION_CHANNELS,          /* single output channels */
  C1D_REGION_BATCHES,           /* single batches */
  C1D_REGION_POSITIONS,         /* single positions t */
  C1D_REGION_TILE_BLOCKS,       /* tile-aligned blocks (32 positions, 8 channels, or both) */
  C1D_REGION_TILE_SEAMS,        /* one position modulo the tile width of 32 */
  C1D_REGION_SCATTERED,         /* sparse elements with no pattern */
  C1D_REGION_TAP,               /* one tap: errors in proportion to its terms, wherever they fall */
  C1D_REGION_CLASS_COUNT
} c1d_region_class;

/* "none", "everywhere", "left-edge", "right-edge", "last-partial-tile", "channels", "batches",
 * "positions", "tile-blocks", "tile-seams", "scattered", "tap". */
const char *c1d_region_class_name(c1d_region_class c);

/* The explainer's evidence on its fixed sample of elements (position j is element idx[j]). */
typedef struct c1d_model_sample {
  int64_t count;
  const int64_t *idx;
  const double *naive_err;                /* the naive order's float32 error */
  c1d_error_stats stats[C1D_MODEL_COUNT]; /* each model's error statistics on the sample */
} c1d_model_sample;

/* The models' arrays, computed by the explainer on first use and kept: on the sample (doubles, position
 * j is element idx[j]) and on every element (floats). delta is the model's value minus the oracle
 * (never asked for C1D_MODEL_FP32, whose delta is zero); tc_bias the expected tensor-core truncation
 * bias in its two groupings (reference/models.h: padding steps first, live-only steps second, each
 * count or N*O*L long); sq_products the sum of squared products. Each returns NULL when it cannot (out of memory);
 * the classifier then fails with -1 rather than decide on fewer models. */
typedef struct c1d_model_provider {
  void *ctx;
  const double *(*sample_delta)(void *ctx, int model);
  const double *(*sample_tc_bias)(void *ctx, int model);
  const double *(*sample_sq_products)(void *ctx);
  const float *(*delta)(void *ctx, int model);
  const float *(*tc_bias)(void *ctx, int model);
  const float *(*sq_products)(void *ctx);
  /* An arbitrary order's float32 error on the sample (c1d_permuted_fp32_at): for order sensitivity. */
  const double *(*sample_permuted)(void *ctx);
  /* The reference noise of an arbitrary order (a pseudo-random order of the terms) combined with the
   * naive order's (c1d_noise_ref_combine), for order-sensitive inputs. */
  const c1d_noise_ref *(*arbitrary_noise)(void *ctx);
  /* Each tap's terms on the sample: tap k of position j at j*K + k, the sum over o's group of
   * w[o, c, k] x[n, c, t - (K-1-k)D] in float64 (initial states, or 0, before t = 0). NULL for none:
   * no tap is then named. */
  const double *(*sample_taps)(void *ctx);
} c1d_model_provider;

/* The element arrays of the full passes, kept from one output to the next: fresh pages cost a fault and
 * the kernel's zeroing each, on 16 cores as much as the pass itself. Owned by the caller (zeroed with
 * {0}), released with c1d_classifier_scratch_free; one classification at a time uses it. */
#define C1D_SCRATCH_SETS 3 /* the most full passes alive at once */
typedef struct c1d_scratch_set {
  int64_t capacity, seg_capacity; /* elements; 32-position row segments */
  int in_use;
  float *q2;
  double *seg_inv;
  unsigned char *mark, *sign;
} c1d_scratch_set;
typedef struct c1d_classifier_scratch {
  c1d_scratch_set set[C1D_SCRATCH_SETS];
} c1d_classifier_scratch;

void c1d_classifier_scratch_free(c1d_classifier_scratch *s);

typedef struct c1d_classifier_input {
  c1d_layout layout;
  const float *cand;         /* candidate output (N*O*L) */
  const double *ref;         /* float64 oracle */
  const double *mag;         /* m = |b| + sum|w*x| per element */
  const c1d_noise_ref *noise;
  const c1d_model_sample *sample;
  c1d_model_provider models;
  int repeat_checked;        /* 1 when two runs were compared */
  int repeat_identical;      /* their outputs had identical bits */
  c1d_classifier_scratch *scratch; /* NULL: each full pass allocates its own arrays */
} c1d_classifier_input;

/* A set of integers as compact ranges, e.g. "0-2,5,31-63" (truncated with "..."). */
#define C1D_RANGES_LEN 96

typedef struct c1d_region {
  int64_t count;                     /* offending elements */
  double fraction;                   /* of all compared elements */
  c1d_region_class cls;
  char kind[96];                     /* "left edge (causal padding, t < 3)", "channel 7", "tap 3 (...)" */
  char n[C1D_RANGES_LEN], o[C1D_RANGES_LEN], t[C1D_RANGES_LEN];
} c1d_region;

typedef struct c1d_explanation {
  c1d_verdict verdict;
  char reason[1024];                 /* in plain words: what fits, or what fired and where */
  char what[256];                    /* the fitted explanation in words, "" when none fits */
  char where[16];                    /* reduced-precision: "inputs", "products", "accumulation",
                                        "output"; "" otherwise */
  int model;                         /* C1D_MODEL_* that explains the bulk, or -1 */
  int model_alt;                     /* a second model that fits as well (TF32 RNE vs fp16), or -1 */
  c1d_accumulation accumulation;
  double kappa;                      /* scale of the truncation bias model (truncated accumulation) */
  int product_allowance;             /* 1: products with about 22 bits allowed (3xTF32-class) */
  double fit_ratio;                  /* median (r/sigma)^2 over the naive order's, on the sample */
  int order_sensitive;               /* an arbitrary order's error exceeds the naive order's twice */
  double order_ratio;                /* that ratio (medians of squares); 0 when not needed */
  /* The statistical decision. */
  double alpha;                      /* C1D_ALPHA */
  char test[64];                     /* the test that fired ("region: channel 7", ...), "" if none */
  int certain;                       /* elements beyond the worst-case bound: certainly a bug */
  double unexplained_rms;            /* rms of the residual once the explanation is accounted for */
  double reference_rms;              /* rms of the naive order's own error on these inputs */
  double detect_limit_32;            /* smallest offset on any 32-element region the tests catch */
  double detect_limit_all;           /* ... and on every element */
  /* Evidence. */
  int64_t count, nonfinite, exact;
  int64_t beyond_fp32_det, beyond_fp32_prob, beyond_tf32, beyond_model;
  double rel_l2;
  c1d_error_stats cand_stats;
  c1d_error_stats models[C1D_MODEL_COUNT];
  double low16_zero, low13_zero;            /* fraction of outputs with those mantissa bits zero */
  double low16_zero_ref, low13_zero_ref;    /* the same for the oracle rounded to float32 */
  char fingerprint[32];                     /* "fp32", "bf16", "fp16", "10-bit mantissa" */
  c1d_region region;                        /* where the offending (or non-finite) elements are */
  int repeat_checked, repeat_identical;
} c1d_explanation;

/* Classifies; returns 0, or -1 if scratch memory (or a model array) cannot be had. */
int c1d_classify(const c1d_classifier_input *in, c1d_explanation *out);

/* Statistics of z and relative L2 of cand against ref on the elements idx[0..count). cand may be
 * float (cand32) or double (cand64, the other NULL), both indexed like ref. Returns 0, or -1 without
 * memory. */
int c1d_error_stats_on_sample(const float *cand32, const double *cand64, const double *ref,
                              const double *mag, const int64_t *idx, int64_t count,
                              c1d_error_stats *out);

/* Writes the ranges of the set bits of flags[0..n) into buf ("0-2,5"), "-" if none. */
void c1d_format_ranges(const unsigned char *flags, int64_t n, char *buf, int size);

#ifdef __cplusplus
}
#endif
#endif
