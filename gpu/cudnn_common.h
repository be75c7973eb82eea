/* The cuDNN forward convolution shared by the cudnn_* rows; they differ in the math type the convolution
 * descriptor allows and in how the algorithm is chosen. The 1-D problem is a 2-D one with H = 1: x is
 * N x C x 1 x (L+P) after an explicit causal left pad of P = (K-1)*D zeros (or the initial states), w is
 * O x C/G x 1 x K with G groups (cudnnSetConvolutionGroupCount), dilation (1, D), padding 0,
 * cross-correlation (PyTorch's convolution), float32 compute type; data float32, or the problem's bf16/fp16
 * for the cudnn_lowp rows (every tensor in one type). Bias, when present, is added after the convolution
 * (one more rounding per element, as PyTorch's cuDNN path does): by cudnnAddTensor for float32 data, by
 * c1d_launch_bias_add (in float32, rounded to y's type, as PyTorch's add_) for bf16/fp16 data.
 *
 * Only the legacy (v7) API is used, because the development machine has cuDNN 9.19 and the H200 machine
 * 9.14: cudnnGetConvolutionForwardAlgorithm_v7, cudnnFindConvolutionForwardAlgorithmEx,
 * cudnnSetConvolutionMathType, cudnnConvolutionForward. */
#ifndef C1D_CUDNN_COMMON_H
#define C1D_CUDNN_COMMON_H

#include "reference/impl.h"

#ifdef __cplusplus
extern "C" {
#endif

/* NULL when cuDNN can run the shape; else a static reason (built without cuDNN, a dimension or an
 * element count beyond cuDNN's int descriptors). */
const char *c1d_cudnn_supported(const c1d_shape *s);

/* The same for the cudnn_lowp rows: NULL when x, w, y (and b, the states) all have one element type, bf16
 * or fp16, and cuDNN can run the shape; else a static reason. */
const char *c1d_cudnn_lowp_supported(const c1d_shape *s);

/* How the algorithm is chosen, as PyTorch chooses it:
 *   HEURISTIC      the first entry of cudnnGetConvolutionForwardAlgorithm_v7's list that succeeds
 *                  (PyTorch's default, torch.backends.cudnn.benchmark = False);
 *   FASTEST        the fastest entry cudnnFindConvolutionForwardAlgorithmEx measures on this shape
 *                  (benchmark = True), timed on hashed inputs in setup;
 *   DETERMINISTIC  the first entry of the heuristic list that is deterministic
 *                  (torch.use_deterministic_algorithms(True)).
 * Every choice needs at most C1D_CUDNN_MAX_WORKSPACE bytes and, with FMA math, an entry that reports
 * FMA math where one exists. */
typedef enum c1d_cudnn_choice { C1D_CUDNN_HEURISTIC, C1D_CUDNN_FASTEST, C1D_CUDNN_DETERMINISTIC } c1d_cudnn_choice;

/* Creates the handle and descriptors, chooses the algorithm, allocates the workspace and the zeroed
 * pad buffer, runs the TF32 probe (gpu/tf32_probe.h) and fills ex->algo (the algorithm and how it was
 * chosen), ex->math, ex->used_tf32. allow_tf32 = 0 sets CUDNN_FMA_MATH, 1 CUDNN_DEFAULT_MATH
 * (PyTorch's setting when torch.backends.cudnn.allow_tf32 is True); a problem with bf16/fp16 tensors
 * gets those data types and CUDNN_TENSOR_OP_MATH (PyTorch's), and no probe (used_tf32 = 0). On success ex->state owns
 * everything; on failure nothing is left allocated and the status names the failing call. */
c1d_status c1d_cudnn_setup(const c1d_shape *s, int allow_tf32, c1d_cudnn_choice choice, c1d_exec *ex);

/* Frees what setup allocated; a NULL ex->state does nothing. */
void c1d_cudnn_teardown(c1d_exec *ex);

/* The timed part: the pad copy (skipped when P = 0; the states into the pad columns when the problem has
 * them, from ex->states), the convolution, the bias addition. Asynchronous on ex->stream. Restores ex->algo/math/used_tf32 from the state (the runner may clear them). */
c1d_status c1d_cudnn_run(const c1d_shape *s, const float *x, const float *w, const float *b, float *y,
                         c1d_exec *ex);

#ifdef __cplusplus
}
#endif
#endif
