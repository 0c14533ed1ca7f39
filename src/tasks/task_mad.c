/* The MAD suite's generated tasks (task_mad.h): fuzzy_recall, noisy_recall, selective_copy.
 * Each writes every position of its example, so an example's hash (task.c's held-out sets)
 * depends on nothing but the draws. Scratch lives on the stack: no malloc per example. */
#include "tasks/task_mad.h"

#include <stdio.h>
#include <string.h>

/* MAX_POSITIONS: model.seq_len's upper bound, the longest example a model can take;
 * MAX_PAIRS: task.pairs' upper bound, the size of the scratch arrays */
enum { MAX_POSITIONS = 65536, MAX_PAIRS = 4096 };

/* Fisher-Yates: order[0, n) becomes a uniformly random permutation of itself */
static void shuffle(qkv_rng *r, int32_t *order, int n) {
    for (int i = n - 1; i > 0; i--) {
        int j = (int)qkv_rng_below(r, (uint64_t)i + 1);
        int32_t x = order[i]; order[i] = order[j]; order[j] = x;
    }
}

/* sequential sampling (Knuth's Algorithm S): with *need of `left` places still to choose, this
 * place is chosen with probability *need / left, so every set of places is equally likely; a
 * forced choice draws nothing (no noise: noisy_recall draws exactly what recall draws) */
static bool take(qkv_rng *r, int *need, int left) {
    if (*need == 0) return false;
    if (*need < left && qkv_rng_below(r, (uint64_t)left) >= (uint64_t)*need) return false;
    (*need)--;
    return true;
}

void qkv__task_draw_pairs(qkv_rng *r, int P, int K, int V, int32_t *keys, int32_t *vals, int32_t *order) {
    for (int i = 0; i < P; i++) { /* distinct keys: drawn again while equal to an earlier one */
        int32_t k;
        bool dup;
        do {
            k = (int32_t)qkv_rng_below(r, (uint64_t)K);
            dup = false;
            for (int j = 0; j < i; j++) dup |= keys[j] == k;
        } while (dup);
        keys[i] = k;
        vals[i] = K + (int32_t)qkv_rng_below(r, (uint64_t)V);
        order[i] = i;
    }
    shuffle(r, order, P); /* queries: the pairs in a random order */
}

void qkv__task_put_queries(const qkv_task_config *c, int32_t *tok, int32_t *tgt, int Q, const int32_t *keys,
                           const int32_t *vals, const int32_t *order) {
    int32_t blank = c->keys + c->values + (c->kind == QKV_TASK_NOISY_RECALL ? c->noise_symbols : 0);
    for (int i = 0; i < Q; i++) {
        if (c->query_blank) {
            tok[2 * i] = keys[order[i]], tgt[2 * i] = QKV_IGNORE;
            tok[2 * i + 1] = blank, tgt[2 * i + 1] = vals[order[i]];
        } else {
            tok[i] = keys[order[i]], tgt[i] = vals[order[i]];
        }
    }
}

/* fuzzy_recall: P pairs, each key_len key tokens then value_len value tokens, then Q queries,
 * each a key and all but the last of its value tokens; loss where the next token is one of
 * the asked value's. Keys are distinct as sequences but share tokens, so no single token of a
 * key identifies it. */
static void gen_fuzzy(const qkv_task *t, qkv_rng *r, int32_t *tok, int32_t *tgt) {
    const qkv_task_config *c = &t->cfg;
    int P = c->pairs, Q = c->queries ? c->queries : P, K = c->keys, KL = c->key_len, VL = c->value_len;
    int pair = KL + VL, query = KL + VL - 1;
    int32_t order[MAX_PAIRS];
    for (int i = 0; i < P; i++) {
        int32_t *key = tok + (size_t)i * pair;
        bool dup;
        do {
            for (int j = 0; j < KL; j++) key[j] = (int32_t)qkv_rng_below(r, (uint64_t)K);
            dup = false;
            for (int e = 0; e < i && !dup; e++) dup = !memcmp(tok + (size_t)e * pair, key, (size_t)KL * sizeof *key);
        } while (dup);
        for (int j = 0; j < VL; j++) key[KL + j] = K + (int32_t)qkv_rng_below(r, (uint64_t)c->values);
        order[i] = i;
    }
    for (int i = 0; i < P * pair; i++) tgt[i] = QKV_IGNORE;
    shuffle(r, order, P);
    for (int i = 0; i < Q; i++) {
        const int32_t *asked = tok + (size_t)order[i] * pair; /* its key, then its value */
        int32_t *q = tok + (size_t)P * pair + (size_t)i * query, *qt = tgt + (size_t)P * pair + (size_t)i * query;
        for (int j = 0; j < query; j++) {
            q[j] = asked[j];
            qt[j] = j >= KL - 1 ? asked[j + 1] : QKV_IGNORE; /* from the key's last token on */
        }
    }
}

/* noisy_recall: the P pairs (key, value) with N noise tokens scattered between them (every
 * arrangement equally likely, a pair never split), then Q queries as in recall */
static void gen_noisy(const qkv_task *t, qkv_rng *r, int32_t *tok, int32_t *tgt) {
    const qkv_task_config *c = &t->cfg;
    int P = c->pairs, Q = c->queries ? c->queries : P, K = c->keys, V = c->values;
    int32_t keys[MAX_PAIRS], vals[MAX_PAIRS], order[MAX_PAIRS];
    qkv__task_draw_pairs(r, P, K, V, keys, vals, order);
    int at = 0, next = 0, need = P;
    for (int left = P + c->noise; left > 0; left--) { /* P pair places among P + N */
        if (take(r, &need, left)) {
            tok[at] = keys[next], tok[at + 1] = vals[next++];
            tgt[at++] = QKV_IGNORE, tgt[at++] = QKV_IGNORE;
        } else {
            tok[at] = K + V + (int32_t)qkv_rng_below(r, (uint64_t)c->noise_symbols);
            tgt[at++] = QKV_IGNORE;
        }
    }
    qkv__task_put_queries(c, tok + at, tgt + at, Q, keys, vals, order);
}

/* selective_copy: L places holding C data tokens (in [0, S)) and blanks (S), then SEP (S + 1)
 * and the data tokens in order; loss where the next token is a data token of the answer */
static void gen_selective(const qkv_task *t, qkv_rng *r, int32_t *tok, int32_t *tgt) {
    const qkv_task_config *c = &t->cfg;
    int L = c->length, C = c->copy_tokens, S = c->symbols, need = C, n = 0;
    for (int i = 0; i < L; i++) {
        tok[i] = take(r, &need, L - i) ? (int32_t)qkv_rng_below(r, (uint64_t)S) : S;
        tgt[i] = QKV_IGNORE;
    }
    tok[L] = S + 1;
    for (int i = 0; i < L; i++) {
        if (tok[i] == S) continue;
        tgt[L + n] = tok[i];                    /* at SEP the first, at data token n the next */
        if (n + 1 < C) tok[L + 1 + n] = tok[i]; /* the answer so far, fed back */
        n++;
    }
}

void qkv__task_mad_example(const qkv_task *t, qkv_rng *r, int32_t *tok, int32_t *tgt) {
    switch (t->cfg.kind) {
    case QKV_TASK_FUZZY_RECALL: gen_fuzzy(t, r, tok, tgt); break;
    case QKV_TASK_NOISY_RECALL: gen_noisy(t, r, tok, tgt); break;
    default: gen_selective(t, r, tok, tgt); break;
    }
}

int qkv__task_mad_shape(const qkv_task_config *c, int *vocab, int *seq_len, qkv_err *e) {
    int P = c->pairs, Q = c->queries ? c->queries : c->pairs;
    int64_t T;
    const char *key; /* the key that sets the length, named when it is too long */
    switch (c->kind) {
    case QKV_TASK_FUZZY_RECALL: {
        int64_t distinct = 1; /* keys^key_len, counted only as far as pairs */
        for (int j = 0; j < c->key_len && distinct < P; j++) distinct *= c->keys;
        if (distinct < P) {
            return qkv_err_set(e, QKV_ERR_USAGE, "task.keys: %d keys make only %lld distinct keys of task.key_len %d "
                               "tokens, fewer than task.pairs %d (the keys of one example are distinct)",
                               c->keys, (long long)distinct, c->key_len, P);
        }
        *vocab = c->keys + c->values;
        T = (int64_t)P * (c->key_len + c->value_len) + (int64_t)Q * (c->key_len + c->value_len - 1);
        key = "task.pairs";
        break;
    }
    case QKV_TASK_NOISY_RECALL: /* queries <= pairs <= keys: checked with recall's (task.c) */
        *vocab = c->keys + c->values + c->noise_symbols + (c->query_blank ? 1 : 0); /* the blank last */
        T = 2 * (int64_t)P + c->noise + (int64_t)Q * (c->query_blank ? 2 : 1);
        key = "task.noise";
        break;
    case QKV_TASK_SELECTIVE_COPY:
        if (c->copy_tokens > c->length) {
            return qkv_err_set(e, QKV_ERR_USAGE, "task.copy_tokens: %d is more than task.length %d (the data tokens "
                               "take places among the task.length before the separator)", c->copy_tokens, c->length);
        }
        *vocab = c->symbols + 2;
        T = (int64_t)c->length + c->copy_tokens;
        key = "task.length";
        break;
    default:
        return qkv_err_set(e, QKV_ERR_USAGE, "task.name: %d is not a MAD task", (int)c->kind);
    }
    if (T > MAX_POSITIONS) {
        return qkv_err_set(e, QKV_ERR_USAGE, "%s: %s examples of %lld positions are longer than a model takes "
                           "(model.seq_len at most %d)", key, QKV_TASK_NAMES[c->kind], (long long)T, MAX_POSITIONS);
    }
    *seq_len = (int)T;
    return 0;
}
