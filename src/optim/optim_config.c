/* Optimizer names. */
#include "optim/optim_config.h"

#include <string.h>

const char *const QKV_OPTIM_NAMES[QKV_OPT_COUNT] = {"sgd", "adam", "adamw"};
const char *const QKV_SCHEDULE_NAMES[QKV_SCHED_COUNT] = {"constant", "cosine", "linear"};

qkv_optim_config qkv_optim_config_default(void) {
    qkv_optim_config c;
    memset(&c, 0, sizeof c); /* padding too: configs compare as bytes */
    c.kind = QKV_OPT_ADAM, c.lr = 1e-3, c.momentum = 0, c.beta1 = 0.9, c.beta2 = 0.999, c.eps = 1e-8;
    c.weight_decay = 0, c.clip = 0, c.schedule = QKV_SCHED_CONSTANT, c.warmup = 0, c.min_lr = 0;
    return c;
}
