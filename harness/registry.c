/* The table of implementations. One extern and one table line per implementation; GPU lines exist
 * whenever the build has CUDA (a machine without a device lists them as unavailable, with the reason). */
#include "harness/registry.h"

#include <string.h>

#ifdef C1D_HAVE_CUDA
#include "gpu/device.h"
#endif

// --- CPU implementations (cpu/) ----------------------------------------------------------------
extern const c1d_impl c1d_cpu_naive, c1d_cpu_tap_partial, c1d_cpu_kahan, c1d_cpu_tf32_inputs;
/* CPU twins of the fast kernels (issue 8) */
extern const c1d_impl c1d_cpu_kahan_blocked, c1d_cpu_split_3xtf32;

// --- GPU implementations (gpu/) ----------------------------------------------------------------
#ifdef C1D_HAVE_CUDA
/* the story's kernels, each the bit-exact twin of a CPU implementation, and the float64 oracle */
extern const c1d_impl c1d_gpu_naive, c1d_gpu_tap_partial, c1d_gpu_kahan, c1d_gpu_tiled_smem,
    c1d_gpu_oracle_f64_impl;
/* library baselines (cuDNN, cuBLAS) and the TF32 model on the GPU */
extern const c1d_impl c1d_gpu_cudnn_fp32, c1d_gpu_cudnn_tf32, c1d_gpu_cudnn_fp32_fastest,
    c1d_gpu_cudnn_tf32_fastest, c1d_gpu_cudnn_fp32_det, c1d_gpu_cudnn_tf32_det, c1d_gpu_cublas_im2col_fp32,
    c1d_gpu_cublas_im2col_tf32, c1d_gpu_tf32_inputs;
/* the fast kernels: register-tiled FP32 and Kahan, TF32 and 3xTF32 tensor cores (Hopper wgmma; the
 * _smem_a variants stage the im2col of x in shared memory) */
extern const c1d_impl c1d_gpu_fp32_fast, c1d_gpu_kahan_fast, c1d_gpu_tf32, c1d_gpu_3xtf32,
    c1d_gpu_tf32_smem_a, c1d_gpu_3xtf32_smem_a;
#endif

static const c1d_impl *const table[] = {
    &c1d_cpu_naive,
    &c1d_cpu_tap_partial,
    &c1d_cpu_kahan,
    &c1d_cpu_tf32_inputs,
    &c1d_cpu_kahan_blocked,
    &c1d_cpu_split_3xtf32,
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
    &c1d_gpu_fp32_fast,
    &c1d_gpu_kahan_fast,
    &c1d_gpu_tf32,
    &c1d_gpu_3xtf32,
    &c1d_gpu_tf32_smem_a,
    &c1d_gpu_3xtf32_smem_a,
#endif
};

const c1d_impl *const *c1d_registry(int *count) {
  *count = (int)(sizeof table / sizeof table[0]);
  return table;
}

const c1d_impl *c1d_find_impl(const char *name) {
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
    if (strcmp(table[i]->name, name) == 0) return table[i];
  return NULL;
}

const char *c1d_impl_unavailable(const c1d_impl *impl) {
  if (impl->backend == C1D_BACKEND_CPU) return NULL;
#ifdef C1D_HAVE_CUDA
  return c1d_gpu_unavailable();
#else
  return "built without CUDA (nvcc was not found at configure time)";
#endif
}
