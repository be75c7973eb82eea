/* .npy reading and writing (format: numpy.lib.format). The header is a Python dict literal; this file
 * parses exactly the subset NumPy writes for plain arrays ({'descr': '<f4', 'fortran_order': False,
 * 'shape': (2, 3), }, any key order, either quote style, trailing commas) and refuses anything else.
 * Data is read and converted in chunks, so a float64 file needs no second full-size buffer. */
#include "harness/npy.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness/atomic_file.h"
#include "harness/escape.h"
#include "reference/dtype.h"
#include "reference/problem.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "npy.c reads and writes little-endian data by memcpy; port it before using a big-endian host"
#endif

static const char magic[6] = {'\x93', 'N', 'U', 'M', 'P', 'Y'};
enum { CHUNK = 1 << 16 }; /* elements per read during conversion */

const char *c1d_npy_dtype_name(c1d_npy_dtype d) { return d == C1D_NPY_F8 ? "<f8" : d == C1D_NPY_F2 ? "<f2" : "<f4"; }

static int64_t itemsize(c1d_npy_dtype d) { return d == C1D_NPY_F8 ? 8 : d == C1D_NPY_F2 ? 2 : 4; }

void c1d_npy_format_shape(const c1d_npy_header *h, char *buf, int size) {
  int at = snprintf(buf, (size_t)size, "(");
  for (int i = 0; i < h->ndim && at < size; i++)
    at += snprintf(buf + at, (size_t)(size - at), "%s%lld", i ? ", " : "", (long long)h->shape[i]);
  if (at < size) snprintf(buf + at, (size_t)(size - at), h->ndim == 1 ? ",)" : ")");
}

// --- header dict parser --------------------------------------------------------------------------

typedef struct cursor {
  const char *p, *end;
  const char *path; /* for messages */
} cursor;

static void skip_space(cursor *c) {
  while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r')) c->p++;
}

static int take(cursor *c, char ch) {
  skip_space(c);
  if (c->p < c->end && *c->p == ch) {
    c->p++;
    return 1;
  }
  return 0;
}

/* A quoted string without escapes into out. */
static c1d_status parse_string(cursor *c, char *out, size_t size) {
  skip_space(c);
  if (c->p >= c->end || (*c->p != '\'' && *c->p != '"'))
    return c1d_fail(C1D_ERR_FORMAT, "%s: malformed .npy header (expected a quoted string)", c->path);
  char q = *c->p++;
  size_t n = 0;
  while (c->p < c->end && *c->p != q) {
    if (*c->p == '\0') /* it would end the C string early: '<f4\0' read as '<f4' (NumPy refuses it) */
      return c1d_fail(C1D_ERR_FORMAT, "%s: malformed .npy header (a NUL byte inside a quoted string)", c->path);
    if (*c->p == '\\' || n + 1 >= size)
      return c1d_fail(C1D_ERR_FORMAT, "%s: malformed .npy header (unexpected string)", c->path);
    out[n++] = *c->p++;
  }
  if (c->p >= c->end)
    return c1d_fail(C1D_ERR_FORMAT, "%s: malformed .npy header (unterminated string)", c->path);
  c->p++;
  out[n] = '\0';
  return C1D_OK;
}

static c1d_status parse_bool(cursor *c, int *out) {
  skip_space(c);
  size_t left = (size_t)(c->end - c->p);
  if (left >= 4 && memcmp(c->p, "True", 4) == 0) {
    c->p += 4;
    *out = 1;
  } else if (left >= 5 && memcmp(c->p, "False", 5) == 0) {
    c->p += 5;
    *out = 0;
  } else {
    return c1d_fail(C1D_ERR_FORMAT, "%s: malformed .npy header (fortran_order is not True/False)",
                    c->path);
  }
  return C1D_OK;
}

/* (d0, d1, ...) with non-negative decimal dimensions; the element count must stay within
 * C1D_MAX_ELEMENTS, which also keeps count*8 bytes far inside int64. */
static c1d_status parse_shape(cursor *c, c1d_npy_header *h) {
  h->ndim = 0;
  h->count = 1;
  if (!take(c, '('))
    return c1d_fail(C1D_ERR_FORMAT, "%s: malformed .npy header (shape is not a tuple)", c->path);
  for (;;) {
    if (take(c, ')')) return C1D_OK;
    skip_space(c);
    if (c->p >= c->end || *c->p < '0' || *c->p > '9')
      return c1d_fail(C1D_ERR_FORMAT, "%s: malformed .npy header (bad shape dimension)", c->path);
    int64_t d = 0;
    while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
      if (d > (C1D_MAX_ELEMENTS - (*c->p - '0')) / 10)
        return c1d_fail(C1D_ERR_FORMAT, "%s: shape dimension is too large (limit %lld elements)",
                        c->path, (long long)C1D_MAX_ELEMENTS);
      d = d * 10 + (*c->p++ - '0');
    }
    if (h->ndim == C1D_NPY_MAX_DIMS)
      return c1d_fail(C1D_ERR_FORMAT, "%s: more than %d dimensions", c->path, C1D_NPY_MAX_DIMS);
    if (d > 0 && h->count > C1D_MAX_ELEMENTS / d)
      return c1d_fail(C1D_ERR_FORMAT, "%s: shape overflows (more than %lld elements)", c->path,
                      (long long)C1D_MAX_ELEMENTS);
    h->shape[h->ndim++] = d;
    h->count *= d;
    if (!take(c, ',')) {
      if (take(c, ')')) return C1D_OK;
      return c1d_fail(C1D_ERR_FORMAT, "%s: malformed .npy header (bad shape tuple)", c->path);
    }
  }
}

static c1d_status parse_dtype(cursor *c, c1d_npy_header *h) {
  char descr[64], shown[300];
  c1d_status st = parse_string(c, descr, sizeof descr);
  if (st != C1D_OK) return st;
  if (strcmp(descr, "<f4") == 0)
    h->dtype = C1D_NPY_F4;
  else if (strcmp(descr, "<f8") == 0)
    h->dtype = C1D_NPY_F8;
  else if (strcmp(descr, "<f2") == 0)
    h->dtype = C1D_NPY_F2;
  else if (strcmp(descr, ">f4") == 0 || strcmp(descr, ">f8") == 0 || strcmp(descr, ">f2") == 0)
    return c1d_fail(C1D_ERR_FORMAT, "%s: big-endian dtype '%s' is not supported (use '<f4', '<f8' or '<f2')",
                    c->path, descr);
  else
    return c1d_fail(C1D_ERR_FORMAT, "%s: unsupported dtype '%s' (expected '<f4', '<f8' or '<f2'; bf16 "
                    "tensors come in a safetensors file)", c->path,
                    c1d_escape(descr, strlen(descr), shown, sizeof shown));
  return C1D_OK;
}

static c1d_status parse_dict(cursor *c, c1d_npy_header *h) {
  c1d_status st = C1D_OK;
  int have_descr = 0, have_order = 0, have_shape = 0, fortran = 0;
  if (!take(c, '{'))
    return c1d_fail(C1D_ERR_FORMAT, "%s: malformed .npy header (not a dict)", c->path);
  while (!take(c, '}')) {
    char key[32], shown[160];
    if ((st = parse_string(c, key, sizeof key)) != C1D_OK) return st;
    if (!take(c, ':'))
      return c1d_fail(C1D_ERR_FORMAT, "%s: malformed .npy header (expected ':')", c->path);
    if (strcmp(key, "descr") == 0 && !have_descr) {
      st = parse_dtype(c, h);
      have_descr = 1;
    } else if (strcmp(key, "fortran_order") == 0 && !have_order) {
      st = parse_bool(c, &fortran);
      have_order = 1;
    } else if (strcmp(key, "shape") == 0 && !have_shape) {
      st = parse_shape(c, h);
      have_shape = 1;
    } else {
      return c1d_fail(C1D_ERR_FORMAT, "%s: unexpected or repeated key '%s' in the .npy header",
                      c->path, c1d_escape(key, strlen(key), shown, sizeof shown));
    }
    if (st != C1D_OK) return st;
    if (!take(c, ',')) {
      if (take(c, '}')) break;
      return c1d_fail(C1D_ERR_FORMAT, "%s: malformed .npy header (expected ',' or '}')", c->path);
    }
  }
  if (!have_descr || !have_order || !have_shape)
    return c1d_fail(C1D_ERR_FORMAT, "%s: .npy header lacks '%s'", c->path,
                    !have_descr ? "descr" : !have_order ? "fortran_order" : "shape");
  skip_space(c);
  if (c->p != c->end)
    return c1d_fail(C1D_ERR_FORMAT, "%s: unexpected text after the .npy header dict", c->path);
  if (fortran)
    return c1d_fail(C1D_ERR_FORMAT, "%s: Fortran-order arrays are not supported (save with "
                    "np.ascontiguousarray)", c->path);
  return C1D_OK;
}

// --- reading -----------------------------------------------------------------------------------

static uint32_t le32(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Opens path and checks its header; on success *out is positioned at the data. */
static c1d_status open_checked(const char *path, c1d_npy_header *h, FILE **out) {
  c1d_status st = C1D_OK;
  unsigned char pre[12];
  char *text = NULL;
  struct stat sb;
  FILE *f = NULL;
  *out = NULL;
  memset(h, 0, sizeof *h);
  /* O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer, before any check. */
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return c1d_fail(C1D_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
  if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
    close(fd);
    return c1d_fail(C1D_ERR_IO, "%s: not a regular file", path);
  }
  if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0 || !(f = fdopen(fd, "rb"))) {
    st = c1d_fail(C1D_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    close(fd);
    return st;
  }
  if (fread(pre, 1, 8, f) != 8 || memcmp(pre, magic, 6) != 0) {
    st = c1d_fail(C1D_ERR_FORMAT, "%s: not a .npy file (bad magic)", path);
    goto done;
  }
  h->major = pre[6];
  h->minor = pre[7];
  if (h->major < 1 || h->major > 3 || h->minor != 0) {
    st = c1d_fail(C1D_ERR_FORMAT, "%s: unsupported .npy format version %d.%d", path, h->major,
                  h->minor);
    goto done;
  }
  int lenbytes = h->major == 1 ? 2 : 4;
  if (fread(pre + 8, 1, (size_t)lenbytes, f) != (size_t)lenbytes) {
    st = c1d_fail(C1D_ERR_FORMAT, "%s: truncated .npy header", path);
    goto done;
  }
  int64_t hlen = h->major == 1 ? (int64_t)(pre[8] | pre[9] << 8) : (int64_t)le32(pre + 8);
  h->data_offset = 8 + lenbytes + hlen;
  if (hlen > C1D_NPY_MAX_HEADER) {
    st = c1d_fail(C1D_ERR_FORMAT, "%s: absurd .npy header length %lld (limit %d)", path,
                  (long long)hlen, C1D_NPY_MAX_HEADER);
    goto done;
  }
  if (h->data_offset > (int64_t)sb.st_size) {
    st = c1d_fail(C1D_ERR_FORMAT, "%s: truncated .npy header (%lld bytes announced, file has %lld)",
                  path, (long long)hlen, (long long)sb.st_size);
    goto done;
  }
  text = malloc((size_t)hlen + 1);
  if (!text) {
    st = c1d_fail(C1D_ERR_NO_MEMORY, "%s: out of memory reading the header", path);
    goto done;
  }
  if (fread(text, 1, (size_t)hlen, f) != (size_t)hlen) {
    st = c1d_fail(C1D_ERR_IO, "%s: read error in the header", path);
    goto done;
  }
  cursor c = {text, text + hlen, path};
  if ((st = parse_dict(&c, h)) != C1D_OK) goto done;
  int64_t want = h->count * itemsize(h->dtype), have = (int64_t)sb.st_size - h->data_offset;
  if (have < want) {
    st = c1d_fail(C1D_ERR_FORMAT, "%s: truncated data (shape needs %lld bytes, file has %lld)", path,
                  (long long)want, (long long)have);
    goto done;
  }
  if (have > want) {
    st = c1d_fail(C1D_ERR_FORMAT, "%s: %lld unexpected bytes after the data", path,
                  (long long)(have - want));
    goto done;
  }
  *out = f;
  f = NULL;
done:
  free(text);
  if (f) fclose(f);
  return st;
}

c1d_status c1d_npy_probe(const char *path, c1d_npy_header *h) {
  FILE *f = NULL;
  c1d_status st = open_checked(path, h, &f);
  if (f) fclose(f);
  return st;
}

/* Reads count elements of the file's dtype, converting each chunk with convert(). */
typedef c1d_status (*convert_fn)(const void *chunk, int64_t n, int64_t first, void *dst, void *ctx);

static c1d_status read_converted(FILE *f, const char *path, const c1d_npy_header *h, void *dst,
                                 convert_fn convert, void *ctx) {
  c1d_status st = C1D_OK;
  const int64_t isz = itemsize(h->dtype);
  void *buf = malloc((size_t)(CHUNK * isz));
  if (!buf) return c1d_fail(C1D_ERR_NO_MEMORY, "%s: out of memory", path);
  for (int64_t at = 0; at < h->count; at += CHUNK) {
    int64_t n = h->count - at < CHUNK ? h->count - at : CHUNK;
    if (fread(buf, (size_t)isz, (size_t)n, f) != (size_t)n) {
      st = c1d_fail(C1D_ERR_IO, "%s: read error in the data", path);
      goto done;
    }
    if ((st = convert(buf, n, at, dst, ctx)) != C1D_OK) goto done;
  }
done:
  free(buf);
  return st;
}

typedef struct f32_ctx {
  const char *path;
  c1d_npy_conversion conv;
} f32_ctx;

static c1d_status f4_to_f32(const void *chunk, int64_t n, int64_t first, void *dst, void *ctx) {
  memcpy((float *)dst + first, chunk, (size_t)n * sizeof(float));
  return C1D_OK;
}

static c1d_status f2_to_f32(const void *chunk, int64_t n, int64_t first, void *dst, void *ctx) {
  (void)ctx;
  const unsigned char *b = chunk;
  float *out = (float *)dst + first;
  for (int64_t i = 0; i < n; i++) out[i] = c1d_f16_bits_to_float((uint16_t)(b[2 * i] | b[2 * i + 1] << 8));
  return C1D_OK;
}

static c1d_status f8_to_f32(const void *chunk, int64_t n, int64_t first, void *dst, void *vctx) {
  f32_ctx *ctx = vctx;
  const double *src = chunk;
  float *out = (float *)dst + first;
  for (int64_t i = 0; i < n; i++) {
    float v = (float)src[i];
    if (isinf(v) && !isinf(src[i]))
      return c1d_fail(C1D_ERR_NONFINITE, "%s: element %lld (%g) overflows float32", ctx->path,
                      (long long)(first + i), src[i]);
    if ((double)v != src[i] && !isnan(v)) {
      ctx->conv.inexact++;
      double rel = src[i] != 0.0 ? fabs((double)v - src[i]) / fabs(src[i]) : 0.0;
      if (rel > ctx->conv.max_rel_change) ctx->conv.max_rel_change = rel;
    }
    out[i] = v;
  }
  return C1D_OK;
}

c1d_status c1d_npy_read_f32(const char *path, int allow_f8, float **data, c1d_npy_header *hout,
                            c1d_npy_conversion *conv) {
  c1d_status st;
  c1d_npy_header h;
  FILE *f = NULL;
  float *out = NULL;
  f32_ctx ctx = {path, {0, 0.0}};
  *data = NULL;
  if ((st = open_checked(path, &h, &f)) != C1D_OK) goto done;
  if (h.dtype == C1D_NPY_F8 && !allow_f8) {
    st = c1d_fail(C1D_ERR_FORMAT, "%s: dtype '<f8' where float32 ('<f4') is required", path);
    goto done;
  }
  out = malloc((size_t)(h.count > 0 ? h.count : 1) * sizeof *out);
  if (!out) {
    st = c1d_fail(C1D_ERR_NO_MEMORY, "%s: cannot allocate %.1f MB", path, (double)h.count * 4e-6);
    goto done;
  }
  st = read_converted(f, path, &h, out,
                      h.dtype == C1D_NPY_F8 ? f8_to_f32 : h.dtype == C1D_NPY_F2 ? f2_to_f32 : f4_to_f32, &ctx);
  if (st != C1D_OK) goto done;
  *data = out;
  out = NULL;
  if (hout) *hout = h;
  if (conv) *conv = ctx.conv;
done:
  free(out);
  if (f) fclose(f);
  return st;
}

static c1d_status to_f64(const void *chunk, int64_t n, int64_t first, void *dst, void *ctx) {
  const c1d_npy_header *h = ctx;
  double *out = (double *)dst + first;
  if (h->dtype == C1D_NPY_F8)
    memcpy(out, chunk, (size_t)n * sizeof(double));
  else if (h->dtype == C1D_NPY_F2)
    for (int64_t i = 0; i < n; i++)
      out[i] = c1d_f16_bits_to_float((uint16_t)(((const unsigned char *)chunk)[2 * i] |
                                                ((const unsigned char *)chunk)[2 * i + 1] << 8));
  else
    for (int64_t i = 0; i < n; i++) out[i] = ((const float *)chunk)[i];
  return C1D_OK;
}

c1d_status c1d_npy_read_f64(const char *path, double **data, c1d_npy_header *hout) {
  c1d_status st;
  c1d_npy_header h;
  FILE *f = NULL;
  double *out = NULL;
  *data = NULL;
  if ((st = open_checked(path, &h, &f)) != C1D_OK) goto done;
  out = malloc((size_t)(h.count > 0 ? h.count : 1) * sizeof *out);
  if (!out) {
    st = c1d_fail(C1D_ERR_NO_MEMORY, "%s: cannot allocate %.1f MB", path, (double)h.count * 8e-6);
    goto done;
  }
  if ((st = read_converted(f, path, &h, out, to_f64, &h)) != C1D_OK) goto done;
  *data = out;
  out = NULL;
  if (hout) *hout = h;
done:
  free(out);
  if (f) fclose(f);
  return st;
}

// --- writing -----------------------------------------------------------------------------------

static c1d_status write_npy(const char *path, const void *data, c1d_npy_dtype dtype, int ndim,
                            const int64_t *shape) {
  c1d_status st = C1D_OK;
  c1d_atomic_file af = {0};
  char dict[512], shape_text[400];
  int64_t count = 1;
  c1d_npy_header h = {.ndim = ndim};
  if (ndim < 0 || ndim > C1D_NPY_MAX_DIMS)
    return c1d_fail(C1D_ERR_INTERNAL, "%s: cannot write %d dimensions", path, ndim);
  for (int i = 0; i < ndim; i++) {
    h.shape[i] = shape[i];
    count *= shape[i];
  }
  c1d_npy_format_shape(&h, shape_text, sizeof shape_text);
  int n = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }",
                   c1d_npy_dtype_name(dtype), shape_text);
  /* Pad with spaces and end with '\n' so that the data starts at a multiple of 64 bytes, as NumPy does. */
  int total = 10 + n + 1;
  int padded = (total + 63) / 64 * 64;
  int hlen = padded - 10;
  unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(hlen & 0xff),
                           (unsigned char)(hlen >> 8)};
  if ((st = c1d_atomic_open(&af, path)) != C1D_OK) return st;
  fwrite(pre, 1, sizeof pre, af.f);
  fwrite(dict, 1, (size_t)n, af.f);
  for (int i = n; i < hlen - 1; i++) fputc(' ', af.f);
  fputc('\n', af.f);
  if (count > 0 && fwrite(data, (size_t)itemsize(dtype), (size_t)count, af.f) != (size_t)count) {
    st = c1d_fail(C1D_ERR_IO, "%s: write failed: %s", path, strerror(errno));
    goto done;
  }
  st = c1d_atomic_commit(&af); /* also catches a failure of the header writes above */
done:
  if (st != C1D_OK) c1d_atomic_abort(&af); /* nothing left after a commit: a no-op then */
  return st;
}

c1d_status c1d_npy_write_f32(const char *path, const float *data, int ndim, const int64_t *shape) {
  return write_npy(path, data, C1D_NPY_F4, ndim, shape);
}

c1d_status c1d_npy_write_f64(const char *path, const double *data, int ndim, const int64_t *shape) {
  return write_npy(path, data, C1D_NPY_F8, ndim, shape);
}

c1d_status c1d_npy_write_f16(const char *path, const float *data, int ndim, const int64_t *shape) {
  int64_t count = 1;
  for (int i = 0; i < ndim && i < C1D_NPY_MAX_DIMS; i++) count *= shape[i];
  uint16_t *bits = malloc((size_t)(count > 0 ? count : 1) * sizeof *bits);
  if (!bits) return c1d_fail(C1D_ERR_NO_MEMORY, "%s: out of memory", path);
  for (int64_t i = 0; i < count; i++) bits[i] = c1d_float_to_f16_bits(data[i]); /* rounds to nearest */
  const c1d_status st = write_npy(path, bits, C1D_NPY_F2, ndim, shape);
  free(bits);
  return st;
}
