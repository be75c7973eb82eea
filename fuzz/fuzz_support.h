/* Shared by the fuzz targets: bytes from libFuzzer as a file that the readers open by path (a memfd,
 * named /proc/self/fd/N, so that no fuzz iteration touches the disk). */
#ifndef C1D_FUZZ_SUPPORT_H
#define C1D_FUZZ_SUPPORT_H

#include <stddef.h>
#include <stdint.h>

typedef struct c1d_fuzz_file {
  int fd;
  char path[64];
} c1d_fuzz_file;

/* A file holding data[0..size); fd < 0 when it cannot be made (the iteration is then skipped). */
c1d_fuzz_file c1d_fuzz_file_of(const uint8_t *data, size_t size);
void c1d_fuzz_file_close(c1d_fuzz_file *f);

#endif
