/* packing: host tensors packed for the GPU kernels that read their own element types and channel-last
 * memory (harness/packing.h), and outputs unpacked. Every float32, bf16 and fp16 value round-trips
 * exactly, a transpose puts element (o, r, c) at (o, c, r), and packed bytes are the element type's
 * bits (the GPU kernels decode them with the same functions, reference/dtype.h). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "harness/packing.h"
#include "numerics/arith.h"
#include "reference/dtype.h"

static const c1d_dtype types[] = {C1D_DTYPE_F32, C1D_DTYPE_BF16, C1D_DTYPE_F16};

/* Values representable in d, with signs, subnormals and the extremes of its range. */
static void fill_values(float *v, int64_t n, c1d_dtype d) {
  for (int64_t i = 0; i < n; i++) {
    const float raw = (float)((i * 2654435761u) % 20011) / 997.0f - 10.0f;
    v[i] = c1d_round_to_dtype(d, i % 7 == 3 ? raw * 1e-6f : raw);
  }
  if (n > 4) {
    v[0] = c1d_round_to_dtype(d, d == C1D_DTYPE_F16 ? 65504.0f : 3e38f);
    v[1] = d == C1D_DTYPE_F16 ? 0x1p-24f : d == C1D_DTYPE_BF16 ? 0x1p-133f : 0x1p-149f; /* smallest subnormal */
    v[2] = -0.0f;
    v[3] = c1d_round_to_dtype(d, -1.0f / 3.0f);
  }
}

Test(packing, every_type_round_trips_exactly_with_and_without_the_transpose) {
  const int64_t outer = 3, rows = 5, cols = 7, n = outer * rows * cols;
  float *src = malloc(n * sizeof(float)), *back = malloc(n * sizeof(float));
  void *packed = malloc((size_t)n * 4);
  cr_assert(src && back && packed);
  for (unsigned t = 0; t < sizeof types / sizeof types[0]; t++)
    for (int transpose = 0; transpose <= 1; transpose++) {
      fill_values(src, n, types[t]);
      c1d_pack_tensor(packed, src, types[t], outer, rows, cols, transpose);
      memset(back, 0xff, (size_t)n * sizeof(float));
      c1d_unpack_tensor(back, packed, types[t], outer, rows, cols, transpose);
      for (int64_t i = 0; i < n; i++)
        cr_assert_eq(c1d_float_bits(back[i]), c1d_float_bits(src[i]), "%s transpose %d: element %lld %a became %a",
                     c1d_dtype_name(types[t]), transpose, (long long)i, (double)src[i], (double)back[i]);
    }
  free(src), free(back), free(packed);
}

Test(packing, the_transpose_is_channel_last_and_bytes_are_the_types_bits) {
  /* x (N=2, C=3, L=4) -> (N, L, C): element (n, c, t) at (n*L + t)*C + c. */
  const int64_t N = 2, C = 3, L = 4;
  float x[24];
  uint16_t bf[24], half[24];
  float f32[24];
  for (int i = 0; i < 24; i++) x[i] = (float)i - 11.5f;
  c1d_pack_tensor(bf, x, C1D_DTYPE_BF16, N, C, L, 1);
  c1d_pack_tensor(half, x, C1D_DTYPE_F16, N, C, L, 1);
  c1d_pack_tensor(f32, x, C1D_DTYPE_F32, N, C, L, 1);
  for (int64_t n = 0; n < N; n++)
    for (int64_t c = 0; c < C; c++)
      for (int64_t t = 0; t < L; t++) {
        const float v = x[(n * C + c) * L + t];
        const int64_t j = (n * L + t) * C + c;
        cr_assert_eq(bf[j], c1d_float_to_bf16_bits(v));
        cr_assert_eq(half[j], c1d_float_to_f16_bits(v));
        cr_assert_eq(c1d_float_bits(f32[j]), c1d_float_bits(v));
      }
  cr_assert_eq(c1d_packed_bytes(C1D_DTYPE_BF16, 10), 20);
  cr_assert_eq(c1d_packed_bytes(C1D_DTYPE_F16, 10), 20);
  cr_assert_eq(c1d_packed_bytes(C1D_DTYPE_F32, 10), 40);
}

Test(packing, fp16_bits_of_subnormals_and_overflow_are_ieee) {
  /* c1d_float_to_f16_bits runs on the device too (no library call): its subnormal path is exact. */
  cr_assert_eq(c1d_float_to_f16_bits(0x1p-24f), 0x0001);
  cr_assert_eq(c1d_float_to_f16_bits(-0x1p-24f), 0x8001);
  cr_assert_eq(c1d_float_to_f16_bits(1023.0f * 0x1p-24f), 0x03ff);
  cr_assert_eq(c1d_float_to_f16_bits(0x1p-14f), 0x0400);
  cr_assert_eq(c1d_float_to_f16_bits(65520.0f), 0x7c00);
  cr_assert_eq(c1d_float_to_f16_bits(3.0f * 0x1p-26f), 0x0001); /* 0.75 ulp rounds up */
  for (uint32_t h = 0; h < 0x7c00; h++) /* every finite positive fp16 */
    cr_assert_eq(c1d_float_to_f16_bits(c1d_f16_bits_to_float((uint16_t)h)), h, "fp16 0x%04x", h);
}
