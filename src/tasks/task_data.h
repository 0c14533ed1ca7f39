/* Internal: tasks backed by files (text, JSON Lines). */
#ifndef QKV_TASK_DATA_H
#define QKV_TASK_DATA_H

#include "qkv_api.h"

#include "tasks/task.h"

/* text: read cfg.path as bytes (corpus fortunes or fortunes-zh: the fortunes of the directory
 * cfg.path, or of its package's files in QKV_FORTUNES_DIR); the tail eval_fraction evaluates, the val_fraction before it validates
 * (fortunes: each part starts where a fortune does, so none straddles two parts) */
QKV_INTERNAL int qkv__task_open_text(qkv_task *t, qkv_err *e);
/* text with pieces: free the tokenizer, its model and the ids (qkv_task_close) */
QKV_INTERNAL void qkv__task_close_tokens(qkv_task *t);
/* a Debian package of fortune files: its name, how to install it, the fortune files it puts in
 * QKV_FORTUNES_DIR (NULL-terminated), whether they hold terminal colour codes to leave out */
typedef struct qkv__fortunes_package {
    const char *name, *install;
    const char *const *files;
    bool colour;
} qkv__fortunes_package;
/* the package a fortunes corpus reads (fortunes, fortunes-zh); NULL for any other corpus */
QKV_INTERNAL const qkv__fortunes_package *qkv__fortunes_package_of(qkv_text_corpus corpus);
/* a fortunes corpus (fortunes.c): every fortune of dir's fortune files once (pkg: its files,
 * each of which must be there; NULL: every fortune file of dir), in a fixed shuffled order, each
 * followed by the line "%"; colour: without terminal colour codes; a malloc'd text into *out,
 * *len bytes; how many files and fortunes it took into *n_files and *n_fortunes (either may be
 * NULL). key names the config key in messages. 0, or -1 with e, QKV_ERR_FAIL (a missing
 * directory or file, or one without fortunes, names the package to install) */
QKV_INTERNAL int qkv__task_read_fortunes(const char *dir, const qkv__fortunes_package *pkg, bool colour,
                                        const char *key, uint8_t **out, int64_t *len, int *n_files,
                                        int64_t *n_fortunes, qkv_err *e);
/* the first position >= pos where a fortune of the corpus starts (len when none does) */
QKV_INTERNAL int64_t qkv__task_fortune_start(const uint8_t *text, int64_t len, int64_t pos);
/* one window of seq_len bytes (targets: the next bytes) from the split's part of the text */
QKV_INTERNAL void qkv__task_text_example(const qkv_task *t, qkv_rng *r, qkv_split split, int32_t *tok, int32_t *tgt);
/* file: JSON Lines {"input": [...], "target": [...], "mask": [...]?} from cfg.path (and cfg.eval_path) */
QKV_INTERNAL int qkv__task_open_file(qkv_task *t, qkv_err *e);
/* parse JSON Lines text into sequences appended to t->seqs (label names it in errors) */
QKV_INTERNAL int qkv__task_parse_jsonl(qkv_task *t, const char *text, size_t len, const char *label, qkv_err *e);

#endif
