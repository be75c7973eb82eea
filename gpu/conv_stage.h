/* What the fast kernels (fp32_fast, kahan_fast, tf32_mma, tf32x3_mma) share: asynchronous copies into
 * shared memory (cp.async, 16 bytes where source and destination are aligned, 4 bytes otherwise, zero
 * fill where the source lies outside the tensor) and the staging of one slab of input windows.
 *
 * The x window of a block: for output times [t0, t0+BN) and input channels [c0, c0+CS), smem row c holds
 * x[n, c0+c, t0-PADA+j] for j in [0, BN+PADA), where PADA is the causal pad (K-1)*D rounded up to a
 * multiple of 4, so that a row starts on a 16-byte boundary of x whenever L is a multiple of 4. Times
 * before 0 and channels past C are staged as +0 (the zero padding the kernels then multiply). Rows are
 * XW floats apart, XW = 8 (mod 32): the tensor-core kernels read one float per lane from rows that
 * differ by a channel, and this stride puts those reads on distinct banks. CUDA C++ only. */
#ifndef C1D_GPU_CONV_STAGE_H
#define C1D_GPU_CONV_STAGE_H

#include <cuda_runtime.h>
#include <stdint.h>

#include "reference/problem.h"

/* Opt-in shared memory per block on sm_90 (227 KiB). */
#define C1D_SMEM_OPTIN_MAX (227 * 1024)

// --- cp.async ------------------------------------------------------------------------------------

/* 16 bytes from gmem to smem, or 16 zero bytes when !valid (gmem must still be a mapped address). */
static __device__ __forceinline__ void c1d_cp_async16(float *smem, const float *gmem, bool valid) {
  const unsigned dst = (unsigned)__cvta_generic_to_shared(smem);
  const int bytes = valid ? 16 : 0;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(gmem), "r"(bytes)
               : "memory");
}

/* 4 bytes, or a zero float when !valid. */
static __device__ __forceinline__ void c1d_cp_async4(float *smem, const float *gmem, bool valid) {
  const unsigned dst = (unsigned)__cvta_generic_to_shared(smem);
  const int bytes = valid ? 4 : 0;
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(gmem), "r"(bytes)
               : "memory");
}

static __device__ __forceinline__ void c1d_cp_async_commit(void) {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}

/* Waits until at most N of this thread's committed groups are still in flight. */
template <int N>
static __device__ __forceinline__ void c1d_cp_async_wait(void) {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

// --- window geometry -----------------------------------------------------------------------------

/* The causal pad rounded up to a multiple of 4. */
static inline __host__ __device__ int64_t c1d_pad_aligned(const c1d_shape *s) {
  return (c1d_pad(s) + 3) & ~INT64_C(3);
}

/* Row stride of a staged window of bn outputs: at least bn + PADA, a multiple of 4, = 8 (mod 32). */
static inline __host__ __device__ int64_t c1d_window_stride(const c1d_shape *s, int64_t bn) {
  const int64_t need = bn + c1d_pad_aligned(s);
  return need + ((8 - need % 32) + 32) % 32;
}

/* 1 when every staged x row is 16-byte aligned in global memory. */
static inline int c1d_x_rows_aligned(const c1d_shape *s, const float *x) {
  return s->L % 4 == 0 && ((uintptr_t)x & 15) == 0;
}

// --- staging ----------------------------------------------------------------------------------------

/* Issues (does not wait for) the copies of channels [c0, c0+cs) of batch row n, output times
 * [t0, t0+bn), into xs (cs rows of xw floats). vec: rows 16-byte aligned (c1d_x_rows_aligned) and t0 a
 * multiple of 4. Threads tid = 0..nthreads-1 (a block, or one warpgroup of it) call it with the same
 * arguments and share the copies. */
static __device__ __forceinline__ void c1d_stage_x_window_by(float *xs, const float *__restrict__ x,
                                                             const c1d_shape &s, int64_t n, int64_t c0, int cs,
                                                             int64_t t0, int bn, int xw, int pada, bool vec,
                                                             int tid, int nthreads) {
  const int win = bn + pada;
  if (vec) {
    const int q4 = win >> 2; /* win is a multiple of 4 */
    for (int i = tid; i < cs * q4; i += nthreads) {
      const int c = i / q4, q = i - c * q4;
      const int64_t t = t0 - pada + 4 * q; /* a multiple of 4: the chunk lies wholly in or out */
      const bool ok = c0 + c < s.C && t >= 0 && t < s.L;
      const float *src = ok ? x + c1d_x_index(&s, n, c0 + c, t) : x;
      c1d_cp_async16(xs + c * xw + 4 * q, src, ok);
    }
  } else {
    for (int i = tid; i < cs * win; i += nthreads) {
      const int c = i / win, j = i - c * win;
      const int64_t t = t0 - pada + j;
      const bool ok = c0 + c < s.C && t >= 0 && t < s.L;
      const float *src = ok ? x + c1d_x_index(&s, n, c0 + c, t) : x;
      c1d_cp_async4(xs + c * xw + j, src, ok);
    }
  }
}

/* The same, shared by every thread of the block. */
static __device__ __forceinline__ void c1d_stage_x_window(float *xs, const float *__restrict__ x,
                                                          const c1d_shape &s, int64_t n, int64_t c0,
                                                          int cs, int64_t t0, int bn, int xw, int pada,
                                                          bool vec) {
  c1d_stage_x_window_by(xs, x, s, n, c0, cs, t0, bn, xw, pada, vec, threadIdx.x, blockDim.x);
}

#endif
