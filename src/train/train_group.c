/* Several runs of one model trained at once (see train.h: qkv_train_group; docs/performance.md,
 * "Batched runs").
 *
 * Each run is a member with everything a run alone has (run.c: its task and data stream, its
 * own model, optimizer, evaluations, metrics, checkpoints, directory). What the members share is
 * the computation of their gradients: one model of all the runs (qkv_model_new_runs) whose
 * every parameter holds each member's copy, fed with micro-batch j of every member at once (the
 * members' rows one after another). Its ops compute each member's rows with exactly the kernel
 * calls the member's own model would make, so the per-run losses and gradients are the bits the
 * member would get alone; they are then weighted, gathered and summed over the micro-batches in
 * the order and arithmetic of train.c, and each member takes its step (run.c) as alone. After the
 * step the members' new parameters are put back into the model of all runs.
 *
 * A member that fails stops: it takes no more steps, its loss weight is 0 and its gradients are
 * ignored; its rows are still computed (with its last data) until the group ends, so the shapes
 * and the other members' bits do not change. */
#include "train/train.h"
#include "train/memory.h"
#include "train/run.h"
#include "tensor/parallel.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct group {
    qkv_group_run *runs;
    int n;
    qkv__run *m;                /* the members: runs[i]'s run */
    bool *live;                 /* still training (not failed) */
    char (*label)[1100];        /* "DIR: " for the members' messages */
    qkv_model *all;             /* the model of every member's parameters */
    int shards, rows, T, workers;
    bool pad;                   /* the task pads its examples */
    int64_t np;                 /* parameters per run */
    qkv_model **reps;           /* per worker (workers > 1): a replica of `all` with its own gradients */
    qkv_ctx **ctxs;             /* per worker: a tape */
    qkv_batch *gb;              /* per worker: a micro-batch of every member, n x rows examples */
    char (*werr)[512];          /* per worker: its error */
    float *slots;               /* workers > 1: every member's micro-batch gradients (n x shards x np) */
    long long step;             /* the members' step (they take their steps together) */
} group;

/* ---- checks before anything is written ------------------------------------------------------- */

/* the first line where two JSON texts differ, trimmed, into out */
static void first_difference(const char *a, const char *b, char *out, size_t n) {
    const char *la = a, *lb = b;
    while (*a && *a == *b) {
        if (*a == '\n') la = a + 1, lb = b + 1;
        a++, b++;
    }
    while (*la == ' ' || *la == '\t') la++;
    while (*lb == ' ' || *lb == '\t') lb++;
    snprintf(out, n, "%.*s vs %.*s", (int)strcspn(la, "\n"), la, (int)strcspn(lb, "\n"), lb);
}

/* Every run's config equals the first's but for train.seed and optim.lr, once the task has
 * filled in vocab and seq_len (the first run's task: opened, then closed; a config that gives
 * them and one that leaves them to the task agree when they are the same); and the group fits
 * in memory. 0, -1 (err), -2 (memory) */
static int check(const qkv_group_run *runs, int n, char *err, int errlen) {
    const qkv_config *c0 = runs[0].cfg;
    qkv_task t;
    if (qkv_task_open(&t, &c0->task, (uint64_t)c0->train.seed, err, errlen)) return -1;
    char *ref = NULL;
    int rc = 0;
    for (int i = 0; i < n && !rc; i++) {
        qkv_config c = *runs[i].cfg;
        c.train.seed = c0->train.seed;
        c.optim.lr = c0->optim.lr;
        if (qkv_task_fit_model(&t, &c.model, err, errlen)) {
            rc = -1;
            break;
        }
        char *j = runs[0].opt.config_json(&c);
        if (!j) {
            snprintf(err, (size_t)errlen, "out of memory");
            rc = -1;
        } else if (!ref) {
            ref = j;
            j = NULL;
            char what[96];
            snprintf(what, sizeof what, "%d runs trained together", n);
            int64_t need = qkv_train_group_estimate_bytes(&c.model, &c.optim, c.train.batch, qkv_train_shards(&c.train), n);
            if (qkv_check_memory(&c.model, c.train.batch, need, what, err, errlen)) rc = -2;
        } else if (strcmp(j, ref)) {
            char d[300];
            first_difference(ref, j, d, sizeof d);
            snprintf(err, (size_t)errlen, "runs %s and %s differ in more than train.seed and optim.lr (%s): they "
                     "cannot train as one group", runs[0].opt.out_dir, runs[i].opt.out_dir, d);
            rc = -1;
        }
        free(j);
    }
    free(ref);
    qkv_task_close(&t);
    return rc;
}

/* ---- a member stops --------------------------------------------------------------------------- */

static void fail(group *g, int i, const char *err) {
    if (!g->live[i]) return;
    g->live[i] = false;
    g->runs[i].rc = -1;
    snprintf(g->runs[i].err, sizeof g->runs[i].err, "%s", err);
}

/* ---- one step: micro-batch j of every member at once ----------------------------------------- */

/* micro-batch j on worker w (the model of all runs, or its replica w): every live member's
 * examples into the worker's batch, one forward and backward of the per-run losses, each
 * weighted by its share of the member's targets (0 for a member without targets there, or
 * failed), and each member's gradient into its slot j (workers > 1) or its running sum (one
 * worker, j in order). 0, or -1 with err */
static int micro_batch(group *g, int w, int j, char *err, int errlen) {
    qkv_model *model = g->workers > 1 ? g->reps[w] : g->all;
    qkv_ctx *ctx = g->ctxs[w];
    qkv_batch *b = &g->gb[w];
    size_t per = (size_t)g->rows * (size_t)g->T, bytes = per * sizeof(int32_t);
    for (int i = 0; i < g->n; i++) {
        if (!g->live[i]) continue; /* a failed member's rows keep their last examples */
        qkv_batch v = qkv__batch_view(&g->m[i].batch, j * g->rows, g->rows);
        memcpy(b->tok + (size_t)i * per, v.tok, bytes);
        memcpy(b->tgt + (size_t)i * per, v.tgt, bytes);
        if (g->pad) memcpy(b->pad_buf + (size_t)i * per, v.pad_buf, bytes);
    }
    qkv_params_zero_grad(&model->params);
    qkv_ctx_reset(ctx);
    qkv_tensor *l = qkv_model_loss(ctx, model, &b->tokens, &b->targets, g->pad ? &b->pad : NULL);
    int64_t n = g->n;
    qkv_tensor *weight = l ? qkv_ctx_tensor(ctx, QKV_F32, 1, &n) : NULL;
    bool any = false;
    for (int i = 0; weight && i < g->n; i++) {
        const qkv__run *m = &g->m[i];
        bool counts = g->live[i] && m->counts[j] > 0; /* alone: no backward without targets */
        /* as alone scales its loss: qkv_scale by counts / total, i.e. a seed of that, rounded */
        qkv_tensor_set(weight, i, counts ? (double)m->counts[j] / (double)m->total : 0.0);
        any |= counts;
    }
    if (!weight || (any && qkv_backward(ctx, qkv_sum_all(ctx, qkv_mul(ctx, l, weight))))) {
        snprintf(err, (size_t)errlen, "step %lld: %s", g->step + 1, qkv_ctx_error(ctx));
        return -1;
    }
    for (int i = 0; i < g->n; i++) {
        qkv__run *m = &g->m[i];
        if (!g->live[i]) continue;
        m->losses[j] = qkv_tensor_get(l, i);
        bool counts = m->counts[j] > 0;
        if (g->workers > 1) {
            float *slot = g->slots + ((size_t)i * (size_t)g->shards + (size_t)j) * (size_t)g->np;
            if (counts) qkv_params_get_run_grad(&model->params, i, slot);
            else memset(slot, 0, (size_t)g->np * sizeof *slot);
        } else { /* the running sum, as train.c's: g = g_0, then g += g_j */
            float *acc = m->model->params.grad;
            if (j == 0 && counts) qkv_params_get_run_grad(&model->params, i, acc);
            else if (j == 0) memset(acc, 0, (size_t)g->np * sizeof *acc);
            else if (counts) qkv_params_add_run_grad(&model->params, i, acc);
            else for (int64_t k = 0; k < g->np; k++) acc[k] += 0.0f; /* alone adds its zero gradient too */
        }
    }
    return 0;
}

/* worker w's micro-batches: w, w + workers, ... , each with one thread's kernels */
static void worker_batches(void *arg, int64_t begin, int64_t end) {
    group *g = arg;
    int prev = qkv__serial(1);
    for (int64_t w = begin; w < end; w++) {
        g->werr[w][0] = 0;
        for (int j = (int)w; j < g->shards && !g->werr[w][0]; j += g->workers)
            micro_batch(g, (int)w, j, g->werr[w], (int)sizeof g->werr[w]);
    }
    qkv__serial(prev);
}

/* every live member's gradient of this step into its model's gradient buffer, as train.c's
 * step_gradient makes it alone. 0, or -1 with err (the group's computation failed) */
static int step_gradients(group *g, char *err, int errlen) {
    for (int i = 0; i < g->n; i++)
        if (g->live[i]) qkv__run_draw(&g->m[i]);
    if (g->workers > 1) {
        qkv__parallel_for(g->workers, 1, worker_batches, g);
        for (int w = 0; w < g->workers; w++)
            if (g->werr[w][0]) {
                snprintf(err, (size_t)errlen, "%s", g->werr[w]);
                return -1;
            }
        for (int i = 0; i < g->n; i++) { /* g = ((g_0 + g_1) + g_2) + ... */
            if (!g->live[i]) continue;
            float *grad = g->m[i].model->params.grad, *s = g->slots + (size_t)i * (size_t)g->shards * (size_t)g->np;
            memcpy(grad, s, (size_t)g->np * sizeof *grad);
            for (int k = 1; k < g->shards; k++) {
                const float *sk = s + (size_t)k * (size_t)g->np;
                for (int64_t e = 0; e < g->np; e++) grad[e] += sk[e];
            }
        }
    } else {
        for (int j = 0; j < g->shards; j++)
            if (micro_batch(g, 0, j, err, errlen)) return -1;
    }
    return 0;
}

/* ---- setup and the loop ---------------------------------------------------------------------- */

static int setup(group *g, char *err, int errlen) {
    int n = g->n;
    g->m = calloc((size_t)n, sizeof *g->m);
    g->live = calloc((size_t)n, sizeof *g->live);
    g->label = calloc((size_t)n, sizeof *g->label);
    if (!g->m || !g->live || !g->label) {
        snprintf(err, (size_t)errlen, "out of memory");
        return -1;
    }
    int failed = 0;
    for (int i = 0; i < n; i++) {
        qkv__run *m = &g->m[i];
        snprintf(g->label[i], sizeof g->label[i], "%s: ", g->runs[i].opt.out_dir);
        *m = (qkv__run){.cfg = g->runs[i].cfg, .opt = &g->runs[i].opt, .label = g->label[i]};
        m->dist = (qkv_dist){0, 1};
        char e[1024];
        if (qkv__run_setup(m, false, e, sizeof e)) {
            snprintf(g->runs[i].err, sizeof g->runs[i].err, "%s", e);
            g->runs[i].rc = -1;
            failed++;
            continue;
        }
        m->tty = false; /* several runs: no progress line rewritten in place */
        g->live[i] = true;
    }
    if (failed) { /* every run starts, or none does */
        for (int i = 0; i < n; i++)
            if (g->runs[i].rc == -1) {
                snprintf(err, (size_t)errlen, "%s", g->runs[i].err);
                break;
            }
        return -1;
    }
    const qkv__run *m0 = &g->m[0];
    for (int i = 1; i < n; i++)
        if (g->m[i].st.step != m0->st.step) {
            snprintf(err, (size_t)errlen, "runs %s and %s stand at steps %lld and %lld: a group takes its steps "
                     "together (resume them apart)", g->runs[0].opt.out_dir, g->runs[i].opt.out_dir, m0->st.step,
                     g->m[i].st.step);
            return -1;
        }
    g->step = m0->st.step;
    g->shards = m0->shards;
    g->rows = m0->rows;
    g->T = m0->batch.T;
    g->pad = m0->task.variable_length;
    g->np = m0->model->params.numel;
    g->workers = qkv_get_threads() < g->shards ? qkv_get_threads() : g->shards; /* as alone: train.c */
    char e[512];
    g->all = qkv_model_new_runs(&m0->model->cfg, QKV_F32, n, e, sizeof e);
    if (!g->all) {
        snprintf(err, (size_t)errlen, "%s", e);
        return -1;
    }
    for (int i = 0; i < n; i++) qkv_params_put_run(&g->all->params, i, g->m[i].model->params.data);
    int W = g->workers;
    g->ctxs = calloc((size_t)W, sizeof *g->ctxs);
    g->gb = calloc((size_t)W, sizeof *g->gb);
    g->werr = calloc((size_t)W, sizeof *g->werr);
    if (!g->ctxs || !g->gb || !g->werr) {
        snprintf(err, (size_t)errlen, "out of memory setting up training");
        return -1;
    }
    if (W > 1) {
        g->reps = calloc((size_t)W, sizeof *g->reps);
        g->slots = malloc((size_t)n * (size_t)g->shards * (size_t)g->np * sizeof *g->slots);
        if (!g->reps || !g->slots) {
            snprintf(err, (size_t)errlen, "out of memory setting up training");
            return -1;
        }
    }
    for (int w = 0; w < W; w++) {
        if (W > 1 && !(g->reps[w] = qkv_model_replica(g->all, e, sizeof e))) {
            snprintf(err, (size_t)errlen, "%s", e);
            return -1;
        }
        if (!(g->ctxs[w] = qkv_ctx_new()) || qkv_batch_alloc(&g->gb[w], &g->m[0].task, n * g->rows)) {
            snprintf(err, (size_t)errlen, "out of memory setting up training");
            return -1;
        }
        memset(g->gb[w].pad_buf, 0, (size_t)n * (size_t)g->rows * (size_t)g->T * sizeof(int32_t));
        g->gb[w].has_pad = g->pad;
    }
    return 0;
}

static void group_free(group *g) {
    for (int w = 0; w < g->workers; w++) {
        if (g->reps) qkv_model_free(g->reps[w]);
        if (g->ctxs) qkv_ctx_free(g->ctxs[w]);
        if (g->gb) qkv_batch_free(&g->gb[w]);
    }
    free(g->reps);
    free(g->ctxs);
    free(g->gb);
    free(g->werr);
    free(g->slots);
    qkv_model_free(g->all);
    for (int i = 0; g->m && i < g->n; i++) qkv__run_free(&g->m[i]);
    free(g->m);
    free(g->live);
    free(g->label);
}

int qkv_train_group(qkv_group_run *runs, int n, char *err, int errlen) {
    if (n < 1) {
        snprintf(err, (size_t)errlen, "a group needs at least one run");
        return -1;
    }
    for (int i = 0; i < n; i++) {
        memset(&runs[i].sum, 0, sizeof runs[i].sum);
        runs[i].rc = 0;
        runs[i].err[0] = 0;
    }
    if (qkv__dist_world().size > 1) {
        snprintf(err, (size_t)errlen, "runs train together in one process only (not under mpirun with %d processes)",
                 qkv__dist_world().size);
        return -1;
    }
    int rc = check(runs, n, err, errlen);
    if (rc) return rc;
    group G = {.runs = runs, .n = n}, *g = &G;
    if (setup(g, err, errlen)) {
        for (int i = 0; i < n; i++) runs[i].rc = -1;
        group_free(g);
        return -1;
    }
    double t0 = qkv_clock_seconds();
    for (int i = 0; i < n; i++) g->m[i].t0 = g->m[i].t_log = t0;
    long long steps = g->m[0].cfg->train.steps;
    for (;;) {
        int first = -1; /* a live member: the group's clock and stop request are its */
        for (int i = n - 1; i >= 0; i--)
            if (g->live[i]) first = i;
        if (first < 0 || g->step >= steps) break;
        if (qkv__run_should_stop(&g->m[first])) {
            for (int i = 0; i < n; i++) g->m[i].interrupted = g->live[i];
            break;
        }
        char e[1024];
        if (step_gradients(g, e, sizeof e)) { /* the shared computation failed: every live member with it */
            for (int i = 0; i < n; i++) fail(g, i, e);
            break;
        }
        for (int i = 0; i < n; i++) {
            if (!g->live[i]) continue;
            bool updated;
            if (qkv__run_update(&g->m[i], qkv__run_loss(&g->m[i]), &updated, e, sizeof e)) fail(g, i, e);
            else if (updated) qkv_params_put_run(&g->all->params, i, g->m[i].model->params.data);
        }
        g->step++;
    }
    for (int i = 0; i < n; i++) {
        char e[1024] = "";
        int r = qkv__run_finish(&g->m[i], g->live[i] ? 0 : -1, &runs[i].sum, e, sizeof e);
        if (g->live[i] && r < 0) snprintf(runs[i].err, sizeof runs[i].err, "%s", e);
        runs[i].rc = r;
    }
    group_free(g);
    return 0;
}
