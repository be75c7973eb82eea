/* Names of the precision classes, as reports print them. */
#include "reference/impl.h"

const char *c1d_precision_name(c1d_precision p) {
  switch (p) {
    case C1D_PREC_FP64: return "fp64";
    case C1D_PREC_FP32: return "fp32";
    case C1D_PREC_FP32_COMP: return "fp32-compensated";
    case C1D_PREC_TF32: return "tf32";
    case C1D_PREC_TF32_ALLOWED: return "tf32-allowed";
    case C1D_PREC_3XTF32: return "3xtf32";
    case C1D_PREC_BF16: return "bf16";
    case C1D_PREC_FP16: return "fp16";
    case C1D_PREC_WRONG: return "wrong";
  }
  return "?";
}

const char *c1d_tier_name(c1d_tier t) {
  switch (t) {
    case C1D_TIER_MAIN: return "main";
    case C1D_TIER_VARIANT: return "variant";
    case C1D_TIER_MUTANT: return "mutant";
  }
  return "?";
}
