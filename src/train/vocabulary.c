/* A token run's vocabulary, bound to its model (vocabulary.h). */
#include "train/vocabulary.h"
#include "io/safetensors.h"
#include "io/strbuf.h"
#include "train/run_dir.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int qkv_vocabulary_meta_of(const qkv_task *t, qkv_vocabulary_meta *v) {
    if (!t->tokenizer) return 0;
    snprintf(v->pieces, sizeof v->pieces, "%d", t->vocab);
    const char *pairs[6] = {QKV_META_TOKENIZER, QKV_TOKENIZER_NAMES[t->cfg.tokenizer], QKV_META_TOKENIZER_PIECES,
                            v->pieces, QKV_META_TOKENIZER_SHA256, t->tokenizer_sha256};
    memcpy(v->pairs, pairs, sizeof pairs);
    return 3;
}

/* s is min to max characters, each one of chars */
static bool well_formed(const char *s, size_t min, size_t max, const char *chars) {
    size_t n = strlen(s);
    return n >= min && n <= max && strspn(s, chars) == n;
}

int qkv_check_vocabulary(const char *path, const qkv_task *t, qkv_err *e) {
    qkv_safetensors *st;
    if (qkv_st_read(path, &st, e)) return -1;
    const char *sha = qkv_st_meta(st, QKV_META_TOKENIZER_SHA256), *kind = qkv_st_meta(st, QKV_META_TOKENIZER),
               *pieces = qkv_st_meta(st, QKV_META_TOKENIZER_PIECES);
    const char *bad = !sha || !kind || !pieces ? NULL /* no record, or a partial one: */
                      : !well_formed(sha, 64, 64, "0123456789abcdef") ? QKV_META_TOKENIZER_SHA256
                      : strcmp(kind, "bpe") && strcmp(kind, "unigram") ? QKV_META_TOKENIZER
                      : !well_formed(pieces, 1, 9, "0123456789") ? QKV_META_TOKENIZER_PIECES : NULL;
    if (sha && (!kind || !pieces)) bad = kind ? QKV_META_TOKENIZER_PIECES : QKV_META_TOKENIZER;
    if (!sha && (kind || pieces)) bad = QKV_META_TOKENIZER_SHA256; /* the record without its digest */
    char was[256] = "";
    if (sha && !bad) snprintf(was, sizeof was, "the %s vocabulary of %s pieces of sha256 %s", kind, pieces, sha);
    int rc = 0;
    if (bad) /* its values go into messages: never shown as they are */
        rc = qkv_err_set(e, QKV_ERR_FAIL, "%s: metadata %s is %s: the file is damaged", qkv__shown(path).s, bad,
                         qkv_st_meta(st, bad) ? "malformed"
                         : sha ? "missing beside " QKV_META_TOKENIZER_SHA256
                               : kind ? "missing beside " QKV_META_TOKENIZER : "missing beside " QKV_META_TOKENIZER_PIECES);
    else if (sha && !t->tokenizer)
        rc = qkv_err_set(e, QKV_ERR_FAIL, "%s was trained with %s, but the config reads bytes (task.tokenizer)",
                         qkv__shown(path).s, was);
    else if (sha && strcmp(sha, t->tokenizer_sha256)) {
        char file[1200];
        if (t->cfg.tokenizer_path[0]) snprintf(file, sizeof file, "%s", qkv__shown(t->cfg.tokenizer_path).s);
        else snprintf(file, sizeof file, "the vocabulary trained on the task's text (no " QKV_RUN_TOKENIZER " beside it)");
        rc = qkv_err_set(e, QKV_ERR_FAIL, "%s: sha256 %s, but %s was trained with %s (another run's or an edited "
                         "vocabulary: its ids would stand for other text)", file, t->tokenizer_sha256,
                         qkv__shown(path).s, was);
    }
    qkv_st_free(st);
    return rc;
}

void qkv_use_run_tokenizer(qkv_task_config *tc, const char *file_in_run, bool is_dir) {
    if (tc->tokenizer == QKV_TOKENIZER_BYTES) return;
    const char *slash = is_dir ? NULL : strrchr(file_in_run, '/');
    int dir_len = is_dir ? (int)strlen(file_in_run) : slash ? (int)(slash - file_in_run) : 1;
    const char *dir = is_dir || slash ? file_in_run : ".";
    char *path = qkv__pathf("%.*s/" QKV_RUN_TOKENIZER, dir_len, dir);
    struct stat st;
    if (path && strlen(path) < sizeof tc->tokenizer_path && stat(path, &st) == 0 && S_ISREG(st.st_mode))
        memcpy(tc->tokenizer_path, path, strlen(path) + 1);
    free(path);
}
