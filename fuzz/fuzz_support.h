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

/* The same followed by `hole` zero bytes that take no memory (a sparse end), so a few bytes of input
 * can stand for a file of many megabytes. */
c1d_fuzz_file c1d_fuzz_file_with_hole(const uint8_t *data, size_t size, size_t hole);

void c1d_fuzz_file_close(c1d_fuzz_file *f);

/* Counting the bytes that malloc, calloc, realloc and strdup are asked for, through the sanitizer's
 * malloc hooks (the fuzz build always has them): c1d_fuzz_count_allocations(1) starts a count at 0,
 * (0) stops it; c1d_fuzz_allocated() is the count (every request, freed or not). */
void c1d_fuzz_count_allocations(int on);
size_t c1d_fuzz_allocated(void);

#endif
