/* Internal: what a finished run saw, recorded in its directory (QKV_RUN_OBSERVED) so that a
 * report reads it instead of building the model again: the attention of its model on the
 * evaluation examples (the sums behind the diagnostics, and the weights of one fixed example),
 * and, for the text task, a sample. A run writes it at the end of every session that finishes
 * (an extension rewrites it); qkv ablate --refresh writes it for runs made before it existed.
 * A fresh run also records the same of its model at step 0, before the first update
 * (QKV_RUN_OBSERVED_START, no sample), so that a diagnostic can be set against its start. */
#ifndef QKV_TRAIN_OBSERVE_H
#define QKV_TRAIN_OBSERVE_H

#include "qkv_api.h"

#include "tensor/error.h"

#include "config/run_config.h"

#include <stdint.h>

/* the evaluation examples the diagnostics average over (fewer when the task has fewer) */
#define QKV_OBSERVE_EXAMPLES 256
/* what every sample is: this prompt, then 200 bytes drawn at temperature 0.8 from all 256 (no
 * top-k) with seed 0 */
#define QKV_OBSERVE_SAMPLE_PROMPT "The "
#define QKV_OBSERVE_SAMPLE_BYTES 200
#define QKV_OBSERVE_SAMPLE_TEMPERATURE 0.8
#define QKV_OBSERVE_SAMPLE_SEED 0

/* Running sums over the query rows that attend somewhere, over every layer and head: the weight
 * on the own position, on the first position, the entropy and the entropy of a uniform row over
 * the same allowed keys. */
typedef struct qkv_diag_sums { double diag, first, entropy, entropy_uniform; int64_t rows; } qkv_diag_sums;

/* What a run recorded. */
typedef struct qkv_observed {
    long long step;                 /* the model's step (summary.json's steps) */
    int example;                    /* the evaluation example whose weights are in w */
    qkv_diag_sums sums;             /* over min(QKV_OBSERVE_EXAMPLES, the task's) evaluation examples */
    int layers, heads, T;
    float *w;                       /* (layers, heads, T, T): [l][h][query][key] */
    int32_t *tokens, *targets;      /* (T) the example's input tokens and targets (-100: no loss) */
    int32_t *sample;                /* the text task: the prompt's bytes and the sample's; NULL otherwise */
    int sample_len;
    /* per layer and head (layers x heads, [l][h]): the shape of the head's score matrix (nn/score.h;
     * diff: its first map's) and the weight its queries put on their own position; NULL in a record
     * of a qkv before them */
    double *symmetry, *negative_mass, *diag_share;
    /* per layer and head: the weight its queries put on the position just before their own (a
     * previous-token head's mark); NULL in a record of a qkv before it */
    double *prev_share;
} qkv_observed;

/* Build the run's model from cfg (its effective config) and DIR/model.safetensors, run it on the
 * evaluation examples and write DIR/observed.safetensors (atomically): the sums, the weights of
 * evaluation example `example` (taken modulo the examples there are), the text task's sample, and
 * step, and the score diagnostics of every layer and head. 0, or -1 with one line in e */
QKV_INTERNAL int qkv__run_observe(const qkv_config *cfg, const char *dir, int example, long long step, qkv_err *e);
/* The same of the model a run starts from (cfg's, initialised from train.seed as qkv train does,
 * before any update) into DIR/observed-start.safetensors: step 0, no sample. Nothing else is
 * touched (the trainer's model and data stream are its own). 0, or -1 with one line in e */
QKV_INTERNAL int qkv__run_observe_start(const qkv_config *cfg, const char *dir, int example, qkv_err *e);
/* DIR/observed.safetensors into *o (its arrays malloc'd: qkv__observed_free). 1 when the run has
 * none (a run of a qkv before it), 0 when read, -1 with one line in e when it is damaged */
QKV_INTERNAL int qkv__run_observed(const char *dir, qkv_observed *o, qkv_err *e);
/* DIR/observed-start.safetensors, the same way (1: the run recorded no start) */
QKV_INTERNAL int qkv__run_observed_start(const char *dir, qkv_observed *o, qkv_err *e);
QKV_INTERNAL void qkv__observed_free(qkv_observed *o);
/* What qkv__run_observe records, computed into *o and not written (qkv inspect): 0, or -1 */
QKV_INTERNAL int qkv__run_observation(const qkv_config *cfg, const char *dir, int example, long long step,
                                      qkv_observed *o, qkv_err *e);

#endif
