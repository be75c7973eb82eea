/* The problem: causal Conv1d with PyTorch's meaning, Conv1d(F.pad(x, ((K-1)*D, 0))).
 *
 *   y[n,o,t] = b[o] + sum_{c<C} sum_{k<K} w[o,c,k] * x[n, c, t + k*D - (K-1)*D]   (x at t<0 is 0)
 *
 * x is (N,C,L), w is (O,C,K), b is (O), y is (N,O,L), all C order. This header is the one place that
 * knows the index arithmetic; every implementation, kernel and report goes through it. */
#ifndef C1D_PROBLEM_H
#define C1D_PROBLEM_H

#include <stdint.h>

#include "numerics/hd.h"
#include "reference/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The element types a tensor may have. Host arrays are float32 whatever the type: a bf16 or fp16
 * tensor is held as the float32 values it represents exactly (reference/dtype.h converts). */
typedef enum c1d_dtype { C1D_DTYPE_F32 = 0, C1D_DTYPE_BF16, C1D_DTYPE_F16, C1D_DTYPE_COUNT } c1d_dtype;

typedef struct c1d_shape {
  int64_t N, C, O, L, K, D;
  int bias; /* 1: y starts at b[o]; 0: no bias tensor */
} c1d_shape;

/* Receptive field limit: (K-1)*D+1 taps of history. Larger spans fit no kernel's index math and
 * no real model. */
#define C1D_MAX_SPAN (INT64_C(1) << 30)
/* Per-tensor element limit: counts above this overflow 32-bit-safe byte arithmetic on every device. */
#define C1D_MAX_ELEMENTS (INT64_C(1) << 40)

/* The headline shape of BACKGROUND.md: N=32, C=O=256, L=8192, K=4, D=1, no bias. */
c1d_shape c1d_headline_shape(void);

/* C1D_OK, or C1D_ERR_INVALID_SHAPE / C1D_ERR_OVERFLOW with a one-line detail naming the value. */
c1d_status c1d_shape_validate(const c1d_shape *s);

/* "N=32 C=256 O=256 L=8192 K=4 D=1 bias=0" into buf (always terminated). */
void c1d_shape_format(const c1d_shape *s, char *buf, int size);

C1D_HD int64_t c1d_pad(const c1d_shape *s) { return (s->K - 1) * s->D; }
C1D_HD int64_t c1d_x_count(const c1d_shape *s) { return s->N * s->C * s->L; }
C1D_HD int64_t c1d_w_count(const c1d_shape *s) { return s->O * s->C * s->K; }
C1D_HD int64_t c1d_b_count(const c1d_shape *s) { return s->bias ? s->O : 0; }
C1D_HD int64_t c1d_y_count(const c1d_shape *s) { return s->N * s->O * s->L; }

C1D_HD int64_t c1d_x_index(const c1d_shape *s, int64_t n, int64_t c, int64_t t) {
  return (n * s->C + c) * s->L + t;
}
C1D_HD int64_t c1d_w_index(const c1d_shape *s, int64_t o, int64_t c, int64_t k) {
  return (o * s->C + c) * s->K + k;
}
C1D_HD int64_t c1d_y_index(const c1d_shape *s, int64_t n, int64_t o, int64_t t) {
  return (n * s->O + o) * s->L + t;
}

/* The input time that tap k reads for output time t; negative means causal zero padding. */
C1D_HD int64_t c1d_source_time(const c1d_shape *s, int64_t t, int64_t k) {
  return t + k * s->D - (s->K - 1) * s->D;
}

/* The first tap whose source time is >= 0 at output time t (K when every tap is padding). */
C1D_HD int64_t c1d_first_tap(const c1d_shape *s, int64_t t) {
  int64_t missing = (s->K - 1) * s->D - t; /* how far the oldest tap reaches before t=0 */
  if (missing <= 0) return 0;
  int64_t k0 = (missing + s->D - 1) / s->D;
  return k0 < s->K ? k0 : s->K;
}

/* Number of non-padding products summed into y[., ., t]: C * (K - first_tap). */
C1D_HD int64_t c1d_terms_at(const c1d_shape *s, int64_t t) { return s->C * (s->K - c1d_first_tap(s, t)); }

/* 2*N*O*L*C*K: the conventional operation count (padding products included). */
double c1d_flops(const c1d_shape *s);

#ifdef __cplusplus
}
#endif
#endif
