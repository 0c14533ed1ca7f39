/* The text task in subword tokens (task.tokenizer bpe/unigram, src/tasks/tokenizer_spm.cc):
 * the pieces spell the text exactly, the vocabulary comes from the training part alone and is
 * the same every time, bits per byte count the bytes the targets stand for, a run keeps its
 * vocabulary and eval, sample and --resume use it, and bad settings get one line. */
#define _GNU_SOURCE /* memmem */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "app/error.h"
#include "autograd/ctx.h"
#include "nn/model.h"
#include "suites.h"
#include "tasks/task.h"
#include "testutil.h"
#include "train/train.h"

static char TMP[256];

static void setup(void) { qkv_test_mkdtemp(TMP, sizeof TMP, "tokens"); }
static void teardown(void) { qkv_test_rmtree(TMP); }

/* ---- helpers ------------------------------------------------------------------------------- */

/* a text with what a tokenizer could lose or change: runs of spaces, a tab, a carriage return,
 * UTF-8, an ill-formed byte, a NUL, a literal U+2581 (sentencepiece's space mark), blank lines;
 * words that repeat (so there is something to merge); and in its last tenth, the evaluation
 * part, a word that occurs nowhere else, many times */
static size_t write_text(const char *name, int lines) {
    static const char *const W[] = {"the", "of", "attention", "query", "key", "value", "projection", "head",
                                    "and", "a", "model", "learns", "to", "copy", "tokens", "caf\xc3\xa9",
                                    "  two  spaces", "\ttab", "cr\r", "bad\xff" "byte", "nul\x01", "mark\xe2\x96\x81"};
    size_t cap = (size_t)lines * 200 + 64, n = 0;
    char *buf = malloc(cap);
    qkv_rng r;
    qkv_rng_seed(&r, 5);
    for (int l = 0; l < lines; l++) {
        bool tail = l >= lines - lines / 10;
        int words = 1 + (int)qkv_rng_below(&r, 12);
        for (int w = 0; w < words; w++) {
            const char *s = tail && w % 2 ? "zyxwvutsrq" : W[qkv_rng_below(&r, sizeof W / sizeof W[0])];
            n += (size_t)snprintf(buf + n, cap - n, "%s%s", w ? " " : "", s);
        }
        if (l % 7 == 3) buf[n++] = 0; /* a NUL now and then */
        buf[n++] = '\n';
        if (l % 11 == 5) buf[n++] = '\n'; /* a blank line */
    }
    char path[600];
    snprintf(path, sizeof path, "%s/%s", TMP, name);
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(fwrite(buf, 1, n, f), n);
    ck_assert_int_eq(fclose(f), 0);
    free(buf);
    return n;
}

static qkv_task_config tokens_config(const char *name, qkv_tokenizer_kind kind, int pieces) {
    qkv_task_config c = qkv_task_config_default();
    c.kind = QKV_TASK_TEXT;
    c.seq_len = 16;
    c.tokenizer = kind;
    c.pieces = pieces;
    snprintf(c.path, sizeof c.path, "%s/%s", TMP, name);
    return c;
}

/* the pieces of ids[lo, hi), put together, are text[from, from + len) */
static void check_spelled(const qkv_task *t, int64_t lo, int64_t hi, int64_t from, int64_t len) {
    int64_t at = from;
    uint8_t piece[QKV_TOKEN_BYTES_MAX];
    for (int64_t i = lo; i < hi; i++) {
        ck_assert(t->ids[i] >= 0 && t->ids[i] < t->vocab);
        int k = qkv_task_token_bytes(t, t->ids[i], piece);
        ck_assert_int_gt(k, 0);
        ck_assert_int_eq(k, qkv_task_target_bytes(t, t->ids[i]));
        ck_assert_msg(at + k <= from + len && !memcmp(t->text + at, piece, (size_t)k),
                      "token %lld (id %d) does not spell byte %lld", (long long)i, t->ids[i], (long long)at);
        at += k;
    }
    ck_assert_int_eq(at, from + len);
}

/* ---- the pieces ---------------------------------------------------------------------------- */

/* every part's pieces spell that part byte for byte, whatever the bytes (spaces, tabs, CR, NUL,
 * ill-formed UTF-8, U+2581), for both of sentencepiece's model types; the vocabulary has
 * task.pieces pieces and is what the model's vocab becomes */
START_TEST(test_tokens_spell_the_text) {
    write_text("t.txt", 3000);
    for (int kind = QKV_TOKENIZER_BPE; kind <= QKV_TOKENIZER_UNIGRAM; kind++) {
        qkv_task_config c = tokens_config("t.txt", (qkv_tokenizer_kind)kind, 300);
        qkv_task t;
        qkv_err e;
        ck_assert_msg(!qkv_task_open(&t, &c, 0, &e), "%s", e.msg);
        ck_assert_int_eq(t.vocab, 300);
        ck_assert_int_gt(t.ids_val, 0);
        ck_assert_int_gt(t.ids_split, t.ids_val);
        ck_assert_int_gt(t.n_ids, t.ids_split);
        check_spelled(&t, 0, t.ids_val, 0, t.text_val);
        check_spelled(&t, t.ids_val, t.ids_split, t.text_val, t.text_split - t.text_val);
        check_spelled(&t, t.ids_split, t.n_ids, t.text_split, t.text_len - t.text_split);
        /* subword pieces: fewer tokens than bytes */
        ck_assert_int_lt(t.n_ids, t.text_len * 9 / 10);
        /* examples are windows of ids, targets the next token */
        qkv_batch b;
        ck_assert_int_eq(qkv_batch_alloc(&b, &t, 4), 0);
        qkv_task_split_batch(&t, QKV_SPLIT_EVAL, &b, 0, 4);
        for (int i = 0; i < 4 * t.seq_len; i++) ck_assert(b.tok[i] >= 0 && b.tok[i] < 300);
        for (int r = 0; r < 4; r++)
            for (int i = 0; i + 1 < t.seq_len; i++) ck_assert_int_eq(b.tgt[r * t.seq_len + i], b.tok[r * t.seq_len + i + 1]);
        qkv_batch_free(&b);
        qkv_task_close(&t);
    }
}
END_TEST

/* the vocabulary is trained on the training part alone: every piece longer than a byte occurs
 * in the training bytes, though a word of the evaluation part alone ("zyxwvutsrq", hundreds of
 * times there) would make pieces of its own if the held-out text were read; and the same text
 * gives the same vocabulary and the same ids, byte for byte */
START_TEST(test_tokens_training_part_only_and_deterministic) {
    write_text("t.txt", 3000);
    qkv_task_config c = tokens_config("t.txt", QKV_TOKENIZER_BPE, 400);
    qkv_task a, b;
    qkv_err e;
    ck_assert_msg(!qkv_task_open(&a, &c, 0, &e), "%s", e.msg);
    ck_assert_msg(!qkv_task_open(&b, &c, 7, &e), "%s", e.msg);
    ck_assert_int_eq(a.tokenizer_model_len, b.tokenizer_model_len);
    ck_assert(!memcmp(a.tokenizer_model, b.tokenizer_model, a.tokenizer_model_len));
    ck_assert_int_eq(a.n_ids, b.n_ids);
    ck_assert(!memcmp(a.ids, b.ids, (size_t)a.n_ids * sizeof *a.ids));
    uint8_t piece[QKV_TOKEN_BYTES_MAX];
    int longer = 0;
    for (int id = 0; id < a.vocab; id++) {
        int k = qkv_task_token_bytes(&a, id, piece);
        if (k < 2) continue;
        longer++;
        ck_assert_msg(memmem(a.text, (size_t)a.text_val, piece, (size_t)k) != NULL,
                      "piece %d \"%.*s\" is not in the training part", id, k, (const char *)piece);
    }
    ck_assert_int_gt(longer, 50);
    /* the held-out word is there to be learned: trained on everything, a piece of it appears */
    qkv_task_config all = c;
    all.eval_fraction = 0.001, all.val_fraction = 0;
    all.seq_len = 2;
    qkv_task w;
    ck_assert_msg(!qkv_task_open(&w, &all, 0, &e), "%s", e.msg);
    bool held_piece = false;
    for (int id = 0; id < w.vocab && !held_piece; id++) {
        int k = qkv_task_token_bytes(&w, id, piece);
        held_piece = k >= 4 && memmem("zyxwvutsrq", 10, piece, (size_t)k) != NULL;
    }
    ck_assert_msg(held_piece, "no piece of the held-out word even when trained on all the text");
    qkv_task_close(&w);
    qkv_task_close(&a);
    qkv_task_close(&b);
}
END_TEST

/* ---- bits per byte ------------------------------------------------------------------------- */

/* an evaluation counts the bytes its targets stand for, and its bits per byte are the summed
 * loss over them: with pieces, loss x positions / ln 2 / bytes; with bytes, loss / ln 2 exactly */
START_TEST(test_tokens_bits_per_byte) {
    write_text("t.txt", 3000);
    for (int kind = QKV_TOKENIZER_BYTES; kind <= QKV_TOKENIZER_BPE; kind++) {
        qkv_task_config c = tokens_config("t.txt", (qkv_tokenizer_kind)kind, 300);
        qkv_task t;
        qkv_err e;
        ck_assert_msg(!qkv_task_open(&t, &c, 0, &e), "%s", e.msg);
        qkv_model_config mc = qkv_test_small_model();
        mc.vocab = mc.seq_len = 0; /* the task's */
        ck_assert_msg(!qkv_task_fit_model(&t, &mc, &e), "%s", e.msg);
        char why[512];
        qkv_model *m = qkv_model_new(&mc, QKV_F32, 1, why, sizeof why);
        ck_assert_msg(m != NULL, "%s", why);
        qkv_ctx *ctx = qkv_ctx_new();
        qkv_eval_result r;
        ck_assert_int_eq(qkv_evaluate(ctx, m, &t, 24, 8, &r, &e), 0);
        /* the bytes of the same examples, counted here */
        qkv_batch b;
        ck_assert_int_eq(qkv_batch_alloc(&b, &t, 8), 0);
        int64_t bytes = 0;
        for (int first = 0; first < 24; first += 8) {
            qkv_task_split_batch(&t, QKV_SPLIT_EVAL, &b, first, 24);
            for (int i = 0; i < 8 * t.seq_len; i++)
                if (b.tgt[i] != QKV_IGNORE) bytes += qkv_task_target_bytes(&t, b.tgt[i]);
        }
        qkv_batch_free(&b);
        ck_assert_int_eq(r.bytes, bytes);
        if (kind == QKV_TOKENIZER_BYTES) {
            ck_assert_int_eq(r.bytes, r.positions);
            ck_assert(r.bpb == r.loss / QKV_LN2);
        } else {
            ck_assert_int_gt(r.bytes, r.positions); /* more than a byte per token */
            ck_assert_double_eq_tol(r.bpb, r.loss * (double)r.positions / QKV_LN2 / (double)r.bytes, 1e-12 * r.bpb);
        }
        qkv_ctx_free(ctx);
        qkv_model_free(m);
        qkv_task_close(&t);
    }
}
END_TEST

/* ---- bad settings: one line each ----------------------------------------------------------- */

START_TEST(test_tokens_refusals) {
    write_text("t.txt", 400);
    qkv_task t;
    qkv_err e;
    /* more pieces than the training text can make */
    qkv_task_config c = tokens_config("t.txt", QKV_TOKENIZER_BPE, 60000);
    ck_assert_int_ne(qkv_task_open(&t, &c, 0, &e), 0);
    qkv_task_close(&t);
    ck_assert_int_eq(e.code, QKV_ERR_FAIL);
    ck_assert_msg(!strncmp(e.msg, "task.pieces: ", 13) && !strchr(e.msg, '\n'), "%s", e.msg);
    /* a tokenizer_path that is not a sentencepiece model */
    c = tokens_config("t.txt", QKV_TOKENIZER_BPE, 300);
    snprintf(c.tokenizer_path, sizeof c.tokenizer_path, "%s/t.txt", TMP);
    ck_assert_int_ne(qkv_task_open(&t, &c, 0, &e), 0);
    qkv_task_close(&t);
    ck_assert_msg(strstr(e.msg, "task.tokenizer_path: ") == e.msg && strstr(e.msg, "not a sentencepiece model") &&
                      !strchr(e.msg, '\n'), "%s", e.msg);
    /* a model of another size than task.pieces */
    c.tokenizer_path[0] = 0;
    ck_assert_msg(!qkv_task_open(&t, &c, 0, &e), "%s", e.msg);
    char model[600];
    snprintf(model, sizeof model, "%s/m.model", TMP);
    FILE *f = fopen(model, "wb");
    ck_assert_int_eq(fwrite(t.tokenizer_model, 1, t.tokenizer_model_len, f), t.tokenizer_model_len);
    fclose(f);
    qkv_task_close(&t);
    c.pieces = 320;
    snprintf(c.tokenizer_path, sizeof c.tokenizer_path, "%s", model);
    ck_assert_int_ne(qkv_task_open(&t, &c, 0, &e), 0);
    qkv_task_close(&t);
    ck_assert_msg(strstr(e.msg, "has 300 pieces, but task.pieces is 320"), "%s", e.msg);
    /* the same model with its own size: the ids are the ones a trained vocabulary gives */
    c.pieces = 300;
    qkv_task u;
    ck_assert_msg(!qkv_task_open(&u, &c, 0, &e), "%s", e.msg);
    qkv_task_close(&u);
    /* the commands: pieces for a task whose tokens are given, a path without pieces, an unknown
     * tokenizer, pieces out of range; exit 2 and one line naming the key */
    char out[4096];
    static const char *const BAD[][2] = {
        {"\"name\": \"recall\", \"tokenizer\": \"bpe\"", "task.tokenizer: bpe pieces are for the text task"},
        {"\"name\": \"text\", \"path\": \"T/t.txt\", \"tokenizer_path\": \"T/m.model\"", "task.tokenizer_path: "},
        {"\"name\": \"text\", \"path\": \"T/t.txt\", \"tokenizer\": \"wordpiece\"", "task.tokenizer"},
        {"\"name\": \"text\", \"path\": \"T/t.txt\", \"tokenizer\": \"bpe\", \"pieces\": 100", "task.pieces"},
    };
    for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++) {
        char task[512], body[1024];
        const char *s = BAD[i][0];
        size_t n = 0;
        for (; *s && n + 300 < sizeof task; s++) /* T: the scratch directory */
            n += (size_t)(*s == 'T' && s[1] == '/' ? snprintf(task + n, sizeof task - n, "%s", TMP)
                                                   : snprintf(task + n, sizeof task - n, "%c", *s));
        snprintf(body, sizeof body, "{\"task\": {%s}, \"train\": {\"steps\": 1}}\n", task);
        char cfg[600];
        snprintf(cfg, sizeof cfg, "%s/bad%zu.json", TMP, i);
        qkv_test_write_file(cfg, body);
        ck_assert_int_eq(qkv_test_sh(out, sizeof out, false, "%s train %s --out %s/bad --quiet 2>&1", qkv_test_bin(), cfg, TMP), 2);
        ck_assert_msg(strstr(out, BAD[i][1]) && strchr(out, '\n') == out + strlen(out) - 1, "row %zu: %s", i, out);
        struct stat st;
        ck_assert_int_ne(stat(TMP, &st), -1);
    }
}
END_TEST

/* ---- a run keeps its vocabulary -------------------------------------------------------------- */

/* qkv train writes tokenizer.model; qkv eval reports the run's bits per byte with it; qkv sample
 * encodes the prompt and prints the pieces' bytes; --resume continues with it. That they read
 * the kept file, not a vocabulary trained again, shows when it is damaged: each then fails,
 * naming it */
START_TEST(test_tokens_run_keeps_vocabulary) {
    write_text("t.txt", 3000);
    char body[1024], out[8192], sum[4096];
    snprintf(body, sizeof body,
             "{\"model\": {\"d_model\": 16, \"heads\": 2, \"layers\": 1, \"d_ff\": 32},\n"
             " \"task\": {\"name\": \"text\", \"path\": \"%s/t.txt\", \"seq_len\": 16, \"tokenizer\": \"bpe\","
             " \"pieces\": 300},\n"
             " \"train\": {\"steps\": 20, \"batch\": 8, \"eval_every\": 10, \"eval_examples\": 32}}\n", TMP);
    char cfg[600];
    snprintf(cfg, sizeof cfg, "%s/tok.json", TMP);
    qkv_test_write_file(cfg, body);
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, false, "%s train %s --out %s/run --threads 1 --quiet", qkv_test_bin(), cfg, TMP), 0);
    ck_assert_int_eq(qkv_test_sh(sum, sizeof sum, false, "cat %s/run/summary.json", TMP), 0);
    double bpb = qkv_test_json_num(sum, "eval_bpb"), loss = qkv_test_json_num(sum, "eval_loss");
    ck_assert(bpb < loss / log(2)); /* bits per byte, not per token */
    /* how the text was read, for results.json: the tokenizer, its pieces, the held-out bytes per token */
    ck_assert_msg(strstr(sum, "\"tokenizer\":\"bpe\",\"pieces\":300,"), "%s", sum);
    double bpt = qkv_test_json_num(sum, "bytes_per_token");
    ck_assert_msg(bpt > 1 && bpt < 16, "bytes_per_token %g: pieces hold more than a byte each", bpt);
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, false, "test -s %s/run/tokenizer.model", TMP), 0);
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, false, "%s eval %s/run/config.json --checkpoint %s/run/model.safetensors --threads 1",
                         qkv_test_bin(), TMP, TMP), 0);
    ck_assert_double_eq_tol(qkv_test_json_num(out, "bpb"), bpb, 1e-6 * bpb);
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, false, "%s sample %s/run/config.json --checkpoint %s/run/model.safetensors "
                         "--prompt 'the query ' --tokens 12 --seed 3", qkv_test_bin(), TMP, TMP), 0);
    ck_assert_msg(!strncmp(out, "the query ", 10), "%s", out);
    /* a damaged vocabulary: eval, sample and --resume name it */
    ck_assert_int_eq(qkv_test_sh(NULL, 0, false, "cp %s/run/tokenizer.model %s/keep.model && echo junk > %s/run/tokenizer.model", TMP,
                         TMP, TMP), 0);
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, false, "%s eval %s/run/config.json --checkpoint %s/run/model.safetensors 2>&1",
                         qkv_test_bin(), TMP, TMP), 1);
    ck_assert_msg(strstr(out, "tokenizer.model") && strstr(out, "not a sentencepiece model"), "%s", out);
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, false, "%s sample %s/run/config.json --checkpoint %s/run/model.safetensors 2>&1",
                         qkv_test_bin(), TMP, TMP), 1);
    ck_assert_msg(strstr(out, "not a sentencepiece model"), "%s", out);
    ck_assert_int_ne(qkv_test_sh(out, sizeof out, false, "%s train --resume %s/run --steps 30 --quiet 2>&1", qkv_test_bin(), TMP), 0);
    ck_assert_msg(strstr(out, "not a sentencepiece model"), "%s", out);
    ck_assert_int_eq(qkv_test_sh(NULL, 0, false, "cp %s/keep.model %s/run/tokenizer.model", TMP, TMP), 0);
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, false, "%s train --resume %s/run --steps 30 --quiet --threads 1", qkv_test_bin(), TMP),
                     0);
    /* resumed to 30 steps: the same bits as a run of 30 steps at once */
    ck_assert_int_eq(qkv_test_sh(NULL, 0, false, "sed 's/\"steps\": 20/\"steps\": 30/' %s > %s/tok30.json", cfg, TMP), 0);
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, false, "%s train %s/tok30.json --out %s/run30 --threads 1 --quiet", qkv_test_bin(), TMP,
                         TMP), 0);
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, false, "cmp %s/run/model.safetensors %s/run30/model.safetensors && "
                         "cmp %s/run/tokenizer.model %s/run30/tokenizer.model", TMP, TMP, TMP, TMP), 0);
}
END_TEST

Suite *tokens_suite(void) {
    Suite *s = suite_create("tokens");
    TCase *tc = tcase_create("tokens");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_tokens_spell_the_text);
    tcase_add_test(tc, test_tokens_training_part_only_and_deterministic);
    tcase_add_test(tc, test_tokens_bits_per_byte);
    tcase_add_test(tc, test_tokens_refusals);
    tcase_add_test(tc, test_tokens_run_keeps_vocabulary);
    suite_add_tcase(s, tc);
    return s;
}
