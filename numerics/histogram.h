/* Histograms with log10-spaced bins, fixed storage (no allocation), for error distributions. */
#ifndef C1D_HISTOGRAM_H
#define C1D_HISTOGRAM_H

#include <math.h>
#include <stdint.h>
#include <string.h>

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

/* A value's bin by one table look-up and one comparison, for many values of one histogram: the table
 * holds, for each range of doubles sharing their exponent and top `bits` mantissa bits, the bin of the
 * range's lowest value; where no range holds two edges, a value's bin is that entry or the next, as the
 * edge above the entry's bin decides. Exactly c1d_log_hist_add's bin (the highest bin whose lower edge is
 * at or below |v|). c1d_log_hist_table_build: 0, or -1 where no such table of at most 2^16 entries
 * exists (edges out of order, too close together, or memory; then add with c1d_log_hist_add_scaled). */
typedef struct c1d_log_hist_table {
  int shift;        /* 52 - mantissa bits kept */
  uint64_t key0;    /* the key (bits >> shift) of edge[0] */
  uint64_t keys;    /* entries, up to the key of edge[bins] */
  unsigned char *bin;
} c1d_log_hist_table;
int c1d_log_hist_table_build(c1d_log_hist_table *t, const c1d_log_hist *h);
void c1d_log_hist_table_free(c1d_log_hist_table *t);

/* Counts |v| where it falls in no bin (not finite, zero, below or above the range) and returns 1; else 0.
 * The first step of every add. */
static inline int c1d_log_hist_count_outside(c1d_log_hist *h, double v) {
  if (!isfinite(v)) {
    h->nonfinite++;
    return 1;
  }
  if (v == 0.0) {
    h->zero++;
    return 1;
  }
  if (v < h->edge[0]) {
    h->below++;
    return 1;
  }
  if (v >= h->edge[h->bins]) {
    h->above++;
    return 1;
  }
  return 0;
}

static inline void c1d_log_hist_add_table(c1d_log_hist *h, const c1d_log_hist_table *t, double v) {
  v = fabs(v);
  if (c1d_log_hist_count_outside(h, v)) return;
  uint64_t bits;
  memcpy(&bits, &v, sizeof bits);
  int i = t->bin[(bits >> t->shift) - t->key0];
  i += v >= h->edge[i + 1]; /* edge[bins] when i is the last bin: above v */
  h->counts[i]++;
}

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
