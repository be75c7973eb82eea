/* The GPU's paired bf16 / fp16 roundings (gpu/pack_round.h) against the reference's, on every float
 * input: the proof, on the device at hand, that gpu_dw_fast's stores keep its twin's bits. */
#ifndef C1D_ROUND_CHECK_H
#define C1D_ROUND_CHECK_H

#include <stdint.h>

#include "reference/dtype.h"
#include "reference/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* For all 2^32 float v that are not NaNs: both halves of the packed rounding of (v, -v) to d (bf16 or
 * fp16) against c1d_float_to_bf16_bits / c1d_float_to_f16_bits. *mismatches := how many v differ;
 * *first := the bits of the lowest such v. */
c1d_status c1d_gpu_round_mismatches(c1d_dtype d, uint64_t *mismatches, uint32_t *first);

#ifdef __cplusplus
}
#endif
#endif
