/* safetensors reader and writer: see safetensors.h for the format and the contract.
 *
 * Reading goes in stages, each rejecting what the reference loader rejects:
 *   1. the 8-byte length prefix (file too short, header too large or past the end);
 *   2. the header bytes as UTF-8 (overlong forms, surrogates, > U+10FFFF);
 *   3. a lexical pass that makes cJSON as strict as RFC 8259 (it is lenient about
 *      control characters and number syntax), records where each number token
 *      starts, and bounds nesting like serde_json;
 *   4. cJSON builds the tree; keys are checked for duplicates (cJSON keeps them);
 *   5. each tensor entry (dtype, shape, data_offsets, byte count) and the metadata;
 *   6. the tensors must tile the data buffer from 0 with no gap, overlap or tail. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L   /* fsync, fileno, strndup, mkdtemp */
#endif

#include "io/safetensors.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Tensor bytes are copied between the file and memory without swapping, which is
 * only right on a little-endian host (every platform qkv targets). The length
 * prefix is decoded byte by byte and does not depend on this. */
#if defined(__BYTE_ORDER__) && defined(__ORDER_LITTLE_ENDIAN__)
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
               "safetensors data is little-endian; a big-endian host needs byte swapping here");
#endif
_Static_assert(sizeof(float) == 4 && sizeof(double) == 8 && sizeof(int32_t) == 4,
               "F32/F64/I32 must be 4/8/4 bytes");

#define ST_MAX_HEADER 100000000ULL      /* the reference loader's limit on N */
#define ST_MAX_INT (1ULL << 53)         /* largest shape/offset value accepted */
#define ST_MAX_DEPTH 127                /* serde_json refuses the 128th nested level */
#define ST_SHOW_MAX 96                  /* longest name (in bytes) quoted in a message */
#define ST_LABEL_MAX 256                /* longest file name (in bytes) shown in a message */
#define ST_SHOW_CAP (ST_LABEL_MAX * 4 + 8)
#define ST_MSG_CAP 2048
#define ST_META_KEY "__metadata__"
#define ST_SUPPORTED "qkv reads F32, F64, I32"

struct qkv_safetensors {
    char *label;                 /* file name used in messages */
    int n;                       /* tensors, in header order */
    qkv_st_entry *entries;
    const uint8_t **ptr;         /* per entry: its bytes, aligned for the dtype */
    uint8_t **copy;              /* per entry: a private aligned copy, or NULL */
    int *by_name;                /* entry indices sorted by name, for qkv_st_find */
    int n_meta;
    char **meta_key, **meta_val;
    uint8_t *image;              /* the owned file image; holds the data buffer */
};

/* ---------------------------------------------------------------- messages */

/* Where messages go and which file they are about. */
typedef struct { const char *label; char *err; size_t errlen; } st_ctx;

/* A name made printable for a one-line message: quoted, escaped, truncated. */
typedef struct { char s[ST_SHOW_CAP]; } shown;

static const char *show_str(shown *b, const char *s, bool quoted, size_t max) {
    size_t o = 0, i = 0;
    if (quoted) b->s[o++] = '"';
    for (; i < max && s[i]; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch == '"' || ch == '\\') {
            b->s[o++] = '\\';
            b->s[o++] = (char)ch;
        } else if (ch < 0x20 || ch == 0x7f) {   /* keeps the message on one line */
            o += (size_t)snprintf(b->s + o, sizeof b->s - o, "\\x%02x", ch);
        } else {
            b->s[o++] = (char)ch;
        }
    }
    if (s[i]) {
        /* cut at a character boundary so the message stays valid UTF-8 */
        while (o > 1 && ((unsigned char)b->s[o - 1] & 0xC0) == 0x80) o--;
        if (o > 1 && (unsigned char)b->s[o - 1] >= 0xC0) o--;
        memcpy(b->s + o, "...", 3);
        o += 3;
    }
    if (quoted) b->s[o++] = '"';
    b->s[o] = '\0';
    return b->s;
}

/* a quoted, escaped rendering of a name */
static const char *show(shown *b, const char *s) { return show_str(b, s ? s : "(null)", true, ST_SHOW_MAX); }

/* "label: message" into the caller's buffer; always returns -1 so callers can `return fail(...)` */
__attribute__((format(printf, 2, 3)))
static int fail(const st_ctx *c, const char *fmt, ...) {
    if (!c->err || c->errlen == 0) return -1;
    char msg[ST_MSG_CAP];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    shown lab;
    snprintf(c->err, c->errlen, "%s: %s", show_str(&lab, c->label, false, ST_LABEL_MAX), msg);
    for (char *p = c->err; *p; p++)   /* strerror text and the like: still one line */
        if (*p == '\n' || *p == '\r') *p = ' ';
    return -1;
}

/* "(4,6)"; "()" for a scalar */
static const char *fmt_shape(char *buf, size_t len, int ndim, const int64_t *shape) {
    size_t o = (size_t)snprintf(buf, len, "(");
    for (int d = 0; d < ndim && o < len; d++)
        o += (size_t)snprintf(buf + o, len - o, "%s%" PRId64, d ? "," : "", shape[d]);
    if (o < len) snprintf(buf + o, len - o, ")");
    return buf;
}

/* ---------------------------------------------------------------- small helpers */

/* a*b without wrapping; false on overflow */
static bool mul_u64(uint64_t a, uint64_t b, uint64_t *out) {
    if (a != 0 && b > UINT64_MAX / a) return false;
    *out = a * b;
    return true;
}

/* product of the dims; false on overflow */
static bool shape_numel(int ndim, const int64_t *shape, uint64_t *out) {
    uint64_t n = 1;
    for (int d = 0; d < ndim; d++)
        if (shape[d] < 0 || !mul_u64(n, (uint64_t)shape[d], &n)) return false;
    *out = n;
    return true;
}

static bool dtype_valid(int dt) { return dt >= 0 && dt < QKV_DTYPE_COUNT; }

static uint64_t read_le64(const uint8_t *p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}

static void write_le64(uint8_t *p, uint64_t v) {
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}

/* A name paired with its position, so sorting can find duplicates and build an index. */
typedef struct { const char *name; int idx; } named;

static int cmp_named(const void *a, const void *b) {
    const named *x = a, *y = b;
    int r = strcmp(x->name, y->name);
    return r ? r : (x->idx > y->idx) - (x->idx < y->idx);
}

/* sorts v by name and returns a name that occurs twice, or NULL; n log n, so big headers stay fast */
static const char *sort_find_dup(named *v, int n) {
    if (n > 1) qsort(v, (size_t)n, sizeof *v, cmp_named);
    for (int i = 1; i < n; i++)
        if (strcmp(v[i - 1].name, v[i].name) == 0) return v[i].name;
    return NULL;
}

/* ---------------------------------------------------------------- UTF-8 */

/* Length of the well-formed UTF-8 sequence at s (n bytes available), or 0 with *why set.
 * Follows the Unicode table of well-formed byte sequences, as Rust's from_utf8 does. */
static size_t utf8_seq(const uint8_t *s, size_t n, const char **why) {
    uint8_t c = s[0], lo = 0x80, hi = 0xBF;
    size_t len;
    if (c < 0x80) return 1;
    if (c < 0xC0) { *why = "unexpected continuation byte"; return 0; }
    if (c < 0xC2) { *why = "overlong encoding"; return 0; }
    if (c < 0xE0) {
        len = 2;
    } else if (c < 0xF0) {
        len = 3;
        if (c == 0xE0) lo = 0xA0;        /* below: overlong */
        if (c == 0xED) hi = 0x9F;        /* above: UTF-16 surrogates */
    } else if (c < 0xF5) {
        len = 4;
        if (c == 0xF0) lo = 0x90;        /* below: overlong */
        if (c == 0xF4) hi = 0x8F;        /* above: past U+10FFFF */
    } else {
        *why = "code point above U+10FFFF";
        return 0;
    }
    if (n < 2 || (s[1] & 0xC0) != 0x80) { *why = "truncated multi-byte sequence"; return 0; }
    if (s[1] < lo || s[1] > hi) {
        *why = c == 0xED ? "UTF-16 surrogate" : c == 0xF4 ? "code point above U+10FFFF" : "overlong encoding";
        return 0;
    }
    for (size_t i = 2; i < len; i++)
        if (i >= n || (s[i] & 0xC0) != 0x80) { *why = "truncated multi-byte sequence"; return 0; }
    return len;
}

/* true when s[0..n) is well-formed UTF-8; otherwise the offending offset and reason */
static bool utf8_valid(const uint8_t *s, size_t n, size_t *bad, const char **why) {
    for (size_t i = 0; i < n;) {
        size_t k = utf8_seq(s + i, n - i, why);
        if (k == 0) { *bad = i; return false; }
        i += k;
    }
    return true;
}

/* ---------------------------------------------------------------- strict JSON lexing */

static bool is_digit(char ch) { return ch >= '0' && ch <= '9'; }

/* characters cJSON gathers into one number token */
static bool is_num_char(char ch) {
    return is_digit(ch) || ch == '+' || ch == '-' || ch == '.' || ch == 'e' || ch == 'E';
}

/* length of the RFC 8259 number at s (n bytes available), or 0 if there is none */
static size_t json_number_len(const char *s, size_t n) {
    size_t i = 0, d;
    if (i < n && s[i] == '-') i++;
    if (i >= n || !is_digit(s[i])) return 0;
    if (s[i] == '0') i++;                            /* no leading zeros */
    else while (i < n && is_digit(s[i])) i++;
    if (i < n && s[i] == '.') {
        for (d = ++i; i < n && is_digit(s[i]); i++) {}
        if (i == d) return 0;
    }
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < n && (s[i] == '+' || s[i] == '-')) i++;
        for (d = i; i < n && is_digit(s[i]); i++) {}
        if (i == d) return 0;
    }
    return i;
}

/* length of the run of number characters at s */
static size_t num_run_len(const char *s, size_t n) {
    size_t i = 0;
    while (i < n && is_num_char(s[i])) i++;
    return i;
}

/* Offsets (into the header) of the number tokens, in document order. */
typedef struct { uint32_t *off; size_t n, cap; } num_list;

static int num_push(num_list *l, size_t off) {
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 64;
        uint32_t *p = realloc(l->off, cap * sizeof *p);
        if (!p) return -1;
        l->off = p;
        l->cap = cap;
    }
    l->off[l->n++] = (uint32_t)off;   /* N <= 1e8 fits in 32 bits */
    return 0;
}

/* Checks one string-internal position; returns how many bytes it consumed, or 0 on error. */
static size_t lex_string_char(const st_ctx *c, const char *h, size_t n, size_t i) {
    unsigned char ch = (unsigned char)h[i];
    if (ch < 0x20) {   /* serde_json rejects raw control characters in strings; cJSON keeps them */
        fail(c, "header byte %zu: raw control character 0x%02x inside a string", i, ch);
        return 0;
    }
    if (ch != '\\' || i + 1 >= n) return 1;
    /* A C string cannot hold U+0000, so names and values containing it are refused. */
    if (h[i + 1] == 'u' && i + 5 < n && memcmp(h + i + 2, "0000", 4) == 0) {
        fail(c, "header byte %zu: \\u0000 inside a string is not supported", i);
        return 0;
    }
    return 2;   /* cJSON validates the escape itself */
}

/* Makes cJSON's input as strict as serde_json's: rejects control characters (including NUL,
 * which would end cJSON's input early) and numbers like 01, +1, 1. or .5 that cJSON's strtod
 * accepts, bounds nesting, and records each number token's offset for the integer checks. */
static int lex_header(const st_ctx *c, const char *h, size_t n, num_list *nums) {
    bool in_string = false;
    int depth = 0;
    for (size_t i = 0; i < n;) {
        unsigned char ch = (unsigned char)h[i];
        if (in_string) {
            if (ch == '"') { in_string = false; i++; continue; }
            size_t k = lex_string_char(c, h, n, i);
            if (k == 0) return -1;
            i += k;
            continue;
        }
        if (ch == '"') {
            in_string = true;
        } else if (ch < 0x20 && ch != ' ' && ch != '\t' && ch != '\n' && ch != '\r') {
            return fail(c, "header byte %zu: control character 0x%02x outside a string", i, ch);
        } else if (ch == '{' || ch == '[') {
            if (++depth > ST_MAX_DEPTH)
                return fail(c, "header byte %zu: JSON nested deeper than %d levels", i, ST_MAX_DEPTH);
        } else if (ch == '}' || ch == ']') {
            depth--;
        } else if (ch == '-' || is_digit((char)ch)) {
            size_t run = num_run_len(h + i, n - i);
            if (json_number_len(h + i, n - i) != run)
                return fail(c, "header byte %zu: invalid JSON number \"%.*s\"", i, run > 32 ? 32 : (int)run, h + i);
            if (num_push(nums, i) < 0) return fail(c, "out of memory reading the header");
            i += run;
            continue;
        }
        i++;
    }
    return 0;
}

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
 * (the reference's usize fields refuse 2.0 and 2e0). On error describes it in why. */
static bool json_uint(const char *hdr, const cJSON *v, uint64_t *out, char *why, size_t whylen) {
    if (!cJSON_IsNumber(v)) {
        snprintf(why, whylen, "expected a non-negative integer, got %s", json_kind(v));
        return false;
    }
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
        snprintf(why, whylen, "expected %s, got %.*s", what, len > 32 ? 32 : (int)len, tok);
        return false;
    }
    *out = x;
    return true;
}

/* ---------------------------------------------------------------- header stages */

/* Stage 1-2: length prefix, UTF-8 and the opening brace. Sets *hdr_len. */
static int check_prefix(const st_ctx *c, const uint8_t *img, size_t len, size_t *hdr_len) {
    if (len < 8)
        return fail(c, "file holds %zu bytes, expected at least 8 (the header length)", len);
    uint64_t n = read_le64(img);
    if (n > ST_MAX_HEADER)
        return fail(c, "header length %" PRIu64 " exceeds the limit of %llu bytes", n, ST_MAX_HEADER);
    if (n > len - 8)
        return fail(c, "header length %" PRIu64 " runs past the end of the file (%zu bytes follow the length)",
                    n, len - 8);
    size_t bad;
    const char *why;
    if (!utf8_valid(img + 8, (size_t)n, &bad, &why))
        return fail(c, "header byte %zu: invalid UTF-8 (%s)", bad, why);
    if (n == 0) return fail(c, "header is empty, expected a JSON object starting with '{'");
    if (img[8] != '{') {
        if (img[8] >= 0x20 && img[8] < 0x7f)
            return fail(c, "header starts with '%c', expected a JSON object starting with '{'", img[8]);
        return fail(c, "header starts with byte 0x%02x, expected a JSON object starting with '{'", img[8]);
    }
    *hdr_len = (size_t)n;
    return 0;
}

/* Stage 3-4: strict lexing, then cJSON. On success *root and *text (a NUL-terminated copy of
 * the header that number items point into) belong to the caller. */
static int parse_json(const st_ctx *c, const uint8_t *h, size_t n, cJSON **root, char **text) {
    num_list nums = {0};
    if (lex_header(c, (const char *)h, n, &nums) < 0) { free(nums.off); return -1; }
    char *t = malloc(n + 1);
    if (!t) { free(nums.off); return fail(c, "out of memory reading a %zu-byte header", n); }
    memcpy(t, h, n);
    t[n] = '\0';
    /* cJSON wants the terminator counted in the length when it must check for trailing text */
    const char *end = NULL;
    cJSON *r = cJSON_ParseWithLengthOpts(t, n + 1, &end, 1);
    if (!r) {
        size_t at = end && end >= t && end <= t + n ? (size_t)(end - t) : n;
        free(nums.off);
        free(t);
        return fail(c, "header byte %zu: invalid JSON", at);
    }
    size_t k = 0;
    long tagged = tag_numbers(r, &nums, &k);
    free(nums.off);
    if (tagged < 0 || (size_t)tagged != nums.n) {   /* the lexer and cJSON disagree: refuse */
        cJSON_Delete(r);
        free(t);
        return fail(c, "header: could not match JSON numbers to their text");
    }
    *root = r;
    *text = t;
    return 0;
}

/* dtype name -> qkv dtype; distinguishes "valid but unsupported" from "unknown" in messages */
static int parse_dtype(const st_ctx *c, const char *tname, const cJSON *v, qkv_dtype *out) {
    static const char *const known[] = {
        "BOOL", "U8", "I8", "U16", "I16", "U32", "I32", "U64", "I64", "F16", "BF16", "F32", "F64",
        "F8_E5M2", "F8_E4M3", "F8_E8M0", "F4", "F6_E2M3", "F6_E3M2", "C64",
    };
    shown sn, sd;
    if (!cJSON_IsString(v))
        return fail(c, "tensor %s: dtype must be a string, got %s", show(&sn, tname), json_kind(v));
    for (int d = 0; d < QKV_DTYPE_COUNT; d++)
        if (strcmp(v->valuestring, qkv_dtype_name((qkv_dtype)d)) == 0) {
            *out = (qkv_dtype)d;
            return 0;
        }
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (strcmp(v->valuestring, known[i]) == 0)
            return fail(c, "tensor %s: dtype %s is not supported (" ST_SUPPORTED ")", show(&sn, tname), known[i]);
    return fail(c, "tensor %s: unknown dtype %s (" ST_SUPPORTED ")", show(&sn, tname), show(&sd, v->valuestring));
}

/* "shape": an array of at most QKV_MAX_DIMS non-negative integers */
static int parse_shape(const st_ctx *c, const char *hdr, const char *tname, const cJSON *v, qkv_st_entry *e) {
    shown sn;
    char why[96];
    if (!cJSON_IsArray(v))
        return fail(c, "tensor %s: shape must be an array of integers, got %s", show(&sn, tname), json_kind(v));
    int nd = cJSON_GetArraySize(v);
    if (nd > QKV_MAX_DIMS)
        return fail(c, "tensor %s: shape has %d dimensions, qkv supports at most %d", show(&sn, tname), nd,
                    QKV_MAX_DIMS);
    e->ndim = 0;
    for (int d = 0; d < QKV_MAX_DIMS; d++) e->shape[d] = 1;
    for (const cJSON *x = v->child; x; x = x->next) {
        uint64_t dim;
        if (!json_uint(hdr, x, &dim, why, sizeof why))
            return fail(c, "tensor %s: shape[%d]: %s", show(&sn, tname), e->ndim, why);
        e->shape[e->ndim++] = (int64_t)dim;
    }
    return 0;
}

/* "data_offsets": exactly [begin, end] with begin <= end */
static int parse_offsets(const st_ctx *c, const char *hdr, const char *tname, const cJSON *v, qkv_st_entry *e) {
    shown sn;
    char why[96];
    if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) != 2) {
        if (cJSON_IsArray(v))
            return fail(c, "tensor %s: data_offsets must be [begin, end], got %d values", show(&sn, tname),
                        cJSON_GetArraySize(v));
        return fail(c, "tensor %s: data_offsets must be [begin, end], got %s", show(&sn, tname), json_kind(v));
    }
    uint64_t o[2];
    for (int i = 0; i < 2; i++)
        if (!json_uint(hdr, cJSON_GetArrayItem(v, i), &o[i], why, sizeof why))
            return fail(c, "tensor %s: data_offsets[%d]: %s", show(&sn, tname), i, why);
    if (o[0] > o[1])
        return fail(c, "tensor %s: data_offsets [%" PRIu64 ",%" PRIu64 "]: begin is after end", show(&sn, tname),
                    o[0], o[1]);
    e->begin = o[0];
    e->end = o[1];
    return 0;
}

/* the byte range must hold exactly numel * dtype size bytes (overflow-checked) */
static int check_nbytes(const st_ctx *c, const char *tname, const qkv_st_entry *e) {
    shown sn;
    char sh[160];
    uint64_t numel, nbytes;
    fmt_shape(sh, sizeof sh, e->ndim, e->shape);
    if (!shape_numel(e->ndim, e->shape, &numel) || !mul_u64(numel, qkv_dtype_size(e->dtype), &nbytes))
        return fail(c, "tensor %s: shape %s %s overflows 64-bit byte counts", show(&sn, tname), sh,
                    qkv_dtype_name(e->dtype));
    if (e->end - e->begin != nbytes)
        return fail(c, "tensor %s: data_offsets [%" PRIu64 ",%" PRIu64 "] hold %" PRIu64 " bytes, expected %" PRIu64
                    " (shape %s %s)", show(&sn, tname), e->begin, e->end, e->end - e->begin, nbytes, sh,
                    qkv_dtype_name(e->dtype));
    return 0;
}

/* Stage 5 for one tensor. Unknown fields are ignored, as serde does; known ones may appear once. */
static int parse_entry(const st_ctx *c, const char *hdr, const cJSON *obj, qkv_st_entry *e) {
    static const char *const fields[3] = {"dtype", "shape", "data_offsets"};
    const char *tname = obj->string;
    const cJSON *f[3] = {NULL, NULL, NULL};
    shown sn;
    if (!cJSON_IsObject(obj))
        return fail(c, "tensor %s: expected an object with dtype, shape and data_offsets, got %s",
                    show(&sn, tname), json_kind(obj));
    for (const cJSON *x = obj->child; x; x = x->next)
        for (int i = 0; i < 3; i++)
            if (strcmp(x->string, fields[i]) == 0) {
                if (f[i]) return fail(c, "tensor %s: duplicate field \"%s\"", show(&sn, tname), fields[i]);
                f[i] = x;
            }
    for (int i = 0; i < 3; i++)
        if (!f[i]) return fail(c, "tensor %s: missing field \"%s\"", show(&sn, tname), fields[i]);
    if (parse_dtype(c, tname, f[0], &e->dtype) < 0 || parse_shape(c, hdr, tname, f[1], e) < 0 ||
        parse_offsets(c, hdr, tname, f[2], e) < 0 || check_nbytes(c, tname, e) < 0)
        return -1;
    e->name = strdup(tname);
    return e->name ? 0 : fail(c, "out of memory");
}

/* Stage 5 for "__metadata__": string keys to string values; null counts as absent, as in serde. */
static int parse_metadata(const st_ctx *c, const cJSON *obj, qkv_safetensors *st) {
    shown sk;
    if (!obj || cJSON_IsNull(obj)) return 0;
    if (!cJSON_IsObject(obj))
        return fail(c, "\"" ST_META_KEY "\" must be an object of strings, got %s", json_kind(obj));
    int n = cJSON_GetArraySize(obj);
    named *keys = calloc((size_t)n + 1, sizeof *keys);
    st->meta_key = calloc((size_t)n + 1, sizeof *st->meta_key);
    st->meta_val = calloc((size_t)n + 1, sizeof *st->meta_val);
    if (!keys || !st->meta_key || !st->meta_val) { free(keys); return fail(c, "out of memory"); }
    int i = 0;
    for (const cJSON *x = obj->child; x; x = x->next, i++) {
        if (!cJSON_IsString(x)) {
            free(keys);
            return fail(c, "\"" ST_META_KEY "\" key %s: value must be a string, got %s", show(&sk, x->string),
                        json_kind(x));
        }
        keys[i] = (named){x->string, i};
        st->meta_key[i] = strdup(x->string);
        st->meta_val[i] = strdup(x->valuestring);
        st->n_meta = i + 1;
        if (!st->meta_key[i] || !st->meta_val[i]) { free(keys); return fail(c, "out of memory"); }
    }
    const char *dup = sort_find_dup(keys, n);
    int rc = dup ? fail(c, "\"" ST_META_KEY "\": duplicate key %s", show(&sk, dup)) : 0;
    free(keys);
    return rc;
}

/* Stage 4-5 over the top-level object: duplicate keys, then every entry in header order. */
static int parse_entries(const st_ctx *c, const char *hdr, const cJSON *root, qkv_safetensors *st) {
    const cJSON *meta = NULL;
    int total = cJSON_GetArraySize(root), n = 0;
    named *names = calloc((size_t)total + 1, sizeof *names);
    if (!names) return fail(c, "out of memory");
    for (const cJSON *x = root->child; x; x = x->next) {
        if (strcmp(x->string, ST_META_KEY) == 0) {
            if (meta) { free(names); return fail(c, "duplicate key \"" ST_META_KEY "\""); }
            meta = x;
        } else {
            names[n] = (named){x->string, n};
            n++;
        }
    }
    shown sn;
    const char *dup = sort_find_dup(names, n);
    if (dup) {
        int rc = fail(c, "duplicate key %s (tensor names must be unique)", show(&sn, dup));
        free(names);
        return rc;
    }
    st->by_name = malloc(((size_t)n + 1) * sizeof *st->by_name);
    st->entries = calloc((size_t)n + 1, sizeof *st->entries);
    if (!st->by_name || !st->entries) { free(names); return fail(c, "out of memory"); }
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
    if (!order) return fail(c, "out of memory");
    for (int i = 0; i < st->n; i++) order[i] = (span){st->entries[i].begin, st->entries[i].end, i};
    qsort(order, (size_t)st->n, sizeof *order, cmp_span);
    uint64_t expect = 0;
    const qkv_st_entry *prev = NULL;
    int rc = 0;
    shown sa, sb;
    for (int k = 0; k < st->n && rc == 0; k++) {
        const qkv_st_entry *e = &st->entries[order[k].idx];
        if (e->begin > expect && !prev)
            rc = fail(c, "tensor %s: data_offsets [%" PRIu64 ",%" PRIu64 "] start at %" PRIu64
                      ", expected 0: gap of %" PRIu64 " bytes at the start of the data buffer",
                      show(&sa, e->name), e->begin, e->end, e->begin, e->begin);
        else if (e->begin > expect)
            rc = fail(c, "tensor %s: data_offsets [%" PRIu64 ",%" PRIu64 "] start at %" PRIu64 ", expected %" PRIu64
                      ": gap of %" PRIu64 " bytes after tensor %s", show(&sa, e->name), e->begin, e->end, e->begin,
                      expect, e->begin - expect, show(&sb, prev->name));
        else if (e->begin < expect)
            rc = fail(c, "tensor %s: data_offsets [%" PRIu64 ",%" PRIu64 "] overlap tensor %s, which ends at %" PRIu64,
                      show(&sa, e->name), e->begin, e->end, show(&sb, prev->name), expect);
        expect = e->end;
        prev = e;
    }
    free(order);
    if (rc == 0 && expect < data_len)
        rc = fail(c, "%" PRIu64 " trailing bytes after the last tensor (tensors end at %" PRIu64
                  ", the data buffer holds %" PRIu64 ")", data_len - expect, expect, data_len);
    if (rc == 0 && expect > data_len)
        rc = fail(c, "tensor %s: data_offsets end at %" PRIu64 " but the data buffer holds only %" PRIu64
                  " bytes (truncated file?)", show(&sa, prev->name), expect, data_len);
    return rc;
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
    if (!st->ptr || !st->copy) return fail(c, "out of memory");
    for (int i = 0; i < st->n; i++) {
        const qkv_st_entry *e = &st->entries[i];
        size_t nbytes = (size_t)(e->end - e->begin);
        st->ptr[i] = data + e->begin;
        if (e->begin % qkv_dtype_size(e->dtype) == 0) continue;
        st->copy[i] = malloc(nbytes ? nbytes : 1);
        if (!st->copy[i]) return fail(c, "out of memory");
        memcpy(st->copy[i], st->ptr[i], nbytes);
        st->ptr[i] = st->copy[i];
    }
    return 0;
}

/* Parses an image it takes ownership of (freed on failure). */
static int parse_owned(uint8_t *img, size_t len, const char *label, qkv_safetensors **out, char *err,
                       size_t errlen) {
    st_ctx c = {label, err, errlen};
    size_t n = 0;
    cJSON *root = NULL;
    char *text = NULL;
    if (check_prefix(&c, img, len, &n) < 0 || parse_json(&c, img + 8, n, &root, &text) < 0) {
        free(img);
        return -1;
    }
    qkv_safetensors *st = calloc(1, sizeof *st);
    int rc = st ? 0 : fail(&c, "out of memory");
    if (rc == 0) {
        st->image = img;
        st->label = strdup(label);
        rc = st->label ? 0 : fail(&c, "out of memory");
    } else {
        free(img);
    }
    if (rc == 0) rc = parse_entries(&c, text, root, st);
    if (rc == 0) rc = check_tiling(&c, st, (uint64_t)(len - 8 - n));
    if (rc == 0) rc = place_data(&c, st, 8 + n, len - 8 - n);
    cJSON_Delete(root);
    free(text);
    if (rc < 0) {
        qkv_st_free(st);
        return -1;
    }
    *out = st;
    return 0;
}

/* ---------------------------------------------------------------- reading: public */

int qkv_st_parse(const uint8_t *buf, size_t len, const char *label, qkv_safetensors **out, char *err,
                 size_t errlen) {
    st_ctx c = {label ? label : "<memory>", err, errlen};
    if (!out) return fail(&c, "no output pointer given");
    *out = NULL;
    if (!buf && len) return fail(&c, "no buffer given");
    uint8_t *img = malloc(len ? len : 1);
    if (!img) return fail(&c, "out of memory copying %zu bytes", len);
    if (len) memcpy(img, buf, len);
    return parse_owned(img, len, c.label, out, err, errlen);
}

/* Reads all of fd into a malloc'd buffer (size_hint is where to start). 0 or -1 with errno. */
static int read_all(int fd, size_t size_hint, uint8_t **buf, size_t *len) {
    size_t cap = size_hint + 1, n = 0;   /* +1: the EOF read needs no growth */
    uint8_t *b = malloc(cap);
    if (!b) { errno = ENOMEM; return -1; }
    for (;;) {
        if (n == cap) {
            uint8_t *p = cap > SIZE_MAX / 2 ? NULL : realloc(b, cap * 2);
            if (!p) { free(b); errno = ENOMEM; return -1; }
            b = p;
            cap *= 2;
        }
        ssize_t r = read(fd, b + n, cap - n);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) { int e = errno; free(b); errno = e; return -1; }
        if (r == 0) break;
        n += (size_t)r;
    }
    *buf = b;
    *len = n;
    return 0;
}

int qkv_st_read(const char *path, qkv_safetensors **out, char *err, size_t errlen) {
    st_ctx c = {path ? path : "(null)", err, errlen};
    if (!out) return fail(&c, "no output pointer given");
    *out = NULL;
    if (!path) return fail(&c, "no path given");
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return fail(&c, "cannot open: %s", strerror(errno));
    struct stat sb;
    if (fstat(fd, &sb) != 0) { int e = errno; close(fd); return fail(&c, "cannot stat: %s", strerror(e)); }
    if (S_ISDIR(sb.st_mode)) { close(fd); return fail(&c, "cannot read: %s", strerror(EISDIR)); }
    size_t hint = S_ISREG(sb.st_mode) && (uint64_t)sb.st_size < SIZE_MAX / 2 ? (size_t)sb.st_size : 65536;
    uint8_t *img = NULL;
    size_t len = 0;
    int rc = read_all(fd, hint, &img, &len);
    int e = errno;
    close(fd);
    if (rc < 0) return fail(&c, "cannot read: %s", strerror(e));
    if (len == 0) { free(img); return fail(&c, "file is empty, expected a safetensors header"); }
    return parse_owned(img, len, path, out, err, errlen);
}

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

int qkv_st_load_into(const qkv_safetensors *st, const char *name, qkv_tensor *t, char *err, size_t errlen) {
    st_ctx c = {st ? st->label : "<safetensors>", err, errlen};
    shown sn;
    char fs[160], ts[160];
    if (!st || !name || !t) return fail(&c, "load: missing file, name or destination tensor");
    const qkv_st_entry *e = qkv_st_find(st, name);
    if (!e) return fail(&c, "no tensor %s in the file", show(&sn, name));
    if (!dtype_valid(t->dtype) || t->ndim < 0 || t->ndim > QKV_MAX_DIMS)
        return fail(&c, "tensor %s: destination is not a valid tensor (dtype %d, rank %d)", show(&sn, name),
                    (int)t->dtype, t->ndim);
    bool same = e->ndim == t->ndim;
    for (int d = 0; same && d < e->ndim; d++) same = e->shape[d] == t->shape[d];
    if (!same)
        return fail(&c, "tensor %s: shape %s in the file, expected %s", show(&sn, name),
                    fmt_shape(fs, sizeof fs, e->ndim, e->shape), fmt_shape(ts, sizeof ts, t->ndim, t->shape));
    if (e->dtype != t->dtype && !(qkv_dtype_is_float(e->dtype) && qkv_dtype_is_float(t->dtype)))
        return fail(&c, "tensor %s: dtype %s in the file, expected %s", show(&sn, name), qkv_dtype_name(e->dtype),
                    qkv_dtype_name(t->dtype));
    uint64_t numel = 0;
    shape_numel(e->ndim, e->shape, &numel);   /* validated when parsed */
    if (numel > 0 && !t->data) return fail(&c, "tensor %s: destination has no data buffer", show(&sn, name));
    const void *src = qkv_st_data(st, e);
    if (e->dtype == t->dtype) memcpy(t->data, src, (size_t)(e->end - e->begin));
    else convert_float(t->data, t->dtype, src, e->dtype, numel);
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

/* ---------------------------------------------------------------- writing */

/* What will be written: the padded header and the size of the data buffer. */
typedef struct { char *header; size_t hlen; uint64_t data_len; } st_plan;

/* bytes of tensor t after checking it is writable */
static int check_item(const st_ctx *c, const qkv_st_item *it, int i, uint64_t *nbytes) {
    shown sn;
    size_t bad;
    const char *why;
    if (!it->name) return fail(c, "item %d has no name", i);
    if (!utf8_valid((const uint8_t *)it->name, strlen(it->name), &bad, &why))
        return fail(c, "tensor %s: name is not valid UTF-8 (%s at byte %zu)", show(&sn, it->name), why, bad);
    if (strcmp(it->name, ST_META_KEY) == 0)
        return fail(c, "tensor name \"" ST_META_KEY "\" is reserved for metadata");
    const qkv_tensor *t = it->t;
    if (!t) return fail(c, "tensor %s: no tensor given", show(&sn, it->name));
    if (!dtype_valid(t->dtype)) return fail(c, "tensor %s: invalid dtype %d", show(&sn, it->name), (int)t->dtype);
    if (t->ndim < 0 || t->ndim > QKV_MAX_DIMS)
        return fail(c, "tensor %s: rank %d, qkv supports 0..%d", show(&sn, it->name), t->ndim, QKV_MAX_DIMS);
    uint64_t numel;
    if (!shape_numel(t->ndim, t->shape, &numel) || !mul_u64(numel, qkv_dtype_size(t->dtype), nbytes) ||
        *nbytes > ST_MAX_INT)
        return fail(c, "tensor %s: invalid or oversized shape", show(&sn, it->name));
    if (*nbytes > 0 && !t->data) return fail(c, "tensor %s: has no data", show(&sn, it->name));
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
    shown sk;
    size_t bad;
    const char *why;
    if (n_meta < 0 || (n_meta > 0 && !meta)) return fail(c, "invalid metadata (%d pairs)", n_meta);
    named *keys = calloc((size_t)n_meta + 1, sizeof *keys);
    if (!keys) return fail(c, "out of memory");
    bool has_format = false;
    for (int i = 0; i < n_meta; i++) {
        const char *k = meta[2 * i], *v = meta[2 * i + 1];
        if (!k || !v) { free(keys); return fail(c, "metadata pair %d has a NULL key or value", i); }
        if (!utf8_valid((const uint8_t *)k, strlen(k), &bad, &why) ||
            !utf8_valid((const uint8_t *)v, strlen(v), &bad, &why)) {
            free(keys);
            return fail(c, "metadata key %s: key or value is not valid UTF-8 (%s)", show(&sk, k), why);
        }
        has_format = has_format || strcmp(k, "format") == 0;
        keys[i] = (named){k, i};
    }
    const char *dup = sort_find_dup(keys, n_meta);
    free(keys);
    if (dup) return fail(c, "duplicate metadata key %s", show(&sk, dup));
    cJSON *o = cJSON_CreateObject();
    bool ok = o && (has_format || cJSON_AddStringToObject(o, "format", "pt"));
    for (int i = 0; ok && i < n_meta; i++) ok = cJSON_AddStringToObject(o, meta[2 * i], meta[2 * i + 1]) != NULL;
    if (!ok) { cJSON_Delete(o); return fail(c, "out of memory"); }
    *out = o;
    return 0;
}

/* distinct names (checked after each item is valid, so names are non-NULL) */
static int check_unique(const st_ctx *c, const qkv_st_item *items, int n) {
    shown sn;
    named *v = calloc((size_t)n + 1, sizeof *v);
    if (!v) return fail(c, "out of memory");
    for (int i = 0; i < n; i++) v[i] = (named){items[i].name, i};
    const char *dup = sort_find_dup(v, n);
    int rc = dup ? fail(c, "duplicate tensor name %s", show(&sn, dup)) : 0;
    free(v);
    return rc;
}

/* JSON text of the header, then spaces to a multiple of 8 so the data buffer starts aligned */
static int finish_header(const st_ctx *c, cJSON *root, st_plan *p) {
    char *json = cJSON_PrintUnformatted(root);
    if (!json) return fail(c, "out of memory printing the header");
    size_t len = strlen(json), padded = (len + 7) & ~(size_t)7;
    if (padded > ST_MAX_HEADER) {
        cJSON_free(json);
        return fail(c, "header would be %zu bytes, above the %llu-byte limit readers accept", padded, ST_MAX_HEADER);
    }
    p->header = malloc(padded);
    if (!p->header) { cJSON_free(json); return fail(c, "out of memory"); }
    memcpy(p->header, json, len);
    memset(p->header + len, ' ', padded - len);
    p->hlen = padded;
    cJSON_free(json);
    return 0;
}

/* bytes of item i (already validated) */
static size_t item_bytes(const qkv_st_item *it) {
    uint64_t numel = 0;
    shape_numel(it->t->ndim, it->t->shape, &numel);
    return (size_t)numel * qkv_dtype_size(it->t->dtype);
}

/* validates everything and builds the header; offsets follow the given order */
static int make_plan(const st_ctx *c, const qkv_st_item *items, int n, const char *const *meta, int n_meta,
                     st_plan *p) {
    memset(p, 0, sizeof *p);
    if (n < 0 || (n > 0 && !items)) return fail(c, "invalid tensor list (%d items)", n);
    uint64_t nbytes;
    for (int i = 0; i < n; i++)
        if (check_item(c, &items[i], i, &nbytes) < 0) return -1;
    if (check_unique(c, items, n) < 0) return -1;
    cJSON *root = cJSON_CreateObject(), *mobj = NULL;
    if (!root) return fail(c, "out of memory");
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
    int rc = ok ? finish_header(c, root, p) : fail(c, "out of memory building the header");
    cJSON_Delete(root);
    p->data_len = off;
    return rc;
}

int qkv_st_write_mem(const qkv_st_item *items, int n, const char *const *meta, int n_meta, uint8_t **out,
                     size_t *out_len, char *err, size_t errlen) {
    st_ctx c = {"<memory>", err, errlen};
    st_plan p;
    if (!out || !out_len) return fail(&c, "no output pointers given");
    *out = NULL;
    *out_len = 0;
    if (make_plan(&c, items, n, meta, n_meta, &p) < 0) return -1;
    if (p.data_len > SIZE_MAX - 8 - p.hlen) { free(p.header); return fail(&c, "file image too large for memory"); }
    size_t total = 8 + p.hlen + (size_t)p.data_len;
    uint8_t *buf = malloc(total);
    if (!buf) { free(p.header); return fail(&c, "out of memory for a %zu-byte file image", total); }
    write_le64(buf, p.hlen);
    memcpy(buf + 8, p.header, p.hlen);
    size_t o = 8 + p.hlen;
    for (int i = 0; i < n; i++) {
        size_t nb = item_bytes(&items[i]);
        if (nb) memcpy(buf + o, items[i].t->data, nb);
        o += nb;
    }
    free(p.header);
    *out = buf;
    *out_len = total;
    return 0;
}

/* length prefix, header and tensor bytes to f; 0, or -1 with errno set */
static int write_stream(FILE *f, const st_plan *p, const qkv_st_item *items, int n) {
    uint8_t len8[8];
    write_le64(len8, p->hlen);
    errno = 0;
    if (fwrite(len8, 1, 8, f) != 8 || fwrite(p->header, 1, p->hlen, f) != p->hlen) return -1;
    for (int i = 0; i < n; i++) {
        size_t nb = item_bytes(&items[i]);
        if (nb && fwrite(items[i].t->data, 1, nb, f) != nb) return -1;
    }
    return fflush(f) == 0 ? 0 : -1;
}

/* fsync the directory holding path, so the rename itself survives a crash */
static int sync_parent_dir(const char *path) {
    const char *slash = strrchr(path, '/');
    char *dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
    if (!dir) { errno = ENOMEM; return -1; }
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    free(dir);
    if (fd < 0) return -1;
    int rc = fsync(fd);
    int e = errno;
    close(fd);
    if (rc != 0 && e == EINVAL) rc = 0;   /* the file system cannot sync directories: nothing to do */
    errno = e;
    return rc;
}

/* Writes the temp file completely and durably; on failure it is removed. */
static int write_temp(const st_ctx *c, const char *tmp, const st_plan *p, const qkv_st_item *items, int n) {
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd < 0) return fail(c, "cannot create temporary file %s: %s", tmp, strerror(errno));
    FILE *f = fdopen(fd, "wb");
    if (!f) {
        int e = errno;
        close(fd);
        unlink(tmp);
        return fail(c, "cannot open temporary file %s: %s", tmp, strerror(e));
    }
    int rc = write_stream(f, p, items, n);
    if (rc == 0) rc = fsync(fileno(f));
    int e = errno ? errno : EIO;
    if (fclose(f) != 0 && rc == 0) { rc = -1; e = errno ? errno : EIO; }
    if (rc != 0) {
        unlink(tmp);
        return fail(c, "writing %s failed: %s", tmp, strerror(e));
    }
    return 0;
}

int qkv_st_write(const char *path, const qkv_st_item *items, int n, const char *const *meta, int n_meta,
                 char *err, size_t errlen) {
    st_ctx c = {path ? path : "(null)", err, errlen};
    if (!path || !*path) return fail(&c, "no path given");
    st_plan p;
    if (make_plan(&c, items, n, meta, n_meta, &p) < 0) return -1;
    size_t tlen = strlen(path) + 32;
    char *tmp = malloc(tlen);
    if (!tmp) { free(p.header); return fail(&c, "out of memory"); }
    snprintf(tmp, tlen, "%s.tmp.%ld", path, (long)getpid());
    int rc = write_temp(&c, tmp, &p, items, n);
    free(p.header);
    if (rc == 0 && rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        rc = fail(&c, "cannot rename %s over it: %s", tmp, strerror(e));
    }
    free(tmp);
    /* past the rename the new file is in place; report a failed directory sync all the same,
     * since the caller asked for a durable checkpoint */
    if (rc == 0 && sync_parent_dir(path) != 0)
        rc = fail(&c, "written, but syncing its directory failed: %s", strerror(errno));
    return rc;
}
