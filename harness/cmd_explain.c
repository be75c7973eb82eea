/* convlab explain: is an output of yours a bug, or rounding? Reads x, w, (b, initial states) and one or
 * more outputs y from .npy files, or all of them from one safetensors case (--case), computes the float64 oracle and the rounding models on those very inputs, and
 * prints for each y the verdict in plain words on its first line, then the evidence that decided it
 * (or JSON with --json). --out DIR writes the same reports as convlab run (report.json, .csv, .txt,
 * and with --html report.html), one row per y named file:NAME. Exit status 0 whatever the verdict; 1
 * when the work fails, 2 for a bad command line.
 *
 * The options feed three steps: where the inputs come from (load_inputs: the .npy files or the case),
 * the run (c1d_explain_outputs: the runner, as convlab run, then for each y called a bug the flag that
 * reads it as rounding, "did you mean --activation silu?"), and what is printed or written (emit, with
 * the words of harness/explain_outputs.h). The run and the words are libconvlab's too (lib/convlab.c):
 * the program and the library cannot disagree. A new kind of input or a new flag is a line in the table
 * and a branch in the step it belongs to. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness/cli.h"
#include "harness/cmd_shared.h"
#include "harness/commands.h"
#include "harness/escape.h"
#include "harness/explain_outputs.h"
#include "harness/report.h"
#include "harness/report_files.h"
#include "harness/runner.h"
#include "harness/suggest_flags.h"
#include "numerics/bounds.h"
#include "reference/dtype.h"

static const char usage[] =
    "convlab explain --x X.npy --w W.npy [--b B.npy] [--initial-states S.npy] --y Y.npy [--y Y2.npy ...]\n"
    "                [--dilation D] [--groups G] [--activation silu] [--layout nlc] [--json]\n"
    "       convlab explain --case FILE.safetensors [--dilation D] [--groups G] [--activation silu]\n"
    "                [--layout nlc] [--json]";
static const char description[] =
    "Explains outputs y of the causal Conv1d of x and w (and b, and the initial states): for each y the\n"
    "first line is the verdict (fp32-rounding, tf32-inputs, reduced-precision with the stage that lost\n"
    "precision, bug-localized, bug-global, non-finite or inconclusive) in plain words, the evidence\n"
    "follows. A case is one safetensors file holding tensors x, w, y and optionally b and\n"
    "initial_states, each F32, BF16 or F16 (the types are the problem's: the contract is exact products,\n"
    "a float32 sum, the activation in float32, one rounding to y's type). w is (O, C/G, K), or (C, K) or\n"
    "(C, 1, K) for a depthwise conv; the states are (N, C, (K-1)*D). .npy files may be float32, float16\n"
    "or (inputs) float64, rounded to float32 with a note. --json prints one JSON object (an array of\n"
    "them with several --y) whose \"verdict\" field holds the verdict, and \"where\" the stage for\n"
    "reduced-precision. An output called a bug that reads as rounding with one flag changed\n"
    "(--activation, --dilation, --layout) gets the line \"did you mean --activation silu?\" after its\n"
    "verdict (JSON: \"suggestion\"); the verdict stays the declared problem's. --out DIR writes the\n"
    "reports of convlab run (and --html the page), one row per y named file:NAME (NAME: the file's\n"
    "name, or the path where two share one).\n"
    "Exit status: 0 whatever the verdict, 1 when the files cannot be used (or disagree with the flags),\n"
    "2 for a bad command line.";

typedef struct explain_args {
  int64_t D;
  int json, html, estimate, allow_long;
  double lambda;
  const char *oracle, *out;
  const char *x, *w, *b, *states, *case_path;
  c1d_problem_flags problem;
  c1d_string_list y;
} explain_args;

#define MAX_OPTS 32
static int option_table(explain_args *a, c1d_option *o) {
  const c1d_option t[] = {
      {"--case", C1D_OPT_STRING, &a->case_path, 0, 0, "FILE",
       "x, w, b, initial_states and y from one .safetensors file", 0},
      {"--x", C1D_OPT_STRING, &a->x, 0, 0, "FILE", "input x (N,C,L), .npy", 0},
      {"--w", C1D_OPT_STRING, &a->w, 0, 0, "FILE", "weights w (O,C/G,K), or (C,K) depthwise, .npy", 0},
      {"--b", C1D_OPT_STRING, &a->b, 0, 0, "FILE", "bias b (O), .npy (optional)", 0},
      {"--initial-states", C1D_OPT_STRING, &a->states, 0, 0, "FILE",
       "initial states (N,C,(K-1)*D) before t=0, .npy (optional)", 0},
      {"--y", C1D_OPT_LIST, &a->y, 0, 0, "FILE", "an output to explain (N,O,L), float32 or float16 .npy; repeatable", 0},
      {"--dilation", C1D_OPT_INT, &a->D, 1, C1D_MAX_SPAN, "D", "dilation D (default 1)", 0},
      {"--lambda", C1D_OPT_DOUBLE, &a->lambda, 0, 0, "L", "probabilistic bound constant (default 6)", 0},
      {"--oracle", C1D_OPT_STRING, &a->oracle, 0, 0, "WHERE", "cpu, gpu or auto (default)", 0},
      {"--json", C1D_OPT_FLAG, &a->json, 0, 0, NULL, "print JSON: one object per --y", 0},
      {"--out", C1D_OPT_STRING, &a->out, 0, 0, "DIR", "write report.json, report.csv, report.txt", 0},
      {"--html", C1D_OPT_FLAG, &a->html, 0, 0, NULL, "with --out: also report.html, plots that open offline", 0},
      {"--estimate", C1D_OPT_FLAG, &a->estimate, 0, 0, NULL, "say how big the work is and how long it takes here; stop", 0},
      {"--allow-long", C1D_OPT_FLAG, &a->allow_long, 0, 0, NULL, "run even when estimated beyond 24 h (else refused)", 0},
  };
  _Static_assert(sizeof t / sizeof t[0] + C1D_PROBLEM_OPTIONS <= MAX_OPTS, "MAX_OPTS is too small");
  const int n = (int)(sizeof t / sizeof t[0]);
  memcpy(o, t, sizeof t);
  return n + c1d_problem_options(&a->problem, o + n);
}

/* Where x, w, b, the states and y came from, for the JSON object's "files". */
static cJSON *files_json(const explain_args *a, const char *y_path) {
  cJSON *f = cJSON_CreateObject();
  if (!f) return NULL;
  if (a->case_path) {
    cJSON_AddStringToObject(f, "case", a->case_path);
  } else {
    cJSON_AddStringToObject(f, "x", a->x);
    cJSON_AddStringToObject(f, "w", a->w);
    if (a->b) cJSON_AddStringToObject(f, "b", a->b);
    if (a->states) cJSON_AddStringToObject(f, "initial_states", a->states);
    cJSON_AddStringToObject(f, "y", y_path);
  }
  return f;
}

// --- the steps -----------------------------------------------------------------------------------

/* Where the inputs come from: the .npy files or the case, headers first (shape, every y), then the data. */
static c1d_status load_inputs(const explain_args *a, c1d_user_files *u, c1d_run_config *cfg,
                              c1d_run_estimate *est) {
  c1d_status st;
  u->x = a->x;
  u->w = a->w;
  u->b = a->b;
  u->s = a->states;
  u->case_path = a->case_path;
  u->ys = &a->y;
  u->problem.D = a->D;
  if ((st = c1d_problem_flags_parse(&a->problem, &u->problem)) != C1D_OK) return st;
  if ((st = c1d_user_files_name(u, cfg)) != C1D_OK) return st;
  if ((st = c1d_user_files_shape(u, &cfg->shape)) != C1D_OK) return st;
  if ((st = c1d_run_check_memory(cfg, "these files")) != C1D_OK) return st;
  if (a->out && (st = c1d_report_files_check(a->out)) != C1D_OK) return st; /* before the work */
  if (a->estimate) /* before reading any data */
    return c1d_announce_estimate("explain", cfg, 1, a->allow_long, est);
  if ((st = c1d_user_files_load("explain", u, cfg)) != C1D_OK) return st;
  return c1d_announce_estimate("explain", cfg, 0, a->allow_long, est);
}

/* The verdicts on stdout (text or JSON), each with its suggestion, then the report files under --out. */
static c1d_status emit(const explain_args *a, int argc, char **argv, const c1d_run_config *cfg,
                       const c1d_user_files *u, const c1d_run_results *res, const c1d_flag_suggestion *sug) {
  const c1d_string_list *ys = u->ys;
  cJSON *list = a->json && ys->n > 1 ? cJSON_CreateArray() : NULL, *one = NULL;
  c1d_status st = C1D_OK;
  for (int i = 0; i < ys->n && st == C1D_OK; i++) {
    const c1d_trial_result *t = &res->impls[i].trials[0]; /* explained: c1d_explain_outputs checked */
    if (!a->json) {
      char name[400];
      if (ys->n > 1) printf("%s%s: ", i ? "\n" : "", c1d_escape_text(res->impls[i].name, name, sizeof name));
      c1d_explain_print(stdout, &t->explanation, &t->metrics, &cfg->shape, &sug[i]);
      continue;
    }
    cJSON *o = c1d_explain_json(&t->explanation, &t->metrics, &cfg->shape, res->impls[i].name, &sug[i],
                                files_json(a, ys->items[i]));
    if (!o) st = c1d_fail(C1D_ERR_NO_MEMORY, "out of memory");
    else if (list) cJSON_AddItemToArray(list, o);
    else one = o;
  }
  if (st == C1D_OK && a->json) {
    char *text = cJSON_Print(list ? list : one);
    if (!text) st = c1d_fail(C1D_ERR_NO_MEMORY, "out of memory");
    else printf("%s\n", text);
    free(text);
  }
  cJSON_Delete(list ? list : one);
  fflush(stdout);
  if (st != C1D_OK || !a->out) return st;
  const char *x = a->case_path ? a->case_path : a->x, *w = a->case_path ? a->case_path : a->w;
  const char *b = a->case_path && cfg->shape.bias ? a->case_path : a->b;
  const c1d_report_request req = {argc, argv, x, w, b, ys->items, ys->n, C1D_PRINT_NOTHING, a->html, a->out};
  return c1d_emit_reports(&req, res);
}

int c1d_cmd_explain(int argc, char **argv) {
  explain_args a = {.D = 1, .lambda = C1D_DEFAULT_LAMBDA};
  c1d_option opts[MAX_OPTS];
  c1d_user_files files;
  c1d_run_config cfg;
  c1d_run_results res;
  c1d_run_estimate est;
  c1d_flag_suggestion sug[C1D_OPT_LIST_MAX];
  int help = 0, code = C1D_EXIT_OK;
  memset(&files, 0, sizeof files);
  memset(&res, 0, sizeof res);
  memset(&est, 0, sizeof est);
  const int n_opts = option_table(&a, opts);
  c1d_status st = c1d_cli_parse(opts, n_opts, argc, argv, &help);
  if (st != C1D_OK) return c1d_cmd_error("explain", st);
  if (help) {
    c1d_cli_help(stdout, usage, description, opts, n_opts);
    return C1D_EXIT_OK;
  }
  if (a.case_path && (a.x || a.w || a.b || a.states || a.y.n))
    return c1d_cmd_error("explain", c1d_fail(C1D_ERR_USAGE, "--case conflicts with %s (the case holds x, w, b, "
                                                            "initial_states and y)",
                                             a.x ? "--x" : a.w ? "--w" : a.b ? "--b" : a.states ? "--initial-states" : "--y"));
  if (!a.case_path && (!a.x || !a.w || a.y.n == 0))
    return c1d_cmd_error("explain", c1d_fail(C1D_ERR_USAGE, "--x, --w and --y are required (or --case)"));
  if (a.lambda <= 0.0)
    return c1d_cmd_error("explain", c1d_fail(C1D_ERR_USAGE, "--lambda must be positive (got %g)", a.lambda));
  if (a.html && !a.out)
    return c1d_cmd_error("explain", c1d_fail(C1D_ERR_USAGE, "--html needs --out DIR (the page is DIR/report.html)"));
  c1d_explain_config(&cfg, a.lambda); /* libconvlab's configuration too (lib/convlab.c) */
  cfg.progress = isatty(2);
  cfg.progress_who = "convlab explain";
  if (a.oracle && (st = c1d_oracle_parse(a.oracle, &cfg.oracle)) != C1D_OK)
    return c1d_cmd_error("explain", st);
  /* Each y is scored by the runner like any row: same oracle, same metrics, same explainer. */
  st = load_inputs(&a, &files, &cfg, &est);
  if (st == C1D_OK && !a.estimate && (st = c1d_explain_outputs(&cfg, &res, sug)) == C1D_OK)
    st = emit(&a, argc, argv, &cfg, &files, &res, sug);
  if (st != C1D_OK) code = c1d_cmd_error("explain", st);
  c1d_run_results_free(&res);
  c1d_user_files_free(&files);
  c1d_run_estimate_free(&est);
  return code;
}
