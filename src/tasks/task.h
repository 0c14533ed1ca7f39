/* Toy tasks that diagnose attention, text, and the user's own sequences.
 *
 * A task yields examples as next-token prediction: tokens (T) and targets (T), where
 * targets[t] is the token to predict at position t or -100 where no loss is taken.
 * Training, validation and evaluation examples come from separate random streams (generated
 * tasks) or separate slices (text, files); the validation and evaluation sets are fixed lists,
 * the same every time they are evaluated. Validation is what a sweep may choose settings on;
 * evaluation is what it reports. With qkv_task_hold_out, the three are disjoint. */
#ifndef QKV_TASK_H
#define QKV_TASK_H

#include "qkv_api.h"

#include "nn/model_config.h"
#include "tasks/task_config.h"
#include "tensor/rng.h"

#define QKV_IGNORE (-100)

typedef enum { QKV_SPLIT_TRAIN, QKV_SPLIT_EVAL, QKV_SPLIT_VAL } qkv_split;

typedef struct qkv_seq { int32_t *tokens, *targets; int len, line; } qkv_seq; /* line: in its JSON Lines file */

typedef struct qkv_task {
    qkv_task_config cfg;
    int vocab;                /* tokens are in [0, vocab) */
    int seq_len;              /* every example has at most this many positions */
    bool variable_length;     /* examples shorter than seq_len are padded (file task) */
    qkv_rng train_rng;        /* advances with every training batch (saved in checkpoints) */
    uint64_t seed;
    /* text: the bytes; file: the parsed sequences */
    uint8_t *text;
    int64_t text_len;
    int64_t text_val, text_split; /* bytes [0, val) train, [val, split) validate, [split, len) evaluate */
    /* text with subword pieces (cfg.tokenizer): the tokenizer, its serialized model (what a run
     * keeps as tokenizer.model), the text as token ids, each part encoded alone */
    struct qkv__tokenizer *tokenizer;
    char *tokenizer_model;
    size_t tokenizer_model_len;
    char tokenizer_sha256[65]; /* the SHA-256 of tokenizer_model, 64 lowercase hex digits */
    int32_t *ids;
    int64_t n_ids, ids_val, ids_split; /* ids [0, ids_val) train, [ids_val, ids_split) validate, the rest evaluate */
    qkv_seq *seqs;
    int n_seqs, n_train, n_val; /* seqs [0, n_train) train, the next n_val validate, the rest evaluate */
    /* generated tasks: hashes of the held-out examples (qkv_task_hold_out), sorted */
    uint64_t *eval_hashes, *held_hashes; /* the evaluation examples; evaluation and validation */
    int64_t n_eval_hashes, n_held_hashes;
    int64_t held_collisions;  /* training draws that were held out and drawn again */
} qkv_task;

/* A batch in caller-provided memory (B x T each); pad is NULL unless the task is variable-length */
typedef struct qkv_batch {
    int B, T;
    qkv_tensor tokens, targets, pad; /* I32 (B,T) headers over the buffers below */
    int32_t *tok, *tgt, *pad_buf;
    bool has_pad;
} qkv_batch;

/* open the configured task (reads files for text/file); 0, or -1 with e: QKV_ERR_FAIL (a data
 * file that cannot be read, is empty or is not valid JSON Lines, out of memory) or QKV_ERR_USAGE
 * (a generated task's sizes disagree: qkv_task_config_check) */
QKV_APP_API int qkv_task_open(qkv_task *t, const qkv_task_config *cfg, uint64_t seed, qkv_err *e);
QKV_APP_API void qkv_task_close(qkv_task *t);
/* a task whose evaluation set is every sequence of a JSON Lines file (qkv eval --data) */
QKV_APP_API int qkv_task_open_eval_file(qkv_task *t, const char *path, uint64_t seed, qkv_err *e);
/* the config's model.vocab / model.seq_len when given, else the task's; checks they fit, and
 * that a model without the causal mask (model.attention.causal false) cannot see the targets:
 * refused for a task whose targets are the next input tokens (text, copy, ...; task.c). 0, or -1
 * with e: QKV_ERR_USAGE for a built-in task (the config cannot be used), QKV_ERR_FAIL for a data
 * file (task.path, task.eval_path, --data: what the file holds, known when it is read) */
QKV_APP_API int qkv_task_fit_model(const qkv_task *t, qkv_model_config *m, qkv_err *e);

/* buffers for B examples of the task's length */
QKV_APP_API int qkv_batch_alloc(qkv_batch *b, const qkv_task *t, int B);
QKV_APP_API void qkv_batch_free(qkv_batch *b);
/* the next training batch (advances train_rng) */
QKV_APP_API void qkv_task_train_batch(qkv_task *t, qkv_batch *b);
/* the training examples of micro-batch `shard` of step `step` (b->B of them): drawn from a
 * stream keyed by (the task's seed, step, shard) alone, so any process can make any shard's
 * examples, in any order (data-parallel training: train/train.c) */
QKV_APP_API void qkv_task_train_shard(qkv_task *t, qkv_batch *b, long long step, int shard);
/* evaluation examples [first, first + b->B) of the fixed evaluation list (index >= count
 * of a finite list wraps); rows past `count` are filled with ignored targets */
QKV_APP_API void qkv_task_eval_batch(qkv_task *t, qkv_batch *b, int64_t first, int64_t count);
/* how many evaluation examples exist (INT64_MAX for generated tasks) */
QKV_APP_API int64_t qkv_task_eval_size(const qkv_task *t);
/* the same for the evaluation (QKV_SPLIT_EVAL) or the validation (QKV_SPLIT_VAL) list */
QKV_APP_API void qkv_task_split_batch(qkv_task *t, qkv_split split, qkv_batch *b, int64_t first, int64_t count);
/* how many examples the split holds (INT64_MAX for generated tasks; 0: the task has no
 * validation slice, task.val_fraction 0 or too little data) */
QKV_APP_API int64_t qkv_task_split_size(const qkv_task *t, qkv_split split);
/* Make the splits disjoint for a generated task: evaluation examples [0, n_eval) are never
 * drawn as validation examples, and neither they nor validation examples [0, n_val) as
 * training examples (a held-out draw is replaced by the stream's next one; examples are
 * compared by a 64-bit hash of their tokens and targets). Text and file tasks are disjoint by
 * their slices already. Call once after qkv_task_open, before the first batch. 0, or -1 with e
 * (QKV_ERR_FAIL: out of memory). */
QKV_APP_API int qkv_task_hold_out(qkv_task *t, int64_t n_eval, int64_t n_val, qkv_err *e);

/* how many bytes of text target token `tgt` stands for: 1 for a byte (or any task's token), a
 * piece's length with subword pieces; what bits per byte divide by */
QKV_APP_API int qkv_task_target_bytes(const qkv_task *t, int32_t tgt);
/* text with pieces: bytes[0, n) as token ids into a malloc'd *ids of *n_ids (a sample's prompt);
 * 0, or -1 with e (QKV_ERR_FAIL) */
QKV_APP_API int qkv_task_encode(const qkv_task *t, const uint8_t *bytes, int64_t n, int32_t **ids, int64_t *n_ids,
                                qkv_err *e);
/* the bytes token `id` stands for: the byte itself (bytes), or its piece; *len bytes into out
 * (at least QKV_TOKEN_BYTES_MAX) */
#define QKV_TOKEN_BYTES_MAX 1024
QKV_APP_API int qkv_task_token_bytes(const qkv_task *t, int32_t id, uint8_t *out);

/* text: the bits per byte of two baselines on the evaluation slice (the held-out tail, the
 * text the model's eval_bpb is measured on): xz -9's compressed size x 8 / bytes (liblzma, as
 * `xz -9 -c`), and the cross-entropy in bits of a unigram model of the training bytes with
 * add-one smoothing, p(b) = (count(b) + 1) / (training bytes + 256) (text_baseline.c).
 * 0, or -1 with e (QKV_ERR_FAIL) */
QKV_APP_API int qkv_task_text_baselines(const qkv_task *t, double *xz_bpb, double *unigram_bpb, qkv_err *e);

/* recall and noisy_recall: the two floors of their accuracy, from n examples of the task's own
 * generator (a fixed stream of its own, so the same config gives the same numbers): chance, 1 /
 * task.values (a value drawn blind), and no_retrieval, the accuracy of a model that never looks
 * up a query's key: it answers every query of an example with the value that example holds most
 * often (the first of a tie), which is the best such a model can do. 0, or -1 (both NaN) for
 * another task, bad sizes or out of memory */
#define QKV_FLOOR_EXAMPLES 4096 /* the examples the reports' floors are counted over */
QKV_APP_API int qkv_task_floors(const qkv_task_config *c, int n, double *chance, double *no_retrieval);

#endif
