/* report_set: a run's reports under --out are one run's complete set or the previous one, never a mix.
 * Runs racing on one --out, a name taken by a directory, a full disk half-way, an error in a writer,
 * a SIGTERM during the commit, another writer holding the lock, and reports of an older convlab: after
 * each, every file under --out comes from one run and nothing temporary is left. */
#define _GNU_SOURCE /* unshare, CLONE_NEWNS */
#include <criterion/criterion.h>
#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness/report_set.h"
#include "tests/support/process.h"

static char dir[64];

static void make_dir(void) { c1d_test_make_dir(dir, "c1d_report_set"); }
static void remove_dir(void) {
  char disk[128];
  snprintf(disk, sizeof disk, "%s/disk", dir);
  umount2(disk, MNT_DETACH); /* the full-disk test's tmpfs, if it stopped early */
  c1d_test_remove_dir(dir);
}

TestSuite(report_set, .init = make_dir, .fini = remove_dir, .timeout = 120);

/* dir/name in one of 32 rotating buffers: keep a copy of a path used across many calls. */
static const char *at(const char *name) {
  static char p[32][256];
  static int next = 0;
  char *out = p[next++ % 32];
  snprintf(out, sizeof p[0], "%s/%s", dir, name);
  return out;
}

// --- running convlab ------------------------------------------------------------------------------

/* argv for a tiny run with inputs of `seed` writing under out (with report.html when html). */
static void run_argv(const char **argv, const char *out, const char *seed, int html) {
  const char *base[] = {C1D_TEST_CONVLAB, "run", "--batch", "1", "--cin", "8", "--cout", "4", "--length",
                        "64", "--impl", "naive", "--seed", seed, "--out", out};
  int n = 0;
  for (unsigned i = 0; i < sizeof base / sizeof base[0]; i++) argv[n++] = base[i];
  if (html) argv[n++] = "--html";
  argv[n] = NULL;
}

static int run_convlab(const char *out, const char *seed, int html, char *err, size_t err_size) {
  const char *argv[24];
  run_argv(argv, out, seed, html);
  int code = c1d_test_spawn(argv, at("stdout"), at("stderr"));
  char *text = c1d_test_slurp(at("stderr"), NULL);
  if (err) snprintf(err, err_size, "%s", text ? text : "");
  free(text);
  return code;
}

// --- what a reader sees ------------------------------------------------------------------------

static long long json_seed(const char *out) {
  char path[256];
  snprintf(path, sizeof path, "%s/report.json", out);
  char *text = c1d_test_slurp(path, NULL);
  cr_assert_not_null(text, "%s cannot be read", path);
  cJSON *root = cJSON_Parse(text);
  cr_assert_not_null(root, "%s is not complete JSON", path);
  long long seed = (long long)cJSON_GetNumberValue(cJSON_GetObjectItem(cJSON_GetObjectItem(root, "inputs"), "seed"));
  cJSON_Delete(root);
  free(text);
  return seed;
}

static int contains(const char *out, const char *name, const char *needle) {
  char path[256];
  snprintf(path, sizeof path, "%s/%s", out, name);
  char *text = c1d_test_slurp(path, NULL);
  cr_assert_not_null(text, "%s cannot be read", path);
  int found = strstr(text, needle) != NULL;
  free(text);
  return found;
}

/* Every report under out comes from the run of `seed` (report.html too when html). */
static void expect_set_of(const char *out, long long seed, int html) {
  char txt[64], csv[64], page[64];
  cr_expect_eq(json_seed(out), seed, "report.json is from seed %lld, not %lld", json_seed(out), seed);
  snprintf(txt, sizeof txt, "seed %lld\n", seed);
  snprintf(csv, sizeof csv, "\nnaive,oracle,cpu,fp32,ok,,,0,%lld,", seed);
  snprintf(page, sizeof page, "conv_init, seed %lld, 1 trial", seed);
  cr_expect(contains(out, "report.txt", txt), "report.txt is not from seed %lld", seed);
  cr_expect(contains(out, "report.csv", csv), "report.csv is not from seed %lld", seed);
  if (html) cr_expect(contains(out, "report.html", page), "report.html is not from seed %lld", seed);
}

/* Nothing but the set: the four names, .report, one .report-* directory, the lock. */
static void expect_nothing_temporary(const char *out) {
  DIR *d = opendir(out);
  cr_assert_not_null(d, "%s is missing", out);
  int sets = 0;
  for (struct dirent *e; (e = readdir(d));) {
    const char *n = e->d_name;
    if (!strcmp(n, ".") || !strcmp(n, "..") || !strcmp(n, ".report") || !strcmp(n, ".report.lock"))
      continue;
    if (!strncmp(n, ".report-", 8)) {
      sets++;
      continue;
    }
    cr_expect(!strcmp(n, "report.json") || !strcmp(n, "report.csv") || !strcmp(n, "report.txt") ||
                  !strcmp(n, "report.html"),
              "%s/%s was left behind", out, n);
  }
  closedir(d);
  cr_expect_eq(sets, 1, "%d report directories under %s, not one", sets, out);
}

// --- through the program ------------------------------------------------------------------------

Test(report_set, holds_one_runs_complete_set_when_runs_race_on_one_out) {
  char out[256];
  snprintf(out, sizeof out, "%s", at("race"));
  enum { ROUNDS = 10, RUNS = 4 };
  for (int round = 0; round < ROUNDS; round++) {
    pid_t pid[RUNS];
    char seeds[RUNS][16], outs[RUNS][256];
    for (int k = 0; k < RUNS; k++) {
      const char *argv[24];
      snprintf(seeds[k], sizeof seeds[k], "%d", 100 * round + k + 1);
      snprintf(outs[k], sizeof outs[k], "%s/stdout%d", dir, k);
      run_argv(argv, out, seeds[k], 1);
      pid[k] = c1d_test_spawn_async(argv, outs[k], NULL);
    }
    for (int k = 0; k < RUNS; k++) {
      int status = 0;
      cr_assert_eq(waitpid(pid[k], &status, 0), pid[k]);
      cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "a racing run failed (round %d)", round);
    }
    const long long seed = json_seed(out);
    cr_assert(seed > 100 * round && seed <= 100 * round + RUNS, "round %d: seed %lld", round, seed);
    expect_set_of(out, seed, 1);
    expect_nothing_temporary(out);
  }
}

Test(report_set, refuses_before_the_run_a_name_taken_by_a_directory_and_keeps_the_old_set) {
  const char *out = at("taken");
  char err[512];
  cr_assert_eq(run_convlab(out, "1", 1, err, sizeof err), 0, "%s", err);
  cr_assert_eq(unlink(at("taken/report.txt")), 0);
  cr_assert_eq(mkdir(at("taken/report.txt"), 0777), 0);
  cr_expect_eq(run_convlab(out, "2", 1, err, sizeof err), 1);
  cr_expect(strstr(err, "report.txt is a directory, not a report file") != NULL, "stderr: %s", err);
  cr_expect_eq(strchr(err, '\n'), err + strlen(err) - 1, "one line: %s", err);
  cr_expect_eq(json_seed(out), 1, "the old set stays");
  cr_expect(contains(out, "report.csv", "ok,,,0,1,") && contains(out, "report.html", "seed 1, 1 trial"));
}

Test(report_set, an_unusable_out_is_refused_before_any_work_and_nothing_is_made) {
  char err[512], blocker[256], out[300];
  snprintf(blocker, sizeof blocker, "%s", at("plain_file"));
  FILE *f = fopen(blocker, "w");
  fclose(f);
  snprintf(out, sizeof out, "%s/sub/reports", blocker);
  /* --save-outputs shows whether the run started: it writes the outputs as it goes. */
  const char *argv[] = {C1D_TEST_CONVLAB, "run", "--batch", "1", "--cin", "8", "--cout", "4", "--length",
                        "64", "--impl", "naive", "--out", out, "--save-outputs", at("saved"), NULL};
  cr_expect_eq(c1d_test_spawn(argv, at("stdout"), at("stderr")), 1);
  char *text = c1d_test_slurp(at("stderr"), NULL);
  cr_expect(strstr(text, "exists and is not a directory") != NULL, "stderr: %s", text);
  free(text);
  cr_expect_neq(access(at("saved"), F_OK), 0, "the run started before --out was found unusable");
  /* A new directory below a writable one is fine, and the check itself leaves nothing. */
  cr_expect_eq(run_convlab(at("fresh/a/b"), "1", 0, err, sizeof err), 0, "%s", err);
  expect_set_of(at("fresh/a/b"), 1, 0);
}

Test(report_set, a_sigterm_at_any_moment_leaves_a_whole_set_and_no_temporary_file) {
  char out[256];
  snprintf(out, sizeof out, "%s", at("term"));
  char err[512];
  cr_assert_eq(run_convlab(out, "7", 1, err, sizeof err), 0, "%s", err);
  int died = 0;
  for (int i = 0; i < 16; i++) {
    const char *argv[24];
    char seed[16];
    snprintf(seed, sizeof seed, "%d", 1000 + i);
    run_argv(argv, out, seed, 1);
    pid_t pid = c1d_test_spawn_async(argv, at("stdout"), at("stderr"));
    const struct timespec delay = {0, (long)i * 4 * 1000 * 1000}; /* 0..60 ms: before, during, after */
    nanosleep(&delay, NULL);
    kill(pid, SIGTERM);
    int status = 0;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    died += WIFSIGNALED(status);
    const long long seed_now = json_seed(out);
    cr_assert(seed_now == 7 || (seed_now >= 1000 && seed_now <= 1000 + i), "seed %lld", seed_now);
    expect_set_of(out, seed_now, 1);
    expect_nothing_temporary(out);
  }
  cr_log_info("%d of 16 runs were ended by the signal", died);
}

/* A full disk half-way through the set: a private tmpfs too small for the second run's report.html. */
Test(report_set, a_full_disk_half_way_keeps_the_old_set_and_says_why) {
  if (unshare(CLONE_NEWNS) != 0) cr_skip_test("a private mount needs root (unshare: %s)", strerror(errno));
  cr_assert_eq(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL), 0, "%s", strerror(errno));
  const char *disk = at("disk");
  cr_assert_eq(mkdir(disk, 0777), 0);
  cr_assert_eq(mount("tmpfs", disk, "tmpfs", 0, "size=40k"), 0, "mount: %s", strerror(errno));
  char err[512];
  const char *out = at("disk/out");
  cr_assert_eq(run_convlab(out, "3", 0, err, sizeof err), 0, "the first set fits: %s", err);
  cr_expect_eq(run_convlab(out, "4", 1, err, sizeof err), 1, "with the page it does not fit");
  cr_expect(strstr(err, ": cannot write: No space left on device") != NULL, "stderr: %s", err);
  char *table = c1d_test_slurp(at("stdout"), NULL);
  cr_expect(table && strstr(table, "naive "), "the table is printed all the same");
  free(table);
  cr_expect_eq(strchr(err, '\n'), err + strlen(err) - 1, "one line: %s", err);
  expect_set_of(out, 3, 0);
  expect_nothing_temporary(out);
  cr_expect_neq(access(at("disk/out/report.html"), F_OK), 0, "no page of the failed run");
  /* A failed --out into new directories takes them away again. */
  cr_expect_eq(run_convlab(at("disk/new/deeper"), "5", 1, err, sizeof err), 1);
  cr_expect_neq(access(at("disk/new"), F_OK), 0, "disk/new was left behind");
  umount(disk);
}

Test(report_set, takes_over_the_reports_of_an_older_version_and_their_temporary_files) {
  const char *out = at("old");
  cr_assert_eq(mkdir(out, 0777), 0);
  const char *names[] = {"report.json", "report.csv", "report.txt", "report.html", "report.csv.tmp.Ab12Cd"};
  for (int i = 0; i < 5; i++) {
    char path[300];
    snprintf(path, sizeof path, "%s/%s", out, names[i]);
    FILE *f = fopen(path, "w");
    fputs("old\n", f);
    fclose(f);
  }
  char err[512];
  cr_assert_eq(run_convlab(out, "9", 0, err, sizeof err), 0, "%s", err);
  expect_set_of(out, 9, 0);
  expect_nothing_temporary(out);
  cr_expect_neq(access(at("old/report.html"), F_OK), 0, "the old page is not shown beside a new set");
}

// --- through the library -------------------------------------------------------------------------

static const char *const names[] = {"a.txt", "b.txt", "c.txt"};

typedef struct writer_ctx {
  const char *text;
  int fail_at, signal_at;
} writer_ctx;

static c1d_status write_text(FILE *f, int index, void *vctx) {
  const writer_ctx *c = vctx;
  if (index == c->signal_at) raise(SIGTERM);
  if (index == c->fail_at) return c1d_fail(C1D_ERR_IO, "the writer of %s gave up", names[index]);
  fprintf(f, "%s %s\n", c->text, names[index]);
  return C1D_OK;
}

static c1d_report_set set_at(const char *out) {
  c1d_report_set s = {out, "report", names, 3, 3, 0};
  return s;
}

static void expect_texts(const char *out, const char *text) {
  for (int i = 0; i < 3; i++) {
    char want[64];
    snprintf(want, sizeof want, "%s %s\n", text, names[i]);
    cr_expect(contains(out, names[i], want), "%s/%s is not '%s'", out, names[i], text);
  }
}

Test(report_set, a_writer_that_fails_half_way_changes_nothing) {
  const char *out = at("lib_fail");
  c1d_report_set set = set_at(out);
  writer_ctx first = {"first", -1, -1}, second = {"second", 2, -1};
  cr_assert_eq(c1d_report_set_write(&set, write_text, &first), C1D_OK, "%s", c1d_error_detail());
  cr_expect_eq(c1d_report_set_write(&set, write_text, &second), C1D_ERR_IO);
  cr_expect_str_eq(c1d_error_detail(), "the writer of c.txt gave up");
  expect_texts(out, "first");
}

Test(report_set, a_sigterm_during_the_write_takes_effect_after_the_commit) {
  const char *out = at("lib_term");
  c1d_report_set set = set_at(out);
  writer_ctx first = {"first", -1, -1}, second = {"second", -1, 1};
  cr_assert_eq(c1d_report_set_write(&set, write_text, &first), C1D_OK);
  pid_t pid = fork();
  cr_assert_geq(pid, 0);
  if (pid == 0) {
    c1d_report_set_write(&set, write_text, &second);
    _exit(0); /* not reached: the held SIGTERM ends the child once the set is in */
  }
  int status = 0;
  cr_assert_eq(waitpid(pid, &status, 0), pid);
  cr_expect(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM, "the child was ended by SIGTERM");
  expect_texts(out, "second");
  char link[64];
  ssize_t n = readlink(at("lib_term/.report"), link, sizeof link - 1);
  cr_assert_gt(n, 0);
  int sets = 0;
  DIR *d = opendir(out);
  for (struct dirent *e; (e = readdir(d));) sets += !strncmp(e->d_name, ".report-", 8);
  closedir(d);
  cr_expect_eq(sets, 1, "the first set was removed, the second is the only one");
}

Test(report_set, waits_for_another_writer_then_fails_with_one_line) {
  const char *out = at("lib_lock");
  c1d_report_set set = set_at(out);
  set.wait_s = 1;
  writer_ctx first = {"first", -1, -1}, second = {"second", -1, -1};
  cr_assert_eq(c1d_report_set_write(&set, write_text, &first), C1D_OK);
  int fd = open(at("lib_lock/.report.lock"), O_RDWR);
  cr_assert_geq(fd, 0);
  cr_assert_eq(flock(fd, LOCK_EX), 0);
  cr_expect_eq(c1d_report_set_write(&set, write_text, &second), C1D_ERR_IO);
  cr_expect(strstr(c1d_error_detail(), "another convlab has been writing its reports there for 1 s"),
            "%s", c1d_error_detail());
  expect_texts(out, "first");
  close(fd);
  cr_expect_eq(c1d_report_set_write(&set, write_text, &second), C1D_OK, "free again: %s", c1d_error_detail());
  expect_texts(out, "second");
}

Test(report_set, a_stream_says_why_a_write_failed) {
  int fd = open("/dev/full", O_WRONLY);
  if (fd < 0) cr_skip_test("no /dev/full");
  int err = -1;
  FILE *f = c1d_checked_stream(fd, &err);
  cr_assert_not_null(f);
  cr_expect_eq(err, 0);
  fputs("text", f);
  cr_expect_neq(fflush(f), 0);
  cr_expect_eq(err, ENOSPC, "errno %d (%s)", err, strerror(err));
  fclose(f);
  close(fd);
}

// --- never through a link, only what convlab wrote (issue 22) ------------------------------------

static void write_file_text(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  cr_assert_not_null(f, "%s: %s", path, strerror(errno));
  fputs(text, f);
  fclose(f);
}

Test(report_set, a_link_named_like_a_set_is_never_followed_and_what_was_left_alone_is_said) {
  cr_assert_eq(mkdir(at("victim"), 0777), 0);
  write_file_text(at("victim/thesis.tex"), "precious\n");
  write_file_text(at("victim/report.json"), "mine\n");
  cr_assert_eq(mkdir(at("vout"), 0777), 0);
  cr_assert_eq(symlink("../victim", at("vout/.report-old")), 0);
  /* A directory named like a set that convlab did not mark, and one it did (a killed run's). */
  cr_assert_eq(mkdir(at("vout/.report-foreign"), 0777), 0);
  write_file_text(at("vout/.report-foreign/report.json"), "mine too\n");
  cr_assert_eq(mkdir(at("vout/.report-killed"), 0777), 0);
  write_file_text(at("vout/.report-killed/.convlab-set"), "convlab report set, run x\n");
  write_file_text(at("vout/.report-killed/report.json"), "half\n");
  char err[512];
  cr_assert_eq(run_convlab(at("vout"), "1", 0, err, sizeof err), 0, "%s", err);
  cr_expect(contains(at("victim"), "thesis.tex", "precious"), "a file outside --out was touched");
  cr_expect(contains(at("victim"), "report.json", "mine"), "a file outside --out was touched");
  cr_expect(contains(at("vout/.report-foreign"), "report.json", "mine too"), "an unmarked directory was emptied");
  struct stat sb;
  cr_expect(lstat(at("vout/.report-old"), &sb) == 0 && S_ISLNK(sb.st_mode), "the link itself stays");
  cr_expect_neq(access(at("vout/.report-killed"), F_OK), 0, "a marked leftover goes");
  cr_expect(strstr(err, "/.report-old alone: a link or a file, not a set convlab wrote") != NULL, "stderr: %s", err);
  cr_expect(strstr(err, "/.report-foreign alone: a directory without convlab's mark") != NULL, "stderr: %s", err);
  expect_set_of(at("vout"), 1, 0);
}

/* The outputs set's manifest run id, read through the committed set's link as a reader should. */
static char *json_string_at(const char *path, const char *key) {
  char *text = c1d_test_slurp(path, NULL);
  if (!text) return NULL;
  cJSON *root = cJSON_Parse(text);
  free(text);
  const char *v = cJSON_GetStringValue(cJSON_GetObjectItem(root, key));
  char *out = v ? strdup(v) : NULL;
  cJSON_Delete(root);
  return out;
}

/* report.json's run id and the saved outputs' manifest's, each read through its set's commit link. */
static void expect_one_run(const char *out, const char *saved) {
  char a[300], b[300];
  snprintf(a, sizeof a, "%s/.report/report.json", out);
  snprintf(b, sizeof b, "%s/.outputs/outputs.json", saved);
  char *report = json_string_at(a, "run_id"), *outputs = json_string_at(b, "run_id");
  cr_assert_not_null(report, "%s has no run_id", a);
  cr_assert_not_null(outputs, "%s has no run_id", b);
  cr_expect_str_eq(report, outputs, "the report and the saved outputs come from different runs");
  free(report);
  free(outputs);
  snprintf(a, sizeof a, "%s/naive.npy", saved);
  snprintf(b, sizeof b, "%s/oracle.npy", saved);
  cr_expect(access(a, R_OK) == 0 && access(b, R_OK) == 0, "the outputs are readable by their names");
}

static pid_t spawn_saving(const char *out, const char *saved, const char *seed, const char *stderr_path) {
  const char *argv[] = {C1D_TEST_CONVLAB, "run", "--batch", "2", "--cin", "16", "--cout", "8", "--length",
                        "512", "--impl", "naive", "--seed", seed, "--out", out, "--save-outputs", saved, NULL};
  return c1d_test_spawn_async(argv, at("stdout"), stderr_path);
}

Test(report_set, saved_outputs_commit_with_the_report_when_runs_race) {
  char out[256], saved[256];
  snprintf(out, sizeof out, "%s", at("c2"));
  snprintf(saved, sizeof saved, "%s", at("c2/outputs"));
  for (int round = 0; round < 10; round++) {
    pid_t pid[2];
    char seeds[2][16], outs[2][256];
    for (int k = 0; k < 2; k++) {
      snprintf(seeds[k], sizeof seeds[k], "%d", 1000 + 2 * round + k);
      snprintf(outs[k], sizeof outs[k], "%s/stderr%d", dir, k);
      pid[k] = spawn_saving(out, saved, seeds[k], outs[k]);
    }
    for (int k = 0; k < 2; k++) {
      int status = 0;
      cr_assert_eq(waitpid(pid[k], &status, 0), pid[k]);
      cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "a racing run failed (round %d): %s", round,
                c1d_test_tail(outs[k]));
    }
    expect_one_run(out, saved);
  }
  /* One outputs set, no staged directory left behind. */
  DIR *d = opendir(saved);
  int sets = 0;
  for (struct dirent *e; (e = readdir(d));) sets += !strncmp(e->d_name, ".outputs-", 9);
  closedir(d);
  cr_expect_eq(sets, 1, "%d outputs sets under %s", sets, saved);
}

Test(report_set, a_run_killed_before_its_commit_leaves_the_previous_outputs) {
  char out[256], saved[256], err[512];
  snprintf(out, sizeof out, "%s", at("killed"));
  snprintf(saved, sizeof saved, "%s", at("killed/outputs"));
  pid_t pid = spawn_saving(out, saved, "1", at("stdout"));
  int status = 0;
  cr_assert_eq(waitpid(pid, &status, 0), pid);
  cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  char *first = json_string_at(at("killed/outputs/outputs.json"), "run_id");
  cr_assert_not_null(first);
  /* A bigger run killed while it computes: its staged outputs are invisible, and go at the next commit. */
  const char *argv[] = {C1D_TEST_CONVLAB, "run", "--batch", "8", "--cin", "256", "--cout", "256", "--length",
                        "4096", "--impl", "naive,kahan", "--out", out, "--save-outputs", saved, NULL};
  pid = c1d_test_spawn_async(argv, at("stdout"), at("stderr"));
  int staged = 0;
  char current[256];
  ssize_t n = readlink(at("killed/outputs/.outputs"), current, sizeof current - 1);
  cr_assert_gt(n, 0);
  current[n] = '\0';
  for (int i = 0; i < 800 && !staged; i++) { /* until its oracle.npy is saved in a set of its own */
    const struct timespec pause = {0, 25 * 1000 * 1000};
    nanosleep(&pause, NULL);
    DIR *d = opendir(saved);
    for (struct dirent *e; d && (e = readdir(d));) {
      char path[1024];
      snprintf(path, sizeof path, "%s/%s/oracle.npy", saved, e->d_name);
      staged |= !strncmp(e->d_name, ".outputs-", 9) && strcmp(e->d_name, current) && access(path, F_OK) == 0;
    }
    if (d) closedir(d);
  }
  kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
  cr_expect(staged, "the killed run never staged an output");
  char *now = json_string_at(at("killed/outputs/outputs.json"), "run_id");
  cr_expect(now && !strcmp(now, first), "a reader sees the killed run's outputs");
  free(now);
  expect_one_run(out, saved);
  cr_assert_eq(run_convlab(out, "3", 0, err, sizeof err), 0, "%s", err); /* no --save-outputs: untouched */
  pid = spawn_saving(out, saved, "4", at("stdout"));
  cr_assert_eq(waitpid(pid, &status, 0), pid);
  cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  expect_one_run(out, saved);
  DIR *d = opendir(saved);
  int sets = 0;
  for (struct dirent *e; (e = readdir(d));) sets += !strncmp(e->d_name, ".outputs-", 9);
  closedir(d);
  cr_expect_eq(sets, 1, "the killed run's staged set was not cleaned up (%d sets)", sets);
  free(first);
}

Test(report_set, an_unwritable_save_outputs_is_refused_before_any_work) {
  if (unshare(CLONE_NEWNS) != 0) cr_skip_test("a private mount needs root (unshare: %s)", strerror(errno));
  cr_assert_eq(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL), 0, "%s", strerror(errno));
  const char *ro = at("ro");
  cr_assert_eq(mkdir(ro, 0777), 0);
  cr_assert_eq(mount("tmpfs", ro, "tmpfs", MS_RDONLY, "size=40k"), 0, "mount: %s", strerror(errno));
  const char *argv[] = {C1D_TEST_CONVLAB, "run", "--batch", "1", "--cin", "8", "--cout", "4", "--length", "64",
                        "--impl", "naive", "--out", at("ro_out"), "--save-outputs", ro, NULL};
  cr_expect_eq(c1d_test_spawn(argv, at("stdout"), at("stderr")), 1);
  char *err = c1d_test_slurp(at("stderr"), NULL), *table = c1d_test_slurp(at("stdout"), NULL);
  cr_expect(err && strstr(err, "cannot write under") && strstr(err, "/ro: Read-only file system"), "stderr: %s", err);
  cr_expect(err && strchr(err, '\n') == err + strlen(err) - 1, "one line: %s", err);
  cr_expect(table && !strstr(table, "naive"), "the run was done before the refusal: %s", table);
  cr_expect_neq(access(at("ro_out"), F_OK), 0, "--out was made for a run that never started");
  free(err);
  free(table);
  umount(ro);
}

Test(report_set, a_path_too_deep_creates_nothing_and_its_message_keeps_the_reason) {
  enum { LEVELS = 3000 };
  char *deep = malloc(LEVELS * 2 + 300);
  int n = snprintf(deep, 300, "%s", at("deep"));
  for (int i = 0; i < LEVELS; i++) n += sprintf(deep + n, "/a");
  const char *argv[] = {C1D_TEST_CONVLAB, "run", "--batch", "1", "--cin", "8", "--cout", "4", "--length", "64",
                        "--impl", "naive", "--save-outputs", deep, NULL};
  cr_expect_eq(c1d_test_spawn(argv, at("stdout"), at("stderr")), 1);
  char *err = c1d_test_slurp(at("stderr"), NULL);
  cr_expect(err && strstr(err, "bytes long; this system takes at most 4095\n"), "the reason is cut: %s", err);
  cr_expect(err && strchr(err, '\n') == err + strlen(err) - 1, "one line: %s", err);
  cr_expect_neq(access(at("deep"), F_OK), 0, "directories were made for a path that cannot exist");
  free(err);
  /* The same with --out, whose message names the path first and the reason last. */
  const char *argv2[] = {C1D_TEST_CONVLAB, "run", "--batch", "1", "--cin", "8", "--cout", "4", "--length", "64",
                         "--impl", "naive", "--out", deep, NULL};
  cr_expect_eq(c1d_test_spawn(argv2, at("stdout"), at("stderr")), 1);
  err = c1d_test_slurp(at("stderr"), NULL);
  cr_expect(err && strstr(err, "bytes left out ...]") && strstr(err, "this system takes at most 4095\n"),
            "the reason is cut: %s", err);
  cr_expect_neq(access(at("deep"), F_OK), 0, "directories were made for a path that cannot exist");
  free(err);
  free(deep);
}

/* A staged set holding one file per text ("a.npy" ...), of run `id`. */
static c1d_staged_set *staged_with(const char *out, const char *id, const char *text, int files) {
  c1d_staged_set *s = NULL;
  cr_assert_eq(c1d_staged_set_open(out, "outputs", ".npy", id, &s), C1D_OK, "%s", c1d_error_detail());
  for (int i = 0; i < files; i++) {
    char name[16], path[4200];
    snprintf(name, sizeof name, "%c.npy", 'a' + i);
    snprintf(path, sizeof path, "%s/%s", c1d_staged_set_dir(s), name);
    write_file_text(path, text);
    cr_assert_eq(c1d_staged_set_add(s, name), C1D_OK);
  }
  return s;
}

Test(report_set, a_staged_set_commits_with_the_report_set_or_not_at_all) {
  const char *out = at("both"), *saved = at("both/outputs");
  c1d_report_set set = set_at(out);
  writer_ctx first = {"first", -1, -1}, second = {"second", 2, -1}, third = {"third", -1, -1};
  set.run_id = "run-1";
  set.with = staged_with(saved, "run-1", "one\n", 1);
  cr_assert_eq(c1d_report_set_write(&set, write_text, &first), C1D_OK, "%s", c1d_error_detail());
  c1d_staged_set_discard(set.with); /* committed: only freed */
  cr_expect(contains(saved, "a.npy", "one"));
  cr_expect(contains(saved, "outputs.json", "\"run_id\":\t\"run-1\""));
  /* The reports fail half-way: the outputs of that run are not seen either. */
  set.with = staged_with(saved, "run-2", "two\n", 2);
  cr_expect_eq(c1d_report_set_write(&set, write_text, &second), C1D_ERR_IO);
  cr_expect(!c1d_staged_set_committed(set.with));
  c1d_staged_set_discard(set.with);
  expect_texts(out, "first");
  cr_expect(contains(saved, "a.npy", "one"), "the failed run's outputs replaced the previous ones");
  cr_expect_neq(access(at("both/outputs/b.npy"), F_OK), 0, "the failed run's new output is visible");
  cr_expect(contains(saved, "outputs.json", "run-1"));
  /* Both commit; a name the new set lacks is no longer shown. */
  c1d_staged_set *s = staged_with(saved, "run-3", "three\n", 2);
  set.with = s;
  cr_assert_eq(c1d_report_set_write(&set, write_text, &third), C1D_OK, "%s", c1d_error_detail());
  c1d_staged_set_discard(s);
  expect_texts(out, "third");
  cr_expect(contains(saved, "b.npy", "three") && contains(saved, "outputs.json", "run-3"));
  set.with = staged_with(saved, "run-4", "four\n", 1);
  cr_assert_eq(c1d_staged_set_commit(set.with), C1D_OK, "%s", c1d_error_detail());
  c1d_staged_set_discard(set.with);
  cr_expect(contains(saved, "a.npy", "four"));
  struct stat sb;
  cr_expect_neq(lstat(at("both/outputs/b.npy"), &sb), 0, "a link to an output the set lacks stays");
  DIR *d = opendir(saved);
  int sets = 0;
  for (struct dirent *e; (e = readdir(d));) sets += !strncmp(e->d_name, ".outputs-", 9);
  closedir(d);
  cr_expect_eq(sets, 1, "%d outputs sets, not one", sets);
}

Test(report_set, a_set_another_run_is_still_filling_is_left_to_it) {
  const char *saved = at("filling");
  c1d_staged_set *mine = staged_with(saved, "run-a", "a\n", 1);
  c1d_staged_set *other = staged_with(saved, "run-b", "b\n", 1);
  cr_assert_eq(c1d_staged_set_commit(other), C1D_OK, "%s", c1d_error_detail());
  c1d_staged_set_discard(other);
  cr_expect_eq(access(c1d_staged_set_dir(mine), F_OK), 0, "another run's clean-up took a set being filled");
  cr_assert_eq(c1d_staged_set_commit(mine), C1D_OK, "%s", c1d_error_detail());
  c1d_staged_set_discard(mine);
  cr_expect(contains(saved, "a.npy", "a\n") && contains(saved, "outputs.json", "run-a"));
}
