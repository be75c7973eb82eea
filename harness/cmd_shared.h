/* What convlab run and convlab explain share: the user's tensors from .npy files (x, w, b and any
 * number of outputs y, each one a candidate row named file:NAME), the notes that float64 inputs were
 * rounded, and the one line that announces long work with its estimate. A new kind of input (a
 * safetensors case, say) is one more loader that fills the same c1d_user_files. */
#ifndef C1D_CMD_SHARED_H
#define C1D_CMD_SHARED_H

#include "harness/cli.h"
#include "harness/estimate.h"
#include "harness/input_files.h"
#include "harness/runner.h"

#ifdef __cplusplus
extern "C" {
#endif

#define C1D_CANDIDATE_NAME_MAX 96 /* as the results keep names */

typedef struct c1d_user_files {
  const char *x, *w, *b;                     /* paths; b may be NULL */
  const c1d_string_list *ys;                 /* the --y paths, in order (borrowed) */
  c1d_input_tensors tensors;                 /* x, w, b (owned) */
  float *y[C1D_OPT_LIST_MAX];                /* each candidate's data (owned) */
  c1d_candidate cands[C1D_OPT_LIST_MAX];
  char names[C1D_OPT_LIST_MAX][C1D_CANDIDATE_NAME_MAX];
} c1d_user_files;

/* Names each --y "file:NAME", NAME its file name without the folders, or the path as given where two
 * files share a name, and makes them cfg's candidates (their data is loaded by c1d_user_files_load).
 * C1D_ERR_USAGE when two --y name the same path. */
c1d_status c1d_user_files_name(c1d_user_files *u, c1d_run_config *cfg);

/* Reads every header and derives *s (dilation D): x, w and b fit together and each y is float32 of
 * shape (N, O, L). Nothing is read beyond the headers. Fails as c1d_input_files_shape does. */
c1d_status c1d_user_files_shape(const c1d_user_files *u, int64_t D, c1d_shape *s);

/* With cfg->shape from c1d_user_files_shape: refuses a run beyond physical memory, then loads the data
 * into cfg (x, w, b and the candidates' y) and prints one note per float64 input whose values changed
 * ("convlab <cmd>: note: x.npy is float64; 12 values were rounded to float32 ..."). */
c1d_status c1d_user_files_load(const char *cmd, c1d_user_files *u, c1d_run_config *cfg);

/* Frees what load allocated; NULL does nothing. */
void c1d_user_files_free(c1d_user_files *u);

/* Before the run: the estimate of cfg, when its work is worth one (c1d_run_worth_estimating) or when
 * `asked` (--estimate). The line "convlab <cmd>: about 2 min 05 s here: ..." goes to stdout when asked,
 * else to stderr when the estimate reaches C1D_ESTIMATE_ANNOUNCE_S. cfg->estimate then points at *e,
 * for the progress line's time left (release *e with c1d_run_estimate_free after the run). A failed
 * calibration is returned only when asked; otherwise the run simply goes without an estimate. */
c1d_status c1d_announce_estimate(const char *cmd, c1d_run_config *cfg, int asked, c1d_run_estimate *e);

#ifdef __cplusplus
}
#endif
#endif
