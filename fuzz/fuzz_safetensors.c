/* Fuzz target: the safetensors reader (harness/safetensors.c) and the case reader on top of it
 * (harness/input_files.c: names, shapes, groups, states and layout checked against each other). Any
 * bytes as a file: every outcome must be a status with a one-line detail, and a file that reads must
 * hold every element it declares; the sanitizers catch the rest. The declarations (D, G, layout) come
 * from the file's last byte, so the corpus needs no second file. */
#include <stdlib.h>
#include <string.h>

#include "fuzz/fuzz_support.h"
#include "harness/input_files.h"
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
  if (size > 0) {
    const uint8_t k = data[size - 1];
    const c1d_input_problem pb = {.D = 1 + k % 4, .G = (k >> 2) % 4 == 3 ? 2 : 0,
                                  .act = (k >> 4) & 1 ? C1D_ACT_SILU : C1D_ACT_NONE,
                                  .layout = (k >> 5) & 1 ? C1D_LAYOUT_NLC : C1D_LAYOUT_NCL};
    c1d_shape s;
    c1d_input_tensors t;
    if (c1d_input_case_read(file.path, &pb, &s, &t) == C1D_OK) {
      if (c1d_y_count(&s) > 0) (void)t.y[c1d_y_count(&s) - 1];
      c1d_input_tensors_free(&t);
    } else if (strchr(c1d_error_detail(), '\n')) {
      abort();
    }
  }
  c1d_fuzz_file_close(&file);
  return 0;
}
