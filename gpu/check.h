/* Checking macros: every CUDA, cuDNN and cuBLAS call goes through one of these, which records the call's
 * text, file and line as the error detail and jumps to the function's cleanup label. Usage:
 *     c1d_status st = C1D_OK;
 *     C1D_CUDA(cudaMalloc(&p, n));          // on failure: st = C1D_ERR_CUDA, goto done
 *     C1D_LAUNCHED("naive_kernel");         // after every launch: the last error
 *     C1D_CUDNN(cudnnCreate(&h));           // st = C1D_ERR_CUDNN (include <cudnn.h> first)
 *     C1D_CUBLAS(cublasLtCreate(&h));       // st = C1D_ERR_CUBLAS (include "gpu/cublas_lazy.h" first)
 *   done: ...; return st;                                                                        */
#ifndef C1D_CHECK_H
#define C1D_CHECK_H

#include <cuda_runtime_api.h>

#include "reference/status.h"

#define C1D_CUDA(call)                                                                          \
  do {                                                                                          \
    cudaError_t c1d_e_ = (call);                                                                \
    if (c1d_e_ != cudaSuccess) {                                                                \
      st = c1d_fail(c1d_e_ == cudaErrorMemoryAllocation ? C1D_ERR_DEVICE_MEMORY : C1D_ERR_CUDA, \
                    "%s failed: %s (%s:%d)", #call, cudaGetErrorString(c1d_e_), __FILE__,       \
                    __LINE__);                                                                  \
      goto done;                                                                                \
    }                                                                                           \
  } while (0)

/* After a kernel launch: launch-configuration errors and asynchronous faults reported so far. */
#define C1D_LAUNCHED(kernel_name)                                                                  \
  do {                                                                                             \
    cudaError_t c1d_e_ = cudaGetLastError();                                                       \
    if (c1d_e_ != cudaSuccess) {                                                                   \
      st = c1d_fail(C1D_ERR_CUDA, "launch of %s failed: %s (%s:%d)", kernel_name,                 \
                    cudaGetErrorString(c1d_e_), __FILE__, __LINE__);                               \
      goto done;                                                                                   \
    }                                                                                              \
  } while (0)

/* A cuDNN call; the detail carries cudnnGetErrorString's text. Expands only where <cudnn.h> is included. */
#define C1D_CUDNN(call)                                                                            \
  do {                                                                                             \
    cudnnStatus_t c1d_s_ = (call);                                                                 \
    if (c1d_s_ != CUDNN_STATUS_SUCCESS) {                                                          \
      st = c1d_fail(C1D_ERR_CUDNN, "%s failed: %s (%s:%d)", #call, cudnnGetErrorString(c1d_s_),   \
                    __FILE__, __LINE__);                                                           \
      goto done;                                                                                   \
    }                                                                                              \
  } while (0)

/* A cuBLASLt call; the detail carries cublasLtGetStatusString's text. Needs "gpu/cublas_lazy.h". */
#define C1D_CUBLAS(call)                                                                           \
  do {                                                                                             \
    cublasStatus_t c1d_s_ = (call);                                                                \
    if (c1d_s_ != CUBLAS_STATUS_SUCCESS) {                                                         \
      st = c1d_fail(C1D_ERR_CUBLAS, "%s failed: %s (%s:%d)", #call, cublasLtGetStatusString(c1d_s_), \
                    __FILE__, __LINE__);                                                           \
      goto done;                                                                                   \
    }                                                                                              \
  } while (0)

#endif
