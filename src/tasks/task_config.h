/* Which task to train on and its sizes, as plain C values (src/config fills them from JSON). */
#ifndef QKV_TASK_CONFIG_H
#define QKV_TASK_CONFIG_H

#include "qkv_api.h"

#include <stdbool.h>
#include "tensor/error.h"

typedef enum {
    QKV_TASK_COPY, QKV_TASK_REVERSE, QKV_TASK_SORT, QKV_TASK_RECALL, QKV_TASK_INDUCTION,
    QKV_TASK_FUZZY_RECALL, QKV_TASK_NOISY_RECALL, QKV_TASK_SELECTIVE_COPY, /* the MAD suite's */
    QKV_TASK_TEXT, QKV_TASK_FILE, QKV_TASK_COUNT
} qkv_task_kind;

/* names used in configs: "copy", "reverse", ... (index = enum value) */
QKV_APP_API extern const char *const QKV_TASK_NAMES[QKV_TASK_COUNT];

/* text: where the bytes come from */
typedef enum {
    QKV_CORPUS_FILE,     /* task.path is the text */
    QKV_CORPUS_FORTUNES, /* Debian's fortunes package's fortunes (English), or a directory's (task_data.h) */
    QKV_CORPUS_FORTUNES_ZH, /* Debian's fortunes-zh package's fortunes (Chinese), or a directory's */
    QKV_CORPUS_COUNT
} qkv_text_corpus;

/* names used in configs: "file", "fortunes", "fortunes-zh" (index = enum value) */
QKV_APP_API extern const char *const QKV_TEXT_CORPUS_NAMES[QKV_CORPUS_COUNT];

/* text: how its bytes become tokens: one token per byte, or the pieces of a sentencepiece
 * vocabulary (tokenizer.h) trained on the training part, byte-pair merges or a unigram model */
typedef enum { QKV_TOKENIZER_BYTES, QKV_TOKENIZER_BPE, QKV_TOKENIZER_UNIGRAM, QKV_TOKENIZER_COUNT } qkv_tokenizer_kind;

/* names used in configs: "bytes", "bpe", "unigram" (index = enum value) */
QKV_APP_API extern const char *const QKV_TOKENIZER_NAMES[QKV_TOKENIZER_COUNT];

/* where Debian's fortunes package (and fortunes-min, which it depends on) puts its fortune
 * files, and how to get them: the fortunes corpus's default directory and its one-line hint */
#define QKV_FORTUNES_DIR "/usr/share/games/fortunes"
#define QKV_FORTUNES_INSTALL "apt-get install fortunes (or scripts/install-deps.sh fortunes)"
#define QKV_FORTUNES_ZH_INSTALL "apt-get install fortunes-zh (or scripts/install-deps.sh fortunes-zh)"

typedef struct qkv_task_config {
    qkv_task_kind kind;
    int length;            /* copy/reverse/sort/induction: symbols per sequence;
                              selective_copy: positions the data tokens are scattered over */
    int symbols;           /* copy/reverse/sort/induction/selective_copy: size of the symbol alphabet */
    int pairs, keys, values, queries; /* recall, fuzzy_recall, noisy_recall: pairs per example, key
                                         and value alphabet sizes, queries per example (0 = pairs) */
    bool query_blank;      /* recall, noisy_recall: each query followed by a blank token, at which
                              its value is predicted (as a masked language model predicts at its
                              mask) instead of at the query itself */
    int key_len, value_len; /* fuzzy_recall: tokens per key and per value */
    int noise, noise_symbols; /* noisy_recall: noise tokens per example, size of their alphabet */
    int copy_tokens;       /* selective_copy: data tokens to copy (at most length) */
    qkv_text_corpus corpus; /* text: task.path is the text, or a directory of fortune files */
    char path[1024];       /* text: any file (corpus fortunes, fortunes-zh: the directory, "" = the
                              package's files in QKV_FORTUNES_DIR);
                              file: JSON Lines training data */
    char eval_path[1024];  /* file: JSON Lines evaluation data ("" = hold out the tail) */
    double eval_fraction;  /* text/file: share of the data held out for evaluation */
    double val_fraction;   /* text/file: share held out for validation, before the evaluation
                              part (0: no validation slice) */
    long long heldout_seed; /* the seed the held-out examples are drawn from (generated tasks:
                              the examples; text: the windows' positions), so that runs of every
                              seed can be evaluated on the same ones; -1: the task's seed
                              (train.seed), each seed its own */
    int seq_len;           /* text: window length (in tokens) */
    qkv_tokenizer_kind tokenizer; /* text: bytes, or subword pieces */
    int pieces;            /* text with pieces: the vocabulary's size (256 of them are bytes) */
    char tokenizer_path[1024]; /* text with pieces: a trained model to use ("" = train one on the
                                  training part; a run keeps it as tokenizer.model) */
} qkv_task_config;

/* the defaults of docs/config.md: recall, 8 pairs of 32 keys and 32 values */
QKV_APP_API qkv_task_config qkv_task_config_default(void);
/* the sizes of a generated task agree (recall: distinct keys, queries <= pairs, ...): 0, or -1
 * with e (QKV_ERR_USAGE) naming the key; text and file tasks pass (their files are checked when
 * opened) */
QKV_APP_API int qkv_task_config_check(const qkv_task_config *c, qkv_err *e);

#endif
