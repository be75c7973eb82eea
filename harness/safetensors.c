/* safetensors reading and writing; see safetensors.h. The header is parsed by cJSON, after the checks of
 * its text that cJSON does not make; the data is read tensor by tensor with pread. */
#include "harness/safetensors.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness/atomic_file.h"
#include "harness/escape.h"
#include "harness/memory.h"
#include "reference/dtype.h"

#define MAX_HEADER (100 * 1024 * 1024)

void c1d_st_free(c1d_st_file *f) {
  for (int i = 0; i < f->n; i++) {
    free(f->tensors[i].name);
    free(f->tensors[i].data);
  }
  free(f->tensors);
  if (f->fd_plus_1 > 0) close(f->fd_plus_1 - 1);
  f->tensors = NULL;
  f->n = 0;
  f->fd_plus_1 = 0;
}

const c1d_st_tensor *c1d_st_find(const c1d_st_file *f, const char *name) {
  for (int i = 0; i < f->n; i++)
    if (!strcmp(f->tensors[i].name, name)) return &f->tensors[i];
  return NULL;
}

void c1d_st_format_shape(const c1d_st_tensor *t, char *buf, int size) {
  int len = snprintf(buf, (size_t)size, "(");
  for (int d = 0; d < t->ndim && len < size; d++)
    len += snprintf(buf + len, (size_t)(size - len), "%s%lld", d ? ", " : "", (long long)t->shape[d]);
  if (len < size) snprintf(buf + len, (size_t)(size - len), ")");
}

static uint64_t le64(const unsigned char *b) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--) v = (v << 8) | b[i];
  return v;
}

typedef struct range {
  int64_t begin, end;
  int tensor;
} range;

static int cmp_range(const void *a, const void *b) {
  const range *x = a, *y = b;
  return (x->begin > y->begin) - (x->begin < y->begin);
}

/* The tensor's dtype from its header text. */
static c1d_status dtype_of(const char *path, const char *name, const char *text, c1d_dtype *out) {
  char en[80], et[40];
  if (!strcmp(text, "F32")) *out = C1D_DTYPE_F32;
  else if (!strcmp(text, "BF16")) *out = C1D_DTYPE_BF16;
  else if (!strcmp(text, "F16")) *out = C1D_DTYPE_F16;
  else
    return c1d_fail(C1D_ERR_FORMAT, "%s: tensor '%s' has dtype '%s'; convlab reads F32, BF16 and F16", path,
                    c1d_escape(name, strlen(name), en, sizeof en), c1d_escape(text, strlen(text), et, sizeof et));
  return C1D_OK;
}

/* One tensor's entry: dtype, shape, offsets (relative to the data), checked against its size. */
/* A JSON number that is a whole byte count or size: the range is checked before the cast (a double beyond
 * int64_t's range makes the cast undefined), and 9e15 keeps it exact in a double. */
static int json_size(const cJSON *v) {
  return cJSON_IsNumber(v) && v->valuedouble >= 0 && v->valuedouble <= 9.0e15 &&
         v->valuedouble == (double)(int64_t)v->valuedouble;
}

static c1d_status parse_entry(const char *path, const cJSON *e, int64_t data_bytes, c1d_st_tensor *t,
                              range *r) {
  char en[80];
  const char *name = c1d_escape(t->name, strlen(t->name), en, sizeof en);
  const cJSON *dt = cJSON_GetObjectItemCaseSensitive(e, "dtype");
  const cJSON *sh = cJSON_GetObjectItemCaseSensitive(e, "shape");
  const cJSON *of = cJSON_GetObjectItemCaseSensitive(e, "data_offsets");
  if (!cJSON_IsObject(e) || !cJSON_IsString(dt) || !cJSON_IsArray(sh) || !cJSON_IsArray(of) ||
      cJSON_GetArraySize(of) != 2)
    return c1d_fail(C1D_ERR_FORMAT, "%s: tensor '%s' needs a string dtype, a shape list and two data_offsets",
                    path, name);
  c1d_status st = dtype_of(path, t->name, dt->valuestring, &t->dtype);
  if (st != C1D_OK) return st;
  t->ndim = cJSON_GetArraySize(sh);
  if (t->ndim > C1D_ST_MAX_DIMS)
    return c1d_fail(C1D_ERR_FORMAT, "%s: tensor '%s' has %d dimensions (at most %d)", path, name, t->ndim,
                    C1D_ST_MAX_DIMS);
  t->count = 1;
  for (int d = 0; d < t->ndim; d++) {
    const cJSON *v = cJSON_GetArrayItem(sh, d);
    if (!json_size(v))
      return c1d_fail(C1D_ERR_FORMAT, "%s: tensor '%s' has a shape entry that is not a size", path, name);
    t->shape[d] = (int64_t)v->valuedouble;
    if (t->shape[d] && t->count > INT64_MAX / 4 / t->shape[d])
      return c1d_fail(C1D_ERR_OVERFLOW, "%s: tensor '%s' has more elements than can be addressed", path, name);
    t->count *= t->shape[d];
  }
  const cJSON *b = cJSON_GetArrayItem(of, 0), *en2 = cJSON_GetArrayItem(of, 1);
  if (!json_size(b) || !json_size(en2) || en2->valuedouble < b->valuedouble)
    return c1d_fail(C1D_ERR_FORMAT, "%s: tensor '%s' has data_offsets that are not [begin, end] with begin <= end",
                    path, name);
  r->begin = (int64_t)b->valuedouble;
  r->end = (int64_t)en2->valuedouble;
  if (r->end > data_bytes)
    return c1d_fail(C1D_ERR_FORMAT, "%s: tensor '%s' ends at byte %lld of the data, past its end (%lld bytes)",
                    path, name, (long long)r->end, (long long)data_bytes);
  if (r->end - r->begin != t->count * c1d_dtype_size(t->dtype))
    return c1d_fail(C1D_ERR_FORMAT, "%s: tensor '%s' holds %lld bytes, but its shape and dtype need %lld", path,
                    name, (long long)(r->end - r->begin), (long long)(t->count * c1d_dtype_size(t->dtype)));
  return C1D_OK;
}

/* n values of dtype from their little-endian bytes into out. */
static void convert(c1d_dtype dtype, const unsigned char *bytes, int64_t n, float *out) {
  for (int64_t i = 0; i < n; i++) {
    if (dtype == C1D_DTYPE_F32) {
      memcpy(&out[i], bytes + 4 * i, 4);
    } else {
      const uint16_t h = (uint16_t)(bytes[2 * i] | (bytes[2 * i + 1] << 8));
      out[i] = dtype == C1D_DTYPE_BF16 ? c1d_bf16_bits_to_float(h) : c1d_f16_bits_to_float(h);
    }
  }
}

/* What JSON (and the reference reader, serde_json) refuses but cJSON takes: a header not starting with
 * '{', a control byte (a NUL included) where JSON allows none, a \u0000 in a string (cJSON ends the
 * string there, so "y\u0000zz" would be read as y), and anything but whitespace after the object (the
 * reference writer pads with spaces). *len is lowered to the object's end. */
static int json_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

static c1d_status check_header_text(const char *path, const char *text, size_t *len) {
  int in_string = 0;
  if (*len == 0)
    return c1d_fail(C1D_ERR_FORMAT, "%s: the header is empty (its length, the first 8 bytes, is 0)", path);
  if (text[0] != '{')
    return c1d_fail(C1D_ERR_FORMAT, "%s: the header is not a JSON object (its first byte is not '{')", path);
  for (size_t i = 0; i < *len; i++) {
    const unsigned char c = (unsigned char)text[i];
    if (c < 0x20 && (in_string || !json_space((char)c)))
      return c1d_fail(C1D_ERR_FORMAT, "%s: the header holds the control byte 0x%02x at byte %zu; JSON allows "
                      "none there", path, c, i);
    if (!in_string) {
      in_string = c == '"';
    } else if (c == '"') {
      in_string = 0;
    } else if (c == '\\' && i + 1 < *len) {
      if (text[i + 1] == 'u' && i + 5 < *len && !memcmp(text + i + 2, "0000", 4))
        return c1d_fail(C1D_ERR_FORMAT, "%s: the header holds a string with \\u0000 (a NUL) at byte %zu; a "
                        "name or dtype cannot hold one", path, i);
      i++; /* the escaped byte cannot end the string */
    }
  }
  while (*len > 0 && json_space(text[*len - 1])) (*len)--;
  return C1D_OK;
}

/* __metadata__: an object of strings, as the format says. */
static c1d_status check_metadata(const char *path, const cJSON *m) {
  int strings = cJSON_IsObject(m);
  for (const cJSON *e = strings ? m->child : NULL; e; e = e->next) strings &= cJSON_IsString(e);
  if (!strings)
    return c1d_fail(C1D_ERR_FORMAT, "%s: __metadata__ must be an object of string values", path);
  return C1D_OK;
}

/* n bytes at offset of fd into buf; a short file is an error. */
static c1d_status read_at(const char *path, int fd, void *buf, size_t n, int64_t offset) {
  for (size_t got = 0; got < n;) {
    const ssize_t k = pread(fd, (char *)buf + got, n - got, (off_t)(offset + (int64_t)got));
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return c1d_fail(C1D_ERR_IO, "%s: read failed: %s", path, k < 0 ? strerror(errno) : "file shrank");
    got += (size_t)k;
  }
  return C1D_OK;
}

/* The header's tensors into out (data NULL): checked against each other and the data's size. */
static c1d_status parse_header(const char *path, const cJSON *root, int64_t data_start, int64_t data_bytes,
                               c1d_st_file *out) {
  c1d_status st = C1D_OK;
  int count = 0;
  for (const cJSON *e = root->child; e; e = e->next) count += strcmp(e->string, "__metadata__") != 0;
  out->tensors = calloc((size_t)(count > 0 ? count : 1), sizeof *out->tensors);
  range *ranges = calloc((size_t)(count > 0 ? count : 1), sizeof *ranges);
  if (!out->tensors || !ranges) {
    st = c1d_fail(C1D_ERR_NO_MEMORY, "%s: out of memory", path);
    goto done;
  }
  for (const cJSON *e = root->child; e; e = e->next) {
    if (!strcmp(e->string, "__metadata__")) {
      if ((st = check_metadata(path, e)) != C1D_OK) goto done;
      continue;
    }
    c1d_st_tensor *t = &out->tensors[out->n];
    char en[80];
    if (c1d_st_find(out, e->string)) {
      st = c1d_fail(C1D_ERR_FORMAT, "%s: tensor '%s' is named twice", path, c1d_escape(e->string, strlen(e->string), en, sizeof en));
      goto done;
    }
    t->name = strdup(e->string);
    out->n++;
    if (!t->name) {
      st = c1d_fail(C1D_ERR_NO_MEMORY, "%s: out of memory", path);
      goto done;
    }
    if ((st = parse_entry(path, e, data_bytes, t, &ranges[out->n - 1])) != C1D_OK) goto done;
    ranges[out->n - 1].tensor = out->n - 1;
    t->offset = data_start + ranges[out->n - 1].begin;
  }
  /* The data must be owned exactly: no overlap, no bytes between or after the tensors. */
  qsort(ranges, (size_t)out->n, sizeof *ranges, cmp_range);
  int64_t at = 0;
  for (int i = 0; i < out->n; i++) {
    char en[80];
    const char *nm = out->tensors[ranges[i].tensor].name;
    if (ranges[i].begin < at) {
      st = c1d_fail(C1D_ERR_FORMAT, "%s: tensor '%s' overlaps another tensor's bytes", path,
                    c1d_escape(nm, strlen(nm), en, sizeof en));
      goto done;
    }
    if (ranges[i].begin > at) {
      st = c1d_fail(C1D_ERR_FORMAT, "%s: bytes %lld to %lld of the data belong to no tensor", path,
                    (long long)at, (long long)ranges[i].begin);
      goto done;
    }
    at = ranges[i].end;
  }
  if (at != data_bytes)
    st = c1d_fail(C1D_ERR_FORMAT, "%s: %lld bytes after the last tensor belong to no tensor", path,
                  (long long)(data_bytes - at));
done:
  free(ranges);
  return st;
}

c1d_status c1d_st_open(const char *path, c1d_st_file *out) {
  memset(out, 0, sizeof *out);
  c1d_status st = C1D_OK;
  char *text = NULL;
  cJSON *root = NULL;
  /* O_NONBLOCK: a FIFO must not hang the open; a regular file is required below. */
  const int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  struct stat sb;
  if (fd < 0) return c1d_fail(C1D_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
  out->fd_plus_1 = fd + 1;
  if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
    st = c1d_fail(C1D_ERR_FORMAT, "%s: not a regular file", path);
    goto done;
  }
  const int64_t size = (int64_t)sb.st_size;
  unsigned char len8[8];
  if (size < 8) {
    st = c1d_fail(C1D_ERR_FORMAT, "%s: %lld bytes, too short for a safetensors header", path, (long long)size);
    goto done;
  }
  if ((st = read_at(path, fd, len8, 8, 0)) != C1D_OK) goto done;
  /* The length first: a 3 GB file of zeros is refused from its first 8 bytes. */
  const uint64_t hlen = le64(len8);
  if (hlen > MAX_HEADER || (int64_t)hlen > size - 8) {
    st = c1d_fail(C1D_ERR_FORMAT, "%s: header length %llu is beyond the file (%lld bytes) or above 100 MB", path,
                  (unsigned long long)hlen, (long long)size);
    goto done;
  }
  if (!(text = malloc((size_t)hlen + 1))) {
    st = c1d_fail(C1D_ERR_NO_MEMORY, "%s: cannot allocate its %llu-byte header", path, (unsigned long long)hlen);
    goto done;
  }
  if ((st = read_at(path, fd, text, (size_t)hlen, 8)) != C1D_OK) goto done;
  size_t json_len = (size_t)hlen;
  if ((st = check_header_text(path, text, &json_len)) != C1D_OK) goto done;
  const char *end = NULL;
  root = cJSON_ParseWithLengthOpts(text, json_len, &end, 0);
  if (!cJSON_IsObject(root)) {
    st = c1d_fail(C1D_ERR_FORMAT, "%s: the header is not a JSON object", path);
    goto done;
  }
  if (end != text + json_len) {
    st = c1d_fail(C1D_ERR_FORMAT, "%s: the header goes on for %zu bytes after its JSON object (only spaces may "
                  "pad it)", path, (size_t)(text + json_len - end));
    goto done;
  }
  st = parse_header(path, root, 8 + (int64_t)hlen, size - 8 - (int64_t)hlen, out);
done:
  cJSON_Delete(root);
  free(text);
  if (st != C1D_OK) c1d_st_free(out);
  return st;
}

/* Bytes of the file per read while converting: the only buffer besides the tensors' own. */
enum { READ_CHUNK = 1 << 20 };

c1d_status c1d_st_load(const char *path, c1d_st_file *f) {
  c1d_status st = C1D_OK;
  unsigned char *chunk = NULL;
  double need = READ_CHUNK;
  for (int i = 0; i < f->n; i++) need += 4.0 * (double)f->tensors[i].count;
  const c1d_memory_room room = c1d_memory_available();
  if (room.bytes > 0.0 && need > room.bytes) {
    st = c1d_fail(C1D_ERR_NO_MEMORY, "%s: its tensors need %.2f GiB as float32; %s leaves %.2f GiB", path,
                  need / 1073741824.0, room.limit, room.bytes / 1073741824.0);
    goto done;
  }
  if (!(chunk = malloc(READ_CHUNK))) {
    st = c1d_fail(C1D_ERR_NO_MEMORY, "%s: out of memory", path);
    goto done;
  }
  for (int i = 0; i < f->n; i++) {
    c1d_st_tensor *t = &f->tensors[i];
    char en[80];
    if (!(t->data = malloc((size_t)(t->count > 0 ? t->count : 1) * sizeof *t->data))) {
      st = c1d_fail(C1D_ERR_NO_MEMORY, "%s: cannot allocate tensor '%s'", path,
                    c1d_escape(t->name, strlen(t->name), en, sizeof en));
      goto done;
    }
    const int64_t size = c1d_dtype_size(t->dtype), per_chunk = READ_CHUNK / size;
    for (int64_t at = 0; at < t->count; at += per_chunk) {
      const int64_t n = t->count - at < per_chunk ? t->count - at : per_chunk;
      if ((st = read_at(path, f->fd_plus_1 - 1, chunk, (size_t)(n * size), t->offset + at * size)) != C1D_OK)
        goto done;
      convert(t->dtype, chunk, n, t->data + at);
    }
  }
done:
  free(chunk);
  if (st != C1D_OK) c1d_st_free(f);
  return st;
}

c1d_status c1d_st_read(const char *path, c1d_st_file *out) {
  c1d_status st = c1d_st_open(path, out);
  return st == C1D_OK ? c1d_st_load(path, out) : st;
}

c1d_status c1d_st_write(const char *path, const c1d_st_tensor *tensors, int n) {
  cJSON *root = cJSON_CreateObject();
  if (!root) return c1d_fail(C1D_ERR_NO_MEMORY, "out of memory");
  static const char *const names[C1D_DTYPE_COUNT] = {"F32", "BF16", "F16"};
  int64_t at = 0;
  for (int i = 0; i < n; i++) {
    const c1d_st_tensor *t = &tensors[i];
    cJSON *e = cJSON_AddObjectToObject(root, t->name), *sh = e ? cJSON_AddArrayToObject(e, "shape") : NULL;
    cJSON *of = e ? cJSON_AddArrayToObject(e, "data_offsets") : NULL;
    if (!e || !sh || !of || !cJSON_AddStringToObject(e, "dtype", names[t->dtype])) {
      cJSON_Delete(root);
      return c1d_fail(C1D_ERR_NO_MEMORY, "out of memory");
    }
    for (int d = 0; d < t->ndim; d++) cJSON_AddItemToArray(sh, cJSON_CreateNumber((double)t->shape[d]));
    const int64_t bytes = t->count * c1d_dtype_size(t->dtype);
    cJSON_AddItemToArray(of, cJSON_CreateNumber((double)at));
    cJSON_AddItemToArray(of, cJSON_CreateNumber((double)(at + bytes)));
    at += bytes;
  }
  char *header = cJSON_PrintUnformatted(root);
  cJSON_Delete(root);
  if (!header) return c1d_fail(C1D_ERR_NO_MEMORY, "out of memory");
  /* The header padded with spaces to a multiple of 8, as the reference writer does. */
  size_t hlen = strlen(header), padded = (hlen + 7) / 8 * 8;
  c1d_atomic_file af;
  c1d_status st = c1d_atomic_open(&af, path);
  if (st != C1D_OK) {
    free(header);
    return st;
  }
  unsigned char len8[8];
  for (int i = 0; i < 8; i++) len8[i] = (unsigned char)((uint64_t)padded >> (8 * i));
  fwrite(len8, 1, 8, af.f);
  fwrite(header, 1, hlen, af.f);
  for (size_t i = hlen; i < padded; i++) fputc(' ', af.f);
  free(header);
  for (int i = 0; i < n; i++) {
    const c1d_st_tensor *t = &tensors[i];
    for (int64_t j = 0; j < t->count; j++) {
      if (t->dtype == C1D_DTYPE_F32) {
        fwrite(&t->data[j], 4, 1, af.f);
      } else {
        const uint16_t h = t->dtype == C1D_DTYPE_BF16 ? c1d_float_to_bf16_bits(t->data[j])
                                                      : c1d_float_to_f16_bits(t->data[j]);
        const unsigned char b2[2] = {(unsigned char)(h & 0xff), (unsigned char)(h >> 8)};
        fwrite(b2, 1, 2, af.f);
      }
    }
  }
  return c1d_atomic_commit(&af);
}
