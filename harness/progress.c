/* The progress line (progress.h). One thread redraws it twice a second on a terminal, so that a step of
 * minutes (the headline shape on a CPU) still shows the time going down, or prints it as a plain line
 * every interval elsewhere; the worker's calls and the ticker share one mutex, and the terminal's line
 * is cleared before anything else may print. */
#include "harness/progress.h"

#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "harness/escape.h"

#define REDRAW_NS 500000000L /* twice a second */
#define WITHIN_CAP 0.95      /* an estimated step is never drawn as finished before it is */

struct c1d_progress {
  FILE *f;
  int plain;                          /* not a terminal: whole lines every log_s seconds, no redrawing */
  double log_s, next_log;             /* the interval and when the next plain line is due (seconds) */
  char who[64], step[200];
  double total, done, weight, within; /* within: -1 when the step does not report its fraction */
  int in_seconds;
  double t0, step_t0;                 /* start of the job and of the current step (seconds) */
  pthread_mutex_t lock;
  pthread_cond_t wake;
  pthread_t ticker;
  int stop, has_ticker;
};

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

double c1d_process_age_s(void) {
  char text[1024];
  double up = 0.0;
  FILE *f = fopen("/proc/uptime", "r");
  const int have_up = f && fscanf(f, "%lf", &up) == 1;
  if (f) fclose(f);
  f = fopen("/proc/self/stat", "r");
  const size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
  if (f) fclose(f);
  text[n] = '\0';
  const char *p = strrchr(text, ')'); /* the command's name may hold spaces and brackets */
  if (!have_up || !p) return 0.0;
  /* after the name: field 3 (state) on; starttime is field 22, in clock ticks since boot */
  unsigned long long start = 0;
  int field = 2;
  for (const char *q = p + 1; *q && field < 22; q++)
    if (*q == ' ' && q[1] != ' ' && ++field == 22 && sscanf(q + 1, "%llu", &start) != 1) return 0.0;
  const long hz = sysconf(_SC_CLK_TCK);
  if (field != 22 || hz <= 0) return 0.0;
  const double age = up - (double)start / (double)hz;
  return age > 0.0 && age < 1e7 ? age : 0.0;
}

void c1d_format_duration(double s, char *buf, size_t size) {
  if (!(s >= 0.0) || !isfinite(s))
    snprintf(buf, size, "?");
  else if (s < 9.95)
    snprintf(buf, size, "%.1f s", s);
  else if (s < 59.5)
    snprintf(buf, size, "%.0f s", s);
  else if (s < 3600.0 - 0.5) {
    const long r = lround(s);
    snprintf(buf, size, "%ld min %02ld s", r / 60, r % 60);
  } else {
    const long m = lround(s / 60.0);
    snprintf(buf, size, "%ld h %02ld min", m / 60, m % 60);
  }
}

/* Weight completed so far, counting the current step's share, and the time left (NAN: unknown). The
 * speed is the completed steps' weight per second; in seconds it starts at the estimate's own 1, as if
 * a fifth of the job had gone exactly as estimated, so that one quick or slow first step does not
 * swing the time left. */
static void position(const c1d_progress *p, double now, double *done, double *left) {
  const double before_s = p->step_t0 - p->t0, in_step = now - p->step_t0;
  const double weight = p->weight > 0.0 ? p->weight : 0.0, prior = 0.2 * p->total;
  double speed = p->in_seconds                          ? (p->done + prior) / (before_s + prior)
                 : p->done > 0.0 && before_s > 0.0 ? p->done / before_s
                                                       : NAN;
  double share = 0.0;
  if (p->within >= 0.0)
    share = p->within;
  else if (!isnan(speed) && weight > 0.0)
    share = fmin(in_step * speed / weight, WITHIN_CAP);
  *done = fmin(p->done + share * weight, p->total);
  if (isnan(speed) && *done > 0.0 && now > p->t0) speed = *done / (now - p->t0);
  *left = isnan(speed) || speed <= 0.0 ? NAN : (p->total - *done) / speed;
}

/* The line, as one write: a plain line in a log, else redrawn over the previous one. */
static void draw(c1d_progress *p) {
  double done, left;
  char when[48] = "", line[400];
  position(p, now_s(), &done, &left);
  if (!isnan(left)) {
    char d[24];
    c1d_format_duration(left, d, sizeof d);
    snprintf(when, sizeof when, ", about %s left", d);
  }
  const double pct = p->total > 0.0 ? 100.0 * done / p->total : 0.0;
  snprintf(line, sizeof line, "%s%s: %.0f%%%s: %s%s", p->plain ? "" : "\r\033[K", p->who, pct, when, p->step,
           p->plain ? "\n" : "");
  fputs(line, p->f);
  fflush(p->f);
}

/* Wakes twice a second on a terminal; in a log, at the next plain line's time (the wait may end early:
 * a spurious wake-up only loops). */
static void *tick(void *arg) {
  c1d_progress *p = arg;
  pthread_mutex_lock(&p->lock);
  while (!p->stop) {
    long wait_ns = REDRAW_NS;
    if (p->plain) {
      const double due = p->next_log - now_s();
      wait_ns = due <= 0.0 ? 0 : due > 3600.0 ? 3600L * 1000000000L : (long)(due * 1e9);
    }
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += wait_ns / 1000000000L;
    until.tv_nsec += wait_ns % 1000000000L;
    if (until.tv_nsec >= 1000000000L) {
      until.tv_sec++;
      until.tv_nsec -= 1000000000L;
    }
    pthread_cond_timedwait(&p->wake, &p->lock, &until);
    if (p->stop) break;
    if (!p->plain) {
      draw(p);
    } else if (now_s() >= p->next_log) {
      draw(p);
      p->next_log += p->log_s;
      if (p->next_log < now_s()) p->next_log = now_s() + p->log_s; /* after a stall: one line, not a burst */
    }
  }
  pthread_mutex_unlock(&p->lock);
  return NULL;
}

/* C1D_PROGRESS_LOG_S from the environment when it holds a positive number, else the default. */
static double log_interval(void) {
  const char *text = getenv("C1D_PROGRESS_LOG_S");
  char *end = NULL;
  const double v = text ? strtod(text, &end) : NAN;
  return text && end != text && *end == '\0' && v > 0.0 && isfinite(v) ? v : C1D_PROGRESS_LOG_S;
}

c1d_progress *c1d_progress_start(FILE *f, const char *who, double total, int in_seconds) {
  if (!f) return NULL;
  c1d_progress *p = calloc(1, sizeof *p);
  if (!p) return NULL;
  p->f = f;
  p->plain = !isatty(fileno(f));
  p->log_s = log_interval();
  snprintf(p->who, sizeof p->who, "%s", who);
  p->total = total > 0.0 ? total : 0.0;
  p->in_seconds = in_seconds;
  p->within = -1.0;
  p->t0 = p->step_t0 = now_s();
  p->next_log = p->t0 + p->log_s;
  pthread_mutex_init(&p->lock, NULL);
  pthread_cond_init(&p->wake, NULL);
  p->has_ticker = pthread_create(&p->ticker, NULL, tick, p) == 0;
  return p;
}

void c1d_progress_step(c1d_progress *p, double weight, const char *fmt, ...) {
  if (!p) return;
  va_list ap;
  pthread_mutex_lock(&p->lock);
  p->done += p->weight > 0.0 ? p->weight : 0.0;
  p->weight = weight;
  p->within = -1.0;
  p->step_t0 = now_s();
  char raw[sizeof p->step];
  va_start(ap, fmt);
  vsnprintf(raw, sizeof raw, fmt, ap);
  va_end(ap);
  c1d_escape_text(raw, p->step, sizeof p->step); /* a row may be named after a file */
  if (!p->plain) draw(p);
  pthread_mutex_unlock(&p->lock);
}

void c1d_progress_within(c1d_progress *p, double fraction) {
  if (!p) return;
  pthread_mutex_lock(&p->lock);
  p->within = fraction < 0.0 ? 0.0 : fraction > 1.0 ? 1.0 : fraction;
  pthread_mutex_unlock(&p->lock);
}

void c1d_progress_end(c1d_progress *p) {
  if (!p) return;
  pthread_mutex_lock(&p->lock);
  p->stop = 1;
  pthread_cond_signal(&p->wake);
  pthread_mutex_unlock(&p->lock);
  if (p->has_ticker) pthread_join(p->ticker, NULL);
  if (!p->plain) {
    fputs("\r\033[K", p->f);
    fflush(p->f);
  }
  pthread_mutex_destroy(&p->lock);
  pthread_cond_destroy(&p->wake);
  free(p);
}
