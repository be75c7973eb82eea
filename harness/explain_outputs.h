/* The verdicts on a user's outputs, as convlab explain and libconvlab (lib/convlab.c) both give them: one
 * set of functions, so that the program and the library cannot disagree. The outputs are candidate rows
 * of the runner (one oracle, the metrics, the explainer, the verdict), each output called a bug gets the
 * flag under which it reads as rounding (harness/suggest_flags.h), and the words are the same: the text
 * that convlab explain prints, and the JSON object of --json.
 *
 * The sequence: c1d_explain_config, then the caller sets the shape, the inputs and the candidates (and
 * what it shows: progress, an estimate), then c1d_explain_outputs, then c1d_explain_print or
 * c1d_explain_json per output. Nothing here prints unless asked to (progress is the config's). */
#ifndef C1D_EXPLAIN_OUTPUTS_H
#define C1D_EXPLAIN_OUTPUTS_H

#include <stdio.h>

#include "harness/runner.h"
#include "harness/suggest_flags.h"

#ifdef __cplusplus
extern "C" {
#endif

struct cJSON;

/* *cfg as explain runs it: c1d_run_config_default, no implementation, no progress, the probabilistic
 * bound's constant lambda. The shape, the inputs and the candidates are the caller's to set. */
void c1d_explain_config(c1d_run_config *cfg, double lambda);

/* Runs cfg into *res (release with c1d_run_results_free, even on failure) and fills sug[i] for each of
 * cfg's n_candidates outputs (flag "" where none). Fails with c1d_run's status, or C1D_ERR_INTERNAL
 * ("file:y.npy could not be analysed: ...") when an output got no verdict. */
c1d_status c1d_explain_outputs(const c1d_run_config *cfg, c1d_run_results *res, c1d_flag_suggestion *sug);

/* One output's text, as convlab explain prints it: the verdict in words, the suggestion, why, the
 * problem, the errors and models, where, the metrics. */
void c1d_explain_print(FILE *f, const c1d_explanation *e, const c1d_metrics *m, const c1d_shape *s,
                       const c1d_flag_suggestion *sug);

/* The lines of that text a failing test shows, in its order: the verdict in words, the suggestion, why
 * (for a verdict that is not a bug it ends with the detection limit) and where (the region). */
void c1d_explain_print_short(FILE *f, const c1d_explanation *e, const c1d_flag_suggestion *sug);

/* The "where:" line's words ("128 elements (0.781%), channel 5: n 0-1, o 5, t 60-63"), or "" when no
 * element is offending; buf always terminated. */
void c1d_explain_region(const c1d_explanation *e, char *buf, size_t size);

/* One output's JSON object, as convlab explain --json prints it, named name, with files (the paths the
 * tensors came from; taken over, NULL for none: the library's tensors are in memory) as "files". NULL
 * when out of memory; the caller deletes the object. */
struct cJSON *c1d_explain_json(const c1d_explanation *e, const c1d_metrics *m, const c1d_shape *s,
                               const char *name, const c1d_flag_suggestion *sug, struct cJSON *files);

#ifdef __cplusplus
}
#endif
#endif
