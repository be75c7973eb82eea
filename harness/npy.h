/* NumPy .npy files: read versions 1.0, 2.0 and 3.0 holding little-endian float32 ('<f4'), float64
 * ('<f8') or float16 ('<f2', converted exactly) in C order; write version 1.0 atomically. NumPy has no
 * bf16: bf16 tensors come in safetensors files (harness/safetensors.h). Everything else is refused with a one-line detail
 * that names the file (c1d_error_detail): bad magic, an absurd or truncated header, a header that is not
 * exactly the dict {'descr', 'fortran_order', 'shape'}, Fortran order, another dtype, a shape whose
 * element count overflows, data shorter or longer than the shape says.
 *
 * Reading is two steps, so that a caller can check shapes and memory before allocating anything:
 * c1d_npy_probe reads and checks the header (and the file size), c1d_npy_read_* reads the data. */
#ifndef C1D_NPY_H
#define C1D_NPY_H

#include <stdint.h>

#include "reference/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define C1D_NPY_MAX_DIMS 8
/* Headers longer than this are refused as absurd (NumPy's own reader stops at 10000 by default). */
#define C1D_NPY_MAX_HEADER (1 << 20)

typedef enum c1d_npy_dtype { C1D_NPY_F4, C1D_NPY_F8, C1D_NPY_F2 } c1d_npy_dtype;

typedef struct c1d_npy_header {
  int major, minor;                  /* format version */
  c1d_npy_dtype dtype;
  int ndim;                          /* 0 for a scalar */
  int64_t shape[C1D_NPY_MAX_DIMS];
  int64_t count;                     /* product of shape (1 for a scalar) */
  int64_t data_offset;               /* bytes before the data */
} c1d_npy_header;

/* "<f4", "<f8" or "<f2". */
const char *c1d_npy_dtype_name(c1d_npy_dtype d);

/* "(2, 256, 4096)" into buf (always terminated). */
void c1d_npy_format_shape(const c1d_npy_header *h, char *buf, int size);

/* Reads and checks the header of path. C1D_ERR_IO if the file cannot be opened or read, C1D_ERR_FORMAT
 * if it is malformed; the detail names the file either way. */
c1d_status c1d_npy_probe(const char *path, c1d_npy_header *h);

/* How a float64 file became float32. */
typedef struct c1d_npy_conversion {
  int64_t inexact;       /* elements whose float32 value differs from the float64 one */
  double max_rel_change; /* max |f32 - f64| / |f64| over those */
} c1d_npy_conversion;

/* Probes path and reads its data into a new float32 array (*data, count elements; the caller frees it).
 * float16 data is converted exactly; float64 data is rounded to nearest float32 when allow_f8, and conv (may be NULL) says how many values
 * changed; a float64 value that overflows float32 is refused (C1D_ERR_NONFINITE). Without allow_f8 a
 * float64 file is refused (C1D_ERR_FORMAT). h (may be NULL) receives the header. On failure *data is
 * NULL and nothing is left allocated. */
c1d_status c1d_npy_read_f32(const char *path, int allow_f8, float **data, c1d_npy_header *h,
                            c1d_npy_conversion *conv);

/* The same for float64 data (float32 and float16 files are promoted exactly). */
c1d_status c1d_npy_read_f64(const char *path, double **data, c1d_npy_header *h);

/* Writes a version 1.0 file of ndim dimensions (0..C1D_NPY_MAX_DIMS) atomically: a temporary file in
 * the same directory, renamed over path only when complete. C1D_ERR_IO with the detail on failure (no
 * file is left behind). */
c1d_status c1d_npy_write_f32(const char *path, const float *data, int ndim, const int64_t *shape);
c1d_status c1d_npy_write_f64(const char *path, const double *data, int ndim, const int64_t *shape);
/* float16 ('<f2'): each value rounded to nearest fp16 first. */
c1d_status c1d_npy_write_f16(const char *path, const float *data, int ndim, const int64_t *shape);

#ifdef __cplusplus
}
#endif
#endif
