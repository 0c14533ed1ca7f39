/* The training loop of one run (see train.h): its step's gradient from micro-batches; the rest
 * of the step, the directory and the summary are run.c's. */
#include "train/train.h"
#include "train/run.h"
#include "tensor/kernels.h"
#include "tensor/parallel.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- one step: micro-batches, their gradients summed in order ------------------------------- */

/* micro-batch j of this process with model m and context ctx: its loss weighted by its share
 * of the step's `total` targets, backward, and its gradient into dst (when not NULL; it stays in
 * m's gradient buffer either way). 0, or -1 with e */
static int micro_batch(qkv__run *r, qkv_model *m, qkv_ctx *ctx, int j, int64_t total, float *dst, qkv_err *e) {
    int k = r->first + j;
    qkv_batch v = qkv__batch_view(&r->batch, j * r->rows, r->rows);
    if (m != r->model || !r->grad_zero) qkv_params_zero_grad(&m->params);
    if (m == r->model) r->grad_zero = false;
    qkv_ctx_reset(ctx);
    qkv_tensor *l = qkv_model_loss(ctx, m, &v.tokens, &v.targets, v.has_pad ? &v.pad : NULL);
    if (!l || (r->counts[k] > 0 && qkv_backward(ctx, qkv_scale(ctx, l, (double)r->counts[k] / (double)total)))) {
        return qkv_err_set(e, QKV_ERR_FAIL, "step %lld: %s", r->st.step + 1, qkv_ctx_error(ctx));
    }
    r->losses[k] = qkv_tensor_get(l, 0);
    if (dst) memcpy(dst, m->params.grad, (size_t)m->params.numel * sizeof *dst);
    return 0;
}

/* worker w's micro-batches: w, w + workers, ... , each alone on this thread (weighted by the
 * step's r->total targets) */
static void worker_batches(void *arg, int64_t begin, int64_t end) {
    qkv__run *r = arg;
    int prev = qkv__serial(1);
    for (int64_t w = begin; w < end; w++) {
        qkv_err_clear(&r->werr[w]);
        for (int j = (int)w; j < r->mine && r->werr[w].code == QKV_ERR_OK; j += r->workers)
            micro_batch(r, r->reps[w], r->ctxs[w], j, r->total,
                        r->slots + (size_t)(r->first + j) * (size_t)r->model->params.numel, &r->werr[w]);
    }
    qkv__serial(prev);
}

/* The step's gradient into params.grad and its loss (the mean over every target the step
 * counts) into *loss. Each micro-batch k has its own examples (qkv_task_train_shard: keyed by
 * the step and k), its own forward and backward with its loss weighted by its share of the
 * step's targets, and its own gradient; the gradients are summed in the order of k, the first
 * copied: g = ((g_0 + g_1) + g_2) + ... . With several processes each computes its micro-
 * batches' gradients, every process gets all of them (bytes, not sums), and each sums them in
 * the same order: every process holds the same bits, and the result does not depend on how
 * many processes share the step. Within a process, with several threads, the threads
 * each compute whole micro-batches alone (with the bits of one thread): the same bits for any
 * number of threads too. 0, or -1 with e. */
static int step_gradient(qkv__run *r, double *loss, qkv_err *e) {
    qkv_model *m = r->model;
    int64_t n = m->params.numel;
    float *g = m->params.grad;
    int S = r->shards;
    qkv__run_draw(r); /* this process's examples, and the targets each of its micro-batches counts */
    if (qkv__dist_allgather(&r->dist, r->counts + r->first, r->counts, (size_t)r->mine * sizeof *r->counts)) {
        return qkv_err_set(e, QKV_ERR_FAIL, "cannot exchange target counts");
    }
    int64_t total = 0;
    for (int k = 0; k < S; k++) total += r->counts[k];
    r->total = total;
    if (r->workers > 1) { /* whole micro-batches on qkv's threads, gradients into their slots */
        qkv__parallel_for(r->workers, 1, worker_batches, r);
        for (int w = 0; w < r->workers; w++)
            if (r->werr[w].code != QKV_ERR_OK) {
                *e = r->werr[w];
                return -1;
            }
    } else {
        for (int j = 0; j < r->mine; j++) {
            float *dst = r->acc ? NULL : r->slots + (size_t)(r->first + j) * (size_t)n;
            if (micro_batch(r, m, r->ctx, j, total, dst, e)) return -1;
            /* one process, one worker: the running sum, g left zero for the next micro-batch
             * (acc = g, then acc += g, vectorised), the last one added into g itself */
            if (r->acc && j + 1 < r->mine) {
                qkv__k_accumulate_zero_f32(n, r->acc, g, j == 0);
                r->grad_zero = true;
            } else if (r->acc && j > 0) {
                qkv__k_binary_flat_f32(QKV_BIN_ADD, n, r->acc, g, g); /* g = acc + g */
            }
        }
    }
    if (!r->acc) {
        if (qkv__dist_allgather(&r->dist, r->slots + (size_t)r->first * (size_t)n, r->slots,
                               (size_t)r->mine * (size_t)n * sizeof *g) ||
            qkv__dist_allgather(&r->dist, r->losses + r->first, r->losses, (size_t)r->mine * sizeof *r->losses)) {
            return qkv_err_set(e, QKV_ERR_FAIL, "cannot exchange gradients");
        }
        memcpy(g, r->slots, (size_t)n * sizeof *g);
        for (int k = 1; k < S; k++) {
            const float *sk = r->slots + (size_t)k * (size_t)n;
            qkv__k_binary_flat_f32(QKV_BIN_ADD, n, g, sk, g); /* g += sk, element by element */
        }
    }
    *loss = qkv__run_loss(r);
    return 0;
}

/* ---- the loop ------------------------------------------------------------------------------- */

int qkv_train(const qkv_config *cfg, const qkv_run_opts *opt, qkv_run_summary *sum, qkv_err *e) {
    qkv__run R = {.cfg = cfg, .opt = opt}, *r = &R;
    qkv_err_clear(e);
    memset(sum, 0, sizeof *sum);
    r->dist = qkv__dist_world();
    int rc = qkv__run_setup(r, e);
    bool too_big = rc && e->code == QKV_ERR_MEMORY; /* nothing was set up, nothing to finish */
    /* every process starts, or none does; then each holds the error of the first that could not
     * (its code and its message) */
    rc = qkv__run_first_error(r, rc, e);
    if (!rc && r->finished) { /* said by the caller; no evaluation, no file written */
        sum->finished = true;
        sum->steps = r->st.step;
        qkv__run_free(r);
        qkv_err_clear(e);
        return 0;
    }
    r->t0 = r->t_log = r->t_shown = qkv_clock_seconds();
    while (!rc && r->st.step < cfg->train.steps) {
        /* every process stops at the same step: one that is asked to tells the others */
        if (qkv__run_any(r, qkv__run_should_stop(r))) {
            r->interrupted = true;
            break;
        }
        double lv = 0; /* step_gradient sets it when it returns 0 */
        bool updated;
        if (step_gradient(r, &lv, e)) {
            qkv__run_fail_everywhere(r, e->msg);
            rc = -1;
            break;
        }
        rc = qkv__run_update(r, lv, &updated, e);
    }
    if (!too_big) rc = qkv__run_finish(r, rc, sum, e);
    qkv__run_free(r);
    if (rc) return -1;
    if (sum->interrupted)
        return qkv_err_set(e, QKV_ERR_INTERRUPTED, "stopped at step %lld of %d; checkpoint saved", sum->steps,
                           cfg->train.steps);
    qkv_err_clear(e);
    return 0;
}
