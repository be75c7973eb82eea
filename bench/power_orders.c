/* The correct outputs of the power benchmark: one table line each, an input rounding, an accumulation
 * order, an output storage (on issue 15's problems the contract's: one rounding to y's type), the
 * problems it applies to and, for an output that loses precision at a known stage, that stage. Each
 * comes with the bound that proves it correct (checked on every run: a correct output outside it would
 * be the benchmark's bug, not the explainer's) and with the rms error that the fitting model leaves
 * unexplained, the unit of the bug sizes injected into it. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench/power_internal.h"
#include "numerics/arith.h"
#include "numerics/bounds.h"

static const power_order orders[] = {
    {"naive", "acc = b; fma over c outer, k inner", POWER_IN_NONE, POWER_ACC_NAIVE, 0, POWER_STORE_FP32,
     POWER_ON_ANY, POWER_NEED_NONE, NULL},
    {"naive_nofma", "the naive order, each term a rounded multiply then a rounded add", POWER_IN_NONE,
     POWER_ACC_NAIVE_NOFMA, 0, POWER_STORE_FP32, POWER_ON_ANY, POWER_NEED_NONE, NULL},
    {"reversed", "acc = b; c from C-1 down, k from K-1 down", POWER_IN_NONE, POWER_ACC_REVERSED, 0,
     POWER_STORE_FP32, POWER_ON_ANY, POWER_NEED_NONE, NULL},
    {"random_channels", "acc = b; channels in a seeded random order, k inner", POWER_IN_NONE,
     POWER_ACC_RANDOM, 0, POWER_STORE_FP32, POWER_ON_ANY, POWER_NEED_NONE, NULL},
    {"pairwise", "rounded products summed by a pairwise tree, b last", POWER_IN_NONE, POWER_ACC_PAIRWISE,
     0, POWER_STORE_FP32, POWER_ON_ANY, POWER_NEED_NONE, NULL},
    {"blocked4", "per 4 channels a chain from 0, block sums in order, b last", POWER_IN_NONE,
     POWER_ACC_BLOCKED, 4, POWER_STORE_FP32, POWER_ON_ANY, POWER_NEED_NONE, NULL},
    {"blocked16", "per 16 channels a chain from 0, block sums in order, b last", POWER_IN_NONE,
     POWER_ACC_BLOCKED, 16, POWER_STORE_FP32, POWER_ON_ANY, POWER_NEED_NONE, NULL},
    {"blocked64", "per 64 channels a chain from 0, block sums in order, b last", POWER_IN_NONE,
     POWER_ACC_BLOCKED, 64, POWER_STORE_FP32, POWER_ON_ANY, POWER_NEED_NONE, NULL},
    {"tiled8", "tap-major split-K, tiles of 8 terms each a chain from 0, onto acc = b", POWER_IN_NONE,
     POWER_ACC_TILED, 8, POWER_STORE_FP32, POWER_ON_ANY, POWER_NEED_NONE, NULL},
    {"tiled32", "tap-major split-K, tiles of 32 terms each a chain from 0, onto acc = b", POWER_IN_NONE,
     POWER_ACC_TILED, 32, POWER_STORE_FP32, POWER_ON_ANY, POWER_NEED_NONE, NULL},
    {"kahan", "Kahan-compensated sum of rounded products, b first", POWER_IN_NONE, POWER_ACC_KAHAN, 0,
     POWER_STORE_FP32, POWER_ON_ANY, POWER_NEED_NONE, NULL},
    {"tap_partial", "one chain per tap over c; b + partial[0] + ... + partial[K-1]", POWER_IN_NONE,
     POWER_ACC_TAP_PARTIAL, 0, POWER_STORE_FP32, POWER_ON_ANY, POWER_NEED_NONE, NULL},
    {"openblas_sgemm", "im2col, then OpenBLAS SGEMM onto y = b (one thread)", POWER_IN_NONE,
     POWER_ACC_SGEMM, 0, POWER_STORE_FP32, POWER_ON_ANY, POWER_NEED_NONE, NULL},
    {"onednn_conv", "oneDNN's convolution in float32 (libdnnl, the algorithm it picks, one thread)",
     POWER_IN_NONE, POWER_ACC_ONEDNN, 0, POWER_STORE_FP32, POWER_ON_ANY, POWER_NEED_NONE, NULL},
    {"blis_sgemm", "im2col, then BLIS's SGEMM onto y = b (libblis, its kernels for this CPU, one thread)",
     POWER_IN_NONE, POWER_ACC_BLIS, 0, POWER_STORE_FP32, POWER_ON_ANY, POWER_NEED_NONE, NULL},
    {"torch_conv1d", "PyTorch's CPU conv1d in float32 (python3-torch)", POWER_IN_NONE, POWER_ACC_TORCH, 0,
     POWER_STORE_FP32, POWER_ON_ANY, POWER_NEED_NONE, NULL},
    {"tf32_rna", "x, w rounded to TF32 (nearest, ties away); naive fp32 sum", POWER_IN_TF32_RNA,
     POWER_ACC_NAIVE, 0, POWER_STORE_FP32, POWER_ON_DENSE, POWER_NEED_NONE, NULL},
    {"tf32_trunc", "x, w truncated to TF32; naive fp32 sum", POWER_IN_TF32_TRUNC, POWER_ACC_NAIVE, 0,
     POWER_STORE_FP32, POWER_ON_DENSE, POWER_NEED_NONE, NULL},
    {"3xtf32", "TF32 big + small split; small*big + big*small + big*big fma'd in fp32", POWER_IN_NONE,
     POWER_ACC_3XTF32, 0, POWER_STORE_FP32, POWER_ON_DENSE, POWER_NEED_NONE, NULL},
    {"bf16_inputs", "x, w rounded to bf16; naive fp32 sum", POWER_IN_BF16, POWER_ACC_NAIVE, 0,
     POWER_STORE_FP32, POWER_ON_DENSE, POWER_NEED_NONE, NULL},
    {"fp16_inputs", "x, w rounded to fp16; naive fp32 sum", POWER_IN_FP16, POWER_ACC_NAIVE, 0,
     POWER_STORE_FP32, POWER_ON_DENSE, POWER_NEED_NONE, NULL},
    {"fp16_storage", "the naive fp32 result stored as fp16", POWER_IN_NONE, POWER_ACC_NAIVE, 0,
     POWER_STORE_FP16, POWER_ON_DENSE, POWER_NEED_NONE, NULL},
    {"bf16_storage", "the naive fp32 result stored as bf16", POWER_IN_NONE, POWER_ACC_NAIVE, 0,
     POWER_STORE_BF16, POWER_ON_DENSE, POWER_NEED_NONE, NULL},
    /* Issue 15's operator. PyTorch on bf16 tensors: one rounding without SiLU (the contract); with SiLU,
     * F.silu on the bf16 conv, in bf16 arithmetic (within about 2.2 bf16 ulp of the exact SiLU of the
     * rounded conv, measured): not the contract, but no bug either. */
    {"torch_bf16", "PyTorch's CPU conv1d on bf16 tensors (fp32 accumulation, one rounding to bf16)",
     POWER_IN_NONE, POWER_ACC_TORCH_BF16, 0, POWER_STORE_FP32, POWER_ON_OPERATOR, POWER_NEED_ALL_BF16_NO_SILU,
     NULL},
    {"torch_bf16_silu", "PyTorch on bf16 tensors, F.silu in bf16 on the bf16 conv (rounded more than once)",
     POWER_IN_NONE, POWER_ACC_TORCH_BF16, 0, POWER_STORE_FP32, POWER_ON_OPERATOR, POWER_NEED_ALL_BF16_SILU, NULL},
    /* Outputs that lose precision at a known stage: no bug, and the verdict must name the stage. */
    {"bf16_products", "each product x*w rounded to bf16, fp32 sum in the naive order (vLLM issue 52887)",
     POWER_IN_NONE, POWER_ACC_BF16_PRODUCTS, 0, POWER_STORE_FP32, POWER_ON_OPERATOR, POWER_NEED_BF16_XW,
     "products"},
    {"bf16_products_rev", "each product rounded to bf16, fp32 sum with c and k reversed", POWER_IN_NONE,
     POWER_ACC_BF16_PRODUCTS, 1, POWER_STORE_FP32, POWER_ON_OPERATOR, POWER_NEED_BF16_XW, "products"},
    {"fp16_sums", "acc = fp16(b), acc = fp16(fma(x, w, acc)) in the naive order", POWER_IN_NONE,
     POWER_ACC_FP16_SUMS, 0, POWER_STORE_FP32, POWER_ON_OPERATOR, POWER_NEED_F16_Y, "accumulation"},
    {"fp16_sums_rev", "sums kept in fp16, c and k reversed", POWER_IN_NONE, POWER_ACC_FP16_SUMS, 1,
     POWER_STORE_FP32, POWER_ON_OPERATOR, POWER_NEED_F16_Y, "accumulation"},
    {"bf16_weights", "fp32 weights used as bf16 beside bf16 activations; naive fp32 sum", POWER_IN_BF16_W,
     POWER_ACC_NAIVE, 0, POWER_STORE_FP32, POWER_ON_OPERATOR, POWER_NEED_BF16_X_F32_W, "inputs"},
    {"bf16_output", "the naive order's result stored as bf16 where y is declared fp32", POWER_IN_NONE,
     POWER_ACC_NAIVE, 0, POWER_STORE_BF16, POWER_ON_OPERATOR, POWER_NEED_F32_Y, "output"},
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

const char *c1d_power_order_stage(int order) {
  return order >= 0 && order < ORDER_COUNT ? orders[order].stage : NULL;
}

int power_order_is_fp32(int order) {
  const power_order *d = &orders[order];
  return d->input == POWER_IN_NONE && d->store == POWER_STORE_FP32 && d->acc != POWER_ACC_3XTF32 &&
         d->acc != POWER_ACC_TORCH_BF16 && !d->stage;
}

/* fp16 represents neither 1e-40 nor 1e37: there is no correct fp16 computation on those inputs. */
static int fits_fp16(const power_case *c) {
  return c->p.dist != C1D_POWER_SUBNORMAL && c->p.dist != C1D_POWER_NEAR_OVERFLOW;
}

static int all_bf16(const c1d_dtypes *t) {
  return t->x == C1D_DTYPE_BF16 && t->w == C1D_DTYPE_BF16 && t->b == C1D_DTYPE_BF16 && t->s == C1D_DTYPE_BF16 &&
         t->y == C1D_DTYPE_BF16;
}

static int needs_met(int need, const c1d_shape *s) {
  const c1d_dtypes *t = &s->dt;
  switch (need) {
    case POWER_NEED_BF16_XW: return t->x == C1D_DTYPE_BF16 && t->w == C1D_DTYPE_BF16;
    case POWER_NEED_F16_Y: return t->y == C1D_DTYPE_F16;
    case POWER_NEED_BF16_X_F32_W: return t->x == C1D_DTYPE_BF16 && t->w == C1D_DTYPE_F32;
    case POWER_NEED_F32_Y: return t->y == C1D_DTYPE_F32;
    case POWER_NEED_ALL_BF16_NO_SILU: return all_bf16(t) && s->act == C1D_ACT_NONE;
    case POWER_NEED_ALL_BF16_SILU: return all_bf16(t) && s->act == C1D_ACT_SILU;
    default: return 1;
  }
}

int power_order_applies(int order, const power_case *c, int use_torch) {
  const power_order *d = &orders[order];
  const int on = c1d_power_family_of(&c->s) == C1D_POWER_DENSE ? POWER_ON_DENSE : POWER_ON_OPERATOR;
  if (!(d->on & on) || !needs_met(d->need, &c->s)) return 0;
  if ((d->acc == POWER_ACC_TORCH || d->acc == POWER_ACC_TORCH_BF16) && !use_torch) return 0;
  if (d->acc == POWER_ACC_ONEDNN && !power_onednn_available()) return 0;
  if (d->acc == POWER_ACC_BLIS && !power_blis_available()) return 0;
  if (d->input == POWER_IN_FP16 && !(fits_fp16(c) && c->max_abs_x <= 65504.0 && c->max_abs_w <= 65504.0))
    return 0;
  if (power_order_store_of(order, c) == POWER_STORE_FP16 && !(fits_fp16(c) && c->max_abs_ref < 65000.0)) return 0;
  /* Sums in fp16 need every partial sum inside fp16's range. */
  if (d->acc == POWER_ACC_FP16_SUMS && !(fits_fp16(c) && c->max_mag < 65000.0)) return 0;
  return 1;
}

int power_order_store_of(int order, const power_case *c) {
  const power_order *d = &orders[order];
  if (d->store != POWER_STORE_FP32) return d->store;
  return c->s.dt.y == C1D_DTYPE_F16 ? POWER_STORE_FP16 : c->s.dt.y == C1D_DTYPE_BF16 ? POWER_STORE_BF16
                                                                                     : POWER_STORE_FP32;
}

static float store(int st, float v) {
  if (st == POWER_STORE_FP16) return c1d_round_fp16(v);
  if (st == POWER_STORE_BF16) return c1d_round_bf16(v);
  return v;
}

float power_order_store(int order, const power_case *c, float v) {
  return store(power_order_store_of(order, c), v);
}

c1d_status power_order_run(int order, power_case *c, power_torch_y torch, float *y, float *unstored) {
  const power_order *d = &orders[order];
  c1d_status st = power_case_rounded(c, d->input);
  if (st != C1D_OK) return st;
  const c1d_shape *s = &c->s;
  const int64_t ny = c1d_y_count(s);
  const int stored = power_order_store_of(order, c);
  float *sum_out = stored == POWER_STORE_FP32 ? y : unstored;
  if (!sum_out) return c1d_fail(C1D_ERR_INTERNAL, "power: %s needs a buffer for its unstored result", d->name);
  if (d->acc == POWER_ACC_TORCH || d->acc == POWER_ACC_TORCH_BF16) {
    const float *from = d->acc == POWER_ACC_TORCH ? torch.f32 : torch.bf16;
    if (!from) return c1d_fail(C1D_ERR_INTERNAL, "power: no PyTorch output for problem %d", c->p.index);
    memcpy(sum_out, from, (size_t)ny * sizeof *sum_out);
  } else if (d->acc == POWER_ACC_SGEMM) {
    st = power_sgemm(s, c->xr[d->input], c->wr[d->input], c->b, c->st, sum_out);
  } else if (d->acc == POWER_ACC_ONEDNN) {
    st = power_onednn(s, c->xr[d->input], c->wr[d->input], c->b, c->st, sum_out);
  } else if (d->acc == POWER_ACC_BLIS) {
    st = power_blis(s, c->xr[d->input], c->wr[d->input], c->b, c->st, sum_out);
  } else {
    st = power_sum(d->acc, d->param, c->p.seed, s, c->xr[d->input], c->wr[d->input], c->b, c->st, sum_out);
  }
  if (st != C1D_OK) return st;
  if (stored != POWER_STORE_FP32)
    for (int64_t i = 0; i < ny; i++) y[i] = store(stored, unstored[i]);
  return C1D_OK;
}

/* The largest |SiLU'|, and SiLU's own error in float32 (convlab's, libm's, PyTorch's: a few ulp). */
#define SILU_SLOPE 1.1
#define SILU_REL 0x1p-20
#define SILU_ABS 0x1p-140

/* Whether every element of y lies within rel * mag + abs_floor of its reference (input rounding `input`),
 * widened by SiLU where the shape has it (PyTorch's bf16 SiLU: torch_silu) and by order's store. */
static int inside(int order, power_case *c, const float *y, int input, double rel, double abs_floor, int torch_silu) {
  const c1d_shape *s = &c->s;
  const int64_t ny = c1d_y_count(s);
  const int stored = power_order_store_of(order, c);
  const double store_u = stored == POWER_STORE_FP16 ? 0x1p-11 : stored == POWER_STORE_BF16 ? 0x1p-8 : 0.0;
  const double store_floor = stored == POWER_STORE_FP16 ? 0x1p-25 : stored == POWER_STORE_BF16 ? 0x1p-134 : 0.0;
  const double *ref = c->ref_r[input], *mag = c->mag_r[input], *pre = c->pre_r[input];
  const int silu = s->act == C1D_ACT_SILU;
  for (int64_t i = 0; i < ny; i++) {
    double bound = rel * mag[i] + abs_floor;
    if (torch_silu && silu) {
      /* PyTorch in bf16 rounds the conv to bf16, then its SiLU errs by up to about 2.2 bf16 ulp: 2^-6. */
      bound += 0x1p-8 * (fabs(pre[i]) + bound) + 0x1p-134;
      bound = SILU_SLOPE * bound + 0x1p-6 * fabs(ref[i]) + 0x1p-133;
    } else if (silu) {
      bound = SILU_SLOPE * bound + SILU_REL * fabs(ref[i]) + SILU_ABS;
    }
    bound += store_u * (fabs(ref[i]) + bound) + store_floor;
    if (!isfinite(y[i]) || fabs((double)y[i] - ref[i]) > bound) return 0;
  }
  return 1;
}

/* Whether PyTorch's bf16 conv y (before any SiLU) is its own CPU path's (POWER_ACC_BF16_SUMS, bit for
 * bit): the path PyTorch 1.13 takes for bf16 convolutions without oneDNN's bf16 (CPUs without AVX-512, as
 * CI machines can be; scripts/emulate_avx2.sh). Its products and running sums are rounded to bf16,
 * outside the contract's float32 accumulation, so its bound is that arithmetic's. -1: out of memory. */
static int torch_bf16_own_path(power_case *c, const float *y) {
  c1d_shape conv = c->s;
  conv.act = C1D_ACT_NONE;
  const int64_t ny = c1d_y_count(&conv);
  float *own = malloc((size_t)ny * sizeof *own);
  if (!own) return -1;
  int same = power_sum(POWER_ACC_BF16_SUMS, 0, c->p.seed, &conv, c->xr[POWER_IN_NONE], c->wr[POWER_IN_NONE], c->b,
                       c->st, own) == C1D_OK;
  for (int64_t i = 0; same && i < ny; i++) same = own[i] == y[i];
  free(own);
  return same;
}

int power_order_in_bound(int order, power_case *c, const float *y, power_torch_y torch) {
  const power_order *d = &orders[order];
  if (power_case_rounded(c, d->input) != C1D_OK) return 0;
  const c1d_shape *s = &c->s;
  const int64_t n = c1d_terms(s);
  /* Every order here is at most n + K + 1 roundings deep (tap partials, block sums, the bias); below
   * 2^-126 each rounding errs by at most half of 2^-149 in absolute terms, which gamma * m misses. */
  double rel = c1d_gamma(n + s->K + 2, C1D_U_FP32), abs_floor = (double)(n + s->K + 2) * 0x1p-149;
  if (d->acc == POWER_ACC_3XTF32) {
    /* Dropped small*small and the split's own rounding: at most 3 * 2^-22 of each product; below 2^-126
     * TF32's spacing is fixed, so an input's split leaves up to 2^-137 of it, times the other factor. */
    rel = c1d_gamma(3 * n + 2, C1D_U_FP32) * 1.01 + 0x1p-20;
    abs_floor = 3.0 * abs_floor + (double)n * 0x1p-136 * (c->max_abs_x + c->max_abs_w);
  } else if (d->acc == POWER_ACC_BF16_PRODUCTS) {
    /* Each product within 2^-8 of itself (bf16's unit, and its subnormal spacing 2^-133), then the sum. */
    rel = 0x1p-8 + rel * (1.0 + 0x1p-8);
    abs_floor += (double)n * 0x1p-134;
  } else if (d->acc == POWER_ACC_FP16_SUMS) {
    /* n + 1 roundings to fp16 of partial sums no larger than m; fp16's spacing below 2^-14 is 2^-24. */
    rel = c1d_gamma(n + 1, 0x1p-11);
    abs_floor = (double)(n + 1) * 0x1p-25;
  }
  const int torch_bf16 = d->acc == POWER_ACC_TORCH_BF16;
  if (inside(order, c, y, d->input, rel, abs_floor, torch_bf16)) return 1;
  /* PyTorch's own bf16 path, recognised by its conv (before SiLU where there is one) */
  const float *conv = s->act == C1D_ACT_SILU ? torch.bf16_conv : y;
  if (!torch_bf16 || !conv || torch_bf16_own_path(c, conv) != 1) return 0;
  /* Its bound: each product within 2^-8 of itself, then n + 1 float32 adds each rounded again to bf16
   * (2^-8 + 2^-24 a step, with the subnormal spacings below 2^-126). */
  rel = 0x1p-8 + c1d_gamma(n + 1, 0x1p-8 + 0x1p-23) * (1.0 + 0x1p-8);
  abs_floor = (double)(2 * n + 1) * 0x1p-133;
  return inside(order, c, y, d->input, rel, abs_floor, 1);
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
  if (power_order_store_of(order, c) != POWER_STORE_FP32) return rms_against(y, unstored, NULL, ny);
  if (d->input != POWER_IN_NONE) {
    if (power_case_rounded(c, d->input) != C1D_OK) return 0.0;
    return rms_against(y, NULL, c->ref_r[d->input], ny);
  }
  return rms_against(naive, NULL, c->ref, ny);
}
