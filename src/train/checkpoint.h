/* Checkpoints: everything a resumed run needs to continue exactly as if it had never stopped,
 * in one atomic file (run_dir.h: checkpoint.safetensors), written with the model file. */
#ifndef QKV_CHECKPOINT_H
#define QKV_CHECKPOINT_H

#include "qkv_api.h"

#include "tensor/error.h"
#include "nn/model.h"
#include "optim/optim.h"
#include "tensor/rng.h"

/* The training loop's own state. */
typedef struct qkv_train_state {
    long long step;        /* steps done (skipped ones included) */
    long long skipped;     /* steps skipped for a non-finite loss or gradient */
    double loss_sum;       /* training loss summed since the last log line ... */
    long long loss_count;  /* ... over this many steps */
    double last_loss;      /* the last finite step loss (a log line's fallback); NaN before one */
    double logged_loss;    /* the last logged mean loss (the summary's train_loss); NaN before one */
    double seconds;        /* training time of every session so far */
} qkv_train_state;

/* Write DIR/checkpoint.safetensors (m's parameters, o's state, s, the data stream `data`) and
 * DIR/model.safetensors (the parameters alone), each atomically, each with config_json (the
 * effective config; NULL: none in the checkpoint, "{}" in the model file) as metadata qkv_config,
 * the CRC-32 of its data as qkv_crc32 (io/safetensors.h) and n_extra (at most 4) more pairs
 * extra[2*i], extra[2*i+1] (a token run's vocabulary: train/vocabulary.h). 0, or -1 with one line
 * in e. */
QKV_APP_API int qkv_checkpoint_save(const char *dir, const qkv_model *m, const qkv_optim *o, const qkv_train_state *s,
                        const qkv_rng *data, const char *config_json, const char *const *extra, int n_extra,
                        qkv_err *e);
/* Read DIR/checkpoint.safetensors into m, o, s and data (m and o built for the same config).
 * A checkpoint whose data does not match its qkv_crc32 is refused (damaged); checkpoints of
 * earlier versions (no checksum or config, 6 loop scalars, no optimizer step) load too. 0, or
 * -1 with one line in e naming the file. (Whether the checkpoint's qkv_config is the run's
 * is the caller's question: the config layer reads configs, qkv train --resume compares.) */
QKV_APP_API int qkv_checkpoint_load(const char *dir, qkv_model *m, qkv_optim *o, qkv_train_state *s, qkv_rng *data,
                        qkv_err *e);

#endif
