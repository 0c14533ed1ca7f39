/* A token run's vocabulary, bound to its model. The text task's token ids (task.tokenizer bpe or
 * unigram) mean what its tokenizer says they mean, so the model files of a run record which one
 * it trained with, as metadata beside qkv_config:
 *   qkv_tokenizer          task.tokenizer ("bpe" or "unigram")
 *   qkv_tokenizer_pieces   how many pieces
 *   qkv_tokenizer_sha256   the SHA-256 of the serialized sentencepiece model: of the bytes of the
 *                          run's tokenizer.model (what `sha256sum tokenizer.model` prints)
 * and every reader of a model (qkv eval, sample, inspect, train --resume, the diagnostics) opens
 * the run's kept tokenizer.model and checks that it is that one. */
#ifndef QKV_VOCABULARY_H
#define QKV_VOCABULARY_H

#include "qkv_api.h"

#include "tensor/error.h"
#include "tasks/task.h"

#include <stdbool.h>

#define QKV_META_TOKENIZER "qkv_tokenizer"
#define QKV_META_TOKENIZER_PIECES "qkv_tokenizer_pieces"
#define QKV_META_TOKENIZER_SHA256 "qkv_tokenizer_sha256"

/* the metadata pairs that record a task's tokenizer */
typedef struct qkv_vocabulary_meta {
    char pieces[16];
    const char *pairs[6]; /* key, value, ...; into the task and this struct */
} qkv_vocabulary_meta;

/* t's tokenizer as metadata pairs in *v; how many pairs: 3, or 0 when t has no tokenizer */
QKV_APP_API int qkv_vocabulary_meta_of(const qkv_task *t, qkv_vocabulary_meta *v);

/* whether the model file at path (a model or checkpoint file) was trained with t's tokenizer: 0
 * when the file records t's digest, or records none (a model of a qkv from before the record,
 * or saved without it: taken as it is, with the vocabulary the caller opened, the run's kept
 * copy); -1 with one line in e (QKV_ERR_FAIL) naming the tokenizer's file and both digests, or
 * saying that t reads bytes where the model read pieces, or that the record is malformed or
 * partial (the file is damaged) */
QKV_APP_API int qkv_check_vocabulary(const char *path, const qkv_task *t, qkv_err *e);

/* the text task's tokenizer kept beside a run: when tc reads pieces (task.tokenizer bpe or
 * unigram) and the run directory holds tokenizer.model, tc's task.tokenizer_path becomes that
 * file (in place of the path the run was made with, if any: a run is self-contained), so qkv
 * eval, sample, inspect and --resume use the vocabulary the run trained with. file_in_run: any
 * file of the run directory (its checkpoint), or the directory with is_dir. Nothing changes for
 * other tasks, when the file is missing (qkv_check_vocabulary then checks what tc gives) or when
 * its path is too long */
QKV_APP_API void qkv_use_run_tokenizer(qkv_task_config *tc, const char *file_in_run, bool is_dir);

#endif
