/* Internal: tasks backed by files (text, JSON Lines). */
#ifndef QKV_TASK_DATA_H
#define QKV_TASK_DATA_H

#include "qkv_api.h"

#include "tasks/task.h"

/* text: read cfg.path as bytes; the tail eval_fraction evaluates, the val_fraction before it validates */
QKV_INTERNAL int qkv_task_open_text(qkv_task *t, char *err, int errlen);
/* one window of seq_len bytes (targets: the next bytes) from the split's part of the text */
QKV_INTERNAL void qkv_task_text_example(const qkv_task *t, qkv_rng *r, qkv_split split, int32_t *tok, int32_t *tgt);
/* file: JSON Lines {"input": [...], "target": [...], "mask": [...]?} from cfg.path (and cfg.eval_path) */
QKV_INTERNAL int qkv_task_open_file(qkv_task *t, char *err, int errlen);
/* parse JSON Lines text into sequences appended to t->seqs (label names it in errors) */
QKV_INTERNAL int qkv_task_parse_jsonl(qkv_task *t, const char *text, size_t len, const char *label, char *err, int errlen);

#endif
