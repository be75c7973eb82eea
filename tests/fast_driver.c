/* fast_driver: the device-side driver of scripts/fast-check.sh for the fast kernels (issue 8), beside
 * `convlab bench`: it also reaches the variants that are not in the registry and the CPU models.
 *   fast_driver probe      how one mma.sync TF32 rounds an accumulation (crafted cases, one warp)
 *   fast_driver sanitize [NAME...]
 *                         each fast kernel (and gpu_3xtf32_slab) once on small shapes that reach every
 *                         instance, checked against its CPU twin; for compute-sanitizer. Exit 1 on error.
 *                         With names: only those (SIMT fp32 kernels), each against cpu naive, bit for bit.
 *   fast_driver tune [--repeats R] [--rounds Q] [--impls A,B,..]
 *                         tuning rounds 3-4: cuDNN FP32/TF32 and the candidates timed in one process on the
 *                         headline shape, bits against gpu_naive (notes/fast-kernels.md)
 *   fast_driver one NAME [--shape ...] [--loop SECONDS]
 *                         one kernel run twice (profile the second: ncu --launch-skip 1), or back to back
 *   fast_driver bench [--repeats R] [--rounds Q] [--shape N,C,O,L,K,D,bias]
 *                         headline table: per implementation, Q rounds of R CUDA-event-timed runs (one
 *                         warm-up, y poisoned and the L2 flushed before each; median per round), error
 *                         against the float64 GPU oracle; then the twins on batch row 0: gpu_fp32_fast
 *                         against cpu naive and gpu_naive (bits), gpu_kahan_fast against kahan_blocked
 *                         (bits), gpu_tf32 / gpu_3xtf32 / gpu_3xtf32_slab against their CPU models
 *                         (relative L2 side by side).
 * Inputs: x ~ N(0,1), w ~ N(0,1) (--dist normal, seed 1). Built by CMake (gpu/CMakeLists.txt). */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/device.h"
#include "gpu/oracle_f64.h"
#include "harness/inputs.h"
#include "harness/registry.h"
#include "numerics/arith.h"
#include "numerics/metrics.h"
#include "reference/oracle.h"

extern const c1d_impl c1d_gpu_3xtf32_slab, c1d_gpu_3xtf32_nt4, c1d_gpu_3xtf32_plain, c1d_gpu_fp32_fast_v0,
    c1d_gpu_fp32_fast_v1, c1d_gpu_fp32_fast_v2, c1d_gpu_fp32_fast_v3, c1d_gpu_fp32_fast_v4,
    c1d_gpu_kahan_fast_v0, c1d_gpu_kahan_fast_v1, c1d_gpu_kahan_fast_v2, c1d_cpu_split_3xtf32_slab,
    c1d_cpu_split_3xtf32_plain, c1d_gpu_fp32_fast_v5, c1d_gpu_fp32_fast_v6, c1d_gpu_fp32_fast_v7,
    c1d_gpu_fp32_fast_v8, c1d_gpu_3xtf32_c1_n4m2, c1d_gpu_3xtf32_c2_n4m2, c1d_gpu_3xtf32_c2_n4m1,
    c1d_gpu_3xtf32_c2_n8m1, c1d_gpu_3xtf32_c4_n4m1, c1d_gpu_3xtf32_spl_n4m1, c1d_cpu_split_3xtf32_c2,
    c1d_cpu_split_3xtf32_c4, c1d_cpu_split_3xtf32_spl, c1d_cpu_split_3xtf32_fold, c1d_gpu_fp32_fast_v9,
    c1d_gpu_fp32_fast_v10, c1d_gpu_fp32_fast_v11, c1d_gpu_fp32_fast_v12, c1d_gpu_fp32_fast_v13,
    c1d_gpu_fp32_fast_v14, c1d_gpu_fp32_fast_v15, c1d_gpu_fp32_fast_v16, c1d_gpu_fp32_fast_v17,
    c1d_gpu_fp32_fast_v18, c1d_gpu_fp32_fast_v19, c1d_gpu_fp32_fast_v20, c1d_gpu_fp32_fast_v21,
    c1d_gpu_fp32_fast_v22, c1d_gpu_fp32_fast_v23, c1d_gpu_fp32_fast_v24, c1d_gpu_fp32_fast_v25,
    c1d_gpu_fp32_fast_v26, c1d_gpu_fp32_fast_v27, c1d_gpu_fp32_fast_v28;

/* The unregistered variants, reachable by name here. */
static const c1d_impl *const variants[] = {
    &c1d_gpu_3xtf32_slab,  &c1d_gpu_3xtf32_nt4,   &c1d_gpu_3xtf32_plain, &c1d_gpu_fp32_fast_v0,
    &c1d_gpu_fp32_fast_v1, &c1d_gpu_fp32_fast_v2, &c1d_gpu_fp32_fast_v3, &c1d_gpu_fp32_fast_v4,
    &c1d_gpu_kahan_fast_v0, &c1d_gpu_kahan_fast_v1, &c1d_gpu_kahan_fast_v2, &c1d_cpu_split_3xtf32_slab,
    &c1d_cpu_split_3xtf32_plain, &c1d_gpu_fp32_fast_v5, &c1d_gpu_fp32_fast_v6, &c1d_gpu_fp32_fast_v7,
    &c1d_gpu_fp32_fast_v8, &c1d_gpu_3xtf32_c1_n4m2, &c1d_gpu_3xtf32_c2_n4m2, &c1d_gpu_3xtf32_c2_n4m1,
    &c1d_gpu_3xtf32_c2_n8m1, &c1d_gpu_3xtf32_c4_n4m1, &c1d_gpu_3xtf32_spl_n4m1, &c1d_cpu_split_3xtf32_c2,
    &c1d_cpu_split_3xtf32_c4, &c1d_cpu_split_3xtf32_spl, &c1d_cpu_split_3xtf32_fold, &c1d_gpu_fp32_fast_v9,
    &c1d_gpu_fp32_fast_v10, &c1d_gpu_fp32_fast_v11, &c1d_gpu_fp32_fast_v12, &c1d_gpu_fp32_fast_v13,
    &c1d_gpu_fp32_fast_v14, &c1d_gpu_fp32_fast_v15, &c1d_gpu_fp32_fast_v16, &c1d_gpu_fp32_fast_v17,
    &c1d_gpu_fp32_fast_v18, &c1d_gpu_fp32_fast_v19, &c1d_gpu_fp32_fast_v20, &c1d_gpu_fp32_fast_v21,
    &c1d_gpu_fp32_fast_v22, &c1d_gpu_fp32_fast_v23, &c1d_gpu_fp32_fast_v24, &c1d_gpu_fp32_fast_v25,
    &c1d_gpu_fp32_fast_v26, &c1d_gpu_fp32_fast_v27, &c1d_gpu_fp32_fast_v28};
c1d_status c1d_tf32_mma_probe(const float *c, const float *p, float *out, int cases);

#define CHECK(call)                                                                                \
  do {                                                                                             \
    c1d_status st_ = (call);                                                                       \
    if (st_ != C1D_OK) {                                                                           \
      fprintf(stderr, "fast_driver: %s: %s (%s)\n", #call, c1d_strerror(st_), c1d_error_detail()); \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)

static void *xmalloc(size_t bytes) {
  void *p = malloc(bytes);
  if (!p) {
    fprintf(stderr, "fast_driver: out of host memory (%zu bytes)\n", bytes);
    exit(1);
  }
  return p;
}

static const c1d_impl *impl_named(const char *name) {
  for (size_t i = 0; i < sizeof variants / sizeof variants[0]; i++)
    if (strcmp(name, variants[i]->name) == 0) return variants[i];
  const c1d_impl *impl = c1d_find_impl(name);
  if (!impl) {
    fprintf(stderr, "fast_driver: %s is not registered\n", name);
    exit(1);
  }
  return impl;
}

typedef struct dev_case {
  float *x, *w, *b, *y;
} dev_case;

static dev_case upload(const c1d_shape *s, const float *x, const float *w, const float *b) {
  dev_case d = {0};
  CHECK(c1d_gpu_malloc((void **)&d.x, (size_t)c1d_x_count(s) * 4, "x"));
  CHECK(c1d_gpu_malloc((void **)&d.w, (size_t)c1d_w_count(s) * 4, "w"));
  CHECK(c1d_gpu_malloc((void **)&d.y, (size_t)c1d_y_count(s) * 4, "y"));
  CHECK(c1d_gpu_upload(d.x, x, (size_t)c1d_x_count(s) * 4));
  CHECK(c1d_gpu_upload(d.w, w, (size_t)c1d_w_count(s) * 4));
  if (s->bias) {
    CHECK(c1d_gpu_malloc((void **)&d.b, (size_t)s->O * 4, "b"));
    CHECK(c1d_gpu_upload(d.b, b, (size_t)s->O * 4));
  }
  return d;
}

static void release(dev_case *d) {
  c1d_gpu_free(d->x);
  c1d_gpu_free(d->w);
  c1d_gpu_free(d->b);
  c1d_gpu_free(d->y);
}

static void run_cpu(const c1d_impl *impl, const c1d_shape *s, const float *x, const float *w,
                    const float *b, float *y) {
  c1d_exec ex;
  memset(&ex, 0, sizeof ex);
  for (int64_t i = 0; i < c1d_y_count(s); i++) y[i] = NAN;
  CHECK(impl->run(s, x, w, b, y, &ex));
}

/* setup, one run into d->y (poisoned first), teardown; y downloaded into host when not NULL. */
static void run_gpu_once(const c1d_impl *impl, const c1d_shape *s, dev_case *d, float *host) {
  c1d_exec ex;
  memset(&ex, 0, sizeof ex);
  ex.used_tf32 = -1;
  CHECK(c1d_gpu_poison(d->y, c1d_y_count(s)));
  if (impl->setup) CHECK(impl->setup(s, &ex));
  CHECK(impl->run(s, d->x, d->w, d->b, d->y, &ex));
  CHECK(c1d_gpu_synchronize());
  if (impl->teardown) impl->teardown(&ex);
  if (host) CHECK(c1d_gpu_download(host, d->y, (size_t)c1d_y_count(s) * 4));
}

static int64_t count_bit_diffs(const float *a, const float *b, int64_t n, int64_t *first) {
  int64_t diffs = 0;
  *first = -1;
  for (int64_t i = 0; i < n; i++)
    if (c1d_float_bits(a[i]) != c1d_float_bits(b[i])) {
      if (*first < 0) *first = i;
      diffs++;
    }
  return diffs;
}

static double rel_l2(const float *y, const double *ref, int64_t n) {
  double e = 0, r = 0;
#pragma omp parallel for reduction(+ : e, r)
  for (int64_t i = 0; i < n; i++) {
    const double d = (double)y[i] - ref[i];
    e += d * d;
    r += ref[i] * ref[i];
  }
  return sqrt(e / r);
}

// --- probe ------------------------------------------------------------------------------------------

static int cmd_probe(void) {
  enum { CASES = 6 };
  const float u = 0x1p-23f; /* ulp(1) */
  float c[CASES] = {1.0f, 1.0f, -1.0f, 1.0f, 1.0f + u, 1.0f};
  float p[CASES][8] = {{0}};
  const char *what[CASES] = {
      "1 + 0.75ulp          (RN: 1+ulp, RZ: 1)",
      "1 + 0.5ulp (tie)     (RNE: 1, RNA: 1+ulp, RZ: 1)",
      "-1 - 0.75ulp         (RN: -(1+ulp), RZ: -1)",
      "1 + 2 x 0.5ulp       (exact sum: 1+ulp)",
      "(1+ulp) + 8 x ulp/16 (exact: 1+1.5ulp; RNE: 1+2ulp, RZ or products dropped: 1+ulp)",
      "1 + 8 x 0.09375ulp   (exact 1+0.75ulp: RN 1+ulp; truncated products: less)",
  };
  p[0][0] = 0.75f * u;
  p[1][0] = 0.5f * u;
  p[2][0] = -0.75f * u;
  p[3][0] = p[3][5] = 0.5f * u;
  for (int j = 0; j < 8; j++) p[4][j] = u / 16, p[5][j] = 0.09375f * u;
  float out[CASES];
  CHECK(c1d_tf32_mma_probe(c, &p[0][0], out, CASES));
  printf("mma.sync m16n8k8 TF32 accumulation probe (ulp = ulp(1) = 2^-23):\n");
  for (int i = 0; i < CASES; i++) {
    const double excess = ((double)out[i] - (double)c[i]) / u;
    printf("  case %d: %-82s -> %.9g (result - c = %+.4f ulp)\n", i, what[i], out[i], excess);
  }
  const int rn = out[0] == 1.0f + u && out[2] == -(1.0f + u);
  const int rz = out[0] == 1.0f && out[2] == -1.0f;
  printf("RESULT probe rounding=%s\n", rn ? "nearest" : rz ? "toward-zero" : "other");
  return 0;
}

// --- sanitize ---------------------------------------------------------------------------------------

static int cmd_sanitize(int argc, char **argv) {
  const c1d_shape shapes[] = {
      {2, 19, 131, 300, 4, 1, 1}, {1, 9, 33, 513, 2, 1, 1}, {1, 12, 20, 260, 3, 1, 0},
      {2, 37, 29, 101, 5, 3, 1},  {1, 16, 16, 64, 2, 4, 1}, {1, 1, 1, 70, 1, 5, 0},
      {1, 5, 9, 130, 3, 60, 1},   {1, 24, 200, 1024, 4, 1, 0}, {2, 16, 64, 520, 4, 1, 1},
  };
  const char *kernels[] = {"gpu_fp32_fast",     "gpu_fp32_fast_v0",  "gpu_fp32_fast_v1", "gpu_fp32_fast_v2",
                           "gpu_fp32_fast_v3",  "gpu_fp32_fast_v4",  "gpu_kahan_fast_v0", "gpu_kahan_fast_v1",
                           "gpu_kahan_fast_v2", "gpu_tf32", "gpu_3xtf32", "gpu_3xtf32_nt4",
                           "gpu_3xtf32_plain", "gpu_3xtf32_slab"};
  const char *twins[] = {"naive",         "naive",         "naive", "naive", "naive", "naive", "kahan_blocked",
                         "kahan_blocked",
                         "kahan_blocked", "tf32_inputs", "split_3xtf32", "split_3xtf32_fold",
                         "split_3xtf32_plain", "split_3xtf32_slab"};
  const char **klist = kernels, **tlist = twins;
  int nk = sizeof kernels / sizeof kernels[0], nbits = 9; /* the first nbits: bits against the twin */
  const char *naive_twins[64];
  if (argc > 0) { /* sanitize NAME...: only these SIMT fp32 kernels, each against cpu naive (bits) */
    klist = (const char **)argv, nk = argc < 64 ? argc : 64, nbits = nk;
    for (int k = 0; k < nk; k++) naive_twins[k] = "naive";
    tlist = naive_twins;
  }
  int failures = 0;
  for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
    const c1d_shape *s = &shapes[si];
    const int64_t ny = c1d_y_count(s);
    float *x = xmalloc((size_t)c1d_x_count(s) * 4), *w = xmalloc((size_t)c1d_w_count(s) * 4);
    float *b = s->bias ? xmalloc((size_t)s->O * 4) : NULL, *y = xmalloc((size_t)ny * 4),
          *t = xmalloc((size_t)ny * 4);
    double *ref = xmalloc((size_t)ny * 8);
    c1d_generate(s, C1D_DIST_NORMAL, 7 + si, x, w, b);
    CHECK(c1d_oracle_f64(s, x, w, b, ref, NULL, NULL, NULL));
    dev_case d = upload(s, x, w, b);
    char name[96];
    c1d_shape_format(s, name, sizeof name);
    for (int k = 0; k < nk; k++) {
      const c1d_impl *impl = impl_named(klist[k]);
      if (impl->supported && impl->supported(s)) continue;
      run_gpu_once(impl, s, &d, y);
      run_cpu(impl_named(tlist[k]), s, x, w, b, t);
      int64_t first;
      if (k < nbits) {
        const int64_t diffs = count_bit_diffs(y, t, ny, &first);
        printf("  %-16s %-40s bit differences from %s: %lld\n", klist[k], name, tlist[k], (long long)diffs);
        failures += diffs != 0;
      } else {
        const double ek = rel_l2(y, ref, ny), em = rel_l2(t, ref, ny);
        const int tf32 = strstr(klist[k], "3x") == NULL, plain = strstr(klist[k], "plain") != NULL;
        const int ok = isfinite(ek) && ek < (tf32 ? 2e-3 : plain ? 5e-5 : 2e-6);
        printf("  %-16s %-40s rel L2 %.3g (model %s %.3g)%s\n", klist[k], name, ek, tlist[k], em,
               ok ? "" : "  FAIL");
        failures += !ok;
      }
    }
    release(&d);
    free(x), free(w), free(b), free(y), free(t), free(ref);
  }
  printf("RESULT sanitize failures=%d\n", failures);
  return failures != 0;
}

// --- bench ------------------------------------------------------------------------------------------

static int cmp_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

typedef struct row {
  const char *name;
  double med[4], best;
  int rounds;
  double rel_l2;
  char math[64];
} row;

static void time_impl(const c1d_impl *impl, const c1d_shape *s, dev_case *d, int repeats, int round,
                      row *r, c1d_gpu_timer *timer) {
  c1d_exec ex;
  memset(&ex, 0, sizeof ex);
  ex.used_tf32 = -1;
  if (impl->setup) CHECK(impl->setup(s, &ex));
  CHECK(impl->run(s, d->x, d->w, d->b, d->y, &ex)); /* warm-up */
  CHECK(c1d_gpu_synchronize());
  double *ms = xmalloc((size_t)repeats * sizeof *ms);
  for (int i = 0; i < repeats; i++) {
    CHECK(c1d_gpu_poison(d->y, c1d_y_count(s)));
    CHECK(c1d_gpu_flush_l2());
    CHECK(c1d_gpu_timer_start(timer));
    CHECK(impl->run(s, d->x, d->w, d->b, d->y, &ex));
    CHECK(c1d_gpu_timer_stop(timer, &ms[i]));
  }
  qsort(ms, (size_t)repeats, sizeof *ms, cmp_double);
  r->med[round] = repeats % 2 ? ms[repeats / 2] : 0.5 * (ms[repeats / 2 - 1] + ms[repeats / 2]);
  if (round == 0 || ms[0] < r->best) r->best = ms[0];
  r->rounds = round + 1;
  snprintf(r->math, sizeof r->math, "%s", ex.math);
  free(ms);
  if (impl->teardown) impl->teardown(&ex);
}

static int parse_shape(const char *text, c1d_shape *s) {
  long long v[7];
  if (sscanf(text, "%lld,%lld,%lld,%lld,%lld,%lld,%lld", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6]) != 7)
    return -1;
  *s = (c1d_shape){v[0], v[1], v[2], v[3], v[4], v[5], (int)v[6]};
  return c1d_shape_validate(s) == C1D_OK ? 0 : -1;
}

static int cmd_bench(int argc, char **argv) {
  c1d_shape s = c1d_headline_shape();
  int repeats = 20, rounds = 2;
  for (int i = 0; i < argc; i++) {
    if (strcmp(argv[i], "--repeats") == 0 && i + 1 < argc) repeats = atoi(argv[++i]);
    else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) rounds = atoi(argv[++i]);
    else if (strcmp(argv[i], "--shape") == 0 && i + 1 < argc) {
      if (parse_shape(argv[++i], &s)) {
        fprintf(stderr, "fast_driver: bad --shape %s\n", argv[i]);
        return 2;
      }
    } else {
      fprintf(stderr, "fast_driver: unknown argument %s\n", argv[i]);
      return 2;
    }
  }
  if (rounds < 1 || rounds > 4 || repeats < 1) return 2;
  const char *names[] = {"cudnn_fp32",        "cudnn_tf32",       "cublas_im2col_fp32", "gpu_fp32_fast",
                         "gpu_fp32_fast_v0",  "gpu_fp32_fast_v1", "gpu_fp32_fast_v2",   "gpu_fp32_fast_v3",
                         "gpu_fp32_fast_v4",  "gpu_kahan_fast",   "gpu_kahan_fast_v0",  "gpu_kahan_fast_v1",
                         "gpu_kahan_fast_v2", "gpu_tf32",         "gpu_3xtf32",         "gpu_3xtf32_nt4",
                         "gpu_3xtf32_plain",  "gpu_3xtf32_slab"};
  enum { NI = sizeof names / sizeof names[0] };
  const int64_t ny = c1d_y_count(&s);
  char shape_text[128];
  c1d_shape_format(&s, shape_text, sizeof shape_text);
  c1d_gpu_info info;
  CHECK(c1d_gpu_get_info(&info));
  printf("device %s, %d SMs, driver %d, runtime %d, cuDNN %ld; shape %s; %.1f GFLOP\n", info.name,
         info.sm_count, info.driver_version, info.runtime_version, info.cudnn_version, shape_text,
         c1d_flops(&s) * 1e-9);

  float *x = xmalloc((size_t)c1d_x_count(&s) * 4), *w = xmalloc((size_t)c1d_w_count(&s) * 4);
  float *b = s.bias ? xmalloc((size_t)s.O * 4) : NULL, *y = xmalloc((size_t)ny * 4);
  double *ref = xmalloc((size_t)ny * 8);
  c1d_generate(&s, C1D_DIST_NORMAL, 1, x, w, b);
  dev_case d = upload(&s, x, w, b);
  {
    double *dref = NULL;
    CHECK(c1d_gpu_malloc((void **)&dref, (size_t)ny * 8, "oracle y"));
    CHECK(c1d_gpu_oracle_f64(&s, d.x, d.w, d.b, dref, NULL));
    CHECK(c1d_gpu_synchronize());
    CHECK(c1d_gpu_download(ref, dref, (size_t)ny * 8));
    c1d_gpu_free(dref);
  }
  c1d_gpu_timer *timer = NULL;
  CHECK(c1d_gpu_timer_create(&timer));
  row rows[NI];
  memset(rows, 0, sizeof rows);
  for (int r = 0; r < rounds; r++)
    for (int i = 0; i < NI; i++) {
      const c1d_impl *impl = impl_named(names[i]);
      rows[i].name = names[i];
      if (!impl || (impl->supported && impl->supported(&s))) continue;
      time_impl(impl, &s, &d, repeats, r, &rows[i], timer);
      if (r == 0) {
        CHECK(c1d_gpu_synchronize());
        CHECK(c1d_gpu_download(y, d.y, (size_t)ny * 4));
        rows[i].rel_l2 = rel_l2(y, ref, ny);
      }
    }
  const double f32 = rows[0].med[0], t32 = rows[1].med[0], flops = c1d_flops(&s);
  printf("\n%-20s %9s %9s %9s %8s %7s %8s %8s %10s  %s\n", "impl", "median", "median2", "min", "TFLOP/s",
         "%fp32", "/cudnn32", "/cudnnTF", "rel L2", "math");
  for (int i = 0; i < NI; i++) {
    const row *r = &rows[i];
    if (!r->rounds) {
      printf("%-20s skipped\n", r->name);
      continue;
    }
    const double m = r->med[0];
    printf("%-20s %8.3fms %8.3fms %8.3fms %8.1f %6.1f%% %8.3f %8.3f %10.3g  %s\n", r->name, m,
           r->rounds > 1 ? r->med[1] : NAN, r->best, flops / (m * 1e-3) * 1e-12,
           100.0 * flops / (m * 1e-3) / 65.2e12, m / f32, m / t32, r->rel_l2, r->math);
    printf("RESULT %s median_ms=%.4f median2_ms=%.4f min_ms=%.4f rel_l2=%.4g speedup_vs_cudnn_fp32=%.3f "
           "vs_cudnn_tf32=%.3f\n",
           r->name, m, r->rounds > 1 ? r->med[1] : NAN, r->best, r->rel_l2, f32 / m, t32 / m);
  }
  fflush(stdout);

  /* Twins on batch row 0 (its outputs depend on its inputs and w only). */
  c1d_shape s1 = s;
  s1.N = 1;
  const int64_t n1 = c1d_y_count(&s1);
  float *g = xmalloc((size_t)n1 * 4), *t = xmalloc((size_t)n1 * 4);
  printf("\ntwins on batch row 0 (%lld outputs):\n", (long long)n1);
  {
    int64_t first;
    run_gpu_once(impl_named("gpu_fp32_fast"), &s, &d, y);
    run_cpu(impl_named("naive"), &s1, x, w, b, t);
    int64_t diffs = count_bit_diffs(y, t, n1, &first);
    printf("RESULT twin gpu_fp32_fast vs cpu naive (row 0): %lld bit differences\n", (long long)diffs);
    memcpy(g, y, (size_t)n1 * 4);
    float *full = xmalloc((size_t)ny * 4);
    memcpy(full, y, (size_t)ny * 4);
    run_gpu_once(impl_named("gpu_naive"), &s, &d, y);
    diffs = count_bit_diffs(y, full, ny, &first);
    printf("RESULT twin gpu_fp32_fast vs gpu_naive (all %lld): %lld bit differences\n", (long long)ny,
           (long long)diffs);
    memcpy(full, y, (size_t)ny * 4); /* gpu_naive's */
    const char *fv[] = {"gpu_fp32_fast_v0", "gpu_fp32_fast_v1", "gpu_fp32_fast_v2", "gpu_fp32_fast_v3",
                        "gpu_fp32_fast_v4"};
    for (int i = 0; i < 5; i++) {
      run_gpu_once(impl_named(fv[i]), &s, &d, y);
      diffs = count_bit_diffs(y, full, ny, &first);
      printf("RESULT twin %s vs gpu_naive (all): %lld bit differences\n", fv[i], (long long)diffs);
    }
    run_gpu_once(impl_named("gpu_kahan_fast"), &s, &d, y);
    memcpy(full, y, (size_t)ny * 4);
    run_cpu(impl_named("kahan_blocked"), &s1, x, w, b, t);
    diffs = count_bit_diffs(y, t, n1, &first);
    printf("RESULT twin gpu_kahan_fast vs cpu kahan_blocked (row 0): %lld bit differences\n", (long long)diffs);
    const char *kv[] = {"gpu_kahan_fast_v0", "gpu_kahan_fast_v1", "gpu_kahan_fast_v2"};
    for (int i = 0; i < 3; i++) {
      run_gpu_once(impl_named(kv[i]), &s, &d, y);
      diffs = count_bit_diffs(y, full, ny, &first);
      printf("RESULT twin %s vs gpu_kahan_fast (all): %lld bit differences\n", kv[i], (long long)diffs);
    }
    free(full);
  }
  const char *stat_k[] = {"gpu_tf32", "gpu_3xtf32", "gpu_3xtf32_nt4", "gpu_3xtf32_plain", "gpu_3xtf32_slab"};
  const char *stat_m[] = {"tf32_inputs", "split_3xtf32", "split_3xtf32_fold", "split_3xtf32_plain",
                          "split_3xtf32_slab"};
  for (int i = 0; i < 5; i++) {
    run_gpu_once(impl_named(stat_k[i]), &s, &d, y);
    run_cpu(impl_named(stat_m[i]), &s1, x, w, b, t);
    const double ek = rel_l2(y, ref, n1), em = rel_l2(t, ref, n1);
    printf("RESULT model %s rel_l2=%.4g vs %s rel_l2=%.4g ratio=%.3f\n", stat_k[i], ek, stat_m[i], em,
           ek / em);
  }
  c1d_gpu_timer_destroy(timer);
  release(&d);
  free(x), free(w), free(b), free(y), free(ref), free(g), free(t);
  return 0;
}

/* tune: tuning round 3. Times (rounds x repeats, medians) cuDNN FP32/TF32 and every candidate in one
 * process on the headline shape, then checks each FP32 candidate against gpu_naive (bits, all outputs)
 * and each 3xTF32 candidate against the float64 GPU oracle (rel L2, all outputs) and its CPU model
 * (batch row 0). */
static int cmd_tune(int argc, char **argv) {
  int repeats = 20, rounds = 2;
  char *impls = NULL;
  for (int i = 0; i + 1 < argc; i++) {
    if (strcmp(argv[i], "--repeats") == 0) repeats = atoi(argv[++i]);
    else if (strcmp(argv[i], "--rounds") == 0) rounds = atoi(argv[++i]);
    else if (strcmp(argv[i], "--impls") == 0) impls = argv[++i];
  }
  if (rounds < 1 || rounds > 4 || repeats < 1) return 2;
  const c1d_shape s = c1d_headline_shape();
  const char *names_r3[] = {"cudnn_fp32",         "cudnn_tf32",         "gpu_fp32_fast",      "gpu_fp32_fast_v1",
                         "gpu_fp32_fast_v5",   "gpu_fp32_fast_v6",   "gpu_fp32_fast_v7",   "gpu_fp32_fast_v8",
                         "gpu_3xtf32",         "gpu_3xtf32_c1_n4m2", "gpu_3xtf32_c2_n4m2", "gpu_3xtf32_c2_n4m1",
                         "gpu_3xtf32_c2_n8m1", "gpu_3xtf32_c4_n4m1", "gpu_3xtf32_spl_n4m1"};
  const char *models_r3[] = {NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, "split_3xtf32", "split_3xtf32_fold",
                          "split_3xtf32_c2", "split_3xtf32_c2", "split_3xtf32_c2", "split_3xtf32_c4",
                          "split_3xtf32_spl"};
  /* --impls a,b,c (round 4): cudnn_fp32, cudnn_tf32, then these; no models */
  enum { NMAX = 40 };
  const char *names[NMAX], *models[NMAX];
  int NI = 0;
  if (impls) {
    names[NI] = "cudnn_fp32", models[NI++] = NULL;
    names[NI] = "cudnn_tf32", models[NI++] = NULL;
    for (char *tok = strtok(impls, ","); tok && NI < NMAX; tok = strtok(NULL, ",")) names[NI] = tok, models[NI++] = NULL;
  } else {
    for (size_t i = 0; i < sizeof names_r3 / sizeof names_r3[0]; i++) names[NI] = names_r3[i], models[NI++] = models_r3[i];
  }
  const int64_t ny = c1d_y_count(&s);
  c1d_gpu_info info;
  CHECK(c1d_gpu_get_info(&info));
  printf("device %s, %d SMs, driver %d, runtime %d, cuDNN %ld\n", info.name, info.sm_count,
         info.driver_version, info.runtime_version, info.cudnn_version);
  float *x = xmalloc((size_t)c1d_x_count(&s) * 4), *w = xmalloc((size_t)c1d_w_count(&s) * 4);
  float *b = s.bias ? xmalloc((size_t)s.O * 4) : NULL, *y = xmalloc((size_t)ny * 4);
  float *naive = xmalloc((size_t)ny * 4);
  double *ref = xmalloc((size_t)ny * 8);
  c1d_generate(&s, C1D_DIST_NORMAL, 1, x, w, b);
  dev_case d = upload(&s, x, w, b);
  {
    double *dref = NULL;
    CHECK(c1d_gpu_malloc((void **)&dref, (size_t)ny * 8, "oracle y"));
    CHECK(c1d_gpu_oracle_f64(&s, d.x, d.w, d.b, dref, NULL));
    CHECK(c1d_gpu_synchronize());
    CHECK(c1d_gpu_download(ref, dref, (size_t)ny * 8));
    c1d_gpu_free(dref);
  }
  run_gpu_once(impl_named("gpu_naive"), &s, &d, naive);
  c1d_gpu_timer *timer = NULL;
  CHECK(c1d_gpu_timer_create(&timer));
  row rows[NMAX];
  memset(rows, 0, sizeof rows);
  int64_t bits[NMAX];
  for (int i = 0; i < NI; i++) bits[i] = -1;
  for (int r = 0; r < rounds; r++)
    for (int i = 0; i < NI; i++) {
      const c1d_impl *impl = impl_named(names[i]);
      rows[i].name = names[i];
      if (impl->supported && impl->supported(&s)) continue;
      time_impl(impl, &s, &d, repeats, r, &rows[i], timer);
      if (r == 0) {
        CHECK(c1d_gpu_synchronize());
        CHECK(c1d_gpu_download(y, d.y, (size_t)ny * 4));
        rows[i].rel_l2 = rel_l2(y, ref, ny);
        int64_t first;
        if (strncmp(names[i], "gpu_fp32", 8) == 0) bits[i] = count_bit_diffs(y, naive, ny, &first);
      }
      fprintf(stderr, "timed %s round %d: %.3f ms\n", names[i], r, rows[i].med[r]);
    }
  const double f32 = rows[0].med[0], t32 = rows[1].med[0], flops = c1d_flops(&s);
  for (int i = 0; i < NI; i++) {
    const row *r = &rows[i];
    if (!r->rounds) {
      printf("RESULT %s skipped (unsupported)\n", r->name);
      continue;
    }
    double mm = r->med[0];
    for (int k = 1; k < r->rounds; k++) mm = r->med[k] < mm ? r->med[k] : mm;
    printf("RESULT %-20s med_ms=%.4f med2_ms=%.4f min_ms=%.4f pct_fp32_ceiling=%.1f vs_cudnn_fp32=%.3f "
           "vs_cudnn_tf32=%.3f rel_l2=%.4g",
           r->name, r->med[0], r->rounds > 1 ? r->med[1] : NAN, r->best,
           100.0 * flops / (mm * 1e-3) / 65.2e12, f32 / mm, t32 / mm, r->rel_l2);
    if (bits[i] >= 0) printf(" bitdiffs_vs_gpu_naive=%lld", (long long)bits[i]);
    printf("\n");
  }
  fflush(stdout);
  c1d_shape s1 = s;
  s1.N = 1;
  const int64_t n1 = c1d_y_count(&s1);
  float *t = xmalloc((size_t)n1 * 4);
  const char *done[NMAX] = {0};
  double dm[NMAX] = {0};
  for (int i = 0; i < NI; i++) {
    if (!models[i] || !rows[i].rounds) continue;
    double em = -1;
    for (int k = 0; k < i; k++)
      if (done[k] && strcmp(done[k], models[i]) == 0) em = dm[k];
    if (em < 0) {
      run_cpu(impl_named(models[i]), &s1, x, w, b, t);
      em = rel_l2(t, ref, n1);
    }
    done[i] = models[i], dm[i] = em;
    run_gpu_once(impl_named(names[i]), &s, &d, y);
    const double ek = rel_l2(y, ref, n1);
    printf("RESULT model %-20s row0_rel_l2=%.4g %s=%.4g ratio=%.3f\n", names[i], ek, models[i], em, ek / em);
    fflush(stdout);
  }
  c1d_gpu_timer_destroy(timer);
  release(&d);
  free(x), free(w), free(b), free(y), free(naive), free(ref), free(t);
  return 0;
}

/* one NAME [--shape ...] [--loop SECONDS]: NAME run twice at the headline shape (the second is the one
 * to profile: ncu --launch-skip 1), or back to back for SECONDS (clock and power under sustained load;
 * prints the mean time per run). */
static int cmd_one(int argc, char **argv) {
  if (argc < 1) return 2;
  c1d_shape s = c1d_headline_shape();
  double loop_s = 0;
  for (int i = 1; i + 1 < argc; i++) {
    if (strcmp(argv[i], "--shape") == 0) {
      if (parse_shape(argv[++i], &s)) return 2;
    } else if (strcmp(argv[i], "--loop") == 0) loop_s = atof(argv[++i]);
  }
  const c1d_impl *impl = impl_named(argv[0]);
  if (impl->supported && impl->supported(&s)) return 2;
  float *x = xmalloc((size_t)c1d_x_count(&s) * 4), *w = xmalloc((size_t)c1d_w_count(&s) * 4);
  float *b = s.bias ? xmalloc((size_t)s.O * 4) : NULL;
  c1d_generate(&s, C1D_DIST_NORMAL, 1, x, w, b);
  dev_case d = upload(&s, x, w, b);
  c1d_exec ex;
  memset(&ex, 0, sizeof ex);
  ex.used_tf32 = -1;
  if (impl->setup) CHECK(impl->setup(&s, &ex));
  CHECK(impl->run(&s, d.x, d.w, d.b, d.y, &ex));
  CHECK(c1d_gpu_synchronize());
  if (loop_s <= 0) {
    CHECK(impl->run(&s, d.x, d.w, d.b, d.y, &ex));
    CHECK(c1d_gpu_synchronize());
  } else {
    c1d_gpu_timer *timer = NULL;
    CHECK(c1d_gpu_timer_create(&timer));
    double total = 0, ms = 0;
    long runs = 0;
    while (total < loop_s * 1e3) {
      CHECK(c1d_gpu_timer_start(timer));
      for (int r = 0; r < 50; r++) CHECK(impl->run(&s, d.x, d.w, d.b, d.y, &ex));
      CHECK(c1d_gpu_timer_stop(timer, &ms));
      total += ms, runs += 50;
    }
    printf("RESULT loop %s runs=%ld mean_ms=%.4f\n", impl->name, runs, total / runs);
    c1d_gpu_timer_destroy(timer);
  }
  if (impl->teardown) impl->teardown(&ex);
  release(&d);
  free(x), free(w), free(b);
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: fast_driver probe | sanitize [NAME...] | bench [--repeats R] [--rounds Q] [--shape ...]"
                    " | tune [--impls A,B] | one NAME [--loop S]\n");
    return 2;
  }
  const char *why = c1d_gpu_unavailable();
  if (why) {
    fprintf(stderr, "fast_driver: %s\n", why);
    return 1;
  }
  if (strcmp(argv[1], "probe") == 0) return cmd_probe();
  if (strcmp(argv[1], "sanitize") == 0) return cmd_sanitize(argc - 2, argv + 2);
  if (strcmp(argv[1], "one") == 0) return cmd_one(argc - 2, argv + 2);
  if (strcmp(argv[1], "bench") == 0) return cmd_bench(argc - 2, argv + 2);
  if (strcmp(argv[1], "tune") == 0) return cmd_tune(argc - 2, argv + 2);
  fprintf(stderr, "fast_driver: unknown command %s\n", argv[1]);
  return 2;
}
