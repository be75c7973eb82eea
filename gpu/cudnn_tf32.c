/* cudnn_tf32: the story's reference. cuDNN's forward convolution with CUDNN_DEFAULT_MATH, which lets
 * cuDNN convert float32 inputs to TF32 for tensor cores: what PyTorch sets when
 * torch.backends.cudnn.allow_tf32 is True (its default), with the algorithm PyTorch takes by default
 * (the heuristic list's first entry). "Allowed" is not "used": setup records the algorithm cuDNN chose,
 * the math type cuDNN reported for it, and what a probe at the real shape shows (gpu/tf32_probe.h);
 * exec.used_tf32 is 0 when cuDNN picked an FMA algorithm although TF32 was allowed (it does on small
 * dilated shapes). Padding, bias and limits as cudnn_fp32 (cudnn_common.c); the pad copy is inside the
 * timed region. */
#include "gpu/cudnn_common.h"

static const char *supported(const c1d_shape *s) { return c1d_cudnn_supported(s); }
static c1d_status setup(const c1d_shape *s, c1d_exec *ex) { return c1d_cudnn_setup(s, 1, C1D_CUDNN_HEURISTIC, ex); }

const c1d_impl c1d_gpu_cudnn_tf32 = {
    .name = "cudnn_tf32",
    .summary = "cuDNN conv, DEFAULT math (TF32 allowed, as PyTorch), the heuristic's first algorithm; exec says what was used",
    .backend = C1D_BACKEND_GPU,
    .precision = C1D_PREC_TF32_ALLOWED,
    .supported = supported,
    .setup = setup,
    .teardown = c1d_cudnn_teardown,
    .run = c1d_cudnn_run,
    .caps = C1D_CAP_GROUPS | C1D_CAP_STATES, /* groups and states through cudnn_common.c */
};
