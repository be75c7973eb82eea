/* The contract of an implementation: its descriptor type. Every implementation file (cpu/, gpu/) exports
 * one c1d_impl; harness/registry.c lists them. All implementations share one run signature. */
#ifndef C1D_IMPL_H
#define C1D_IMPL_H

#include "reference/problem.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum c1d_backend { C1D_BACKEND_CPU, C1D_BACKEND_GPU } c1d_backend;

/* The arithmetic an implementation claims; the explainer judges its errors against this. */
typedef enum c1d_precision {
  C1D_PREC_FP64,          /* float64 accumulation (oracles) */
  C1D_PREC_FP32,          /* float32 products and sums, some order */
  C1D_PREC_FP32_COMP,     /* float32 with compensated summation */
  C1D_PREC_TF32,          /* inputs rounded to TF32, float32 accumulation */
  C1D_PREC_TF32_ALLOWED,  /* a library allowed to use TF32; what it did is in c1d_exec */
  C1D_PREC_3XTF32,        /* split TF32 products recovering float32 accuracy */
  C1D_PREC_BF16,
  C1D_PREC_FP16,
  C1D_PREC_WRONG          /* a deliberate bug, for the explainer's tests */
} c1d_precision;

/* Per-run execution context, owned by the runner. GPU pointers are device pointers. */
typedef struct c1d_exec {
  void *stream;      /* cudaStream_t for GPU implementations (NULL: the default stream) */
  void *state;       /* what setup() returned; passed to run() and teardown() */
  /* The initial states s (N, C, (K-1)*D) when the problem has them, else NULL; for a GPU
   * implementation a device array in the form its caps ask for (see c1d_impl.run). */
  const float *states;
  /* Filled by the implementation: what it actually did ("allowed" is not "used"). */
  char algo[96];     /* e.g. "IMPLICIT_PRECOMP_GEMM"; "" when there is no choice */
  char math[64];     /* e.g. "FMA (fp32)", "TF32 tensor cores" */
  int used_tf32;     /* 1 used, 0 did not, -1 unknown */
} c1d_exec;

/* Where an implementation stands: MAIN rows are what `convlab run` runs and `convlab list` shows;
 * VARIANT rows are alternatives kept for comparison (run when named, by `convlab bench`, and listed by
 * `convlab list --all`); MUTANT rows are deliberately wrong (the bug zoo), for the explainer's tests. */
typedef enum c1d_tier { C1D_TIER_MAIN = 0, C1D_TIER_VARIANT, C1D_TIER_MUTANT } c1d_tier;

/* What an implementation handles beyond the plain problem (dense, no states, no activation, fp32): the
 * runner skips it, with the reason, on a problem that needs more (c1d_impl_unsupported). */
enum {
  C1D_CAP_GROUPS = 1u << 0,  /* G > 1 (grouped and depthwise) */
  C1D_CAP_STATES = 1u << 1,  /* initial states (ex->states) */
  C1D_CAP_SILU = 1u << 2,    /* the SiLU activation */
  C1D_CAP_DTYPES = 1u << 3,  /* bf16 and fp16 tensors (y rounded to its type) */
  C1D_CAP_DEPTHWISE_ONLY = 1u << 4, /* only G = C = O */
  C1D_CAP_CHANNEL_LAST = 1u << 5,   /* a GPU kernel that reads x, s and writes y in s->layout's order */
};

typedef struct c1d_impl {
  const char *name;        /* stable, e.g. "gpu_tiled_smem" */
  const char *summary;     /* one line: precision and accumulation order */
  c1d_backend backend;
  c1d_precision precision;
  const char *twin;        /* the CPU implementation it must match, or NULL */
  int twin_bit_exact;      /* 1: identical bits to the twin; 0: statistical agreement */
  c1d_tier tier;           /* main (the default, 0), variant or mutant */
  /* NULL when the shape is handled, else a static reason ("K*D exceeds shared memory"). May be NULL. */
  const char *(*supported)(const c1d_shape *s);
  /* Optional, outside the timed region: allocate handles, choose algorithms. May be NULL. */
  c1d_status (*setup)(const c1d_shape *s, c1d_exec *ex);
  void (*teardown)(c1d_exec *ex);
  /* y = conv(x, w, b). b is NULL iff !s->bias. Must write every element of y. CPU implementations get
   * float32 host arrays in (N, C, L) order. A GPU implementation gets device arrays: float32 (N, C, L)
   * ones, unless its caps say otherwise: with C1D_CAP_DTYPES each tensor (x, w, b, ex->states, y) in its
   * own element type s->dt, packed (2 bytes per bf16 or fp16 element; the float pointers are then
   * untyped device addresses), and with C1D_CAP_CHANNEL_LAST and s->layout NLC, x as (N, L, C), the
   * states as (N, (K-1)*D, C) and y as (N, L, O) (w and b keep their shapes). */
  c1d_status (*run)(const c1d_shape *s, const float *x, const float *w, const float *b, float *y,
                    c1d_exec *ex);
  unsigned caps;           /* C1D_CAP_*: 0 for the plain problem only */
} c1d_impl;

/* "fp32", "tf32", ... */
const char *c1d_precision_name(c1d_precision p);

/* "main", "variant", "mutant". */
const char *c1d_tier_name(c1d_tier t);

/* NULL when impl's capabilities cover what problem s needs, else why not ("groups (G=64)", ...); then
 * impl->supported (if any). */
const char *c1d_impl_unsupported(const c1d_impl *impl, const c1d_shape *s);

/* "groups, states, silu, bf16/fp16" from caps (a static string per combination is not needed: into buf). */
void c1d_caps_format(unsigned caps, char *buf, int size);

#ifdef __cplusplus
}
#endif
#endif
