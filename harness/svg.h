/* Small SVG plots for the HTML report (harness/report_html.c): a frame with two axes (linear, log10 or
 * named categories), ticks, grid and labels, and the marks the report needs: bars, lines, vertical
 * markers, dots, a legend, a note. Everything is written as text to a FILE as it is drawn; nothing is
 * allocated. Styling is by CSS class names that the page defines, so this file knows no colours.
 *
 * Values that cannot be drawn (NaN, infinities, and zero or negative values on a log axis) are skipped:
 * a line breaks there, a bar or dot is left out. Values outside the axis range are clamped to the
 * frame, so an outlier shows at the edge instead of vanishing. */
#ifndef C1D_SVG_H
#define C1D_SVG_H

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum c1d_svg_scale {
  C1D_SVG_LINEAR,
  C1D_SVG_LOG,      /* log10; lo and hi positive; ticks at powers of ten */
  C1D_SVG_CATEGORY  /* names[i] at i + 0.5 for i in [0, n_names); lo = 0, hi = n_names */
} c1d_svg_scale;

typedef struct c1d_svg_axis {
  c1d_svg_scale scale;
  double lo, hi;
  const char *label;              /* under the x axis, or beside the y axis; may be NULL */
  const char *const *names;       /* C1D_SVG_CATEGORY only */
  int n_names;
} c1d_svg_axis;

typedef struct c1d_svg_plot {
  FILE *f;
  double width, height;               /* the whole picture, px */
  double left, top, right, bottom;    /* the plot area inside the frame, px */
  c1d_svg_axis x, y;
  int marks;                          /* bars, line points, dots and markers drawn so far */
  int labels;                         /* marker labels so far, to stack them */
} c1d_svg_plot;

/* Opens <svg> of width x height px with the title on top (left-aligned), draws the grid, frame, ticks and axis labels
 * and sets up p for the marks. A log axis with lo <= 0 or hi <= lo is widened to something drawable. */
void c1d_svg_begin(c1d_svg_plot *p, FILE *f, double width, double height, const char *title,
                   c1d_svg_axis x, c1d_svg_axis y);

/* Closes the </svg>. */
void c1d_svg_end(c1d_svg_plot *p);

/* Data to pixel coordinates, clamped to the plot area; NAN when the value cannot be drawn. */
double c1d_svg_px(const c1d_svg_plot *p, double x);
double c1d_svg_py(const c1d_svg_plot *p, double y);

/* n bars from x0[i] to x1[i], from the bottom of the plot up to h[i]; zero heights are not drawn. */
void c1d_svg_bars(c1d_svg_plot *p, int n, const double *x0, const double *x1, const double *h,
                  const char *cls);

/* A line through (x[i], y[i]) (one <path>), broken where a point cannot be drawn; a point alone
 * becomes a dot (the page's CSS gives lines round caps). */
void c1d_svg_line(c1d_svg_plot *p, int n, const double *x, const double *y, const char *cls);

/* A vertical line across the plot at x, with a small label near its top (label may be NULL); each
 * label sits a line below the previous one, so markers close together stay readable. */
void c1d_svg_vline(c1d_svg_plot *p, double x, const char *cls, const char *label);

/* A dot of radius r px at (x, y); title (may be NULL) is its tooltip. */
void c1d_svg_dot(c1d_svg_plot *p, double x, double y, double r, const char *cls, const char *title);

/* A legend in the title band, right-aligned (the title is on the left): a line sample and a label per
 * entry, side by side. */
void c1d_svg_legend(c1d_svg_plot *p, int n, const char *const *cls, const char *const *labels);

/* A centred message in the plot area, e.g. why nothing is drawn. */
void c1d_svg_note(c1d_svg_plot *p, const char *text);

/* Writes s with &, <, >, " and ' escaped, for HTML and SVG text and attribute values. */
void c1d_svg_escape(FILE *f, const char *s);

#ifdef __cplusplus
}
#endif
#endif
