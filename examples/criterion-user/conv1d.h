/* A user's causal conv1d (PyTorch's Conv1d(F.pad(x, ((K-1)*D, 0))) with a bias), the kind of kernel a
 * test suite checks: x (N, C, L), w (O, C, K), b (O), y (N, O, L), float32. */
#ifndef CONV1D_H
#define CONV1D_H

/* The width of the time tiles conv1d works in. */
#define CONV1D_TILE 64

void conv1d(const float *x, const float *w, const float *b, float *y, int N, int C, int O, int L, int K, int D);

#endif
