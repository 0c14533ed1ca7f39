/* Included first by every typed kernel source (src/tensor/k_*.c). The Makefile compiles
 * each of those files twice: -DQKV_KERNEL_F64=0 (float) and -DQKV_KERNEL_F64=1 (double). */
#ifndef QKV_KERNEL_PRELUDE_H
#define QKV_KERNEL_PRELUDE_H

#include "tensor/kernels.h"
#include <tgmath.h> /* exp, log, ... resolve to the float or double versions by argument type */

#if QKV_KERNEL_F64
typedef double real;
#define K(name) qkv_k_##name##_f64
#else
typedef float real;
#define K(name) qkv_k_##name##_f32
#endif

#endif
