/* Host or device memory (host_memory.h). The question is cudaPointerGetAttributes': since CUDA 11 it
 * answers for any pointer (unregistered host memory is cudaMemoryTypeUnregistered); where it fails (no
 * driver, no device) no device memory can exist in this process, so the pointer is host memory, and the
 * runtime's error is cleared so that nothing after sees it. */
#include "lib/host_memory.h"

#include <stdlib.h>

#ifdef C1D_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

c1d_status c1d_lib_host_view(const void *p, size_t bytes, const char *role, const void **host, void **owned) {
  *host = p;
  *owned = NULL;
#ifdef C1D_HAVE_CUDA
  struct cudaPointerAttributes a;
  if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
    (void)cudaGetLastError();
    return C1D_OK;
  }
  if (a.type != cudaMemoryTypeDevice && a.type != cudaMemoryTypeManaged) return C1D_OK;
  void *copy = malloc(bytes ? bytes : 1);
  if (!copy) return c1d_fail(C1D_ERR_NO_MEMORY, "out of host memory copying %s from the device (%zu bytes)", role, bytes);
  const cudaError_t e = cudaMemcpy(copy, p, bytes, cudaMemcpyDeviceToHost);
  if (e != cudaSuccess) {
    free(copy);
    (void)cudaGetLastError();
    return c1d_fail(C1D_ERR_CUDA, "copying %s from device %d to the host: %s (%s)", role, a.device,
                    cudaGetErrorString(e), cudaGetErrorName(e));
  }
  *host = copy;
  *owned = copy;
#else
  (void)bytes;
  (void)role;
#endif
  return C1D_OK;
}
