/* Fuzz inputs as files (fuzz_support.h). */
#define _GNU_SOURCE /* memfd_create */
#include "fuzz/fuzz_support.h"

#include <sanitizer/allocator_interface.h>
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

c1d_fuzz_file c1d_fuzz_file_with_hole(const uint8_t *data, size_t size, size_t hole) {
  c1d_fuzz_file f = c1d_fuzz_file_of(data, size);
  if (f.fd >= 0 && ftruncate(f.fd, (off_t)(size + hole)) != 0) c1d_fuzz_file_close(&f);
  return f;
}

// --- counting allocations ------------------------------------------------------------------------

static int counting;
static size_t counted;

static void on_malloc(const volatile void *ptr, size_t size) {
  (void)ptr;
  if (counting) counted += size;
}

static void on_free(const volatile void *ptr) { (void)ptr; }

void c1d_fuzz_count_allocations(int on) {
  static int installed;
  if (!installed) installed = __sanitizer_install_malloc_and_free_hooks(on_malloc, on_free) != 0;
  counted = 0;
  counting = on;
}

size_t c1d_fuzz_allocated(void) { return counted; }

void c1d_fuzz_file_close(c1d_fuzz_file *f) {
  if (f->fd >= 0) close(f->fd);
  f->fd = -1;
}
