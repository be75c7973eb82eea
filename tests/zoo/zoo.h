/* The bug zoo: deliberately wrong implementations that prove the explainer calls every bug a bug (and
 * where), plus correct-but-different ones it must never call a bug. Each entry says what the explainer
 * must conclude. The mutants are in the registry with tier mutant (harness/registry.c: `convlab list
 * --mutants` shows them, `convlab run --impl NAME` runs one); the correct variants are the tests' own. */
#ifndef C1D_ZOO_H
#define C1D_ZOO_H

#include "numerics/classifier.h"
#include "reference/impl.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct c1d_zoo_entry {
  const c1d_impl *impl;
  c1d_verdict expected;       /* the verdict the explainer must give */
  c1d_region_class region;    /* where a localized bug must be found; C1D_REGION_NONE otherwise */
  /* The shapes on which the bug shows (e.g. needs bias, D > 1, L % 32 != 0); NULL: every shape. */
  int (*applies)(const c1d_shape *s);
  const char *where;          /* for reduced-precision: the stage that lost precision ("products") */
} c1d_zoo_entry;

/* CPU mutants and correct variants (tests/zoo/cpu_zoo.c). */
extern const c1d_zoo_entry c1d_cpu_zoo[];
extern const int c1d_cpu_zoo_count;
extern const c1d_zoo_entry c1d_cpu_correct_variants[];
extern const int c1d_cpu_correct_variants_count;

/* The operator as people write it (tests/zoo/lowp_zoo.c): mutants and models for groups, depthwise,
 * initial states, SiLU and bf16/fp16 tensors, each with what the explainer must say. */
extern const c1d_zoo_entry c1d_lowp_zoo[];
extern const int c1d_lowp_zoo_count;

#ifdef __cplusplus
}
#endif
#endif
