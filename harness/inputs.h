/* Seeded, reproducible input tensors. The PRNG is SplitMix64 used as a counter-based generator:
 * element i of tensor stream s under seed S is splitmix64(S * 0x9E3779B97F4A7C15 + s * 2^56 + i), so a
 * seed gives the same tensors on every machine, thread count and order of generation.
 * Uniform values take the top 24 bits (exact in float32); normals use Box-Muller on two uniforms. */
#ifndef C1D_INPUTS_H
#define C1D_INPUTS_H

#include <stdint.h>

#include "reference/problem.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum c1d_dist {
  C1D_DIST_NORMAL,          /* x, w ~ N(0,1); b ~ N(0,1) */
  C1D_DIST_UNIFORM,         /* x, w, b ~ U(-1,1) */
  C1D_DIST_CONV_INIT,       /* x ~ N(0,1); w, b ~ U(+-1/sqrt(C*K)): nn.Conv1d's default initialisation */
  C1D_DIST_INTEGER,         /* small integers: every product and partial sum exact in float32 */
  C1D_DIST_ILL_CONDITIONED, /* channel pairs that cancel: m = sum|w*x| is ~1e3 times |y| */
  C1D_DIST_COUNT
} c1d_dist;

/* "normal", "uniform", "conv_init", "integer", "ill_conditioned". */
const char *c1d_dist_name(c1d_dist d);
/* C1D_OK and *out, or C1D_ERR_USAGE naming the unknown distribution. */
c1d_status c1d_dist_parse(const char *name, c1d_dist *out);

/* Fills x (N*C*L), w (O*C*K) and, if s->bias, b (O) from (dist, seed). Never all-zero. */
void c1d_generate(const c1d_shape *s, c1d_dist dist, uint64_t seed, float *x, float *w, float *b);

/* The initial states (c1d_s_count(s) values) of the same distribution (like x), in their type. */
void c1d_generate_states(const c1d_shape *s, c1d_dist dist, uint64_t seed, float *st);

/* The largest |integer| used by C1D_DIST_INTEGER for this shape: chosen so that |y| and every partial
 * sum stay below 2^24, where float32 represents every integer. */
int c1d_integer_range(const c1d_shape *s);

/* The underlying generator, exposed for tests: uniform in [0,1) with 24 random bits. */
float c1d_uniform01(uint64_t seed, uint64_t stream, uint64_t index);

#ifdef __cplusplus
}
#endif
#endif
