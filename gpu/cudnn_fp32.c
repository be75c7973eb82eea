/* cudnn_fp32: cuDNN's forward convolution with CUDNN_FMA_MATH, so no tensor-core conversion to TF32:
 * float32 products and sums in an order cuDNN does not disclose (its GEMM-like algorithms split C*K).
 * The baseline the story's reference should have been, with the algorithm PyTorch takes by default
 * (torch.backends.cudnn.benchmark = False): the heuristic list's first entry, chosen in setup (outside
 * the timed region). cudnn_fp32_fastest races cuDNN's own search; cudnn_fp32_det the first
 * deterministic entry. Causal padding: an explicit left pad of (K-1)*D zeros, x copied into a zeroed buffer by
 * cudaMemcpy2DAsync INSIDE the timed region (PyTorch's F.pad is inside its too); bias by cudnnAddTensor
 * after the convolution. Limits: each tensor below 2^31 elements (cuDNN's int descriptors).
 * Details in cudnn_common.c. */
#include "gpu/cudnn_common.h"

static const char *supported(const c1d_shape *s) { return c1d_cudnn_supported(s); }
static c1d_status setup(const c1d_shape *s, c1d_exec *ex) { return c1d_cudnn_setup(s, 0, C1D_CUDNN_HEURISTIC, ex); }

const c1d_impl c1d_gpu_cudnn_fp32 = {
    .name = "cudnn_fp32",
    .summary = "cuDNN conv, FMA math (fp32, no TF32), the heuristic's first algorithm (PyTorch's default); explicit causal pad; bias by cudnnAddTensor",
    .backend = C1D_BACKEND_GPU,
    .precision = C1D_PREC_FP32,
    .supported = supported,
    .setup = setup,
    .teardown = c1d_cudnn_teardown,
    .run = c1d_cudnn_run,
    .caps = C1D_CAP_GROUPS | C1D_CAP_STATES, /* groups and states through cudnn_common.c */
};
