/* The training-step benchmark (see bench.h). */
#include "train/bench.h"
#include "tensor/bf16.h"
#include "tensor/clock.h"
#include "nn/model.h"
#include "optim/optim.h"
#include "tensor/kernels.h"
#include "tensor/parallel.h"
#include "tensor/rng.h"

#include <cblas.h>

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

const qkv_bench_size QKV_BENCH_SIZES[3] = {
    {"tiny", 64, 32, 64, 4, 2, 256, 32},
    {"small", 256, 128, 128, 4, 4, 512, 16},
    {"medium", 512, 256, 256, 8, 4, 1024, 8},
};


static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int qkv_bench_run(const qkv_bench_size *s, int warmup, int steps, uint64_t (*alloc_count)(void),
                  qkv_bench_result *r, qkv_err *e) {
    return qkv_bench_run_with(s, NULL, 1, false, warmup, steps, alloc_count, r, e);
}

/* the micro-batched step (qkv train's with train.shards = S > 1): S micro-batches of `rows`
 * examples, each alone with its loss weighted 1/S (every position has a target), whole
 * micro-batches on each of W workers (k = w, w + W, ...; W = min(threads, S)), each on one
 * thread, the gradients summed in the order of k: what `qkv train --threads W` does */
typedef struct {
    qkv_model **reps;
    qkv_ctx **ctxs;
    qkv_tensor **tok, **tgt; /* the micro-batches' views of the step's tokens and targets */
    float *slots;
    int S, W;
    int64_t n;
    qkv_err *err; /* per worker: its error (QKV_ERR_OK when none), as a run's workers keep theirs */
} micro_job;

static void micro_workers(void *arg, int64_t b, int64_t e) {
    const micro_job *j = arg;
    int prev = qkv__serial(1);
    for (int64_t w = b; w < e; w++) {
        qkv_err_clear(&j->err[w]);
        for (int k = (int)w; k < j->S && j->err[w].code == QKV_ERR_OK; k += j->W) {
            qkv_model *m = j->reps[w];
            qkv_ctx *ctx = j->ctxs[w];
            qkv_params_zero_grad(&m->params);
            qkv_ctx_reset(ctx);
            qkv_tensor *l = qkv_model_loss(ctx, m, j->tok[k], j->tgt[k], NULL);
            if (!l || qkv_backward(ctx, qkv_scale(ctx, l, 1.0 / j->S)))
                qkv_err_set(&j->err[w], QKV_ERR_FAIL, "%s", qkv_ctx_error(ctx));
            else
                memcpy(j->slots + (size_t)k * (size_t)j->n, m->params.grad, (size_t)j->n * sizeof(float));
        }
    }
    qkv__serial(prev);
}

/* the micro-batch machinery: W replicas and contexts, S slots, the views (freed by micro_free) */
static int micro_init(micro_job *j, qkv_model *m, const qkv_tensor *tok, const qkv_tensor *tgt, int S, int batch,
                      int seq, bool bf16, qkv_err *e) {
    int W = qkv_get_threads() < S ? qkv_get_threads() : S;
    *j = (micro_job){.S = S, .W = W, .n = m->params.numel};
    j->reps = calloc((size_t)W, sizeof *j->reps);
    j->ctxs = calloc((size_t)W, sizeof *j->ctxs);
    j->err = calloc((size_t)W, sizeof *j->err);
    j->tok = calloc((size_t)S, sizeof *j->tok);
    j->tgt = calloc((size_t)S, sizeof *j->tgt);
    j->slots = malloc((size_t)S * (size_t)j->n * sizeof(float));
    if (!j->reps || !j->ctxs || !j->err || !j->tok || !j->tgt || !j->slots) goto oom;
    for (int w = 0; w < W; w++) /* nn's message: said as out of memory below */
        if (!(j->reps[w] = qkv_model_replica(m, NULL)) || !(j->ctxs[w] = qkv_ctx_new())) goto oom;
    for (int w = 0; w < W; w++)
        if (qkv_ctx_set_bf16(j->ctxs[w], bf16)) return qkv_err_set(e, QKV_ERR_FAIL, "%s", qkv_ctx_error(j->ctxs[w]));
    int64_t rows = batch / S, shape[2] = {rows, seq};
    for (int k = 0; k < S; k++) {
        size_t off = (size_t)k * (size_t)rows * (size_t)seq * sizeof(int32_t);
        j->tok[k] = qkv_tensor_from_buffer(QKV_I32, 2, shape, (const char *)tok->data + off);
        j->tgt[k] = qkv_tensor_from_buffer(QKV_I32, 2, shape, (const char *)tgt->data + off);
        if (!j->tok[k] || !j->tgt[k]) goto oom;
    }
    return 0;
oom:
    return qkv_err_set(e, QKV_ERR_FAIL, "out of memory");
}

static void micro_free(micro_job *j) {
    for (int w = 0; j->reps && w < j->W; w++) qkv_model_free(j->reps[w]);
    for (int w = 0; j->ctxs && w < j->W; w++) qkv_ctx_free(j->ctxs[w]);
    for (int k = 0; j->tok && k < j->S; k++) qkv_tensor_free(j->tok[k]);
    for (int k = 0; j->tgt && k < j->S; k++) qkv_tensor_free(j->tgt[k]);
    free(j->reps), free(j->ctxs), free(j->err), free(j->tok), free(j->tgt), free(j->slots);
}

/* one micro-batched step's gradient into g (n floats); 0 or -1 with e */
static int micro_step(micro_job *j, float *g, qkv_err *e) {
    qkv__parallel_for(j->W, 1, micro_workers, j);
    for (int w = 0; w < j->W; w++)
        if (j->err[w].code != QKV_ERR_OK) return qkv_err_set(e, QKV_ERR_FAIL, "%s", j->err[w].msg);
    memcpy(g, j->slots, (size_t)j->n * sizeof *g);
    for (int k = 1; k < j->S; k++) /* g += slot k, in the order of k */
        qkv__k_binary_flat_f32(QKV_BIN_ADD, j->n, g, j->slots + (size_t)k * (size_t)j->n, g);
    return 0;
}

qkv_model_config qkv_bench_model_config(const qkv_bench_size *s, const qkv_model_config *over) {
    qkv_model_config mc = qkv_model_config_default();
    if (over) mc.attn = over->attn, mc.position = over->position, mc.rope_base = over->rope_base;
    mc.vocab = s->vocab;
    mc.seq_len = s->seq;
    mc.d_model = s->d_model;
    mc.heads = s->heads;
    mc.layers = s->layers;
    mc.d_ff = s->d_ff;
    return mc;
}

int qkv_bench_run_with(const qkv_bench_size *s, const qkv_model_config *over, int micro_batches, bool bf16, int warmup,
                       int steps,
                       uint64_t (*alloc_count)(void), qkv_bench_result *r, qkv_err *e) {
    memset(r, 0, sizeof *r);
    if (micro_batches < 1 || s->batch % micro_batches)
        return qkv_err_set(e, QKV_ERR_FAIL, "%d micro-batches do not divide the batch of %d", micro_batches, s->batch);
    qkv_model_config mc = qkv_bench_model_config(s, over);
    qkv_model *m = qkv_model_new(&mc, QKV_F32, 0, e);
    if (!m) return -1;
    qkv_optim_config oc = qkv_optim_config_default(); /* Adam, PyTorch's defaults */
    qkv_optim o = {0};
    qkv_ctx *ctx = qkv_ctx_new();
    int64_t shape[2] = {s->batch, s->seq};
    qkv_tensor *tok = qkv_tensor_zeros(QKV_I32, 2, shape), *tgt = qkv_tensor_zeros(QKV_I32, 2, shape);
    double *ms = calloc((size_t)steps, sizeof *ms);
    micro_job mj = {0};
    int rc = -1;
    if (!ctx || !tok || !tgt || !ms || qkv_optim_init(&o, &oc, m->params.numel)) {
        qkv_err_set(e, QKV_ERR_FAIL, "out of memory");
        goto done;
    }
    if (qkv_ctx_set_bf16(ctx, bf16)) {
        qkv_err_set(e, QKV_ERR_FAIL, "%s", qkv_ctx_error(ctx));
        goto done;
    }
    if (micro_batches > 1 && micro_init(&mj, m, tok, tgt, micro_batches, s->batch, s->seq, bf16, e)) goto done;
    qkv_rng rng;
    qkv_rng_seed(&rng, 1);
    for (int64_t i = 0; i < tok->numel; i++) { /* random tokens; loss at every position */
        ((int32_t *)tok->data)[i] = (int32_t)qkv_rng_below(&rng, (uint64_t)s->vocab);
        ((int32_t *)tgt->data)[i] = (int32_t)qkv_rng_below(&rng, (uint64_t)s->vocab);
    }
    uint64_t allocs0 = 0, flops0 = 0, ns0 = 0;
    double t_products = 0;
    /* warm-up, the timed steps, then as many again with every product timed (qkv__gemm_timing:
     * its clock reads slow the step a little, so the timed steps run without it) */
    for (int i = 0; i < warmup + 2 * steps; i++) {
        if (i == warmup) {
            allocs0 = alloc_count ? alloc_count() : 0;
            flops0 = qkv__gemm_flops;
        }
        if (i == warmup + steps) {
            r->steady_allocs = alloc_count ? (double)(alloc_count() - allocs0) / steps : -1;
            r->flops_per_step = (double)(qkv__gemm_flops - flops0) / steps;
            ns0 = qkv__gemm_ns;
            atomic_store(&qkv__gemm_timing, 1);
            t_products = qkv_clock_seconds();
        }
        double t = qkv_clock_seconds();
        if (micro_batches > 1) {
            if (micro_step(&mj, m->params.grad, e)) goto done;
        } else {
            qkv_ctx_reset(ctx);
            qkv_tensor *loss = qkv_model_loss(ctx, m, tok, tgt, NULL);
            if (!loss || qkv_backward(ctx, loss)) {
                qkv_err_set(e, QKV_ERR_FAIL, "%s", qkv_ctx_error(ctx));
                goto done;
            }
        }
        qkv_optim_step(&o, m->params.data, m->params.grad, 1e-3);
        qkv_params_zero_grad(&m->params);
        if (i >= warmup && i < warmup + steps) ms[i - warmup] = 1e3 * (qkv_clock_seconds() - t);
    }
    atomic_store(&qkv__gemm_timing, 0);
    /* the threads' time in the products over all the threads' time (W threads take part in a step) */
    int W = micro_batches > 1 ? mj.W : qkv_get_threads();
    double products_s = (double)(qkv__gemm_ns - ns0) / 1e9, wall = qkv_clock_seconds() - t_products;
    r->products_share = wall > 0 ? products_s / (W * wall) : 0;
    qsort(ms, (size_t)steps, sizeof *ms, cmp_d);
    r->ms_per_step = steps % 2 ? ms[steps / 2] : 0.5 * (ms[steps / 2 - 1] + ms[steps / 2]);
    r->ms_products = r->products_share * r->ms_per_step; /* the median step, at the timed steps' share */
    r->ms_min = ms[0];
    r->ms_max = ms[steps - 1];
    r->tokens_per_s = (double)s->batch * s->seq / (r->ms_per_step / 1e3);
    r->gflops = r->flops_per_step / (r->ms_per_step / 1e3) / 1e9;
    r->params = m->params.numel;
    r->model_mb = (double)m->params.numel * 4 * 4 / (1 << 20); /* params, grads, Adam m and v */
    double arena = (double)qkv_ctx_arena_peak(ctx);
    for (int w = 0; micro_batches > 1 && w < mj.W; w++) arena += (double)qkv_ctx_arena_peak(mj.ctxs[w]);
    r->activation_mb = arena / (1 << 20);
    rc = 0;
done:
    atomic_store(&qkv__gemm_timing, 0); /* off again after a failed step too */
    if (micro_batches > 1) micro_free(&mj);
    free(ms);
    qkv_tensor_free(tok);
    qkv_tensor_free(tgt);
    qkv_optim_free(&o);
    qkv_ctx_free(ctx);
    qkv_model_free(m);
    return rc;
}

double qkv_bench_sgemm_ceiling(int n, int reps) {
    /* OpenBLAS's own sgemm at qkv's thread count (OpenBLAS is otherwise kept at one thread) */
#ifdef OPENBLAS_VERSION
    openblas_set_num_threads(qkv_get_threads());
#endif
    float *a = malloc((size_t)n * n * sizeof *a), *b = malloc((size_t)n * n * sizeof *b),
          *c = malloc((size_t)n * n * sizeof *c);
    double best = 0;
    if (a && b && c) {
        for (size_t i = 0; i < (size_t)n * n; i++) { a[i] = (float)(i % 7) * 0.1f; b[i] = (float)(i % 5) * 0.1f; }
        for (int r = 0; r <= reps; r++) {
            double t = qkv_clock_seconds();
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
            double g = 2.0 * n * n * (double)n / (qkv_clock_seconds() - t) / 1e9;
            if (r > 0 && g > best) best = g; /* the first product warms caches and threads */
        }
    }
    free(a); free(b); free(c);
#ifdef OPENBLAS_VERSION
    openblas_set_num_threads(1);
#endif
    return best;
}

double qkv_bench_bf16_ceiling(int n, int reps) {
    /* qkv's own bf16 product (tensor/bf16.h: conversion, tiles over qkv's threads), as a step's */
    if (!qkv_bf16_available(NULL)) return 0;
    size_t bytes = (qkv__bf16_gemm_scratch(0, 0, n, n, n) + 63) / 64 * 64;
    float *a = malloc((size_t)n * n * sizeof *a), *b = malloc((size_t)n * n * sizeof *b),
          *c = malloc((size_t)n * n * sizeof *c);
    void *scratch = aligned_alloc(64, bytes);
    double best = 0;
    if (a && b && c && scratch) {
        for (size_t i = 0; i < (size_t)n * n; i++) { a[i] = (float)(i % 7) * 0.1f; b[i] = (float)(i % 5) * 0.1f; }
        for (int r = 0; r <= reps; r++) {
            double t = qkv_clock_seconds();
            qkv__bf16_gemm(0, 0, n, n, n, a, b, 0.0f, c, scratch);
            double g = 2.0 * n * n * (double)n / (qkv_clock_seconds() - t) / 1e9;
            if (r > 0 && g > best) best = g; /* the first product warms caches, threads and the JIT */
        }
    }
    free(a); free(b); free(c); free(scratch);
    return best;
}
