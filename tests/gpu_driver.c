/* gpu_driver: what scripts/device-check.sh runs on a GPU machine beside the test suites and `convlab
 * bench` (which times every implementation and scores it against the oracle; the timing tables that
 * lived here and in fast_driver went there). Every list comes from the registry (harness/registry.h):
 * convlab's own GPU kernels of tier main and variant, with their CPU twins.
 *   gpu_driver sanitize
 *       every such implementation once at small shapes that reach their code paths (fixed and general
 *       instances, ragged and aligned copies, interior and edge tiles, wide pads), each bit-exact one
 *       against its CPU twin, and both float64 oracle paths, for compute-sanitizer; exit 1 on any error
 *       or difference.
 *       Then the kernels with caps (groups, states, SiLU, element types, channel-last) on small depthwise
 *       and grouped problems of every kind, through the GPU session (harness/execute.h), each against
 *       its CPU twin.
 *   gpu_driver sanitize --only NAME[,NAME...]
 *       the same shapes for the named implementations alone (no oracle, no caps problems): a sanitizer
 *       run per setting of a kernel's environment (C1D_WGC_XCOPY, C1D_WGC_STAGES) costs seconds, not minutes.
 *   gpu_driver twins [--shape N,C,O,L,K,D,bias]
 *       at the headline shape (or the given one): every bit-exact GPU implementation against its CPU
 *       twin on all N*O*L outputs ("RESULT twin NAME TWIN DIFFERENCES" lines).
 *   gpu_driver twins --depthwise
 *       the same for the depthwise kernels at the anchor shape (N=8, C=O=G=4096, L=4096, K=4, D=1): all
 *       tensors fp32 and all bf16 in (N, C, L), all bf16 channel-last, through the GPU session.
 *   gpu_driver probe
 *       how one TF32 mma.sync rounds its accumulation (gpu/mma_probe.cu; the 3xTF32 order rests on it).
 *   gpu_driver fma-ceiling
 *       the FP32 FMA rate the GPU sustains (gpu/fma_ceiling.cu), the bound on any kernel of one fma per
 *       product, as gpu_fp32_fast: "RESULT fma-ceiling TFLOPS". */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/device.h"
#include "gpu/oracle_f64.h"
#include "gpu/oracle_f64_paths.h"
#include "harness/execute.h"
#include "harness/inputs.h"
#include "harness/registry.h"
#include "numerics/arith.h"

c1d_status c1d_tf32_mma_probe(const float *c, const float *p, float *out, int cases);
c1d_status c1d_fma_ceiling(int repeats, double *tflops, double *peak_tflops);

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

static int host_inputs(const c1d_shape *s, c1d_dist dist, uint64_t seed, float **x, float **w, float **b) {
  *x = malloc((size_t)c1d_x_count(s) * 4);
  *w = malloc((size_t)c1d_w_count(s) * 4);
  *b = s->bias ? malloc((size_t)s->O * 4) : NULL;
  if (!*x || !*w || (s->bias && !*b)) {
    fprintf(stderr, "gpu_driver: out of host memory for the inputs\n");
    return 1;
  }
  c1d_generate(s, dist, seed, *x, *w, *b);
  return 0;
}

/* The GPU implementations the driver covers: convlab's own kernels (those with a CPU twin, and the
 * oracle) of tier main and variant; the library rows (cuDNN, cuBLAS) are the libraries' business. */
static int covered(const c1d_impl *impl) {
  return impl->backend == C1D_BACKEND_GPU && impl->tier != C1D_TIER_MUTANT &&
         (impl->twin || !strcmp(impl->name, "gpu_oracle_f64"));
}

/* Runs impl once into y (device, poisoned first) and downloads it into host (ny floats). */
static int run_once(const c1d_impl *impl, const c1d_shape *s, const dev_inputs *d, float *y, float *host) {
  const int64_t ny = c1d_y_count(s);
  c1d_exec ex;
  memset(&ex, 0, sizeof ex);
  ex.used_tf32 = -1;
  CHECK(c1d_gpu_poison(y, ny));
  if (impl->setup) CHECK(impl->setup(s, &ex));
  c1d_status st = impl->run(s, d->x, d->w, d->b, y, &ex);
  if (st == C1D_OK) st = c1d_gpu_synchronize();
  if (st == C1D_OK) st = c1d_gpu_download(host, y, (size_t)ny * 4);
  if (impl->teardown) impl->teardown(&ex);
  CHECK(st);
  return 0;
}

static int64_t count_differences(const float *a, const float *b, int64_t n) {
  int64_t diffs = 0;
  for (int64_t i = 0; i < n; i++) diffs += c1d_float_bits(a[i]) != c1d_float_bits(b[i]);
  return diffs;
}

/* The CPU twin's output into out; 1 on failure. */
static int run_twin(const c1d_impl *impl, const c1d_shape *s, const float *x, const float *w, const float *b,
                    float *out) {
  const c1d_impl *cpu = c1d_find_impl(impl->twin);
  if (!cpu) {
    fprintf(stderr, "gpu_driver: %s's twin %s is not registered\n", impl->name, impl->twin);
    return 1;
  }
  c1d_exec ex;
  memset(&ex, 0, sizeof ex);
  CHECK(cpu->run(s, x, w, b, out, &ex));
  return 0;
}

// --- sanitize ----------------------------------------------------------------------------------------

/* --only's comma-separated names, or NULL for every covered implementation. */
static const char *sanitize_only;

static int in_only_list(const char *name) {
  if (!sanitize_only) return 1;
  const size_t len = strlen(name);
  for (const char *p = sanitize_only; p && *p;) {
    const char *end = strchr(p, ',');
    const size_t n = end ? (size_t)(end - p) : strlen(p);
    if (n == len && !strncmp(p, name, n)) return 1;
    p = end ? end + 1 : NULL;
  }
  return 0;
}

static int sanitize_shape(const c1d_shape *s, int *bad) {
  float *x, *w, *b;
  float *y = NULL, *host = NULL, *twin = NULL;
  double *y64 = NULL, *m64 = NULL;
  dev_inputs d;
  char text[128];
  int n = 0;
  c1d_shape_format(s, text, sizeof text);
  if (host_inputs(s, C1D_DIST_NORMAL, 1, &x, &w, &b) || upload_inputs(s, x, w, b, &d)) return 1;
  const int64_t ny = c1d_y_count(s);
  host = malloc((size_t)ny * 4);
  twin = malloc((size_t)ny * 4);
  if (!host || !twin) return 1;
  CHECK(c1d_gpu_malloc((void **)&y, (size_t)ny * 4, "y"));
  CHECK(c1d_gpu_malloc((void **)&y64, (size_t)ny * 8, "y64"));
  CHECK(c1d_gpu_malloc((void **)&m64, (size_t)ny * 8, "m64"));
  const c1d_impl *const *table = c1d_registry(&n);
  for (int i = 0; i < n; i++) {
    const c1d_impl *impl = table[i];
    if (!covered(impl) || impl->caps || !in_only_list(impl->name)) continue; /* caps: the session, below */
    const char *why = c1d_impl_unsupported(impl, s);
    if (why) {
      printf("sanitize: %-20s %s skipped: %s\n", impl->name, text, why);
      continue;
    }
    if (run_once(impl, s, &d, y, host)) return 1;
    if (impl->twin && impl->twin_bit_exact) {
      if (run_twin(impl, s, x, w, b, twin)) return 1;
      const int64_t diffs = count_differences(host, twin, ny);
      printf("sanitize: %-20s %s ran; %lld differences from %s\n", impl->name, text, (long long)diffs,
             impl->twin);
      if (diffs) fprintf(stderr, "gpu_driver: %s differs from %s at %s\n", impl->name, impl->twin, text);
      *bad |= diffs != 0;
    } else {
      printf("sanitize: %-20s %s ran\n", impl->name, text);
    }
  }
  const c1d_gpu_oracle_path chosen = c1d_gpu_oracle_f64_path(s);
  if (!sanitize_only) {
    CHECK(c1d_gpu_oracle_f64(s, d.x, d.w, d.b, y64, m64));
    CHECK(c1d_gpu_synchronize());
    printf("sanitize: oracle y+m (%s path) %s ran\n", c1d_gpu_oracle_path_name(chosen), text);
    if (chosen == C1D_ORACLE_PATH_MMA) {
      CHECK(c1d_gpu_oracle_f64_on(C1D_ORACLE_PATH_DIRECT, s, d.x, d.w, d.b, y64, m64));
      CHECK(c1d_gpu_synchronize());
      printf("sanitize: oracle y+m (direct path) %s ran\n", text);
    }
  }
  c1d_gpu_free(y);
  c1d_gpu_free(y64);
  c1d_gpu_free(m64);
  free_inputs(&d);
  free(host);
  free(twin);
  free(x);
  free(w);
  free(b);
  return 0;
}

// --- kernels with caps, through the GPU session -------------------------------------------------------

/* Every covered implementation with caps that takes s, once through the GPU session (which packs the
 * tensors in their types and orders), against its CPU twin; inputs conv_init of seed 1. *bad |= any
 * difference. Returns 1 on a failure to run. */
static int session_twins(const c1d_shape *s, int print_result, int *bad) {
  char text[192];
  int n = 0;
  c1d_shape_format(s, text, sizeof text);
  float *x, *w, *b, *st = NULL;
  if (host_inputs(s, C1D_DIST_CONV_INIT, 1, &x, &w, &b)) return 1;
  const int64_t ny = c1d_y_count(s);
  float *host = malloc((size_t)ny * 4), *twin = malloc((size_t)ny * 4);
  if (s->states) st = malloc((size_t)c1d_s_count(s) * 4);
  if (!host || !twin || (s->states && !st)) {
    fprintf(stderr, "gpu_driver: out of host memory at %s\n", text);
    return 1;
  }
  if (st) c1d_generate_states(s, C1D_DIST_CONV_INIT, 1, st);
  c1d_gpu_session *g = NULL;
  CHECK(c1d_gpu_session_create(s, &g));
  CHECK(c1d_gpu_session_upload(g, x, w, b, st));
  const c1d_impl *const *table = c1d_registry(&n);
  for (int i = 0; i < n; i++) {
    const c1d_impl *impl = table[i];
    if (!covered(impl) || !impl->caps || c1d_impl_unsupported(impl, s)) continue;
    const c1d_impl *cpu = c1d_find_impl(impl->twin);
    c1d_exec ex;
    c1d_timing t;
    memset(&ex, 0, sizeof ex);
    ex.used_tf32 = -1;
    CHECK(c1d_execute_gpu(g, impl, host, NULL, 1, 0.0, &ex, &t));
    memset(&ex, 0, sizeof ex);
    ex.states = st;
    if (!cpu) {
      fprintf(stderr, "gpu_driver: %s's twin %s is not registered\n", impl->name, impl->twin);
      return 1;
    }
    CHECK(cpu->run(s, x, w, b, twin, &ex));
    const int64_t diffs = count_differences(host, twin, ny);
    printf("%s%-20s %s: %lld of %lld outputs differ from %s\n", print_result ? "" : "sanitize: ", impl->name, text,
           (long long)diffs, (long long)ny, impl->twin);
    if (print_result) printf("RESULT twin %s %s %lld (%s)\n", impl->name, impl->twin, (long long)diffs, text);
    fflush(stdout);
    if (diffs) fprintf(stderr, "gpu_driver: %s differs from %s at %s\n", impl->name, impl->twin, text);
    *bad |= diffs != 0;
  }
  c1d_gpu_session_destroy(g);
  free(host), free(twin), free(st), free(x), free(w), free(b);
  return 0;
}

#define SAN_DW(n, c, l, k, d) .N = n, .C = c, .O = c, .L = l, .K = k, .D = d, .G = c
#define SAN_BF16 {C1D_DTYPE_BF16, C1D_DTYPE_BF16, C1D_DTYPE_BF16, C1D_DTYPE_BF16, C1D_DTYPE_BF16}
#define SAN_F16 {C1D_DTYPE_F16, C1D_DTYPE_F16, C1D_DTYPE_F16, C1D_DTYPE_F16, C1D_DTYPE_F16}
#define SAN_MIXED {C1D_DTYPE_F16, C1D_DTYPE_BF16, C1D_DTYPE_F32, C1D_DTYPE_F16, C1D_DTYPE_BF16}

/* Each path of gpu_dw_fast (vectors along t, along c, dilated along c, one thread per output), lane 0's
 * and the row start's history, states, SiLU, mixed types; gpu_grouped's partial quartets. */
static const c1d_shape caps_shapes[] = {
    {SAN_DW(2, 24, 64, 4, 1), .bias = 1, .states = 1, .act = C1D_ACT_SILU, .dt = SAN_BF16},
    {SAN_DW(2, 24, 600, 4, 1), .bias = 1, .states = 1},
    {SAN_DW(2, 16, 40, 4, 1), .bias = 1, .states = 1, .dt = SAN_BF16, .layout = C1D_LAYOUT_NLC},
    {SAN_DW(2, 16, 30, 3, 3), .states = 1, .act = C1D_ACT_SILU, .dt = SAN_MIXED, .layout = C1D_LAYOUT_NLC},
    {SAN_DW(2, 21, 37, 3, 2), .bias = 1, .states = 1, .dt = SAN_MIXED},
    {SAN_DW(1, 21, 37, 8, 1), .bias = 1, .states = 1, .layout = C1D_LAYOUT_NLC},
    {SAN_DW(1, 40, 90, 6, 1), .bias = 1, .states = 1, .dt = SAN_F16, .layout = C1D_LAYOUT_NLC}, /* the pairs kernel */
    {SAN_DW(2, 12, 4, 8, 1), .states = 1},
    {.N = 2, .C = 12, .O = 8, .G = 4, .L = 50, .K = 3, .D = 2, .bias = 1, .states = 1, .act = C1D_ACT_SILU,
     .dt = SAN_MIXED},
};

static int run_sanitize(void) {
  /* odd sizes and bias; several oracle blocks and chunks; a window only the oracle's direct path takes;
   * the fast kernels' fixed (K, D) instances with ragged (4-byte) and aligned (16-byte) copies, interior
   * tiles and the tiles around them, K = 1 with a wide D, a pad of 120 */
  const c1d_shape shapes[] = {
      {2, 5, 11, 45, 3, 2, 1},    {1, 17, 70, 150, 4, 1, 0},  {1, 3, 4, 40, 2, 97, 1},
      {2, 19, 131, 300, 4, 1, 1}, {1, 9, 33, 513, 2, 1, 1},   {1, 12, 20, 260, 3, 1, 0},
      {2, 37, 29, 101, 5, 3, 1},  {1, 1, 1, 70, 1, 5, 0},     {1, 5, 9, 130, 3, 60, 1},
      {1, 24, 200, 1024, 4, 1, 0}, {2, 16, 64, 520, 4, 1, 1},
  };
  int bad = 0;
  for (unsigned i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
    if (sanitize_shape(&shapes[i], &bad)) return 1;
  if (sanitize_only) {
    printf("sanitize: %s ran%s\n", sanitize_only, bad ? "; SOME DIFFER FROM THEIR TWINS" : "");
    return bad;
  }
  for (unsigned i = 0; i < sizeof caps_shapes / sizeof caps_shapes[0]; i++)
    if (session_twins(&caps_shapes[i], 0, &bad)) return 1;
  printf("sanitize: every registered GPU implementation ran%s\n",
         bad ? "; SOME DIFFER FROM THEIR TWINS" : "; every bit-exact one equals its twin");
  return bad;
}

// --- twins at full size -------------------------------------------------------------------------------

static int run_twins(c1d_shape s) {
  float *x, *w, *b, *y = NULL;
  dev_inputs d;
  char text[128];
  int n = 0, bad = 0;
  CHECK(c1d_shape_validate(&s));
  c1d_shape_format(&s, text, sizeof text);
  printf("twins at %s, conv_init inputs seed 1\n", text);
  if (host_inputs(&s, C1D_DIST_CONV_INIT, 1, &x, &w, &b) || upload_inputs(&s, x, w, b, &d)) return 1;
  const int64_t ny = c1d_y_count(&s);
  float *host = malloc((size_t)ny * 4);
  typedef struct {
    const char *name;
    float *y;
  } cached;
  cached cache[8];
  int n_cache = 0;
  if (!host) return 1;
  CHECK(c1d_gpu_malloc((void **)&y, (size_t)ny * 4, "y"));
  const c1d_impl *const *table = c1d_registry(&n);
  for (int i = 0; i < n; i++) {
    const c1d_impl *impl = table[i];
    if (!covered(impl) || !impl->twin || !impl->twin_bit_exact || impl->caps) continue;
    const char *why = c1d_impl_unsupported(impl, &s);
    if (why) {
      printf("%-20s skipped: %s\n", impl->name, why);
      continue;
    }
    float *ty = NULL;
    for (int k = 0; k < n_cache; k++)
      if (!strcmp(cache[k].name, impl->twin)) ty = cache[k].y;
    if (!ty) {
      if (n_cache == 8 || !(ty = malloc((size_t)ny * 4)) || run_twin(impl, &s, x, w, b, ty)) return 1;
      cache[n_cache].name = impl->twin;
      cache[n_cache++].y = ty;
    }
    if (run_once(impl, &s, &d, y, host)) return 1;
    const int64_t diffs = count_differences(host, ty, ny);
    printf("%-20s against %-14s %s (%lld of %lld outputs differ)\n", impl->name, impl->twin,
           diffs ? "DIFFERS" : "bit-exact", (long long)diffs, (long long)ny);
    printf("RESULT twin %s %s %lld\n", impl->name, impl->twin, (long long)diffs);
    fflush(stdout);
    bad |= diffs != 0;
  }
  for (int k = 0; k < n_cache; k++) free(cache[k].y);
  c1d_gpu_free(y);
  free_inputs(&d);
  free(host);
  free(x);
  free(w);
  free(b);
  return bad;
}

// --- probe --------------------------------------------------------------------------------------------

static int run_probe(void) {
  enum { CASES = 4 };
  const float u = 0x1p-23f; /* ulp(1) */
  const float c[CASES] = {1.0f, -1.0f, 1.0f, 1.0f};
  float p[CASES][8] = {{0}};
  const char *what[CASES] = {"1 + 0.75ulp   (RN: 1+ulp, RZ: 1)", "-1 - 0.75ulp  (RN: -(1+ulp), RZ: -1)",
                             "1 + 2 x 0.5ulp (exact sum first: 1+ulp)", "1 + 0.5ulp    (RNA: 1+ulp; RNE, RZ: 1)"};
  p[0][0] = 0.75f * u;
  p[1][0] = -0.75f * u;
  p[2][0] = p[2][5] = 0.5f * u;
  p[3][0] = 0.5f * u;
  float out[CASES];
  CHECK(c1d_tf32_mma_probe(c, &p[0][0], out, CASES));
  printf("mma.sync m16n8k8 TF32 accumulation probe (ulp = 2^-23):\n");
  for (int i = 0; i < CASES; i++)
    printf("  %-44s -> %.9g (%+.3f ulp)\n", what[i], out[i], ((double)out[i] - (double)c[i]) / u);
  const int rn = out[0] == 1.0f + u && out[1] == -(1.0f + u);
  const int rz = out[0] == 1.0f && out[1] == -1.0f;
  printf("RESULT probe rounding=%s\n", rn ? "nearest" : rz ? "toward-zero" : "other");
  return 0;
}

static int run_fma_ceiling(void) {
  double tflops = 0.0, peak = 0.0;
  CHECK(c1d_fma_ceiling(5, &tflops, &peak));
  printf("FP32 FMA ceiling: %.1f TFLOP/s measured, %.1f %% of the peak at the top clock (%.1f TFLOP/s)\n", tflops,
         peak > 0 ? 100.0 * tflops / peak : 0.0, peak);
  printf("RESULT fma-ceiling %.2f\n", tflops);
  return 0;
}

/* The depthwise anchor (issue 16): fp32 and bf16 in (N, C, L), bf16 channel-last. */
static int run_twins_depthwise(void) {
  const struct { c1d_dtype d; c1d_layout_order layout; } runs[3] = {
      {C1D_DTYPE_F32, C1D_LAYOUT_NCL}, {C1D_DTYPE_BF16, C1D_LAYOUT_NCL}, {C1D_DTYPE_BF16, C1D_LAYOUT_NLC}};
  int bad = 0;
  for (int i = 0; i < 3; i++) {
    const c1d_dtype d = runs[i].d;
    const c1d_shape s = {SAN_DW(8, 4096, 4096, 4, 1), .dt = {d, d, d, d, d}, .layout = runs[i].layout};
    if (session_twins(&s, 1, &bad)) return 1;
  }
  return bad;
}

static int usage(void) {
  fprintf(stderr, "usage: gpu_driver sanitize [--only NAME,...] | twins [--shape N,C,O,L,K,D,bias | --depthwise] | "
                  "probe | fma-ceiling\n");
  return 2;
}

int main(int argc, char **argv) {
  if (argc < 2) return usage();
  const char *why = c1d_gpu_unavailable();
  if (why) {
    fprintf(stderr, "gpu_driver: %s\n", why);
    return 1;
  }
  if (strcmp(argv[1], "sanitize") == 0 && argc == 2) return run_sanitize();
  if (strcmp(argv[1], "sanitize") == 0 && argc == 4 && strcmp(argv[2], "--only") == 0) {
    sanitize_only = argv[3];
    return run_sanitize();
  }
  if (strcmp(argv[1], "probe") == 0 && argc == 2) return run_probe();
  if (strcmp(argv[1], "fma-ceiling") == 0 && argc == 2) return run_fma_ceiling();
  if (strcmp(argv[1], "twins") != 0) return usage();
  if (argc == 3 && strcmp(argv[2], "--depthwise") == 0) return run_twins_depthwise();
  c1d_shape s = c1d_headline_shape();
  for (int i = 2; i < argc; i++) {
    if (strcmp(argv[i], "--shape") == 0 && i + 1 < argc) {
      long long v[7];
      if (sscanf(argv[++i], "%lld,%lld,%lld,%lld,%lld,%lld,%lld", &v[0], &v[1], &v[2], &v[3], &v[4],
                 &v[5], &v[6]) != 7)
        return usage();
      s = (c1d_shape){v[0], v[1], v[2], v[3], v[4], v[5], (int)v[6]};
    } else {
      return usage();
    }
  }
  return run_twins(s);
}
