/* qkv: the whole public API in one include. */
#ifndef QKV_H
#define QKV_H

#ifndef QKV_VERSION
#define QKV_VERSION "0.1.0"
#endif

#include "tensor/tensor.h"
#include "tensor/rng.h"
#include "tensor/kernels.h"
#include "autograd/ctx.h"
#include "autograd/ops.h"
#include "autograd/gradcheck.h"

#endif
