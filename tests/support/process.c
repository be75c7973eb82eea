/* Test plumbing for running programs; see process.h. */
#define _XOPEN_SOURCE 700 /* posix_openpt, grantpt, unlockpt, ptsname */
#include "tests/support/process.h"

#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

void c1d_test_make_dir(char *dir, const char *prefix) {
  snprintf(dir, 64, "/tmp/%s_XXXXXX", prefix);
  cr_assert_not_null(mkdtemp(dir), "cannot create a temporary directory");
}

void c1d_test_remove_dir(const char *dir) {
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) cr_log_warn("could not remove %s", dir);
}

int c1d_test_spawn_async(const char *const *argv, const char *out_path, const char *err_path) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (err_path)
    posix_spawn_file_actions_addopen(&fa, 2, err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  else
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
  pid_t pid;
  cr_assert_eq(posix_spawn(&pid, argv[0], &fa, NULL, (char *const *)argv, environ), 0, "cannot run %s",
               argv[0]);
  posix_spawn_file_actions_destroy(&fa);
  return pid;
}

int c1d_test_spawn(const char *const *argv, const char *out_path, const char *err_path) {
  int status = 0;
  pid_t pid = c1d_test_spawn_async(argv, out_path, err_path);
  cr_assert_eq(waitpid(pid, &status, 0), pid);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int c1d_test_spawn_tty(const char *const *argv, const char *out_path, const char *tty_path) {
  const int master = posix_openpt(O_RDWR | O_NOCTTY);
  cr_assert_geq(master, 0, "no pseudo-terminal");
  cr_assert(grantpt(master) == 0 && unlockpt(master) == 0);
  const char *slave = ptsname(master);
  cr_assert_not_null(slave);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, 2, slave, O_RDWR | O_NOCTTY, 0);
  pid_t pid;
  cr_assert_eq(posix_spawn(&pid, argv[0], &fa, NULL, (char *const *)argv, environ), 0, "cannot run %s",
               argv[0]);
  posix_spawn_file_actions_destroy(&fa);
  FILE *log = fopen(tty_path, "wb");
  cr_assert_not_null(log);
  int status = 0, exited = 0;
  for (;;) { /* drain the terminal while the program runs, so that it never blocks on a full one */
    struct pollfd pf = {master, POLLIN, 0};
    char buf[4096];
    if (poll(&pf, 1, 100) > 0) {
      const ssize_t n = read(master, buf, sizeof buf);
      if (n > 0) {
        fwrite(buf, 1, (size_t)n, log);
        continue;
      }
    }
    if (exited) break;
    exited = waitpid(pid, &status, WNOHANG) == pid;
  }
  fclose(log);
  close(master);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

char *c1d_test_slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = malloc((size_t)n + 1);
  if (s && fread(s, 1, (size_t)n, f) != (size_t)n) n = 0;
  if (s) s[n] = '\0';
  fclose(f);
  if (len) *len = (size_t)n;
  return s;
}

const char *c1d_test_tail(const char *path) {
  static char tail[4000];
  char *log = c1d_test_slurp(path, NULL);
  const size_t n = log ? strlen(log) : 0;
  snprintf(tail, sizeof tail, "%s", log ? log + (n > sizeof tail - 100 ? n - (sizeof tail - 100) : 0) : "(no log)");
  free(log);
  return tail;
}

const char *c1d_test_path(const char *dir, const char *name) {
  static char p[8][256];
  static int next = 0;
  char *out = p[next++ % 8];
  snprintf(out, sizeof p[0], "%s/%s", dir, name);
  return out;
}
