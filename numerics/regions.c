/* Naming the marked set; see regions.h. The checks go from the most specific shape to the least, each
 * against the marginals (which n, o, t carry a mark) and the tiles' fill. */
#include "numerics/regions.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "numerics/stats.h"

const char *c1d_region_class_name(c1d_region_class c) {
  static const char *const names[C1D_REGION_CLASS_COUNT] = {
      "none",    "everywhere", "left-edge",   "right-edge", "last-partial-tile", "channels",
      "batches", "positions",  "tile-blocks", "tile-seams", "scattered", "tap"};
  return (unsigned)c < C1D_REGION_CLASS_COUNT ? names[c] : "?";
}

void c1d_format_ranges(const unsigned char *flags, int64_t n, char *buf, int size) {
  int len = 0;
  buf[0] = '\0';
  for (int64_t i = 0; i < n; i++) {
    if (!flags[i]) continue;
    int64_t j = i;
    while (j + 1 < n && flags[j + 1]) j++;
    char part[48];
    if (j > i)
      snprintf(part, sizeof part, "%s%lld-%lld", len ? "," : "", (long long)i, (long long)j);
    else
      snprintf(part, sizeof part, "%s%lld", len ? "," : "", (long long)i);
    if (len + (int)strlen(part) + 4 >= size) {
      snprintf(buf + len, (size_t)(size - len), ",...");
      return;
    }
    len += snprintf(buf + len, (size_t)(size - len), "%s", part);
    i = j;
  }
  if (!len) snprintf(buf, (size_t)size, "-");
}

static int64_t flag_count(const unsigned char *f, int64_t n) {
  int64_t c = 0;
  for (int64_t i = 0; i < n; i++) c += f[i] != 0;
  return c;
}

static int64_t first_flag(const unsigned char *f, int64_t n) {
  for (int64_t i = 0; i < n; i++)
    if (f[i]) return i;
  return -1;
}

/* At least two flagged t, all with one residue modulo the tile width. */
static int one_residue(const unsigned char *f, int64_t n) {
  int64_t residue = -1, count = 0;
  for (int64_t i = 0; i < n; i++) {
    if (!f[i]) continue;
    if (residue < 0) residue = i % C1D_TILE_T;
    if (i % C1D_TILE_T != residue) return 0;
    count++;
  }
  return count >= 2;
}

/* Runs of flags that all start on a multiple of `tile` and end on one (or at n), not covering all. */
static int tile_aligned(const unsigned char *f, int64_t n, int64_t tile) {
  if (n < 2 * tile) return 0;
  for (int64_t i = 0; i < n; i++) {
    if (!f[i]) continue;
    int64_t j = i;
    while (j + 1 < n && f[j + 1]) j++;
    if (i % tile != 0 || ((j + 1) % tile != 0 && j + 1 != n)) return 0;
    i = j;
  }
  return flag_count(f, n) < n;
}

static void name_list(char *kind, size_t size, const char *one, const char *many, const char *ranges,
                      int64_t count) {
  snprintf(kind, size, "%s %.*s", count == 1 ? one : many, (int)(size - strlen(many) - 2), ranges);
}

/* The marked channels as whole groups of a grouped convolution: few of the G groups (at most
 * max(1, G/16)), their channels mostly marked, their elements densely. Names them in kind. */
static int group_region(const c1d_layout *lay, const unsigned char *fo, int64_t bad_o, int64_t bad_n,
                        int64_t count, char *kind, size_t size) {
  const int64_t G = lay->groups, O = lay->O;
  if (G <= 1 || O % G != 0 || O / G < 2 || bad_o == 0) return 0;
  const int64_t og = O / G;
  unsigned char *fg = calloc((size_t)G, 1);
  if (!fg) return 0;
  for (int64_t o = 0; o < O; o++)
    if (fo[o]) fg[o / og] = 1;
  const int64_t bad_g = flag_count(fg, G);
  int found = bad_g < G && bad_g <= (G / 16 > 1 ? G / 16 : 1) && 2 * bad_o > bad_g * og &&
              (double)count >= 0.5 * (double)(bad_o * bad_n * lay->L);
  if (found) {
    char groups[C1D_RANGES_LEN];
    c1d_format_ranges(fg, G, groups, sizeof groups);
    snprintf(kind, size, "%s %.32s of %d channels", bad_g == 1 ? "group" : "groups", groups, (int)og);
  }
  free(fg);
  return found;
}

/* A bug in a few parts (batches, groups, channels or positions) beside stray marks elsewhere: a bug moves
 * the fit, and the fit's own tails then mark an element or two in the other parts, which the rules below,
 * counting every marked part, read as scattered. The parts that hold at least `share` of their
 * `per_part` elements' marks, at most `most` of the `parts` and not all, holding all but STRAYS_MAX of
 * the marks: flagged in dense, their number returned (0: none). Tails of a correct output (a mark in
 * thousands) never fill a third, or a quarter, of a part. */
#define DENSE_PART 0.33
#define STRAYS_MAX 0.05
static int64_t dense_parts(const int64_t *marks_in, int64_t parts, int64_t per_part, double share, int64_t most,
                           int64_t count, unsigned char *dense) {
  int64_t n_dense = 0, inside = 0;
  for (int64_t i = 0; i < parts; i++) {
    dense[i] = (double)marks_in[i] >= share * (double)per_part;
    n_dense += dense[i];
    inside += dense[i] ? marks_in[i] : 0;
  }
  const int ok = n_dense > 0 && n_dense < parts && n_dense <= most && (double)(count - inside) <= STRAYS_MAX * (double)count;
  return ok ? n_dense : 0;
}

/* dense_parts over the G groups of O/G channels (o_marks summed into g_marks), at most max(1, G/16). */
static int64_t dense_groups(const int64_t *o_marks, int64_t O, int64_t G, int64_t per_channel, int64_t count,
                            int64_t *g_marks, unsigned char *dense) {
  const int64_t og = O / G;
  memset(g_marks, 0, (size_t)G * sizeof *g_marks);
  for (int64_t o = 0; o < O; o++) g_marks[o / og] += o_marks[o];
  return dense_parts(g_marks, G, og * per_channel, DENSE_PART, G / 16 > 1 ? G / 16 : 1, count, dense);
}

/* dense_parts over the positions: reaching a quarter of the rows or more (as the positions rule asks), at
 * most max(4, L/64), and not a tile seam's pattern (two or more on one residue: tile seams). */
static int64_t dominant_positions(const int64_t *t_rows, int64_t L, int64_t rows, int64_t count,
                                  unsigned char *heavy) {
  const int64_t k = dense_parts(t_rows, L, rows, 0.25, L / 64 > 4 ? L / 64 : 4, count, heavy);
  return k > 0 && !one_residue(heavy, L) ? k : 0;
}

int64_t c1d_count_marks(const unsigned char *mark, int64_t M) {
  int64_t count = 0;
#pragma omp parallel for schedule(static) reduction(+ : count)
  for (int64_t i = 0; i < M; i++) count += mark[i] != 0;
  return count;
}

/* The first set flag of f[from, to), or to: eight flags at a time, as marks are few. */
static int64_t next_flag(const unsigned char *f, int64_t from, int64_t to) {
  int64_t i = from;
  for (; i < to && (i & 7); i++)
    if (f[i]) return i;
  for (; i + 8 <= to; i += 8) {
    uint64_t word;
    memcpy(&word, f + i, sizeof word);
    if (word) break;
  }
  for (; i < to; i++)
    if (f[i]) return i;
  return to;
}

int c1d_describe_marks(const unsigned char *mark, const c1d_layout *lay, int64_t total, c1d_region *r) {
  const int64_t N = lay->N, O = lay->O, L = lay->L;
  const int64_t tiles_o = (O + C1D_TILE_O - 1) / C1D_TILE_O, tiles_t = (L + C1D_TILE_T - 1) / C1D_TILE_T;
  const int64_t tiles = N * tiles_o * tiles_t;
  unsigned char *fn = calloc((size_t)N, 1), *fo = calloc((size_t)O, 1), *ft = calloc((size_t)L, 1);
  int64_t *tile_fill = calloc((size_t)tiles, sizeof *tile_fill);
  int64_t *t_rows = calloc((size_t)L, sizeof *t_rows); /* marked elements per position */
  int64_t *n_marks = calloc((size_t)N, sizeof *n_marks), *o_marks = calloc((size_t)O, sizeof *o_marks);
  const int64_t G = lay->groups > 1 && O % lay->groups == 0 ? lay->groups : 1;
  int64_t *g_marks = calloc((size_t)G, sizeof *g_marks);
  /* the dense parts of whichever stray-tolerant rule is tried: batches, groups, channels or positions */
  const int64_t most_parts = N > O ? (N > L ? N : L) : (O > L ? O : L);
  unsigned char *dense = calloc((size_t)most_parts, 1);
  if (!fn || !fo || !ft || !tile_fill || !t_rows || !n_marks || !o_marks || !g_marks || !dense) {
    free(fn), free(fo), free(ft), free(tile_fill), free(t_rows), free(n_marks), free(o_marks), free(g_marks);
    free(dense);
    return -1;
  }
  int64_t count = 0;
  for (int64_t n = 0; n < N; n++)
    for (int64_t o = 0; o < O; o++) {
      const int64_t row = (n * O + o) * L;
      for (int64_t t = next_flag(mark, row, row + L) - row; t < L; t = next_flag(mark, row + t + 1, row + L) - row) {
        count++;
        fn[n] = fo[o] = ft[t] = 1;
        t_rows[t]++;
        n_marks[n]++;
        o_marks[o]++;
        tile_fill[(n * tiles_o + o / C1D_TILE_O) * tiles_t + t / C1D_TILE_T]++;
      }
    }
  memset(r, 0, sizeof *r);
  r->count = count;
  r->fraction = total ? (double)count / (double)total : 0.0;
  c1d_format_ranges(fn, N, r->n, sizeof r->n);
  c1d_format_ranges(fo, O, r->o, sizeof r->o);
  c1d_format_ranges(ft, L, r->t, sizeof r->t);
  const int64_t bad_n = flag_count(fn, N), bad_o = flag_count(fo, O), bad_t = flag_count(ft, L);
  const int64_t t_first = first_flag(ft, L), full_tiles_end = L / C1D_TILE_T * C1D_TILE_T;
  /* Tiles touched, and how full they are on average (a tile's capacity at the tensor's edges). */
  int64_t touched = 0, filled = 0, capacity = 0;
  for (int64_t n = 0; n < N; n++)
    for (int64_t to = 0; to < tiles_o; to++)
      for (int64_t tt = 0; tt < tiles_t; tt++) {
        const int64_t f = tile_fill[(n * tiles_o + to) * tiles_t + tt];
        if (!f) continue;
        const int64_t ho = O - to * C1D_TILE_O < C1D_TILE_O ? O - to * C1D_TILE_O : C1D_TILE_O;
        const int64_t ht = L - tt * C1D_TILE_T < C1D_TILE_T ? L - tt * C1D_TILE_T : C1D_TILE_T;
        touched++;
        filled += f;
        capacity += ho * ht;
      }
  const double tile_fraction = tiles ? (double)touched / (double)tiles : 0.0;
  const double tile_fill_mean = capacity ? (double)filled / (double)capacity : 0.0;
  /* Within the marked positions, the share of rows (n, o) they reach. */
  int64_t reach = 0;
  for (int64_t t = 0; t < L; t++) reach += t_rows[t];
  const double row_reach = bad_t ? (double)reach / ((double)bad_t * (double)(N * O)) : 0.0;

  c1d_region_class cls = C1D_REGION_SCATTERED;
  int64_t k_dense = 0; /* how many parts are dense (the rules that allow strays) */
  char kind[sizeof r->kind];
  snprintf(kind, sizeof kind, "scattered elements");
  if (count == 0) {
    cls = C1D_REGION_NONE;
    snprintf(kind, sizeof kind, "none");
  } else if (r->fraction >= 0.05 && bad_n == N && bad_o >= 0.9 * O && bad_t >= 0.9 * L &&
             tile_fraction >= 0.9) {
    cls = C1D_REGION_EVERYWHERE;
    snprintf(kind, sizeof kind, "everywhere");
  } else if (lay->pad > 0 && t_first >= 0 && flag_count(ft, lay->pad < L ? lay->pad : L) == bad_t) {
    cls = C1D_REGION_LEFT_EDGE;
    snprintf(kind, sizeof kind, "the left edge (causal padding, t < %lld)", (long long)lay->pad);
  } else if (L % C1D_TILE_T && full_tiles_end > 0 && t_first >= full_tiles_end) {
    cls = C1D_REGION_LAST_PARTIAL_TILE;
    snprintf(kind, sizeof kind, "the last partial tile (t >= %lld)", (long long)full_tiles_end);
  } else if (L >= 2 * C1D_TILE_T && t_first >= L / 2 && bad_t * 2 >= L - t_first && row_reach >= 0.5) {
    cls = C1D_REGION_RIGHT_EDGE;
    snprintf(kind, sizeof kind, "the right edge (t >= %lld)", (long long)t_first);
  } else if (group_region(lay, fo, bad_o, bad_n, count, kind, sizeof kind)) {
    cls = C1D_REGION_CHANNELS;
  } else if (bad_o < O && bad_o <= (O / 16 > 1 ? O / 16 : 1) &&
             (double)count >= 0.5 * (double)(bad_o * bad_n * L)) {
    cls = C1D_REGION_CHANNELS;
    name_list(kind, sizeof kind, "channel", "channels", r->o, bad_o);
  } else if (bad_n < N && bad_n <= (N / 4 > 1 ? N / 4 : 1) && (double)count >= 0.5 * (double)(bad_n * O * L)) {
    cls = C1D_REGION_BATCHES;
    name_list(kind, sizeof kind, "batch", "batches", r->n, bad_n);
  } else if ((k_dense = dense_parts(n_marks, N, O * L, DENSE_PART, N / 4 > 1 ? N / 4 : 1, count, dense)) > 0) {
    cls = C1D_REGION_BATCHES; /* one batch, strays elsewhere */
    char ranges[C1D_RANGES_LEN];
    c1d_format_ranges(dense, N, ranges, sizeof ranges);
    name_list(kind, sizeof kind, "batch", "batches", ranges, k_dense);
  } else if (G > 1 && O / G >= 2 && (k_dense = dense_groups(o_marks, O, G, N * L, count, g_marks, dense)) > 0) {
    cls = C1D_REGION_CHANNELS; /* one group, strays elsewhere */
    char ranges[C1D_RANGES_LEN];
    c1d_format_ranges(dense, G, ranges, sizeof ranges);
    snprintf(kind, sizeof kind, "%s %.32s of %d channels", k_dense == 1 ? "group" : "groups", ranges, (int)(O / G));
  } else if ((k_dense = dense_parts(o_marks, O, N * L, DENSE_PART, O / 16 > 1 ? O / 16 : 1, count, dense)) > 0) {
    cls = C1D_REGION_CHANNELS; /* one channel (a depthwise group), a third of it or more, strays elsewhere */
    char ranges[C1D_RANGES_LEN];
    c1d_format_ranges(dense, O, ranges, sizeof ranges);
    name_list(kind, sizeof kind, "channel", "channels", ranges, k_dense);
  } else if (tile_fill_mean >= 0.5 && tile_fraction <= 0.5 && touched > 0) {
    cls = C1D_REGION_TILE_BLOCKS;
    snprintf(kind, sizeof kind, "tile-aligned blocks (%lld of %d x %d)", (long long)touched,
             C1D_TILE_O, C1D_TILE_T);
  } else if ((k_dense = dominant_positions(t_rows, L, N * O, count, dense)) > 0) {
    cls = C1D_REGION_POSITIONS; /* one position, strays elsewhere (one of them on its seam residue) */
    char ranges[C1D_RANGES_LEN];
    c1d_format_ranges(dense, L, ranges, sizeof ranges);
    name_list(kind, sizeof kind, "position", "positions", ranges, k_dense);
  } else if (one_residue(ft, L)) {
    cls = C1D_REGION_TILE_SEAMS;
    snprintf(kind, sizeof kind, "tile seams (t = %lld mod %d)", (long long)(t_first % C1D_TILE_T),
             C1D_TILE_T);
  } else if (bad_t < L && bad_t <= (L / 64 > 4 ? L / 64 : 4) && row_reach >= 0.25) {
    cls = C1D_REGION_POSITIONS;
    name_list(kind, sizeof kind, "position", "positions", r->t, bad_t);
  } else if (tile_aligned(ft, L, C1D_TILE_T)) {
    cls = C1D_REGION_TILE_BLOCKS;
    snprintf(kind, sizeof kind, "tile-aligned blocks (%d positions)", C1D_TILE_T);
  } else if (bad_o < O && tile_aligned(fo, O, C1D_TILE_O)) {
    cls = C1D_REGION_TILE_BLOCKS;
    snprintf(kind, sizeof kind, "tile-aligned blocks (%d channels)", C1D_TILE_O);
  }
  r->cls = cls;
  snprintf(r->kind, sizeof r->kind, "%s", kind);
  free(fn), free(fo), free(ft), free(tile_fill), free(t_rows), free(n_marks), free(o_marks), free(g_marks);
  free(dense);
  return 0;
}

int c1d_marks_concentrated(const unsigned char *mark, const c1d_layout *lay, double ratio, double alpha) {
  const int64_t N = lay->N, O = lay->O, L = lay->L, segs = (L + C1D_TILE_T - 1) / C1D_TILE_T;
  enum { DIMS = 6 };
  const int64_t sizes[DIMS] = {N, O, N * O, L, segs, L >= 2 * C1D_TILE_T ? C1D_TILE_T : 0};
  int64_t *cnt[DIMS] = {0}, k = 0, total_cats = 0;
  int failed = 0;
  for (int d = 0; d < DIMS; d++) {
    total_cats += sizes[d] > 1 ? sizes[d] : 0;
    if (sizes[d] > 1 && !(cnt[d] = calloc((size_t)sizes[d], sizeof *cnt[d]))) failed = 1;
  }
  for (int64_t row = 0; row < N * O && !failed; row++)
    for (int64_t t = next_flag(mark, row * L, row * L + L) - row * L; t < L;
         t = next_flag(mark, row * L + t + 1, row * L + L) - row * L) {
      const int64_t cat[DIMS] = {row / O, row % O, row, t, t / C1D_TILE_T, t % C1D_TILE_T};
      for (int d = 0; d < DIMS; d++)
        if (cnt[d]) cnt[d][cat[d]]++;
      k++;
    }
  int found = failed; /* without memory, say structured: a bug verdict then stands */
  for (int d = 0; d < DIMS && !found; d++) {
    if (!cnt[d]) continue;
    int64_t mx = 0;
    for (int64_t c = 0; c < sizes[d]; c++)
      if (cnt[d][c] > mx) mx = cnt[d][c];
    const double share = (double)k / (double)sizes[d];
    const double lp = c1d_log_binomial_tail(k, 1.0 / (double)sizes[d], mx);
    found = k >= 2 && (double)mx >= ratio * share && lp < log(alpha / (double)total_cats);
    if (getenv("C1D_TRACE_MARKS")) /* see numerics/classifier.c's trace_marks */
      fprintf(stderr, "trace: concentration in %s: fullest of %lld holds %lld of %lld marks (%.3g times its "
              "share), log p %.3g against %.3g\n", (const char *[]){"batch", "channel", "row", "position",
              "32-block", "seam"}[d], (long long)sizes[d], (long long)mx, (long long)k, mx / share, lp,
              log(alpha / (double)total_cats));
  }
  for (int d = 0; d < DIMS; d++) free(cnt[d]);
  return found;
}
