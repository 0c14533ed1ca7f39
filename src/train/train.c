/* The training loop (see train.h). */
#include "train/train.h"
#include "io/fileio.h"
#include "train/checkpoint.h"
#include "train/dist.h"
#include "train/memory.h"
#include "train/run_dir.h"
#include "train/verdict.h"
#include "tensor/parallel.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* set by qkv_request_stop (a signal handler): the loop checkpoints and stops */
static volatile sig_atomic_t stop_requested = 0;

void qkv_request_stop(void) { stop_requested = 1; }

typedef struct run {
    const qkv_config *cfg;
    const qkv_run_opts *opt;
    char *config_json;
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
    int workers;                    /* threads that each compute whole micro-batches (1: the caller alone) */
    qkv_model **reps;               /* per worker: a replica of the model (its own gradients) */
    qkv_ctx **ctxs;                 /* per worker: its own tape and arena */
    char (*werr)[512];              /* per worker: its error, "" when none */
    int64_t *counts;                /* every micro-batch's counted targets (shards) */
    double *losses;                 /* every micro-batch's mean loss (shards) */
    FILE *metrics;
    qkv_train_state st;             /* step, losses, skipped steps; st.seconds: earlier sessions' time */
    int64_t val_examples;           /* per validation; 0: the task has no validation split */
    double t0;                      /* this session's start */
    char path[4096];
} run;

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static const char *in_dir(run *r, const char *file) {
    snprintf(r->path, sizeof r->path, "%s/%s", r->opt->out_dir, file);
    return r->path;
}

/* ---- checkpoint: everything a resumed run needs, in one atomic file (checkpoint.c) ----------- */

static int save_checkpoint(run *r, char *err, int errlen) {
    qkv_train_state s = r->st;
    s.seconds += now() - r->t0; /* timing too: a resumed run reports the whole run's time */
    return qkv_checkpoint_save(r->opt->out_dir, r->model, &r->optim, &s, &r->task.train_rng, r->config_json,
                               err, errlen);
}

/* keep the metrics lines of steps the checkpoint has (a resumed run rewrites the rest) */
static int truncate_metrics(run *r, char *err, int errlen) {
    size_t len;
    char *text = qkv_read_file(in_dir(r, QKV_RUN_METRICS), &len, err, errlen);
    if (!text) return -1;
    size_t keep = 0;
    for (char *line = text; *line;) {
        char *nl = strchr(line, '\n');
        if (!nl) break; /* a torn last line is dropped */
        long long s = -1;
        if (sscanf(line, "{\"step\":%lld", &s) != 1 || s > r->st.step) break;
        keep = (size_t)(nl + 1 - text);
        line = nl + 1;
    }
    int rc = qkv_write_file_atomic(in_dir(r, QKV_RUN_METRICS), text, keep, err, errlen);
    free(text);
    return rc;
}

/* ---- logging ---------------------------------------------------------------------------------- */

static void fmt_eta(double s, char *buf, size_t n) {
    if (s < 60) snprintf(buf, n, "%.0fs", s);
    else if (s < 3600) snprintf(buf, n, "%dm%02ds", (int)s / 60, (int)s % 60);
    else snprintf(buf, n, "%dh%02dm", (int)s / 3600, (int)s % 3600 / 60);
}

static void progress(run *r, double loss, const qkv_eval_result *ev, double tps, double elapsed, bool tty, bool final) {
    if (r->opt->quiet) return;
    long long total = r->cfg->train.steps;
    char eta[32], acc[48] = "";
    double per = r->st.step ? elapsed / (double)r->st.step : 0;
    fmt_eta(per * (double)(total - r->st.step), eta, sizeof eta);
    if (ev && ev->positions) snprintf(acc, sizeof acc, "  eval acc %5.1f%%", 100 * ev->accuracy);
    if (tty)
        fprintf(stderr, "\r\033[Kstep %lld/%lld  loss %.4f%s  %.0f tok/s  ETA %s%s", r->st.step, total, loss, acc,
                tps, eta, final ? "\n" : "");
    else if (ev)
        fprintf(stderr, "step %lld/%lld loss %.4f eval_loss %.4f eval_acc %.4f tok/s %.0f elapsed %.1fs\n",
                r->st.step, total, loss, ev->loss, ev->accuracy, tps, elapsed);
}

/* a number as JSON: %.9g, or null when it is not finite (JSON has no NaN or Inf) */
static const char *jnum(double x, char *buf, size_t n) {
    if (isfinite(x)) snprintf(buf, n, "%.9g", x);
    else snprintf(buf, n, "null");
    return buf;
}

static int metrics_line(run *r, double loss, double lr, double gnorm, const qkv_eval_result *ev,
                        const qkv_eval_result *val, double tps, double elapsed, char *err, int errlen) {
    char a[32], b[32], c[32];
    errno = 0;
    fprintf(r->metrics, "{\"step\":%lld,\"loss\":%s,\"lr\":%.9g,\"grad_norm\":%s", r->st.step,
            jnum(loss, a, sizeof a), lr, jnum(gnorm, b, sizeof b));
    bool bytes = r->task.cfg.kind == QKV_TASK_TEXT; /* byte-level: bits per byte too */
    if (ev)
        fprintf(r->metrics, ",\"eval_loss\":%s,\"eval_accuracy\":%s", jnum(ev->loss, a, sizeof a),
                jnum(ev->accuracy, c, sizeof c));
    if (ev && bytes) fprintf(r->metrics, ",\"eval_bpb\":%s", jnum(ev->loss / QKV_LN2, a, sizeof a));
    if (ev && val)
        fprintf(r->metrics, ",\"val_loss\":%s,\"val_accuracy\":%s", jnum(val->loss, a, sizeof a),
                jnum(val->accuracy, c, sizeof c));
    if (ev && val && bytes) fprintf(r->metrics, ",\"val_bpb\":%s", jnum(val->loss / QKV_LN2, a, sizeof a));
    fprintf(r->metrics, ",\"skipped_steps\":%lld,\"tokens_per_s\":%.1f,\"elapsed\":%.3f}\n", r->st.skipped, tps, elapsed);
    if (fflush(r->metrics) || ferror(r->metrics)) {
        snprintf(err, (size_t)errlen, "%s/metrics.jsonl: cannot write: %s", r->opt->out_dir, strerror(errno ? errno : EIO));
        return -1;
    }
    return 0;
}

/* the first parameter whose gradient (grad) or value (!grad) holds a NaN or Inf */
static const char *nonfinite_param(const qkv_model *m, bool grad) {
    for (int i = 0; i < m->params.n; i++) {
        const qkv_tensor *t = &m->params.items[i]->t;
        const float *x = grad ? t->grad : t->data;
        for (int64_t j = 0; j < t->numel; j++)
            if (!isfinite(x[j])) return m->params.items[i]->name;
    }
    return NULL;
}

/* remove NAME.tmp.PID files that a killed process left in the run directory (never another
 * live process's: PID must be gone) */
static void remove_stale_temps(run *r) {
    DIR *d = opendir(r->opt->out_dir);
    if (!d) return;
    for (struct dirent *e; (e = readdir(d));) {
        const char *t = strstr(e->d_name, ".tmp.");
        if (!t || t == e->d_name) continue;
        char *end;
        long pid = strtol(t + 5, &end, 10);
        if (*end || end == t + 5 || pid <= 0 || pid == (long)getpid()) continue;
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", r->opt->out_dir, e->d_name);
        unlink(path);
    }
    closedir(d);
}

/* ---- the run directory --------------------------------------------------------------------- */

static const char *const RUN_FILES[] = {QKV_RUN_CONFIG, QKV_RUN_METRICS, QKV_RUN_MODEL, QKV_RUN_CHECKPOINT,
                                        QKV_RUN_SUMMARY};

/* whether out_dir holds any file of a run */
static bool holds_run(run *r) {
    for (size_t i = 0; i < sizeof RUN_FILES / sizeof RUN_FILES[0]; i++)
        if (access(in_dir(r, RUN_FILES[i]), F_OK) == 0) return true;
    return false;
}

/* remove a run's files (--force) */
static void clear_run(run *r) {
    for (size_t i = 0; i < sizeof RUN_FILES / sizeof RUN_FILES[0]; i++) unlink(in_dir(r, RUN_FILES[i]));
}

/* ---- one step: micro-batches, their gradients summed in order ------------------------------- */

/* rows [first, first + rows) of the batch buffers, as a batch of their own */
static qkv_batch batch_view(const qkv_batch *all, int first, int rows) {
    qkv_batch v = *all;
    size_t off = (size_t)first * (size_t)all->T;
    int64_t shape[2] = {rows, all->T};
    v.B = rows;
    v.tok = all->tok + off;
    v.tgt = all->tgt + off;
    v.pad_buf = all->pad_buf + off;
    qkv_shape_init(&v.tokens, QKV_I32, 2, shape);
    qkv_shape_init(&v.targets, QKV_I32, 2, shape);
    qkv_shape_init(&v.pad, QKV_I32, 2, shape);
    v.tokens.data = v.tok;
    v.targets.data = v.tgt;
    v.pad.data = v.pad_buf;
    return v;
}

/* an error on one of several processes: the others would wait for it forever, so stop them all */
static void fail_everywhere(const run *r, const char *err) {
    if (r->dist.size == 1) return;
    fprintf(stderr, "qkv train: process %d of %d: %s\n", r->dist.rank, r->dist.size, err);
    qkv_dist_abort(&r->dist, 1);
}

/* whether any process asks to stop (a signal, --stop-after, an error it hit) */
static bool any(const run *r, bool mine) {
    if (r->dist.size == 1) return mine;
    int v = mine, all[256];
    int *buf = r->dist.size <= 256 ? all : malloc((size_t)r->dist.size * sizeof *buf);
    if (!buf || qkv_dist_allgather(&r->dist, &v, buf, sizeof v)) fail_everywhere(r, "cannot exchange flags");
    bool out = false;
    for (int i = 0; i < r->dist.size; i++) out |= buf[i] != 0;
    if (buf != all) free(buf);
    return out;
}

/* micro-batch j of this process with model m and context ctx: its loss weighted by its share
 * of the step's `total` targets, backward, and its gradient into dst (when not NULL; it stays in
 * m's gradient buffer either way). 0, or -1 with err */
static int micro_batch(run *r, qkv_model *m, qkv_ctx *ctx, int j, int64_t total, float *dst, char *err, int errlen) {
    int k = r->first + j;
    qkv_batch v = batch_view(&r->batch, j * r->rows, r->rows);
    qkv_params_zero_grad(&m->params);
    qkv_ctx_reset(ctx);
    qkv_tensor *l = qkv_model_loss(ctx, m, &v.tokens, &v.targets, v.has_pad ? &v.pad : NULL);
    if (!l || (r->counts[k] > 0 && qkv_backward(ctx, qkv_scale(ctx, l, (double)r->counts[k] / (double)total)))) {
        snprintf(err, (size_t)errlen, "step %lld: %s", r->st.step + 1, qkv_ctx_error(ctx));
        return -1;
    }
    r->losses[k] = qkv_tensor_get(l, 0);
    if (dst) memcpy(dst, m->params.grad, (size_t)m->params.numel * sizeof *dst);
    return 0;
}

/* worker w's micro-batches: w, w + workers, ... , each alone on this thread */
static int64_t step_total;
static void worker_batches(void *arg, int64_t begin, int64_t end) {
    run *r = arg;
    int prev = qkv__serial(1);
    for (int64_t w = begin; w < end; w++) {
        r->werr[w][0] = 0;
        for (int j = (int)w; j < r->mine && !r->werr[w][0]; j += r->workers)
            micro_batch(r, r->reps[w], r->ctxs[w], j, step_total,
                        r->slots + (size_t)(r->first + j) * (size_t)r->model->params.numel, r->werr[w],
                        (int)sizeof r->werr[w]);
    }
    qkv__serial(prev);
}

/* The step's gradient into params.grad and its loss (the mean over every target the step
 * counts) into *loss. Each micro-batch k has its own examples (qkv_task_train_shard: keyed by
 * the step and k), its own forward and backward with its loss weighted by its share of the
 * step's targets, and its own gradient; the gradients are summed in the order of k, the first
 * copied: g = ((g_0 + g_1) + g_2) + ... . With several processes each computes its micro-
 * batches' gradients, every process gets all of them (bytes, not sums), and each sums them in
 * the same order: the same bits for any number of processes. Within a process, qkv's threads
 * each compute whole micro-batches alone (with the bits of one thread): the same bits for any
 * number of threads too. 0, or -1 with err. */
static int step_gradient(run *r, double *loss, char *err, int errlen) {
    qkv_model *m = r->model;
    int64_t n = m->params.numel;
    float *g = m->params.grad;
    int S = r->shards;
    /* this process's examples, and the targets each of its micro-batches counts */
    for (int j = 0; j < r->mine; j++) {
        qkv_batch v = batch_view(&r->batch, j * r->rows, r->rows);
        qkv_task_train_shard(&r->task, &v, r->st.step, r->first + j);
        int64_t c = 0;
        for (int64_t i = 0; i < (int64_t)v.B * v.T; i++) c += v.tgt[i] != QKV_IGNORE;
        r->counts[r->first + j] = c;
    }
    if (qkv_dist_allgather(&r->dist, r->counts + r->first, r->counts, (size_t)r->mine * sizeof *r->counts)) {
        snprintf(err, (size_t)errlen, "cannot exchange target counts");
        return -1;
    }
    int64_t total = 0;
    for (int k = 0; k < S; k++) total += r->counts[k];
    if (r->workers > 1) { /* whole micro-batches on qkv's threads, gradients into their slots */
        step_total = total;
        qkv_parallel_for(r->workers, 1, worker_batches, r);
        for (int w = 0; w < r->workers; w++)
            if (r->werr[w][0]) {
                snprintf(err, (size_t)errlen, "%s", r->werr[w]);
                return -1;
            }
    } else {
        for (int j = 0; j < r->mine; j++) {
            float *dst = r->acc ? NULL : r->slots + (size_t)(r->first + j) * (size_t)n;
            if (micro_batch(r, m, r->ctx, j, total, dst, err, errlen)) return -1;
            if (r->acc) { /* one process, one worker: the running sum */
                if (j == 0) memcpy(r->acc, g, (size_t)n * sizeof *g);
                else for (int64_t i = 0; i < n; i++) r->acc[i] += g[i];
            }
        }
    }
    if (r->acc) {
        memcpy(g, r->acc, (size_t)n * sizeof *g);
    } else {
        if (qkv_dist_allgather(&r->dist, r->slots + (size_t)r->first * (size_t)n, r->slots,
                               (size_t)r->mine * (size_t)n * sizeof *g) ||
            qkv_dist_allgather(&r->dist, r->losses + r->first, r->losses, (size_t)r->mine * sizeof *r->losses)) {
            snprintf(err, (size_t)errlen, "cannot exchange gradients");
            return -1;
        }
        memcpy(g, r->slots, (size_t)n * sizeof *g);
        for (int k = 1; k < S; k++) {
            const float *sk = r->slots + (size_t)k * (size_t)n;
            for (int64_t i = 0; i < n; i++) g[i] += sk[i];
        }
    }
    double l = 0;
    for (int k = 0; k < S && total > 0; k++) l += (double)r->counts[k] / (double)total * r->losses[k];
    *loss = l;
    return 0;
}

/* ---- the loop ------------------------------------------------------------------------------- */

static int setup(run *r, char *err, int errlen) {
    const qkv_config *c = r->cfg;
    if (qkv_task_open(&r->task, &c->task, (uint64_t)c->train.seed, err, errlen)) return -1;
    /* validation and evaluation examples are never trained on (generated tasks; the others by slices) */
    r->val_examples = qkv_task_split_size(&r->task, QKV_SPLIT_VAL) > 0
                          ? (c->train.val_examples ? c->train.val_examples : c->train.eval_examples) : 0;
    if (qkv_task_hold_out(&r->task, c->train.eval_examples, r->val_examples, err, errlen)) return -1;
    qkv_model_config mc = c->model;
    if (qkv_task_fit_model(&r->task, &mc, err, errlen)) return -1;
    const char *what = qkv_optim_state_floats(&c->optim) == 2 ? "parameters, Adam state and activations"
                       : qkv_optim_state_floats(&c->optim) == 1 ? "parameters, SGD momentum and activations"
                                                                : "parameters and activations";
    if (qkv_check_memory(&mc, c->train.batch, qkv_train_estimate_bytes(&mc, &c->optim, c->train.batch), what, err,
                         errlen))
        return -2; /* before anything is allocated or written */
    r->model = qkv_model_new(&mc, QKV_F32, (uint64_t)c->train.seed, err, errlen); /* the config is checked */
    if (!r->model) return -1;
    /* the step's micro-batches, whole ones to each process */
    r->shards = qkv_train_shards(&c->train);
    if (r->shards % r->dist.size) {
        snprintf(err, (size_t)errlen, "train.shards: %d micro-batches cannot be shared by %d processes (the process "
                 "count must divide train.shards)", r->shards, r->dist.size);
        return -1;
    }
    r->mine = r->shards / r->dist.size;
    r->first = r->dist.rank * r->mine;
    r->rows = c->train.batch / r->shards;
    int64_t n = r->model->params.numel;
    /* qkv's threads compute whole micro-batches at once, each alone (as with one thread: the
     * same bits for any thread count); without several micro-batches they split the ops */
    r->workers = qkv_get_threads() < r->mine ? qkv_get_threads() : r->mine;
    if (r->workers > 1) {
        r->reps = calloc((size_t)r->workers, sizeof *r->reps);
        r->ctxs = calloc((size_t)r->workers, sizeof *r->ctxs);
        r->werr = calloc((size_t)r->workers, sizeof *r->werr);
        for (int w = 0; r->reps && r->ctxs && r->werr && w < r->workers; w++) {
            if (!(r->reps[w] = qkv_model_replica(r->model, err, errlen))) return -1;
            if (!(r->ctxs[w] = qkv_ctx_new())) break;
        }
        if (!r->reps || !r->ctxs || !r->werr || !r->ctxs[r->workers - 1]) {
            snprintf(err, (size_t)errlen, "out of memory setting up training");
            return -1;
        }
    }
    r->counts = calloc((size_t)r->shards, sizeof *r->counts);
    r->losses = calloc((size_t)r->shards, sizeof *r->losses);
    if (r->dist.size > 1 || r->workers > 1) r->slots = malloc((size_t)r->shards * (size_t)n * sizeof(float));
    else r->acc = malloc((size_t)(n ? n : 1) * sizeof(float));
    if (qkv_optim_init(&r->optim, &c->optim, n) || !(r->ctx = qkv_ctx_new()) || !r->counts || !r->losses ||
        !(r->slots || r->acc) || qkv_batch_alloc(&r->batch, &r->task, r->rows * r->mine)) {
        snprintf(err, (size_t)errlen, "out of memory setting up training");
        return -1;
    }
    qkv_config eff = *c; /* the effective config: vocab and seq_len filled in */
    eff.model = mc;
    r->config_json = r->opt->config_json(&eff);
    if (!r->config_json) { snprintf(err, (size_t)errlen, "out of memory"); return -1; }
    /* every process reads the checkpoint; the first one alone keeps the run directory */
    if (r->opt->resume &&
        qkv_checkpoint_load(r->opt->out_dir, r->model, &r->optim, &r->st, &r->task.train_rng, err, errlen))
        return -1;
    if (r->dist.rank) return 0;
    if (!r->opt->resume && holds_run(r)) { /* never overwrite a run by accident */
        if (!r->opt->force) {
            snprintf(err, (size_t)errlen, "%s already holds a run; continue it with --resume %s, or start it over "
                     "with --force", r->opt->out_dir, r->opt->out_dir);
            return -1;
        }
        clear_run(r);
    }
    if (qkv_mkdirs(r->opt->out_dir, err, errlen)) return -1;
    remove_stale_temps(r);
    if (r->opt->resume && truncate_metrics(r, err, errlen)) return -1;
    /* a resumed run's config may have grown (train.steps: an extended run) */
    if (qkv_write_file_atomic(in_dir(r, QKV_RUN_CONFIG), r->config_json, strlen(r->config_json), err, errlen) ||
        (!r->opt->resume && qkv_write_file_atomic(in_dir(r, QKV_RUN_METRICS), "", 0, err, errlen)))
        return -1;
    r->metrics = fopen(in_dir(r, QKV_RUN_METRICS), "a");
    if (!r->metrics) { snprintf(err, (size_t)errlen, "%s: cannot append", r->path); return -1; }
    return 0;
}

static int write_summary(run *r, qkv_run_summary *s, char *err, int errlen) {
    qkv_verdict v;
    if (qkv_verdict_read(in_dir(r, QKV_RUN_METRICS), r->cfg->train.threshold, s->steps, &v, err, errlen)) return -1;
    s->verdict = v;
    char buf[1536], a[32], b[32], c[32], solved[32], flat[32], va[32], vl[32];
    snprintf(solved, sizeof solved, v.solved ? "%lld" : "null", v.solved_at);
    snprintf(flat, sizeof flat, v.flat_since >= 0 ? "%lld" : "null", v.flat_since);
    int n = snprintf(buf, sizeof buf,
                     "{\"eval_accuracy\":%s,\"eval_loss\":%s,\"train_loss\":%s,\"steps\":%lld,"
                     "\"skipped_steps\":%lld,\"seconds\":%.3f,\"params\":%lld,\"attn_params\":%lld,"
                     "\"eval_examples\":%lld,\"val_accuracy\":%s,\"val_loss\":%s,\"interrupted\":%s,"
                     "\"verdict\":\"%s\",\"solved_at\":%s,\"budget\":%lld,\"threshold\":%.9g,"
                     "\"trend\":\"%s\",\"flat_since\":%s,\"decided_on\":\"%s\"}\n",
                     jnum(s->eval.accuracy, a, sizeof a), jnum(s->eval.loss, b, sizeof b),
                     jnum(s->train_loss, c, sizeof c), s->steps, s->skipped_steps, s->seconds,
                     (long long)s->params, (long long)s->attn_params, (long long)s->eval.examples,
                     s->has_val ? jnum(s->val.accuracy, va, sizeof va) : "null",
                     s->has_val ? jnum(s->val.loss, vl, sizeof vl) : "null",
                     s->interrupted ? "true" : "false", v.solved ? "solved" : "unsolved", solved, v.budget,
                     r->cfg->train.threshold, v.improving ? "improving" : "flat", flat,
                     v.on_validation ? "validation" : "evaluation");
    if (s->text) { /* byte-level: bits per byte, and the baselines on the same held-out bytes */
        char xb[32], ub[32];
        n -= 2; /* before the closing "}\n" */
        n += snprintf(buf + n, sizeof buf - (size_t)n,
                      ",\"eval_bpb\":%s,\"val_bpb\":%s,\"baseline_xz_bpb\":%s,\"baseline_unigram_bpb\":%s}\n",
                      jnum(s->eval_bpb, a, sizeof a), s->has_val ? jnum(s->val_bpb, vl, sizeof vl) : "null",
                      jnum(s->baseline_xz_bpb, xb, sizeof xb), jnum(s->baseline_unigram_bpb, ub, sizeof ub));
    }
    return qkv_write_file_atomic(in_dir(r, QKV_RUN_SUMMARY), buf, (size_t)n, err, errlen);
}

int qkv_train(const qkv_config *cfg, const qkv_run_opts *opt, qkv_run_summary *sum, char *err, int errlen) {
    run R = {.cfg = cfg, .opt = opt}, *r = &R;
    memset(sum, 0, sizeof *sum);
    r->dist = qkv_dist_world();
    int rc = setup(r, err, errlen);
    if (any(r, rc != 0) && !rc) { /* every process starts, or none does */
        snprintf(err, (size_t)errlen, "another process could not set up the run");
        rc = -1;
    }
    const qkv_train_config *tc = &cfg->train;
    bool tty = isatty(2) && !opt->quiet;
    double t0 = now(), t_log = t0, lr = 0, gnorm = 0;
    r->t0 = t0;
    if (!opt->resume) r->st.last_loss = r->st.logged_loss = NAN;
    sum->train_loss = r->st.logged_loss;
    long long tokens_since = 0, start = r->st.step;
    qkv_eval_result ev = {0}, val = {0};
    bool have_eval = false;
    float *params = r->model ? r->model->params.data : NULL, *grads = r->model ? r->model->params.grad : NULL;
    int64_t np = r->model ? r->model->params.numel : 0;

    while (!rc && r->st.step < tc->steps) {
        /* every process stops at the same step: one that is asked to tells the others */
        if (any(r, stop_requested || (opt->stop_after && r->st.step - start >= opt->stop_after))) {
            sum->interrupted = true;
            break;
        }
        double lv;
        if (step_gradient(r, &lv, err, errlen)) {
            fail_everywhere(r, err);
            rc = -1;
            break;
        }
        gnorm = qkv_clip_grad_norm(grads, np, cfg->optim.clip);
        lr = qkv_schedule_lr(&cfg->optim, r->st.step, tc->steps);
        if (!isfinite(lv) || !isfinite(gnorm)) {
            /* parameters made non-finite by the last update (finite gradients can still overflow
             * with a huge lr) make every later step non-finite: skipping cannot recover. Checked
             * here, where it matters, rather than after every update. */
            const char *bad = nonfinite_param(r->model, false);
            if (bad) {
                snprintf(err, (size_t)errlen, "step %lld: parameter %s is non-finite (the update of step "
                         "%lld overflowed); lower optim.lr or set optim.clip", r->st.step + 1, bad, r->st.step);
                rc = -1;
                break;
            }
            const char *where = !isfinite(lv) ? "the loss" : nonfinite_param(r->model, true);
            char what[160];
            snprintf(what, sizeof what, "%s%s", isfinite(lv) ? "the gradient of " : "",
                     where ? where : "the gradients");
            if (!tc->skip_nonfinite) {
                snprintf(err, (size_t)errlen, "step %lld: non-finite value in %s (loss %s); set "
                         "train.skip_nonfinite to skip such steps, or lower optim.lr", r->st.step + 1,
                         what, isnan(lv) ? "nan" : isinf(lv) ? "inf" : "finite");
                rc = -1;
                break;
            }
            r->st.skipped++; /* said even with --quiet: a skipped step is never silent */
            fprintf(stderr, "%sqkv train: step %lld: skipped (non-finite value in %s); %lld skipped so far\n",
                    tty ? "\r\033[K" : "", r->st.step + 1, what, r->st.skipped);
        } else {
            qkv_optim_step(&r->optim, params, grads, lr);
            r->st.loss_sum += lv;
            r->st.loss_count++;
            r->st.last_loss = lv;
        }
        qkv_params_zero_grad(&r->model->params);
        r->st.step++;
        tokens_since += (long long)tc->batch * r->batch.T;

        /* the first process evaluates, logs and checkpoints (every process holds the same weights) */
        bool lead = r->dist.rank == 0, last = r->st.step == tc->steps;
        bool do_eval = lead && (last || (tc->eval_every > 0 && r->st.step % tc->eval_every == 0));
        bool do_log = lead && (do_eval || r->st.step % tc->log_every == 0);
        bool do_ckpt = lead && (last || (tc->checkpoint_every > 0 ? r->st.step % tc->checkpoint_every == 0 : do_eval));
        double t = now(), elapsed = r->st.seconds + (t - t0);
        double tps = t > t_log ? (double)tokens_since / (t - t_log) : 0;
        if (do_eval) {
            if (qkv_evaluate(r->ctx, r->model, &r->task, tc->eval_examples, tc->batch, &ev, err, errlen) ||
                (r->val_examples && qkv_evaluate_split(r->ctx, r->model, &r->task, QKV_SPLIT_VAL, r->val_examples,
                                                       tc->batch, &val, err, errlen))) {
                fail_everywhere(r, err);
                rc = -1;
                break;
            }
            have_eval = true;
        }
        if (do_log) {
            double mean = r->st.loss_count ? r->st.loss_sum / (double)r->st.loss_count : r->st.last_loss;
            if (metrics_line(r, mean, lr, gnorm, do_eval ? &ev : NULL, r->val_examples ? &val : NULL, tps, elapsed,
                             err, errlen)) {
                fail_everywhere(r, err);
                rc = -1;
                break;
            }
            sum->train_loss = r->st.logged_loss = mean;
            r->st.loss_sum = 0;
            r->st.loss_count = 0;
            t_log = t;
            tokens_since = 0;
        }
        if (do_eval || (tty && do_log)) progress(r, sum->train_loss, have_eval ? &ev : NULL, tps, elapsed, tty, false);
        if (do_ckpt && save_checkpoint(r, err, errlen)) rc = -1;
        if (rc) fail_everywhere(r, err);
    }
    bool lead = r->dist.rank == 0;
    if (!rc && lead && sum->interrupted && save_checkpoint(r, err, errlen)) rc = -1;
    /* resuming a run that had already finished (say its summary was lost): evaluate the
     * final model again rather than report the zeros of a session that trained nothing */
    if (!rc && lead && !sum->interrupted && r->st.step == start && r->model &&
        (qkv_evaluate(r->ctx, r->model, &r->task, tc->eval_examples, tc->batch, &ev, err, errlen) ||
         (r->val_examples && qkv_evaluate_split(r->ctx, r->model, &r->task, QKV_SPLIT_VAL, r->val_examples, tc->batch,
                                                &val, err, errlen))))
        rc = -1;
    if (tty && !rc) fputc('\n', stderr);
    sum->eval = ev;
    sum->val = val;
    sum->has_val = r->val_examples > 0;
    sum->steps = r->st.step;
    sum->skipped_steps = r->st.skipped;
    sum->seconds = r->st.seconds + (now() - t0);
    sum->params = r->model ? r->model->params.numel : 0;
    sum->processes = r->dist.size;
    if (r->model && !rc) { /* every process must hold the same weights: check it */
        const unsigned char *b = r->model->params.data;
        uint64_t h = 0xcbf29ce484222325ull, all[256];
        for (size_t i = 0; i < (size_t)r->model->params.numel * sizeof(float); i++) h = (h ^ b[i]) * 0x100000001b3ull;
        sum->param_checksum = h;
        if (r->dist.size > 1 && r->dist.size <= 256 && !qkv_dist_allgather(&r->dist, &h, all, sizeof h))
            for (int i = 0; i < r->dist.size && !rc; i++)
                if (all[i] != h) {
                    snprintf(err, (size_t)errlen, "process %d holds other weights than process %d (checksums %016llx "
                             "and %016llx)", i, r->dist.rank, (unsigned long long)all[i], (unsigned long long)h);
                    rc = -1;
                }
    }
    sum->attn_params = r->model ? qkv_model_attention_params(r->model) : 0;
    sum->text = r->task.cfg.kind == QKV_TASK_TEXT && r->task.text;
    if (sum->text) {
        sum->eval_bpb = ev.loss / QKV_LN2;
        sum->val_bpb = sum->has_val ? val.loss / QKV_LN2 : NAN;
        sum->baseline_xz_bpb = sum->baseline_unigram_bpb = NAN;
        char e[512]; /* xz -9 on the held-out bytes (about a second per 250 KB); once, for the summary */
        if (!rc && lead && !sum->interrupted &&
            qkv_task_text_baselines(&r->task, &sum->baseline_xz_bpb, &sum->baseline_unigram_bpb, e, sizeof e))
            fprintf(stderr, "qkv train: %s (summary.json's baselines are null)\n", e); /* the run is done: go on */
    }
    if (!rc && lead && !sum->interrupted && write_summary(r, sum, err, errlen)) rc = -1;
    if (r->metrics) fclose(r->metrics);
    qkv_batch_free(&r->batch);
    free(r->slots);
    free(r->acc);
    free(r->counts);
    free(r->losses);
    for (int w = 0; w < r->workers; w++) {
        if (r->reps) qkv_model_free(r->reps[w]);
        if (r->ctxs) qkv_ctx_free(r->ctxs[w]);
    }
    free(r->reps);
    free(r->ctxs);
    free(r->werr);
    qkv_ctx_free(r->ctx);
    qkv_optim_free(&r->optim);
    qkv_model_free(r->model);
    qkv_task_close(&r->task);
    free(r->config_json);
    return rc == -2 ? -2 : rc ? -1 : sum->interrupted ? 1 : 0;
}
