/* cuBLASLt, loaded on first use. Linking libcublasLt costs every process about 90 ms at start (its
 * hundreds of thousands of relocations), measured on the 2-core machines, whether or not a GPU is
 * there: every CLI call and every Criterion test process paid it. So the cublas_* rows and the version
 * report reach cuBLASLt through these forwarders, which dlopen libcublasLt.so.<major> (the major version
 * of the headers built against) the first time one is called. Include this instead of <cublasLt.h>: it
 * redirects the calls below to the forwarders. If the library cannot be loaded every forwarder returns
 * CUBLAS_STATUS_NOT_INITIALIZED and cublasLtGetStatusString says why (dlerror's text). */
#ifndef C1D_CUBLAS_LAZY_H
#define C1D_CUBLAS_LAZY_H

#include <cublasLt.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The cuBLASLt functions convlab calls; one forwarder each, with the library's own signature. */
#define C1D_CUBLASLT_FUNCTIONS(X)                                                                      \
  X(cublasLtGetStatusString)                                                                         \
  X(cublasLtGetProperty)                                                                             \
  X(cublasLtCreate)                                                                                  \
  X(cublasLtDestroy)                                                                                 \
  X(cublasLtMatmulDescCreate)                                                                        \
  X(cublasLtMatmulDescDestroy)                                                                       \
  X(cublasLtMatrixLayoutCreate)                                                                      \
  X(cublasLtMatrixLayoutDestroy)                                                                     \
  X(cublasLtMatrixLayoutSetAttribute)                                                                \
  X(cublasLtMatmulPreferenceCreate)                                                                  \
  X(cublasLtMatmulPreferenceDestroy)                                                                 \
  X(cublasLtMatmulPreferenceSetAttribute)                                                            \
  X(cublasLtMatmulAlgoGetHeuristic)                                                                  \
  X(cublasLtMatmulAlgoConfigGetAttribute)                                                            \
  X(cublasLtMatmul)

#define C1D_DECLARE_LAZY(name) extern __typeof__(name) c1d_lazy_##name;
C1D_CUBLASLT_FUNCTIONS(C1D_DECLARE_LAZY)
#undef C1D_DECLARE_LAZY

#ifndef C1D_CUBLAS_LAZY_IMPL /* the forwarders' own file sees the library's names */
#define cublasLtGetStatusString c1d_lazy_cublasLtGetStatusString
#define cublasLtGetProperty c1d_lazy_cublasLtGetProperty
#define cublasLtCreate c1d_lazy_cublasLtCreate
#define cublasLtDestroy c1d_lazy_cublasLtDestroy
#define cublasLtMatmulDescCreate c1d_lazy_cublasLtMatmulDescCreate
#define cublasLtMatmulDescDestroy c1d_lazy_cublasLtMatmulDescDestroy
#define cublasLtMatrixLayoutCreate c1d_lazy_cublasLtMatrixLayoutCreate
#define cublasLtMatrixLayoutDestroy c1d_lazy_cublasLtMatrixLayoutDestroy
#define cublasLtMatrixLayoutSetAttribute c1d_lazy_cublasLtMatrixLayoutSetAttribute
#define cublasLtMatmulPreferenceCreate c1d_lazy_cublasLtMatmulPreferenceCreate
#define cublasLtMatmulPreferenceDestroy c1d_lazy_cublasLtMatmulPreferenceDestroy
#define cublasLtMatmulPreferenceSetAttribute c1d_lazy_cublasLtMatmulPreferenceSetAttribute
#define cublasLtMatmulAlgoGetHeuristic c1d_lazy_cublasLtMatmulAlgoGetHeuristic
#define cublasLtMatmulAlgoConfigGetAttribute c1d_lazy_cublasLtMatmulAlgoConfigGetAttribute
#define cublasLtMatmul c1d_lazy_cublasLtMatmul
#endif

#ifdef __cplusplus
}
#endif
#endif
