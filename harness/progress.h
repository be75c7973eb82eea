/* A live progress line for long work on stderr: what runs, how far the whole job is, and the time left.
 * On a terminal it is redrawn in place at every step and twice a second in between:
 *
 *   convlab run: 37%, about 41 s left: trial 2/5, kahan (4 runs)
 *
 * Anywhere else (a pipe, a log, CI, a notebook) the same text is printed as a plain line, no redrawing,
 * every C1D_PROGRESS_LOG_S seconds (10 s; the environment variable of that name sets another interval,
 * for tests): the first after one interval, so work shorter than that prints none. The callers start a
 * line off a terminal only for work long enough to be announced (the tests and users read clean
 * output of short runs).
 *
 * The job is a sequence of steps, each with a weight in one unit: estimated seconds (c1d_run_estimate)
 * or plain work such as flops. The time left is the remaining weight over the speed observed so far
 * (completed weight per second); before any step has completed it is the estimate itself in seconds,
 * and unknown in other units. Within a step the line advances by the reported fraction, or else by the
 * elapsed time at the observed speed, never past the step's end. */
#ifndef C1D_PROGRESS_H
#define C1D_PROGRESS_H

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct c1d_progress c1d_progress;

#define C1D_PROGRESS_LOG_S 10.0 /* seconds between the plain lines off a terminal (10-15 s asked) */

/* A progress line on f for a job of weight `total` (in seconds when in_seconds), prefixed "who: ":
 * redrawn on a terminal, plain lines every C1D_PROGRESS_LOG_S seconds elsewhere. NULL (and every call
 * below does nothing with NULL) when f is NULL or when out of memory: progress is never worth failing
 * for. */
c1d_progress *c1d_progress_start(FILE *f, const char *who, double total, int in_seconds);

/* The previous step is done; a new one of this weight begins, described by fmt. */
void c1d_progress_step(c1d_progress *p, double weight, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* How far the current step is, 0..1 (for steps that know, such as the CPU oracle). */
void c1d_progress_within(c1d_progress *p, double fraction);

/* Clears the line (on a terminal), stops the redrawing and frees p. NULL does nothing. */
void c1d_progress_end(c1d_progress *p);

/* Seconds since this process started (Linux: /proc/self/stat against /proc/uptime, 10 ms ticks; the
 * program's loading and its libraries' included), or 0 where that cannot be read. Announced times count
 * from there: what a user's `time` measures. */
double c1d_process_age_s(void);

/* A duration for people: "0.4 s", "12 s", "2 min 05 s", "1 h 12 min". */
void c1d_format_duration(double seconds, char *buf, size_t size);

#ifdef __cplusplus
}
#endif
#endif
