/* The bug classes of the power benchmark: one table line each, a region, the kind of error put there,
 * and the correct output it is injected into. A bug is an error pattern e with rms 1 over its region
 * (zero elsewhere); the campaign adds size * scale * e to its base in double and rounds once to float32
 * (or to the base's storage format when the bug sits before the store), where scale is the rms error
 * that the base's fitting model leaves unexplained (power_order_scale).
 *
 * Regions follow the explainer's region classes (numerics/classifier.h) with the tile of convlab's
 * kernels, 32 positions by 8 channels. A missing bias at its natural size is thousands of times the
 * rounding error, so the class scales the missing part (-c * b[o] in the region) to the size. A tap
 * weight off by a relative epsilon adds eps * (that tap's contribution) everywhere, eps chosen for the
 * size; the last tap is used, since it reads x[t] and never the padding.
 *
 * Issue 15's bugs take the same course: their error in double (initial states read as zeros at the left
 * edge, a group reading the next group's channels, SiLU applied twice), scaled to the size. Errors of
 * the sum pass through SiLU with its slope at the oracle's sum. On bf16 and fp16 outputs every bug sits
 * before the one rounding to y's type, and its unit is that rounding's rms (power_order_scale). */
#include <math.h>
#include <string.h>

#include "bench/power_internal.h"
#include "numerics/activation.h"

enum { R_ALL, R_LEFT_EDGE, R_RIGHT_EDGE, R_LAST_TILE, R_CHANNEL, R_BATCH, R_POSITION, R_TILE_BLOCK,
       R_TILE_SEAMS, R_SCATTERED, R_STALE, R_GROUP };
enum { E_OFFSET, E_SIGNED, E_TAP_WEIGHT, E_MISSING_BIAS, E_STATES_IGNORED, E_GROUP_OFFSET, E_SILU_TWICE };

typedef struct power_bug {
  const char *name;
  const char *base;            /* the order injected into; "" rotates over the fp32 orders */
  int region, error;
  int global;                  /* located right when bug-global or everywhere (or expected) */
  c1d_region_class expected;   /* the region class to find (global: a finer name than everywhere) */
  int before_store;            /* injected before the base's reduced-precision store */
} power_bug;

static const power_bug bugs[] = {
    {"offset everywhere", "", R_ALL, E_OFFSET, 1, C1D_REGION_EVERYWHERE, 0},
    {"offset left edge", "", R_LEFT_EDGE, E_OFFSET, 0, C1D_REGION_LEFT_EDGE, 0},
    {"offset right edge", "", R_RIGHT_EDGE, E_OFFSET, 0, C1D_REGION_RIGHT_EDGE, 0},
    {"offset last partial tile", "", R_LAST_TILE, E_OFFSET, 0, C1D_REGION_LAST_PARTIAL_TILE, 0},
    {"offset one channel", "", R_CHANNEL, E_OFFSET, 0, C1D_REGION_CHANNELS, 0},
    {"offset one batch", "", R_BATCH, E_OFFSET, 0, C1D_REGION_BATCHES, 0},
    {"offset one position", "", R_POSITION, E_OFFSET, 0, C1D_REGION_POSITIONS, 0},
    {"offset tile block", "", R_TILE_BLOCK, E_OFFSET, 0, C1D_REGION_TILE_BLOCKS, 0},
    {"offset tile seams", "", R_TILE_SEAMS, E_OFFSET, 0, C1D_REGION_TILE_SEAMS, 0},
    {"offset scattered 1%", "", R_SCATTERED, E_OFFSET, 0, C1D_REGION_SCATTERED, 0},
    {"stale values 0.1%", "", R_STALE, E_SIGNED, 0, C1D_REGION_SCATTERED, 0},
    {"tap weight off", "", R_ALL, E_TAP_WEIGHT, 1, C1D_REGION_TAP, 0},
    {"missing bias, last tile", "", R_LAST_TILE, E_MISSING_BIAS, 0, C1D_REGION_LAST_PARTIAL_TILE, 0},
    {"tf32 + offset", "tf32_rna", R_ALL, E_OFFSET, 1, C1D_REGION_EVERYWHERE, 0},
    {"bf16 inputs + right edge", "bf16_inputs", R_RIGHT_EDGE, E_OFFSET, 0, C1D_REGION_RIGHT_EDGE, 0},
    {"fp16 storage + offset", "fp16_storage", R_ALL, E_OFFSET, 1, C1D_REGION_EVERYWHERE, 1},
    /* Issue 15's operator (patterns that need states, groups or SiLU apply to those shapes only). */
    {"states ignored", "", R_LEFT_EDGE, E_STATES_IGNORED, 0, C1D_REGION_LEFT_EDGE, 0},
    {"group offset, every group", "", R_ALL, E_GROUP_OFFSET, 1, C1D_REGION_EVERYWHERE, 0},
    {"group offset, one group", "", R_GROUP, E_GROUP_OFFSET, 0, C1D_REGION_CHANNELS, 0},
    {"silu twice", "", R_ALL, E_SILU_TWICE, 1, C1D_REGION_EVERYWHERE, 0},
};
enum { BUG_COUNT = sizeof bugs / sizeof bugs[0] };

const double c1d_power_sizes[C1D_POWER_SIZE_COUNT] = {3.0, 10.0, 30.0, 100.0};

int c1d_power_bug_count(void) { return BUG_COUNT; }
const char *c1d_power_bug_name(int bug) { return bug >= 0 && bug < BUG_COUNT ? bugs[bug].name : "-"; }
int c1d_power_bug_is_global(int bug) { return bugs[bug].global; }
c1d_region_class c1d_power_bug_expected(int bug) { return bugs[bug].expected; }
const char *power_bug_base(int bug) { return bugs[bug].base; }
int power_bug_before_store(int bug) { return bugs[bug].before_store; }
int c1d_power_bug_find(const char *name) {
  for (int i = 0; i < BUG_COUNT; i++)
    if (strcmp(bugs[i].name, name) == 0) return i;
  return -1;
}

// --- regions -----------------------------------------------------------------------------------------

#define TILE_T 32
#define TILE_O 8

/* The right edge: the last positions of every row, never inside the last partial tile (it reaches 5
 * positions into the last whole tile), so that the two classes cannot be confused. */
static int64_t right_width(const c1d_shape *s) { return s->L % TILE_T ? s->L % TILE_T + 5 : 7; }

static uint64_t pick(uint64_t *rng, uint64_t range) {
  *rng = power_mix(*rng);
  return range ? *rng % range : 0;
}

/* Marks the region in e (1.0) and returns its element count; 0 when it does not apply to the shape. */
static int64_t mark_region(int region, const c1d_shape *s, uint64_t rng, double *e) {
  const int64_t N = s->N, O = s->O, L = s->L, pad = c1d_pad(s), total = c1d_y_count(s);
  int64_t n0 = 0, n1 = N, o0 = 0, o1 = O, t0 = 0, t1 = L; /* a box, for the boxed regions */
  switch (region) {
    case R_ALL: break;
    case R_LEFT_EDGE:
      if (pad < 1 || pad > L / 4) return 0;
      t1 = pad;
      break;
    case R_RIGHT_EDGE:
      if (L < 4 * right_width(s)) return 0;
      t0 = L - right_width(s);
      break;
    case R_LAST_TILE:
      if (L % TILE_T == 0 || L < TILE_T) return 0;
      t0 = L - L % TILE_T;
      break;
    case R_CHANNEL:
      if (O < 2) return 0;
      o0 = (int64_t)pick(&rng, (uint64_t)O);
      o1 = o0 + 1;
      break;
    case R_GROUP: /* the output channels of one group */
      if (c1d_groups(s) < 2) return 0;
      o0 = c1d_cout_per_group(s) * (int64_t)pick(&rng, (uint64_t)c1d_groups(s));
      o1 = o0 + c1d_cout_per_group(s);
      break;
    case R_BATCH:
      if (N < 2) return 0;
      n0 = (int64_t)pick(&rng, (uint64_t)N);
      n1 = n0 + 1;
      break;
    case R_POSITION: {
      /* Away from both edges and from the tile seams. */
      const int64_t lo = pad, hi = L - right_width(s);
      if (hi - lo < 2) return 0;
      do t0 = lo + (int64_t)pick(&rng, (uint64_t)(hi - lo));
      while (t0 % TILE_T == 0);
      t1 = t0 + 1;
      break;
    }
    case R_TILE_BLOCK:
      if (O < 2 * TILE_O || L < 2 * TILE_T) return 0;
      n0 = (int64_t)pick(&rng, (uint64_t)N);
      n1 = n0 + 1;
      o0 = TILE_O * (int64_t)pick(&rng, (uint64_t)(O / TILE_O));
      o1 = o0 + TILE_O;
      t0 = TILE_T * (1 + (int64_t)pick(&rng, (uint64_t)(L / TILE_T - 1))); /* not the left edge */
      t1 = t0 + TILE_T;
      break;
    case R_TILE_SEAMS: {
      if (L < 2 * TILE_T) return 0;
      int64_t count = 0;
      for (int64_t i = 0; i < total; i++)
        if ((i % L) % TILE_T == 0) e[i] = 1.0, count++;
      return count;
    }
    case R_SCATTERED:
    case R_STALE: {
      int64_t want = region == R_SCATTERED ? total / 100 : total / 1000;
      if (region == R_SCATTERED && want < C1D_POWER_MIN_REGION) want = C1D_POWER_MIN_REGION;
      if (want < 1) want = 1;
      if (want > total / 8) return 0;
      for (int64_t got = 0; got < want;) {
        const int64_t i = (int64_t)pick(&rng, (uint64_t)total);
        if (e[i] == 0.0) e[i] = 1.0, got++;
      }
      return want;
    }
    default: return 0;
  }
  int64_t count = 0;
  for (int64_t n = n0; n < n1; n++)
    for (int64_t o = o0; o < o1; o++)
      for (int64_t t = t0; t < t1; t++) e[c1d_y_index(s, n, o, t)] = 1.0, count++;
  return count;
}

// --- errors in the region -------------------------------------------------------------------------

/* The sum of o's group's terms in double with the input channels shifted by `shift` (mod C), and
 * (zero_history) the taps before t = 0 read as zeros: the sums that the group-offset and states bugs
 * compute. */
static double sum_read(const power_case *c, int64_t n, int64_t o, int64_t t, int64_t shift, int zero_history) {
  const c1d_shape *s = &c->s;
  const int64_t c0 = c1d_group_first_c(s, o), cg = c1d_cin_per_group(s);
  double acc = c->b ? (double)c->b[o] : 0.0;
  for (int64_t j = 0; j < cg; j++)
    for (int64_t k = 0; k < s->K; k++) {
      const int64_t src = c1d_source_time(s, t, k);
      if (src < 0 && zero_history) continue;
      acc += (double)c->w[c1d_w_index(s, o, c0 + j, k)] *
             (double)c1d_x_at(s, c->x, c->st, n, (c0 + j + shift) % s->C, src);
    }
  return acc;
}

static double act(const c1d_shape *s, double v) { return s->act == C1D_ACT_SILU ? c1d_silu_f64(v) : v; }

/* Whether the error kind has anything to change on this problem. */
static int error_applies(int error, const power_case *c) {
  const c1d_shape *s = &c->s;
  switch (error) {
    case E_MISSING_BIAS: return c->b != NULL;
    case E_STATES_IGNORED: return s->states;
    case E_GROUP_OFFSET: return c1d_groups(s) > 1;
    case E_SILU_TWICE: return s->act == C1D_ACT_SILU;
    default: return 1;
  }
}

int64_t power_bug_pattern(int bug, const power_case *c, uint64_t rng, double *e) {
  const power_bug *g = &bugs[bug];
  const c1d_shape *s = &c->s;
  const int64_t total = c1d_y_count(s);
  memset(e, 0, (size_t)total * sizeof *e);
  if (!error_applies(g->error, c)) return 0;
  const int64_t count = mark_region(g->region, s, rng, e);
  if (count == 0) return 0;
  const int silu = s->act == C1D_ACT_SILU;
  double sum_sq = 0.0;
  for (int64_t i = 0; i < total; i++) {
    if (e[i] == 0.0) continue;
    const int64_t t = i % s->L, o = (i / s->L) % s->O, n = i / (s->L * s->O);
    /* An error of the sum reaches y through SiLU's slope. */
    const double slope = silu ? c1d_silu_deriv_f64(c->pre[i]) : 1.0;
    switch (g->error) {
      case E_SIGNED: e[i] = pick(&rng, 2) ? 1.0 : -1.0; break;
      case E_MISSING_BIAS: e[i] = -(double)c->b[o] * slope; break;
      case E_TAP_WEIGHT: {
        const int64_t c0 = c1d_group_first_c(s, o);
        double p = 0.0;
        for (int64_t ch = c0; ch < c0 + c1d_cin_per_group(s); ch++)
          p += (double)c->w[c1d_w_index(s, o, ch, s->K - 1)] * (double)c->x[c1d_x_index(s, n, ch, t)];
        e[i] = p * slope;
        break;
      }
      case E_STATES_IGNORED: e[i] = act(s, sum_read(c, n, o, t, 0, 1)) - c->ref[i]; break;
      case E_GROUP_OFFSET: e[i] = act(s, sum_read(c, n, o, t, c1d_cin_per_group(s), 0)) - c->ref[i]; break;
      case E_SILU_TWICE: e[i] = c1d_silu_f64(c->ref[i]) - c->ref[i]; break;
      default: break;
    }
    sum_sq += e[i] * e[i];
  }
  const double rms = sqrt(sum_sq / (double)count);
  if (!(rms > 0.0) || !isfinite(rms)) return 0;
  for (int64_t i = 0; i < total; i++) e[i] /= rms;
  return count;
}
