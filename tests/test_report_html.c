/* The HTML report in a real browser. convlab writes a report for a small shape (and, in-process, one
 * with two bugs from the zoo); Debian's headless Chromium opens each page from file://, dumps its DOM
 * and takes a screenshot. The page must load without a single console message (it has no script, so
 * any message is an error), reference nothing outside itself, hold every plot with data drawn in it,
 * and the screenshot must be a real picture. Pages and screenshots stay in the build directory
 * (tests/report_html/) for a person to look at. The small svg.h plotter is checked first. */
#include <criterion/criterion.h>
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness/registry.h"
#include "harness/report_html.h"
#include "harness/svg.h"
#include "tests/support/process.h"
#include "tests/zoo/zoo.h"

#define CHROMIUM "/usr/bin/chromium"
#define KEEP_DIR C1D_BINARY_DIR "/tests/report_html"
#define WINDOW_W 1400
#define WINDOW_H 3000

// --- plumbing ------------------------------------------------------------------------------------

static char tmp[64];

static void make_dirs(void) {
  c1d_test_make_dir(tmp, "c1d_html");
  mkdir(C1D_BINARY_DIR "/tests", 0777);
  mkdir(KEEP_DIR, 0777);
}

static void remove_tmp(void) { c1d_test_remove_dir(tmp); }

TestSuite(report_html, .init = make_dirs, .fini = remove_tmp, .timeout = 240);
TestSuite(svg);

static void need_chromium(void) {
  if (access(CHROMIUM, X_OK) != 0)
    cr_skip_test(CHROMIUM " is not installed (Debian package chromium; scripts/deps.sh test installs it): "
                 "the HTML report cannot be rendered here");
}

// --- Chromium ------------------------------------------------------------------------------------

typedef struct rendering {
  char *dom;     /* the DOM after load (--dump-dom) */
  char *log;     /* Chromium's stderr of both runs */
  char png[256]; /* the screenshot */
} rendering;

/* Headless Chromium on file://html twice: once dumping the DOM, once taking a screenshot to png. */
static void render(const char *html, const char *png, rendering *r) {
  char url[512], profile[128], shot[300], out[128], err1[128], err2[128], size[32];
  snprintf(url, sizeof url, "file://%s", html);
  snprintf(shot, sizeof shot, "--screenshot=%s", png);
  snprintf(size, sizeof size, "--window-size=%d,%d", WINDOW_W, WINDOW_H);
  snprintf(out, sizeof out, "%s/dom.html", tmp);
  snprintf(err1, sizeof err1, "%s/chromium1.err", tmp);
  snprintf(err2, sizeof err2, "%s/chromium2.err", tmp);
  for (int pass = 0; pass < 2; pass++) {
    snprintf(profile, sizeof profile, "--user-data-dir=%s/profile%d", tmp, pass);
    const char *argv[] = {"/usr/bin/timeout", "-k", "10", "120", CHROMIUM, "--headless", "--no-sandbox",
                          "--disable-gpu", "--disable-quic", "--no-first-run",
                          "--disable-background-networking", "--disable-component-update", "--disable-sync",
                          profile, "--enable-logging=stderr", "--v=0", size,
                          pass == 0 ? "--dump-dom" : shot, url, NULL};
    const int code = c1d_test_spawn(argv, pass == 0 ? out : "/dev/null", pass == 0 ? err1 : err2);
    cr_assert_eq(code, 0, "chromium exited with %d on %s", code, url);
  }
  char *log1 = c1d_test_slurp(err1, NULL), *log2 = c1d_test_slurp(err2, NULL);
  r->dom = c1d_test_slurp(out, NULL);
  cr_assert(log1 && log2 && r->dom);
  r->log = malloc(strlen(log1) + strlen(log2) + 1);
  cr_assert_not_null(r->log);
  strcpy(r->log, log1);
  strcat(r->log, log2);
  free(log1);
  free(log2);
  snprintf(r->png, sizeof r->png, "%s", png);
  cr_assert(strstr(r->dom, "</html>"), "chromium dumped no page for %s", url);
}

static void rendering_free(rendering *r) {
  free(r->dom);
  free(r->log);
}

/* Lines of Chromium's log that report something the page said or threw. */
static int console_messages(const char *log, char *first, size_t size) {
  int n = 0;
  first[0] = '\0';
  for (const char *line = log; line && *line;) {
    const char *end = strchr(line, '\n');
    const size_t len = end ? (size_t)(end - line) : strlen(line);
    char buf[1024];
    snprintf(buf, sizeof buf, "%.*s", (int)(len < sizeof buf ? len : sizeof buf - 1), line);
    if (strstr(buf, ":CONSOLE") || strstr(buf, "Uncaught")) {
      if (n++ == 0) snprintf(first, size, "%s", buf);
    }
    line = end ? end + 1 : NULL;
  }
  return n;
}

// --- what the DOM must hold ----------------------------------------------------------------------

static int count_in(const char *from, const char *to, const char *needle) {
  int n = 0;
  for (const char *p = from; (p = strstr(p, needle)) && p < to; p += strlen(needle)) n++;
  return n;
}

/* Numbers in a path's d attribute, halved: its points. */
static int path_points(const char *d, const char *end) {
  int numbers = 0;
  for (const char *p = d; p < end && *p != '"'; p++) {
    const int starts = *p == '-' || ((isdigit((unsigned char)*p) || *p == '.') &&
                                     !(isdigit((unsigned char)p[-1]) || p[-1] == '.'));
    numbers += starts;
  }
  return numbers / 2;
}

/* Data drawn in one <svg>..</svg>: bars, dots and the points of data lines (not grid or frame). */
static int marks_in(const char *svg, const char *end) {
  int marks = count_in(svg, end, "<circle");
  for (const char *g = svg; (g = strstr(g, "<g class=\"bar")) && g < end; g++)
    marks += count_in(g, strstr(g, "</g>"), "<rect");
  static const char *const lines[] = {"<path class=\"mean\" d=\"", "<path class=\"max\" d=\"",
                                      "<path class=\"fp32\" d=\"", "<path class=\"tf32\" d=\""};
  for (unsigned i = 0; i < sizeof lines / sizeof lines[0]; i++)
    for (const char *p = svg; (p = strstr(p, lines[i])) && p < end; p++)
      marks += path_points(p + strlen(lines[i]), end);
  return marks;
}

/* Every <svg> has at least min_marks data marks; returns the number of plots. */
static int check_plots(const char *dom, int min_marks) {
  int plots = 0;
  for (const char *s = dom; (s = strstr(s, "<svg")); s++) {
    const char *end = strstr(s, "</svg>");
    cr_assert_not_null(end, "an <svg> is not closed");
    const char *title = strstr(s, "class=\"title\"");
    char name[80] = "?";
    if (title && title < end) sscanf(strchr(title, '>') + 1, "%79[^<]", name);
    const int marks = marks_in(s, end);
    cr_expect_geq(marks, min_marks, "plot %d ('%s') draws %d marks", plots, name, marks);
    plots++;
  }
  return plots;
}

/* Nothing outside the file: no script, stylesheet link, image source or URL but the SVG namespace. */
static void check_self_contained(const char *html) {
  static const char *const banned[] = {"<script", "<link", "src=", "url(", "@import", "<img", "<iframe"};
  for (unsigned i = 0; i < sizeof banned / sizeof banned[0]; i++)
    cr_expect_null(strstr(html, banned[i]), "the page contains '%s'", banned[i]);
  for (const char *p = html; (p = strstr(p, "http")); p++)
    cr_expect(strncmp(p, "http://www.w3.org/2000/svg", 26) == 0, "external reference: %.60s", p);
  for (const char *p = html; (p = strstr(p, "href=\"")); p++)
    cr_expect_eq(p[6], '#', "a link leaves the page: %.60s", p);
}

static uint32_t be32(const unsigned char *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* A PNG of the window's size whose image data is far larger than a blank page's (a few KB). */
static void check_png(const char *path) {
  size_t len = 0;
  unsigned char *png = (unsigned char *)c1d_test_slurp(path, &len);
  cr_assert_not_null(png, "no screenshot at %s", path);
  cr_assert_geq(len, 33u);
  cr_assert_eq(memcmp(png, "\x89PNG\r\n\x1a\n", 8), 0, "%s is not a PNG", path);
  cr_assert_eq(memcmp(png + 12, "IHDR", 4), 0);
  cr_expect_eq(be32(png + 16), WINDOW_W, "screenshot width");
  cr_expect_eq(be32(png + 20), WINDOW_H, "screenshot height");
  size_t idat = 0;
  for (size_t at = 8; at + 12 <= len;) {
    const uint32_t n = be32(png + at);
    if (memcmp(png + at + 4, "IDAT", 4) == 0) idat += n;
    at += 12 + (size_t)n;
  }
  cr_expect_geq(idat, 40000u, "the screenshot holds only %zu bytes of image data: a blank page?", idat);
  free(png);
}

/* Loads html in Chromium, checks it, and keeps the screenshot as KEEP_DIR/<name>.png. */
static void check_page(const char *html_path, const char *name, int expected_plots, rendering *r) {
  char png[256];
  char *html = c1d_test_slurp(html_path, NULL);
  cr_assert_not_null(html, "no page at %s", html_path);
  check_self_contained(html);
  free(html);
  snprintf(png, sizeof png, KEEP_DIR "/%s.png", name);
  render(html_path, png, r);
  char first[1024];
  const int messages = console_messages(r->log, first, sizeof first);
  cr_expect_eq(messages, 0, "%d console messages, the first: %s", messages, first);
  cr_expect_eq(check_plots(r->dom, 4), expected_plots, "plots in the page");
  check_png(png);
}

// --- the tests -----------------------------------------------------------------------------------

Test(report_html, loads_in_chromium_without_console_messages_and_draws_every_plot) {
  need_chromium();
  char out[128], err[128];
  snprintf(out, sizeof out, "%s/stdout", tmp);
  snprintf(err, sizeof err, "%s/stderr", tmp);
  const char *argv[] = {C1D_TEST_CONVLAB, "run", "--batch", "2", "--cin", "16", "--cout", "12", "--length", "300",
                        "--taps", "3", "--dilation", "2", "--bias", "--trials", "2",
                        "--impl", "naive,tap_partial,kahan,tf32_inputs", "--out", KEEP_DIR "/run", "--html", NULL};
  const int code = c1d_test_spawn(argv, out, err);
  char *log = c1d_test_slurp(err, NULL);
  cr_assert_eq(code, 0, "convlab run --html exited with %d: %s", code, log ? log : "");
  free(log);
  size_t size = 0;
  char *html = c1d_test_slurp(KEEP_DIR "/run/report.html", &size);
  cr_assert_not_null(html, "convlab wrote no report.html");
  cr_expect_leq(size, 150000u, "4 implementations should take well under 150 KB (got %zu)", size);
  static const char *const sections[] = {"id=\"impl-naive\"", "id=\"impl-tap_partial\"", "id=\"impl-kahan\"",
                                         "id=\"impl-tf32_inputs\"", "id=\"tf32\"", "tf32-inputs",
                                         "fp32-rounding"};
  for (unsigned i = 0; i < sizeof sections / sizeof sections[0]; i++)
    cr_expect(strstr(html, sections[i]), "the page lacks %s", sections[i]);
  free(html);
  rendering r;
  check_page(KEEP_DIR "/run/report.html", "run", 2 + 4 * 4, &r); /* TF32 panel, then 4 per row */
  cr_expect(strstr(r.dom, "TF32 model"), "the TF32 panel lacks the model's line");
  rendering_free(&r);
}

static const c1d_impl *zoo_impl(const char *name) {
  for (int i = 0; i < c1d_cpu_zoo_count; i++)
    if (strcmp(c1d_cpu_zoo[i].impl->name, name) == 0) return c1d_cpu_zoo[i].impl;
  cr_assert_fail("no %s in the zoo", name);
  return NULL;
}

/* Two mutants among correct rows; naive twice: the second time its section points to the first's plots. */
Test(report_html, shows_a_localized_bug_with_its_region_and_plots_a_twin_once) {
  need_chromium();
  const c1d_impl *impls[] = {c1d_find_impl("naive"), c1d_find_impl("tf32_inputs"), zoo_impl("zoo_left_padding"),
                             zoo_impl("zoo_channel_weights"), c1d_find_impl("naive")};
  c1d_run_config cfg;
  c1d_run_results res;
  c1d_run_config_default(&cfg);
  cfg.shape = (c1d_shape){2, 32, 16, 512, 4, 1, 0};
  cfg.impls = impls;
  cfg.n_impls = 5;
  cfg.repeats = 1;
  cr_assert_eq(c1d_run(&cfg, &res), C1D_OK, "%s", c1d_error_detail());
  char path[128];
  snprintf(path, sizeof path, KEEP_DIR "/zoo.html");
  FILE *f = fopen(path, "w");
  cr_assert_not_null(f);
  const c1d_report_meta meta = {"tests/test_report_html (in-process: two zoo mutants, naive twice)", NULL, NULL,
                                NULL, NULL, NULL, 0};
  c1d_report_html(f, &meta, &res);
  cr_assert_eq(fclose(f), 0);
  c1d_run_results_free(&res);
  rendering r;
  check_page(path, "zoo", 2 + 4 * 4, &r);
  cr_expect(strstr(r.dom, ">bug-localized<"), "no bug-localized verdict in the page");
  cr_expect(strstr(r.dom, "<b>Where:</b>"), "the bug's region is not shown");
  cr_expect(strstr(r.dom, "<a href=\"#impl-naive\">naive</a>'s: almost surely the same outputs"),
            "the second naive row does not point to the first one's plots");
  rendering_free(&r);
}

/* The console check is not vacuous: a page that logs and throws is caught. */
Test(report_html, console_check_catches_a_page_that_throws) {
  need_chromium();
  char path[128];
  snprintf(path, sizeof path, "%s/broken.html", tmp);
  FILE *f = fopen(path, "w");
  cr_assert_not_null(f);
  fputs("<!DOCTYPE html><html><body><p>broken</p><script>undefined_function();</script></body></html>\n", f);
  cr_assert_eq(fclose(f), 0);
  rendering r;
  char png[160], first[1024];
  snprintf(png, sizeof png, "%s/broken.png", tmp);
  render(path, png, &r);
  cr_expect_gt(console_messages(r.log, first, sizeof first), 0, "the thrown error went unnoticed");
  cr_expect(strstr(first, "undefined_function"), "first message: %s", first);
  rendering_free(&r);
}

Test(report_html, html_without_out_is_a_usage_error) {
  char out[128], err[128];
  snprintf(out, sizeof out, "%s/stdout", tmp);
  snprintf(err, sizeof err, "%s/stderr", tmp);
  const char *argv[] = {C1D_TEST_CONVLAB, "run", "--html", "--impl", "naive", NULL};
  cr_expect_eq(c1d_test_spawn(argv, out, err), 2);
  char *log = c1d_test_slurp(err, NULL);
  cr_expect(log && strstr(log, "--html needs --out"), "stderr: %s", log ? log : "");
  free(log);
}

// --- svg.h ---------------------------------------------------------------------------------------

/* The SVG text of one small plot, drawn by draw() (caller frees). */
static char *plot_text(void (*draw)(c1d_svg_plot *p), c1d_svg_axis x, c1d_svg_axis y) {
  FILE *f = tmpfile();
  cr_assert_not_null(f);
  c1d_svg_plot p;
  c1d_svg_begin(&p, f, 400, 200, "t<i>tle & more", x, y);
  draw(&p);
  c1d_svg_end(&p);
  const long len = ftell(f);
  char *text = malloc((size_t)len + 1);
  cr_assert_not_null(text);
  rewind(f);
  cr_assert_eq(fread(text, 1, (size_t)len, f), (size_t)len);
  text[len] = '\0';
  fclose(f);
  return text;
}

static void draw_broken_line(c1d_svg_plot *p) {
  const double x[6] = {1, 2, 3, 4, 5, 6}, y[6] = {1e-3, 1e-2, 0.0, 1e-4, NAN, 1e-5};
  c1d_svg_line(p, 6, x, y, "mean");
  cr_expect_eq(p->marks, 4, "the zero and the NaN are not drawn");
}

Test(svg, breaks_a_line_where_a_log_axis_cannot_draw) {
  char *s = plot_text(draw_broken_line, (c1d_svg_axis){C1D_SVG_LINEAR, 0, 7, "x", NULL, 0},
                      (c1d_svg_axis){C1D_SVG_LOG, 1e-6, 0.1, "y", NULL, 0});
  const char *d = strstr(s, "<path class=\"mean\" d=\"");
  cr_assert_not_null(d);
  cr_expect_eq(count_in(d, strchr(d + 22, '"'), "M"), 3, "three pieces: %s", d);
  cr_expect_eq(count_in(d, strchr(d + 22, '"'), "h0.1"), 2, "the lone points become dots: %s", d);
  cr_expect(strstr(s, "t&lt;i&gt;tle &amp; more"), "the title is escaped");
  free(s);
}

static void draw_nothing(c1d_svg_plot *p) { (void)p; }

Test(svg, labels_a_log_axis_at_powers_of_ten) {
  char *s = plot_text(draw_nothing, (c1d_svg_axis){C1D_SVG_LOG, 3e-7, 2e-3, "x", NULL, 0},
                      (c1d_svg_axis){C1D_SVG_LINEAR, 0, 25, "y", NULL, 0});
  static const char *const labels[] = {">1e-7<", ">1e-6<", ">1e-5<", ">1e-4<", ">1e-3<", ">0.01<",
                                       ">0<", ">5<", ">10<", ">25<"};
  for (unsigned i = 0; i < sizeof labels / sizeof labels[0]; i++)
    cr_expect(strstr(s, labels[i]), "no tick %s in %s", labels[i], s);
  free(s);
}

// --- issue 23: the summary in plain words, the detection limit once, what a run leaves out ----------

extern const c1d_impl c1d_cpu_grouped_naive;

/* The page of an in-process run of impls on s, as text (caller frees). */
static char *page_of(const c1d_impl *const *impls, int n, c1d_shape s) {
  c1d_run_config cfg;
  c1d_run_results res;
  c1d_run_config_default(&cfg);
  cfg.shape = s;
  cfg.impls = impls;
  cfg.n_impls = n;
  cfg.repeats = 1;
  cfg.oracle = C1D_ORACLE_CPU;
  cr_assert_eq(c1d_run(&cfg, &res), C1D_OK, "%s", c1d_error_detail());
  char *buf = NULL;
  size_t size = 0;
  FILE *f = open_memstream(&buf, &size);
  const c1d_report_meta meta = {"tests/test_report_html (in-process)", NULL, NULL, NULL, NULL, NULL, 0};
  c1d_report_html(f, &meta, &res);
  fclose(f);
  c1d_run_results_free(&res);
  return buf;
}

static int occurrences(const char *text, const char *needle) {
  int n = 0;
  for (const char *p = strstr(text, needle); p; p = strstr(p + 1, needle)) n++;
  return n;
}

Test(report_html, summary_says_each_verdict_in_plain_words_and_the_detection_limit_once) {
  const c1d_impl *impls[] = {c1d_find_impl("naive"), c1d_find_impl("tap_partial"), c1d_find_impl("kahan")};
  char *html = page_of(impls, 3, (c1d_shape){.N = 1, .C = 16, .O = 8, .L = 256, .K = 4, .D = 1});
  const char *summary = strstr(html, "<h2>Summary</h2>"), *end = summary ? strstr(summary, "</table>") : NULL;
  cr_assert(summary && end, "no summary table");
  static const char first[] = "Not a bug: rounding, consistent with float32 accumulation in some order (fp32-rounding).";
  int in_summary = 0;
  for (const char *p = strstr(summary, first); p && p < end; p = strstr(p + 1, first)) in_summary++;
  cr_expect_eq(in_summary, 3, "each row's verdict in the console's plain words (explain's first line)");
  cr_expect_eq(occurrences(html, "etection limit"), 1, "the detection limit is said once, not per row and section");
  cr_expect(strstr(html, "<p><b>Detection limit</b> (each row that is not a bug): no error beyond rounding larger "
                         "than ") != NULL,
            "the one detection limit, under the summary");
  free(html);
}

Test(report_html, a_default_run_shows_the_gpu_rows_it_leaves_out_in_one_line) {
  if (!c1d_backend_unavailable(C1D_BACKEND_GPU)) cr_skip_test("this machine runs the GPU rows: none left out");
  const c1d_impl *impls[64];
  int n = 0, k = 0, count = 0;
  const c1d_impl *const *table = c1d_registry(&n);
  for (int i = 0; i < n && k < 64; i++)
    if (table[i]->tier == C1D_TIER_MAIN && !c1d_impl_unavailable(table[i])) impls[k++] = table[i];
  char *html = page_of(impls, k, (c1d_shape){.N = 1, .C = 8, .O = 4, .L = 64, .K = 4, .D = 1});
  const char *const *names = c1d_gpu_main_names(&count);
  char line[512];
  snprintf(line, sizeof line, "GPU rows (%s, %s, %s, ... %d in all): not run: %s</td></tr>", names[0], names[1],
           names[2], count, c1d_backend_unavailable(C1D_BACKEND_GPU));
  cr_expect(strstr(html, line) != NULL, "the summary lacks '%s'", line);
  free(html);
}

Test(report_html, a_bf16_page_says_its_bounds_hold_the_output_rounding_and_shows_no_tf32_model) {
  const c1d_impl *impls[] = {&c1d_cpu_grouped_naive};
  const c1d_dtypes bf16 = {C1D_DTYPE_BF16, C1D_DTYPE_BF16, C1D_DTYPE_F32, C1D_DTYPE_F32, C1D_DTYPE_BF16};
  char *html = page_of(impls, 1, (c1d_shape){.N = 1, .C = 64, .O = 16, .L = 256, .K = 4, .D = 1, .dt = bf16});
  cr_expect(strstr(html, "each plus half an ulp of bf16") != NULL, "the header says the bounds hold y's rounding");
  cr_expect(strstr(html, "no TF32 model applies") != NULL, "the TF32 panel says no TF32 model applies");
  cr_expect(strstr(html, ">TF32 model</text>") == NULL, "no TF32 model line");
  free(html);
}
