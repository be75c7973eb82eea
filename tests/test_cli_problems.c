/* convlab's command line for causal conv1d as people write it (issue 15): every flag of the problem
 * (--groups, --activation, --initial-states, --dtype, --layout) and its errors, generated problems that
 * honour them, `convlab list` saying what each implementation handles, `explain --case` on safetensors
 * files (bf16 depthwise with SiLU and states; weights as (O, C/G, K), (C, 1, K) or (C, K); channel-last),
 * the same through `run --case` and .npy files (float16, initial states), and every malformed case
 * refused with exit 1 and one line: a wrong --layout by what it made of the shapes, a case beyond the
 * memory (ulimit -v here) from its header alone. The outputs explained are computed here by the registry's own
 * contract (grouped_naive) and its bf16-products model, so each verdict is known. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "harness/inputs.h"
#include "harness/memory.h"
#include "harness/npy.h"
#include "harness/registry.h"
#include "harness/safetensors.h"
#include "reference/dtype.h"
#include "tests/support/convlab_run.h"
#include "tests/support/process.h"

static char dir[64];

static void make_dir(void) { c1d_test_make_dir(dir, "c1d_cli15"); }
static void remove_dir(void) { c1d_test_remove_dir(dir); }

TestSuite(cli_problems, .init = make_dir, .fini = remove_dir, .timeout = 120);

static const char *path_of(const char *name) { return c1d_test_path(dir, name); }

static c1d_outcome *run(const char *const *args) {
  c1d_outcome *o = malloc(sizeof *o);
  cr_assert_not_null(o);
  c1d_test_run_convlab(dir, args, o);
  return o;
}

static cJSON *json_of(const c1d_outcome *o) {
  cJSON *root = cJSON_Parse(o->out);
  cr_assert_not_null(root, "stdout is not JSON (exit %d, stderr %s): %.300s", o->code, o->err, o->out);
  return root;
}

static const char *str_at(const cJSON *o, const char *key) {
  return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, key));
}

// --- problems with known verdicts ------------------------------------------------------------------

#define BF16_ALL {C1D_DTYPE_BF16, C1D_DTYPE_BF16, C1D_DTYPE_BF16, C1D_DTYPE_BF16, C1D_DTYPE_BF16}

/* Mamba's kind: depthwise, bf16 everywhere, bias, initial states, SiLU. */
static const c1d_shape mamba = {.N = 2, .C = 16, .O = 16, .L = 100, .K = 4, .D = 1, .bias = 1, .G = 16,
                                .states = 1, .act = C1D_ACT_SILU, .dt = BF16_ALL};

typedef struct problem {
  c1d_shape s;
  float *x, *w, *b, *st, *y;
} problem;

/* Inputs of s (conv_init, in their types) and y computed by the implementation `impl`. */
static problem make_problem(const c1d_shape *s, const char *impl) {
  problem p = {.s = *s};
  p.x = malloc((size_t)c1d_x_count(s) * sizeof(float));
  p.w = malloc((size_t)c1d_w_count(s) * sizeof(float));
  p.b = malloc((size_t)(s->O + 1) * sizeof(float));
  p.st = malloc((size_t)(c1d_s_count(s) + 1) * sizeof(float));
  p.y = malloc((size_t)c1d_y_count(s) * sizeof(float));
  cr_assert(p.x && p.w && p.b && p.st && p.y);
  c1d_generate(s, C1D_DIST_CONV_INIT, 3, p.x, p.w, p.b);
  if (s->states) c1d_generate_states(s, C1D_DIST_CONV_INIT, 3, p.st);
  const c1d_impl *f = c1d_find_impl(impl);
  cr_assert_not_null(f, "%s", impl);
  c1d_exec ex;
  memset(&ex, 0, sizeof ex);
  ex.states = s->states ? p.st : NULL;
  cr_assert_eq(f->run(s, p.x, p.w, s->bias ? p.b : NULL, p.y, &ex), C1D_OK, "%s", c1d_error_detail());
  return p;
}

static void free_problem(problem *p) { free(p->x), free(p->w), free(p->b), free(p->st), free(p->y); }

/* (N, A, B) -> (N, B, A): channel-first into channel-last and back. */
static float *swap_last(const float *v, int64_t N, int64_t A, int64_t B) {
  float *out = malloc((size_t)(N * A * B) * sizeof *out);
  cr_assert_not_null(out);
  for (int64_t n = 0; n < N; n++)
    for (int64_t a = 0; a < A; a++)
      for (int64_t b = 0; b < B; b++) out[(n * B + b) * A + a] = v[(n * A + a) * B + b];
  return out;
}

/* How a case's tensors are written. */
typedef struct case_form {
  int w_ndim;       /* 3: (O, C/G, K); 2: (C, K) */
  int nlc;          /* x (N, L, C) and y (N, L, O) */
  int no_states;    /* leave initial_states out */
} case_form;

static void write_case(const char *path, const problem *p, case_form f) {
  const c1d_shape *s = &p->s;
  float *x = f.nlc ? swap_last(p->x, s->N, s->C, s->L) : p->x, *y = f.nlc ? swap_last(p->y, s->N, s->O, s->L) : p->y;
  c1d_st_tensor t[5];
  int n = 0;
  t[n++] = (c1d_st_tensor){"x", s->dt.x, 3, {s->N, f.nlc ? s->L : s->C, f.nlc ? s->C : s->L}, c1d_x_count(s), x};
  if (f.w_ndim == 2)
    t[n++] = (c1d_st_tensor){"w", s->dt.w, 2, {s->O, s->K}, c1d_w_count(s), p->w};
  else
    t[n++] = (c1d_st_tensor){"w", s->dt.w, 3, {s->O, c1d_cin_per_group(s), s->K}, c1d_w_count(s), p->w};
  if (s->bias) t[n++] = (c1d_st_tensor){"b", s->dt.b, 1, {s->O}, s->O, p->b};
  if (s->states && !f.no_states)
    t[n++] = (c1d_st_tensor){"initial_states", s->dt.s, 3, {s->N, s->C, c1d_pad(s)}, c1d_s_count(s), p->st};
  t[n++] = (c1d_st_tensor){"y", s->dt.y, 3, {s->N, f.nlc ? s->L : s->O, f.nlc ? s->O : s->L}, c1d_y_count(s), y};
  cr_assert_eq(c1d_st_write(path, t, n), C1D_OK, "%s", c1d_error_detail());
  if (f.nlc) free(x), free(y);
}

/* explain --case path [extra args] --json: the verdict object (caller deletes). */
static cJSON *explain_case(const char *path, const char *const *extra) {
  const char *args[24] = {"explain", "--case", path, "--json"};
  int n = 4;
  for (; extra && extra[n - 4]; n++) args[n] = extra[n - 4];
  args[n] = NULL;
  c1d_outcome *o = run(args);
  cr_assert_eq(o->code, 0, "exit %d: %s", o->code, o->err);
  cJSON *r = json_of(o);
  free(o);
  return r;
}

// --- usage errors: exit 2, one line ----------------------------------------------------------------

typedef struct usage_case {
  char args[12][32]; /* "" ends the list; "@c" a case path, "@x" "@w" "@s" "@y" .npy paths in the dir */
  char message[80];
} usage_case;

static const usage_case usage_cases[] = {
    {{"run", "--groups", "3"}, "groups G=3 must divide C=256 and O=256"},
    {{"run", "--groups", "0"}, "--groups must be positive"},
    {{"run", "--activation", "relu"}, "--activation must be none or silu (got 'relu')"},
    {{"run", "--activation", "sIlu"}, "did you mean silu?"},
    {{"run", "--layout", "lnc"}, "--layout must be ncl or nlc (got 'lnc'"},
    {{"run", "--dtype", "x=bf17"}, "--dtype x=bf17: unknown element type 'bf17'"},
    {{"run", "--dtype", "z=bf16"}, "--dtype: unknown tensor 'z'"},
    {{"run", "--dtype", "bf16"}, "--dtype expects TENSOR=TYPE entries"},
    {{"run", "--dtype", "all=bf16", "--dtype", "y=f32"}, "--dtype is given twice"},
    {{"run", "--initial-states", "--taps", "1"}, "initial states need a history: (K-1)*D is 0 (K=1)"},
    {{"run", "--initial-states", "@s"}, "--initial-states FILE needs --x and --w"},
    {{"run", "--x", "@x", "--w", "@w", "--initial-states"}, "--initial-states with --x needs the states' FILE"},
    {{"run", "--x", "@x", "--w", "@w", "--dtype", "y=bf16"}, "--dtype conflicts with --x"},
    {{"run", "--case", "@c", "--x", "@x", "--w", "@w"}, "--case conflicts with --x and --w"},
    {{"run", "--case", "@c", "--y", "@y"}, "--case conflicts with --y"},
    {{"run", "--case", "@c", "--initial-states"}, "--case conflicts with --initial-states"},
    {{"run", "--case", "@c", "--dist", "normal"}, "--dist conflicts with --case"},
    {{"run", "--case", "@c", "--dtype", "all=bf16"}, "--dtype conflicts with --case"},
    {{"explain"}, "--x, --w and --y are required (or --case)"},
    {{"explain", "--case", "@c", "--x", "@x"}, "--case conflicts with --x"},
    {{"explain", "--case", "@c", "--initial-states", "@s"}, "--case conflicts with --initial-states"},
    {{"explain", "--case", "@c", "--activation", "gelu"}, "--activation must be none or silu (got 'gelu')"},
    {{"explain", "--case", "@c", "--groups", "-2"}, "--groups must be positive"},
    {{"explain", "--case", "@c", "--layout", "nhwc"}, "--layout must be ncl or nlc"},
    {{"explain", "--case", "@c", "--dtype", "all=bf16"}, "unknown option '--dtype'"},
};

ParameterizedTestParameters(cli_problems, refuses_each_bad_problem_flag_with_exit_2_and_one_line) {
  return cr_make_param_array(usage_case, usage_cases, sizeof usage_cases / sizeof usage_cases[0]);
}

ParameterizedTest(const usage_case *c, cli_problems, refuses_each_bad_problem_flag_with_exit_2_and_one_line) {
  const char *args[16];
  int n = 0;
  for (; n < 12 && c->args[n][0]; n++) {
    const char *a = c->args[n];
    args[n] = a[0] != '@' ? a : path_of(a[1] == 'c' ? "c.safetensors" : a[1] == 'x' ? "x.npy" : a[1] == 'w' ? "w.npy"
                                                     : a[1] == 's' ? "s.npy" : "y.npy");
  }
  args[n] = NULL;
  c1d_outcome *o = run(args);
  c1d_test_expect_one_line_error(o, 2, c->message);
  free(o);
}

// --- generated problems ----------------------------------------------------------------------------

/* run on a small generated problem with extra flags, every output saved under dir/name. */
static c1d_outcome *run_generated(const char *name, const char *const *extra) {
  const char *args[32] = {"run", "--batch", "2", "--cin", "8", "--cout", "8", "--length", "64",
                          "--impl", "naive,grouped_naive", "--save-outputs", path_of(name)};
  int n = 13;
  for (int i = 0; extra[i]; i++) args[n++] = extra[i];
  args[n] = NULL;
  return run(args);
}

static float *saved(const char *name, const char *row, int64_t *count) {
  char path[256];
  snprintf(path, sizeof path, "%s/%s/%s.npy", dir, name, row);
  float *y = NULL;
  c1d_npy_header h;
  cr_assert_eq(c1d_npy_read_f32(path, 0, &y, &h, NULL), C1D_OK, "%s", c1d_error_detail());
  *count = h.count;
  return y;
}

Test(cli_problems, generates_the_grouped_bf16_silu_problem_with_states_that_the_flags_declare) {
  c1d_outcome *o = run_generated("on", (const char *[]){"--groups", "4", "--activation", "silu", "--initial-states",
                                                        "--dtype", "all=bf16,w=f32", NULL});
  cr_assert_eq(o->code, 0, "%s", o->err);
  cr_expect(strstr(o->out, "N=2 C=8 O=8 L=64 K=4 D=1 bias=0 G=4 states silu x=bf16 s=bf16 y=bf16") != NULL,
            "the problem line: %s", o->out);
  cr_expect(strstr(o->out, "naive              skipped: no groups (G > 1)") != NULL, "%s", o->out);
  cr_expect(strstr(o->out, "grouped_naive      fp32-rounding") != NULL, "%s", o->out);
  int64_t n = 0, m = 0;
  float *y = saved("on", "grouped_naive", &n);
  cr_assert_eq(n, 2 * 8 * 64);
  cr_expect(c1d_dtype_holds(C1D_DTYPE_BF16, y, n), "every output is a bf16 value");
  float lo = 0.0f;
  for (int64_t i = 0; i < n; i++) lo = fminf(lo, y[i]);
  cr_expect(lo < 0.0f && lo > -0.2785f, "SiLU's outputs stay above its minimum -0.2785 (lowest %g)", (double)lo);
  /* The same problem without states: the same x and w (the seed's), so only t < (K-1)*D = 3 differs. */
  free(o);
  o = run_generated("off", (const char *[]){"--groups", "4", "--activation", "silu", "--dtype", "all=bf16,w=f32", NULL});
  cr_assert_eq(o->code, 0, "%s", o->err);
  float *y0 = saved("off", "grouped_naive", &m);
  cr_assert_eq(m, n);
  int edge_differs = 0, rest_differs = 0;
  for (int64_t i = 0; i < n; i++) {
    const int64_t t = i % 64;
    if (t < 3) edge_differs += y[i] != y0[i];
    else rest_differs += y[i] != y0[i];
  }
  cr_expect_gt(edge_differs, 0, "the states change the left edge");
  cr_expect_eq(rest_differs, 0, "and nothing else");
  free(y), free(y0), free(o);
}

Test(cli_problems, writes_the_declared_problem_into_the_run_report) {
  c1d_outcome *o = run_generated("json", (const char *[]){"--groups", "8", "--activation", "silu", "--initial-states",
                                                          "--dtype", "x=bf16,y=f16", "--json", NULL});
  cr_assert_eq(o->code, 0, "%s", o->err);
  cJSON *r = json_of(o);
  const cJSON *p = cJSON_GetObjectItemCaseSensitive(r, "problem");
  cr_assert_not_null(p, "the report has a problem object");
  cr_expect_eq(cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(p, "G")), 8.0);
  cr_expect(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(p, "initial_states")));
  cr_expect_str_eq(str_at(p, "activation"), "silu");
  cr_expect_str_eq(str_at(p, "layout"), "ncl");
  const cJSON *dt = cJSON_GetObjectItemCaseSensitive(p, "dtypes");
  cr_expect_str_eq(str_at(dt, "x"), "bf16");
  cr_expect_str_eq(str_at(dt, "w"), "f32");
  cr_expect_str_eq(str_at(dt, "y"), "f16");
  /* depthwise: 2*N*O*L*(C/G)*K = 2*2*8*64*1*4 */
  cr_expect_eq(cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(p, "flops")), 8192.0);
  cJSON_Delete(r);
  free(o);
}

Test(cli_problems, says_which_implementation_cannot_run_the_declared_problem) {
  c1d_outcome *o = run((const char *[]){"run", "--batch", "1", "--cin", "8", "--cout", "8", "--length", "32",
                                        "--groups", "8", "--compare", "naive,grouped_naive", NULL});
  c1d_test_expect_one_line_error(o, 1, "cannot run on this shape: naive: no groups (G > 1)");
  free(o);
}

Test(cli_problems, lists_what_each_implementation_handles) {
  c1d_outcome *o = run((const char *[]){"list", "--all", NULL});
  cr_assert_eq(o->code, 0);
  int n = 0;
  const c1d_impl *const *table = c1d_registry(&n);
  for (int i = 0; i < n; i++) {
    char line[256], caps[96], row[128];
    snprintf(row, sizeof row, "\n%s ", table[i]->name); /* its own row, not a mention in a summary */
    const char *at = strstr(o->out, row);
    cr_assert_not_null(at, "%s", table[i]->name);
    c1d_caps_format(table[i]->caps, caps, sizeof caps);
    snprintf(line, sizeof line, "handles: %s", table[i]->caps ? caps : "the plain problem only");
    const char *next = strstr(at, "handles: ");
    cr_expect(next && strncmp(next, line, strlen(line)) == 0, "%s: %s", table[i]->name, line);
  }
  cr_expect(strstr(o->out, "grouped_naive") && strstr(o->out, "handles: groups states silu bf16/fp16"), "%s", o->out);
  free(o);
}

// --- explain --case and run --case ------------------------------------------------------------------

Test(cli_problems, explains_a_bf16_depthwise_case_meeting_the_contract_as_fp32_rounding) {
  problem p = make_problem(&mamba, "grouped_naive");
  write_case(path_of("c.safetensors"), &p, (case_form){.w_ndim = 3});
  cJSON *r = explain_case(path_of("c.safetensors"), (const char *[]){"--activation", "silu", NULL});
  cr_expect_str_eq(str_at(r, "verdict"), "fp32-rounding", "%s", str_at(r, "reason"));
  cr_expect(cJSON_IsNull(cJSON_GetObjectItem(r, "where")));
  const cJSON *pr = cJSON_GetObjectItem(r, "problem");
  cr_expect_eq(cJSON_GetNumberValue(cJSON_GetObjectItem(pr, "G")), 16);
  cr_expect(cJSON_IsTrue(cJSON_GetObjectItem(pr, "initial_states")));
  cr_expect_str_eq(str_at(pr, "activation"), "silu");
  cr_expect_str_eq(str_at(cJSON_GetObjectItem(pr, "dtypes"), "y"), "bf16");
  cr_expect_str_eq(str_at(cJSON_GetObjectItem(r, "files"), "case"), path_of("c.safetensors"));
  cJSON_Delete(r);
  free_problem(&p);
}

Test(cli_problems, explains_products_rounded_to_bf16_as_reduced_precision_where_products) {
  problem p = make_problem(&mamba, "bf16_products");
  write_case(path_of("c.safetensors"), &p, (case_form){.w_ndim = 3});
  cJSON *r = explain_case(path_of("c.safetensors"), (const char *[]){"--activation", "silu", NULL});
  cr_expect_str_eq(str_at(r, "verdict"), "reduced-precision", "%s", str_at(r, "reason"));
  cr_expect_str_eq(str_at(r, "where"), "products");
  cJSON_Delete(r);
  c1d_outcome *o = run((const char *[]){"explain", "--case", path_of("c.safetensors"), "--activation", "silu", NULL});
  cr_expect_eq(o->code, 0, "%s", o->err);
  cr_expect(strstr(o->out, "the products were rounded") && strstr(o->out, "(reduced-precision, where: "
                                                                                    "products)"),
            "the first line says where: %.300s", o->out);
  free(o);
  free_problem(&p);
}

Test(cli_problems, takes_a_depthwise_weight_as_c_k_or_c_1_k_and_a_declared_groups_that_agrees) {
  problem p = make_problem(&mamba, "grouped_naive");
  const int forms[2] = {2, 3};
  for (int i = 0; i < 2; i++) {
    write_case(path_of("c.safetensors"), &p, (case_form){.w_ndim = forms[i]});
    cJSON *r = explain_case(path_of("c.safetensors"), (const char *[]){"--activation", "silu", "--groups", "16", NULL});
    cr_expect_str_eq(str_at(r, "verdict"), "fp32-rounding", "w with %d dimensions: %s", forms[i], str_at(r, "reason"));
    cr_expect_eq(cJSON_GetNumberValue(cJSON_GetObjectItem(cJSON_GetObjectItem(r, "problem"), "G")), 16);
    cJSON_Delete(r);
  }
  free_problem(&p);
}

Test(cli_problems, reads_channel_last_tensors_with_layout_nlc_and_refuses_them_without) {
  problem p = make_problem(&mamba, "grouped_naive");
  write_case(path_of("c.safetensors"), &p, (case_form){.w_ndim = 3, .nlc = 1});
  cJSON *r = explain_case(path_of("c.safetensors"), (const char *[]){"--activation", "silu", "--layout", "nlc", NULL});
  cr_expect_str_eq(str_at(r, "verdict"), "fp32-rounding", "%s", str_at(r, "reason"));
  cr_expect_str_eq(str_at(cJSON_GetObjectItem(r, "problem"), "layout"), "nlc");
  cJSON_Delete(r);
  c1d_outcome *o = run((const char *[]){"explain", "--case", path_of("c.safetensors"), "--activation", "silu", NULL});
  cr_expect_eq(o->code, 1, "x (N, L, C) read as (N, C, L) does not fit w: %s", o->err);
  cr_expect_eq(c1d_test_line_count(o->err), 1, "%s", o->err);
  free(o);
  free_problem(&p);
}

Test(cli_problems, runs_a_case_as_a_row_beside_the_implementations) {
  problem p = make_problem(&mamba, "grouped_naive");
  write_case(path_of("c.safetensors"), &p, (case_form){.w_ndim = 2});
  c1d_outcome *o = run((const char *[]){"run", "--case", path_of("c.safetensors"), "--activation", "silu", "--impl",
                                        "grouped_naive,naive", "--json", NULL});
  cr_assert_eq(o->code, 0, "%s", o->err);
  cJSON *root = json_of(o), *impl;
  int rows = 0;
  cJSON_ArrayForEach(impl, cJSON_GetObjectItem(root, "implementations")) {
    const char *name = str_at(impl, "name"), *state = str_at(impl, "status");
    if (!strcmp(name, "naive")) {
      cr_expect_str_eq(state, "skipped", "naive handles no groups");
      continue;
    }
    const cJSON *v = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(impl, "trials"), 0), "explanation");
    cr_expect_str_eq(str_at(v, "verdict"), "fp32-rounding", "%s: %s", name, str_at(v, "reason"));
    rows += !strcmp(name, "file:c.safetensors") || !strcmp(name, "grouped_naive");
  }
  cr_expect_eq(rows, 2, "the case's y and grouped_naive: %.400s", o->out);
  cJSON_Delete(root);
  free(o);
  free_problem(&p);
}

// --- .npy files: float16, initial states -------------------------------------------------------------

static void write_npy(const char *name, const float *v, int ndim, const int64_t *shape, c1d_dtype d) {
  const c1d_status st = d == C1D_DTYPE_F16 ? c1d_npy_write_f16(path_of(name), v, ndim, shape)
                                           : c1d_npy_write_f32(path_of(name), v, ndim, shape);
  cr_assert_eq(st, C1D_OK, "%s", c1d_error_detail());
}

/* x, w, b, s and y of p as .npy files, x and w and y in their types (fp16 or fp32). */
static void write_npys(const problem *p) {
  const c1d_shape *s = &p->s;
  const int64_t sx[3] = {s->N, s->C, s->L}, sw[3] = {s->O, c1d_cin_per_group(s), s->K}, sb[1] = {s->O},
                ss[3] = {s->N, s->C, c1d_pad(s)}, sy[3] = {s->N, s->O, s->L};
  write_npy("x.npy", p->x, 3, sx, s->dt.x);
  write_npy("w.npy", p->w, 3, sw, s->dt.w);
  write_npy("b.npy", p->b, 1, sb, s->dt.b);
  if (s->states) write_npy("s.npy", p->st, 3, ss, s->dt.s);
  write_npy("y.npy", p->y, 3, sy, s->dt.y);
  write_npy("y32.npy", p->y, 3, sy, C1D_DTYPE_F32);
}

Test(cli_problems, explains_float16_npy_files_with_initial_states_in_their_types) {
  c1d_shape s = mamba;
  s.dt = (c1d_dtypes){C1D_DTYPE_F16, C1D_DTYPE_F16, C1D_DTYPE_F32, C1D_DTYPE_F32, C1D_DTYPE_F16};
  problem p = make_problem(&s, "grouped_naive");
  write_npys(&p);
  c1d_outcome *o = run((const char *[]){"explain", "--x", path_of("x.npy"), "--w", path_of("w.npy"), "--b",
                                        path_of("b.npy"), "--initial-states", path_of("s.npy"), "--y", path_of("y.npy"),
                                        "--activation", "silu", "--json", NULL});
  cr_assert_eq(o->code, 0, "%s", o->err);
  cJSON *r = json_of(o);
  cr_expect_str_eq(str_at(r, "verdict"), "fp32-rounding", "%s", str_at(r, "reason"));
  const cJSON *dt = cJSON_GetObjectItem(cJSON_GetObjectItem(r, "problem"), "dtypes");
  cr_expect(!strcmp(str_at(dt, "x"), "f16") && !strcmp(str_at(dt, "w"), "f16") && !strcmp(str_at(dt, "y"), "f16") &&
                !strcmp(str_at(dt, "b"), "f32"),
            "the files' types are the problem's");
  cr_expect_str_eq(str_at(cJSON_GetObjectItem(r, "files"), "initial_states"), path_of("s.npy"));
  cJSON_Delete(r);
  free(o);
  /* Two outputs of one problem in two types: refused. */
  o = run((const char *[]){"explain", "--x", path_of("x.npy"), "--w", path_of("w.npy"), "--b", path_of("b.npy"),
                           "--initial-states", path_of("s.npy"), "--y", path_of("y.npy"), "--y", path_of("y32.npy"),
                           NULL});
  c1d_test_expect_one_line_error(o, 1, "the outputs of one problem have one type");
  free(o);
  /* Without the states the problem has none: the left edge is a bug. */
  o = run((const char *[]){"explain", "--x", path_of("x.npy"), "--w", path_of("w.npy"), "--b", path_of("b.npy"),
                           "--y", path_of("y.npy"), "--activation", "silu", "--json", NULL});
  cr_assert_eq(o->code, 0, "%s", o->err);
  r = json_of(o);
  cr_expect_str_eq(str_at(r, "verdict"), "bug-localized", "%s", str_at(r, "reason"));
  cr_expect_str_eq(str_at(cJSON_GetObjectItem(r, "region"), "class"), "left-edge");
  cJSON_Delete(r);
  free(o);
  free_problem(&p);
}

Test(cli_problems, runs_npy_files_with_initial_states_beside_the_implementations) {
  c1d_shape s = mamba;
  s.dt = (c1d_dtypes){0}; /* fp32 tensors */
  problem p = make_problem(&s, "grouped_naive");
  write_npys(&p);
  c1d_outcome *o = run((const char *[]){"run", "--x", path_of("x.npy"), "--w", path_of("w.npy"), "--b",
                                        path_of("b.npy"), "--initial-states", path_of("s.npy"), "--y", path_of("y.npy"),
                                        "--activation", "silu", "--impl", "grouped_naive", NULL});
  cr_assert_eq(o->code, 0, "%s", o->err);
  cr_expect(strstr(o->out, "G=16 states silu") != NULL, "%s", o->out);
  cr_expect(strstr(o->out, "grouped_naive      fp32-rounding") && strstr(o->out, "file:y.npy         fp32-rounding"),
            "%s", o->out);
  free(o);
  free_problem(&p);
}

// --- malformed cases: exit 1, one line -------------------------------------------------------------

/* A file of header text and data bytes, the header length declared as `declared` (0: its own). */
static void write_raw(const char *path, const char *header, size_t data_bytes, uint64_t declared) {
  FILE *f = fopen(path, "wb");
  cr_assert_not_null(f);
  const uint64_t len = declared ? declared : strlen(header);
  for (int i = 0; i < 8; i++) fputc((int)(len >> (8 * i)) & 0xff, f);
  fputs(header, f);
  for (size_t i = 0; i < data_bytes; i++) fputc(0, f);
  fclose(f);
}

typedef struct bad_case {
  int kind;             /* 0: raw header + data bytes; 1: a good case changed by `change` */
  char header[200];
  int data_bytes;
  int declared;
  int change;           /* 1 y's O off by one, 2 no y, 3 an extra tensor, 4 states of the wrong length,
                           5 a NaN in x */
  char flags[4][16];    /* extra flags */
  char message[128];
} bad_case;

#define X4 "\"x\":{\"dtype\":\"F32\",\"shape\":[1,1,1],\"data_offsets\":[0,4]}"
static const bad_case bad_cases[] = {
    {0, "{}", 0, 4096, 0, {""}, "header length 4096 is beyond the file"},
    {0, "{\"x\": [1, 2", 0, 0, 0, {""}, "the header is not a JSON object"},
    {0, "{" X4 "}", 2, 0, 0, {""}, "ends at byte 4 of the data, past its end"},
    {0, "{" X4 ",\"w\":{\"dtype\":\"F32\",\"shape\":[1,1,1],\"data_offsets\":[2,6]}}", 6, 0, 0, {""},
     "overlaps another tensor's bytes"},
    {0, "{\"x\":{\"dtype\":\"F64\",\"shape\":[1],\"data_offsets\":[0,8]}}", 8, 0, 0, {""}, "has dtype 'F64'"},
    {0, "{\"x\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,4]}}", 4, 0, 0, {""},
     "holds 4 bytes, but its shape and dtype need 12"},
    {1, "", 0, 0, 0, {"--groups", "3"}, "--groups 3 disagrees with the depthwise weight w (C, K): G = C = 16"},
    {1, "", 0, 0, 1, {""}, "y has O=17 but w has O=16"},
    {1, "", 0, 0, 2, {""}, "no tensor 'y' (a case holds x, w and y"},
    {1, "", 0, 0, 3, {""}, "tensor 'y_ref' is not part of a case"},
    {1, "", 0, 0, 4, {""}, "initial_states has shape (2, 16, 2), but this problem's initial states are"},
    {1, "", 0, 0, 5, {""}, "x: element 7 is nan; inputs must be finite"},
    {1, "", 0, 0, 0, {"--dilation", "2"}, "initial_states has shape (2, 16, 3), but this problem's initial states "
                                          "are (N, C, (K-1)*D) = (2, 16, 6)"},
};

/* The good bf16 depthwise case, with its w as (C, K), changed as c says. */
static void write_changed_case(const char *path, int change) {
  problem p = make_problem(&mamba, "grouped_naive");
  const c1d_shape *s = &p.s;
  float *y = calloc((size_t)(s->N * (s->O + 1) * s->L), sizeof *y);
  cr_assert_not_null(y);
  if (change == 5) p.x[7] = NAN;
  c1d_st_tensor t[6] = {
      {"x", C1D_DTYPE_BF16, 3, {s->N, s->C, s->L}, c1d_x_count(s), p.x},
      {"w", C1D_DTYPE_BF16, 2, {s->C, s->K}, c1d_w_count(s), p.w},
      {"b", C1D_DTYPE_BF16, 1, {s->O}, s->O, p.b},
      {"initial_states", C1D_DTYPE_BF16, 3, {s->N, s->C, change == 4 ? 2 : 3}, s->N * s->C * (change == 4 ? 2 : 3), p.st},
      {"y", C1D_DTYPE_BF16, 3, {s->N, s->O + (change == 1), s->L}, s->N * (s->O + (change == 1)) * s->L,
       change == 1 ? y : p.y},
      {"y_ref", C1D_DTYPE_BF16, 1, {4}, 4, p.b}};
  const int n = change == 2 ? 4 : change == 3 ? 6 : 5;
  cr_assert_eq(c1d_st_write(path, t, n), C1D_OK, "%s", c1d_error_detail());
  free(y);
  free_problem(&p);
}

ParameterizedTestParameters(cli_problems, refuses_each_malformed_case_with_exit_1_and_one_line) {
  return cr_make_param_array(bad_case, bad_cases, sizeof bad_cases / sizeof bad_cases[0]);
}

ParameterizedTest(const bad_case *c, cli_problems, refuses_each_malformed_case_with_exit_1_and_one_line) {
  const char *path = path_of("bad.safetensors");
  if (c->kind == 0) write_raw(path, c->header, (size_t)c->data_bytes, (uint64_t)c->declared);
  else write_changed_case(path, c->change);
  const char *args[12] = {"explain", "--case", path, "--activation", "silu"};
  int n = 5;
  for (int i = 0; i < 4 && c->flags[i][0]; i++) args[n++] = c->flags[i];
  args[n] = NULL;
  c1d_outcome *o = run(args);
  c1d_test_expect_one_line_error(o, 1, c->message);
  cr_expect(strstr(o->err, path) != NULL, "the file is named: %s", o->err);
  free(o);
}

Test(cli_problems, names_a_missing_case_file) {
  c1d_outcome *o = run((const char *[]){"explain", "--case", path_of("none.safetensors"), NULL});
  c1d_test_expect_one_line_error(o, 1, "none.safetensors: cannot open");
  free(o);
}

/* An (N, C, L) case read with --layout nlc: x (2, 4, 32) became C=32, w's C/G=4 made 8 groups, and the
 * message blamed "groups G=8" that nobody gave. */
Test(cli_problems, says_what_the_layout_made_of_the_shapes_when_they_do_not_fit) {
  const char *path = path_of("ncl.safetensors");
  write_raw(path, "{\"x\":{\"dtype\":\"F32\",\"shape\":[2,4,32],\"data_offsets\":[0,1024]},"
                  "\"w\":{\"dtype\":\"F32\",\"shape\":[6,4,3],\"data_offsets\":[1024,1312]},"
                  "\"y\":{\"dtype\":\"F32\",\"shape\":[2,6,32],\"data_offsets\":[1312,2848]}}", 2848, 0);
  c1d_outcome *o = run((const char *[]){"explain", "--case", path, "--layout", "nlc", NULL});
  c1d_test_expect_one_line_error(o, 1, "with --layout nlc, x (2, 4, 32) reads as N=2 L=4 C=32 and w (6, 4, 3) as "
                                       "O=6 C/G=4 K=3");
  cr_expect(strstr(o->err, "ncl.safetensors") != NULL, "the file is named: %s", o->err);
  cr_expect(strstr(o->err, "G=8") == NULL && strstr(o->err, "--groups") == NULL, "no groups were given: %s",
            o->err);
  free(o);
}

/* A valid case of 4 GiB (its data a hole) under `ulimit -v`: refused from its 8 bytes and header, at
 * once, naming the limit. It was read whole first (a 2 GB case peaked at 4.35 GB before the refusal). */
Test(cli_problems, refuses_a_case_beyond_the_memory_from_its_header_alone) {
  const double gib = 1073741824.0;
  if (c1d_memory_available().bytes < 3.0 * gib)
    cr_skip_test("less than 3 GiB free: ulimit -v would not be the lowest limit");
  const char *path = path_of("big.safetensors");
  write_raw(path, "{\"x\":{\"dtype\":\"F32\",\"shape\":[1,1,536870912],\"data_offsets\":[0,2147483648]},"
                  "\"w\":{\"dtype\":\"F32\",\"shape\":[1,1,2],\"data_offsets\":[2147483648,2147483656]},"
                  "\"y\":{\"dtype\":\"F32\",\"shape\":[1,1,536870912],\"data_offsets\":[2147483656,4294967304]}}",
            0, 0);
  FILE *f = fopen(path, "rb");
  cr_assert_not_null(f);
  cr_assert_eq(fseek(f, 0, SEEK_END), 0);
  const long header_end = ftell(f);
  fclose(f);
  cr_assert_eq(truncate(path, header_end + 4294967304LL), 0, "the data as a hole");
  /* 2 GiB of address space beyond what this process maps (convlab maps about as much at its start). */
  f = fopen("/proc/self/statm", "r");
  unsigned long long pages = 0;
  cr_assert(f && fscanf(f, "%llu", &pages) == 1);
  fclose(f);
  const rlim_t limit = (rlim_t)((double)pages * (double)sysconf(_SC_PAGESIZE) + 2.0 * gib);
  cr_assert_eq(setrlimit(RLIMIT_AS, &(struct rlimit){limit, limit}), 0); /* this test's process and its child */
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  c1d_outcome *o = run((const char *[]){"explain", "--case", path, NULL});
  clock_gettime(CLOCK_MONOTONIC, &t1);
  c1d_test_expect_one_line_error(o, 1, "the address-space limit (ulimit -v) leaves");
  struct rusage ru;
  getrusage(RUSAGE_CHILDREN, &ru);
  cr_expect_lt(ru.ru_maxrss, 64 * 1024, "convlab's peak RSS %ld kB: the data was read", ru.ru_maxrss);
  const double s = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
  cr_expect_lt(s, 5.0, "%.2f s to refuse it", s); /* loose: a few ms here */
  free(o);
}

// --- a forgotten flag: "did you mean --activation silu?" (issue 23) --------------------------------

/* The verdict's JSON "suggestion", or NULL when it has none. */
static const char *suggestion_of(const cJSON *r) {
  const cJSON *s = cJSON_GetObjectItemCaseSensitive(r, "suggestion");
  return cJSON_IsString(s) ? s->valuestring : NULL;
}

/* explain --case path [extra] in words: its second line into buf (the line after the verdict). */
static const char *second_line_of(const char *path, const char *const *extra, char *buf, size_t size) {
  const char *args[24] = {"explain", "--case", path};
  int n = 3;
  for (; extra && extra[n - 3]; n++) args[n] = extra[n - 3];
  args[n] = NULL;
  c1d_outcome *o = run(args);
  cr_assert_eq(o->code, 0, "exit %d: %s", o->code, o->err);
  const char *nl = strchr(o->out, '\n');
  cr_assert_not_null(nl, "%s", o->out);
  snprintf(buf, size, "%.*s", (int)strcspn(nl + 1, "\n"), nl + 1);
  free(o);
  return buf;
}

static int is_bug(const char *verdict) { return verdict && !strncmp(verdict, "bug-", 4); }

/* A dense fp32 problem with dilation 2: no states, so another dilation reads the same tensors. */
static const c1d_shape dilated = {.N = 2, .C = 8, .O = 6, .L = 150, .K = 3, .D = 2, .bias = 1};

/* A SiLU output explained without --activation silu: still a bug (the verdict is the declared
 * problem's), and the line after it names the flag under which the same tensors are rounding. With the
 * flag: rounding, and no suggestion. */
Test(cli_problems, suggests_activation_silu_for_a_silu_output_explained_without_it) {
  problem p = make_problem(&mamba, "grouped_naive");
  const char *path = path_of("silu.safetensors");
  write_case(path, &p, (case_form){.w_ndim = 3});
  cJSON *r = explain_case(path, NULL);
  cr_expect(is_bug(str_at(r, "verdict")), "still the declared problem's verdict: %s", str_at(r, "verdict"));
  cr_expect_str_eq(suggestion_of(r) ? suggestion_of(r) : "(none)", "--activation silu", "%s", str_at(r, "reason"));
  cJSON_Delete(r);
  char line[512];
  const char *second = second_line_of(path, NULL, line, sizeof line);
  cr_expect(!strncmp(second, "  did you mean --activation silu?", 33), "the line after the verdict: %s", second);
  r = explain_case(path, (const char *[]){"--activation", "silu", NULL});
  cr_expect_str_eq(str_at(r, "verdict"), "fp32-rounding", "%s", str_at(r, "reason"));
  cr_expect_null(cJSON_GetObjectItem(r, "suggestion"), "no suggestion for rounding: %s", suggestion_of(r));
  cJSON_Delete(r);
  free_problem(&p);
}

/* A dilation-2 output explained as dilation 1 (the default) or 3: "did you mean --dilation 2?". */
Test(cli_problems, suggests_the_dilation_an_output_was_computed_with) {
  problem p = make_problem(&dilated, "grouped_naive");
  const char *path = path_of("d2.safetensors");
  write_case(path, &p, (case_form){.w_ndim = 3});
  const char *const *as_given[2] = {NULL, (const char *[]){"--dilation", "3", NULL}};
  for (int i = 0; i < 2; i++) {
    cJSON *r = explain_case(path, as_given[i]);
    cr_expect(is_bug(str_at(r, "verdict")), "dilation %d: %s", i ? 3 : 1, str_at(r, "verdict"));
    cr_expect_str_eq(suggestion_of(r) ? suggestion_of(r) : "(none)", "--dilation 2", "dilation %d", i ? 3 : 1);
    cJSON_Delete(r);
  }
  char line[512];
  const char *second = second_line_of(path, NULL, line, sizeof line);
  cr_expect(!strncmp(second, "  did you mean --dilation 2?", 28), "the line after the verdict: %s", second);
  cJSON *r = explain_case(path, (const char *[]){"--dilation", "2", NULL});
  cr_expect_str_eq(str_at(r, "verdict"), "fp32-rounding", "%s", str_at(r, "reason"));
  cr_expect_null(cJSON_GetObjectItem(r, "suggestion"));
  cJSON_Delete(r);
  free_problem(&p);
}

/* Channel-last tensors whose shapes also fit (N, C, L), C = O = L: read without --layout nlc they are a
 * bug, and the other layout is named. */
Test(cli_problems, suggests_the_other_layout_when_the_shapes_fit_both) {
  const c1d_shape square = {.N = 2, .C = 24, .O = 24, .L = 24, .K = 3, .D = 1, .bias = 1};
  problem p = make_problem(&square, "grouped_naive");
  const char *path = path_of("nlc.safetensors");
  write_case(path, &p, (case_form){.w_ndim = 3, .nlc = 1});
  cJSON *r = explain_case(path, NULL);
  cr_expect(is_bug(str_at(r, "verdict")), "%s", str_at(r, "verdict"));
  cr_expect_str_eq(suggestion_of(r) ? suggestion_of(r) : "(none)", "--layout nlc", "%s", str_at(r, "reason"));
  cJSON_Delete(r);
  r = explain_case(path, (const char *[]){"--layout", "nlc", NULL});
  cr_expect_str_eq(str_at(r, "verdict"), "fp32-rounding", "%s", str_at(r, "reason"));
  cr_expect_null(cJSON_GetObjectItem(r, "suggestion"));
  cJSON_Delete(r);
  free_problem(&p);
}

/* Real bugs under the right flags get no suggestion: an offset on one channel of the SiLU case, and the
 * zoo's shifted, flipped-tap and bias-less kernels on the dilated problem (no other dilation, activation
 * or layout reads them as rounding). */
Test(cli_problems, suggests_nothing_for_a_real_bug) {
  problem p = make_problem(&mamba, "grouped_naive");
  for (int64_t n = 0; n < mamba.N; n++)
    for (int64_t t = 0; t < mamba.L; t++) {
      float *v = &p.y[c1d_y_index(&mamba, n, 5, t)];
      *v = c1d_round_to_dtype(C1D_DTYPE_BF16, *v + 0.02f);
    }
  const char *path = path_of("bug.safetensors");
  write_case(path, &p, (case_form){.w_ndim = 3});
  cJSON *r = explain_case(path, (const char *[]){"--activation", "silu", NULL});
  cr_expect_str_eq(str_at(r, "verdict"), "bug-localized", "%s", str_at(r, "reason"));
  cr_expect_null(cJSON_GetObjectItem(r, "suggestion"), "offset channel: %s", suggestion_of(r));
  cJSON_Delete(r);
  free_problem(&p);
  const char *mutants[] = {"zoo_causal_shift", "zoo_flipped_taps", "zoo_missing_bias"};
  for (int i = 0; i < 3; i++) {
    p = make_problem(&dilated, mutants[i]);
    write_case(path, &p, (case_form){.w_ndim = 3});
    r = explain_case(path, (const char *[]){"--dilation", "2", NULL});
    cr_expect(is_bug(str_at(r, "verdict")), "%s: %s", mutants[i], str_at(r, "verdict"));
    cr_expect_null(cJSON_GetObjectItem(r, "suggestion"), "%s: %s", mutants[i], suggestion_of(r));
    cJSON_Delete(r);
    free_problem(&p);
  }
}
