/* The text task in subword tokens (task.tokenizer bpe/unigram, src/tasks/tokenizer_spm.cc):
 * the pieces spell the text exactly, any text (every byte, spaces where the training text had
 * none, characters never seen), the vocabulary comes from the training part alone, long lines
 * included, and is the same every time, bits per byte count the bytes the targets stand for, a
 * run keeps its vocabulary, bound to its model by a digest, and eval, sample, inspect and
 * --resume use it, and bad settings get one line. */
#define _GNU_SOURCE /* memmem */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "tensor/error.h"
#include "autograd/ctx.h"
#include "config/config.h"
#include "nn/model.h"
#include "nn/model_file.h"
#include "probe.h"
#include "suites.h"
#include "tasks/task.h"
#include "testutil.h"
#include "train/train.h"

static char TMP[256];

static void setup(void) { qkv_test_mkdtemp(TMP, sizeof TMP, "tokens"); }
static void teardown(void) { qkv_test_rmtree(TMP); }

/* ---- helpers ------------------------------------------------------------------------------- */

/* name in the scratch directory, holding buf[0, n) */
static void write_bytes(const char *name, const void *buf, size_t n) {
    char path[600];
    snprintf(path, sizeof path, "%s/%s", TMP, name);
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(fwrite(buf, 1, n, f), n);
    ck_assert_int_eq(fclose(f), 0);
}


/* whether t has a piece of 4 bytes or more out of word */
static bool has_piece_of(const qkv_task *t, const char *word) {
    uint8_t piece[QKV_TOKEN_BYTES_MAX];
    for (int id = 0; id < t->vocab; id++) {
        int k = qkv_task_token_bytes(t, id, piece);
        if (k >= 4 && memmem(word, strlen(word), piece, (size_t)k) != NULL) return true;
    }
    return false;
}

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
    write_bytes(name, buf, n);
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


/* s[0, n) encoded by t's tokenizer: its pieces, put together, are s */
static void check_round_trip(const qkv_task *t, const void *s, int64_t n) {
    int32_t *ids;
    int64_t k, at = 0;
    qkv_err e;
    ck_assert_msg(!qkv_task_encode(t, s, n, &ids, &k, &e), "%s", e.msg);
    uint8_t piece[QKV_TOKEN_BYTES_MAX];
    for (int64_t i = 0; i < k; i++) {
        ck_assert(ids[i] >= 0 && ids[i] < t->vocab);
        int b = qkv_task_token_bytes(t, ids[i], piece);
        ck_assert_msg(b > 0 && at + b <= n && !memcmp((const uint8_t *)s + at, piece, (size_t)b),
                      "token %lld (id %d) does not spell byte %lld", (long long)i, ids[i], (long long)at);
        at += b;
    }
    ck_assert_int_eq(at, n);
    free(ids);
}

/* what no training text below holds: every byte alone, spaces (leading, trailing, in runs), a
 * literal U+2581, and characters from scripts never seen */
static void check_any_text(const qkv_task *t) {
    uint8_t all[256];
    for (int b = 0; b < 256; b++) all[b] = (uint8_t)b;
    check_round_trip(t, all, 256);
    for (int b = 0; b < 256; b++) check_round_trip(t, all + b, 1);
    static const char *const S[] = {"a b", " ", "  x  ", " lead", "trail ", "\xe2\x96\x81 \xe2\x96\x81",
                                    "\xd0\xbf\xd1\x80\xd0\xb8 \xd0\xb2\xd0\xb5\xd1\x82", "\xe4\xb8\xad\xe6\x96\x87 \xf0\x9f\x98\x80!",
                                    "tab\there\r\n  next line\n"};
    for (size_t i = 0; i < sizeof S / sizeof S[0]; i++) check_round_trip(t, S[i], (int64_t)strlen(S[i]));
    /* random texts: code points of every plane (surrogates too, which are ill-formed), spaces
     * and random bytes mixed */
    qkv_rng r;
    qkv_rng_seed(&r, 11);
    for (int k = 0; k < 200; k++) {
        uint8_t text[400];
        size_t n = 0;
        while (n + 4 < sizeof text) {
            unsigned cp = (unsigned)qkv_rng_below(&r, 0x110000), kind = (unsigned)qkv_rng_below(&r, 8);
            if (kind == 0) text[n++] = ' ';
            else if (kind == 1) text[n++] = (uint8_t)qkv_rng_below(&r, 256);
            else if (kind == 2) text[n++] = (uint8_t)('a' + qkv_rng_below(&r, 10));
            else if (cp < 0x80) text[n++] = (uint8_t)cp;
            else if (cp < 0x800) text[n++] = (uint8_t)(0xc0 | cp >> 6), text[n++] = (uint8_t)(0x80 | (cp & 63));
            else if (cp < 0x10000)
                text[n++] = (uint8_t)(0xe0 | cp >> 12), text[n++] = (uint8_t)(0x80 | (cp >> 6 & 63)),
                text[n++] = (uint8_t)(0x80 | (cp & 63));
            else
                text[n++] = (uint8_t)(0xf0 | cp >> 18), text[n++] = (uint8_t)(0x80 | (cp >> 12 & 63)),
                text[n++] = (uint8_t)(0x80 | (cp >> 6 & 63)), text[n++] = (uint8_t)(0x80 | (cp & 63));
        }
        check_round_trip(t, text, (int64_t)n);
    }
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
        check_any_text(&t);
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
    ck_assert_msg(has_piece_of(&w, "zyxwvutsrq"), "no piece of the held-out word even when trained on all the text");
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
        qkv_err why;
        qkv_model *m = qkv_model_new(&mc, QKV_F32, 1, &why);
        ck_assert_msg(m != NULL, "%s", why.msg);
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
    /* a text with nothing for the trainer (NULs, newlines, ill-formed UTF-8): the text's fault */
    char nothing[4000];
    for (size_t i = 0; i < sizeof nothing; i++) nothing[i] = "\0\n\xff\xc3"[i % 4];
    write_bytes("nothing.txt", nothing, sizeof nothing);
    c = tokens_config("nothing.txt", QKV_TOKENIZER_BPE, 300);
    ck_assert_int_ne(qkv_task_open(&t, &c, 0, &e), 0);
    qkv_task_close(&t);
    ck_assert_msg(!strncmp(e.msg, "task.path: ", 11) && strstr(e.msg, "no text to train pieces on") &&
                      !strchr(e.msg, '\n'), "%s", e.msg);
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


/* ---- any text: every byte has a piece ------------------------------------------------------ */

/* spaceless words: letters of a small alphabet (so there is something to merge), separated by
 * sep, lines of them; a Chinese-like text instead when cjk: `chars` distinct characters from
 * U+4E00, the frequent ones far more often than the rare */
static size_t spaceless_text(char *buf, size_t cap, int lines, char sep, int chars) {
    qkv_rng r;
    qkv_rng_seed(&r, 9);
    size_t n = 0;
    for (int l = 0; l < lines && n + 200 < cap; l++) {
        for (int w = 0; w < 8; w++) {
            if (chars) { /* a 3-byte character: rank k drawn about as 1/k */
                int k = (int)((double)chars / (1.0 + (double)qkv_rng_below(&r, (uint64_t)chars * 8) / 8.0));
                unsigned cp = 0x4e00u + (unsigned)(k % chars);
                buf[n++] = (char)(0xe0 | cp >> 12), buf[n++] = (char)(0x80 | (cp >> 6 & 63)), buf[n++] = (char)(0x80 | (cp & 63));
                continue;
            }
            int len = 2 + (int)qkv_rng_below(&r, 5);
            for (int i = 0; i < len; i++) buf[n++] = (char)('a' + qkv_rng_below(&r, 10));
            buf[n++] = sep;
        }
        buf[n++] = '\n';
    }
    return n;
}

/* vocabularies trained on text without a single space (tab- or NUL-separated words, or a
 * Chinese-like text with more characters than the pieces can hold) still spell any text: a space,
 * every byte alone, characters never seen; for both of sentencepiece's model types */
START_TEST(test_tokens_every_byte_of_any_text) {
    size_t cap = 1 << 20;
    char *buf = malloc(cap);
    static const struct { const char *name; char sep; int chars; } CORPORA[] = {
        {"tabs.txt", '\t', 0}, {"nuls.txt", 0, 0}, {"cjk.txt", 0, 600}};
    for (size_t c = 0; c < sizeof CORPORA / sizeof CORPORA[0]; c++) {
        size_t n = spaceless_text(buf, cap, 3000, CORPORA[c].sep, CORPORA[c].chars);
        ck_assert_ptr_null(memchr(buf, ' ', n));
        write_bytes(CORPORA[c].name, buf, n);
        for (int kind = QKV_TOKENIZER_BPE; kind <= QKV_TOKENIZER_UNIGRAM; kind++) {
            qkv_task_config cfg = tokens_config(CORPORA[c].name, (qkv_tokenizer_kind)kind, 300);
            qkv_task t;
            qkv_err e;
            ck_assert_msg(!qkv_task_open(&t, &cfg, 0, &e), "%s, %s: %s", CORPORA[c].name, QKV_TOKENIZER_NAMES[kind], e.msg);
            ck_assert_int_eq(t.vocab, 300);
            check_spelled(&t, 0, t.n_ids, 0, t.text_len);
            check_any_text(&t);
            qkv_task_close(&t);
        }
    }
    free(buf);
}
END_TEST

/* Debian's Chinese fortunes (fortunes-zh: few spaces, thousands of characters) in a vocabulary of
 * 400 pieces: every part spelled exactly, and any text too. The file is $QKV_FORTUNES_ZH, or
 * where the package puts it; where it is missing, a counted skip. (Installing the package adds
 * its files to the directory task.corpus fortunes reads, changing that corpus: make deps does
 * not install it.) */
START_TEST(test_tokens_chinese_fortunes) {
    const char *zh = getenv("QKV_FORTUNES_ZH") ? getenv("QKV_FORTUNES_ZH") : "/usr/share/games/fortunes/chinese";
    struct stat st;
    if (stat(zh, &st) || !S_ISREG(st.st_mode)) {
        qkv_test_skip("tokens: Chinese text in 400 pieces", "fortunes-zh is missing (its file chinese; "
                      "QKV_FORTUNES_ZH=FILE names it elsewhere)");
        return;
    }
    qkv_task_config c = tokens_config("", QKV_TOKENIZER_BPE, 400);
    snprintf(c.path, sizeof c.path, "%s", zh);
    qkv_task t;
    qkv_err e;
    ck_assert_msg(!qkv_task_open(&t, &c, 0, &e), "%s", e.msg);
    check_spelled(&t, 0, t.ids_val, 0, t.text_val);
    check_spelled(&t, t.ids_val, t.ids_split, t.text_val, t.text_split - t.text_val);
    check_spelled(&t, t.ids_split, t.n_ids, t.text_split, t.text_len - t.text_split);
    ck_assert_int_lt(t.n_ids, t.text_len * 9 / 10); /* pieces, not bytes */
    check_any_text(&t);
    qkv_task_close(&t);
}
END_TEST

/* a run trained on NUL-separated words (no space anywhere): it records its diagnostics (their
 * sample prompt has a space), and qkv sample continues a prompt of spaces and characters it never
 * saw */
START_TEST(test_tokens_nul_separated_run) {
    size_t cap = 1 << 20;
    char *buf = malloc(cap);
    size_t n = spaceless_text(buf, cap, 3000, 0, 0);
    write_bytes("nuls.txt", buf, n);
    free(buf);
    char out[8192], body[1024], cfg[600];
    snprintf(body, sizeof body, "{\"model\": {\"d_model\": 16, \"heads\": 2, \"layers\": 1, \"d_ff\": 32}, \"task\": "
             "{\"name\": \"text\", \"path\": \"%s/nuls.txt\", \"seq_len\": 16, \"tokenizer\": \"bpe\", \"pieces\": 300}, "
             "\"train\": {\"steps\": 5, \"batch\": 4}}\n", TMP);
    snprintf(cfg, sizeof cfg, "%s/nul.json", TMP);
    qkv_test_write_file(cfg, body);
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, false, "%s train %s --out %s/nul --quiet 2>&1 >/dev/null", qkv_test_bin(),
                         cfg, TMP), 0);
    ck_assert_msg(!strstr(out, "not recorded"), "%s", out);
    ck_assert_int_eq(qkv_test_sh(NULL, 0, false, "test -s %s/nul/observed-start.safetensors", TMP), 0);
    static const char PROMPT[] = "a b \xd0\xbf\xd1\x80\xd0\xb8 \xe4\xb8\xad \xf0\x9f\x98\x80";
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, false, "%s sample %s/nul/config.json --checkpoint %s/nul/model.safetensors "
                         "--prompt '%s' --tokens 8", qkv_test_bin(), TMP, TMP, PROMPT), 0);
    ck_assert_msg(!strncmp(out, PROMPT, strlen(PROMPT)), "%s", out);
}
END_TEST

/* Ctrl-C while a vocabulary trains (a slow one: unigram pieces of 4 MiB of a repetitive text in
 * 64 KiB lines, over ten seconds, refused at its end for want of variety) ends the command at
 * once, by the signal, as an uncaught one would: nothing is saved before the first checkpoint,
 * and sentencepiece reads no stop flag */
START_TEST(test_tokens_ctrl_c_while_the_vocabulary_trains) {
    size_t n = 4 << 20, line = 1 << 16;
    char *buf = malloc(n);
    for (size_t i = 0; i < n; i++) buf[i] = (i + 1) % line == 0 ? '\n' : "abc def "[i % 8];
    write_bytes("rep.txt", buf, n);
    free(buf);
    char out[4096], body[1024], cfg[600];
    snprintf(body, sizeof body, "{\"model\": {\"d_model\": 16, \"heads\": 2, \"layers\": 1, \"d_ff\": 32}, \"task\": "
             "{\"name\": \"text\", \"path\": \"%s/rep.txt\", \"seq_len\": 16, \"tokenizer\": \"unigram\", "
             "\"pieces\": 262}, \"train\": {\"steps\": 5, \"batch\": 4}}\n", TMP);
    snprintf(cfg, sizeof cfg, "%s/rep.json", TMP);
    qkv_test_write_file(cfg, body);
    /* the status of a train sent SIGINT a second in (a bound of 60 s: 124 were it not stopped) */
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, true, "timeout 60 %s train %s --out %s/rep --quiet & p=$!; sleep 1; "
                                 "kill -INT $p; wait $p; echo \"status $?\"", qkv_test_bin(), cfg, TMP), 0);
    ck_assert_msg(strstr(out, "status 130"), "not ended by its SIGINT: %s", out);
    ck_assert_int_ne(qkv_test_sh(NULL, 0, false, "test -e %s/rep/checkpoint.safetensors", TMP), 0);
}
END_TEST

/* ---- long lines ----------------------------------------------------------------------------- */

/* `count` words of ws, separated by spaces, as one line into buf; its length */
static size_t long_line(char *buf, size_t count, const char *const *ws, int nw, qkv_rng *r) {
    size_t n = 0;
    for (size_t i = 0; i < count; i++) {
        const char *w = ws[qkv_rng_below(r, (uint64_t)nw)];
        if (i) buf[n++] = ' ';
        memcpy(buf + n, w, strlen(w));
        n += strlen(w);
    }
    return n;
}

/* lines longer than sentencepiece's trainer is given (4192 bytes) are cut into chunks for the
 * vocabulary's training, not left out: a corpus of only such lines gets its vocabulary, and a
 * word found only in one such line among short ones gets pieces of its own */
START_TEST(test_tokens_long_lines) {
    static const char *const A[] = {"alpha", "beta", "gamma", "delta", "epsilon"}, *const Z[] = {"zyxwvutsrq"};
    size_t cap = 3 << 20;
    char *buf = malloc(cap);
    qkv_rng r;
    qkv_rng_seed(&r, 3);
    /* two lines of about 1.1 MiB, the first longer: the training part (half) is a part of it,
     * over 1 MiB, hundreds of chunks */
    size_t n = long_line(buf, 200000, A, 5, &r);
    buf[n++] = '\n';
    size_t first = n;
    n += long_line(buf + n, 180000, A, 5, &r);
    write_bytes("long.txt", buf, n);
    qkv_task_config c = tokens_config("long.txt", QKV_TOKENIZER_BPE, 300);
    c.eval_fraction = 0.5, c.val_fraction = 0;
    qkv_task t;
    qkv_err e;
    ck_assert_msg(!qkv_task_open(&t, &c, 0, &e), "%s", e.msg);
    ck_assert_int_lt(t.text_val, (int64_t)first);
    ck_assert_int_gt(t.text_val, 1 << 20);
    check_spelled(&t, 0, t.n_ids, 0, t.text_len);
    ck_assert_int_lt(t.n_ids, t.text_len / 3); /* the words became pieces */
    qkv_task_close(&t);
    /* short lines of A's words, and in the middle of the training part one long line of a word
     * found nowhere else */
    n = 0;
    for (int l = 0; l < 4000; l++) {
        n += long_line(buf + n, 1 + qkv_rng_below(&r, 10), A, 5, &r);
        buf[n++] = '\n';
        if (l == 1000) {
            n += long_line(buf + n, 100000, Z, 1, &r);
            buf[n++] = '\n';
        }
    }
    write_bytes("mixed.txt", buf, n);
    free(buf);
    c = tokens_config("mixed.txt", QKV_TOKENIZER_BPE, 300);
    ck_assert_msg(!qkv_task_open(&t, &c, 0, &e), "%s", e.msg);
    ck_assert_msg(has_piece_of(&t, "zyxwvutsrq"), "no piece of the long line's word: the line was left out of the vocabulary's training");
    qkv_task_close(&t);
}
END_TEST

/* ---- the vocabulary is bound to the model ---------------------------------------------------- */

/* DIR/FILE's SHA-256 (sha256sum's), into hex */
static void sha256_of(const char *file, char hex[65]) {
    char out[256];
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, false, "sha256sum %s/%s", TMP, file), 0);
    ck_assert(strlen(out) > 64);
    memcpy(hex, out, 64);
    hex[64] = 0;
}

/* each reader of run DIR (eval, sample, --resume with and without --force, inspect) refuses its
 * tokenizer.model, in one line naming it and both digests, and writes nothing */
static void check_refused(const char *dir, const char *kept, const char *trained) {
    char out[8192];
    ck_assert_int_eq(qkv_test_sh(NULL, 0, false, "cd %s && cp %s/config.json cfg.keep && cp %s/metrics.jsonl metrics.keep && "
                         "cp %s/checkpoint.safetensors ck.keep", TMP, dir, dir, dir), 0);
    static const char *const CMDS[] = {"eval %s/config.json --checkpoint %s/model.safetensors",
                                       "sample %s/config.json --checkpoint %s/model.safetensors --prompt 'the '",
                                       "train --resume %s --steps 30 --quiet", "train --resume %s --steps 30 --force --quiet",
                                       "inspect %s"};
    char run[600];
    snprintf(run, sizeof run, "%s/%s", TMP, dir);
    for (size_t i = 0; i < sizeof CMDS / sizeof CMDS[0]; i++) {
        char cmd[1600];
        snprintf(cmd, sizeof cmd, CMDS[i], run, run);
        ck_assert_int_eq(qkv_test_sh(out, sizeof out, false, "%s %s 2>&1 >/dev/null", qkv_test_bin(), cmd), 1);
        ck_assert_msg(strstr(out, "/tokenizer.model: sha256 ") && strstr(out, kept) && strstr(out, trained) &&
                          strchr(out, '\n') == out + strlen(out) - 1, "%s: %s", cmd, out);
    }
    ck_assert_int_eq(qkv_test_sh(NULL, 0, false, "cd %s && cmp cfg.keep %s/config.json && cmp metrics.keep %s/metrics.jsonl && "
                         "cmp ck.keep %s/checkpoint.safetensors && test ! -e %s/summary.json.tmp", TMP, dir, dir, dir, dir), 0);
}

/* a token run's model files record its vocabulary's digest: another run's tokenizer.model of as
 * many pieces, or the run's own with one piece edited, is refused by everything that reads the
 * run; a run made with task.tokenizer_path reads its kept copy, so the external file may go away
 * or change; a model file without the record (an older qkv's) is taken with the kept copy */
START_TEST(test_tokens_vocabulary_bound_to_model) {
    write_text("t.txt", 3000);
    char out[8192], cfg[600];
    snprintf(cfg, sizeof cfg, "%s/tok.json", TMP);
    char body[1024];
    snprintf(body, sizeof body,
             "{\"model\": {\"d_model\": 16, \"heads\": 2, \"layers\": 1, \"d_ff\": 32},\n"
             " \"task\": {\"name\": \"text\", \"path\": \"%s/t.txt\", \"seq_len\": 16, \"tokenizer\": \"bpe\","
             " \"pieces\": 300},\n"
             " \"train\": {\"steps\": 20, \"batch\": 8, \"eval_every\": 10, \"eval_examples\": 32}}\n", TMP);
    qkv_test_write_file(cfg, body);
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, false, "%s train %s --out %s/a --threads 1 --quiet", qkv_test_bin(), cfg, TMP), 0);
    double loss = qkv_test_json_num(out, "eval_loss");
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, false, "%s train %s --out %s/u --set task.tokenizer=unigram --quiet",
                         qkv_test_bin(), cfg, TMP), 0);
    char a[65], u[65], x[65];
    sha256_of("a/tokenizer.model", a);
    sha256_of("u/tokenizer.model", u);
    ck_assert_str_ne(a, u);
    /* another run's vocabulary of as many pieces */
    ck_assert_int_eq(qkv_test_sh(NULL, 0, false, "cp %s/a/tokenizer.model %s/a.model && cp %s/u/tokenizer.model %s/a/tokenizer.model",
                         TMP, TMP, TMP, TMP), 0);
    check_refused("a", u, a);
    /* the run's own with one piece edited: a byte of its longest piece, in the model's bytes */
    qkv_task t;
    qkv_err e;
    qkv_task_config tc = tokens_config("t.txt", QKV_TOKENIZER_BPE, 300);
    snprintf(tc.tokenizer_path, sizeof tc.tokenizer_path, "%s/a.model", TMP);
    ck_assert_msg(!qkv_task_open(&t, &tc, 0, &e), "%s", e.msg);
    uint8_t piece[QKV_TOKEN_BYTES_MAX], best[QKV_TOKEN_BYTES_MAX];
    int best_len = 0;
    for (int id = 0; id < t.vocab; id++) {
        int k = qkv_task_token_bytes(&t, id, piece);
        bool letters = true;
        for (int i = 0; i < k; i++) letters = letters && piece[i] >= 'a' && piece[i] <= 'z';
        if (letters && k > best_len) memcpy(best, piece, (size_t)(best_len = k));
    }
    ck_assert_int_ge(best_len, 3);
    char *m = malloc(t.tokenizer_model_len);
    memcpy(m, t.tokenizer_model, t.tokenizer_model_len);
    char *at = memmem(m, t.tokenizer_model_len, best, (size_t)best_len);
    ck_assert_ptr_nonnull(at);
    at[1] = 'Q'; /* "ion" -> "iQn": no such piece, so still a valid model */
    write_bytes("a/tokenizer.model", m, t.tokenizer_model_len);
    free(m);
    qkv_task_close(&t);
    sha256_of("a/tokenizer.model", x);
    tc.tokenizer_path[0] = 0;
    snprintf(tc.tokenizer_path, sizeof tc.tokenizer_path, "%s/a/tokenizer.model", TMP);
    ck_assert_msg(!qkv_task_open(&t, &tc, 0, &e), "the edited model must load: %s", e.msg);
    qkv_task_close(&t);
    check_refused("a", x, a);
    /* its own again: eval reproduces the run's loss */
    ck_assert_int_eq(qkv_test_sh(NULL, 0, false, "cp %s/a.model %s/a/tokenizer.model", TMP, TMP), 0);
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, false, "%s eval %s/a/config.json --checkpoint %s/a/model.safetensors "
                         "--threads 1", qkv_test_bin(), TMP, TMP), 0);
    ck_assert(qkv_test_json_num(out, "loss") == loss);

    /* task.tokenizer_path: the run reads its kept copy; the external file deleted, or replaced by
     * another vocabulary, changes nothing */
    ck_assert_int_eq(qkv_test_sh(NULL, 0, false, "cp %s/a.model %s/ext.model", TMP, TMP), 0);
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, false, "%s train %s --out %s/p --set task.tokenizer_path=%s/ext.model "
                         "--threads 1 --quiet", qkv_test_bin(), cfg, TMP, TMP), 0);
    double ploss = qkv_test_json_num(out, "eval_loss");
    for (int round = 0; round < 2; round++) {
        ck_assert_int_eq(qkv_test_sh(NULL, 0, false, round ? "cp %s/u/tokenizer.model %s/ext.model" : "rm %s/ext.model",
                             TMP, TMP), 0);
        ck_assert_int_eq(qkv_test_sh(out, sizeof out, true, "%s eval %s/p/config.json --checkpoint %s/p/model.safetensors "
                             "--threads 1", qkv_test_bin(), TMP, TMP), 0);
        ck_assert_msg(qkv_test_json_num(out, "loss") == ploss, "%s", out);
        ck_assert_int_eq(qkv_test_sh(out, sizeof out, true, "%s sample %s/p/config.json --checkpoint %s/p/model.safetensors "
                             "--prompt 'the ' --tokens 4", qkv_test_bin(), TMP, TMP), 0);
        ck_assert_int_eq(qkv_test_sh(out, sizeof out, true, "%s inspect %s/p", qkv_test_bin(), TMP), 0);
    }
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, true, "%s train --resume %s/p --steps 30 --quiet", qkv_test_bin(), TMP), 0);
    /* without the kept copy, the config's vocabulary must be the recorded one: another is
     * refused, naming it; the right one is used, and --resume keeps it again */
    ck_assert_int_eq(qkv_test_sh(NULL, 0, false, "rm %s/p/tokenizer.model", TMP), 0);
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, false, "%s eval %s/p/config.json --checkpoint %s/p/model.safetensors 2>&1",
                         qkv_test_bin(), TMP, TMP), 1);
    ck_assert_msg(strstr(out, "/ext.model: sha256 ") && strstr(out, u) && strstr(out, a), "%s", out);
    ck_assert_int_eq(qkv_test_sh(NULL, 0, false, "cp %s/a.model %s/ext.model", TMP, TMP), 0);
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, true, "%s train --resume %s/p --steps 40 --quiet", qkv_test_bin(), TMP), 0);
    ck_assert_int_eq(qkv_test_sh(NULL, 0, false, "cmp %s/a.model %s/p/tokenizer.model", TMP, TMP), 0);

    /* a model file without the record, as an older qkv wrote it: taken, with the kept copy */
    char model[600];
    snprintf(model, sizeof model, "%s/a/model.safetensors", TMP);
    qkv_config rc;
    ck_assert_int_eq(qkv_config_of_model_file(model, &rc, &e), 1);
    qkv_err why;
    qkv_model *mm = qkv_model_new(&rc.model, QKV_F32, 0, &why);
    ck_assert_msg(mm && !qkv_load_model(mm, model, &why), "%s", why.msg);
    char *json = qkv_config_to_json(&rc);
    ck_assert_msg(!qkv_save_model(mm, model, json, 20, &why), "%s", why.msg);
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, false, "%s eval %s/a/config.json --checkpoint %s "
                         "--threads 1", qkv_test_bin(), TMP, model), 0);
    ck_assert(qkv_test_json_num(out, "loss") == loss);
    /* a record that is not one (a digest with a line break, one without its kind, or its kind
     * and pieces without their digest) is a damaged file, said in one line, its values not shown */
    static const char *const DAMAGED[][6] = {
        {"qkv_tokenizer", "bpe", "qkv_tokenizer_pieces", "300", "qkv_tokenizer_sha256", "x\nsecond line"},
        {"qkv_tokenizer_pieces", "300", "qkv_tokenizer_sha256", "00", "qkv_x", "y"},
        {"qkv_tokenizer", "bpe", "qkv_tokenizer_pieces", "300", "qkv_x", "y"}};
    static const char *const SAID[] = {"metadata qkv_tokenizer_sha256 is malformed",
                                       "metadata qkv_tokenizer is missing beside qkv_tokenizer_sha256",
                                       "metadata qkv_tokenizer_sha256 is missing beside qkv_tokenizer"};
    for (int i = 0; i < 3; i++) {
        ck_assert_msg(!qkv_save_model_meta(mm, model, json, 20, DAMAGED[i], 3, &why), "%s", why.msg);
        ck_assert_int_eq(qkv_test_sh(out, sizeof out, false, "%s eval %s/a/config.json --checkpoint %s 2>&1",
                             qkv_test_bin(), TMP, model), 1);
        ck_assert_msg(strstr(out, SAID[i]) && strchr(out, '\n') == out + strlen(out) - 1, "%s", out);
    }
    free(json);
    qkv_model_free(mm);
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
    tcase_add_test(tc, test_tokens_every_byte_of_any_text);
    tcase_add_test(tc, test_tokens_chinese_fortunes);
    tcase_add_test(tc, test_tokens_nul_separated_run);
    tcase_add_test(tc, test_tokens_long_lines);
    tcase_add_test(tc, test_tokens_ctrl_c_while_the_vocabulary_trains);
    tcase_add_test(tc, test_tokens_vocabulary_bound_to_model);
    suite_add_tcase(s, tc);
    return s;
}
