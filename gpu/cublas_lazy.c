/* The forwarders of gpu/cublas_lazy.h: the first call dlopens libcublasLt and looks up every function
 * once (pthread_once); each forwarder then calls the library's own. */
#define C1D_CUBLAS_LAZY_IMPL
#include "gpu/cublas_lazy.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#define C1D_STR_(x) #x
#define C1D_STR(x) C1D_STR_(x)
#define LIBRARY "libcublasLt.so." C1D_STR(CUBLAS_VER_MAJOR)

static struct {
#define FIELD(name) __typeof__(name) *name;
  C1D_CUBLASLT_FUNCTIONS(FIELD)
#undef FIELD
} lt;
static int loaded;
static char why[320]; /* why the library is not there, for cublasLtGetStatusString */
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void) {
  void *lib = dlopen(LIBRARY, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *e = dlerror();
    snprintf(why, sizeof why, "%s could not be loaded: %s", LIBRARY, e ? e : "unknown reason");
    return;
  }
#define LOOKUP(name)                                                                      \
  if (!(lt.name = (__typeof__(name) *)dlsym(lib, #name))) {                               \
    snprintf(why, sizeof why, "%s has no %s", LIBRARY, #name);                             \
    return;                                                                               \
  }
  C1D_CUBLASLT_FUNCTIONS(LOOKUP)
#undef LOOKUP
  loaded = 1;
}

static int ready(void) {
  pthread_once(&once, load);
  return loaded;
}

const char *c1d_lazy_cublasLtGetStatusString(cublasStatus_t status) {
  return ready() ? lt.cublasLtGetStatusString(status) : why;
}

/* Every other forwarder: the library's function, or CUBLAS_STATUS_NOT_INITIALIZED without the library. */
#define FORWARD(name, params, args) \
  cublasStatus_t c1d_lazy_##name params { return ready() ? lt.name args : CUBLAS_STATUS_NOT_INITIALIZED; }

FORWARD(cublasLtGetProperty, (libraryPropertyType type, int *value), (type, value))
FORWARD(cublasLtCreate, (cublasLtHandle_t * handle), (handle))
FORWARD(cublasLtDestroy, (cublasLtHandle_t handle), (handle))
FORWARD(cublasLtMatmulDescCreate, (cublasLtMatmulDesc_t * desc, cublasComputeType_t compute, cudaDataType_t scale),
        (desc, compute, scale))
FORWARD(cublasLtMatmulDescDestroy, (cublasLtMatmulDesc_t desc), (desc))
FORWARD(cublasLtMatrixLayoutCreate,
        (cublasLtMatrixLayout_t * layout, cudaDataType type, uint64_t rows, uint64_t cols, int64_t ld),
        (layout, type, rows, cols, ld))
FORWARD(cublasLtMatrixLayoutDestroy, (cublasLtMatrixLayout_t layout), (layout))
FORWARD(cublasLtMatrixLayoutSetAttribute,
        (cublasLtMatrixLayout_t layout, cublasLtMatrixLayoutAttribute_t attr, const void *buf, size_t bytes),
        (layout, attr, buf, bytes))
FORWARD(cublasLtMatmulPreferenceCreate, (cublasLtMatmulPreference_t * pref), (pref))
FORWARD(cublasLtMatmulPreferenceDestroy, (cublasLtMatmulPreference_t pref), (pref))
FORWARD(cublasLtMatmulPreferenceSetAttribute,
        (cublasLtMatmulPreference_t pref, cublasLtMatmulPreferenceAttributes_t attr, const void *buf, size_t bytes),
        (pref, attr, buf, bytes))
FORWARD(cublasLtMatmulAlgoGetHeuristic,
        (cublasLtHandle_t handle, cublasLtMatmulDesc_t op, cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
         cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t d, cublasLtMatmulPreference_t pref, int requested,
         cublasLtMatmulHeuristicResult_t results[], int *returned),
        (handle, op, a, b, c, d, pref, requested, results, returned))
FORWARD(cublasLtMatmulAlgoConfigGetAttribute,
        (const cublasLtMatmulAlgo_t *algo, cublasLtMatmulAlgoConfigAttributes_t attr, void *buf, size_t bytes,
         size_t *written),
        (algo, attr, buf, bytes, written))
FORWARD(cublasLtMatmul,
        (cublasLtHandle_t handle, cublasLtMatmulDesc_t desc, const void *alpha, const void *A,
         cublasLtMatrixLayout_t a, const void *B, cublasLtMatrixLayout_t b, const void *beta, const void *C,
         cublasLtMatrixLayout_t c, void *D, cublasLtMatrixLayout_t d, const cublasLtMatmulAlgo_t *algo,
         void *workspace, size_t workspace_bytes, cudaStream_t stream),
        (handle, desc, alpha, A, a, B, b, beta, C, c, D, d, algo, workspace, workspace_bytes, stream))
