/* convlab list: the implementations of the registry with their backend, precision, whether each can run
 * here, what problems it handles (its caps: groups, states, SiLU, bf16/fp16), and its accumulation-order
 * summary: tier main by default, variants too with --all (every tier),
 * the bug zoo's mutants with --mutants or --all. */
#include <stdio.h>
#include <string.h>

#include "harness/cli.h"
#include "harness/commands.h"
#include "harness/escape.h"
#include "harness/machine.h"
#include "harness/registry.h"
#include "reference/status.h"

int c1d_cmd_error(const char *cmd, int status) {
  const char *detail = c1d_error_detail()[0] ? c1d_error_detail() : c1d_strerror((c1d_status)status);
  if (status == C1D_ERR_USAGE) {
    c1d_print_line(stderr, "convlab %s: %s (see convlab %s --help)", cmd, detail, cmd);
    return C1D_EXIT_USAGE;
  }
  c1d_print_line(stderr, "convlab %s: %s", cmd, detail); /* the detail may quote a path */
  return C1D_EXIT_FAILURE;
}

int c1d_cmd_list(int argc, char **argv) {
  int mutants = 0, all = 0, help = 0, n = 0;
  c1d_option opts[] = {
      {"--all", C1D_OPT_FLAG, &all, 0, 0, NULL, "every tier: main, variant and mutant", 0},
      {"--mutants", C1D_OPT_FLAG, &mutants, 0, 0, NULL, "also list the deliberately wrong implementations", 0},
  };
  const int n_opts = (int)(sizeof opts / sizeof opts[0]);
  c1d_status st = c1d_cli_parse(opts, n_opts, argc, argv, &help);
  if (st != C1D_OK) return c1d_cmd_error("list", st);
  if (help) {
    c1d_cli_help(stdout, "convlab list [--all] [--mutants]",
                 "Lists the implementations: backend, precision class, whether it can run on this\n"
                 "machine (and why not), the problems it handles beyond the plain one (dense, fp32, no\n"
                 "states or activation): groups, initial states, SiLU, bf16/fp16 tensors; and its\n"
                 "precision and accumulation order. Tier main by\n"
                 "default (what `convlab run` runs); --all adds the variants (kept for comparison,\n"
                 "run when named and by `convlab bench`) and the mutants (the bug zoo).",
                 opts, n_opts);
    return C1D_EXIT_OK;
  }
  const c1d_impl *const *table = c1d_registry(&n);
  /* What it is and whether it runs here, then its summary (the order of its sums) and its CPU twin. */
  printf("%-18s %-7s %-16s %s\n", "name", "backend", "precision", "runs here");
  for (int i = 0; i < n; i++) {
    const c1d_impl *impl = table[i];
    if (impl->tier == C1D_TIER_VARIANT && !all) continue;
    if (impl->tier == C1D_TIER_MUTANT && !all && !mutants) continue;
    const char *why = c1d_impl_unavailable(impl);
    printf("%-18s %-7s %-16s %s%s\n", impl->name, impl->backend == C1D_BACKEND_GPU ? "gpu" : "cpu",
           c1d_precision_name(impl->precision), why ? "no: " : "yes", why ? why : "");
    printf("    %s%s%s%s\n", impl->summary ? impl->summary : "", impl->tier != C1D_TIER_MAIN ? " [" : "",
           impl->tier != C1D_TIER_MAIN ? c1d_tier_name(impl->tier) : "", impl->tier != C1D_TIER_MAIN ? "]" : "");
    char caps[96];
    c1d_caps_format(impl->caps, caps, sizeof caps);
    if (impl->caps)
      printf("    handles: %s%s\n", caps, impl->caps & C1D_CAP_DEPTHWISE_ONLY ? "" : " (and the plain problem)");
    else
      printf("    handles: the plain problem only (dense, fp32, no states or activation)\n");
    if (impl->twin)
      printf("    CPU twin: %s (%s)\n", impl->twin,
             impl->twin_bit_exact ? "identical bits" : "statistical: the same error, not the same bits");
  }
  /* The libraries behind the cudnn_* and cublas_* rows, as loaded at run time. */
  c1d_machine m;
  c1d_machine_describe(&m);
  if (m.has_gpu)
    printf("GPU: %s; cuDNN %ld.%ld.%ld, cuBLAS %d.%d.%d\n", m.gpu_name, m.cudnn_version / 10000,
           m.cudnn_version / 100 % 100, m.cudnn_version % 100, m.cublas_version / 10000,
           m.cublas_version / 100 % 100, m.cublas_version % 100);
  return C1D_EXIT_OK;
}
