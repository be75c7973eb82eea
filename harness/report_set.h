/* A report set: the files one run writes under a directory (--out), replaced as a whole. A reader of
 * DIR sees one run's complete set or the previous one, never a mix. DIR holds, for a set of kind K
 * ("report", "sweep"):
 *
 *   DIR/report.json -> .K/report.json   one stable link per file name, made once
 *   DIR/.K -> .K-Ab12Cd                  the commit point: one link, replaced by one rename()
 *   DIR/.K-Ab12Cd/report.json ...        one run's complete set, each file fsync'd
 *   DIR/.K.lock                          flock(): one writer at a time; others wait (up to
 *                                        C1D_REPORT_SET_WAIT_S seconds, then fail with one line)
 *
 * A writer takes the lock, removes what an interrupted writer left (.K-* directories that .K does not
 * name, temporary links, the report.*.tmp.* files of older convlab versions), writes the new set into
 * a fresh .K-XXXXXX, renames a new link over .K, and removes the old set. Only what convlab wrote is
 * removed: a set directory is opened without following links and must hold convlab's mark
 * (.convlab-set in the set directory, with the run id), and only files a set can hold are unlinked
 * in it; anything else is left alone, with one line on stderr saying so. A set still being filled (a
 * staged set, below, held by flock on its directory) is never taken. Before that rename nothing a
 * reader sees has changed; an error rolls back to exactly the previous state (directories that this
 * writer created are removed again). SIGINT, SIGTERM and SIGHUP arriving while a set is written are
 * held until it has committed or rolled back, then take effect. Reports of older versions (regular
 * files under the same names) are taken over without a visible change: hard-linked into a set first.
 * The format notes (docs/report-format.md) describe the layout for readers. */
#ifndef C1D_REPORT_SET_H
#define C1D_REPORT_SET_H

#include <stdio.h>

#include "reference/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How long a writer waits for another one's lock before it gives up. */
#define C1D_REPORT_SET_WAIT_S 60

typedef struct c1d_staged_set c1d_staged_set;

typedef struct c1d_report_set {
  const char *dir;                /* where the set lives (created with its parents when missing) */
  const char *kind;               /* "report": the link .report, the sets .report-*, the lock */
  const char *const *names;       /* every file a set of this kind can hold */
  int n_names;
  int n_present;                  /* this set holds names[0..n_present); links of the rest go */
  int wait_s;                     /* for another writer's lock; 0: C1D_REPORT_SET_WAIT_S */
  const char *run_id;             /* written in the set's mark; NULL: none */
  c1d_staged_set *with;           /* committed together with this set (the saved outputs), or NULL */
} c1d_report_set;

/* Writes file `index` of the set to f. A write error on f is found by the caller (with its errno);
 * return C1D_OK, or a status with its c1d_fail detail to abandon the whole set. */
typedef c1d_status (*c1d_report_writer)(FILE *f, int index, void *ctx);

/* Before a run: whether set->dir could take the set, leaving nothing behind (a file is made and removed
 * there, in directories made and removed for it). C1D_ERR_IO naming the problem: a part of the path
 * that is not a directory, a directory that cannot be written, one of the names taken by something
 * that is not a report (a directory, a link convlab did not make). */
c1d_status c1d_report_set_check(const c1d_report_set *set);

/* Writes and commits the set as described above. C1D_ERR_IO (the detail names the file and the cause,
 * e.g. "out/run/report.json: cannot write: No space left on device"), C1D_ERR_NO_MEMORY, or the
 * writer's status; then nothing visible under dir has changed. With set->with, that staged set commits
 * just before this one (its lock taken after this one's) and is rolled back if this one cannot commit:
 * both sets change, or neither. */
c1d_status c1d_report_set_write(const c1d_report_set *set, c1d_report_writer write, void *ctx);

/* A staged set: files written one by one over a run (the saved outputs, each large), into a fresh
 * DIR/.K-XXXXXX made at open, then committed like a report set (DIR/name -> .K/name, DIR/.K -> the set)
 * with a manifest, DIR/.K-XXXXXX/<kind>.json: {"run_id": ..., "files": [...]}. Until it commits a reader
 * sees the previous set; a staged set discarded or killed leaves nothing a reader sees (its directory
 * goes then, or at the next writer's clean-up). A set holds files named *suffix; a regular file of
 * such a name in DIR (what older versions wrote there) is replaced by the link after the commit. */

/* Before a run: whether dir could take a staged set of kind (as c1d_report_set_check). */
c1d_status c1d_staged_set_check(const char *dir, const char *kind);

/* Makes dir (and its parents) and the set's directory, locked while the set lives. */
c1d_status c1d_staged_set_open(const char *dir, const char *kind, const char *suffix, const char *run_id,
                               c1d_staged_set **out);

/* Where the set's files are written (name by name; then c1d_staged_set_add). */
const char *c1d_staged_set_dir(const c1d_staged_set *s);

/* The directory the set commits in (the dir given to open). */
const char *c1d_staged_set_dest(const c1d_staged_set *s);

/* Records that the file `name` (ending in the set's suffix) was written into the set's directory. */
c1d_status c1d_staged_set_add(c1d_staged_set *s, const char *name);

/* Commits the set alone (when no report set takes it with). As c1d_report_set_write. */
c1d_status c1d_staged_set_commit(c1d_staged_set *s);

/* Whether the set has committed. */
int c1d_staged_set_committed(const c1d_staged_set *s);

/* Removes an uncommitted set's directory and the directories made for it, then frees s (NULL: nothing). */
void c1d_staged_set_discard(c1d_staged_set *s);

/* A stream over fd (not closed by fclose) that records in *err the errno of its first failed
 * write(2), so that a full disk is reported as such. NULL when out of memory. */
FILE *c1d_checked_stream(int fd, int *err);

#ifdef __cplusplus
}
#endif
#endif
