/* gpu_dw_fast's vector kernels for bf16 x (gpu/dw_fast_kernels.h): one element type a file, so that
 * the three compile side by side. */
#include "gpu/dw_fast_kernels.h"

dw_kernel_fn c1d_dw_fast_pick_bf16(dw_path path, int64_t K, bool plain) {
  return dw_pick<C1D_DTYPE_BF16>(path, K, plain);
}
