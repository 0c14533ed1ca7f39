/* What a finished run saw (observe.h): where its trained heads look (own position, first
 * position, the one before), how spread out they are (entropy), the shape of their score
 * matrices, the weights of one fixed evaluation example, and for the text task a sample,
 * written beside its model for the reports; and the same of the model it started from. */
#include "train/observe.h"
#include "io/safetensors.h"
#include "io/strbuf.h"
#include "nn/model_file.h"
#include "nn/score.h"
#include "train/run_dir.h"
#include "train/sample.h"
#include "train/vocabulary.h" /* not train.h: the run calls this file, never the other way */

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* the order of the sums in the file's "diag.sums" */
enum { SUM_DIAG, SUM_FIRST, SUM_ENTROPY, SUM_ENTROPY_UNIFORM, SUM_ROWS, SUM_COUNT };

/* add the rows of one layer's attention a: (B,H,T,T); head_diag[h], head_rows[h]: per head too, and
 * head_prev[h], prev_rows[h]: the weight on the position just before, over the rows that have one */
static void add_rows(const qkv_tensor *a, const qkv_batch *b, qkv_diag_sums *s, double *head_diag, int64_t *head_rows,
                     double *head_prev, int64_t *prev_rows) {
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
                head_diag[h] += row[i];
                head_rows[h]++;
                if (i > 0) head_prev[h] += row[i - 1], prev_rows[h]++;
                s->first += row[0];
                s->entropy += ent;
                s->entropy_uniform += log((double)allowed); /* softmax gives every allowed key > 0 */
                s->rows++;
            }
}

/* the attention of the model m (built, loaded) on the task's evaluation examples into o: the sums
 * over the first QKV_OBSERVE_EXAMPLES, the weights of example o->example. 0, or -1 with e */
static int attention(qkv_model *m, qkv_task *task, int layers, int heads, bool bf16, qkv_observed *o, qkv_err *e) {
    int64_t avail = qkv_task_eval_size(task);
    int n = QKV_OBSERVE_EXAMPLES > avail ? (int)avail : QKV_OBSERVE_EXAMPLES;
    qkv_ctx *ctx = qkv_ctx_new();
    qkv_batch b = {0}, one = {0};
    int rc = -1;
    if (!ctx || qkv_batch_alloc(&b, task, n) || qkv_batch_alloc(&one, task, 1)) {
        qkv_err_set(e, QKV_ERR_FAIL, "out of memory");
        goto done;
    }
    if (qkv_ctx_set_bf16(ctx, bf16)) goto fail; /* the run's precision (train.precision) */
    qkv_ctx_set_grad_enabled(ctx, false);
    qkv_task_eval_batch(task, &b, 0, n);
    if (!qkv_model_forward(ctx, m, &b.tokens, b.has_pad ? &b.pad : NULL)) goto fail;
    o->diag_share = calloc((size_t)layers * heads, sizeof *o->diag_share);
    o->prev_share = calloc((size_t)layers * heads, sizeof *o->prev_share);
    int64_t *rows = calloc((size_t)heads * 2, sizeof *rows), *prows = rows ? rows + heads : NULL;
    for (int l = 0; o->diag_share && o->prev_share && rows && l < layers; l++) {
        memset(rows, 0, (size_t)heads * 2 * sizeof *rows);
        double *hd = o->diag_share + (size_t)l * heads, *hp = o->prev_share + (size_t)l * heads;
        add_rows(qkv_model_attention(m, l), &b, &o->sums, hd, rows, hp, prows);
        for (int h = 0; h < heads; h++) {
            hd[h] = rows[h] ? hd[h] / (double)rows[h] : NAN;
            hp[h] = prows[h] ? hp[h] / (double)prows[h] : NAN;
        }
    }
    bool counted = rows != NULL;
    free(rows);
    if (!o->diag_share || !o->prev_share || !counted) {
        qkv_err_set(e, QKV_ERR_FAIL, "out of memory");
        goto done;
    }
    /* one example, all layers and heads */
    qkv_ctx_reset(ctx);
    qkv_task_eval_batch(task, &one, o->example % (avail > 0 ? avail : 1), avail);
    if (!qkv_model_forward(ctx, m, &one.tokens, one.has_pad ? &one.pad : NULL)) goto fail;
    int T = one.T;
    o->layers = layers;
    o->heads = heads;
    o->T = T;
    o->w = malloc((size_t)layers * heads * T * T * sizeof *o->w);
    o->tokens = malloc((size_t)T * sizeof *o->tokens);
    o->targets = malloc((size_t)T * sizeof *o->targets);
    if (!o->w || !o->tokens || !o->targets) {
        qkv_err_set(e, QKV_ERR_FAIL, "out of memory");
        goto done;
    }
    for (int l = 0; l < layers; l++)
        memcpy(o->w + (size_t)l * heads * T * T, qkv_model_attention(m, l)->data, (size_t)heads * T * T * sizeof(float));
    memcpy(o->tokens, one.tok, (size_t)T * sizeof *o->tokens);
    memcpy(o->targets, one.tgt, (size_t)T * sizeof *o->targets);
    rc = 0;
    goto done;
fail:
    qkv_err_set(e, QKV_ERR_FAIL, "%s", qkv_ctx_error(ctx));
done:
    qkv_batch_free(&one);
    qkv_batch_free(&b);
    qkv_ctx_free(ctx);
    return rc;
}

/* every layer's and head's score matrix, described (nn/score.h; diff: the first map) */
static int scores(const qkv_model *m, int layers, int heads, qkv_observed *o, qkv_err *e) {
    size_t n = (size_t)layers * heads;
    o->symmetry = malloc(n * sizeof *o->symmetry);
    o->negative_mass = malloc(n * sizeof *o->negative_mass);
    int dim = layers ? qkv_attention_score_dim(&m->blocks[0].attn) : 1;
    double *M = malloc((size_t)dim * dim * sizeof *M);
    int rc = !o->symmetry || !o->negative_mass || !M ? -1 : 0;
    for (int l = 0; l < layers && !rc; l++)
        for (int h = 0; h < heads && !rc; h++) {
            qkv_score_stats st = {NAN, NAN};
            rc = qkv_attention_score_matrix(&m->blocks[l].attn, h, 0, M) || qkv_score_stats_of(M, dim, &st);
            o->symmetry[(size_t)l * heads + h] = st.symmetry;
            o->negative_mass[(size_t)l * heads + h] = st.negative_mass;
        }
    free(M);
    if (rc) qkv_err_set(e, QKV_ERR_FAIL, "the score diagnostics: out of memory");
    return rc;
}

/* the text task's sample from m into o as bytes: the prompt's, then what the model drew (with
 * subword pieces, the prompt encoded and each drawn piece's bytes, cut at the same length: a
 * report reads bytes and has no tokenizer) */
static int sample(qkv_model *m, const qkv_task *t, bool bf16, qkv_observed *o, qkv_err *e) {
    const char *prompt = QKV_OBSERVE_SAMPLE_PROMPT;
    int np = (int)strlen(prompt), total = np + QKV_OBSERVE_SAMPLE_BYTES;
    if (!(o->sample = malloc((size_t)total * sizeof *o->sample))) return qkv_err_set(e, QKV_ERR_FAIL, "out of memory");
    for (int i = 0; i < np; i++) o->sample[i] = (unsigned char)prompt[i];
    qkv_sample_opts so = {QKV_OBSERVE_SAMPLE_BYTES, QKV_OBSERVE_SAMPLE_TEMPERATURE, 0, QKV_OBSERVE_SAMPLE_SEED, bf16};
    o->sample_len = total;
    if (!t->tokenizer) return qkv_sample(m, o->sample, np, &so, o->sample + np, e);
    int32_t *ids = NULL, *drawn = malloc((size_t)so.tokens * sizeof *drawn);
    int64_t n = 0;
    int rc = drawn ? qkv_task_encode(t, (const uint8_t *)prompt, np, &ids, &n, e)
                   : qkv_err_set(e, QKV_ERR_FAIL, "out of memory");
    if (!rc) rc = qkv_sample(m, ids, (int)n, &so, drawn, e);
    uint8_t piece[QKV_TOKEN_BYTES_MAX];
    for (int i = 0, at = np; !rc && i < so.tokens && at < total; i++) {
        int k = qkv_task_token_bytes(t, drawn[i], piece);
        for (int j = 0; j < k && at < total; j++) o->sample[at++] = piece[j];
    }
    free(ids);
    free(drawn);
    return rc;
}

/* a 1-D or 4-D header over caller memory */
static qkv_tensor view(qkv_dtype dt, int ndim, const int64_t *shape, void *data) {
    qkv_tensor t;
    qkv_shape_init(&t, dt, ndim, shape);
    t.data = data;
    return t;
}

/* o into DIR/file */
static int write_observed(const char *dir, const char *file, const qkv_observed *o, qkv_err *e) {
    int64_t nlh[2] = {o->layers, o->heads};
    double sums[SUM_COUNT] = {o->sums.diag, o->sums.first, o->sums.entropy, o->sums.entropy_uniform,
                              (double)o->sums.rows};
    int64_t ns = SUM_COUNT, nw[4] = {o->layers, o->heads, o->T, o->T}, nt = o->T, nsample = o->sample_len;
    qkv_tensor ts = view(QKV_F64, 1, &ns, sums), tw = view(QKV_F32, 4, nw, o->w),
               tk = view(QKV_I32, 1, &nt, o->tokens), tg = view(QKV_I32, 1, &nt, o->targets),
               tx = view(QKV_I32, 1, &nsample, o->sample);
    qkv_tensor tsym = view(QKV_F64, 2, nlh, o->symmetry), tneg = view(QKV_F64, 2, nlh, o->negative_mass),
               tdiag = view(QKV_F64, 2, nlh, o->diag_share), tprev = view(QKV_F64, 2, nlh, o->prev_share);
    qkv_st_item items[9] = {{"diag.sums", &ts}, {"example.attention", &tw}, {"example.tokens", &tk},
                            {"example.targets", &tg}, {"score.symmetry", &tsym}, {"score.negative_mass", &tneg},
                            {"score.diag_share", &tdiag}, {"score.prev_share", &tprev}, {"sample.tokens", &tx}};
    char step[32], example[32];
    snprintf(step, sizeof step, "%lld", o->step);
    snprintf(example, sizeof example, "%d", o->example);
    const char *meta[4] = {"qkv_step", step, "qkv_example", example};
    char *path = qkv__pathf("%s/%s", dir, file);
    if (!path) return qkv_err_set(e, QKV_ERR_FAIL, "out of memory");
    int rc = qkv_st_write(path, items, o->sample ? 9 : 8, meta, 2, e);
    free(path);
    return rc;
}

/* cfg's model observed into o: the trained one of DIR/model.safetensors (with the text task's
 * sample), or (!trained) the one qkv train starts from, initialised from train.seed */
static int observation(const qkv_config *cfg, const char *dir, bool trained, int example, long long step,
                       qkv_observed *o, qkv_err *e) {
    *o = (qkv_observed){.step = step, .example = example < 0 ? 0 : example};
    if (qkv_precision_usable(&cfg->train, e)) return -1;
    bool bf16 = cfg->train.precision == QKV_PRECISION_BF16; /* observed in the products it trained with */
    qkv_task task;
    qkv_task_config tc = cfg->task; /* the run's own vocabulary, when it keeps one */
    qkv_use_run_tokenizer(&tc, dir, true);
    if (qkv_task_open(&task, &tc, (uint64_t)cfg->train.seed, e)) return -1;
    qkv_model_config mc = cfg->model;
    qkv_model *m = NULL;
    char *path = trained ? qkv__pathf("%s/" QKV_RUN_MODEL, dir) : NULL;
    uint64_t seed = trained ? 0 : (uint64_t)cfg->train.seed; /* as qkv train's (a trained one is loaded over it) */
    int rc = -1;
    if (trained && !path) {
        qkv_err_set(e, QKV_ERR_FAIL, "out of memory");
        goto done;
    }
    if (qkv_task_fit_model(&task, &mc, e)) goto done;
    if (!(m = qkv_model_new(&mc, QKV_F32, seed, e)) || (trained && qkv_load_model(m, path, e))) goto done;
    if (trained && qkv_check_vocabulary(path, &task, e)) goto done;
    if (attention(m, &task, mc.layers, mc.heads, bf16, o, e) || scores(m, mc.layers, mc.heads, o, e) ||
        (trained && cfg->task.kind == QKV_TASK_TEXT && sample(m, &task, bf16, o, e)))
        goto done;
    rc = 0;
done:
    if (rc) qkv__observed_free(o);
    free(path);
    qkv_model_free(m);
    qkv_task_close(&task);
    return rc;
}

int qkv__run_observation(const qkv_config *cfg, const char *dir, int example, long long step, qkv_observed *o,
                         qkv_err *e) {
    return observation(cfg, dir, true, example, step, o, e);
}

int qkv__run_observe(const qkv_config *cfg, const char *dir, int example, long long step, qkv_err *e) {
    qkv_observed o;
    if (observation(cfg, dir, true, example, step, &o, e)) return -1;
    int rc = write_observed(dir, QKV_RUN_OBSERVED, &o, e);
    qkv__observed_free(&o);
    return rc;
}

int qkv__run_observe_start(const qkv_config *cfg, const char *dir, int example, qkv_err *e) {
    qkv_observed o;
    if (observation(cfg, dir, false, example, 0, &o, e)) return -1;
    int rc = write_observed(dir, QKV_RUN_OBSERVED_START, &o, e);
    qkv__observed_free(&o);
    return rc;
}

/* tensor name of st into a malloc'd copy of `want` elements of dtype dt (and its shape), or NULL */
static void *take(const qkv_safetensors *st, const char *name, qkv_dtype dt, int ndim, int64_t *shape, size_t elem) {
    const qkv_st_entry *e = qkv_st_find(st, name);
    if (!e || e->ndim != ndim) return NULL;
    size_t n = 1;
    for (int i = 0; i < ndim; i++) {
        if (e->shape[i] < 0 || e->shape[i] > (1 << 24)) return NULL;
        shape[i] = e->shape[i];
        n *= (size_t)e->shape[i];
    }
    void *p = malloc(n ? n * elem : 1);
    qkv_tensor t = view(dt, ndim, shape, p); /* the reader's own checks: dtype, shape, bytes */
    if (p && qkv_st_load_into(st, name, &t, NULL)) {
        free(p);
        return NULL;
    }
    return p;
}

/* DIR/file, a record of write_observed's, into *o: 1 when there is none, 0, or -1 with e */
static int read_observed(const char *dir, const char *file, qkv_observed *o, qkv_err *e) {
    memset(o, 0, sizeof *o);
    char *path = qkv__pathf("%s/%s", dir, file);
    if (!path) return qkv_err_set(e, QKV_ERR_FAIL, "out of memory");
    struct stat sb;
    if (stat(path, &sb)) { /* not there: a run of an older qkv (stat, not open: a FIFO must not block) */
        int no = errno;
        if (no != ENOENT) qkv_err_set(e, QKV_ERR_FAIL, "%s: %s", qkv__shown(path).s, strerror(no));
        free(path);
        return no == ENOENT ? 1 : -1;
    }
    qkv_safetensors *st;
    if (qkv_st_read(path, &st, e)) {
        free(path);
        return -1;
    }
    int64_t ns[1] = {0}, nw[4] = {0}, nt[1] = {0}, nt2[1] = {0}, nx[1] = {0};
    double *sums = take(st, "diag.sums", QKV_F64, 1, ns, sizeof(double));
    o->w = take(st, "example.attention", QKV_F32, 4, nw, sizeof(float));
    o->tokens = take(st, "example.tokens", QKV_I32, 1, nt, sizeof(int32_t));
    o->targets = take(st, "example.targets", QKV_I32, 1, nt2, sizeof(int32_t));
    int64_t n1[2], n2[2], n3[2];
    o->symmetry = take(st, "score.symmetry", QKV_F64, 2, n1, sizeof(double));
    o->negative_mass = take(st, "score.negative_mass", QKV_F64, 2, n2, sizeof(double));
    o->diag_share = take(st, "score.diag_share", QKV_F64, 2, n3, sizeof(double));
    bool scored = o->symmetry && o->negative_mass && o->diag_share && n1[0] == nw[0] && n1[1] == nw[1] &&
                  n2[0] == nw[0] && n2[1] == nw[1] && n3[0] == nw[0] && n3[1] == nw[1];
    if (!scored) { /* a record made before them: the rest stands */
        free(o->symmetry); free(o->negative_mass); free(o->diag_share);
        o->symmetry = o->negative_mass = o->diag_share = NULL;
    }
    int64_t n4[2];
    if (scored && qkv_st_find(st, "score.prev_share")) /* a later addition: absent from older records */
        o->prev_share = take(st, "score.prev_share", QKV_F64, 2, n4, sizeof(double));
    if (o->prev_share && (n4[0] != nw[0] || n4[1] != nw[1])) {
        free(o->prev_share);
        o->prev_share = NULL;
    }
    bool has_sample = qkv_st_find(st, "sample.tokens") != NULL;
    if (has_sample) o->sample = take(st, "sample.tokens", QKV_I32, 1, nx, sizeof(int32_t));
    const char *step = qkv_st_meta(st, "qkv_step"), *example = qkv_st_meta(st, "qkv_example");
    char *e1 = NULL, *e2 = NULL;
    if (step) o->step = strtoll(step, &e1, 10);
    if (example) o->example = (int)strtol(example, &e2, 10);
    bool ok = sums && ns[0] == SUM_COUNT && o->w && o->tokens && o->targets && nw[2] == nw[3] && nw[2] == nt[0] &&
              nt2[0] == nt[0] && (!has_sample || o->sample) && step && e1 != step && !*e1 && example && e2 != example &&
              !*e2;
    if (ok) {
        o->sums = (qkv_diag_sums){sums[SUM_DIAG], sums[SUM_FIRST], sums[SUM_ENTROPY], sums[SUM_ENTROPY_UNIFORM],
                                  (int64_t)sums[SUM_ROWS]};
        o->layers = (int)nw[0];
        o->heads = (int)nw[1];
        o->T = (int)nw[2];
        o->sample_len = has_sample ? (int)nx[0] : 0;
    } else {
        qkv_err_set(e, QKV_ERR_FAIL, "%s: not what qkv train records (tensors diag.sums, example.attention, "
                    "example.tokens, example.targets; metadata qkv_step, qkv_example)", qkv__shown(path).s);
        qkv__observed_free(o);
    }
    free(path);
    free(sums);
    qkv_st_free(st);
    return ok ? 0 : -1;
}

int qkv__run_observed(const char *dir, qkv_observed *o, qkv_err *e) {
    return read_observed(dir, QKV_RUN_OBSERVED, o, e);
}

int qkv__run_observed_start(const char *dir, qkv_observed *o, qkv_err *e) {
    return read_observed(dir, QKV_RUN_OBSERVED_START, o, e);
}

void qkv__observed_free(qkv_observed *o) {
    free(o->symmetry);
    free(o->negative_mass);
    free(o->diag_share);
    free(o->prev_share);
    o->symmetry = o->negative_mass = o->diag_share = o->prev_share = NULL;
    free(o->w);
    free(o->tokens);
    free(o->targets);
    free(o->sample);
    o->w = NULL;
    o->tokens = o->targets = o->sample = NULL;
}
