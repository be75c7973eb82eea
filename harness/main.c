/* convlab: the command-line program. A table of subcommands; each lives in harness/cmd_<name>.c and
 * returns its exit code (0 ok, 1 failure, 2 bad command line). Adding one (bench, explain, report,
 * sweep) is a function in the library and one line in the table below. */
#include <stdio.h>
#include <string.h>

#include "harness/cli.h"
#include "harness/commands.h"
#include "harness/escape.h"
#include "harness/suggest.h"
#include "harness/version.h"

static const c1d_command commands[] = {
    {"run", "run implementations on the same inputs; error against the float64 oracle, and time",
     c1d_cmd_run},
    {"list", "list the implementations and whether each can run on this machine", c1d_cmd_list},
    {"bench", "time the GPU implementations beside cuDNN FP32/TF32, each with its error", c1d_cmd_bench},
    {"explain", "is your output a bug, or rounding? a verdict with its evidence", c1d_cmd_explain},
    {"sweep", "error growth against n = C*K per implementation and distribution, fitted exponents", c1d_cmd_sweep},
};
static const int n_commands = (int)(sizeof commands / sizeof commands[0]);

static void help(FILE *f) {
  fprintf(f, "usage: convlab <command> [options]\n\n"
             "convlab runs several implementations of causal Conv1d on identical inputs, measures each\n"
             "one's error against a float64 oracle and its speed.\n\ncommands:\n");
  for (int i = 0; i < n_commands; i++) fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].summary);
  fprintf(f, "\n'convlab <command> --help' describes a command's options. --version prints the version.\n");
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "convlab: a command is needed (see convlab --help)\n");
    return C1D_EXIT_USAGE;
  }
  const char *cmd = argv[1];
  if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
    help(stdout);
    return C1D_EXIT_OK;
  }
  if (strcmp(cmd, "--version") == 0) {
    printf("convlab %s\n", C1D_VERSION);
    return C1D_EXIT_OK;
  }
  for (int i = 0; i < n_commands; i++)
    if (strcmp(cmd, commands[i].name) == 0) return commands[i].main(argc - 1, argv + 1);
  const char *names[sizeof commands / sizeof commands[0]];
  for (int i = 0; i < n_commands; i++) names[i] = commands[i].name;
  const char *near = c1d_suggest(cmd, names, n_commands);
  if (near)
    c1d_print_line(stderr, "convlab: unknown command '%s' (did you mean %s? see convlab --help)", cmd, near);
  else
    c1d_print_line(stderr, "convlab: unknown command '%s' (see convlab --help)", cmd);
  return C1D_EXIT_USAGE;
}
