/* gpu_dw_fast (gpu/dw_fast.cu): what its launcher chose. */
#ifndef C1D_DW_FAST_H
#define C1D_DW_FAST_H

#ifdef __cplusplus
extern "C" {
#endif

/* The kernel that gpu_dw_fast's last launch ran ("none" before the first): the tests that force a path
 * through the environment (C1D_DW_NLC_KERNEL, C1D_DW_VECTOR_BYTES, ...) check that it took effect. */
const char *c1d_dw_fast_last_kernel(void);

/* The kernel that gpu_dw_fast's launcher picks for problem s with every tensor 16-byte aligned (as the
 * runner and cudaMalloc give them), under the environment now: the same routing code as the launch, run
 * on the host alone, so that its rules are tested where there is no GPU. */
struct c1d_shape;
const char *c1d_dw_fast_kernel_for(const struct c1d_shape *s);

#ifdef __cplusplus
}
#endif
#endif
