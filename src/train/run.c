/* One training run's state, directory, and the part of its step after the gradient (see run.h). */
#include "train/run.h"
#include "train/stop.h"
#include "app/heartbeat.h"
#include "config/config.h"
#include "io/fileio.h"
#include "io/strbuf.h"
#include "optim/optim_internal.h"
#include "tensor/bf16.h"
#include "tensor/buildinfo.h"
#include "tensor/parallel.h"
#include "train/memory.h"
#include "train/run_dir.h"
#include "train/observe.h"
#include "train/verdict.h"
#include "train/vocabulary.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

bool qkv__run_should_stop(const qkv__run *r) {
    return qkv_stop_requested() || (r->opt->stop_after && r->st.step - r->start >= r->opt->stop_after);
}

/* out_dir/file, into r->path (the one before it freed); NULL when out of memory, said in e (when
 * not NULL) */
static const char *in_dir(qkv__run *r, const char *file, qkv_err *e) {
    free(r->path);
    r->path = qkv__pathf("%s/%s", r->opt->out_dir, file);
    if (!r->path && e) qkv_err_set(e, QKV_ERR_FAIL, "out of memory");
    return r->path;
}

/* ---- checkpoint: everything a resumed run needs, in one atomic file (checkpoint.c) ----------- */

static int save_checkpoint(qkv__run *r, qkv_err *e) {
    qkv_train_state s = r->st;
    s.seconds += qkv_clock_seconds() - r->t0; /* timing too: a resumed run reports the whole run's time */
    qkv_vocabulary_meta v; /* what the token ids mean */
    int nv = qkv_vocabulary_meta_of(&r->task, &v);
    return qkv_checkpoint_save(r->opt->out_dir, r->model, &r->optim, &s, &r->task.train_rng, r->config_json, v.pairs,
                               nv, e);
}

/* keep the metrics lines of steps the checkpoint has (a resumed run rewrites the rest) */
static int truncate_metrics(qkv__run *r, qkv_err *e) {
    size_t len;
    const char *path = in_dir(r, QKV_RUN_METRICS, e);
    if (!path) return -1;
    char *text = qkv__read_file(path, &len, e);
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
    int rc = qkv__write_file_atomic(path, text, keep, e);
    free(text);
    return rc;
}

/* ---- logging ---------------------------------------------------------------------------------- */

static void fmt_eta(double s, char *buf, size_t n) {
    if (s < 60) snprintf(buf, n, "%.0fs", s);
    else if (s < 3600) snprintf(buf, n, "%dm%02ds", (int)s / 60, (int)s % 60);
    else snprintf(buf, n, "%dh%02dm", (int)s / 3600, (int)s % 3600 / 60);
}

/* the progress line: on a terminal rewritten in place; in a log (file, pipe) one line with the
 * evaluation, its time kept in r->t_shown (the caller decides when one is due) */
static void progress(qkv__run *r, double loss, const qkv_eval_result *ev, double tps, double elapsed, bool final) {
    if (r->opt->quiet) return;
    long long total = r->cfg->train.steps;
    char eta[32], acc[48] = "";
    double per = r->st.step ? elapsed / (double)r->st.step : 0;
    fmt_eta(per * (double)(total - r->st.step), eta, sizeof eta);
    bool bytes = r->task.cfg.kind == QKV_TASK_TEXT; /* byte-level text: its measure is bits per byte */
    if (ev && ev->positions && bytes) snprintf(acc, sizeof acc, "  eval %.3f bits/byte", ev->bpb);
    else if (ev && ev->positions) snprintf(acc, sizeof acc, "  eval acc %5.1f%%", 100 * ev->accuracy);
    if (r->tty)
        fprintf(stderr, "\r\033[Kstep %lld/%lld  loss %.4f%s  %.0f tok/s  ETA %s%s", r->st.step, total,
                loss, acc, tps, eta, final ? "\n" : "");
    else if (!ev) { /* between evaluations: the step and the loss so far */
        fprintf(stderr, "step %lld/%lld loss %.4f tok/s %.0f elapsed %.1fs\n", r->st.step, total, loss, tps, elapsed);
        qkv__heartbeat_said();
        r->shown = true;
        r->t_shown = qkv_clock_seconds();
    } else if (bytes) {
        fprintf(stderr, "step %lld/%lld loss %.4f eval_loss %.4f eval_bpb %.4f tok/s %.0f elapsed %.1fs\n",
                r->st.step, total, loss, ev->loss, ev->bpb, tps, elapsed);
        qkv__heartbeat_said();
        r->shown = true;
        r->t_shown = qkv_clock_seconds();
    } else {
        fprintf(stderr, "step %lld/%lld loss %.4f eval_loss %.4f eval_acc %.4f tok/s %.0f elapsed %.1fs\n",
                r->st.step, total, loss, ev->loss, ev->accuracy, tps, elapsed);
        qkv__heartbeat_said();
        r->shown = true;
        r->t_shown = qkv_clock_seconds();
    }
}

/* a number as JSON: %.9g, or null when it is not finite (JSON has no NaN or Inf) */
static const char *jnum(double x, char *buf, size_t n) {
    if (isfinite(x)) snprintf(buf, n, "%.9g", x);
    else snprintf(buf, n, "null");
    return buf;
}

static int metrics_line(qkv__run *r, double loss, const qkv_eval_result *ev, const qkv_eval_result *val, double tps,
                        double elapsed, qkv_err *e) {
    char a[32], b[32], c[32];
    errno = 0;
    fprintf(r->metrics, "{\"step\":%lld,\"loss\":%s,\"lr\":%.9g,\"grad_norm\":%s", r->st.step,
            jnum(loss, a, sizeof a), r->lr, jnum(r->gnorm, b, sizeof b));
    bool bytes = r->task.cfg.kind == QKV_TASK_TEXT; /* byte-level: bits per byte too */
    if (ev)
        fprintf(r->metrics, ",\"eval_loss\":%s,\"eval_accuracy\":%s", jnum(ev->loss, a, sizeof a),
                jnum(ev->accuracy, c, sizeof c));
    if (ev && bytes) fprintf(r->metrics, ",\"eval_bpb\":%s", jnum(ev->bpb, a, sizeof a));
    if (ev && val)
        fprintf(r->metrics, ",\"val_loss\":%s,\"val_accuracy\":%s", jnum(val->loss, a, sizeof a),
                jnum(val->accuracy, c, sizeof c));
    if (ev && val && bytes) fprintf(r->metrics, ",\"val_bpb\":%s", jnum(val->bpb, a, sizeof a));
    fprintf(r->metrics, ",\"skipped_steps\":%lld,\"tokens_per_s\":%.1f,\"elapsed\":%.3f}\n", r->st.skipped, tps, elapsed);
    if (fflush(r->metrics) || ferror(r->metrics)) {
        return qkv_err_set(e, QKV_ERR_FAIL, "%s/metrics.jsonl: cannot write: %s", qkv__shown(r->opt->out_dir).s,
                           strerror(errno ? errno : EIO));
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

/* remove NAME.tmp.PID.TAG (and an older qkv's NAME.tmp.PID) files that a killed process left in
 * the run directory: never another live process's (PID must be gone) nor another host's (TAG must
 * be this host's: io/fileio.h) */
static void remove_stale_temps(qkv__run *r) {
    DIR *d = opendir(r->opt->out_dir);
    if (!d) return;
    for (struct dirent *e; (e = readdir(d));) {
        const char *t = strstr(e->d_name, ".tmp.");
        if (!t || t == e->d_name) continue;
        char *end;
        long pid = strtol(t + 5, &end, 10);
        if (*end == '.') { /* the host tag: this host's only */
            char tag[QKV_HOST_TAG_LEN + 1];
            qkv__host_tag(tag);
            if (strcmp(end + 1, tag)) continue;
            end += 1 + QKV_HOST_TAG_LEN;
        }
        if (*end || end == t + 5 || pid <= 0 || pid == (long)getpid()) continue;
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue;
        const char *path = in_dir(r, e->d_name, NULL);
        if (path) unlink(path);
    }
    closedir(d);
}

/* ---- the run directory --------------------------------------------------------------------- */

/* One trainer per run directory: an exclusive flock on the directory itself, held while this
 * process trains (the kernel releases it when the process ends, however it ends; no file is
 * left behind). A second trainer, a worker's orphaned child still running, say, is refused.
 * A file system without flock on directories trains unlocked. 0, or -1 with e */
static int lock_run(qkv__run *r, qkv_err *e) {
    int fd = open(r->opt->out_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return 0; /* mkdirs made it: the writes below report what is wrong */
    if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
        r->lock_fd = fd + 1;
        return 0;
    }
    int no = errno;
    close(fd);
    if (no != EWOULDBLOCK) return 0;
    return qkv_err_set(e, QKV_ERR_FAIL, "%s: another qkv train is training this run (it holds the directory's lock); "
                       "stop it first", qkv__shown(r->opt->out_dir).s);
}

static const char *const RUN_FILES[] = {QKV_RUN_CONFIG, QKV_RUN_METRICS, QKV_RUN_MODEL, QKV_RUN_CHECKPOINT,
                                        QKV_RUN_SUMMARY, QKV_RUN_TOKENIZER};

/* whether out_dir holds any file of a run */
static bool holds_run(qkv__run *r) {
    for (size_t i = 0; i < sizeof RUN_FILES / sizeof RUN_FILES[0]; i++) {
        const char *path = in_dir(r, RUN_FILES[i], NULL);
        if (!path || access(path, F_OK) == 0) return true; /* out of memory: as if it did (never overwritten) */
    }
    return false;
}

/* remove a run's files (--force) */
static void clear_run(qkv__run *r) {
    for (size_t i = 0; i < sizeof RUN_FILES / sizeof RUN_FILES[0]; i++) {
        const char *path = in_dir(r, RUN_FILES[i], NULL);
        if (path) unlink(path);
    }
}

qkv_batch qkv__batch_view(const qkv_batch *all, int first, int rows) {
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

void qkv__run_draw(qkv__run *r) {
    for (int j = 0; j < r->mine; j++) {
        qkv_batch v = qkv__batch_view(&r->batch, j * r->rows, r->rows);
        qkv_task_train_shard(&r->task, &v, r->st.step, r->first + j);
        int64_t c = 0;
        for (int64_t i = 0; i < (int64_t)v.B * v.T; i++) c += v.tgt[i] != QKV_IGNORE;
        r->counts[r->first + j] = c;
    }
    r->total = 0;
    for (int k = 0; k < r->mine; k++) r->total += r->counts[r->first + k];
}

double qkv__run_loss(const qkv__run *r) {
    double l = 0;
    for (int k = 0; k < r->shards && r->total > 0; k++) l += (double)r->counts[k] / (double)r->total * r->losses[k];
    return l;
}

/* ---- setup ---------------------------------------------------------------------------------- */

/* a fresh run keeps the text task's tokenizer beside it (run_dir.h) */
static int write_tokenizer(qkv__run *r, qkv_err *e) {
    const char *path = in_dir(r, QKV_RUN_TOKENIZER, e);
    return path ? qkv__write_file_atomic(path, r->task.tokenizer_model, r->task.tokenizer_model_len, e) : -1;
}

int qkv__run_setup(qkv__run *r, qkv_err *e) {
    const qkv_config *c = r->cfg;
    r->tty = isatty(2) && !r->opt->quiet;
    /* bf16 products where this CPU (or build) has none: refused before any work or write */
    if (qkv_precision_usable(&c->train, e)) return -1;
    qkv_task_config tc = c->task; /* a resumed run's vocabulary is the one it kept */
    if (r->opt->resume) qkv_use_run_tokenizer(&tc, r->opt->out_dir, true);
    /* what may take seconds before the first step (heartbeat.h: a line while it does) */
    if (tc.kind == QKV_TASK_TEXT && tc.tokenizer != QKV_TOKENIZER_BYTES && !tc.tokenizer_path[0])
        qkv__heartbeat_doing("training the vocabulary (%d %s pieces) on the training text", tc.pieces,
                             QKV_TOKENIZER_NAMES[tc.tokenizer]);
    else qkv__heartbeat_doing("reading the task's data");
    qkv_stop_nothing_to_save(!qkv_stop_requested()); /* Ctrl-C ends a vocabulary's training at once */
    int opened = qkv_task_open(&r->task, &tc, (uint64_t)c->train.seed, e);
    qkv_stop_nothing_to_save(false);
    qkv__heartbeat_doing(NULL);
    if (opened) return -1;
    /* a model the task refuses (causal: false where targets follow) is said before any work */
    qkv_model_config mc = c->model;
    if (qkv_task_fit_model(&r->task, &mc, e)) return -1;
    /* validation and evaluation examples are never trained on (generated tasks; the others by slices) */
    r->val_examples = qkv_task_split_size(&r->task, QKV_SPLIT_VAL) > 0
                          ? (c->train.val_examples ? c->train.val_examples : c->train.eval_examples) : 0;
    if (qkv_task_hold_out(&r->task, c->train.eval_examples, r->val_examples, e)) return -1;
    const char *what = qkv_optim_state_floats(&c->optim) == 2 ? "parameters, Adam state and activations"
                       : qkv_optim_state_floats(&c->optim) == 1 ? "parameters, SGD momentum and activations"
                                                                : "parameters and activations";
    /* QKV_ERR_MEMORY, before anything is allocated or written */
    if (qkv_check_memory(&mc, c->train.batch, qkv_train_estimate_bytes(&mc, &c->optim, c->train.batch), what, e))
        return -1;
    r->model = qkv_model_new(&mc, QKV_F32, (uint64_t)c->train.seed, e); /* the config is checked */
    if (!r->model) return -1;
    /* the step's micro-batches, whole ones to each process */
    r->shards = qkv_train_shards(&c->train);
    if (r->shards % r->dist.size)
        return qkv_err_set(e, QKV_ERR_USAGE, "train.shards: %d micro-batches cannot be shared by %d processes (the "
                           "process count must divide train.shards)", r->shards, r->dist.size);
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
            if (!(r->reps[w] = qkv_model_replica(r->model, e))) return -1;
            if (!(r->ctxs[w] = qkv_ctx_new())) break;
        }
        if (!r->reps || !r->ctxs || !r->werr || !r->ctxs[r->workers - 1])
            return qkv_err_set(e, QKV_ERR_FAIL, "out of memory setting up training");
        for (int w = 0; w < r->workers; w++)
            if (qkv_ctx_set_bf16(r->ctxs[w], c->train.precision == QKV_PRECISION_BF16))
                return qkv_err_set(e, QKV_ERR_FAIL, "%s", qkv_ctx_error(r->ctxs[w]));
    }
    r->counts = calloc((size_t)r->shards, sizeof *r->counts);
    r->losses = calloc((size_t)r->shards, sizeof *r->losses);
    if (r->dist.size > 1 || r->workers > 1) r->slots = malloc((size_t)r->shards * (size_t)n * sizeof(float));
    else r->acc = malloc((size_t)(n ? n : 1) * sizeof(float));
    if (qkv_optim_init(&r->optim, &c->optim, n) || !(r->ctx = qkv_ctx_new()) || !r->counts || !r->losses ||
        !(r->slots || r->acc) || qkv_batch_alloc(&r->batch, &r->task, r->rows * r->mine))
        return qkv_err_set(e, QKV_ERR_FAIL, "out of memory setting up training");
    /* the products' precision, for training and evaluation alike */
    if (qkv_ctx_set_bf16(r->ctx, c->train.precision == QKV_PRECISION_BF16))
        return qkv_err_set(e, QKV_ERR_FAIL, "%s", qkv_ctx_error(r->ctx));
    qkv_config eff = *c; /* the effective config: vocab and seq_len filled in */
    eff.model = mc;
    r->config_json = qkv_config_to_json(&eff); /* for config.json and the model files' metadata */
    if (!r->config_json) return qkv_err_set(e, QKV_ERR_FAIL, "out of memory");
    /* every process reads the checkpoint; the first one alone keeps the run directory */
    if (r->opt->resume &&
        qkv_checkpoint_load(r->opt->out_dir, r->model, &r->optim, &r->st, &r->task.train_rng, e))
        return -1;
    if (r->opt->resume && r->task.tokenizer) { /* the vocabulary it trained with, --force or not */
        char *ck = qkv__pathf("%s/" QKV_RUN_CHECKPOINT, r->opt->out_dir);
        int bad = !ck ? qkv_err_set(e, QKV_ERR_FAIL, "out of memory") : qkv_check_vocabulary(ck, &r->task, e);
        free(ck);
        if (bad) return -1;
    }
    if (!r->opt->resume) r->st.last_loss = r->st.logged_loss = NAN;
    r->train_loss = r->st.logged_loss;
    r->start = r->st.step;
    /* a finished run resumed (every step done, its summary written): nothing to do, and nothing in
     * its directory is rewritten (a checkpoint of the last step whose summary is missing was
     * stopped before its end, and finishes below) */
    const char *summary = r->opt->resume && r->st.step >= c->train.steps ? in_dir(r, QKV_RUN_SUMMARY, NULL) : NULL;
    if (summary && access(summary, F_OK) == 0) {
        r->finished = true;
        return 0;
    }
    if (r->dist.rank) return 0;
    if (qkv__mkdirs(r->opt->out_dir, e)) return -1;
    if (lock_run(r, e)) return -1;
    if (!r->opt->resume && holds_run(r)) { /* never overwrite a run by accident */
        if (!r->opt->force)
            return qkv_err_set(e, QKV_ERR_USAGE, "%s already holds a run; continue it with --resume %s, or start it "
                               "over with --force", qkv__shown(r->opt->out_dir).s, qkv__shown(r->opt->out_dir).s);
        clear_run(r);
    }
    if (qkv__mkdirs(r->opt->out_dir, e)) return -1;
    remove_stale_temps(r);
    if (r->opt->resume && truncate_metrics(r, e)) return -1;
    /* a resumed run's config may have grown (train.steps: an extended run) */
    const char *path = in_dir(r, QKV_RUN_CONFIG, e);
    if (!path) return -1;
    if (qkv__write_file_atomic(path, r->config_json, strlen(r->config_json), e)) return -1;
    /* a resumed run that lost it gets it back: the vocabulary the config gives, checked above
     * against the checkpoint's record */
    if (!(path = in_dir(r, QKV_RUN_TOKENIZER, e))) return -1;
    if (r->task.tokenizer && (!r->opt->resume || access(path, F_OK)) && write_tokenizer(r, e)) return -1;
    if (!(path = in_dir(r, QKV_RUN_METRICS, e))) return -1;
    if (!r->opt->resume && qkv__write_file_atomic(path, "", 0, e)) return -1;
    r->metrics = fopen(path, "a");
    if (!r->metrics) return qkv_err_set(e, QKV_ERR_FAIL, "%s: cannot append: %s", qkv__shown(path).s, strerror(errno));
    /* a fresh run records its diagnostics at step 0 too (train/observe.h: a model of its own, built
     * as r->model was; neither r->model nor the data stream is touched). Without them a report
     * shows the end alone, as it does for a run of an older qkv */
    qkv_err oe;
    if (!r->opt->resume && qkv__run_observe_start(c, r->opt->out_dir, r->opt->example, &oe))
        fprintf(stderr, "qkv train: %s: its attention diagnostics at step 0 were not recorded (%s)\n",
                qkv__shown(r->opt->out_dir).s, oe.msg);
    return 0;
}

/* ---- the step after its gradient ------------------------------------------------------------- */

int qkv__run_update(qkv__run *r, double lv, bool *updated, qkv_err *e) {
    const qkv_config *cfg = r->cfg;
    const qkv_train_config *tc = &cfg->train;
    float *params = r->model->params.data, *grads = r->model->params.grad;
    int64_t np = r->model->params.numel;
    *updated = false;
    r->gnorm = qkv_clip_grad_norm(grads, np, cfg->optim.clip);
    r->lr = qkv_schedule_lr(&cfg->optim, r->st.step, tc->steps);
    if (!isfinite(lv) || !isfinite(r->gnorm)) {
        /* parameters made non-finite by the last update (finite gradients can still overflow
         * with a huge lr) make every later step non-finite: skipping cannot recover. Checked
         * here, where it matters, rather than after every update. */
        const char *bad = nonfinite_param(r->model, false);
        if (bad) {
            return qkv_err_set(e, QKV_ERR_FAIL, "step %lld: parameter %s is non-finite (the update of step "
                               "%lld overflowed); lower optim.lr or set optim.clip", r->st.step + 1, bad, r->st.step);
        }
        const char *where = !isfinite(lv) ? "the loss" : nonfinite_param(r->model, true);
        char what[160];
        snprintf(what, sizeof what, "%s%s", isfinite(lv) ? "the gradient of " : "", where ? where : "the gradients");
        if (!tc->skip_nonfinite) {
            return qkv_err_set(e, QKV_ERR_FAIL, "step %lld: non-finite value in %s (loss %s); set "
                               "train.skip_nonfinite to skip such steps, or lower optim.lr", r->st.step + 1,
                               what, isnan(lv) ? "nan" : isinf(lv) ? "inf" : "finite");
        }
        r->st.skipped++; /* said even with --quiet: a skipped step is never silent */
        fprintf(stderr, "%sqkv train: step %lld: skipped (non-finite value in %s); %lld skipped so far\n",
                r->tty ? "\r\033[K" : "", r->st.step + 1, what, r->st.skipped);
    } else {
        qkv__optim_step_zero(&r->optim, params, grads, r->lr); /* the gradients left zero */
        r->grad_zero = true;
        *updated = true;
        r->st.loss_sum += lv;
        r->st.loss_count++;
        r->st.last_loss = lv;
    }
    if (!r->grad_zero) qkv_params_zero_grad(&r->model->params);
    r->grad_zero = true;
    r->st.step++;
    r->tokens_since += (long long)tc->batch * r->batch.T;

    /* the first process evaluates, logs and checkpoints (every process holds the same weights) */
    bool lead = r->dist.rank == 0, last = r->st.step == tc->steps;
    bool do_eval = lead && (last || (tc->eval_every > 0 && r->st.step % tc->eval_every == 0));
    bool do_log = lead && (do_eval || r->st.step % tc->log_every == 0);
    bool do_ckpt = lead && (last || (tc->checkpoint_every > 0 ? r->st.step % tc->checkpoint_every == 0 : do_eval));
    double t = qkv_clock_seconds(), elapsed = r->st.seconds + (t - r->t0);
    double tps = t > r->t_log ? (double)r->tokens_since / (t - r->t_log) : 0;
    int rc = 0;
    if (do_eval) {
        if (qkv_evaluate(r->ctx, r->model, &r->task, tc->eval_examples, tc->batch, &r->ev, e) ||
            (r->val_examples && qkv_evaluate_split(r->ctx, r->model, &r->task, QKV_SPLIT_VAL, r->val_examples,
                                                   tc->batch, &r->val, e))) {
            qkv__run_fail_everywhere(r, e->msg);
            return -1;
        }
        r->have_eval = true;
    }
    if (do_log) {
        double mean = r->st.loss_count ? r->st.loss_sum / (double)r->st.loss_count : r->st.last_loss;
        if (metrics_line(r, mean, do_eval ? &r->ev : NULL, r->val_examples ? &r->val : NULL, tps, elapsed, e)) {
            qkv__run_fail_everywhere(r, e->msg);
            return -1;
        }
        r->train_loss = r->st.logged_loss = mean;
        r->st.loss_sum = 0;
        r->st.loss_count = 0;
        r->t_log = t;
        r->tokens_since = 0;
    }
    /* a terminal: rewritten at every log and evaluation; a log: the session's first evaluation,
     * its last step, and a line whenever qkv__progress_gap passed since the last one (10 s in
     * the session's first minute, then 60 s; at an evaluation or between them): never silent
     * for long, and eval_every 1 for hours does not write a line per step */
    bool show = r->tty ? do_eval || do_log
                       : lead && ((do_eval && (!r->shown || last)) || t - r->t_shown >= qkv__progress_gap(t - r->t0));
    if (show) {
        double now_loss = do_log || !r->st.loss_count ? r->train_loss : r->st.loss_sum / (double)r->st.loss_count;
        progress(r, now_loss, (r->tty ? r->have_eval : do_eval) ? &r->ev : NULL, tps, elapsed, false);
    }
    if (do_ckpt && save_checkpoint(r, e)) rc = -1;
    if (rc) qkv__run_fail_everywhere(r, e->msg);
    return rc;
}

/* ---- the end -------------------------------------------------------------------------------- */

static int write_summary(qkv__run *r, qkv_run_summary *s, qkv_err *e) {
    qkv_verdict v;
    const char *path = in_dir(r, QKV_RUN_METRICS, e);
    if (!path || qkv_verdict_read(path, r->cfg->train.threshold, s->steps, &v, e)) return -1;
    s->verdict = v;
    char buf[2560], a[32], b[32], c[32], solved[32], flat[32], va[32], vl[32], machine[704];
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
        char xb[32], ub[32], bt[32];
        n -= 2; /* before the closing "}\n" */
        n += snprintf(buf + n, sizeof buf - (size_t)n,
                      ",\"eval_bpb\":%s,\"val_bpb\":%s,\"baseline_xz_bpb\":%s,\"baseline_unigram_bpb\":%s,"
                      "\"tokenizer\":\"%s\",\"pieces\":%d,\"bytes_per_token\":%s}\n",
                      jnum(s->eval_bpb, a, sizeof a), s->has_val ? jnum(s->val_bpb, vl, sizeof vl) : "null",
                      jnum(s->baseline_xz_bpb, xb, sizeof xb), jnum(s->baseline_unigram_bpb, ub, sizeof ub),
                      QKV_TOKENIZER_NAMES[s->tokenizer], s->pieces, jnum(s->bytes_per_token, bt, sizeof bt));
    }
    /* what the run was computed with (tensor/buildinfo.h): its bits depend on the build and CPU */
    if (qkv_buildinfo_json(machine, sizeof machine) < 0) snprintf(machine, sizeof machine, "null");
    else { /* and the products' precision the run asked for (train.precision) */
        size_t m = strlen(machine) - 1;
        m += (size_t)snprintf(machine + m, sizeof machine - m, ",\"precision\":\"%s\"",
                              QKV_PRECISION_NAMES[r->cfg->train.precision]);
        if (r->cfg->train.precision == QKV_PRECISION_BF16) /* which bf16 kernel: their last bits differ */
            m += (size_t)snprintf(machine + m, sizeof machine - m, ",\"bf16_kernel\":\"%s\"", qkv_bf16_kernel());
        snprintf(machine + m, sizeof machine - m, "}");
    }
    n -= 2;
    n += snprintf(buf + n, sizeof buf - (size_t)n, ",\"machine\":%s}\n", machine);
    if (!(path = in_dir(r, QKV_RUN_SUMMARY, e))) return -1;
    if (n >= (int)sizeof buf) {
        return qkv_err_set(e, QKV_ERR_FAIL, "%s: the summary is too long (%d bytes)", qkv__shown(path).s, n);
    }
    return qkv__write_file_atomic(path, buf, (size_t)n, e);
}

int qkv__run_finish(qkv__run *r, int rc, qkv_run_summary *sum, qkv_err *e) {
    const qkv_train_config *tc = &r->cfg->train;
    memset(sum, 0, sizeof *sum);
    sum->interrupted = r->interrupted;
    sum->train_loss = r->train_loss;
    bool lead = r->dist.rank == 0;
    if (!rc && lead && sum->interrupted && save_checkpoint(r, e)) rc = -1;
    /* resuming a run that had already finished (say its summary was lost): evaluate the
     * final model again rather than report the zeros of a session that trained nothing */
    if (!rc && lead && !sum->interrupted && r->st.step == r->start && r->model &&
        (qkv_evaluate(r->ctx, r->model, &r->task, tc->eval_examples, tc->batch, &r->ev, e) ||
         (r->val_examples && qkv_evaluate_split(r->ctx, r->model, &r->task, QKV_SPLIT_VAL, r->val_examples,
                                                tc->batch, &r->val, e))))
        rc = -1;
    if (r->tty && !rc) fputc('\n', stderr);
    sum->eval = r->ev;
    sum->val = r->val;
    sum->has_val = r->val_examples > 0;
    sum->steps = r->st.step;
    sum->skipped_steps = r->st.skipped;
    sum->seconds = r->st.seconds + (qkv_clock_seconds() - r->t0);
    sum->params = r->model ? r->model->params.numel : 0;
    sum->processes = r->dist.size;
    if (r->model && !rc) { /* every process must hold the same weights: check it */
        const unsigned char *b = r->model->params.data;
        uint64_t h = 0xcbf29ce484222325ull, all[256];
        for (size_t i = 0; i < (size_t)r->model->params.numel * sizeof(float); i++) h = (h ^ b[i]) * 0x100000001b3ull;
        sum->param_checksum = h;
        if (r->dist.size > 1 && r->dist.size <= 256 && !qkv__dist_allgather(&r->dist, &h, all, sizeof h))
            for (int i = 0; i < r->dist.size && !rc; i++)
                if (all[i] != h) {
                    qkv_err_set(e, QKV_ERR_FAIL, "process %d holds other weights than process %d (checksums %016llx "
                                "and %016llx)", i, r->dist.rank, (unsigned long long)all[i], (unsigned long long)h);
                    rc = -1;
                }
    }
    sum->attn_params = r->model ? qkv_model_attention_params(r->model) : 0;
    sum->text = r->task.cfg.kind == QKV_TASK_TEXT && r->task.text;
    if (sum->text) {
        sum->eval_bpb = sum->eval.bpb;
        sum->val_bpb = sum->has_val ? sum->val.bpb : NAN;
        sum->baseline_xz_bpb = sum->baseline_unigram_bpb = NAN;
        sum->tokenizer = (int)r->task.cfg.tokenizer;
        sum->pieces = r->task.ids ? r->task.cfg.pieces : 0;
        int64_t eval_ids = r->task.n_ids - r->task.ids_split, eval_bytes = r->task.text_len - r->task.text_split;
        sum->bytes_per_token = !r->task.ids ? 1.0 : eval_ids > 0 ? (double)eval_bytes / (double)eval_ids : NAN;
        qkv_err be; /* xz -9 on the held-out bytes (about a second per 250 KB); once, for the summary */
        if (!rc && lead && !sum->interrupted) qkv__heartbeat_doing("the baselines: xz -9 and a unigram model of the evaluation text");
        bool failed = !rc && lead && !sum->interrupted &&
                      qkv_task_text_baselines(&r->task, &sum->baseline_xz_bpb, &sum->baseline_unigram_bpb, &be);
        qkv__heartbeat_doing(NULL);
        if (failed) fprintf(stderr, "qkv train: %s (summary.json's baselines are null)\n", be.msg); /* done: go on */
    }
    if (!rc && lead && !sum->interrupted && write_summary(r, sum, e)) rc = -1;
    /* what the reports show of the run, recorded beside the model it comes from (train/observe.h),
     * after summary.json (the run is done whatever happens here: a run without a record of its
     * final step is said by the report, and qkv ablate --refresh records it). The observation
     * builds a model of its own: the step's memory goes first */
    if (!rc && lead && !sum->interrupted) {
        for (int w = 0; w < r->workers && r->ctxs; w++) {
            qkv_ctx_free(r->ctxs[w]);
            r->ctxs[w] = NULL;
        }
        qkv_ctx_free(r->ctx);
        r->ctx = NULL;
        qkv_err oe;
        qkv__heartbeat_doing("recording the run's attention diagnostics%s", sum->text ? " and sample" : "");
        int observed = qkv__run_observe(r->cfg, r->opt->out_dir, r->opt->example, sum->steps, &oe);
        qkv__heartbeat_doing(NULL);
        if (observed)
            fprintf(stderr, "qkv train: %s: its attention diagnostics were not recorded (%s); qkv ablate --refresh "
                    "records them\n", r->opt->out_dir, oe.msg);
    }
    return rc ? -1 : 0;
}

void qkv__run_free(qkv__run *r) {
    if (r->lock_fd) close(r->lock_fd - 1); /* the run's lock released */
    r->lock_fd = 0;
    if (r->metrics) fclose(r->metrics);
    r->metrics = NULL;
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
    free(r->path);
    r->path = NULL;
    memset(r, 0, sizeof *r);
}

/* ---- several processes ------------------------------------------------------------------------ */

void qkv__run_fail_everywhere(const qkv__run *r, const char *msg) {
    if (r->dist.size == 1) return;
    fprintf(stderr, "qkv train: process %d of %d: %s\n", r->dist.rank, r->dist.size, msg);
    qkv__dist_abort(&r->dist, 1);
}

/* the first process (by rank) whose `mine` is not 0, or -1 when none */
static int first_rank(const qkv__run *r, int mine) {
    if (r->dist.size == 1) return mine ? 0 : -1;
    int all[256];
    int *buf = r->dist.size <= 256 ? all : malloc((size_t)r->dist.size * sizeof *buf);
    if (!buf || qkv__dist_allgather(&r->dist, &mine, buf, sizeof mine)) qkv__run_fail_everywhere(r, "cannot exchange flags");
    int out = -1;
    for (int i = 0; i < r->dist.size && out < 0; i++)
        if (buf[i]) out = i;
    if (buf != all) free(buf);
    return out;
}

bool qkv__run_any(const qkv__run *r, bool mine) {
    return first_rank(r, mine) >= 0;
}

int qkv__run_first_error(const qkv__run *r, int rc, qkv_err *e) {
    if (rc && e->code == QKV_ERR_OK) e->code = QKV_ERR_FAIL;
    int first = first_rank(r, rc != 0);
    if (first < 0) return 0;
    if (r->dist.size == 1) return -1;
    /* every process's error (code and message), the first failing one's kept */
    qkv_err *all = malloc((size_t)r->dist.size * sizeof *all);
    if (!all || qkv__dist_allgather(&r->dist, e, all, sizeof *e)) qkv__run_fail_everywhere(r, "cannot exchange errors");
    *e = all[first];
    e->msg[QKV_ERR_MSG - 1] = '\0';
    free(all);
    return -1;
}
