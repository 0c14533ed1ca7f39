/* qkv, the library: what a C program that trains a model needs. Application-level pieces
 * (configs, tasks, training runs, ablations) are in qkv_app.h.
 *
 *   pkg-config --cflags --libs qkv; #include <qkv/qkv.h> */
#ifndef QKV_H
#define QKV_H

#ifndef QKV_VERSION
#define QKV_VERSION "0.1.0"
#endif

#include "tensor/error.h"       /* the error value: a code and one line */
#include "tensor/tensor.h"      /* tensors, dtypes, shapes */
#include "tensor/rng.h"         /* the seeded generator */
#include "tensor/threads.h"     /* how many threads qkv computes on */
#include "tensor/buildinfo.h"   /* the CPU, GEMM build and vector ISA results are computed with */
#include "io/safetensors.h"     /* the checkpoint format, read and written */
#include "autograd/ctx.h"       /* context, per-step memory, backward */
#include "autograd/ops.h"       /* differentiable ops */
#include "autograd/gradcheck.h" /* finite-difference checks */
#include "nn/params.h"          /* named parameters in flat buffers */
#include "nn/layers.h"          /* Linear, Embedding, LayerNorm, FeedForward */
#include "nn/attention.h"       /* SelfAttention with every Q/K/V variant */
#include "nn/model.h"           /* the transformer */
#include "nn/model_check.h"     /* whole-model gradient check */
#include "nn/model_file.h"      /* a model's parameters in safetensors */
#include "nn/score.h"          /* the shape of a head's score: symmetric or directional */
#include "optim/optim.h"        /* SGD, Adam, AdamW, clipping, schedules */

#endif
