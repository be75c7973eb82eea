/* libconvlab (include/convlab/convlab.h) as its users have it: linked as the shared library, nothing of
 * the internals. A correct kernel (this file's own float32 loop, a sum in order: no library's arithmetic)
 * is fp32-rounding; a planted bug is a bug, with its region; the result says what convlab explain says on
 * the same tensors, text and JSON, word for word; bad arguments are a status and a one-line message
 * naming the problem; handles come and go without leaks (the sanitizer build checks); device memory
 * gives the verdict of host memory (skipped without a GPU). */
#include <criterion/criterion.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "convlab/convlab.h"
#include "convlab/criterion.h"

#ifdef C1D_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

// --- a problem and a correct kernel --------------------------------------------------------------

typedef struct sizes {
  int64_t N, C, O, L, K, D;
  int bias;
} sizes;

typedef struct tensors {
  sizes z;
  float *x, *w, *b, *y;
} tensors;

/* splitmix64: the same values on every machine. */
static double uniform(uint64_t *state) {
  uint64_t v = (*state += 0x9e3779b97f4a7c15ull);
  v = (v ^ (v >> 30)) * 0xbf58476d1ce4e5b9ull;
  v = (v ^ (v >> 27)) * 0x94d049bb133111ebull;
  v ^= v >> 31;
  return (double)(v >> 11) * 0x1p-53 * 2.0 - 1.0; /* [-1, 1) */
}

/* y[n,o,t] = b[o] + sum_c sum_k w[o,c,k] x[n,c,t-(K-1-k)D]: a float32 sum in order, a correct kernel. */
static void conv_in_order(const sizes *z, const float *x, const float *w, const float *b, float *y) {
  for (int64_t n = 0; n < z->N; n++)
    for (int64_t o = 0; o < z->O; o++)
      for (int64_t t = 0; t < z->L; t++) {
        float acc = b ? b[o] : 0.0f;
        for (int64_t c = 0; c < z->C; c++)
          for (int64_t k = 0; k < z->K; k++) {
            const int64_t src = t - (z->K - 1 - k) * z->D;
            if (src >= 0) acc += w[(o * z->C + c) * z->K + k] * x[(n * z->C + c) * z->L + src];
          }
        y[(n * z->O + o) * z->L + t] = acc;
      }
}

static tensors make(sizes z, uint64_t seed) {
  tensors t = {z, NULL, NULL, NULL, NULL};
  t.x = malloc((size_t)(z.N * z.C * z.L) * sizeof(float));
  t.w = malloc((size_t)(z.O * z.C * z.K) * sizeof(float));
  t.b = malloc((size_t)z.O * sizeof(float));
  t.y = malloc((size_t)(z.N * z.O * z.L) * sizeof(float));
  cr_assert(t.x && t.w && t.b && t.y);
  for (int64_t i = 0; i < z.N * z.C * z.L; i++) t.x[i] = (float)uniform(&seed);
  for (int64_t i = 0; i < z.O * z.C * z.K; i++) t.w[i] = (float)(uniform(&seed) / sqrt((double)(z.C * z.K)));
  for (int64_t i = 0; i < z.O; i++) t.b[i] = (float)(0.1 * uniform(&seed));
  conv_in_order(&z, t.x, t.w, z.bias ? t.b : NULL, t.y);
  return t;
}

static void release(tensors *t) {
  free(t->x);
  free(t->w);
  free(t->b);
  free(t->y);
}

static convlab_problem *problem_of(const sizes *z) {
  convlab_problem *p = NULL;
  cr_assert_eq(convlab_problem_create(&p, z->N, z->C, z->O, z->L, z->K), CONVLAB_OK, "%s", convlab_last_error());
  cr_assert_eq(convlab_problem_set_dilation(p, z->D), CONVLAB_OK, "%s", convlab_last_error());
  cr_assert_eq(convlab_problem_set_bias(p, z->bias), CONVLAB_OK, "%s", convlab_last_error());
  return p;
}

static convlab_result *explain(const convlab_problem *p, const tensors *t) {
  convlab_result *r = NULL;
  const convlab_status st = convlab_explain(p, t->x, t->w, t->z.bias ? t->b : NULL, NULL, t->y, &r);
  cr_assert_eq(st, CONVLAB_OK, "convlab_explain: %s: %s", convlab_status_name(st), convlab_last_error());
  cr_assert_not_null(r);
  return r;
}

/* Dense, a bias, dilation 2, a length that is no multiple of a tile. */
static const sizes SMALL = {2, 16, 8, 200, 4, 2, 1};

/* The planted bug: tap 0 of input channel 0 skipped for output channel 5 at the last 4 positions of each
 * 64-wide tile, as a kernel that mishandles a tile's edge would. */
static void plant_bug(tensors *t) {
  const sizes *z = &t->z;
  for (int64_t n = 0; n < z->N; n++)
    for (int64_t tt = 0; tt < z->L; tt++) {
      const int64_t src = tt - (z->K - 1) * z->D;
      if (tt % 64 < 60 || src < 0) continue;
      t->y[(n * z->O + 5) * z->L + tt] -= t->w[(5 * z->C + 0) * z->K + 0] * t->x[(n * z->C + 0) * z->L + src];
    }
}

// --- verdicts ----------------------------------------------------------------------------------------

Test(library, calls_a_correct_float32_loop_fp32_rounding) {
  tensors t = make(SMALL, 1);
  convlab_problem *p = problem_of(&t.z);
  convlab_result *r = explain(p, &t);
  cr_assert_eq(convlab_result_verdict(r), CONVLAB_FP32_ROUNDING, "%s", convlab_result_text(r));
  cr_assert_str_eq(convlab_verdict_name(convlab_result_verdict(r)), "fp32-rounding");
  cr_assert_str_eq(convlab_result_where(r), "");
  cr_assert_str_eq(convlab_result_region(r), "", "no offending element: no region");
  cr_assert(strstr(convlab_result_headline(r), "Not a bug") == convlab_result_headline(r), "%s",
            convlab_result_headline(r));
  const double limit = convlab_result_detection_limit(r);
  cr_assert(isfinite(limit) && limit > 0 && limit < 1e-3, "detection limit %g", limit);
  cr_assert(strstr(convlab_result_reason(r), "detection limit") != NULL, "%s", convlab_result_reason(r));
  convlab_result_destroy(r);
  convlab_problem_destroy(p);
  release(&t);
}

Test(library, finds_a_planted_bug_and_says_where) {
  tensors t = make(SMALL, 2);
  plant_bug(&t);
  convlab_problem *p = problem_of(&t.z);
  convlab_result *r = explain(p, &t);
  cr_assert_eq(convlab_result_verdict(r), CONVLAB_BUG_LOCALIZED, "%s", convlab_result_text(r));
  cr_assert(strstr(convlab_result_headline(r), "(bug-localized).") != NULL, "%s", convlab_result_headline(r));
  cr_assert(strstr(convlab_result_region(r), "o 5,") != NULL, "the region names channel 5: %s", convlab_result_region(r));
  cr_assert(strstr(convlab_result_region(r), "t 60-63,124-127,188-191") != NULL, "the tile edges: %s",
            convlab_result_region(r));
  convlab_result_destroy(r);
  convlab_problem_destroy(p);
  release(&t);
}

Test(library, reads_bf16_bits_and_the_nlc_layout) {
  /* The same correct output, given as bf16 inputs (x, w, b rounded first: the problem's values) and y
   * rounded once to bf16, in the channel-last layout. */
  tensors t = make(SMALL, 3);
  const sizes *z = &t.z;
  const int64_t nx = z->N * z->C * z->L, nw = z->O * z->C * z->K, ny = z->N * z->O * z->L;
  uint16_t *xb = malloc((size_t)nx * 2), *wb = malloc((size_t)nw * 2), *bb = malloc((size_t)z->O * 2),
           *yb = malloc((size_t)ny * 2);
  cr_assert(xb && wb && bb && yb);
  /* bf16 by truncation is exact here: the float32 values are rounded to bf16 first, then conv'd. */
  float *arrays[3] = {t.x, t.w, t.b};
  const int64_t counts[3] = {nx, nw, z->O};
  for (int a = 0; a < 3; a++)
    for (int64_t i = 0; i < counts[a]; i++) {
      uint32_t u;
      memcpy(&u, &arrays[a][i], 4);
      u = (u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u; /* to nearest, ties to even (finite values) */
      memcpy(&arrays[a][i], &u, 4);
    }
  conv_in_order(z, t.x, t.w, t.b, t.y);
  for (int64_t n = 0; n < z->N; n++) /* x (N, L, C), y (N, L, O) */
    for (int64_t tt = 0; tt < z->L; tt++) {
      for (int64_t c = 0; c < z->C; c++) {
        uint32_t u;
        memcpy(&u, &t.x[(n * z->C + c) * z->L + tt], 4);
        xb[(n * z->L + tt) * z->C + c] = (uint16_t)(u >> 16);
      }
      for (int64_t o = 0; o < z->O; o++) {
        uint32_t u;
        memcpy(&u, &t.y[(n * z->O + o) * z->L + tt], 4);
        yb[(n * z->L + tt) * z->O + o] = (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
      }
    }
  for (int64_t i = 0; i < nw; i++) {
    uint32_t u;
    memcpy(&u, &t.w[i], 4);
    wb[i] = (uint16_t)(u >> 16);
  }
  for (int64_t i = 0; i < z->O; i++) {
    uint32_t u;
    memcpy(&u, &t.b[i], 4);
    bb[i] = (uint16_t)(u >> 16);
  }
  convlab_problem *p = problem_of(z);
  cr_assert_eq(convlab_problem_set_dtype(p, CONVLAB_ALL, CONVLAB_BF16), CONVLAB_OK);
  cr_assert_eq(convlab_problem_set_layout(p, CONVLAB_NLC), CONVLAB_OK);
  convlab_result *r = NULL;
  cr_assert_eq(convlab_explain(p, xb, wb, bb, NULL, yb, &r), CONVLAB_OK, "%s", convlab_last_error());
  cr_assert_eq(convlab_result_verdict(r), CONVLAB_FP32_ROUNDING, "%s", convlab_result_text(r));
  cJSON *j = cJSON_Parse(convlab_result_json(r));
  cr_assert_not_null(j);
  const cJSON *pr = cJSON_GetObjectItem(j, "problem");
  cr_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(pr, "layout")), "nlc");
  cJSON_Delete(j);
  convlab_result_destroy(r);
  convlab_problem_destroy(p);
  free(xb);
  free(wb);
  free(bb);
  free(yb);
  release(&t);
}

Test(library, json_parses_and_its_verdict_is_the_results) {
  tensors t = make(SMALL, 4);
  plant_bug(&t);
  convlab_problem *p = problem_of(&t.z);
  convlab_result *r = explain(p, &t);
  cJSON *j = cJSON_Parse(convlab_result_json(r));
  cr_assert_not_null(j, "not JSON: %s", convlab_result_json(r));
  cr_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(j, "verdict")),
                   convlab_verdict_name(convlab_result_verdict(r)));
  cr_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(j, "name")), "y");
  cr_assert_null(cJSON_GetObjectItem(j, "files"), "tensors in memory have no files");
  cr_assert_not_null(cJSON_GetObjectItem(j, "metrics"));
  cJSON_Delete(j);
  convlab_result_destroy(r);
  convlab_problem_destroy(p);
  release(&t);
}

// --- the library says what convlab explain says --------------------------------------------------

/* t as a safetensors case (x, w, b, y; float32) at path: what convlab explain --case reads. */
static void write_case(const char *path, const tensors *t) {
  const sizes *z = &t->z;
  const struct { const char *name; const float *v; int64_t shape[3]; int ndim; } e[4] = {
      {"x", t->x, {z->N, z->C, z->L}, 3}, {"w", t->w, {z->O, z->C, z->K}, 3}, {"b", t->b, {z->O}, 1},
      {"y", t->y, {z->N, z->O, z->L}, 3}};
  char header[1024];
  size_t len = 0, offset = 0;
  len += (size_t)snprintf(header + len, sizeof header - len, "{");
  for (int i = 0; i < 4; i++) {
    int64_t count = 1;
    for (int d = 0; d < e[i].ndim; d++) count *= e[i].shape[d];
    len += (size_t)snprintf(header + len, sizeof header - len, "%s\"%s\":{\"dtype\":\"F32\",\"shape\":[", i ? "," : "",
                            e[i].name);
    for (int d = 0; d < e[i].ndim; d++)
      len += (size_t)snprintf(header + len, sizeof header - len, "%s%lld", d ? "," : "", (long long)e[i].shape[d]);
    len += (size_t)snprintf(header + len, sizeof header - len, "],\"data_offsets\":[%zu,%zu]}", offset,
                            offset + (size_t)count * 4);
    offset += (size_t)count * 4;
  }
  len += (size_t)snprintf(header + len, sizeof header - len, "}");
  while (len % 8) header[len++] = ' ';
  FILE *f = fopen(path, "wb");
  cr_assert_not_null(f);
  const uint64_t n = len; /* little-endian, as on every machine this runs on */
  fwrite(&n, 8, 1, f);
  fwrite(header, 1, len, f);
  for (int i = 0; i < 4; i++) {
    int64_t count = 1;
    for (int d = 0; d < e[i].ndim; d++) count *= e[i].shape[d];
    fwrite(e[i].v, 4, (size_t)count, f);
  }
  cr_assert_eq(fclose(f), 0);
}

/* What `convlab explain --case path [--json]` prints (malloc'd). */
static char *program_output(const char *path, const char *flags) {
  char command[1024], *out = NULL;
  size_t len = 0;
  snprintf(command, sizeof command, "'%s/harness/convlab' explain --case '%s' %s", C1D_BINARY_DIR, path, flags);
  FILE *p = popen(command, "r");
  cr_assert_not_null(p);
  FILE *m = open_memstream(&out, &len);
  char buf[4096];
  size_t got;
  while ((got = fread(buf, 1, sizeof buf, p)) > 0) fwrite(buf, 1, got, m);
  fclose(m);
  cr_assert_eq(pclose(p), 0, "%s failed: %s", command, out);
  return out;
}

static void says_what_the_program_says(uint64_t seed, int bug) {
  tensors t = make(SMALL, seed);
  if (bug) plant_bug(&t);
  char dir[] = "/tmp/c1d_lib_XXXXXX", path[64];
  cr_assert_not_null(mkdtemp(dir));
  snprintf(path, sizeof path, "%s/case.safetensors", dir);
  write_case(path, &t);
  char *text = program_output(path, "--dilation 2"), *json = program_output(path, "--dilation 2 --json");
  unlink(path);
  rmdir(dir);
  convlab_problem *p = problem_of(&t.z);
  convlab_result *r = explain(p, &t);
  cr_assert_str_eq(convlab_result_text(r), text, "the library's text:\n%s\nthe program's:\n%s", convlab_result_text(r),
                   text);
  cr_assert(strncmp(text, convlab_result_headline(r), strlen(convlab_result_headline(r))) == 0);
  cJSON *mine = cJSON_Parse(convlab_result_json(r)), *theirs = cJSON_Parse(json);
  cr_assert(mine && theirs);
  cJSON_DeleteItemFromObject(theirs, "files"); /* where the program read the tensors, and their name */
  cJSON_ReplaceItemInObject(theirs, "name", cJSON_CreateString("y"));
  cr_assert(cJSON_Compare(mine, theirs, 1), "the library's JSON:\n%s\nthe program's:\n%s", convlab_result_json(r), json);
  cJSON_Delete(mine);
  cJSON_Delete(theirs);
  free(text);
  free(json);
  convlab_result_destroy(r);
  convlab_problem_destroy(p);
  release(&t);
}

Test(library, says_what_convlab_explain_says_on_a_correct_output) { says_what_the_program_says(5, 0); }

Test(library, says_what_convlab_explain_says_on_a_bug) { says_what_the_program_says(6, 1); }

// --- bad arguments: a status and one line naming the problem --------------------------------------

/* The call failed with st, and the message holds want on one line. */
static void refused(convlab_status got, convlab_status st, const char *want) {
  cr_assert_eq(got, st, "status %s (%s), expected %s", convlab_status_name(got), convlab_last_error(),
               convlab_status_name(st));
  cr_assert(strstr(convlab_last_error(), want) != NULL, "'%s' does not say '%s'", convlab_last_error(), want);
  cr_assert(strchr(convlab_last_error(), '\n') == NULL, "one line: %s", convlab_last_error());
}

Test(library, refuses_null_pointers_by_name) {
  tensors t = make(SMALL, 7);
  convlab_problem *p = problem_of(&t.z);
  convlab_result *r = (convlab_result *)&t; /* set to NULL on failure */
  refused(convlab_explain(p, NULL, t.w, t.b, NULL, t.y, &r), CONVLAB_ERR_INVALID_ARGUMENT, "x is NULL");
  cr_assert_null(r);
  refused(convlab_explain(p, t.x, t.w, NULL, NULL, t.y, &r), CONVLAB_ERR_INVALID_ARGUMENT,
          "b is NULL but the problem needs it (convlab_problem_set_bias)");
  refused(convlab_explain(p, t.x, t.w, t.b, t.x, t.y, &r), CONVLAB_ERR_INVALID_ARGUMENT,
          "initial_states is given but the problem has none");
  refused(convlab_explain(p, t.x, t.w, t.b, NULL, NULL, &r), CONVLAB_ERR_INVALID_ARGUMENT, "y is NULL");
  refused(convlab_explain(NULL, t.x, t.w, t.b, NULL, t.y, &r), CONVLAB_ERR_INVALID_ARGUMENT, "the problem is NULL");
  refused(convlab_explain(p, t.x, t.w, t.b, NULL, t.y, NULL), CONVLAB_ERR_INVALID_ARGUMENT, "out is NULL");
  refused(convlab_problem_create(NULL, 1, 1, 1, 1, 1), CONVLAB_ERR_INVALID_ARGUMENT, "out is NULL");
  refused(convlab_problem_set_bias(NULL, 1), CONVLAB_ERR_INVALID_ARGUMENT, "the problem is NULL");
  convlab_problem_destroy(p);
  release(&t);
}

Test(library, refuses_a_wrong_shape_and_keeps_the_problem_as_it_was) {
  convlab_problem *p = (convlab_problem *)&p;
  refused(convlab_problem_create(&p, 2, 0, 8, 100, 4), CONVLAB_ERR_INVALID_SHAPE, "C (in-channels) must be positive (got 0)");
  cr_assert_null(p);
  tensors t = make(SMALL, 8);
  p = problem_of(&t.z);
  refused(convlab_problem_set_groups(p, 3), CONVLAB_ERR_INVALID_SHAPE, "groups G=3 must divide C=16 and O=8");
  refused(convlab_problem_set_dilation(p, 0), CONVLAB_ERR_INVALID_SHAPE, "D (dilation) must be positive (got 0)");
  refused(convlab_problem_set_dtype(p, CONVLAB_X, (convlab_dtype)7), CONVLAB_ERR_INVALID_ARGUMENT, "dtype must be");
  refused(convlab_problem_set_activation(p, (convlab_activation)5), CONVLAB_ERR_INVALID_ARGUMENT,
          "activation must be");
  convlab_result *r = explain(p, &t); /* still the problem it was: dense, D=2, float32 */
  cr_assert_eq(convlab_result_verdict(r), CONVLAB_FP32_ROUNDING, "%s", convlab_result_text(r));
  convlab_result_destroy(r);
  convlab_problem_destroy(p);
  convlab_problem *one = NULL;
  cr_assert_eq(convlab_problem_create(&one, 1, 4, 4, 8, 1), CONVLAB_OK);
  refused(convlab_problem_set_initial_states(one, 1), CONVLAB_ERR_INVALID_SHAPE, "initial states need a history");
  convlab_problem_destroy(one);
  release(&t);
}

Test(library, refuses_sizes_that_overflow) {
  convlab_problem *p = NULL;
  refused(convlab_problem_create(&p, INT64_C(1) << 30, INT64_C(1) << 20, 8, INT64_C(1) << 20, 4), CONVLAB_ERR_OVERFLOW,
          "element count of x (N*C*L) exceeds the limit");
  refused(convlab_problem_create(&p, 1, 1, 1, INT64_MAX, 2), CONVLAB_ERR_OVERFLOW, "exceeds the limit");
  cr_assert_eq(convlab_problem_create(&p, 1, 4, 4, 8, 3), CONVLAB_OK);
  refused(convlab_problem_set_dilation(p, INT64_C(1) << 40), CONVLAB_ERR_INVALID_SHAPE, "receptive field (K-1)*D is too large");
  convlab_problem_destroy(p);
}

Test(library, refuses_a_nan_input_as_the_program_does) {
  tensors t = make(SMALL, 9);
  t.x[3] = NAN;
  convlab_problem *p = problem_of(&t.z);
  convlab_result *r = NULL;
  refused(convlab_explain(p, t.x, t.w, t.b, NULL, t.y, &r), CONVLAB_ERR_NONFINITE, "x: element 3 is nan; inputs must be finite");
  t.x[3] = 0.5f;
  t.b[2] = INFINITY;
  refused(convlab_explain(p, t.x, t.w, t.b, NULL, t.y, &r), CONVLAB_ERR_NONFINITE, "b: element 2 is inf");
  cr_assert_null(r);
  t.b[2] = 0.0f;
  t.y[7] = NAN; /* a NaN in y is a verdict, not an error */
  r = explain(p, &t);
  cr_assert_eq(convlab_result_verdict(r), CONVLAB_NON_FINITE, "%s", convlab_result_text(r));
  convlab_result_destroy(r);
  convlab_problem_destroy(p);
  release(&t);
}

Test(library, derives_the_problem_from_shapes_as_the_program_does_from_files) {
  tensors t = make(SMALL, 14);
  const int64_t x[3] = {2, 16, 200}, w[3] = {8, 16, 4}, b[1] = {8}, y[3] = {2, 8, 200};
  convlab_problem *p = (convlab_problem *)&t;
  cr_assert_eq(convlab_problem_create_from_shapes(&p, x, w, 3, b, NULL, y, 2, 0, CONVLAB_ACT_NONE, CONVLAB_NCL),
               CONVLAB_OK, "%s", convlab_last_error());
  convlab_result *r = explain(p, &t);
  cr_assert_eq(convlab_result_verdict(r), CONVLAB_FP32_ROUNDING, "%s", convlab_result_text(r));
  convlab_result_destroy(r);
  convlab_problem_destroy(p);
  /* The files' messages: the tensors named by role, the mismatch said. */
  const int64_t w12[3] = {8, 12, 4}, y9[3] = {2, 9, 200}, dw[2] = {16, 4};
  p = (convlab_problem *)&t;
  refused(convlab_problem_create_from_shapes(&p, x, w12, 3, b, NULL, y, 1, 0, CONVLAB_ACT_NONE, CONVLAB_NCL),
          CONVLAB_ERR_INVALID_SHAPE, "w has C=12 but x has C=16");
  cr_assert_null(p);
  refused(convlab_problem_create_from_shapes(&p, x, w, 3, b, NULL, y9, 1, 0, CONVLAB_ACT_NONE, CONVLAB_NCL),
          CONVLAB_ERR_INVALID_SHAPE, "y has O=9 but w has O=8");
  refused(convlab_problem_create_from_shapes(&p, x, w, 3, b, NULL, y, 1, 2, CONVLAB_ACT_NONE, CONVLAB_NCL),
          CONVLAB_ERR_INVALID_SHAPE, "with --groups 2, C/G is 8");
  refused(convlab_problem_create_from_shapes(&p, x, dw, 2, NULL, NULL, y, 1, 0, CONVLAB_ACT_NONE, CONVLAB_NCL),
          CONVLAB_ERR_INVALID_SHAPE, "y has O=8 but w has O=16");
  refused(convlab_problem_create_from_shapes(&p, x, w, 4, b, NULL, y, 1, 0, CONVLAB_ACT_NONE, CONVLAB_NCL),
          CONVLAB_ERR_INVALID_ARGUMENT, "w_ndim must be 3");
  release(&t);
}

// --- handles and the framework-free check ----------------------------------------------------------

Test(library, handles_come_and_go_and_null_is_fine) {
  convlab_problem_destroy(NULL);
  convlab_result_destroy(NULL);
  cr_assert_eq(convlab_result_verdict(NULL), CONVLAB_INCONCLUSIVE);
  cr_assert_str_eq(convlab_result_headline(NULL), "");
  cr_assert_str_eq(convlab_result_json(NULL), "");
  cr_assert(isnan(convlab_result_detection_limit(NULL)));
  tensors t = make((sizes){1, 4, 4, 64, 3, 1, 0}, 10);
  for (int i = 0; i < 12; i++) { /* many calls in one process: the sanitizer build counts the leaks */
    convlab_problem *p = problem_of(&t.z);
    convlab_result *r = explain(p, &t);
    cr_assert_eq(convlab_result_verdict(r), CONVLAB_FP32_ROUNDING, "%s", convlab_result_text(r));
    convlab_problem_destroy(p);
    convlab_result_destroy(r);
  }
  release(&t);
}

Test(library, reports_its_version) {
  char want[32];
  snprintf(want, sizeof want, "%d.%d.%d", CONVLAB_VERSION_MAJOR, CONVLAB_VERSION_MINOR, CONVLAB_VERSION_PATCH);
  cr_assert_str_eq(convlab_version(), want);
#ifdef C1D_HAVE_CUDA
  cr_assert_eq(convlab_has_cuda(), 1);
#else
  cr_assert_eq(convlab_has_cuda(), 0);
#endif
}

Test(library, check_says_yes_or_no_with_the_programs_lines) {
  tensors t = make(SMALL, 11);
  convlab_problem *p = problem_of(&t.z);
  char message[4096];
  cr_assert_eq(convlab_check(p, t.x, t.w, t.b, NULL, t.y, CONVLAB_ROUNDING_ONLY, message, sizeof message), 1, "%s",
               message);
  cr_assert(strncmp(message, "convlab: Not a bug", 18) == 0, "%s", message);
  plant_bug(&t);
  cr_assert_eq(convlab_check(p, t.x, t.w, t.b, NULL, t.y, CONVLAB_ANY_ROUNDING, message, sizeof message), 0);
  cr_assert(strncmp(message, "convlab: A bug in", 17) == 0, "%s", message);
  cr_assert(strstr(message, "\n  why: ") && strstr(message, "\n  where: "), "%s", message);
  cr_assert(message[strlen(message) - 1] != '\n');
  cr_assert_eq(convlab_check(p, t.x, t.w, t.b, NULL, t.y, CONVLAB_ALLOW(CONVLAB_BUG_LOCALIZED), message, 16), 1,
               "a bug allowed is a yes (and a short buffer is fine)");
  cr_assert_eq(strlen(message), 15);
  cr_assert_eq(convlab_check(p, NULL, t.w, t.b, NULL, t.y, CONVLAB_ANY_ROUNDING, message, sizeof message), 0);
  cr_assert_str_eq(message, "convlab: invalid argument: x is NULL but the problem needs it");
  cr_assert_eq(convlab_check(p, t.x, t.w, t.b, NULL, t.y, CONVLAB_ANY_ROUNDING, NULL, 0), 0, "no message wanted");
  convlab_problem_destroy(p);
  release(&t);
}

/* The Criterion assertions pass on a correct output (their failure, with the message of convlab_check, is
 * what scripts/install_check.sh sees in the example's bug variant). */
Test(library, criterion_assertions_pass_on_a_correct_output) {
  tensors t = make(SMALL, 12);
  convlab_problem *p = problem_of(&t.z);
  cr_assert_conv1d_rounding_only(p, t.x, t.w, t.b, t.y); /* passes: a correct output */
  cr_expect_conv1d_verdict_in(p, t.x, t.w, t.b, NULL, t.y, CONVLAB_ANY_ROUNDING);
  convlab_problem_destroy(p);
  release(&t);
}

// --- device memory -------------------------------------------------------------------------------

#ifdef C1D_HAVE_CUDA
static void *on_device(const void *host, size_t bytes) {
  void *d = NULL;
  cr_assert_eq(cudaMalloc(&d, bytes), cudaSuccess);
  cr_assert_eq(cudaMemcpy(d, host, bytes, cudaMemcpyHostToDevice), cudaSuccess);
  return d;
}
#endif

Test(library, device_pointers_give_the_verdict_of_host_pointers) {
#ifndef C1D_HAVE_CUDA
  cr_skip_test("built without CUDA: a device pointer cannot be recognized (the header says so)");
#else
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) cr_skip_test("no CUDA device here");
  tensors t = make(SMALL, 13);
  plant_bug(&t);
  const sizes *z = &t.z;
  float *dx = on_device(t.x, (size_t)(z->N * z->C * z->L) * 4), *dw = on_device(t.w, (size_t)(z->O * z->C * z->K) * 4),
        *db = on_device(t.b, (size_t)z->O * 4), *dy = on_device(t.y, (size_t)(z->N * z->O * z->L) * 4);
  convlab_problem *p = problem_of(z);
  convlab_result *host = explain(p, &t), *dev = NULL, *mixed = NULL;
  cr_assert_eq(convlab_explain(p, dx, dw, db, NULL, dy, &dev), CONVLAB_OK, "%s", convlab_last_error());
  cr_assert_eq(convlab_explain(p, t.x, dw, t.b, NULL, dy, &mixed), CONVLAB_OK, "%s", convlab_last_error());
  cr_assert_eq(convlab_result_verdict(dev), CONVLAB_BUG_LOCALIZED, "%s", convlab_result_text(dev));
  cr_assert_str_eq(convlab_result_json(dev), convlab_result_json(host));
  cr_assert_str_eq(convlab_result_json(mixed), convlab_result_json(host));
  convlab_result_destroy(host);
  convlab_result_destroy(dev);
  convlab_result_destroy(mixed);
  convlab_problem_destroy(p);
  cudaFree(dx);
  cudaFree(dw);
  cudaFree(db);
  cudaFree(dy);
  release(&t);
#endif
}
