/* Fuzz inputs as files (fuzz_support.h). */
#define _GNU_SOURCE /* memfd_create */
#include "fuzz/fuzz_support.h"

#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

c1d_fuzz_file c1d_fuzz_file_of(const uint8_t *data, size_t size) {
  c1d_fuzz_file f = {memfd_create("c1d_fuzz", MFD_CLOEXEC), ""};
  if (f.fd < 0) return f;
  if (size > 0 && write(f.fd, data, size) != (ssize_t)size) {
    close(f.fd);
    f.fd = -1;
    return f;
  }
  snprintf(f.path, sizeof f.path, "/proc/self/fd/%d", f.fd);
  return f;
}

void c1d_fuzz_file_close(c1d_fuzz_file *f) {
  if (f->fd >= 0) close(f->fd);
  f->fd = -1;
}
