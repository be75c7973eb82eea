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

#include "harness/atomic_file.h"

#define PATH_SIZE 4096

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
  char link[PATH_SIZE];   /* DIR/.K */
  char lock[PATH_SIZE];   /* DIR/.K.lock */
  char prefix[64];        /* ".K-": the sets */
  char tmp_prefix[64];    /* ".K.tmp": links not yet renamed */
} paths;

static c1d_status make_paths(const c1d_report_set *set, paths *p) {
  p->set = set;
  if (strlen(set->dir) > PATH_SIZE - 512 ||
      snprintf(p->link, sizeof p->link, "%s/.%s", set->dir, set->kind) >= (int)sizeof p->link ||
      snprintf(p->lock, sizeof p->lock, "%s/.%s.lock", set->dir, set->kind) >= (int)sizeof p->lock)
    return c1d_fail(C1D_ERR_IO, "%s: path too long", set->dir);
  snprintf(p->prefix, sizeof p->prefix, ".%s-", set->kind);
  snprintf(p->tmp_prefix, sizeof p->tmp_prefix, ".%s.tmp", set->kind);
  return C1D_OK;
}

/* make_paths keeps dir short enough that no name (at most 255 bytes) is cut off here. */
static void join(char *out, const char *dir, const char *name) {
  if (snprintf(out, PATH_SIZE, "%s/%s", dir, name) >= PATH_SIZE) out[0] = '\0';
}

/* What DIR/name's link says when convlab made it: ".K/name". */
static void link_text(const paths *p, const char *name, char *out) {
  if (snprintf(out, PATH_SIZE, ".%s/%s", p->set->kind, name) >= PATH_SIZE) out[0] = '\0';
}

static int starts_with(const char *s, const char *prefix) { return strncmp(s, prefix, strlen(prefix)) == 0; }

// --- the checks -------------------------------------------------------------------------------

/* Every existing part of dir is a directory; the deepest existing one can be written. */
static c1d_status check_path(const char *dir) {
  char p[PATH_SIZE], deepest[PATH_SIZE] = ".";
  if (dir[0] == '\0') return c1d_fail(C1D_ERR_IO, "empty directory name");
  if (snprintf(p, sizeof p, "%s", dir) >= (int)sizeof p) return c1d_fail(C1D_ERR_IO, "%s: path too long", dir);
  if (p[0] == '/') snprintf(deepest, sizeof deepest, "/");
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
    snprintf(deepest, sizeof deepest, "%s", p);
    if (end) break;
    *s = '/';
  }
  if (access(deepest, W_OK | X_OK) != 0)
    return c1d_fail(C1D_ERR_IO, "cannot write under %s: %s", deepest, strerror(errno));
  return C1D_OK;
}

/* Each name is absent, convlab's link, or a report file of an older version; .K is absent or a link. */
static c1d_status check_entries(const paths *p) {
  const c1d_report_set *set = p->set;
  char path[PATH_SIZE], want[PATH_SIZE], got[PATH_SIZE];
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
      ssize_t n = readlink(path, got, sizeof got - 1);
      got[n > 0 ? n : 0] = '\0';
      link_text(p, set->names[i], want);
      if (strcmp(got, want) == 0) continue;
      return c1d_fail(C1D_ERR_IO, "%s is a link to %s, not one convlab made; remove it or choose "
                      "another --out", path, got);
    }
    return c1d_fail(C1D_ERR_IO, "%s is %s, not a report file; remove it or choose another --out", path,
                    S_ISDIR(sb.st_mode) ? "a directory" : "not a regular file");
  }
  return C1D_OK;
}

/* A file made and removed again in dir: what permissions and access() cannot tell (a read-only or
 * special file system). Directories made for it are removed again. */
static c1d_status probe_write(const paths *p) {
  char *made = NULL, probe[PATH_SIZE];
  c1d_status st = c1d_make_dirs_tracked(p->set->dir, &made);
  if (st != C1D_OK) return st;
  snprintf(probe, sizeof probe, "%s/%s.probe.%ld", p->set->dir, p->tmp_prefix, (long)getpid());
  int fd = open(probe, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0)
    st = c1d_fail(C1D_ERR_IO, "cannot write under %s: %s", p->set->dir, strerror(errno));
  else {
    close(fd);
    unlink(probe);
  }
  c1d_remove_made_dirs(p->set->dir, made);
  free(made);
  return st;
}

c1d_status c1d_report_set_check(const c1d_report_set *set) {
  paths p;
  c1d_status st = make_paths(set, &p);
  if (st == C1D_OK) st = check_path(set->dir);
  if (st == C1D_OK) st = check_entries(&p);
  if (st == C1D_OK) st = probe_write(&p);
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

/* Removes a set directory (it holds plain files only). */
static void remove_set(const char *path) {
  DIR *d = opendir(path);
  if (d) {
    for (struct dirent *e; (e = readdir(d));)
      if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) unlinkat(dirfd(d), e->d_name, 0);
    closedir(d);
  }
  rmdir(path);
}

/* The set .K names now ("" when none). */
static void current_set(const paths *p, char *out) {
  ssize_t n = readlink(p->link, out, PATH_SIZE - 1);
  out[n > 0 ? n : 0] = '\0';
}

/* Under the lock, nobody else is writing: whatever an interrupted writer left can go. */
static void remove_leftovers(const paths *p) {
  char current[PATH_SIZE], path[PATH_SIZE], old_tmp[PATH_SIZE];
  current_set(p, current);
  DIR *d = opendir(p->set->dir);
  if (!d) return;
  for (struct dirent *e; (e = readdir(d));) {
    join(path, p->set->dir, e->d_name);
    if (starts_with(e->d_name, p->prefix) && strcmp(e->d_name, current) != 0) {
      remove_set(path);
      continue;
    }
    if (starts_with(e->d_name, p->tmp_prefix)) {
      unlink(path);
      continue;
    }
    for (int i = 0; i < p->set->n_names; i++) { /* older versions' temporary files */
      snprintf(old_tmp, sizeof old_tmp, "%s.tmp.", p->set->names[i]);
      if (starts_with(e->d_name, old_tmp)) unlink(path);
    }
  }
  closedir(d);
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
  snprintf(set_dir, sizeof set_dir, "%s/%sXXXXXX", set->dir, p->prefix);
  if (!mkdtemp(set_dir)) return c1d_fail(C1D_ERR_IO, "%s: cannot create a directory: %s", set->dir, strerror(errno));
  const char *base = strrchr(set_dir, '/') + 1;
  c1d_status st = C1D_OK;
  for (int i = 0; i < set->n_names && st == C1D_OK; i++) {
    join(path, set->dir, set->names[i]);
    join(dst, set_dir, set->names[i]);
    if (lstat(path, &sb) != 0 || !S_ISREG(sb.st_mode)) continue;
    if (link(path, dst) != 0) st = c1d_fail(C1D_ERR_IO, "%s: cannot link: %s", path, strerror(errno));
  }
  char current[PATH_SIZE];
  current_set(p, current);
  if (st == C1D_OK && !current[0]) st = replace_link(p, base, p->link);
  if (st != C1D_OK) {
    remove_set(set_dir);
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

c1d_status c1d_report_set_write(const c1d_report_set *set, c1d_report_writer write, void *ctx) {
  struct sigaction old[N_HELD];
  char *made = NULL, set_dir[PATH_SIZE] = "", previous[PATH_SIZE], path[PATH_SIZE];
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
  snprintf(set_dir, sizeof set_dir, "%s/%sXXXXXX", set->dir, p.prefix);
  if (!mkdtemp(set_dir)) {
    st = c1d_fail(C1D_ERR_IO, "%s: cannot create a directory: %s", set->dir, strerror(errno));
    set_dir[0] = '\0';
    goto done;
  }
  const mode_t mask = umask(0);
  umask(mask);
  chmod(set_dir, 0777 & ~mask); /* mkdtemp makes 0700; reports are ordinary files */
  for (int i = 0; i < set->n_present && st == C1D_OK; i++) st = write_file(&p, set_dir, i, write, ctx);
  if (st != C1D_OK) goto done;
  sync_dir(set_dir);
  if ((st = make_links(&p)) != C1D_OK) goto done;
  current_set(&p, previous);
  if ((st = replace_link(&p, strrchr(set_dir, '/') + 1, p.link)) != C1D_OK) goto done;
  committed = 1; /* from here on readers see the new set; what follows only tidies up */
  sync_dir(set->dir);
  if (previous[0] && strchr(previous, '/') == NULL && starts_with(previous, p.prefix)) {
    join(path, set->dir, previous);
    remove_set(path);
  }
  remove_absent_links(&p);
done:
  if (!committed && set_dir[0]) remove_set(set_dir);
  if (lock >= 0) {
    if (!committed && made) unlink(p.lock); /* a directory made for nothing goes again */
    close(lock);
  }
  if (!committed) c1d_remove_made_dirs(set->dir, made);
  free(made);
  release_signals(old);
  return st;
}
