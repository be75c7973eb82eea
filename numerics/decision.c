/* The tests on every element; see decision.h. Per stage, two parallel passes give the sums over the
 * unmarked elements: per row segment (rows x segments, each summed by its owner) and per position
 * (fixed blocks of rows, reduced in block order); every family's regions are sums of those. */
#include "numerics/decision.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "numerics/stats.h"

#define ALPHA_TOTAL 1e-6 /* C1D_ALPHA (numerics/classifier.h) */
enum { SEG = 32, TILE_O = 8, ROW_BLOCK = 64 };

typedef enum family {
  FAM_SEGMENT, FAM_TILE, FAM_ROW, FAM_POSITION, FAM_BLOCK, FAM_SEAM, FAM_LEFT, FAM_RIGHT,
  FAM_PARTIAL, FAM_CHANNEL, FAM_BATCH, FAM_COUNT
} family;

static const char *const family_names[FAM_COUNT] = {
    "32-position row segment", "8x32 tile", "row (n, o)", "position", "32-position block",
    "tile seam class", "left edge", "last 32 positions", "last partial tile", "output channel",
    "batch"};

const char *c1d_test_family_name(int f) { return f >= 0 && f < FAM_COUNT ? family_names[f] : "?"; }

static int64_t segs_of(const c1d_layout *lay) { return (lay->L + SEG - 1) / SEG; }

static int64_t family_regions(const c1d_layout *lay, family f) {
  const int64_t segs = segs_of(lay), to = (lay->O + TILE_O - 1) / TILE_O;
  switch (f) {
    case FAM_SEGMENT: return lay->N * lay->O * segs;
    case FAM_TILE: return lay->N * to * segs;
    case FAM_ROW: return lay->N * lay->O;
    case FAM_POSITION: return lay->L;
    case FAM_BLOCK: return segs;
    case FAM_SEAM: return lay->L >= 2 * SEG ? SEG : 0;
    case FAM_LEFT: return lay->pad > 0 && lay->pad < lay->L ? 1 : 0;
    case FAM_RIGHT: return lay->L >= 2 * SEG ? 1 : 0;
    case FAM_PARTIAL: return lay->L > SEG && lay->L % SEG ? 1 : 0;
    case FAM_CHANNEL: return lay->O > 1 ? lay->O : 0;
    case FAM_BATCH: return lay->N > 1 ? lay->N : 0;
    default: return 0;
  }
}

/* The region of family f that element (n, o, t) is in, or -1. */
static int64_t region_of(const c1d_layout *lay, family f, int64_t n, int64_t o, int64_t t) {
  const int64_t segs = segs_of(lay), to = (lay->O + TILE_O - 1) / TILE_O;
  switch (f) {
    case FAM_SEGMENT: return (n * lay->O + o) * segs + t / SEG;
    case FAM_TILE: return (n * to + o / TILE_O) * segs + t / SEG;
    case FAM_ROW: return n * lay->O + o;
    case FAM_POSITION: return t;
    case FAM_BLOCK: return t / SEG;
    case FAM_SEAM: return t % SEG;
    case FAM_LEFT: return t < lay->pad ? 0 : -1;
    case FAM_RIGHT: return t >= lay->L - SEG ? 0 : -1;
    case FAM_PARTIAL: return t >= lay->L / SEG * SEG ? 0 : -1;
    case FAM_CHANNEL: return o;
    case FAM_BATCH: return n;
    default: return -1;
  }
}

/* The stages, finest first (FAM_COUNT ends a stage's list). */
static const family stages[][5] = {
    {FAM_SEGMENT, FAM_COUNT},
    {FAM_TILE, FAM_COUNT},
    {FAM_ROW, FAM_POSITION, FAM_BLOCK, FAM_COUNT},
    {FAM_SEAM, FAM_LEFT, FAM_RIGHT, FAM_PARTIAL, FAM_COUNT},
    {FAM_CHANNEL, FAM_BATCH, FAM_COUNT},
};
enum { N_STAGES = (int)(sizeof stages / sizeof stages[0]) };

static double threshold(const c1d_test_result *tr, int64_t n, double a) {
  return c1d_sum_upper_quantile((double)n, tr->mu, tr->var, a);
}

// --- the sums of one stage ------------------------------------------------------------------------

typedef struct sums {
  double *seg, *pos;      /* rows x segs; L */
  int64_t *seg_n, *pos_n;
  double *blk;            /* row blocks x L: partial position sums */
  int64_t *blk_n;
  double *seg_q, *pos_q, *blk_q; /* the same of the signed q (with signs; else NULL) */
} sums;

static void sums_free(sums *s) {
  free(s->seg), free(s->pos), free(s->seg_n), free(s->pos_n), free(s->blk), free(s->blk_n);
  free(s->seg_q), free(s->pos_q), free(s->blk_q);
}

static int sums_alloc(sums *s, const c1d_layout *lay, int is_signed) {
  const int64_t rows = lay->N * lay->O, segs = segs_of(lay), blocks = (rows + ROW_BLOCK - 1) / ROW_BLOCK;
  memset(s, 0, sizeof *s);
  s->seg = malloc((size_t)(rows * segs) * sizeof *s->seg);
  s->seg_n = malloc((size_t)(rows * segs) * sizeof *s->seg_n);
  s->pos = malloc((size_t)lay->L * sizeof *s->pos);
  s->pos_n = malloc((size_t)lay->L * sizeof *s->pos_n);
  s->blk = malloc((size_t)(blocks * lay->L) * sizeof *s->blk);
  s->blk_n = malloc((size_t)(blocks * lay->L) * sizeof *s->blk_n);
  if (is_signed) {
    s->seg_q = malloc((size_t)(rows * segs) * sizeof *s->seg_q);
    s->pos_q = malloc((size_t)lay->L * sizeof *s->pos_q);
    s->blk_q = malloc((size_t)(blocks * lay->L) * sizeof *s->blk_q);
  }
  if (!s->seg || !s->seg_n || !s->pos || !s->pos_n || !s->blk || !s->blk_n ||
      (is_signed && (!s->seg_q || !s->pos_q || !s->blk_q))) {
    sums_free(s);
    return -1;
  }
  return 0;
}

/* The signed q of element i: sqrt(q2), negative where the residual is. */
static double signed_q(const float *q2, const unsigned char *sign, int64_t i) {
  const double q = sqrt((double)q2[i]);
  /* -q by its sign bit (what negation does), never a branch: a residual's sign is a coin's toss */
  uint64_t u;
  memcpy(&u, &q, sizeof u);
  u ^= (uint64_t)(sign[i] == C1D_SIGN_NEG) << 63;
  double v;
  memcpy(&v, &u, sizeof v);
  return v;
}

/* Elements per row of one task of sums_compute: whole segments. */
enum { SUMS_CHUNK_T = 32 * SEG };

static void sums_compute(sums *s, const c1d_layout *lay, const float *q2, const unsigned char *mark,
                         const unsigned char *rep, const unsigned char *sign) {
  const int64_t rows = lay->N * lay->O, L = lay->L, segs = segs_of(lay);
  const int64_t blocks = (rows + ROW_BLOCK - 1) / ROW_BLOCK, chunks = (L + SUMS_CHUNK_T - 1) / SUMS_CHUNK_T;
  /* The segments' sums and the row blocks' position sums in one pass (one read of the elements, one
   * root each): a task is a block of rows times a chunk of positions, and every sum still adds its
   * elements in the order it did alone (a segment's in t, a position's in rows). */
#pragma omp parallel for schedule(static)
  for (int64_t task = 0; task < blocks * chunks; task++) {
    const int64_t b = task / chunks, t0 = (task % chunks) * SUMS_CHUNK_T;
    const int64_t t1 = t0 + SUMS_CHUNK_T < L ? t0 + SUMS_CHUNK_T : L;
    double *p = s->blk + b * L, *pq = sign ? s->blk_q + b * L : NULL;
    int64_t *pn = s->blk_n + b * L;
    for (int64_t t = t0; t < t1; t++) p[t] = 0, pn[t] = 0;
    if (pq)
      for (int64_t t = t0; t < t1; t++) pq[t] = 0;
    for (int64_t row = b * ROW_BLOCK; row < rows && row < (b + 1) * ROW_BLOCK; row++)
      for (int64_t sg = t0 / SEG; sg * SEG < t1; sg++) {
        double a = 0, qs = 0;
        int64_t c = 0;
        for (int64_t t = sg * SEG; t < L && t < sg * SEG + SEG; t++) {
          const int64_t i = row * L + t;
          if (q2[i] < 0 || mark[i] || rep[i]) continue;
          a += q2[i];
          p[t] += q2[i];
          if (sign) {
            const double q = signed_q(q2, sign, i);
            qs += q;
            pq[t] += q;
          }
          c++;
          pn[t]++;
        }
        s->seg[row * segs + sg] = a;
        s->seg_n[row * segs + sg] = c;
        if (sign) s->seg_q[row * segs + sg] = qs;
      }
  }
#pragma omp parallel for schedule(static)
  for (int64_t t = 0; t < L; t++) {
    double a = 0, q = 0;
    int64_t c = 0;
    for (int64_t b = 0; b < blocks; b++) a += s->blk[b * L + t], c += s->blk_n[b * L + t];
    if (sign)
      for (int64_t b = 0; b < blocks; b++) q += s->blk_q[b * L + t];
    s->pos[t] = a;
    s->pos_n[t] = c;
    if (sign) s->pos_q[t] = q;
  }
}

/* The sum of q^2, the count and (with signed sums, else 0) the sum of the signed q of region g of family
 * f, from the stage's sums. */
static void region_sum(const sums *s, const c1d_layout *lay, family f, int64_t g, double *sum, int64_t *cnt,
                       double *qsum) {
  const int64_t segs = segs_of(lay), O = lay->O, L = lay->L, to = (O + TILE_O - 1) / TILE_O;
  double a = 0, q = 0;
  int64_t c = 0;
  const int sg_q = s->seg_q != NULL;
#define SEG_ADD(k) (a += s->seg[k], c += s->seg_n[k], q += sg_q ? s->seg_q[k] : 0.0)
#define POS_ADD(t) (a += s->pos[t], c += s->pos_n[t], q += sg_q ? s->pos_q[t] : 0.0)
  switch (f) {
    case FAM_SEGMENT: SEG_ADD(g); break;
    case FAM_TILE: {
      const int64_t n = g / (to * segs), tb = (g / segs) % to, sg = g % segs;
      for (int64_t o = tb * TILE_O; o < O && o < tb * TILE_O + TILE_O; o++) SEG_ADD((n * O + o) * segs + sg);
      break;
    }
    case FAM_ROW:
      for (int64_t sg = 0; sg < segs; sg++) SEG_ADD(g * segs + sg);
      break;
    case FAM_CHANNEL:
      for (int64_t n = 0; n < lay->N; n++)
        for (int64_t sg = 0; sg < segs; sg++) SEG_ADD((n * O + g) * segs + sg);
      break;
    case FAM_BATCH:
      for (int64_t o = 0; o < O; o++)
        for (int64_t sg = 0; sg < segs; sg++) SEG_ADD((g * O + o) * segs + sg);
      break;
    case FAM_POSITION: POS_ADD(g); break;
    case FAM_BLOCK:
      for (int64_t t = g * SEG; t < L && t < g * SEG + SEG; t++) POS_ADD(t);
      break;
    case FAM_SEAM:
      for (int64_t t = g; t < L; t += SEG) POS_ADD(t);
      break;
    default: /* the edges: one region each */
      for (int64_t t = 0; t < L; t++)
        if (region_of(lay, f, 0, 0, t) == g) POS_ADD(t);
  }
#undef SEG_ADD
#undef POS_ADD
  *sum = a;
  *cnt = c;
  *qsum = q;
}

// --- the tests ------------------------------------------------------------------------------------

/* Single elements: q^2 beyond the normal quantile at a/M (for the null law's variance) and four times
 * the reference's largest (another order's largest error falls on other elements, whose own spread the
 * pooled scale does not see; seen up to twice the naive order's on small n in the power campaign). */
static int64_t test_elements(const c1d_layout *lay, const c1d_noise_ref *nr, const float *q2,
                             unsigned char *mark, c1d_test_result *tr, double a) {
  const int64_t M = lay->N * lay->O * lay->L;
  const double zq = c1d_normal_upper_quantile(0.5 * a / (double)(M > 0 ? M : 1));
  double limit = zq * zq * tr->mu;
  if (4.0 * nr->max_sq > limit) limit = 4.0 * nr->max_sq;
  int64_t hits = 0, added = 0;
#pragma omp parallel for schedule(static) reduction(+ : hits, added)
  for (int64_t i = 0; i < M; i++)
    if (q2[i] > limit) {
      added += !mark[i];
      mark[i] = 1;
      hits++;
    }
  tr->fired_elements = hits > 0;
  return added;
}

/* Counts of |q| beyond each level against the Poisson law at the reference's own frequency there (or
 * the normal law's, if larger); marks the elements beyond the highest level that fires. */
static int64_t test_counts(const c1d_layout *lay, const c1d_noise_ref *nr, const float *q2,
                           unsigned char *mark, c1d_test_result *tr, double a /* per level */) {
  const int64_t M = lay->N * lay->O * lay->L;
  int64_t over[C1D_NOISE_TAILS] = {0}, used = 0;
  double lv[C1D_NOISE_TAILS];
  for (int k = 0; k < C1D_NOISE_TAILS; k++) lv[k] = c1d_noise_tail_t[k] * c1d_noise_tail_t[k];
#pragma omp parallel for schedule(static) reduction(+ : over[:C1D_NOISE_TAILS], used)
  for (int64_t i = 0; i < M; i++) {
    if (q2[i] < 0 || mark[i] || nr->repeat[i]) continue;
    used++;
    for (int k = 0; k < C1D_NOISE_TAILS; k++) over[k] += q2[i] > lv[k];
  }
  tr->count_level = -1;
  const int trace = getenv("C1D_TRACE_MARKS") != NULL; /* see numerics/classifier.c's trace_marks */
  for (int k = 0; k < C1D_NOISE_TAILS; k++) {
    double p = nr->tail[k];
    const double pn = c1d_normal_tail2(c1d_noise_tail_t[k] / sqrt(tr->mu));
    if (pn > p) p = pn;
    const double limit = c1d_poisson_upper_quantile((double)used * p, a);
    if (over[k] > 0 && (double)over[k] >= limit) tr->count_level = k;
    if (trace)
      fprintf(stderr, "trace: count beyond %.3g sigma: %lld of %lld, null frequency %.3g (the reference's %.3g, "
              "the normal law's %.3g), limit %.1f\n", c1d_noise_tail_t[k], (long long)over[k], (long long)used, p,
              nr->tail[k], pn, limit);
  }
  if (tr->count_level < 0) return 0;
  tr->fired_counts = 1;
  const double top = lv[tr->count_level];
  int64_t added = 0;
#pragma omp parallel for schedule(static) reduction(+ : added)
  for (int64_t i = 0; i < M; i++)
    if (q2[i] > top) {
      added += !mark[i];
      mark[i] = 1;
    }
  return added;
}

/* Isolated elements (noise.h's c1d_iso_row): a stale value or a stray write sits far beyond its
 * neighbours where rounding left them quiet. Rounding in any order, at any scale (the test measures q
 * against the candidate's own neighbours and its own mean), puts there at most ISO_ORDER_MARGIN times
 * the reference's own frequency (its upper bound; a Poisson law): other orders' frequencies differ from
 * the naive order's (beyond 8: 0 to 1.33 times it, over seven orders and three problems; beyond 6 a
 * random order's was 1.3 times, which at 67 M outputs a test without margin would call a bug). Besides,
 * more than ISO_FRACTION_MIN of the elements: real libraries' scattered heavier tails (tensor cores,
 * ties) reached 1 in 10 000 at 67 M outputs, and the classifier reports scattered marks up to 1 in 5000
 * as tails. Marks the elements beyond the highest level that fires. */
#define ISO_ORDER_MARGIN 3.0
#define ISO_FRACTION_MIN 4e-4

static int test_isolated(const c1d_layout *lay, const c1d_noise_ref *nr, const float *q2, unsigned char *mark,
                         c1d_test_result *tr, double a) {
  const int64_t rows = lay->N * lay->O, L = lay->L, M = rows * L;
  double sum = 0.0;
  int64_t cnt = 0;
#pragma omp parallel for schedule(static) reduction(+ : sum, cnt)
  for (int64_t i = 0; i < M; i++)
    if (q2[i] >= 0 && !mark[i] && !nr->repeat[i]) sum += q2[i], cnt++;
  if (cnt == 0) return 0;
  const double floor = sum / (double)cnt;
  unsigned char *skip = malloc((size_t)M);
  if (!skip) return -1;
  int64_t over[C1D_ISO_LEVELS] = {0}, used = 0;
#pragma omp parallel for schedule(static) reduction(+ : over[:C1D_ISO_LEVELS], used)
  for (int64_t row = 0; row < rows; row++) {
    for (int64_t t = 0; t < L; t++) skip[row * L + t] = mark[row * L + t] | nr->repeat[row * L + t];
    c1d_iso_row(q2 + row * L, skip + row * L, L, floor, over, &used, NULL, 0);
  }
  tr->iso_level = -1;
  const int trace = getenv("C1D_TRACE_MARKS") != NULL;
  for (int k = 0; k < C1D_ISO_LEVELS; k++) {
    const double limit = c1d_poisson_upper_quantile((double)used * ISO_ORDER_MARGIN * nr->iso_tail[k], a);
    if (over[k] > 0 && (double)over[k] >= limit && (double)over[k] > ISO_FRACTION_MIN * (double)used)
      tr->iso_level = k;
    if (trace)
      fprintf(stderr, "trace: isolated beyond %.3g times the neighbours: %lld of %lld, null frequency %.3g "
              "(%g times the reference's), limit %.1f\n", c1d_iso_t[k], (long long)over[k], (long long)used,
              ISO_ORDER_MARGIN * nr->iso_tail[k], ISO_ORDER_MARGIN, limit);
  }
  if (tr->iso_level >= 0) {
    tr->fired_isolated = 1;
    /* skip is the marks before this test: marking here changes no other element's count */
#pragma omp parallel for schedule(static)
    for (int64_t row = 0; row < rows; row++) {
      int64_t ignored[C1D_ISO_LEVELS] = {0}, ignored_used = 0;
      c1d_iso_row(q2 + row * L, skip + row * L, L, floor, ignored, &ignored_used, mark + row * L, tr->iso_level);
    }
  }
  free(skip);
  return 0;
}

/* An offset in a region: the signed q of its elements, self-normalised (t = sum q / sqrt(sum q^2), at
 * most sqrt(count)), beyond the normal quantile, with a mean of at least OFFSET_MEAN_Q (the naive order's
 * whole noise at F = 2.5: no rounding, in any order, leaves a mean error of one sigma over a region, while
 * a tiny mean over a whole channel of millions of elements is no bug). Marks the elements of the offset's
 * sign beyond half that mean. */
#define OFFSET_MEAN_Q 0.4

/* One stage: every region of its families on the unmarked elements; in the regions that fire, marks
 * the elements whose q^2 exceeds four times the null mean (or, for an offset, those above). s holds the
 * sums over the unmarked elements (stale: computed here first); *added: the elements it marked. */
static int test_stage(const c1d_layout *lay, const family *fams, const float *q2, unsigned char *mark,
                      const unsigned char *rep, const unsigned char *sign, sums *s, int stale, c1d_test_result *tr,
                      int64_t *added) {
  *added = 0;
  if (stale) sums_compute(s, lay, q2, mark, rep, sign);
  unsigned char *fire[FAM_COUNT] = {0}; /* 1: too large; 2, 3: an offset, positive or negative (+4: strong) */
  int any = 0, failed = 0;
  int64_t stage_offsets = 0;
  for (int k = 0; k < 5 && fams[k] != FAM_COUNT; k++) {
    const family f = fams[k];
    const int64_t R = family_regions(lay, f);
    if (R == 0) continue;
    fire[f] = calloc((size_t)R, 1);
    if (!fire[f]) {
      failed = 1;
      break;
    }
    int64_t fired = 0, offsets = 0;
#pragma omp parallel for schedule(dynamic, 64) reduction(+ : fired, offsets)
    for (int64_t g = 0; g < R; g++) {
      double sum, qsum;
      int64_t cnt;
      region_sum(s, lay, f, g, &sum, &cnt, &qsum);
      if (cnt < 8) continue; /* single elements are tested on their own */
      if (sum > c1d_sum_upper_quantile_z((double)cnt, tr->mu, tr->var, tr->z_region)) {
        fire[f][g] = 1;
        fired++;
      } else if (sign && sum > 0 && fabs(qsum) >= OFFSET_MEAN_Q * (double)cnt &&
                 fabs(qsum) > tr->z_offset * sqrt(sum)) {
        fire[f][g] = qsum > 0 ? 2 : 3;
        fired++;
        offsets++;
      }
    }
    if (fired && tr->first_family < 0) tr->first_family = f;
    tr->regions_fired += fired;
    tr->offsets_fired += offsets;
    stage_offsets += offsets;
    any |= fired > 0;
  }
  if (!failed && any) {
    const float level = (float)(4.0 * tr->mu), offset_level = (float)(0.25 * OFFSET_MEAN_Q * OFFSET_MEAN_Q);
    const int64_t rows = lay->N * lay->O, L = lay->L;
    /* An offset region with elements of its sign beyond the regions' level (4 in bit 2) marks those
     * alone: a region that holds a bug in part (a channel across a bad batch) then leaves the rest of
     * its elements unmarked. Otherwise (an offset too small for that level) every element of its sign
     * beyond half the offset test's mean. */
    if (stage_offsets)
#pragma omp parallel for schedule(static)
      for (int64_t row = 0; row < rows; row++) {
        const int64_t n = row / lay->O, o = row % lay->O;
        for (int64_t t = 0; t < L; t++) {
          const int64_t i = row * L + t;
          if (mark[i] || !(q2[i] > level)) continue;
          for (int k = 0; k < 5 && fams[k] != FAM_COUNT; k++) {
            const family f = fams[k];
            if (!fire[f]) continue;
            const int64_t g = region_of(lay, f, n, o, t);
            if (g < 0 || (fire[f][g] & 3) < 2 || ((fire[f][g] & 3) == 3) != (sign[i] == C1D_SIGN_NEG)) continue;
#pragma omp atomic update
            fire[f][g] |= 4;
          }
        }
      }
    int64_t marked_here = 0;
#pragma omp parallel for schedule(static) reduction(+ : marked_here)
    for (int64_t row = 0; row < rows; row++) {
      const int64_t n = row / lay->O, o = row % lay->O;
      for (int64_t t = 0; t < L; t++) {
        const int64_t i = row * L + t;
        if (mark[i] || !(q2[i] > offset_level)) continue;
        for (int k = 0; k < 5 && fams[k] != FAM_COUNT; k++) {
          const family f = fams[k];
          if (!fire[f]) continue;
          const int64_t g = region_of(lay, f, n, o, t);
          if (g < 0 || !fire[f][g]) continue;
          const int kind = fire[f][g] & 3, strong = (fire[f][g] & 4) != 0;
          if (kind == 1 ? q2[i] > level : (kind == 3) == (sign[i] == C1D_SIGN_NEG) && (!strong || q2[i] > level)) {
            mark[i] = 1;
            marked_here++;
            break;
          }
        }
      }
    }
    *added = marked_here;
  }
  for (int f = 0; f < FAM_COUNT; f++) free(fire[f]);
  return failed ? -1 : 0;
}

/* The whole output, on what the regions left: marks everywhere when it still fires. */
static void test_global(const c1d_layout *lay, const float *q2, unsigned char *mark, const sums *s,
                        c1d_test_result *tr, double a) {
  const int64_t M = lay->N * lay->O * lay->L;
  double sum = 0;
  int64_t cnt = 0;
  for (int64_t t = 0; t < lay->L; t++) sum += s->pos[t], cnt += s->pos_n[t];
  if (cnt < 8 || sum <= threshold(tr, cnt, a)) return;
  tr->fired_global = 1;
  const float level = (float)(4.0 * tr->mu);
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < M; i++)
    if (q2[i] > level) mark[i] = 1;
}

int c1d_run_tests(const c1d_layout *lay, const c1d_noise_ref *nr, const float *q2, const unsigned char *sign,
                  int isolated, unsigned char *mark, c1d_test_result *tr) {
  memset(tr, 0, sizeof *tr);
  tr->first_family = -1;
  tr->mu = nr->mean_sq > 0 ? nr->mean_sq : 1e-300;
  tr->var = nr->mean_q4 - nr->mean_sq * nr->mean_sq;
  if (tr->var < 2.0 * tr->mu * tr->mu) tr->var = 2.0 * tr->mu * tr->mu;
  int64_t regions = 0;
  for (int f = 0; f < FAM_COUNT; f++) regions += family_regions(lay, (family)f);
  const double quarter = 0.25 * ALPHA_TOTAL;
  /* with offsets: each region tested twice, at half the share each (the offset two-sided) */
  tr->a_region = quarter / (double)(regions > 0 ? regions : 1) / (sign ? 2.0 : 1.0);
  tr->z_region = c1d_normal_upper_quantile(tr->a_region);
  tr->z_offset = c1d_normal_upper_quantile(0.5 * tr->a_region);
  test_elements(lay, nr, q2, mark, tr, quarter);
  /* the counts' share: each level of both count tests alike */
  const double a_count = quarter / (double)(C1D_NOISE_TAILS + (isolated ? C1D_ISO_LEVELS : 0));
  test_counts(lay, nr, q2, mark, tr, a_count);
  if (isolated && test_isolated(lay, nr, q2, mark, tr, a_count) != 0) return -1;
  sums s;
  if (sums_alloc(&s, lay, sign != NULL) != 0) return -1;
  /* The sums over the unmarked elements are made again only after a stage marked some (a correct
   * output's stages mark nothing: one pass over the elements serves them all). */
  int stale = 1;
  for (int k = 0; k < N_STAGES; k++) {
    int64_t added;
    if (test_stage(lay, stages[k], q2, mark, nr->repeat, sign, &s, stale, tr, &added) != 0) {
      sums_free(&s);
      return -1;
    }
    stale = added > 0;
  }
  if (stale) sums_compute(&s, lay, q2, mark, nr->repeat, sign);
  test_global(lay, q2, mark, &s, tr, quarter);
  sums_free(&s);
  return 0;
}

void c1d_detection_limits(const c1d_layout *lay, const float *q2, const double *seg_inv,
                          const c1d_test_result *tr, double *lim32, double *lim_all) {
  const int64_t rows = lay->N * lay->O, L = lay->L, segs = segs_of(lay);
  const double t32 = c1d_sum_upper_quantile_z((double)SEG, tr->mu, tr->var, tr->z_region);
  double worst = 0.0, sum_q2 = 0.0, sum_inv = 0.0;
  int64_t count = 0;
  /* per row, added in row order below: the totals do not depend on the number of threads */
  double *row_sums = malloc((size_t)(rows > 0 ? 2 * rows : 1) * sizeof *row_sums);
  const int have_sums = row_sums != NULL;
#pragma omp parallel for schedule(static) reduction(max : worst) reduction(+ : count)
  for (int64_t row = 0; row < rows; row++) {
    double row_q2 = 0.0, row_inv = 0.0;
    for (int64_t sg = 0; sg < segs; sg++) {
      double sq = 0;
      const double inv = seg_inv[row * segs + sg];
      int64_t c = 0;
      for (int64_t t = sg * SEG; t < L && t < sg * SEG + SEG; t++) {
        const int64_t i = row * L + t;
        if (q2[i] < 0) continue;
        sq += q2[i];
        c++;
      }
      row_q2 += sq;
      row_inv += inv;
      count += c;
      if (c < SEG || !(inv > 0)) continue;
      const double d = sqrt(fmax(t32 - sq, 0.0) / inv);
      if (d > worst) worst = d;
    }
    if (row_sums) row_sums[2 * row] = row_q2, row_sums[2 * row + 1] = row_inv;
  }
  for (int64_t row = 0; have_sums && row < rows; row++) sum_q2 += row_sums[2 * row], sum_inv += row_sums[2 * row + 1];
  free(row_sums);
  *lim32 = worst;
  const double tall = threshold(tr, count > 0 ? count : 1, 0.25 * ALPHA_TOTAL);
  /* without memory for the row sums, no limit over every element is claimed */
  *lim_all = have_sums && sum_inv > 0 ? sqrt(fmax(tall - sum_q2, 0.0) / sum_inv) : 0.0;
}
