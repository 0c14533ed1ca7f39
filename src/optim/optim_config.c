/* Optimizer names. */
#include "optim/optim_config.h"

const char *const QKV_OPTIM_NAMES[QKV_OPT_COUNT] = {"sgd", "adam", "adamw"};
const char *const QKV_SCHEDULE_NAMES[QKV_SCHED_COUNT] = {"constant", "cosine", "linear"};

qkv_optim_config qkv_optim_config_default(void) {
    qkv_optim_config c = {.name = QKV_OPT_ADAM, .lr = 1e-3, .momentum = 0, .beta1 = 0.9, .beta2 = 0.999,
                          .eps = 1e-8, .weight_decay = 0, .clip = 0, .schedule = QKV_SCHED_CONSTANT,
                          .warmup = 0, .min_lr = 0};
    return c;
}
