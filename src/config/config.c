/* qkv run configuration: one table of keys drives defaults, JSON parsing, --set overrides,
 * range checks, the effective-config JSON and the key list (docs/config.md mirrors it).
 *
 * Parsing is strict. The text is read by the strict JSON reader (io/json.h: exact
 * line:column and a hint for the usual mistakes, then cJSON's tree), and the tree is
 * walked against the table: unknown keys (with the closest valid key), duplicate keys,
 * wrong types and out-of-range values are errors. Every error is one line naming the
 * label (file path or "--set"), the full key path and what was expected. */
#include "config/config.h"
#include "io/utf8.h"
#include "config/config_json.h"
#include "io/fileio.h"
#include "io/json.h"
#include "io/strbuf.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* enum fields are read and written as int */
_Static_assert(sizeof(qkv_attn_qkv) == sizeof(int), "enum size");
_Static_assert(sizeof(qkv_attn_scale) == sizeof(int), "enum size");
_Static_assert(sizeof(qkv_attn_gate) == sizeof(int), "enum size");
_Static_assert(sizeof(qkv_self_mask_rule) == sizeof(int), "enum size");
_Static_assert(sizeof(qkv_init_scheme) == sizeof(int), "enum size");
_Static_assert(sizeof(qkv_activation) == sizeof(int), "enum size");
_Static_assert(sizeof(qkv_task_kind) == sizeof(int), "enum size");
_Static_assert(sizeof(qkv_text_corpus) == sizeof(int), "enum size");
_Static_assert(sizeof(qkv_tokenizer_kind) == sizeof(int), "enum size");
_Static_assert(sizeof(qkv_optim_kind) == sizeof(int), "enum size");
_Static_assert(sizeof(qkv_schedule_kind) == sizeof(int), "enum size");

/* ------------------------------------------------------------------ the key table */

typedef enum { K_INT, K_NUM, K_BOOL, K_ENUM, K_STR } key_kind;

typedef struct key_def {
    const char *path;         /* "model.attention.qkv" */
    key_kind kind;
    size_t off, size;         /* the field in qkv_config */
    double lo, hi;            /* int and number bounds (every int default/bound is < 2^53) */
    bool lo_open, hi_open;    /* number bounds: exclusive? */
    const char *const *names; /* enum names (index = value) */
    int nnames;
    const char *meaning;      /* one line, as in docs/config.md */
} key_def;

#define FIELD(f) offsetof(qkv_config, f), sizeof(((qkv_config *)0)->f)
#define D_INT(p, f, lo, hi, m) {p, K_INT, FIELD(f), lo, hi, false, false, NULL, 0, m}
#define D_NUM(p, f, lb, lo, hi, hb, m) {p, K_NUM, FIELD(f), lo, hi, (lb) == '(', (hb) == ')', NULL, 0, m}
#define D_BOOL(p, f, m) {p, K_BOOL, FIELD(f), 0, 1, false, false, NULL, 0, m}
#define D_ENUM(p, f, names, n, m) {p, K_ENUM, FIELD(f), 0, 0, false, false, names, n, m}
#define D_STR(p, f, m) {p, K_STR, FIELD(f), 0, 0, false, false, NULL, 0, m}

/* the attention's rows (nn/attn_options.h) as this table's rows: ATTN_KEY is defined to the
 * table's X while the table expands (see below) */
#define ATTN_ROW_INT(X, name, lo, hi, names, doc) X(INT, "model.attention." #name, model.attn.name, lo, hi, doc)
#define ATTN_ROW_BOOL(X, name, lo, hi, names, doc) X(BOOL, "model.attention." #name, model.attn.name, doc)
#define ATTN_ROW_ENUM(X, name, lo, hi, names, doc) X(ENUM, "model.attention." #name, model.attn.name, names, hi, doc)

/* X(kind, path, field, ...kind-specific..., meaning); defaults come from each layer's
 * qkv_*_config_default() (qkv_config_defaults). Table order is the order of
 * qkv_config_keys(), of qkv_config_to_json() and of the tables in docs/config.md. */
#define QKV_CONFIG_TABLE(X)                                                                    \
    X(INT, "model.vocab", model.vocab, 0, 1048576, "vocabulary size (0 = from the task)")      \
    X(INT, "model.seq_len", model.seq_len, 0, 65536,                                           \
      "longest sequence, size of the position table (0 = from the task)")                      \
    X(INT, "model.d_model", model.d_model, 1, 8192, "embedding width")                         \
    X(INT, "model.heads", model.heads, 1, 256, "attention heads (must divide d_model)")        \
    X(INT, "model.layers", model.layers, 1, 64, "transformer blocks")                          \
    X(INT, "model.d_ff", model.d_ff, 1, 65536, "hidden width of the feed-forward layer")       \
    X(ENUM, "model.activation", model.activation, QKV_ACTIVATION_NAMES,                        \
      QKV_ACT_COUNT, "feed-forward activation")                                                \
    QKV_ATTN_OPTIONS(ATTN_KEY)                                                                 \
    X(ENUM, "model.position", model.position, QKV_POSITION_NAMES, QKV_POS_COUNT,                \
      "positions: learned (a table added to the tokens), rope (queries and keys rotated), none") \
    X(NUM, "model.rope_base", model.rope_base, '(', 1, 1e9, ']',                               \
      "rope: theta_k = rope_base^(-2k/head_dim)")                                              \
    X(ENUM, "task.name", task.kind, QKV_TASK_NAMES, QKV_TASK_COUNT,                            \
      "the task to train on")                                                                  \
    X(INT, "task.length", task.length, 1, 4096,                                                \
      "copy/reverse/sort/induction: symbols per sequence; selective_copy: places before the separator") \
    X(INT, "task.symbols", task.symbols, 2, 65536,                                             \
      "copy/reverse/sort/induction/selective_copy: size of the symbol alphabet")               \
    X(INT, "task.pairs", task.pairs, 1, 4096, "recall, fuzzy_recall, noisy_recall: key-value pairs per example") \
    X(INT, "task.keys", task.keys, 1, 65536,                                                   \
      "recall, fuzzy_recall, noisy_recall: size of the key alphabet")                          \
    X(INT, "task.values", task.values, 1, 65536,                                               \
      "recall, fuzzy_recall, noisy_recall: size of the value alphabet")                        \
    X(INT, "task.queries", task.queries, 0, 4096,                                              \
      "recall, fuzzy_recall, noisy_recall: queries per example, at most pairs (0 = pairs)")    \
    X(BOOL, "task.query_blank", task.query_blank,                                              \
      "recall, noisy_recall: a blank token after each query, its value predicted there (a masked model's format)") \
    X(INT, "task.key_len", task.key_len, 1, 64, "fuzzy_recall: tokens per key")                \
    X(INT, "task.value_len", task.value_len, 1, 64, "fuzzy_recall: tokens per value")          \
    X(INT, "task.noise", task.noise, 0, 65536,                                                 \
      "noisy_recall: noise tokens per example, scattered between the pairs")                   \
    X(INT, "task.noise_symbols", task.noise_symbols, 1, 65536,                                 \
      "noisy_recall: size of the noise alphabet")                                              \
    X(INT, "task.copy_tokens", task.copy_tokens, 1, 4096,                                      \
      "selective_copy: data tokens to copy, at most length")                                   \
    X(ENUM, "task.corpus", task.corpus, QKV_TEXT_CORPUS_NAMES, QKV_CORPUS_COUNT,               \
      "text: file (task.path is the text), fortunes (Debian's English fortunes package) or fortunes-zh (its Chinese fortunes-zh)")            \
    X(STR, "task.path", task.path,                                                             \
      "text: any file (corpus fortunes, fortunes-zh: a directory of fortune files); file: JSON Lines training data") \
    X(STR, "task.eval_path", task.eval_path,                                                   \
      "file: JSON Lines evaluation data (\"\" = hold out the tail)")                           \
    X(NUM, "task.eval_fraction", task.eval_fraction, '(', 0, 1, ')',                           \
      "text/file: share of the data held out for evaluation")                                  \
    X(NUM, "task.val_fraction", task.val_fraction, '[', 0, 1, ')',                             \
      "text/file: share of the data held out for validation (0 = none)")                       \
    X(INT, "task.heldout_seed", task.heldout_seed, -1, 9007199254740991.0,                     \
      "seed of the held-out examples (validation, evaluation; text: their windows); -1 = train.seed") \
    X(INT, "task.seq_len", task.seq_len, 2, 65536, "text: window length, in tokens")          \
    X(ENUM, "task.tokenizer", task.tokenizer, QKV_TOKENIZER_NAMES, QKV_TOKENIZER_COUNT,        \
      "text: bytes (a token per byte), or sentencepiece pieces trained on the training part: bpe or unigram") \
    X(INT, "task.pieces", task.pieces, 260, 1048576,                                           \
      "text with bpe or unigram: the vocabulary's size, its 256 byte pieces included")          \
    X(STR, "task.tokenizer_path", task.tokenizer_path,                                         \
      "text with bpe or unigram: a sentencepiece model to use (\"\" = train one; a run keeps it as tokenizer.model)") \
    X(INT, "train.steps", train.steps, 1, 1000000000, "optimizer steps")                       \
    X(INT, "train.batch", train.batch, 1, 65536, "examples per step")                          \
    X(INT, "train.shards", train.shards, 0, 65536,                                             \
      "micro-batches per step, the unit of data-parallel work (0 = 8, 4, 2 or 1)")             \
    X(INT, "train.seed", train.seed, 0, 9007199254740991.0,                                    \
      "seed of initialization, data and sampling")                                             \
    X(INT, "train.eval_every", train.eval_every, 0, 1000000000,                                \
      "steps between evaluations (0 = only at the end)")                                       \
    X(INT, "train.eval_examples", train.eval_examples, 1, 10000000,                            \
      "examples per evaluation")                                                               \
    X(INT, "train.val_examples", train.val_examples, 0, 10000000,                              \
      "examples per validation (0 = train.eval_examples)")                                     \
    X(NUM, "train.threshold", train.threshold, '(', 0, 1, ']',                                 \
      "validation accuracy that counts as solved (summary.json's verdict)")                    \
    X(INT, "train.log_every", train.log_every, 1, 1000000000, "steps between log lines")       \
    X(INT, "train.checkpoint_every", train.checkpoint_every, 0, 1000000000,                    \
      "steps between checkpoints (0 = at every evaluation and at the end)")                    \
    X(BOOL, "train.skip_nonfinite", train.skip_nonfinite,                                      \
      "skip (and count) a step whose loss or gradients are not finite")                        \
    X(ENUM, "train.precision", train.precision, QKV_PRECISION_NAMES, QKV_PRECISION_COUNT,      \
      "matrix products: f32, or bf16 operands summed in float32 (a CPU with avx512_bf16)")     \
    X(ENUM, "optim.name", optim.kind, QKV_OPTIM_NAMES, QKV_OPT_COUNT,                          \
      "optimizer")                                                                             \
    X(NUM, "optim.lr", optim.lr, '(', 0, 10, ']', "peak learning rate")                        \
    X(NUM, "optim.momentum", optim.momentum, '[', 0, 1, ')', "sgd: momentum")                  \
    X(NUM, "optim.beta1", optim.beta1, '[', 0, 1, ')', "adam/adamw: first-moment decay")       \
    X(NUM, "optim.beta2", optim.beta2, '[', 0, 1, ')',                                         \
      "adam/adamw: second-moment decay")                                                       \
    X(NUM, "optim.eps", optim.eps, '(', 0, 1, ']', "adam/adamw: denominator epsilon")          \
    X(NUM, "optim.weight_decay", optim.weight_decay, '[', 0, 10, ']',                          \
      "sgd/adam: L2 added to the gradient; adamw: decoupled decay")                            \
    X(NUM, "optim.clip", optim.clip, '[', 0, 1e6, ']',                                         \
      "max global gradient norm (0 = off)")                                                    \
    X(ENUM, "optim.schedule", optim.schedule, QKV_SCHEDULE_NAMES,                              \
      QKV_SCHED_COUNT, "after warmup: constant, or cosine/linear decay to min_lr")             \
    X(INT, "optim.warmup", optim.warmup, 0, 1000000000,                                        \
      "linear warmup steps from 0 to lr (at most train.steps)")                                \
    X(NUM, "optim.min_lr", optim.min_lr, '[', 0, 10, ']', "final learning rate of the decay")

#define AS_DEF(kind, ...) D_##kind(__VA_ARGS__),
#define AS_PATH(kind, path, ...) path,
#define ATTN_KEY(kind, ctype, name, def, lo, hi, names, doc, ...) ATTN_ROW_##kind(ATTN_X, name, lo, hi, names, doc)

#define ATTN_X AS_DEF
static const key_def KEYS[] = {QKV_CONFIG_TABLE(AS_DEF)};
#undef ATTN_X
#define ATTN_X AS_PATH
static const char *const KEY_PATHS[] = {QKV_CONFIG_TABLE(AS_PATH) NULL};
#undef ATTN_X
enum { NKEYS = (int)(sizeof KEYS / sizeof KEYS[0]) };
_Static_assert(sizeof KEY_PATHS / sizeof KEY_PATHS[0] == NKEYS + 1, "key list");

const char *const *qkv_config_keys(void) { return KEY_PATHS; }

/* ------------------------------------------------------------------ small helpers */

enum { PATH_MAX_LEN = 256, SHOW_MAX = 40 };

/* e = a usage error (the config is the user's input); e may be NULL */
static int fail(qkv_err *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(qkv_err *e, const char *fmt, ...) {
    if (e) {
        va_list ap;
        va_start(ap, fmt);
        qkv_err_vset(e, QKV_ERR_USAGE, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* shortest of %.15g, %.16g, %.17g that reads back as exactly d */
static void fmt_double(double d, char *buf, size_t n) {
    if (isnan(d)) {
        snprintf(buf, n, "nan");
        return;
    }
    if (isinf(d)) {
        snprintf(buf, n, d > 0 ? "inf" : "-inf");
        return;
    }
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, n, "%.*g", prec, d);
        if (strtod(buf, NULL) == d) return;
    }
}

/* user text for a message: control bytes escaped, cut at max bytes with "..." */
static void show_text(const char *s, size_t max, char *out, size_t n) {
    size_t o = 0, i = 0;
    for (; s[i] && i < max && o + 8 < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch < 0x20 || ch == 0x7f) o += (size_t)snprintf(out + o, n - o, "\\x%02x", ch);
        else out[o++] = (char)ch;
    }
    if (s[i] && o + 4 < n) {
        memcpy(out + o, "...", 3);
        o += 3;
    }
    out[o < n ? o : n - 1] = '\0';
}

/* a JSON value, compact, at most ~SHOW_MAX characters */
static void show_value(const cJSON *v, char *out, size_t n) {
    if (cJSON_IsNumber(v)) {
        fmt_double(v->valuedouble, out, n);
        return;
    }
    char *p = cJSON_PrintUnformatted(v);
    if (!p) {
        snprintf(out, n, "(a value)");
        return;
    }
    show_text(p, SHOW_MAX, out, n);
    cJSON_free(p);
}

/* optimal string alignment distance (Levenshtein plus adjacent transpositions) */
static int edit_distance(const char *a, size_t la, const char *b, size_t lb) {
    enum { M = 64 };
    if (la > M || lb > M) return 1 << 20;
    int r0[M + 1], r1[M + 1], r2[M + 1]; /* rows i-2, i-1, i */
    for (size_t j = 0; j <= lb; j++) r1[j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        r2[0] = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            int cost = a[i - 1] != b[j - 1];
            int d = r1[j] + 1;
            if (r2[j - 1] + 1 < d) d = r2[j - 1] + 1;
            if (r1[j - 1] + cost < d) d = r1[j - 1] + cost;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && r0[j - 2] + 1 < d)
                d = r0[j - 2] + 1;
            r2[j] = d;
        }
        memcpy(r0, r1, sizeof r0);
        memcpy(r1, r2, sizeof r1);
    }
    return r1[lb];
}

static bool close_enough(int d, size_t typed_len) {
    int lim = (int)(typed_len / 3) > 2 ? (int)(typed_len / 3) : 2;
    return d <= lim && (size_t)d < typed_len;
}

/* ------------------------------------------------------------------ paths and sections */

static const key_def *find_key(const char *path) {
    for (int i = 0; i < NKEYS; i++)
        if (!strcmp(KEYS[i].path, path)) return &KEYS[i];
    return NULL;
}

/* "" (the top level), "model", "model.attention", "task", ...: proper prefixes of keys */
static bool is_section(const char *path) {
    size_t n = strlen(path);
    if (n == 0) return true;
    for (int i = 0; i < NKEYS; i++)
        if (!strncmp(KEYS[i].path, path, n) && KEYS[i].path[n] == '.') return true;
    return false;
}

static void join(char *out, size_t n, const char *prefix, const char *name, size_t namelen) {
    if (*prefix) snprintf(out, n, "%s.%.*s", prefix, (int)namelen, name);
    else snprintf(out, n, "%.*s", (int)namelen, name);
}

/* names directly inside section `prefix` (keys and sections), in table order */
typedef struct { const char *s; size_t len; } name_ref;
static int child_names(const char *prefix, name_ref *out, int max) {
    size_t pl = strlen(prefix);
    int n = 0;
    for (int i = 0; i < NKEYS; i++) {
        const char *p = KEYS[i].path;
        if (pl) {
            if (strncmp(p, prefix, pl) || p[pl] != '.') continue;
            p += pl + 1;
        }
        size_t len = strcspn(p, ".");
        bool seen = false;
        for (int j = 0; j < n && !seen; j++) seen = out[j].len == len && !memcmp(out[j].s, p, len);
        if (!seen && n < max) out[n++] = (name_ref){p, len};
    }
    return n;
}

static void list_names(const name_ref *names, int n, char *out, size_t size) {
    size_t o = 0;
    out[0] = '\0';
    for (int i = 0; i < n && o < size; i++)
        o += (size_t)snprintf(out + o, size - o, "%s%.*s", i ? ", " : "", (int)names[i].len,
                              names[i].s);
}

/* "LABEL: shown: unknown key (did you mean X?)" for `name` (len bytes) inside section
 * `prefix`; `rest` is what followed it in a --set path ("" if nothing). */
static int unknown_key(const char *label, const char *shown, const char *prefix, const char *name,
                       size_t len, const char *rest, qkv_err *e) {
    name_ref names[64];
    int n = child_names(prefix, names, 64);
    int best = -1, bestd = 1 << 20;
    for (int i = 0; i < n; i++) {
        int d = edit_distance(name, len, names[i].s, names[i].len);
        if (d < bestd) bestd = d, best = i;
    }
    char sug[2 * PATH_MAX_LEN] = "";
    if (best >= 0 && close_enough(bestd, len)) {
        char p[PATH_MAX_LEN];
        join(p, sizeof p, prefix, names[best].s, names[best].len);
        char full[2 * PATH_MAX_LEN];
        snprintf(full, sizeof full, "%s%s%s", p, *rest ? "." : "", rest);
        snprintf(sug, sizeof sug, "%s", *rest && (find_key(full) || is_section(full)) ? full : p);
    } else {
        /* a valid key or section of another section with exactly this name ("model.lr") */
        for (int i = 0; i < NKEYS && !sug[0]; i++) {
            const char *p = KEYS[i].path;
            for (const char *q = p; *q; q++) {
                if ((q == p || q[-1] == '.') && !strncmp(q, name, len) &&
                    (q[len] == '.' || q[len] == '\0')) {
                    snprintf(sug, sizeof sug, "%.*s", (int)(q - p + (ptrdiff_t)len), p);
                    break;
                }
            }
        }
    }
    if (sug[0]) return fail(e, "%s: %s: unknown key (did you mean %s?)", label, shown, sug);
    char list[1024];
    list_names(names, n, list, sizeof list);
    return fail(e, "%s: %s: unknown key (valid keys%s%s: %s)", label, shown,
                *prefix ? " of " : " at the top level", prefix, list);
}

/* ------------------------------------------------------------------ values */

/* "an integer in [1, 8192]", "a number in (0, 10]", ... */
static void describe(const key_def *k, char *out, size_t n) {
    char lo[40], hi[40];
    switch (k->kind) {
    case K_INT:
        snprintf(out, n, "an integer in [%lld, %lld]", (long long)k->lo, (long long)k->hi);
        break;
    case K_NUM:
        fmt_double(k->lo, lo, sizeof lo);
        fmt_double(k->hi, hi, sizeof hi);
        snprintf(out, n, "a number in %c%s, %s%c", k->lo_open ? '(' : '[', lo, hi,
                 k->hi_open ? ')' : ']');
        break;
    case K_BOOL: snprintf(out, n, "true or false"); break;
    case K_ENUM: {
        size_t o = (size_t)snprintf(out, n, "one of ");
        for (int i = 0; i < k->nnames && o < n; i++)
            o += (size_t)snprintf(out + o, n - o, "%s%s", i ? ", " : "", k->names[i]);
        break;
    }
    case K_STR: snprintf(out, n, "a string of at most %zu bytes", k->size - 1); break;
    }
}

static bool in_range(const key_def *k, double v) {
    if (!(k->lo_open ? v > k->lo : v >= k->lo)) return false;
    return k->hi_open ? v < k->hi : v <= k->hi;
}

static int bad_value(const key_def *k, const cJSON *v, const char *label, const char *extra,
                     qkv_err *e) {
    char want[256], got[64];
    describe(k, want, sizeof want);
    show_value(v, got, sizeof got);
    return fail(e, "%s: %s: expected %s, got %s%s", label, k->path, want, got, extra);
}

/* check v against k, then write it into c */
static int set_value(qkv_config *c, const key_def *k, const cJSON *v, const char *label, qkv_err *e) {
    char *field = (char *)c + k->off;
    switch (k->kind) {
    case K_INT: {
        if (!cJSON_IsNumber(v)) return bad_value(k, v, label, "", e);
        double d = v->valuedouble;
        if (!isfinite(d) || d != floor(d) || !in_range(k, d))
            return bad_value(k, v, label, "", e);
        if (k->size == sizeof(long long)) {
            long long x = (long long)d;
            memcpy(field, &x, sizeof x);
        } else {
            int x = (int)d;
            memcpy(field, &x, sizeof x);
        }
        return 0;
    }
    case K_NUM: {
        if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || !in_range(k, v->valuedouble))
            return bad_value(k, v, label, "", e);
        double d = v->valuedouble;
        memcpy(field, &d, sizeof d);
        return 0;
    }
    case K_BOOL: {
        if (!cJSON_IsBool(v)) return bad_value(k, v, label, "", e);
        bool b = cJSON_IsTrue(v);
        memcpy(field, &b, sizeof b);
        return 0;
    }
    case K_ENUM: {
        if (!cJSON_IsString(v)) return bad_value(k, v, label, "", e);
        const char *s = v->valuestring;
        int best = -1, bestd = 1 << 20;
        for (int i = 0; i < k->nnames; i++) {
            if (!strcmp(s, k->names[i])) {
                memcpy(field, &i, sizeof i);
                return 0;
            }
            int d = edit_distance(s, strlen(s), k->names[i], strlen(k->names[i]));
            if (d < bestd) bestd = d, best = i;
        }
        char extra[96] = "";
        if (best >= 0 && close_enough(bestd, strlen(s)))
            snprintf(extra, sizeof extra, " (did you mean %s?)", k->names[best]);
        return bad_value(k, v, label, extra, e);
    }
    case K_STR: {
        if (!cJSON_IsString(v)) return bad_value(k, v, label, "", e);
        size_t len = strlen(v->valuestring);
        if (len >= k->size) {
            char want[128];
            describe(k, want, sizeof want);
            return fail(e, "%s: %s: expected %s, got %zu bytes", label, k->path, want,
                        len);
        }
        memset(field, 0, k->size);
        memcpy(field, v->valuestring, len);
        return 0;
    }
    }
    return fail(e, "%s: %s: bad key table entry", label, k->path);
}

/* ------------------------------------------------------------------ JSON text */

/* the rules of qkv's JSON files (io/json.h): strict RFC 8259, nesting up to 512 levels, no
 * \u0000 (cJSON would cut the string there), a UTF-8 byte-order mark skipped, numbers of at
 * most 63 characters */
static const qkv_json_opts JSON_RULES = {
    .max_depth = 512, .reject_nul = true, .skip_bom = true, .max_number = 63};

/* "label:line:column: JSON syntax error: what was wrong" */
static int json_fail(const char *text, const qkv_json_error *je, const char *label, qkv_err *e) {
    int line, col;
    qkv__json_line_col(text, je->pos, &line, &col);
    if (e && je->kind == QKV_JSON_NOMEM)
        return qkv_err_set(e, QKV_ERR_FAIL, "%s:%d:%d: JSON syntax error: %s", label, line, col, je->msg);
    return fail(e, "%s:%d:%d: JSON syntax error: %s", label, line, col, je->msg);
}

int qkv__config_json(const char *text, size_t len, const char *label, cJSON **out, bool *oom, qkv_err *e) {
    qkv_json_error je;
    int rc = qkv__json_parse(text, len, &JSON_RULES, out, &je);
    if (oom) *oom = rc && je.kind == QKV_JSON_NOMEM;
    return rc ? json_fail(text, &je, label, e) : 0;
}

int qkv_json_syntax_check(const char *text, size_t len, const char *label, qkv_err *e) {
    qkv_json_error je;
    return qkv__json_check(text, len, &JSON_RULES, &je) ? json_fail(text, &je, label, e) : 0;
}

/* ------------------------------------------------------------------ the tree walk */

static int cmp_child(const void *a, const void *b) {
    const cJSON *x = *(const cJSON *const *)a, *y = *(const cJSON *const *)b;
    return strcmp(x->string, y->string);
}

/* the first member (in document order) whose name an earlier member already has */
static const cJSON *first_duplicate(const cJSON *obj, bool *oom) {
    *oom = false;
    size_t n = 0;
    for (const cJSON *ch = obj->child; ch; ch = ch->next) n++;
    if (n < 2) return NULL;
    if (n <= 32) { /* small: quadratic, in document order */
        for (const cJSON *ch = obj->child; ch; ch = ch->next)
            for (const cJSON *p = obj->child; p != ch; p = p->next)
                if (!strcmp(p->string, ch->string)) return ch;
        return NULL;
    }
    /* large: sort (name, index) pairs; report the duplicate that comes first in the document */
    typedef struct { const cJSON *item; size_t index; } entry;
    entry *e = malloc(n * sizeof *e);
    if (!e) {
        *oom = true;
        return NULL;
    }
    size_t i = 0;
    for (const cJSON *ch = obj->child; ch; ch = ch->next, i++) e[i] = (entry){ch, i};
    qsort(e, n, sizeof *e, cmp_child); /* entry starts with the item pointer */
    const cJSON *best = NULL;
    size_t best_index = n;
    for (i = 1; i < n; i++) {
        if (strcmp(e[i].item->string, e[i - 1].item->string)) continue;
        /* a run of equal names: its second-earliest member is the duplicate */
        size_t j = i - 1, k = i, lo1 = e[j].index, lo2 = n;
        while (k < n && !strcmp(e[k].item->string, e[j].item->string)) {
            size_t x = e[k].index;
            if (x < lo1) lo2 = lo1, lo1 = x;
            else if (x < lo2) lo2 = x;
            k++;
        }
        if (lo2 < best_index) {
            best_index = lo2;
            for (size_t m = j; m < k; m++)
                if (e[m].index == lo2) best = e[m].item;
        }
        i = k - 1;
    }
    free(e);
    return best;
}

static int apply_object(qkv_config *c, const cJSON *obj, const char *prefix, const char *label,
                        qkv_err *e) {
    bool oom;
    const cJSON *dup = first_duplicate(obj, &oom);
    if (oom) return qkv_err_set(e, QKV_ERR_FAIL, "%s: out of memory", label);
    if (dup) {
        char name[128], path[PATH_MAX_LEN];
        show_text(dup->string, 60, name, sizeof name);
        join(path, sizeof path, prefix, name, strlen(name));
        return fail(e, "%s: %s: duplicate key", label, path);
    }
    for (const cJSON *ch = obj->child; ch; ch = ch->next) {
        const char *name = ch->string;
        size_t len = strlen(name);
        char path[PATH_MAX_LEN];
        const key_def *k = NULL;
        bool section = false;
        if (len < 64 && !strchr(name, '.') && len > 0) {
            join(path, sizeof path, prefix, name, len);
            k = find_key(path);
            section = !k && is_section(path);
        }
        if (k) {
            if (set_value(c, k, ch, label, e)) return -1;
            continue;
        }
        if (section) {
            if (!cJSON_IsObject(ch)) {
                char got[64], list[512];
                name_ref names[64];
                show_value(ch, got, sizeof got);
                list_names(names, child_names(path, names, 64), list, sizeof list);
                return fail(e, "%s: %s: expected an object (a section with keys %s), got %s",
                            label, path, list, got);
            }
            if (apply_object(c, ch, path, label, e)) return -1;
            continue;
        }
        char shown[128];
        show_text(name, 60, shown, sizeof shown);
        if (!*name) snprintf(shown, sizeof shown, "\"\"");
        char full[PATH_MAX_LEN];
        join(full, sizeof full, prefix, name, len);
        if (len > 0 && strchr(name, '.') && (find_key(full) || is_section(full))) {
            char where[PATH_MAX_LEN];
            const char *dot = strrchr(full, '.');
            snprintf(where, sizeof where, "%.*s", (int)(dot - full), full);
            return fail(e,
                        "%s: \"%s\": unknown key (names are not dotted paths; write \"%s\" "
                        "inside the object \"%s\")",
                        label, shown, dot + 1, where);
        }
        join(full, sizeof full, prefix, shown, strlen(shown));
        if (unknown_key(label, full, prefix, name, len, "", e)) return -1;
    }
    return 0;
}

static int parse_text(qkv_config *c, const char *text, size_t len, const char *label, qkv_err *e) {
    cJSON *root;
    if (qkv__config_json(text, len, label, &root, NULL, e)) return -1;
    qkv_config tmp;
    qkv_config_defaults(&tmp);
    int rc;
    if (!cJSON_IsObject(root)) {
        char got[64];
        show_value(root, got, sizeof got);
        rc = fail(e,
                  "%s: expected a JSON object at the top level ({\"model\": {...}, ...}), got %s",
                  label, got);
    } else {
        rc = apply_object(&tmp, root, "", label, e);
    }
    cJSON_Delete(root);
    if (rc == 0) *c = tmp;
    return rc;
}

/* ------------------------------------------------------------------ the API */

int qkv_config_parse(qkv_config *c, const char *json, const char *label, qkv_err *e) {
    qkv_shown shown = qkv__shown(label ? label : "config"); /* every message starts with it: bounded */
    if (!c || !json) return fail(e, "%s: no config text", shown.s);
    return parse_text(c, json, strlen(json), shown.s, e);
}

int qkv_config_load(qkv_config *c, const char *path, qkv_err *e) {
    if (!c || !path) return fail(e, "config: no file name");
    /* a file of 16 MiB - 1 bytes or more is refused (the limit the message rounds to 16 MiB) */
    size_t len;
    char *buf = qkv__read_config_file(path, &len, e);
    if (!buf) return -1; /* a path that cannot be used (QKV_ERR_USAGE) */
    /* a NUL byte inside the file: the JSON reader reports it with its line and column */
    int rc = parse_text(c, buf, len, qkv__shown(path).s, e);
    free(buf);
    return rc;
}

int qkv_config_set(qkv_config *c, const char *assignment, qkv_err *e) {
    const char *label = "--set";
    char shown[128];
    if (!c || !assignment)
        return fail(e, "%s: expected path.to.key=value, got nothing", label);
    const char *eq = strchr(assignment, '=');
    if (!eq || eq == assignment) {
        show_text(assignment, SHOW_MAX, shown, sizeof shown);
        return fail(e, "%s: expected path.to.key=value, got \"%s\"", label, shown);
    }
    size_t plen = (size_t)(eq - assignment);
    char path[PATH_MAX_LEN];
    snprintf(path, sizeof path, "%.*s", (int)(plen < sizeof path ? plen : sizeof path - 1),
             assignment);
    show_text(path, 80, shown, sizeof shown);
    const key_def *k = plen < sizeof path ? find_key(path) : NULL;
    if (!k) {
        /* walk the sections of the path to the first name that does not fit */
        char prefix[PATH_MAX_LEN] = "";
        const char *p = path;
        for (;;) {
            size_t len = strcspn(p, ".");
            const char *rest = p[len] ? p + len + 1 : "";
            char full[PATH_MAX_LEN];
            join(full, sizeof full, prefix, p, len);
            bool last = p[len] == '\0';
            if (len > 0 && plen < sizeof path && is_section(full)) {
                if (last) {
                    char list[512];
                    name_ref names[64];
                    list_names(names, child_names(full, names, 64), list, sizeof list);
                    return fail(e, "%s: %s: is a section, not a key (set one of its "
                                             "keys: %s)", label, shown, list);
                }
                snprintf(prefix, sizeof prefix, "%s", full);
                p = rest;
                continue;
            }
            if (!last && len > 0 && find_key(full))
                return fail(e, "%s: %s: unknown key (%s is a key, not a section)",
                            label, shown, full);
            return unknown_key(label, shown, prefix, p, len, rest, e);
        }
    }
    const char *text = eq + 1;
    cJSON *v = NULL;
    if (qkv__config_json(text, strlen(text), label, &v, NULL, NULL) == 0 && k->kind == K_STR &&
        !cJSON_IsString(v)) {
        cJSON_Delete(v); /* a string key takes unquoted text as it is (task.path=123) */
        v = NULL;
    }
    size_t bad;
    const char *why;
    if (!v && !qkv__utf8_valid((const uint8_t *)text, strlen(text), &bad, &why)) /* config.json must hold it */
        return fail(e, "%s: %s: the value is not UTF-8 (%s at byte %zu), so config.json could not record it",
                    label, shown, why, bad);
    if (!v && !(v = cJSON_CreateString(text))) return qkv_err_set(e, QKV_ERR_FAIL, "%s: out of memory", label);
    int rc = set_value(c, k, v, label, e);
    cJSON_Delete(v);
    return rc;
}

/* --------------------------------------------------------------- validation */

/* the table's type and range checks, on a struct (it may have been filled in by code) */

/* an int or long long config field, by its size in the table */
static long long int_field(const key_def *k, const char *field) {
    if (k->size == sizeof(long long)) {
        long long x;
        memcpy(&x, field, sizeof x);
        return x;
    }
    int y;
    memcpy(&y, field, sizeof y);
    return y;
}

static int check_ranges(const qkv_config *c, qkv_err *e) {
    for (int i = 0; i < NKEYS; i++) {
        const key_def *k = &KEYS[i];
        const char *field = (const char *)c + k->off;
        char want[256], got[64];
        bool ok = true;
        switch (k->kind) {
        case K_INT: {
            long long x = int_field(k, field);
            ok = in_range(k, (double)x);
            snprintf(got, sizeof got, "%lld", x);
            break;
        }
        case K_NUM: {
            double d;
            memcpy(&d, field, sizeof d);
            ok = isfinite(d) && in_range(k, d);
            fmt_double(d, got, sizeof got);
            break;
        }
        case K_BOOL: break;
        case K_ENUM: {
            int x;
            memcpy(&x, field, sizeof x);
            ok = x >= 0 && x < k->nnames;
            snprintf(got, sizeof got, "enum value %d", x);
            break;
        }
        case K_STR:
            ok = memchr(field, '\0', k->size) != NULL;
            snprintf(got, sizeof got, "an unterminated string");
            break;
        }
        if (!ok) {
            describe(k, want, sizeof want);
            return fail(e, "%s: expected %s, got %s", k->path, want, got);
        }
    }
    return 0;
}

static int check_heads(const qkv_config *c, qkv_err *e) {
    if (c->model.d_model % c->model.heads)
        return fail(e,
                    "model.heads: %d does not divide model.d_model %d (each head gets "
                    "d_model/heads dimensions)",
                    c->model.heads, c->model.d_model);
    return 0;
}

/* everything else the model layer checks (qkv_model_config_check), with its field named by its
 * key; vocab and seq_len 0 mean "from the task" and are checked when the task is known */
static int check_model(const qkv_config *c, qkv_err *e) {
    qkv_model_config m = c->model;
    if (m.vocab == 0) m.vocab = 2;
    if (m.seq_len == 0) m.seq_len = 1;
    qkv_err inner;
    if (!qkv_model_config_check(&m, &inner)) return 0;
    bool attn = !strncmp(inner.msg, "attn.", 5); /* the struct's attn is the config's attention */
    return fail(e, "model.%s%s", attn ? "attention." : "", attn ? inner.msg + 5 : inner.msg);
}

/* a data file named by key: it opens, and it is a regular file. Nothing is read from it (the
 * task reads it once, later); O_NONBLOCK, so a FIFO without a writer does not block the open */
static int check_readable(const char *key, const char *path, qkv_err *e) {
    char shown[160];
    show_text(path, 120, shown, sizeof shown);
    qkv_read_status st;
    if (!qkv__probe_file(path, QKV_MAX_FILE_BYTES, QKV_READ_REGULAR, &st)) return 0;
    switch (st.stage) {
    case QKV_READ_OPEN: return fail(e, "%s: cannot open \"%s\": %s", key, shown, strerror(st.errnum));
    case QKV_READ_NOT_REGULAR:
        return fail(e, "%s: \"%s\" is %s, not a regular file: qkv reads data from regular "
                    "files only (every run of a sweep reads it again); save it to a file first", key, shown,
                    qkv__file_type_name(st.mode));
    case QKV_READ_TOO_BIG:
        return fail(e, "%s: \"%s\" is larger than 1 GiB, the most qkv reads of a data file", key, shown);
    default: return fail(e, "%s: cannot read \"%s\": %s", key, shown, strerror(st.errnum));
    }
}

/* the fortunes corpus's directory: task.path, or Debian's; missing, it names the package */
static int check_fortunes_dir(const qkv_task_config *t, qkv_err *e) {
    const char *dir = t->path[0] ? t->path : QKV_FORTUNES_DIR;
    char shown[160];
    show_text(dir, 120, shown, sizeof shown);
    errno = 0;
    DIR *d = opendir(dir);
    if (d) {
        closedir(d);
        return 0;
    }
    bool zh = t->corpus == QKV_CORPUS_FORTUNES_ZH;
    if (!t->path[0])
        return fail(e, "task.corpus: %s reads Debian's %s package, which is not installed (%s: %s); install it "
                    "with %s", QKV_TEXT_CORPUS_NAMES[t->corpus], QKV_TEXT_CORPUS_NAMES[t->corpus], shown,
                    strerror(errno), zh ? QKV_FORTUNES_ZH_INSTALL : QKV_FORTUNES_INSTALL);
    return fail(e, "task.path: cannot open the fortunes directory \"%s\": %s (Debian's fortunes "
                "package installs %s: %s)", shown, strerror(errno), QKV_FORTUNES_DIR, QKV_FORTUNES_INSTALL);
}

static int check_task_files(const qkv_config *c, qkv_err *e) {
    const qkv_task_config *t = &c->task;
    if (t->corpus != QKV_CORPUS_FILE && t->kind != QKV_TASK_TEXT)
        return fail(e, "task.corpus: %s is a corpus of the text task, not of task \"%s\"",
                    QKV_TEXT_CORPUS_NAMES[t->corpus], QKV_TASK_NAMES[t->kind]);
    if (t->kind == QKV_TASK_TEXT && t->corpus != QKV_CORPUS_FILE) {
        if (check_fortunes_dir(t, e)) return -1;
    } else if (t->kind == QKV_TASK_TEXT || t->kind == QKV_TASK_FILE) {
        if (!t->path[0])
            return fail(e, "task.path: task \"%s\" needs a path to %s",
                        QKV_TASK_NAMES[t->kind],
                        t->kind == QKV_TASK_TEXT ? "a text file (or task.corpus fortunes)" : "a JSON Lines file");
        if (check_readable("task.path", t->path, e)) return -1;
    }
    if (t->eval_path[0] && check_readable("task.eval_path", t->eval_path, e)) return -1;
    if (t->tokenizer != QKV_TOKENIZER_BYTES && t->kind != QKV_TASK_TEXT)
        return fail(e, "task.tokenizer: %s pieces are for the text task, not for task \"%s\" (whose tokens are given)",
                    QKV_TOKENIZER_NAMES[t->tokenizer], QKV_TASK_NAMES[t->kind]);
    if (t->tokenizer_path[0]) {
        if (t->tokenizer == QKV_TOKENIZER_BYTES)
            return fail(e, "task.tokenizer_path: a sentencepiece model is for task.tokenizer bpe or unigram, not bytes");
        if (check_readable("task.tokenizer_path", t->tokenizer_path, e)) return -1;
    }
    return 0;
}

/* the task's sizes agree (recall's distinct keys, queries <= pairs, ...): the task layer's rules */
static int check_task(const qkv_config *c, qkv_err *e) {
    return qkv_task_config_check(&c->task, e);
}

static int check_fractions(const qkv_config *c, qkv_err *e) {
    const qkv_task_config *t = &c->task;
    if ((t->kind == QKV_TASK_TEXT || t->kind == QKV_TASK_FILE) && t->eval_fraction + t->val_fraction >= 1) {
        char a[40], b[40];
        fmt_double(t->eval_fraction, a, sizeof a);
        fmt_double(t->val_fraction, b, sizeof b);
        return fail(e, "task.val_fraction: %s plus task.eval_fraction %s leaves nothing to train on", b, a);
    }
    return 0;
}

static int check_shards(const qkv_config *c, qkv_err *e) {
    if (c->train.shards > 0 && c->train.batch % c->train.shards)
        return fail(e, "train.shards: %d does not divide train.batch %d (each micro-batch gets "
                                 "batch/shards examples)", c->train.shards, c->train.batch);
    return 0;
}

static int check_schedule(const qkv_config *c, qkv_err *e) {
    if (c->optim.warmup > c->train.steps)
        return fail(e, "optim.warmup: %d is more than train.steps %d", c->optim.warmup,
                    c->train.steps);
    if (c->optim.schedule != QKV_SCHED_CONSTANT && c->optim.min_lr > c->optim.lr) {
        char a[40], b[40];
        fmt_double(c->optim.min_lr, a, sizeof a);
        fmt_double(c->optim.lr, b, sizeof b);
        return fail(e, "optim.min_lr: %s is more than optim.lr %s (the %s schedule "
                                 "decays from lr to min_lr)",
                    a, b, QKV_SCHEDULE_NAMES[c->optim.schedule]);
    }
    return 0;
}

/* cross-key checks, in order; add new ones here */
static int (*const CHECKS[])(const qkv_config *, qkv_err *) = {
    check_ranges,  check_heads,   check_model,    check_task,
    check_fractions, check_shards, check_schedule, check_task_files,
};

int qkv_config_validate(const qkv_config *c, qkv_err *e) {
    if (!c) return fail(e, "config: no config");
    for (size_t i = 0; i < sizeof CHECKS / sizeof CHECKS[0]; i++)
        if (CHECKS[i](c, e)) return -1;
    return 0;
}

/* --------------------------------------------------------------- effective config */

/* the object for key path p's section inside root, created as needed */
static cJSON *section_of(cJSON *root, const char *p) {
    cJSON *obj = root;
    for (;;) {
        size_t len = strcspn(p, ".");
        if (!p[len]) return obj;
        char name[PATH_MAX_LEN];
        snprintf(name, sizeof name, "%.*s", (int)len, p);
        cJSON *next = cJSON_GetObjectItemCaseSensitive(obj, name);
        if (!next) {
            next = cJSON_CreateObject();
            if (!next || !cJSON_AddItemToObject(obj, name, next)) {
                cJSON_Delete(next);
                return NULL;
            }
        }
        obj = next;
        p += len + 1;
    }
}

char *qkv_config_to_json(const qkv_config *c) {
    if (!c) return NULL;
    cJSON *root = cJSON_CreateObject();
    if (!root) return NULL;
    for (int i = 0; i < NKEYS; i++) {
        const key_def *k = &KEYS[i];
        const char *field = (const char *)c + k->off;
        cJSON *obj = section_of(root, k->path), *item = NULL;
        if (!obj) goto oom;
        char num[64];
        switch (k->kind) {
        case K_INT: {
            long long x = int_field(k, field);
            snprintf(num, sizeof num, "%lld", x);
            item = cJSON_CreateRaw(num);
            break;
        }
        case K_NUM: {
            /* cJSON prints with %.15g unless that is only approximately equal: not exact */
            double d;
            memcpy(&d, field, sizeof d);
            if (isfinite(d)) fmt_double(d, num, sizeof num);
            else snprintf(num, sizeof num, "null");
            item = cJSON_CreateRaw(num);
            break;
        }
        case K_BOOL: {
            bool b;
            memcpy(&b, field, sizeof b);
            item = cJSON_CreateBool(b);
            break;
        }
        case K_ENUM: {
            int x;
            memcpy(&x, field, sizeof x);
            item = x >= 0 && x < k->nnames ? cJSON_CreateString(k->names[x]) : cJSON_CreateNull();
            break;
        }
        case K_STR: {
            char s[2048];
            size_t n = strnlen(field, k->size);
            if (n >= sizeof s) n = sizeof s - 1;
            memcpy(s, field, n);
            s[n] = '\0';
            item = cJSON_CreateString(s);
            break;
        }
        }
        const char *name = strrchr(k->path, '.');
        name = name ? name + 1 : k->path;
        if (!item || !cJSON_AddItemToObject(obj, name, item)) {
            cJSON_Delete(item);
            goto oom;
        }
    }
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    if (!text) return NULL;
    /* plain malloc (cJSON's allocator may be hooked), with a final newline */
    size_t n = strlen(text);
    char *out = malloc(n + 2);
    if (out) {
        memcpy(out, text, n);
        out[n] = '\n';
        out[n + 1] = '\0';
    }
    cJSON_free(text);
    return out;
oom:
    cJSON_Delete(root);
    return NULL;
}
