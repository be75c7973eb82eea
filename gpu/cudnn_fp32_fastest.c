/* cudnn_fp32_fastest: cudnn_fp32 with the algorithm cuDNN's own search measures fastest on the shape
 * (cudnnFindConvolutionForwardAlgorithmEx in setup, as PyTorch's torch.backends.cudnn.benchmark = True):
 * the row every FP32 speed ratio of `convlab bench` is taken against. Causal padding: an explicit left pad of (K-1)*D zeros, x copied into a zeroed buffer by
 * cudaMemcpy2DAsync INSIDE the timed region (PyTorch's F.pad is inside its too); bias by cudnnAddTensor
 * after the convolution. Limits: each tensor below 2^31 elements (cuDNN's int descriptors).
 * Details in cudnn_common.c. */
#include "gpu/cudnn_common.h"

static const char *supported(const c1d_shape *s) { return c1d_cudnn_supported(s); }
static c1d_status setup(const c1d_shape *s, c1d_exec *ex) { return c1d_cudnn_setup(s, 0, C1D_CUDNN_FASTEST, ex); }

const c1d_impl c1d_gpu_cudnn_fp32_fastest = {
    .name = "cudnn_fp32_fastest",
    .summary = "cuDNN conv, FMA math (fp32), the fastest algorithm of cuDNN's search (PyTorch benchmark mode)",
    .backend = C1D_BACKEND_GPU,
    .precision = C1D_PREC_FP32,
    .supported = supported,
    .setup = setup,
    .teardown = c1d_cudnn_teardown,
    .run = c1d_cudnn_run,
    .caps = C1D_CAP_GROUPS | C1D_CAP_STATES, /* groups and states through cudnn_common.c */
};
