#define _GNU_SOURCE /* memmem */
/* Fuzz target: the input-file loader (harness/input_files.c). The bytes are up to four .npy files x,
 * w, b, y separated by SEPARATOR; the first byte picks the dilation (1..8). Headers are checked
 * against each other, then the data is loaded; every failure must be one line. */
#include <stdlib.h>
#include <string.h>

#include "fuzz/fuzz_support.h"
#include "harness/input_files.h"

#define SEPARATOR "\nNEXTFILE\n"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  const int64_t D = 1 + data[0] % 8;
  c1d_fuzz_file files[4];
  int n = 0;
  const uint8_t *at = data + 1, *end = data + size;
  while (n < 4) {
    const uint8_t *sep = memmem(at, (size_t)(end - at), SEPARATOR, strlen(SEPARATOR));
    const uint8_t *stop = sep ? sep : end;
    files[n] = c1d_fuzz_file_of(at, (size_t)(stop - at));
    if (files[n].fd < 0) break;
    n++;
    if (!sep) break;
    at = sep + strlen(SEPARATOR);
  }
  if (n >= 2) {
    c1d_input_paths p = {files[0].path, files[1].path, n > 2 ? files[2].path : NULL,
                         n > 3 ? files[3].path : NULL};
    c1d_shape s;
    c1d_input_tensors t;
    c1d_status st = c1d_input_files_shape(&p, D, &s);
    if (st == C1D_OK) st = c1d_input_files_load(&p, &s, &t);
    if (st == C1D_OK) c1d_input_tensors_free(&t);
    else if (strchr(c1d_error_detail(), '\n')) abort(); /* a message must stay one line */
  }
  for (int i = 0; i < n; i++) c1d_fuzz_file_close(&files[i]);
  return 0;
}
