/* The report's document as one self-contained HTML page (report.html): inline CSS and SVG,
 * no scripts, nothing fetched from the network. */
#include "report/report_doc.h"

#include "io/strbuf.h"

static const char HTML_STYLE[] =
    "body{font-family:system-ui,-apple-system,\"Segoe UI\",Roboto,Helvetica,Arial,sans-serif;"
    "max-width:1120px;margin:2em auto;padding:0 1.2em;color:#222;line-height:1.5;background:#fff}\n"
    "h1{font-size:1.8em;margin-bottom:.4em}\n"
    "h2{font-size:1.35em;margin-top:2em;border-bottom:1px solid #ddd;padding-bottom:.2em}\n"
    "h3{font-size:1.1em;margin-top:1.6em}\n"
    ".tw{overflow-x:auto}\n"
    "table{border-collapse:collapse;margin:1em 0;font-size:.82em}\n"
    "th,td{border:1px solid #d0d0d0;padding:.25em .45em;text-align:left;vertical-align:top}\n"
    "th{background:#f3f4f6;font-weight:600}\n"
    "tbody tr:nth-child(even){background:#fafafa}\n"
    ".num{text-align:right;font-variant-numeric:tabular-nums}\n"
    "td.num{white-space:nowrap}\n"
    "figure{margin:1.2em 0;overflow-x:auto}\n"
    "figure svg{display:block;max-width:100%;height:auto}\n"
    "p.note,li{color:#444;font-size:.92em}\n"
    "pre{background:#f6f8fa;border:1px solid #e1e4e8;padding:.8em 1em;overflow-x:auto;font-size:.85em;"
    "line-height:1.35}\n"
    "code.nw{white-space:nowrap}\n"
    "code{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,\"Liberation Mono\",monospace;font-size:.92em}\n";

/* row r of t (r -1: the headers, as th cells) */
static void html_row(qkv_strbuf *b, const qkv_report_table *t, int r) {
    const char *tag = r < 0 ? "th" : "td";
    qkv__strbuf_puts(b, "<tr>");
    for (int c = 0; c < t->cols; c++) {
        qkv__strbuf_printf(b, t->right[c] ? "<%s class=\"num\">" : "<%s>", tag);
        qkv__strbuf_escape_xml(b, r < 0 ? t->head[c] : qkv_report_cell(t, r, c));
        qkv__strbuf_printf(b, "</%s>", tag);
    }
    qkv__strbuf_puts(b, "</tr>");
}

/* a table in a horizontally scrolling wrapper (wide tables must not widen the page) */
static void html_table(qkv_strbuf *b, const qkv_report_table *t) {
    qkv__strbuf_puts(b, "<div class=\"tw\"><table>\n<thead>");
    html_row(b, t, -1);
    qkv__strbuf_puts(b, "</thead>\n<tbody>\n");
    for (int r = 0; r < t->rows; r++) {
        html_row(b, t, r);
        qkv__strbuf_puts(b, "\n");
    }
    qkv__strbuf_puts(b, "</tbody></table></div>\n");
}

/* one inline span */
static void html_span(qkv_strbuf *b, const qkv_report_span *s) {
    switch (s->kind) {
    case QKV_SPAN_TEXT: qkv__strbuf_escape_xml(b, s->text); return;
    case QKV_SPAN_CODE: qkv__strbuf_puts(b, "<code>"); break;
    case QKV_SPAN_CODE_NOWRAP: qkv__strbuf_puts(b, "<code class=\"nw\">"); break;
    }
    qkv__strbuf_escape_xml(b, s->text);
    qkv__strbuf_puts(b, "</code>");
}

/* one block; the SVG of a figure is inlined (it uses no ids, so several cannot clash) */
static void html_block(qkv_strbuf *b, const qkv_report_block *k) {
    switch (k->kind) {
    case QKV_BLOCK_HEADING:
        qkv__strbuf_printf(b, "<h%d>", k->level);
        qkv__strbuf_escape_xml(b, k->text);
        qkv__strbuf_printf(b, "</h%d>\n", k->level);
        break;
    case QKV_BLOCK_PARAGRAPH:
        qkv__strbuf_puts(b, "<p>");
        for (int i = 0; i < k->n; i++) html_span(b, &k->spans[i]);
        qkv__strbuf_puts(b, "</p>\n");
        break;
    case QKV_BLOCK_NOTE:
        qkv__strbuf_puts(b, "<p class=\"note\">");
        qkv__strbuf_escape_xml(b, k->text);
        qkv__strbuf_puts(b, "</p>\n");
        break;
    case QKV_BLOCK_LIST:
        qkv__strbuf_puts(b, "<ul>\n");
        for (int i = 0; i < k->n; i++) {
            qkv__strbuf_puts(b, "<li>");
            qkv__strbuf_escape_xml(b, k->items[i]);
            qkv__strbuf_puts(b, "</li>\n");
        }
        qkv__strbuf_puts(b, "</ul>\n");
        break;
    case QKV_BLOCK_CODE:
        if (k->summary) {
            qkv__strbuf_puts(b, "<details><summary>");
            qkv__strbuf_escape_xml(b, k->summary);
            qkv__strbuf_puts(b, "</summary>");
        }
        qkv__strbuf_puts(b, "<pre><code>");
        qkv__strbuf_escape_xml(b, k->text);
        qkv__strbuf_puts(b, "</code></pre>");
        qkv__strbuf_puts(b, k->summary ? "</details>\n" : "\n");
        break;
    case QKV_BLOCK_TABLE: html_table(b, k->table); break;
    case QKV_BLOCK_FIGURE:
        qkv__strbuf_puts(b, "<figure>\n");
        qkv__strbuf_puts(b, k->figure->svg);
        qkv__strbuf_puts(b, "</figure>\n");
        break;
    }
}

/* the page: head with title and style, then the blocks as the body */
char *qkv__report_render_html(const qkv_report_doc *doc) {
    qkv_strbuf b;
    qkv__strbuf_init(&b);
    qkv__strbuf_puts(&b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>");
    qkv__strbuf_escape_xml(&b, doc->title);
    qkv__strbuf_printf(&b, "</title>\n<style>\n%s</style>\n</head>\n<body>\n", HTML_STYLE);
    for (int i = 0; i < doc->n; i++) html_block(&b, &doc->blocks[i]);
    qkv__strbuf_puts(&b, "</body>\n</html>\n");
    return qkv__strbuf_take(&b);
}
