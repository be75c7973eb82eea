/* The HTML report: one self-contained page (inline CSS and SVG; no script, no font, no network) that
 * answers "where are the errors, how big, and why" for a finished run:
 *
 *   - the summary table: each implementation's verdict and the explainer's reason, its relative L2 and
 *     largest error, its share failing allclose(1e-4, 1e-4) and beyond the deterministic bound, time;
 *   - the TF32 panel: the |error| distributions of TF32 rows overlaid on the FP32 rows', and each row's
 *     relative L2 beside the rounding models' predictions (the TF32 model's and the fp32 naive order's);
 *   - per implementation: histograms of log10 |error| and of |error| / deterministic bound, the error
 *     along the position t and by output channel o (mean and max per bin), where edge and tile bugs show.
 *
 * With several trials, histograms are summed, profiles averaged (mean) and maxed (max) over the trials,
 * and the verdict shown is that of the trial with the largest relative L2. A row whose statistics all
 * equal an earlier row's (a bit-exact twin) points to that row's plots instead of repeating them. The
 * page takes about 20 KB per implementation with plots. convlab run --out DIR --html writes it as
 * DIR/report.html. */
#ifndef C1D_REPORT_HTML_H
#define C1D_REPORT_HTML_H

#include <stdio.h>

#include "harness/report.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Writes the page to f. Reads only meta and r; allocates nothing; errors show up in ferror(f). */
void c1d_report_html(FILE *f, const c1d_report_meta *meta, const c1d_run_results *r);

#ifdef __cplusplus
}
#endif
#endif
