/* Internal: subword tokens for the text task, through Debian's sentencepiece (tokenizer_spm.cc,
 * the one C++ file: sentencepiece has no C interface). A vocabulary is trained on the training
 * part's lines only and is lossless: no normalization, no dummy prefix, whitespace kept, and
 * every byte the pieces do not cover falls back to one of 256 byte pieces, so the pieces of a
 * text, concatenated, are exactly its bytes (checked on every encode). That is what lets a token
 * model's loss be reported in bits per byte of the same held-out bytes as a byte model's. */
#ifndef QKV_TOKENIZER_H
#define QKV_TOKENIZER_H

#include "qkv_api.h"

#include <stddef.h>
#include <stdint.h>
#include "tensor/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct qkv__tokenizer qkv__tokenizer;

/* sentencepiece's model types that qkv trains (index = qkv_tokenizer_kind - 1) */
typedef enum { QKV__SPM_BPE, QKV__SPM_UNIGRAM } qkv__spm_type;

/* a vocabulary of `pieces` pieces trained on text[0, len): on what qkv__tokenizer_encode hands
 * sentencepiece, its lines cut where a byte only a byte piece stands for is, and into chunks of
 * at most 1 MiB (the longest sentence its trainer reads); when the text has more characters than
 * fit beside the 257 pieces that are not characters, cut too at every character but the most
 * frequent ones that fill half that room, rounded up (the rest are spelled by byte pieces). One
 * thread, every run in order, no sampling: the same text gives the same model, byte for byte; the
 * serialized model (sentencepiece's ModelProto, what spm_train writes as NAME.model) into a malloc'd
 * *model of *model_len bytes. 0, or -1 with sentencepiece's reason in why (-2: the text holds
 * nothing for the trainer, said in why); each why of this file is QKV_ERR_FAIL and a phrase for
 * the caller's message */
QKV_INTERNAL int qkv__tokenizer_train(const uint8_t *text, int64_t len, qkv__spm_type type, int pieces, char **model,
                                      size_t *model_len, qkv_err *why);
/* a tokenizer from a serialized model; NULL with why when it is not one qkv can use (not a
 * sentencepiece model, or one whose pieces do not reproduce text byte for byte: normalizing, a
 * dummy prefix or no byte fallback) */
QKV_INTERNAL qkv__tokenizer *qkv__tokenizer_load(const char *model, size_t len, qkv_err *why);
QKV_INTERNAL void qkv__tokenizer_free(qkv__tokenizer *tk);
/* how many pieces (token ids are in [0, size)) */
QKV_INTERNAL int qkv__tokenizer_size(const qkv__tokenizer *tk);
/* the bytes piece `id` stands for (a byte piece: its one byte; "\xe2\x96\x81", sentencepiece's
 * space mark, is a space), valid while tk lives; *len bytes, not NUL-terminated */
QKV_INTERNAL const char *qkv__tokenizer_piece(const qkv__tokenizer *tk, int id, int *len);
/* text[0, len) as token ids, line by line (a line's ids, then the newline's byte piece), into a
 * malloc'd *ids of *n_ids; a space the vocabulary has no piece for is its byte piece (where
 * sentencepiece would spell its space mark, U+2581, in bytes); the pieces' bytes are checked to
 * be the text's. 0, or -1 with why (naming the byte offset where they differ) */
QKV_INTERNAL int qkv__tokenizer_encode(const qkv__tokenizer *tk, const uint8_t *text, int64_t len, int32_t **ids,
                                       int64_t *n_ids, qkv_err *why);

#ifdef __cplusplus
}
#endif

#endif
