/* Gradient check of a whole model: d loss / d every parameter tensor against finite
 * differences, in double precision, on a small seeded batch. */
#ifndef QKV_MODEL_CHECK_H
#define QKV_MODEL_CHECK_H

#include "qkv_api.h"

#include "autograd/gradcheck.h"
#include "nn/model.h"

typedef struct qkv_model_check {
    int batch, seq_len;        /* the batch checked (seq_len 0 = the model's) */
    int64_t sample;            /* elements checked per large tensor (0 = all) */
    int64_t small;             /* tensors with fewer elements than this are checked whole */
    uint64_t seed;             /* model init, batch, sample */
    bool pad;                  /* also pass a padding mask with some padded keys */
} qkv_model_check;

/* Build the config's model in F64 and check it. stats: one entry per parameter (in
 * m->params order), allocated and returned in *stats_out with *model_out (caller frees both
 * with free() and qkv_model_free). Returns 0 all pass, 1 some fail, -1 error (e set). */
QKV_API int qkv_model_gradcheck(const qkv_model_config *cfg, const qkv_model_check *opt,
                                qkv_model **model_out, qkv_gradcheck_stat **stats_out, qkv_err *e);

#endif
