/* ULP distance (numerics/ulp.h holds the body, inline). */
#include "numerics/ulp.h"

uint64_t c1d_ulp_distance(float a, float b) { return c1d_ulp_distance_inline(a, b); }

uint64_t c1d_ulp_distance_to_double(float a, double exact) {
  return c1d_ulp_distance(a, (float)exact);
}
