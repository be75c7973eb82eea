/* Input generation: counter-based SplitMix64, so every element is a pure function of (seed, stream, i)
 * and OpenMP can fill tensors in any order with the same result. */
#include "harness/inputs.h"

#include "reference/dtype.h"

#include <math.h>
#include <string.h>

#include "harness/suggest.h"

static const char *const dist_names[C1D_DIST_COUNT] = {"normal", "uniform", "conv_init", "integer",
                                                       "ill_conditioned"};

const char *c1d_dist_name(c1d_dist d) { return (unsigned)d < C1D_DIST_COUNT ? dist_names[d] : "?"; }

c1d_status c1d_dist_parse(const char *name, c1d_dist *out) {
  for (int d = 0; d < C1D_DIST_COUNT; d++)
    if (strcmp(name, dist_names[d]) == 0) {
      *out = (c1d_dist)d;
      return C1D_OK;
    }
  return c1d_fail_unknown("unknown distribution", name, dist_names, C1D_DIST_COUNT,
                          "choose normal, uniform, conv_init, integer, ill_conditioned");
}

static uint64_t splitmix64(uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static uint64_t draw(uint64_t seed, uint64_t stream, uint64_t index) {
  return splitmix64(seed * 0x9e3779b97f4a7c15ull + (stream << 56) + index);
}

float c1d_uniform01(uint64_t seed, uint64_t stream, uint64_t index) {
  return (float)(draw(seed, stream, index) >> 40) * 0x1p-24f;
}

/* U(-1,1) with 24 random bits. */
static float uniform_pm1(uint64_t seed, uint64_t stream, uint64_t i) {
  return (float)((double)(draw(seed, stream, i) >> 40) * 0x1p-23 - 1.0);
}

/* N(0,1) by Box-Muller from two independent 53-bit uniforms, rounded once to float. */
static float normal01(uint64_t seed, uint64_t stream, uint64_t i) {
  double u1 = ((double)(draw(seed, stream, 2 * i) >> 11) + 1.0) * 0x1p-53; /* (0,1] */
  double u2 = (double)(draw(seed, stream, 2 * i + 1) >> 11) * 0x1p-53;
  return (float)(sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2));
}

/* Integer in [-r, r]. */
static float small_int(uint64_t seed, uint64_t stream, uint64_t i, int r) {
  return (float)((int64_t)(draw(seed, stream, i) % (uint64_t)(2 * r + 1)) - r);
}

int c1d_integer_range(const c1d_shape *s) {
  /* |y| <= r*r*C*K + r: keep it below 2^24 so float32 holds every partial sum exactly. */
  double n = (double)s->C * (double)s->K;
  for (int r = 8; r > 1; r /= 2)
    if ((double)r * r * n + r < 16777216.0) return r;
  return 1;
}

enum { STREAM_X = 1, STREAM_W = 2, STREAM_B = 3, STREAM_X_PAIR = 4, STREAM_S = 5 };

static float value(c1d_dist dist, const c1d_shape *s, uint64_t seed, int stream, uint64_t i) {
  switch (dist) {
    case C1D_DIST_NORMAL: return normal01(seed, stream, i);
    case C1D_DIST_UNIFORM: return uniform_pm1(seed, stream, i);
    case C1D_DIST_CONV_INIT: /* nn.Conv1d's: U(+-1/sqrt(fan_in)), fan_in = (C/G)*K */
      if (stream == STREAM_X || stream == STREAM_S) return normal01(seed, stream, i);
      return (float)(uniform_pm1(seed, stream, i) / sqrt((double)c1d_terms(s)));
    case C1D_DIST_INTEGER: return small_int(seed, stream, i, c1d_integer_range(s));
    default: return normal01(seed, stream, i);
  }
}

/* Each tensor rounded to its declared element type (a bf16 tensor holds bf16 values). */
static void round_to_types(const c1d_shape *s, float *x, float *w, float *b, float *st) {
  const struct { float *v; int64_t n; c1d_dtype d; } t[4] = {
      {x, c1d_x_count(s), s->dt.x}, {w, c1d_w_count(s), s->dt.w}, {b, c1d_b_count(s), s->dt.b},
      {st, c1d_s_count(s), s->dt.s}};
  for (int k = 0; k < 4; k++)
    if (t[k].v && t[k].d != C1D_DTYPE_F32) {
#pragma omp parallel for schedule(static)
      for (int64_t i = 0; i < t[k].n; i++) t[k].v[i] = c1d_round_to_dtype(t[k].d, t[k].v[i]);
    }
}

void c1d_generate_states(const c1d_shape *s, c1d_dist dist, uint64_t seed, float *st) {
  const int64_t ns = c1d_s_count(s);
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < ns; i++) st[i] = value(dist, s, seed, STREAM_S, (uint64_t)i);
  round_to_types(s, NULL, NULL, NULL, st);
}

void c1d_generate(const c1d_shape *s, c1d_dist dist, uint64_t seed, float *x, float *w, float *b) {
  const int64_t nx = c1d_x_count(s), nw = c1d_w_count(s);
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < nx; i++) x[i] = value(dist, s, seed, STREAM_X, (uint64_t)i);
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < nw; i++) w[i] = value(dist, s, seed, STREAM_W, (uint64_t)i);
  if (s->bias)
    for (int64_t o = 0; o < s->O; o++) b[o] = value(dist, s, seed, STREAM_B, (uint64_t)o);

  if (dist == C1D_DIST_ILL_CONDITIONED) {
    /* Channels 2j and 2j+1 cancel: x[2j+1] = x[2j]*(1 + 2^-10 r) and w[.,2j+1,.] = -w[.,2j,.], so each
     * pair contributes about 2^-10 of its magnitude and m/|y| grows to ~1e3. */
    for (int64_t n = 0; n < s->N; n++)
      for (int64_t c = 0; c + 1 < s->C; c += 2)
        for (int64_t t = 0; t < s->L; t++) {
          int64_t i = c1d_x_index(s, n, c, t);
          float r = uniform_pm1(seed, STREAM_X_PAIR, (uint64_t)i);
          x[c1d_x_index(s, n, c + 1, t)] = x[i] * (1.0f + 0x1p-10f * r);
        }
    for (int64_t o = 0; o < s->O; o++) {
      const int64_t c0 = c1d_group_first_c(s, o);
      for (int64_t c = c0; c + 1 < c0 + c1d_cin_per_group(s); c += 2)
        for (int64_t k = 0; k < s->K; k++)
          w[c1d_w_index(s, o, c + 1, k)] = -w[c1d_w_index(s, o, c, k)];
    }
  }
  round_to_types(s, x, w, s->bias ? b : NULL, NULL);
}
