/* convlab bench: every GPU implementation (or the --impl list) on the headline shape or the given one,
 * timed through the runner (CUDA events around run() only, one warm-up, the L2 flushed and y poisoned
 * before each of --repeats runs, median reported) and scored against the float64 oracle (the GPU oracle
 * when built, else the CPU one) in the same run, so speed is always read next to accuracy.
 *
 * Per row: median and minimum time, GFLOP/s (2*N*O*L*C*K / median), % of the FP32 ceiling (67 TFLOP/s
 * unless --ceiling-tflops), time / cudnn_fp32_fastest's time and / cudnn_tf32_fastest's time (cuDNN's
 * own search, PyTorch's benchmark mode: the strongest cuDNN; both always run, added when --impl leaves
 * them out), time over PyTorch's F.conv1d in cuDNN's benchmark mode on the same inputs (/torch: its
 * TF32 row for rows that may use TF32, its FP32 row for the others; below), relative L2 error, max
 * |error|, fraction failing allclose(1e-4, 1e-4), the algorithm and math the implementation reported,
 * and for TF32 rows the TF32 model's prediction (gpu_tf32_inputs, added when missing) beside the
 * observed error.
 * Inputs: seeded (--dist normal by default; never all-zero, c1d_generate guarantees it). --save-inputs
 * DIR writes them as x.npy, w.npy (b.npy, s.npy), for scripts/crosscheck_torch.py. A table on stdout,
 * JSON under --out (cJSON, written atomically).
 *
 * Grouped and depthwise problems (--groups, --depthwise: Mamba's anchor N=8, C=O=G=4096, L=4096, K=4,
 * D=1) are memory-bound: their table reads bytes, not flops. Per row: GB/s (bytes of x read plus y
 * written, in their element types, over the median time), % of the device-to-device copy bandwidth
 * measured in the same run (c1d_gpu_copy_gbps on x's bytes), and time over the cuDNN depthwise row
 * (cuDNN's search: cudnn_fp32_fastest for fp32 tensors, cudnn_lowp_fastest for bf16/fp16 ones; always
 * run), next to the errors. --dtype sets every tensor's type; --layout, --activation and
 * --initial-states the rest of the problem.
 * Beside both tables, unless --no-torch, PyTorch's rows on the same inputs in the same run
 * (harness/bench_torch.c: scripts/crosscheck_torch.py --rows-only through python3, after convlab's rows
 * and the copy were timed). Dense float32 problems: torch_conv1d_fp32 and torch_conv1d_tf32, F.conv1d
 * with TF32 off and on, cuDNN's benchmark mode. Grouped ones: torch_conv1d_<type>, F.conv1d(groups=G), the kernel PyTorch users get, and torch_cudnn_nhwc_<type>,
 * conv2d in channels_last memory (cuDNN's NHWC kernel through PyTorch; left out with SiLU), with the
 * same columns, a /torch column (time over torch_conv1d's) and one closing line per row with its time
 * over cuDNN's fastest and both of PyTorch's. Without python3, PyTorch or CUDA: one line "PyTorch rows:
 * not measured (why)", and the exit status is the rows' alone. */
#include <cjson/cJSON.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness/atomic_file.h"
#include "harness/bench_torch.h"
#include "harness/cli.h"
#include "harness/commands.h"
#include "harness/escape.h"
#include "harness/execute.h"
#include "harness/inputs.h"
#include "harness/machine.h"
#include "harness/npy.h"
#include "harness/registry.h"
#include "harness/report.h"
#include "harness/suggest.h"
#include "harness/runner.h"
#include "harness/version.h"
#include "reference/dtype.h"

#define MAX_IMPLS 64
#define MODEL_NAME "gpu_tf32_inputs"
/* The rows every ratio is taken against: cuDNN's fastest algorithm by its own search, per math mode. */
#define REF_FP32 "cudnn_fp32_fastest"
#define REF_TF32 "cudnn_tf32_fastest"
/* The cuDNN row the grouped table's ratios are taken against, for bf16/fp16 tensors. */
#define REF_LOWP "cudnn_lowp_fastest"
#define COPY_REPEATS 20

#define BENCH_REPEATS 50
/* An H200's FP32 FMA peak, rounded (BACKGROUND.md measured 65.2 TFLOP/s). */
#define BENCH_CEILING_TFLOPS 67.0

typedef struct bench_opts {
  c1d_shape shape;
  const char *impl_list; /* comma-separated, or NULL / "all" for every GPU implementation */
  int repeats;
  double ceiling_tflops;
  int ceiling_given;
  c1d_dist dist;
  uint64_t seed;
  const char *out, *save_inputs;
  c1d_oracle_choice oracle;
  int quiet;
  int no_torch; /* no PyTorch rows */
} bench_opts;

/* Grouped problems are judged by the bytes they move; dense ones by their flops. */
static int memory_bound(const c1d_shape *s) { return c1d_groups(s) > 1; }

/* The cuDNN row a grouped problem's ratios are taken against. */
static const char *cudnn_reference(const c1d_shape *s) { return s->dt.x == C1D_DTYPE_F32 ? REF_FP32 : REF_LOWP; }

/* Bytes of x read and y written, in their element types. */
static double moved_bytes(const c1d_shape *s) {
  return (double)c1d_x_count(s) * c1d_dtype_size(s->dt.x) + (double)c1d_y_count(s) * c1d_dtype_size(s->dt.y);
}

static const char *const bench_usage =
    "convlab bench [--impl A,B,...|all] [--batch N] [--cin C] [--cout O] [--length L] [--taps K]\n"
    "                     [--dilation D] [--bias] [--groups G | --depthwise] [--dtype T] [--layout ncl|nlc]\n"
    "                     [--activation none|silu] [--initial-states] [--repeats R] [--ceiling-tflops T]\n"
    "                     [--dist NAME] [--seed S] [--oracle auto|cpu|gpu] [--out FILE.json]\n"
    "                     [--save-inputs DIR] [--no-torch]";
static const char *const bench_description =
    "Times the GPU implementations (default: every one of tier main and variant) on the headline\n"
    "shape (N=32 C=O=256 L=8192 K=4 D=1, no bias) or the given one: the median of R CUDA-event-timed\n"
    "runs after a warm-up, the L2 flushed and y poisoned between runs. Per row: GFLOP/s, % of the FP32\n"
    "ceiling, time over cuDNN's fastest (cudnn_fp32_fastest, cudnn_tf32_fastest: cuDNN's own search;\n"
    "both always run), the algorithm each library row chose, and the error against the float64 oracle,\n"
    "with the TF32 model (gpu_tf32_inputs, always run beside TF32 rows) next to each TF32 row, and\n"
    "PyTorch's rows (F.conv1d, cuDNN's benchmark mode, TF32 off and on: scripts/crosscheck_torch.py\n"
    "through python3, after the rows) with a /torch column: time over PyTorch's TF32 row for rows that\n"
    "may use TF32, over its FP32 row for the others.\n"
    "Grouped problems (--groups G; --depthwise: N=8 C=O=G=4096 L=4096 K=4 D=1 unless given) run the\n"
    "implementations that take groups, and their table reads GB/s (x read + y written over the time),\n"
    "% of the device-to-device copy bandwidth measured in the same run, and time over cuDNN's fastest\n"
    "(cudnn_fp32_fastest for fp32 tensors, cudnn_lowp_fastest for bf16/fp16 ones). Beside them, PyTorch's\n"
    "rows on the same inputs (scripts/crosscheck_torch.py through python3, after the rows: F.conv1d, and\n"
    "conv2d channels_last = cuDNN NHWC), a /torch column (time over F.conv1d's) and one line per row with\n"
    "its time over cuDNN's and PyTorch's; --no-torch leaves them out (without python3, PyTorch or CUDA:\n"
    "\"PyTorch rows: not measured (why)\", the exit status unchanged). Table on stdout,\n"
    "JSON under --out. Exit status: 0 ok; 1 no CUDA device (one line: \"convlab bench: no CUDA\n"
    "device: ...\"), an implementation failed, or the run could not go on; 2 usage.";

/* C1D_OK, or C1D_ERR_USAGE with the detail; *help set for --help. */
static c1d_status parse_args(int argc, char **argv, bench_opts *o, int *help) {
  const c1d_shape h = c1d_headline_shape();
  int64_t N = h.N, C = h.C, O = h.O, L = h.L, K = h.K, D = h.D, G = 1, repeats = BENCH_REPEATS;
  int bias = 0, quiet = 0, depthwise = 0, states = 0, no_torch = 0;
  double ceiling = BENCH_CEILING_TFLOPS;
  const char *impl = NULL, *dist = "conv_init", *oracle = "auto", *out = NULL, *save = NULL;
  const char *dtype = "f32", *layout = "ncl", *activation = "none";
  uint64_t seed = 0;
  c1d_option opts[] = {
      {"--impl", C1D_OPT_STRING, &impl, 0, 0, "A,B", "implementations to run, or all (default: every GPU one)", 0},
      {"--batch", C1D_OPT_INT, &N, 1, INT64_MAX, "N", "batch size (default 32)", 0},
      {"--cin", C1D_OPT_INT, &C, 1, INT64_MAX, "C", "input channels (default 256)", 0},
      {"--cout", C1D_OPT_INT, &O, 1, INT64_MAX, "O", "output channels (default 256)", 0},
      {"--length", C1D_OPT_INT, &L, 1, INT64_MAX, "L", "sequence length (default 8192)", 0},
      {"--taps", C1D_OPT_INT, &K, 1, INT64_MAX, "K", "kernel taps (default 4)", 0},
      {"--dilation", C1D_OPT_INT, &D, 1, INT64_MAX, "D", "dilation (default 1)", 0},
      {"--bias", C1D_OPT_FLAG, &bias, 0, 0, NULL, "add a bias tensor", 0},
      {"--groups", C1D_OPT_INT, &G, 1, INT64_MAX, "G", "groups (default 1: dense)", 0},
      {"--depthwise", C1D_OPT_FLAG, &depthwise, 0, 0, NULL, "G = C = O; the anchor N=8 C=4096 L=4096 K=4 D=1 unless given", 0},
      {"--dtype", C1D_OPT_STRING, &dtype, 0, 0, "T", "every tensor's element type: f32 (default), bf16, f16", 0},
      {"--layout", C1D_OPT_STRING, &layout, 0, 0, "ORDER", "ncl (default) or nlc: channel-last for the kernels that read it", 0},
      {"--activation", C1D_OPT_STRING, &activation, 0, 0, "ACT", "none (default) or silu", 0},
      {"--initial-states", C1D_OPT_FLAG, &states, 0, 0, NULL, "initial states before t = 0", 0},
      {"--repeats", C1D_OPT_INT, &repeats, 1, 100000, "R", "timed runs per implementation (default 50)", 0},
      {"--ceiling-tflops", C1D_OPT_DOUBLE, &ceiling, 0, 0, "T", "FP32 ceiling for % of peak (default 67)", 0},
      {"--dist", C1D_OPT_STRING, &dist, 0, 0, "NAME", "inputs: conv_init (default: the story's), normal, uniform, ...", 0},
      {"--seed", C1D_OPT_U64, &seed, 0, 0, "S", "input seed (default 0)", 0},
      {"--oracle", C1D_OPT_STRING, &oracle, 0, 0, "WHERE", "auto, cpu or gpu (default auto)", 0},
      {"--out", C1D_OPT_STRING, &out, 0, 0, "FILE", "write the JSON report here (atomically)", 0},
      {"--save-inputs", C1D_OPT_STRING, &save, 0, 0, "DIR", "write x.npy, w.npy (b.npy, s.npy) here", 0},
      {"--no-torch", C1D_OPT_FLAG, &no_torch, 0, 0, NULL, "leave out PyTorch's rows", 0},
      {"--quiet", C1D_OPT_FLAG, &quiet, 0, 0, NULL, "no progress lines on stderr", 0},
  };
  const int n_opts = (int)(sizeof opts / sizeof opts[0]);
  c1d_status st = c1d_cli_parse(opts, n_opts, argc, argv, help);
  if (st != C1D_OK) return st;
  if (*help) {
    c1d_cli_help(stdout, bench_usage, bench_description, opts, n_opts);
    return C1D_OK;
  }
  memset(o, 0, sizeof *o);
  if (depthwise) {
    if (c1d_cli_find(opts, n_opts, "--groups")->seen)
      return c1d_fail(C1D_ERR_USAGE, "--depthwise sets the groups: give --groups or --depthwise, not both");
    const int c_seen = c1d_cli_find(opts, n_opts, "--cin")->seen, o_seen = c1d_cli_find(opts, n_opts, "--cout")->seen;
    if (c_seen && o_seen && C != O)
      return c1d_fail(C1D_ERR_USAGE, "--depthwise needs --cin and --cout equal (got %lld and %lld)", (long long)C,
                      (long long)O);
    /* The anchor of issue 16 for every size not given. */
    if (!c1d_cli_find(opts, n_opts, "--batch")->seen) N = 8;
    if (!c_seen) C = o_seen ? O : 4096;
    O = G = C;
    if (!c1d_cli_find(opts, n_opts, "--length")->seen) L = 4096;
  }
  o->shape = (c1d_shape){N, C, O, L, K, D, bias};
  o->shape.G = G;
  o->shape.states = states;
  c1d_dtype d;
  if ((st = c1d_dtype_parse(dtype, &d)) != C1D_OK) return st;
  o->shape.dt = (c1d_dtypes){d, d, d, d, d};
  if (strcmp(layout, "ncl") && strcmp(layout, "nlc"))
    return c1d_fail(C1D_ERR_USAGE, "--layout must be ncl or nlc (got '%.40s')", layout);
  o->shape.layout = strcmp(layout, "nlc") ? C1D_LAYOUT_NCL : C1D_LAYOUT_NLC;
  if (strcmp(activation, "none") && strcmp(activation, "silu"))
    return c1d_fail(C1D_ERR_USAGE, "--activation must be none or silu (got '%.40s')", activation);
  o->shape.act = strcmp(activation, "silu") ? C1D_ACT_NONE : C1D_ACT_SILU;
  o->impl_list = impl && strcmp(impl, "all") != 0 ? impl : NULL;
  o->repeats = (int)repeats;
  if (!(ceiling > 0.0))
    return c1d_fail(C1D_ERR_USAGE, "--ceiling-tflops must be positive (got %g)", ceiling);
  o->ceiling_tflops = ceiling;
  o->ceiling_given = c1d_cli_find(opts, n_opts, "--ceiling-tflops")->seen;
  if (c1d_dist_parse(dist, &o->dist) != C1D_OK) return C1D_ERR_USAGE;
  o->seed = seed;
  if ((st = c1d_oracle_parse(oracle, &o->oracle)) != C1D_OK) return st;
  o->out = out;
  o->save_inputs = save;
  o->quiet = quiet;
  o->no_torch = no_torch;
  return C1D_OK;
}

// --- the implementation list --------------------------------------------------------------------

static int has_impl(const c1d_impl *const *list, int n, const c1d_impl *impl) {
  for (int i = 0; i < n; i++)
    if (list[i] == impl) return 1;
  return 0;
}

static int add_impl(const c1d_impl **list, int *n, const c1d_impl *impl) {
  if (!impl || has_impl(list, *n, impl)) return 0;
  if (*n >= MAX_IMPLS) return -1;
  list[(*n)++] = impl;
  return 0;
}

/* The rows: --impl's names (or every GPU implementation of tier main or variant), then the references
 * the table needs: cuDNN's fastest per math mode and, beside any TF32 row, the model. */
static c1d_status build_list(const bench_opts *o, const c1d_impl **list, int *n) {
  int count = 0;
  const c1d_impl *const *all = c1d_registry(&count);
  *n = 0;
  if (o->impl_list) {
    char *copy = strdup(o->impl_list), *save = NULL;
    if (!copy) return c1d_fail(C1D_ERR_NO_MEMORY, "out of memory");
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
      const c1d_impl *impl = c1d_find_impl(tok);
      if (!impl) {
        c1d_fail_unknown_impl("unknown implementation", tok);
        free(copy);
        return C1D_ERR_USAGE;
      }
      if (add_impl(list, n, impl)) {
        free(copy);
        return c1d_fail(C1D_ERR_USAGE, "more than %d implementations", MAX_IMPLS);
      }
    }
    free(copy);
  } else {
    /* Grouped problems: the implementations that take groups. */
    const unsigned need = memory_bound(&o->shape) ? C1D_CAP_GROUPS : 0;
    for (int i = 0; i < count; i++)
      if (all[i]->backend == C1D_BACKEND_GPU && all[i]->tier != C1D_TIER_MUTANT && (all[i]->caps & need) == need)
        add_impl(list, n, all[i]);
  }
  if (memory_bound(&o->shape)) {
    add_impl(list, n, c1d_find_impl(cudnn_reference(&o->shape)));
    return C1D_OK;
  }
  add_impl(list, n, c1d_find_impl(REF_FP32));
  add_impl(list, n, c1d_find_impl(REF_TF32));
  for (int i = 0; i < *n; i++)
    if (list[i]->precision == C1D_PREC_TF32_ALLOWED || list[i]->precision == C1D_PREC_TF32) {
      add_impl(list, n, c1d_find_impl(MODEL_NAME));
      break;
    }
  return C1D_OK;
}

// --- results -------------------------------------------------------------------------------------

static const c1d_trial_result *ran(const c1d_run_results *r, const char *name) {
  for (int i = 0; i < r->n_impls; i++)
    if (!strcmp(r->impls[i].name, name) && r->impls[i].state == C1D_RESULT_RAN)
      return &r->impls[i].trials[0];
  return NULL;
}

static double time_of(const c1d_run_results *r, const char *name) {
  const c1d_trial_result *t = ran(r, name);
  return t ? t->time_median_ms : NAN;
}

static int is_tf32_row(const c1d_impl_result *ir) {
  return ir->impl && ir->impl->precision == C1D_PREC_TF32_ALLOWED;
}

static double fail_fraction(const c1d_trial_result *t) {
  return t->metrics.count ? (double)t->metrics.fail_default / (double)t->metrics.count : NAN;
}

static void print_num(FILE *f, const char *fmt, double v, int width) {
  if (isfinite(v))
    fprintf(f, fmt, v);
  else
    fprintf(f, "%*s ", width, "-"); /* the formats end in a space: keep the columns */
}

/* The machine line both tables open with. */
static void print_machine(FILE *f, const bench_opts *o, const c1d_machine *m) {
  char drv[16], rt[16];
  c1d_cuda_version_text(m->driver_version, drv, sizeof drv);
  c1d_cuda_version_text(m->runtime_version, rt, sizeof rt);
  fprintf(f, "%s (sm_%d%d, %d SMs), driver CUDA %s, runtime %s, cuDNN %ld.%ld.%ld, cuBLAS %d.%d.%d; "
          "median of %d runs\n",
          m->gpu_name, m->cc_major, m->cc_minor, m->sm_count, drv, rt, m->cudnn_version / 10000,
          m->cudnn_version / 100 % 100, m->cudnn_version % 100, m->cublas_version / 10000,
          m->cublas_version / 100 % 100, m->cublas_version % 100, o->repeats);
}

/* Skipped and failed rows: one line each, the same in both tables. 1 when the row has no output. */
static int print_missing(FILE *f, const c1d_impl_result *ir) {
  if (ir->state == C1D_RESULT_SKIPPED) {
    fprintf(f, "%-20s skipped: %s\n", ir->name, ir->skip_reason);
    return 1;
  }
  if (ir->state == C1D_RESULT_FAILED) {
    fprintf(f, "%-20s FAILED: %s\n", ir->name, ir->trials[0].error);
    return 1;
  }
  return 0;
}

/* What every row of the grouped table is measured against. */
typedef struct bw_refs {
  double bytes, copy_gbps;
  double t_cudnn, t_torch, t_nhwc; /* cuDNN's fastest, PyTorch's F.conv1d and its cuDNN NHWC: ms, or NAN */
} bw_refs;

static bw_refs bandwidth_refs(const c1d_run_results *r, double copy_gbps, const c1d_torch_rows *torch) {
  const c1d_torch_row *conv1d = c1d_torch_find(torch, C1D_TORCH_CONV1D), *nhwc = c1d_torch_find(torch, C1D_TORCH_NHWC);
  return (bw_refs){moved_bytes(&r->shape), copy_gbps, time_of(r, cudnn_reference(&r->shape)),
                   conv1d ? conv1d->ms : NAN, nhwc ? nhwc->ms : NAN};
}

/* The numbers of one row, convlab's or PyTorch's: up to the algorithm column. */
static void print_bw_cells(FILE *f, const char *name, double ms, const bw_refs *refs, double rel_l2,
                           double max_abs, double fail) {
  const double gbps = refs->bytes / (ms * 1e6);
  fprintf(f, "%-22s ", name);
  print_num(f, "%9.3f ", ms, 9);
  print_num(f, "%9.0f ", gbps, 9);
  print_num(f, "%6.1f ", 100.0 * gbps / refs->copy_gbps, 6);
  print_num(f, "%7.3f ", ms / refs->t_cudnn, 7);
  print_num(f, "%7.3f ", ms / refs->t_torch, 7);
  print_num(f, "%9.2e ", rel_l2, 9);
  print_num(f, "%9.2e ", max_abs, 9);
  print_num(f, "%7.2f ", 100.0 * fail, 7);
}

/* PyTorch's rows under convlab's, or the one line that says why there are none. */
static void print_torch_rows(FILE *f, const c1d_torch_rows *torch, const bw_refs *refs) {
  if (!torch->measured) {
    fprintf(f, "PyTorch rows: not measured (%s)\n", torch->reason);
    return;
  }
  for (int i = 0; i < torch->n; i++) {
    const c1d_torch_row *t = &torch->rows[i];
    print_bw_cells(f, t->name, t->ms, refs, t->rel_l2, t->max_abs, t->fail_fraction);
    fprintf(f, " PyTorch %s: %s\n", torch->version, t->label);
  }
  if (torch->left_out[0]) fprintf(f, "PyTorch rows left out: %s\n", torch->left_out);
}

/* "NAME: Ax cuDNN's fastest, Bx PyTorch F.conv1d, Cx PyTorch cuDNN NHWC" (the row's time over theirs),
 * with the ratios that exist. */
static void print_ratio_line(FILE *f, const char *name, double ms, const bw_refs *refs) {
  const double ratio[3] = {ms / refs->t_cudnn, ms / refs->t_torch, ms / refs->t_nhwc};
  const char *const over[3] = {"cuDNN's fastest", "PyTorch F.conv1d", "PyTorch cuDNN NHWC"};
  int said = 0;
  for (int k = 0; k < 3; k++) {
    if (!isfinite(ratio[k])) continue;
    fprintf(f, "%s%s %.3gx %s", said ? "" : name, said ? "," : ":", ratio[k], over[k]);
    said = 1;
  }
  if (said) fputc('\n', f);
}

/* The grouped table: bytes moved against the copy measured in this run, PyTorch's rows beside
 * convlab's. */
static void print_bandwidth_table(FILE *f, const bench_opts *o, const c1d_run_results *r, const c1d_machine *m,
                                  double copy_gbps, const c1d_torch_rows *torch) {
  char shape[192];
  const char *ref = cudnn_reference(&r->shape);
  const bw_refs refs = bandwidth_refs(r, copy_gbps, torch);
  const c1d_torch_row *conv1d = c1d_torch_find(torch, C1D_TORCH_CONV1D);
  c1d_shape_format(&r->shape, shape, sizeof shape);
  fprintf(f, "convlab bench: %s, %.1f MB moved (x read + y written), inputs %s seed %llu, oracle float64 (%s)\n",
          shape, refs.bytes / 1e6, c1d_dist_name(o->dist), (unsigned long long)o->seed, r->oracle);
  print_machine(f, o, m);
  fprintf(f, "device-to-device copy: %.0f GB/s (bytes read + written, median of %d, this run)\n", copy_gbps,
          COPY_REPEATS);
  fprintf(f, "%-22s %9s %9s %6s %7s %7s %9s %9s %7s  %s\n", "implementation", "ms", "GB/s", "%copy", "/cudnn",
          "/torch", "rel L2", "max|err|", "fail%", "algo; math");
  for (int i = 0; i < r->n_impls; i++) {
    const c1d_impl_result *ir = &r->impls[i];
    if (print_missing(f, ir)) continue;
    const c1d_trial_result *t = &ir->trials[0];
    print_bw_cells(f, ir->name, t->time_median_ms, &refs, t->metrics.rel_l2, t->metrics.max_abs, fail_fraction(t));
    fprintf(f, " %s; %s\n", t->algo[0] ? t->algo : "-", t->math[0] ? t->math : "-");
  }
  print_torch_rows(f, torch, &refs);
  for (int i = 0; i < r->n_impls; i++)
    if (r->impls[i].state == C1D_RESULT_RAN)
      print_ratio_line(f, r->impls[i].name, r->impls[i].trials[0].time_median_ms, &refs);
  fprintf(f,
          "ms: median time of run() by CUDA events; GB/s: x read + y written (in their types) over ms; %%copy: "
          "over the copy above; /cudnn: time over %s's in this run (cuDNN's fastest); /torch: time over %s's "
          "(PyTorch's F.conv1d on the same inputs, run after the rows: CUDA events, median of %d, L2 flushed); "
          "rel L2, max|err|, fail%% (allclose atol=rtol=1e-4) against float64.\n",
          ref, conv1d ? conv1d->name : "torch_conv1d", o->repeats);
}

/* The dense table's PyTorch rows (scripts/crosscheck_torch.py --rows-only on a G = 1 float32 problem):
 * F.conv1d in cuDNN's benchmark mode, TF32 off and on. A row that may use TF32 tensor cores is read
 * against PyTorch's TF32 row, every other (fp32 and 3xTF32 accuracy) against its FP32 row. */
#define TORCH_FP32 "torch_conv1d_fp32"
#define TORCH_TF32 "torch_conv1d_tf32"

static int uses_tf32_math(const c1d_impl_result *ir) {
  return is_tf32_row(ir) || (ir->impl && ir->impl->precision == C1D_PREC_TF32);
}

static double torch_ms(const c1d_torch_rows *torch, const char *name) {
  const c1d_torch_row *t = torch ? c1d_torch_find(torch, name) : NULL;
  return t ? t->ms : NAN;
}

/* The dense cells from ms to fail%, convlab's rows and PyTorch's alike. */
static void print_dense_cells(FILE *f, const bench_opts *o, const c1d_run_results *r, const char *name, double ms,
                              double t_torch, double rel_l2, double max_abs, double fail) {
  const double gf = r->flops / (ms * 1e6);
  fprintf(f, "%-20s ", name);
  print_num(f, "%9.3f ", ms, 9);
  print_num(f, "%9.0f ", gf, 9);
  print_num(f, "%6.1f ", 100.0 * gf / (o->ceiling_tflops * 1e3), 6);
  print_num(f, "%6.2f ", ms / time_of(r, REF_FP32), 6);
  print_num(f, "%6.2f ", ms / time_of(r, REF_TF32), 6);
  print_num(f, "%6.2f ", ms / t_torch, 6);
  print_num(f, "%9.2e ", rel_l2, 9);
  print_num(f, "%9.2e ", max_abs, 9);
  print_num(f, "%7.2f ", 100.0 * fail, 7);
}

static void print_table(FILE *f, const bench_opts *o, const c1d_run_results *r, const c1d_machine *m,
                        const c1d_torch_rows *torch) {
  char shape[160];
  const c1d_trial_result *model = ran(r, MODEL_NAME);
  c1d_shape_format(&r->shape, shape, sizeof shape);
  fprintf(f, "convlab bench: %s, %.1f GFLOP, inputs %s seed %llu, oracle float64 (%s)\n", shape,
          r->flops / 1e9, c1d_dist_name(o->dist), (unsigned long long)o->seed, r->oracle);
  print_machine(f, o, m);
  fprintf(f, "%-20s %9s %9s %6s %6s %6s %6s %9s %9s %7s %9s %6s  %s\n", "implementation", "ms", "GFLOP/s",
          "%ceil", "/fp32", "/tf32", "/torch", "rel L2", "max|err|", "fail%", "model L2", "obs/m", "algo; math");
  for (int i = 0; i < r->n_impls; i++) {
    const c1d_impl_result *ir = &r->impls[i];
    if (print_missing(f, ir)) continue;
    const c1d_trial_result *t = &ir->trials[0];
    print_dense_cells(f, o, r, ir->name, t->time_median_ms, torch_ms(torch, uses_tf32_math(ir) ? TORCH_TF32 : TORCH_FP32),
                      t->metrics.rel_l2, t->metrics.max_abs, fail_fraction(t));
    if (is_tf32_row(ir) && model) {
      print_num(f, "%9.2e ", model->metrics.rel_l2, 9);
      print_num(f, "%6.2f ", t->metrics.rel_l2 / model->metrics.rel_l2, 6);
    } else {
      fprintf(f, "%9s %6s ", "", "");
    }
    fprintf(f, " %s%s%s", t->algo[0] ? t->algo : "-", "; ", t->math[0] ? t->math : "-");
    if (t->used_tf32 < 0 && is_tf32_row(ir)) fprintf(f, " (TF32 use unknown)");
    fprintf(f, "\n");
  }
  if (torch && !torch->measured) fprintf(f, "PyTorch rows: not measured (%s)\n", torch->reason);
  for (int i = 0; torch && torch->measured && i < torch->n; i++) {
    const c1d_torch_row *t = &torch->rows[i];
    print_dense_cells(f, o, r, t->name, t->ms, t->ms, t->rel_l2, t->max_abs, t->fail_fraction);
    fprintf(f, "%9s %6s  PyTorch %s: %s\n", "", "", torch->version, t->label);
  }
  fprintf(f,
          "ms: median time of run() by CUDA events; %%ceil: GFLOP/s over %.1f TFLOP/s (FP32 FMA, %s; TF32 "
          "tensor cores can exceed it); /fp32, "
          "/tf32: time over " REF_FP32 "'s and " REF_TF32 "'s in this run (cuDNN's fastest); /torch: time over "
          "PyTorch's F.conv1d in cuDNN's benchmark mode on the same inputs (run after the rows, timed alike), "
          TORCH_TF32 " for rows that may use TF32, else " TORCH_FP32 "; rel L2, max|err|, fail%% "
          "(allclose atol=rtol=1e-4) against float64; model L2: %s's rel L2 (inputs rounded to TF32), "
          "obs/m: observed over model, for rows that allow TF32.\n",
          o->ceiling_tflops, o->ceiling_given ? "given" : "default", MODEL_NAME);
}

// --- JSON ----------------------------------------------------------------------------------------

static void add_num(cJSON *o, const char *key, double v) {
  if (isfinite(v))
    cJSON_AddNumberToObject(o, key, v);
  else
    cJSON_AddNullToObject(o, key);
}

/* The grouped numbers of one row, convlab's or PyTorch's. */
static void add_bw_numbers(cJSON *row, double ms, const bw_refs *refs) {
  const double gbps = refs->bytes / (ms * 1e6);
  add_num(row, "gbps", gbps);
  add_num(row, "pct_of_copy", 100.0 * gbps / refs->copy_gbps);
  add_num(row, "ratio_to_cudnn", ms / refs->t_cudnn);
  add_num(row, "ratio_to_torch_conv1d", ms / refs->t_torch);
  add_num(row, "ratio_to_torch_cudnn_nhwc", ms / refs->t_nhwc);
}

/* "torch_rows": PyTorch's rows as measured, or why there are none; refs: the grouped table's references
 * (NULL for the dense table, whose ratios are to cuDNN's fastest per math mode). */
static void add_torch_json(cJSON *root, const c1d_torch_rows *torch, const bw_refs *refs, const c1d_run_results *r) {
  cJSON *tj = cJSON_AddObjectToObject(root, "torch_rows");
  if (!tj) return;
  cJSON_AddBoolToObject(tj, "measured", torch->measured);
  if (!torch->measured) {
    cJSON_AddStringToObject(tj, "reason", torch->reason);
    return;
  }
  cJSON_AddStringToObject(tj, "torch", torch->version);
  add_num(tj, "cudnn_version", torch->cudnn);
  cJSON_AddStringToObject(tj, "device", torch->device);
  cJSON_AddStringToObject(tj, "script", "scripts/crosscheck_torch.py --rows-only");
  if (torch->left_out[0]) cJSON_AddStringToObject(tj, "left_out", torch->left_out);
  cJSON *rows = cJSON_AddArrayToObject(tj, "rows");
  for (int i = 0; i < torch->n && rows; i++) {
    const c1d_torch_row *t = &torch->rows[i];
    cJSON *row = cJSON_CreateObject();
    if (!row) return;
    cJSON_AddItemToArray(rows, row);
    cJSON_AddStringToObject(row, "name", t->name);
    cJSON_AddStringToObject(row, "label", t->label);
    add_num(row, "time_median_ms", t->ms);
    if (refs) {
      add_bw_numbers(row, t->ms, refs);
    } else {
      add_num(row, "gflops", r->flops / (t->ms * 1e6));
      add_num(row, "ratio_to_cudnn_fp32_fastest", t->ms / time_of(r, REF_FP32));
      add_num(row, "ratio_to_cudnn_tf32_fastest", t->ms / time_of(r, REF_TF32));
    }
    add_num(row, "rel_l2", t->rel_l2);
    add_num(row, "max_abs", t->max_abs);
    add_num(row, "fail_allclose_fraction", t->fail_fraction);
  }
}

/* torch: PyTorch's rows, or why there are none. */
static cJSON *bench_json(const bench_opts *o, const c1d_run_results *r, const c1d_machine *m, double copy_gbps,
                         const c1d_torch_rows *torch, int argc, char **argv) {
  const double t_fp32 = time_of(r, REF_FP32), t_tf32 = time_of(r, REF_TF32);
  const c1d_trial_result *model = ran(r, MODEL_NAME);
  const bw_refs refs = bandwidth_refs(r, copy_gbps, torch);
  cJSON *root = cJSON_CreateObject();
  if (!root) return NULL;
  cJSON_AddStringToObject(root, "convlab_version", C1D_VERSION);
  cJSON_AddStringToObject(root, "command", "bench");
  cJSON *av = cJSON_AddArrayToObject(root, "argv");
  for (int i = 0; i < argc && av; i++) cJSON_AddItemToArray(av, cJSON_CreateString(argv[i]));
  cJSON *mj = cJSON_AddObjectToObject(root, "machine");
  if (mj) {
    cJSON_AddStringToObject(mj, "gpu", m->gpu_name);
    add_num(mj, "sm_count", m->sm_count);
    add_num(mj, "cc_major", m->cc_major);
    add_num(mj, "cc_minor", m->cc_minor);
    add_num(mj, "driver_version", m->driver_version);
    add_num(mj, "runtime_version", m->runtime_version);
    add_num(mj, "cudnn_version", (double)m->cudnn_version);
    add_num(mj, "cublas_version", m->cublas_version);
    cJSON_AddStringToObject(mj, "cpu", m->cpu);
  }
  cJSON *sj = c1d_problem_json(&r->shape); /* run's problem object (report-format.md), and what bench adds */
  if (sj) {
    cJSON_AddItemToObject(root, "shape", sj);
    add_num(sj, "flops", r->flops);
    add_num(sj, "bytes_moved", moved_bytes(&r->shape));
  }
  if (memory_bound(&r->shape)) {
    add_num(root, "copy_gbps", copy_gbps);
    cJSON_AddStringToObject(root, "cudnn_reference", cudnn_reference(&r->shape));
    if (torch) add_torch_json(root, torch, &refs, r);
  } else if (torch) {
    add_torch_json(root, torch, NULL, r);
  }
  cJSON_AddStringToObject(root, "dist", c1d_dist_name(o->dist));
  char seed[32]; /* exact: a double would round seeds above 2^53 */
  snprintf(seed, sizeof seed, "%llu", (unsigned long long)o->seed);
  cJSON_AddRawToObject(root, "seed", seed);
  cJSON_AddStringToObject(root, "oracle", r->oracle);
  add_num(root, "repeats", o->repeats);
  add_num(root, "ceiling_tflops", o->ceiling_tflops);
  cJSON_AddStringToObject(root, "ceiling_source", o->ceiling_given ? "given" : "default");
  add_num(root, "atol", r->atol);
  add_num(root, "rtol", r->rtol);
  cJSON *rows = cJSON_AddArrayToObject(root, "rows");
  for (int i = 0; i < r->n_impls && rows; i++) {
    const c1d_impl_result *ir = &r->impls[i];
    cJSON *row = cJSON_CreateObject();
    if (!row) break;
    cJSON_AddItemToArray(rows, row);
    cJSON_AddStringToObject(row, "name", ir->name);
    cJSON_AddStringToObject(row, "backend", ir->backend ? ir->backend : "gpu");
    cJSON_AddStringToObject(row, "precision", ir->precision ? ir->precision : "");
    cJSON_AddStringToObject(row, "summary", ir->summary ? ir->summary : "");
    cJSON_AddStringToObject(row, "state", ir->state == C1D_RESULT_RAN       ? "ran"
                                          : ir->state == C1D_RESULT_SKIPPED ? "skipped"
                                                                             : "failed");
    if (ir->state == C1D_RESULT_SKIPPED) {
      cJSON_AddStringToObject(row, "reason", ir->skip_reason);
      continue;
    }
    const c1d_trial_result *t = &ir->trials[0];
    if (ir->state == C1D_RESULT_FAILED) {
      cJSON_AddStringToObject(row, "reason", t->error);
      continue;
    }
    add_num(row, "time_median_ms", t->time_median_ms);
    add_num(row, "time_min_ms", t->time_min_ms);
    add_num(row, "repeats", t->repeats);
    add_num(row, "gflops", t->gflops);
    add_num(row, "pct_of_fp32_ceiling", 100.0 * t->gflops / (o->ceiling_tflops * 1e3));
    add_num(row, "ratio_to_cudnn_fp32_fastest", t->time_median_ms / t_fp32);
    add_num(row, "ratio_to_cudnn_tf32_fastest", t->time_median_ms / t_tf32);
    add_num(row, "rel_l2", t->metrics.rel_l2);
    add_num(row, "max_abs", t->metrics.max_abs);
    add_num(row, "fail_allclose_fraction", fail_fraction(t));
    add_num(row, "nonfinite", (double)t->metrics.nonfinite);
    add_num(row, "ulp_p50", t->metrics.ulp_p50);
    add_num(row, "ulp_max", t->metrics.ulp_max);
    if (t->algo[0]) cJSON_AddStringToObject(row, "algo", t->algo);
    else cJSON_AddNullToObject(row, "algo");
    if (t->math[0]) cJSON_AddStringToObject(row, "math", t->math);
    else cJSON_AddNullToObject(row, "math");
    if (t->used_tf32 < 0) cJSON_AddNullToObject(row, "used_tf32");
    else cJSON_AddBoolToObject(row, "used_tf32", t->used_tf32);
    if (is_tf32_row(ir) && model) {
      add_num(row, "model_rel_l2", model->metrics.rel_l2);
      add_num(row, "observed_over_model", t->metrics.rel_l2 / model->metrics.rel_l2);
    }
    if (memory_bound(&r->shape)) {
      add_bw_numbers(row, t->time_median_ms, &refs);
    } else if (torch) {
      const char *ref = uses_tf32_math(ir) ? TORCH_TF32 : TORCH_FP32;
      cJSON_AddStringToObject(row, "torch_reference", ref);
      add_num(row, "ratio_to_torch", t->time_median_ms / torch_ms(torch, ref));
    }
  }
  return root;
}

static int write_json(const char *path, cJSON *root) {
  char *text = cJSON_Print(root);
  c1d_atomic_file af;
  if (!text) {
    fprintf(stderr, "convlab bench: out of memory printing the JSON report\n");
    return 1;
  }
  if (c1d_atomic_open(&af, path) != C1D_OK) {
    c1d_print_line(stderr, "convlab bench: %s", c1d_error_detail());
    free(text);
    return 1;
  }
  fputs(text, af.f);
  fputc('\n', af.f);
  free(text);
  if (c1d_atomic_commit(&af) != C1D_OK) {
    c1d_print_line(stderr, "convlab bench: %s", c1d_error_detail());
    return 1;
  }
  return 0;
}

static int save_inputs(const char *dir, const c1d_shape *s, const float *x, const float *w,
                       const float *b, const float *st) {
  if (c1d_bench_write_inputs(dir, s, x, w, b, st) == C1D_OK) return 0;
  c1d_print_line(stderr, "convlab bench: %s", c1d_error_detail());
  return 1;
}

// --- the subcommand ------------------------------------------------------------------------------

int c1d_cmd_bench(int argc, char **argv) {
  bench_opts o;
  const c1d_impl *list[MAX_IMPLS];
  int n = 0, help = 0, rc = C1D_EXIT_OK;
  float *x = NULL, *w = NULL, *b = NULL, *st_in = NULL;
  double copy_gbps = NAN;
  c1d_torch_rows torch = {0, "--no-torch"};
  c1d_run_results res;
  c1d_run_config cfg;
  c1d_machine machine;
  c1d_status st;
  memset(&res, 0, sizeof res);
  c1d_error_clear();
  if ((st = parse_args(argc, argv, &o, &help)) != C1D_OK) return c1d_cmd_error("bench", st);
  if (help) return C1D_EXIT_OK;
  if ((st = c1d_shape_validate(&o.shape)) != C1D_OK) return c1d_cmd_error("bench", C1D_ERR_USAGE);
  if ((st = build_list(&o, list, &n)) != C1D_OK) return c1d_cmd_error("bench", st);
  {
    const char *why = c1d_gpu_why_unavailable();
    if (why) {
      fprintf(stderr, "convlab bench: %s%s\n", strncmp(why, "no CUDA device", 14) ? "no CUDA device: " : "",
              why);
      return C1D_EXIT_FAILURE;
    }
  }

  c1d_run_config_default(&cfg);
  cfg.shape = o.shape;
  cfg.impls = list;
  cfg.n_impls = n;
  cfg.dist = o.dist;
  cfg.seed = o.seed;
  cfg.trials = 1;
  cfg.repeats = o.repeats;
  cfg.oracle = o.oracle;
  cfg.progress = !o.quiet && isatty(STDERR_FILENO); /* progress lines only for a person watching */
  cfg.progress_who = "convlab bench";
  cfg.no_verdicts = 1;                                 /* the bench prints errors, not verdicts */
  if ((st = c1d_run_check(&cfg)) != C1D_OK) return c1d_cmd_error("bench", st);
  /* The inputs are made here, not by the runner, so that --save-inputs writes exactly what ran. */
  x = malloc((size_t)c1d_x_count(&o.shape) * sizeof *x);
  w = malloc((size_t)c1d_w_count(&o.shape) * sizeof *w);
  b = o.shape.bias ? malloc((size_t)o.shape.O * sizeof *b) : NULL;
  st_in = o.shape.states ? malloc((size_t)c1d_s_count(&o.shape) * sizeof *st_in) : NULL;
  if (!x || !w || (o.shape.bias && !b) || (o.shape.states && !st_in)) {
    fprintf(stderr, "convlab bench: out of host memory for the inputs\n");
    rc = C1D_EXIT_FAILURE;
    goto done;
  }
  c1d_generate(&o.shape, o.dist, o.seed, x, w, b);
  if (st_in) c1d_generate_states(&o.shape, o.dist, o.seed, st_in);
  if (o.save_inputs && (rc = save_inputs(o.save_inputs, &o.shape, x, w, b, st_in))) goto done;
  cfg.x = x;
  cfg.w = w;
  cfg.b = b;
  cfg.st = st_in;

  c1d_machine_describe(&machine);
  if ((st = c1d_run(&cfg, &res)) != C1D_OK) {
    rc = c1d_cmd_error("bench", st);
    goto done;
  }
  if (memory_bound(&o.shape)) {
    /* The ceiling of this run: a copy of x's bytes, timed like the rows. */
    const size_t bytes = (size_t)c1d_x_count(&o.shape) * (size_t)c1d_dtype_size(o.shape.dt.x);
    if ((st = c1d_gpu_copy_gbps(bytes, COPY_REPEATS, &copy_gbps)) != C1D_OK) {
      rc = c1d_cmd_error("bench", st);
      goto done;
    }
    /* PyTorch's rows: a process of its own, after every timing of convlab's above. */
    if (!o.no_torch) c1d_bench_torch(&o.shape, x, w, b, st_in, o.repeats, cfg.progress, &torch);
    print_bandwidth_table(stdout, &o, &res, &machine, copy_gbps, &torch);
  } else {
    if (!o.no_torch) c1d_bench_torch(&o.shape, x, w, b, st_in, o.repeats, cfg.progress, &torch);
    print_table(stdout, &o, &res, &machine, &torch);
  }
  if (o.out) {
    cJSON *root = bench_json(&o, &res, &machine, copy_gbps, &torch, argc, argv);
    if (!root) {
      fprintf(stderr, "convlab bench: out of memory building the JSON report\n");
      rc = C1D_EXIT_FAILURE;
      goto done;
    }
    rc = write_json(o.out, root);
    cJSON_Delete(root);
    if (rc) goto done;
  }
  rc = c1d_run_any_failed(&res) ? C1D_EXIT_FAILURE : C1D_EXIT_OK;
done:
  c1d_run_results_free(&res);
  free(x);
  free(w);
  free(b);
  free(st_in);
  return rc;
}
