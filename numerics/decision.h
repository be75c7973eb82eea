/* The classifier's tests on every element (numerics/classifier.h, step 4): given q = residual /
 * (F sigma) for each element, do the errors exceed what rounding can produce, and where?
 *
 * The null law of q^2 is the reference noise's own (its mean and variance, never lighter-tailed than a
 * normal law's). The false-alarm probability C1D_ALPHA is shared by four families: single elements,
 * counts (of |q| beyond 2.5..6, and with `isolated` of elements beyond 8 times their neighbours'
 * rms), regions, and the whole output. Regions are tested in stages from the
 * finest to the coarsest (row segments of 32 positions; 8x32 tiles; rows, positions and 32-position
 * blocks; tile seam classes and the edges; output channels and batches), each stage on what the earlier
 * ones left unmarked, so that a bug is named by the smallest regions that carry it. Sums are reduced in
 * a fixed order: results do not depend on the thread count. */
#ifndef C1D_DECISION_H
#define C1D_DECISION_H

#include <stdint.h>

#include "numerics/noise.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The sign of an element's residual: zero (or not finite, or not compared), positive, negative. */
enum { C1D_SIGN_NONE = 0, C1D_SIGN_POS = 1, C1D_SIGN_NEG = 2 };

typedef struct c1d_test_result {
  int fired_elements;   /* some single element beyond the element threshold */
  int fired_counts;     /* too many elements beyond a level: count_level is the highest that fired */
  int count_level;
  int fired_isolated;   /* too many isolated elements (noise.h's c1d_iso_row): iso_level the highest */
  int iso_level;
  int first_family;     /* the finest region family that fired, or -1 */
  int64_t regions_fired;
  int fired_global;     /* the whole output, after the regions */
  double a_region;      /* false-alarm probability per region (Bonferroni) */
  double z_region;      /* its normal quantile */
  double mu, var;       /* the null law of q^2 */
  int64_t offsets_fired; /* of regions_fired, those whose signed q showed an offset */
  double z_offset;      /* the offsets' quantile (two-sided at a_region) */
  int fired_signs;      /* the errors beyond signs_level sigma point one way (an offset): classifier.c */
  double signs_level;
} c1d_test_result;

/* Runs every test on q2 (N*O*L values, negative where an element is not compared), marking the
 * offending elements in mark (N*O*L flags; elements already marked count as offending and are left out
 * of the sums). Repeats (nr->repeat) are tested as single elements but left out of every count and
 * sum: the same computation again is no new evidence. isolated: also count isolated elements (only where
 * q is float32 arithmetic's, whose tail shape the reference's is). With sign (each element's residual: C1D_SIGN_*;
 * NULL for none), every region is also tested for an offset: errors of one sign on average, which no
 * rounding gives. Returns 0, or -1 without memory. */
int c1d_run_tests(const c1d_layout *lay, const c1d_noise_ref *nr, const float *q2, const unsigned char *sign,
                  int isolated, unsigned char *mark, c1d_test_result *out);

/* "32-position row segment", "8x32 tile", "row (n, o)", "position", ... */
const char *c1d_test_family_name(int family);

/* The smallest constant offset the tests would catch on the worst 32-position row segment (lim32)
 * and on every element (lim_all). seg_inv: per 32-position row segment (rows x segments), the sum of
 * 1 / (F sigma)^2 over its compared elements (q2 >= 0) in t order. */
void c1d_detection_limits(const c1d_layout *lay, const float *q2, const double *seg_inv,
                          const c1d_test_result *tr, double *lim32, double *lim_all);

#ifdef __cplusplus
}
#endif
#endif
