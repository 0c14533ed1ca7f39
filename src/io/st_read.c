/* safetensors reading: a file image to a parsed file (see safetensors.h for the format and
 * the contract; st_access.c answers questions about the result).
 *
 * Reading goes in stages, each rejecting what the reference loader rejects:
 *   1. the 8-byte length prefix (file too short, header too large or past the end);
 *   2. the header bytes as UTF-8 (overlong forms, surrogates, > U+10FFFF);
 *   3. the strict JSON reader (io/json.h): RFC 8259 as strictly as serde_json, nesting bounded
 *      like serde_json's, the offset of each number token recorded;
 *   4. cJSON's tree; keys are checked for duplicates (cJSON keeps them);
 *   5. each tensor entry (dtype, shape, data_offsets, byte count) and the metadata;
 *   6. the tensors must tile the data buffer from 0 with no gap, overlap or tail;
 *   7. a file whose metadata names the data buffer's CRC-32 (QKV_ST_CRC32_KEY) must hold data
 *      with that CRC-32: otherwise the file is damaged (one without it is not checked). */
#include "io/st_internal.h"
#include "io/utf8.h"
#include "io/fileio.h"
#include "io/json.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- numbers */

static bool is_digit(char ch) { return ch >= '0' && ch <= '9'; }

/* length of the run of characters a number token may hold, at s (n bytes available) */
static size_t num_run_len(const char *s, size_t n) {
    size_t i = 0;
    while (i < n && (is_digit(s[i]) || s[i] == '+' || s[i] == '-' || s[i] == '.' || s[i] == 'e' || s[i] == 'E'))
        i++;
    return i;
}

static uint64_t read_le64(const uint8_t *p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}

/* Offsets (into the header) of the number tokens, in document order. */
typedef struct { uint32_t *off; size_t n, cap; } num_list;

/* cJSON keeps only a double per number; point each number item at its token instead (in
 * valueint, which cJSON fills lossily and which nothing here reads), so integer fields can be
 * parsed exactly and "2.0" refused as the reference refuses it. Items and tokens are both in
 * document order. Returns the count tagged, or -1 when there are more items than tokens. */
static long tag_numbers(cJSON *item, const num_list *nums, size_t *k) {
    for (; item; item = item->next) {
        if (cJSON_IsNumber(item)) {
            if (*k >= nums->n) return -1;
            item->valueint = (int)nums->off[(*k)++];
        } else if (item->child && tag_numbers(item->child, nums, k) < 0) {
            return -1;
        }
    }
    return (long)*k;
}

/* "a string", "an array", ... for messages */
static const char *json_kind(const cJSON *v) {
    if (cJSON_IsString(v)) return "a string";
    if (cJSON_IsNumber(v)) return "a number";
    if (cJSON_IsArray(v)) return "an array";
    if (cJSON_IsObject(v)) return "an object";
    if (cJSON_IsBool(v)) return "a boolean";
    if (cJSON_IsNull(v)) return "null";
    return "an invalid value";
}

/* Reads a value that must be a non-negative integer <= 2^53 with no fraction or exponent
 * (the reference's usize fields refuse 2.0 and 2e0): 0, or -1 with the error naming it as
 * "tensor TN: FIELD[I]". */
static int json_uint(const st_ctx *c, const char *hdr, const cJSON *v, uint64_t *out, const char *tn,
                     const char *field, int i_field) {
    if (!cJSON_IsNumber(v))
        return qkv__st_fail(c, "tensor %s: %s[%d]: expected a non-negative integer, got %s", tn, field, i_field,
                            json_kind(v));
    const char *tok = hdr + v->valueint;
    size_t len = num_run_len(tok, SIZE_MAX), i = 0;
    uint64_t x = 0;
    for (; i < len && is_digit(tok[i]); i++) {
        x = x * 10 + (uint64_t)(tok[i] - '0');
        if (x > ST_MAX_INT) break;
    }
    if (i < len || x > ST_MAX_INT) {
        const char *what = tok[0] == '-'     ? "a non-negative integer"
                           : x > ST_MAX_INT ? "an integer <= 2^53"
                                            : "an integer";
        return qkv__st_fail(c, "tensor %s: %s[%d]: expected %s, got %.*s", tn, field, i_field, what,
                            len > 32 ? 32 : (int)len, tok);
    }
    *out = x;
    return 0;
}

/* ---------------------------------------------------------------- header stages */

/* Stage 1-2: length prefix, UTF-8 and the opening brace. Sets *hdr_len. */
static int check_prefix(const st_ctx *c, const uint8_t *img, size_t len, size_t *hdr_len) {
    if (len < 8)
        return qkv__st_fail(c, "file holds %zu bytes, expected at least 8 (the header length)", len);
    uint64_t n = read_le64(img);
    if (n > ST_MAX_HEADER)
        return qkv__st_fail(c, "header length %" PRIu64 " exceeds the limit of %llu bytes", n, ST_MAX_HEADER);
    if (n > len - 8)
        return qkv__st_fail(c, "header length %" PRIu64 " runs past the end of the file (%zu bytes follow the length)",
                            n, len - 8);
    size_t bad;
    const char *why;
    if (!qkv__utf8_valid(img + 8, (size_t)n, &bad, &why))
        return qkv__st_fail(c, "header byte %zu: invalid UTF-8 (%s)", bad, why);
    if (n == 0) return qkv__st_fail(c, "header is empty, expected a JSON object starting with '{'");
    if (img[8] != '{') {
        if (img[8] >= 0x20 && img[8] < 0x7f)
            return qkv__st_fail(c, "header starts with '%c', expected a JSON object starting with '{'", img[8]);
        return qkv__st_fail(c, "header starts with byte 0x%02x, expected a JSON object starting with '{'", img[8]);
    }
    *hdr_len = (size_t)n;
    return 0;
}

/* the strict JSON reader's error on header h (n bytes) in this module's words */
static int json_fail(const st_ctx *c, const char *h, size_t n, const qkv_json_error *e) {
    switch (e->kind) {
    case QKV_JSON_CONTROL:
        return qkv__st_fail(c, e->in_string ? "header byte %zu: raw control character 0x%02x inside a string"
                                            : "header byte %zu: control character 0x%02x outside a string",
                            e->at, (unsigned char)h[e->at]);
    case QKV_JSON_NUL: return qkv__st_fail(c, "header byte %zu: \\u0000 inside a string is not supported", e->pos);
    case QKV_JSON_NUMBER: {
        size_t run = num_run_len(h + e->pos, n - e->pos);
        return qkv__st_fail(c, "header byte %zu: invalid JSON number \"%.*s\"", e->pos, run > 32 ? 32 : (int)run,
                            h + e->pos);
    }
    case QKV_JSON_DEPTH:
        return qkv__st_fail(c, "header byte %zu: JSON nested deeper than %d levels", e->pos, ST_MAX_DEPTH);
    case QKV_JSON_NOMEM: return qkv__st_fail(c, "out of memory reading the header");
    default: return qkv__st_fail(c, "header byte %zu: invalid JSON", e->pos);
    }
}

/* the strict JSON reader's number hook: each token's offset (N <= 1e8 fits in 32 bits) */
static int num_push(void *ctx, size_t off) {
    num_list *l = ctx;
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 64;
        uint32_t *p = realloc(l->off, cap * sizeof *p);
        if (!p) return -1;
        l->off = p;
        l->cap = cap;
    }
    l->off[l->n++] = (uint32_t)off;
    return 0;
}

/* Stage 3-4: the strict JSON reader (as strict as serde_json: RFC 8259, nesting up to 127
 * levels; \u0000 refused, since a C string cannot hold it), then cJSON's tree with every number
 * item pointing at its token in h. */
static int parse_json(const st_ctx *c, const char *h, size_t n, cJSON **root) {
    num_list nums = {0};
    qkv_json_opts o = {.max_depth = ST_MAX_DEPTH, .reject_nul = true, .on_number = num_push, .ctx = &nums};
    qkv_json_error e;
    cJSON *r = NULL;
    if (qkv__json_parse(h, n, &o, &r, &e)) {
        free(nums.off);
        return json_fail(c, h, n, &e);
    }
    size_t k = 0;
    long tagged = tag_numbers(r, &nums, &k);
    free(nums.off);
    if (tagged < 0 || (size_t)tagged != nums.n) {   /* the scanner and cJSON disagree: refuse */
        cJSON_Delete(r);
        return qkv__st_fail(c, "header: could not match JSON numbers to their text");
    }
    *root = r;
    return 0;
}

/* dtype name -> qkv dtype; distinguishes "valid but unsupported" from "unknown" in messages */
static int parse_dtype(const st_ctx *c, const char *tn, const cJSON *v, qkv_dtype *out) {
    static const char *const known[] = {
        "BOOL", "U8", "I8", "U16", "I16", "U32", "I32", "U64", "I64", "F16", "BF16", "F32", "F64",
        "F8_E5M2", "F8_E4M3", "F8_E8M0", "F4", "F6_E2M3", "F6_E3M2", "C64",
    };
    st_shown sd;
    if (!cJSON_IsString(v))
        return qkv__st_fail(c, "tensor %s: dtype must be a string, got %s", tn, json_kind(v));
    for (int d = 0; d < QKV_DTYPE_COUNT; d++)
        if (strcmp(v->valuestring, qkv_dtype_name((qkv_dtype)d)) == 0) {
            *out = (qkv_dtype)d;
            return 0;
        }
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (strcmp(v->valuestring, known[i]) == 0)
            return qkv__st_fail(c, "tensor %s: dtype %s is not supported (" ST_SUPPORTED ")", tn, known[i]);
    return qkv__st_fail(c, "tensor %s: unknown dtype %s (" ST_SUPPORTED ")", tn, qkv__st_show(&sd, v->valuestring));
}

/* "shape": an array of at most QKV_MAX_DIMS non-negative integers */
static int parse_shape(const st_ctx *c, const char *hdr, const char *tn, const cJSON *v, qkv_st_entry *e) {
    if (!cJSON_IsArray(v))
        return qkv__st_fail(c, "tensor %s: shape must be an array of integers, got %s", tn, json_kind(v));
    int nd = cJSON_GetArraySize(v);
    if (nd > QKV_MAX_DIMS)
        return qkv__st_fail(c, "tensor %s: shape has %d dimensions, qkv supports at most %d", tn, nd,
                            QKV_MAX_DIMS);
    e->ndim = 0;
    for (int d = 0; d < QKV_MAX_DIMS; d++) e->shape[d] = 1;
    for (const cJSON *x = v->child; x; x = x->next) {
        uint64_t dim;
        if (json_uint(c, hdr, x, &dim, tn, "shape", e->ndim)) return -1;
        e->shape[e->ndim++] = (int64_t)dim;
    }
    return 0;
}

/* "data_offsets": exactly [begin, end] with begin <= end */
static int parse_offsets(const st_ctx *c, const char *hdr, const char *tn, const cJSON *v, qkv_st_entry *e) {
    if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) != 2) {
        if (cJSON_IsArray(v))
            return qkv__st_fail(c, "tensor %s: data_offsets must be [begin, end], got %d values", tn,
                                cJSON_GetArraySize(v));
        return qkv__st_fail(c, "tensor %s: data_offsets must be [begin, end], got %s", tn, json_kind(v));
    }
    uint64_t o[2];
    for (int i = 0; i < 2; i++)
        if (json_uint(c, hdr, cJSON_GetArrayItem(v, i), &o[i], tn, "data_offsets", i)) return -1;
    if (o[0] > o[1])
        return qkv__st_fail(c, "tensor %s: data_offsets [%" PRIu64 ",%" PRIu64 "]: begin is after end", tn,
                            o[0], o[1]);
    e->begin = o[0];
    e->end = o[1];
    return 0;
}

/* the byte range must hold exactly numel * dtype size bytes (overflow-checked) */
static int check_nbytes(const st_ctx *c, const char *tn, const qkv_st_entry *e) {
    char sh[160];
    uint64_t numel, nbytes;
    qkv__st_fmt_shape(sh, sizeof sh, e->ndim, e->shape);
    const char *dt = qkv_dtype_name(e->dtype);
    if (!qkv__st_shape_numel(e->ndim, e->shape, &numel) ||
        !qkv__st_mul_u64(numel, qkv_dtype_size(e->dtype), &nbytes))
        return qkv__st_fail(c, "tensor %s: shape %s %s overflows 64-bit byte counts", tn, sh, dt);
    if (e->end - e->begin != nbytes)
        return qkv__st_fail(c, "tensor %s: data_offsets [%" PRIu64 ",%" PRIu64 "] hold %" PRIu64
                            " bytes, expected %" PRIu64 " (shape %s %s)",
                            tn, e->begin, e->end, e->end - e->begin, nbytes, sh, dt);
    return 0;
}

/* Stage 5 for one tensor. Unknown fields are ignored, as serde does; known ones may appear once. */
static int parse_entry(const st_ctx *c, const char *hdr, const cJSON *obj, qkv_st_entry *e) {
    static const char *const fields[3] = {"dtype", "shape", "data_offsets"};
    const cJSON *f[3] = {NULL, NULL, NULL};
    st_shown sn;
    const char *tn = qkv__st_show(&sn, obj->string);   /* the name, as messages show it */
    if (!cJSON_IsObject(obj))
        return qkv__st_fail(c, "tensor %s: expected an object with dtype, shape and data_offsets, got %s", tn,
                            json_kind(obj));
    for (const cJSON *x = obj->child; x; x = x->next)
        for (int i = 0; i < 3; i++)
            if (strcmp(x->string, fields[i]) == 0) {
                if (f[i]) return qkv__st_fail(c, "tensor %s: duplicate field \"%s\"", tn, fields[i]);
                f[i] = x;
            }
    for (int i = 0; i < 3; i++)
        if (!f[i]) return qkv__st_fail(c, "tensor %s: missing field \"%s\"", tn, fields[i]);
    if (parse_dtype(c, tn, f[0], &e->dtype) < 0 || parse_shape(c, hdr, tn, f[1], e) < 0 ||
        parse_offsets(c, hdr, tn, f[2], e) < 0 || check_nbytes(c, tn, e) < 0)
        return -1;
    e->name = strdup(obj->string);
    return e->name ? 0 : qkv__st_fail(c, "out of memory");
}

/* Stage 5 for "__metadata__": string keys to string values; null counts as absent, as in serde. */
static int parse_metadata(const st_ctx *c, const cJSON *obj, qkv_safetensors *st) {
    st_shown sk;
    if (!obj || cJSON_IsNull(obj)) return 0;
    if (!cJSON_IsObject(obj))
        return qkv__st_fail(c, "\"" ST_META_KEY "\" must be an object of strings, got %s", json_kind(obj));
    int n = cJSON_GetArraySize(obj);
    st_named *keys = calloc((size_t)n + 1, sizeof *keys);
    st->meta_key = calloc((size_t)n + 1, sizeof *st->meta_key);
    st->meta_val = calloc((size_t)n + 1, sizeof *st->meta_val);
    if (!keys || !st->meta_key || !st->meta_val) { free(keys); return qkv__st_fail(c, "out of memory"); }
    int i = 0;
    for (const cJSON *x = obj->child; x; x = x->next, i++) {
        if (!cJSON_IsString(x)) {
            free(keys);
            return qkv__st_fail(c, "\"" ST_META_KEY "\" key %s: value must be a string, got %s",
                                qkv__st_show(&sk, x->string), json_kind(x));
        }
        keys[i] = (st_named){x->string, i};
        st->meta_key[i] = strdup(x->string);
        st->meta_val[i] = strdup(x->valuestring);
        st->n_meta = i + 1;
        if (!st->meta_key[i] || !st->meta_val[i]) { free(keys); return qkv__st_fail(c, "out of memory"); }
    }
    const char *dup = qkv__st_sort_find_dup(keys, n);
    int rc = dup ? qkv__st_fail(c, "\"" ST_META_KEY "\": duplicate key %s", qkv__st_show(&sk, dup)) : 0;
    free(keys);
    return rc;
}

/* Stage 4-5 over the top-level object: duplicate keys, then every entry in header order. */
static int parse_entries(const st_ctx *c, const char *hdr, const cJSON *root, qkv_safetensors *st) {
    const cJSON *meta = NULL;
    int total = cJSON_GetArraySize(root), n = 0;
    st_named *names = calloc((size_t)total + 1, sizeof *names);
    if (!names) return qkv__st_fail(c, "out of memory");
    for (const cJSON *x = root->child; x; x = x->next) {
        if (strcmp(x->string, ST_META_KEY) == 0) {
            if (meta) { free(names); return qkv__st_fail(c, "duplicate key \"" ST_META_KEY "\""); }
            meta = x;
        } else {
            names[n] = (st_named){x->string, n};
            n++;
        }
    }
    st_shown sn;
    const char *dup = qkv__st_sort_find_dup(names, n);
    if (dup) {
        int rc = qkv__st_fail(c, "duplicate key %s (tensor names must be unique)", qkv__st_show(&sn, dup));
        free(names);
        return rc;
    }
    st->by_name = malloc(((size_t)n + 1) * sizeof *st->by_name);
    st->entries = calloc((size_t)n + 1, sizeof *st->entries);
    if (!st->by_name || !st->entries) { free(names); return qkv__st_fail(c, "out of memory"); }
    for (int i = 0; i < n; i++) st->by_name[i] = names[i].idx;
    free(names);
    int i = 0;
    for (const cJSON *x = root->child; x; x = x->next) {
        if (x == meta) continue;
        if (parse_entry(c, hdr, x, &st->entries[i]) < 0) return -1;
        st->n = ++i;
    }
    return parse_metadata(c, meta, st);
}

/* ---------------------------------------------------------------- data buffer */

/* an entry's byte range and index, sorted to check tiling */
typedef struct { uint64_t begin, end; int idx; } span;

static int cmp_span(const void *a, const void *b) {
    const span *x = a, *y = b;
    if (x->begin != y->begin) return x->begin < y->begin ? -1 : 1;
    if (x->end != y->end) return x->end < y->end ? -1 : 1;
    return (x->idx > y->idx) - (x->idx < y->idx);
}

/* Stage 6: sorted by begin, each tensor must start where the previous ended, the first at 0,
 * and the last must end exactly at the end of the file. */
static int check_tiling(const st_ctx *c, const qkv_safetensors *st, uint64_t data_len) {
    span *order = malloc(((size_t)st->n + 1) * sizeof *order);
    if (!order) return qkv__st_fail(c, "out of memory");
    for (int i = 0; i < st->n; i++) order[i] = (span){st->entries[i].begin, st->entries[i].end, i};
    qsort(order, (size_t)st->n, sizeof *order, cmp_span);
    uint64_t expect = 0;
    const qkv_st_entry *prev = NULL;
    int rc = 0;
    st_shown sa, sb;
    for (int k = 0; k < st->n && rc == 0; k++) {
        const qkv_st_entry *e = &st->entries[order[k].idx];
        if (e->begin > expect && !prev)
            rc = qkv__st_fail(c, "tensor %s: data_offsets [%" PRIu64 ",%" PRIu64 "] start at %" PRIu64
                              ", expected 0: gap of %" PRIu64 " bytes at the start of the data buffer",
                              qkv__st_show(&sa, e->name), e->begin, e->end, e->begin, e->begin);
        else if (e->begin > expect)
            rc = qkv__st_fail(c, "tensor %s: data_offsets [%" PRIu64 ",%" PRIu64 "] start at %" PRIu64
                              ", expected %" PRIu64 ": gap of %" PRIu64 " bytes after tensor %s",
                              qkv__st_show(&sa, e->name), e->begin, e->end, e->begin, expect, e->begin - expect,
                              qkv__st_show(&sb, prev->name));
        else if (e->begin < expect)
            rc = qkv__st_fail(c, "tensor %s: data_offsets [%" PRIu64 ",%" PRIu64 "] overlap tensor %s, which ends at %"
                              PRIu64, qkv__st_show(&sa, e->name), e->begin, e->end, qkv__st_show(&sb, prev->name),
                              expect);
        expect = e->end;
        prev = e;
    }
    free(order);
    if (rc == 0 && expect < data_len)
        rc = qkv__st_fail(c, "%" PRIu64 " trailing bytes after the last tensor (tensors end at %" PRIu64
                          ", the data buffer holds %" PRIu64 ")", data_len - expect, expect, data_len);
    if (rc == 0 && expect > data_len)
        rc = qkv__st_fail(c, "tensor %s: data_offsets end at %" PRIu64 " but the data buffer holds only %" PRIu64
                          " bytes (truncated file?)", qkv__st_show(&sa, prev->name), expect, data_len);
    return rc;
}

/* Stage 7: the data buffer (len bytes at data) against the CRC-32 its metadata names, if any */
static int check_crc(const st_ctx *c, const qkv_safetensors *st, const uint8_t *data, size_t len) {
    const char *want = qkv_st_meta(st, QKV_ST_CRC32_KEY);
    if (!want) return 0; /* an older qkv's or another program's file: nothing to check */
    st_shown sv;
    uint32_t w = 0;
    bool hex = strlen(want) == 8;
    for (int i = 0; hex && i < 8; i++) {
        char ch = want[i];
        int d = ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10
                : ch >= 'A' && ch <= 'F' ? ch - 'A' + 10 : -1;
        hex = d >= 0;
        w = w << 4 | (uint32_t)(d & 0xf);
    }
    if (!hex)
        return qkv__st_fail(c, "\"" ST_META_KEY "\" key \"" QKV_ST_CRC32_KEY "\": %s is not a CRC-32 (8 hex "
                            "digits): the file is damaged", qkv__st_show(&sv, want));
    uint32_t got = qkv__st_crc32(0, data, len);
    if (got != w)
        return qkv__st_fail(c, "data checksum mismatch (crc32 %08" PRIx32 " in the metadata, %08" PRIx32
                            " computed): the file is damaged", w, got);
    return 0;
}

/* Points every entry at its bytes, making them aligned for the dtype: the data buffer is moved
 * to the (malloc-aligned) start of the image when the header length left it misaligned, and a
 * tensor whose own offset is misaligned gets a private copy. */
static int place_data(const st_ctx *c, qkv_safetensors *st, size_t data_off, size_t data_len) {
    uint8_t *data = st->image + data_off;
    if (data_off % 8 != 0) {
        memmove(st->image, data, data_len);
        data = st->image;
    }
    st->ptr = calloc((size_t)st->n + 1, sizeof *st->ptr);
    st->copy = calloc((size_t)st->n + 1, sizeof *st->copy);
    if (!st->ptr || !st->copy) return qkv__st_fail(c, "out of memory");
    for (int i = 0; i < st->n; i++) {
        const qkv_st_entry *e = &st->entries[i];
        size_t nbytes = (size_t)(e->end - e->begin);
        st->ptr[i] = data + e->begin;
        if (e->begin % qkv_dtype_size(e->dtype) == 0) continue;
        st->copy[i] = malloc(nbytes ? nbytes : 1);
        if (!st->copy[i]) return qkv__st_fail(c, "out of memory");
        memcpy(st->copy[i], st->ptr[i], nbytes);
        st->ptr[i] = st->copy[i];
    }
    return 0;
}

/* Parses an image it takes ownership of (freed on failure). */
static int parse_owned(uint8_t *img, size_t len, const char *label, qkv_safetensors **out, qkv_err *e) {
    st_ctx c = {label, e};
    size_t n = 0;
    cJSON *root = NULL;
    const char *hdr = (const char *)img + 8;   /* number items point into it until place_data */
    if (check_prefix(&c, img, len, &n) < 0 || parse_json(&c, hdr, n, &root) < 0) {
        free(img);
        return -1;
    }
    qkv_safetensors *st = calloc(1, sizeof *st);
    int rc = st ? 0 : qkv__st_fail(&c, "out of memory");
    if (rc == 0) {
        st->image = img;
        st->label = strdup(label);
        rc = st->label ? 0 : qkv__st_fail(&c, "out of memory");
    } else {
        free(img);
    }
    if (rc == 0) rc = parse_entries(&c, hdr, root, st);
    if (rc == 0) rc = check_tiling(&c, st, (uint64_t)(len - 8 - n));
    if (rc == 0) rc = check_crc(&c, st, img + 8 + n, len - 8 - n);
    if (rc == 0) rc = place_data(&c, st, 8 + n, len - 8 - n);
    cJSON_Delete(root);
    if (rc < 0) {
        qkv_st_free(st);
        return -1;
    }
    *out = st;
    return 0;
}

/* ---------------------------------------------------------------- reading: public */

int qkv_st_parse(const uint8_t *buf, size_t len, const char *label, qkv_safetensors **out, qkv_err *e) {
    st_ctx c = {label ? label : "<memory>", e};
    if (!out) return qkv__st_fail(&c, "no output pointer given");
    *out = NULL;
    if (!buf && len) return qkv__st_fail(&c, "no buffer given");
    uint8_t *img = malloc(len ? len : 1);
    if (!img) return qkv__st_fail(&c, "out of memory copying %zu bytes", len);
    if (len) memcpy(img, buf, len);
    return parse_owned(img, len, c.label, out, e);
}

int qkv_st_read(const char *path, qkv_safetensors **out, qkv_err *e) {
    st_ctx c = {path ? path : "(null)", e};
    if (!out) return qkv__st_fail(&c, "no output pointer given");
    *out = NULL;
    if (!path) return qkv__st_fail(&c, "no path given");
    size_t len = 0;
    qkv_read_status rs;
    uint8_t *img = (uint8_t *)qkv__read_file_max(path, QKV_MAX_SAFETENSORS_BYTES, QKV_READ_REGULAR, &len, &rs);
    if (rs.stage == QKV_READ_OPEN) return qkv__st_fail(&c, "cannot open: %s", strerror(rs.errnum));
    if (rs.stage == QKV_READ_NOT_REGULAR)
        return qkv__st_fail(&c, "is %s, not a regular file (a safetensors file is read whole)",
                            qkv__file_type_name(rs.mode));
    if (rs.stage == QKV_READ_TOO_BIG) return qkv__st_fail(&c, "larger than 16 GiB, the most qkv reads of a safetensors file");
    if (!img) return qkv__st_fail(&c, "cannot read: %s", strerror(rs.errnum));
    if (len == 0) { free(img); return qkv__st_fail(&c, "file is empty, expected a safetensors header"); }
    return parse_owned(img, len, path, out, e);
}
