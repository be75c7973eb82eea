/* convlab's subcommands. Each takes argv with argv[0] = its own name and returns the process exit code
 * (cli.h: 0 ok, 1 failure, 2 usage); none calls exit(). main.c lists them in its table. */
#ifndef C1D_COMMANDS_H
#define C1D_COMMANDS_H

#ifdef __cplusplus
extern "C" {
#endif

/* convlab run: implementations against the oracle, console/JSON/CSV reports. */
int c1d_cmd_run(int argc, char **argv);

/* convlab list: the registry, with what can run on this machine. */
int c1d_cmd_list(int argc, char **argv);

/* convlab bench: GPU implementations timed and scored side by side, ratios to both cuDNN modes
 * (harness/cmd_bench.c). 1 without a CUDA device, with one line "convlab bench: no CUDA device: ...". */
int c1d_cmd_bench(int argc, char **argv);

/* convlab explain: a verdict on a user's output y of x, w (and b), with the evidence (cmd_explain.c).
 * 0 whatever the verdict. */
int c1d_cmd_explain(int argc, char **argv);

/* convlab sweep: relative L2 error against n = C*K per implementation and distribution, with the fitted
 * growth exponent (harness/cmd_sweep.c). */
int c1d_cmd_sweep(int argc, char **argv);

/* Prints "convlab <cmd>: <detail> (see convlab <cmd> --help)" for a usage error, or
 * "convlab <cmd>: <detail>" otherwise, on one line of stderr; returns the matching exit code. */
int c1d_cmd_error(const char *cmd, int status);

#ifdef __cplusplus
}
#endif
#endif
