/* A training run's whole configuration: the model, the task and the optimizer, each owned by its
 * layer below, and the training loop's settings, defined here; src/config maps JSON config files
 * and --set overrides onto it. It lives in the config layer, below the training run that reads
 * it, so a run writes its effective config (qkv_config_to_json) by calling the config layer. */
#ifndef QKV_CONFIG_RUN_CONFIG_H
#define QKV_CONFIG_RUN_CONFIG_H

#include "qkv_api.h"

#include <stdbool.h>
#include "tensor/error.h"
#include "nn/model_config.h"
#include "optim/optim_config.h"
#include "tasks/task_config.h"

/* the matrix products' precision: float32, or bf16 operands summed in float32 (everything else
 * float32 either way; docs/performance.md, "bf16 products") */
typedef enum { QKV_PRECISION_F32, QKV_PRECISION_BF16, QKV_PRECISION_COUNT } qkv_precision;
QKV_APP_API extern const char *const QKV_PRECISION_NAMES[QKV_PRECISION_COUNT];

/* The training loop's settings. */
typedef struct qkv_train_config {
    int steps, batch;
    int shards;            /* micro-batches per step (0: auto, the largest of 8, 4, 2, 1 dividing batch):
                              data-parallel processes each take whole shards; results do not
                              depend on how many processes share them */
    long long seed;
    int eval_every, eval_examples, log_every, checkpoint_every;
    int val_examples;      /* examples per validation (0 = eval_examples) */
    double threshold;      /* validation accuracy that counts as solved (summary.json's verdict) */
    bool skip_nonfinite;   /* skip (and count) a step whose loss or gradients are not finite */
    qkv_precision precision; /* the products' precision (f32, the default, or bf16) */
} qkv_train_config;

/* the defaults of docs/config.md: 3000 steps of 32 examples, evaluation every 250 steps */
QKV_APP_API qkv_train_config qkv_train_config_default(void);
/* the micro-batches per step: c->shards, or for 0 the largest of 8, 4, 2, 1 that divides c->batch */
QKV_APP_API int qkv_train_shards(const qkv_train_config *c);
/* whether c's products (train.precision) run on this machine: 0, or -1 with e (QKV_ERR_USAGE, one
 * line naming the key). A bf16 run is trained, evaluated, sampled and inspected in bf16 (its
 * config says so), so qkv eval reproduces the evaluation the run recorded; where bf16 cannot run,
 * each of them is refused before any work (--set train.precision=f32 evaluates in float32) */
QKV_APP_API int qkv_precision_usable(const qkv_train_config *c, qkv_err *e);

typedef struct qkv_config {
    qkv_model_config model;
    qkv_task_config task;
    qkv_train_config train;
    qkv_optim_config optim;
} qkv_config;

/* every layer's defaults (docs/config.md) */
QKV_APP_API void qkv_config_defaults(qkv_config *c);

#endif
