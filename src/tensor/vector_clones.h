/* QKV_VECTOR_CLONES: put before a kernel's hot loop function to compile it also for the
 * x86-64-v4 (AVX-512) and x86-64-v3 (AVX2 + FMA) instruction sets, picked at load time (ifunc).
 *
 * Results do not change with the clone: no FMA contraction (-ffp-contract=off), the fused
 * multiply-adds the code asks for are fmaf() (exactly rounded: one instruction in v3 and v4,
 * libm's exact software fma in the baseline), and float reductions are not reassociated
 * (tensor/lanes.h). vector_isa() in tensor/buildinfo.c must name the same list
 * (tests/test_buildinfo.c checks). */
#ifndef QKV_VECTOR_CLONES_H
#define QKV_VECTOR_CLONES_H

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define QKV_VECTOR_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define QKV_VECTOR_CLONES
#endif

#endif
