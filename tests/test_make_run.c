/* scripts/make_run.sh, `make run`'s steps: CMake's output goes to a log, not the terminal; a failed build
 * says so in one line naming the log, then shows its last lines, and exits 1 without running anything. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/support/process.h"

static char dir[64];

static void make_dir(void) { c1d_test_make_dir(dir, "c1d_make_run"); }
static void remove_dir(void) { c1d_test_remove_dir(dir); }

TestSuite(make_run, .init = make_dir, .fini = remove_dir, .timeout = 120);

Test(make_run, a_failed_build_names_its_log_and_keeps_cmakes_lines_out_of_the_terminal) {
  char build[128], out[128], so[128], se[128], log[160];
  snprintf(build, sizeof build, "%s/build", dir);
  snprintf(out, sizeof out, "%s/out", dir);
  snprintf(so, sizeof so, "%s/stdout", dir);
  snprintf(se, sizeof se, "%s/stderr", dir);
  snprintf(log, sizeof log, "%s/make-run-build.log", build);
  setenv("CMAKE_ARGS", "-DCMAKE_C_COMPILER=/nonexistent/cc", 1); /* configure fails at once */
  cr_assert_eq(chdir(C1D_SOURCE_DIR), 0);
  const char *argv[] = {"/bin/bash", "scripts/make_run.sh", build, out, "2", NULL};
  const int code = c1d_test_spawn(argv, so, se);
  unsetenv("CMAKE_ARGS");
  char *stdout_text = c1d_test_slurp(so, NULL), *stderr_text = c1d_test_slurp(se, NULL);
  char *log_text = c1d_test_slurp(log, NULL);
  cr_expect_eq(code, 1, "exit %d", code);
  cr_expect(stderr_text && strstr(stderr_text, "make run: the build of convlab failed; its last lines (all of them in") &&
                strstr(stderr_text, log),
            "stderr: %s", stderr_text);
  cr_expect(stdout_text && !strstr(stdout_text, "-- ") && !strstr(stdout_text, "convlab run --out"),
            "CMake's lines or a run on stdout: %s", stdout_text);
  cr_expect(log_text && strstr(log_text, "CMAKE_C_COMPILER"), "the log holds CMake's error: %s", log_text);
  cr_expect_neq(access(out, F_OK), 0, "nothing ran");
  free(stdout_text);
  free(stderr_text);
  free(log_text);
}
