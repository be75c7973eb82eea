/* The reference noise of the explainer: how large float32 rounding is on these very inputs, element by
 * element, measured on the naive order's own output (its error g = naive - y against the oracle).
 *
 * One element's rounding error is a sum of many small roundings, scaled by the sizes of its partial sums:
 * u*m (m = |b| + sum|w*x|) measures that size, plus the absolute error of subnormal arithmetic. Normalised
 * by it, z = g / (u*m + eta) is nearly identically distributed within an output channel at one position
 * class (the interior, or each number of causal-padding taps at the left edge): its mean square there is
 * the pool's level. Inputs with local structure (a stretch of constant or one-signed x) can make one
 * stretch noisier than its pool, so each element's level is also never below the mean square of its own
 * 32-position row segment. sigma = (u*m + eta) * sqrt(level), and never below the float32 rounding of the
 * output itself (ulp/sqrt(12)). The reference's own statistics of g / sigma (mean square, fourth moment,
 * largest value, tail frequencies) calibrate the classifier's tests. */
#ifndef C1D_NOISE_H
#define C1D_NOISE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The operator's layout, for localisation, pools and bounds. Elements are [N][O][L]. */
typedef struct c1d_layout {
  int64_t N, O, L;
  int64_t K, D;             /* taps and dilation: the position classes of the left edge */
  int64_t pad;              /* (K-1)*D: t below it reads causal zero padding */
  const int64_t *terms_t;   /* summed products per position t (length L) */
  int out_dtype;            /* the outputs' element type (reference/problem.h's c1d_dtype): 0 fp32 */
  const float *act_v;       /* with an activation (SiLU): the exact sum before it per output; else NULL */
  int64_t groups;           /* G: output channels come in G groups of O/G (0 or 1: dense) */
  const float *bias;        /* b (length O) where the problem has a bias, else NULL: its own roundings */
} c1d_layout;

/* SiLU's float32 evaluation, beyond its sum's error, is exact within rounding except where it
 * underflows: where exp(-v) overflows (v < -88.7) or y is subnormal (flushed), any implementation may
 * return 0. True there (the output's whole value is then within the noise). */
static inline int c1d_act_underflows(const c1d_layout *lay, int64_t i, double y) {
  return lay->act_v && (lay->act_v[i] < -80.0f || (y < 0x1p-120 && y > -0x1p-120));
}

/* The |g / sigma| levels whose frequencies the reference records (the classifier's count tests). */
#define C1D_NOISE_TAILS 6
extern const double c1d_noise_tail_t[C1D_NOISE_TAILS];

/* Isolated elements: |error| beyond T times its neighbours' rms (the other elements of its 32-position
 * row segment, never below the whole output's rms), at these T. Such an element is one a bug wrote
 * (a stale value) where rounding left its neighbours quiet; rounding puts few there at any scale. */
#define C1D_ISO_LEVELS 1
extern const double c1d_iso_t[C1D_ISO_LEVELS];

typedef struct c1d_noise_ref {
  c1d_layout layout;
  float *sigma;              /* per element (owned); 0 where the oracle is not finite */
  /* Repeats (owned): 1 where the element's exact value and magnitude equal, bit for bit, an earlier
   * element's of the same row or the element of the batch before at the same channel and position:
   * the same computation again (constant or repeated inputs). Its rounding error is the same as that
   * element's in any fixed order, so the tests of sums count it once. */
  unsigned char *repeat;
  int64_t repeats;
  int64_t count;             /* elements with a finite oracle and a finite naive output */
  int64_t naive_nonfinite;   /* the naive order overflowed although the oracle is finite */
  double mean_sq, mean_q4;   /* mean of (g/sigma)^2 and (g/sigma)^4 */
  double max_sq;             /* largest (g/sigma)^2 */
  double tail[C1D_NOISE_TAILS]; /* fraction of elements with |g/sigma| > c1d_noise_tail_t[k], as an
                                   upper bound: (count + 3) / elements (3: a zero count's 95% bound) */
  double iso_tail[C1D_ISO_LEVELS]; /* the fraction of elements isolated beyond c1d_iso_t[k] (g in units of
                                      c1d_noise_unit, not sigma: sigma holds its own segment's level, which
                                      would hide the element), as an upper bound like tail */
  double rms_abs;            /* rms of g */
  double sigma_rms;          /* rms of sigma */
  int64_t zero;              /* elements where the naive order is exact (g == 0) */
} c1d_noise_ref;

/* The unit of one element's rounding noise: u32 * m + eta * sqrt(terms + 1), eta = 2^-150 (half the
 * subnormal spacing: one rounding's absolute error below 2^-126). */
double c1d_noise_unit(double mag, int64_t terms);

/* Builds the reference from the oracle y, m and the naive order's float32 output. Returns 0, or -1
 * without memory (nothing to free then). */
int c1d_noise_ref_build(const c1d_layout *lay, const double *ref, const double *mag, const float *naive,
                        c1d_noise_ref *out);

/* The reference of two realisations (the naive order's, a; another order's output, other): each
 * element's sigma the larger of theirs, each statistic the larger of the two realisations' under that
 * sigma (for inputs where orders differ: an arbitrary order as the reference). Returns 0, or -1 without
 * memory. */
int c1d_noise_ref_combine(const c1d_layout *lay, const double *ref, const double *mag, const float *naive,
                          const c1d_noise_ref *a, const float *other, c1d_noise_ref *out);

/* The isolated elements of one row (numerics/decision.c's test and the reference share it): e2 holds
 * the row's L squared errors in a unit constant along each 32-position segment (negative: not
 * compared); elements with skip[t] set (skip may be NULL) are left out. An element counts where its
 * segment has at least 8 others and e2 exceeds T^2 times the larger of their mean and floor (the
 * output's mean). Adds the counts beyond each c1d_iso_t[k] to over[k] and the elements that could
 * count to *used; with mark, sets mark[t] where e2 is beyond c1d_iso_t[mark_level]. */
void c1d_iso_row(const float *e2, const unsigned char *skip, int64_t L, double floor, int64_t *over,
                 int64_t *used, unsigned char *mark, int mark_level);

/* Frees what build allocated; a zeroed reference is fine. */
void c1d_noise_ref_free(c1d_noise_ref *r);

#ifdef __cplusplus
}
#endif
#endif
