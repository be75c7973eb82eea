/* gpu_dw_fast (gpu/dw_fast.cu): what its launcher chose. */
#ifndef C1D_DW_FAST_H
#define C1D_DW_FAST_H

#ifdef __cplusplus
extern "C" {
#endif

/* The kernel that gpu_dw_fast's last launch ran ("none" before the first): the tests that force a path
 * through the environment (C1D_DW_NLC_KERNEL, C1D_DW_VECTOR_BYTES, ...) check that it took effect. */
const char *c1d_dw_fast_last_kernel(void);

#ifdef __cplusplus
}
#endif
#endif
