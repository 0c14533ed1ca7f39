/* The training loop (see train.h). */
#include "train/train.h"
#include "io/fileio.h"
#include "train/checkpoint.h"
#include "train/memory.h"
#include "train/run_dir.h"
#include "train/verdict.h"

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
    qkv_batch batch;
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
    if (ev)
        fprintf(r->metrics, ",\"eval_loss\":%s,\"eval_accuracy\":%s", jnum(ev->loss, a, sizeof a),
                jnum(ev->accuracy, c, sizeof c));
    if (ev && val)
        fprintf(r->metrics, ",\"val_loss\":%s,\"val_accuracy\":%s", jnum(val->loss, a, sizeof a),
                jnum(val->accuracy, c, sizeof c));
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
    if (qkv_optim_init(&r->optim, &c->optim, r->model->params.numel) || !(r->ctx = qkv_ctx_new()) ||
        qkv_batch_alloc(&r->batch, &r->task, c->train.batch)) {
        snprintf(err, (size_t)errlen, "out of memory setting up training");
        return -1;
    }
    qkv_config eff = *c; /* the effective config: vocab and seq_len filled in */
    eff.model = mc;
    r->config_json = r->opt->config_json(&eff);
    if (!r->config_json) { snprintf(err, (size_t)errlen, "out of memory"); return -1; }
    if (qkv_mkdirs(r->opt->out_dir, err, errlen)) return -1;
    remove_stale_temps(r);
    if (r->opt->resume) {
        if (qkv_checkpoint_load(r->opt->out_dir, r->model, &r->optim, &r->st, &r->task.train_rng, err, errlen) ||
            truncate_metrics(r, err, errlen))
            return -1;
    }
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
    return qkv_write_file_atomic(in_dir(r, QKV_RUN_SUMMARY), buf, (size_t)n, err, errlen);
}

int qkv_train(const qkv_config *cfg, const qkv_run_opts *opt, qkv_run_summary *sum, char *err, int errlen) {
    run R = {.cfg = cfg, .opt = opt}, *r = &R;
    memset(sum, 0, sizeof *sum);
    int rc = setup(r, err, errlen);
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
        if (stop_requested || (opt->stop_after && r->st.step - start >= opt->stop_after)) {
            sum->interrupted = true;
            break;
        }
        qkv_task_train_batch(&r->task, &r->batch);
        qkv_ctx_reset(r->ctx);
        qkv_tensor *loss = qkv_model_loss(r->ctx, r->model, &r->batch.tokens, &r->batch.targets,
                                          r->batch.has_pad ? &r->batch.pad : NULL);
        if (!loss || qkv_backward(r->ctx, loss)) {
            snprintf(err, (size_t)errlen, "step %lld: %s", r->st.step + 1, qkv_ctx_error(r->ctx));
            rc = -1;
            break;
        }
        double lv = qkv_tensor_get(loss, 0);
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
        tokens_since += (long long)r->batch.B * r->batch.T;

        bool last = r->st.step == tc->steps;
        bool do_eval = last || (tc->eval_every > 0 && r->st.step % tc->eval_every == 0);
        bool do_log = do_eval || r->st.step % tc->log_every == 0;
        bool do_ckpt = last || (tc->checkpoint_every > 0 ? r->st.step % tc->checkpoint_every == 0 : do_eval);
        double t = now(), elapsed = r->st.seconds + (t - t0);
        double tps = t > t_log ? (double)tokens_since / (t - t_log) : 0;
        if (do_eval) {
            if (qkv_evaluate(r->ctx, r->model, &r->task, tc->eval_examples, tc->batch, &ev, err, errlen) ||
                (r->val_examples && qkv_evaluate_split(r->ctx, r->model, &r->task, QKV_SPLIT_VAL, r->val_examples,
                                                       tc->batch, &val, err, errlen))) {
                rc = -1;
                break;
            }
            have_eval = true;
        }
        if (do_log) {
            double mean = r->st.loss_count ? r->st.loss_sum / (double)r->st.loss_count : r->st.last_loss;
            if (metrics_line(r, mean, lr, gnorm, do_eval ? &ev : NULL, r->val_examples ? &val : NULL, tps, elapsed,
                             err, errlen)) {
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
    }
    if (!rc && sum->interrupted && save_checkpoint(r, err, errlen)) rc = -1;
    /* resuming a run that had already finished (say its summary was lost): evaluate the
     * final model again rather than report the zeros of a session that trained nothing */
    if (!rc && !sum->interrupted && r->st.step == start && r->model &&
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
    sum->attn_params = r->model ? qkv_model_attention_params(r->model) : 0;
    if (!rc && !sum->interrupted && write_summary(r, sum, err, errlen)) rc = -1;
    if (r->metrics) fclose(r->metrics);
    qkv_batch_free(&r->batch);
    qkv_ctx_free(r->ctx);
    qkv_optim_free(&r->optim);
    qkv_model_free(r->model);
    qkv_task_close(&r->task);
    free(r->config_json);
    return rc == -2 ? -2 : rc ? -1 : sum->interrupted ? 1 : 0;
}
