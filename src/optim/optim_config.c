/* Optimizer names. */
#include "optim/optim_config.h"

const char *const QKV_OPTIM_NAMES[QKV_OPT_COUNT] = {"sgd", "adam", "adamw"};
const char *const QKV_SCHEDULE_NAMES[QKV_SCHED_COUNT] = {"constant", "cosine", "linear"};
