/* safetensors: questions about a parsed file (lookups, data, metadata, loading into a tensor)
 * and freeing it. st_read.c builds it. */
#include "io/st_internal.h"

#include <stdlib.h>
#include <string.h>

int qkv_st_count(const qkv_safetensors *st) { return st ? st->n : 0; }

const qkv_st_entry *qkv_st_entry_at(const qkv_safetensors *st, int i) {
    return st && i >= 0 && i < st->n ? &st->entries[i] : NULL;
}

const qkv_st_entry *qkv_st_find(const qkv_safetensors *st, const char *name) {
    if (!st || !name) return NULL;
    int lo = 0, hi = st->n - 1;   /* binary search over the name-sorted index */
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;
        const qkv_st_entry *e = &st->entries[st->by_name[mid]];
        int r = strcmp(name, e->name);
        if (r == 0) return e;
        if (r < 0) hi = mid - 1;
        else lo = mid + 1;
    }
    return NULL;
}

const void *qkv_st_data(const qkv_safetensors *st, const qkv_st_entry *e) {
    if (!st || !e || e < st->entries || e >= st->entries + st->n) return NULL;
    return st->ptr[e - st->entries];
}

const char *qkv_st_meta(const qkv_safetensors *st, const char *key) {
    if (!st || !key) return NULL;
    for (int i = 0; i < st->n_meta; i++)
        if (strcmp(st->meta_key[i], key) == 0) return st->meta_val[i];
    return NULL;
}

int qkv_st_meta_count(const qkv_safetensors *st) { return st ? st->n_meta : 0; }

int qkv_st_meta_at(const qkv_safetensors *st, int i, const char **key, const char **value) {
    if (!st || i < 0 || i >= st->n_meta) return -1;
    if (key) *key = st->meta_key[i];
    if (value) *value = st->meta_val[i];
    return 0;
}

/* element-wise F32 <-> F64 (the only conversions load_into allows) */
static void convert_float(void *dst, qkv_dtype dt_dst, const void *src, qkv_dtype dt_src, uint64_t numel) {
    for (uint64_t i = 0; i < numel; i++) {
        if (dt_dst == QKV_F64 && dt_src == QKV_F32) ((double *)dst)[i] = ((const float *)src)[i];
        else ((float *)dst)[i] = (float)((const double *)src)[i];
    }
}

int qkv_st_load_into(const qkv_safetensors *st, const char *name, qkv_tensor *t, qkv_err *e) {
    st_ctx c = {st ? st->label : "<safetensors>", e};
    st_shown sn;
    char fs[160], ts[160];
    if (!st || !name || !t) return qkv__st_fail(&c, "load: missing file, name or destination tensor");
    const qkv_st_entry *en = qkv_st_find(st, name);
    const char *sname = qkv__st_show(&sn, name);
    if (!en) return qkv__st_fail(&c, "no tensor %s in the file", sname);
    if (!qkv__st_dtype_valid(t->dtype) || t->ndim < 0 || t->ndim > QKV_MAX_DIMS)
        return qkv__st_fail(&c, "tensor %s: destination is not a valid tensor (dtype %d, rank %d)", sname,
                            (int)t->dtype, t->ndim);
    bool same = en->ndim == t->ndim;
    for (int d = 0; same && d < en->ndim; d++) same = en->shape[d] == t->shape[d];
    if (!same)
        return qkv__st_fail(&c, "tensor %s: shape %s in the file, expected %s", sname,
                            qkv__st_fmt_shape(fs, sizeof fs, en->ndim, en->shape),
                            qkv__st_fmt_shape(ts, sizeof ts, t->ndim, t->shape));
    if (en->dtype != t->dtype && !(qkv_dtype_is_float(en->dtype) && qkv_dtype_is_float(t->dtype)))
        return qkv__st_fail(&c, "tensor %s: dtype %s in the file, expected %s", sname, qkv_dtype_name(en->dtype),
                            qkv_dtype_name(t->dtype));
    uint64_t numel = 0;
    qkv__st_shape_numel(en->ndim, en->shape, &numel);   /* validated when parsed */
    if (numel > 0 && !t->data) return qkv__st_fail(&c, "tensor %s: destination has no data buffer", sname);
    const void *src = qkv_st_data(st, en);
    if (en->dtype == t->dtype) memcpy(t->data, src, (size_t)(en->end - en->begin));
    else convert_float(t->data, t->dtype, src, en->dtype, numel);
    return 0;
}

void qkv_st_free(qkv_safetensors *st) {
    if (!st) return;
    for (int i = 0; i < st->n; i++) free(st->entries[i].name);
    for (int i = 0; st->copy && i < st->n; i++) free(st->copy[i]);
    for (int i = 0; i < st->n_meta; i++) {
        free(st->meta_key[i]);
        free(st->meta_val[i]);
    }
    free(st->entries);
    free(st->ptr);
    free(st->copy);
    free(st->by_name);
    free(st->meta_key);
    free(st->meta_val);
    free(st->image);
    free(st->label);
    free(st);
}
