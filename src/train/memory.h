/* Will a run fit? Memory estimates made before anything is allocated, so a config too big for
 * this machine is refused with one line instead of being killed halfway. */
#ifndef QKV_TRAIN_MEMORY_H
#define QKV_TRAIN_MEMORY_H

#include "qkv_api.h"

#include "tensor/error.h"

#include <stdint.h>
#include "nn/model_config.h"
#include "optim/optim_config.h"

/* bytes a training step of batch x m->seq_len needs: parameters, their gradients and the
 * optimizer's state (4 bytes each) plus the activations (qkv_model_activation_bytes) */
QKV_APP_API int64_t qkv_train_estimate_bytes(const qkv_model_config *m, const qkv_optim_config *o, int batch);
/* this machine's physical memory in bytes (sysconf), or 0 when unknown */
QKV_APP_API int64_t qkv_machine_memory_bytes(void);
/* 0 when `need` bytes fit in this machine's memory; else -1 with one line in e, e.g.
 * "model.d_model 8192 x model.layers 64 (...) needs about 412.3 GiB (what), more than this
 * machine's 23.4 GiB" */
QKV_APP_API int qkv_check_memory(const qkv_model_config *m, int batch, int64_t need, const char *what, qkv_err *e);

#endif
