/* Atomic file writing (temporary file + fsync + rename) and directory creation. */
#include "harness/atomic_file.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

char *c1d_path_join(const char *dir, const char *name) {
  size_t a = strlen(dir), b = strlen(name);
  char *p = malloc(a + b + 2);
  if (!p) return NULL;
  memcpy(p, dir, a);
  size_t at = a;
  if (a > 0 && dir[a - 1] != '/') p[at++] = '/';
  memcpy(p + at, name, b + 1);
  return p;
}

static void release(c1d_atomic_file *af) {
  free(af->tmp);
  free(af->path);
  af->f = NULL;
  af->tmp = af->path = NULL;
}

c1d_status c1d_atomic_open(c1d_atomic_file *af, const char *path) {
  c1d_status st = C1D_OK;
  int fd = -1;
  memset(af, 0, sizeof *af);
  size_t n = strlen(path);
  af->path = malloc(n + 1);
  af->tmp = malloc(n + sizeof ".tmp.XXXXXX");
  if (!af->path || !af->tmp) {
    st = c1d_fail(C1D_ERR_NO_MEMORY, "%s: out of memory", path);
    goto done;
  }
  memcpy(af->path, path, n + 1);
  memcpy(af->tmp, path, n);
  memcpy(af->tmp + n, ".tmp.XXXXXX", sizeof ".tmp.XXXXXX");
  fd = mkstemp(af->tmp);
  if (fd < 0) {
    st = c1d_fail(C1D_ERR_IO, "%s: cannot create a temporary file: %s", path, strerror(errno));
    goto done;
  }
  /* mkstemp makes 0600; reports are ordinary files, so give them the usual mode before umask. */
  mode_t mask = umask(0);
  umask(mask);
  fchmod(fd, 0666 & ~mask);
  af->f = fdopen(fd, "wb");
  if (!af->f) {
    st = c1d_fail(C1D_ERR_IO, "%s: cannot open a temporary file: %s", path, strerror(errno));
    close(fd);
    unlink(af->tmp);
    goto done;
  }
done:
  if (st != C1D_OK) release(af);
  return st;
}

c1d_status c1d_atomic_commit(c1d_atomic_file *af) {
  c1d_status st = C1D_OK;
  int err = 0;
  if (ferror(af->f)) err = EIO; /* an earlier fwrite/fprintf failed */
  if (!err && fflush(af->f) != 0) err = errno;
  /* fsync so that a crash after rename cannot expose an empty file; EINVAL: not syncable (a pipe). */
  if (!err && fsync(fileno(af->f)) != 0 && errno != EINVAL) err = errno;
  if (fclose(af->f) != 0 && !err) err = errno;
  af->f = NULL;
  if (!err && rename(af->tmp, af->path) != 0) err = errno;
  if (err) {
    st = c1d_fail(C1D_ERR_IO, "%s: write failed: %s", af->path, strerror(err));
    unlink(af->tmp);
  }
  release(af);
  return st;
}

void c1d_atomic_abort(c1d_atomic_file *af) {
  if (af->f) fclose(af->f);
  if (af->tmp) unlink(af->tmp);
  release(af);
}

c1d_status c1d_make_dirs(const char *dir) {
  char *made = NULL;
  const c1d_status st = c1d_make_dirs_tracked(dir, &made); /* tracked: a failure takes them away */
  free(made);
  return st;
}

c1d_status c1d_check_path_length(const char *dir) {
  const size_t len = strlen(dir);
  if (len >= PATH_MAX)
    return c1d_fail(C1D_ERR_IO, "%s: the path is %zu bytes long; this system takes at most %d", dir, len,
                    PATH_MAX - 1);
  for (const char *s = dir; *s;) {
    const size_t part = strcspn(s, "/");
    if (part > NAME_MAX)
      return c1d_fail(C1D_ERR_IO, "%s: a part of the path is %zu bytes long; this system takes at most %d",
                      dir, part, NAME_MAX);
    s += part;
    s += strspn(s, "/");
  }
  return C1D_OK;
}

c1d_status c1d_make_dirs_tracked(const char *dir, char **created) {
  c1d_status st = C1D_OK;
  if (created) *created = NULL;
  if (dir[0] == '\0') return c1d_fail(C1D_ERR_IO, "empty directory name");
  if ((st = c1d_check_path_length(dir)) != C1D_OK) return st;
  char *p = strdup(dir);
  if (!p) return c1d_fail(C1D_ERR_NO_MEMORY, "%s: out of memory", dir);
  /* Create each prefix ending at a '/', then the whole path. A part that vanishes under us (another
   * run's check removing the directories it made for its probe) means starting again. */
  for (int attempt = 0;; attempt++) {
    int vanished = 0;
    strcpy(p, dir);
    for (char *s = p + 1;; s++) {
      int end = *s == '\0';
      if (*s != '/' && !end) continue;
      *s = '\0';
      struct stat sb;
      if (mkdir(p, 0777) == 0) {
        if (created && !*created && !(*created = strdup(p))) {
          st = c1d_fail(C1D_ERR_NO_MEMORY, "%s: out of memory", dir);
          goto done;
        }
      } else if (errno != EEXIST) {
        if ((vanished = errno == ENOENT && attempt < 20)) break;
        st = c1d_fail(C1D_ERR_IO, "cannot create directory %s: %s", p, strerror(errno));
        goto done;
      }
      if (stat(p, &sb) != 0 && (vanished = errno == ENOENT && attempt < 20)) break;
      if (stat(p, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        st = c1d_fail(C1D_ERR_IO, "%s exists and is not a directory", p);
        goto done;
      }
      if (end) break;
      *s = '/';
    }
    if (!vanished) break;
  }
done:
  free(p);
  if (st != C1D_OK && created && *created) {
    c1d_remove_made_dirs(dir, *created);
    free(*created);
    *created = NULL;
  }
  return st;
}

void c1d_remove_made_dirs(const char *dir, const char *created) {
  if (!created) return;
  char *p = strdup(dir);
  if (!p) return;
  for (;;) {
    size_t n = strlen(p);
    while (n > 1 && p[n - 1] == '/') p[--n] = '\0';
    if ((rmdir(p) != 0 && errno != ENOENT) || strcmp(p, created) == 0) break; /* ENOENT: not made yet */
    char *slash = strrchr(p, '/');
    if (!slash || slash == p) break;
    *slash = '\0';
  }
  free(p);
}
