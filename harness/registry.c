/* The table of implementations. One extern and one table line per implementation; GPU lines exist
 * whenever the build has CUDA (a machine without a device lists them as unavailable, with the reason).
 * Each carries its tier (reference/impl.h); the bug zoo's mutants (tests/zoo) follow the table, tier
 * mutant. */
#include "harness/registry.h"

#include <pthread.h>
#include <string.h>

#include "tests/zoo/zoo.h"
#ifdef C1D_HAVE_CUDA
#include "gpu/device.h"
#include "tests/zoo/gpu_zoo.h"
#endif

// --- CPU implementations (cpu/) ----------------------------------------------------------------
extern const c1d_impl c1d_cpu_naive, c1d_cpu_tap_partial, c1d_cpu_kahan, c1d_cpu_tf32_inputs, c1d_cpu_onednn_fp32;
/* CPU twins of the fast kernels (issue 8) */
extern const c1d_impl c1d_cpu_kahan_blocked, c1d_cpu_split_3xtf32;
/* the operator as people write it (issue 15): groups, depthwise, states, SiLU, bf16/fp16 tensors */
extern const c1d_impl c1d_cpu_grouped_naive, c1d_cpu_bf16_products, c1d_cpu_fp16_accumulation;

// --- GPU implementations (gpu/) ----------------------------------------------------------------
#ifdef C1D_HAVE_CUDA
/* the story's kernels, each the bit-exact twin of a CPU implementation, and the float64 oracle */
extern const c1d_impl c1d_gpu_naive, c1d_gpu_tap_partial, c1d_gpu_kahan, c1d_gpu_tiled_smem,
    c1d_gpu_oracle_f64_impl;
/* library baselines (cuDNN, cuBLAS) and the TF32 model on the GPU */
extern const c1d_impl c1d_gpu_cudnn_fp32, c1d_gpu_cudnn_tf32, c1d_gpu_cudnn_fp32_fastest,
    c1d_gpu_cudnn_tf32_fastest, c1d_gpu_cudnn_fp32_det, c1d_gpu_cudnn_tf32_det, c1d_gpu_cublas_im2col_fp32,
    c1d_gpu_cublas_im2col_tf32, c1d_gpu_cublas_fp32_best, c1d_gpu_cublas_tf32_best,
    c1d_gpu_tf32_inputs;
/* the fast kernels: register-tiled FP32 and Kahan, TF32 and 3xTF32 tensor cores (Hopper wgmma) */
extern const c1d_impl c1d_gpu_fp32_fast, c1d_gpu_kahan_fast, c1d_gpu_tf32, c1d_gpu_3xtf32;
/* depthwise and grouped kernels, twins of grouped_naive (issue 16), and cuDNN on bf16/fp16 data */
extern const c1d_impl c1d_gpu_dw_naive, c1d_gpu_dw_fast, c1d_gpu_grouped, c1d_gpu_cudnn_lowp,
    c1d_gpu_cudnn_lowp_fastest;
#endif

static const c1d_impl *const table[] = {
    &c1d_cpu_naive,
    &c1d_cpu_tap_partial,
    &c1d_cpu_kahan,
    &c1d_cpu_tf32_inputs,
    &c1d_cpu_onednn_fp32,
    &c1d_cpu_kahan_blocked,
    &c1d_cpu_split_3xtf32,
    &c1d_cpu_grouped_naive,
    &c1d_cpu_bf16_products,
    &c1d_cpu_fp16_accumulation,
#ifdef C1D_HAVE_CUDA
    &c1d_gpu_naive,
    &c1d_gpu_tap_partial,
    &c1d_gpu_kahan,
    &c1d_gpu_tiled_smem,
    &c1d_gpu_oracle_f64_impl,
    &c1d_gpu_tf32_inputs,
    &c1d_gpu_cudnn_fp32,
    &c1d_gpu_cudnn_tf32,
    &c1d_gpu_cudnn_fp32_fastest,
    &c1d_gpu_cudnn_tf32_fastest,
    &c1d_gpu_cudnn_fp32_det,
    &c1d_gpu_cudnn_tf32_det,
    &c1d_gpu_cublas_im2col_fp32,
    &c1d_gpu_cublas_im2col_tf32,
    &c1d_gpu_cublas_fp32_best,
    &c1d_gpu_cublas_tf32_best,
    &c1d_gpu_fp32_fast,
    &c1d_gpu_kahan_fast,
    &c1d_gpu_tf32,
    &c1d_gpu_3xtf32,
    &c1d_gpu_dw_naive,
    &c1d_gpu_dw_fast,
    &c1d_gpu_grouped,
    &c1d_gpu_cudnn_lowp,
    &c1d_gpu_cudnn_lowp_fastest,
#endif
};

enum { N_TABLE = sizeof table / sizeof table[0], MAX_MUTANTS = 64 };
static const c1d_impl *everything[N_TABLE + MAX_MUTANTS];
static int n_everything;
static pthread_once_t built = PTHREAD_ONCE_INIT;

/* The table, then the zoo's mutants (their arrays are not constant expressions of pointers). */
static void build(void) {
  for (int i = 0; i < N_TABLE; i++) everything[n_everything++] = table[i];
  for (int i = 0; i < c1d_cpu_zoo_count && n_everything < N_TABLE + MAX_MUTANTS; i++)
    everything[n_everything++] = c1d_cpu_zoo[i].impl;
  for (int i = 0; i < c1d_lowp_zoo_count && n_everything < N_TABLE + MAX_MUTANTS; i++)
    if (c1d_lowp_zoo[i].impl->tier == C1D_TIER_MUTANT) everything[n_everything++] = c1d_lowp_zoo[i].impl;
#ifdef C1D_HAVE_CUDA
  for (int i = 0; i < c1d_gpu_zoo_count && n_everything < N_TABLE + MAX_MUTANTS; i++)
    everything[n_everything++] = c1d_gpu_zoo[i].impl;
  for (int i = 0; i < c1d_gpu_lowp_zoo_count && n_everything < N_TABLE + MAX_MUTANTS; i++)
    everything[n_everything++] = c1d_gpu_lowp_zoo[i].impl;
#endif
}

const c1d_impl *const *c1d_registry(int *count) {
  pthread_once(&built, build);
  *count = n_everything;
  return everything;
}

const c1d_impl *c1d_find_impl(const char *name) {
  int n = 0;
  const c1d_impl *const *all = c1d_registry(&n);
  for (int i = 0; i < n; i++)
    if (strcmp(all[i]->name, name) == 0) return all[i];
  return NULL;
}

const char *c1d_backend_unavailable(c1d_backend backend) {
  if (backend == C1D_BACKEND_CPU) return NULL;
#ifdef C1D_HAVE_CUDA
  return c1d_gpu_unavailable();
#else
  return "built without CUDA (nvcc was not found at configure time)";
#endif
}

const char *c1d_impl_unavailable(const c1d_impl *impl) { return c1d_backend_unavailable(impl->backend); }

// --- the GPU rows by name --------------------------------------------------------------------------

/* The names of the table's main-tier GPU lines, in its order (the two *_det lines are variants). A build
 * without CUDA has no descriptors to read them from, so they are written here; in a CUDA build the test
 * reports_unavailable.names_every_main_gpu_row_of_a_cuda_build (tests/test_reports.c) holds this list
 * to the table. */
static const char *const gpu_main_names[] = {
    "gpu_naive", "gpu_tap_partial", "gpu_kahan", "gpu_tiled_smem", "gpu_oracle_f64", "gpu_tf32_inputs",
    "cudnn_fp32", "cudnn_tf32", "cudnn_fp32_fastest", "cudnn_tf32_fastest", "cublas_im2col_fp32",
    "cublas_im2col_tf32", "cublas_fp32_best", "cublas_tf32_best", "gpu_fp32_fast", "gpu_kahan_fast",
    "gpu_tf32", "gpu_3xtf32", "gpu_dw_naive", "gpu_dw_fast", "gpu_grouped", "cudnn_lowp", "cudnn_lowp_fastest",
};

const char *const *c1d_gpu_main_names(int *count) {
  *count = (int)(sizeof gpu_main_names / sizeof gpu_main_names[0]);
  return gpu_main_names;
}
