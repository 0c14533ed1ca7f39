/* The report's document as Markdown (results.md, report.md): blocks separated by blank
 * lines, text made safe for tables and inline HTML, figures as links to their SVG files. */
#include "report/report_doc.h"

#include <string.h>

#include "io/strbuf.h"

/* text with HTML-significant characters as entities, '|' escaped (it would end a table
 * cell) and no line breaks (they would end a cell or a heading) */
static void md_text(qkv_strbuf *b, const char *s) {
    for (; *s; s++) {
        switch (*s) {
        case '&': qkv__strbuf_puts(b, "&amp;"); break;
        case '<': qkv__strbuf_puts(b, "&lt;"); break;
        case '>': qkv__strbuf_puts(b, "&gt;"); break;
        case '|': qkv__strbuf_puts(b, "\\|"); break;
        case '\n': case '\r': case '\t': qkv__strbuf_puts(b, " "); break;
        default: qkv__strbuf_putn(b, s, 1); break;
        }
    }
}

/* row r of a pipe table, "| a | b |" (r -1: the headers), escaped unless Markdown already */
static void md_row(qkv_strbuf *b, const qkv_report_table *t, int r) {
    qkv__strbuf_puts(b, "|");
    for (int c = 0; c < t->cols; c++) {
        const char *s = r < 0 ? t->head[c] : qkv_report_cell(t, r, c);
        qkv__strbuf_puts(b, " ");
        if (t->markdown) qkv__strbuf_puts(b, s);
        else md_text(b, s);
        qkv__strbuf_puts(b, " |");
    }
    qkv__strbuf_puts(b, "\n");
}

/* a pipe table; numeric columns right-aligned */
static void md_table(qkv_strbuf *b, const qkv_report_table *t) {
    md_row(b, t, -1);
    qkv__strbuf_puts(b, "|");
    for (int c = 0; c < t->cols; c++) qkv__strbuf_puts(b, t->right[c] ? "---:|" : "---|");
    qkv__strbuf_puts(b, "\n");
    for (int r = 0; r < t->rows; r++) md_row(b, t, r);
}

/* one inline span. A plain code span is written as is (names and paths are not expected to
 * hold backticks); an option may hold any value, so one with a backtick is fenced with two */
static void md_span(qkv_strbuf *b, const qkv_report_span *s) {
    switch (s->kind) {
    case QKV_SPAN_TEXT: md_text(b, s->text); break;
    case QKV_SPAN_CODE: qkv__strbuf_printf(b, "`%s`", s->text); break;
    case QKV_SPAN_CODE_NOWRAP:
        qkv__strbuf_printf(b, strchr(s->text, '`') ? "`` %s ``" : "`%s`", s->text);
        break;
    }
}

/* one block, ending with its own newline */
static void md_block(qkv_strbuf *b, const qkv_report_block *k) {
    switch (k->kind) {
    case QKV_BLOCK_HEADING:
        for (int i = 0; i < k->level; i++) qkv__strbuf_puts(b, "#");
        qkv__strbuf_puts(b, " ");
        md_text(b, k->text);
        qkv__strbuf_puts(b, "\n");
        break;
    case QKV_BLOCK_PARAGRAPH:
        for (int i = 0; i < k->n; i++) md_span(b, &k->spans[i]);
        qkv__strbuf_puts(b, "\n");
        break;
    case QKV_BLOCK_NOTE:
        md_text(b, k->text);
        qkv__strbuf_puts(b, "\n");
        break;
    case QKV_BLOCK_LIST:
        for (int i = 0; i < k->n; i++) {
            qkv__strbuf_puts(b, "- ");
            md_text(b, k->items[i]);
            qkv__strbuf_puts(b, "\n");
        }
        break;
    case QKV_BLOCK_CODE: {
        /* a fence of more backticks than any run of them in the text, so none can end it */
        size_t n = strlen(k->text), run = 0, longest = 0;
        for (size_t i = 0; i < n; i++) {
            run = k->text[i] == '`' ? run + 1 : 0;
            if (run > longest) longest = run;
        }
        size_t f = longest >= 3 ? longest + 1 : 3;
        if (k->summary) { /* HTML's <details>, which Markdown renderers pass through */
            qkv__strbuf_puts(b, "<details><summary>");
            qkv__strbuf_escape_xml(b, k->summary);
            qkv__strbuf_puts(b, "</summary>\n\n");
        }
        for (size_t i = 0; i < f; i++) qkv__strbuf_puts(b, "`");
        qkv__strbuf_printf(b, "%s\n%s%s", k->lang ? k->lang : "", k->text, n == 0 || k->text[n - 1] != '\n' ? "\n" : "");
        for (size_t i = 0; i < f; i++) qkv__strbuf_puts(b, "`");
        qkv__strbuf_puts(b, "\n");
        if (k->summary) qkv__strbuf_puts(b, "\n</details>\n");
        break;
    }
    case QKV_BLOCK_TABLE: md_table(b, k->table); break;
    case QKV_BLOCK_FIGURE:
        qkv__strbuf_puts(b, "![");
        md_text(b, k->figure->alt);
        qkv__strbuf_printf(b, "](%s)\n", k->figure->path);
        break;
    }
}

/* blocks separated by one blank line */
char *qkv__report_render_md(const qkv_report_doc *doc) {
    qkv_strbuf b;
    qkv__strbuf_init(&b);
    for (int i = 0; i < doc->n; i++) {
        if (i) qkv__strbuf_puts(&b, "\n");
        md_block(&b, &doc->blocks[i]);
    }
    return qkv__strbuf_take(&b);
}
