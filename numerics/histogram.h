/* Histograms with log10-spaced bins, fixed storage (no allocation), for error distributions. */
#ifndef C1D_HISTOGRAM_H
#define C1D_HISTOGRAM_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define C1D_HIST_MAX_BINS 128

typedef struct c1d_log_hist {
  double lo_log10, hi_log10;       /* bin i covers [lo + i*w, lo + (i+1)*w), w = (hi-lo)/bins */
  int bins;
  double edge[C1D_HIST_MAX_BINS + 1]; /* edge[i] = 10^(lo + i*w): a value's bin by comparisons, no log */
  int64_t counts[C1D_HIST_MAX_BINS];
  int64_t zero;                    /* values exactly 0 */
  int64_t below, above;            /* positive values outside [10^lo, 10^hi) */
  int64_t nonfinite;               /* NaN or Inf */
} c1d_log_hist;

/* Sets up an empty histogram; bins is clamped to 1..C1D_HIST_MAX_BINS and hi must exceed lo. */
void c1d_log_hist_init(c1d_log_hist *h, double lo_log10, double hi_log10, int bins);

/* Counts |v|. */
void c1d_log_hist_add(c1d_log_hist *h, double v);

/* The same count, its first estimate of the bin without a division: scale from c1d_log_hist_scale(h)
 * (0 where the edges are out of order, and then as c1d_log_hist_add). For many values of one histogram. */
double c1d_log_hist_scale(const c1d_log_hist *h);
void c1d_log_hist_add_scaled(c1d_log_hist *h, double v, double scale);

/* Adds the counts of src into dst (same bins). */
void c1d_log_hist_merge(c1d_log_hist *dst, const c1d_log_hist *src);

/* Lower edge of bin i, as a value (10^(lo + i*w)). */
double c1d_log_hist_edge(const c1d_log_hist *h, int i);

/* Total values counted. */
int64_t c1d_log_hist_total(const c1d_log_hist *h);

#ifdef __cplusplus
}
#endif
#endif
