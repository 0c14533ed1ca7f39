/* Baselines for a byte-level model's bits per byte, on the text task's evaluation slice:
 * what xz -9 and a unigram model need per byte of the same held-out text. */
#include "tasks/task.h"

#include <lzma.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* xz -9's output size for buf: liblzma's stream encoder with xz's settings for -9 (preset 9,
 * not extreme; CRC64 check; one thread), so the size equals `xz -9 -c FILE | wc -c` (the
 * one-shot buffer encoder would write 4 more bytes: block sizes in its header). 0, or -1 */
static int xz9_size(const uint8_t *buf, size_t n, uint64_t *size, qkv_err *e) {
    size_t cap = lzma_stream_buffer_bound(n);
    uint8_t *out = malloc(cap ? cap : 1);
    lzma_stream s = LZMA_STREAM_INIT;
    lzma_ret r = out ? lzma_easy_encoder(&s, 9, LZMA_CHECK_CRC64) : LZMA_MEM_ERROR;
    if (r == LZMA_OK) {
        s.next_in = buf;
        s.avail_in = n;
        s.next_out = out;
        s.avail_out = cap;
        do r = lzma_code(&s, LZMA_FINISH);
        while (r == LZMA_OK && s.avail_out > 0);
    }
    *size = s.total_out;
    lzma_end(&s);
    free(out);
    if (r != LZMA_STREAM_END) {
        return qkv_err_set(e, QKV_ERR_FAIL, "the xz -9 baseline: liblzma failed (%s)",
                           r == LZMA_MEM_ERROR || r == LZMA_MEMLIMIT_ERROR ? "out of memory" : "lzma_code error");
    }
    return 0;
}

int qkv_task_text_baselines(const qkv_task *t, double *xz_bpb, double *unigram_bpb, qkv_err *e) {
    if (t->cfg.kind != QKV_TASK_TEXT || !t->text || t->text_split >= t->text_len) {
        return qkv_err_set(e, QKV_ERR_FAIL, "bits-per-byte baselines need an open text task");
    }
    const uint8_t *ev = t->text + t->text_split;
    int64_t n = t->text_len - t->text_split;
    uint64_t size;
    if (xz9_size(ev, (size_t)n, &size, e)) return -1;
    *xz_bpb = 8.0 * (double)size / (double)n;
    /* unigram: byte frequencies of the training part with one added to each of the 256
     * counts, p(b) = (c_b + 1) / (N + 256); the cross-entropy of the evaluation bytes in bits */
    int64_t train[256] = {0}, eval[256] = {0};
    for (int64_t i = 0; i < t->text_val; i++) train[t->text[i]]++;
    for (int64_t i = 0; i < n; i++) eval[ev[i]]++;
    double bits = 0, total = (double)t->text_val + 256;
    for (int b = 0; b < 256; b++)
        if (eval[b]) bits -= (double)eval[b] * log2(((double)train[b] + 1) / total);
    *unigram_bpb = bits / (double)n;
    return 0;
}
