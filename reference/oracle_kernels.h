/* The float64 oracle's inner kernels (internal to reference/): one set per instruction set, each in a
 * file of its own (oracle_portable.c, oracle_avx2.c, oracle_avx512.c), all bound by the contract at
 * the top of reference/oracle.c, so that every set gives the same bits:
 *  - y: per element, acc = acc + w*x over the chunk's steps in order (each product exact in double,
 *    so an fma and a multiply-then-add round alike);
 *  - m: per element, a float32 partial p = 0, p = fmaf(|w|, |x|, p) over the chunk's steps in order,
 *    then m = m + (double)p.
 * Which rows, columns or sub-blocks a kernel visits first does not matter: every element's own chain
 * is the one above. */
#ifndef C1D_ORACLE_KERNELS_H
#define C1D_ORACLE_KERNELS_H

#include <stdint.h>

#include "reference/problem.h"

#if defined(__x86_64__) || defined(__i386__)
#define C1D_ORACLE_X86 1
#else
#define C1D_ORACLE_X86 0
#endif

enum {
  C1D_ORACLE_MR = 8,  /* output channels per micro-tile */
  C1D_ORACLE_NR = 16, /* positions per micro-tile */
  /* one micro-tile of double sums: MR x NR y, then MR x NR m */
  C1D_ORACLE_ACC_BLOCK = 2 * C1D_ORACLE_MR * C1D_ORACLE_NR
};

/* One micro-tile of MR rows x NR positions over one whole reduction chunk of `steps` channel-taps:
 * x micro-panel xp ([step][x x NR]) and ax ([step][|x| x NR]), w micro-panel wp ([step][w x MR]) and
 * aw ([step][|w| x MR]), all 64-byte aligned. Starting from the block `in` (MR x NR y sums, then
 * MR x NR m sums), adds the steps to y, sums |w|*|x| into float partials from 0 and adds those to m,
 * and stores the block `out` (which may be `in`). */
typedef void (*c1d_oracle_microkernel_fn)(const double *xp, const float *ax, const double *wp,
                                          const float *aw, int64_t steps, const double *in, double *out);

/* Positions t0..t0+tcols (a multiple of NR) of channels c0..c0+cc of batch n into x micro-panels:
 * xp[tm][step = c*K + k][j] = x[n, c0+c, t0 + tm*NR + j + k*D - pad] and ax[..][j] = |that| in float,
 * 0 where the source time is before 0 (causal padding) or at/after L. kc = cc*K. */
typedef void (*c1d_oracle_pack_fn)(const c1d_shape *s, const float *x, int64_t n, int64_t c0, int64_t cc,
                                   int64_t t0, int64_t tcols, int64_t kc, double *xp, float *ax);

/* Copies n doubles from an L2-resident tile row to the output tensor (streaming stores where they pay;
 * the caller fences before its threads join). */
typedef void (*c1d_oracle_copy_fn)(double *dst, const double *src, int64_t n);

typedef struct c1d_oracle_kernels {
  const char *name; /* "portable", "avx2" or "avx512": what C1D_ORACLE_KERNEL names */
  c1d_oracle_microkernel_fn microkernel;
  c1d_oracle_pack_fn pack_x;
  c1d_oracle_copy_fn copy_out;
} c1d_oracle_kernels;

extern const c1d_oracle_kernels c1d_oracle_portable_kernels;
#if C1D_ORACLE_X86
extern const c1d_oracle_kernels c1d_oracle_avx2_kernels;   /* AVX2 + FMA */
extern const c1d_oracle_kernels c1d_oracle_avx512_kernels; /* AVX-512F */
#endif

#endif
