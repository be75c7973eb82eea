/* bench_oracle: the float64 oracle (y and m = |b| + sum|w*x| in one pass) against im2col + OpenBLAS
 * DGEMM (y only) on the same cores, same float32 inputs promoted to double.
 *
 * Sequence: generate inputs (normal, seed 1); warm up and time R runs of (a) the oracle, (b) im2col +
 * DGEMM for y, (c) for context, im2col + two DGEMMs for y and m (the oracle's own work), in that order so
 * that OpenBLAS's spinning worker threads cannot slow the oracle down; wall clock, CLOCK_MONOTONIC,
 * medians. Checks that y agrees within 1e-12 * max m and m within (c1d_oracle_mag_rel_bound + 1e-12) * max m
 * (the oracle sums m in float32 within reduction chunks; see reference/oracle.h), prints GFLOP/s (2*N*O*L*C*K, padding
 * products counted, the same count for every path) and the ratio oracle speed / (b) speed, which must be
 * >= 1. The baseline's im2col (in parallel, into double) and weight conversion are inside its timing, as
 * the oracle's own conversions are inside its timing. OpenBLAS runs its strongest kernel for the oracle's
 * instruction set (run_again_with_openblas_kernel). Exit 0 on PASS, 1 on FAIL, 2 on bad arguments. */
#include <cblas.h>
#include <errno.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "harness/inputs.h"
#include "reference/oracle.h"

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// --- the baseline: im2col + DGEMM ---------------------------------------------------------------

/* y[n] (O x L) = W (O x C*K) * col (C*K x L), one DGEMM per batch element; bias added by beta = 1.
 * With mag: also |col| and m[n] = |W| * |col| + |b|, a second DGEMM, so that both sides compute y and m. */
static void im2col_dgemm(const c1d_shape *s, const float *x, const float *w, const float *b, double *wd,
                         double *col, double *y, double *awd, double *acol, double *mag) {
  const int64_t CK = s->C * s->K, L = s->L, pad = c1d_pad(s), nw = c1d_w_count(s);
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < nw; i++) {
    wd[i] = (double)w[i];
    if (mag) awd[i] = fabs((double)w[i]);
  }
  for (int64_t n = 0; n < s->N; n++) {
    double *yn = y + c1d_y_index(s, n, 0, 0), *mn = mag ? mag + c1d_y_index(s, n, 0, 0) : NULL;
#pragma omp parallel
    {
#pragma omp for schedule(static) nowait
      for (int64_t r = 0; r < CK; r++) {
        const int64_t c = r / s->K, k = r % s->K, shift = k * s->D - pad; /* <= 0 */
        const float *src = x + c1d_x_index(s, n, c, 0);
        double *dst = col + r * L;
        const int64_t zeros = -shift < L ? -shift : L;
        for (int64_t t = 0; t < zeros; t++) dst[t] = 0.0;
        for (int64_t t = zeros; t < L; t++) dst[t] = (double)src[t + shift];
        if (mag) {
          double *adst = acol + r * L;
          for (int64_t t = 0; t < L; t++) adst[t] = fabs(dst[t]);
        }
      }
#pragma omp for schedule(static)
      for (int64_t o = 0; o < s->O; o++)
        for (int64_t t = 0; t < L; t++) {
          yn[o * L + t] = s->bias ? (double)b[o] : 0.0;
          if (mn) mn[o * L + t] = s->bias ? fabs((double)b[o]) : 0.0;
        }
    }
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)s->O, (int)L, (int)CK, 1.0, wd, (int)CK,
                col, (int)L, 1.0, yn, (int)L);
    if (mag)
      cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)s->O, (int)L, (int)CK, 1.0, awd,
                  (int)CK, acol, (int)L, 1.0, mn, (int)L);
  }
}

// --- arguments ----------------------------------------------------------------------------------

static int parse_int(const char *flag, const char *text, long long *out) {
  char *end = NULL;
  errno = 0;
  long long v = strtoll(text, &end, 10);
  if (errno || end == text || *end != '\0') {
    fprintf(stderr, "bench_oracle: %s needs an integer (got '%s')\n", flag, text);
    return 0;
  }
  *out = v;
  return 1;
}

/* OpenBLAS picks its kernel when it loads, from its own CPU table, and falls back to an old one on a CPU
 * it does not know: Debian's 0.3.21 runs its Prescott (SSE3) kernel on the development machines' Xeon
 * under KVM, 3-4x slower than its AVX2 and AVX-512 ones there. The baseline must be OpenBLAS at its
 * strongest on the instruction set the oracle uses, so unless OPENBLAS_CORETYPE is set, the program runs
 * itself again with it set: SkylakeX for the AVX-512 kernel, Haswell (also OpenBLAS's Zen kernels) for
 * AVX2. Returns only if nothing needed doing or the exec failed. */
static void run_again_with_openblas_kernel(char **argv) {
  if (getenv("OPENBLAS_CORETYPE")) return;
  c1d_oracle_kernel k;
  if (c1d_oracle_kernel_select(&k) != C1D_OK || k == C1D_ORACLE_KERNEL_PORTABLE) return;
  setenv("OPENBLAS_CORETYPE", k == C1D_ORACLE_KERNEL_AVX512 ? "SkylakeX" : "Haswell", 1);
  execv("/proc/self/exe", argv);
  unsetenv("OPENBLAS_CORETYPE"); /* the exec failed: go on with OpenBLAS's own choice, which is printed */
}

int main(int argc, char **argv) {
  run_again_with_openblas_kernel(argv);
  c1d_shape s = {.N = 2, .C = 256, .O = 256, .L = 8192, .K = 4, .D = 1, .bias = 0};
  long long repeats = 5;
  static const struct { const char *flag; int field; } flags[] = {
      {"--batch", 0}, {"--length", 1}, {"--cin", 2}, {"--cout", 3},
      {"--taps", 4},  {"--dilation", 5}, {"--repeats", 6}, {"--bias", 7},
  };
  for (int i = 1; i < argc; i++) {
    int found = -1;
    for (unsigned f = 0; f < sizeof flags / sizeof flags[0]; f++)
      if (strcmp(argv[i], flags[f].flag) == 0) found = (int)f;
    if (found < 0) {
      fprintf(stderr,
              "bench_oracle: unknown argument '%s' (use --batch --length --cin --cout --taps "
              "--dilation --repeats --bias)\n",
              argv[i]);
      return 2;
    }
    if (i + 1 >= argc) {
      fprintf(stderr, "bench_oracle: %s needs a value\n", argv[i]);
      return 2;
    }
    long long v;
    if (!parse_int(argv[i], argv[i + 1], &v)) return 2;
    switch (flags[found].field) {
      case 0: s.N = v; break;
      case 1: s.L = v; break;
      case 2: s.C = v; break;
      case 3: s.O = v; break;
      case 4: s.K = v; break;
      case 5: s.D = v; break;
      case 6: repeats = v; break;
      case 7: s.bias = (v == 0 || v == 1) ? (int)v : 2; break;
    }
    i++;
  }
  if (repeats < 1 || repeats > 1000) {
    fprintf(stderr, "bench_oracle: --repeats must be in 1..1000 (got %lld)\n", repeats);
    return 2;
  }
  if (c1d_shape_validate(&s) != C1D_OK) {
    fprintf(stderr, "bench_oracle: %s\n", c1d_error_detail());
    return 2;
  }
  /* cblas takes int dimensions. */
  if (s.O > 2147483647 || s.L > 2147483647 || s.C * s.K > 2147483647) {
    fprintf(stderr, "bench_oracle: O, L and C*K must each fit in an int for cblas_dgemm\n");
    return 2;
  }

  const int64_t nx = c1d_x_count(&s), nw = c1d_w_count(&s), ny = c1d_y_count(&s);
  float *x = malloc((size_t)nx * sizeof *x), *w = malloc((size_t)nw * sizeof *w);
  float *b = malloc((size_t)(s.O) * sizeof *b);
  double *y = malloc((size_t)ny * sizeof *y), *mag = malloc((size_t)ny * sizeof *mag);
  double *yb = malloc((size_t)ny * sizeof *yb), *wd = malloc((size_t)nw * sizeof *wd);
  double *col = malloc((size_t)(s.C * s.K * s.L) * sizeof *col);
  double *acol = malloc((size_t)(s.C * s.K * s.L) * sizeof *acol);
  double *awd = malloc((size_t)nw * sizeof *awd), *mb = malloc((size_t)ny * sizeof *mb);
  double *times = malloc((size_t)repeats * sizeof *times);
  int rc = 1;
  if (!x || !w || !b || !y || !mag || !yb || !wd || !col || !acol || !awd || !mb || !times) {
    fprintf(stderr, "bench_oracle: out of memory for this shape\n");
    goto cleanup;
  }
  c1d_generate(&s, C1D_DIST_NORMAL, 1, x, w, s.bias ? b : NULL);
  const float *bias = s.bias ? b : NULL;

  char shape_text[160];
  c1d_shape_format(&s, shape_text, sizeof shape_text);
  const double gflop = c1d_flops(&s) * 1e-9;
  c1d_oracle_kernel kernel;
  if (c1d_oracle_kernel_select(&kernel) != C1D_OK) {
    fprintf(stderr, "bench_oracle: %s\n", c1d_error_detail());
    rc = 2;
    goto cleanup;
  }
  printf("bench_oracle: %s, %.3f GFLOP per run (2*N*O*L*C*K), median of %lld after a warm-up\n",
         shape_text, gflop, repeats);
  printf("threads: OpenMP %d, OpenBLAS %d (%s; kernel %s, OPENBLAS_CORETYPE=%s)\n", omp_get_max_threads(),
         openblas_get_num_threads(), openblas_get_config(), openblas_get_corename(),
         getenv("OPENBLAS_CORETYPE") ? getenv("OPENBLAS_CORETYPE") : "unset");

  /* (a) the oracle, y and m. */
  c1d_status st = c1d_oracle_f64(&s, x, w, bias, y, mag, NULL, NULL);
  if (st != C1D_OK) {
    fprintf(stderr, "bench_oracle: oracle failed: %s: %s\n", c1d_strerror(st), c1d_error_detail());
    goto cleanup;
  }
  for (int r = 0; r < repeats; r++) {
    const double t0 = now_s();
    st = c1d_oracle_f64(&s, x, w, bias, y, mag, NULL, NULL);
    times[r] = now_s() - t0;
    if (st != C1D_OK) {
      fprintf(stderr, "bench_oracle: oracle failed: %s: %s\n", c1d_strerror(st), c1d_error_detail());
      goto cleanup;
    }
  }
  const double t_oracle = median(times, (int)repeats);

  /* (b) im2col + DGEMM, y only: the required baseline. */
  im2col_dgemm(&s, x, w, bias, wd, col, yb, NULL, NULL, NULL);
  for (int r = 0; r < repeats; r++) {
    const double t0 = now_s();
    im2col_dgemm(&s, x, w, bias, wd, col, yb, NULL, NULL, NULL);
    times[r] = now_s() - t0;
  }
  const double t_blas = median(times, (int)repeats);

  /* (c) for context: im2col + two DGEMMs, y and m, the same work as the oracle. */
  im2col_dgemm(&s, x, w, bias, wd, col, yb, awd, acol, mb);
  for (int r = 0; r < repeats; r++) {
    const double t0 = now_s();
    im2col_dgemm(&s, x, w, bias, wd, col, yb, awd, acol, mb);
    times[r] = now_s() - t0;
  }
  const double t_blas2 = median(times, (int)repeats);

  double max_diff = 0.0, max_mdiff = 0.0, max_m = 0.0;
  for (int64_t i = 0; i < ny; i++) {
    const double d = fabs(y[i] - yb[i]), dm = fabs(mag[i] - mb[i]);
    if (!(d <= max_diff)) max_diff = d; /* NaN propagates */
    if (!(dm <= max_mdiff)) max_mdiff = dm;
    if (mag[i] > max_m) max_m = mag[i];
  }
  const double m_tol = (c1d_oracle_mag_rel_bound(&s) + 1e-12) * max_m;
  const int agree = max_diff <= 1e-12 * max_m && max_mdiff <= m_tol;
  const double g_oracle = gflop / t_oracle, g_blas = gflop / t_blas, ratio = g_oracle / g_blas;
  printf("oracle (y and m, float64, %s kernel): %9.2f ms  %7.2f GFLOP/s\n",
         c1d_oracle_kernel_name(kernel), t_oracle * 1e3, g_oracle);
  printf("im2col + OpenBLAS DGEMM (y only):     %9.2f ms  %7.2f GFLOP/s\n", t_blas * 1e3, g_blas);
  printf("im2col + 2 OpenBLAS DGEMMs (y and m): %9.2f ms  %7.2f GFLOP/s  (context: the oracle's work; "
         "oracle/this = %.2f)\n",
         t_blas2 * 1e3, gflop / t_blas2, t_blas2 / t_oracle);
  printf("agreement: max |y_oracle - y_openblas| = %.3g (1e-12 * max m = %.3g), "
         "max |m_oracle - m_openblas| = %.3g (m's bound * max m = %.3g): %s\n",
         max_diff, 1e-12 * max_m, max_mdiff, m_tol, agree ? "ok" : "MISMATCH");
  const int fast = ratio >= 1.0;
  printf("ratio oracle/openblas: %.2f (>= 1.0 required: %s)\n", ratio, fast && agree ? "PASS" : "FAIL");
  rc = fast && agree ? 0 : 1;

cleanup:
  free(x);
  free(w);
  free(b);
  free(y);
  free(mag);
  free(yb);
  free(wd);
  free(col);
  free(acol);
  free(awd);
  free(mb);
  free(times);
  return rc;
}
