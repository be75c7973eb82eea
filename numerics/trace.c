#include "numerics/trace.h"

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

double c1d_trace_now(void) { return omp_get_wtime(); }

void c1d_trace_stage(const char *stage, double *since) {
  static int on = -1;
  static double first; /* the first stage's start: each line says when its stage ended */
  if (on < 0) on = getenv("C1D_TRACE_TIMES") != NULL, first = *since; /* once: the stages run on one thread */
  const double now = omp_get_wtime();
  if (on) fprintf(stderr, "time: +%.3f %s %.3f s\n", now - first, stage, now - *since);
  *since = now;
}
