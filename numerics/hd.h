/* C1D_HD marks a helper that both gcc (host) and nvcc (host and device) compile, so that a GPU kernel
 * and its CPU twin call the very same arithmetic. */
#ifndef C1D_HD_H
#define C1D_HD_H
#if defined(__CUDACC__)
#define C1D_HD static __host__ __device__ __forceinline__
#else
#define C1D_HD static inline
#endif
#endif
