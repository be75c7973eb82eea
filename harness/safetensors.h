/* safetensors files (the format PyTorch users write with safetensors.torch.save_file): an 8-byte
 * little-endian header length, a JSON header naming each tensor's dtype, shape and byte range, then the
 * data. convlab reads F32, BF16 and F16 tensors, each converted exactly to float32 (the values it
 * represents) with its type kept, and writes them the same way (tests, the Python helper's files).
 *
 * Reading is in two steps, so that a file is judged before its data costs anything: c1d_st_open reads
 * the 8 bytes and the header alone and checks them; c1d_st_load then reads each tensor straight into
 * its float32 buffer through a bounded buffer (never the whole file), once the memory for those buffers
 * is known to be there.
 *
 * Checks, each a one-line C1D_ERR_FORMAT naming the file and the tensor: a header length past the file
 * or above 100 MB, a header that is not one JSON object starting at its first byte (only JSON whitespace,
 * the reference writer's space padding, may follow it), a control byte or a \u0000 in the header (cJSON
 * would cut "y\u0000zz" to "y"), a __metadata__ that is not an object of strings, a tensor without
 * dtype, shape or data_offsets, an unknown or unsupported dtype, a negative or overflowing shape, offsets
 * out of order, past the end of the data, overlapping another tensor's or leaving bytes no tensor owns, a
 * size that disagrees with the shape, a name given twice. Names and dtypes are printed escaped. */
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
  float *data;     /* count values, exactly the tensor's; NULL until c1d_st_load */
  int64_t offset;  /* where its bytes start in the file (set by c1d_st_open; unused by c1d_st_write) */
} c1d_st_tensor;

typedef struct c1d_st_file {
  int n;
  c1d_st_tensor *tensors;
  int fd_plus_1;   /* the file open between c1d_st_open and c1d_st_free (0: none, so zeroed is empty) */
} c1d_st_file;

/* Reads and checks the header of path (nothing of the data): every tensor's name, dtype, shape and
 * offset, data NULL, the file kept open for c1d_st_load. On failure *out holds nothing to free. */
c1d_status c1d_st_open(const char *path, c1d_st_file *out);

/* Reads every tensor of f (from c1d_st_open; path names the file in messages) into its data.
 * C1D_ERR_NO_MEMORY, before reading, when the float32 buffers do not fit the memory left
 * (c1d_memory_available); C1D_ERR_IO when the file shrank. On failure f is freed. */
c1d_status c1d_st_load(const char *path, c1d_st_file *f);

/* c1d_st_open and c1d_st_load. On failure *out holds nothing to free. */
c1d_status c1d_st_read(const char *path, c1d_st_file *out);

/* The tensor named name, or NULL. */
const c1d_st_tensor *c1d_st_find(const c1d_st_file *f, const char *name);

/* Frees what c1d_st_open and c1d_st_load allocated and closes the file; a zeroed file is fine. */
void c1d_st_free(c1d_st_file *f);

/* Writes n tensors to path atomically (each value rounded to its dtype first). */
c1d_status c1d_st_write(const char *path, const c1d_st_tensor *tensors, int n);

/* "(2, 64, 1024)" into buf (always terminated). */
void c1d_st_format_shape(const c1d_st_tensor *t, char *buf, int size);

#ifdef __cplusplus
}
#endif
#endif
