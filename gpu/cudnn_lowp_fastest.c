/* cudnn_lowp_fastest: cudnn_lowp with the algorithm cuDNN's own search measures fastest on the shape
 * (PyTorch's torch.backends.cudnn.benchmark = True): the row the bf16/fp16 speed ratios of `convlab
 * bench` are taken against. Types, groups, states, bias and limits as cudnn_lowp (cudnn_common.c). */
#include "gpu/cudnn_common.h"

static c1d_status setup(const c1d_shape *s, c1d_exec *ex) { return c1d_cudnn_setup(s, 1, C1D_CUDNN_FASTEST, ex); }

const c1d_impl c1d_gpu_cudnn_lowp_fastest = {
    .name = "cudnn_lowp_fastest",
    .summary = "cuDNN conv on bf16/fp16 data, fp32 compute, the fastest algorithm of cuDNN's search (PyTorch "
               "benchmark mode)",
    .backend = C1D_BACKEND_GPU,
    .precision = C1D_PREC_FP32,
    .supported = c1d_cudnn_lowp_supported,
    .setup = setup,
    .teardown = c1d_cudnn_teardown,
    .run = c1d_cudnn_run,
    .caps = C1D_CAP_GROUPS | C1D_CAP_STATES | C1D_CAP_DTYPES,
};
