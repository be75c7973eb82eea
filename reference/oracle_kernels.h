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

#include <math.h>
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

/* One window of NR positions wholly inside its row into an x micro-panel's step: xp[j] = src[j] in
 * double, ax[j] = |src[j]| in float (xp and ax 64-byte aligned, src any float alignment). Windows that
 * cross t = 0 or L go through c1d_oracle_pack_edge; reference/oracle.c walks the panels. */
typedef void (*c1d_oracle_window_fn)(const float *src, double *xp, float *ax);

/* Stores one whole 64-byte line of the output, 8 doubles, from src to dst (64-byte aligned) by
 * streaming stores: the output is written once and not read back, so it need not pass through the
 * caches; the caller fences before its threads join. reference/oracle.c walks the rows. */
typedef void (*c1d_oracle_stream_fn)(double *dst, const double *src);

/* One window of NR positions from src that crosses t = 0 or L, lane by lane: x and |x| where the source
 * lies in the row [0, L), zero elsewhere (the causal padding, or columns past the tensor). */
static inline void c1d_oracle_pack_edge(const float *row, int64_t src, int64_t L, double *xp, float *ax) {
  for (int j = 0; j < C1D_ORACLE_NR; j++) {
    const float v = (src + j >= 0 && src + j < L) ? row[src + j] : 0.0f;
    xp[j] = (double)v;
    ax[j] = fabsf(v);
  }
}

typedef struct c1d_oracle_kernels {
  const char *name; /* "portable", "avx2" or "avx512": what C1D_ORACLE_KERNEL names */
  c1d_oracle_microkernel_fn microkernel;
  c1d_oracle_window_fn pack_window;
  c1d_oracle_stream_fn stream_line; /* NULL: plain copies */
} c1d_oracle_kernels;

extern const c1d_oracle_kernels c1d_oracle_portable_kernels;
#if C1D_ORACLE_X86
extern const c1d_oracle_kernels c1d_oracle_avx2_kernels;   /* AVX2 + FMA */
extern const c1d_oracle_kernels c1d_oracle_avx512_kernels; /* AVX-512F */
#endif

#endif
