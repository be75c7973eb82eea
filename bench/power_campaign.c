/* The power benchmark's campaigns and how one runs: per problem, the inputs and the oracle, the
 * explainer prepared once, every correct output computed and explained (a bug verdict is a false
 * alarm; an output with a stage must be named by it), then every bug class injected at every size into
 * its base and explained. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/power_internal.h"
#include "harness/explain.h"
#include "reference/dtype.h"

// --- campaigns ----------------------------------------------------------------------------------------

#define ALL_DISTS ((1u << C1D_POWER_DIST_COUNT) - 1u)
#define DIST_BIT(d) (1u << (d))
#define ALL_SIZES ((1u << C1D_POWER_SIZE_COUNT) - 1u)
#define BF16_ALL {C1D_DTYPE_BF16, C1D_DTYPE_BF16, C1D_DTYPE_BF16, C1D_DTYPE_BF16, C1D_DTYPE_BF16}
#define F16_ALL {C1D_DTYPE_F16, C1D_DTYPE_F16, C1D_DTYPE_F16, C1D_DTYPE_F16, C1D_DTYPE_F16}

/* n = C*K from 4 to 16384; N*O*L kept small where n is large. Odd lengths leave a last partial tile;
 * one shape has none (L = 256), one has K = 1 (no left edge), one is sampled by the explainer
 * (N*O*L = 76800 > C1D_EXPLAIN_SAMPLE). */
static const c1d_shape full_shapes[] = {
    {3, 1, 16, 200, 4, 1, 1},   /* n = 4 */
    {3, 4, 16, 300, 4, 2, 1},   /* n = 16, dilation 2 */
    {3, 48, 20, 150, 1, 1, 1},  /* n = 48, K = 1 */
    {3, 16, 24, 256, 4, 1, 0},  /* n = 64, whole tiles only, no bias */
    {2, 37, 29, 201, 5, 3, 1},  /* n = 185, odd everything */
    {4, 64, 64, 300, 4, 1, 1},  /* n = 256, sampled */
    {2, 256, 32, 130, 4, 1, 0}, /* n = 1024, the headline's channels and taps */
    {2, 1024, 16, 100, 4, 1, 1},  /* n = 4096 */
    {2, 4096, 16, 70, 4, 1, 1},   /* n = 16384 */
    /* Issue 15's operator: Mamba's depthwise conv (K = 2..8, D 1..4, C not a multiple of 8) and grouped
     * ones (Hyena's), in bf16, fp16, bf16 activations with fp32 weights, and fp32; with and without SiLU
     * and initial states. */
    {.N = 2, .C = 44, .O = 44, .L = 300, .K = 4, .D = 1, .bias = 1, .G = 44, .states = 1, .act = C1D_ACT_SILU,
     .dt = BF16_ALL},                                                    /* Mamba's: n = 4 */
    {.N = 2, .C = 52, .O = 52, .L = 257, .K = 2, .D = 1, .bias = 1, .G = 52, .act = C1D_ACT_SILU,
     .dt = F16_ALL},                                                     /* n = 2 */
    {.N = 3, .C = 36, .O = 36, .L = 200, .K = 8, .D = 1, .bias = 1, .G = 36, .states = 1,
     .dt = BF16_ALL},                                                    /* n = 8 */
    {.N = 2, .C = 44, .O = 44, .L = 300, .K = 3, .D = 4, .bias = 1, .G = 44, .states = 1, .act = C1D_ACT_SILU,
     .dt = {C1D_DTYPE_BF16, C1D_DTYPE_F32, C1D_DTYPE_F32, C1D_DTYPE_BF16, C1D_DTYPE_BF16}}, /* bf16 x, fp32 w */
    {.N = 2, .C = 60, .O = 60, .L = 201, .K = 5, .D = 2, .bias = 1, .G = 60, .states = 1, .act = C1D_ACT_SILU},
    {.N = 4, .C = 100, .O = 100, .L = 130, .K = 4, .D = 1, .bias = 0, .G = 100, .dt = BF16_ALL}, /* no bias */
    {.N = 2, .C = 200, .O = 200, .L = 300, .K = 4, .D = 3, .bias = 1, .G = 200, .states = 1, .act = C1D_ACT_SILU,
     .dt = BF16_ALL},                                                    /* sampled: N*O*L = 120000 */
    {.N = 2, .C = 48, .O = 24, .L = 200, .K = 4, .D = 1, .bias = 1, .G = 8, .act = C1D_ACT_SILU,
     .dt = BF16_ALL},                                                    /* grouped: n = 24 */
    {.N = 2, .C = 64, .O = 64, .L = 150, .K = 3, .D = 2, .bias = 1, .G = 4, .states = 1}, /* n = 48, fp32 */
    {.N = 2, .C = 40, .O = 40, .L = 160, .K = 4, .D = 1, .bias = 1, .G = 10, .states = 1, .act = C1D_ACT_SILU,
     .dt = F16_ALL},                                                     /* n = 16, fp16 */
    {.N = 2, .C = 30, .O = 30, .L = 180, .K = 7, .D = 3, .bias = 1, .G = 30,
     .dt = {C1D_DTYPE_F16, C1D_DTYPE_F32, C1D_DTYPE_F32, C1D_DTYPE_F16, C1D_DTYPE_F16}}, /* fp16 x, fp32 w */
    {.N = 2, .C = 32, .O = 16, .L = 150, .K = 4, .D = 1, .bias = 1, .states = 1, .act = C1D_ACT_SILU}, /* dense */
};

/* Every bug class applies to some reduced shape (bias and a partial tile for the missing bias). */
static const c1d_shape reduced_shapes[] = {
    {3, 16, 24, 100, 4, 1, 1},  /* n = 64 */
    {2, 37, 29, 201, 5, 3, 1},  /* n = 185 */
    {2, 256, 16, 70, 4, 1, 1},  /* n = 1024 */
    /* Issue 15's operator: every new class and stage applies to one of these. */
    {.N = 2, .C = 44, .O = 44, .L = 150, .K = 4, .D = 1, .bias = 1, .G = 44, .states = 1, .act = C1D_ACT_SILU,
     .dt = BF16_ALL},
    {.N = 2, .C = 36, .O = 36, .L = 130, .K = 3, .D = 2, .bias = 1, .G = 36, .dt = F16_ALL},
    {.N = 2, .C = 24, .O = 12, .L = 120, .K = 4, .D = 1, .bias = 1, .G = 4, .states = 1, .dt = BF16_ALL},
};

/* Per shape, the distributions run on it: all on the dense fp32 conv; on issue 15's problems the
 * subnormal and near-overflow inputs (edges of the float32 range, which no bf16/fp16 problem has) are
 * left out, and so are ill-conditioned ones where a group has a single channel (no pair to cancel) or
 * x is bf16 (its pairs round to equal values: exact cancellation, not an ill-conditioned sum). */
#define OPERATOR_DISTS (ALL_DISTS & ~(DIST_BIT(C1D_POWER_SUBNORMAL) | DIST_BIT(C1D_POWER_NEAR_OVERFLOW)))
#define WELL_CONDITIONED (OPERATOR_DISTS & ~DIST_BIT(C1D_POWER_ILL_CONDITIONED))

static const unsigned full_dists[] = {
    ALL_DISTS, ALL_DISTS, ALL_DISTS, ALL_DISTS, ALL_DISTS, ALL_DISTS, ALL_DISTS, ALL_DISTS, ALL_DISTS, /* dense */
    WELL_CONDITIONED, WELL_CONDITIONED, WELL_CONDITIONED, WELL_CONDITIONED, /* depthwise ... */
    WELL_CONDITIONED, WELL_CONDITIONED, WELL_CONDITIONED,                   /* ... the sampled one */
    WELL_CONDITIONED, /* g8 bf16 */
    OPERATOR_DISTS,   /* g4 fp32: 16 channels a group */
    WELL_CONDITIONED, WELL_CONDITIONED, /* g10 fp16, depthwise fp16 x */
    OPERATOR_DISTS};  /* dense fp32 with states and SiLU */
static const unsigned reduced_dists[] = {ALL_DISTS, ALL_DISTS, ALL_DISTS,
                                         WELL_CONDITIONED, /* SiLU */
                                         WELL_CONDITIONED, WELL_CONDITIONED};

#define COUNT(a) ((int)(sizeof a / sizeof a[0]))
_Static_assert(COUNT(full_dists) == COUNT(full_shapes), "one distribution mask per full shape");
_Static_assert(COUNT(reduced_dists) == COUNT(reduced_shapes), "one distribution mask per reduced shape");

c1d_power_campaign c1d_power_full_campaign(void) {
  c1d_power_campaign c = {"full", full_shapes, full_dists, COUNT(full_shapes), 3, ALL_DISTS,
                          DIST_BIT(C1D_POWER_CONV_INIT) | DIST_BIT(C1D_POWER_NORMAL) |
                              DIST_BIT(C1D_POWER_UNIFORM),
                          ALL_SIZES, 1, 1};
  return c;
}

c1d_power_campaign c1d_power_reduced_campaign(void) {
  c1d_power_campaign c = {"reduced", reduced_shapes, reduced_dists, COUNT(reduced_shapes), 1, ALL_DISTS,
                          DIST_BIT(C1D_POWER_CONV_INIT) | DIST_BIT(C1D_POWER_NORMAL), ALL_SIZES, 1, 1};
  return c;
}

c1d_status c1d_power_campaign_named(const char *name, c1d_power_campaign *out) {
  if (strcmp(name, "full") == 0) *out = c1d_power_full_campaign();
  else if (strcmp(name, "reduced") == 0) *out = c1d_power_reduced_campaign();
  else return c1d_fail(C1D_ERR_USAGE, "unknown campaign '%s' (choose full or reduced)", name);
  return C1D_OK;
}

// --- problems -------------------------------------------------------------------------------------------

/* The distributions run on shape si: the campaign's, on those that make sense there. */
static unsigned used_dists(const c1d_power_campaign *camp, int si) {
  const unsigned mask = (camp->correct_runs ? camp->dists : 0u) | camp->bug_dists;
  return camp->shape_dists ? mask & camp->shape_dists[si] : mask;
}

static int dist_count(unsigned mask) {
  int n = 0;
  for (int d = 0; d < C1D_POWER_DIST_COUNT; d++) n += (mask >> d) & 1u;
  return n;
}

int c1d_power_problem_count(const c1d_power_campaign *camp) {
  int count = 0;
  for (int si = 0; si < camp->shape_count; si++) count += dist_count(used_dists(camp, si)) * camp->seeds;
  return count;
}

c1d_power_problem c1d_power_problem_at(const c1d_power_campaign *camp, int index) {
  c1d_power_problem p;
  memset(&p, 0, sizeof p);
  p.index = index;
  int rest = index, si = 0;
  for (; si < camp->shape_count - 1; si++) { /* the shape's block of problems holds index */
    const int block = dist_count(used_dists(camp, si)) * camp->seeds;
    if (rest < block) break;
    rest -= block;
  }
  const unsigned mask = used_dists(camp, si);
  p.shape_index = si;
  p.shape = camp->shapes[si];
  int nth = rest / camp->seeds, d = 0;
  for (; d < C1D_POWER_DIST_COUNT; d++)
    if (((mask >> d) & 1u) && nth-- == 0) break;
  p.dist = (c1d_power_dist)d;
  p.seed = (uint64_t)(1000 * p.shape_index + 100 * d + rest % camp->seeds + 1);
  p.bugs = (camp->bug_dists >> d) & 1u;
  return p;
}

// --- families and variants -----------------------------------------------------------------------------

const char *c1d_power_family_name(int family) {
  return family == C1D_POWER_DENSE ? "dense fp32 (issue 12)"
                                   : family == C1D_POWER_OPERATOR ? "the operator of issue 15" : "?";
}

int c1d_power_family_of(const c1d_shape *s) {
  return c1d_shape_is_plain(s) ? C1D_POWER_DENSE : C1D_POWER_OPERATOR;
}

void c1d_power_variant_of(const c1d_shape *s, char *buf, int size) {
  if (c1d_shape_is_plain(s)) {
    snprintf(buf, (size_t)size, "dense fp32");
    return;
  }
  char groups[24], types[40];
  const int64_t G = c1d_groups(s);
  if (G == 1) snprintf(groups, sizeof groups, "dense");
  else if (G == s->C && G == s->O) snprintf(groups, sizeof groups, "dw");
  else snprintf(groups, sizeof groups, "g%lld", (long long)G);
  const c1d_dtypes *t = &s->dt;
  if (t->x == t->w && t->w == t->b && t->b == t->s && t->s == t->y)
    snprintf(types, sizeof types, "%s", t->x == C1D_DTYPE_F32 ? "fp32" : c1d_dtype_name(t->x));
  else
    snprintf(types, sizeof types, "x:%s w:%s y:%s", c1d_dtype_name(t->x), c1d_dtype_name(t->w), c1d_dtype_name(t->y));
  snprintf(buf, (size_t)size, "%s %s%s%s%s", groups, types, s->bias ? "" : " nobias",
           s->act == C1D_ACT_SILU ? " silu" : "", s->states ? " states" : "");
}

// --- one problem -------------------------------------------------------------------------------------

static void keep_reason(c1d_power_record *r, const c1d_explanation *e) {
  const size_t n = strnlen(e->reason, sizeof r->reason - 1); /* the start of it is enough */
  memcpy(r->reason, e->reason, n);
  r->reason[n] = '\0';
  for (char *q = r->reason; *q; q++)
    if (*q == '\t' || *q == '\n' || *q == '\r') *q = ' ';
}

static c1d_power_record record_for(const power_case *c, int order, const c1d_explanation *e) {
  c1d_power_record r;
  memset(&r, 0, sizeof r);
  r.problem = c->p.index;
  r.dist = c->p.dist;
  r.family = c1d_power_family_of(&c->s);
  c1d_power_variant_of(&c->s, r.variant, sizeof r.variant);
  r.terms = c1d_terms(&c->s);
  r.order = order;
  r.bug = -1;
  r.size = -1;
  r.verdict = e->verdict;
  r.cls = e->region.cls;
  r.called_bug = c1d_verdict_is_bug(e->verdict);
  if (e->verdict == C1D_VERDICT_REDUCED_PRECISION) snprintf(r.where, sizeof r.where, "%s", e->where);
  return r;
}

/* The fp32 base of bug `bug` on this problem: rotates over the fp32 orders that ran. */
static int rotating_base(const power_case *c, int bug, float *const *out) {
  int count = 0, bases[64];
  for (int o = 0; o < c1d_power_order_count() && count < 64; o++)
    if (power_order_is_fp32(o) && out[o]) bases[count++] = o;
  return count ? bases[(c->p.index + 5 * bug) % count] : -1;
}

typedef struct problem_buffers {
  float **out, **unstored, *torch_y, *torch_yb, *torch_ybc, *cand;
  double *pattern;
} problem_buffers;

static c1d_status run_bugs(const c1d_power_campaign *camp, power_case *c, c1d_explainer *ex,
                           problem_buffers *bf, c1d_power_results *res, int *bug_runs) {
  const int64_t ny = c1d_y_count(&c->s);
  const int naive = c1d_power_order_find("naive");
  for (int bug = 0; bug < c1d_power_bug_count(); bug++) {
    const char *named = power_bug_base(bug);
    const int base = named[0] ? c1d_power_order_find(named) : rotating_base(c, bug, bf->out);
    if (base < 0 || !bf->out[base]) continue;
    const int64_t region = power_bug_pattern(bug, c, c->p.seed * 131u + (uint64_t)bug, bf->pattern);
    if (region == 0) continue;
    const double scale = power_order_scale(base, c, bf->out[base], bf->unstored[base], bf->out[naive]);
    if (!(scale > 0.0) || !isfinite(scale)) continue; /* nothing unexplained to scale a bug by */
    /* Before the store: the classes that say so, and every bug of a problem whose y is bf16 or fp16
     * (the kernel's error comes before its one rounding to y's type). */
    const int narrow_y = c1d_power_family_of(&c->s) == C1D_POWER_OPERATOR &&
                         power_order_store_of(base, c) != POWER_STORE_FP32;
    const int before_store = (power_bug_before_store(bug) || narrow_y) && bf->unstored[base];
    const float *src = before_store ? bf->unstored[base] : bf->out[base];
    for (int size = 0; size < C1D_POWER_SIZE_COUNT; size++) {
      if (!((camp->sizes >> size) & 1u)) continue;
      const double amount = c1d_power_sizes[size] * scale;
      for (int64_t i = 0; i < ny; i++) {
        const float v = (float)((double)src[i] + amount * bf->pattern[i]);
        bf->cand[i] = before_store ? power_order_store(base, c, v) : v;
      }
      c1d_explanation e;
      if (getenv("C1D_TRACE_MARKS")) /* which run the explainer's traces that follow are of */
        fprintf(stderr, "trace: bench_power problem %d, %s at %gx on %s\n", c->p.index, c1d_power_bug_name(bug),
                c1d_power_sizes[size], c1d_power_order_name(base));
      c1d_status st = c1d_explainer_explain(ex, bf->cand, 0, 0, &e);
      if (st != C1D_OK) return st;
      c1d_power_record r = record_for(c, base, &e);
      r.bug = bug;
      r.size = size;
      r.region_elems = region;
      r.scale = scale;
      r.located = r.called_bug && (e.region.cls == c1d_power_bug_expected(bug) ||
                                   (c1d_power_bug_is_global(bug) &&
                                    (e.verdict == C1D_VERDICT_BUG_GLOBAL || e.region.cls == C1D_REGION_EVERYWHERE)));
      if (!r.located) keep_reason(&r, &e);
      if ((st = power_results_push(res, &r)) != C1D_OK) return st;
      (*bug_runs)++;
    }
  }
  return C1D_OK;
}

static c1d_status run_problem(const c1d_power_campaign *camp, const c1d_power_problem *p,
                              const power_torch *pt, c1d_power_results *res, FILE *log) {
  const int orders = c1d_power_order_count();
  power_case c;
  c1d_status st = power_case_make(p, &c);
  if (st != C1D_OK) return st;
  const int64_t ny = c1d_y_count(&c.s);
  problem_buffers bf = {calloc((size_t)orders, sizeof(float *)), calloc((size_t)orders, sizeof(float *)),
                        NULL, NULL, NULL, malloc((size_t)ny * sizeof(float)), malloc((size_t)ny * sizeof(double))};
  c1d_explainer ex;
  memset(&ex, 0, sizeof ex);
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  int correct_runs = 0, bug_runs = 0;
  if (!bf.out || !bf.unstored || !bf.cand || !bf.pattern) {
    st = c1d_fail(C1D_ERR_NO_MEMORY, "power: cannot allocate outputs of problem %d", p->index);
    goto done;
  }
  if (camp->use_torch) {
    if (!(bf.torch_y = malloc((size_t)ny * sizeof(float)))) {
      st = c1d_fail(C1D_ERR_NO_MEMORY, "power: cannot allocate PyTorch's output");
      goto done;
    }
    if ((st = power_torch_output(pt, p, POWER_TORCH_F32, bf.torch_y)) != C1D_OK) goto done;
    if (power_torch_has_bf16(&c.s)) {
      const int silu = c.s.act == C1D_ACT_SILU;
      if (!(bf.torch_yb = malloc((size_t)ny * sizeof(float))) ||
          (silu && !(bf.torch_ybc = malloc((size_t)ny * sizeof(float))))) {
        st = c1d_fail(C1D_ERR_NO_MEMORY, "power: cannot allocate PyTorch's bf16 output");
        goto done;
      }
      if ((st = power_torch_output(pt, p, POWER_TORCH_BF16, bf.torch_yb)) != C1D_OK ||
          (silu && (st = power_torch_output(pt, p, POWER_TORCH_BF16_CONV, bf.torch_ybc)) != C1D_OK))
        goto done;
    }
  }
  const c1d_explainer_inputs in = {.x = c.x, .w = c.w, .b = c.b, .st = c.st, .ref = c.ref, .mag = c.mag,
                                   .pre = c.pre};
  if ((st = c1d_explainer_prepare_ex(&ex, &c.s, &in)) != C1D_OK) goto done;

  const int explain_correct = camp->correct_runs && ((camp->dists >> p->dist) & 1u);
  const int naive = c1d_power_order_find("naive");
  for (int o = 0; o < orders; o++) {
    if (!power_order_applies(o, &c, camp->use_torch)) continue;
    const int narrow = power_order_store_of(o, &c) != POWER_STORE_FP32;
    bf.out[o] = malloc((size_t)ny * sizeof(float));
    if (narrow) bf.unstored[o] = malloc((size_t)ny * sizeof(float));
    if (!bf.out[o] || (narrow && !bf.unstored[o])) {
      st = c1d_fail(C1D_ERR_NO_MEMORY, "power: cannot allocate the output of %s", c1d_power_order_name(o));
      goto done;
    }
    const power_torch_y torch = {bf.torch_y, bf.torch_yb, bf.torch_ybc};
    if ((st = power_order_run(o, &c, torch, bf.out[o], bf.unstored[o])) != C1D_OK) goto done;
    if (!explain_correct) continue;
    c1d_explanation e;
    if ((st = c1d_explainer_explain(&ex, bf.out[o], 0, 0, &e)) != C1D_OK) goto done;
    c1d_power_record r = record_for(&c, o, &e);
    r.in_bound = power_order_in_bound(o, &c, bf.out[o], torch);
    const char *stage = c1d_power_order_stage(o);
    if (stage) {
      /* The naive order (the table's first) is the contract: a stage that changed nothing lost nothing. */
      r.lost = memcmp(bf.out[o], bf.out[naive], (size_t)ny * sizeof(float)) != 0;
      r.located = e.verdict == C1D_VERDICT_REDUCED_PRECISION && strcmp(e.where, stage) == 0;
    }
    if (r.called_bug || (stage && r.lost && !r.located)) keep_reason(&r, &e);
    if ((st = power_results_push(res, &r)) != C1D_OK) goto done;
    correct_runs++;
  }
  if (p->bugs && (st = run_bugs(camp, &c, &ex, &bf, res, &bug_runs)) != C1D_OK) goto done;
  res->problems++;
  clock_gettime(CLOCK_MONOTONIC, &t1);
  if (log) {
    char shape[96];
    c1d_shape_format(&c.s, shape, sizeof shape);
    fprintf(log, "power: problem %d (%s, %s, seed %llu): %d correct and %d bug runs, %.2f s\n", p->index,
            shape, c1d_power_dist_name(p->dist), (unsigned long long)p->seed, correct_runs, bug_runs,
            (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec));
  }
done:
  c1d_explainer_release(&ex);
  for (int o = 0; bf.out && o < orders; o++) free(bf.out[o]);
  for (int o = 0; bf.unstored && o < orders; o++) free(bf.unstored[o]);
  free(bf.out);
  free(bf.unstored);
  free(bf.torch_y);
  free(bf.torch_yb);
  free(bf.torch_ybc);
  free(bf.cand);
  free(bf.pattern);
  power_case_free(&c);
  return st;
}

// --- a shard ---------------------------------------------------------------------------------------------

c1d_status c1d_power_execute(const c1d_power_campaign *camp, int shard, int shards, c1d_power_results *res,
                             FILE *log) {
  if (shards < 1 || shard < 0 || shard >= shards)
    return c1d_fail(C1D_ERR_USAGE, "shard %d of %d does not exist (shards are 1/N..N/N)", shard + 1, shards);
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  snprintf(res->campaign, sizeof res->campaign, "%s", camp->name);
  res->shard = shard;
  res->shards = shards;
  res->torch = camp->use_torch;
  const int total = c1d_power_problem_count(camp);
  c1d_power_problem *mine = malloc((size_t)(total / shards + 1) * sizeof *mine);
  if (!mine) return c1d_fail(C1D_ERR_NO_MEMORY, "power: cannot allocate the problem list");
  int count = 0;
  for (int i = shard; i < total; i += shards) mine[count++] = c1d_power_problem_at(camp, i);
  power_torch pt;
  memset(&pt, 0, sizeof pt);
  c1d_status st = C1D_OK;
  if (camp->use_torch && count > 0) st = power_torch_prepare(mine, count, &pt, log);
  for (int i = 0; i < count && st == C1D_OK; i++) st = run_problem(camp, &mine[i], &pt, res, log);
  power_torch_cleanup(&pt);
  free(mine);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  res->seconds += (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
  return st;
}
