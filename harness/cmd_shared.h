/* What convlab run and convlab explain share: the problem's declarations on the command line (--groups,
 * --activation, --layout, and for generated problems --dtype), the user's tensors (x, w, b, initial
 * states and any number of outputs y from .npy files, or one safetensors case holding them; each output
 * a candidate row named file:NAME), the notes that float64 inputs were rounded, and the one line that
 * announces long work with its estimate. */
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

// --- the problem's flags ---------------------------------------------------------------------------

/* The declarations both commands take, as given (zero / NULL: not given). */
typedef struct c1d_problem_flags {
  int64_t groups;
  const char *activation, *layout;
} c1d_problem_flags;

/* Their option-table lines (--groups, --activation, --layout) into o; returns how many. */
#define C1D_PROBLEM_OPTIONS 3
int c1d_problem_options(c1d_problem_flags *f, c1d_option *o);

/* Parses f into pb's G, act and layout (D is the caller's). C1D_ERR_USAGE naming the flag and the text
 * ("--activation must be none or silu (got 'relu')"). */
c1d_status c1d_problem_flags_parse(const c1d_problem_flags *f, c1d_input_problem *pb);

/* --dtype: "x=bf16,w=bf16,y=bf16", each of x, w, b, s (the initial states), y its own type, "all=T"
 * for every one; later entries override earlier ones ("all=bf16,w=f32"). C1D_ERR_USAGE naming the
 * entry. */
c1d_status c1d_parse_dtypes(const char *text, c1d_dtypes *out);

// --- the user's files ------------------------------------------------------------------------------

typedef struct c1d_user_files {
  const char *x, *w, *b, *s;                 /* .npy paths; b and s (initial states) may be NULL */
  const char *case_path;                     /* or a safetensors case holding x, w, b, s and one y */
  c1d_input_problem problem;                 /* D and the declarations the files are checked against */
  const c1d_string_list *ys;                 /* the --y paths, in order (borrowed) */
  c1d_string_list case_ys;                   /* with a case: its path, as its one output's file */
  c1d_st_file case_file;                     /* the case's header, open from shape until load */
  c1d_input_tensors tensors;                 /* x, w, b, s (owned) */
  float *y[C1D_OPT_LIST_MAX];                /* each candidate's data (owned) */
  c1d_candidate cands[C1D_OPT_LIST_MAX];
  char names[C1D_OPT_LIST_MAX][C1D_CANDIDATE_NAME_MAX];
} c1d_user_files;

/* Names each --y (or the case) "file:NAME", NAME its file name without the folders, or the path as
 * given where two files share a name, and makes them cfg's candidates (their data is loaded by
 * c1d_user_files_load). C1D_ERR_USAGE when two --y name the same path. */
c1d_status c1d_user_files_name(c1d_user_files *u, c1d_run_config *cfg);

/* Derives *s for u->problem: x, w, b and s fit together and the declarations, and every y has the
 * output's shape and one type (float32 or float16). Nothing is read beyond the headers (.npy files') or
 * the header (a case's). Fails as c1d_input_files_shape_of and c1d_input_case_shape do. */
c1d_status c1d_user_files_shape(c1d_user_files *u, c1d_shape *s);

/* With cfg->shape from c1d_user_files_shape: refuses a run beyond physical memory, then loads the data
 * into cfg (x, w, b, the states and the candidates' y) and prints one note per float64 input whose values changed
 * ("convlab <cmd>: note: x.npy is float64; 12 values were rounded to float32 ..."). */
c1d_status c1d_user_files_load(const char *cmd, c1d_user_files *u, c1d_run_config *cfg);

/* Frees what load allocated; NULL does nothing. */
void c1d_user_files_free(c1d_user_files *u);

/* Before the run: the estimate of cfg, when its work is worth one (c1d_run_worth_estimating) or when
 * `asked` (--estimate). The line "convlab <cmd>: about 2 min 05 s here: ..." goes to stdout when asked,
 * else to stderr when the estimate reaches C1D_ESTIMATE_ANNOUNCE_S (and then cfg->progress is set: work
 * long enough to announce shows its progress, off a terminal too). cfg->estimate then points at *e,
 * for the progress line's time left (release *e with c1d_run_estimate_free after the run). A failed
 * calibration is returned only when asked; otherwise the run simply goes without an estimate. A run
 * estimated beyond C1D_ESTIMATE_LIMIT_S is C1D_ERR_USAGE ("this run is estimated at about 67 h 35 min,
 * beyond 24 h; pass --allow-long to run it anyway"), announced by nothing else, unless allow_long;
 * when asked, the line says so instead. */
c1d_status c1d_announce_estimate(const char *cmd, c1d_run_config *cfg, int asked, int allow_long,
                                 c1d_run_estimate *e);

#ifdef __cplusplus
}
#endif
#endif
