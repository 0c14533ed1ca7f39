/* Tests for the MAD suite's generated tasks (src/tasks/task_mad.c): fuzzy_recall, noisy_recall
 * and selective_copy. For many seeds and several sizes, every example has the documented
 * format (docs/config.md): targets only where the format puts them, values that belong to
 * their keys, noise never a target, the copy in order, tokens inside the vocab. Also: where
 * they reduce to recall they are recall bit for bit; the same seed gives the same examples
 * however they are asked for; held-out examples are never drawn for training; the size
 * errors name their key. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tasks/task.h"
#include "testutil.h"

static qkv_err qe;

static qkv_task_config cfg_of(qkv_task_kind kind) {
    qkv_task_config c = qkv_task_config_default();
    c.kind = kind;
    return c;
}

static void open_ok(qkv_task *t, const qkv_task_config *c, uint64_t seed) {
    qkv_err_clear(&qe);
    ck_assert_msg(qkv_task_open(t, c, seed, &qe) == 0, "%s", qe.msg);
}

/* ---- the examples of many seeds ----------------------------------------------------------- */

/* Check's ck_assert reports every passing check through a pipe, too slow for the thousands
 * of checks below: these call Check only on a failure */
#define REQUIRE_MSG(cond, ...)                 \
    do {                                       \
        if (!(cond)) ck_abort_msg(__VA_ARGS__); \
    } while (0)
#define REQUIRE(cond) REQUIRE_MSG(cond, "line %d: %s", __LINE__, #cond)
#define REQUIRE_EQ(a, b)                                                                                 \
    do {                                                                                                 \
        long long a_ = (a), b_ = (b);                                                                    \
        if (a_ != b_) ck_abort_msg("line %d: %s == %s, but %lld != %lld", __LINE__, #a, #b, a_, b_);    \
    } while (0)

typedef void (*check_fn)(const qkv_task *t, const int32_t *tok, const int32_t *tgt);

/* every token in [0, vocab); every target ignored or in [0, vocab) */
static void check_bounds(const qkv_task *t, const int32_t *tok, const int32_t *tgt) {
    for (int j = 0; j < t->seq_len; j++) {
        REQUIRE_MSG(tok[j] >= 0 && tok[j] < t->vocab, "token %d at %d outside [0, %d)", tok[j], j, t->vocab);
        REQUIRE_MSG(tgt[j] == QKV_IGNORE || (tgt[j] >= 0 && tgt[j] < t->vocab), "target %d at %d", tgt[j], j);
    }
}

/* check() on the training examples of two steps (both shards), 4 evaluation and 4 validation
 * examples, for seeds [0, seeds) */
static void for_examples(const qkv_task_config *c, int seeds, check_fn check) {
    for (int seed = 0; seed < seeds; seed++) {
        qkv_task t;
        qkv_batch b;
        open_ok(&t, c, (uint64_t)seed);
        REQUIRE_EQ(qkv_batch_alloc(&b, &t, 4), 0);
        for (int round = 0; round < 6; round++) {
            if (round < 4) qkv_task_train_shard(&t, &b, round / 2, round % 2);
            else qkv_task_split_batch(&t, round == 4 ? QKV_SPLIT_EVAL : QKV_SPLIT_VAL, &b, 0, INT64_MAX);
            for (int i = 0; i < b.B; i++) {
                const int32_t *tok = b.tok + (size_t)i * b.T, *tgt = b.tgt + (size_t)i * b.T;
                check_bounds(&t, tok, tgt);
                check(&t, tok, tgt);
            }
        }
        qkv_batch_free(&b);
        qkv_task_close(&t);
    }
}

/* fuzzy_recall: P pairs (key_len key tokens, value_len value tokens), then Q queries (a key and
 * the value's first value_len - 1 tokens); targets exactly the asked value's tokens */
static void check_fuzzy(const qkv_task *t, const int32_t *tok, const int32_t *tgt) {
    const qkv_task_config *c = &t->cfg;
    int P = c->pairs, Q = c->queries ? c->queries : P, K = c->keys, V = c->values, KL = c->key_len, VL = c->value_len;
    int pair = KL + VL, query = KL + VL - 1, targets = 0;
    REQUIRE(P <= 64);
    REQUIRE_EQ(t->seq_len, P * pair + Q * query);
    REQUIRE_EQ(t->vocab, K + V);
    for (int i = 0; i < P; i++) {
        const int32_t *p = tok + i * pair;
        for (int j = 0; j < pair; j++) {
            REQUIRE_EQ(tgt[i * pair + j], QKV_IGNORE);
            if (j < KL) REQUIRE(p[j] < K);
            else REQUIRE(p[j] >= K && p[j] < K + V);
        }
        for (int e = 0; e < i; e++)
            REQUIRE_MSG(memcmp(tok + e * pair, p, (size_t)KL * sizeof *p), "keys %d and %d equal", e, i);
    }
    bool asked[64] = {false};
    for (int q = 0; q < Q; q++) {
        const int32_t *qt = tok + P * pair + q * query, *qg = tgt + P * pair + q * query;
        int found = -1;
        for (int i = 0; i < P && found < 0; i++)
            if (!memcmp(tok + i * pair, qt, (size_t)KL * sizeof *qt)) found = i;
        REQUIRE_MSG(found >= 0, "query %d asks for a key not in the context", q);
        REQUIRE_MSG(!asked[found], "pair %d asked twice", found);
        asked[found] = true;
        const int32_t *p = tok + found * pair;
        for (int j = 0; j < query; j++) {
            REQUIRE_EQ(qt[j], p[j]); /* the key, then the value so far */
            REQUIRE_EQ(qg[j], j >= KL - 1 ? p[j + 1] : QKV_IGNORE);
            targets += qg[j] != QKV_IGNORE;
        }
    }
    REQUIRE_EQ(targets, Q * VL);
}

static int noise_first, pair_first, noise_last, pair_last; /* arrangements seen by check_noisy */

/* noisy_recall: P pairs and N noise tokens (never splitting a pair), then Q queries; a target
 * only at a query, and it is the asked key's value */
static void check_noisy(const qkv_task *t, const int32_t *tok, const int32_t *tgt) {
    const qkv_task_config *c = &t->cfg;
    int P = c->pairs, Q = c->queries ? c->queries : P, K = c->keys, V = c->values, N = c->noise;
    REQUIRE_EQ(t->seq_len, 2 * P + N + Q);
    REQUIRE_EQ(t->vocab, K + V + c->noise_symbols);
    REQUIRE(P <= 64);
    int32_t keys[64], vals[64];
    int at = 0, pairs = 0, noise = 0, ctx = 2 * P + N;
    while (at < ctx) {
        REQUIRE_EQ(tgt[at], QKV_IGNORE);
        bool is_noise = tok[at] >= K + V;
        if (at == 0) is_noise ? noise_first++ : pair_first++;
        if (is_noise) {
            if (at == ctx - 1) noise_last++;
            noise++, at++;
            continue;
        }
        REQUIRE_MSG(tok[at] < K, "a value or noise where a key belongs: %d at %d", tok[at], at);
        REQUIRE_MSG(at + 1 < ctx && tok[at + 1] >= K && tok[at + 1] < K + V, "key at %d without its value", at);
        REQUIRE_EQ(tgt[at + 1], QKV_IGNORE);
        if (at + 2 == ctx) pair_last++;
        for (int e = 0; e < pairs; e++) REQUIRE(keys[e] != tok[at]);
        keys[pairs] = tok[at], vals[pairs++] = tok[at + 1];
        at += 2;
    }
    REQUIRE_EQ(pairs, P);
    REQUIRE_EQ(noise, N);
    bool asked[64] = {false};
    for (int q = 0; q < Q; q++) {
        int found = -1;
        for (int i = 0; i < P; i++)
            if (keys[i] == tok[ctx + q]) found = i;
        REQUIRE_MSG(found >= 0, "query %d: %d is no key of the context", q, tok[ctx + q]);
        REQUIRE(!asked[found]);
        asked[found] = true;
        REQUIRE_EQ(tgt[ctx + q], vals[found]); /* so never a noise token */
    }
}

static int data_first, data_last; /* places seen by check_selective */

/* selective_copy: L places of C data tokens and blanks, SEP, the data fed back in order;
 * targets exactly the data tokens, in order, from SEP on */
static void check_selective(const qkv_task *t, const int32_t *tok, const int32_t *tgt) {
    const qkv_task_config *c = &t->cfg;
    int L = c->length, C = c->copy_tokens, S = c->symbols, n = 0;
    REQUIRE_EQ(t->seq_len, L + C);
    REQUIRE_EQ(t->vocab, S + 2);
    REQUIRE(C <= 64);
    int32_t data[64];
    for (int i = 0; i < L; i++) {
        REQUIRE_EQ(tgt[i], QKV_IGNORE);
        REQUIRE(tok[i] <= S); /* a data token or the blank, never SEP */
        if (tok[i] == S) continue;
        data[n++] = tok[i];
        data_first += i == 0, data_last += i == L - 1;
    }
    REQUIRE_EQ(n, C);
    REQUIRE_EQ(tok[L], S + 1);
    for (int j = 0; j < C; j++) {
        REQUIRE_EQ(tgt[L + j], data[j]);
        if (j + 1 < C) REQUIRE_EQ(tok[L + 1 + j], data[j]);
    }
}

START_TEST(test_fuzzy_recall_format) {
    qkv_task_config c = cfg_of(QKV_TASK_FUZZY_RECALL);
    for_examples(&c, 50, check_fuzzy); /* the defaults: 8 pairs, keys and values of 2 tokens */
    c.pairs = 6, c.keys = 3, c.values = 4, c.key_len = 3, c.value_len = 1, c.queries = 4;
    for_examples(&c, 100, check_fuzzy);
    c.pairs = 4, c.keys = 2, c.key_len = 2, c.value_len = 3, c.queries = 0; /* all 4 keys of 2 tokens */
    for_examples(&c, 100, check_fuzzy);
    c.key_len = 1, c.keys = 5, c.value_len = 5, c.queries = 1;
    for_examples(&c, 50, check_fuzzy);
}
END_TEST

START_TEST(test_noisy_recall_format) {
    qkv_task_config c = cfg_of(QKV_TASK_NOISY_RECALL);
    noise_first = pair_first = noise_last = pair_last = 0;
    for_examples(&c, 50, check_noisy); /* the defaults: 8 pairs, 16 noise tokens of 16 */
    c.pairs = 3, c.keys = 3, c.values = 2, c.noise = 2, c.noise_symbols = 1, c.queries = 2;
    for_examples(&c, 100, check_noisy);
    c.pairs = 1, c.noise = 30, c.queries = 0;
    for_examples(&c, 50, check_noisy);
    /* the noise goes anywhere between the pairs: first, last, or neither */
    ck_assert_int_gt(noise_first, 0);
    ck_assert_int_gt(pair_first, 0);
    ck_assert_int_gt(noise_last, 0);
    ck_assert_int_gt(pair_last, 0);
}
END_TEST

START_TEST(test_selective_copy_format) {
    qkv_task_config c = cfg_of(QKV_TASK_SELECTIVE_COPY);
    data_first = data_last = 0;
    for_examples(&c, 50, check_selective); /* the defaults: 4 of 16 symbols among 8 places */
    c.length = 40, c.copy_tokens = 6, c.symbols = 3;
    for_examples(&c, 100, check_selective);
    c.length = 5, c.copy_tokens = 5; /* no blanks at all */
    for_examples(&c, 20, check_selective);
    c.length = 7, c.copy_tokens = 1;
    for_examples(&c, 50, check_selective);
    ck_assert_int_gt(data_first, 0);
    ck_assert_int_gt(data_last, 0);
}
END_TEST

/* ---- recall as a special case ------------------------------------------------------------- */

/* the same examples (training, evaluation, validation) from two task configs (vocabs aside) */
static void assert_same_examples(const qkv_task_config *a, const qkv_task_config *b) {
    for (uint64_t seed = 0; seed < 20; seed++) {
        qkv_task ta, tb;
        qkv_batch ba, bb;
        open_ok(&ta, a, seed);
        open_ok(&tb, b, seed);
        ck_assert_int_eq(ta.seq_len, tb.seq_len);
        ck_assert_int_eq(qkv_batch_alloc(&ba, &ta, 8), 0);
        ck_assert_int_eq(qkv_batch_alloc(&bb, &tb, 8), 0);
        size_t n = (size_t)8 * (size_t)ta.seq_len * sizeof(int32_t);
        for (int round = 0; round < 3; round++) {
            if (round == 0) qkv_task_train_shard(&ta, &ba, 7, 1), qkv_task_train_shard(&tb, &bb, 7, 1);
            else {
                qkv_split s = round == 1 ? QKV_SPLIT_EVAL : QKV_SPLIT_VAL;
                qkv_task_split_batch(&ta, s, &ba, 3, INT64_MAX);
                qkv_task_split_batch(&tb, s, &bb, 3, INT64_MAX);
            }
            ck_assert(!memcmp(ba.tok, bb.tok, n));
            ck_assert(!memcmp(ba.tgt, bb.tgt, n));
        }
        qkv_batch_free(&ba);
        qkv_batch_free(&bb);
        qkv_task_close(&ta);
        qkv_task_close(&tb);
    }
}

START_TEST(test_reduce_to_recall) {
    /* keys and values of one token: recall's format and recall's draws */
    qkv_task_config r = cfg_of(QKV_TASK_RECALL), f = cfg_of(QKV_TASK_FUZZY_RECALL);
    f.key_len = f.value_len = 1;
    assert_same_examples(&r, &f);
    r.queries = f.queries = 3;
    assert_same_examples(&r, &f);
    /* no noise: recall's examples too (the unused noise alphabet still widens the vocab) */
    qkv_task_config n = cfg_of(QKV_TASK_NOISY_RECALL);
    n.noise = 0, n.queries = 3;
    assert_same_examples(&r, &n);
    qkv_task tr, tn;
    open_ok(&tr, &r, 0);
    open_ok(&tn, &n, 0);
    ck_assert_int_eq(tn.vocab, tr.vocab + n.noise_symbols);
    qkv_task_close(&tr);
    qkv_task_close(&tn);
}
END_TEST

/* ---- determinism ---------------------------------------------------------------------------- */

/* the batch's bytes (tokens then targets) into out */
static void snapshot(const qkv_batch *b, int32_t *out) {
    size_t n = (size_t)b->B * (size_t)b->T;
    memcpy(out, b->tok, n * sizeof *out);
    memcpy(out + n, b->tgt, n * sizeof *out);
}

START_TEST(test_deterministic) {
    static const qkv_task_kind kinds[] = {QKV_TASK_FUZZY_RECALL, QKV_TASK_NOISY_RECALL, QKV_TASK_SELECTIVE_COPY};
    for (int k = 0; k < 3; k++) {
        qkv_task_config c = cfg_of(kinds[k]);
        qkv_task a, b, other;
        qkv_batch ba, bb, bo, one;
        open_ok(&a, &c, 42);
        open_ok(&b, &c, 42);
        open_ok(&other, &c, 43);
        ck_assert_int_eq(qkv_batch_alloc(&ba, &a, 4), 0);
        ck_assert_int_eq(qkv_batch_alloc(&bb, &b, 4), 0);
        ck_assert_int_eq(qkv_batch_alloc(&bo, &other, 4), 0);
        ck_assert_int_eq(qkv_batch_alloc(&one, &a, 1), 0);
        size_t n = (size_t)2 * 4 * (size_t)a.seq_len;
        int32_t *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
        ck_assert(x && y);
        /* a shard's examples depend on (seed, step, shard) only, not on what was drawn before */
        qkv_task_train_shard(&a, &ba, 5, 2);
        snapshot(&ba, x);
        for (int s = 0; s < 3; s++) qkv_task_train_shard(&b, &bb, s, s); /* b draws others first */
        qkv_task_train_shard(&b, &bb, 5, 2);
        snapshot(&bb, y);
        ck_assert(!memcmp(x, y, n * sizeof *x));
        qkv_task_train_shard(&a, &ba, 5, 2); /* again: the same */
        snapshot(&ba, y);
        ck_assert(!memcmp(x, y, n * sizeof *x));
        qkv_task_train_shard(&a, &ba, 5, 3); /* another shard, another step, another seed: not */
        snapshot(&ba, y);
        ck_assert(memcmp(x, y, n * sizeof *x));
        qkv_task_train_shard(&a, &ba, 6, 2);
        snapshot(&ba, y);
        ck_assert(memcmp(x, y, n * sizeof *x));
        qkv_task_train_shard(&other, &bo, 5, 2);
        snapshot(&bo, y);
        ck_assert(memcmp(x, y, n * sizeof *x));
        /* held-out example k is the same in any batch */
        qkv_task_split_batch(&a, QKV_SPLIT_EVAL, &ba, 0, INT64_MAX);
        qkv_task_split_batch(&b, QKV_SPLIT_EVAL, &one, 2, INT64_MAX);
        size_t row = (size_t)a.seq_len * sizeof(int32_t);
        ck_assert(!memcmp(ba.tok + 2 * a.seq_len, one.tok, row));
        ck_assert(!memcmp(ba.tgt + 2 * a.seq_len, one.tgt, row));
        qkv_task_split_batch(&b, QKV_SPLIT_VAL, &one, 2, INT64_MAX); /* validation: another list */
        ck_assert(memcmp(ba.tok + 2 * a.seq_len, one.tok, row));
        free(x);
        free(y);
        qkv_batch_free(&ba);
        qkv_batch_free(&bb);
        qkv_batch_free(&bo);
        qkv_batch_free(&one);
        qkv_task_close(&a);
        qkv_task_close(&b);
        qkv_task_close(&other);
    }
}
END_TEST

/* ---- held-out examples ---------------------------------------------------------------------- */

static bool row_in(const int32_t *tok, const int32_t *tgt, const int32_t *rows, int n, int T) {
    for (int i = 0; i < n; i++)
        if (!memcmp(rows + (size_t)i * 2 * T, tok, (size_t)T * sizeof *tok) &&
            !memcmp(rows + (size_t)i * 2 * T + T, tgt, (size_t)T * sizeof *tgt))
            return true;
    return false;
}

/* a task with few distinct examples: the evaluation list, then the validation list, then
 * 200 training draws; validation avoids evaluation and training avoids both */
static void check_held_out(const qkv_task_config *c, int n_eval, int n_val) {
    qkv_task t;
    qkv_batch b;
    open_ok(&t, c, 7);
    ck_assert_int_eq(qkv_task_hold_out(&t, n_eval, n_val, &qe), 0);
    int T = t.seq_len, n_held = 0;
    int32_t *held = malloc((size_t)(n_eval + n_val) * 2 * (size_t)T * sizeof *held);
    ck_assert_ptr_nonnull(held);
    ck_assert_int_eq(qkv_batch_alloc(&b, &t, 1), 0);
    for (int s = 0; s < 2; s++)
        for (int k = 0; k < (s ? n_val : n_eval); k++) {
            qkv_task_split_batch(&t, s ? QKV_SPLIT_VAL : QKV_SPLIT_EVAL, &b, k, INT64_MAX);
            if (s)
                ck_assert_msg(!row_in(b.tok, b.tgt, held, n_eval, T), "validation example %d is an evaluation one", k);
            memcpy(held + (size_t)n_held * 2 * T, b.tok, (size_t)T * sizeof *held);
            memcpy(held + (size_t)n_held++ * 2 * T + T, b.tgt, (size_t)T * sizeof *held);
        }
    for (int step = 0; step < 100; step++)
        for (int shard = 0; shard < 2; shard++) {
            qkv_task_train_shard(&t, &b, step, shard);
            ck_assert_msg(!row_in(b.tok, b.tgt, held, n_held, T), "step %d shard %d drew a held-out example", step,
                          shard);
        }
    ck_assert_int_gt(t.held_collisions, 0); /* the space is small enough that redraws happened */
    free(held);
    qkv_batch_free(&b);
    qkv_task_close(&t);
}

START_TEST(test_held_out_disjoint) {
    qkv_task_config c = cfg_of(QKV_TASK_FUZZY_RECALL); /* 12 ordered key pairs x 4 values x 2 asked: 96 */
    c.pairs = 2, c.keys = 2, c.key_len = 2, c.values = 2, c.value_len = 1, c.queries = 1;
    check_held_out(&c, 24, 24);
    c = cfg_of(QKV_TASK_NOISY_RECALL); /* 2 places x 2 keys x 2 values x 2 noise tokens: 16 */
    c.pairs = 1, c.keys = 2, c.values = 2, c.noise = 1, c.noise_symbols = 2;
    check_held_out(&c, 4, 4);
    c = cfg_of(QKV_TASK_SELECTIVE_COPY); /* 6 placements x 4 data: 24 */
    c.length = 4, c.copy_tokens = 2, c.symbols = 2;
    check_held_out(&c, 6, 6);
}
END_TEST

/* ---- sizes and their errors ----------------------------------------------------------------- */

/* qkv_task_config_check and qkv_task_open refuse c with a message starting with `want` */
static void refused(const qkv_task_config *c, const char *want) {
    qkv_task t;
    qkv_err_clear(&qe);
    ck_assert_int_eq(qkv_task_config_check(c, &qe), -1);
    ck_assert_int_eq(qe.code, QKV_ERR_USAGE); /* the config's sizes: the user's to change */
    ck_assert_msg(!strncmp(qe.msg, want, strlen(want)), "\"%s\" does not start with \"%s\"", qe.msg, want);
    ck_assert_ptr_null(strchr(qe.msg, '\n'));
    qkv_err_clear(&qe);
    ck_assert_int_eq(qkv_task_open(&t, c, 0, &qe), -1);
    ck_assert_msg(!strncmp(qe.msg, want, strlen(want)), "\"%s\" does not start with \"%s\"", qe.msg, want);
}

static void accepted(const qkv_task_config *c, int vocab, int seq_len) {
    qkv_task t;
    ck_assert_msg(qkv_task_config_check(c, &qe) == 0, "%s", qe.msg);
    open_ok(&t, c, 0);
    ck_assert_int_eq(t.vocab, vocab);
    ck_assert_int_eq(t.seq_len, seq_len);
    qkv_task_close(&t);
}

START_TEST(test_sizes_and_errors) {
    qkv_task_config c = cfg_of(QKV_TASK_FUZZY_RECALL);
    accepted(&c, 64, 8 * 4 + 8 * 3);
    c.keys = 2, c.pairs = 4; /* exactly the 2^2 keys of 2 tokens */
    accepted(&c, 34, 4 * 4 + 4 * 3);
    c.pairs = 5;
    refused(&c, "task.keys: 2 keys make only 4 distinct keys of task.key_len 2 tokens, fewer than task.pairs 5");
    c.key_len = 3; /* 8 keys of 3 tokens */
    accepted(&c, 34, 5 * 5 + 5 * 4);
    c.queries = 6;
    refused(&c, "task.queries: 6 is more than task.pairs 5");
    c = cfg_of(QKV_TASK_FUZZY_RECALL);
    c.pairs = 4096, c.keys = 65536, c.key_len = 4, c.value_len = 4, c.queries = 1; /* 32775 positions */
    accepted(&c, 65536 + 32, 4096 * 8 + 7);
    c.key_len = c.value_len = 8; /* 4096 x 16 + 15 */
    refused(&c, "task.pairs: fuzzy_recall examples of 65551 positions are longer than a model takes (model.seq_len at "
                "most 65536)");

    c = cfg_of(QKV_TASK_NOISY_RECALL);
    accepted(&c, 32 + 32 + 16, 16 + 16 + 8);
    c.keys = 7;
    refused(&c, "task.keys: 7 is less than task.pairs 8");
    c.keys = 8, c.queries = 9;
    refused(&c, "task.queries: 9 is more than task.pairs 8");
    c.queries = 0, c.noise = 65536 - 24;
    accepted(&c, 8 + 32 + 16, 65536);
    c.noise++;
    refused(&c, "task.noise: noisy_recall examples of 65537 positions");

    c = cfg_of(QKV_TASK_SELECTIVE_COPY);
    accepted(&c, 18, 8 + 4);
    c.copy_tokens = 8;
    accepted(&c, 18, 16);
    c.copy_tokens = 9;
    refused(&c, "task.copy_tokens: 9 is more than task.length 8");
    c.length = 4096, c.copy_tokens = 4096, c.symbols = 65536; /* the largest */
    accepted(&c, 65538, 8192);
}
END_TEST

/* ---- task.query_blank and bidirectional attention ---------------------------------------- */

/* recall and noisy_recall with task.query_blank are the same draws as without: the context
 * unchanged, each query key followed by the blank (the last token id), the value the target at
 * the blank and none at the key */
START_TEST(test_query_blank_format) {
    qkv_task_kind kinds[2] = {QKV_TASK_RECALL, QKV_TASK_NOISY_RECALL};
    for (int k = 0; k < 2; k++)
        for (int queries = 0; queries <= 3; queries += 3)
            for (uint64_t seed = 0; seed < 20; seed++) {
                qkv_task_config c = cfg_of(kinds[k]);
                c.queries = queries;
                qkv_task plain, blank;
                qkv_batch bp, bb;
                open_ok(&plain, &c, seed);
                c.query_blank = true;
                open_ok(&blank, &c, seed);
                int Q = queries ? queries : c.pairs, ctx = plain.seq_len - Q;
                REQUIRE_EQ(blank.seq_len, ctx + 2 * Q);
                REQUIRE_EQ(blank.vocab, plain.vocab + 1);
                REQUIRE_EQ(qkv_batch_alloc(&bp, &plain, 4), 0);
                REQUIRE_EQ(qkv_batch_alloc(&bb, &blank, 4), 0);
                for (int round = 0; round < 3; round++) {
                    if (round == 0) qkv_task_train_shard(&plain, &bp, 3, 0), qkv_task_train_shard(&blank, &bb, 3, 0);
                    else {
                        qkv_split sp = round == 1 ? QKV_SPLIT_EVAL : QKV_SPLIT_VAL;
                        qkv_task_split_batch(&plain, sp, &bp, 0, 4), qkv_task_split_batch(&blank, sp, &bb, 0, 4);
                    }
                    for (int i = 0; i < 4; i++) {
                        const int32_t *pt = bp.tok + i * plain.seq_len, *pg = bp.tgt + i * plain.seq_len;
                        const int32_t *bt = bb.tok + i * blank.seq_len, *bg = bb.tgt + i * blank.seq_len;
                        check_bounds(&blank, bt, bg);
                        for (int j = 0; j < ctx; j++) {
                            REQUIRE_EQ(bt[j], pt[j]);
                            REQUIRE_EQ(bg[j], pg[j]);
                        }
                        for (int q = 0; q < Q; q++) {
                            REQUIRE_EQ(bt[ctx + 2 * q], pt[ctx + q]); /* the key asked */
                            REQUIRE_EQ(bg[ctx + 2 * q], QKV_IGNORE);
                            REQUIRE_EQ(bt[ctx + 2 * q + 1], blank.vocab - 1);
                            REQUIRE_EQ(bg[ctx + 2 * q + 1], pg[ctx + q]); /* its value, at the blank */
                        }
                    }
                }
                qkv_batch_free(&bp), qkv_batch_free(&bb);
                qkv_task_close(&plain), qkv_task_close(&blank);
            }
    qkv_task_config c = cfg_of(QKV_TASK_INDUCTION);
    c.query_blank = true;
    refused(&c, "task.query_blank: only recall and noisy_recall have queries to blank, not task \"induction\"");
}
END_TEST

/* model.attention.causal false: accepted where no target is the next input token (recall,
 * noisy_recall, induction, recall with blanks, a file whose targets do not follow), refused in
 * one line naming the task (or the file) where it is (copy, reverse, sort, selective_copy,
 * fuzzy_recall, text, a file of next-token data); causal true is accepted everywhere */
static int fit(const qkv_task_config *c, bool causal) {
    qkv_task t;
    open_ok(&t, c, 1);
    qkv_model_config m = qkv_model_config_default();
    m.attn.causal = causal;
    qkv_err_clear(&qe);
    int rc = qkv_task_fit_model(&t, &m, &qe);
    qkv_task_close(&t);
    ck_assert_ptr_null(strchr(qe.msg, '\n'));
    return rc;
}

START_TEST(test_bidirectional_tasks) {
    qkv_task_kind ok[3] = {QKV_TASK_RECALL, QKV_TASK_NOISY_RECALL, QKV_TASK_INDUCTION};
    qkv_task_kind no[5] = {QKV_TASK_COPY, QKV_TASK_REVERSE, QKV_TASK_SORT, QKV_TASK_SELECTIVE_COPY,
                           QKV_TASK_FUZZY_RECALL};
    for (int i = 0; i < 3; i++) {
        qkv_task_config c = cfg_of(ok[i]);
        ck_assert_msg(fit(&c, false) == 0, "%s: %s", QKV_TASK_NAMES[ok[i]], qe.msg);
    }
    qkv_task_config c = cfg_of(QKV_TASK_RECALL);
    c.query_blank = true;
    ck_assert_msg(fit(&c, false) == 0, "%s", qe.msg);
    c = cfg_of(QKV_TASK_NOISY_RECALL);
    c.query_blank = true;
    ck_assert_msg(fit(&c, false) == 0, "%s", qe.msg);
    c = cfg_of(QKV_TASK_FUZZY_RECALL); /* values of one token: the answer is not shown after the key */
    c.value_len = 1;
    ck_assert_msg(fit(&c, false) == 0, "%s", qe.msg);
    for (int i = 0; i < 5; i++) {
        c = cfg_of(no[i]);
        ck_assert_int_eq(fit(&c, true), 0);
        ck_assert_int_eq(fit(&c, false), -1);
        char want[256];
        snprintf(want, sizeof want, "model.attention.causal: false, but task \"%s\" shows its targets as the next "
                 "input tokens", QKV_TASK_NAMES[no[i]]);
        ck_assert_msg(!strncmp(qe.msg, want, strlen(want)), "%s", qe.msg);
    }
    char dir[512], path[600];
    qkv_test_mkdtemp(dir, sizeof dir, "bidir");
    snprintf(path, sizeof path, "%s/text.txt", dir);
    qkv_test_write_file(path, "the quick brown fox jumps over the lazy dog, again and again and again.\n");
    c = cfg_of(QKV_TASK_TEXT);
    c.corpus = QKV_CORPUS_FILE, c.seq_len = 8, c.val_fraction = 0, c.eval_fraction = 0.4;
    snprintf(c.path, sizeof c.path, "%s", path);
    ck_assert_int_eq(fit(&c, true), 0);
    ck_assert_int_eq(fit(&c, false), -1);
    ck_assert_msg(strstr(qe.msg, "task \"text\" shows its targets"), "%s", qe.msg);
    /* the user's sequences: next-token targets refused (naming the file), others accepted */
    qkv_test_write_file(path, "{\"input\": [1, 2, 3, 4], \"target\": [2, 3, 4, 5]}\n"
                              "{\"input\": [5, 6, 7, 8], \"target\": [6, 7, 8, 9]}\n"
                              "{\"input\": [1, 3, 5, 7], \"target\": [3, 5, 7, 9]}\n");
    c = cfg_of(QKV_TASK_FILE);
    c.eval_fraction = 0.34;
    snprintf(c.path, sizeof c.path, "%s", path);
    ck_assert_int_eq(fit(&c, true), 0);
    ck_assert_int_eq(fit(&c, false), -1);
    ck_assert_msg(strstr(qe.msg, path) && strstr(qe.msg, "next position's input token"), "%s", qe.msg);
    /* more than a quarter refuses: one training sequence of three that copies (3 of 9 positions);
     * exactly a quarter (one of four) does not */
    qkv_test_write_file(path, "{\"input\": [1, 2, 3, 4], \"target\": [2, 3, 4, 5]}\n"
                              "{\"input\": [5, 6, 7, 8], \"target\": [9, 9, 9, 9]}\n"
                              "{\"input\": [1, 3, 5, 7], \"target\": [9, 9, 9, 9]}\n"
                              "{\"input\": [2, 4, 6, 8], \"target\": [9, 9, 9, 9]}\n");
    c.eval_fraction = 0.25, c.val_fraction = 0; /* the last sequence held out: three to train on */
    ck_assert_int_eq(fit(&c, false), -1);
    qkv_test_write_file(path, "{\"input\": [1, 2, 3, 4], \"target\": [2, 3, 4, 5]}\n"
                              "{\"input\": [5, 6, 7, 8], \"target\": [9, 9, 9, 9]}\n"
                              "{\"input\": [1, 3, 5, 7], \"target\": [9, 9, 9, 9]}\n"
                              "{\"input\": [2, 4, 6, 8], \"target\": [9, 9, 9, 9]}\n"
                              "{\"input\": [3, 5, 7, 9], \"target\": [9, 9, 9, 9]}\n");
    c.eval_fraction = 0.2; /* four to train on */
    ck_assert_msg(fit(&c, false) == 0, "%s", qe.msg);
    qkv_test_write_file(path, "{\"input\": [1, 2, 3, 4], \"target\": [9, 9, 9, 9]}\n"
                              "{\"input\": [5, 6, 7, 8], \"target\": [9, 9, 9, 9]}\n"
                              "{\"input\": [1, 3, 5, 7], \"target\": [9, 9, 9, 9]}\n");
    c.eval_fraction = 0.34;
    ck_assert_msg(fit(&c, false) == 0, "%s", qe.msg);
    remove(path);
    rmdir(dir);
}
END_TEST

/* recall's floors from its own generator: chance 1 / values; never retrieving, the expected
 * largest count of one value among the example's pairs over the pairs, worked out by hand for
 * small sizes; the same numbers every call; none for a task without keys */
START_TEST(test_recall_floors) {
    qkv_task_config c = qkv_task_config_default();
    double chance, never, again;
    c.pairs = 1, c.keys = 4, c.values = 4; /* one pair: its value is the answer */
    ck_assert_int_eq(qkv_task_floors(&c, 512, &chance, &never), 0);
    ck_assert(chance == 0.25 && never == 1.0);
    /* two pairs of 4 values: the same value (1/4) answers both, else one of two: 1/4 + 3/4 x 1/2 */
    c.pairs = 2;
    ck_assert_int_eq(qkv_task_floors(&c, 8192, &chance, &never), 0);
    ck_assert_double_eq_tol(never, 0.625, 0.015);
    /* 3 pairs of 8 values: all distinct 336/512 (1/3 each), one value twice 168/512 (2/3), thrice 8/512 */
    c.pairs = 3, c.keys = 8, c.values = 8;
    ck_assert_int_eq(qkv_task_floors(&c, 8192, &chance, &never), 0);
    ck_assert_double_eq_tol(never, (336.0 / 3 + 168.0 * 2 / 3 + 8.0) / 512, 0.015);
    ck_assert_int_eq(qkv_task_floors(&c, 8192, &chance, &again), 0);
    ck_assert(never == again && chance == 0.125);
    c.query_blank = true; /* the same answers, asked at the blank */
    ck_assert_int_eq(qkv_task_floors(&c, 8192, &chance, &again), 0);
    ck_assert_double_eq_tol(again, never, 0.015);
    c.kind = QKV_TASK_SORT;
    ck_assert_int_eq(qkv_task_floors(&c, 512, &chance, &never), -1);
    ck_assert(isnan(chance) && isnan(never));
}
END_TEST

/* the held-out examples of a split (tokens and targets of `count` of them) for one train seed */
static void heldout_of(const qkv_task_config *c, uint64_t seed, qkv_split split, int count, int32_t *out) {
    qkv_task t;
    open_ok(&t, c, seed);
    ck_assert(!qkv_task_hold_out(&t, count, count, &qe));
    qkv_batch b;
    ck_assert(!qkv_batch_alloc(&b, &t, count));
    ck_assert_int_le(b.T, 256);
    qkv_task_split_batch(&t, split, &b, 0, count);
    memcpy(out, b.tok, (size_t)count * b.T * sizeof *out);
    memcpy(out + (size_t)count * b.T, b.tgt, (size_t)count * b.T * sizeof *out);
    qkv_batch_free(&b);
    qkv_task_close(&t);
}

/* task.heldout_seed: with it set, runs of every train seed are validated and evaluated on the same
 * examples (text: the same windows; a generated task: the same examples); by default (-1) each seed
 * draws its own, exactly as with heldout_seed = its train seed */
START_TEST(test_heldout_seed) {
    char dir[512], path[600];
    qkv_test_mkdtemp(dir, sizeof dir, "heldout");
    snprintf(path, sizeof path, "%s/text.txt", dir);
    char text[4096];
    for (int i = 0; i < 4095; i++) text[i] = (char)('a' + (i * 7 + i / 13) % 26);
    text[4095] = 0;
    qkv_test_write_file(path, text);
    qkv_task_config cs[2] = {cfg_of(QKV_TASK_TEXT), cfg_of(QKV_TASK_RECALL)};
    cs[0].corpus = QKV_CORPUS_FILE, cs[0].seq_len = 16;
    snprintf(cs[0].path, sizeof cs[0].path, "%s", path);
    enum { N = 24, MAXT = 256 };
    static int32_t a[2 * N * MAXT], b[2 * N * MAXT];
    for (int k = 0; k < 2; k++) {
        qkv_task_config c = cs[k];
        ck_assert_int_eq(c.heldout_seed, -1); /* the default */
        for (int si = 0; si < 2; si++) {
            qkv_split split = si ? QKV_SPLIT_VAL : QKV_SPLIT_EVAL;
            size_t n = sizeof a;
            /* default: seeds 0 and 1 see different examples; each sees what heldout_seed = it gives */
            memset(a, 0, n), memset(b, 0, n);
            heldout_of(&c, 0, split, N, a);
            heldout_of(&c, 1, split, N, b);
            ck_assert_msg(memcmp(a, b, n), "task %d split %d: seeds 0 and 1 share their held-out examples", k, split);
            c.heldout_seed = 1;
            heldout_of(&c, 1, split, N, a);
            ck_assert_msg(!memcmp(a, b, n), "task %d split %d", k, split);
            /* fixed: the same examples whatever the train seed */
            c.heldout_seed = 12345;
            heldout_of(&c, 0, split, N, a);
            heldout_of(&c, 1, split, N, b);
            ck_assert_msg(!memcmp(a, b, n), "task %d split %d: heldout_seed set, seeds differ", k, split);
            c.heldout_seed = -1;
        }
    }
    remove(path);
    rmdir(dir);
}
END_TEST

Suite *tasks_suite(void) {
    Suite *s = suite_create("tasks");
    TCase *tc = tcase_create("tasks");
    tcase_add_test(tc, test_fuzzy_recall_format);
    tcase_add_test(tc, test_recall_floors);
    tcase_add_test(tc, test_noisy_recall_format);
    tcase_add_test(tc, test_selective_copy_format);
    tcase_add_test(tc, test_reduce_to_recall);
    tcase_add_test(tc, test_deterministic);
    tcase_add_test(tc, test_held_out_disjoint);
    tcase_add_test(tc, test_sizes_and_errors);
    tcase_add_test(tc, test_query_blank_format);
    tcase_add_test(tc, test_bidirectional_tasks);
    tcase_add_test(tc, test_heldout_seed);
    suite_add_tcase(s, tc);
    return s;
}
