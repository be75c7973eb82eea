/* Distance between float32 values in units in the last place. */
#ifndef C1D_ULP_H
#define C1D_ULP_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Number of representable float32 values between a and b (0 when equal; +0 and -0 are equal;
 * across zero it counts the values on both sides). NaN against anything, or Inf against a finite
 * value, gives C1D_ULP_INFINITE; two NaNs give 0. */
#define C1D_ULP_INFINITE UINT64_MAX
uint64_t c1d_ulp_distance(float a, float b);

/* Its body, inline for the per-element loops (numerics/metrics.c): floats mapped to a monotone integer
 * line (negative values mirrored below zero, +0 and -0 both at 0), then the difference of positions. */
static inline int64_t c1d_ulp_ordered(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  const int64_t mag = (int64_t)(u & 0x7fffffffu);
  return (u & 0x80000000u) ? -mag : mag;
}
static inline uint64_t c1d_ulp_distance_inline(float a, float b) {
  const int an = isnan(a), bn = isnan(b);
  if (an || bn) return (an && bn) ? 0 : C1D_ULP_INFINITE;
  if (isinf(a) != isinf(b)) return C1D_ULP_INFINITE;
  const int64_t d = c1d_ulp_ordered(a) - c1d_ulp_ordered(b);
  return (uint64_t)(d < 0 ? -d : d);
}

/* The oracle's double rounded to float32 (nearest), then c1d_ulp_distance against the candidate. */
uint64_t c1d_ulp_distance_to_double(float a, double exact);

#ifdef __cplusplus
}
#endif
#endif
