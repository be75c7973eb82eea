/* cudnn_tf32_fastest: cudnn_tf32 with the algorithm cuDNN's own search measures fastest on the shape
 * (PyTorch's torch.backends.cudnn.benchmark = True): the row every TF32 speed ratio of `convlab bench` is
 * taken against. Padding, bias, probe and limits as cudnn_tf32 (cudnn_common.c). */
#include "gpu/cudnn_common.h"

static const char *supported(const c1d_shape *s) { return c1d_cudnn_supported(s); }
static c1d_status setup(const c1d_shape *s, c1d_exec *ex) { return c1d_cudnn_setup(s, 1, C1D_CUDNN_FASTEST, ex); }

const c1d_impl c1d_gpu_cudnn_tf32_fastest = {
    .name = "cudnn_tf32_fastest",
    .summary = "cuDNN conv, DEFAULT math (TF32 allowed), the fastest algorithm of cuDNN's search (PyTorch benchmark mode)",
    .backend = C1D_BACKEND_GPU,
    .precision = C1D_PREC_TF32_ALLOWED,
    .supported = supported,
    .setup = setup,
    .teardown = c1d_cudnn_teardown,
    .run = c1d_cudnn_run,
    .caps = C1D_CAP_GROUPS | C1D_CAP_STATES, /* groups and states through cudnn_common.c */
};
