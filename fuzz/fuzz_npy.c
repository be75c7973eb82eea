/* Fuzz target: the .npy reader (harness/npy.c). Any bytes as a file: the header is probed, then read
 * as float32 (float64 allowed) and as float64. Every outcome must be a status with a one-line detail;
 * the sanitizers catch the rest. */
#include <stdlib.h>
#include <string.h>

#include "fuzz/fuzz_support.h"
#include "harness/npy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  c1d_fuzz_file file = c1d_fuzz_file_of(data, size);
  if (file.fd < 0) return 0;
  c1d_npy_header h;
  if (c1d_npy_probe(file.path, &h) == C1D_OK) {
    float *f = NULL;
    double *d = NULL;
    c1d_npy_conversion conv;
    if (c1d_npy_read_f32(file.path, 1, &f, &h, &conv) == C1D_OK && h.count > 0) (void)f[h.count - 1];
    if (c1d_npy_read_f64(file.path, &d, &h) == C1D_OK && h.count > 0) (void)d[h.count - 1];
    free(f);
    free(d);
  } else if (strchr(c1d_error_detail(), '\n')) {
    abort(); /* a message must stay one line */
  }
  c1d_fuzz_file_close(&file);
  return 0;
}
