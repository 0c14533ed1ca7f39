/* Generated blocks in Markdown documents (summary.h, docs/ablate.md): a marker line names what to
 * generate, the lines up to the next end marker are its output, regenerated from the committed
 * results to check the document (the first differing line named) or to rewrite it in place.
 *
 *   <!-- qkv summarize: DIR... [--sizes] -->     the table of qkv summarize DIR... (or the size tables)
 *   <!-- qkv summarize: DIR... --published FILE -->  FILE's table of published results, our cells beside
 *   <!-- qkv table: FILE[#WHICH] [cols=A,B] -->  a table quoted from a Markdown file (results.md)
 *   <!-- qkv gap: DIR [steps=A,B] [variants=X,Y] -->  each variant's gap against steps (doc_gaps.c)
 *   <!-- end -->
 *
 * and inline, inside a line of prose, one number (doc_values.c):
 *
 *   <!-- qkv value: DIR VARIANT FIELD -->TEXT<!-- end -->
 *
 * and around a sentence that states a finding, over one or more lines, the predicates it makes
 * (doc_claims.c), evaluated and, where the wording implies a test, tested (Holm over the document):
 *
 *   <!-- qkv claim: PRED[; PRED]... -->TEXT<!-- /claim -->
 *
 * Paths are relative to the directory qkv runs in (the repository's root). Markers are whole
 * lines; inside fenced code blocks they are text (so documentation can show them). */
#define _GNU_SOURCE /* memmem */
#include "report/summary.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/strbuf.h"
#include "io/fileio.h"
#include "report/report_doc.h"

#define OPEN "<!-- qkv "
#define CLOSE "-->"
#define END "<!-- end -->"
#define VALUE "<!-- qkv value: "
#define CLAIM "<!-- qkv claim: "
#define CLAIM_END "<!-- /claim -->"

/* ---- lines ------------------------------------------------------------------------------- */

typedef struct line {
    const char *s;                  /* its start in the text */
    size_t len;                     /* without the newline */
} line;

/* a Markdown file's text and its lines (a last line without a newline counts) */
typedef struct text {
    char *s;
    size_t len;
    line *l;
    int n;
} text;

/* path's text and lines into t; 0, or -1 with e (t is then empty) */
static int load(text *t, const char *path, qkv_err *e) {
    memset(t, 0, sizeof *t);
    if (!(t->s = qkv__read_file(path, &t->len, e))) return -1;
    int cap = 0;
    for (size_t i = 0; i < t->len;) {
        const char *nl = memchr(t->s + i, '\n', t->len - i);
        size_t end = nl ? (size_t)(nl - t->s) : t->len;
        if (t->n == cap) {
            line *m = realloc(t->l, (size_t)(cap = cap ? 2 * cap : 64) * sizeof *m);
            if (!m) {
                free(t->l);
                free(t->s);
                memset(t, 0, sizeof *t);
                return qkv_err_set(e, QKV_ERR_FAIL, "%s: out of memory", path);
            }
            t->l = m;
        }
        t->l[t->n++] = (line){t->s + i, end - i};
        i = end + 1;
    }
    return 0;
}

static void unload(text *t) {
    free(t->l);
    free(t->s);
}

/* the line without surrounding blanks, into dst (cut to n - 1 bytes) */
static void trimmed(const line *l, char *dst, size_t n) {
    size_t a = 0, b = l->len;
    while (a < b && isspace((unsigned char)l->s[a])) a++;
    while (b > a && isspace((unsigned char)l->s[b - 1])) b--;
    snprintf(dst, n, "%.*s", (int)(b - a), l->s + a);
}

/* whether the line opens or closes a fenced code block (``` or ~~~) */
static bool fence(const line *l) {
    size_t a = 0;
    while (a < l->len && a < 4 && l->s[a] == ' ') a++;
    return l->len - a >= 3 && (!strncmp(l->s + a, "```", 3) || !strncmp(l->s + a, "~~~", 3));
}

/* ---- Markdown tables: quoting one from a file --------------------------------------------- */

/* GitHub's anchor of a heading or name: lower case, spaces to '-', letters, digits, '-', '_' and
 * non-ASCII kept, the rest dropped */
static void slug(const char *s, size_t len, char *dst, size_t n) {
    size_t o = 0;
    for (size_t i = 0; i < len && o + 1 < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == ' ') dst[o++] = '-';
        else if (isalnum(c) || c == '-' || c == '_' || c >= 0x80) dst[o++] = (char)tolower(c);
    }
    dst[o] = 0;
}

/* a table row's cells (the text between unescaped '|'), trimmed, each cut to a cell's size;
 * returns the count */
static int row_cells(const line *l, char cells[][QKV_REPORT_CELL], int max) {
    const char *p = l->s, *end = l->s + l->len;
    while (p < end && isspace((unsigned char)*p)) p++;
    while (end > p && isspace((unsigned char)end[-1])) end--;
    if (p < end && *p == '|') p++;
    if (end > p && end[-1] == '|' && (end - p < 2 || end[-2] != '\\')) end--;
    int n = 0;
    while (n < max) {
        const char *q = p;
        while (q < end && !(*q == '|' && (q == p || q[-1] != '\\'))) q++;
        const char *a = p, *b = q;
        while (a < b && isspace((unsigned char)*a)) a++;
        while (b > a && isspace((unsigned char)b[-1])) b--;
        snprintf(cells[n++], QKV_REPORT_CELL, "%.*s", (int)(b - a), a);
        if (q >= end) break;
        p = q + 1;
    }
    return n;
}

/* whether the line starts a table row ('|' first) */
static bool table_line(const line *l) {
    size_t a = 0;
    while (a < l->len && l->s[a] == ' ') a++;
    return a < l->len && l->s[a] == '|';
}

/* whether the line is a table's delimiter row (|---|:---:|) */
static bool delimiter(const line *l) {
    if (!table_line(l)) return false;
    bool dash = false;
    for (size_t i = 0; i < l->len; i++) {
        char c = l->s[i];
        if (c == '-') dash = true;
        else if (!strchr("|: \t", c)) return false;
    }
    return dash;
}

enum { MAX_COLS = 64 };

/* the first of cells[0..n) whose anchor starts with want (an anchor, not empty); -1 when none */
static int column_named(char cells[][QKV_REPORT_CELL], int n, const char *want) {
    for (int c = 0; c < n && *want; c++) {
        char cs[256];
        slug(cells[c], strlen(cells[c]), cs, sizeof cs);
        if (!strncmp(cs, want, strlen(want))) return c;
    }
    return -1;
}

/* the first table of t chosen by `which` ("" the first; a number, the n-th; a heading's anchor, the
 * first table after that heading; else the first table with a column whose anchor starts so)
 * outside code blocks: its lines [*start, *end), *start -1 when there is none; the number of
 * tables looked at */
static int find_table(const text *t, const char *which, int *start, int *end) {
    const line *l = t->l;
    int n = t->n, tables = 0;
    char want[256], *num_end;
    slug(which, strlen(which), want, sizeof want);
    long idx = strtol(which, &num_end, 10);
    bool by_number = *which && !*num_end, after_heading = false, in_fence = false;
    static char cells[MAX_COLS][QKV_REPORT_CELL];
    *start = *end = -1;
    for (int i = 0; i < n && *start < 0; i++) {
        if (fence(&l[i])) in_fence = !in_fence;
        if (in_fence) continue;
        if (l[i].len && l[i].s[0] == '#') { /* a heading: "## Text" */
            size_t h = 0;
            while (h < l[i].len && l[i].s[h] == '#') h++;
            char hs[256];
            slug(l[i].s + h, l[i].len - h, hs, sizeof hs);
            const char *a = hs;
            while (*a == '-') a++; /* the space after the #s */
            after_heading |= *want && !by_number && !strcmp(a, want);
            continue;
        }
        if (!(table_line(&l[i]) && i + 1 < n && delimiter(&l[i + 1]))) continue;
        int last = i + 2;
        while (last < n && table_line(&l[last])) last++;
        tables++;
        bool match = !*which || (by_number && idx == tables) || after_heading;
        if (!match && !by_number) match = column_named(cells, row_cells(&l[i], cells, MAX_COLS), want) >= 0;
        if (match) {
            *start = i;
            *end = last;
        }
        i = last - 1;
    }
    return tables;
}

/* The table of `file` chosen by `which` (find_table), with only the columns of `cols` (NULL: all;
 * names match a column's anchor by prefix, numbers count from 1). The Markdown (malloc'd), or NULL
 * with e. */
static char *quote_table(const char *file, const char *which, const char *cols, qkv_err *e) {
    text t;
    if (load(&t, file, e)) return NULL;
    int start, end, tables = find_table(&t, which, &start, &end);
    const line *l = t.l;
    char *out = NULL, *num_end;
    static char cells[MAX_COLS][QKV_REPORT_CELL];
    qkv_strbuf b;
    qkv__strbuf_init(&b);
    if (start < 0) {
        qkv_err_set(e, QKV_ERR_FAIL, "%s%s%s: no such table (of %d: give a number, a heading's anchor or a column's "
                    "name)", file, *which ? "#" : "", which, tables);
        goto done;
    }
    if (!cols) {
        for (int i = start; i < end; i++) qkv__strbuf_printf(&b, "%.*s\n", (int)l[i].len, l[i].s);
    } else {
        int pick[MAX_COLS], np = 0, nc = row_cells(&l[start], cells, MAX_COLS);
        for (const char *c = cols; *c && np < MAX_COLS;) {
            size_t k = strcspn(c, ",");
            char name[256], ns[256];
            snprintf(name, sizeof name, "%.*s", (int)k, c);
            slug(name, strlen(name), ns, sizeof ns);
            long col = strtol(name, &num_end, 10);
            int found = -1;
            if (*name && !*num_end) found = col >= 1 && col <= nc ? (int)col - 1 : -1;
            if (found < 0) found = column_named(cells, nc, ns);
            if (found < 0) {
                qkv_err_set(e, QKV_ERR_FAIL, "%s%s%s: cols: no column \"%s\" (the table has %d)", file,
                            *which ? "#" : "", which, name, nc);
                goto done;
            }
            pick[np++] = found;
            c += k + (c[k] == ',');
        }
        for (int i = start; i < end; i++) {
            int m = row_cells(&l[i], cells, MAX_COLS);
            qkv__strbuf_puts(&b, "|");
            for (int p = 0; p < np; p++) qkv__strbuf_printf(&b, " %s |", pick[p] < m ? cells[pick[p]] : "");
            qkv__strbuf_puts(&b, "\n");
        }
    }
    if (!(out = qkv__strbuf_take(&b))) qkv_err_set(e, QKV_ERR_FAIL, "%s: out of memory", file);
done:
    if (!out) qkv__strbuf_free(&b);
    unload(&t);
    return out;
}

/* ---- published results beside ours ------------------------------------------------------ */

/* FILE's first pipe table (its first column: one of our variant names), each row with the
 * summary's cells for that variant appended (the main table's columns; "—" where no ablation has
 * it). The published numbers are quoted from papers by hand in FILE; ours are generated. */
static char *published_block(const qkv_sum_report *r, const char *file, qkv_err *e) {
    text t;
    if (load(&t, file, e)) return NULL;
    int start, end;
    find_table(&t, "", &start, &end);
    const line *l = t.l;
    const qkv_report_table *m = &r->main;
    char *out = NULL;
    static char cells[MAX_COLS][QKV_REPORT_CELL];
    qkv_report_doc doc;
    qkv__report_doc_init(&doc, "");
    if (start < 0) {
        qkv_err_set(e, QKV_ERR_FAIL, "%s: no table (expected a pipe table whose first column names variants)", file);
        goto done;
    }
    int nc = row_cells(&l[start], cells, MAX_COLS);
    qkv_report_table *p = qkv__report_doc_new_table(&doc, end - start - 2, nc + m->cols - 1);
    for (int c = 0; p && c < p->cols; c++) { /* FILE's columns as they are, then ours */
        if (c < nc) snprintf(p->head[c], QKV_REPORT_CELL, "%s", cells[c]);
        else snprintf(p->head[c], QKV_REPORT_CELL, "ours, %.600s", m->head[c - nc + 1]);
        p->right[c] = c >= nc;
    }
    for (int i = start + 2; p && i < end; i++) {
        int k = row_cells(&l[i], cells, MAX_COLS), row = -1;
        if (k != nc) {
            qkv_err_set(e, QKV_ERR_FAIL, "%s:%d: %d cells, the header has %d", file, i + 1, k, nc);
            goto done;
        }
        for (int j = 0; j < m->rows && row < 0; j++)
            if (!strcmp(qkv_report_cell(m, j, 0), cells[0])) row = j;
        for (int c = 0; c < p->cols; c++)
            snprintf(qkv_report_cell(p, i - start - 2, c), QKV_REPORT_CELL, "%s",
                     c < nc ? cells[c] : row < 0 ? QKV_REPORT_DASH : qkv_report_cell(m, row, c - nc + 1));
    }
    if (p) p->markdown = true; /* FILE's cells are Markdown, written as they are; so are ours (numbers, names) */
    if (doc.oom || !(out = qkv__report_render_md(&doc))) qkv_err_set(e, QKV_ERR_FAIL, "%s: out of memory", file);
done:
    qkv__report_doc_free(&doc);
    unload(&t);
    return out;
}

/* ---- markers --------------------------------------------------------------------------------- */

/* what a marker's words ask for, generated; NULL with e (without the file and line) */
static char *generate(char *words, qkv_err *e) {
    if (!strncmp(words, "gap:", 4) && (!words[4] || isspace((unsigned char)words[4]))) return qkv__doc_gap(words + 4, e);
    char *save = NULL, *kind = strtok_r(words, " \t", &save);
    if (kind && !strcmp(kind, "summarize:")) {
        const char *dirs[256];
        int nd = 0;
        qkv_sum_part part = QKV_SUM_PART_MAIN;
        const char *published = NULL;
        for (char *w = strtok_r(NULL, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
            bool twice = !strcmp(w, "--sizes") ? part == QKV_SUM_PART_SIZES : !strcmp(w, "--published") && published;
            if (twice) /* a later --published would silently win */
                return qkv_err_set(e, QKV_ERR_FAIL, "qkv summarize: %s given twice (expected each option once)", w), NULL;
            if (!strcmp(w, "--sizes")) part = QKV_SUM_PART_SIZES;
            else if (!strcmp(w, "--published")) {
                if (!(published = strtok_r(NULL, " \t", &save)))
                    return qkv_err_set(e, QKV_ERR_FAIL, "--published needs a FILE"), NULL;
            } else if (w[0] == '-')
                return qkv_err_set(e, QKV_ERR_FAIL, "unknown option '%s' (--sizes and --published FILE are)", w), NULL;
            else if (nd == 256) return qkv_err_set(e, QKV_ERR_FAIL, "more than 256 directories"), NULL;
            else dirs[nd++] = w;
        }
        if (!nd) return qkv_err_set(e, QKV_ERR_FAIL, "qkv summarize: needs the ablations' directories"), NULL;
        qkv_summary s;
        if (qkv__summary_load(&s, dirs, nd, e)) return NULL;
        qkv_sum_report r;
        char *md = NULL;
        if (qkv__sum_report_build(&r, &s)) qkv_err_set(e, QKV_ERR_FAIL, "out of memory");
        else if (published) md = published_block(&r, published, e);
        else if (!(md = qkv__summary_block(&r, part))) qkv_err_set(e, QKV_ERR_FAIL, "out of memory");
        qkv__sum_report_free(&r);
        qkv__summary_free(&s);
        return md;
    }
    if (kind && !strcmp(kind, "table:")) {
        char *file = strtok_r(NULL, " \t", &save), *cols = NULL;
        if (!file) return qkv_err_set(e, QKV_ERR_FAIL, "qkv table: needs FILE[#WHICH]"), NULL;
        for (char *w = strtok_r(NULL, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
            if (strncmp(w, "cols=", 5) || !w[5])
                return qkv_err_set(e, QKV_ERR_FAIL, "qkv table: unexpected '%s' (cols=A,B is the option)", w), NULL;
            if (cols) /* the later one would silently win */
                return qkv_err_set(e, QKV_ERR_FAIL, "qkv table: cols= given twice ('cols=%s', then '%s'; expected "
                                   "each option once)", cols, w), NULL;
            cols = w + 5;
        }
        char *hash = strchr(file, '#');
        if (hash) *hash = 0;
        return quote_table(file, hash ? hash + 1 : "", cols, e);
    }
    qkv_err_set(e, QKV_ERR_FAIL, "unknown marker '%s' (expected <!-- qkv summarize: DIR... -->, <!-- qkv table: "
                "FILE[#WHICH] --> or <!-- qkv gap: DIR -->)", kind ? kind : "");
    return NULL;
}

/* 70 bytes of a line from `from` for a message, "..." marking what is cut */
static void excerpt(char *dst, size_t n, const char *s, size_t len, size_t from) {
    if (from > len) from = len;
    size_t k = len - from > 70 ? 70 : len - from;
    snprintf(dst, n, "%s%.*s%s", from ? "..." : "", (int)k, s + from, from + k < len ? "..." : "");
}

/* where two texts first differ: the 0-based line and byte in it (*col), and each side's line
 * around that byte (or the end marker where a side has no more lines); -1 when equal */
static int first_difference(const char *a, const char *b, int *col, char *exp, char *got, size_t n) {
    for (int k = 0;; k++) {
        size_t la = strcspn(a, "\n"), lb = strcspn(b, "\n");
        bool ea = !*a, eb = !*b;
        if (ea && eb) return -1;
        if (ea || eb || la != lb || memcmp(a, b, la)) {
            size_t c = 0;
            while (!ea && !eb && c < la && c < lb && a[c] == b[c]) c++;
            size_t from = c > 30 ? c - 30 : 0;
            *col = (int)c + 1;
            if (ea) snprintf(exp, n, "%s", END);
            else excerpt(exp, n, a, la, from);
            if (eb) snprintf(got, n, "%s", END);
            else excerpt(got, n, b, lb, from);
            return k;
        }
        a += la + (a[la] == '\n');
        b += lb + (b[lb] == '\n');
    }
}

/* a document being checked or rewritten */
typedef struct doc {
    const char *path;
    bool update;
    text t;
    qkv_wpart *parts;               /* the new text: kept and generated pieces */
    int np;
    char **made;                    /* the generated pieces */
    int nm;
    const char *copied;             /* the text before this is in parts */
    int blocks, changed;
    /* claims: the one open (its line, 0: none; its words; where its text starts), how many were
     * evaluated, the tests their wording implies, and the first that does not hold (update: the
     * rewrite goes on, then fails with it) */
    int claim_line;
    char claim_words[4096];
    const char *claim_text;
    int claims;
    qkv_doc_tests tests;
    qkv_err broken;
    bool is_broken;
} doc;

/* the text [at, stop) of d, generated as want (d's from here): counted, compared and put in the new
 * text; 1 when it differs and d is only checked, else 0 */
static int replace(doc *d, const char *at, const char *stop, char *want) {
    size_t have = (size_t)(stop - at), wn = strlen(want);
    d->made[d->nm++] = want;
    d->blocks++;
    if (have != wn || memcmp(at, want, wn)) {
        d->changed++;
        if (!d->update) return 1;
    }
    d->parts[d->np++] = (qkv_wpart){d->copied, (size_t)(at - d->copied)};
    d->parts[d->np++] = (qkv_wpart){want, wn};
    d->copied = stop;
    return 0;
}

/* the inline values of line l (number ln): each regenerated and replaced (1 with e at the first
 * that differs, when only checked); 0, or -1 with e */
static int inline_values(doc *d, int ln, const line *l, qkv_err *e) {
    const char *end = l->s + l->len;
    for (const char *p = l->s; p < end;) {
        const char *m = memmem(p, (size_t)(end - p), VALUE, strlen(VALUE));
        if (!m) break;
        const char *close = memmem(m, (size_t)(end - m), CLOSE, strlen(CLOSE));
        const char *val = close ? close + strlen(CLOSE) : NULL;
        const char *stop = val ? memmem(val, (size_t)(end - val), END, strlen(END)) : NULL;
        if (!stop)
            return qkv_err_set(e, QKV_ERR_FAIL, "%s:%d:%d: an inline value is %sWORDS%sTEXT%s on one line", d->path,
                               ln, (int)(m - l->s) + 1, VALUE, CLOSE, END);
        char words[1024];
        qkv_err inner;
        size_t wl = (size_t)(close - m - strlen(VALUE));
        if (wl >= sizeof words)
            return qkv_err_set(e, QKV_ERR_FAIL, "%s:%d: an inline value's words are longer than %zu bytes", d->path,
                               ln, sizeof words - 1);
        memcpy(words, m + strlen(VALUE), wl);
        words[wl] = 0;
        char *want = qkv__doc_value(words, &inner);
        if (!want) return qkv_err_set(e, inner.code, "%s:%d: %s", d->path, ln, inner.msg);
        if (replace(d, val, stop, want)) {
            size_t have = (size_t)(stop - val);
            qkv_err_set(e, QKV_ERR_FAIL, "%s:%d:%d: differs from what the inline marker generates: expected \"%s\", "
                        "found \"%.*s\" (--update-doc rewrites it)", d->path, ln, (int)(val - l->s) + 1, want,
                        (int)(have > 70 ? 70 : have), val);
            return 1;
        }
        p = stop + strlen(END);
    }
    return 0;
}

/* the claim's text [s, s + len) as a reader sees it, for a message: markers dropped, blanks
 * collapsed, cut (at a character's start) to about 70 bytes with "..." */
static void plain(const char *s, size_t len, char *out, size_t n) {
    size_t o = 0;
    bool space = false;
    for (size_t i = 0; i < len && o + 8 < n;) {
        if (!strncmp(s + i, "<!--", 4)) {
            const char *c = memmem(s + i, len - i, CLOSE, strlen(CLOSE));
            i = c ? (size_t)(c - s) + strlen(CLOSE) : len;
            continue;
        }
        unsigned char ch = (unsigned char)s[i++];
        if (isspace(ch)) {
            space = o > 0;
            continue;
        }
        if (o >= 70 && (ch & 0xC0) != 0x80) {
            memcpy(out + o, "...", 3);
            o += 3;
            break;
        }
        if (space) out[o++] = ' ';
        space = false;
        out[o++] = (char)ch;
    }
    out[o] = 0;
}

/* a claim that does not hold (what and why): with d only checked, 1 with e; rewriting, the first
 * is kept for the end and 0 */
static int broken(doc *d, int ln, const char *said, const char *why, qkv_err *e) {
    qkv_err *into = d->update ? &d->broken : e;
    if (d->update && d->is_broken) return 0;
    qkv_err_set(into, QKV_ERR_FAIL, "%s:%d: the claim \"%s\" no longer holds: %s", d->path, ln, said, why);
    d->is_broken = true;
    return d->update ? 0 : 1;
}

/* the claim markers of line l (number ln): an opening one keeps its words, a closing one evaluates
 * the claim it ends; 0, 1 (a claim does not hold, d only checked: e) or -1 with e */
static int claims(doc *d, int ln, const line *l, qkv_err *e) {
    const char *end = l->s + l->len;
    for (const char *p = l->s; p < end;) {
        const char *open = memmem(p, (size_t)(end - p), CLAIM, strlen(CLAIM));
        const char *close = memmem(p, (size_t)(end - p), CLAIM_END, strlen(CLAIM_END));
        if (!open && !close) break;
        if (open && (!close || open < close)) {
            if (d->claim_line)
                return qkv_err_set(e, QKV_ERR_FAIL, "%s:%d: a claim opens inside the claim of line %d (%s ends it)",
                                   d->path, ln, d->claim_line, CLAIM_END);
            const char *w = open + strlen(CLAIM), *c = memmem(w, (size_t)(end - w), CLOSE, strlen(CLOSE));
            if (!c || (size_t)(c - w) >= sizeof d->claim_words)
                return qkv_err_set(e, QKV_ERR_FAIL, "%s:%d: a claim's words are %sPRED[; PRED]...%s on one line "
                                   "(shorter than %zu bytes)", d->path, ln, CLAIM, CLOSE, sizeof d->claim_words);
            snprintf(d->claim_words, sizeof d->claim_words, "%.*s", (int)(c - w), w);
            d->claim_line = ln;
            d->claim_text = p = c + strlen(CLOSE);
            continue;
        }
        if (!d->claim_line)
            return qkv_err_set(e, QKV_ERR_FAIL, "%s:%d: %s without a claim (%sPRED...%s) before it", d->path, ln,
                               CLAIM_END, CLAIM, CLOSE);
        char said[96], why[1024];
        plain(d->claim_text, (size_t)(close - d->claim_text), said, sizeof said);
        int first = d->tests.n, at = d->claim_line;
        qkv_err inner;
        d->claim_line = 0;
        d->claims++;
        int rc = qkv__doc_claim(d->claim_words, &d->tests, at, why, sizeof why, &inner);
        if (rc < 0) return qkv_err_set(e, inner.code, "%s:%d: %s", d->path, at, inner.msg);
        if (rc > 0 && broken(d, at, said, why, e)) return 1;
        for (int i = first; i < d->tests.n; i++) { /* the claim's words before its test's, for Holm's message */
            char *w = d->tests.t[i].what, tmp[sizeof d->tests.t[i].what + 128];
            snprintf(tmp, sizeof tmp, "the claim \"%s\" no longer holds: %s", said, w);
            snprintf(w, sizeof d->tests.t[i].what, "%.*s", (int)sizeof d->tests.t[i].what - 1, tmp);
        }
        p = close + strlen(CLAIM_END);
    }
    return 0;
}

/* after the last line: no claim left open, and every test the claims imply significant after Holm's
 * correction over the document; 0, 1 (one is not, d only checked: e) or -1 with e */
static int claims_end(doc *d, qkv_err *e) {
    if (d->claim_line)
        return qkv_err_set(e, QKV_ERR_FAIL, "%s:%d: a claim without its %s", d->path, d->claim_line, CLAIM_END);
    double *adj = calloc((size_t)d->tests.n + 1, sizeof *adj);
    int bad = adj ? qkv__doc_tests_holm(&d->tests, adj) : -2;
    int rc = 0;
    if (bad == -2) rc = qkv_err_set(e, QKV_ERR_FAIL, "%s: out of memory", d->path);
    else if (bad >= 0) {
        const qkv_doc_test *t = &d->tests.t[bad];
        qkv_err *into = d->update ? &d->broken : e;
        if (!d->is_broken)
            qkv_err_set(into, QKV_ERR_FAIL, "%s:%d: %s: p = %.3g, %.3g after Holm's correction over the document's "
                        "%d tests (above 0.05)", d->path, t->line, t->what, t->p, adj[bad], d->tests.n);
        d->is_broken = true;
        rc = d->update ? 0 : 1;
    }
    free(adj);
    return rc;
}

/* the block marked on line i (its words t, trimmed), up to the end marker on line last: regenerated
 * (a blank line, what was generated, a blank line) and replaced; 0, 1 (it differs, d only
 * checked: e names the first differing line) or -1 with e */
static int block(doc *d, int i, int last, char *t, qkv_err *e) {
    const line *l = d->t.l;
    qkv_err inner;
    t[strlen(t) - strlen(CLOSE)] = 0;
    char *md = generate(t + strlen(OPEN), &inner);
    if (!md) return qkv_err_set(e, inner.code, "%s:%d: %s", d->path, i + 1, inner.msg);
    qkv_strbuf b;
    qkv__strbuf_init(&b);
    qkv__strbuf_printf(&b, "\n%s\n", md);
    free(md);
    char *want = qkv__strbuf_take(&b);
    if (!want) return qkv_err_set(e, QKV_ERR_FAIL, "%s: out of memory", d->path);
    const char *body = l[i + 1].s, *stop = l[last].s; /* the block's lines now */
    if (!replace(d, body, stop, want)) return 0;
    char *now = strndup(body, (size_t)(stop - body)), exp[96], got[96];
    if (!now) return qkv_err_set(e, QKV_ERR_FAIL, "%s: out of memory", d->path);
    int col = 1, k = first_difference(want, now, &col, exp, got, sizeof exp);
    free(now);
    qkv_err_set(e, QKV_ERR_FAIL, "%s:%d:%d: differs from what the marker on line %d generates: expected \"%s\", found "
                "\"%s\" (--update-doc rewrites the block)", d->path, i + 2 + k, col, i + 1, exp, got);
    return 1;
}

int qkv__summary_doc(const char *path, bool update, int *blocks, int *changed, int *claims_out, qkv_err *e) {
    *blocks = *changed = *claims_out = 0;
    doc d = {.path = path, .update = update};
    if (load(&d.t, path, e)) return -1;
    int rc = -1, nv = 0, n = d.t.n;
    const line *l = d.t.l;
    for (const char *p = strstr(d.t.s, VALUE); p; p = strstr(p + 1, VALUE)) nv++;
    d.parts = calloc((size_t)(n + nv) * 2 + 2, sizeof *d.parts);
    d.made = calloc((size_t)(n + nv) + 1, sizeof *d.made);
    d.copied = d.t.s;
    if (!d.parts || !d.made) {
        qkv_err_set(e, QKV_ERR_FAIL, "%s: out of memory", path);
        goto done;
    }
    bool in_fence = false;
    for (int i = 0; i < n; i++) {
        if (fence(&l[i])) in_fence = !in_fence;
        if (in_fence) continue;
        char t[4096];
        trimmed(&l[i], t, sizeof t);
        if (!strcmp(t, END)) { /* the lines of a block are skipped below: this one ends none */
            qkv_err_set(e, QKV_ERR_FAIL, "%s:%d: %s without a marker (%s...%s) before it", path, i + 1, END, OPEN,
                        CLOSE);
            goto done;
        }
        if (strncmp(t, OPEN, strlen(OPEN)) || !strncmp(t, VALUE, strlen(VALUE)) || !strncmp(t, CLAIM, strlen(CLAIM))) {
            /* prose: its inline values and claims */
            if ((rc = inline_values(&d, i + 1, &l[i], e)) || (rc = claims(&d, i + 1, &l[i], e))) goto done;
            rc = -1;
            continue;
        }
        size_t tl = strlen(t);
        if (tl < strlen(OPEN) + strlen(CLOSE) || strcmp(t + tl - strlen(CLOSE), CLOSE)) {
            qkv_err_set(e, QKV_ERR_FAIL, "%s:%d: a marker is one line that ends with -->", path, i + 1);
            goto done;
        }
        int last = i + 1;
        char u[64] = "";
        for (; last < n; last++) {
            trimmed(&l[last], u, sizeof u);
            if (!strcmp(u, END) || !strncmp(u, OPEN, strlen(OPEN))) break;
        }
        if (last == n || strcmp(u, END)) {
            qkv_err_set(e, QKV_ERR_FAIL, "%s:%d: no %s after this marker (before %s)", path, i + 1, END,
                        last == n ? "the end of the file" : "the next marker");
            goto done;
        }
        if ((rc = block(&d, i, last, t, e))) goto done;
        rc = -1;
        i = last;
    }
    if ((rc = claims_end(&d, e))) goto done;
    rc = -1;
    d.parts[d.np++] = (qkv_wpart){d.copied, (size_t)(d.t.s + d.t.len - d.copied)};
    if (update && d.changed && qkv__rewrite_file_atomic(path, d.parts, d.np, e)) goto done;
    rc = 0;
    if (d.is_broken) { /* rewritten, and a claim does not hold */
        *e = d.broken;
        rc = 1;
    }
done:
    *blocks = d.blocks;
    *changed = d.changed;
    *claims_out = d.claims;
    qkv__doc_tests_free(&d.tests);
    for (int i = 0; d.made && i < d.nm; i++) free(d.made[i]);
    free(d.made);
    free(d.parts);
    unload(&d.t);
    return rc;
}
