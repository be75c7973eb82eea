/* The power benchmark's parts, shared by its files (not by convlab): a problem's data, its inputs, the
 * accumulation orders, the correct outputs built from them, the bug patterns, and PyTorch's outputs. */
#ifndef C1D_POWER_INTERNAL_H
#define C1D_POWER_INTERNAL_H

#include "bench/power.h"

// --- a problem's data ---------------------------------------------------------------------------

/* How an order's inputs are rounded before an fp32 sum (BF16_W: the weights alone, x as given). */
enum { POWER_IN_NONE, POWER_IN_TF32_RNA, POWER_IN_TF32_TRUNC, POWER_IN_BF16, POWER_IN_FP16, POWER_IN_BF16_W,
       POWER_IN_COUNT };

typedef struct power_case {
  c1d_power_problem p;
  c1d_shape s;
  float *x, *w, *b, *st;                 /* b is NULL without bias, st without initial states */
  double *ref, *mag, *pre;               /* the oracle on x, w, b, st: y, m, and the sum before SiLU */
  /* Inputs rounded as POWER_IN_*, and the oracle on them (made on first use; [0] aliases x, w, ref). */
  float *xr[POWER_IN_COUNT], *wr[POWER_IN_COUNT];
  double *ref_r[POWER_IN_COUNT], *mag_r[POWER_IN_COUNT], *pre_r[POWER_IN_COUNT];
  double max_abs_x, max_abs_w, max_abs_ref, max_mag;
} power_case;

/* Inputs of p (power_inputs.c), each in its type: x (N*C*L), w (O*(C/G)*K), b (O) when the shape has
 * a bias, st (N*C*(K-1)*D) when it has initial states (st may be NULL otherwise). */
void power_generate(const c1d_power_problem *p, float *x, float *w, float *b, float *st);

/* Allocates and fills c for p: inputs and the oracle. C1D_ERR_NO_MEMORY (nothing to free then). */
c1d_status power_case_make(const c1d_power_problem *p, power_case *c);
/* The inputs rounded as `in` and the oracle on them, made once. C1D_ERR_NO_MEMORY. */
c1d_status power_case_rounded(power_case *c, int in);
void power_case_free(power_case *c);

// --- accumulation orders (power_sums.c, power_sgemm.c) -------------------------------------------

enum {
  POWER_ACC_NAIVE,        /* acc = b; fma over c outer, k inner */
  POWER_ACC_NAIVE_NOFMA,  /* the same with a rounded multiply, then a rounded add */
  POWER_ACC_REVERSED,     /* acc = b; c from C-1 down, k from K-1 down */
  POWER_ACC_RANDOM,       /* acc = b; channels in a seeded random order */
  POWER_ACC_PAIRWISE,     /* rounded products summed by a pairwise tree, b last */
  POWER_ACC_BLOCKED,      /* per block of param channels a chain from 0; block sums in order; b last */
  POWER_ACC_TILED,        /* tap-major split-K: tiles of param terms, each a chain from 0, onto acc = b */
  POWER_ACC_KAHAN,        /* Kahan-compensated sum of rounded products, b first */
  POWER_ACC_TAP_PARTIAL,  /* one chain per tap over c; b + partial[0] + ... + partial[K-1] */
  POWER_ACC_3XTF32,       /* TF32 big/small split; small*big + big*small + big*big per term */
  POWER_ACC_SGEMM,        /* im2col, OpenBLAS SGEMM onto y = b (per group) */
  POWER_ACC_TORCH,        /* PyTorch's conv1d in float32, computed before (power_torch.c) */
  POWER_ACC_TORCH_BF16,   /* PyTorch's conv1d (and SiLU) on bf16 tensors */
  POWER_ACC_BF16_PRODUCTS, /* each product rounded to bf16, then an fp32 add; param 1: reversed order */
  POWER_ACC_FP16_SUMS,    /* acc = fp16(b); acc = fp16(fma(x, w, acc)); param 1: reversed order */
  POWER_ACC_ONEDNN,       /* oneDNN's convolution (power_onednn.c) */
  POWER_ACC_BLIS,         /* im2col, BLIS's SGEMM onto y = b (per group; power_blis.c) */
  POWER_ACC_BF16_SUMS     /* acc = bf16(b); acc = bf16(acc + bf16(x*w)), c outer, k inner: PyTorch 1.13's own
                           * CPU bf16 path (CPUs without AVX-512, or oneDNN off), to recognise it */
};

/* y (N*O*L) from x, w, b (NULL without bias) and st (the initial states, NULL without) in order acc
 * with its parameter, then SiLU in float32 when the shape has it (y is float32: the caller stores it in
 * y's type); the sum runs over o's group. seed picks the random order. C1D_ERR_NO_MEMORY. Not for
 * POWER_ACC_SGEMM or the PyTorch orders. */
c1d_status power_sum(int acc, int param, uint64_t seed, const c1d_shape *s, const float *x,
                     const float *w, const float *b, const float *st, float *y);

/* The columns of batch element n (col: (C*K) x L, row c*K + k holds x at t + k*D - (K-1)*D, the states or
 * 0 before t = 0) and its output rows prefilled with the bias (or 0); returns y's rows of n. For the
 * GEMM orders (power_sgemm.c, power_blis.c). */
float *power_im2col_and_bias(const c1d_shape *s, const float *x, const float *b, const float *st, int64_t n,
                             float *col, float *y);

/* The same by im2col and OpenBLAS's SGEMM, one per group. C1D_ERR_NO_MEMORY. */
c1d_status power_sgemm(const c1d_shape *s, const float *x, const float *w, const float *b, const float *st,
                       float *y);

/* The same by oneDNN's convolution (convlab's onednn_fp32 row) on x with its causal columns in front,
 * then SiLU as power_sgemm does. C1D_ERR_NO_MEMORY, or C1D_ERR_UNSUPPORTED without libdnnl. */
c1d_status power_onednn(const c1d_shape *s, const float *x, const float *w, const float *b, const float *st,
                        float *y);
/* Whether libdnnl can be opened here (the oneDNN order is left out otherwise). */
int power_onednn_available(void);

/* The same by im2col and BLIS's SGEMM (bli_sgemm, one thread), one per group. C1D_ERR_NO_MEMORY, or
 * C1D_ERR_UNSUPPORTED without libblis. */
c1d_status power_blis(const c1d_shape *s, const float *x, const float *w, const float *b, const float *st,
                      float *y);
/* Whether libblis can be opened here (the BLIS order is left out otherwise). */
int power_blis_available(void);

/* SiLU in float32 the way libm users write it, v / (1 + expf(-v)): a second SiLU beside convlab's
 * c1d_silu_f32 (power_sums.c). */
float power_silu_libm(float v);

// --- correct outputs (power_orders.c) -------------------------------------------------------------

enum { POWER_STORE_FP32, POWER_STORE_FP16, POWER_STORE_BF16 };

/* Which problems an order applies to: the plain problem, issue 15's operator, or both; and what the
 * operator's tensors must be for it. */
enum { POWER_ON_DENSE = 1, POWER_ON_OPERATOR = 2, POWER_ON_ANY = 3 };
enum { POWER_NEED_NONE, POWER_NEED_BF16_XW, POWER_NEED_F16_Y, POWER_NEED_BF16_X_F32_W, POWER_NEED_F32_Y,
       POWER_NEED_ALL_BF16_NO_SILU, POWER_NEED_ALL_BF16_SILU };

typedef struct power_order {
  const char *name, *summary;
  int input;   /* POWER_IN_* */
  int acc;     /* POWER_ACC_* */
  int param;
  int store;   /* POWER_STORE_*: FP32 means the contract's, one rounding to y's type */
  int on;      /* POWER_ON_* */
  int need;    /* POWER_NEED_* */
  const char *stage; /* the `where` a reduced-precision verdict must name; NULL for correct outputs */
} power_order;

const power_order *power_order_at(int order);

/* Whether order makes sense on c's values (fp16 only where values fit fp16; PyTorch when run). */
int power_order_applies(int order, const power_case *c, int use_torch);

/* The storage an order's result goes through on c: its own, or for the contract's orders y's type. */
int power_order_store_of(int order, const power_case *c);

/* PyTorch's outputs for a problem: the float32 conv (and SiLU), on bf16 tensors the bf16 one, and with
 * SiLU the bf16 conv before it (NULL where absent). */
typedef struct power_torch_y {
  const float *f32, *bf16, *bf16_conv;
} power_torch_y;

/* The order's output into y and, for a reduced-precision store, the float32 result before the store
 * into unstored (may be NULL otherwise). torch: PyTorch's outputs for c (used by the PyTorch orders).
 * C1D_ERR_NO_MEMORY. */
c1d_status power_order_run(int order, power_case *c, power_torch_y torch, float *y, float *unstored);

/* 1 when every element of y lies inside the bound that proves the order correct: the fp32 sum bound
 * gamma_{n+K+1} * m on the rounded inputs' oracle, plus underflow; 3xTF32's split error; the store's
 * half unit in the last place; for PyTorch's bf16 outputs, where its conv (torch.bf16, or with SiLU
 * torch.bf16_conv) is its own CPU path's bit for bit, that arithmetic's bound. */
int power_order_in_bound(int order, power_case *c, const float *y, power_torch_y torch);

/* The rms error that the fitting model leaves unexplained for a bug built on this order: fp32 orders,
 * the naive order's rms error (naive given); rounded inputs, rms(y - oracle on the rounded inputs);
 * a reduced-precision store (bf16 or fp16 outputs among them), the store's rms rounding (y against
 * unstored). */
double power_order_scale(int order, power_case *c, const float *y, const float *unstored,
                         const float *naive);

/* 1 for the orders of the contract (float32 inputs, an fp32 sum in some order, no stage): the bases of
 * the rotating bugs. */
int power_order_is_fp32(int order);

/* v rounded to the order's output storage on c (v itself for float32 storage). */
float power_order_store(int order, const power_case *c, float v);

// --- bugs (power_bugs.c) ---------------------------------------------------------------------------

/* The order a bug is injected into: "" rotates over the fp32 orders. */
const char *power_bug_base(int bug);
/* 1 when the bug is injected before the base's reduced-precision store (the output is re-stored). */
int power_bug_before_store(int bug);

/* The bug's error pattern on c: e (N*O*L) zero outside its region, with rms 1 over the region; returns
 * the region's element count, 0 when the class does not apply to c's shape or data. rng: the seed
 * that places the region (same for every size of one problem). */
int64_t power_bug_pattern(int bug, const power_case *c, uint64_t rng, double *e);

// --- PyTorch's outputs (power_torch.c) -------------------------------------------------------------

typedef struct power_torch {
  char dir[64];   /* the temporary directory with inputs and outputs; "" when none */
} power_torch;

/* Writes the inputs of every problem, runs one Python process that computes every output with
 * PyTorch's conv1d (groups, states before x, SiLU; on all-bf16 problems in bf16 too), and keeps them in
 * pt->dir. C1D_ERR_IO naming what failed. Call power_torch_cleanup afterwards whatever it returned. */
c1d_status power_torch_prepare(const c1d_power_problem *probs, int count, power_torch *pt, FILE *log);
/* 1 when PyTorch also computes p in bf16 (every tensor bf16). */
int power_torch_has_bf16(const c1d_shape *s);
/* PyTorch's outputs of a problem: float32, on bf16 tensors, and (with SiLU) the bf16 conv before it. */
typedef enum { POWER_TORCH_F32, POWER_TORCH_BF16, POWER_TORCH_BF16_CONV } power_torch_kind;
/* PyTorch's output of that kind for p into y. C1D_ERR_IO / C1D_ERR_FORMAT. */
c1d_status power_torch_output(const power_torch *pt, const c1d_power_problem *p, power_torch_kind kind, float *y);
/* Removes the directory. */
void power_torch_cleanup(power_torch *pt);

// --- records (power_results.c) --------------------------------------------------------------------

/* Appends r to res. C1D_ERR_NO_MEMORY. */
c1d_status power_results_push(c1d_power_results *res, const c1d_power_record *r);

// --- small helpers ---------------------------------------------------------------------------------

uint64_t power_mix(uint64_t z);

#endif
