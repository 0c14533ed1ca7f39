/* Training runs: the loop, evaluation, checkpoints, metrics and resume.
 *
 * A run lives in a directory whose files run_dir.h names and describes (the effective config,
 * metrics, model, checkpoint, summary). Same config, seed and thread count give the same
 * numbers; a resumed run's metrics and weights equal an uninterrupted run's. */
#ifndef QKV_TRAIN_H
#define QKV_TRAIN_H

#include "qkv_api.h"

#include "tensor/error.h"

#include "nn/model.h"
#include "nn/model_file.h"
#include "optim/optim.h"
#include "tasks/task.h"
#include "config/run_config.h"
#include "train/verdict.h"

typedef struct qkv_eval_result {
    double loss, accuracy;       /* mean cross-entropy and token accuracy over counted positions */
    int64_t examples, positions; /* evaluated examples, positions that carry a loss */
    int64_t bytes;               /* text: the bytes those positions' targets stand for */
    double bpb;                  /* text: bits per byte, the summed loss / ln 2 / bytes (with a token
                                    per byte: loss / ln 2) */
} qkv_eval_result;

typedef struct qkv_run_opts {
    const char *out_dir;         /* run directory (created) */
    bool quiet;                  /* no progress on stderr */
    bool resume;                 /* continue from out_dir's checkpoint */
    bool force;                  /* a new run may replace a run in out_dir (else that is an error) */
    long long stop_after;        /* testing: stop (as if interrupted) after this many steps; 0 = off */
    int example;                 /* the evaluation example whose attention the run records for reports
                                    (observe.h; qkv train --example) */
} qkv_run_opts;

typedef struct qkv_run_summary {
    qkv_eval_result eval;
    qkv_eval_result val;         /* the final validation, when has_val */
    bool has_val;
    double train_loss, seconds;
    long long steps, skipped_steps;
    int64_t params, attn_params;
    bool interrupted;
    bool finished;               /* --resume of a run that had finished: nothing was done or written,
                                    and only steps is filled (summary.json holds the rest) */
    qkv_verdict verdict;         /* solved within the budget? still improving? (verdict.h) */
    int processes;               /* that trained it together (dist.h) */
    uint64_t param_checksum;     /* FNV-1a of the final parameters' bytes, equal on every process */
    /* the text task (bytes): the final evaluation's and validation's bits per byte (loss / ln 2;
     * val_bpb NaN without validation) and the baselines on the evaluation bytes
     * (qkv_task_text_baselines; NaN when they could not be computed) */
    bool text;
    double eval_bpb, val_bpb, baseline_xz_bpb, baseline_unigram_bpb;
    /* how the text was read: its tokenizer (task.tokenizer), pieces (0 for bytes) and the
     * evaluation part's bytes per token, measured (1 for bytes) */
    int tokenizer, pieces;
    double bytes_per_token;
} qkv_run_summary;

/* train per cfg (already validated): 0 when done; -1 with e: QKV_ERR_INTERRUPTED (a stop was asked
 * for: the checkpoint is saved, sum filled), QKV_ERR_MEMORY (the config needs more memory than
 * the machine has: found before anything is allocated or written; the message has the estimate)
 * or QKV_ERR_FAIL */
QKV_APP_API int qkv_train(const qkv_config *cfg, const qkv_run_opts *opt, qkv_run_summary *sum, qkv_err *e);

/* mean loss and accuracy of model m on the task's evaluation examples (n of them, capped by
 * the task's size), in batches of `batch`; ctx is reset as it goes */
QKV_APP_API int qkv_evaluate(qkv_ctx *ctx, qkv_model *m, qkv_task *t, int64_t n, int batch, qkv_eval_result *r,
                 qkv_err *e);
/* the same on the split's list: QKV_SPLIT_EVAL (what runs report) or QKV_SPLIT_VAL (what a sweep
 * may choose settings on) */
QKV_APP_API int qkv_evaluate_split(qkv_ctx *ctx, qkv_model *m, qkv_task *t, qkv_split split, int64_t n, int batch,
                       qkv_eval_result *r, qkv_err *e);

#endif
