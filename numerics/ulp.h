/* Distance between float32 values in units in the last place. */
#ifndef C1D_ULP_H
#define C1D_ULP_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Number of representable float32 values between a and b (0 when equal; +0 and -0 are equal;
 * across zero it counts the values on both sides). NaN against anything, or Inf against a finite
 * value, gives C1D_ULP_INFINITE; two NaNs give 0. */
#define C1D_ULP_INFINITE UINT64_MAX
uint64_t c1d_ulp_distance(float a, float b);

/* The oracle's double rounded to float32 (nearest), then c1d_ulp_distance against the candidate. */
uint64_t c1d_ulp_distance_to_double(float a, double exact);

#ifdef __cplusplus
}
#endif
#endif
