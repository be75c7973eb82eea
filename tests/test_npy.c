/* .npy reading and writing: round trips, every malformed case refused with a message naming the file,
 * atomic writes, and interoperability with NumPy itself (tests/npy_interop.py under /usr/bin/python3,
 * skipped with a message when that interpreter has no NumPy). */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness/npy.h"
#include "numerics/arith.h"

// --- helpers -----------------------------------------------------------------------------------

static char dir[64];

static void make_dir(void) {
  snprintf(dir, sizeof dir, "/tmp/c1d_npy_XXXXXX");
  cr_assert_not_null(mkdtemp(dir));
}

static void remove_dir(void) {
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) cr_log_warn("could not remove %s", dir);
}

TestSuite(npy, .init = make_dir, .fini = remove_dir);

static const char *path_of(const char *name) {
  static char p[4][160];
  static int next = 0;
  char *out = p[next++ % 4];
  snprintf(out, sizeof p[0], "%s/%s", dir, name);
  return out;
}

/* Writes a file by hand: magic, version, header length field (or the given one when hlen_override >= 0),
 * the header text padded like NumPy's, and `data_bytes` bytes of data. */
static void write_raw(const char *path, int major, const char *dict, long hlen_override, long data_bytes) {
  FILE *f = fopen(path, "wb");
  cr_assert_not_null(f);
  int lenbytes = major == 1 ? 2 : 4;
  size_t n = strlen(dict);
  size_t total = 8 + (size_t)lenbytes + n + 1;
  size_t padded = (total + 63) / 64 * 64;
  unsigned long hlen = hlen_override >= 0 ? (unsigned long)hlen_override : padded - 8 - (size_t)lenbytes;
  unsigned char pre[12] = {0x93, 'N', 'U', 'M', 'P', 'Y', (unsigned char)major, 0};
  for (int i = 0; i < lenbytes; i++) pre[8 + i] = (unsigned char)(hlen >> (8 * i));
  fwrite(pre, 1, 8 + (size_t)lenbytes, f);
  fwrite(dict, 1, n, f);
  for (size_t i = total; i < padded; i++) fputc(' ', f);
  fputc('\n', f);
  for (long i = 0; i < data_bytes; i++) fputc(0, f);
  fclose(f);
}

static int count_entries(const char *d) {
  DIR *dd = opendir(d);
  int n = 0;
  cr_assert_not_null(dd);
  for (struct dirent *e; (e = readdir(dd));)
    if (e->d_name[0] != '.') n++;
  closedir(dd);
  return n;
}

static float f4_value(int64_t i) { return (float)((double)i * 0.37 - 3.0); }
static double f8_value(int64_t i) { return (double)i * 0.37 - 3.0; }

// --- round trips -------------------------------------------------------------------------------

Test(npy, round_trips_float32_bit_for_bit_including_special_values) {
  const float v[8] = {-0.0f, 0x1p-149f, INFINITY, -INFINITY, NAN, 3.4028235e38f, 1.0f, -2.5f};
  const int64_t shape[3] = {2, 2, 2};
  const char *p = path_of("rt.npy");
  cr_assert_eq(c1d_npy_write_f32(p, v, 3, shape), C1D_OK);
  float *back = NULL;
  c1d_npy_header h;
  cr_assert_eq(c1d_npy_read_f32(p, 0, &back, &h, NULL), C1D_OK, "%s", c1d_error_detail());
  cr_expect_eq(h.ndim, 3);
  cr_expect_eq(h.count, 8);
  cr_expect_eq(h.dtype, C1D_NPY_F4);
  cr_expect_eq(h.data_offset % 64, 0, "NumPy aligns the data to 64 bytes");
  cr_expect_eq(memcmp(back, v, sizeof v), 0);
  free(back);
}

Test(npy, round_trips_float64_and_promotes_float32_exactly) {
  double v[6];
  for (int i = 0; i < 6; i++) v[i] = f8_value(i);
  const int64_t shape[2] = {2, 3};
  cr_assert_eq(c1d_npy_write_f64(path_of("d.npy"), v, 2, shape), C1D_OK);
  double *back = NULL;
  cr_assert_eq(c1d_npy_read_f64(path_of("d.npy"), &back, NULL), C1D_OK);
  cr_expect_eq(memcmp(back, v, sizeof v), 0);
  free(back);
  float f[2] = {0.1f, -7.25f};
  const int64_t n = 2;
  cr_assert_eq(c1d_npy_write_f32(path_of("f.npy"), f, 1, &n), C1D_OK);
  cr_assert_eq(c1d_npy_read_f64(path_of("f.npy"), &back, NULL), C1D_OK);
  cr_expect_eq(back[0], (double)0.1f);
  cr_expect_eq(back[1], -7.25);
  free(back);
}

Test(npy, reads_scalars_and_one_dimensional_arrays) {
  float one = 2.5f;
  cr_assert_eq(c1d_npy_write_f32(path_of("s.npy"), &one, 0, NULL), C1D_OK);
  c1d_npy_header h;
  cr_assert_eq(c1d_npy_probe(path_of("s.npy"), &h), C1D_OK);
  cr_expect_eq(h.ndim, 0);
  cr_expect_eq(h.count, 1);
  char text[64];
  c1d_npy_format_shape(&h, text, sizeof text);
  cr_expect_str_eq(text, "()");
  write_raw(path_of("v.npy"), 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", -1, 12);
  cr_assert_eq(c1d_npy_probe(path_of("v.npy"), &h), C1D_OK, "%s", c1d_error_detail());
  c1d_npy_format_shape(&h, text, sizeof text);
  cr_expect_str_eq(text, "(3,)");
}

Test(npy, reads_format_versions_two_and_three_and_any_key_order) {
  write_raw(path_of("v2.npy"), 2, "{'shape': (2, 2), 'fortran_order': False, 'descr': '<f4'}", -1, 16);
  write_raw(path_of("v3.npy"), 3, "{\"descr\": \"<f8\", \"fortran_order\": False, \"shape\": (2,)}", -1, 16);
  c1d_npy_header h;
  cr_expect_eq(c1d_npy_probe(path_of("v2.npy"), &h), C1D_OK, "%s", c1d_error_detail());
  cr_expect_eq(h.major, 2);
  cr_expect_eq(h.count, 4);
  cr_expect_eq(c1d_npy_probe(path_of("v3.npy"), &h), C1D_OK, "%s", c1d_error_detail());
  cr_expect_eq(h.major, 3);
  cr_expect_eq(h.dtype, C1D_NPY_F8);
}

Test(npy, rounds_float64_to_float32_only_when_allowed_and_counts_the_changes) {
  const double v[3] = {0.5, 0.1, -3.0};
  const int64_t n = 3;
  cr_assert_eq(c1d_npy_write_f64(path_of("d.npy"), v, 1, &n), C1D_OK);
  float *f = NULL;
  cr_expect_eq(c1d_npy_read_f32(path_of("d.npy"), 0, &f, NULL, NULL), C1D_ERR_FORMAT);
  cr_expect_null(f);
  cr_expect(strstr(c1d_error_detail(), "d.npy") != NULL);
  c1d_npy_conversion conv;
  cr_assert_eq(c1d_npy_read_f32(path_of("d.npy"), 1, &f, NULL, &conv), C1D_OK);
  cr_expect_eq(f[1], 0.1f);
  cr_expect_eq(conv.inexact, 1, "only 0.1 is not a float32");
  cr_expect(conv.max_rel_change > 0.0 && conv.max_rel_change < 1e-7);
  free(f);
}

Test(npy, refuses_float64_values_that_overflow_float32) {
  const double v[2] = {1.0, 1e300};
  const int64_t n = 2;
  cr_assert_eq(c1d_npy_write_f64(path_of("big.npy"), v, 1, &n), C1D_OK);
  float *f = NULL;
  cr_expect_eq(c1d_npy_read_f32(path_of("big.npy"), 1, &f, NULL, NULL), C1D_ERR_NONFINITE);
  cr_expect(strstr(c1d_error_detail(), "element 1") != NULL, "%s", c1d_error_detail());
  cr_expect_null(f);
}

// --- malformed files ---------------------------------------------------------------------------

/* Inline arrays, not pointers: Criterion may run each parameter in a fresh process (BoxFort), where
 * pointers into the parent's data would not be valid. */
typedef struct bad_case {
  char name[32];         /* file name, and what the test is about */
  int major;
  char dict[128];        /* "": raw bytes below */
  long hlen;             /* header length field override, or -1 */
  long data_bytes;
  char raw[16];          /* when dict is "": the whole file */
  size_t raw_len;
  c1d_status status;
  char message[48];      /* expected in the detail */
} bad_case;

#define F4_2x2 "'descr': '<f4', 'fortran_order': False, 'shape': (2, 2)"
static const bad_case bad_cases[] = {
    {"bad_magic", 0, "", -1, 0, "\x93NUMPX\x01\x00\x10\x00{}", 12, C1D_ERR_FORMAT, "bad magic"},
    {"empty", 0, "", -1, 0, "", 0, C1D_ERR_FORMAT, "bad magic"},
    {"version_4", 4, "{" F4_2x2 "}", -1, 16, "", 0, C1D_ERR_FORMAT, "version 4.0"},
    {"header_longer_than_file", 1, "{" F4_2x2 "}", 60000, 0, "", 0, C1D_ERR_FORMAT, "truncated .npy header"},
    {"absurd_header_length", 2, "{" F4_2x2 "}", 0x7ffffff0L, 0, "", 0, C1D_ERR_FORMAT, "absurd"},
    {"integer_dtype", 1, "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 2)}", -1, 16, "", 0,
     C1D_ERR_FORMAT, "unsupported dtype '<i4'"},
    {"big_endian", 1, "{'descr': '>f4', 'fortran_order': False, 'shape': (2, 2)}", -1, 16, "", 0,
     C1D_ERR_FORMAT, "big-endian"},
    {"fortran_order", 1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2)}", -1, 16, "", 0,
     C1D_ERR_FORMAT, "Fortran"},
    {"shape_overflow", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296)}",
     -1, 0, "", 0, C1D_ERR_FORMAT, "overflows"},
    {"huge_dimension", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}",
     -1, 0, "", 0, C1D_ERR_FORMAT, "too large"},
    {"negative_dimension", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (-2, 2)}", -1, 16, "",
     0, C1D_ERR_FORMAT, "bad shape dimension"},
    {"shape_as_list", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': [2, 2]}", -1, 16, "", 0,
     C1D_ERR_FORMAT, "not a tuple"},
    {"truncated_data", 1, "{" F4_2x2 "}", -1, 15, "", 0, C1D_ERR_FORMAT, "truncated data"},
    {"bytes_after_data", 1, "{" F4_2x2 "}", -1, 17, "", 0, C1D_ERR_FORMAT, "after the data"},
    {"garbage_after_dict", 1, "{" F4_2x2 "} junk", -1, 16, "", 0, C1D_ERR_FORMAT, "after the .npy header"},
    {"missing_shape", 1, "{'descr': '<f4', 'fortran_order': False}", -1, 16, "", 0, C1D_ERR_FORMAT,
     "lacks 'shape'"},
    {"extra_key", 1, "{" F4_2x2 ", 'extra': 1}", -1, 16, "", 0, C1D_ERR_FORMAT, "unexpected or repeated"},
    {"repeated_key", 1, "{" F4_2x2 ", 'descr': '<f4'}", -1, 16, "", 0, C1D_ERR_FORMAT,
     "unexpected or repeated"},
    {"unterminated_dict", 1, "{" F4_2x2, -1, 16, "", 0, C1D_ERR_FORMAT, "expected ',' or '}'"},
    {"not_a_dict", 1, "('<f4', False, (2, 2))", -1, 16, "", 0, C1D_ERR_FORMAT, "not a dict"},
};

ParameterizedTestParameters(npy, refuses_each_malformed_file_naming_it) {
  return cr_make_param_array(bad_case, bad_cases, sizeof bad_cases / sizeof bad_cases[0]);
}

ParameterizedTest(const bad_case *c, npy, refuses_each_malformed_file_naming_it) {
  char name[64];
  snprintf(name, sizeof name, "%s.npy", c->name);
  const char *p = path_of(name);
  if (c->dict[0]) {
    write_raw(p, c->major, c->dict, c->hlen, c->data_bytes);
  } else {
    FILE *f = fopen(p, "wb");
    cr_assert_not_null(f);
    fwrite(c->raw, 1, c->raw_len, f);
    fclose(f);
  }
  c1d_npy_header h;
  float *data = (float *)1;
  cr_expect_eq(c1d_npy_probe(p, &h), c->status, "%s: %s", c->name, c1d_error_detail());
  cr_expect(strstr(c1d_error_detail(), c->message) != NULL, "%s: '%s' lacks '%s'", c->name,
            c1d_error_detail(), c->message);
  cr_expect(strstr(c1d_error_detail(), name) != NULL, "the message names the file: %s",
            c1d_error_detail());
  cr_expect_eq(c1d_npy_read_f32(p, 1, &data, NULL, NULL), c->status);
  cr_expect_null(data, "a failed read leaves no data");
}

Test(npy, reports_a_missing_file_as_an_io_error_naming_it) {
  c1d_npy_header h;
  cr_expect_eq(c1d_npy_probe(path_of("absent.npy"), &h), C1D_ERR_IO);
  cr_expect(strstr(c1d_error_detail(), "absent.npy") != NULL);
}

// --- atomic writing ----------------------------------------------------------------------------

Test(npy, replaces_an_existing_file_and_leaves_no_temporary_file) {
  const float a[2] = {1, 2}, b[3] = {3, 4, 5};
  int64_t n = 2;
  cr_assert_eq(c1d_npy_write_f32(path_of("x.npy"), a, 1, &n), C1D_OK);
  n = 3;
  cr_assert_eq(c1d_npy_write_f32(path_of("x.npy"), b, 1, &n), C1D_OK);
  c1d_npy_header h;
  cr_assert_eq(c1d_npy_probe(path_of("x.npy"), &h), C1D_OK);
  cr_expect_eq(h.count, 3);
  cr_expect_eq(count_entries(dir), 1, "only x.npy remains");
}

Test(npy, fails_cleanly_when_the_directory_does_not_exist) {
  const float a[1] = {1};
  int64_t n = 1;
  cr_expect_eq(c1d_npy_write_f32(path_of("no/such/dir/x.npy"), a, 1, &n), C1D_ERR_IO);
  cr_expect(strstr(c1d_error_detail(), "x.npy") != NULL);
  cr_expect_eq(count_entries(dir), 0);
}

// --- NumPy itself ------------------------------------------------------------------------------

static int numpy_available(void) {
  return access("/usr/bin/python3", X_OK) == 0 &&
         system("/usr/bin/python3 -c 'import numpy' >/dev/null 2>&1") == 0;
}

static int run_script(const char *mode) {
  char cmd[512];
  snprintf(cmd, sizeof cmd, "/usr/bin/python3 %s/tests/npy_interop.py %s '%s'", C1D_SOURCE_DIR, mode,
           dir);
  return system(cmd);
}

Test(npy, loads_every_file_numpy_writes_with_identical_values) {
  if (!numpy_available()) cr_skip_test("/usr/bin/python3 has no NumPy (apt-get install python3-numpy)");
  cr_assert_eq(run_script("write"), 0);
  const struct { const char *file; int64_t count; int f8; } ok[] = {
      {"np_f4_v1.npy", 30, 0}, {"np_f8_v1.npy", 24, 1}, {"np_f4_v2.npy", 21, 0},
      {"np_f4_v3.npy", 21, 0}, {"np_vec.npy", 11, 0},
  };
  for (unsigned i = 0; i < sizeof ok / sizeof ok[0]; i++) {
    double *d = NULL;
    c1d_npy_header h;
    cr_assert_eq(c1d_npy_read_f64(path_of(ok[i].file), &d, &h), C1D_OK, "%s", c1d_error_detail());
    cr_expect_eq(h.count, ok[i].count, "%s", ok[i].file);
    for (int64_t k = 0; k < h.count; k++) {
      double want = ok[i].f8 ? f8_value(k) : (double)f4_value(k);
      cr_expect_eq(d[k], want, "%s[%lld]", ok[i].file, (long long)k);
    }
    free(d);
  }
  float *s = NULL;
  cr_assert_eq(c1d_npy_read_f32(path_of("np_scalar.npy"), 0, &s, NULL, NULL), C1D_OK);
  cr_expect_eq(s[0], 2.5f);
  free(s);
  cr_assert_eq(c1d_npy_read_f32(path_of("np_specials.npy"), 0, &s, NULL, NULL), C1D_OK);
  cr_expect(signbit(s[0]) && s[0] == 0.0f);
  cr_expect_eq(s[1], 0x1p-149f);
  cr_expect(isinf(s[2]) && isinf(s[3]) && isnan(s[4]));
  free(s);
  c1d_npy_header h;
  cr_expect_eq(c1d_npy_probe(path_of("np_fortran.npy"), &h), C1D_ERR_FORMAT);
  cr_expect_eq(c1d_npy_probe(path_of("np_int.npy"), &h), C1D_ERR_FORMAT);
  /* float16: converted exactly, subnormals, the largest normal, Inf and NaN included */
  cr_assert_eq(c1d_npy_read_f32(path_of("np_f2_v1.npy"), 0, &s, &h, NULL), C1D_OK, "%s", c1d_error_detail());
  cr_expect_eq(h.dtype, C1D_NPY_F2);
  cr_expect_eq(h.count, 30);
  for (int k = 0; k < 30; k++) cr_expect_eq(s[k], c1d_round_fp16(f4_value(k)), "np_f2_v1.npy[%d]", k);
  free(s);
  cr_assert_eq(c1d_npy_read_f32(path_of("np_f2_specials.npy"), 0, &s, NULL, NULL), C1D_OK);
  cr_expect(signbit(s[0]) && s[0] == 0.0f);
  cr_expect_eq(s[1], 0x1p-24f);
  cr_expect_eq(s[2], 65504.0f);
  cr_expect(isinf(s[3]) && isnan(s[4]));
  free(s);
  cr_expect_eq(c1d_npy_probe(path_of("np_big_endian.npy"), &h), C1D_ERR_FORMAT);
}

Test(npy, writes_files_numpy_loads_with_identical_values) {
  if (!numpy_available()) cr_skip_test("/usr/bin/python3 has no NumPy (apt-get install python3-numpy)");
  float f4[30], vec[11], scalar = 2.5f;
  double f8[24];
  for (int i = 0; i < 30; i++) f4[i] = f4_value(i);
  for (int i = 0; i < 11; i++) vec[i] = f4_value(i);
  for (int i = 0; i < 24; i++) f8[i] = f8_value(i);
  const float specials[7] = {-0.0f, 0x1p-149f, INFINITY, -INFINITY, NAN, 3.4028235e38f, 1.0f};
  const int64_t s3[3] = {2, 3, 5}, s8[3] = {4, 3, 2}, s11 = 11, s7 = 7;
  cr_assert_eq(c1d_npy_write_f32(path_of("c_f4.npy"), f4, 3, s3), C1D_OK);
  cr_assert_eq(c1d_npy_write_f64(path_of("c_f8.npy"), f8, 3, s8), C1D_OK);
  cr_assert_eq(c1d_npy_write_f32(path_of("c_vec.npy"), vec, 1, &s11), C1D_OK);
  cr_assert_eq(c1d_npy_write_f32(path_of("c_scalar.npy"), &scalar, 0, NULL), C1D_OK);
  cr_assert_eq(c1d_npy_write_f32(path_of("c_specials.npy"), specials, 1, &s7), C1D_OK);
  cr_assert_eq(c1d_npy_write_f16(path_of("c_f2.npy"), f4, 3, s3), C1D_OK); /* rounded to float16 */
  cr_expect_eq(run_script("check"), 0, "NumPy disagrees with convlab's files (see the line above)");
}

/* A header dict with control bytes is refused with `shown` (the bytes escaped) on one line. */
static void expect_refused_escaped(const char *name, const char *dict, const char *shown) {
  const char *path = path_of(name);
  write_raw(path, 1, dict, -1, 8);
  c1d_npy_header h;
  cr_assert_eq(c1d_npy_probe(path, &h), C1D_ERR_FORMAT);
  const char *d = c1d_error_detail();
  cr_expect(strstr(d, shown) != NULL, "%s", d);
  cr_expect_null(strchr(d, '\n'), "one line: %s", d);
  cr_expect_null(strchr(d, '\x1b'), "no escape byte reaches the terminal: %s", d);
}

Test(npy, shows_a_key_holding_a_newline_or_an_escape_sequence_escaped_on_one_line) {
  expect_refused_escaped("forged_key.npy",
                         "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'ke\ny\x1b[31m': 1, }",
                         "unexpected or repeated key 'ke\\ny\\x1b[31m'");
}

Test(npy, shows_a_dtype_holding_control_bytes_escaped_on_one_line) {
  expect_refused_escaped("forged_dtype.npy",
                         "{'descr': '<f\n4\x1b]0;title\x07', 'fortran_order': False, 'shape': (2,), }",
                         "unsupported dtype '<f\\n4\\x1b]0;title\\x07'");
}

/* 'descr': '<f4\x00' was read as '<f4' (the string ended at the NUL); NumPy refuses the header. */
Test(npy, refuses_a_string_holding_a_nul_byte) {
  const char *path = path_of("nul_dtype.npy");
  const char *dict = "{'descr': '<f4#', 'fortran_order': False, 'shape': (2,), }";
  write_raw(path, 1, dict, -1, 8);
  FILE *f = fopen(path, "r+b");
  cr_assert_not_null(f);
  const long at = 10 + (long)(strchr(dict, '#') - dict); /* after magic, version and length */
  cr_assert_eq(fseek(f, at, SEEK_SET), 0);
  fputc('\0', f);
  fclose(f);
  c1d_npy_header h;
  cr_assert_eq(c1d_npy_probe(path, &h), C1D_ERR_FORMAT, "the NUL was taken as the end of '<f4'");
  const char *d = c1d_error_detail();
  cr_expect(strstr(d, "NUL") != NULL && strstr(d, "nul_dtype.npy") != NULL, "%s", d);
  cr_expect_null(strchr(d, '\n'), "one line: %s", d);
}

/* Opening a FIFO for reading waits for a writer; the check must come first. */
Test(npy, refuses_a_fifo_at_once_as_not_a_regular_file, .timeout = 10) {
  const char *path = path_of("fifo.npy");
  cr_assert_eq(mkfifo(path, 0600), 0);
  c1d_npy_header h;
  cr_expect_eq(c1d_npy_probe(path, &h), C1D_ERR_IO);
  cr_expect(strstr(c1d_error_detail(), "not a regular file") != NULL, "%s", c1d_error_detail());
}
