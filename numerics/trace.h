/* C1D_TRACE_TIMES=1: each stage of an explanation and of the models it builds prints its wall time on
 * stderr ("time: +T STAGE 0.123 s", T: seconds since the first stage began), for whoever makes the explainer faster. Off, it costs one getenv. */
#ifndef C1D_NUMERICS_TRACE_H
#define C1D_NUMERICS_TRACE_H

/* The clock for stage times, in seconds. */
double c1d_trace_now(void);
/* Prints the time since *since under stage's name when tracing is on, and restarts *since. */
void c1d_trace_stage(const char *stage, double *since);

#endif
