/* Report sets: a directory per run, committed by renaming one link (report_set.h has the layout). */
#define _GNU_SOURCE /* fopencookie */
#include "harness/report_set.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "harness/atomic_file.h"
#include "harness/escape.h"

#define PATH_SIZE 4096

/* In every set directory convlab writes: what makes it convlab's to remove (with the run id). */
#define MARK ".convlab-set"

// --- a stream that remembers why a write failed -----------------------------------------------

typedef struct checked {
  int fd;
  int *err;
} checked;

static ssize_t checked_write(void *cookie, const char *buf, size_t size) {
  checked *c = cookie;
  size_t done = 0;
  while (done < size) {
    ssize_t n = write(c->fd, buf + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (!*c->err) *c->err = n < 0 ? errno : EIO;
      return -1;
    }
    done += (size_t)n;
  }
  return (ssize_t)size;
}

static int checked_close(void *cookie) {
  free(cookie);
  return 0;
}

FILE *c1d_checked_stream(int fd, int *err) {
  checked *c = malloc(sizeof *c);
  if (!c) return NULL;
  *c = (checked){fd, err};
  *err = 0;
  FILE *f = fopencookie(c, "w", (cookie_io_functions_t){NULL, checked_write, NULL, checked_close});
  if (!f) free(c);
  return f;
}

// --- held signals ---------------------------------------------------------------------------------

/* A signal that would end the process while a set is half written is noted and raised again once the
 * set has committed or rolled back. A handler (not a mask) because OpenMP's threads would otherwise
 * take it with the default action. */
static const int held_signals[] = {SIGINT, SIGTERM, SIGHUP};
enum { N_HELD = sizeof held_signals / sizeof held_signals[0] };
static volatile sig_atomic_t held_signal;

static void note_signal(int sig) {
  if (!held_signal) held_signal = sig;
}

static void hold_signals(struct sigaction *old) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = note_signal;
  sa.sa_flags = SA_RESTART;
  sigemptyset(&sa.sa_mask);
  held_signal = 0;
  for (int i = 0; i < N_HELD; i++) sigaction(held_signals[i], &sa, &old[i]);
}

static void release_signals(const struct sigaction *old) {
  for (int i = 0; i < N_HELD; i++) sigaction(held_signals[i], &old[i], NULL);
  if (held_signal) raise(held_signal);
}

// --- names ----------------------------------------------------------------------------------------

typedef struct paths {
  const c1d_report_set *set;
  const char *suffix;     /* a staged set's files end so; NULL: the set holds set->names */
  char link[PATH_SIZE];   /* DIR/.K */
  char lock[PATH_SIZE];   /* DIR/.K.lock */
  char prefix[64];        /* ".K-": the sets */
  char tmp_prefix[64];    /* ".K.tmp": links not yet renamed */
} paths;

static c1d_status make_paths(const c1d_report_set *set, paths *p) {
  p->set = set;
  p->suffix = NULL;
  c1d_status st = c1d_check_path_length(set->dir);
  if (st != C1D_OK) return st;
  if (strlen(set->dir) > PATH_SIZE - 512)
    return c1d_fail(C1D_ERR_IO, "%s: the path is %zu bytes long; convlab takes at most %d for its reports (room "
                    "for the names of its files)", set->dir, strlen(set->dir), PATH_SIZE - 512);
  snprintf(p->link, sizeof p->link, "%s/.%s", set->dir, set->kind);
  snprintf(p->lock, sizeof p->lock, "%s/.%s.lock", set->dir, set->kind);
  snprintf(p->prefix, sizeof p->prefix, ".%s-", set->kind);
  snprintf(p->tmp_prefix, sizeof p->tmp_prefix, ".%s.tmp", set->kind);
  return C1D_OK;
}

/* make_paths keeps dir short enough that no name (at most 255 bytes) is cut off here. */
static void join(char *out, const char *dir, const char *name) {
  if (snprintf(out, PATH_SIZE, "%s/%s", dir, name) >= PATH_SIZE) out[0] = '\0';
}

/* The last part of a path that has a '/'. */
static const char *base_name(const char *path) { return strrchr(path, '/') + 1; }

/* What DIR/name's link says when convlab made it: ".K/name". */
static void link_text(const paths *p, const char *name, char *out) {
  if (snprintf(out, PATH_SIZE, ".%s/%s", p->set->kind, name) >= PATH_SIZE) out[0] = '\0';
}

static int starts_with(const char *s, const char *prefix) { return strncmp(s, prefix, strlen(prefix)) == 0; }

// --- the checks -------------------------------------------------------------------------------

/* Every existing part of dir is a directory; the deepest existing one (into deepest) can be written. */
static c1d_status check_path(const char *dir, char *deepest) {
  char p[PATH_SIZE];
  snprintf(deepest, PATH_SIZE, ".");
  if (dir[0] == '\0') return c1d_fail(C1D_ERR_IO, "empty directory name");
  c1d_status st = c1d_check_path_length(dir);
  if (st != C1D_OK) return st;
  snprintf(p, sizeof p, "%s", dir);
  if (p[0] == '/') snprintf(deepest, PATH_SIZE, "/");
  for (char *s = p + 1;; s++) {
    const int end = *s == '\0';
    if (*s != '/' && !end) continue;
    *s = '\0';
    struct stat sb;
    if (stat(p, &sb) != 0) {
      if (errno != ENOENT) return c1d_fail(C1D_ERR_IO, "%s: %s", p, strerror(errno));
      break; /* this part and those below it would be created */
    }
    if (!S_ISDIR(sb.st_mode)) return c1d_fail(C1D_ERR_IO, "%s exists and is not a directory", p);
    snprintf(deepest, PATH_SIZE, "%s", p);
    if (end) break;
    *s = '/';
  }
  if (access(deepest, W_OK | X_OK) != 0)
    return c1d_fail(C1D_ERR_IO, "cannot write under %s: %s", deepest, strerror(errno));
  return C1D_OK;
}

/* Whether the link at path reads ".K/name", the one convlab makes for name (got: what it reads). */
static int our_link(const paths *p, const char *path, const char *name, char *got) {
  char want[PATH_SIZE];
  const ssize_t n = readlink(path, got, PATH_SIZE - 1);
  got[n > 0 ? n : 0] = '\0';
  link_text(p, name, want);
  return strcmp(got, want) == 0;
}

/* Each name is absent, convlab's link, or a report file of an older version; .K is absent or a link. */
static c1d_status check_entries(const paths *p) {
  const c1d_report_set *set = p->set;
  char path[PATH_SIZE], got[PATH_SIZE];
  struct stat sb;
  if (lstat(p->link, &sb) == 0 && !S_ISLNK(sb.st_mode))
    return c1d_fail(C1D_ERR_IO, "%s is not convlab's link to its reports; remove it or choose another "
                    "--out", p->link);
  for (int i = 0; i < set->n_names; i++) {
    join(path, set->dir, set->names[i]);
    if (lstat(path, &sb) != 0) {
      if (errno == ENOENT) continue;
      return c1d_fail(C1D_ERR_IO, "%s: %s", path, strerror(errno));
    }
    if (S_ISREG(sb.st_mode)) continue;
    if (S_ISLNK(sb.st_mode)) {
      if (our_link(p, path, set->names[i], got)) continue;
      return c1d_fail(C1D_ERR_IO, "%s is a link to %s, not one convlab made; remove it or choose "
                      "another --out", path, got);
    }
    return c1d_fail(C1D_ERR_IO, "%s is %s, not a report file; remove it or choose another --out", path,
                    S_ISDIR(sb.st_mode) ? "a directory" : "not a regular file");
  }
  return C1D_OK;
}

/* A file made and removed again in the deepest existing directory of the path: what permissions and
 * access() cannot tell (a read-only or special file system). No directory is made for it: one made and
 * removed again here could vanish under another run that is making the same path. */
static c1d_status probe_write(const paths *p, const char *deepest) {
  char probe[PATH_SIZE];
  if (snprintf(probe, sizeof probe, "%s/%s.probe.%ld", deepest, p->tmp_prefix, (long)getpid()) >= (int)sizeof probe)
    return c1d_fail(C1D_ERR_IO, "%s: the path is too long", deepest);
  /* Held: a signal between the open and the unlink would leave the probe behind (seen in CI). */
  struct sigaction old[N_HELD];
  hold_signals(old);
  int fd = open(probe, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  const int err = errno;
  if (fd >= 0) {
    close(fd);
    unlink(probe);
  }
  release_signals(old);
  if (fd < 0) return c1d_fail(C1D_ERR_IO, "cannot write under %s: %s", deepest, strerror(err));
  return C1D_OK;
}

c1d_status c1d_report_set_check(const c1d_report_set *set) {
  paths p;
  char deepest[PATH_SIZE];
  c1d_status st = make_paths(set, &p);
  if (st == C1D_OK) st = check_path(set->dir, deepest);
  if (st == C1D_OK) st = check_entries(&p);
  if (st == C1D_OK) st = probe_write(&p, deepest);
  return st;
}

// --- the lock ---------------------------------------------------------------------------------

/* The lock is the file's, so a holder checks that the name still leads to the file it locked (a
 * writer that made the directory for nothing removes the file again). */
static int holds_the_file(int fd, const char *path) {
  struct stat a, b;
  return fstat(fd, &a) == 0 && stat(path, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

static c1d_status take_lock(const paths *p, int *fd_out) {
  const struct timespec pause = {0, 50 * 1000 * 1000};
  const int wait_s = p->set->wait_s > 0 ? p->set->wait_s : C1D_REPORT_SET_WAIT_S;
  int fd = -1;
  for (int waited = 0;; waited++) {
    if (fd < 0 && (fd = open(p->lock, O_RDWR | O_CREAT | O_CLOEXEC, 0666)) < 0)
      return c1d_fail(C1D_ERR_IO, "%s: cannot open: %s", p->lock, strerror(errno));
    if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
      if (holds_the_file(fd, p->lock)) break;
      close(fd);
      fd = -1;
      continue;
    }
    const int err = errno;
    if ((err != EWOULDBLOCK && err != EINTR) || held_signal || waited >= wait_s * 20) {
      close(fd);
      if (held_signal) return c1d_fail(C1D_ERR_IO, "%s: interrupted while waiting for the lock", p->lock);
      if (err != EWOULDBLOCK && err != EINTR)
        return c1d_fail(C1D_ERR_IO, "%s: cannot lock: %s", p->lock, strerror(err));
      return c1d_fail(C1D_ERR_IO, "%s: another convlab has been writing its reports there for %d s; "
                      "try again later", p->set->dir, wait_s);
    }
    nanosleep(&pause, NULL);
  }
  *fd_out = fd;
  return C1D_OK;
}

// --- sets on disk ---------------------------------------------------------------------------------

static int ends_with(const char *s, const char *suffix) {
  const size_t a = strlen(s), b = strlen(suffix);
  return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* Whether a set directory of this kind can hold a file of this name: the mark, one of the names (a
 * staged set: *suffix, the temporaries of their atomic writes, the manifest). */
static int set_may_hold(const paths *p, const char *name) {
  char manifest[80], tmp[PATH_SIZE];
  if (!strcmp(name, MARK)) return 1;
  if (p->suffix) {
    snprintf(manifest, sizeof manifest, "%s.json", p->set->kind);
    snprintf(tmp, sizeof tmp, "%s.tmp.", p->suffix);
    return !strcmp(name, manifest) || ends_with(name, p->suffix) || strstr(name, tmp) != NULL;
  }
  for (int i = 0; i < p->set->n_names; i++)
    if (!strcmp(name, p->set->names[i])) return 1;
  return 0;
}

/* One line on stderr for each thing in DIR that a clean-up did not remove, and why. */
static void say_left_alone(const paths *p, const char *name, const char *why) {
  char a[600], b[300];
  fprintf(stderr, "convlab: left %s/%s alone: %s\n", c1d_escape(p->set->dir, strlen(p->set->dir), a, sizeof a),
          c1d_escape(name, strlen(name), b, sizeof b), why);
}

enum { SET_REMOVED, SET_LEFT_ALONE, SET_IN_USE };

/* Removes the set directory `name` in DIR (open as pdir) when convlab wrote it: a real directory, never
 * reached through a link, that holds convlab's mark (or that .K named: older versions wrote no mark);
 * only regular files a set can hold are unlinked in it. A set held by flock (a staged set still being
 * filled) is in use and stays. */
static int remove_set_at(const paths *p, int pdir, const char *name, int named_by_link, const char **why) {
  const int fd = openat(pdir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    *why = errno == ELOOP || errno == ENOTDIR ? "a link or a file, not a set convlab wrote" : strerror(errno);
    return SET_LEFT_ALONE;
  }
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    close(fd);
    return SET_IN_USE;
  }
  struct stat sb;
  if (!named_by_link && !(fstatat(fd, MARK, &sb, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(sb.st_mode))) {
    close(fd);
    *why = "a directory without convlab's mark (" MARK ")";
    return SET_LEFT_ALONE;
  }
  const int list_fd = dup(fd);
  DIR *d = list_fd >= 0 ? fdopendir(list_fd) : NULL;
  if (d) {
    for (struct dirent *e; (e = readdir(d));)
      if (strcmp(e->d_name, MARK) && set_may_hold(p, e->d_name) &&
          fstatat(fd, e->d_name, &sb, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(sb.st_mode))
        unlinkat(fd, e->d_name, 0);
    closedir(d);
  } else if (list_fd >= 0) {
    close(list_fd);
  }
  unlinkat(fd, MARK, 0); /* last: a set interrupted here is still marked as convlab's */
  const int removed = unlinkat(pdir, name, AT_REMOVEDIR) == 0;
  close(fd);
  *why = "it holds files convlab did not write";
  return removed ? SET_REMOVED : SET_LEFT_ALONE;
}

/* remove_set_at for DIR/name, saying what it left alone. */
static void remove_set_named(const paths *p, const char *name, int named_by_link) {
  const char *why = "";
  const int pdir = open(p->set->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (pdir < 0) return;
  if (remove_set_at(p, pdir, name, named_by_link, &why) == SET_LEFT_ALONE) say_left_alone(p, name, why);
  close(pdir);
}

/* The set .K names now ("" when none). */
static void current_set(const paths *p, char *out) {
  ssize_t n = readlink(p->link, out, PATH_SIZE - 1);
  out[n > 0 ? n : 0] = '\0';
}

/* Under the lock, nobody else is committing: whatever an interrupted writer left can go, as long as
 * convlab wrote it (remove_set_at) and no run is still filling it. unlinkat never follows a link. */
static void remove_leftovers(const paths *p) {
  char current[PATH_SIZE], old_tmp[PATH_SIZE];
  current_set(p, current);
  const int pdir = open(p->set->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  const int list_fd = pdir >= 0 ? dup(pdir) : -1;
  DIR *d = list_fd >= 0 ? fdopendir(list_fd) : NULL;
  if (!d) {
    if (list_fd >= 0) close(list_fd);
    if (pdir >= 0) close(pdir);
    return;
  }
  struct stat sb;
  for (struct dirent *e; (e = readdir(d));) {
    const char *why = "";
    if (starts_with(e->d_name, p->prefix) && strcmp(e->d_name, current) != 0) {
      if (remove_set_at(p, pdir, e->d_name, 0, &why) == SET_LEFT_ALONE) say_left_alone(p, e->d_name, why);
      continue;
    }
    if (fstatat(pdir, e->d_name, &sb, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (starts_with(e->d_name, p->tmp_prefix)) { /* a link not yet renamed, or a write probe */
      if (S_ISLNK(sb.st_mode) || S_ISREG(sb.st_mode)) unlinkat(pdir, e->d_name, 0);
      continue;
    }
    for (int i = 0; i < p->set->n_names; i++) { /* older versions' temporary files */
      snprintf(old_tmp, sizeof old_tmp, "%s.tmp.", p->set->names[i]);
      if (starts_with(e->d_name, old_tmp) && S_ISREG(sb.st_mode)) unlinkat(pdir, e->d_name, 0);
    }
  }
  closedir(d);
  close(pdir);
}

/* A fresh set directory DIR/.K-XXXXXX with the usual mode and convlab's mark in it: its base name in
 * out (a path), or C1D_ERR_IO. */
static c1d_status make_set_dir(const paths *p, char *out) {
  snprintf(out, PATH_SIZE, "%s/%sXXXXXX", p->set->dir, p->prefix);
  if (!mkdtemp(out)) {
    const int err = errno;
    out[0] = '\0';
    return c1d_fail(C1D_ERR_IO, "%s: cannot create a directory: %s", p->set->dir, strerror(err));
  }
  const mode_t mask = umask(0);
  umask(mask);
  chmod(out, 0777 & ~mask); /* mkdtemp makes 0700; reports are ordinary files */
  char mark[PATH_SIZE];
  join(mark, out, MARK);
  FILE *f = fopen(mark, "wx");
  const int ok = f && fprintf(f, "convlab %s set, run %s\n", p->set->kind, p->set->run_id ? p->set->run_id : "-") > 0;
  if ((f && fclose(f) != 0) || !ok) {
    const int err = errno;
    unlink(mark);
    rmdir(out);
    out[0] = '\0';
    return c1d_fail(C1D_ERR_IO, "%s: cannot write: %s", mark, strerror(err));
  }
  return C1D_OK;
}

/* Points `at` (a path) to `target` through a new link renamed over it: atomic for readers. */
static c1d_status replace_link(const paths *p, const char *target, const char *at) {
  char tmp[PATH_SIZE];
  snprintf(tmp, sizeof tmp, "%s/%s.%ld", p->set->dir, p->tmp_prefix, (long)getpid());
  unlink(tmp);
  if (symlink(target, tmp) != 0)
    return c1d_fail(C1D_ERR_IO, "%s: cannot create a link: %s", tmp, strerror(errno));
  if (rename(tmp, at) != 0) {
    const int err = errno;
    unlink(tmp);
    return c1d_fail(C1D_ERR_IO, "%s: cannot replace: %s", at, strerror(err));
  }
  return C1D_OK;
}

static void sync_dir(const char *dir) {
  int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    fsync(fd);
    close(fd);
  }
}

/* Report files of an older convlab (regular files under the set's names, and no .K): hard-linked into
 * a set that .K then names, and each replaced by its link, so that readers see the same files
 * throughout. */
static c1d_status adopt_old_reports(const paths *p) {
  const c1d_report_set *set = p->set;
  char path[PATH_SIZE], dst[PATH_SIZE], text[PATH_SIZE], set_dir[PATH_SIZE];
  struct stat sb;
  int any = 0;
  for (int i = 0; i < set->n_names; i++) {
    join(path, set->dir, set->names[i]);
    any |= lstat(path, &sb) == 0 && S_ISREG(sb.st_mode);
  }
  if (!any) return C1D_OK;
  c1d_status st = make_set_dir(p, set_dir);
  if (st != C1D_OK) return st;
  for (int i = 0; i < set->n_names && st == C1D_OK; i++) {
    join(path, set->dir, set->names[i]);
    join(dst, set_dir, set->names[i]);
    if (lstat(path, &sb) != 0 || !S_ISREG(sb.st_mode)) continue;
    if (link(path, dst) != 0) st = c1d_fail(C1D_ERR_IO, "%s: cannot link: %s", path, strerror(errno));
  }
  char current[PATH_SIZE];
  current_set(p, current);
  if (st == C1D_OK && !current[0]) st = replace_link(p, base_name(set_dir), p->link);
  if (st != C1D_OK) {
    remove_set_named(p, base_name(set_dir), 1);
    return st;
  }
  for (int i = 0; i < set->n_names && st == C1D_OK; i++) {
    join(path, set->dir, set->names[i]);
    if (lstat(path, &sb) != 0 || !S_ISREG(sb.st_mode)) continue;
    link_text(p, set->names[i], text);
    st = replace_link(p, text, path);
  }
  return st;
}

/* Writes names[i] into set_dir through the writer; the detail names DIR/name, where readers see it. */
static c1d_status write_file(const paths *p, const char *set_dir, int i, c1d_report_writer write,
                             void *ctx) {
  char path[PATH_SIZE], shown[PATH_SIZE];
  join(path, set_dir, p->set->names[i]);
  join(shown, p->set->dir, p->set->names[i]);
  int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) return c1d_fail(C1D_ERR_IO, "%s: cannot create: %s", shown, strerror(errno));
  int err = 0;
  FILE *f = c1d_checked_stream(fd, &err);
  if (!f) {
    close(fd);
    return c1d_fail(C1D_ERR_NO_MEMORY, "%s: out of memory", shown);
  }
  c1d_status st = write(f, i, ctx);
  if (fflush(f) != 0 && !err) err = errno ? errno : EIO;
  fclose(f);
  if (st == C1D_OK && !err && fsync(fd) != 0 && errno != EINVAL) err = errno;
  if (close(fd) != 0 && !err) err = errno;
  if (st == C1D_OK && err) st = c1d_fail(C1D_ERR_IO, "%s: cannot write: %s", shown, strerror(err));
  return st;
}

/* DIR/name -> .K/name for each name the new set holds (a link whose target does not exist yet reads
 * as a missing file, which is what the previous set had). */
static c1d_status make_links(const paths *p) {
  char path[PATH_SIZE], text[PATH_SIZE];
  struct stat sb;
  for (int i = 0; i < p->set->n_present; i++) {
    join(path, p->set->dir, p->set->names[i]);
    if (lstat(path, &sb) == 0) {
      if (S_ISLNK(sb.st_mode)) continue; /* check_entries found it to be ours */
      return c1d_fail(C1D_ERR_IO, "%s changed while the reports were written; not replaced", path);
    }
    link_text(p, p->set->names[i], text);
    if (symlink(text, path) != 0 && errno != EEXIST)
      return c1d_fail(C1D_ERR_IO, "%s: cannot create a link: %s", path, strerror(errno));
  }
  return C1D_OK;
}

/* After the commit: the links of names this set does not hold would dangle. */
static void remove_absent_links(const paths *p) {
  char path[PATH_SIZE];
  struct stat sb;
  for (int i = p->set->n_present; i < p->set->n_names; i++) {
    join(path, p->set->dir, p->set->names[i]);
    if (lstat(path, &sb) == 0 && S_ISLNK(sb.st_mode)) unlink(path);
  }
}

// --- staged sets -----------------------------------------------------------------------------

struct c1d_staged_set {
  c1d_report_set set;     /* dir and kind; no fixed names */
  paths p;
  char *dir, *kind, *suffix;
  char run_id[64];
  char path[PATH_SIZE];   /* DIR/.K-XXXXXX */
  int fd;                 /* that directory, flock'd while the set lives: no clean-up takes it */
  int lock;               /* DIR/.K.lock while committing */
  char *made;             /* directories made for the set (c1d_make_dirs_tracked) */
  char **names;           /* the files written, then the manifest */
  int n, cap;
  char **linked;          /* links DIR/name this commit made, undone on a rollback */
  int n_linked, cap_linked;
  char previous[PATH_SIZE]; /* what .K named before the switch */
  int switched, committed;
};

c1d_status c1d_staged_set_check(const char *dir, const char *kind) {
  c1d_report_set set = {dir, kind, NULL, 0, 0, 0, NULL, NULL};
  return c1d_report_set_check(&set);
}

const char *c1d_staged_set_dir(const c1d_staged_set *s) { return s->path; }

const char *c1d_staged_set_dest(const c1d_staged_set *s) { return s->dir; }

int c1d_staged_set_committed(const c1d_staged_set *s) { return s && s->committed; }

static int has_name(char *const *names, int n, const char *name) {
  for (int i = 0; i < n; i++)
    if (!strcmp(names[i], name)) return 1;
  return 0;
}

static c1d_status push_name(char ***names, int *n, int *cap, const char *name) {
  if (has_name(*names, *n, name)) return C1D_OK;
  if (*n == *cap) {
    const int grown = *cap ? 2 * *cap : 16;
    char **more = realloc(*names, (size_t)grown * sizeof *more);
    if (!more) return c1d_fail(C1D_ERR_NO_MEMORY, "out of memory");
    *names = more;
    *cap = grown;
  }
  if (!((*names)[*n] = strdup(name))) return c1d_fail(C1D_ERR_NO_MEMORY, "out of memory");
  (*n)++;
  return C1D_OK;
}

c1d_status c1d_staged_set_add(c1d_staged_set *s, const char *name) {
  if (strchr(name, '/') || !ends_with(name, s->suffix))
    return c1d_fail(C1D_ERR_INTERNAL, "%s: not a file name ending in %s", name, s->suffix);
  return push_name(&s->names, &s->n, &s->cap, name);
}

static void staged_free(c1d_staged_set *s) {
  for (int i = 0; i < s->n; i++) free(s->names[i]);
  for (int i = 0; i < s->n_linked; i++) free(s->linked[i]);
  free(s->names);
  free(s->linked);
  free(s->made);
  free(s->dir);
  free(s->kind);
  free(s->suffix);
  free(s);
}

c1d_status c1d_staged_set_open(const char *dir, const char *kind, const char *suffix, const char *run_id,
                               c1d_staged_set **out) {
  *out = NULL;
  c1d_staged_set *s = calloc(1, sizeof *s);
  if (!s) return c1d_fail(C1D_ERR_NO_MEMORY, "out of memory");
  s->fd = s->lock = -1;
  s->dir = strdup(dir);
  s->kind = strdup(kind);
  s->suffix = strdup(suffix);
  snprintf(s->run_id, sizeof s->run_id, "%s", run_id ? run_id : "-");
  c1d_status st = C1D_OK;
  if (!s->dir || !s->kind || !s->suffix) {
    st = c1d_fail(C1D_ERR_NO_MEMORY, "out of memory");
    goto fail;
  }
  s->set = (c1d_report_set){s->dir, s->kind, NULL, 0, 0, 0, s->run_id, NULL};
  if ((st = make_paths(&s->set, &s->p)) != C1D_OK) goto fail;
  s->p.suffix = s->suffix;
  if ((st = c1d_make_dirs_tracked(dir, &s->made)) != C1D_OK) goto fail;
  if ((st = make_set_dir(&s->p, s->path)) != C1D_OK) goto fail;
  s->fd = open(s->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (s->fd < 0 || flock(s->fd, LOCK_EX | LOCK_NB) != 0) {
    st = c1d_fail(C1D_ERR_IO, "%s: cannot lock: %s", s->path, strerror(errno));
    goto fail;
  }
  *out = s;
  return C1D_OK;
fail:
  c1d_staged_set_discard(s);
  return st;
}

void c1d_staged_set_discard(c1d_staged_set *s) {
  if (!s) return;
  if (!s->committed && s->path[0]) {
    if (s->fd >= 0) close(s->fd); /* our own flock would keep remove_set_at out */
    s->fd = -1;
    remove_set_named(&s->p, base_name(s->path), 1);
    c1d_remove_made_dirs(s->dir, s->made);
  } else if (!s->committed) {
    c1d_remove_made_dirs(s->dir, s->made);
  }
  if (s->fd >= 0) close(s->fd);
  if (s->lock >= 0) close(s->lock);
  staged_free(s);
}

/* The manifest, DIR/.K-XXXXXX/<kind>.json: the run id and the files, for readers to check against the
 * report of the same run. */
static c1d_status write_manifest(c1d_staged_set *s) {
  char name[80], path[PATH_SIZE];
  snprintf(name, sizeof name, "%s.json", s->kind);
  join(path, s->path, name);
  cJSON *root = cJSON_CreateObject(), *files = cJSON_CreateArray();
  cJSON_AddItemToObject(root, "files", files);
  cJSON_AddStringToObject(root, "run_id", s->run_id);
  for (int i = 0; i < s->n; i++) cJSON_AddItemToArray(files, cJSON_CreateString(s->names[i]));
  char *text = cJSON_Print(root);
  cJSON_Delete(root);
  if (!text) return c1d_fail(C1D_ERR_NO_MEMORY, "out of memory");
  c1d_status st = C1D_OK;
  const int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  int err = fd < 0 ? errno : 0;
  if (fd >= 0) {
    const size_t len = strlen(text);
    size_t done = 0;
    while (!err && done < len) {
      const ssize_t k = write(fd, text + done, len - done);
      if (k < 0 && errno == EINTR) continue;
      if (k <= 0) err = k < 0 ? errno : EIO;
      else done += (size_t)k;
    }
    if (!err && fsync(fd) != 0 && errno != EINVAL) err = errno;
    if (close(fd) != 0 && !err) err = errno;
  }
  free(text);
  if (err) st = c1d_fail(C1D_ERR_IO, "%s/%s: cannot write: %s", s->dir, name, strerror(err));
  else st = push_name(&s->names, &s->n, &s->cap, name);
  return st;
}

/* Each name is absent, convlab's link, or (ending in the suffix) an older version's file; .K is absent
 * or a link. */
static c1d_status check_staged_entries(c1d_staged_set *s) {
  char path[PATH_SIZE], got[PATH_SIZE];
  struct stat sb;
  c1d_status st = check_entries(&s->p);
  for (int i = 0; i < s->n && st == C1D_OK; i++) {
    join(path, s->dir, s->names[i]);
    if (lstat(path, &sb) != 0) {
      if (errno != ENOENT) st = c1d_fail(C1D_ERR_IO, "%s: %s", path, strerror(errno));
      continue;
    }
    if (S_ISREG(sb.st_mode) && ends_with(s->names[i], s->suffix)) continue;
    if (S_ISLNK(sb.st_mode) && our_link(&s->p, path, s->names[i], got)) continue;
    st = c1d_fail(C1D_ERR_IO, "%s is %s, not a file convlab wrote; remove it or choose another directory", path,
                  S_ISDIR(sb.st_mode) ? "a directory" : S_ISLNK(sb.st_mode) ? "a link" : "a file");
  }
  return st;
}

/* Up to the commit point: lock, checks, clean-up, manifest, links, then .K renamed to the set. On an
 * error nothing a reader sees has changed (the set stays staged). */
static c1d_status staged_switch(c1d_staged_set *s) {
  char path[PATH_SIZE], text[PATH_SIZE];
  struct stat sb;
  c1d_status st;
  if ((st = take_lock(&s->p, &s->lock)) != C1D_OK) return st;
  if ((st = check_staged_entries(s)) != C1D_OK) goto fail;
  remove_leftovers(&s->p);
  if ((st = write_manifest(s)) != C1D_OK) goto fail;
  sync_dir(s->path);
  for (int i = 0; i < s->n; i++) {
    join(path, s->dir, s->names[i]);
    if (lstat(path, &sb) == 0) continue; /* ours, or an older file replaced after the commit */
    link_text(&s->p, s->names[i], text);
    if (symlink(text, path) != 0) {
      st = c1d_fail(C1D_ERR_IO, "%s: cannot create a link: %s", path, strerror(errno));
      goto fail;
    }
    if ((st = push_name(&s->linked, &s->n_linked, &s->cap_linked, s->names[i])) != C1D_OK) goto fail;
  }
  current_set(&s->p, s->previous);
  if ((st = replace_link(&s->p, base_name(s->path), s->p.link)) != C1D_OK) goto fail;
  s->switched = 1;
  return C1D_OK;
fail:
  for (int i = 0; i < s->n_linked; i++) {
    join(path, s->dir, s->linked[i]);
    unlink(path);
  }
  close(s->lock);
  s->lock = -1;
  return st;
}

/* Back to what .K named before the switch (the report set that was to follow could not commit). */
static void staged_roll_back(c1d_staged_set *s) {
  char path[PATH_SIZE];
  if (!s->switched) return;
  if (s->previous[0])
    replace_link(&s->p, s->previous, s->p.link);
  else
    unlink(s->p.link);
  for (int i = 0; i < s->n_linked; i++) {
    join(path, s->dir, s->linked[i]);
    unlink(path);
  }
  s->switched = 0;
  close(s->lock);
  s->lock = -1;
}

/* After the commit: the previous set goes, older versions' files of the same names become links, links
 * to names this set does not hold go. */
static void staged_finish(c1d_staged_set *s) {
  char path[PATH_SIZE], text[PATH_SIZE], got[PATH_SIZE];
  struct stat sb;
  s->committed = 1;
  sync_dir(s->dir);
  if (s->previous[0] && !strchr(s->previous, '/') && starts_with(s->previous, s->p.prefix))
    remove_set_named(&s->p, s->previous, 1);
  for (int i = 0; i < s->n; i++) {
    join(path, s->dir, s->names[i]);
    link_text(&s->p, s->names[i], text);
    if (lstat(path, &sb) == 0 && S_ISREG(sb.st_mode)) replace_link(&s->p, text, path);
  }
  DIR *d = opendir(s->dir);
  char ours[80];
  snprintf(ours, sizeof ours, ".%s/", s->kind);
  for (struct dirent *e; d && (e = readdir(d));) {
    join(path, s->dir, e->d_name);
    if (has_name(s->names, s->n, e->d_name) || lstat(path, &sb) != 0 || !S_ISLNK(sb.st_mode)) continue;
    ssize_t k = readlink(path, got, sizeof got - 1);
    got[k > 0 ? k : 0] = '\0';
    if (starts_with(got, ours) && !strchr(got + strlen(ours), '/')) unlink(path);
  }
  if (d) closedir(d);
  close(s->lock);
  s->lock = -1;
  close(s->fd);
  s->fd = -1;
}

c1d_status c1d_staged_set_commit(c1d_staged_set *s) {
  struct sigaction old[N_HELD];
  hold_signals(old);
  const c1d_status st = staged_switch(s);
  if (st == C1D_OK) staged_finish(s);
  release_signals(old);
  return st;
}

c1d_status c1d_report_set_write(const c1d_report_set *set, c1d_report_writer write, void *ctx) {
  struct sigaction old[N_HELD];
  char *made = NULL, set_dir[PATH_SIZE] = "", previous[PATH_SIZE];
  int lock = -1, committed = 0;
  paths p;
  c1d_status st = make_paths(set, &p);
  if (st != C1D_OK) return st;
  hold_signals(old);
  if ((st = c1d_make_dirs_tracked(set->dir, &made)) != C1D_OK) goto done;
  if ((st = take_lock(&p, &lock)) != C1D_OK) goto done;
  if ((st = check_entries(&p)) != C1D_OK) goto done;
  remove_leftovers(&p);
  if ((st = adopt_old_reports(&p)) != C1D_OK) goto done;
  if ((st = make_set_dir(&p, set_dir)) != C1D_OK) goto done;
  for (int i = 0; i < set->n_present && st == C1D_OK; i++) st = write_file(&p, set_dir, i, write, ctx);
  if (st != C1D_OK) goto done;
  sync_dir(set_dir);
  if ((st = make_links(&p)) != C1D_OK) goto done;
  current_set(&p, previous);
  /* The staged set switches first and is switched back if this one cannot: both or neither. */
  if (set->with && (st = staged_switch(set->with)) != C1D_OK) goto done;
  if ((st = replace_link(&p, base_name(set_dir), p.link)) != C1D_OK) {
    if (set->with) staged_roll_back(set->with);
    goto done;
  }
  committed = 1; /* from here on readers see the new set; what follows only tidies up */
  sync_dir(set->dir);
  if (set->with) staged_finish(set->with);
  if (previous[0] && strchr(previous, '/') == NULL && starts_with(previous, p.prefix))
    remove_set_named(&p, previous, 1);
  remove_absent_links(&p);
done:
  if (!committed && set_dir[0]) remove_set_named(&p, base_name(set_dir), 1);
  if (lock >= 0) {
    if (!committed && made) unlink(p.lock); /* a directory made for nothing goes again */
    close(lock);
  }
  if (!committed) c1d_remove_made_dirs(set->dir, made);
  free(made);
  release_signals(old);
  return st;
}
