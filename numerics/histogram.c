/* Log10-spaced histograms with fixed storage. */
#include "numerics/histogram.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void c1d_log_hist_init(c1d_log_hist *h, double lo_log10, double hi_log10, int bins) {
  memset(h, 0, sizeof *h);
  if (bins < 1) bins = 1;
  if (bins > C1D_HIST_MAX_BINS) bins = C1D_HIST_MAX_BINS;
  if (!(hi_log10 > lo_log10)) hi_log10 = lo_log10 + 1.0;
  h->lo_log10 = lo_log10;
  h->hi_log10 = hi_log10;
  h->bins = bins;
  for (int i = 0; i <= bins; i++) h->edge[i] = pow(10.0, lo_log10 + (hi_log10 - lo_log10) * i / bins);
}

double c1d_log_hist_scale(const c1d_log_hist *h) {
  for (int i = 0; i < h->bins; i++)
    if (!(h->edge[i] <= h->edge[i + 1])) return 0.0; /* edges out of order: the estimate could decide */
  return h->bins / (h->hi_log10 - h->lo_log10);
}

void c1d_log_hist_add(c1d_log_hist *h, double v) { c1d_log_hist_add_scaled(h, v, 0.0); }

void c1d_log_hist_add_scaled(c1d_log_hist *h, double v, double scale) {
  v = fabs(v);
  if (c1d_log_hist_count_outside(h, v)) return;
  /* log10(v) from v's binary exponent and mantissa (within 0.03 of it), then the edges decide: with
   * edges in order, the bin of v whatever the estimate, which may then save its division (scale). */
  uint64_t bits;
  memcpy(&bits, &v, sizeof bits);
  const double e = (double)((int64_t)(bits >> 52) - 1023); /* v = (1 + f) 2^e, f in [0, 1) (subnormals: far below) */
  const uint64_t one_f = (bits & 0x000fffffffffffffull) | 0x3ff0000000000000ull;
  double mant;
  memcpy(&mant, &one_f, sizeof mant);
  const double log10_v = (e + mant - 1.0) * 0.30102999566398120;
  int i = scale > 0.0 ? (int)((log10_v - h->lo_log10) * scale)
                      : (int)((log10_v - h->lo_log10) / (h->hi_log10 - h->lo_log10) * h->bins);
  if (i < 0) i = 0;
  if (i > h->bins - 1) i = h->bins - 1;
  while (i > 0 && v < h->edge[i]) i--;
  while (i < h->bins - 1 && v >= h->edge[i + 1]) i++;
  h->counts[i]++;
}

static double from_bits(uint64_t b) {
  double v;
  memcpy(&v, &b, sizeof v);
  return v;
}

int c1d_log_hist_table_build(c1d_log_hist_table *t, const c1d_log_hist *h) {
  memset(t, 0, sizeof *t);
  const int bins = h->bins;
  if (bins < 1 || bins > 255 || c1d_log_hist_scale(h) == 0.0) return -1;
  if (!(h->edge[0] > 0.0) || !isfinite(h->edge[bins])) return -1;
  uint64_t b0, b1;
  memcpy(&b0, &h->edge[0], sizeof b0);
  memcpy(&b1, &h->edge[bins], sizeof b1);
  for (int m = 4; m <= 12; m++) { /* the fewest mantissa bits that part every two edges */
    const int shift = 52 - m;
    const uint64_t k0 = b0 >> shift, keys = (b1 >> shift) - k0 + 1;
    if (keys > (1u << 16)) return -1;
    unsigned char *bin = malloc((size_t)keys);
    if (!bin) return -1;
    int j = 0, ok = 1;
    for (uint64_t k = 0; k < keys && ok; k++) {
      const double lo = from_bits((k0 + k) << shift), next = from_bits((k0 + k + 1) << shift);
      while (j < bins - 1 && h->edge[j + 1] <= lo) j++; /* the bin of lo (0 below edge[0]) */
      bin[k] = (unsigned char)j;
      if (j + 2 <= bins - 1 && h->edge[j + 2] < next) ok = 0; /* two edges above lo in this range */
    }
    if (ok) {
      t->shift = shift, t->key0 = k0, t->keys = keys, t->bin = bin;
      return 0;
    }
    free(bin);
  }
  return -1;
}

void c1d_log_hist_table_free(c1d_log_hist_table *t) {
  free(t->bin);
  memset(t, 0, sizeof *t);
}

void c1d_log_hist_merge(c1d_log_hist *dst, const c1d_log_hist *src) {
  for (int i = 0; i < dst->bins; i++) dst->counts[i] += src->counts[i];
  dst->zero += src->zero;
  dst->below += src->below;
  dst->above += src->above;
  dst->nonfinite += src->nonfinite;
}

double c1d_log_hist_edge(const c1d_log_hist *h, int i) {
  return i >= 0 && i <= h->bins ? h->edge[i] : pow(10.0, h->lo_log10 + (h->hi_log10 - h->lo_log10) * i / h->bins);
}

int64_t c1d_log_hist_total(const c1d_log_hist *h) {
  int64_t total = h->zero + h->below + h->above + h->nonfinite;
  for (int i = 0; i < h->bins; i++) total += h->counts[i];
  return total;
}
