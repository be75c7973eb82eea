/* convlab explain: is a user's output a bug, or rounding? Reads x, w, (b) and the output y from .npy
 * files, computes the float64 oracle and the rounding models on those very inputs, and prints the
 * verdict in plain words on the first line, then the evidence that decided it (or one JSON object with
 * --json). Exit status 0 whatever the verdict; 1 when the work fails, 2 for a bad command line. */
#include <cjson/cJSON.h>
#include <libgen.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness/cli.h"
#include "harness/commands.h"
#include "harness/input_files.h"
#include "harness/report.h"
#include "harness/runner.h"
#include "numerics/bounds.h"

static const char usage[] = "convlab explain --x X.npy --w W.npy [--b B.npy] [--dilation D] --y Y.npy";
static const char description[] =
    "Explains your output y of the causal Conv1d of x and w (and b): the first line is the verdict\n"
    "(fp32-rounding, tf32-inputs, reduced-precision, bug-localized, bug-global, non-finite or\n"
    "inconclusive) in plain words, the evidence follows. --json prints one JSON object whose\n"
    "\"verdict\" field holds the verdict. Exit status: 0 whatever the verdict, 1 when the files\n"
    "cannot be used, 2 for a bad command line.";

typedef struct explain_args {
  int64_t D;
  int json;
  double lambda;
  const char *oracle;
  c1d_input_paths files;
} explain_args;

#define N_OPTS 8
static void option_table(explain_args *a, c1d_option *o) {
  const c1d_option t[N_OPTS] = {
      {"--x", C1D_OPT_STRING, &a->files.x, 0, 0, "FILE", "input x (N,C,L), .npy", 0},
      {"--w", C1D_OPT_STRING, &a->files.w, 0, 0, "FILE", "weights w (O,C,K), .npy", 0},
      {"--b", C1D_OPT_STRING, &a->files.b, 0, 0, "FILE", "bias b (O), .npy (optional)", 0},
      {"--y", C1D_OPT_STRING, &a->files.y, 0, 0, "FILE", "the output to explain (N,O,L), float32 .npy", 0},
      {"--dilation", C1D_OPT_INT, &a->D, 1, C1D_MAX_SPAN, "D", "dilation D (default 1)", 0},
      {"--lambda", C1D_OPT_DOUBLE, &a->lambda, 0, 0, "L", "probabilistic bound constant (default 6)", 0},
      {"--oracle", C1D_OPT_STRING, &a->oracle, 0, 0, "WHERE", "cpu, gpu or auto (default)", 0},
      {"--json", C1D_OPT_FLAG, &a->json, 0, 0, NULL, "print one JSON object", 0},
  };
  memcpy(o, t, sizeof t);
}

/* The verdict as a sentence a person reads first. */
static void headline(const c1d_explanation *e, char *buf, size_t size) {
  const c1d_region *r = &e->region;
  switch (e->verdict) {
    case C1D_VERDICT_FP32_ROUNDING:
      snprintf(buf, size, "Not a bug: rounding, consistent with float32 accumulation in some order "
                          "(fp32-rounding).");
      break;
    case C1D_VERDICT_TF32_INPUTS:
      snprintf(buf, size, "Not a bug: the inputs were rounded to TF32, as tensor cores do "
                          "(tf32-inputs).");
      break;
    case C1D_VERDICT_REDUCED_PRECISION:
      snprintf(buf, size, "Not a bug: reduced precision, %s (reduced-precision).",
               strcmp(e->fingerprint, "fp32") ? "outputs stored in a narrower format than float32"
                                              : "inputs or products in bf16");
      break;
    case C1D_VERDICT_BUG_LOCALIZED:
      snprintf(buf, size, "A bug in %s: n %s, o %s, t %s (bug-localized).", r->kind,
               r->n, r->o, r->t);
      break;
    case C1D_VERDICT_BUG_GLOBAL:
      snprintf(buf, size, "A bug, nearly everywhere: %.3g%% of the outputs are beyond every rounding "
                          "model (bug-global).", 100.0 * r->fraction);
      break;
    case C1D_VERDICT_NON_FINITE:
      snprintf(buf, size, "A bug: %lld outputs are NaN or Inf where the exact result is finite, in the "
                          "%s: n %s, o %s, t %s (non-finite).",
               (long long)e->nonfinite, r->kind, r->n, r->o, r->t);
      break;
    default:
      snprintf(buf, size, "Inconclusive: the evidence does not decide (inconclusive).");
  }
}

static double pct(int64_t part, int64_t whole) { return whole ? 100.0 * (double)part / (double)whole : 0.0; }

static void print_text(const c1d_explanation *e, const c1d_metrics *m, const c1d_shape *s) {
  char line[600], shape[128];
  headline(e, line, sizeof line);
  printf("%s\n", line);
  c1d_shape_format(s, shape, sizeof shape);
  printf("  why: %s\n", e->reason);
  printf("  problem: %s; %lld outputs compared\n", shape, (long long)e->count);
  printf("  relative L2 error: %.3e; predicted by the models on these inputs: fp32 %.3e, tf32 %.3e "
         "(truncated %.3e), bf16 inputs %.3e\n",
         e->rel_l2, e->models[C1D_MODEL_FP32].rel_l2, e->models[C1D_MODEL_TF32_RNA].rel_l2,
         e->models[C1D_MODEL_TF32_TRUNC].rel_l2, e->models[C1D_MODEL_BF16_INPUTS].rel_l2);
  printf("  median error in units of u*m: %.3g (fp32 model %.3g, tf32 model %.3g)\n", e->cand_stats.z50,
         e->models[C1D_MODEL_FP32].z50, e->models[C1D_MODEL_TF32_RNA].z50);
  printf("  beyond the float32 bounds: deterministic %.3g%%, probabilistic %.3g%%; beyond the TF32 "
         "bound: %.3g%%\n",
         pct(e->beyond_fp32_det, e->count), pct(e->beyond_fp32_prob, e->count),
         pct(e->beyond_tf32, e->count));
  printf("  output fingerprint: %s (low 16 mantissa bits zero in %.1f%% of outputs, oracle %.1f%%; "
         "low 13: %.1f%%, oracle %.1f%%)\n",
         e->fingerprint, 100 * e->low16_zero, 100 * e->low16_zero_ref, 100 * e->low13_zero,
         100 * e->low13_zero_ref);
  if (e->region.count > 0)
    printf("  where: %lld elements (%.3g%%), %s: n %s, o %s, t %s\n", (long long)e->region.count,
           100 * e->region.fraction, e->region.kind, e->region.n, e->region.o, e->region.t);
  printf("  max abs error %.3e, max rel %.3e; failing allclose(1e-4, 1e-4): %.3g%%; non-finite: %lld\n",
         m->max_abs, m->max_rel, pct(m->fail_default, m->count), (long long)m->nonfinite);
}

static c1d_status print_json(const c1d_explanation *e, const c1d_metrics *m, const c1d_shape *s,
                             const c1d_input_paths *files) {
  cJSON *root = c1d_explanation_json(e);
  if (!root) return c1d_fail(C1D_ERR_NO_MEMORY, "out of memory");
  cJSON *p = cJSON_AddObjectToObject(root, "problem");
  const struct { const char *k; int64_t v; } dims[] = {{"N", s->N}, {"C", s->C}, {"O", s->O},
                                                       {"L", s->L}, {"K", s->K}, {"D", s->D}};
  for (unsigned i = 0; i < sizeof dims / sizeof dims[0]; i++)
    cJSON_AddNumberToObject(p, dims[i].k, (double)dims[i].v);
  cJSON_AddBoolToObject(p, "bias", s->bias);
  cJSON *f = cJSON_AddObjectToObject(root, "files");
  cJSON_AddStringToObject(f, "x", files->x);
  cJSON_AddStringToObject(f, "w", files->w);
  if (files->b) cJSON_AddStringToObject(f, "b", files->b);
  cJSON_AddStringToObject(f, "y", files->y);
  cJSON *mt = cJSON_AddObjectToObject(root, "metrics");
  cJSON_AddNumberToObject(mt, "max_abs", m->max_abs);
  cJSON_AddNumberToObject(mt, "max_rel", m->max_rel);
  cJSON_AddNumberToObject(mt, "rel_l2", isfinite(m->rel_l2) ? m->rel_l2 : -1);
  cJSON_AddNumberToObject(mt, "fail_allclose_1e-4", pct(m->fail_default, m->count) / 100.0);
  cJSON_AddNumberToObject(mt, "nonfinite", (double)m->nonfinite);
  char *text = cJSON_Print(root);
  cJSON_Delete(root);
  if (!text) return c1d_fail(C1D_ERR_NO_MEMORY, "out of memory");
  printf("%s\n", text);
  free(text);
  return C1D_OK;
}

int c1d_cmd_explain(int argc, char **argv) {
  explain_args a = {.D = 1, .lambda = C1D_DEFAULT_LAMBDA};
  c1d_option opts[N_OPTS];
  c1d_input_tensors tensors;
  c1d_run_config cfg;
  c1d_run_results res;
  c1d_candidate cand;
  char name[128];
  int help = 0, code = C1D_EXIT_OK;
  memset(&tensors, 0, sizeof tensors);
  memset(&res, 0, sizeof res);
  option_table(&a, opts);
  c1d_status st = c1d_cli_parse(opts, N_OPTS, argc, argv, &help);
  if (st != C1D_OK) return c1d_cmd_error("explain", st);
  if (help) {
    c1d_cli_help(stdout, usage, description, opts, N_OPTS);
    return C1D_EXIT_OK;
  }
  if (!a.files.x || !a.files.w || !a.files.y)
    return c1d_cmd_error("explain", c1d_fail(C1D_ERR_USAGE, "--x, --w and --y are required"));
  if (a.lambda <= 0.0)
    return c1d_cmd_error("explain", c1d_fail(C1D_ERR_USAGE, "--lambda must be positive (got %g)", a.lambda));
  c1d_run_config_default(&cfg);
  cfg.lambda = a.lambda;
  if (a.oracle && (st = c1d_oracle_parse(a.oracle, &cfg.oracle)) != C1D_OK)
    return c1d_cmd_error("explain", st);
  /* The candidate is scored by the runner like any row: same oracle, same metrics, same explainer. */
  snprintf(name, sizeof name, "file:%.100s", a.files.y);
  cand.name = name;
  cand.y = NULL; /* loaded below, once the shape and memory checks pass; c1d_run checks the rest */
  cfg.candidates = &cand;
  cfg.n_candidates = 1;
  if ((st = c1d_input_files_shape(&a.files, a.D, &cfg.shape)) != C1D_OK ||
      (st = c1d_run_check_memory(&cfg, "these files")) != C1D_OK ||
      (st = c1d_input_files_load(&a.files, &cfg.shape, &tensors)) != C1D_OK) {
    code = c1d_cmd_error("explain", st);
    goto done;
  }
  cand.y = tensors.y;
  cfg.x = tensors.x;
  cfg.w = tensors.w;
  cfg.b = tensors.b;
  cfg.progress = isatty(2);
  if ((st = c1d_run(&cfg, &res)) != C1D_OK) {
    code = c1d_cmd_error("explain", st);
    goto done;
  }
  const c1d_trial_result *t = &res.impls[0].trials[0];
  if (t->status != C1D_OK || !t->explained) {
    code = c1d_cmd_error("explain", c1d_fail(C1D_ERR_INTERNAL, "the output could not be analysed: %s",
                                             t->error));
    goto done;
  }
  if (a.json) {
    if ((st = print_json(&t->explanation, &t->metrics, &cfg.shape, &a.files)) != C1D_OK)
      code = c1d_cmd_error("explain", st);
  } else {
    print_text(&t->explanation, &t->metrics, &cfg.shape);
  }
done:
  c1d_run_results_free(&res);
  c1d_input_tensors_free(&tensors);
  return code;
}
