/* Where a caller's tensor lives: host memory is read in place; CUDA device (or managed) memory, in a
 * build with CUDA, is copied to the host first. Without CUDA every pointer is host memory: there is no
 * way to tell a device pointer from a host one without the CUDA runtime. */
#ifndef C1D_LIB_HOST_MEMORY_H
#define C1D_LIB_HOST_MEMORY_H

#include <stddef.h>

#include "reference/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* *host: p itself (host memory), or a copy of its `bytes` bytes from the device, owned through *owned
 * (free it; NULL when nothing was copied). C1D_ERR_NO_MEMORY, or C1D_ERR_CUDA naming the tensor (role)
 * and the CUDA error when the copy fails. */
c1d_status c1d_lib_host_view(const void *p, size_t bytes, const char *role, const void **host, void **owned);

#ifdef __cplusplus
}
#endif
#endif
