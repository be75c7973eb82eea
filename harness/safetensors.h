/* safetensors files (the format PyTorch users write with safetensors.torch.save_file): an 8-byte
 * little-endian header length, a JSON header naming each tensor's dtype, shape and byte range, then the
 * data. convlab reads F32, BF16 and F16 tensors, each converted exactly to float32 (the values it
 * represents) with its type kept, and writes them the same way (tests, the Python helper's files).
 *
 * Checks, each a one-line C1D_ERR_FORMAT naming the file and the tensor: a header length past the file
 * or above 100 MB, a header that is not a JSON object, a tensor without dtype, shape or data_offsets,
 * an unknown or unsupported dtype, a negative or overflowing shape, offsets out of order, past the end
 * of the data, overlapping another tensor's or leaving bytes no tensor owns, a size that disagrees with
 * the shape, a name given twice. Names and dtypes are printed escaped. */
#ifndef C1D_SAFETENSORS_H
#define C1D_SAFETENSORS_H

#include <stdint.h>

#include "reference/problem.h"

#ifdef __cplusplus
extern "C" {
#endif

#define C1D_ST_MAX_DIMS 8

typedef struct c1d_st_tensor {
  char *name;
  c1d_dtype dtype;
  int ndim;
  int64_t shape[C1D_ST_MAX_DIMS];
  int64_t count;   /* product of shape */
  float *data;     /* count values, exactly the tensor's */
} c1d_st_tensor;

typedef struct c1d_st_file {
  int n;
  c1d_st_tensor *tensors;
} c1d_st_file;

/* Reads every tensor of path. On failure *out holds nothing to free. */
c1d_status c1d_st_read(const char *path, c1d_st_file *out);

/* The tensor named name, or NULL. */
const c1d_st_tensor *c1d_st_find(const c1d_st_file *f, const char *name);

/* Frees what c1d_st_read allocated; a zeroed file is fine. */
void c1d_st_free(c1d_st_file *f);

/* Writes n tensors to path atomically (each value rounded to its dtype first). */
c1d_status c1d_st_write(const char *path, const c1d_st_tensor *tensors, int n);

/* "(2, 64, 1024)" into buf (always terminated). */
void c1d_st_format_shape(const c1d_st_tensor *t, char *buf, int size);

#ifdef __cplusplus
}
#endif
#endif
