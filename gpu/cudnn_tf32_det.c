/* cudnn_tf32_det: cudnn_tf32 with the first deterministic algorithm of cuDNN's heuristic list
 * (convlab's cudnn_tf32 until issue 17). Padding, bias, probe and limits as cudnn_tf32 (cudnn_common.c). */
#include "gpu/cudnn_common.h"

static const char *supported(const c1d_shape *s) { return c1d_cudnn_supported(s); }
static c1d_status setup(const c1d_shape *s, c1d_exec *ex) { return c1d_cudnn_setup(s, 1, C1D_CUDNN_DETERMINISTIC, ex); }

const c1d_impl c1d_gpu_cudnn_tf32_det = {
    .name = "cudnn_tf32_det",
    .summary = "cuDNN conv, DEFAULT math (TF32 allowed), the first deterministic algorithm of the heuristic list",
    .backend = C1D_BACKEND_GPU,
    .precision = C1D_PREC_TF32_ALLOWED,
    .tier = C1D_TIER_VARIANT,
    .supported = supported,
    .setup = setup,
    .teardown = c1d_cudnn_teardown,
    .run = c1d_cudnn_run,
    .caps = C1D_CAP_GROUPS | C1D_CAP_STATES, /* groups and states through cudnn_common.c */
};
