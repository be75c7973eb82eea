/* gpu_dw_fast's vector kernels for f32 x (gpu/dw_fast_kernels.h): one element type a file, so that
 * the three compile side by side. */
#include "gpu/dw_fast_kernels.h"

dw_kernel_fn c1d_dw_fast_pick_f32(dw_path path, int64_t K, bool plain) {
  return dw_pick<C1D_DTYPE_F32>(path, K, plain);
}
