/* bench_dw: a depthwise kernel's speed against the device copy, shape by shape (issue 24). For each shape
 * the kernel (gpu_dw_fast unless --impl) and a copy of the same bytes are timed side by side in this
 * run, the same way, twice:
 *   launch  CUDA events around one launch, the L2 flushed before each of --repeats runs, the median kept:
 *           a lone call, its launch's latency included (a few of the decode shapes' 3-5 us);
 *   stream  a CUDA graph of back-to-back launches replayed --repeats times (c1d_gpu_graph_time), the
 *           median replay over its launches: a decode loop as vLLM replays it; the copy there is a copy
 *           kernel (c1d_gpu_copy_bandwidth_stream: a graph's cudaMemcpyAsync runs on a copy engine,
 *           slower on large slices), the one-launch copy a cudaMemcpy. Each launch reads and
 *           writes its own slice of buffers at least 1.5 times the L2 (up to MAX_SETS slices, in
 *           turn), so its data comes from device memory as the flushed launch's does.
 * No error is measured here: the kernels' bits are checked against their CPU
 * twins by test_gpu_dw and `gpu_driver twins --depthwise`; this program answers only "how close to the
 * copy", at the anchor and at the decode-like shapes people run, where `convlab bench --depthwise`
 * (which also scores every row against the oracle) would spend minutes on the host per shape.
 *
 * usage: bench_dw [--impl NAME] [--dtype f32|bf16|f16] [--layout ncl|nlc] [--activation silu]
 *                 [--initial-states] [--bias] [--repeats R] [--shapes anchor|decode|all]
 *                 [--shape N,C,L,K]...
 * Bytes moved: x read + y written (+ the states read), in their element types; the copy moves x's bytes
 * (read + written), which equals them when x and y share a type. One line per shape, then the lowest
 * and the median % of the copy over the shapes. Exit 1 on any CUDA or argument error (one line). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/device.h"
#include "harness/execute.h"
#include "harness/registry.h"
#include "reference/dtype.h"
#include "reference/problem.h"

#define MAX_SHAPES 256
#define CHUNK (1u << 22) /* elements of the random pattern tiled over x */
#define MAX_SETS 8192     /* slices of the stream timing's rotation: a 4 KB step's 8192 pass 64 MB */
#define MIN_LAUNCHES 16   /* launches per graph at least */

typedef struct dw_point {
  int64_t N, C, L, K;
} dw_point;

static int fail(const char *what, c1d_status st) {
  fprintf(stderr, "bench_dw: %s: %s (%s)\n", what, c1d_strerror(st), c1d_error_detail());
  return 1;
}

/* The anchor of issue 24 and the decode-like grid: N=1..64, L=1..2048, C=2048..8192, K=2..4. */
static int add_shapes(const char *which, dw_point *p, int n) {
  const int anchor = !strcmp(which, "anchor") || !strcmp(which, "all");
  const int decode = !strcmp(which, "decode") || !strcmp(which, "all");
  if (!anchor && !decode) return -1;
  if (anchor) p[n++] = (dw_point){8, 4096, 4096, 4};
  if (decode) {
    static const int64_t Ns[] = {1, 8, 64}, Ls[] = {1, 64, 512, 2048}, Cs[] = {2048, 8192}, Ks[] = {2, 4};
    for (int a = 0; a < 3; a++)
      for (int b = 0; b < 4; b++)
        for (int c = 0; c < 2; c++)
          for (int d = 0; d < 2; d++) p[n++] = (dw_point){Ns[a], Cs[c], Ls[b], Ks[d]};
  }
  return n;
}

/* count elements of type d, a pseudo-random pattern in [-1, 1) tiled from a CHUNK-element buffer. */
static c1d_status fill(void *dev, c1d_dtype d, int64_t count, uint32_t seed) {
  const int size = c1d_dtype_size(d);
  const int64_t n = count < CHUNK ? count : CHUNK;
  unsigned char *h = malloc((size_t)n * size);
  if (!h) return C1D_ERR_NO_MEMORY;
  uint32_t r = seed * 2654435761u + 1;
  for (int64_t i = 0; i < n; i++) {
    r = r * 1664525u + 1013904223u;
    const float v = (float)(r >> 8) / 8388608.0f - 1.0f;
    if (d == C1D_DTYPE_F32) memcpy(h + 4 * i, &v, 4);
    else {
      const uint16_t bits = d == C1D_DTYPE_BF16 ? c1d_float_to_bf16_bits(v) : c1d_float_to_f16_bits(v);
      memcpy(h + 2 * i, &bits, 2);
    }
  }
  c1d_status st = C1D_OK;
  for (int64_t at = 0; at < count && st == C1D_OK; at += n) {
    const int64_t m = count - at < n ? count - at : n;
    st = c1d_gpu_upload((unsigned char *)dev + at * size, h, (size_t)m * size);
  }
  free(h);
  return st;
}

/* The stream timing's rotation for a shape of `set_bytes` (x and y): slices enough to pass 1.5 L2s. */
static int sets_for(double set_bytes, int64_t l2_bytes) {
  const double wanted = 1.5 * (double)l2_bytes / set_bytes + 1.0;
  return wanted < 1.0 ? 1 : wanted > MAX_SETS ? MAX_SETS : (int)wanted;
}

static int64_t aligned(int64_t elements, int es) { return (elements * es + 255) / 256 * 256; } /* bytes */

/* One launch of the stream timing: impl on the (i mod sets)-th slices of x, y and the states. */
typedef struct stream_run {
  const c1d_impl *impl;
  const c1d_shape *sh;
  unsigned char *x, *y, *s;
  const void *w, *b;
  int64_t x_stride, s_stride; /* bytes between slices */
  int sets;
  c1d_exec *ex;
} stream_run;

static c1d_status enqueue_run(void *ctx, int i, void *stream) {
  const stream_run *r = ctx;
  const int64_t j = i % r->sets;
  r->ex->stream = stream;
  r->ex->states = r->sh->states ? (const float *)(r->s + j * r->s_stride) : NULL;
  const c1d_status st = r->impl->run(r->sh, (const float *)(r->x + j * r->x_stride), r->w, r->b,
                                     (float *)(r->y + j * r->x_stride), r->ex);
  r->ex->stream = NULL;
  return st;
}

static int cmp_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  const char *impl_name = "gpu_dw_fast";
  c1d_dtype dt = C1D_DTYPE_BF16;
  int nlc = 0, silu = 0, states = 0, bias = 0, repeats = 30, n = 0;
  dw_point pts[MAX_SHAPES];
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--impl") && v) impl_name = argv[++i];
    else if (!strcmp(a, "--dtype") && v) {
      if (c1d_dtype_parse(argv[++i], &dt) != C1D_OK) return fprintf(stderr, "bench_dw: unknown --dtype %s\n", v), 1;
    } else if (!strcmp(a, "--layout") && v && (!strcmp(v, "ncl") || !strcmp(v, "nlc"))) nlc = !strcmp(argv[++i], "nlc");
    else if (!strcmp(a, "--activation") && v && !strcmp(v, "silu")) silu = 1, i++;
    else if (!strcmp(a, "--initial-states")) states = 1;
    else if (!strcmp(a, "--bias")) bias = 1;
    else if (!strcmp(a, "--repeats") && v && atoi(v) >= 3) repeats = atoi(argv[++i]);
    else if (!strcmp(a, "--shapes") && v) {
      if (n + 49 > MAX_SHAPES || (n = add_shapes(argv[++i], pts, n)) < 0)
        return fprintf(stderr, "bench_dw: --shapes takes anchor, decode or all (got %s)\n", v), 1;
    } else if (!strcmp(a, "--shape") && v && n < MAX_SHAPES) {
      dw_point p;
      if (sscanf(argv[++i], "%ld,%ld,%ld,%ld", &p.N, &p.C, &p.L, &p.K) != 4 || p.N < 1 || p.C < 1 || p.L < 1 ||
          p.K < 1 || p.K > 64)
        return fprintf(stderr, "bench_dw: --shape takes N,C,L,K, each >= 1 (got %s)\n", v), 1;
      pts[n++] = p;
    } else
      return fprintf(stderr,
                     "usage: bench_dw [--impl NAME] [--dtype f32|bf16|f16] [--layout ncl|nlc] [--activation silu]\n"
                     "                [--initial-states] [--bias] [--repeats R>=3] [--shapes anchor|decode|all]\n"
                     "                [--shape N,C,L,K]...   (unknown or incomplete argument: %s)\n",
                     a),
             1;
  }
  if (n == 0) n = add_shapes("all", pts, 0);
  const c1d_impl *impl = c1d_find_impl(impl_name);
  if (!impl) return fprintf(stderr, "bench_dw: no implementation named %s\n", impl_name), 1;
  const char *why = c1d_impl_unavailable(impl);
  if (why) return fprintf(stderr, "bench_dw: %s is unavailable: %s\n", impl_name, why), 1;

  c1d_gpu_info info;
  c1d_status st;
  if ((st = c1d_gpu_get_info(&info))) return fail("the device", st);
  /* One allocation per tensor, sized for the largest shape's rotation (the stream timing), filled once. */
  const int es = c1d_dtype_size(dt);
  int64_t max_x = 0, max_w = 0, max_c = 0, max_s = 0; /* x and y, s: in bytes; w, b: in elements */
  for (int i = 0; i < n; i++) {
    const int64_t xs = pts[i].N * pts[i].C * pts[i].L, ss = pts[i].N * pts[i].C * (pts[i].K - 1);
    const int sets = sets_for(2.0 * (double)xs * es, info.l2_bytes);
    if (sets * aligned(xs, es) > max_x) max_x = sets * aligned(xs, es);
    if (sets * aligned(ss, es) > max_s) max_s = sets * aligned(ss, es);
    if (pts[i].C * pts[i].K > max_w) max_w = pts[i].C * pts[i].K;
    if (pts[i].C > max_c) max_c = pts[i].C;
  }
  void *x = NULL, *w = NULL, *b = NULL, *s = NULL, *y = NULL;
  if ((st = c1d_gpu_malloc(&x, (size_t)max_x, "x")) || (st = c1d_gpu_malloc(&y, (size_t)max_x, "y")) ||
      (st = c1d_gpu_malloc(&w, (size_t)max_w * es, "w")) || (st = c1d_gpu_malloc(&b, (size_t)max_c * es, "b")) ||
      (st = c1d_gpu_malloc(&s, (size_t)(max_s > 0 ? max_s : es), "states")))
    return fail("allocating", st);
  if ((st = fill(x, dt, max_x / es, 1)) || (st = fill(w, dt, max_w, 2)) || (st = fill(b, dt, max_c, 3)) ||
      (max_s > 0 && (st = fill(s, dt, max_s / es, 4))))
    return fail("filling the inputs", st);
  c1d_gpu_timer *timer = NULL;
  if ((st = c1d_gpu_timer_create(&timer))) return fail("creating a timer", st);

  printf("%s, %s, %s%s%s%s; the copy: of x's bytes, timed the same way beside each\n"
         "launch: one launch, L2 flushed before each, median of %d (copy: cudaMemcpy); stream: a graph of "
         "back-to-back launches on slices passing 1.5 L2s, median of %d replays, per launch (copy: a copy kernel)\n",
         impl_name, c1d_dtype_name(dt), nlc ? "channel-last (N, L, C)" : "(N, C, L)", silu ? ", SiLU" : "",
         states ? ", initial states" : "", bias ? ", bias" : "", repeats, repeats);
  printf("%5s %6s %6s %2s %10s %9s %10s %9s %7s | %10s %10s %7s %5s\n", "N", "C", "L", "K", "ms", "GB/s", "copy ms",
         "copy GB/s", "%copy", "stream ms", "copy ms", "%copy", "sets");
  double pct[MAX_SHAPES], pct_stream[MAX_SHAPES], *ms = malloc(sizeof(double) * (size_t)repeats);
  if (!ms) return fail("timing", C1D_ERR_NO_MEMORY);
  for (int i = 0; i < n; i++) {
    c1d_shape sh;
    memset(&sh, 0, sizeof sh);
    sh.N = pts[i].N, sh.C = sh.O = sh.G = pts[i].C, sh.L = pts[i].L, sh.K = pts[i].K, sh.D = 1;
    sh.bias = bias, sh.states = states, sh.act = silu ? C1D_ACT_SILU : C1D_ACT_NONE;
    sh.dt = (c1d_dtypes){dt, dt, dt, dt, dt};
    sh.layout = nlc ? C1D_LAYOUT_NLC : C1D_LAYOUT_NCL;
    c1d_exec ex;
    memset(&ex, 0, sizeof ex);
    ex.states = states ? s : NULL;
    if (impl->setup && (st = impl->setup(&sh, &ex))) return fail("setup", st);
    for (int r = -1; r < repeats; r++) { /* r = -1: the warm-up */
      double t = 0;
      if ((st = c1d_gpu_flush_l2()) || (st = c1d_gpu_timer_start(timer)) ||
          (st = impl->run(&sh, x, w, bias ? b : NULL, y, &ex)) || (st = c1d_gpu_timer_stop(timer, &t)))
        return fail(impl_name, st);
      if (r >= 0) ms[r] = t;
    }
    /* the stream timing, on the same set-up */
    const int sets = sets_for(2.0 * (double)(sh.N * sh.C * sh.L) * es, info.l2_bytes);
    const int launches = sets > MIN_LAUNCHES ? sets : MIN_LAUNCHES;
    stream_run sr = {impl, &sh, x, y, s, w, bias ? b : NULL, aligned(sh.N * sh.C * sh.L, es),
                     aligned(sh.N * sh.C * (sh.K - 1), es), sets, &ex};
    double stream_ms = 0, stream_copy_gbps = 0;
    if ((st = c1d_gpu_graph_time(enqueue_run, &sr, launches, repeats, &stream_ms)))
      return fail("timing a graph of launches", st);
    if ((st = c1d_gpu_copy_bandwidth_stream((size_t)(sh.N * sh.C * sh.L) * es, sets, launches, repeats,
                                            &stream_copy_gbps)))
      return fail("the copy in a graph", st);
    ex.states = states ? s : NULL;
    if (impl->teardown) impl->teardown(&ex);
    qsort(ms, (size_t)repeats, sizeof *ms, cmp_double);
    const double med = ms[repeats / 2];
    const double bytes = (double)(2 * sh.N * sh.C * sh.L + (states ? sh.N * sh.C * (sh.K - 1) : 0)) * es;
    double copy_gbps = 0;
    if ((st = c1d_gpu_copy_bandwidth((size_t)(sh.N * sh.C * sh.L) * es, repeats, &copy_gbps)))
      return fail("the copy", st);
    const double gbps = bytes / (med * 1e6), copy_ms = 2.0 * (double)(sh.N * sh.C * sh.L) * es / (copy_gbps * 1e6);
    pct[i] = 100.0 * gbps / copy_gbps;
    pct_stream[i] = 100.0 * (bytes / (stream_ms * 1e6)) / stream_copy_gbps;
    printf("%5ld %6ld %6ld %2ld %10.4f %9.0f %10.4f %9.0f %6.1f%% | %10.4f %10.4f %6.1f%% %5d\n", (long)sh.N,
           (long)sh.C, (long)sh.L, (long)sh.K, med, gbps, copy_ms, copy_gbps, pct[i], stream_ms,
           2.0 * (double)(sh.N * sh.C * sh.L) * es / (stream_copy_gbps * 1e6), pct_stream[i], sets);
    fflush(stdout);
  }
  int under = 0, under_stream = 0;
  for (int i = 0; i < n; i++) under += pct[i] < 85.0, under_stream += pct_stream[i] < 85.0;
  qsort(pct, (size_t)n, sizeof *pct, cmp_double);
  qsort(pct_stream, (size_t)n, sizeof *pct_stream, cmp_double);
  printf("%% of the copy over %d shapes: lowest %.1f%%, median %.1f%%, highest %.1f%%, %d under 85%% (launch)\n", n,
         pct[0], pct[n / 2], pct[n - 1], under);
  printf("%% of the copy over %d shapes: lowest %.1f%%, median %.1f%%, highest %.1f%%, %d under 85%% (stream)\n", n,
         pct_stream[0], pct_stream[n / 2], pct_stream[n - 1], under_stream);
  free(ms);
  c1d_gpu_timer_destroy(timer);
  c1d_gpu_free(x), c1d_gpu_free(y), c1d_gpu_free(w), c1d_gpu_free(b), c1d_gpu_free(s);
  return 0;
}
