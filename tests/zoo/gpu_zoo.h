/* The GPU bug zoo (tests/zoo/gpu_zoo.cu): deliberately wrong CUDA kernels, each a copy of gpu_naive,
 * gpu_tiled_smem or the grouped kernels' arithmetic with one bug, and the verdict the explainer must
 * give on each (c1d_zoo_entry, zoo.h).
 * Built when CUDA is built; the mutants are registered with tier mutant. run() takes device pointers. */
#ifndef C1D_GPU_ZOO_H
#define C1D_GPU_ZOO_H

#include "tests/zoo/zoo.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The mutants. */
extern const c1d_zoo_entry c1d_gpu_zoo[];
extern const int c1d_gpu_zoo_count;

/* The two mutant templates with the bug switched off (expected fp32-rounding): proof that the zoo's
 * scaffolding is right, so that each mutant's errors come from its one bug. */
extern const c1d_zoo_entry c1d_gpu_zoo_controls[];
extern const int c1d_gpu_zoo_controls_count;

/* The zoo's race (missing barrier): its outcome may differ between runs, so a test accepts any bug
 * verdict on at least one of several runs rather than its entry's exact verdict. */
extern const c1d_impl c1d_gpu_zoo_missing_barrier;

/* The operator as people write it on the GPU (groups, depthwise, states, SiLU, bf16/fp16 tensors): copies
 * of the grouped kernels' per-output arithmetic (gpu/grouped_element.h) with one bug each, and the
 * verdict, region or stage the explainer must give. Those with a CPU counterpart (tests/zoo/lowp_zoo.c,
 * cpu/bf16_products.c, cpu/fp16_accumulation.c) name it as their bit-exact twin. They read the tensors in
 * their own element types, (N, C, L) memory (C1D_CAP_DTYPES). */
extern const c1d_zoo_entry c1d_gpu_lowp_zoo[];
extern const int c1d_gpu_lowp_zoo_count;

#ifdef __cplusplus
}
#endif
#endif
