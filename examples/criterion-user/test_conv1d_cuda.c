/* The CUDA kernel's test (conv1d_cuda.cu): its device pointers go to convlab as they are. A libconvlab
 * built with CUDA (convlab_has_cuda()) copies device memory to the host itself; one built without cannot
 * read it, so there the test copies the tensors back first. Skipped where there is no CUDA device. */
#include <convlab/criterion.h>
#include <cuda_runtime_api.h>

#include "conv1d.h"
#include "inputs.h"

static float x[N * C * L], w[O * C * K], b[O], y[N * O * L];

static void cuda_ok(cudaError_t err, const char *call) {
  cr_assert_eq(err, cudaSuccess, "%s: %s", call, cudaGetErrorString(err));
}
#define CUDA_OK(call) cuda_ok((call), #call)

static float *on_device(const float *host, size_t count) {
  float *d = NULL;
  CUDA_OK(cudaMalloc((void **)&d, count * sizeof(float)));
  if (host) CUDA_OK(cudaMemcpy(d, host, count * sizeof(float), cudaMemcpyHostToDevice));
  return d;
}

Test(conv1d_cuda, is_rounding_only) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) cr_skip_test("no CUDA device");
  make_inputs(x, w, b);
  float *dx = on_device(x, sizeof x / sizeof *x), *dw = on_device(w, sizeof w / sizeof *w),
        *db = on_device(b, sizeof b / sizeof *b), *dy = on_device(NULL, sizeof y / sizeof *y);
  cr_assert_eq(conv1d_cuda(dx, dw, db, dy, N, C, O, L, K, D), 0, "the launch failed");
  CUDA_OK(cudaDeviceSynchronize());
  convlab_problem *p = the_problem();
  if (convlab_has_cuda()) {
    cr_expect_conv1d_rounding_only(p, dx, dw, db, dy);
  } else {
    CUDA_OK(cudaMemcpy(y, dy, sizeof y, cudaMemcpyDeviceToHost));
    cr_expect_conv1d_rounding_only(p, x, w, b, y);
  }
  convlab_problem_destroy(p);
  cudaFree(dx), cudaFree(dw), cudaFree(db), cudaFree(dy);
}
