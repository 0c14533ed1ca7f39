/* Internal: one training run's state and the parts of its loop that do not depend on how its
 * gradient is computed. qkv_train (train.c) computes each step's gradient and hands it to
 * qkv__run_update, which does the rest of the step: clipping, the optimizer, skipped steps,
 * metrics, evaluation, checkpoints. */
#ifndef QKV_TRAIN_RUN_H
#define QKV_TRAIN_RUN_H

#include "qkv_api.h"
#include "tensor/clock.h"

#include <stdio.h>

#include "train/checkpoint.h"
#include "train/dist.h"
#include "train/train.h"

typedef struct qkv__run {
    const qkv_config *cfg;
    const qkv_run_opts *opt;
    char *config_json;           /* the effective config as JSON: config.json, the model files' metadata */
    qkv_task task;
    qkv_model *model;
    qkv_optim optim;
    qkv_ctx *ctx;
    qkv_batch batch;                /* this process's micro-batches, one after another */
    qkv_dist dist;                  /* the processes sharing the step (1 without MPI) */
    int shards, mine, first;        /* micro-batches per step; this process's: [first, first + mine) */
    int rows;                       /* examples per micro-batch */
    float *slots;                   /* every micro-batch's gradient (shards x n), with several processes or workers */
    float *acc;                     /* the gradients' running sum (n) with one process and one worker */
    bool grad_zero;                 /* model's gradient buffer holds zeros (left so by the pass that read it) */
    int workers;                    /* threads that each compute whole micro-batches (1: the caller alone) */
    qkv_model **reps;               /* per worker: a replica of the model (its own gradients) */
    qkv_ctx **ctxs;                 /* per worker: its own tape and arena */
    qkv_err *werr;                  /* per worker: its error (QKV_ERR_OK when none) */
    int64_t *counts;                /* every micro-batch's counted targets (shards) */
    int64_t total;                  /* the step's counted targets (every micro-batch's) */
    double *losses;                 /* every micro-batch's mean loss (shards) */
    FILE *metrics;
    qkv_train_state st;             /* step, losses, skipped steps; st.seconds: earlier sessions' time */
    int64_t val_examples;           /* per validation; 0: the task has no validation split */
    double t0;                      /* this session's start */
    /* the loop's running values */
    double t_log, lr, gnorm, train_loss;
    long long tokens_since, start;  /* tokens since the last log line; the step this session began at */
    qkv_eval_result ev, val;        /* the last evaluation and validation */
    bool have_eval, tty, interrupted;
    bool finished;              /* resumed, but every step was done and the summary written: nothing to do */
    int lock_fd;                    /* 1 + the run directory's fd holding its flock (0: none) */
    bool shown;                     /* not a terminal: a progress line was written this session... */
    double t_shown;                 /* ...at this time (lines in a log are QKV_LOG_INTERVAL apart) */
    char *path;                     /* the last path of a file in the run directory (run.c's in_dir), malloc'd */
} qkv__run;

/* The run's task, model, optimizer, data buffers, the replicas and gradient slots qkv_train's
 * step needs, and its directory (resumed from its checkpoint with opt->resume; r->dist set).
 * 0, or -1 with e (QKV_ERR_MEMORY: the config needs more memory than the machine has, and
 * nothing was written).
 * The caller starts the clock (t0, t_log) when the run is set up. */
QKV_INTERNAL int qkv__run_setup(qkv__run *r, qkv_err *e);
/* this step's micro-batches of this process into r->batch (keyed by the step), their counted
 * targets into r->counts and the step's into r->total */
QKV_INTERNAL void qkv__run_draw(qkv__run *r);
/* the step's loss as the mean over every counted target: sum_k counts[k] / total * losses[k] */
QKV_INTERNAL double qkv__run_loss(const qkv__run *r);
/* The rest of a step whose gradient is in r->model's gradient buffer and whose loss is lv:
 * clip, update (or skip a non-finite step, or fail), step, and log, evaluate, checkpoint when due.
 * *updated: whether the parameters changed. 0, or -1 with e (the run cannot go on). */
QKV_INTERNAL int qkv__run_update(qkv__run *r, double lv, bool *updated, qkv_err *e);
/* after the loop (rc its outcome, 0 or -1): the interrupted run's checkpoint, the summary; fills
 * sum (sum->interrupted: stopped early); 0, or -1 with e (untouched when rc is -1) */
QKV_INTERNAL int qkv__run_finish(qkv__run *r, int rc, qkv_run_summary *sum, qkv_err *e);
QKV_INTERNAL void qkv__run_free(qkv__run *r);
/* a stop was asked for (qkv_request_stop), or --stop-after's steps are done */
QKV_INTERNAL bool qkv__run_should_stop(const qkv__run *r);
/* with several processes (MPI): an error only this one has seen stops them all (the others
 * would wait forever); nothing with one */
QKV_INTERNAL void qkv__run_fail_everywhere(const qkv__run *r, const char *msg);
/* whether any process says `mine` (a stop, an error) */
QKV_INTERNAL bool qkv__run_any(const qkv__run *r, bool mine);
/* a stage every process went through, rc its outcome here (0, or -1 with e): 0 when it went
 * well everywhere; else -1 on every process with e the first failing process's (by rank) code
 * and message, so that any process can speak for all */
QKV_INTERNAL int qkv__run_first_error(const qkv__run *r, int rc, qkv_err *e);
/* rows [first, first + rows) of a batch, as a batch of their own */
QKV_INTERNAL qkv_batch qkv__batch_view(const qkv_batch *all, int first, int rows);

#endif
