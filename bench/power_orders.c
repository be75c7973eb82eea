/* The correct outputs of the power benchmark: one table line each, an input rounding, an accumulation
 * order and an output storage. Each comes with the bound that proves it correct (checked on every run:
 * a correct output outside it would be the benchmark's bug, not the explainer's) and with the rms error
 * that the fitting model leaves unexplained, the unit of the bug sizes injected into it. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench/power_internal.h"
#include "numerics/arith.h"
#include "numerics/bounds.h"

static const power_order orders[] = {
    {"naive", "acc = b; fma over c outer, k inner", POWER_IN_NONE, POWER_ACC_NAIVE, 0, POWER_STORE_FP32},
    {"naive_nofma", "the naive order, each term a rounded multiply then a rounded add", POWER_IN_NONE,
     POWER_ACC_NAIVE_NOFMA, 0, POWER_STORE_FP32},
    {"reversed", "acc = b; c from C-1 down, k from K-1 down", POWER_IN_NONE, POWER_ACC_REVERSED, 0,
     POWER_STORE_FP32},
    {"random_channels", "acc = b; channels in a seeded random order, k inner", POWER_IN_NONE,
     POWER_ACC_RANDOM, 0, POWER_STORE_FP32},
    {"pairwise", "rounded products summed by a pairwise tree, b last", POWER_IN_NONE, POWER_ACC_PAIRWISE,
     0, POWER_STORE_FP32},
    {"blocked4", "per 4 channels a chain from 0, block sums in order, b last", POWER_IN_NONE,
     POWER_ACC_BLOCKED, 4, POWER_STORE_FP32},
    {"blocked16", "per 16 channels a chain from 0, block sums in order, b last", POWER_IN_NONE,
     POWER_ACC_BLOCKED, 16, POWER_STORE_FP32},
    {"blocked64", "per 64 channels a chain from 0, block sums in order, b last", POWER_IN_NONE,
     POWER_ACC_BLOCKED, 64, POWER_STORE_FP32},
    {"tiled8", "tap-major split-K, tiles of 8 terms each a chain from 0, onto acc = b", POWER_IN_NONE,
     POWER_ACC_TILED, 8, POWER_STORE_FP32},
    {"tiled32", "tap-major split-K, tiles of 32 terms each a chain from 0, onto acc = b", POWER_IN_NONE,
     POWER_ACC_TILED, 32, POWER_STORE_FP32},
    {"kahan", "Kahan-compensated sum of rounded products, b first", POWER_IN_NONE, POWER_ACC_KAHAN, 0,
     POWER_STORE_FP32},
    {"tap_partial", "one chain per tap over c; b + partial[0] + ... + partial[K-1]", POWER_IN_NONE,
     POWER_ACC_TAP_PARTIAL, 0, POWER_STORE_FP32},
    {"openblas_sgemm", "im2col, then OpenBLAS SGEMM onto y = b (one thread)", POWER_IN_NONE,
     POWER_ACC_SGEMM, 0, POWER_STORE_FP32},
    {"torch_conv1d", "PyTorch's CPU conv1d in float32 (python3-torch)", POWER_IN_NONE, POWER_ACC_TORCH, 0,
     POWER_STORE_FP32},
    {"tf32_rna", "x, w rounded to TF32 (nearest, ties away); naive fp32 sum", POWER_IN_TF32_RNA,
     POWER_ACC_NAIVE, 0, POWER_STORE_FP32},
    {"tf32_trunc", "x, w truncated to TF32; naive fp32 sum", POWER_IN_TF32_TRUNC, POWER_ACC_NAIVE, 0,
     POWER_STORE_FP32},
    {"3xtf32", "TF32 big + small split; small*big + big*small + big*big fma'd in fp32", POWER_IN_NONE,
     POWER_ACC_3XTF32, 0, POWER_STORE_FP32},
    {"bf16_inputs", "x, w rounded to bf16; naive fp32 sum", POWER_IN_BF16, POWER_ACC_NAIVE, 0,
     POWER_STORE_FP32},
    {"fp16_inputs", "x, w rounded to fp16; naive fp32 sum", POWER_IN_FP16, POWER_ACC_NAIVE, 0,
     POWER_STORE_FP32},
    {"fp16_storage", "the naive fp32 result stored as fp16", POWER_IN_NONE, POWER_ACC_NAIVE, 0,
     POWER_STORE_FP16},
    {"bf16_storage", "the naive fp32 result stored as bf16", POWER_IN_NONE, POWER_ACC_NAIVE, 0,
     POWER_STORE_BF16},
};
enum { ORDER_COUNT = sizeof orders / sizeof orders[0] };

int c1d_power_order_count(void) { return ORDER_COUNT; }
const power_order *power_order_at(int order) { return &orders[order]; }
const char *c1d_power_order_name(int order) {
  return order >= 0 && order < ORDER_COUNT ? orders[order].name : "-";
}
const char *c1d_power_order_summary(int order) {
  return order >= 0 && order < ORDER_COUNT ? orders[order].summary : "-";
}
int c1d_power_order_find(const char *name) {
  for (int i = 0; i < ORDER_COUNT; i++)
    if (strcmp(orders[i].name, name) == 0) return i;
  return -1;
}

int power_order_is_fp32(int order) {
  const power_order *d = &orders[order];
  return d->input == POWER_IN_NONE && d->store == POWER_STORE_FP32 && d->acc != POWER_ACC_3XTF32;
}

/* fp16 represents neither 1e-40 nor 1e37: there is no correct fp16 computation on those inputs. */
static int fits_fp16(const power_case *c) {
  return c->p.dist != C1D_POWER_SUBNORMAL && c->p.dist != C1D_POWER_NEAR_OVERFLOW;
}

int power_order_applies(int order, const power_case *c, int use_torch) {
  const power_order *d = &orders[order];
  if (d->acc == POWER_ACC_TORCH && !use_torch) return 0;
  if (d->input == POWER_IN_FP16 && !(fits_fp16(c) && c->max_abs_x <= 65504.0 && c->max_abs_w <= 65504.0))
    return 0;
  if (d->store == POWER_STORE_FP16 && !(fits_fp16(c) && c->max_abs_ref < 65000.0)) return 0;
  return 1;
}

static float store(int st, float v) {
  if (st == POWER_STORE_FP16) return c1d_round_fp16(v);
  if (st == POWER_STORE_BF16) return c1d_round_bf16(v);
  return v;
}

float power_order_store(int order, float v) { return store(orders[order].store, v); }

c1d_status power_order_run(int order, power_case *c, const float *torch_y, float *y, float *unstored) {
  const power_order *d = &orders[order];
  c1d_status st = power_case_rounded(c, d->input);
  if (st != C1D_OK) return st;
  const c1d_shape *s = &c->s;
  const int64_t ny = c1d_y_count(s);
  float *sum_out = d->store == POWER_STORE_FP32 ? y : unstored;
  if (!sum_out) return c1d_fail(C1D_ERR_INTERNAL, "power: %s needs a buffer for its unstored result", d->name);
  if (d->acc == POWER_ACC_TORCH) {
    if (!torch_y) return c1d_fail(C1D_ERR_INTERNAL, "power: no PyTorch output for problem %d", c->p.index);
    memcpy(sum_out, torch_y, (size_t)ny * sizeof *sum_out);
  } else if (d->acc == POWER_ACC_SGEMM) {
    st = power_sgemm(s, c->xr[d->input], c->wr[d->input], c->b, sum_out);
  } else {
    st = power_sum(d->acc, d->param, c->p.seed, s, c->xr[d->input], c->wr[d->input], c->b, sum_out);
  }
  if (st != C1D_OK) return st;
  if (d->store != POWER_STORE_FP32)
    for (int64_t i = 0; i < ny; i++) y[i] = store(d->store, unstored[i]);
  return C1D_OK;
}

int power_order_in_bound(int order, power_case *c, const float *y) {
  const power_order *d = &orders[order];
  if (power_case_rounded(c, d->input) != C1D_OK) return 0;
  const c1d_shape *s = &c->s;
  const int64_t n = s->C * s->K, ny = c1d_y_count(s);
  /* Every order here is at most n + K + 1 roundings deep (tap partials, block sums, the bias); below
   * 2^-126 each rounding errs by at most half of 2^-149 in absolute terms, which gamma * m misses. */
  double rel = c1d_gamma(n + s->K + 2, C1D_U_FP32), abs_floor = (double)(n + s->K + 2) * 0x1p-149;
  if (d->acc == POWER_ACC_3XTF32) {
    /* Dropped small*small and the split's own rounding: at most 3 * 2^-22 of each product; below 2^-126
     * TF32's spacing is fixed, so an input's split leaves up to 2^-137 of it, times the other factor. */
    rel = c1d_gamma(3 * n + 2, C1D_U_FP32) * 1.01 + 0x1p-20;
    abs_floor = 3.0 * abs_floor + (double)n * 0x1p-136 * (c->max_abs_x + c->max_abs_w);
  }
  const double store_u = d->store == POWER_STORE_FP16 ? 0x1p-11 : d->store == POWER_STORE_BF16 ? 0x1p-8 : 0.0;
  const double store_floor = d->store == POWER_STORE_FP16 ? 0x1p-25 : d->store == POWER_STORE_BF16 ? 0x1p-134 : 0.0;
  const double *ref = c->ref_r[d->input], *mag = c->mag_r[d->input];
  for (int64_t i = 0; i < ny; i++) {
    const double sum_bound = rel * mag[i] + abs_floor;
    const double bound = sum_bound + store_u * (fabs(ref[i]) + sum_bound) + store_floor;
    if (!isfinite(y[i]) || fabs((double)y[i] - ref[i]) > bound) return 0;
  }
  return 1;
}

static double rms_against(const float *a, const float *b32, const double *b64, int64_t count) {
  double sum = 0.0;
  int64_t used = 0;
  for (int64_t i = 0; i < count; i++) {
    const double e = (double)a[i] - (b32 ? (double)b32[i] : b64[i]);
    if (!isfinite(e)) continue;
    sum += e * e;
    used++;
  }
  return used ? sqrt(sum / (double)used) : 0.0;
}

double power_order_scale(int order, power_case *c, const float *y, const float *unstored,
                         const float *naive) {
  const power_order *d = &orders[order];
  const int64_t ny = c1d_y_count(&c->s);
  if (d->store != POWER_STORE_FP32) return rms_against(y, unstored, NULL, ny);
  if (d->input != POWER_IN_NONE) {
    if (power_case_rounded(c, d->input) != C1D_OK) return 0.0;
    return rms_against(y, NULL, c->ref_r[d->input], ny);
  }
  return rms_against(naive, NULL, c->ref, ny);
}
