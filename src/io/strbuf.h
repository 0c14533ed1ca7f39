/* An append-only growable string for building text (SVG, Markdown, HTML, CSV) piece by
 * piece. An allocation failure is remembered instead of reported per append, so builders
 * append freely and check once, when they take the string. */
#ifndef QKV_STRBUF_H
#define QKV_STRBUF_H

#include "qkv_api.h"

#include <stddef.h>
#include <stdint.h>

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct qkv_strbuf {
    char *s;        /* NUL-terminated while non-NULL */
    size_t len, cap;
    bool oom;       /* an allocation failed: every later append is a no-op */
} qkv_strbuf;

/* an empty buffer (allocates nothing yet) */
QKV_INTERNAL void qkv__strbuf_init(qkv_strbuf *b);
/* drop the text (for error paths; the buffer is left empty) */
QKV_INTERNAL void qkv__strbuf_free(qkv_strbuf *b);
/* the string (the buffer is left empty); NULL if any append ran out of memory */
QKV_INTERNAL char *qkv__strbuf_take(qkv_strbuf *b);
/* append n bytes of s */
QKV_INTERNAL void qkv__strbuf_putn(qkv_strbuf *b, const char *s, size_t n);
/* append s (NULL appends nothing) */
QKV_INTERNAL void qkv__strbuf_puts(qkv_strbuf *b, const char *s);
/* append printf-formatted text */
QKV_INTERNAL void qkv__strbuf_printf(qkv_strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* append vprintf-formatted text */
QKV_INTERNAL void qkv__strbuf_vprintf(qkv_strbuf *b, const char *fmt, va_list ap);
/* s with & < > " ' escaped: valid in XML/HTML text and in quoted attribute values
 * (NULL appends nothing) */
QKV_INTERNAL void qkv__strbuf_escape_xml(qkv_strbuf *b, const char *s);
/* s as one CSV field: quoted (quotes doubled) only when it holds a separator, a quote or a
 * line break (RFC 4180) */
QKV_INTERNAL void qkv__strbuf_csv_field(qkv_strbuf *b, const char *s);

/* 1234567 -> "1,234,567" into dst (n bytes); a negative count (not recorded) -> an em dash */
QKV_INTERNAL void qkv__fmt_count(char *dst, size_t n, long long v);

/* bytes as text that any Markdown or HTML page shows as it is: valid UTF-8 is kept (with
 * newlines and tabs), and every byte that is not (invalid UTF-8, NUL and the other control
 * characters, C1 controls) becomes U+FFFD, the replacement character. malloc'd, NULL when out of
 * memory */
QKV_INTERNAL char *qkv__display_text(const uint8_t *b, size_t n);

#endif
