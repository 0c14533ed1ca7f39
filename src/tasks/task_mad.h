/* Internal: three tasks of the MAD suite (Poli et al. 2024, "Mechanistic Design and Scaling of
 * Hybrid Architectures"): fuzzy_recall, noisy_recall and selective_copy, in qkv's fixed-length
 * form (docs/config.md gives each one's format), and the key-value draw recall shares. */
#ifndef QKV_TASK_MAD_H
#define QKV_TASK_MAD_H

#include "qkv_api.h"

#include "tasks/task.h"

/* the Q queries of recall and noisy_recall into tok/tgt: the asked keys (keys[order[i]]), each
 * with its value as target; with task.query_blank each followed by the blank token (the task's
 * last token id), the value the target at the blank and none at the key (2Q positions) */
QKV_INTERNAL void qkv__task_put_queries(const qkv_task_config *c, int32_t *tok, int32_t *tgt, int Q,
                                        const int32_t *keys, const int32_t *vals, const int32_t *order);
/* P distinct keys in [0, K), P values in [K, K + V), order a random permutation of [0, P):
 * the draws of recall and noisy_recall (P <= 4096, K >= P) */
QKV_INTERNAL void qkv__task_draw_pairs(qkv_rng *r, int P, int K, int V, int32_t *keys, int32_t *vals, int32_t *order);
/* vocab and positions of a MAD task (c->kind one of the three) after checking its sizes: 0, or
 * -1 with e (QKV_ERR_USAGE) naming the key */
QKV_INTERNAL int qkv__task_mad_shape(const qkv_task_config *c, int *vocab, int *seq_len, qkv_err *e);
/* one example into tok/tgt (t->seq_len positions each, every one written) from r */
QKV_INTERNAL void qkv__task_mad_example(const qkv_task *t, qkv_rng *r, int32_t *tok, int32_t *tgt);

#endif
