/* Evaluation: loss and accuracy over the task's fixed evaluation examples. */
#include "train/train.h"
#include "tensor/parallel.h"

#include <math.h>
#include <stdio.h>

static int evaluate(qkv_ctx *ctx, qkv_model *m, qkv_task *t, qkv_split split, int64_t n, int batch,
                    qkv_eval_result *r, qkv_err *e);

/* counted positions, the bytes their targets stand for, and correct argmax predictions of one batch */
static void score(const qkv_task *t, const qkv_tensor *logits, const qkv_batch *b, double *correct, int64_t *count,
                  int64_t *bytes) {
    int64_t V = logits->shape[2];
    for (int64_t r = 0; r < (int64_t)b->B * b->T; r++) {
        int32_t tgt = b->tgt[r];
        if (tgt == QKV_IGNORE) continue;
        int64_t best = 0;
        double bv = qkv_tensor_get(logits, r * V);
        for (int64_t j = 1; j < V; j++) {
            double v = qkv_tensor_get(logits, r * V + j);
            if (v > bv) { bv = v; best = j; } /* ties: the lowest index, as torch.argmax */
        }
        *correct += best == tgt;
        (*count)++;
        *bytes += qkv_task_target_bytes(t, tgt);
    }
}

int qkv_evaluate(qkv_ctx *ctx, qkv_model *m, qkv_task *t, int64_t n, int batch, qkv_eval_result *r,
                 qkv_err *e) {
    return qkv_evaluate_split(ctx, m, t, QKV_SPLIT_EVAL, n, batch, r, e);
}

int qkv_evaluate_split(qkv_ctx *ctx, qkv_model *m, qkv_task *t, qkv_split split, int64_t n, int batch,
                       qkv_eval_result *r, qkv_err *e) {
    /* one thread's kernels: evaluations give the same bits for any thread count, as training does */
    int prev = qkv__serial(1);
    int rc = evaluate(ctx, m, t, split, n, batch, r, e);
    qkv__serial(prev);
    return rc;
}

static int evaluate(qkv_ctx *ctx, qkv_model *m, qkv_task *t, qkv_split split, int64_t n, int batch,
                    qkv_eval_result *r, qkv_err *e) {
    int64_t size = qkv_task_split_size(t, split);
    if (n > size) n = size;
    qkv_batch b;
    if (qkv_batch_alloc(&b, t, batch)) {
        return qkv_err_set(e, QKV_ERR_FAIL, "out of memory for an evaluation batch");
    }
    bool old = qkv_ctx_set_grad_enabled(ctx, false);
    double loss_sum = 0, correct = 0;
    int64_t count = 0, bytes = 0;
    int rc = 0;
    for (int64_t first = 0; first < n; first += batch) {
        qkv_task_split_batch(t, split, &b, first, n);
        qkv_ctx_reset(ctx);
        qkv_tensor *logits = qkv_model_forward(ctx, m, &b.tokens, b.has_pad ? &b.pad : NULL);
        qkv_tensor *loss = qkv_cross_entropy(ctx, logits, &b.targets, QKV_IGNORE);
        if (!loss) {
            qkv_err_set(e, QKV_ERR_FAIL, "evaluation: %s", qkv_ctx_error(ctx));
            rc = -1;
            break;
        }
        int64_t before = count;
        score(t, logits, &b, &correct, &count, &bytes);
        loss_sum += qkv_tensor_get(loss, 0) * (double)(count - before);
    }
    qkv_ctx_reset(ctx);
    qkv_ctx_set_grad_enabled(ctx, old);
    qkv_batch_free(&b);
    r->examples = n;
    r->positions = count;
    r->loss = count ? loss_sum / (double)count : 0;
    r->accuracy = count ? correct / (double)count : 0;
    r->bytes = bytes;
    /* a token per byte: the mean loss in bits, as always; pieces: the summed loss over the bytes */
    r->bpb = bytes == count ? r->loss / QKV_LN2 : loss_sum / QKV_LN2 / (double)bytes;
    return rc;
}
