/* Running convlab for the command-line suites; see convlab_run.h. */
#include "tests/support/convlab_run.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/support/process.h"

static void slurp_into(const char *path, char *buf, size_t size) {
  char *text = c1d_test_slurp(path, NULL);
  snprintf(buf, size, "%s", text ? text : "");
  free(text);
}

void c1d_test_run_convlab(const char *dir, const char *const *args, c1d_outcome *o) {
  char out_path[128], err_path[128];
  snprintf(out_path, sizeof out_path, "%s/stdout", dir);
  snprintf(err_path, sizeof err_path, "%s/stderr", dir);
  const char *argv[C1D_TEST_MAX_ARGS + 2] = {C1D_TEST_CONVLAB};
  int n = 0;
  while (args[n] && n < C1D_TEST_MAX_ARGS) {
    argv[n + 1] = args[n];
    n++;
  }
  cr_assert_null(args[n], "more than %d arguments", C1D_TEST_MAX_ARGS);
  argv[n + 1] = NULL;
  o->code = c1d_test_spawn(argv, out_path, err_path);
  cr_assert_geq(o->code, 0, "convlab died from a signal");
  slurp_into(out_path, o->out, sizeof o->out);
  slurp_into(err_path, o->err, sizeof o->err);
  unlink(out_path);
  unlink(err_path);
}

int c1d_test_line_count(const char *s) {
  int n = 0;
  for (; *s; s++) n += *s == '\n';
  return n;
}

void c1d_test_expect_one_line_error(const c1d_outcome *o, int code, const char *message) {
  cr_expect_eq(o->code, code, "exit code %d, wanted %d (stderr: %s)", o->code, code, o->err);
  cr_expect_eq(c1d_test_line_count(o->err), 1, "one line on stderr, got: %s", o->err);
  cr_expect(strstr(o->err, message) != NULL, "stderr '%s' lacks '%s'", o->err, message);
  cr_expect_str_eq(o->out, "", "nothing on stdout");
}
