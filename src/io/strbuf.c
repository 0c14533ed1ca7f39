/* A growable string (see strbuf.h). */
#include "io/strbuf.h"
#include "io/utf8.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* nothing allocated until the first append */
void qkv__strbuf_init(qkv_strbuf *b) { memset(b, 0, sizeof *b); }

/* error paths: the text is not wanted */
void qkv__strbuf_free(qkv_strbuf *b) {
    free(b->s);
    memset(b, 0, sizeof *b);
}

/* an untouched buffer still yields "" so callers need not tell "empty" from "failed" */
char *qkv__strbuf_take(qkv_strbuf *b) {
    char *s = b->s;
    if (b->oom) {
        free(s);
        s = NULL;
    } else if (!s) {
        s = calloc(1, 1);
    }
    memset(b, 0, sizeof *b);
    return s;
}

/* room for `extra` more bytes plus the NUL */
static bool reserve(qkv_strbuf *b, size_t extra) {
    if (b->oom) return false;
    if (b->len + extra + 1 <= b->cap) return true;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + extra + 1) {
        if (cap > ((size_t)-1) / 2) {
            b->oom = true;
            return false;
        }
        cap *= 2;
    }
    char *s = realloc(b->s, cap);
    if (!s) {
        b->oom = true;
        return false;
    }
    b->s = s;
    b->cap = cap;
    return true;
}

/* the one place that copies bytes in; keeps the NUL after them */
void qkv__strbuf_putn(qkv_strbuf *b, const char *s, size_t n) {
    if (!reserve(b, n)) return;
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = 0;
}

/* NULL is allowed so optional strings need no check at the call */
void qkv__strbuf_puts(qkv_strbuf *b, const char *s) {
    if (s) qkv__strbuf_putn(b, s, strlen(s));
}

/* short results go through a stack buffer, so most appends format once */
void qkv__strbuf_vprintf(qkv_strbuf *b, const char *fmt, va_list ap) {
    if (b->oom) return;
    va_list ap2;
    va_copy(ap2, ap);
    char small[256];
    int n = vsnprintf(small, sizeof small, fmt, ap2);
    va_end(ap2);
    if (n < 0) {
        b->oom = true;
        return;
    }
    if ((size_t)n < sizeof small) {
        qkv__strbuf_putn(b, small, (size_t)n);
        return;
    }
    if (!reserve(b, (size_t)n)) return;
    vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
    b->len += (size_t)n;
}

/* the varargs front of qkv__strbuf_vprintf */
void qkv__strbuf_printf(qkv_strbuf *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    qkv__strbuf_vprintf(b, fmt, ap);
    va_end(ap);
}

/* copies unescaped runs in one piece; control characters XML forbids become '?' */
static size_t utf8_char(const uint8_t *b, size_t n);

void qkv__strbuf_escape_xml(qkv_strbuf *b, const char *s) {
    if (!s) return;
    const size_t len = strlen(s);
    const char *run = s;
    for (size_t i = 0; i < len;) {
        const char *p = s + i, *rep = NULL;
        size_t k = 1;
        switch (*p) {
        case '&': rep = "&amp;"; break;
        case '<': rep = "&lt;"; break;
        case '>': rep = "&gt;"; break;
        case '"': rep = "&quot;"; break;
        case '\'': rep = "&#39;"; break;
        case '\t': case '\n': case '\r': break;
        default:
            /* XML 1.0 allows neither control characters nor bytes that are not UTF-8: each such
             * byte becomes U+FFFD, as qkv__display_text shows them */
            k = utf8_char((const uint8_t *)p, len - i);
            if (!k) rep = "\xef\xbf\xbd", k = 1;
            break;
        }
        if (rep) {
            qkv__strbuf_putn(b, run, (size_t)(p - run));
            qkv__strbuf_puts(b, rep);
            run = p + k;
        }
        i += k;
    }
    qkv__strbuf_puts(b, run);
}

void qkv__strbuf_csv_field(qkv_strbuf *b, const char *s) {
    if (!strpbrk(s, ",\"\r\n")) {
        qkv__strbuf_puts(b, s);
        return;
    }
    qkv__strbuf_puts(b, "\"");
    for (; *s; s++) qkv__strbuf_puts(b, *s == '"' ? "\"\"" : (char[2]){*s, 0});
    qkv__strbuf_puts(b, "\"");
}

/* the length is counted from where the list began, so b may hold a message's start already */
void qkv__strbuf_list(qkv_strbuf *b, int n, qkv_list_item item, const void *items) {
    size_t start = b->len;
    for (int i = 0; i < n; i++) {
        if (i && b->len - start >= QKV_LIST_SHOWN) {
            qkv__strbuf_puts(b, ", ...");
            return;
        }
        if (i) qkv__strbuf_puts(b, ", ");
        item(b, items, i);
    }
}

char *qkv__vformat(const char *fmt, va_list ap) {
    qkv_strbuf b;
    qkv__strbuf_init(&b);
    qkv__strbuf_vprintf(&b, fmt, ap);
    return qkv__strbuf_take(&b);
}

char *qkv__pathf(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char *s = qkv__vformat(fmt, ap);
    va_end(ap);
    return s;
}

/* the head ends, and the tail starts, on the first byte of a character */
qkv_shown qkv__shown(const char *s) {
    enum { HEAD = 40, TAIL = QKV_SHOWN_MAX - HEAD - 3 };
    qkv_shown r;
    if (!s) s = "(null)";
    size_t n = strlen(s);
    if (n <= QKV_SHOWN_MAX) {
        memcpy(r.s, s, n + 1);
        return r;
    }
    size_t head = HEAD, tail = n - TAIL;
    while (head > 0 && ((unsigned char)s[head] & 0xC0) == 0x80) head--;
    while (tail < n && ((unsigned char)s[tail] & 0xC0) == 0x80) tail++;
    memcpy(r.s, s, head);
    memcpy(r.s + head, "...", 3);
    memcpy(r.s + head + 3, s + tail, n - tail + 1);
    return r;
}

void qkv__fmt_count(char *dst, size_t n, long long v) {
    if (v < 0) {
        snprintf(dst, n, "\xe2\x80\x94");
        return;
    }
    char raw[32], out[48];
    snprintf(raw, sizeof raw, "%lld", v);
    size_t len = strlen(raw), o = 0;
    for (size_t i = 0; i < len; i++) {
        if (i > 0 && (len - i) % 3 == 0) out[o++] = ',';
        out[o++] = raw[i];
    }
    out[o] = 0;
    snprintf(dst, n, "%s", out);
}

/* the length of the well-formed UTF-8 sequence at b (n bytes left) that is not a control character
 * (C0, DEL or C1: U+0080-U+009F), or 0 */
static size_t utf8_char(const uint8_t *b, size_t n) {
    const char *why;
    size_t len = qkv__utf8_seq(b, n, &why);
    if ((len == 1 && (b[0] < 0x20 || b[0] == 0x7f)) || (len == 2 && b[0] == 0xc2 && b[1] < 0xa0)) return 0;
    return len;
}

char *qkv__display_text(const uint8_t *b, size_t n) {
    qkv_strbuf s;
    qkv__strbuf_init(&s);
    qkv__strbuf_puts(&s, ""); /* an empty text is "", not NULL */
    for (size_t i = 0; i < n;) {
        size_t k = b[i] == '\n' || b[i] == '\t' ? 1 : utf8_char(b + i, n - i);
        if (k) qkv__strbuf_putn(&s, (const char *)b + i, k);
        else qkv__strbuf_puts(&s, "\xef\xbf\xbd"); /* U+FFFD */
        i += k ? k : 1;
    }
    return qkv__strbuf_take(&s);
}
