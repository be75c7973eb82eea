/* ULP distance: floats mapped to a monotone integer line (negative values mirrored below zero, +0 and
 * -0 both at 0), then the difference of positions. */
#include "numerics/ulp.h"

#include <math.h>

#include "numerics/arith.h"

static int64_t ordered(float f) {
  uint32_t u = c1d_float_bits(f);
  int64_t mag = (int64_t)(u & 0x7fffffffu);
  return (u & 0x80000000u) ? -mag : mag;
}

uint64_t c1d_ulp_distance(float a, float b) {
  int an = isnan(a), bn = isnan(b);
  if (an || bn) return (an && bn) ? 0 : C1D_ULP_INFINITE;
  if (isinf(a) != isinf(b)) return C1D_ULP_INFINITE;
  int64_t d = ordered(a) - ordered(b);
  return (uint64_t)(d < 0 ? -d : d);
}

uint64_t c1d_ulp_distance_to_double(float a, double exact) {
  return c1d_ulp_distance(a, (float)exact);
}
