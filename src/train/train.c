/* The training loop (see train.h). */
#include "train/train.h"
#include "io/fileio.h"
#include "io/safetensors.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

volatile sig_atomic_t qkv_stop_requested = 0;

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
    long long step;                 /* steps done */
    double loss_sum, seconds_before; /* training loss since the last log line; time of earlier sessions */
    long long loss_count, skipped;
    double last_loss;               /* the last finite step loss (a log line's fallback) */
    double logged_loss;             /* the last logged mean loss (the summary's train_loss) */
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

/* ---- checkpoint: everything a resumed run needs, in one atomic file ------------------------ */

static int save_checkpoint(run *r, char *err, int errlen) {
    qkv_model *m = r->model;
    int n = m->params.n;
    qkv_st_item *items = malloc((size_t)(n + 4) * sizeof *items);
    if (!items) { snprintf(err, (size_t)errlen, "out of memory saving a checkpoint"); return -1; }
    for (int i = 0; i < n; i++) items[i] = (qkv_st_item){m->params.items[i]->name, &m->params.items[i]->t};
    int k = n;
    int64_t pn = m->params.numel, s6 = 9, s8 = 8;
    qkv_tensor tm, tv, ts, tr;
    /* everything a resumed run needs to continue as if never stopped (timing included) */
    double scal[9] = {(double)r->step, r->loss_sum, (double)r->loss_count, (double)r->skipped,
                      r->task.train_rng.spare, (double)r->task.train_rng.has_spare, r->last_loss,
                      r->logged_loss, r->seconds_before + (now() - r->t0)};
    int32_t rng[8];
    for (int i = 0; i < 4; i++) {
        rng[2 * i] = (int32_t)(uint32_t)(r->task.train_rng.s[i] & 0xffffffffu);
        rng[2 * i + 1] = (int32_t)(uint32_t)(r->task.train_rng.s[i] >> 32);
    }
    if (r->optim.m) { qkv_shape_init(&tm, QKV_F32, 1, &pn); tm.data = r->optim.m; items[k++] = (qkv_st_item){"optim.m", &tm}; }
    if (r->optim.v) { qkv_shape_init(&tv, QKV_F32, 1, &pn); tv.data = r->optim.v; items[k++] = (qkv_st_item){"optim.v", &tv}; }
    qkv_shape_init(&ts, QKV_F64, 1, &s6); ts.data = scal; items[k++] = (qkv_st_item){"state.scalars", &ts};
    qkv_shape_init(&tr, QKV_I32, 1, &s8); tr.data = rng; items[k++] = (qkv_st_item){"state.rng", &tr};
    char steps[32], osteps[32];
    snprintf(steps, sizeof steps, "%lld", r->step);
    snprintf(osteps, sizeof osteps, "%lld", r->optim.step);
    const char *meta[6] = {"format", "pt", "qkv_step", steps, "qkv_optim_step", osteps};
    int rc = qkv_st_write(in_dir(r, "checkpoint.safetensors"), items, k, meta, 3, err, (size_t)errlen);
    free(items);
    /* the parameters alone, for users and PyTorch */
    if (!rc) rc = qkv_save_model(m, in_dir(r, "model.safetensors"), r->config_json, r->step, err, errlen);
    return rc;
}

static int load_checkpoint(run *r, char *err, int errlen) {
    const char *path = in_dir(r, "checkpoint.safetensors");
    if (access(path, R_OK)) {
        snprintf(err, (size_t)errlen, "%s: no checkpoint to resume from (%s)", path, strerror(errno));
        return -1;
    }
    if (qkv_load_model(r->model, path, err, errlen)) return -1;
    qkv_safetensors *st;
    if (qkv_st_read(path, &st, err, (size_t)errlen)) return -1;
    const qkv_st_entry *se = qkv_st_find(st, "state.scalars");
    int64_t pn = r->model->params.numel, s6 = se && se->ndim == 1 && se->shape[0] == 6 ? 6 : 9, s8 = 8;
    double scal[9] = {0, 0, 0, 0, 0, 0, NAN, NAN, 0}; /* 6 entries: a checkpoint from before 0.1.0's last change */
    int32_t rng[8];
    qkv_tensor tm, tv, ts, tr;
    qkv_shape_init(&ts, QKV_F64, 1, &s6); ts.data = scal;
    qkv_shape_init(&tr, QKV_I32, 1, &s8); tr.data = rng;
    int rc = qkv_st_load_into(st, "state.scalars", &ts, err, (size_t)errlen) ||
             qkv_st_load_into(st, "state.rng", &tr, err, (size_t)errlen);
    if (!rc && r->optim.m) { qkv_shape_init(&tm, QKV_F32, 1, &pn); tm.data = r->optim.m; rc = qkv_st_load_into(st, "optim.m", &tm, err, (size_t)errlen); }
    if (!rc && r->optim.v) { qkv_shape_init(&tv, QKV_F32, 1, &pn); tv.data = r->optim.v; rc = qkv_st_load_into(st, "optim.v", &tv, err, (size_t)errlen); }
    const char *os = qkv_st_meta(st, "qkv_optim_step");
    if (!rc) {
        r->step = (long long)scal[0];
        r->loss_sum = scal[1];
        r->loss_count = (long long)scal[2];
        r->skipped = (long long)scal[3];
        r->task.train_rng.spare = scal[4];
        r->task.train_rng.has_spare = (int)scal[5];
        r->last_loss = scal[6];
        r->logged_loss = scal[7];
        r->seconds_before = scal[8];
        for (int i = 0; i < 4; i++)
            r->task.train_rng.s[i] = (uint64_t)(uint32_t)rng[2 * i] | (uint64_t)(uint32_t)rng[2 * i + 1] << 32;
        r->optim.step = os ? atoll(os) : r->step - r->skipped;
    }
    qkv_st_free(st);
    return rc ? -1 : 0;
}

/* keep the metrics lines of steps the checkpoint has (a resumed run rewrites the rest) */
static int truncate_metrics(run *r, char *err, int errlen) {
    size_t len;
    char *text = qkv_read_file(in_dir(r, "metrics.jsonl"), &len, err, errlen);
    if (!text) return -1;
    size_t keep = 0;
    for (char *line = text; *line;) {
        char *nl = strchr(line, '\n');
        if (!nl) break; /* a torn last line is dropped */
        long long s = -1;
        if (sscanf(line, "{\"step\":%lld", &s) != 1 || s > r->step) break;
        keep = (size_t)(nl + 1 - text);
        line = nl + 1;
    }
    int rc = qkv_write_file_atomic(in_dir(r, "metrics.jsonl"), text, keep, err, errlen);
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
    double per = r->step ? elapsed / (double)r->step : 0;
    fmt_eta(per * (double)(total - r->step), eta, sizeof eta);
    if (ev && ev->positions) snprintf(acc, sizeof acc, "  eval acc %5.1f%%", 100 * ev->accuracy);
    if (tty)
        fprintf(stderr, "\r\033[Kstep %lld/%lld  loss %.4f%s  %.0f tok/s  ETA %s%s", r->step, total, loss, acc,
                tps, eta, final ? "\n" : "");
    else if (ev)
        fprintf(stderr, "step %lld/%lld loss %.4f eval_loss %.4f eval_acc %.4f tok/s %.0f elapsed %.1fs\n",
                r->step, total, loss, ev->loss, ev->accuracy, tps, elapsed);
}

/* a number as JSON: %.9g, or null when it is not finite (JSON has no NaN or Inf) */
static const char *jnum(double x, char *buf, size_t n) {
    if (isfinite(x)) snprintf(buf, n, "%.9g", x);
    else snprintf(buf, n, "null");
    return buf;
}

static int metrics_line(run *r, double loss, double lr, double gnorm, const qkv_eval_result *ev,
                        double tps, double elapsed, char *err, int errlen) {
    char a[32], b[32], c[32];
    errno = 0;
    fprintf(r->metrics, "{\"step\":%lld,\"loss\":%s,\"lr\":%.9g,\"grad_norm\":%s", r->step,
            jnum(loss, a, sizeof a), lr, jnum(gnorm, b, sizeof b));
    if (ev)
        fprintf(r->metrics, ",\"eval_loss\":%s,\"eval_accuracy\":%s", jnum(ev->loss, a, sizeof a),
                jnum(ev->accuracy, c, sizeof c));
    fprintf(r->metrics, ",\"skipped_steps\":%lld,\"tokens_per_s\":%.1f,\"elapsed\":%.3f}\n", r->skipped, tps, elapsed);
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
    qkv_model_config mc = c->model;
    if (qkv_task_fit_model(&r->task, &mc, err, errlen)) return -1;
    if (qkv_model_check_memory(&mc, c->train.batch, qkv_model_estimate_bytes(&mc, c->train.batch),
                               "parameters, Adam state and activations", err, errlen))
        return -2; /* before anything is allocated or written */
    r->model = qkv_model_new(&mc, QKV_F32, (uint64_t)c->train.seed, err, errlen);
    if (!r->model) return -1;
    if (qkv_optim_init(&r->optim, &c->optim, r->model->params.numel) || !(r->ctx = qkv_ctx_new()) ||
        qkv_batch_alloc(&r->batch, &r->task, c->train.batch)) {
        snprintf(err, (size_t)errlen, "out of memory setting up training");
        return -1;
    }
    qkv_config eff = *c; /* the effective config: vocab and seq_len filled in */
    eff.model = mc;
    r->config_json = qkv_config_to_json(&eff);
    if (!r->config_json) { snprintf(err, (size_t)errlen, "out of memory"); return -1; }
    if (qkv_mkdirs(r->opt->out_dir, err, errlen)) return -1;
    remove_stale_temps(r);
    if (r->opt->resume) {
        if (load_checkpoint(r, err, errlen) || truncate_metrics(r, err, errlen)) return -1;
    } else {
        int rc = qkv_write_file_atomic(in_dir(r, "config.json"), r->config_json, strlen(r->config_json),
                                       err, errlen);
        if (rc || qkv_write_file_atomic(in_dir(r, "metrics.jsonl"), "", 0, err, errlen)) return -1;
    }
    r->metrics = fopen(in_dir(r, "metrics.jsonl"), "a");
    if (!r->metrics) { snprintf(err, (size_t)errlen, "%s: cannot append", r->path); return -1; }
    return 0;
}

static int write_summary(run *r, qkv_run_summary *s, char *err, int errlen) {
    char buf[1024], a[32], b[32], c[32];
    int n = snprintf(buf, sizeof buf,
                     "{\"eval_accuracy\":%s,\"eval_loss\":%s,\"train_loss\":%s,\"steps\":%lld,"
                     "\"skipped_steps\":%lld,\"seconds\":%.3f,\"params\":%lld,\"attn_params\":%lld,"
                     "\"eval_examples\":%lld,\"interrupted\":%s}\n",
                     jnum(s->eval.accuracy, a, sizeof a), jnum(s->eval.loss, b, sizeof b),
                     jnum(s->train_loss, c, sizeof c), s->steps, s->skipped_steps, s->seconds,
                     (long long)s->params, (long long)s->attn_params, (long long)s->eval.examples,
                     s->interrupted ? "true" : "false");
    return qkv_write_file_atomic(in_dir(r, "summary.json"), buf, (size_t)n, err, errlen);
}

int qkv_train(const qkv_config *cfg, const qkv_run_opts *opt, qkv_run_summary *sum, char *err, int errlen) {
    run R = {.cfg = cfg, .opt = opt}, *r = &R;
    memset(sum, 0, sizeof *sum);
    int rc = setup(r, err, errlen);
    const qkv_train_config *tc = &cfg->train;
    bool tty = isatty(2) && !opt->quiet;
    double t0 = now(), t_log = t0, lr = 0, gnorm = 0;
    r->t0 = t0;
    if (!opt->resume) r->last_loss = r->logged_loss = NAN;
    sum->train_loss = r->logged_loss;
    long long tokens_since = 0, start = r->step;
    qkv_eval_result ev = {0};
    bool have_eval = false;
    float *params = r->model ? r->model->params.data : NULL, *grads = r->model ? r->model->params.grad : NULL;
    int64_t np = r->model ? r->model->params.numel : 0;

    while (!rc && r->step < tc->steps) {
        if (qkv_stop_requested || (opt->stop_after && r->step - start >= opt->stop_after)) {
            sum->interrupted = true;
            break;
        }
        qkv_task_train_batch(&r->task, &r->batch);
        qkv_ctx_reset(r->ctx);
        qkv_tensor *loss = qkv_model_loss(r->ctx, r->model, &r->batch.tokens, &r->batch.targets,
                                          r->batch.has_pad ? &r->batch.pad : NULL);
        if (!loss || qkv_backward(r->ctx, loss)) {
            snprintf(err, (size_t)errlen, "step %lld: %s", r->step + 1, qkv_ctx_error(r->ctx));
            rc = -1;
            break;
        }
        double lv = qkv_tensor_get(loss, 0);
        gnorm = qkv_clip_grad_norm(grads, np, cfg->optim.clip);
        lr = qkv_schedule_lr(&cfg->optim, r->step, tc->steps);
        if (!isfinite(lv) || !isfinite(gnorm)) {
            /* parameters made non-finite by the last update (finite gradients can still overflow
             * with a huge lr) make every later step non-finite: skipping cannot recover. Checked
             * here, where it matters, rather than after every update. */
            const char *bad = nonfinite_param(r->model, false);
            if (bad) {
                snprintf(err, (size_t)errlen, "step %lld: parameter %s is non-finite (the update of step "
                         "%lld overflowed); lower optim.lr or set optim.clip", r->step + 1, bad, r->step);
                rc = -1;
                break;
            }
            const char *where = !isfinite(lv) ? "the loss" : nonfinite_param(r->model, true);
            char what[160];
            snprintf(what, sizeof what, "%s%s", isfinite(lv) ? "the gradient of " : "",
                     where ? where : "the gradients");
            if (!tc->skip_nonfinite) {
                snprintf(err, (size_t)errlen, "step %lld: non-finite value in %s (loss %s); set "
                         "train.skip_nonfinite to skip such steps, or lower optim.lr", r->step + 1,
                         what, isnan(lv) ? "nan" : isinf(lv) ? "inf" : "finite");
                rc = -1;
                break;
            }
            r->skipped++; /* said even with --quiet: a skipped step is never silent */
            fprintf(stderr, "%sqkv train: step %lld: skipped (non-finite value in %s); %lld skipped so far\n",
                    tty ? "\r\033[K" : "", r->step + 1, what, r->skipped);
        } else {
            qkv_optim_step(&r->optim, params, grads, lr);
            r->loss_sum += lv;
            r->loss_count++;
            r->last_loss = lv;
        }
        qkv_params_zero_grad(&r->model->params);
        r->step++;
        tokens_since += (long long)r->batch.B * r->batch.T;

        bool last = r->step == tc->steps;
        bool do_eval = last || (tc->eval_every > 0 && r->step % tc->eval_every == 0);
        bool do_log = do_eval || r->step % tc->log_every == 0;
        bool do_ckpt = last || (tc->checkpoint_every > 0 ? r->step % tc->checkpoint_every == 0 : do_eval);
        double t = now(), elapsed = r->seconds_before + (t - t0);
        double tps = t > t_log ? (double)tokens_since / (t - t_log) : 0;
        if (do_eval) {
            if (qkv_evaluate(r->ctx, r->model, &r->task, tc->eval_examples, tc->batch, &ev, err, errlen)) {
                rc = -1;
                break;
            }
            have_eval = true;
        }
        if (do_log) {
            double mean = r->loss_count ? r->loss_sum / (double)r->loss_count : r->last_loss;
            if (metrics_line(r, mean, lr, gnorm, do_eval ? &ev : NULL, tps, elapsed, err, errlen)) {
                rc = -1;
                break;
            }
            sum->train_loss = r->logged_loss = mean;
            r->loss_sum = 0;
            r->loss_count = 0;
            t_log = t;
            tokens_since = 0;
        }
        if (do_eval || (tty && do_log)) progress(r, sum->train_loss, have_eval ? &ev : NULL, tps, elapsed, tty, false);
        if (do_ckpt && save_checkpoint(r, err, errlen)) rc = -1;
    }
    if (!rc && sum->interrupted && save_checkpoint(r, err, errlen)) rc = -1;
    /* resuming a run that had already finished (say its summary was lost): evaluate the
     * final model again rather than report the zeros of a session that trained nothing */
    if (!rc && !sum->interrupted && r->step == start && r->model &&
        qkv_evaluate(r->ctx, r->model, &r->task, tc->eval_examples, tc->batch, &ev, err, errlen))
        rc = -1;
    if (tty && !rc) fputc('\n', stderr);
    sum->eval = ev;
    sum->steps = r->step;
    sum->skipped_steps = r->skipped;
    sum->seconds = r->seconds_before + (now() - t0);
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
