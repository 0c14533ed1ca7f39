/* File-backed tasks: byte-level text, and the user's sequences as JSON Lines. */
#include "tasks/task_data.h"
#include "io/fileio.h"
#include "io/strbuf.h"
#include "tasks/tokenizer.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <nettle/sha2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* whole file into memory (io/fileio.h), naming the config key in errors; an empty file is an
 * error (nothing to learn from) */
static int read_file(const char *path, const char *key, uint8_t **out, int64_t *len, qkv_err *e) {
    size_t n;
    char *buf = qkv__read_regular_file(path, &n, e); /* opened once, read once; no pipe */
    if (!buf) return qkv_err_prefix(e, "%s: ", key);
    if (n == 0) {
        free(buf);
        return qkv_err_set(e, QKV_ERR_FAIL, "%s: %s is empty", key, qkv__shown(path).s);
    }
    *out = (uint8_t *)buf;
    *len = (int64_t)n;
    return 0;
}

/* ---- text as subword pieces ------------------------------------------------------------- */

/* the tokenizer's serialized model: task.tokenizer_path's file, or one trained on the training
 * part [0, text_val) alone, so nothing of the held-out text shapes the vocabulary */
static int tokenizer_model(qkv_task *t, qkv_err *e) {
    qkv_err why; /* sentencepiece's reason, said in the task's words */
    if (t->cfg.tokenizer_path[0]) {
        uint8_t *m;
        int64_t n;
        if (read_file(t->cfg.tokenizer_path, "task.tokenizer_path", &m, &n, e)) return -1;
        t->tokenizer_model = (char *)m;
        t->tokenizer_model_len = (size_t)n;
        return 0;
    }
    qkv__spm_type type = t->cfg.tokenizer == QKV_TOKENIZER_BPE ? QKV__SPM_BPE : QKV__SPM_UNIGRAM;
    int rc = qkv__tokenizer_train(t->text, t->text_val, type, t->cfg.pieces, &t->tokenizer_model,
                                  &t->tokenizer_model_len, &why);
    if (rc == -2) /* the text's fault, not the count's */
        return qkv_err_set(e, QKV_ERR_FAIL, "task.path: the %lld training bytes of %s hold %s", (long long)t->text_val,
                           qkv__shown(t->cfg.path).s, why.msg);
    if (rc)
        return qkv_err_set(e, QKV_ERR_FAIL, "task.pieces: a %s vocabulary of %d pieces cannot be trained on the %lld "
                           "training bytes: %s%s", QKV_TOKENIZER_NAMES[t->cfg.tokenizer], t->cfg.pieces,
                           (long long)t->text_val, why.msg,
                           type == QKV__SPM_UNIGRAM ? " (a unigram vocabulary's pieces are substrings its text repeats: "
                                                      "task.tokenizer \"bpe\" may train where it cannot)" : "");
    return 0;
}

/* the text's three parts, each encoded alone (no token straddles two), one after another in
 * t->ids; the model's vocabulary is the tokenizer's */
static int open_tokens(qkv_task *t, qkv_err *e) {
    const char *key = t->cfg.tokenizer_path[0] ? "task.tokenizer_path" : "task.tokenizer";
    if (tokenizer_model(t, e)) return -1;
    struct sha256_ctx h; /* the model's name in the run's files (train/vocabulary.h) */
    uint8_t d[SHA256_DIGEST_SIZE];
    sha256_init(&h);
    sha256_update(&h, t->tokenizer_model_len, (const uint8_t *)t->tokenizer_model);
    sha256_digest(&h, sizeof d, d);
    for (int i = 0; i < SHA256_DIGEST_SIZE; i++) snprintf(t->tokenizer_sha256 + 2 * i, 3, "%02x", d[i]);
    t->tokenizer = qkv__tokenizer_load(t->tokenizer_model, t->tokenizer_model_len, e);
    if (!t->tokenizer && t->cfg.tokenizer_path[0])
        return qkv_err_prefix(e, "%s: %s: ", key, qkv__shown(t->cfg.tokenizer_path).s);
    if (!t->tokenizer) return qkv_err_prefix(e, "%s: ", key);
    int size = qkv__tokenizer_size(t->tokenizer);
    if (size != t->cfg.pieces)
        return qkv_err_set(e, QKV_ERR_FAIL, "task.tokenizer_path: %s has %d pieces, but task.pieces is %d",
                           qkv__shown(t->cfg.tokenizer_path).s, size, t->cfg.pieces);
    int64_t cut[4] = {0, t->text_val, t->text_split, t->text_len}, at[4] = {0};
    int32_t *part[3] = {NULL};
    int64_t n[3] = {0};
    int rc = 0;
    for (int p = 0; p < 3 && !rc; p++)
        if (qkv__tokenizer_encode(t->tokenizer, t->text + cut[p], cut[p + 1] - cut[p], &part[p], &n[p], e))
            rc = qkv_err_prefix(e, "%s: ", key);
    if (!rc && !(t->ids = malloc((size_t)(n[0] + n[1] + n[2]) * sizeof *t->ids)))
        rc = qkv_err_set(e, QKV_ERR_FAIL, "out of memory for the text's tokens");
    for (int p = 0; p < 3 && !rc; p++) {
        memcpy(t->ids + at[p], part[p], (size_t)n[p] * sizeof *t->ids);
        at[p + 1] = at[p] + n[p];
    }
    for (int p = 0; p < 3; p++) free(part[p]);
    if (rc) return -1;
    t->n_ids = at[3], t->ids_val = at[1], t->ids_split = at[2];
    t->vocab = size;
    int64_t need = t->seq_len + 1;
    if (t->ids_val < need || t->n_ids - t->ids_split < need)
        return qkv_err_set(e, QKV_ERR_FAIL, "task.seq_len: %d tokens per window, but the training part has %lld tokens "
                           "and the evaluation part %lld; both need task.seq_len + 1", t->seq_len,
                           (long long)t->ids_val, (long long)(t->n_ids - t->ids_split));
    if (t->ids_split - t->ids_val < need) t->text_val = t->text_split, t->ids_val = t->ids_split; /* no validation */
    return 0;
}

void qkv__task_close_tokens(qkv_task *t) {
    qkv__tokenizer_free(t->tokenizer);
    free(t->tokenizer_model);
    free(t->ids);
}

int qkv_task_target_bytes(const qkv_task *t, int32_t tgt) {
    int len = 1;
    if (t->tokenizer) qkv__tokenizer_piece(t->tokenizer, tgt, &len);
    return len;
}

int qkv_task_token_bytes(const qkv_task *t, int32_t id, uint8_t *out) {
    if (!t->tokenizer) {
        out[0] = (uint8_t)id;
        return 1;
    }
    int len;
    const char *p = qkv__tokenizer_piece(t->tokenizer, id, &len);
    if (len > QKV_TOKEN_BYTES_MAX) len = QKV_TOKEN_BYTES_MAX;
    memcpy(out, p, (size_t)len);
    return len;
}

int qkv_task_encode(const qkv_task *t, const uint8_t *bytes, int64_t n, int32_t **ids, int64_t *n_ids, qkv_err *e) {
    if (!t->tokenizer) return qkv_err_set(e, QKV_ERR_FAIL, "the task has no tokenizer");
    return qkv__tokenizer_encode(t->tokenizer, bytes, n, ids, n_ids, e);
}

int qkv__task_open_text(qkv_task *t, qkv_err *e) {
    const qkv__fortunes_package *pkg = qkv__fortunes_package_of(t->cfg.corpus);
    bool fortunes = pkg != NULL;
    const char *src = fortunes && !t->cfg.path[0] ? QKV_FORTUNES_DIR : t->cfg.path;
    const char *key = fortunes && !t->cfg.path[0] ? "task.corpus" : "task.path";
    if (fortunes ? qkv__task_read_fortunes(src, t->cfg.path[0] ? NULL : pkg, pkg->colour, key, &t->text,
                                           &t->text_len, NULL, NULL, e)
                 : read_file(src, key, &t->text, &t->text_len, e))
        return -1;
    t->vocab = 256;
    t->seq_len = t->cfg.seq_len;
    /* a part of the fortunes starts where a fortune does: the cut moves forward to the next one */
    int64_t len = t->text_len;
    int64_t split = len - (int64_t)((double)len * t->cfg.eval_fraction);
    if (fortunes) split = qkv__task_fortune_start(t->text, len, split);
    t->text_split = split;
    int64_t need = t->seq_len + 1;
    if (t->text_split < need || len - t->text_split < need) {
        return qkv_err_set(e, QKV_ERR_FAIL, "%s: %s has %lld bytes; with task.eval_fraction %g both parts "
                           "need at least task.seq_len + 1 = %lld bytes", key, qkv__shown(src).s, (long long)len,
                           t->cfg.eval_fraction, (long long)need);
    }
    /* the validation slice, cut from the end of the training part; none when either would be
     * shorter than a window */
    int64_t val = t->text_split - (int64_t)((double)len * t->cfg.val_fraction);
    if (fortunes) val = qkv__task_fortune_start(t->text, len, val < 0 ? 0 : val);
    t->text_val = t->cfg.val_fraction > 0 && val >= need && t->text_split - val >= need ? val : t->text_split;
    return t->cfg.tokenizer == QKV_TOKENIZER_BYTES ? 0 : open_tokens(t, e);
}

void qkv__task_text_example(const qkv_task *t, qkv_rng *r, qkv_split split, int32_t *tok, int32_t *tgt) {
    if (t->tokenizer) { /* the same draw over the parts' tokens */
        int64_t lo = split == QKV_SPLIT_EVAL ? t->ids_split : split == QKV_SPLIT_VAL ? t->ids_val : 0;
        int64_t hi = split == QKV_SPLIT_EVAL ? t->n_ids : split == QKV_SPLIT_VAL ? t->ids_split : t->ids_val;
        int64_t at = lo + (int64_t)qkv_rng_below(r, (uint64_t)(hi - lo - t->seq_len));
        for (int i = 0; i < t->seq_len; i++) {
            tok[i] = t->ids[at + i];
            tgt[i] = t->ids[at + i + 1];
        }
        return;
    }
    int64_t lo = split == QKV_SPLIT_EVAL ? t->text_split : split == QKV_SPLIT_VAL ? t->text_val : 0;
    int64_t hi = split == QKV_SPLIT_EVAL ? t->text_len : split == QKV_SPLIT_VAL ? t->text_split : t->text_val;
    int64_t at = lo + (int64_t)qkv_rng_below(r, (uint64_t)(hi - lo - t->seq_len));
    for (int i = 0; i < t->seq_len; i++) {
        tok[i] = t->text[at + i];
        tgt[i] = t->text[at + i + 1];
    }
}

/* a key for a one-line message: control bytes as \xNN, cut after 60 bytes */
static const char *show_key(const char *k, char *out, size_t n) {
    size_t o = 0, i = 0;
    for (; k[i] && i < 60 && o + 5 < n; i++) {
        unsigned char ch = (unsigned char)k[i];
        if (ch < 0x20 || ch == 0x7f) o += (size_t)snprintf(out + o, n - o, "\\x%02x", ch);
        else out[o++] = (char)ch;
    }
    if (k[i] && o + 4 < n) { memcpy(out + o, "...", 3); o += 3; }
    out[o] = 0;
    return out;
}

/* an array of integers in [lo, hi] into a new int32 buffer */
static int int_array(const cJSON *a, const char *what, int n_expect, int32_t lo, int32_t hi,
                     int32_t *dst, const char *label, int line, qkv_err *e) {
    if (!cJSON_IsArray(a)) {
        return qkv_err_set(e, QKV_ERR_FAIL, "%s:%d: \"%s\" must be an array of integers", label, line, what);
    }
    int n = cJSON_GetArraySize(a);
    if (n_expect >= 0 && n != n_expect) {
        return qkv_err_set(e, QKV_ERR_FAIL, "%s:%d: \"%s\" has %d entries but \"input\" has %d (ragged lengths)",
                           label, line, what, n, n_expect);
    }
    int i = 0;
    for (const cJSON *x = a->child; x; x = x->next, i++) {
        double v = x->valuedouble; /* range first: converting a huge value or NaN is undefined */
        if (!cJSON_IsNumber(x) || !(v >= lo && v <= hi) || v != (double)(int32_t)v) {
            return qkv_err_set(e, QKV_ERR_FAIL, "%s:%d: \"%s\"[%d] must be an integer in [%d, %d]", label, line,
                               what, i, lo, hi);
        }
        dst[i] = (int32_t)v;
    }
    return n;
}

int qkv__task_parse_jsonl(qkv_task *t, const char *text, size_t len, const char *label, qkv_err *e) {
    const char *p = text, *end = text + len;
    int line = 0, cap = t->n_seqs;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        line++;
        const char *s = p;
        p = nl ? nl + 1 : end;
        while (s < le && (*s == ' ' || *s == '\t' || *s == '\r')) s++;
        if (s == le) continue; /* blank line */
        char *one = malloc((size_t)(le - s) + 1);
        if (!one) return qkv_err_set(e, QKV_ERR_FAIL, "%s: out of memory", label);
        memcpy(one, s, (size_t)(le - s));
        one[le - s] = 0;
        const char *stop = NULL;
        cJSON *j = cJSON_ParseWithLengthOpts(one, (size_t)(le - s) + 1, &stop, 1);
        if (!j || !cJSON_IsObject(j)) {
            int col = stop ? (int)(stop - one) + 1 : 1;
            qkv_err_set(e, QKV_ERR_FAIL, "%s:%d:%d: expected a JSON object {\"input\": [...], \"target\": [...]}",
                        label, line, j ? 1 : col);
            cJSON_Delete(j);
            free(one);
            return -1;
        }
        free(one);
        for (const cJSON *k = j->child; k; k = k->next)
            if (strcmp(k->string, "input") && strcmp(k->string, "target") && strcmp(k->string, "mask")) {
                char shown[256];
                qkv_err_set(e, QKV_ERR_FAIL, "%s:%d: unknown key \"%s\" (expected input, target, mask)",
                            label, line, show_key(k->string, shown, sizeof shown));
                cJSON_Delete(j);
                return -1;
            }
        const cJSON *in = cJSON_GetObjectItemCaseSensitive(j, "input");
        const cJSON *tg = cJSON_GetObjectItemCaseSensitive(j, "target");
        const cJSON *mk = cJSON_GetObjectItemCaseSensitive(j, "mask");
        int n = in && cJSON_IsArray(in) ? cJSON_GetArraySize(in) : 0;
        if (!in || !tg || n < 1 || n > 65536) {
            qkv_err_set(e, QKV_ERR_FAIL, "%s:%d: needs \"input\" and \"target\" arrays of 1 to 65536 tokens",
                        label, line);
            cJSON_Delete(j);
            return -1;
        }
        if (t->n_seqs == cap) {
            cap = cap ? 2 * cap : 64;
            qkv_seq *ns = realloc(t->seqs, (size_t)cap * sizeof *ns);
            if (!ns) { cJSON_Delete(j); return qkv_err_set(e, QKV_ERR_FAIL, "%s: out of memory", label); }
            t->seqs = ns;
        }
        int32_t *buf = malloc((size_t)n * 3 * sizeof(int32_t));
        if (!buf) { cJSON_Delete(j); return qkv_err_set(e, QKV_ERR_FAIL, "%s: out of memory", label); }
        int32_t *mask = buf + 2 * n;
        int rc = int_array(in, "input", -1, 0, 1 << 20, buf, label, line, e) < 0 ||
                 int_array(tg, "target", n, QKV_IGNORE, 1 << 20, buf + n, label, line, e) < 0 ||
                 (mk && int_array(mk, "mask", n, 0, 1, mask, label, line, e) < 0);
        for (int i = 0; !rc && i < n; i++)
            if (buf[n + i] < 0 && buf[n + i] != QKV_IGNORE) {
                qkv_err_set(e, QKV_ERR_FAIL, "%s:%d: \"target\"[%d] is %d; targets are tokens or -100 (no loss)",
                            label, line, i, buf[n + i]);
                rc = 1;
            }
        cJSON_Delete(j);
        if (rc) { free(buf); return -1; }
        if (mk)
            for (int i = 0; i < n; i++) if (!mask[i]) buf[n + i] = QKV_IGNORE;
        t->seqs[t->n_seqs++] = (qkv_seq){buf, buf + n, n, line};
        if (n > t->seq_len) t->seq_len = n;
        for (int i = 0; i < 2 * n; i++) if (buf[i] + 1 > t->vocab) t->vocab = buf[i] + 1;
    }
    return 0;
}

static int load_jsonl(qkv_task *t, const char *path, const char *key, qkv_err *e) {
    uint8_t *buf;
    int64_t len;
    if (read_file(path, key, &buf, &len, e)) return -1;
    int before = t->n_seqs;
    qkv_shown label = qkv__shown(path); /* PATH:LINE: in its messages */
    int rc = qkv__task_parse_jsonl(t, (const char *)buf, (size_t)len, label.s, e);
    free(buf);
    if (!rc && t->n_seqs == before) {
        qkv_err_set(e, QKV_ERR_FAIL, "%s: %s holds no sequences", key, label.s);
        rc = -1;
    }
    return rc;
}

int qkv__task_open_file(qkv_task *t, qkv_err *e) {
    t->variable_length = true;
    if (load_jsonl(t, t->cfg.path, "task.path", e)) return -1;
    if (t->cfg.eval_path[0]) {
        t->n_train = t->n_seqs;
        if (load_jsonl(t, t->cfg.eval_path, "task.eval_path", e)) return -1;
    } else {
        int held = (int)((double)t->n_seqs * t->cfg.eval_fraction);
        if (held < 1 || held >= t->n_seqs) {
            return qkv_err_set(e, QKV_ERR_FAIL, "task.path: %d sequences cannot be split with task.eval_fraction %g "
                               "(give task.eval_path, or more data)", t->n_seqs, t->cfg.eval_fraction);
        }
        t->n_train = t->n_seqs - held;
    }
    /* the validation sequences: val_fraction of the data (of the training file when the
     * evaluation data is a file of its own), from the end of the training part; none when that
     * is less than one sequence or would leave none to train on */
    int val = (int)((double)(t->cfg.eval_path[0] ? t->n_train : t->n_seqs) * t->cfg.val_fraction);
    if (val >= 1 && val < t->n_train) {
        t->n_val = val;
        t->n_train -= val;
    }
    if (t->vocab < 2) t->vocab = 2;
    return 0;
}

int qkv_task_open_eval_file(qkv_task *t, const char *path, uint64_t seed, qkv_err *e) {
    memset(t, 0, sizeof *t);
    t->cfg.kind = QKV_TASK_FILE;
    t->seed = seed;
    t->variable_length = true;
    if (strlen(path) >= sizeof t->cfg.path) { /* task.path's limit: it names the file in messages */
        return qkv_err_set(e, QKV_ERR_FAIL, "--data: %s: longer than %zu bytes, the most a data file's path may be",
                           qkv__shown(path).s, sizeof t->cfg.path - 1);
    }
    memcpy(t->cfg.path, path, strlen(path) + 1);
    if (load_jsonl(t, path, "--data", e)) return -1;
    t->n_train = 0; /* every sequence is for evaluation */
    return 0;
}
