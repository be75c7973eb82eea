/* gpu_driver: the small programs scripts/gpu-check.sh runs on a GPU machine (until `convlab run`
 * covers them).
 *   gpu_driver sanitize
 *       runs every kernel of gpu/ once at small shapes (both oracle paths, with m), for
 *       compute-sanitizer; exits 1 on any error.
 *   gpu_driver bench [--shape N,C,O,L,K,D,bias] [--repeats R] [--impls a,b,...] [--twins]
 *       the headline table: per GPU implementation the median of R timed runs (CUDA events around
 *       run() only, L2 flushed and y poisoned before each), and its error against the float64 GPU
 *       oracle; the oracle's own time (y and m, and y alone); with --twins, whether each bit-exact
 *       twin equals its CPU implementation at this shape. Inputs: x ~ N(0,1), w, b ~ U(+-1/sqrt(C*K))
 *       (nn.Conv1d's initialisation), seed 1. Lines starting "RESULT" are for the script to parse. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/device.h"
#include "gpu/oracle_f64.h"
#include "gpu/oracle_f64_paths.h"
#include "harness/inputs.h"
#include "harness/registry.h"
#include "numerics/metrics.h"

static const char *const own_impls = "gpu_naive,gpu_tap_partial,gpu_kahan,gpu_tiled_smem,gpu_oracle_f64";

#define CHECK(call)                                                                 \
  do {                                                                              \
    c1d_status st_ = (call);                                                        \
    if (st_ != C1D_OK) {                                                            \
      fprintf(stderr, "gpu_driver: %s: %s (%s)\n", #call, c1d_strerror(st_),        \
              c1d_error_detail());                                                  \
      return 1;                                                                     \
    }                                                                               \
  } while (0)

typedef struct dev_inputs {
  float *x, *w, *b;
} dev_inputs;

static int upload_inputs(const c1d_shape *s, const float *x, const float *w, const float *b,
                         dev_inputs *d) {
  const size_t nx = (size_t)c1d_x_count(s) * 4, nw = (size_t)c1d_w_count(s) * 4;
  memset(d, 0, sizeof *d);
  CHECK(c1d_gpu_malloc((void **)&d->x, nx, "x"));
  CHECK(c1d_gpu_malloc((void **)&d->w, nw, "w"));
  CHECK(c1d_gpu_upload(d->x, x, nx));
  CHECK(c1d_gpu_upload(d->w, w, nw));
  if (s->bias) {
    CHECK(c1d_gpu_malloc((void **)&d->b, (size_t)s->O * 4, "b"));
    CHECK(c1d_gpu_upload(d->b, b, (size_t)s->O * 4));
  }
  return 0;
}

static void free_inputs(dev_inputs *d) {
  c1d_gpu_free(d->x);
  c1d_gpu_free(d->w);
  c1d_gpu_free(d->b);
}

static int host_inputs(const c1d_shape *s, c1d_dist dist, float **x, float **w, float **b) {
  *x = malloc((size_t)c1d_x_count(s) * 4);
  *w = malloc((size_t)c1d_w_count(s) * 4);
  *b = s->bias ? malloc((size_t)s->O * 4) : NULL;
  if (!*x || !*w || (s->bias && !*b)) {
    fprintf(stderr, "gpu_driver: out of host memory for the inputs\n");
    return 1;
  }
  c1d_generate(s, dist, 1, *x, *w, *b);
  return 0;
}

// --- sanitize ----------------------------------------------------------------------------------------

static int sanitize_shape(const c1d_shape *s) {
  float *x, *w, *b, *y = NULL;
  double *y64 = NULL, *m64 = NULL;
  dev_inputs d;
  char text[128];
  c1d_shape_format(s, text, sizeof text);
  if (host_inputs(s, C1D_DIST_NORMAL, &x, &w, &b) || upload_inputs(s, x, w, b, &d)) return 1;
  const int64_t ny = c1d_y_count(s);
  CHECK(c1d_gpu_malloc((void **)&y, (size_t)ny * 4, "y"));
  CHECK(c1d_gpu_malloc((void **)&y64, (size_t)ny * 8, "y64"));
  CHECK(c1d_gpu_malloc((void **)&m64, (size_t)ny * 8, "m64"));
  const char *names[] = {"gpu_naive", "gpu_tap_partial", "gpu_kahan", "gpu_tiled_smem",
                         "gpu_oracle_f64"};
  for (unsigned i = 0; i < sizeof names / sizeof names[0]; i++) {
    const c1d_impl *impl = c1d_find_impl(names[i]);
    c1d_exec ex;
    memset(&ex, 0, sizeof ex);
    if (!impl) {
      fprintf(stderr, "gpu_driver: %s is not registered\n", names[i]);
      return 1;
    }
    CHECK(c1d_gpu_poison(y, ny));
    if (impl->setup) CHECK(impl->setup(s, &ex));
    CHECK(impl->run(s, d.x, d.w, d.b, y, &ex));
    CHECK(c1d_gpu_synchronize());
    if (impl->teardown) impl->teardown(&ex);
    printf("sanitize: %-16s %s ok\n", names[i], text);
  }
  const c1d_gpu_oracle_path chosen = c1d_gpu_oracle_f64_path(s);
  CHECK(c1d_gpu_oracle_f64(s, d.x, d.w, d.b, y64, m64));
  CHECK(c1d_gpu_synchronize());
  printf("sanitize: oracle y+m (%s path) %s ok\n", c1d_gpu_oracle_path_name(chosen), text);
  if (chosen == C1D_ORACLE_PATH_MMA) {
    CHECK(c1d_gpu_oracle_f64_on(C1D_ORACLE_PATH_DIRECT, s, d.x, d.w, d.b, y64, m64));
    CHECK(c1d_gpu_synchronize());
    printf("sanitize: oracle y+m (direct path) %s ok\n", text);
  }
  c1d_gpu_free(y);
  c1d_gpu_free(y64);
  c1d_gpu_free(m64);
  free_inputs(&d);
  free(x);
  free(w);
  free(b);
  return 0;
}

static int run_sanitize(void) {
  /* odd sizes, bias; several oracle blocks and chunks; a window only the direct path takes */
  const c1d_shape shapes[] = {
      {2, 5, 11, 45, 3, 2, 1}, {1, 17, 70, 150, 4, 1, 0}, {1, 3, 4, 40, 2, 97, 1}};
  for (unsigned i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
    if (sanitize_shape(&shapes[i])) return 1;
  printf("sanitize: all kernels ran\n");
  return 0;
}

// --- bench -------------------------------------------------------------------------------------------

static int cmp_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Times `repeats` runs of the oracle (y and m when mag) after a warm-up. */
static int time_oracle(const c1d_shape *s, const dev_inputs *d, double *y64, double *m64,
                       int repeats, c1d_gpu_timer *timer, double *med, double *min) {
  double *ms = malloc((size_t)repeats * sizeof *ms);
  if (!ms) return 1;
  CHECK(c1d_gpu_oracle_f64(s, d->x, d->w, d->b, y64, m64));
  CHECK(c1d_gpu_synchronize());
  for (int r = 0; r < repeats; r++) {
    CHECK(c1d_gpu_flush_l2());
    CHECK(c1d_gpu_timer_start(timer));
    CHECK(c1d_gpu_oracle_f64(s, d->x, d->w, d->b, y64, m64));
    CHECK(c1d_gpu_timer_stop(timer, &ms[r]));
  }
  *med = median(ms, repeats);
  *min = ms[0];
  free(ms);
  return 0;
}

typedef struct twin_cache {
  const char *name;
  float *y;
} twin_cache;

static int run_bench(c1d_shape s, int repeats, const char *impls, int twins) {
  float *x, *w, *b;
  dev_inputs d;
  c1d_gpu_info info;
  char text[128];
  c1d_gpu_timer *timer = NULL;
  const int64_t ny = c1d_y_count(&s);
  CHECK(c1d_shape_validate(&s));
  CHECK(c1d_gpu_get_info(&info));
  c1d_shape_format(&s, text, sizeof text);
  printf("device: %s, %d SMs, cc %d.%d, L2 %.0f MB, driver %d, runtime %d, cuDNN %ld\n", info.name,
         info.sm_count, info.cc_major, info.cc_minor, info.l2_bytes / 1e6, info.driver_version,
         info.runtime_version, info.cudnn_version);
  printf("shape: %s (%.1f GFLOP), inputs conv_init seed 1, %d timed runs each\n", text,
         c1d_flops(&s) / 1e9, repeats);
  if (host_inputs(&s, C1D_DIST_CONV_INIT, &x, &w, &b) || upload_inputs(&s, x, w, b, &d)) return 1;
  CHECK(c1d_gpu_timer_create(&timer));

  /* The reference: the GPU oracle, timed with and without m. */
  double *y64 = NULL, *m64 = NULL, med, min;
  CHECK(c1d_gpu_malloc((void **)&y64, (size_t)ny * 8, "oracle y"));
  CHECK(c1d_gpu_malloc((void **)&m64, (size_t)ny * 8, "oracle m"));
  if (time_oracle(&s, &d, y64, NULL, repeats, timer, &med, &min)) return 1;
  printf("RESULT oracle_y_ms %.4f\n", med);
  if (time_oracle(&s, &d, y64, m64, repeats, timer, &med, &min)) return 1;
  printf("RESULT oracle_ym_ms %.4f\n", med);
  printf("oracle (%s path): y and m %.3f ms (%.1f TFLOP/s of fp64 FMA work)\n",
         c1d_gpu_oracle_path_name(c1d_gpu_oracle_f64_path(&s)), med, 2 * c1d_flops(&s) / med / 1e9);
  double *ref = malloc((size_t)ny * 8), *mag = malloc((size_t)ny * 8);
  float *y_host = malloc((size_t)ny * 4);
  if (!ref || !mag || !y_host) {
    fprintf(stderr, "gpu_driver: out of host memory for the outputs\n");
    return 1;
  }
  CHECK(c1d_gpu_download(ref, y64, (size_t)ny * 8));
  CHECK(c1d_gpu_download(mag, m64, (size_t)ny * 8));
  c1d_gpu_free(y64);
  c1d_gpu_free(m64);

  float *y = NULL;
  double *ms = malloc((size_t)repeats * sizeof *ms);
  twin_cache cache[8];
  int n_cache = 0;
  CHECK(c1d_gpu_malloc((void **)&y, (size_t)ny * 4, "y"));
  printf("\n%-20s %10s %10s %9s %11s %11s %9s %s\n", "implementation", "median_ms", "min_ms",
         "TFLOP/s", "rel_l2", "max_abs", "allclose%", twins ? "twin" : "");
  char *list = strdup(impls);
  for (char *save = NULL, *name = strtok_r(list, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
    const c1d_impl *impl = c1d_find_impl(name);
    if (!impl || impl->backend != C1D_BACKEND_GPU) {
      printf("%-20s not a registered GPU implementation\n", name);
      continue;
    }
    const char *why = impl->supported ? impl->supported(&s) : NULL;
    if (why) {
      printf("%-20s skipped: %s\n", name, why);
      continue;
    }
    c1d_exec ex;
    memset(&ex, 0, sizeof ex);
    ex.used_tf32 = -1;
    c1d_status st = impl->setup ? impl->setup(&s, &ex) : C1D_OK;
    if (st == C1D_OK) st = c1d_gpu_poison(y, ny);
    if (st == C1D_OK) st = impl->run(&s, d.x, d.w, d.b, y, &ex); /* warm-up */
    if (st == C1D_OK) st = c1d_gpu_synchronize();
    for (int r = 0; r < repeats && st == C1D_OK; r++) {
      st = c1d_gpu_poison(y, ny);
      if (st == C1D_OK) st = c1d_gpu_flush_l2();
      if (st == C1D_OK) st = c1d_gpu_timer_start(timer);
      if (st == C1D_OK) st = impl->run(&s, d.x, d.w, d.b, y, &ex);
      if (st == C1D_OK) st = c1d_gpu_timer_stop(timer, &ms[r]);
    }
    if (st == C1D_OK) st = c1d_gpu_download(y_host, y, (size_t)ny * 4);
    if (impl->teardown) impl->teardown(&ex);
    if (st != C1D_OK) {
      printf("%-20s failed: %s (%s)\n", name, c1d_strerror(st), c1d_error_detail());
      continue;
    }
    double mn = ms[0];
    for (int r = 1; r < repeats; r++) mn = ms[r] < mn ? ms[r] : mn;
    const double md = median(ms, repeats);
    c1d_metric_options opt;
    c1d_metrics m;
    c1d_metric_options_default(&opt);
    c1d_metrics_compute(y_host, ref, ny, &opt, &m);
    char twin_text[96] = "";
    if (twins && impl->twin && impl->twin_bit_exact) {
      float *ty = NULL;
      for (int i = 0; i < n_cache; i++)
        if (strcmp(cache[i].name, impl->twin) == 0) ty = cache[i].y;
      const c1d_impl *cpu = c1d_find_impl(impl->twin);
      if (!ty && cpu && n_cache < 8 && (ty = malloc((size_t)ny * 4))) {
        c1d_exec cex;
        memset(&cex, 0, sizeof cex);
        if (cpu->run(&s, x, w, b, ty, &cex) != C1D_OK) {
          free(ty);
          ty = NULL;
        } else {
          cache[n_cache].name = impl->twin;
          cache[n_cache++].y = ty;
        }
      }
      if (ty) {
        int64_t differ = 0;
        for (int64_t i = 0; i < ny; i++) differ += memcmp(&ty[i], &y_host[i], 4) != 0;
        snprintf(twin_text, sizeof twin_text, "%s: %s", impl->twin,
                 differ ? "DIFFERS" : "bit-exact");
        if (differ) snprintf(twin_text + strlen(twin_text), sizeof twin_text - strlen(twin_text),
                             " (%lld elements)", (long long)differ);
        printf("RESULT twin %s %s %lld\n", name, impl->twin, (long long)differ);
      } else {
        snprintf(twin_text, sizeof twin_text, "%s: not run", impl->twin);
      }
    }
    printf("%-20s %10.3f %10.3f %9.2f %11.3e %11.3e %9.4f %s\n", name, md, mn,
           c1d_flops(&s) / md / 1e9, m.rel_l2, m.max_abs, 100.0 * m.fail_default / (double)ny,
           twin_text);
    if (m.nonfinite) printf("  %s: %lld non-finite elements\n", name, (long long)m.nonfinite);
    if (ex.algo[0] || ex.math[0]) printf("  %s: algo %s, math %s, used_tf32 %d\n", name, ex.algo,
                                         ex.math, ex.used_tf32);
    printf("RESULT time %s %.4f %.4e %lld\n", name, md, m.rel_l2, (long long)m.nonfinite);
    fflush(stdout);
  }
  free(list);
  for (int i = 0; i < n_cache; i++) free(cache[i].y);
  c1d_gpu_free(y);
  c1d_gpu_timer_destroy(timer);
  free_inputs(&d);
  free(ms);
  free(ref);
  free(mag);
  free(y_host);
  free(x);
  free(w);
  free(b);
  return 0;
}

static int usage(void) {
  fprintf(stderr,
          "usage: gpu_driver sanitize\n"
          "       gpu_driver bench [--shape N,C,O,L,K,D,bias] [--repeats R] [--impls a,b,...] "
          "[--twins]\n");
  return 2;
}

int main(int argc, char **argv) {
  if (argc < 2) return usage();
  const char *why = c1d_gpu_unavailable();
  if (why) {
    fprintf(stderr, "gpu_driver: %s\n", why);
    return 1;
  }
  if (strcmp(argv[1], "sanitize") == 0) return run_sanitize();
  if (strcmp(argv[1], "bench") != 0) return usage();
  c1d_shape s = c1d_headline_shape();
  int repeats = 10, twins = 0;
  const char *impls = own_impls;
  for (int i = 2; i < argc; i++) {
    if (strcmp(argv[i], "--shape") == 0 && i + 1 < argc) {
      long long v[7];
      if (sscanf(argv[++i], "%lld,%lld,%lld,%lld,%lld,%lld,%lld", &v[0], &v[1], &v[2], &v[3], &v[4],
                 &v[5], &v[6]) != 7)
        return usage();
      s = (c1d_shape){v[0], v[1], v[2], v[3], v[4], v[5], (int)v[6]};
    } else if (strcmp(argv[i], "--repeats") == 0 && i + 1 < argc) {
      repeats = atoi(argv[++i]);
      if (repeats < 1) return usage();
    } else if (strcmp(argv[i], "--impls") == 0 && i + 1 < argc) {
      impls = argv[++i];
    } else if (strcmp(argv[i], "--twins") == 0) {
      twins = 1;
    } else {
      return usage();
    }
  }
  return run_bench(s, repeats, impls, twins);
}
