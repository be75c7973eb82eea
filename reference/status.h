/* Errors as values: every fallible function returns a c1d_status; the one-line detail of the
 * most recent error on this thread is kept beside it (c1d_error_detail), so a caller can print
 * "what went wrong and with which value" without each layer formatting its own message. */
#ifndef C1D_STATUS_H
#define C1D_STATUS_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum c1d_status {
  C1D_OK = 0,
  C1D_ERR_INVALID_SHAPE,   /* a size is zero, negative, or inconsistent */
  C1D_ERR_OVERFLOW,        /* an element or byte count does not fit */
  C1D_ERR_NO_MEMORY,       /* host allocation failed */
  C1D_ERR_NO_DEVICE,       /* no usable CUDA device, or built without CUDA */
  C1D_ERR_DEVICE_MEMORY,   /* device allocation failed */
  C1D_ERR_CUDA,            /* a CUDA runtime call or kernel launch failed */
  C1D_ERR_CUDNN,           /* a cuDNN call failed */
  C1D_ERR_CUBLAS,          /* a cuBLAS call failed */
  C1D_ERR_UNSUPPORTED,     /* the implementation does not handle this shape */
  C1D_ERR_IO,              /* a file could not be read or written */
  C1D_ERR_FORMAT,          /* a file is malformed */
  C1D_ERR_NONFINITE,       /* NaN or Inf where finite values are required */
  C1D_ERR_USAGE,           /* a bad command-line argument */
  C1D_ERR_INTERNAL         /* a broken invariant */
} c1d_status;

/* A short fixed name for the status ("invalid shape"); never NULL. */
const char *c1d_strerror(c1d_status status);

/* Records a one-line detail for this thread and returns status unchanged, so that
 * `return c1d_fail(C1D_ERR_INVALID_SHAPE, "C must be positive (got %lld)", c);` reads as one step. */
c1d_status c1d_fail(c1d_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* The detail recorded by the last c1d_fail on this thread ("" if none); valid until the next call. */
const char *c1d_error_detail(void);

/* Clears the recorded detail. */
void c1d_error_clear(void);

#ifdef __cplusplus
}
#endif
#endif
