/* Status names and the per-thread error detail. */
#include "reference/status.h"

#include <stdarg.h>
#include <stdio.h>

static _Thread_local char detail[512];

const char *c1d_strerror(c1d_status status) {
  switch (status) {
    case C1D_OK: return "ok";
    case C1D_ERR_INVALID_SHAPE: return "invalid shape";
    case C1D_ERR_OVERFLOW: return "size overflow";
    case C1D_ERR_NO_MEMORY: return "out of host memory";
    case C1D_ERR_NO_DEVICE: return "no CUDA device";
    case C1D_ERR_DEVICE_MEMORY: return "out of device memory";
    case C1D_ERR_CUDA: return "CUDA error";
    case C1D_ERR_CUDNN: return "cuDNN error";
    case C1D_ERR_CUBLAS: return "cuBLAS error";
    case C1D_ERR_UNSUPPORTED: return "unsupported shape";
    case C1D_ERR_IO: return "I/O error";
    case C1D_ERR_FORMAT: return "malformed file";
    case C1D_ERR_NONFINITE: return "non-finite value";
    case C1D_ERR_USAGE: return "usage error";
    case C1D_ERR_INTERNAL: return "internal error";
  }
  return "unknown error";
}

c1d_status c1d_fail(c1d_status status, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(detail, sizeof detail, fmt, ap);
  va_end(ap);
  return status;
}

const char *c1d_error_detail(void) { return detail; }

void c1d_error_clear(void) { detail[0] = '\0'; }
