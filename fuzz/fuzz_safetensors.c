/* libFuzzer target: the safetensors reader (qkv_st_parse) on any bytes.
 *
 * For a file it accepts: every entry's data is readable (the whole byte range), the lookups
 * by name and the metadata work, qkv_st_load_into fills a tensor of the entry's shape, and
 * the tensors written again (qkv_st_write_mem) parse back to the same names, shapes and bytes.
 * For a file it rejects: the error is one non-empty line. */
#include "io/safetensors.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(cond, ...) do { if (!(cond)) { fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); abort(); } } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    qkv_err err;
    qkv_safetensors *st = NULL;
    if (qkv_st_parse(data, size, "fuzz.safetensors", &st, &err)) {
        CHECK(err.msg[0] && !strchr(err.msg, '\n'), "not a one-line error: [%s]", err.msg);
        CHECK(!st, "an error left a result");
        return 0;
    }
    int n = qkv_st_count(st);
    qkv_st_item *items = calloc((size_t)n + 1, sizeof *items);
    qkv_tensor *ts = calloc((size_t)n + 1, sizeof *ts);
    volatile uint8_t sink = 0;
    for (int i = 0; i < n; i++) {
        const qkv_st_entry *e = qkv_st_entry_at(st, i);
        CHECK(e && qkv_st_find(st, e->name) == e, "entry %d is not found by its name", i);
        const uint8_t *p = qkv_st_data(st, e);
        uint64_t nb = e->end - e->begin;
        for (uint64_t k = 0; k < nb; k++) sink ^= p[k]; /* every byte is inside the buffer */
        qkv_tensor *t = &ts[i];
        CHECK(qkv_shape_init(t, e->dtype, e->ndim, e->shape) == 0, "entry %d: shape rejected", i);
        CHECK((uint64_t)t->numel * qkv_dtype_size(e->dtype) == nb, "entry %d: size mismatch", i);
        t->data = malloc(nb ? nb : 1);
        CHECK(qkv_st_load_into(st, e->name, t, &err) == 0, "load_into: %s", err.msg);
        CHECK(!nb || !memcmp(t->data, p, nb), "load_into copied other bytes");
        items[i] = (qkv_st_item){e->name, t};
    }
    for (int i = 0; i < qkv_st_meta_count(st); i++) {
        const char *k, *v;
        CHECK(qkv_st_meta_at(st, i, &k, &v) == 0 && qkv_st_meta(st, k), "metadata %d", i);
    }
    /* written again, the tensors read back the same */
    uint8_t *img = NULL;
    size_t len = 0;
    if (qkv_st_write_mem(items, n, NULL, 0, &img, &len, &err) == 0) {
        qkv_safetensors *again = NULL;
        CHECK(qkv_st_parse(img, len, "again", &again, &err) == 0, "rewritten file rejected: %s", err.msg);
        CHECK(qkv_st_count(again) == n, "rewritten file has %d tensors, not %d", qkv_st_count(again), n);
        for (int i = 0; i < n; i++) {
            const qkv_st_entry *e = qkv_st_find(again, items[i].name);
            CHECK(e && e->dtype == ts[i].dtype && e->ndim == ts[i].ndim, "tensor %s changed", items[i].name);
            uint64_t nb = e->end - e->begin;
            CHECK(!nb || !memcmp(qkv_st_data(again, e), ts[i].data, nb), "tensor %s: other bytes", items[i].name);
        }
        qkv_st_free(again);
        free(img);
    } else {
        CHECK(err.msg[0] && !strchr(err.msg, '\n'), "not a one-line error: [%s]", err.msg);
    }
    for (int i = 0; i < n; i++) free(ts[i].data);
    free(ts);
    free(items);
    qkv_st_free(st);
    (void)sink;
    return 0;
}
