/* A user's tensors from .npy files: x (N,C,L), w (O,C,K), optional b (O), optional candidate output y
 * (N,O,L). The shape comes from the files' headers (and D from the caller, since no tensor carries it);
 * the headers are checked against each other before any data is read, so a mismatch or a too-large
 * shape costs nothing.
 *
 * dtypes: x, w and b may be float32 or float64; float64 is rounded to nearest float32 (what
 * torch's .float() and NumPy's astype do), and the conversion record says how many values changed so
 * the caller can say so. The oracle then sees the rounded values, like every implementation. The
 * candidate y must be float32: its float32 bits are what is being judged, and rounding a float64 file
 * would hide that output's real precision. Non-finite values in x, w, b are refused. */
#ifndef C1D_INPUT_FILES_H
#define C1D_INPUT_FILES_H

#include "harness/npy.h"
#include "reference/problem.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct c1d_input_paths {
  const char *x, *w, *b, *y; /* b and y may be NULL */
} c1d_input_paths;

typedef struct c1d_input_tensors {
  float *x, *w, *b, *y;                 /* owned; b, y NULL when not given */
  c1d_npy_header hx, hw, hb, hy;        /* their headers */
  c1d_npy_conversion cx, cw, cb;        /* float64 -> float32 rounding of x, w, b */
} c1d_input_tensors;

/* Reads the headers and derives *s (bias = b given, dilation D). C1D_ERR_IO/C1D_ERR_FORMAT for a bad
 * file, C1D_ERR_INVALID_SHAPE for tensors that do not fit together; the detail names the file and the
 * mismatch ("w.npy has C=128 but x.npy has C=256"). */
c1d_status c1d_input_files_shape(const c1d_input_paths *p, int64_t D, c1d_shape *s);

/* Reads the data for shape s (from c1d_input_files_shape) into *t. Fails as above, also when a file
 * changed since its header was read, and with C1D_ERR_NONFINITE naming the file and the first bad
 * element of x, w or b. On failure *t holds nothing. */
c1d_status c1d_input_files_load(const c1d_input_paths *p, const c1d_shape *s, c1d_input_tensors *t);

/* Frees what load allocated; NULL does nothing. */
void c1d_input_tensors_free(c1d_input_tensors *t);

#ifdef __cplusplus
}
#endif
#endif
