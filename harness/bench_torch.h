/* PyTorch's rows beside convlab bench's tables (dense and grouped): the bench's inputs written into a
 * fresh temporary directory, scripts/crosscheck_torch.py --rows-only run on them by the python3 on PATH
 * (/usr/bin/env python3: the device machine's, with CUDA PyTorch), its JSON read back, the directory
 * removed. Run after convlab's rows and the copy were timed, never inside their timing. */
#ifndef C1D_BENCH_TORCH_H
#define C1D_BENCH_TORCH_H

#include "reference/problem.h"
#include "reference/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define C1D_TORCH_MAX_ROWS 4

/* Name prefixes of the two rows (the suffix is the element type: fp32, bf16, f16). */
#define C1D_TORCH_CONV1D "torch_conv1d_"
#define C1D_TORCH_NHWC "torch_cudnn_nhwc_"

typedef struct c1d_torch_row {
  char name[48];   /* torch_conv1d_bf16, torch_cudnn_nhwc_bf16 */
  char label[160]; /* what ran, in the script's words: "F.conv1d (its own kernel) + F.silu" */
  double ms, rel_l2, max_abs, fail_fraction; /* NAN when the script gave none */
} c1d_torch_row;

typedef struct c1d_torch_rows {
  int measured;       /* 1: the rows below; 0: reason says why not */
  char reason[256];   /* one line */
  char version[48], device[128];
  double cudnn;       /* torch.backends.cudnn.version(), NAN when none */
  int n;
  c1d_torch_row rows[C1D_TORCH_MAX_ROWS];
  char left_out[256]; /* "torch_cudnn_nhwc_bf16: cuDNN has no SiLU ..." ("; " between), or "" */
} c1d_torch_rows;

/* Writes x.npy, w.npy (b.npy, s.npy when given) into dir (made when missing), as --save-inputs does.
 * C1D_ERR_IO or C1D_ERR_NO_MEMORY with the detail. */
c1d_status c1d_bench_write_inputs(const char *dir, const c1d_shape *s, const float *x, const float *w,
                                  const float *b, const float *st);

/* Measures PyTorch's rows of problem s on these inputs, each timed over `repeats` runs. Never fails:
 * *out says measured, or not with the reason (python3, PyTorch or CUDA missing: the script's one line;
 * no room for the inputs). progress: one line on stderr before the wait. */
void c1d_bench_torch(const c1d_shape *s, const float *x, const float *w, const float *b, const float *st,
                     int repeats, int progress, c1d_torch_rows *out);

/* Reads the script's JSON text into *out (measured set). C1D_ERR_FORMAT with the detail when it is not
 * that JSON. */
c1d_status c1d_bench_torch_parse(const char *text, c1d_torch_rows *out);

/* The row whose name starts with prefix (C1D_TORCH_CONV1D, C1D_TORCH_NHWC), or NULL (none, or not
 * measured). */
const c1d_torch_row *c1d_torch_find(const c1d_torch_rows *t, const char *prefix);

#ifdef __cplusplus
}
#endif
#endif
