/* Internal: a format-independent document (headings, paragraphs, notes, lists, code blocks,
 * tables, figures) that report_layout.c fills from a qkv_report, summary_write.c from a summary
 * and doc_gaps.c and summary_doc.c with the tables of a document's blocks; report_md.c and
 * report_html.c render it, so a structure (and every table) is written once for both formats. */
#ifndef QKV_REPORT_DOC_H
#define QKV_REPORT_DOC_H

#include "qkv_api.h"

#include <stdbool.h>

#include "io/strbuf.h"
#include "report/report_data.h"

/* inline runs of a paragraph */
typedef enum qkv_report_span_kind {
    QKV_SPAN_TEXT,
    QKV_SPAN_CODE,                      /* a name or path in code font */
    QKV_SPAN_CODE_NOWRAP,               /* a command-line option: code font, never broken across lines */
} qkv_report_span_kind;

typedef struct qkv_report_span {
    qkv_report_span_kind kind;
    char *text;                         /* owned */
} qkv_report_span;

typedef enum qkv_report_block_kind {
    QKV_BLOCK_HEADING,                  /* level 1 is the document's title */
    QKV_BLOCK_PARAGRAPH,                /* spans */
    QKV_BLOCK_NOTE,                     /* an explanatory paragraph (set smaller in HTML) */
    QKV_BLOCK_LIST,                     /* a bulleted list of items */
    QKV_BLOCK_CODE,                     /* verbatim text */
    QKV_BLOCK_TABLE,
    QKV_BLOCK_FIGURE,
} qkv_report_block_kind;

typedef struct qkv_report_block {
    qkv_report_block_kind kind;
    int level;                          /* HEADING: 1-3 */
    char *text;                         /* HEADING, NOTE, CODE (owned) */
    const char *lang;                   /* CODE: the Markdown fence's language (static) */
    const char *summary;                /* CODE: collapsed behind this line (static), or NULL: shown */
    qkv_report_span *spans;             /* PARAGRAPH (owned) */
    char **items;                       /* LIST (owned) */
    int n;                              /* spans or items */
    const qkv_report_table *table;      /* TABLE (borrowed, or `owned`) */
    qkv_report_table *owned;            /* TABLE made by qkv__report_doc_new_table (owned) */
    const qkv_report_figure *figure;    /* FIGURE (borrowed from the qkv_report) */
} qkv_report_block;

typedef struct qkv_report_doc {
    const char *title;                  /* for HTML's <title> (the visible title is a heading) */
    qkv_report_block *blocks;
    int n, cap;
    bool oom;                           /* an append failed; the document is incomplete */
} qkv_report_doc;

/* report_doc.c: building. An append that runs out of memory sets doc->oom (checked once). */
/* an empty document; title is borrowed */
QKV_INTERNAL void qkv__report_doc_init(qkv_report_doc *doc, const char *title);
/* frees the blocks and the strings they own */
QKV_INTERNAL void qkv__report_doc_free(qkv_report_doc *doc);
/* a heading; level 1 is the title */
QKV_INTERNAL void qkv__report_doc_heading(qkv_report_doc *doc, int level, const char *text);
/* an explanatory paragraph, printf-formatted */
QKV_INTERNAL void qkv__report_doc_note(qkv_report_doc *doc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* starts a paragraph; qkv__report_doc_span appends to it */
QKV_INTERNAL void qkv__report_doc_paragraph(qkv_report_doc *doc);
/* a printf-formatted span at the end of the current paragraph */
QKV_INTERNAL void qkv__report_doc_span(qkv_report_doc *doc, qkv_report_span_kind kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* a paragraph of plain text */
QKV_INTERNAL void qkv__report_doc_text(qkv_report_doc *doc, const char *text);
/* a bulleted list (the items are copied) */
QKV_INTERNAL void qkv__report_doc_list(qkv_report_doc *doc, const char *const *items, int n);
/* verbatim text; lang names it for Markdown's code fence */
QKV_INTERNAL void qkv__report_doc_code(qkv_report_doc *doc, const char *lang, const char *text);
/* the same, collapsed behind a line that says what it is (summary, static): one click away */
QKV_INTERNAL void qkv__report_doc_code_collapsed(qkv_report_doc *doc, const char *lang, const char *summary,
                                                 const char *text);
/* a table, borrowed from the qkv_report (or a summary's) */
QKV_INTERNAL void qkv__report_doc_table(qkv_report_doc *doc, const qkv_report_table *t);
/* a table of rows x cols that the document owns, for the caller to fill (headers, alignment,
 * cells) before rendering; NULL when out of memory (recorded) */
QKV_INTERNAL qkv_report_table *qkv__report_doc_new_table(qkv_report_doc *doc, int rows, int cols);
/* a figure, borrowed from the qkv_report */
QKV_INTERNAL void qkv__report_doc_figure(qkv_report_doc *doc, const qkv_report_figure *f);

/* The renderers: each turns the document (or records of fields) into one file's text and knows
 * nothing of what it says; each returns a malloc'd string, NULL when out of memory. */
/* report_md.c: the document as Markdown (results.md, report.md, summary.md, a document's blocks) */
QKV_INTERNAL char *qkv__report_render_md(const qkv_report_doc *doc);
/* report_html.c: the document as one self-contained HTML page (report.html, summary.html) */
QKV_INTERNAL char *qkv__report_render_html(const qkv_report_doc *doc);
/* report_csv.c: a row per record (results.csv: per variant; summary.csv: per ablation and variant) */
QKV_INTERNAL char *qkv__report_render_csv(const qkv_report_records *rec);

/* report_layout.c: what a partial sweep lacks, in words: "3 of 12 runs have not finished (why) and
 * 2 finished runs may still be extended" (planned 0: "3 runs have not finished"; why NULL: no
 * parenthesis) */
QKV_INTERNAL void qkv__report_partial_words(qkv_strbuf *b, const qkv_ablate_results *r, int planned,
                                            const char *why);
/* report_layout.c: results.md's document (the tables) */
QKV_INTERNAL int qkv__report_layout_results(qkv_report_doc *doc, const qkv_report *p);
/* report_layout.c: report.md's and report.html's document (everything); both 0, or -1 when
 * out of memory */
QKV_INTERNAL int qkv__report_layout_page(qkv_report_doc *doc, const qkv_report *p);

#endif
