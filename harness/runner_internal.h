/* Shared between runner.c and runner_setup.c; not part of the runner's public interface. */
#ifndef C1D_RUNNER_INTERNAL_H
#define C1D_RUNNER_INTERNAL_H

#include <stddef.h>

#include "harness/runner.h"

/* Timed runs for impl under cfg: cfg->repeats, or the backend's default for this shape. */
int c1d_run_default_repeats(const c1d_run_config *cfg, const c1d_impl *impl);

/* Untimed warm-up runs before them: 1, or 0 for a CPU implementation above C1D_NO_WARMUP_GFLOP. */
int c1d_run_warmups(const c1d_run_config *cfg, const c1d_impl *impl);

/* Index of the implementation or candidate called name in the results table, or -1. */
int c1d_run_find_result(const c1d_run_config *cfg, const char *name);

/* A new run id into out: "20261202T150405Z-<pid>-<8 hex digits>". */
void c1d_make_run_id(char *out, size_t size);

/* Names, skip decisions and trial arrays of r for cfg. C1D_ERR_NO_MEMORY; r is freed by the caller. */
c1d_status c1d_run_results_init(const c1d_run_config *cfg, c1d_run_results *r);

#endif
