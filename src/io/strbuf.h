/* An append-only growable string for building text (SVG, Markdown, HTML, CSV) piece by
 * piece. An allocation failure is remembered instead of reported per append, so builders
 * append freely and check once, when they take the string.
 *
 * Paths are built here too, never in fixed buffers: every path qkv makes (a run's files, a
 * sweep's run directories and input configs, a temporary name, a Slurm script) is a malloc'd
 * string from qkv__pathf, or text appended to a qkv_strbuf, so no path is ever cut short
 * whatever the length of --out. How long a path may be is the operating system's to say
 * (ENAMETOOLONG past PATH_MAX, 4096 bytes on Linux), in the error of the call that uses it,
 * which names the path. NULL from qkv__pathf means out of memory, and nothing else.
 * (Paths held in a config's fixed fields, task.path and an ablation config's file and base, are
 * values the user gave: their length is checked where they are set, and a longer one is an
 * error naming it.)
 *
 * A path in a one-line message goes through qkv__shown, which bounds it (its head and tail
 * around "..."), so that a message "PATH: reason" in a caller's buffer of a few hundred bytes
 * keeps its reason however long the path is. */
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
/* s with & < > " ' escaped and every byte that is not well-formed UTF-8 or is a control
 * character (but tab and line breaks) as U+FFFD: valid in XML/HTML text and in quoted attribute
 * values (NULL appends nothing) */
QKV_INTERNAL void qkv__strbuf_escape_xml(qkv_strbuf *b, const char *s);
/* s as one CSV field: quoted (quotes doubled) only when it holds a separator, a quote or a
 * line break (RFC 4180) */
QKV_INTERNAL void qkv__strbuf_csv_field(qkv_strbuf *b, const char *s);

/* the text so far: "" before any append; after a failed allocation, what was appended before it */
static inline const char *qkv__strbuf_str(const qkv_strbuf *b) { return b->s ? b->s : ""; }

/* the most bytes of items qkv__strbuf_list writes before it leaves the rest out */
#define QKV_LIST_SHOWN 400
/* appends item i (0 <= i < n) of a list for qkv__strbuf_list */
typedef void (*qkv_list_item)(qkv_strbuf *b, const void *items, int i);
/* the choices an error message offers ("expected one of A, B, C"): item(b, items, i) for i in
 * [0, n), ", " between them; once the list holds QKV_LIST_SHOWN bytes the items left are one ", ..." */
QKV_INTERNAL void qkv__strbuf_list(qkv_strbuf *b, int n, qkv_list_item item, const void *items);

/* printf-formatted text as a new string: a path ("%s/%s", dir, file) or any other; malloc'd,
 * NULL only when out of memory */
QKV_INTERNAL char *qkv__pathf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* the vprintf-formatted text as a malloc'd string of its whole length (NULL: out of memory) */
QKV_INTERNAL char *qkv__vformat(const char *fmt, va_list ap);

/* the most bytes qkv__shown keeps of a text */
#define QKV_SHOWN_MAX 160
/* a text (a path) bounded for a message */
typedef struct qkv_shown { char s[QKV_SHOWN_MAX + 1]; } qkv_shown;
/* s whole when it is at most QKV_SHOWN_MAX bytes, else its first 40 and last 117 bytes around
 * "..." (cut at UTF-8 character boundaries); NULL shows as "(null)". The struct lives to the end
 * of the full expression that called it (C11 6.2.4), so it goes straight into a format:
 * snprintf(err, n, "%s: cannot write: %s", qkv__shown(path).s, strerror(e)) */
QKV_INTERNAL qkv_shown qkv__shown(const char *s);

/* 1234567 -> "1,234,567" into dst (n bytes); a negative count (not recorded) -> an em dash */
QKV_INTERNAL void qkv__fmt_count(char *dst, size_t n, long long v);

/* bytes as text that any Markdown or HTML page shows as it is: valid UTF-8 is kept (with
 * newlines and tabs), and every byte that is not (invalid UTF-8, NUL and the other control
 * characters, C1 controls) becomes U+FFFD, the replacement character. malloc'd, NULL when out of
 * memory */
QKV_INTERNAL char *qkv__display_text(const uint8_t *b, size_t n);

#endif
