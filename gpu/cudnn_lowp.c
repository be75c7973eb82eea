/* cudnn_lowp: cuDNN's forward convolution on bf16 or fp16 data with float32 compute and TENSOR_OP math,
 * PyTorch's conv1d on bf16/fp16 tensors (torch.backends.cudnn.benchmark = False: the heuristic's first
 * algorithm); the order of its sums is cuDNN's. Every tensor must have one type (x, w, b, the states and
 * y); groups (depthwise too) and initial states (copied into the causal pad, as torch.cat would do).
 * Bias: added afterwards in float32 and rounded to y's type, as PyTorch's add_ does. cudnn_lowp_fastest
 * takes cuDNN's own search. Details in cudnn_common.c. */
#include "gpu/cudnn_common.h"

static c1d_status setup(const c1d_shape *s, c1d_exec *ex) { return c1d_cudnn_setup(s, 1, C1D_CUDNN_HEURISTIC, ex); }

const c1d_impl c1d_gpu_cudnn_lowp = {
    .name = "cudnn_lowp",
    .summary = "cuDNN conv on bf16/fp16 data, fp32 compute, TENSOR_OP math, the heuristic's first algorithm "
               "(PyTorch's default); explicit causal pad; bias added in fp32 and rounded",
    .backend = C1D_BACKEND_GPU,
    .precision = C1D_PREC_FP32,
    .supported = c1d_cudnn_lowp_supported,
    .setup = setup,
    .teardown = c1d_cudnn_teardown,
    .run = c1d_cudnn_run,
    .caps = C1D_CAP_GROUPS | C1D_CAP_STATES | C1D_CAP_DTYPES,
};
