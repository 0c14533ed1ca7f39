/* The report's format-independent document (see report_doc.h): appending blocks and spans.
 * Appends never fail loudly: running out of memory sets doc->oom, checked once at the end. And
 * the room for the tables and records that documents and renderers borrow (report_data.h). */
#include "report/report_doc.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/strbuf.h"

/* an empty document */
void qkv__report_doc_init(qkv_report_doc *doc, const char *title) {
    memset(doc, 0, sizeof *doc);
    doc->title = title;
}

/* every owned string of every block */
void qkv__report_doc_free(qkv_report_doc *doc) {
    for (int i = 0; i < doc->n; i++) {
        qkv_report_block *b = &doc->blocks[i];
        free(b->text);
        for (int k = 0; b->spans && k < b->n; k++) free(b->spans[k].text);
        for (int k = 0; b->items && k < b->n; k++) free(b->items[k]);
        free(b->spans);
        free(b->items);
        if (b->owned) qkv__report_table_free(b->owned);
        free(b->owned);
    }
    free(doc->blocks);
    memset(doc, 0, sizeof *doc);
}

/* a new zeroed block of the kind, or NULL (out of memory, recorded) */
static qkv_report_block *add(qkv_report_doc *doc, qkv_report_block_kind kind) {
    if (doc->oom) return NULL;
    if (doc->n == doc->cap) {
        int cap = doc->cap ? 2 * doc->cap : 32;
        qkv_report_block *b = realloc(doc->blocks, (size_t)cap * sizeof *b);
        if (!b) {
            doc->oom = true;
            return NULL;
        }
        doc->blocks = b;
        doc->cap = cap;
    }
    qkv_report_block *b = &doc->blocks[doc->n++];
    memset(b, 0, sizeof *b);
    b->kind = kind;
    return b;
}

/* a copy of s owned by the document, or NULL (out of memory, recorded) */
static char *copy(qkv_report_doc *doc, const char *s) {
    char *c = strdup(s ? s : "");
    if (!c) doc->oom = true;
    return c;
}

/* printf into a string owned by the document, or NULL (out of memory, recorded) */
static char *vformat(qkv_report_doc *doc, const char *fmt, va_list ap) {
    char *s = qkv__vformat(fmt, ap);
    if (!s) doc->oom = true;
    return s;
}

/* a section heading (level 1: the title) */
void qkv__report_doc_heading(qkv_report_doc *doc, int level, const char *text) {
    qkv_report_block *b = add(doc, QKV_BLOCK_HEADING);
    if (!b) return;
    b->level = level;
    b->text = copy(doc, text);
}

/* an explanatory paragraph, printf-formatted */
void qkv__report_doc_note(qkv_report_doc *doc, const char *fmt, ...) {
    qkv_report_block *b = add(doc, QKV_BLOCK_NOTE);
    if (!b) return;
    va_list ap;
    va_start(ap, fmt);
    b->text = vformat(doc, fmt, ap);
    va_end(ap);
}

/* an empty paragraph for spans to follow */
void qkv__report_doc_paragraph(qkv_report_doc *doc) { add(doc, QKV_BLOCK_PARAGRAPH); }

/* one printf-formatted span at the end of the last block, which must be a paragraph */
void qkv__report_doc_span(qkv_report_doc *doc, qkv_report_span_kind kind, const char *fmt, ...) {
    if (doc->oom || doc->n == 0 || doc->blocks[doc->n - 1].kind != QKV_BLOCK_PARAGRAPH) {
        doc->oom = true;   /* a layout bug: fail the report rather than drop text */
        return;
    }
    qkv_report_block *b = &doc->blocks[doc->n - 1];
    qkv_report_span *s = realloc(b->spans, ((size_t)b->n + 1) * sizeof *s);
    if (!s) {
        doc->oom = true;
        return;
    }
    b->spans = s;
    va_list ap;
    va_start(ap, fmt);
    char *text = vformat(doc, fmt, ap);
    va_end(ap);
    if (!text) return;
    b->spans[b->n++] = (qkv_report_span){kind, text};
}

/* a paragraph of one plain text span */
void qkv__report_doc_text(qkv_report_doc *doc, const char *text) {
    qkv__report_doc_paragraph(doc);
    qkv__report_doc_span(doc, QKV_SPAN_TEXT, "%s", text);
}

/* a bulleted list; the items are copied */
void qkv__report_doc_list(qkv_report_doc *doc, const char *const *items, int n) {
    qkv_report_block *b = add(doc, QKV_BLOCK_LIST);
    if (!b) return;
    b->items = calloc((size_t)n + 1, sizeof *b->items);
    if (!b->items) {
        doc->oom = true;
        return;
    }
    b->n = n;
    for (int i = 0; i < n; i++) b->items[i] = copy(doc, items[i]);
}

/* verbatim text, e.g. a config or a command; lang names it for Markdown highlighting */
void qkv__report_doc_code(qkv_report_doc *doc, const char *lang, const char *text) {
    qkv_report_block *b = add(doc, QKV_BLOCK_CODE);
    if (!b) return;
    b->lang = lang;
    b->text = copy(doc, text);
}

void qkv__report_doc_code_collapsed(qkv_report_doc *doc, const char *lang, const char *summary, const char *text) {
    qkv__report_doc_code(doc, lang, text);
    if (!doc->oom) doc->blocks[doc->n - 1].summary = summary;
}

/* a table, borrowed: it must outlive the document */
void qkv__report_doc_table(qkv_report_doc *doc, const qkv_report_table *t) {
    qkv_report_block *b = add(doc, QKV_BLOCK_TABLE);
    if (b) b->table = t;
}

/* the block owns the table from the start, so a table half filled is freed with the document */
qkv_report_table *qkv__report_doc_new_table(qkv_report_doc *doc, int rows, int cols) {
    qkv_report_block *b = add(doc, QKV_BLOCK_TABLE);
    if (!b) return NULL;
    b->table = b->owned = calloc(1, sizeof *b->owned);
    if (!b->owned || qkv__report_table_alloc(b->owned, rows, cols)) {
        doc->oom = true;
        return NULL;
    }
    return b->owned;
}

/* a figure, borrowed: it must outlive the document */
void qkv__report_doc_figure(qkv_report_doc *doc, const qkv_report_figure *f) {
    qkv_report_block *b = add(doc, QKV_BLOCK_FIGURE);
    if (b) b->figure = f;
}

/* ---- tables and records -------------------------------------------------------------------- */

int qkv__report_table_alloc(qkv_report_table *t, int rows, int cols) {
    memset(t, 0, sizeof *t);
    t->rows = rows;
    t->cols = cols;
    t->head = calloc((size_t)(rows + 1) * (size_t)cols + 1, sizeof *t->head); /* the headers, then the cells */
    t->right = calloc((size_t)cols + 1, sizeof *t->right);
    t->cell = t->head ? t->head + cols : NULL;
    return t->head && t->right ? 0 : -1;
}

void qkv__report_table_free(qkv_report_table *t) {
    free(t->head);
    free(t->right);
    memset(t, 0, sizeof *t);
}

int qkv__report_records_alloc(qkv_report_records *rec, int rows, int n_fields) {
    memset(rec, 0, sizeof *rec);
    rec->rows = rows;
    rec->n_fields = n_fields;
    rec->fields = calloc((size_t)n_fields + 1, sizeof *rec->fields);
    rec->v = calloc((size_t)rows * (size_t)n_fields + 1, sizeof *rec->v);
    return rec->fields && rec->v ? 0 : -1;
}

/* the names are copied, the strings in the values borrowed */
void qkv__report_records_free(qkv_report_records *rec) {
    free(rec->fields);
    free(rec->v);
    memset(rec, 0, sizeof *rec);
}
