/* The mismatch classifier: given a candidate output, the float64 oracle, the magnitudes m and the
 * statistics of rounding models on the same inputs, one verdict with the evidence that decided it.
 *
 * How it decides (BACKGROUND.md has the theory):
 *  1. Non-finite outputs where the oracle is finite: `non-finite`, with where they are.
 *  2. The output precision fingerprint: the low 16 (bf16) or 13 (fp16) mantissa bits of (nearly) every
 *     output zero, where the oracle rounded to float32 does not show it: a reduced-precision store.
 *  3. The bulk of the errors, normalised per element as z = |a - y| / (u32 * m), is compared by its
 *     median and 90th percentile with the same statistics of rounding models run on the same inputs:
 *     float32 accumulation (at most a few times the naive order's error: any order, compensated or
 *     exact), TF32 inputs (between the round-to-nearest and the truncating model), bf16 inputs.
 *     Medians are robust: a bug confined to a region does not move them.
 *  4. Every element is then held to the deterministic bound of the model that fits the bulk
 *     (gamma_n * m for float32; TF32 and bf16 bounds include their input rounding). Elements beyond it
 *     cannot be rounding: a bug, localised when the offending elements are confined to a region.
 *  5. When no model fits the bulk: a bug (global or localised by the elements beyond the float32
 *     bound), or `inconclusive` when every element still lies inside that worst-case bound. */
#ifndef C1D_CLASSIFIER_H
#define C1D_CLASSIFIER_H

#include <stdint.h>

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

/* Median and 90th percentile of z = |a - y| / (u32 * m) over a sample, and relative L2 over it. */
typedef struct c1d_error_stats {
  int available;
  double z50, z90, rel_l2;
} c1d_error_stats;

enum { C1D_MODEL_FP32, C1D_MODEL_TF32_RNA, C1D_MODEL_TF32_TRUNC, C1D_MODEL_BF16_INPUTS, C1D_MODEL_COUNT };
/* "fp32 (naive order)", "tf32 inputs (round to nearest)", ... */
const char *c1d_model_name(int model);

/* The operator's layout, for localisation and bounds. Elements are [N][O][L]. */
typedef struct c1d_layout {
  int64_t N, O, L;
  int64_t pad;              /* (K-1)*D: t below it reads causal zero padding */
  const int64_t *terms_t;   /* summed products per position t (length L) */
} c1d_layout;

typedef struct c1d_classifier_input {
  c1d_layout layout;
  const float *cand;         /* candidate output (N*O*L) */
  const double *ref;         /* float64 oracle */
  const double *mag;         /* m = |b| + sum|w*x| per element */
  c1d_error_stats cand_stats;               /* the candidate on the models' sample */
  c1d_error_stats models[C1D_MODEL_COUNT];  /* each model on the same sample */
  int repeat_checked;        /* 1 when two runs were compared */
  int repeat_identical;      /* their outputs had identical bits */
} c1d_classifier_input;

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
  C1D_REGION_CLASS_COUNT
} c1d_region_class;

/* "none", "everywhere", "left-edge", "right-edge", "last-partial-tile", "channels", "batches",
 * "positions", "tile-blocks", "tile-seams", "scattered". */
const char *c1d_region_class_name(c1d_region_class c);

/* A set of integers as compact ranges, e.g. "0-2,5,31-63" (truncated with "..."). */
#define C1D_RANGES_LEN 96

typedef struct c1d_region {
  int64_t count;                     /* offending elements */
  double fraction;                   /* of all compared elements */
  c1d_region_class cls;
  char kind[48];                     /* "left edge (causal padding)", "last partial tile", ... */
  char n[C1D_RANGES_LEN], o[C1D_RANGES_LEN], t[C1D_RANGES_LEN];
} c1d_region;

typedef struct c1d_explanation {
  c1d_verdict verdict;
  char reason[768];                  /* one sentence in plain words */
  int model;                         /* the model that fits the bulk, or -1 */
  /* Evidence. */
  int64_t count, nonfinite;
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

/* Classifies; returns 0, or -1 if scratch memory cannot be allocated. */
int c1d_classify(const c1d_classifier_input *in, c1d_explanation *out);

/* Statistics of z and relative L2 of cand against ref on the elements idx[0..count). cand may be
 * float (cand32) or double (cand64, the other NULL). Returns 0, or -1 without memory. */
int c1d_error_stats_on_sample(const float *cand32, const double *cand64, const double *ref,
                              const double *mag, const int64_t *idx, int64_t count,
                              c1d_error_stats *out);

/* Writes the ranges of the set bits of flags[0..n) into buf ("0-2,5"), "-" if none. */
void c1d_format_ranges(const unsigned char *flags, int64_t n, char *buf, int size);

#ifdef __cplusplus
}
#endif
#endif
