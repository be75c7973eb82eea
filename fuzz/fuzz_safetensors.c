/* Fuzz target: the safetensors reader (harness/safetensors.c). Any bytes as a file: every outcome must be
 * a status with a one-line detail, and a file that reads must hold every element it declares; the
 * sanitizers catch the rest. */
#include <stdlib.h>
#include <string.h>

#include "fuzz/fuzz_support.h"
#include "harness/safetensors.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  c1d_fuzz_file file = c1d_fuzz_file_of(data, size);
  if (file.fd < 0) return 0;
  c1d_st_file st;
  if (c1d_st_read(file.path, &st) == C1D_OK) {
    for (int i = 0; i < st.n; i++)
      if (st.tensors[i].count > 0) (void)st.tensors[i].data[st.tensors[i].count - 1];
    c1d_st_free(&st);
  } else if (strchr(c1d_error_detail(), '\n')) {
    abort(); /* a message must stay one line */
  }
  c1d_fuzz_file_close(&file);
  return 0;
}
