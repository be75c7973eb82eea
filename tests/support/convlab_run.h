/* Running the built convlab as a user does, for the suites that test its command line: stdout and stderr
 * captured (stdin is /dev/null), and the checks every usage error must pass (its exit code, exactly one
 * line on stderr naming the problem, nothing on stdout). */
#ifndef C1D_TEST_CONVLAB_RUN_H
#define C1D_TEST_CONVLAB_RUN_H

#define C1D_TEST_MAX_ARGS 32

typedef struct c1d_outcome {
  int code;
  char out[65536], err[4096];
} c1d_outcome;

/* Runs convlab with args (NULL-terminated, at most C1D_TEST_MAX_ARGS), its output in files under dir. */
void c1d_test_run_convlab(const char *dir, const char *const *args, c1d_outcome *o);

/* Newlines in s. */
int c1d_test_line_count(const char *s);

/* Exit code, exactly one stderr line containing `message`, nothing on stdout (Criterion expectations). */
void c1d_test_expect_one_line_error(const c1d_outcome *o, int code, const char *message);

#endif
