/* The registry: one table of every implementation (registry.c). Adding an implementation is one new
 * file exporting a c1d_impl (reference/impl.h) and one line in that table; the runner never names an
 * implementation. */
#ifndef C1D_REGISTRY_H
#define C1D_REGISTRY_H

#include "reference/impl.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Every registered implementation, mutants last; *count receives the length. */
const c1d_impl *const *c1d_registry(int *count);

/* The implementation of that name, or NULL. */
const c1d_impl *c1d_find_impl(const char *name);

/* NULL when impl can run on this machine; else why not ("no CUDA device: ...", "built without CUDA"). */
const char *c1d_impl_unavailable(const c1d_impl *impl);

/* The same for every implementation of a backend: NULL, or why its rows cannot run here. */
const char *c1d_backend_unavailable(c1d_backend backend);

/* The names of the main-tier GPU implementations of a CUDA build, in table order, in every build: one
 * without CUDA has no GPU descriptors, yet its reports say which rows it leaves out (report.h,
 * c1d_report_unavailable). *count receives the length. */
const char *const *c1d_gpu_main_names(int *count);

#ifdef __cplusplus
}
#endif
#endif
