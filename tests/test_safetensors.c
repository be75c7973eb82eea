/* safetensors: tensors of each dtype written and read back exactly, also past the reader's 1 MiB read
 * buffer; every malformed file (bad header length, bad JSON, junk after it, control bytes or a NUL in it,
 * a __metadata__ of anything but strings, offsets past the end, overlapping tensors, holes, unknown
 * dtype, shape against size, a name twice, a FIFO) refused with one line naming the problem; a 3 GB file
 * of zeros refused from its first bytes, reading none of the rest. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "harness/safetensors.h"
#include "reference/dtype.h"

static char dir[64], path[128];

static void make_dir(void) {
  snprintf(dir, sizeof dir, "/tmp/c1d-st-XXXXXX");
  cr_assert_not_null(mkdtemp(dir));
  snprintf(path, sizeof path, "%s/t.safetensors", dir);
}

static void remove_dir(void) {
  unlink(path);
  rmdir(dir);
}

TestSuite(safetensors, .init = make_dir, .fini = remove_dir);

/* A file from a header text and data bytes. */
static void write_raw(const char *header, const void *data, size_t n, uint64_t declared) {
  FILE *f = fopen(path, "wb");
  cr_assert_not_null(f);
  const uint64_t len = declared ? declared : strlen(header);
  unsigned char b[8];
  for (int i = 0; i < 8; i++) b[i] = (unsigned char)(len >> (8 * i));
  fwrite(b, 1, 8, f);
  fwrite(header, 1, strlen(header), f);
  if (n) fwrite(data, 1, n, f);
  fclose(f);
}

static void expect_refused(const char *what) {
  c1d_st_file st;
  cr_assert_neq(c1d_st_read(path, &st), C1D_OK, "%s was read", what);
  cr_expect(strstr(c1d_error_detail(), what) != NULL, "expected '%s' in: %s", what, c1d_error_detail());
  cr_expect(strchr(c1d_error_detail(), '\n') == NULL, "one line: %s", c1d_error_detail());
}

/* The file at path reads as one tensor holding the single value 7 (why: what the case is). */
static void expect_reads_seven(const char *why) {
  c1d_st_file st;
  cr_assert_eq(c1d_st_read(path, &st), C1D_OK, "%s: %s", why, c1d_error_detail());
  cr_assert_eq(st.n, 1, "%s", why);
  cr_expect_eq(st.tensors[0].data[0], 7.0f, "%s", why);
  c1d_st_free(&st);
}

Test(safetensors, each_dtype_round_trips_exactly) {
  float a[6] = {1.5f, -2.25f, 3e-3f, 0.0f, -0.0f, 65504.0f}, b[6], c[6];
  for (int i = 0; i < 6; i++) {
    b[i] = c1d_round_bf16(a[i] * 1.01f);
    c[i] = c1d_round_fp16(a[i] * 0.99f);
  }
  c[2] = 0x1p-24f; /* an fp16 subnormal */
  c1d_st_tensor t[3] = {{"x", C1D_DTYPE_F32, 2, {2, 3}, 6, a},
                        {"w", C1D_DTYPE_BF16, 3, {1, 2, 3}, 6, b},
                        {"y", C1D_DTYPE_F16, 1, {6}, 6, c}};
  cr_assert_eq(c1d_st_write(path, t, 3), C1D_OK, "%s", c1d_error_detail());
  c1d_st_file st;
  cr_assert_eq(c1d_st_read(path, &st), C1D_OK, "%s", c1d_error_detail());
  cr_assert_eq(st.n, 3);
  for (int k = 0; k < 3; k++) {
    const c1d_st_tensor *r = c1d_st_find(&st, t[k].name);
    cr_assert_not_null(r, "%s", t[k].name);
    cr_expect_eq(r->dtype, t[k].dtype);
    cr_expect_eq(r->ndim, t[k].ndim);
    cr_expect_eq(r->count, 6);
    for (int i = 0; i < 6; i++)
      cr_expect(!memcmp(&r->data[i], &t[k].data[i], 4), "%s[%d]: %a against %a", t[k].name, i, r->data[i],
                t[k].data[i]);
  }
  c1d_st_free(&st);
}

Test(safetensors, refuses_a_header_length_past_the_end) {
  write_raw("{}", NULL, 0, 4096);
  expect_refused("beyond the file");
}

Test(safetensors, refuses_a_header_that_is_not_json) {
  write_raw("{\"x\": [1, 2", NULL, 0, 0);
  expect_refused("not a JSON object");
}

Test(safetensors, refuses_offsets_past_the_end) {
  const float v[2] = {1, 2};
  write_raw("{\"x\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]}}", v, sizeof v, 0);
  expect_refused("past its end");
}

Test(safetensors, refuses_overlapping_tensors) {
  const float v[2] = {1, 2};
  write_raw("{\"x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
            "\"y\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}",
            v, sizeof v, 0);
  expect_refused("overlaps");
}

Test(safetensors, refuses_bytes_no_tensor_owns) {
  const float v[3] = {1, 2, 3};
  write_raw("{\"x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", v, sizeof v, 0);
  expect_refused("belong to no tensor");
}

Test(safetensors, refuses_an_unknown_dtype_naming_it_escaped) {
  const float v[1] = {1};
  write_raw("{\"x\":{\"dtype\":\"Q\\n7\",\"shape\":[1],\"data_offsets\":[0,4]}}", v, sizeof v, 0);
  expect_refused("dtype 'Q\\n7'");
}

Test(safetensors, refuses_a_size_that_disagrees_with_the_shape) {
  const float v[2] = {1, 2};
  write_raw("{\"x\":{\"dtype\":\"BF16\",\"shape\":[2],\"data_offsets\":[0,8]}}", v, sizeof v, 0);
  expect_refused("its shape and dtype need 4");
}

Test(safetensors, refuses_a_negative_shape) {
  const float v[1] = {1};
  write_raw("{\"x\":{\"dtype\":\"F32\",\"shape\":[-1],\"data_offsets\":[0,4]}}", v, sizeof v, 0);
  expect_refused("not a size");
}

/* Found by fuzz_safetensors under UBSan: a number beyond int64_t's range was cast before it was checked. */
Test(safetensors, refuses_sizes_and_offsets_beyond_any_integer) {
  const float v[1] = {1};
  write_raw("{\"x\":{\"dtype\":\"F32\",\"shape\":[1e24],\"data_offsets\":[0,4]}}", v, sizeof v, 0);
  expect_refused("not a size");
  write_raw("{\"x\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,1e24]}}", v, sizeof v, 0);
  expect_refused("data_offsets that are not");
  write_raw("{\"x\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[-1e24,4]}}", v, sizeof v, 0);
  expect_refused("data_offsets that are not");
}

Test(safetensors, refuses_a_name_given_twice) {
  const float v[2] = {1, 2};
  write_raw("{\"x\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
            "\"x\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}",
            v, sizeof v, 0);
  expect_refused("named twice");
}

Test(safetensors, refuses_a_fifo_without_waiting) {
  unlink(path);
  cr_assert_eq(mkfifo(path, 0600), 0);
  expect_refused("not a regular file");
}

Test(safetensors, ignores_the_metadata_entry) {
  const float v[1] = {7};
  write_raw("{\"__metadata__\":{\"format\":\"pt\"},\"x\":{\"dtype\":\"F32\",\"shape\":[],\"data_offsets\":[0,4]}}",
            v, sizeof v, 0);
  expect_reads_seven("a scalar beside __metadata__");
  c1d_st_file st;
  cr_assert_eq(c1d_st_open(path, &st), C1D_OK, "%s", c1d_error_detail());
  cr_expect_eq(st.tensors[0].ndim, 0);
  c1d_st_free(&st);
}

// --- what cJSON takes but JSON and the format do not ---------------------------------------------

Test(safetensors, refuses_junk_after_the_header_object_but_takes_space_padding) {
  const float v[1] = {7};
  write_raw("{\"x\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}x", v, sizeof v, 0);
  expect_refused("bytes after its JSON object (only spaces may pad it)");
  write_raw("{\"x\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}{}", v, sizeof v, 0);
  expect_refused("bytes after its JSON object (only spaces may pad it)");
  write_raw("{\"x\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}     ", v, sizeof v, 0);
  expect_reads_seven("the writer's space padding");
}

/* cJSON ends a string at its \u0000: "y\u0000zz" was read as the tensor y. */
Test(safetensors, refuses_a_name_or_dtype_holding_a_nul) {
  const float v[1] = {7};
  write_raw("{\"y\\u0000zz\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", v, sizeof v, 0);
  expect_refused("\\u0000");
  write_raw("{\"y\":{\"dtype\":\"F32\\u0000x\",\"shape\":[1],\"data_offsets\":[0,4]}}", v, sizeof v, 0);
  expect_refused("\\u0000");
  /* An escaped backslash before u0000 is text, not a NUL. */
  write_raw("{\"y\\\\u0000\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", v, sizeof v, 0);
  c1d_st_file st;
  cr_assert_eq(c1d_st_read(path, &st), C1D_OK, "%s", c1d_error_detail());
  cr_expect_str_eq(st.tensors[0].name, "y\\u0000");
  c1d_st_free(&st);
}

Test(safetensors, refuses_control_bytes_in_the_header) {
  const float v[1] = {7};
  write_raw("{\"x\x01\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", v, sizeof v, 0);
  expect_refused("control byte 0x01");
  write_raw("\n{\"x\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", v, sizeof v, 0);
  expect_refused("first byte is not '{'");
}

Test(safetensors, refuses_metadata_that_is_not_an_object_of_strings) {
  const float v[1] = {7};
  write_raw("{\"__metadata__\":42,\"x\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", v,
            sizeof v, 0);
  expect_refused("__metadata__ must be an object of string values");
  write_raw("{\"__metadata__\":{\"a\":1},\"x\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", v,
            sizeof v, 0);
  expect_refused("__metadata__ must be an object of string values");
}

// --- reading no more than the header says -------------------------------------------------------

/* `truncate -s 3G`: 3 GB of zeros, an empty header. It was read whole first (3.3 GB, 15.8 s). */
Test(safetensors, refuses_a_3_gb_file_of_zeros_from_its_first_bytes) {
  FILE *f = fopen(path, "wb");
  cr_assert_not_null(f);
  fclose(f);
  cr_assert_eq(truncate(path, 3LL << 30), 0, "a sparse file");
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  expect_refused("header");
  clock_gettime(CLOCK_MONOTONIC, &t1);
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru); /* this test's own process (Criterion runs each in one) */
  cr_expect_lt(ru.ru_maxrss, 64 * 1024, "peak RSS %ld kB: the file was read", ru.ru_maxrss);
  const double s = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
  cr_expect_lt(s, 2.0, "%.2f s to refuse it", s); /* loose: 1 ms here */
}

/* c1d_st_open reads the header alone: a valid header over 3 GB of data costs nothing until loaded. */
Test(safetensors, opens_a_header_without_reading_its_data) {
  write_raw("{\"x\":{\"dtype\":\"F32\",\"shape\":[3,268435456],\"data_offsets\":[0,3221225472]}}", NULL, 0, 0);
  struct stat sb;
  cr_assert_eq(stat(path, &sb), 0);
  cr_assert_eq(truncate(path, sb.st_size + (3LL << 30)), 0);
  c1d_st_file st;
  cr_assert_eq(c1d_st_open(path, &st), C1D_OK, "%s", c1d_error_detail());
  cr_expect_eq(st.n, 1);
  cr_expect_eq(st.tensors[0].count, 805306368);
  cr_expect_null(st.tensors[0].data);
  c1d_st_free(&st);
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  cr_expect_lt(ru.ru_maxrss, 64 * 1024, "peak RSS %ld kB", ru.ru_maxrss);
}

/* The float32 buffers are weighed against the memory left (here `ulimit -v`) before a byte of data is
 * read: an 8 GB bf16 case, 16 GB as float32, was read whole and then killed. */
Test(safetensors, refuses_tensors_beyond_the_memory_left_before_reading_them) {
  write_raw("{\"x\":{\"dtype\":\"BF16\",\"shape\":[1610612736],\"data_offsets\":[0,3221225472]}}", NULL, 0, 0);
  struct stat sb;
  cr_assert_eq(stat(path, &sb), 0);
  cr_assert_eq(truncate(path, sb.st_size + (3LL << 30)), 0);
  FILE *f = fopen("/proc/self/statm", "r");
  unsigned long long pages = 0;
  cr_assert(f && fscanf(f, "%llu", &pages) == 1);
  fclose(f);
  const rlim_t limit = (rlim_t)pages * (rlim_t)sysconf(_SC_PAGESIZE) + (1u << 30);
  cr_assert_eq(setrlimit(RLIMIT_AS, &(struct rlimit){limit, limit}), 0); /* this test's process only */
  expect_refused("the address-space limit (ulimit -v) leaves");
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  cr_expect_lt(ru.ru_maxrss, 64 * 1024, "peak RSS %ld kB", ru.ru_maxrss);
}

/* Tensors larger than the reader's 1 MiB buffer, each dtype: every chunk lands where it belongs. */
Test(safetensors, reads_tensors_larger_than_its_read_buffer_exactly) {
  enum { COUNT = 700001 }; /* 2.8 MB as F32, 1.4 MB as BF16 and F16; not a multiple of any chunk */
  float *a = malloc(COUNT * sizeof *a), *b = malloc(COUNT * sizeof *b), *c = malloc(COUNT * sizeof *c);
  cr_assert(a && b && c);
  for (int i = 0; i < COUNT; i++) {
    a[i] = (float)i * 0.25f - 1000.0f;
    b[i] = c1d_round_bf16((float)(i % 977) - 400.0f);
    c[i] = c1d_round_fp16((float)(i % 2039) * 0.5f);
  }
  c1d_st_tensor t[3] = {{"a", C1D_DTYPE_F32, 1, {COUNT}, COUNT, a},
                        {"b", C1D_DTYPE_BF16, 1, {COUNT}, COUNT, b},
                        {"c", C1D_DTYPE_F16, 1, {COUNT}, COUNT, c}};
  cr_assert_eq(c1d_st_write(path, t, 3), C1D_OK, "%s", c1d_error_detail());
  c1d_st_file st;
  cr_assert_eq(c1d_st_read(path, &st), C1D_OK, "%s", c1d_error_detail());
  for (int k = 0; k < 3; k++) {
    const c1d_st_tensor *r = c1d_st_find(&st, t[k].name);
    cr_assert_not_null(r);
    cr_expect(!memcmp(r->data, t[k].data, COUNT * sizeof(float)), "tensor %s differs", t[k].name);
  }
  c1d_st_free(&st);
  free(a), free(b), free(c);
}
