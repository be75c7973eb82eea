/* Tensors as GPU kernels with caps read them (reference/impl.h, c1d_impl.run): a host float32 array in
 * (outer, rows, cols) order, e.g. x (N, C, L), packed into the bytes of a device array in its own element
 * type, optionally transposed to (outer, cols, rows), e.g. x (N, L, C); and an output's bytes back to
 * float32. Exact both ways: the float32 values of a bf16 or fp16 tensor are representable in its type
 * (the runner generates and reads them so; a value that is not is rounded to nearest-even). */
#ifndef C1D_PACKING_H
#define C1D_PACKING_H

#include <stddef.h>
#include <stdint.h>

#include "reference/problem.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bytes of n elements of type d. */
size_t c1d_packed_bytes(c1d_dtype d, int64_t n);

/* dst[o][r][c] (or dst[o][c][r] when transpose) = src[o][r][c] in type d. dst holds
 * c1d_packed_bytes(d, outer*rows*cols) bytes. */
void c1d_pack_tensor(void *dst, const float *src, c1d_dtype d, int64_t outer, int64_t rows, int64_t cols,
                     int transpose);

/* The inverse: dst[o][r][c] = src[o][r][c] (or src[o][c][r] when transposed) as float32. */
void c1d_unpack_tensor(float *dst, const void *src, c1d_dtype d, int64_t outer, int64_t rows, int64_t cols,
                       int transposed);

#ifdef __cplusplus
}
#endif
#endif
