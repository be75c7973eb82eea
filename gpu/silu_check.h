/* The GPU's SiLU against the GPU's own division, on every float input (numerics/activation.h divides
 * without a division instruction; this is its proof on the device at hand). */
#ifndef C1D_SILU_CHECK_H
#define C1D_SILU_CHECK_H

#include <stdint.h>

#include "reference/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* For all 2^32 float v: c1d_silu_f32(v) on the device against __fdiv_rn(v, 1 + exp(-v)) (the same exp).
 * *mismatches := how many differ (NaNs of either sign agree); *first := the bits of the lowest such v. */
c1d_status c1d_gpu_silu_mismatches(uint64_t *mismatches, uint32_t *first);

#ifdef __cplusplus
}
#endif
#endif
