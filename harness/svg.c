/* Small SVG plots (svg.h). Pixel coordinates are written with one decimal and no needless zero, and
 * lines as relative steps: a report with a few thousand points per implementation stays small enough
 * to mail. */
#include "harness/svg.h"

#include <math.h>
#include <string.h>

#define TITLE_H 22.0   /* title band above the plot area */
#define RIGHT_M 14.0
#define BOTTOM_M 40.0  /* tick labels and the x label */
#define CHAR_W 6.4     /* rough width of one 11 px character, for margins */

/* A pixel coordinate: one decimal, as short as SVG allows ("12" for 12.0, ".5" for 0.5). */
static void px(FILE *f, double v) {
  char b[32], *s = b;
  snprintf(b, sizeof b, "%.1f", v);
  size_t n = strlen(b);
  if (n > 2 && b[n - 2] == '.' && b[n - 1] == '0') b[n - 2] = '\0';
  if (strcmp(b, "-0") == 0) s = b + 1;
  if (s[0] == '-' && s[1] == '0' && s[2] == '.') { /* "-0.5" -> "-.5" */
    s[1] = '-';
    s++;
  } else if (s[0] == '0' && s[1] == '.') { /* "0.5" -> ".5" */
    s++;
  }
  fputs(s, f);
}

void c1d_svg_escape(FILE *f, const char *s) {
  for (; s && *s; s++) switch (*s) {
      case '&': fputs("&amp;", f); break;
      case '<': fputs("&lt;", f); break;
      case '>': fputs("&gt;", f); break;
      case '"': fputs("&quot;", f); break;
      case '\'': fputs("&#39;", f); break;
      default: fputc(*s, f);
    }
}

// --- axes --------------------------------------------------------------------------------------

/* Position of v in [0, 1] along the axis; NAN when it cannot be drawn. */
static double axis_pos(const c1d_svg_axis *a, double v) {
  if (!isfinite(v)) return NAN;
  double u;
  if (a->scale == C1D_SVG_LOG) {
    if (v <= 0.0) return NAN;
    u = (log10(v) - log10(a->lo)) / (log10(a->hi) - log10(a->lo));
  } else {
    u = (v - a->lo) / (a->hi - a->lo);
  }
  return u < 0.0 ? 0.0 : u > 1.0 ? 1.0 : u;
}

double c1d_svg_px(const c1d_svg_plot *p, double x) { return p->left + axis_pos(&p->x, x) * (p->right - p->left); }

double c1d_svg_py(const c1d_svg_plot *p, double y) { return p->bottom - axis_pos(&p->y, y) * (p->bottom - p->top); }

/* Makes the axis drawable: a positive, increasing range; a log axis spans whole decades. */
static void fix_axis(c1d_svg_axis *a) {
  if (a->scale == C1D_SVG_CATEGORY) {
    a->lo = 0.0;
    a->hi = a->n_names > 0 ? a->n_names : 1;
    return;
  }
  if (a->scale == C1D_SVG_LOG) {
    if (!(a->lo > 0.0) || !isfinite(a->lo)) a->lo = 1e-12;
    if (!(a->hi > a->lo) || !isfinite(a->hi)) a->hi = a->lo * 10.0;
    a->lo = pow(10.0, floor(log10(a->lo) + 1e-9));
    a->hi = pow(10.0, ceil(log10(a->hi) - 1e-9));
    if (!(a->hi > a->lo)) a->hi = a->lo * 10.0;
    return;
  }
  if (!isfinite(a->lo)) a->lo = 0.0;
  if (!(a->hi > a->lo) || !isfinite(a->hi)) a->hi = a->lo + 1.0;
}

/* Tick label text for a value on a linear or log axis. */
static void tick_label(char *b, size_t size, const c1d_svg_axis *a, double v) {
  if (a->scale == C1D_SVG_LOG) {
    const int e = (int)lround(log10(v));
    if (e >= -2 && e <= 3)
      snprintf(b, size, "%g", pow(10.0, e));
    else
      snprintf(b, size, "1e%d", e);
  } else {
    snprintf(b, size, "%g", v);
  }
}

/* The tick values of a linear or log axis: at most max_ticks, each labelled when labelled[i]. */
static int ticks(const c1d_svg_axis *a, double *v, int *labelled, int max_ticks) {
  int n = 0;
  if (a->scale == C1D_SVG_LOG) {
    const int e0 = (int)lround(log10(a->lo)), e1 = (int)lround(log10(a->hi));
    const int every = (e1 - e0 + 7) / 8 > 1 ? (e1 - e0 + 7) / 8 : 1; /* at most ~8 labels */
    for (int e = e0; e <= e1 && n < max_ticks; e++, n++) {
      v[n] = pow(10.0, e);
      labelled[n] = (e - e0) % every == 0;
    }
    return n;
  }
  /* 1, 2 or 5 times a power of ten, for about five intervals */
  const double raw = (a->hi - a->lo) / 5.0, mag = pow(10.0, floor(log10(raw)));
  const double step = raw / mag < 1.5 ? mag : raw / mag < 3.5 ? 2 * mag : raw / mag < 7.5 ? 5 * mag : 10 * mag;
  for (double t = ceil(a->lo / step - 1e-9) * step; t <= a->hi + step * 1e-9 && n < max_ticks; t += step) {
    v[n] = fabs(t) < step * 1e-9 ? 0.0 : t;
    labelled[n++] = 1;
  }
  return n;
}

static void text_at(FILE *f, double x, double y, const char *cls, const char *extra, const char *s) {
  fputs("<text", f);
  if (cls) fprintf(f, " class=\"%s\"", cls);
  fputs(" x=\"", f);
  px(f, x);
  fputs("\" y=\"", f);
  px(f, y);
  fprintf(f, "\"%s>", extra ? extra : "");
  c1d_svg_escape(f, s);
  fputs("</text>", f);
}

/* Grid lines as one path, then the labels in one group. */
static void x_ticks(c1d_svg_plot *p) {
  double v[64];
  int lab[64];
  char b[32];
  const int n = ticks(&p->x, v, lab, 64);
  fputs("<path class=\"grid\" d=\"", p->f);
  for (int i = 0; i < n; i++) {
    fputc('M', p->f);
    px(p->f, c1d_svg_px(p, v[i]));
    fputc(' ', p->f);
    px(p->f, p->top);
    fputc('V', p->f);
    px(p->f, p->bottom);
  }
  fputs("\"/><g class=\"tick\" text-anchor=\"middle\">", p->f);
  for (int i = 0; i < n; i++) {
    tick_label(b, sizeof b, &p->x, v[i]);
    if (lab[i]) text_at(p->f, c1d_svg_px(p, v[i]), p->bottom + 14, NULL, NULL, b);
  }
  fputs("</g>", p->f);
}

static void y_ticks(c1d_svg_plot *p) {
  double v[64];
  int lab[64];
  char b[32];
  const int n = p->y.scale == C1D_SVG_CATEGORY ? 0 : ticks(&p->y, v, lab, 64);
  fputs("<path class=\"grid\" d=\"", p->f);
  for (int i = 0; i < n; i++) {
    fputc('M', p->f);
    px(p->f, p->left);
    fputc(' ', p->f);
    px(p->f, c1d_svg_py(p, v[i]));
    fputc('H', p->f);
    px(p->f, p->right);
  }
  fputs("\"/><g class=\"tick\" text-anchor=\"end\">", p->f);
  for (int i = 0; i < p->y.n_names && p->y.scale == C1D_SVG_CATEGORY; i++)
    text_at(p->f, p->left - 6, c1d_svg_py(p, i + 0.5) + 4, NULL, NULL, p->y.names[i]);
  for (int i = 0; i < n; i++) {
    tick_label(b, sizeof b, &p->y, v[i]);
    if (lab[i]) text_at(p->f, p->left - 5, c1d_svg_py(p, v[i]) + 4, NULL, NULL, b);
  }
  fputs("</g>", p->f);
}

// --- the picture -------------------------------------------------------------------------------

void c1d_svg_begin(c1d_svg_plot *p, FILE *f, double width, double height, const char *title,
                   c1d_svg_axis x, c1d_svg_axis y) {
  memset(p, 0, sizeof *p);
  p->f = f;
  p->width = width;
  p->height = height;
  fix_axis(&x);
  fix_axis(&y);
  p->x = x;
  p->y = y;
  double left = 62.0; /* room for "1e-12" and the rotated y label */
  if (y.scale == C1D_SVG_CATEGORY) {
    size_t longest = 0;
    for (int i = 0; i < y.n_names; i++)
      if (strlen(y.names[i]) > longest) longest = strlen(y.names[i]);
    left = 14.0 + CHAR_W * (double)longest;
  }
  p->left = left;
  p->top = TITLE_H + 6.0;
  p->right = width - RIGHT_M;
  p->bottom = height - BOTTOM_M;
  fputs("<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"plot\" width=\"", f);
  px(f, width);
  fputs("\" height=\"", f);
  px(f, height);
  fputs("\" viewBox=\"0 0 ", f);
  px(f, width);
  fputc(' ', f);
  px(f, height);
  fputs("\">", f);
  if (title) text_at(f, p->left, 16, "title", NULL, title);
  x_ticks(p);
  y_ticks(p);
  fputs("<rect class=\"frame\" x=\"", f);
  px(f, p->left);
  fputs("\" y=\"", f);
  px(f, p->top);
  fputs("\" width=\"", f);
  px(f, p->right - p->left);
  fputs("\" height=\"", f);
  px(f, p->bottom - p->top);
  fputs("\"/>", f);
  if (x.label) text_at(f, (p->left + p->right) / 2, height - 8, "label", " text-anchor=\"middle\"", x.label);
  if (y.label && y.scale != C1D_SVG_CATEGORY) {
    char rot[96];
    const double cy = (p->top + p->bottom) / 2;
    snprintf(rot, sizeof rot, " text-anchor=\"middle\" transform=\"rotate(-90 12 %.1f)\"", cy);
    text_at(f, 12, cy, "label", rot, y.label);
  }
  fputc('\n', f);
}

void c1d_svg_end(c1d_svg_plot *p) { fputs("</svg>\n", p->f); }

// --- marks -------------------------------------------------------------------------------------

void c1d_svg_bars(c1d_svg_plot *p, int n, const double *x0, const double *x1, const double *h,
                  const char *cls) {
  fprintf(p->f, "<g class=\"%s\">", cls);
  for (int i = 0; i < n; i++) {
    const double a = c1d_svg_px(p, x0[i]), b = c1d_svg_px(p, x1[i]), top = c1d_svg_py(p, h[i]);
    if (!(h[i] > 0.0) || isnan(a) || isnan(b) || isnan(top)) continue;
    fputs("<rect x=\"", p->f);
    px(p->f, a);
    fputs("\" y=\"", p->f);
    px(p->f, top);
    fputs("\" width=\"", p->f);
    px(p->f, b - a > 0.6 ? b - a - 0.3 : 0.3); /* a hairline gap between neighbours */
    fputs("\" height=\"", p->f);
    px(p->f, p->bottom - top);
    fputs("\"/>", p->f);
    p->marks++;
  }
  fputs("</g>\n", p->f);
}

/* A line as a path of relative steps: "M x y l dx dy dx dy ...", x rounded to 0.1 px (evenly spaced
 * bins stay even) and y to whole pixels (invisible on screen, a quarter of the text). The steps are
 * differences of rounded positions, so they add up without drift; about half the text of absolute
 * coordinates. */
void c1d_svg_line(c1d_svg_plot *p, int n, const double *x, const double *y, const char *cls) {
  int run = 0; /* points in the current piece */
  long last_x = 0, last_y = 0;
  fprintf(p->f, "<path class=\"%s\" d=\"", cls);
  for (int i = 0; i < n; i++) {
    const double a = c1d_svg_px(p, x[i]), b = c1d_svg_py(p, y[i]);
    if (isnan(a) || isnan(b)) {
      if (run == 1) fputs("h0.1", p->f); /* a lone point: a dot under the round line cap */
      run = 0;
      continue;
    }
    const long ax = lround(a * 10.0), by = 10 * lround(b); /* in tenths of a pixel */
    if (run == 0) {
      fputc('M', p->f);
      px(p->f, ax / 10.0);
      fputc(' ', p->f);
      px(p->f, by / 10.0);
    } else {
      fputc(run == 1 ? 'l' : ' ', p->f);
      px(p->f, (ax - last_x) / 10.0);
      if (by - last_y >= 0) fputc(',', p->f); /* a minus sign separates by itself */
      px(p->f, (by - last_y) / 10.0);
    }
    last_x = ax;
    last_y = by;
    run++;
    p->marks++;
  }
  if (run == 1) fputs("h0.1", p->f);
  fputs("\"/>\n", p->f);
}

void c1d_svg_vline(c1d_svg_plot *p, double x, const char *cls, const char *label) {
  const double a = c1d_svg_px(p, x);
  if (isnan(a)) return;
  fprintf(p->f, "<line class=\"%s\" x1=\"", cls);
  px(p->f, a);
  fputs("\" y1=\"", p->f);
  px(p->f, p->top);
  fputs("\" x2=\"", p->f);
  px(p->f, a);
  fputs("\" y2=\"", p->f);
  px(p->f, p->bottom);
  fputs("\"/>", p->f);
  /* the label on the side with more room, each one a line lower than the one before */
  if (label)
    text_at(p->f, a < (p->left + p->right) / 2 ? a + 3 : a - 3, p->top + 11 + 12 * p->labels++, "marker",
            a < (p->left + p->right) / 2 ? NULL : " text-anchor=\"end\"", label);
  fputc('\n', p->f);
  p->marks++;
}

void c1d_svg_dot(c1d_svg_plot *p, double x, double y, double r, const char *cls, const char *title) {
  const double a = c1d_svg_px(p, x), b = c1d_svg_py(p, y);
  if (isnan(a) || isnan(b)) return;
  fprintf(p->f, "<circle class=\"%s\" r=\"", cls);
  px(p->f, r);
  fputs("\" cx=\"", p->f);
  px(p->f, a);
  fputs("\" cy=\"", p->f);
  px(p->f, b);
  if (title) {
    fputs("\"><title>", p->f);
    c1d_svg_escape(p->f, title);
    fputs("</title></circle>", p->f);
  } else {
    fputs("\"/>", p->f);
  }
  p->marks++;
}

void c1d_svg_legend(c1d_svg_plot *p, int n, const char *const *cls, const char *const *labels) {
  double x = p->right;
  for (int i = 0; i < n; i++) x -= 34.0 + CHAR_W * (double)strlen(labels[i]);
  fputs("<g class=\"legend\">", p->f);
  for (int i = 0; i < n; i++) {
    fprintf(p->f, "<line class=\"%s\" x1=\"", cls[i]);
    px(p->f, x + 4);
    fputs("\" y1=\"12\" x2=\"", p->f);
    px(p->f, x + 24);
    fputs("\" y2=\"12\"/>", p->f);
    text_at(p->f, x + 28, 16, "key", NULL, labels[i]);
    x += 34.0 + CHAR_W * (double)strlen(labels[i]);
  }
  fputs("</g>\n", p->f);
}

void c1d_svg_note(c1d_svg_plot *p, const char *text) {
  text_at(p->f, (p->left + p->right) / 2, (p->top + p->bottom) / 2, "note", " text-anchor=\"middle\"", text);
  fputc('\n', p->f);
}
