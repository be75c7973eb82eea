/* Packing tensors for GPU kernels; see packing.h. Parallel over (outer, row) pairs. */
#include "harness/packing.h"

#include <string.h>

#include "reference/dtype.h"

size_t c1d_packed_bytes(c1d_dtype d, int64_t n) { return (size_t)n * (size_t)c1d_dtype_size(d); }

static uint16_t encode16(c1d_dtype d, float v) {
  return d == C1D_DTYPE_BF16 ? c1d_float_to_bf16_bits(v) : c1d_float_to_f16_bits(v);
}

static float decode16(c1d_dtype d, uint16_t h) {
  return d == C1D_DTYPE_BF16 ? c1d_bf16_bits_to_float(h) : c1d_f16_bits_to_float(h);
}

/* Index of element (o, r, c) in an (outer, rows, cols) array, or in its (outer, cols, rows) transpose. */
static int64_t at(int64_t o, int64_t r, int64_t c, int64_t rows, int64_t cols, int transposed) {
  return transposed ? (o * cols + c) * rows + r : (o * rows + r) * cols + c;
}

void c1d_pack_tensor(void *dst, const float *src, c1d_dtype d, int64_t outer, int64_t rows, int64_t cols,
                     int transpose) {
  if (d == C1D_DTYPE_F32 && !transpose) {
    memcpy(dst, src, c1d_packed_bytes(d, outer * rows * cols));
    return;
  }
#pragma omp parallel for schedule(static)
  for (int64_t orow = 0; orow < outer * rows; orow++) {
    const int64_t o = orow / rows, r = orow % rows;
    const float *in = src + orow * cols;
    for (int64_t c = 0; c < cols; c++) {
      const int64_t i = at(o, r, c, rows, cols, transpose);
      if (d == C1D_DTYPE_F32)
        ((float *)dst)[i] = in[c];
      else
        ((uint16_t *)dst)[i] = encode16(d, in[c]);
    }
  }
}

void c1d_unpack_tensor(float *dst, const void *src, c1d_dtype d, int64_t outer, int64_t rows, int64_t cols,
                       int transposed) {
  if (d == C1D_DTYPE_F32 && !transposed) {
    memcpy(dst, src, c1d_packed_bytes(d, outer * rows * cols));
    return;
  }
#pragma omp parallel for schedule(static)
  for (int64_t orow = 0; orow < outer * rows; orow++) {
    const int64_t o = orow / rows, r = orow % rows;
    float *out = dst + orow * cols;
    for (int64_t c = 0; c < cols; c++) {
      const int64_t i = at(o, r, c, rows, cols, transposed);
      out[c] = d == C1D_DTYPE_F32 ? ((const float *)src)[i] : decode16(d, ((const uint16_t *)src)[i]);
    }
  }
}
