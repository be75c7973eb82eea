/* Fuzz target: the safetensors header path under a size budget (harness/safetensors.c). The input is a
 * file's first bytes; the file then goes on as a hole of (last byte % 8) * 4 MiB of zeros, so a few bytes
 * can stand for a large file, as a `truncate -s 3G` file of zeros does. Reading it may take what its
 * header declares and no more: BYTES_PER_HEADER_BYTE per byte of the header (its text, cJSON's nodes, the
 * tensor table), the float32 buffers of the tensors it accepts, and SLACK (the bounded read buffer, the
 * memory check's /proc reads). Never the file's size: a reader that takes the whole file first breaks it
 * on the first input with a hole. Messages stay one line, as in fuzz_safetensors. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/fuzz_support.h"
#include "harness/safetensors.h"

#define BYTES_PER_HEADER_BYTE 64.0 /* cJSON takes 64 bytes a value; the smallest value is 2 bytes ("0,") */
#define SLACK (2.0 * 1048576.0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0) return 0;
  const size_t hole = (size_t)(data[size - 1] % 8) << 22;
  c1d_fuzz_file file = c1d_fuzz_file_with_hole(data, size, hole);
  if (file.fd < 0) return 0;
  /* The header's declared length (the file's first 8 bytes, the hole's zeros included), as far as the
   * file holds it. */
  uint64_t declared = 0;
  for (int i = 7; i >= 0; i--) declared = declared << 8 | ((size_t)i < size ? data[i] : 0);
  const double in_file = size + hole >= 8 ? (double)(size + hole - 8) : 0.0;
  const double header = (double)declared < in_file ? (double)declared : in_file;
  c1d_st_file st;
  c1d_fuzz_count_allocations(1);
  const c1d_status rc = c1d_st_read(file.path, &st);
  const size_t used = c1d_fuzz_allocated();
  c1d_fuzz_count_allocations(0);
  double tensors = 0.0; /* zero unless read: a failed read leaves no tensors */
  for (int i = 0; i < st.n; i++) tensors += 4.0 * (double)(st.tensors[i].count + 1);
  const double budget = BYTES_PER_HEADER_BYTE * header + tensors + SLACK;
  if ((double)used > budget) {
    fprintf(stderr, "a %zu-byte file with a %.0f-byte header took %zu bytes (budget %.0f): %s\n", size + hole,
            header, used, budget, rc == C1D_OK ? "read" : c1d_error_detail());
    abort();
  }
  if (rc != C1D_OK && strchr(c1d_error_detail(), '\n')) abort(); /* a message must stay one line */
  c1d_st_free(&st);
  c1d_fuzz_file_close(&file);
  return 0;
}
