/* Run-time dispatch of row loops among instruction-set clones: x86-64-v4 (AVX-512), v3 (AVX2 + FMA) and
 * the baseline, chosen by gcc's ifunc resolver on the CPU at hand. Use it only on loops whose lanes are
 * independent elements, each with its own fixed chain of IEEE operations (fmaf is a correctly rounded
 * fma in every clone, and -ffp-contract=off keeps the compiler from fusing anything else), so that every
 * clone gives the same bits. */
#ifndef C1D_CLONES_H
#define C1D_CLONES_H

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__CUDACC__)
#define C1D_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define C1D_CLONES
#endif

#endif
