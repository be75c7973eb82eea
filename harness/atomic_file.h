/* Files that appear whole or not at all: writes go to a temporary file in the target's directory
 * (same file system, so rename() is atomic), which is renamed over the target only on commit. A crash,
 * an error or an abort leaves the target untouched and removes the temporary file. */
#ifndef C1D_ATOMIC_FILE_H
#define C1D_ATOMIC_FILE_H

#include <stdio.h>

#include "reference/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct c1d_atomic_file {
  FILE *f;      /* write here between open and commit/abort */
  char *tmp;    /* the temporary path */
  char *path;   /* the final path */
} c1d_atomic_file;

/* Creates the temporary file for path. C1D_ERR_IO (detail names path) or C1D_ERR_NO_MEMORY; on failure
 * af holds nothing to release. */
c1d_status c1d_atomic_open(c1d_atomic_file *af, const char *path);

/* Flushes, syncs, closes and renames over the final path. On any failure the temporary file is removed
 * and C1D_ERR_IO returned (a write error earlier on af->f is caught here too). Releases af either way. */
c1d_status c1d_atomic_commit(c1d_atomic_file *af);

/* Closes and removes the temporary file; the final path is untouched. Safe on a zeroed or released af. */
void c1d_atomic_abort(c1d_atomic_file *af);

/* Whether the system can take dir as a path (PATH_MAX, NAME_MAX for each part): C1D_ERR_IO saying which
 * limit, so that nothing is made for a path that cannot exist (thousands of levels left behind). */
c1d_status c1d_check_path_length(const char *dir);

/* Creates dir and its missing parents (mode 0777 before umask). C1D_ERR_IO naming the part that failed,
 * or a part that exists and is not a directory. */
c1d_status c1d_make_dirs(const char *dir);

/* c1d_make_dirs that also says, in *created (caller frees; NULL when every part existed), the outermost
 * directory this call made, so that a failure afterwards can take them away (c1d_remove_made_dirs). */
c1d_status c1d_make_dirs_tracked(const char *dir, char **created);

/* Removes dir and its parents up to and including created (from c1d_make_dirs_tracked), each only
 * while it is empty. created NULL does nothing. */
void c1d_remove_made_dirs(const char *dir, const char *created);

/* dir + "/" + name in a new string (caller frees), or NULL when out of memory. */
char *c1d_path_join(const char *dir, const char *name);

#ifdef __cplusplus
}
#endif
#endif
