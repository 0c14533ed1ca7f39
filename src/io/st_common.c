/* safetensors: what the reader and the writer share (st_internal.h): one-line messages,
 * overflow-checked sizes, duplicate names, UTF-8. */
#include "io/st_internal.h"
#include "io/strbuf.h"

#include <inttypes.h>
#include <lzma.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- messages */

static const char *show_str(st_shown *b, const char *s, bool quoted, size_t max) {
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

const char *qkv__st_show(st_shown *b, const char *s) { return show_str(b, s ? s : "(null)", true, ST_SHOW_MAX); }

int qkv__st_fail(const st_ctx *c, const char *fmt, ...) {
    if (!c->e) return -1;
    char msg[ST_MSG_CAP];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    st_shown lab;
    /* the file's name bounded at both ends (its head and tail), then shown on one line */
    qkv_err_set(c->e, QKV_ERR_FAIL, "%s: %s", show_str(&lab, qkv__shown(c->label).s, false, ST_LABEL_MAX), msg);
    for (char *p = c->e->msg; *p; p++)   /* strerror text and the like: still one line */
        if (*p == '\n' || *p == '\r') *p = ' ';
    return -1;
}

const char *qkv__st_fmt_shape(char *buf, size_t len, int ndim, const int64_t *shape) {
    size_t o = (size_t)snprintf(buf, len, "(");
    for (int d = 0; d < ndim && o < len; d++)
        o += (size_t)snprintf(buf + o, len - o, "%s%" PRId64, d ? "," : "", shape[d]);
    if (o < len) snprintf(buf + o, len - o, ")");
    return buf;
}

/* ---------------------------------------------------------------- sizes and names */

bool qkv__st_mul_u64(uint64_t a, uint64_t b, uint64_t *out) {
    if (a != 0 && b > UINT64_MAX / a) return false;
    *out = a * b;
    return true;
}

bool qkv__st_shape_numel(int ndim, const int64_t *shape, uint64_t *out) {
    uint64_t n = 1;
    for (int d = 0; d < ndim; d++)
        if (shape[d] < 0 || !qkv__st_mul_u64(n, (uint64_t)shape[d], &n)) return false;
    *out = n;
    return true;
}

bool qkv__st_dtype_valid(int dt) { return dt >= 0 && dt < QKV_DTYPE_COUNT; }

static int cmp_named(const void *a, const void *b) {
    const st_named *x = a, *y = b;
    int r = strcmp(x->name, y->name);
    return r ? r : (x->idx > y->idx) - (x->idx < y->idx);
}

const char *qkv__st_sort_find_dup(st_named *v, int n) {
    if (n > 1) qsort(v, (size_t)n, sizeof *v, cmp_named);
    for (int i = 1; i < n; i++)
        if (strcmp(v[i - 1].name, v[i].name) == 0) return v[i].name;
    return NULL;
}

uint32_t qkv__st_crc32(uint32_t crc, const void *p, size_t n) {
    return n ? lzma_crc32((const uint8_t *)p, n, crc) : crc;
}

