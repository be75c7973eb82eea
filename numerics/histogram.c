/* Log10-spaced histograms with fixed storage. */
#include "numerics/histogram.h"

#include <math.h>
#include <string.h>

void c1d_log_hist_init(c1d_log_hist *h, double lo_log10, double hi_log10, int bins) {
  memset(h, 0, sizeof *h);
  if (bins < 1) bins = 1;
  if (bins > C1D_HIST_MAX_BINS) bins = C1D_HIST_MAX_BINS;
  if (!(hi_log10 > lo_log10)) hi_log10 = lo_log10 + 1.0;
  h->lo_log10 = lo_log10;
  h->hi_log10 = hi_log10;
  h->bins = bins;
}

void c1d_log_hist_add(c1d_log_hist *h, double v) {
  v = fabs(v);
  if (!isfinite(v)) {
    h->nonfinite++;
    return;
  }
  if (v == 0.0) {
    h->zero++;
    return;
  }
  double pos = (log10(v) - h->lo_log10) / (h->hi_log10 - h->lo_log10) * h->bins;
  if (pos < 0.0)
    h->below++;
  else if (pos >= h->bins)
    h->above++;
  else
    h->counts[(int)pos]++;
}

void c1d_log_hist_merge(c1d_log_hist *dst, const c1d_log_hist *src) {
  for (int i = 0; i < dst->bins; i++) dst->counts[i] += src->counts[i];
  dst->zero += src->zero;
  dst->below += src->below;
  dst->above += src->above;
  dst->nonfinite += src->nonfinite;
}

double c1d_log_hist_edge(const c1d_log_hist *h, int i) {
  return pow(10.0, h->lo_log10 + (h->hi_log10 - h->lo_log10) * i / h->bins);
}

int64_t c1d_log_hist_total(const c1d_log_hist *h) {
  int64_t total = h->zero + h->below + h->above + h->nonfinite;
  for (int i = 0; i < h->bins; i++) total += h->counts[i];
  return total;
}
