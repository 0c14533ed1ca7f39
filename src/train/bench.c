/* The training-step benchmark (see bench.h). */
#include "train/bench.h"
#include "tensor/clock.h"
#include "nn/model.h"
#include "optim/optim.h"
#include "tensor/kernels.h"
#include "tensor/parallel.h"
#include "tensor/rng.h"

#include <cblas.h>

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
                  qkv_bench_result *r, char *err, int errlen) {
    return qkv_bench_run_attn(s, NULL, warmup, steps, alloc_count, r, err, errlen);
}

int qkv_bench_run_attn(const qkv_bench_size *s, const qkv_attn_config *attn, int warmup, int steps,
                       uint64_t (*alloc_count)(void), qkv_bench_result *r, char *err, int errlen) {
    memset(r, 0, sizeof *r);
    qkv_model_config mc = qkv_model_config_default();
    if (attn) mc.attn = *attn;
    mc.vocab = s->vocab;
    mc.seq_len = s->seq;
    mc.d_model = s->d_model;
    mc.heads = s->heads;
    mc.layers = s->layers;
    mc.d_ff = s->d_ff;
    qkv_model *m = qkv_model_new(&mc, QKV_F32, 0, err, errlen);
    if (!m) return -1;
    qkv_optim_config oc = qkv_optim_config_default(); /* Adam, PyTorch's defaults */
    qkv_optim o = {0};
    qkv_ctx *ctx = qkv_ctx_new();
    int64_t shape[2] = {s->batch, s->seq};
    qkv_tensor *tok = qkv_tensor_zeros(QKV_I32, 2, shape), *tgt = qkv_tensor_zeros(QKV_I32, 2, shape);
    double *ms = calloc((size_t)steps, sizeof *ms);
    int rc = -1;
    if (!ctx || !tok || !tgt || !ms || qkv_optim_init(&o, &oc, m->params.numel)) {
        snprintf(err, (size_t)errlen, "out of memory");
        goto done;
    }
    qkv_rng rng;
    qkv_rng_seed(&rng, 1);
    for (int64_t i = 0; i < tok->numel; i++) { /* random tokens; loss at every position */
        ((int32_t *)tok->data)[i] = (int32_t)qkv_rng_below(&rng, (uint64_t)s->vocab);
        ((int32_t *)tgt->data)[i] = (int32_t)qkv_rng_below(&rng, (uint64_t)s->vocab);
    }
    uint64_t allocs0 = 0, flops0 = 0;
    for (int i = 0; i < warmup + steps; i++) {
        if (i == warmup) {
            allocs0 = alloc_count ? alloc_count() : 0;
            flops0 = qkv__gemm_flops;
        }
        double t = qkv_clock_seconds();
        qkv_ctx_reset(ctx);
        qkv_tensor *loss = qkv_model_loss(ctx, m, tok, tgt, NULL);
        if (!loss || qkv_backward(ctx, loss)) {
            snprintf(err, (size_t)errlen, "%s", qkv_ctx_error(ctx));
            goto done;
        }
        qkv_optim_step(&o, m->params.data, m->params.grad, 1e-3);
        qkv_params_zero_grad(&m->params);
        if (i >= warmup) ms[i - warmup] = 1e3 * (qkv_clock_seconds() - t);
    }
    r->steady_allocs = alloc_count ? (double)(alloc_count() - allocs0) / steps : -1;
    r->flops_per_step = (double)(qkv__gemm_flops - flops0) / steps;
    qsort(ms, (size_t)steps, sizeof *ms, cmp_d);
    r->ms_per_step = steps % 2 ? ms[steps / 2] : 0.5 * (ms[steps / 2 - 1] + ms[steps / 2]);
    r->ms_min = ms[0];
    r->ms_max = ms[steps - 1];
    r->tokens_per_s = (double)s->batch * s->seq / (r->ms_per_step / 1e3);
    r->gflops = r->flops_per_step / (r->ms_per_step / 1e3) / 1e9;
    r->params = m->params.numel;
    r->model_mb = (double)m->params.numel * 4 * 4 / (1 << 20); /* params, grads, Adam m and v */
    r->activation_mb = (double)qkv_ctx_arena_peak(ctx) / (1 << 20);
    rc = 0;
done:
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
