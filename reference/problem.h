/* The problem: causal Conv1d as people write it, with PyTorch's meaning,
 * act(Conv1d(F.pad(x, ((K-1)*D, 0)), groups=G) + b), or with initial states in place of the zeros:
 *
 *   y[n,o,t] = act( b[o] + sum_{c in o's group} sum_{k<K} w[o, c - g0(o), k] * xs[n, c, t + k*D - (K-1)*D] )
 *
 * where o's group is g = o / (O/G), its channels c = g*(C/G) .. (g+1)*(C/G)-1, g0(o) = g*(C/G), and
 * xs[n, c, t] is x[n, c, t] for t >= 0 and, for t < 0, the initial state s[n, c, (K-1)*D + t] (zero
 * without states). act is the identity or SiLU, x*sigmoid(x). G = 1 is the dense conv, G = C = O the
 * depthwise one (Mamba's). Every tensor has its own element type (fp32, bf16, fp16); host arrays always
 * hold float32 values (exact for bf16 and fp16) in the (N, C, L) order: x is (N,C,L), w (O,C/G,K), b (O),
 * s (N,C,(K-1)*D), y (N,O,L). The channel-last layout (N, L, C) is a property of files and of kernels
 * that read it. This header is the one place that knows the index arithmetic; every implementation,
 * kernel and report goes through it. Zero-initialised fields are the defaults: dense, no states, no
 * activation, every tensor fp32, (N, C, L). */
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

typedef enum c1d_activation { C1D_ACT_NONE = 0, C1D_ACT_SILU, C1D_ACT_COUNT } c1d_activation;
typedef enum c1d_layout_order { C1D_LAYOUT_NCL = 0, C1D_LAYOUT_NLC } c1d_layout_order;

/* The element type of each tensor; all zero: fp32. */
typedef struct c1d_dtypes {
  c1d_dtype x, w, b, s, y;
} c1d_dtypes;

typedef struct c1d_shape {
  int64_t N, C, O, L, K, D;
  int bias;                /* 1: y starts at b[o]; 0: no bias tensor */
  int64_t G;               /* groups (0 or 1: dense) */
  int states;              /* 1: initial states s replace the causal zeros */
  c1d_activation act;
  c1d_dtypes dt;
  c1d_layout_order layout; /* of files and channel-last kernels; host arrays are (N, C, L) */
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

/* "N=32 C=256 O=256 L=8192 K=4 D=1 bias=0", then what is not the default ("G=64 states silu
 * x=bf16 y=bf16 nlc"), into buf (always terminated). */
void c1d_shape_format(const c1d_shape *s, char *buf, int size);

C1D_HD int64_t c1d_pad(const c1d_shape *s) { return (s->K - 1) * s->D; }
C1D_HD int64_t c1d_groups(const c1d_shape *s) { return s->G > 1 ? s->G : 1; }
/* Input channels per group (C/G): the channels each output sums over. */
C1D_HD int64_t c1d_cin_per_group(const c1d_shape *s) { return s->C / c1d_groups(s); }
C1D_HD int64_t c1d_cout_per_group(const c1d_shape *s) { return s->O / c1d_groups(s); }
/* The first input channel of output channel o's group. */
C1D_HD int64_t c1d_group_first_c(const c1d_shape *s, int64_t o) {
  return s->G <= 1 ? 0 : o / c1d_cout_per_group(s) * c1d_cin_per_group(s);
}
/* Products per output: (C/G)*K. */
C1D_HD int64_t c1d_terms(const c1d_shape *s) { return c1d_cin_per_group(s) * s->K; }
C1D_HD int64_t c1d_x_count(const c1d_shape *s) { return s->N * s->C * s->L; }
C1D_HD int64_t c1d_w_count(const c1d_shape *s) { return s->O * c1d_cin_per_group(s) * s->K; }
C1D_HD int64_t c1d_s_count(const c1d_shape *s) { return s->states ? s->N * s->C * c1d_pad(s) : 0; }
C1D_HD int64_t c1d_b_count(const c1d_shape *s) { return s->bias ? s->O : 0; }
C1D_HD int64_t c1d_y_count(const c1d_shape *s) { return s->N * s->O * s->L; }

C1D_HD int64_t c1d_x_index(const c1d_shape *s, int64_t n, int64_t c, int64_t t) {
  return (n * s->C + c) * s->L + t;
}
/* w[o, c - g0(o), k] for an input channel c of o's group (for the dense conv, c itself). */
C1D_HD int64_t c1d_w_index(const c1d_shape *s, int64_t o, int64_t c, int64_t k) {
  if (s->G <= 1) return (o * s->C + c) * s->K + k; /* dense: no division in the kernels' loops */
  return (o * c1d_cin_per_group(s) + (c - c1d_group_first_c(s, o))) * s->K + k;
}
/* s[n, c, j], j = (K-1)*D + t for a time t < 0. */
C1D_HD int64_t c1d_s_index(const c1d_shape *s, int64_t n, int64_t c, int64_t t) {
  return (n * s->C + c) * c1d_pad(s) + c1d_pad(s) + t;
}
/* xs[n, c, t]: x for t >= 0, the initial state (or 0) for t < 0. st may be NULL without states. */
C1D_HD float c1d_x_at(const c1d_shape *s, const float *x, const float *st, int64_t n, int64_t c,
                      int64_t t) {
  return t >= 0 ? x[(n * s->C + c) * s->L + t] : (s->states ? st[c1d_s_index(s, n, c, t)] : 0.0f);
}
C1D_HD int64_t c1d_y_index(const c1d_shape *s, int64_t n, int64_t o, int64_t t) {
  return (n * s->O + o) * s->L + t;
}

/* Channel-last memory (layout NLC, the kernels that read it): x (N, L, C), s (N, (K-1)*D, C), y (N, L, O).
 * w and b keep their shapes. */
C1D_HD int64_t c1d_x_index_nlc(const c1d_shape *s, int64_t n, int64_t c, int64_t t) {
  return (n * s->L + t) * s->C + c;
}
C1D_HD int64_t c1d_s_index_nlc(const c1d_shape *s, int64_t n, int64_t c, int64_t t) {
  return (n * c1d_pad(s) + c1d_pad(s) + t) * s->C + c;
}
C1D_HD int64_t c1d_y_index_nlc(const c1d_shape *s, int64_t n, int64_t o, int64_t t) {
  return (n * s->L + t) * s->O + o;
}

/* The input time that tap k reads for output time t; negative means causal zero padding. */
C1D_HD int64_t c1d_source_time(const c1d_shape *s, int64_t t, int64_t k) {
  return t + k * s->D - (s->K - 1) * s->D;
}

/* The first tap whose source time is >= 0 at output time t (K when every tap is padding); with
 * initial states every tap reads a value: 0. */
C1D_HD int64_t c1d_first_tap(const c1d_shape *s, int64_t t) {
  if (s->states) return 0;
  int64_t missing = (s->K - 1) * s->D - t; /* how far the oldest tap reaches before t=0 */
  if (missing <= 0) return 0;
  int64_t k0 = (missing + s->D - 1) / s->D;
  return k0 < s->K ? k0 : s->K;
}

/* Number of non-padding products summed into y[., ., t]: (C/G) * (K - first_tap). */
C1D_HD int64_t c1d_terms_at(const c1d_shape *s, int64_t t) {
  return c1d_cin_per_group(s) * (s->K - c1d_first_tap(s, t));
}

/* 1 for the plain problem every implementation supports: dense, no states, no activation, fp32. */
C1D_HD int c1d_shape_is_plain(const c1d_shape *s) {
  return c1d_groups(s) == 1 && !s->states && s->act == C1D_ACT_NONE && s->dt.x == C1D_DTYPE_F32 &&
         s->dt.w == C1D_DTYPE_F32 && s->dt.b == C1D_DTYPE_F32 && s->dt.s == C1D_DTYPE_F32 &&
         s->dt.y == C1D_DTYPE_F32;
}

/* 2*N*O*L*(C/G)*K: the conventional operation count (padding products included). */
double c1d_flops(const c1d_shape *s);

#ifdef __cplusplus
}
#endif
#endif
