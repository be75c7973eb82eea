/* The reference noise; see noise.h. Three passes: pool and segment levels, sigma, the statistics of
 * g / sigma. Sums are reduced in a fixed order (per row, then rows in order), so the result does not
 * depend on the number of threads. */
#include "numerics/noise.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "numerics/bounds.h"

const double c1d_noise_tail_t[C1D_NOISE_TAILS] = {2.5, 3.0, 3.5, 4.0, 5.0, 6.0};
const double c1d_iso_t[C1D_ISO_LEVELS] = {8.0};

enum { SEGMENT = 32, MIN_POOL = 32 };

double c1d_noise_unit(double mag, int64_t terms) {
  return C1D_U_FP32 * mag + 0x1p-150 * sqrt((double)terms + 1.0);
}

/* The number of taps that read causal padding at position t: 0 in the interior, up to K at the start. */
static int64_t position_class(const c1d_layout *lay, int64_t t) {
  const int64_t missing = lay->pad - t;
  if (missing <= 0 || lay->D <= 0) return 0;
  const int64_t k0 = (missing + lay->D - 1) / lay->D;
  return k0 < lay->K ? k0 : lay->K;
}

static int64_t terms_at(const c1d_layout *lay, int64_t t) { return lay->terms_t ? lay->terms_t[t] : 1; }

static int mark_repeats(const c1d_layout *lay, const double *ref, const double *mag, c1d_noise_ref *out);
static int noise_stats(const c1d_layout *lay, const double *ref, const float *naive, c1d_noise_ref *out);
static int iso_stats(const c1d_layout *lay, const double *ref, const double *mag, const float *naive,
                     double floor, c1d_noise_ref *out);

int c1d_noise_ref_build(const c1d_layout *lay, const double *ref, const double *mag, const float *naive,
                        c1d_noise_ref *out) {
  memset(out, 0, sizeof *out);
  out->layout = *lay;
  const int64_t N = lay->N, O = lay->O, L = lay->L, M = N * O * L;
  const int64_t classes = lay->K + 1, segs = (L + SEGMENT - 1) / SEGMENT;
  double *pool_sum = calloc((size_t)(O * classes), sizeof *pool_sum);
  int64_t *pool_cnt = calloc((size_t)(O * classes), sizeof *pool_cnt);
  double *row_sum = calloc((size_t)(N * O * classes), sizeof *row_sum);
  int64_t *row_cnt = calloc((size_t)(N * O * classes), sizeof *row_cnt);
  float *seg_level = malloc((size_t)(N * O * segs) * sizeof *seg_level);
  out->sigma = malloc((size_t)M * sizeof *out->sigma);
  out->repeat = calloc((size_t)(M > 0 ? M : 1), 1);
  if (!out->repeat || !pool_sum || !pool_cnt || !row_sum || !row_cnt || !seg_level || !out->sigma) {
    free(pool_sum), free(pool_cnt), free(row_sum), free(row_cnt), free(seg_level);
    c1d_noise_ref_free(out);
    return -1;
  }
  // Pass 1: per row and class sums of z^2 (reduced in row order below), per segment levels.
#pragma omp parallel for schedule(static)
  for (int64_t row = 0; row < N * O; row++) {
    const int64_t base = row * L;
    for (int64_t sg = 0; sg < segs; sg++) {
      double s = 0.0;
      int64_t c = 0;
      for (int64_t t = sg * SEGMENT; t < L && t < (sg + 1) * SEGMENT; t++) {
        const int64_t i = base + t;
        const double g = (double)naive[i] - ref[i];
        if (!isfinite(g)) continue;
        const double z = g / c1d_noise_unit(mag[i], terms_at(lay, t));
        s += z * z;
        c++;
        const int64_t k = row * classes + position_class(lay, t);
        row_sum[k] += z * z;
        row_cnt[k]++;
      }
      seg_level[row * segs + sg] = c ? (float)(s / (double)c) : 0.0f;
    }
  }
  double class_sum[64 + 1] = {0}, all_sum = 0.0;
  int64_t class_cnt[64 + 1] = {0}, all_cnt = 0;
  for (int64_t row = 0; row < N * O; row++)
    for (int64_t k = 0; k < classes; k++) {
      const int64_t o = row % O, j = row * classes + k;
      pool_sum[o * classes + k] += row_sum[j];
      pool_cnt[o * classes + k] += row_cnt[j];
      if (k <= 64) class_sum[k] += row_sum[j], class_cnt[k] += row_cnt[j];
      all_sum += row_sum[j];
      all_cnt += row_cnt[j];
    }
  free(row_sum);
  free(row_cnt);
  const double all_level = all_cnt ? all_sum / (double)all_cnt : 0.0;
  // Pass 2: sigma per element.
#pragma omp parallel for schedule(static)
  for (int64_t row = 0; row < N * O; row++) {
    const int64_t o = row % O;
    for (int64_t t = 0; t < L; t++) {
      const int64_t i = row * L + t, k = position_class(lay, t);
      if (!isfinite(ref[i])) {
        out->sigma[i] = 0.0f;
        continue;
      }
      double level = all_level;
      if (pool_cnt[o * classes + k] >= MIN_POOL)
        level = pool_sum[o * classes + k] / (double)pool_cnt[o * classes + k];
      else if (k <= 64 && class_cnt[k] >= MIN_POOL)
        level = class_sum[k] / (double)class_cnt[k];
      const double seg = seg_level[row * segs + t / SEGMENT];
      if (seg > level) level = seg;
      const int64_t n_terms = terms_at(lay, t);
      double sigma = c1d_noise_unit(mag[i], n_terms) * sqrt(level);
      const double floor_out = 0.58 * C1D_U_FP32 * fabs(ref[i]); /* ulp/sqrt(12) of the output */
      const double floor_sub = 0x1p-150 * sqrt((double)n_terms + 1.0);
      if (sigma < floor_out) sigma = floor_out;
      if (sigma < floor_sub) sigma = floor_sub;
      if (c1d_act_underflows(lay, i, ref[i]) && sigma < fabs(ref[i])) sigma = fabs(ref[i]);
      out->sigma[i] = (float)sigma;
    }
  }
  free(pool_sum);
  free(pool_cnt);
  free(seg_level);
  if (noise_stats(lay, ref, naive, out) != 0 || iso_stats(lay, ref, mag, naive, all_level, out) != 0 ||
      mark_repeats(lay, ref, mag, out) != 0) {
    c1d_noise_ref_free(out);
    return -1;
  }
  return 0;
}

/* The statistics of g / sigma for one realisation (g = out - y), per row then in row order, into r. */
static int noise_stats(const c1d_layout *lay, const double *ref, const float *naive, c1d_noise_ref *out) {
  const int64_t N = lay->N, O = lay->O, L = lay->L, M = N * O * L;
  const int nt = C1D_NOISE_TAILS;
  double *rs = calloc((size_t)(N * O) * (size_t)(5 + nt), sizeof *rs);
  if (!rs) return -1;
#pragma omp parallel for schedule(static)
  for (int64_t row = 0; row < N * O; row++) {
    double *r = rs + row * (5 + nt); /* count, sum q2, sum q4, max q2, sum g^2, tails..., */
    for (int64_t t = 0; t < L; t++) {
      const int64_t i = row * L + t;
      if (!isfinite(ref[i])) continue;
      const double g = (double)naive[i] - ref[i];
      if (!isfinite(g)) continue;
      const double q = g / (double)out->sigma[i], q2 = q * q;
      r[0] += 1.0;
      r[1] += q2;
      r[2] += q2 * q2;
      if (q2 > r[3]) r[3] = q2;
      r[4] += g * g;
      for (int k = 0; k < nt; k++) r[5 + k] += fabs(q) > c1d_noise_tail_t[k];
    }
  }
  double cnt = 0, s2 = 0, s4 = 0, mx = 0, sg2 = 0, tails[C1D_NOISE_TAILS] = {0}, sig2 = 0;
  int64_t nonfinite = 0, zero = 0;
  for (int64_t row = 0; row < N * O; row++) {
    const double *r = rs + row * (5 + nt);
    cnt += r[0], s2 += r[1], s4 += r[2], sg2 += r[4];
    if (r[3] > mx) mx = r[3];
    for (int k = 0; k < nt; k++) tails[k] += r[5 + k];
  }
  free(rs);
  for (int64_t i = 0; i < M; i++) {
    if (!isfinite(ref[i])) continue;
    if (!isfinite(naive[i])) nonfinite++;
    else if ((double)naive[i] == ref[i]) zero++;
    sig2 += (double)out->sigma[i] * out->sigma[i];
  }
  out->count = (int64_t)cnt;
  out->naive_nonfinite = nonfinite;
  out->zero = zero;
  out->mean_sq = cnt ? s2 / cnt : 0.0;
  out->mean_q4 = cnt ? s4 / cnt : 0.0;
  out->max_sq = mx;
  for (int k = 0; k < nt; k++) out->tail[k] = cnt ? (tails[k] + 3.0) / cnt : 0.0;
  out->rms_abs = cnt ? sqrt(sg2 / cnt) : 0.0;
  out->sigma_rms = cnt ? sqrt(sig2 / cnt) : 0.0;
  return 0;
}

void c1d_iso_row(const float *e2, const unsigned char *skip, int64_t L, double floor, int64_t *over,
                 int64_t *used, unsigned char *mark, int mark_level) {
  for (int64_t t0 = 0; t0 < L; t0 += SEGMENT) {
    const int64_t t1 = t0 + SEGMENT < L ? t0 + SEGMENT : L;
    double s = 0.0;
    int64_t c = 0;
    for (int64_t t = t0; t < t1; t++)
      if (e2[t] >= 0 && !(skip && skip[t])) s += e2[t], c++;
    if (c < 9) continue;
    for (int64_t t = t0; t < t1; t++) {
      if (e2[t] < 0 || (skip && skip[t])) continue;
      double level = (s - e2[t]) / (double)(c - 1);
      if (level < floor) level = floor;
      (*used)++;
      for (int k = 0; k < C1D_ISO_LEVELS; k++) over[k] += e2[t] > c1d_iso_t[k] * c1d_iso_t[k] * level;
      if (mark && e2[t] > c1d_iso_t[mark_level] * c1d_iso_t[mark_level] * level) mark[t] = 1;
    }
  }
}

/* The reference's isolated-element frequencies (noise.h's iso_tail): g in units of c1d_noise_unit, floor
 * its mean square over the output (pass 1's all_level). */
static int iso_stats(const c1d_layout *lay, const double *ref, const double *mag, const float *naive,
                     double floor, c1d_noise_ref *out) {
  const int64_t rows = lay->N * lay->O, L = lay->L;
  int64_t *row_over = calloc((size_t)(rows > 0 ? rows : 1) * (C1D_ISO_LEVELS + 1), sizeof *row_over);
  int failed = !row_over;
  if (!failed) {
#pragma omp parallel
    {
      float *e2 = malloc((size_t)(L > 0 ? L : 1) * sizeof *e2);
      if (!e2) {
#pragma omp atomic write
        failed = 1;
      }
#pragma omp for schedule(static)
      for (int64_t row = 0; row < rows; row++) {
        if (!e2) continue;
        for (int64_t t = 0; t < L; t++) {
          const int64_t i = row * L + t;
          const double z = ((double)naive[i] - ref[i]) / c1d_noise_unit(mag[i], terms_at(lay, t));
          e2[t] = isfinite(z) ? (float)(z * z) : -1.0f;
        }
        int64_t *o = row_over + row * (C1D_ISO_LEVELS + 1);
        c1d_iso_row(e2, NULL, L, floor, o, o + C1D_ISO_LEVELS, NULL, 0);
      }
      free(e2);
    }
    int64_t over[C1D_ISO_LEVELS] = {0}, used = 0;
    for (int64_t row = 0; row < rows; row++) {
      for (int k = 0; k < C1D_ISO_LEVELS; k++) over[k] += row_over[row * (C1D_ISO_LEVELS + 1) + k];
      used += row_over[row * (C1D_ISO_LEVELS + 1) + C1D_ISO_LEVELS];
    }
    for (int k = 0; k < C1D_ISO_LEVELS; k++) out->iso_tail[k] = used ? ((double)over[k] + 3.0) / (double)used : 1.0;
  }
  free(row_over);
  return failed ? -1 : 0;
}

int c1d_noise_ref_combine(const c1d_layout *lay, const double *ref, const double *mag, const float *naive,
                          const c1d_noise_ref *a, const float *other, c1d_noise_ref *out) {
  c1d_noise_ref b, sa;
  if (c1d_noise_ref_build(lay, ref, mag, other, &b) != 0) return -1;
  const int64_t M = lay->N * lay->O * lay->L;
  memset(&sa, 0, sizeof sa);
  *out = b; /* b's sigma and repeats, then sigma raised to a's where larger */
  for (int64_t i = 0; i < M; i++)
    if (a->sigma[i] > out->sigma[i]) out->sigma[i] = a->sigma[i];
  sa.layout = *lay;
  sa.sigma = out->sigma;
  if (noise_stats(lay, ref, naive, &sa) != 0 || noise_stats(lay, ref, other, out) != 0) {
    c1d_noise_ref_free(out);
    return -1;
  }
  /* The larger of the two realisations' statistics under the common sigma. */
  out->mean_sq = fmax(out->mean_sq, sa.mean_sq);
  out->mean_q4 = fmax(out->mean_q4, sa.mean_q4);
  out->max_sq = fmax(out->max_sq, sa.max_sq);
  for (int k = 0; k < C1D_NOISE_TAILS; k++) out->tail[k] = fmax(out->tail[k], sa.tail[k]);
  /* (isolated elements are counted in units of c1d_noise_unit, not sigma: a's own stand) */
  for (int k = 0; k < C1D_ISO_LEVELS; k++) out->iso_tail[k] = fmax(out->iso_tail[k], a->iso_tail[k]);
  out->rms_abs = a->rms_abs;
  return 0;
}

void c1d_noise_ref_free(c1d_noise_ref *r) {
  free(r->sigma);
  free(r->repeat);
  r->sigma = NULL;
  r->repeat = NULL;
}

static uint64_t key_of(double y, double m) {
  uint64_t a, b;
  memcpy(&a, &y, sizeof a);
  memcpy(&b, &m, sizeof b);
  uint64_t z = a * 0x9e3779b97f4a7c15ull ^ (b + 0x632be59bd9b4e019ull);
  z = (z ^ (z >> 31)) * 0xbf58476d1ce4e5b9ull;
  return z ^ (z >> 29);
}

/* Marks the repeats (see noise.h): per row an open-addressing table of (y, m) seen so far. */
static int mark_repeats(const c1d_layout *lay, const double *ref, const double *mag, c1d_noise_ref *out) {
  const int64_t O = lay->O, L = lay->L, rows = lay->N * O;
  int64_t cap = 16;
  while (cap < 2 * L) cap *= 2;
  int failed = 0;
  int64_t repeats = 0;
#pragma omp parallel reduction(+ : repeats)
  {
    int64_t *slot = malloc((size_t)cap * sizeof *slot);
    if (!slot) {
#pragma omp atomic write
      failed = 1;
    }
#pragma omp for schedule(static)
    for (int64_t row = 0; row < rows; row++) {
      if (!slot) continue;
      for (int64_t j = 0; j < cap; j++) slot[j] = -1;
      for (int64_t t = 0; t < L; t++) {
        const int64_t i = row * L + t;
        const double y = ref[i], m = mag[i];
        if (row >= O && ref[i - O * L] == y && mag[i - O * L] == m) {
          out->repeat[i] = 1; /* the batch before computed the same */
          repeats++;
          continue;
        }
        int64_t h = (int64_t)(key_of(y, m) & (uint64_t)(cap - 1));
        for (;;) {
          if (slot[h] < 0) {
            slot[h] = i;
            break;
          }
          if (ref[slot[h]] == y && mag[slot[h]] == m) {
            out->repeat[i] = 1;
            repeats++;
            break;
          }
          h = (h + 1) & (cap - 1);
        }
      }
    }
    free(slot);
  }
  out->repeats = repeats;
  return failed ? -1 : 0;
}
