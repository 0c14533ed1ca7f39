/* Tests for the safetensors reader and writer (src/io/st_*.c): round trips, the exact on-disk
 * layout, the reference loader's rejections (each with the message fragment a user would see),
 * load_into checks and atomic writes that fail cleanly. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L   /* fsync, fileno, strndup, mkdtemp */
#endif

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/safetensors.h"
#include "suites.h"
#include "testutil.h"

static qkv_err err;

/* ---------------------------------------------------------------- helpers */

/* a stack tensor over caller memory (no dependency on the tensor allocator) */
static qkv_tensor mk(qkv_dtype dt, int ndim, const int64_t *shape, void *data) {
    qkv_tensor t;
    memset(&t, 0, sizeof t);
    t.dtype = dt;
    t.ndim = ndim;
    t.numel = 1;
    for (int d = 0; d < QKV_MAX_DIMS; d++) {
        t.shape[d] = d < ndim && shape ? shape[d] : 1;
        if (d < ndim) t.numel *= shape[d];
    }
    t.data = data;
    return t;
}

/* le64(n) + header bytes + dlen data bytes (0, 1, 2, ...) */
static uint8_t *image_n(uint64_t n, const char *hdr, size_t hlen, size_t dlen, size_t *len) {
    uint8_t *b = malloc(8 + hlen + dlen + 1);
    ck_assert_ptr_nonnull(b);
    for (int i = 0; i < 8; i++) b[i] = (uint8_t)(n >> (8 * i));
    memcpy(b + 8, hdr, hlen);
    for (size_t i = 0; i < dlen; i++) b[8 + hlen + i] = (uint8_t)i;
    *len = 8 + hlen + dlen;
    return b;
}

static uint8_t *image(const char *hdr, size_t dlen, size_t *len) { return image_n(strlen(hdr), hdr, strlen(hdr), dlen, len); }

static qkv_safetensors *parse_ok(const uint8_t *b, size_t len) {
    qkv_safetensors *st = NULL;
    err.msg[0] = '\0';
    int rc = qkv_st_parse(b, len, "good.safetensors", &st, &err);
    ck_assert_msg(rc == 0, "unexpected parse failure: %s", err.msg);
    ck_assert_ptr_nonnull(st);
    return st;
}

/* the failure contract: -1, no object, one line that starts with the label and has frag */
static void check_fail(int rc, const qkv_safetensors *st, const char *label, const char *frag) {
    ck_assert_msg(rc == -1, "expected failure (%s)", frag);
    ck_assert_ptr_null(st);
    ck_assert_msg(strncmp(err.msg, label, strlen(label)) == 0 && err.msg[strlen(label)] == ':',
                  "message does not start with \"%s:\": %s", label, err.msg);
    ck_assert_msg(strstr(err.msg, frag) != NULL, "message lacks \"%s\": %s", frag, err.msg);
    ck_assert_msg(strchr(err.msg, '\n') == NULL, "message is not one line: %s", err.msg);
}

static void expect_fail_img(const uint8_t *b, size_t len, const char *frag) {
    qkv_safetensors *st = NULL;
    err.msg[0] = '\0';
    int rc = qkv_st_parse(b, len, "bad.safetensors", &st, &err);
    check_fail(rc, st, "bad.safetensors", frag);
}

/* names in dir other than . and .. */
static int count_entries(const char *dir) {
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
    closedir(d);
    return n;
}

static uint8_t *slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    uint8_t *b = malloc(1 << 20);
    ck_assert_ptr_nonnull(b);
    *len = fread(b, 1, 1 << 20, f);
    fclose(f);
    return b;
}

/* ---------------------------------------------------------------- round trips */

static float f32v[6] = {1.5f, -2.25f, 3.0f, 0.0f, -0.0f, 1e-30f};
static double f64v[3] = {3.141592653589793, -1e300, 5e-324};
static int32_t i32v[8] = {0, 1, -1, 2147483647, -2147483647 - 1, 42, 7, -9};
static float scal = 0.125f;

/* the four reference tensors: F32 (2,3), F64 (3), I32 (2,2,2), F32 scalar */
static void four_items(qkv_tensor t[4], qkv_st_item it[4]) {
    static const int64_t s0[] = {2, 3}, s1[] = {3}, s2[] = {2, 2, 2};
    t[0] = mk(QKV_F32, 2, s0, f32v);
    t[1] = mk(QKV_F64, 1, s1, f64v);
    t[2] = mk(QKV_I32, 3, s2, i32v);
    t[3] = mk(QKV_F32, 0, NULL, &scal);
    it[0] = (qkv_st_item){"layer.w", &t[0]};
    it[1] = (qkv_st_item){"layer.b64", &t[1]};
    it[2] = (qkv_st_item){"tokens", &t[2]};
    it[3] = (qkv_st_item){"scale", &t[3]};
}

/* st holds exactly the four reference tensors, in order, with their bytes */
static void check_four(const qkv_safetensors *st, const qkv_st_item it[4]) {
    ck_assert_int_eq(qkv_st_count(st), 4);
    uint64_t off = 0;
    for (int i = 0; i < 4; i++) {
        const qkv_st_entry *e = qkv_st_entry_at(st, i);
        const qkv_tensor *t = it[i].t;
        ck_assert_ptr_nonnull(e);
        ck_assert_str_eq(e->name, it[i].name);
        ck_assert_ptr_eq(qkv_st_find(st, it[i].name), e);
        ck_assert_int_eq(e->dtype, t->dtype);
        ck_assert_int_eq(e->ndim, t->ndim);
        for (int d = 0; d < QKV_MAX_DIMS; d++) ck_assert_int_eq(e->shape[d], t->shape[d]);
        size_t nb = (size_t)t->numel * qkv_dtype_size(t->dtype);
        ck_assert_uint_eq(e->begin, off);              /* written in order, ascending */
        ck_assert_uint_eq(e->end, off + nb);
        off += nb;
        const void *p = qkv_st_data(st, e);
        ck_assert_ptr_nonnull(p);
        ck_assert_uint_eq((uintptr_t)p % qkv_dtype_size(t->dtype), 0);
        ck_assert_int_eq(memcmp(p, t->data, nb), 0);
    }
}

START_TEST(test_roundtrip_mem_all_dtypes) {
    qkv_tensor t[4];
    qkv_st_item it[4];
    four_items(t, it);
    uint8_t *buf = NULL;
    size_t len = 0;
    ck_assert_msg(qkv_st_write_mem(it, 4, NULL, 0, &buf, &len, &err) == 0, "%s", err.msg);
    qkv_safetensors *st = parse_ok(buf, len);
    check_four(st, it);

    /* load_into gives back the values, including the scalar */
    float w[6], s = 0;
    double b[3];
    int32_t k[8];
    static const int64_t s0[] = {2, 3}, s1[] = {3}, s2[] = {2, 2, 2};
    qkv_tensor tw = mk(QKV_F32, 2, s0, w), tb = mk(QKV_F64, 1, s1, b), tk = mk(QKV_I32, 3, s2, k),
               ts = mk(QKV_F32, 0, NULL, &s);
    ck_assert_msg(qkv_st_load_into(st, "layer.w", &tw, &err) == 0, "%s", err.msg);
    ck_assert_msg(qkv_st_load_into(st, "layer.b64", &tb, &err) == 0, "%s", err.msg);
    ck_assert_msg(qkv_st_load_into(st, "tokens", &tk, &err) == 0, "%s", err.msg);
    ck_assert_msg(qkv_st_load_into(st, "scale", &ts, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(memcmp(w, f32v, sizeof w), 0);
    ck_assert_int_eq(memcmp(b, f64v, sizeof b), 0);
    ck_assert_int_eq(memcmp(k, i32v, sizeof k), 0);
    ck_assert(s == 0.125f);
    qkv_st_free(st);
    free(buf);
}
END_TEST

START_TEST(test_roundtrip_file) {
    char dir[64], path[128];
    qkv_test_mkdtemp(dir, sizeof dir, "st-test");
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    qkv_tensor t[4];
    qkv_st_item it[4];
    four_items(t, it);
    ck_assert_msg(qkv_st_write(path, it, 4, NULL, 0, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(count_entries(dir), 1);   /* no temp file left behind */

    qkv_safetensors *st = NULL;
    ck_assert_msg(qkv_st_read(path, &st, &err) == 0, "%s", err.msg);
    check_four(st, it);
    ck_assert_str_eq(qkv_st_meta(st, "format"), "pt");
    qkv_st_free(st);

    /* the file and write_mem produce the same bytes */
    uint8_t *mem = NULL;
    size_t mlen = 0, flen = 0;
    ck_assert(qkv_st_write_mem(it, 4, NULL, 0, &mem, &mlen, &err) == 0);
    uint8_t *file = slurp(path, &flen);
    ck_assert_uint_eq(flen, mlen);
    ck_assert_int_eq(memcmp(file, mem, mlen), 0);
    free(file);
    free(mem);

    /* writing again replaces the file atomically */
    ck_assert(qkv_st_write(path, it, 1, NULL, 0, &err) == 0);
    ck_assert(qkv_st_read(path, &st, &err) == 0);
    ck_assert_int_eq(qkv_st_count(st), 1);
    qkv_st_free(st);
    ck_assert_int_eq(count_entries(dir), 1);
    qkv_test_rmtree(dir);
}
END_TEST

START_TEST(test_metadata) {
    float v = 1;
    qkv_tensor t = mk(QKV_F32, 0, NULL, &v);
    qkv_st_item it = {"x", &t};
    const char *meta[] = {"step", "100", "note", "quote \" backslash \\ newline \n é"};
    uint8_t *buf = NULL;
    size_t len = 0;
    ck_assert(qkv_st_write_mem(&it, 1, meta, 2, &buf, &len, &err) == 0);
    qkv_safetensors *st = parse_ok(buf, len);
    ck_assert_str_eq(qkv_st_meta(st, "format"), "pt");   /* always added */
    ck_assert_str_eq(qkv_st_meta(st, "step"), "100");
    ck_assert_str_eq(qkv_st_meta(st, "note"), meta[3]);
    ck_assert_ptr_null(qkv_st_meta(st, "absent"));
    ck_assert_int_eq(qkv_st_meta_count(st), 3);
    const char *k, *val;
    ck_assert_int_eq(qkv_st_meta_at(st, 0, &k, &val), 0);
    ck_assert_str_eq(k, "format");
    ck_assert_int_eq(qkv_st_meta_at(st, 3, &k, &val), -1);
    qkv_st_free(st);
    free(buf);

    /* a caller's own "format" wins and is not duplicated */
    const char *meta2[] = {"format", "np"};
    ck_assert(qkv_st_write_mem(&it, 1, meta2, 1, &buf, &len, &err) == 0);
    st = parse_ok(buf, len);
    ck_assert_str_eq(qkv_st_meta(st, "format"), "np");
    ck_assert_int_eq(qkv_st_meta_count(st), 1);
    qkv_st_free(st);
    free(buf);
}
END_TEST

START_TEST(test_header_padding) {
    float v[3] = {1, 2, 3};
    static const int64_t s[] = {3};
    qkv_tensor t = mk(QKV_F32, 1, s, v);
    char name[32];
    for (int n = 1; n <= 16; n++) {   /* every residue of the header length mod 8 */
        memset(name, 'a', (size_t)n);
        name[n] = '\0';
        qkv_st_item it = {name, &t};
        uint8_t *buf = NULL;
        size_t len = 0;
        ck_assert(qkv_st_write_mem(&it, 1, NULL, 0, &buf, &len, &err) == 0);
        uint64_t hn = 0;
        for (int i = 7; i >= 0; i--) hn = (hn << 8) | buf[i];
        ck_assert_uint_eq(hn % 8, 0);
        ck_assert_uint_eq(len, 8 + hn + sizeof v);
        ck_assert_int_eq(buf[8], '{');
        size_t last = 8 + (size_t)hn - 1;
        while (buf[last] == ' ') last--;           /* padding is spaces only ... */
        ck_assert_int_eq(buf[last], '}');          /* ... after the closing brace */
        ck_assert_uint_lt(8 + hn - 1 - last, 8);   /* and less than 8 of them */
        ck_assert_int_eq(memcmp(buf + 8 + hn, v, sizeof v), 0);
        qkv_st_free(parse_ok(buf, len));
        free(buf);
    }
}
END_TEST

/* the exact bytes of a small file pin the format against the reference writer's layout */
START_TEST(test_exact_bytes) {
    float v[2] = {1.0f, 2.0f};
    static const int64_t s[] = {2};
    qkv_tensor t = mk(QKV_F32, 1, s, v);
    qkv_st_item it = {"a", &t};
    uint8_t *buf = NULL;
    size_t len = 0;
    ck_assert(qkv_st_write_mem(&it, 1, NULL, 0, &buf, &len, &err) == 0);
    const char *json = "{\"__metadata__\":{\"format\":\"pt\"},\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}";
    size_t jl = strlen(json), hl = (jl + 7) / 8 * 8;
    ck_assert_uint_eq(len, 8 + hl + 8);
    ck_assert_uint_eq(buf[0], hl);
    for (int i = 1; i < 8; i++) ck_assert_uint_eq(buf[i], 0);
    ck_assert_int_eq(memcmp(buf + 8, json, jl), 0);
    for (size_t i = jl; i < hl; i++) ck_assert_int_eq(buf[8 + i], ' ');
    static const uint8_t data[8] = {0, 0, 0x80, 0x3f, 0, 0, 0, 0x40};   /* 1.0f, 2.0f little-endian */
    ck_assert_int_eq(memcmp(buf + 8 + hl, data, 8), 0);
    free(buf);
}
END_TEST

/* the example file from the reference documentation, byte for byte */
START_TEST(test_reference_example) {
    const char *hdr = "{\"test\":{\"dtype\":\"I32\",\"shape\":[2,2],\"data_offsets\":[0,16]}}";
    ck_assert_uint_eq(strlen(hdr), 0x3c);
    size_t len;
    uint8_t *b = image(hdr, 16, &len);
    memset(b + 8 + 0x3c, 0, 16);
    qkv_safetensors *st = parse_ok(b, len);
    const qkv_st_entry *e = qkv_st_find(st, "test");
    ck_assert_ptr_nonnull(e);
    ck_assert_int_eq(e->dtype, QKV_I32);
    ck_assert_int_eq(e->ndim, 2);
    ck_assert_ptr_null(qkv_st_meta(st, "format"));
    ck_assert_int_eq(qkv_st_meta_count(st), 0);
    qkv_st_free(st);
    free(b);
}
END_TEST

/* things the reference accepts: whitespace and padding, any key order, unknown fields,
 * zero-size tensors, escapes, "__metadata__": null */
START_TEST(test_accepts_valid_variants) {
    const char *hdr =
        "{ \"b\" : {\"shape\": [2], \"dtype\": \"F32\", \"data_offsets\": [8, 16], \"extra\": {\"x\": [1.5, null]}},\n"
        "\t\"a\\\"q\\u00e9\\ud83d\\ude00\": {\"dtype\":\"I32\",\"shape\":[2],\"data_offsets\":[0,8]},\r\n"
        "  \"empty\": {\"dtype\":\"F64\",\"shape\":[0,3],\"data_offsets\":[16,16]},"
        "  \"é\": {\"dtype\":\"F64\",\"shape\":[0],\"data_offsets\":[16,16]},"
        "  \"__metadata__\": null }      ";
    size_t len;
    uint8_t *b = image(hdr, 16, &len);
    qkv_safetensors *st = parse_ok(b, len);
    ck_assert_int_eq(qkv_st_count(st), 4);
    ck_assert_str_eq(qkv_st_entry_at(st, 0)->name, "b");   /* header order, not offset order */
    ck_assert_str_eq(qkv_st_entry_at(st, 1)->name, "a\"q\xc3\xa9\xf0\x9f\x98\x80");
    ck_assert_ptr_eq(qkv_st_find(st, "a\"q\xc3\xa9\xf0\x9f\x98\x80"), qkv_st_entry_at(st, 1));
    ck_assert_ptr_nonnull(qkv_st_find(st, "\xc3\xa9"));
    const qkv_st_entry *e = qkv_st_find(st, "empty");
    ck_assert_int_eq(e->ndim, 2);
    ck_assert_int_eq(e->shape[0], 0);
    ck_assert_uint_eq(e->end - e->begin, 0);
    ck_assert_ptr_nonnull(qkv_st_data(st, e));
    ck_assert_int_eq(((const uint8_t *)qkv_st_data(st, qkv_st_find(st, "b")))[0], 8);
    ck_assert_int_eq(qkv_st_meta_count(st), 0);
    qkv_st_free(st);
    free(b);

    /* an empty file body: no tensors, no data */
    b = image("{}", 0, &len);
    st = parse_ok(b, len);
    ck_assert_int_eq(qkv_st_count(st), 0);
    ck_assert_ptr_null(qkv_st_entry_at(st, 0));
    qkv_st_free(st);
    free(b);
}
END_TEST

/* offsets and a header length that leave tensors misaligned still give aligned pointers */
START_TEST(test_misaligned_data_is_aligned) {
    const char *hdr = "{\"i\":{\"dtype\":\"I32\",\"shape\":[1],\"data_offsets\":[0,4]},"
                      "\"d\":{\"dtype\":\"F64\",\"shape\":[1],\"data_offsets\":[4,12]}}";
    for (size_t pad = 0; pad < 8; pad++) {
        char h[256];
        snprintf(h, sizeof h, "%s%.*s", hdr, (int)pad, "        ");
        size_t len;
        uint8_t *b = image(h, 12, &len);
        int32_t iv = -5;
        double dv = 2.5;
        memcpy(b + 8 + strlen(h), &iv, 4);
        memcpy(b + 8 + strlen(h) + 4, &dv, 8);
        qkv_safetensors *st = parse_ok(b, len);
        const void *pi = qkv_st_data(st, qkv_st_find(st, "i")), *pd = qkv_st_data(st, qkv_st_find(st, "d"));
        ck_assert_uint_eq((uintptr_t)pi % 4, 0);
        ck_assert_uint_eq((uintptr_t)pd % 8, 0);
        ck_assert_int_eq(*(const int32_t *)pi, -5);
        ck_assert(*(const double *)pd == 2.5);
        qkv_st_free(st);
        free(b);
    }
}
END_TEST

START_TEST(test_names_are_escaped) {
    const char *names[] = {"q\"uote", "back\\slash", "new\nline", "tab\t", "w\xc3\xa9", "", "ctl\x01"};
    enum { N = sizeof names / sizeof names[0] };
    float v[N];
    qkv_tensor t[N];
    qkv_st_item it[N];
    for (int i = 0; i < N; i++) {
        v[i] = (float)i;
        t[i] = mk(QKV_F32, 0, NULL, &v[i]);
        it[i] = (qkv_st_item){names[i], &t[i]};
    }
    uint8_t *buf = NULL;
    size_t len = 0;
    ck_assert_msg(qkv_st_write_mem(it, N, NULL, 0, &buf, &len, &err) == 0, "%s", err.msg);
    for (size_t i = 8; i < len - N * 4; i++) ck_assert_uint_ge(buf[i], 0x20);   /* nothing raw in the header */
    qkv_safetensors *st = parse_ok(buf, len);
    for (int i = 0; i < N; i++) {
        const qkv_st_entry *e = qkv_st_find(st, names[i]);
        ck_assert_ptr_nonnull(e);
        ck_assert(*(const float *)qkv_st_data(st, e) == (float)i);
    }
    qkv_st_free(st);
    free(buf);
}
END_TEST

START_TEST(test_accessors_on_edges) {
    ck_assert_int_eq(qkv_st_count(NULL), 0);
    ck_assert_ptr_null(qkv_st_find(NULL, "x"));
    ck_assert_ptr_null(qkv_st_meta(NULL, "x"));
    qkv_st_free(NULL);
    qkv_tensor t[4];
    qkv_st_item it[4];
    four_items(t, it);
    uint8_t *buf = NULL;
    size_t len = 0;
    ck_assert(qkv_st_write_mem(it, 4, NULL, 0, &buf, &len, &err) == 0);
    qkv_safetensors *a = parse_ok(buf, len), *b = parse_ok(buf, len);
    ck_assert_ptr_null(qkv_st_entry_at(a, -1));
    ck_assert_ptr_null(qkv_st_entry_at(a, 4));
    ck_assert_ptr_null(qkv_st_find(a, "layer"));
    ck_assert_ptr_null(qkv_st_data(a, qkv_st_entry_at(b, 0)));   /* an entry of another file */
    ck_assert_ptr_null(qkv_st_data(a, NULL));
    qkv_st_free(a);
    qkv_st_free(b);
    free(buf);
}
END_TEST

/* many tensors: the sorted index and duplicate check stay fast and correct */
START_TEST(test_many_tensors) {
    enum { N = 3000 };
    static qkv_tensor t[N];
    static qkv_st_item it[N];
    static char names[N][16];
    static int32_t v[N];
    for (int i = 0; i < N; i++) {
        v[i] = i;
        snprintf(names[i], sizeof names[i], "t.%d", (i * 7919) % N);
        t[i] = mk(QKV_I32, 0, NULL, &v[i]);
        it[i] = (qkv_st_item){names[i], &t[i]};
    }
    uint8_t *buf = NULL;
    size_t len = 0;
    ck_assert_msg(qkv_st_write_mem(it, N, NULL, 0, &buf, &len, &err) == 0, "%s", err.msg);
    qkv_safetensors *st = parse_ok(buf, len);
    for (int i = 0; i < N; i++)
        ck_assert_int_eq(*(const int32_t *)qkv_st_data(st, qkv_st_find(st, names[i])), i);
    qkv_st_free(st);
    free(buf);
}
END_TEST

/* ---------------------------------------------------------------- malformed input */

typedef struct {
    const char *hdr;
    size_t hlen;           /* the header may contain NUL bytes */
    int64_t n;             /* length field to write; -1: hlen */
    size_t dlen;           /* data bytes after the header */
    const char *frag;      /* expected in the message */
} bad_case;

#define H(s) s, sizeof(s) - 1
#define F32A(off) "{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":" off "}"

static const bad_case bad_cases[] = {
    /* length prefix */
    {H("{}"), 100000001, 0, "header length 100000001 exceeds the limit of 100000000 bytes"},
    {H("{}"), 3, 0, "header length 3 runs past the end of the file"},
    {H("{}"), (int64_t)0x7fffffffffffffffLL, 0, "exceeds the limit"},
    {H(""), -1, 0, "header is empty"},
    /* UTF-8 */
    {H("{\"\xc0\xaf\":1}"), -1, 0, "header byte 2: invalid UTF-8 (overlong encoding)"},
    {H("{\"\xe0\x80\xaf\":1}"), -1, 0, "invalid UTF-8 (overlong encoding)"},
    {H("{\"\xed\xa0\x80\":1}"), -1, 0, "invalid UTF-8 (UTF-16 surrogate)"},
    {H("{\"\xf4\x90\x80\x80\":1}"), -1, 0, "invalid UTF-8 (code point above U+10FFFF)"},
    {H("{\"\xf8\x88\x80\x80\x80\":1}"), -1, 0, "code point above U+10FFFF"},
    {H("{\"\xe2\x82\":1}"), -1, 0, "invalid UTF-8 (truncated multi-byte sequence)"},
    {H("{\"\x80\":1}"), -1, 0, "unexpected continuation byte"},
    /* start and JSON syntax */
    {H("[]"), -1, 0, "header starts with '[', expected a JSON object starting with '{'"},
    {H("\xef\xbb\xbf{}"), -1, 0, "header starts with byte 0xef"},
    {H(" {}"), -1, 0, "header starts with ' '"},
    {H("{\"a\":"), -1, 0, "invalid JSON"},
    {H("{} x"), -1, 0, "header byte 3: invalid JSON"},
    {H("{}{}"), -1, 0, "invalid JSON"},
    {H("{\"a\":" F32A("[0,8]") ",}"), -1, 8, "invalid JSON"},
    {H("{\"\\ud800\":1}"), -1, 0, "invalid JSON"},
    {H("{\"a\\uzzzz\":1}"), -1, 0, "header byte 3: invalid JSON"},   /* cJSON alone reads it as \\u0000 */
    {H("{}\0xx"), -1, 0, "header byte 2: control character 0x00 outside a string"},
    {H("{\"a\x01\":1}"), -1, 0, "raw control character 0x01 inside a string"},
    {H("{\"a\\u0000b\":1}"), -1, 0, "\\u0000 inside a string is not supported"},
    {H("{\"a\":{\"dtype\":\"F32\",\"shape\":[02],\"data_offsets\":[0,8]}}"), -1, 8, "invalid JSON number \"02\""},
    {H("{\"a\":{\"dtype\":\"F32\",\"shape\":[2.],\"data_offsets\":[0,8]}}"), -1, 8, "invalid JSON number \"2.\""},
    {H("{\"a\":{\"dtype\":\"F32\",\"shape\":[-],\"data_offsets\":[0,8]}}"), -1, 8, "invalid JSON number \"-\""},
    /* keys */
    {H("{\"a\":" F32A("[0,8]") ",\"a\":" F32A("[0,8]") "}"), -1, 8, "duplicate key \"a\""},
    {H("{\"__metadata__\":{},\"__metadata__\":{}}"), -1, 0, "duplicate key \"__metadata__\""},
    {H("{\"a\":{\"dtype\":\"F32\",\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}"), -1, 8,
     "tensor \"a\": duplicate field \"dtype\""},
    {H("{\"__metadata__\":{\"k\":\"1\",\"k\":\"2\"}}"), -1, 0, "\"__metadata__\": duplicate key \"k\""},
    /* entry structure */
    {H("{\"a\":5}"), -1, 0, "tensor \"a\": expected an object with dtype, shape and data_offsets, got a number"},
    {H("{\"a\":{\"shape\":[2],\"data_offsets\":[0,8]}}"), -1, 8, "tensor \"a\": missing field \"dtype\""},
    {H("{\"a\":{\"dtype\":\"F32\",\"shape\":[2]}}"), -1, 8, "missing field \"data_offsets\""},
    {H("{\"a\":{\"dtype\":\"F33\",\"shape\":[2],\"data_offsets\":[0,8]}}"), -1, 8, "tensor \"a\": unknown dtype \"F33\""},
    {H("{\"a\":{\"dtype\":\"F16\",\"shape\":[2],\"data_offsets\":[0,4]}}"), -1, 4,
     "tensor \"a\": dtype F16 is not supported (qkv reads F32, F64, I32)"},
    {H("{\"a\":{\"dtype\":32,\"shape\":[2],\"data_offsets\":[0,8]}}"), -1, 8, "dtype must be a string, got a number"},
    {H("{\"a\":{\"dtype\":\"F32\",\"shape\":[2,-3],\"data_offsets\":[0,8]}}"), -1, 8,
     "tensor \"a\": shape[1]: expected a non-negative integer, got -3"},
    {H("{\"a\":{\"dtype\":\"F32\",\"shape\":[2.0],\"data_offsets\":[0,8]}}"), -1, 8, "shape[0]: expected an integer, got 2.0"},
    {H("{\"a\":{\"dtype\":\"F32\",\"shape\":[2e0],\"data_offsets\":[0,8]}}"), -1, 8, "shape[0]: expected an integer, got 2e0"},
    {H("{\"a\":{\"dtype\":\"F32\",\"shape\":[\"2\"],\"data_offsets\":[0,8]}}"), -1, 8,
     "shape[0]: expected a non-negative integer, got a string"},
    {H("{\"a\":{\"dtype\":\"F32\",\"shape\":2,\"data_offsets\":[0,8]}}"), -1, 8, "shape must be an array of integers"},
    {H("{\"a\":{\"dtype\":\"F32\",\"shape\":[1,1,1,1,2],\"data_offsets\":[0,8]}}"), -1, 8,
     "tensor \"a\": shape has 5 dimensions, qkv supports at most 4"},
    {H("{\"a\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296,4294967296],\"data_offsets\":[0,8]}}"), -1, 8,
     "overflows 64-bit byte counts"},
    {H("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8,8]}}"), -1, 8,
     "tensor \"a\": data_offsets must be [begin, end], got 3 values"},
    {H("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0]}}"), -1, 8, "data_offsets must be [begin, end], got 1 values"},
    {H("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":{}}}"), -1, 8, "data_offsets must be [begin, end], got an object"},
    {H("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,0]}}"), -1, 8,
     "tensor \"a\": data_offsets [8,0]: begin is after end"},
    {H("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,9007199254740993]}}"), -1, 8,
     "data_offsets[1]: expected an integer <= 2^53, got 9007199254740993"},
    {H("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,null]}}"), -1, 8, "data_offsets[1]: expected a non-negative integer, got null"},
    /* metadata */
    {H("{\"__metadata__\":{\"step\":1}}"), -1, 0, "\"__metadata__\" key \"step\": value must be a string, got a number"},
    {H("{\"__metadata__\":{\"o\":{}}}"), -1, 0, "value must be a string, got an object"},
    {H("{\"__metadata__\":[\"format\",\"pt\"]}"), -1, 0, "\"__metadata__\" must be an object of strings, got an array"},
    /* tiling of the data buffer */
    {H("{\"a\":" F32A("[0,8]") ",\"b\":" F32A("[12,20]") "}"), -1, 20,
     "tensor \"b\": data_offsets [12,20] start at 12, expected 8: gap of 4 bytes after tensor \"a\""},
    {H("{\"a\":" F32A("[4,12]") "}"), -1, 12, "gap of 4 bytes at the start of the data buffer"},
    {H("{\"a\":" F32A("[0,8]") ",\"b\":" F32A("[4,12]") "}"), -1, 12,
     "tensor \"b\": data_offsets [4,12] overlap tensor \"a\", which ends at 8"},
    {H("{\"b\":" F32A("[0,8]") ",\"a\":" F32A("[0,8]") "}"), -1, 8, "overlap tensor"},
    {H("{\"a\":" F32A("[0,8]") "}"), -1, 12, "4 trailing bytes after the last tensor"},
    {H("{}"), -1, 3, "3 trailing bytes after the last tensor"},
    {H("{\"a\":" F32A("[0,8]") "}"), -1, 4, "tensor \"a\": data_offsets end at 8 but the data buffer holds only 4 bytes (truncated file?)"},
    {H("{\"a\":" F32A("[0,12]") "}"), -1, 12, "data_offsets [0,12] hold 12 bytes, expected 8 (shape (2) F32)"},
    {H("{\"a\":{\"dtype\":\"F64\",\"shape\":[],\"data_offsets\":[0,4]}}"), -1, 4, "hold 4 bytes, expected 8 (shape () F64)"},
};
enum { N_BAD = sizeof bad_cases / sizeof bad_cases[0] };

START_TEST(test_malformed) {
    const bad_case *bc = &bad_cases[_i];
    size_t len;
    uint8_t *b = image_n(bc->n < 0 ? bc->hlen : (uint64_t)bc->n, bc->hdr, bc->hlen, bc->dlen, &len);
    expect_fail_img(b, len, bc->frag);
    free(b);
}
END_TEST

START_TEST(test_short_files) {
    static const uint8_t b[8] = {2, 0, 0, 0, 0, 0, 0, 0};
    for (size_t len = 0; len < 8; len++) expect_fail_img(len ? b : NULL, len, "expected at least 8 (the header length)");
    expect_fail_img(b, 5, "file holds 5 bytes, expected at least 8");
}
END_TEST

/* the message format the rest of qkv relies on, in full */
START_TEST(test_message_exact) {
    size_t len;
    uint8_t *b = image("{\"blocks.0.attn.wq.weight\":{\"dtype\":\"F32\",\"shape\":[4,6],\"data_offsets\":[0,100]}}", 100, &len);
    qkv_safetensors *st = NULL;
    ck_assert_int_eq(qkv_st_parse(b, len, "model.safetensors", &st, &err), -1);
    ck_assert_str_eq(err.msg, "model.safetensors: tensor \"blocks.0.attn.wq.weight\": data_offsets [0,100] hold 100 "
                          "bytes, expected 96 (shape (4,6) F32)");
    ck_assert_int_eq(err.code, QKV_ERR_FAIL); /* a damaged file: a failure at run time, never the user's input */
    /* no error to fill: the failure is still reported */
    ck_assert_int_eq(qkv_st_parse(b, len, "model.safetensors", &st, NULL), -1);
    free(b);
}
END_TEST

/* names with control characters are shown escaped, keeping the message on one line */
START_TEST(test_message_one_line) {
    size_t len;
    uint8_t *b = image("{\"bad\\nname\":{\"dtype\":\"F33\",\"shape\":[],\"data_offsets\":[0,4]}}", 4, &len);
    expect_fail_img(b, len, "tensor \"bad\\x0aname\": unknown dtype \"F33\"");
    free(b);
}
END_TEST

/* nesting deeper than serde_json allows is refused even inside an ignored field */
START_TEST(test_nesting_depth) {
    char h[1024];
    for (int depth = 120; depth <= 130; depth += 10) {
        int o = snprintf(h, sizeof h, "{\"a\":{\"dtype\":\"F32\",\"shape\":[],\"data_offsets\":[0,4],\"x\":");
        for (int i = 0; i < depth - 2; i++) h[o++] = '[';
        for (int i = 0; i < depth - 2; i++) h[o++] = ']';
        h[o++] = '}';
        h[o++] = '}';
        h[o] = '\0';
        size_t len;
        uint8_t *b = image(h, 4, &len);
        if (depth <= 127) qkv_st_free(parse_ok(b, len));
        else expect_fail_img(b, len, "JSON nested deeper than 127 levels");
        free(b);
    }
}
END_TEST

/* every truncation and every single-bit flip of a valid file is handled without a crash
 * (run under the sanitizers); truncations must all fail */
START_TEST(test_truncations_and_bit_flips) {
    qkv_tensor t[4];
    qkv_st_item it[4];
    four_items(t, it);
    uint8_t *buf = NULL;
    size_t len = 0;
    ck_assert(qkv_st_write_mem(it, 4, NULL, 0, &buf, &len, &err) == 0);
    for (size_t l = 0; l < len; l++) {
        qkv_safetensors *st = NULL;
        ck_assert_int_eq(qkv_st_parse(buf, l, "cut", &st, &err), -1);
        ck_assert_ptr_null(st);
    }
    uint64_t hn = buf[0] | (uint64_t)buf[1] << 8;
    for (size_t i = 0; i < 8 + hn; i++)
        for (int bit = 0; bit < 8; bit++) {
            buf[i] ^= (uint8_t)(1u << bit);
            qkv_safetensors *st = NULL;
            if (qkv_st_parse(buf, len, "flip", &st, &err) == 0) qkv_st_free(st);
            else ck_assert_ptr_null(st);
            buf[i] ^= (uint8_t)(1u << bit);
        }
    free(buf);
}
END_TEST

/* ---------------------------------------------------------------- load_into */

START_TEST(test_load_into_mismatch) {
    qkv_tensor t[4];
    qkv_st_item it[4];
    four_items(t, it);
    uint8_t *buf = NULL;
    size_t len = 0;
    ck_assert(qkv_st_write_mem(it, 4, NULL, 0, &buf, &len, &err) == 0);
    qkv_safetensors *st = parse_ok(buf, len);
    float w[6];
    int32_t k[6];
    static const int64_t s32[] = {3, 2}, s6[] = {6}, s23[] = {2, 3};
    qkv_tensor dst = mk(QKV_F32, 2, s32, w);
    ck_assert_int_eq(qkv_st_load_into(st, "layer.w", &dst, &err), -1);
    ck_assert_str_eq(err.msg, "good.safetensors: tensor \"layer.w\": shape (2,3) in the file, expected (3,2)");
    dst = mk(QKV_F32, 1, s6, w);
    ck_assert_int_eq(qkv_st_load_into(st, "layer.w", &dst, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "shape (2,3) in the file, expected (6)"));
    dst = mk(QKV_I32, 2, s23, k);
    ck_assert_int_eq(qkv_st_load_into(st, "layer.w", &dst, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "tensor \"layer.w\": dtype F32 in the file, expected I32"));
    ck_assert_int_eq(qkv_st_load_into(st, "nope", &dst, &err), -1);
    ck_assert_str_eq(err.msg, "good.safetensors: no tensor \"nope\" in the file");
    dst = mk(QKV_F32, 2, s23, NULL);
    ck_assert_int_eq(qkv_st_load_into(st, "layer.w", &dst, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "destination has no data buffer"));
    qkv_st_free(st);
    free(buf);
}
END_TEST

START_TEST(test_load_into_converts_floats) {
    qkv_tensor t[4];
    qkv_st_item it[4];
    four_items(t, it);
    uint8_t *buf = NULL;
    size_t len = 0;
    ck_assert(qkv_st_write_mem(it, 4, NULL, 0, &buf, &len, &err) == 0);
    qkv_safetensors *st = parse_ok(buf, len);
    double w[6];
    float b[3];
    static const int64_t s23[] = {2, 3}, s3[] = {3};
    qkv_tensor dw = mk(QKV_F64, 2, s23, w), db = mk(QKV_F32, 1, s3, b);
    ck_assert_msg(qkv_st_load_into(st, "layer.w", &dw, &err) == 0, "%s", err.msg);
    ck_assert_msg(qkv_st_load_into(st, "layer.b64", &db, &err) == 0, "%s", err.msg);
    for (int i = 0; i < 6; i++) ck_assert(w[i] == (double)f32v[i]);
    for (int i = 0; i < 3; i++) ck_assert(b[i] == (float)f64v[i]);
    qkv_st_free(st);
    free(buf);
}
END_TEST

/* ---------------------------------------------------------------- writing errors */

START_TEST(test_write_rejects_bad_input) {
    float v[2] = {0};
    static const int64_t s[] = {2}, s5[] = {1, 1, 1, 1};
    qkv_tensor t = mk(QKV_F32, 1, s, v), nodata = mk(QKV_F32, 1, s, NULL), r5 = mk(QKV_F32, 4, s5, v);
    r5.ndim = 5;
    uint8_t *buf = NULL;
    size_t len = 0;
    struct { qkv_st_item it[2]; int n; const char *frag; } cases[] = {
        {{{"w", &t}, {"w", &t}}, 2, "<memory>: duplicate tensor name \"w\""},
        {{{"__metadata__", &t}}, 1, "\"__metadata__\" is reserved"},
        {{{"bad\xff", &t}}, 1, "name is not valid UTF-8"},
        {{{"nd", &nodata}}, 1, "tensor \"nd\": has no data"},
        {{{"r5", &r5}}, 1, "tensor \"r5\": rank 5, qkv supports 0..4"},
        {{{NULL, &t}}, 1, "item 0 has no name"},
        {{{"nt", NULL}}, 1, "tensor \"nt\": no tensor given"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ck_assert_int_eq(qkv_st_write_mem(cases[i].it, cases[i].n, NULL, 0, &buf, &len, &err), -1);
        ck_assert_msg(strstr(err.msg, cases[i].frag) != NULL, "lacks \"%s\": %s", cases[i].frag, err.msg);
        ck_assert_ptr_null(buf);
    }
    qkv_st_item ok = {"w", &t};
    const char *dup_meta[] = {"k", "1", "k", "2"};
    ck_assert_int_eq(qkv_st_write_mem(&ok, 1, dup_meta, 2, &buf, &len, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "duplicate metadata key \"k\""));
    const char *null_meta[] = {"k", NULL};
    ck_assert_int_eq(qkv_st_write_mem(&ok, 1, null_meta, 1, &buf, &len, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "metadata pair 0 has a NULL key or value"));

    /* the file writer refuses the same input before creating anything */
    char dir[64], path[128];
    qkv_test_mkdtemp(dir, sizeof dir, "st-test");
    snprintf(path, sizeof path, "%s/m.safetensors", dir);
    ck_assert_int_eq(qkv_st_write(path, cases[0].it, 2, NULL, 0, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "duplicate tensor name \"w\""));
    ck_assert_int_eq(count_entries(dir), 0);
    qkv_test_rmtree(dir);
}
END_TEST

START_TEST(test_write_missing_dir_leaves_nothing) {
    char dir[64], path[160];
    qkv_test_mkdtemp(dir, sizeof dir, "st-test");
    snprintf(path, sizeof path, "%s/no/such/dir/model.safetensors", dir);
    float v = 1;
    qkv_tensor t = mk(QKV_F32, 0, NULL, &v);
    qkv_st_item it = {"x", &t};
    ck_assert_int_eq(qkv_st_write(path, &it, 1, NULL, 0, &err), -1);
    ck_assert_msg(strncmp(err.msg, path, strlen(path)) == 0, "%s", err.msg);
    ck_assert_ptr_nonnull(strstr(err.msg, "cannot create temporary file"));
    ck_assert_ptr_nonnull(strstr(err.msg, strerror(ENOENT)));
    ck_assert_int_eq(count_entries(dir), 0);
    qkv_test_rmtree(dir);
}
END_TEST

/* a write that runs out of space (here: the file-size limit, the portable stand-in for
 * /dev/full) fails, removes its temp file and leaves the old checkpoint intact */
START_TEST(test_write_disk_full_keeps_old_file) {
    char dir[64], path[128];
    qkv_test_mkdtemp(dir, sizeof dir, "st-test");
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    float small = 7;
    qkv_tensor ts = mk(QKV_F32, 0, NULL, &small);
    qkv_st_item old = {"old", &ts};
    ck_assert(qkv_st_write(path, &old, 1, NULL, 0, &err) == 0);

    enum { N = 1 << 15 };
    static float big[N];
    static const int64_t s[] = {N};
    qkv_tensor tb = mk(QKV_F32, 1, s, big);
    qkv_st_item it = {"big", &tb};
    struct rlimit saved, lim;
    ck_assert_int_eq(getrlimit(RLIMIT_FSIZE, &saved), 0);
    lim = saved;
    lim.rlim_cur = 4096;
    void (*prev)(int) = signal(SIGXFSZ, SIG_IGN);   /* get EFBIG instead of a signal */
    ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &lim), 0);
    int rc = qkv_st_write(path, &it, 1, NULL, 0, &err);
    setrlimit(RLIMIT_FSIZE, &saved);   /* restore before asserting: tests may share a process */
    signal(SIGXFSZ, prev);

    ck_assert_int_eq(rc, -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "writing"));
    ck_assert_ptr_nonnull(strstr(err.msg, strerror(EFBIG)));
    ck_assert_int_eq(count_entries(dir), 1);   /* temp file removed */
    qkv_safetensors *st = NULL;
    ck_assert_msg(qkv_st_read(path, &st, &err) == 0, "%s", err.msg);
    ck_assert_ptr_nonnull(qkv_st_find(st, "old"));
    qkv_st_free(st);
    qkv_test_rmtree(dir);
}
END_TEST

/* a rename that fails (the path is a directory) removes the temp file too */
START_TEST(test_write_rename_failure_cleans_up) {
    char dir[64], path[128], inner[160];
    qkv_test_mkdtemp(dir, sizeof dir, "st-test");
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    ck_assert_int_eq(mkdir(path, 0700), 0);
    snprintf(inner, sizeof inner, "%s/keep", path);
    FILE *f = fopen(inner, "w");
    ck_assert_ptr_nonnull(f);
    fclose(f);
    float v = 1;
    qkv_tensor t = mk(QKV_F32, 0, NULL, &v);
    qkv_st_item it = {"x", &t};
    ck_assert_int_eq(qkv_st_write(path, &it, 1, NULL, 0, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "cannot rename"));
    ck_assert_int_eq(count_entries(dir), 1);
    ck_assert_int_eq(count_entries(path), 1);
    remove(inner);
    qkv_test_rmtree(dir);
}
END_TEST

/* ---------------------------------------------------------------- reading files */

START_TEST(test_read_errors) {
    char dir[64], path[128];
    qkv_test_mkdtemp(dir, sizeof dir, "st-test");
    qkv_safetensors *st = NULL;

    snprintf(path, sizeof path, "%s/missing.safetensors", dir);
    ck_assert_int_eq(qkv_st_read(path, &st, &err), -1);
    check_fail(-1, st, path, strerror(ENOENT));

    snprintf(path, sizeof path, "%s/empty.safetensors", dir);
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    fclose(f);
    ck_assert_int_eq(qkv_st_read(path, &st, &err), -1);
    check_fail(-1, st, path, "file is empty");

    f = fopen(path, "wb");
    fwrite("\x02\0\0\0\0\0\0\0{", 1, 9, f);   /* header runs past the end */
    fclose(f);
    ck_assert_int_eq(qkv_st_read(path, &st, &err), -1);
    check_fail(-1, st, path, "runs past the end of the file");

    ck_assert_int_eq(qkv_st_read(dir, &st, &err), -1);
    check_fail(-1, st, dir, strerror(EISDIR));
    qkv_test_rmtree(dir);
}
END_TEST

Suite *safetensors_suite(void) {
    Suite *s = suite_create("safetensors");
    TCase *rt = tcase_create("roundtrip");
    tcase_add_test(rt, test_roundtrip_mem_all_dtypes);
    tcase_add_test(rt, test_roundtrip_file);
    tcase_add_test(rt, test_metadata);
    tcase_add_test(rt, test_header_padding);
    tcase_add_test(rt, test_exact_bytes);
    tcase_add_test(rt, test_reference_example);
    tcase_add_test(rt, test_accepts_valid_variants);
    tcase_add_test(rt, test_misaligned_data_is_aligned);
    tcase_add_test(rt, test_names_are_escaped);
    tcase_add_test(rt, test_accessors_on_edges);
    tcase_add_test(rt, test_many_tensors);
    suite_add_tcase(s, rt);

    TCase *bad = tcase_create("malformed");
    tcase_add_loop_test(bad, test_malformed, 0, N_BAD);
    tcase_add_test(bad, test_short_files);
    tcase_add_test(bad, test_message_exact);
    tcase_add_test(bad, test_message_one_line);
    tcase_add_test(bad, test_nesting_depth);
    tcase_add_test(bad, test_truncations_and_bit_flips);
    suite_add_tcase(s, bad);

    TCase *ld = tcase_create("load_into");
    tcase_add_test(ld, test_load_into_mismatch);
    tcase_add_test(ld, test_load_into_converts_floats);
    suite_add_tcase(s, ld);

    TCase *io = tcase_create("files");
    tcase_add_test(io, test_write_rejects_bad_input);
    tcase_add_test(io, test_write_missing_dir_leaves_nothing);
    tcase_add_test(io, test_write_disk_full_keeps_old_file);
    tcase_add_test(io, test_write_rename_failure_cleans_up);
    tcase_add_test(io, test_read_errors);
    suite_add_tcase(s, io);
    return s;
}
