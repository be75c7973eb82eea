/* How long a run will take here, said before it starts. The same run (implementations, oracle,
 * candidates, comparison) is timed on small shapes with the same C, K and D, N = 1 and few outputs:
 * implementation runs, the oracle and the explainer's naive order grow with the flops from a tiny
 * shape's; each output's analysis and the rounding models grow per output and per output of the
 * explainer's sample (its models cost C*K products per element there), told apart by a point inside
 * the sample at the real C*K and one past it with few products; the rest (inputs, set-up) is a fixed
 * part plus a part per input and per output. The calibration takes well under a second; its speeds are
 * this machine's, now, not constants. */
#ifndef C1D_ESTIMATE_H
#define C1D_ESTIMATE_H

#include <stddef.h>
#include <stdint.h>

#include "harness/runner.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Runs with less work than this are not worth a calibration: they take seconds at most. */
#define C1D_ESTIMATE_MIN_GFLOP 20.0
/* Estimated runs at least this long are announced in one line before they start. */
#define C1D_ESTIMATE_ANNOUNCE_S 5.0
/* Runs estimated beyond this are refused unless asked for (--allow-long): a slip such as --repeats
 * 1000000 should not hold the machine for days. */
#define C1D_ESTIMATE_LIMIT_S (24.0 * 3600.0)

typedef struct c1d_run_estimate {
  double seconds;   /* the whole run */
  double before_s;  /* the command's time before its announcement (its start, inputs, this calibration):
                     * announced with the run, since a user times the whole command */
  double gflop;     /* its work: every implementation run (warm-ups included) and the oracle */
  int64_t runs;     /* implementation runs over all trials (a million trials of a million runs fit) */
  int trials;
  double oracle_s;  /* per trial */
  double models_s;  /* per trial: the explainer's rounding models */
  double other_s;   /* per trial: the inputs, the analysis of every output, set-up */
  int n_rows;       /* the config's implementations, then its candidates */
  double *row_s;    /* per trial and row: its runs (skipped rows: 0) */
} c1d_run_estimate;

/* Whether cfg does C1D_ESTIMATE_MIN_GFLOP of work or more (oracle and implementation runs). */
int c1d_run_worth_estimating(const c1d_run_config *cfg);

/* Calibrates on small shapes and fills *e (release with c1d_run_estimate_free, also on failure).
 * cfg must have passed c1d_run_check. Fails with the status of a calibration run that could not
 * complete (then no estimate is known). */
c1d_status c1d_run_estimate_make(const c1d_run_config *cfg, c1d_run_estimate *e);

/* Frees row_s; NULL does nothing. */
void c1d_run_estimate_free(c1d_run_estimate *e);

/* The estimate in one line without a trailing newline: "about 2 min 05 s here: 60 runs of 17.2
 * GFLOP (3 implementations, 5 trials) and the float64 oracle on the cpu, 1.12 TFLOP in all (speeds
 * measured just now)". */
void c1d_run_estimate_describe(const c1d_run_config *cfg, const c1d_run_estimate *e, char *buf,
                               size_t size);

#ifdef __cplusplus
}
#endif
#endif
