/* Task opening, batching and the generated tasks (copy, reverse, sort, recall, induction; the
 * MAD suite's are in task_mad.c). */
#include "tasks/task.h"
#include "tasks/task_data.h"
#include "tasks/task_mad.h"
#include "io/strbuf.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { STREAM_TRAIN = 101, STREAM_EVAL = 202, STREAM_VAL = 303, STREAM_TRAIN_SHARD = 404, STREAM_FLOORS = 505 };

const char *const QKV_TASK_NAMES[QKV_TASK_COUNT] = {
    "copy", "reverse", "sort", "recall", "induction", "fuzzy_recall", "noisy_recall", "selective_copy",
    "text", "file"};

const char *const QKV_TEXT_CORPUS_NAMES[QKV_CORPUS_COUNT] = {"file", "fortunes", "fortunes-zh"};
const char *const QKV_TOKENIZER_NAMES[QKV_TOKENIZER_COUNT] = {"bytes", "bpe", "unigram"};

qkv_task_config qkv_task_config_default(void) {
    qkv_task_config c;
    memset(&c, 0, sizeof c); /* padding and the paths' unused bytes too: configs compare as bytes */
    c.kind = QKV_TASK_RECALL, c.length = 8, c.symbols = 16;
    c.pairs = 8, c.keys = 32, c.values = 32, c.queries = 0;
    c.key_len = 2, c.value_len = 2, c.noise = 16, c.noise_symbols = 16, c.copy_tokens = 4;
    c.eval_fraction = 0.1, c.val_fraction = 0.1, c.seq_len = 64; /* path and eval_path: "" */
    c.heldout_seed = -1;
    c.tokenizer = QKV_TOKENIZER_BYTES, c.pieces = 512; /* tokenizer_path: "" */
    return c;
}

/* ---- generated tasks: one example into tok/tgt (length t->seq_len) ---------------------- */

static int cmp_i32(const void *a, const void *b) {
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* copy / reverse / sort: x1..xL SEP y1..yL; loss where the next token is a y */
static void gen_seq2seq(const qkv_task *t, qkv_rng *r, int32_t *tok, int32_t *tgt) {
    int L = t->cfg.length, sep = t->cfg.symbols;
    int32_t s[2 * 4096 + 1];
    for (int i = 0; i < L; i++) s[i] = (int32_t)qkv_rng_below(r, (uint64_t)t->cfg.symbols);
    s[L] = sep;
    for (int i = 0; i < L; i++) s[L + 1 + i] = t->cfg.kind == QKV_TASK_REVERSE ? s[L - 1 - i] : s[i];
    if (t->cfg.kind == QKV_TASK_SORT) qsort(s + L + 1, (size_t)L, sizeof s[0], cmp_i32);
    for (int i = 0; i < 2 * L; i++) {
        tok[i] = s[i];
        tgt[i] = i >= L ? s[i + 1] : QKV_IGNORE;
    }
}

/* multi-query associative recall: k1 v1 ... kP vP q1 ... qQ; at q_i predict its value
 * (task.query_blank: k1 v1 ... kP vP q1 _ ... qQ _, the value predicted at the blank _) */
static void gen_recall(const qkv_task *t, qkv_rng *r, int32_t *tok, int32_t *tgt) {
    int P = t->cfg.pairs, Q = t->cfg.queries ? t->cfg.queries : P;
    int32_t keys[4096], vals[4096], order[4096];
    qkv__task_draw_pairs(r, P, t->cfg.keys, t->cfg.values, keys, vals, order);
    for (int i = 0; i < P; i++) {
        tok[2 * i] = keys[i];
        tok[2 * i + 1] = vals[i];
        tgt[2 * i] = tgt[2 * i + 1] = QKV_IGNORE;
    }
    qkv__task_put_queries(&t->cfg, tok + 2 * P, tgt + 2 * P, Q, keys, vals, order);
}

/* induction: random symbols with a trigger twice; after the second, predict what followed the first */
static void gen_induction(const qkv_task *t, qkv_rng *r, int32_t *tok, int32_t *tgt) {
    int L = t->cfg.length, trigger = t->cfg.symbols;
    for (int i = 0; i < L; i++) {
        tok[i] = (int32_t)qkv_rng_below(r, (uint64_t)t->cfg.symbols);
        tgt[i] = QKV_IGNORE;
    }
    int at = (int)qkv_rng_below(r, (uint64_t)(L - 2)); /* first trigger in [0, L-3] */
    tok[at] = trigger;
    tok[L - 1] = trigger;
    tgt[L - 1] = tok[at + 1];
}

static void generate(const qkv_task *t, qkv_rng *r, int32_t *tok, int32_t *tgt) {
    switch (t->cfg.kind) {
    case QKV_TASK_RECALL: gen_recall(t, r, tok, tgt); break;
    case QKV_TASK_INDUCTION: gen_induction(t, r, tok, tgt); break;
    case QKV_TASK_FUZZY_RECALL: case QKV_TASK_NOISY_RECALL: case QKV_TASK_SELECTIVE_COPY:
        qkv__task_mad_example(t, r, tok, tgt);
        break;
    default: gen_seq2seq(t, r, tok, tgt); break;
    }
}

/* ---- opening ---------------------------------------------------------------------------- */

/* a generated task's vocab and positions after checking its sizes (text and file: 0, 0; their
 * files decide); 0, or -1 with e (QKV_ERR_USAGE) naming the key */
static int generated_shape(const qkv_task_config *c, int *vocab, int *seq_len, qkv_err *e) {
    bool recalls = c->kind == QKV_TASK_RECALL || c->kind == QKV_TASK_FUZZY_RECALL || c->kind == QKV_TASK_NOISY_RECALL;
    if (recalls && c->queries > c->pairs) {
        return qkv_err_set(e, QKV_ERR_USAGE, "task.queries: %d is more than task.pairs %d (each query asks for one of the "
                           "example's pairs)", c->queries, c->pairs);
    }
    if ((c->kind == QKV_TASK_RECALL || c->kind == QKV_TASK_NOISY_RECALL) && c->keys < c->pairs) {
        return qkv_err_set(e, QKV_ERR_USAGE, "task.keys: %d is less than task.pairs %d (the keys of one example are "
                           "distinct)", c->keys, c->pairs);
    }
    if (c->query_blank && c->kind != QKV_TASK_RECALL && c->kind != QKV_TASK_NOISY_RECALL) {
        return qkv_err_set(e, QKV_ERR_USAGE, "task.query_blank: only recall and noisy_recall have queries to blank, not "
                           "task \"%s\"", QKV_TASK_NAMES[c->kind]);
    }
    *vocab = *seq_len = 0;
    switch (c->kind) {
    case QKV_TASK_COPY: case QKV_TASK_REVERSE: case QKV_TASK_SORT:
        *vocab = c->symbols + 1;
        *seq_len = 2 * c->length;
        return 0;
    case QKV_TASK_RECALL:
        *vocab = c->keys + c->values + (c->query_blank ? 1 : 0);
        *seq_len = 2 * c->pairs + (c->queries ? c->queries : c->pairs) * (c->query_blank ? 2 : 1);
        return 0;
    case QKV_TASK_INDUCTION:
        if (c->length < 3) {
            return qkv_err_set(e, QKV_ERR_USAGE, "task.length: induction needs at least 3 positions, got %d", c->length);
        }
        *vocab = c->symbols + 1;
        *seq_len = c->length;
        return 0;
    case QKV_TASK_FUZZY_RECALL: case QKV_TASK_NOISY_RECALL: case QKV_TASK_SELECTIVE_COPY:
        return qkv__task_mad_shape(c, vocab, seq_len, e);
    case QKV_TASK_TEXT: case QKV_TASK_FILE: return 0;
    default:
        return qkv_err_set(e, QKV_ERR_USAGE, "task.name: unknown task %d", (int)c->kind);
    }
}

int qkv_task_config_check(const qkv_task_config *c, qkv_err *e) {
    int vocab, seq_len;
    return generated_shape(c, &vocab, &seq_len, e);
}

int qkv_task_open(qkv_task *t, const qkv_task_config *cfg, uint64_t seed, qkv_err *e) {
    memset(t, 0, sizeof *t);
    t->cfg = *cfg;
    t->seed = seed;
    qkv_rng_seed_stream(&t->train_rng, seed, STREAM_TRAIN);
    switch (cfg->kind) {
    case QKV_TASK_TEXT: return qkv__task_open_text(t, e);
    case QKV_TASK_FILE: return qkv__task_open_file(t, e);
    default: return generated_shape(cfg, &t->vocab, &t->seq_len, e);
    }
}

void qkv_task_close(qkv_task *t) {
    free(t->eval_hashes);
    free(t->held_hashes);
    free(t->text);
    qkv__task_close_tokens(t);
    for (int i = 0; i < t->n_seqs; i++) free(t->seqs[i].tokens);
    free(t->seqs);
    memset(t, 0, sizeof *t);
}

/* Does the task show its targets to a bidirectional model? A model without the causal mask sees
 * position t + 1 while predicting at t, so a task whose target at t is the input at t + 1 (text,
 * copy, reverse, sort, selective_copy, fuzzy_recall with values of more than one token: next-token
 * data) learns to copy it. Judged on the data, so a file task is judged as the built-in ones: true
 * when more than a quarter of the targeted positions that have a next position hold it as their
 * target, over 64 examples (text; a file's first 64 training sequences, or evaluation sequences
 * when it has no training part) or 4 of a generated task (its format is the same in every
 * example; more would cost seconds at the largest sizes). recall, noisy_recall and induction
 * predict tokens that are not after them (their answers are earlier, where the task puts them). */
static bool targets_follow(const qkv_task *t) {
    int T = t->seq_len;
    int32_t *tok = malloc((size_t)(T > 0 ? T : 1) * 2 * sizeof *tok);
    if (!tok) return false; /* no memory to judge with: the run fails later, where it allocates */
    int32_t *tgt = tok + T;
    long long targeted = 0, shown = 0;
    qkv_rng r;
    qkv_rng_seed_stream(&r, t->seed, 0x626964697265ULL); /* its own stream: no draw of a split moves */
    bool file = t->cfg.kind == QKV_TASK_FILE;
    int have = file ? (t->n_train > 0 ? t->n_train : t->n_seqs) : 64;
    int n = file || t->cfg.kind == QKV_TASK_TEXT ? (have < 64 ? have : 64) : 4;
    for (int e = 0; e < n; e++) {
        int len = T;
        const int32_t *a = tok, *g = tgt;
        if (file) a = t->seqs[e].tokens, g = t->seqs[e].targets, len = t->seqs[e].len;
        else if (t->cfg.kind == QKV_TASK_TEXT) qkv__task_text_example(t, &r, QKV_SPLIT_TRAIN, tok, tgt);
        else generate(t, &r, tok, tgt);
        for (int i = 0; i + 1 < len; i++) {
            if (g[i] == QKV_IGNORE) continue;
            targeted++;
            shown += g[i] == a[i + 1];
        }
    }
    free(tok);
    return 4 * shown > targeted;
}

int qkv_task_fit_model(const qkv_task *t, qkv_model_config *m, qkv_err *e) {
    /* a built-in task is the config's: a model that does not fit it is a config that cannot be
     * used; a data file's tokens and lengths are what the file holds, known when it is read */
    qkv_err_code misfit = t->cfg.kind == QKV_TASK_FILE ? QKV_ERR_FAIL : QKV_ERR_USAGE;
    if (!m->attn.causal && targets_follow(t)) {
        if (t->cfg.kind == QKV_TASK_FILE)
            return qkv_err_set(e, QKV_ERR_FAIL, "model.attention.causal: false, but in %s the target at a position is often "
                               "the next position's input token, which a bidirectional model would copy: expected causal true "
                               "(or targets that do not follow)", t->cfg.path[0] ? qkv__shown(t->cfg.path).s : "the data");
        else
            return qkv_err_set(e, QKV_ERR_USAGE, "model.attention.causal: false, but task \"%s\" shows its targets as the "
                               "next input tokens, which a bidirectional model would copy: expected causal true (bidirectional "
                               "tasks: recall, noisy_recall, induction)", QKV_TASK_NAMES[t->cfg.kind]);
    }
    if (m->vocab == 0) m->vocab = t->vocab;
    if (m->seq_len == 0) m->seq_len = t->seq_len;
    if (m->vocab < t->vocab) {
        for (int i = 0; i < t->n_seqs; i++) /* data files: name the first token out of range */
            for (int j = 0; j < 2 * t->seqs[i].len; j++) {
                const qkv_seq *q = &t->seqs[i];
                int32_t v = j < q->len ? q->tokens[j] : q->targets[j - q->len];
                if (v < m->vocab) continue;
                const char *file = i >= t->n_train && t->cfg.eval_path[0] ? t->cfg.eval_path : t->cfg.path;
                return qkv_err_set(e, QKV_ERR_FAIL, "%s:%d: \"%s\"[%d] is %d, outside model.vocab %d (tokens must be "
                                   "in [0, %d); the data needs model.vocab >= %d)", qkv__shown(file).s, q->line,
                                   j < q->len ? "input" : "target", j < q->len ? j : j - q->len, v, m->vocab, m->vocab,
                                   t->vocab);
            }
        return qkv_err_set(e, misfit, "model.vocab: %d is smaller than the task's %d tokens", m->vocab, t->vocab);
    }
    if (m->seq_len < t->seq_len) {
        return qkv_err_set(e, misfit, "model.seq_len: %d is shorter than the task's %d positions",
                           m->seq_len, t->seq_len);
    }
    if (m->vocab < 2) { /* a data file with one distinct token: no model can be built */
        return qkv_err_set(e, misfit, "model.vocab: expected at least 2 tokens, got %d", m->vocab);
    }
    return 0;
}

/* ---- batches ------------------------------------------------------------------------------ */

int qkv_batch_alloc(qkv_batch *b, const qkv_task *t, int B) {
    memset(b, 0, sizeof *b);
    int T = t->seq_len;
    size_t n = (size_t)B * (size_t)T;
    b->B = B;
    b->T = T;
    b->tok = malloc(n * sizeof(int32_t));
    b->tgt = malloc(n * sizeof(int32_t));
    b->pad_buf = malloc(n * sizeof(int32_t));
    if (!b->tok || !b->tgt || !b->pad_buf) { qkv_batch_free(b); return -1; }
    int64_t s[2] = {B, T};
    qkv_shape_init(&b->tokens, QKV_I32, 2, s);
    qkv_shape_init(&b->targets, QKV_I32, 2, s);
    qkv_shape_init(&b->pad, QKV_I32, 2, s);
    b->tokens.data = b->tok;
    b->targets.data = b->tgt;
    b->pad.data = b->pad_buf;
    b->has_pad = t->variable_length;
    return 0;
}

void qkv_batch_free(qkv_batch *b) {
    free(b->tok);
    free(b->tgt);
    free(b->pad_buf);
    memset(b, 0, sizeof *b);
}

/* fill row i from a stored sequence, padding the tail */
static void put_seq(qkv_batch *b, int i, const qkv_seq *s) {
    int32_t *tok = b->tok + (size_t)i * b->T, *tgt = b->tgt + (size_t)i * b->T, *pad = b->pad_buf + (size_t)i * b->T;
    for (int j = 0; j < b->T; j++) {
        bool in = j < s->len;
        tok[j] = in ? s->tokens[j] : 0;
        tgt[j] = in ? s->targets[j] : QKV_IGNORE;
        pad[j] = in;
    }
}

/* ---- held-out examples -------------------------------------------------------------------- */

/* FNV-1a over an example's tokens and targets */
static uint64_t example_hash(const int32_t *tok, const int32_t *tgt, int T) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (int j = 0; j < T; j++) {
        uint32_t w[2] = {(uint32_t)tok[j], (uint32_t)tgt[j]};
        for (int k = 0; k < 2; k++)
            for (int byte = 0; byte < 4; byte++) h = (h ^ ((w[k] >> (8 * byte)) & 0xff)) * 0x100000001b3ull;
    }
    return h;
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static bool in_sorted(const uint64_t *v, int64_t n, uint64_t h) {
    return n > 0 && bsearch(&h, v, (size_t)n, sizeof h, cmp_u64) != NULL;
}

/* a redrawn example that is still held out after this many tries is kept (a task with so few
 * distinct examples that the held-out lists cover nearly all of them; counted in held_collisions) */
enum { MAX_REDRAWS = 1000 };

/* a generated example from r, drawn again while its hash is in avoid[0, n) */
static void generate_avoiding(qkv_task *t, qkv_rng *r, int32_t *tok, int32_t *tgt, const uint64_t *avoid,
                              int64_t n) {
    for (int tries = 0;; tries++) {
        generate(t, r, tok, tgt);
        if (!in_sorted(avoid, n, example_hash(tok, tgt, t->seq_len))) return;
        t->held_collisions++;
        if (tries == MAX_REDRAWS) return;
    }
}

/* the stream of held-out example k of a split: the same whatever the batch size; from
 * task.heldout_seed when set (the same examples for every train.seed), else the task's seed */
static void heldout_rng(const qkv_task *t, qkv_split split, int64_t k, qkv_rng *r) {
    uint64_t seed = t->cfg.heldout_seed >= 0 ? (uint64_t)t->cfg.heldout_seed : t->seed;
    qkv_rng_seed_stream(r, seed ^ (0x9E3779B97F4A7C15ull * (uint64_t)(k + 1)),
                        split == QKV_SPLIT_VAL ? STREAM_VAL : STREAM_EVAL);
}

static bool generated(const qkv_task *t) { return t->cfg.kind != QKV_TASK_TEXT && t->cfg.kind != QKV_TASK_FILE; }

int qkv_task_hold_out(qkv_task *t, int64_t n_eval, int64_t n_val, qkv_err *e) {
    if (!generated(t)) return 0;
    n_eval = n_eval > 0 ? n_eval : 0;
    n_val = n_val > 0 ? n_val : 0;
    int32_t *tok = malloc((size_t)t->seq_len * 2 * sizeof *tok);
    uint64_t *ev = malloc((size_t)(n_eval + 1) * sizeof *ev), *held = malloc((size_t)(n_eval + n_val + 1) * sizeof *held);
    if (!tok || !ev || !held) {
        free(tok); free(ev); free(held);
        return qkv_err_set(e, QKV_ERR_FAIL, "out of memory holding out %lld examples", (long long)(n_eval + n_val));
    }
    int32_t *tgt = tok + t->seq_len;
    qkv_rng r;
    for (int64_t k = 0; k < n_eval; k++) {
        heldout_rng(t, QKV_SPLIT_EVAL, k, &r);
        generate(t, &r, tok, tgt);
        ev[k] = held[k] = example_hash(tok, tgt, t->seq_len);
    }
    qsort(ev, (size_t)n_eval, sizeof *ev, cmp_u64);
    free(t->eval_hashes);
    t->eval_hashes = ev;
    t->n_eval_hashes = n_eval;
    for (int64_t k = 0; k < n_val; k++) { /* validation examples as qkv_task_split_batch makes them */
        heldout_rng(t, QKV_SPLIT_VAL, k, &r);
        generate_avoiding(t, &r, tok, tgt, ev, n_eval);
        held[n_eval + k] = example_hash(tok, tgt, t->seq_len);
    }
    qsort(held, (size_t)(n_eval + n_val), sizeof *held, cmp_u64);
    free(t->held_hashes);
    t->held_hashes = held;
    t->n_held_hashes = n_eval + n_val;
    t->held_collisions = 0; /* count training draws only */
    free(tok);
    return 0;
}

/* ---- rows ----------------------------------------------------------------------------------- */

/* one example into row i: a training draw from r (split TRAIN) or held-out example k */
static void fill_row(qkv_task *t, qkv_batch *b, int i, qkv_rng *r, qkv_split split, int64_t k) {
    int32_t *tok = b->tok + (size_t)i * b->T, *tgt = b->tgt + (size_t)i * b->T;
    for (int j = 0; j < b->T; j++) b->pad_buf[(size_t)i * b->T + j] = 1;
    switch (t->cfg.kind) {
    case QKV_TASK_TEXT: qkv__task_text_example(t, r, split, tok, tgt); break;
    case QKV_TASK_FILE: {
        int n_eval = t->n_seqs - t->n_train - t->n_val;
        int idx = split == QKV_SPLIT_EVAL  ? t->n_train + t->n_val + (int)(k % n_eval)
                  : split == QKV_SPLIT_VAL ? t->n_train + (int)(k % t->n_val)
                                           : (int)qkv_rng_below(r, (uint64_t)t->n_train);
        put_seq(b, i, &t->seqs[idx]);
        break;
    }
    default:
        if (split == QKV_SPLIT_TRAIN) generate_avoiding(t, r, tok, tgt, t->held_hashes, t->n_held_hashes);
        else if (split == QKV_SPLIT_VAL) generate_avoiding(t, r, tok, tgt, t->eval_hashes, t->n_eval_hashes);
        else generate(t, r, tok, tgt);
        break;
    }
}

void qkv_task_train_batch(qkv_task *t, qkv_batch *b) {
    for (int i = 0; i < b->B; i++) fill_row(t, b, i, &t->train_rng, QKV_SPLIT_TRAIN, -1);
}

void qkv_task_train_shard(qkv_task *t, qkv_batch *b, long long step, int shard) {
    qkv_rng r; /* splitmix-style mixing of (step, shard) into the seed; a stream of its own */
    uint64_t key = (uint64_t)step * 0x9E3779B97F4A7C15ull + (uint64_t)shard * 0xBF58476D1CE4E5B9ull + 1;
    qkv_rng_seed_stream(&r, t->seed ^ key, STREAM_TRAIN_SHARD);
    for (int i = 0; i < b->B; i++) fill_row(t, b, i, &r, QKV_SPLIT_TRAIN, -1);
}

void qkv_task_split_batch(qkv_task *t, qkv_split split, qkv_batch *b, int64_t first, int64_t count) {
    for (int i = 0; i < b->B; i++) {
        int64_t k = first + i;
        if (k >= count) { /* past the end: a row with no loss */
            for (int j = 0; j < b->T; j++) {
                b->tok[(size_t)i * b->T + j] = 0;
                b->tgt[(size_t)i * b->T + j] = QKV_IGNORE;
                b->pad_buf[(size_t)i * b->T + j] = 1;
            }
            continue;
        }
        qkv_rng r; /* example k is the same whatever the batch size */
        heldout_rng(t, split, k, &r);
        fill_row(t, b, i, &r, split, k);
    }
}

void qkv_task_eval_batch(qkv_task *t, qkv_batch *b, int64_t first, int64_t count) {
    qkv_task_split_batch(t, QKV_SPLIT_EVAL, b, first, count);
}

int64_t qkv_task_split_size(const qkv_task *t, qkv_split split) {
    switch (t->cfg.kind) {
    case QKV_TASK_FILE: return split == QKV_SPLIT_VAL ? t->n_val : t->n_seqs - t->n_train - t->n_val;
    case QKV_TASK_TEXT: return split == QKV_SPLIT_VAL && t->text_val == t->text_split ? 0 : INT64_MAX;
    default: return INT64_MAX;
    }
}

int64_t qkv_task_eval_size(const qkv_task *t) { return qkv_task_split_size(t, QKV_SPLIT_EVAL); }

/* ---- reference levels ------------------------------------------------------------------- */

int qkv_task_floors(const qkv_task_config *c, int n, double *chance, double *no_retrieval) {
    *chance = *no_retrieval = NAN;
    int vocab, T;
    qkv_err e;
    if ((c->kind != QKV_TASK_RECALL && c->kind != QKV_TASK_NOISY_RECALL) || n < 1 || generated_shape(c, &vocab, &T, &e))
        return -1;
    qkv_task t;
    memset(&t, 0, sizeof t);
    t.cfg = *c;
    int32_t *tok = malloc((size_t)T * sizeof *tok), *tgt = malloc((size_t)T * sizeof *tgt);
    int *count = malloc((size_t)c->values * sizeof *count);
    if (!tok || !tgt || !count) {
        free(tok), free(tgt), free(count);
        return -1;
    }
    qkv_rng r;
    qkv_rng_seed_stream(&r, 0, STREAM_FLOORS);
    long long hits = 0, asked = 0;
    for (int i = 0; i < n; i++) {
        generate(&t, &r, tok, tgt);
        /* the values the example holds (tokens keys .. keys + values - 1), and the most frequent */
        memset(count, 0, (size_t)c->values * sizeof *count);
        for (int p = 0; p < T; p++)
            if (tok[p] >= c->keys && tok[p] < c->keys + c->values) count[tok[p] - c->keys]++;
        int mode = 0;
        for (int v = 1; v < c->values; v++)
            if (count[v] > count[mode]) mode = v;
        for (int p = 0; p < T; p++)
            if (tgt[p] != QKV_IGNORE) asked++, hits += tgt[p] == c->keys + mode;
    }
    free(tok), free(tgt), free(count);
    *chance = 1.0 / c->values;
    *no_retrieval = asked ? (double)hits / (double)asked : NAN;
    return 0;
}
