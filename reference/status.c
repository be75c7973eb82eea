/* Status names and the per-thread error detail. */
#include "reference/status.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* A byte that starts a character (not a UTF-8 continuation byte), so an elision never cuts one. */
static int starts_char(char c) { return ((unsigned char)c & 0xC0) != 0x80; }

/* A message longer than the buffer keeps its start and its end (the reason comes last, after a path
 * that may be thousands of bytes long): the middle goes, and the elision says how much. */
static void keep_both_ends(const char *full, size_t n) {
  char mark[48];
  size_t head = 160, tail = sizeof detail - 1 - head - sizeof mark;
  while (head > 0 && !starts_char(full[head])) head--;
  while (tail > 0 && !starts_char(full[n - tail])) tail--;
  const int m = snprintf(mark, sizeof mark, " [... %zu bytes left out ...] ", n - head - tail);
  memcpy(detail, full, head);
  memcpy(detail + head, mark, (size_t)m);
  memcpy(detail + head + (size_t)m, full + n - tail, tail + 1);
}

c1d_status c1d_fail(c1d_status status, const char *fmt, ...) {
  /* Formatted aside first: an argument may be the detail itself (a caller adding context to it). */
  char line[sizeof detail];
  va_list ap, again;
  va_start(ap, fmt);
  va_copy(again, ap);
  const int n = vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  char *full = n >= (int)sizeof line ? malloc((size_t)n + 1) : NULL;
  if (full) {
    vsnprintf(full, (size_t)n + 1, fmt, again);
    const size_t len = strlen(full);
    if (len < sizeof detail)
      memcpy(detail, full, len + 1);
    else
      keep_both_ends(full, len);
    free(full);
  } else {
    memcpy(detail, line, sizeof line);
  }
  va_end(again);
  return status;
}

const char *c1d_error_detail(void) { return detail; }

void c1d_error_clear(void) { detail[0] = '\0'; }
