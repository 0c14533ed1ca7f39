/* A run's verdict: did it reach the accuracy threshold, within how many steps, and was it still
 * improving when it stopped? "Unsolved" is a statement about the budget, never that the model
 * cannot learn the task: long flat stretches can end in sudden jumps (docs/ablate.md).
 *
 * Decided on the validation metrics when the run has them (what a sweep may choose on), else on
 * the evaluation metrics, at the logged evaluations:
 *   solved_at   the first evaluated step whose accuracy >= threshold (-1: none)
 *   trend       improving when the best loss of the last quarter of the evaluations is at least
 *               QKV_TREND_GAIN (2%) below the best loss of the quarter before; else flat
 *   flat_since  (when flat) the earliest evaluated step X such that no evaluation after X
 *               has a loss 2% below the best loss up to X */
#ifndef QKV_VERDICT_H
#define QKV_VERDICT_H

#include "qkv_api.h"

#include "tensor/error.h"

#include <stdbool.h>

#define QKV_TREND_GAIN 0.02

typedef struct qkv_verdict {
    bool solved;
    long long solved_at;       /* -1 when not solved */
    long long budget;          /* the steps the run ran */
    bool improving;            /* the trend */
    long long flat_since;      /* -1 when improving */
    bool on_validation;        /* decided on validation (true) or evaluation metrics */
    int evaluations;
} qkv_verdict;

/* from n evaluations (steps ascending, accuracies, losses) of a run of `budget` steps */
QKV_APP_API void qkv_verdict_compute(const long long *step, const double *acc, const double *loss, int n, double threshold,
                         long long budget, bool on_validation, qkv_verdict *v);
/* from a run's metrics.jsonl: 0, or -1 with one line in e (unreadable file) */
QKV_APP_API int qkv_verdict_read(const char *metrics_path, double threshold, long long budget, qkv_verdict *v, qkv_err *e);
/* "solved at 850", "unsolved at 4000, flat since 1500", "unsolved at 4000, improving" */
QKV_APP_API void qkv_verdict_describe(const qkv_verdict *v, char *buf, int n);

#endif
