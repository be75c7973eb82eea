/* safetensors: tensors of each dtype written and read back exactly; every malformed file (bad header
 * length, bad JSON, offsets past the end, overlapping tensors, holes, unknown dtype, shape against size,
 * a name twice, a FIFO) refused with one line naming the problem. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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
  c1d_st_file st;
  cr_assert_eq(c1d_st_read(path, &st), C1D_OK, "%s", c1d_error_detail());
  cr_assert_eq(st.n, 1);
  cr_expect_eq(st.tensors[0].ndim, 0);
  cr_expect_eq(st.tensors[0].data[0], 7.0f);
  c1d_st_free(&st);
}
