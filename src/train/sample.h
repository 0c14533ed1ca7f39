/* Generating tokens from a trained model, one at a time (qkv sample, the ablation report's
 * text samples). */
#ifndef QKV_SAMPLE_H
#define QKV_SAMPLE_H

#include "qkv_api.h"

#include "tensor/error.h"

#include "nn/model.h"

typedef struct qkv_sample_opts {
    int tokens;          /* how many to generate (>= 1) */
    double temperature;  /* the logits are divided by it before the softmax; 0 = greedy: the most
                            likely token (the lowest id on a tie) */
    int top_k;           /* draw among the k most likely tokens only (0 = all; 1 = greedy) */
    uint64_t seed;       /* the draws' stream: the same seed, the same tokens */
    bool bf16;           /* the products in bf16 (a bf16 run's, train.precision; qkv_ctx_set_bf16) */
} qkv_sample_opts;

/* Generate o->tokens tokens into out after prompt[0, n_prompt) (n_prompt >= 1, tokens in
 * [0, model.vocab)): each is drawn from the model's distribution for the next token, read at
 * the last position of the context (the prompt and the tokens generated so far; a context
 * longer than model.seq_len keeps its last seq_len tokens), with p(v) proportional to
 * exp((logit_v - max) / temperature) over the top_k largest logits. Draws use qkv's generator
 * and qkv's own exp, and the forward passes one thread's kernels: the same tokens for the same
 * model, prompt, options and seed on any machine and thread count. 0, or -1 with one line in
 * e (a bad option or prompt token, out of memory). */
QKV_APP_API int qkv_sample(qkv_model *m, const int32_t *prompt, int n_prompt, const qkv_sample_opts *o, int32_t *out,
                       qkv_err *e);

#endif
