/* safetensors writing: tensors and metadata to a file image (see safetensors.h). The header is
 * built and checked completely before anything is written; the file goes through the atomic
 * writer (io/fileio.h) as pieces: length prefix, header, each tensor's bytes. */
#include "io/st_internal.h"
#include "io/utf8.h"
#include "io/fileio.h"
#include "io/strbuf.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void write_le64(uint8_t *p, uint64_t v) {
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}

/* What will be written: the padded header and the size of the data buffer. */
typedef struct { char *header; size_t hlen; uint64_t data_len; } st_plan;

/* bytes of tensor t after checking it is writable */
static int check_item(const st_ctx *c, const qkv_st_item *it, int i, uint64_t *nbytes) {
    st_shown sn;
    size_t bad;
    const char *why;
    if (!it->name) return qkv__st_fail(c, "item %d has no name", i);
    const char *tn = qkv__st_show(&sn, it->name);
    if (!qkv__utf8_valid((const uint8_t *)it->name, strlen(it->name), &bad, &why))
        return qkv__st_fail(c, "tensor %s: name is not valid UTF-8 (%s at byte %zu)", tn, why, bad);
    if (strcmp(it->name, ST_META_KEY) == 0)
        return qkv__st_fail(c, "tensor name \"" ST_META_KEY "\" is reserved for metadata");
    const qkv_tensor *t = it->t;
    if (!t) return qkv__st_fail(c, "tensor %s: no tensor given", tn);
    if (!qkv__st_dtype_valid(t->dtype)) return qkv__st_fail(c, "tensor %s: invalid dtype %d", tn, (int)t->dtype);
    if (t->ndim < 0 || t->ndim > QKV_MAX_DIMS)
        return qkv__st_fail(c, "tensor %s: rank %d, qkv supports 0..%d", tn, t->ndim, QKV_MAX_DIMS);
    uint64_t numel;
    if (!qkv__st_shape_numel(t->ndim, t->shape, &numel) || !qkv__st_mul_u64(numel, qkv_dtype_size(t->dtype), nbytes) ||
        *nbytes > ST_MAX_INT)
        return qkv__st_fail(c, "tensor %s: invalid or oversized shape", tn);
    if (*nbytes > 0 && !t->data) return qkv__st_fail(c, "tensor %s: has no data", tn);
    return 0;
}

/* numbers go in as raw text: exact for 64-bit values, where cJSON's doubles print 1e+15 forms */
static cJSON *raw_uint(uint64_t v) {
    char buf[24];
    snprintf(buf, sizeof buf, "%" PRIu64, v);
    return cJSON_CreateRaw(buf);
}

/* adds raw_uint(v) to array a; false if out of memory */
static bool add_uint(cJSON *a, uint64_t v) {
    cJSON *x = raw_uint(v);
    return x && cJSON_AddItemToArray(a, x);
}

/* {"dtype":..., "shape":[...], "data_offsets":[begin,end]}, or NULL if out of memory */
static cJSON *entry_json(const qkv_tensor *t, uint64_t begin, uint64_t end) {
    cJSON *o = cJSON_CreateObject();
    if (!o) return NULL;
    bool ok = cJSON_AddStringToObject(o, "dtype", qkv_dtype_name(t->dtype)) != NULL;
    cJSON *shape = ok ? cJSON_AddArrayToObject(o, "shape") : NULL;   /* owned by o from here on */
    cJSON *offs = shape ? cJSON_AddArrayToObject(o, "data_offsets") : NULL;
    ok = offs != NULL;
    for (int d = 0; ok && d < t->ndim; d++) ok = add_uint(shape, (uint64_t)t->shape[d]);
    ok = ok && add_uint(offs, begin) && add_uint(offs, end);
    if (ok) return o;
    cJSON_Delete(o);
    return NULL;
}

/* the "__metadata__" object: "format":"pt" unless the caller gives a format, then the pairs */
static int meta_json(const st_ctx *c, const char *const *meta, int n_meta, cJSON **out) {
    st_shown sk;
    size_t bad;
    const char *why;
    if (n_meta < 0 || (n_meta > 0 && !meta)) return qkv__st_fail(c, "invalid metadata (%d pairs)", n_meta);
    st_named *keys = calloc((size_t)n_meta + 1, sizeof *keys);
    if (!keys) return qkv__st_fail(c, "out of memory");
    bool has_format = false;
    for (int i = 0; i < n_meta; i++) {
        const char *k = meta[2 * i], *v = meta[2 * i + 1];
        if (!k || !v) { free(keys); return qkv__st_fail(c, "metadata pair %d has a NULL key or value", i); }
        if (!qkv__utf8_valid((const uint8_t *)k, strlen(k), &bad, &why) ||
            !qkv__utf8_valid((const uint8_t *)v, strlen(v), &bad, &why)) {
            free(keys);
            return qkv__st_fail(c, "metadata key %s: key or value is not valid UTF-8 (%s)", qkv__st_show(&sk, k), why);
        }
        has_format = has_format || strcmp(k, "format") == 0;
        keys[i] = (st_named){k, i};
    }
    const char *dup = qkv__st_sort_find_dup(keys, n_meta);
    free(keys);
    if (dup) return qkv__st_fail(c, "duplicate metadata key %s", qkv__st_show(&sk, dup));
    cJSON *o = cJSON_CreateObject();
    bool ok = o && (has_format || cJSON_AddStringToObject(o, "format", "pt"));
    for (int i = 0; ok && i < n_meta; i++) ok = cJSON_AddStringToObject(o, meta[2 * i], meta[2 * i + 1]) != NULL;
    if (!ok) { cJSON_Delete(o); return qkv__st_fail(c, "out of memory"); }
    *out = o;
    return 0;
}

/* distinct names (checked after each item is valid, so names are non-NULL) */
static int check_unique(const st_ctx *c, const qkv_st_item *items, int n) {
    st_shown sn;
    st_named *v = calloc((size_t)n + 1, sizeof *v);
    if (!v) return qkv__st_fail(c, "out of memory");
    for (int i = 0; i < n; i++) v[i] = (st_named){items[i].name, i};
    const char *dup = qkv__st_sort_find_dup(v, n);
    int rc = dup ? qkv__st_fail(c, "duplicate tensor name %s", qkv__st_show(&sn, dup)) : 0;
    free(v);
    return rc;
}

/* JSON text of the header, then spaces to a multiple of 8 so the data buffer starts aligned */
static int finish_header(const st_ctx *c, cJSON *root, st_plan *p) {
    char *json = cJSON_PrintUnformatted(root);
    if (!json) return qkv__st_fail(c, "out of memory printing the header");
    size_t len = strlen(json), padded = (len + 7) & ~(size_t)7;
    if (padded > ST_MAX_HEADER) {
        cJSON_free(json);
        return qkv__st_fail(c, "header would be %zu bytes, above the %llu-byte limit readers accept", padded,
                            ST_MAX_HEADER);
    }
    p->header = malloc(padded);
    if (!p->header) { cJSON_free(json); return qkv__st_fail(c, "out of memory"); }
    memcpy(p->header, json, len);
    memset(p->header + len, ' ', padded - len);
    p->hlen = padded;
    cJSON_free(json);
    return 0;
}

/* bytes of item i (already validated) */
static size_t item_bytes(const qkv_st_item *it) {
    uint64_t numel = 0;
    qkv__st_shape_numel(it->t->ndim, it->t->shape, &numel);
    return (size_t)numel * qkv_dtype_size(it->t->dtype);
}

/* validates everything and builds the header; offsets follow the given order */
static int make_plan(const st_ctx *c, const qkv_st_item *items, int n, const char *const *meta, int n_meta,
                     st_plan *p) {
    memset(p, 0, sizeof *p);
    if (n < 0 || (n > 0 && !items)) return qkv__st_fail(c, "invalid tensor list (%d items)", n);
    uint64_t nbytes;
    for (int i = 0; i < n; i++)
        if (check_item(c, &items[i], i, &nbytes) < 0) return -1;
    if (check_unique(c, items, n) < 0) return -1;
    cJSON *root = cJSON_CreateObject(), *mobj = NULL;
    if (!root) return qkv__st_fail(c, "out of memory");
    if (meta_json(c, meta, n_meta, &mobj) < 0) { cJSON_Delete(root); return -1; }
    bool ok = cJSON_AddItemToObject(root, ST_META_KEY, mobj);
    if (!ok) cJSON_Delete(mobj);
    uint64_t off = 0;
    for (int i = 0; ok && i < n; i++) {
        nbytes = item_bytes(&items[i]);
        cJSON *e = entry_json(items[i].t, off, off + nbytes);
        ok = e && cJSON_AddItemToObject(root, items[i].name, e);
        if (e && !ok) cJSON_Delete(e);
        off += nbytes;
    }
    int rc = ok ? finish_header(c, root, p) : qkv__st_fail(c, "out of memory building the header");
    cJSON_Delete(root);
    p->data_len = off;
    return rc;
}

/* The file in n + 2 pieces: the length prefix (len8, filled in here), the header, each tensor's
 * bytes; malloc'd, NULL if out of memory. */
static qkv_wpart *file_parts(const st_plan *p, uint8_t len8[8], const qkv_st_item *items, int n) {
    qkv_wpart *parts = malloc(((size_t)n + 2) * sizeof *parts);
    if (!parts) return NULL;
    write_le64(len8, p->hlen);
    parts[0] = (qkv_wpart){len8, 8};
    parts[1] = (qkv_wpart){p->header, p->hlen};
    for (int i = 0; i < n; i++) parts[i + 2] = (qkv_wpart){items[i].t->data, item_bytes(&items[i])};
    return parts;
}

int qkv_st_data_crc32(const qkv_st_item *items, int n, char hex[9], qkv_err *e) {
    st_ctx c = {"<checksum>", e};
    if (!hex) return qkv__st_fail(&c, "no output buffer given");
    if (n < 0 || (n > 0 && !items)) return qkv__st_fail(&c, "invalid tensor list (%d items)", n);
    uint32_t crc = 0;
    uint64_t nbytes;
    for (int i = 0; i < n; i++) {
        if (check_item(&c, &items[i], i, &nbytes) < 0) return -1;
        crc = qkv__st_crc32(crc, items[i].t->data, item_bytes(&items[i]));
    }
    snprintf(hex, 9, "%08" PRIx32, crc);
    return 0;
}

int qkv_st_write_mem(const qkv_st_item *items, int n, const char *const *meta, int n_meta, uint8_t **out,
                     size_t *out_len, qkv_err *e) {
    st_ctx c = {"<memory>", e};
    st_plan p;
    if (!out || !out_len) return qkv__st_fail(&c, "no output pointers given");
    *out = NULL;
    *out_len = 0;
    if (make_plan(&c, items, n, meta, n_meta, &p) < 0) return -1;
    if (p.data_len > SIZE_MAX - 8 - p.hlen) {
        free(p.header);
        return qkv__st_fail(&c, "file image too large for memory");
    }
    size_t total = 8 + p.hlen + (size_t)p.data_len;
    uint8_t len8[8];
    qkv_wpart *parts = file_parts(&p, len8, items, n);
    uint8_t *buf = parts ? malloc(total) : NULL;
    if (!buf) {
        free(parts);
        free(p.header);
        return qkv__st_fail(&c, "out of memory for a %zu-byte file image", total);
    }
    size_t o = 0;
    for (int i = 0; i < n + 2; i++) {
        if (parts[i].len) memcpy(buf + o, parts[i].buf, parts[i].len);
        o += parts[i].len;
    }
    free(parts);
    free(p.header);
    *out = buf;
    *out_len = total;
    return 0;
}

int qkv_st_write(const char *path, const qkv_st_item *items, int n, const char *const *meta, int n_meta,
                 qkv_err *e) {
    st_ctx c = {path ? path : "(null)", e};
    if (!path || !*path) return qkv__st_fail(&c, "no path given");
    st_plan p;
    if (make_plan(&c, items, n, meta, n_meta, &p) < 0) return -1;
    uint8_t len8[8];
    qkv_wpart *parts = file_parts(&p, len8, items, n);
    if (!parts) {
        free(p.header);
        return qkv__st_fail(&c, "out of memory");
    }
    qkv_write_status ws;
    int rc = qkv__write_parts_atomic(path, parts, n + 2, &ws);
    free(parts);
    free(p.header);
    if (rc == 0) return 0;
    const char *why = strerror(ws.errnum);
    if (ws.stage == QKV_WRITE_SYNC_DIR) /* the new file is in place, but the caller asked for a durable checkpoint */
        return qkv__st_fail(&c, "written, but syncing its directory failed: %s", why);
    if (ws.stage == QKV_WRITE_NOMEM) return qkv__st_fail(&c, "out of memory");
    char *tmp = qkv__temp_path(path); /* named in the message, bounded (the label names the file) */
    qkv_shown shown = qkv__shown(tmp ? tmp : "its temporary file");
    if (ws.stage == QKV_WRITE_CREATE) qkv__st_fail(&c, "cannot create temporary file %s: %s", shown.s, why);
    else if (ws.stage == QKV_WRITE_DATA) qkv__st_fail(&c, "writing %s failed: %s", shown.s, why);
    else qkv__st_fail(&c, "cannot rename %s over it: %s", shown.s, why);
    free(tmp);
    return -1;
}
