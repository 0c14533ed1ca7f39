/* qkv: the whole public API in one include. */
#ifndef QKV_H
#define QKV_H

#ifndef QKV_VERSION
#define QKV_VERSION "0.1.0"
#endif

#include "tensor/tensor.h"      /* tensors, dtypes, shapes */
#include "tensor/rng.h"         /* the seeded generator */
#include "tensor/kernels.h"     /* typed kernels on raw arrays */
#include "autograd/ctx.h"       /* context, arena, backward */
#include "autograd/ops.h"       /* differentiable ops */
#include "autograd/gradcheck.h" /* finite-difference checks */
#include "nn/params.h"          /* named parameters in flat buffers */
#include "nn/layers.h"          /* Linear, Embedding, LayerNorm, FeedForward */
#include "nn/attention.h"       /* SelfAttention with every Q/K/V variant */
#include "nn/model.h"           /* the transformer */
#include "nn/model_check.h"     /* whole-model gradient check */
#include "optim/optim.h"        /* SGD, Adam, AdamW, clipping, schedules */
#include "config/config.h"      /* JSON configs */
#include "io/safetensors.h"     /* checkpoints */
#include "tasks/task.h"         /* toy tasks, text, JSON Lines */
#include "train/train.h"        /* training runs, evaluation */
#include "ablate/ablate.h"      /* ablations and reports */

#endif
