/* convlab run: parse the flags into a c1d_run_config (the problem from flags, or from .npy files or a
 * safetensors case; the implementations by name), run it, and print or write the reports. Every decision that can be made
 * before the run is made before the run: bad flags, conflicts, shapes and memory are refused without
 * allocating anything, and reports under --out appear only when the run completed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness/cli.h"
#include "harness/cmd_shared.h"
#include "harness/commands.h"
#include "harness/execute.h"
#include "harness/registry.h"
#include "harness/report_files.h"
#include "harness/runner.h"
#include "harness/suggest.h"
#include "numerics/bounds.h"

/* On a CPU the headline shape's 137 GFLOP take minutes per implementation; per-element error statistics
 * depend on C*K and the data, not on N*L, so a smaller N and L keep them. They are the defaults of N and
 * L whenever nothing runs on a GPU, whichever other shape flags are given. */
#define CPU_DEFAULT_N 2
#define CPU_DEFAULT_L 4096
/* With a GPU, the CPU rows of the headline run cover its first two batch rows (1/16 of N*L: about a
 * second each on 16 cores instead of 15): their error statistics depend on C*K and the data, not on N*L,
 * and 2 x 256 x 8192 outputs leave every statistic well sampled. */
#define HEADLINE_CPU_ROWS 2

typedef struct run_args {
  int64_t N, C, O, L, K, D, trials, repeats, cpu_rows;
  int bias, json, html, estimate, allow_long;
  uint64_t seed;
  double atol, rtol, lambda;
  const char *dist, *impl, *oracle, *compare, *out, *save_outputs;
  const char *x, *w, *b, *case_path;
  const char *states; /* --initial-states: "" alone (generated states), or the states' .npy file */
  const char *dtype;
  c1d_problem_flags problem;
  c1d_string_list y;
} run_args;

/* Everything run() builds from the flags; released by plan_free. */
typedef struct run_plan {
  c1d_run_config cfg;
  const c1d_impl **impls;
  char compare_a[96], compare_b[96];
  c1d_user_files files;
  c1d_run_estimate estimate;
  char shape_note[512];  /* printed once every check has passed: why N and L are CPU-sized */
} run_plan;

static const char usage[] = "convlab run [options]";
static const char description[] =
    "Runs each implementation on the same inputs, measures its error against the float64 oracle and\n"
    "its time, and prints one line per implementation. Inputs are generated (--dist, --seed; the\n"
    "problem from --groups, --activation, --initial-states, --dtype) or read from .npy files (--x,\n"
    "--w, --b, --initial-states FILE) or a safetensors case (--case); each --y (and a case's y) adds\n"
    "an output of yours as a row named file:NAME (NAME: the file's name; the path where two share\n"
    "one), which --compare can name. Implementations that do not handle the problem are skipped,\n"
    "with the reason (convlab list says what each handles).\n"
    "The default shape is the headline N=32 C=O=256 L=8192 K=4 D=1 when a GPU implementation runs on\n"
    "a CUDA device; otherwise (only CPU implementations) N=2 L=4096 unless --batch/--length say else.\n"
    "On the headline shape the CPU rows cover the first 2 of the 32 batch rows (--cpu-batch-rows; the\n"
    "GPU rows and the oracle all of them). Without --impl: every implementation that can run here (the\n"
    "CPU ones without a GPU); --compare A,B alone runs A and B. Work of more than a few seconds is\n"
    "announced with its estimated time first; work estimated beyond 24 h is refused (exit 2) unless\n"
    "--allow-long is given.\n"
    "Exit status: 0 done, 1 an implementation or the run failed (or what --compare names cannot run\n"
    "here), 2 bad command line.";

// --- the option table --------------------------------------------------------------------------

#define MAX_OPTS 48
static int option_table(run_args *a, c1d_option *o) {
  const int64_t big = C1D_MAX_ELEMENTS;
  const c1d_option t[] = {
      {"--batch", C1D_OPT_INT, &a->N, 1, big, "N", "batch size N", 0},
      {"--cin", C1D_OPT_INT, &a->C, 1, big, "C", "input channels C", 0},
      {"--cout", C1D_OPT_INT, &a->O, 1, big, "O", "output channels O", 0},
      {"--length", C1D_OPT_INT, &a->L, 1, big, "L", "sequence length L", 0},
      {"--taps", C1D_OPT_INT, &a->K, 1, big, "K", "kernel taps K", 0},
      {"--dilation", C1D_OPT_INT, &a->D, 1, big, "D", "dilation D (default 1)", 0},
      {"--bias", C1D_OPT_FLAG, &a->bias, 0, 0, NULL, "add a bias b[o] (default: none)", 0},
      {"--dist", C1D_OPT_STRING, &a->dist, 0, 0, "NAME",
       "conv_init (default: the story's), normal, uniform, integer, ill_conditioned", 0},
      {"--seed", C1D_OPT_U64, &a->seed, 0, 0, "S", "input seed; trial i uses S+i (default 0)", 0},
      {"--trials", C1D_OPT_INT, &a->trials, 1, 1000000, "T", "trials with fresh inputs (default 1)", 0},
      {"--impl", C1D_OPT_STRING, &a->impl, 0, 0, "A,B,..", "implementations by name, or all", 0},
      {"--cpu-batch-rows", C1D_OPT_INT, &a->cpu_rows, 0, big, "R",
       "CPU rows on the first R batch rows only (0: all; default 2 on the headline shape, else all)", 0},
      {"--repeats", C1D_OPT_INT, &a->repeats, 1, 1000000, "R",
       "timed runs each (default 20 GPU, at least 5 within ~0.3 s; 3 CPU; 1 CPU > 20 GFLOP)", 0},
      {"--atol", C1D_OPT_DOUBLE, &a->atol, 0, 0, "A", "allclose atol (default 1e-4)", 0},
      {"--rtol", C1D_OPT_DOUBLE, &a->rtol, 0, 0, "R", "allclose rtol (default 1e-4)", 0},
      {"--lambda", C1D_OPT_DOUBLE, &a->lambda, 0, 0, "L", "probabilistic bound constant (default 6)", 0},
      {"--oracle", C1D_OPT_STRING, &a->oracle, 0, 0, "WHERE", "cpu, gpu or auto (default)", 0},
      {"--compare", C1D_OPT_STRING, &a->compare, 0, 0, "A,B", "score A against B's output (alone: runs A and B only)", 0},
      {"--out", C1D_OPT_STRING, &a->out, 0, 0, "DIR", "write report.json, report.csv, report.txt", 0},
      {"--json", C1D_OPT_FLAG, &a->json, 0, 0, NULL, "print the JSON report instead of the table", 0},
      {"--html", C1D_OPT_FLAG, &a->html, 0, 0, NULL, "with --out: also report.html, plots that open offline", 0},
      {"--save-outputs", C1D_OPT_STRING, &a->save_outputs, 0, 0, "DIR",
       "save every output and the oracle's as .npy", 0},
      {"--x", C1D_OPT_STRING, &a->x, 0, 0, "FILE", "input x (N,C,L) from .npy", 0},
      {"--w", C1D_OPT_STRING, &a->w, 0, 0, "FILE", "weights w (O,C,K) from .npy", 0},
      {"--b", C1D_OPT_STRING, &a->b, 0, 0, "FILE", "bias b (O) from .npy", 0},
      {"--y", C1D_OPT_LIST, &a->y, 0, 0, "FILE", "an output of yours (N,O,L), float32 or float16 .npy; repeatable", 0},
      {"--initial-states", C1D_OPT_OPTIONAL, &a->states, 0, 0, "FILE",
       "states (N,C,(K-1)*D) before t=0: alone generated, with --x from .npy", 0},
      {"--case", C1D_OPT_STRING, &a->case_path, 0, 0, "FILE",
       "x, w, b, initial_states and y from one .safetensors file", 0},
      {"--dtype", C1D_OPT_STRING, &a->dtype, 0, 0, "T=TYPE,..",
       "generated tensors' types: x=bf16,w=bf16,y=bf16 (x w b s y, or all; f32 bf16 f16)", 0},
      {"--estimate", C1D_OPT_FLAG, &a->estimate, 0, 0, NULL, "say how big the run is and how long it takes here; stop", 0},
      {"--allow-long", C1D_OPT_FLAG, &a->allow_long, 0, 0, NULL, "run even when estimated beyond 24 h (else refused)", 0},
  };
  _Static_assert(sizeof t / sizeof t[0] + C1D_PROBLEM_OPTIONS <= MAX_OPTS, "MAX_OPTS is too small");
  const int n = (int)(sizeof t / sizeof t[0]);
  memcpy(o, t, sizeof t);
  return n + c1d_problem_options(&a->problem, o + n);
}

static int n_opts;

static int given(const c1d_option *opts, const char *name) {
  const c1d_option *o = c1d_cli_find(opts, n_opts, name);
  return o && o->seen;
}

// --- shape ---------------------------------------------------------------------------------------

/* The shape flags that were given must agree with the files. */
static c1d_status check_flags_against_files(const run_args *a, const c1d_option *opts,
                                            const c1d_shape *s) {
  const char *x = a->case_path ? a->case_path : a->x, *w = a->case_path ? a->case_path : a->w;
  const struct { const char *flag; int64_t value, file_value; const char *file, *letter; } f[] = {
      {"--batch", a->N, s->N, x, "N"},  {"--cin", a->C, s->C, x, "C"},
      {"--length", a->L, s->L, x, "L"}, {"--cout", a->O, s->O, w, "O"},
      {"--taps", a->K, s->K, w, "K"},
  };
  for (unsigned i = 0; i < sizeof f / sizeof f[0]; i++)
    if (given(opts, f[i].flag) && f[i].value != f[i].file_value)
      return c1d_fail(C1D_ERR_USAGE, "%s %lld disagrees with %s (%s=%lld)", f[i].flag,
                      (long long)f[i].value, f[i].file, f[i].letter, (long long)f[i].file_value);
  if (a->bias && !s->bias)
    return c1d_fail(C1D_ERR_USAGE, a->case_path ? "--bias: the case has no tensor b" : "--bias with --x needs --b");
  return C1D_OK;
}

/* Whether any flag of the shape was given. */
static int any_shape_flag(const c1d_option *opts) {
  static const char *const shape_flags[] = {"--batch", "--cin", "--cout", "--length", "--taps",
                                            "--dilation", "--bias"};
  int any = 0;
  for (unsigned i = 0; i < sizeof shape_flags / sizeof shape_flags[0]; i++) any |= given(opts, shape_flags[i]);
  return any;
}

/* Whether anything selected will run on a GPU here, on problem s. */
static int runs_on_gpu(const run_plan *p, int have_gpu, const c1d_shape *s) {
  for (int i = 0; have_gpu && i < p->cfg.n_impls; i++)
    if (p->impls[i]->backend == C1D_BACKEND_GPU && !c1d_impl_unsupported(p->impls[i], s)) return 1;
  return 0;
}

/* The generated problem's declarations: groups, states, activation, element types, layout. */
static c1d_status problem_from_flags(const run_args *a, c1d_shape *s) {
  c1d_input_problem pb = {0};
  c1d_status st = c1d_problem_flags_parse(&a->problem, &pb);
  if (st != C1D_OK) return st;
  if (a->dtype && (st = c1d_parse_dtypes(a->dtype, &s->dt)) != C1D_OK) return st;
  s->G = pb.G;
  s->act = pb.act;
  s->layout = pb.layout;
  s->states = a->states != NULL;
  return C1D_OK;
}

/* The shape from flags over a base: the headline shape when something runs on a GPU, else its CPU-sized
 * version (N and L only; the flags given override either), said in one line when it applies. */
static c1d_status shape_from_flags(const run_args *a, const c1d_option *opts, int have_gpu,
                                   run_plan *p, c1d_shape *s) {
  *s = c1d_headline_shape();
  if (given(opts, "--batch")) s->N = a->N;
  if (given(opts, "--cin")) s->C = a->C;
  if (given(opts, "--cout")) s->O = a->O;
  if (given(opts, "--length")) s->L = a->L;
  if (given(opts, "--taps")) s->K = a->K;
  s->D = a->D;
  s->bias = a->bias;
  c1d_status st = problem_from_flags(a, s);
  if (st != C1D_OK) return st;
  const int cpu_n = !given(opts, "--batch"), cpu_l = !given(opts, "--length");
  if (!runs_on_gpu(p, have_gpu, s) && (cpu_n || cpu_l)) {
    const c1d_shape headline = c1d_headline_shape();
    char text[200], what[96];
    if (cpu_n) s->N = CPU_DEFAULT_N;
    if (cpu_l) s->L = CPU_DEFAULT_L;
    c1d_shape_format(s, text, sizeof text);
    if (cpu_n && cpu_l)
      snprintf(what, sizeof what, "CPU-sized N and L, not the headline %lld and %lld", (long long)headline.N,
               (long long)headline.L);
    else
      snprintf(what, sizeof what, "a CPU-sized %s, not the headline %lld", cpu_n ? "N" : "L",
               (long long)(cpu_n ? headline.N : headline.L));
    snprintf(p->shape_note, sizeof p->shape_note,
             "convlab run: %s, so %s (%s: error statistics depend on C*K and the data, not on N*L; "
             "--batch, --length set them)",
             have_gpu ? "only CPU implementations" : "no CUDA device", text, what);
  }
  st = c1d_shape_validate(s);
  if (st != C1D_OK) {
    char why[400];
    snprintf(why, sizeof why, "%s", c1d_error_detail());
    return c1d_fail(C1D_ERR_USAGE, "%s", why); /* the flags are what is wrong */
  }
  return C1D_OK;
}

// --- implementations ---------------------------------------------------------------------------

static c1d_status add_impl(run_plan *p, const c1d_impl *impl) {
  for (int i = 0; i < p->cfg.n_impls; i++)
    if (p->impls[i] == impl) return C1D_OK; /* named twice: run once */
  p->impls[p->cfg.n_impls++] = impl;
  return C1D_OK;
}

/* Whether name is one of the --y rows (file:NAME). */
static int is_candidate(const run_plan *p, const char *name) {
  for (int i = 0; i < p->cfg.n_candidates; i++)
    if (strcmp(p->cfg.candidates[i].name, name) == 0) return 1;
  return 0;
}

/* --impl (names or all; default: all, only the CPU ones without a GPU; with --compare alone, its two
 * names), plus the names of --compare that are not candidates. */
static c1d_status select_impls(const run_args *a, run_plan *p, int have_gpu) {
  int n = 0;
  const c1d_impl *const *table = c1d_registry(&n);
  c1d_status st = C1D_OK;
  p->impls = calloc((size_t)n + 1, sizeof *p->impls);
  if (!p->impls) return c1d_fail(C1D_ERR_NO_MEMORY, "out of memory");
  char *spec = strdup(a->impl ? a->impl : a->compare ? "" : "all");
  if (!spec) return c1d_fail(C1D_ERR_NO_MEMORY, "out of memory");
  for (char *save = NULL, *name = strtok_r(spec, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
    if (strcmp(name, "all") == 0) {
      for (int i = 0; i < n; i++)
        if (table[i]->tier == C1D_TIER_MAIN && (have_gpu || a->impl || table[i]->backend == C1D_BACKEND_CPU))
          add_impl(p, table[i]);
      continue;
    }
    const c1d_impl *impl = c1d_find_impl(name);
    if (!impl) {
      st = c1d_fail_unknown_impl("unknown implementation", name);
      goto done;
    }
    add_impl(p, impl);
  }
  /* --compare A,B runs both, even when --impl did not name them. */
  const char *names[2] = {p->compare_a, p->compare_b};
  for (int k = 0; k < 2 && a->compare; k++) {
    if (is_candidate(p, names[k])) continue;
    const c1d_impl *impl = c1d_find_impl(names[k]);
    if (!impl) {
      st = c1d_fail_unknown_impl("--compare: unknown implementation", names[k]);
      goto done;
    }
    add_impl(p, impl);
  }
  if (p->cfg.n_impls == 0 && p->cfg.n_candidates == 0)
    st = c1d_fail(C1D_ERR_USAGE, "--impl selects no implementation");
done:
  free(spec);
  p->cfg.impls = p->impls;
  return st;
}

/* What --compare names must be able to run here, on this shape: C1D_ERR_NO_DEVICE or
 * C1D_ERR_UNSUPPORTED naming the side and why (a comparison without one side is no comparison). */
static c1d_status check_compare_runs(const run_args *a, const run_plan *p) {
  const char *names[2] = {p->compare_a, p->compare_b};
  for (int k = 0; k < 2 && a->compare; k++) {
    const c1d_impl *impl = c1d_find_impl(names[k]);
    if (!impl || is_candidate(p, names[k])) continue;
    const char *why = c1d_impl_unavailable(impl);
    if (why)
      return c1d_fail(C1D_ERR_NO_DEVICE, "--compare %s cannot run here: %s: %s", a->compare, names[k], why);
    if ((why = c1d_impl_unsupported(impl, &p->cfg.shape)))
      return c1d_fail(C1D_ERR_UNSUPPORTED, "--compare %s cannot run on this shape: %s: %s", a->compare,
                      names[k], why);
  }
  return C1D_OK;
}

// --- flags -> plan -------------------------------------------------------------------------------

/* Options that make no sense together, and values that need parsing. */
static c1d_status check_options(const run_args *a, const c1d_option *opts, run_plan *p) {
  const int npy = a->x || a->w, files = npy || a->case_path;
  const char *src = a->case_path ? "--case" : "--x";
  if (a->case_path && (npy || a->b || a->y.n > 0 || a->states))
    return c1d_fail(C1D_ERR_USAGE, "--case conflicts with %s (the case holds x, w, b, initial_states and y)",
                    npy ? "--x and --w" : a->b ? "--b" : a->y.n ? "--y" : "--initial-states");
  if (npy && !(a->x && a->w)) return c1d_fail(C1D_ERR_USAGE, "--x and --w go together");
  if (!files && a->b) return c1d_fail(C1D_ERR_USAGE, "--b needs --x and --w");
  if (!files && a->y.n > 0)
    return c1d_fail(C1D_ERR_USAGE, "--y needs --x and --w (the inputs it was computed from)");
  if (!files && a->states && a->states[0])
    return c1d_fail(C1D_ERR_USAGE, "--initial-states FILE needs --x and --w (generated problems take "
                                   "--initial-states alone)");
  if (npy && a->states && !a->states[0])
    return c1d_fail(C1D_ERR_USAGE, "--initial-states with --x needs the states' FILE (N, C, (K-1)*D)");
  if (files && a->dtype)
    return c1d_fail(C1D_ERR_USAGE, "--dtype conflicts with %s (the files carry the element types)", src);
  if (files && given(opts, "--dist"))
    return c1d_fail(C1D_ERR_USAGE, "--dist conflicts with %s (the inputs come from the files)", src);
  if (files && given(opts, "--seed"))
    return c1d_fail(C1D_ERR_USAGE, "--seed conflicts with %s (the inputs come from the files)", src);
  if (files && a->trials != 1)
    return c1d_fail(C1D_ERR_USAGE, "--trials conflicts with %s (file inputs make one trial)", src);
  if (a->html && !a->out) return c1d_fail(C1D_ERR_USAGE, "--html needs --out DIR (the page is DIR/report.html)");
  if (a->lambda <= 0.0) return c1d_fail(C1D_ERR_USAGE, "--lambda must be positive (got %g)", a->lambda);
  if (a->dist && c1d_dist_parse(a->dist, &p->cfg.dist) != C1D_OK) return C1D_ERR_USAGE;
  if (a->oracle && c1d_oracle_parse(a->oracle, &p->cfg.oracle) != C1D_OK) return C1D_ERR_USAGE;
  if (a->compare) {
    const char *comma = strchr(a->compare, ',');
    size_t la = comma ? (size_t)(comma - a->compare) : 0;
    if (!comma || la == 0 || comma[1] == '\0' || strchr(comma + 1, ',') || la >= sizeof p->compare_a ||
        strlen(comma + 1) >= sizeof p->compare_b)
      return c1d_fail(C1D_ERR_USAGE, "--compare expects two names A,B (got '%s')", a->compare);
    memcpy(p->compare_a, a->compare, la);
    p->compare_a[la] = '\0';
    snprintf(p->compare_b, sizeof p->compare_b, "%s", comma + 1);
    if (strcmp(p->compare_a, p->compare_b) == 0)
      return c1d_fail(C1D_ERR_USAGE, "--compare needs two different names (got '%s')", a->compare);
    p->cfg.compare_a = p->compare_a;
    p->cfg.compare_b = p->compare_b;
  }
  return C1D_OK;
}

/* Everything that can be decided without reading more than the files' headers. */
static c1d_status build_plan(const run_args *a, const c1d_option *opts, run_plan *p) {
  c1d_status st;
  const int have_gpu = c1d_gpu_why_unavailable() == NULL;
  c1d_run_config_default(&p->cfg);
  if ((st = check_options(a, opts, p)) != C1D_OK) return st;
  p->cfg.seed = a->seed;
  p->cfg.trials = (int)a->trials;
  p->cfg.repeats = (int)a->repeats;
  p->cfg.atol = a->atol;
  p->cfg.rtol = a->rtol;
  p->cfg.lambda = a->lambda;
  p->cfg.save_outputs_dir = a->save_outputs;
  p->cfg.progress = isatty(2);
  p->cfg.progress_who = "convlab run";
  p->files.x = a->x;
  p->files.w = a->w;
  p->files.b = a->b;
  p->files.s = a->x ? a->states : NULL;
  p->files.case_path = a->case_path;
  p->files.ys = &a->y;
  p->files.problem.D = a->D;
  if ((st = c1d_problem_flags_parse(&a->problem, &p->files.problem)) != C1D_OK) return st;
  if ((st = c1d_user_files_name(&p->files, &p->cfg)) != C1D_OK) return st;
  if ((st = select_impls(a, p, have_gpu)) != C1D_OK) return st;
  if (a->x || a->case_path) {
    if ((st = c1d_user_files_shape(&p->files, &p->cfg.shape)) != C1D_OK) return st;
    if ((st = check_flags_against_files(a, opts, &p->cfg.shape)) != C1D_OK) return st;
  } else {
    if ((st = shape_from_flags(a, opts, have_gpu, p, &p->cfg.shape)) != C1D_OK) return st;
    if (given(opts, "--cpu-batch-rows") && a->cpu_rows < p->cfg.shape.N) p->cfg.cpu_batch_rows = a->cpu_rows;
    else if (have_gpu && !any_shape_flag(opts) && !a->compare && !a->save_outputs)
      p->cfg.cpu_batch_rows = HEADLINE_CPU_ROWS;
    if (p->cfg.cpu_batch_rows >= p->cfg.shape.N) p->cfg.cpu_batch_rows = 0;
  }
  return check_compare_runs(a, p);
}

static void plan_free(run_plan *p) {
  free(p->impls);
  c1d_user_files_free(&p->files);
  c1d_run_estimate_free(&p->estimate);
}

// --- the command -------------------------------------------------------------------------------

int c1d_cmd_run(int argc, char **argv) {
  run_args a = {.D = 1, .trials = 1, .atol = C1D_DEFAULT_ATOL, .rtol = C1D_DEFAULT_RTOL,
                .lambda = C1D_DEFAULT_LAMBDA};
  c1d_option opts[MAX_OPTS];
  run_plan plan;
  c1d_run_results res;
  int help = 0, code = C1D_EXIT_OK;
  memset(&plan, 0, sizeof plan);
  memset(&res, 0, sizeof res);
  n_opts = option_table(&a, opts);
  c1d_status st = c1d_cli_parse(opts, n_opts, argc, argv, &help);
  if (st != C1D_OK) return c1d_cmd_error("run", st);
  if (help) {
    c1d_cli_help(stdout, usage, description, opts, n_opts);
    return C1D_EXIT_OK;
  }
  if ((st = build_plan(&a, opts, &plan)) != C1D_OK ||
      ((a.x || a.case_path) && (st = c1d_user_files_load("run", &plan.files, &plan.cfg)) != C1D_OK) ||
      (st = c1d_run_check(&plan.cfg)) != C1D_OK || (a.out && (st = c1d_report_files_check(a.out)) != C1D_OK) ||
      (a.save_outputs && (st = c1d_saved_outputs_check(a.save_outputs)) != C1D_OK)) {
    code = c1d_cmd_error("run", st);
    goto done;
  }
  if (plan.shape_note[0]) fprintf(stderr, "%s\n", plan.shape_note);
  if ((st = c1d_announce_estimate("run", &plan.cfg, a.estimate, a.allow_long, &plan.estimate)) != C1D_OK) {
    code = c1d_cmd_error("run", st);
    goto done;
  }
  if (a.estimate) goto done;
  if ((st = c1d_run(&plan.cfg, &res)) != C1D_OK) {
    code = c1d_cmd_error("run", st);
    goto done;
  }
  const char *x = a.case_path ? a.case_path : a.x, *w = a.case_path ? a.case_path : a.w;
  const char *b = a.case_path && plan.cfg.shape.bias ? a.case_path : a.b;
  const c1d_report_request req = {argc, argv, x, w, b, plan.files.ys->items, plan.files.ys->n,
                                  a.json ? C1D_PRINT_JSON : C1D_PRINT_TABLE, a.html, a.out};
  if ((st = c1d_emit_reports(&req, &res)) != C1D_OK) {
    code = c1d_cmd_error("run", st);
    goto done;
  }
  if (c1d_run_any_failed(&res)) {
    fprintf(stderr, "convlab run: an implementation failed; its error is in the report\n");
    code = C1D_EXIT_FAILURE;
  } else if (c1d_run_all_skipped(&res)) {
    fprintf(stderr, "convlab run: nothing ran: every requested implementation was skipped (%s)\n",
            c1d_run_all_skipped(&res));
    code = C1D_EXIT_FAILURE;
  }
done:
  c1d_run_results_free(&res);
  plan_free(&plan);
  return code;
}
