/* Command-line plumbing shared by convlab's subcommands: exit codes, a table-driven long-option parser
 * with strict number parsing, and help text generated from the same table. A subcommand declares its
 * options as a local array of c1d_option pointing at its own variables, calls c1d_cli_parse, and prints
 * c1d_cli_help for --help; every parse error is one line (c1d_error_detail) with C1D_ERR_USAGE. */
#ifndef C1D_CLI_H
#define C1D_CLI_H

#include <stdint.h>
#include <stdio.h>

#include "reference/status.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { C1D_EXIT_OK = 0, C1D_EXIT_FAILURE = 1, C1D_EXIT_USAGE = 2 };

typedef enum c1d_opt_kind {
  C1D_OPT_FLAG,   /* no value; dest is int*, set to 1 */
  C1D_OPT_INT,    /* dest is int64_t*, value in [min, max] */
  C1D_OPT_U64,    /* dest is uint64_t*, any non-negative 64-bit value */
  C1D_OPT_DOUBLE, /* dest is double*, finite and >= min */
  C1D_OPT_STRING, /* dest is const char** (points into argv) */
  C1D_OPT_LIST,   /* dest is c1d_string_list*: each use appends one value; may be given several times */
  C1D_OPT_OPTIONAL /* dest is const char**: "--name=V" or "--name V" (V not starting with '-') sets V;
                      "--name" alone sets "" (given, without a value) */
} c1d_opt_kind;

/* The values of a C1D_OPT_LIST option, in command-line order (pointing into argv). */
#define C1D_OPT_LIST_MAX 64
typedef struct c1d_string_list {
  const char *items[C1D_OPT_LIST_MAX];
  int n;
} c1d_string_list;

typedef struct c1d_option {
  const char *name;    /* "--batch" */
  c1d_opt_kind kind;
  void *dest;
  int64_t min, max;    /* C1D_OPT_INT range; C1D_OPT_DOUBLE uses min only */
  const char *metavar; /* "N" in "--batch N" */
  const char *help;    /* one line */
  int seen;            /* set by the parser: the option was given */
} c1d_option;

/* One subcommand of convlab: main receives argv with argv[0] = the subcommand's name and returns the
 * exit code. Adding a subcommand is one function and one line in main.c's table. */
typedef struct c1d_command {
  const char *name;
  const char *summary;
  int (*main)(int argc, char **argv);
} c1d_command;

/* Parses argv[1..argc) against opts. --help or -h anywhere sets *help and stops. Accepts "--name value"
 * and "--name=value". C1D_ERR_USAGE with a one-line detail for an unknown option (with the nearest
 * option's name when one is near: "did you mean --cin?"), a missing or malformed value, a value out of
 * range, an option other than a list given twice, or a positional argument. */
c1d_status c1d_cli_parse(c1d_option *opts, int n_opts, int argc, char **argv, int *help);

/* The option given as `name` in the table, for conflict checks; NULL if the table has none. */
const c1d_option *c1d_cli_find(const c1d_option *opts, int n_opts, const char *name);

/* "usage: ...", the description, then one aligned line per option. */
void c1d_cli_help(FILE *f, const char *usage, const char *description, const c1d_option *opts,
                  int n_opts);

/* Strict number parsing for option values: the whole text must be the number. */
c1d_status c1d_parse_int(const char *what, const char *text, int64_t min, int64_t max, int64_t *out);
c1d_status c1d_parse_u64(const char *what, const char *text, uint64_t *out);
c1d_status c1d_parse_double(const char *what, const char *text, double min, double *out);

/* argv joined with spaces, arguments quoted for a POSIX shell where needed (caller frees); NULL when out
 * of memory. */
char *c1d_cli_command_line(int argc, char **argv);

#ifdef __cplusplus
}
#endif
#endif
