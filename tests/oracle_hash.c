/* oracle_hash: the float64 oracle's y and m on odd shapes (dense, K > KC, depthwise), hashed (FNV-1a over
 * their bytes), with the kernel set that ran. Every kernel set on every CPU must print the same hash:
 * scripts/oracle_cross_arch.sh runs it with each x86 set and, cross-compiled, on aarch64 under qemu.
 * Built from the sources alone (no CMake), so that any cross compiler builds it. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "reference/oracle.h"

static uint64_t fnv1a(uint64_t h, const void *p, size_t n) {
  const unsigned char *c = p;
  for (size_t i = 0; i < n; i++) h = (h ^ c[i]) * 1099511628211ull;
  return h;
}

static uint32_t state = 12345;
static float next_value(void) { /* uniform in [-3, 3), the same sequence everywhere */
  state = state * 1664525u + 1013904223u;
  return (float)(int32_t)state / 2147483648.0f * 3.0f;
}

int main(void) {
  const c1d_shape shapes[] = {
      {.N = 2, .C = 37, .O = 29, .L = 301, .K = 5, .D = 3, .bias = 1},
      {.N = 1, .C = 64, .O = 270, .L = 130, .K = 4, .D = 1, .bias = 0},
      {.N = 3, .C = 3, .O = 7, .L = 9, .K = 9, .D = 2, .bias = 1},
      {.N = 1, .C = 2, .O = 3, .L = 5, .K = 70, .D = 1, .bias = 1},
      {.N = 2, .C = 8, .O = 8, .L = 50, .K = 4, .D = 1, .bias = 1, .G = 8},
  };
  uint64_t h = 1469598103934665603ull;
  for (unsigned i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
    const c1d_shape *s = &shapes[i];
    const int64_t nx = c1d_x_count(s), nw = c1d_w_count(s), ny = c1d_y_count(s);
    float *x = malloc((size_t)nx * sizeof *x), *w = malloc((size_t)nw * sizeof *w), *b = malloc((size_t)s->O * sizeof *b);
    double *y = malloc((size_t)ny * sizeof *y), *m = malloc((size_t)ny * sizeof *m);
    if (!x || !w || !b || !y || !m) {
      fprintf(stderr, "oracle_hash: out of memory\n");
      return 1;
    }
    for (int64_t j = 0; j < nx; j++) x[j] = next_value();
    for (int64_t j = 0; j < nw; j++) w[j] = next_value();
    for (int64_t j = 0; j < s->O; j++) b[j] = next_value();
    if (c1d_oracle_f64(s, x, w, s->bias ? b : NULL, y, m, NULL, NULL) != C1D_OK) {
      fprintf(stderr, "oracle_hash: %s\n", c1d_error_detail());
      return 1;
    }
    h = fnv1a(fnv1a(h, y, (size_t)ny * sizeof *y), m, (size_t)ny * sizeof *m);
    free(x), free(w), free(b), free(y), free(m);
  }
  c1d_oracle_kernel k;
  if (c1d_oracle_kernel_select(&k) != C1D_OK) return 1;
  printf("%016llx %s kernel\n", (unsigned long long)h, c1d_oracle_kernel_name(k));
  return 0;
}
