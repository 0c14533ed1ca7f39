/* The training loop's defaults and whether this machine runs its precision; the whole run's
 * defaults (each layer gives its own). */
#include "config/run_config.h"
#include "tensor/buildinfo.h"

#include <string.h>

const char *const QKV_PRECISION_NAMES[QKV_PRECISION_COUNT] = {"f32", "bf16"};

qkv_train_config qkv_train_config_default(void) {
    qkv_train_config c;
    memset(&c, 0, sizeof c); /* padding too: configs compare as bytes */
    c.steps = 3000, c.batch = 32, c.seed = 0, c.eval_every = 250, c.eval_examples = 1000;
    c.log_every = 50, c.checkpoint_every = 0, c.val_examples = 0, c.threshold = 0.99;
    c.skip_nonfinite = false;
    c.precision = QKV_PRECISION_F32;
    return c;
}

int qkv_precision_usable(const qkv_train_config *c, qkv_err *e) {
    qkv_err why; /* the tensor layer's reason */
    if (c->precision == QKV_PRECISION_BF16 && !qkv_bf16_available(&why))
        return qkv_err_set(e, why.code, "train.precision: \"bf16\" is refused: %s (use \"f32\")", why.msg);
    return 0;
}

int qkv_train_shards(const qkv_train_config *c) {
    if (c->shards > 0) return c->shards;
    int s = 8;
    while (s > 1 && c->batch % s) s /= 2;
    return s;
}

/* Configs may be compared as bytes (memcmp, as the tests do), so
 * padding must be zero too: the parts are copied byte for byte from zero-filled defaults. */
void qkv_config_defaults(qkv_config *c) {
    memset(c, 0, sizeof *c);
    qkv_model_config m = qkv_model_config_default();
    qkv_task_config t = qkv_task_config_default();
    qkv_train_config r = qkv_train_config_default();
    qkv_optim_config o = qkv_optim_config_default();
    memcpy(&c->model, &m, sizeof m);
    memcpy(&c->task, &t, sizeof t);
    memcpy(&c->train, &r, sizeof r);
    memcpy(&c->optim, &o, sizeof o);
}
