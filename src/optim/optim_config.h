/* Optimizer and learning-rate schedule settings. */
#ifndef QKV_OPTIM_CONFIG_H
#define QKV_OPTIM_CONFIG_H

#include "qkv_api.h"

typedef enum { QKV_OPT_SGD, QKV_OPT_ADAM, QKV_OPT_ADAMW, QKV_OPT_COUNT } qkv_optim_kind;
typedef enum { QKV_SCHED_CONSTANT, QKV_SCHED_COSINE, QKV_SCHED_LINEAR, QKV_SCHED_COUNT } qkv_schedule_kind;

typedef struct qkv_optim_config {
    qkv_optim_kind kind;
    double lr;
    double momentum;        /* SGD only */
    double beta1, beta2, eps; /* Adam, AdamW */
    double weight_decay;    /* SGD/Adam: L2 added to the gradient; AdamW: decoupled */
    double clip;            /* max global gradient norm; 0 = no clipping */
    qkv_schedule_kind schedule; /* after warmup: constant, cosine or linear decay to min_lr */
    int warmup;             /* linear warmup steps from 0 to lr */
    double min_lr;          /* the decay's final learning rate */
} qkv_optim_config;

/* the optimizers' names in configs ("sgd", "adam", "adamw"; index = qkv_optim_kind) */
QKV_API extern const char *const QKV_OPTIM_NAMES[QKV_OPT_COUNT];

/* PyTorch's defaults for Adam (lr 1e-3, betas 0.9/0.999, eps 1e-8), constant schedule */
QKV_API qkv_optim_config qkv_optim_config_default(void);
QKV_API extern const char *const QKV_SCHEDULE_NAMES[QKV_SCHED_COUNT];

#endif
