/* Included first by every typed kernel source (src/tensor/k_*.c). The Makefile compiles
 * each of those files twice: -DQKV_KERNEL_F64=0 (float) and -DQKV_KERNEL_F64=1 (double).
 * K(name) is qkv__k_<name>_f32 or _f64: src/tensor/KERNELS, a tags file made by
 * scripts/kernel-index.sh (and checked by make test), says where each full name is defined.
 * A kernel is declared by its definition: a line starting with its return type and naming
 * K(name)(, with its contract in the comment above; the build writes the declarations from
 * those lines (scripts/kernel-index.sh --decls). */
#ifndef QKV_KERNEL_PRELUDE_H
#define QKV_KERNEL_PRELUDE_H

#include "tensor/kernels.h"
#include <tgmath.h> /* exp, log, ... resolve to the float or double versions by argument type */
#include "tensor/parallel.h"

#if QKV_KERNEL_F64
typedef double real;
#define K(name) qkv__k_##name##_f64
#else
typedef float real;
#define K(name) qkv__k_##name##_f32
#endif

/* smallest piece of work worth a thread: about this many elements */
#define QKV_GRAIN 16384
/* rows of n elements per piece */
static inline int64_t qkv_row_grain(int64_t n) { return n >= QKV_GRAIN ? 1 : QKV_GRAIN / (n > 0 ? n : 1); }

#include "tensor/vector_clones.h"

/* dst += val, or dst = val when `assign` (a new gradient: kernels.h); in a loop the test is
 * loop-invariant and the compiler unswitches it, so each loop vectorises either way */
#define QKV_PUT(dst, assign, val) do { if (assign) (dst) = (val); else (dst) += (val); } while (0)

#endif
