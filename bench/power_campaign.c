/* The power benchmark's campaigns and how one runs: per problem, the inputs and the oracle, the
 * explainer prepared once, every correct output computed and explained (a bug verdict is a false
 * alarm), then every bug class injected at every size into its base and explained. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/power_internal.h"
#include "harness/explain.h"

// --- campaigns ----------------------------------------------------------------------------------------

#define ALL_DISTS ((1u << C1D_POWER_DIST_COUNT) - 1u)
#define DIST_BIT(d) (1u << (d))
#define ALL_SIZES ((1u << C1D_POWER_SIZE_COUNT) - 1u)

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
};

/* Every bug class applies to some reduced shape (bias and a partial tile for the missing bias). */
static const c1d_shape reduced_shapes[] = {
    {3, 16, 24, 100, 4, 1, 1},  /* n = 64 */
    {2, 37, 29, 201, 5, 3, 1},  /* n = 185 */
    {2, 256, 16, 70, 4, 1, 1},  /* n = 1024 */
};

c1d_power_campaign c1d_power_full_campaign(void) {
  c1d_power_campaign c = {"full", full_shapes, (int)(sizeof full_shapes / sizeof full_shapes[0]), 3,
                          ALL_DISTS,
                          DIST_BIT(C1D_POWER_CONV_INIT) | DIST_BIT(C1D_POWER_NORMAL) |
                              DIST_BIT(C1D_POWER_UNIFORM),
                          ALL_SIZES, 1, 1};
  return c;
}

c1d_power_campaign c1d_power_reduced_campaign(void) {
  c1d_power_campaign c = {"reduced", reduced_shapes,
                          (int)(sizeof reduced_shapes / sizeof reduced_shapes[0]), 1, ALL_DISTS,
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

static unsigned used_dists(const c1d_power_campaign *camp) {
  return (camp->correct_runs ? camp->dists : 0u) | camp->bug_dists;
}

static int dist_count(unsigned mask) {
  int n = 0;
  for (int d = 0; d < C1D_POWER_DIST_COUNT; d++) n += (mask >> d) & 1u;
  return n;
}

int c1d_power_problem_count(const c1d_power_campaign *camp) {
  return camp->shape_count * dist_count(used_dists(camp)) * camp->seeds;
}

c1d_power_problem c1d_power_problem_at(const c1d_power_campaign *camp, int index) {
  const unsigned mask = used_dists(camp);
  const int per_shape = dist_count(mask) * camp->seeds;
  c1d_power_problem p;
  memset(&p, 0, sizeof p);
  p.index = index;
  p.shape_index = index / per_shape;
  p.shape = camp->shapes[p.shape_index];
  int rest = index % per_shape, nth = rest / camp->seeds, d = 0;
  for (; d < C1D_POWER_DIST_COUNT; d++)
    if (((mask >> d) & 1u) && nth-- == 0) break;
  p.dist = (c1d_power_dist)d;
  p.seed = (uint64_t)(1000 * p.shape_index + 100 * d + rest % camp->seeds + 1);
  p.bugs = (camp->bug_dists >> d) & 1u;
  return p;
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
  r.terms = c->s.C * c->s.K;
  r.order = order;
  r.bug = -1;
  r.size = -1;
  r.verdict = e->verdict;
  r.cls = e->region.cls;
  r.called_bug = c1d_verdict_is_bug(e->verdict);
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
  float **out, **unstored, *torch_y, *cand;
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
    const int before_store = power_bug_before_store(bug) && bf->unstored[base];
    const float *src = before_store ? bf->unstored[base] : bf->out[base];
    for (int size = 0; size < C1D_POWER_SIZE_COUNT; size++) {
      if (!((camp->sizes >> size) & 1u)) continue;
      const double amount = c1d_power_sizes[size] * scale;
      for (int64_t i = 0; i < ny; i++) {
        const float v = (float)((double)src[i] + amount * bf->pattern[i]);
        bf->cand[i] = before_store ? power_order_store(base, v) : v;
      }
      c1d_explanation e;
      c1d_status st = c1d_explainer_explain(ex, bf->cand, 0, 0, &e);
      if (st != C1D_OK) return st;
      c1d_power_record r = record_for(c, base, &e);
      r.bug = bug;
      r.size = size;
      r.region_elems = region;
      r.scale = scale;
      r.located = r.called_bug && (c1d_power_bug_is_global(bug)
                                       ? (e.verdict == C1D_VERDICT_BUG_GLOBAL || e.region.cls == C1D_REGION_EVERYWHERE)
                                       : e.region.cls == c1d_power_bug_expected(bug));
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
                        NULL, malloc((size_t)ny * sizeof(float)), malloc((size_t)ny * sizeof(double))};
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
    if ((st = power_torch_output(pt, p, bf.torch_y)) != C1D_OK) goto done;
  }
  if ((st = c1d_explainer_prepare(&ex, &c.s, c.x, c.w, c.b, c.ref, c.mag)) != C1D_OK) goto done;

  const int explain_correct = camp->correct_runs && ((camp->dists >> p->dist) & 1u);
  for (int o = 0; o < orders; o++) {
    if (!power_order_applies(o, &c, camp->use_torch)) continue;
    bf.out[o] = malloc((size_t)ny * sizeof(float));
    if (power_order_at(o)->store != POWER_STORE_FP32) bf.unstored[o] = malloc((size_t)ny * sizeof(float));
    if (!bf.out[o] || (power_order_at(o)->store != POWER_STORE_FP32 && !bf.unstored[o])) {
      st = c1d_fail(C1D_ERR_NO_MEMORY, "power: cannot allocate the output of %s", c1d_power_order_name(o));
      goto done;
    }
    if ((st = power_order_run(o, &c, bf.torch_y, bf.out[o], bf.unstored[o])) != C1D_OK) goto done;
    if (!explain_correct) continue;
    c1d_explanation e;
    if ((st = c1d_explainer_explain(&ex, bf.out[o], 0, 0, &e)) != C1D_OK) goto done;
    c1d_power_record r = record_for(&c, o, &e);
    r.in_bound = power_order_in_bound(o, &c, bf.out[o]);
    if (r.called_bug) keep_reason(&r, &e);
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
