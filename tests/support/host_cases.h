/* Shared by the GPU test suites: a registered implementation by name, the skip when no CUDA device is
 * usable, a host-side case (generated inputs, two float32 output buffers, optionally the float64
 * oracle), and one run of an implementation on the device from such a case. Allocation failures are assertion failures. */
#ifndef C1D_TEST_HOST_CASES_H
#define C1D_TEST_HOST_CASES_H

#include "harness/inputs.h"
#include "reference/impl.h"

/* The registered implementation called name; asserts that there is one. */
const c1d_impl *impl_named(const char *name);

/* Skips the calling test, with the reason, when no CUDA device is usable. */
void skip_without_device(void);

typedef struct host_case {
  float *x, *w, *b;  /* b is NULL without bias */
  float *y, *twin;   /* outputs: a kernel's, and what it is compared with */
  double *ref;       /* the oracle's y, or NULL */
} host_case;

/* Inputs of dist and seed for shape s, both output buffers, and the oracle's y when with_oracle. */
host_case make_host_case(const c1d_shape *s, c1d_dist dist, uint64_t seed, int with_oracle);
void free_host_case(host_case *h);

/* Fails, naming the first element (n, o, t) whose bits differ, unless a and b (y-shaped) are
 * identical bit for bit. */
void assert_same_bits(const char *what, const c1d_shape *s, const float *a, const float *b);

#ifdef C1D_HAVE_CUDA
/* Uploads h's inputs, poisons a device y, runs impl's setup/run/teardown once and downloads y into
 * h->y; asserts every step. ex (may be NULL) keeps what the implementation reported. */
void run_on_gpu(const c1d_impl *impl, const c1d_shape *s, host_case *h, c1d_exec *ex);
#endif

#endif
