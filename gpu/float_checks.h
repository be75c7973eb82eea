/* The GPU's own arithmetic against its definition on every float input: the proofs, on the device at
 * hand, that gpu_dw_fast keeps its twin's bits where it computes differently from the CPU.
 *  - The SiLU: numerics/activation.h divides without a division instruction.
 *  - The paired bf16 / fp16 roundings of the stores (gpu/pack_round.h). */
#ifndef C1D_FLOAT_CHECKS_H
#define C1D_FLOAT_CHECKS_H

#include <stdint.h>

#include "reference/dtype.h"
#include "reference/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* For all 2^32 float v: c1d_silu_f32(v) on the device against __fdiv_rn(v, 1 + exp(-v)) (the same exp).
 * *mismatches := how many differ (NaNs of either sign agree); *first := the bits of the lowest such v. */
c1d_status c1d_gpu_silu_mismatches(uint64_t *mismatches, uint32_t *first);

/* For all 2^32 float v that are not NaNs: both halves of the packed rounding of (v, -v) to d (bf16 or
 * fp16) against c1d_float_to_bf16_bits / c1d_float_to_f16_bits. *mismatches := how many v differ;
 * *first := the bits of the lowest such v. */
c1d_status c1d_gpu_round_mismatches(c1d_dtype d, uint64_t *mismatches, uint32_t *first);

#ifdef __cplusplus
}
#endif
#endif
