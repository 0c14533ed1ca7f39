/* Attention diagnostics: where trained heads look (own position, first position) and how
 * spread out they are (entropy), from the model's attention weights on evaluation examples. */
#include "ablate/diagnostics.h"
#include "config/config.h"
#include "train/run_dir.h"
#include "train/train.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* add the rows of one layer's attention (B,H,T,T) */
static void add_rows(const qkv_tensor *a, const qkv_batch *b, qkv_diag_sums *s) {
    int64_t B = a->shape[0], H = a->shape[1], T = a->shape[2];
    const float *w = a->data;
    for (int64_t bi = 0; bi < B; bi++)
        for (int64_t h = 0; h < H; h++)
            for (int64_t i = 0; i < T; i++) {
                if (b->has_pad && !b->pad_buf[bi * T + i]) continue; /* a padding query */
                const float *row = w + ((bi * H + h) * T + i) * T;
                double sum = 0, ent = 0;
                int64_t allowed = 0;
                for (int64_t j = 0; j < T; j++) {
                    sum += row[j];
                    if (row[j] > 0) { ent -= row[j] * log(row[j]); allowed++; }
                }
                if (sum < 0.5) continue; /* a fully masked row attends nowhere */
                s->diag += row[i];
                s->first += row[0];
                s->entropy += ent;
                s->entropy_uniform += log((double)allowed); /* softmax gives every allowed key > 0 */
                s->rows++;
            }
}

int qkv_ablate_diagnose(const char *run_dir, int n, int example, qkv_diag_sums *sums, qkv_heatmap *heat,
                        char *err, int errlen) {
    char path[1400];
    qkv_config cfg;
    qkv_config_defaults(&cfg);
    snprintf(path, sizeof path, "%s/" QKV_RUN_CONFIG, run_dir);
    if (qkv_config_load(&cfg, path, err, errlen)) return -1;
    qkv_task task;
    if (qkv_task_open(&task, &cfg.task, (uint64_t)cfg.train.seed, err, errlen)) return -1;
    qkv_model_config mc = cfg.model;
    qkv_model *m = NULL;
    qkv_ctx *ctx = NULL;
    qkv_batch b = {0};
    int rc = -1;
    snprintf(path, sizeof path, "%s/" QKV_RUN_MODEL, run_dir);
    if (qkv_task_fit_model(&task, &mc, err, errlen) || !(m = qkv_model_new(&mc, QKV_F32, 0, err, errlen)) ||
        qkv_load_model(m, path, err, errlen))
        goto done;
    int64_t avail = qkv_task_eval_size(&task);
    if (n > avail) n = (int)avail;
    if (!(ctx = qkv_ctx_new()) || qkv_batch_alloc(&b, &task, n)) {
        snprintf(err, (size_t)errlen, "out of memory");
        goto done;
    }
    qkv_ctx_set_grad_enabled(ctx, false);
    qkv_task_eval_batch(&task, &b, 0, n);
    if (!qkv_model_forward(ctx, m, &b.tokens, b.has_pad ? &b.pad : NULL)) {
        snprintf(err, (size_t)errlen, "%s: %s", run_dir, qkv_ctx_error(ctx));
        goto done;
    }
    for (int l = 0; l < mc.layers; l++) add_rows(qkv_model_attention(m, l), &b, sums);
    if (heat) { /* one example, all layers and heads */
        qkv_batch one;
        qkv_ctx_reset(ctx);
        if (qkv_batch_alloc(&one, &task, 1)) goto done;
        qkv_task_eval_batch(&task, &one, example % (avail > 0 ? avail : 1), avail);
        if (qkv_model_forward(ctx, m, &one.tokens, one.has_pad ? &one.pad : NULL)) {
            int T = one.T, H = mc.heads, L = mc.layers;
            heat->layers = L;
            heat->heads = H;
            heat->T = T;
            heat->w = malloc((size_t)L * H * T * T * sizeof *heat->w);
            heat->tokens = malloc((size_t)T * sizeof *heat->tokens);
            heat->targets = malloc((size_t)T * sizeof *heat->targets);
            if (heat->w && heat->tokens && heat->targets) {
                for (int l = 0; l < L; l++)
                    memcpy(heat->w + (size_t)l * H * T * T, qkv_model_attention(m, l)->data,
                           (size_t)H * T * T * sizeof(float));
                memcpy(heat->tokens, one.tok, (size_t)T * sizeof *heat->tokens);
                memcpy(heat->targets, one.tgt, (size_t)T * sizeof *heat->targets);
            }
        }
        qkv_batch_free(&one);
    }
    rc = 0;
done:
    qkv_batch_free(&b);
    qkv_ctx_free(ctx);
    qkv_model_free(m);
    qkv_task_close(&task);
    return rc;
}
