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
 * a fresh .K-XXXXXX, renames a new link over .K, and removes the old set. Before that rename nothing a
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

typedef struct c1d_report_set {
  const char *dir;                /* where the set lives (created with its parents when missing) */
  const char *kind;               /* "report": the link .report, the sets .report-*, the lock */
  const char *const *names;       /* every file a set of this kind can hold */
  int n_names;
  int n_present;                  /* this set holds names[0..n_present); links of the rest go */
  int wait_s;                     /* for another writer's lock; 0: C1D_REPORT_SET_WAIT_S */
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
 * writer's status; then nothing visible under dir has changed. */
c1d_status c1d_report_set_write(const c1d_report_set *set, c1d_report_writer write, void *ctx);

/* A stream over fd (not closed by fclose) that records in *err the errno of its first failed
 * write(2), so that a full disk is reported as such. NULL when out of memory. */
FILE *c1d_checked_stream(int fd, int *err);

#ifdef __cplusplus
}
#endif
#endif
