/* Plumbing for the test suites that run programs (convlab, Chromium, nbconvert): a temporary directory
 * per suite, a program spawned with its output in files, a file read whole. Failures of the plumbing
 * itself are Criterion assertion failures. */
#ifndef C1D_TEST_PROCESS_H
#define C1D_TEST_PROCESS_H

#include <stddef.h>

/* The built convlab program. */
#define C1D_TEST_CONVLAB C1D_BINARY_DIR "/harness/convlab"

/* Creates /tmp/<prefix>_XXXXXX into dir (size >= 64). */
void c1d_test_make_dir(char *dir, const char *prefix);

/* Removes dir and everything under it (a warning if it cannot). */
void c1d_test_remove_dir(const char *dir);

/* Runs argv (NULL-terminated; argv[0] is the program's path) with stdin from /dev/null, stdout into
 * out_path and stderr into err_path (NULL: into out_path too). Returns the exit status, or -1 when the
 * program died from a signal. */
int c1d_test_spawn(const char *const *argv, const char *out_path, const char *err_path);

/* As c1d_test_spawn, without waiting: the child's pid, for waitpid (or kill). */
int c1d_test_spawn_async(const char *const *argv, const char *out_path, const char *err_path);

/* As c1d_test_spawn, but with stderr on a pseudo-terminal (isatty(2) is true in the program), whose
 * output is collected into tty_path. For what a program shows only on a terminal. */
int c1d_test_spawn_tty(const char *const *argv, const char *out_path, const char *tty_path);

/* The whole file as a string (caller frees; *len the byte count when len is not NULL), or NULL. */
char *c1d_test_slurp(const char *path, size_t *len);

/* The last part of a file (a program's log), for a failure message: a static buffer, "(no log)" when the
 * file cannot be read. */
const char *c1d_test_tail(const char *path);

/* dir/name in one of 8 rotating static buffers (a few paths per call stay valid together). */
const char *c1d_test_path(const char *dir, const char *name);

#endif
