/* The TF32 probe: a library that is *allowed* TF32 does not say whether the kernel it picked *used* it,
 * so the library paths measure it once in setup. They run their real configuration (same descriptors,
 * algorithm and compute type, so the same kernel) on probe inputs x = 1 + 2^-12, w = 1:
 *   - float32 products and sums give terms * (1 + 2^-12) exactly (terms <= 4096: every partial sum of
 *     12 + log2(terms) <= 24 bits is exact), and never less than terms + 1 for any order of summation;
 *   - inputs rounded to TF32 (10 mantissa bits, by nearest or by truncation) turn 1 + 2^-12 into 1, and
 *     the result is the integer terms exactly.
 * Transform algorithms (FFT, Winograd) add errors near 1e-6 relative, far below the 2^-12 signal, so the
 * nearer of the two values decides. Header-only; host code. */
#ifndef C1D_TF32_PROBE_H
#define C1D_TF32_PROBE_H

#include <math.h>
#include <stdint.h>

#define C1D_TF32_PROBE_X (1.0f + 0x1p-12f)
#define C1D_TF32_PROBE_W 1.0f
#define C1D_TF32_PROBE_MAX_TERMS 4096 /* beyond it float32 summation of the probe can stagnate */

/* 1: the inputs were rounded to TF32; 0: float32 inputs; -1: the probe cannot tell (terms out of range,
 * or an output near neither value). observed is one output element, terms the products it sums. */
static inline int c1d_tf32_probe_classify(float observed, int64_t terms) {
  if (terms < 1 || terms > C1D_TF32_PROBE_MAX_TERMS || !isfinite(observed)) return -1;
  double fp32 = (double)terms * (double)C1D_TF32_PROBE_X, tf32 = (double)terms;
  double d32 = fabs((double)observed - fp32), dtf = fabs((double)observed - tf32);
  double signal = fp32 - tf32; /* terms * 2^-12 */
  if (d32 < 0.25 * signal) return 0;
  if (dtf < 0.25 * signal) return 1;
  return -1;
}

#endif
