/* Each variant's gap to the baseline against training steps, as a table in a document:
 *
 *   <!-- qkv gap: DIR [steps=A,B,...] [variants=X,Y,...] -->
 *
 * read from DIR/results.json's curves (the numbers: ablate/gaps.c). A row per variant, the
 * baseline's first with its own mean; a column per step (the mean paired difference, signed, three
 * decimals, in bits per byte or nats); a last column with the last step's interval and the trend
 * from the middle step to the last. summary_doc.c checks or rewrites it as it does the others. */
#include "report/summary.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/strbuf.h"
#include "report/report_doc.h"

void qkv__doc_gap_cell(const qkv_gap *a, bool baseline, char *out, size_t n) {
    if (!a->pairs || !isfinite(a->mean)) snprintf(out, n, QKV_REPORT_DASH);
    else snprintf(out, n, baseline ? "%.3f" : "%+.3f", a->mean);
    if (!strcmp(out, "-0.000")) out[0] = '+'; /* no sign that rounding made */
}

const char *qkv__doc_gap_trend_word(qkv_gap_trend t, bool baseline) {
    switch (t) {
    case QKV_GAP_FLAT: return "flat";
    case QKV_GAP_CLOSING: return baseline ? "improving" : "closing";
    case QKV_GAP_WIDENING: return baseline ? "worsening" : "widening";
    default: return QKV_REPORT_DASH;
    }
}

/* "A,B,C" as steps into out (at most max); the count, or -1 when one is not a step number (the
 * order is checked by the caller) */
static int parse_steps(const char *list, long long *out, int max) {
    int n = 0;
    for (const char *p = list; *p; n++) {
        char *end;
        if (n == max || !isdigit((unsigned char)*p)) return -1;
        out[n] = strtoll(p, &end, 10);
        if (*end && *end != ',') return -1;
        p = end + (*end == ',');
    }
    return n;
}

/* the table of gaps g of r, rows[0..nr) (variant indices), and how to read it: a row per variant,
 * a column per step, the last step's interval and trend last */
static char *render(const qkv_ablate_gaps *g, const qkv_ablate_results *r, const int *rows, int nr) {
    const qkv_ablate_config *c = r->cfg;
    int k = g->n_steps, b = c->baseline;
    qkv_report_doc doc;
    qkv__report_doc_init(&doc, "");
    qkv_report_table *t = qkv__report_doc_new_table(&doc, nr, k + 2);
    for (int j = 0; t && j <= k + 1; j++) {
        if (j == 0) snprintf(t->head[j], QKV_REPORT_CELL, "variant");
        else if (j <= k) snprintf(t->head[j], QKV_REPORT_CELL, "step %lld", g->steps[j - 1]);
        else snprintf(t->head[j], QKV_REPORT_CELL, "at %lld: 95%% CI; since %lld", g->steps[k - 1], g->steps[g->mid]);
        t->right[j] = j > 0 && j <= k;
    }
    for (int i = 0; t && i < nr; i++) {
        int v = rows[i];
        const qkv_gap *a = &g->at[(size_t)v * k], *l = &a[k - 1];
        snprintf(qkv_report_cell(t, i, 0), QKV_REPORT_CELL, "%s", r->v[v].name);
        for (int j = 0; j < k; j++) {
            char *cell = qkv_report_cell(t, i, j + 1), n[16] = "";
            qkv__doc_gap_cell(&a[j], v == b, cell, QKV_REPORT_CELL);
            if (a[j].pairs && a[j].pairs < c->n_seeds) snprintf(n, sizeof n, " (%d)", a[j].pairs);
            strcat(cell, n);
        }
        char iv[64] = QKV_REPORT_DASH, change[32] = "";
        if (isfinite(l->lo)) snprintf(iv, sizeof iv, "[%.3f, %.3f]", l->lo + 0.0, l->hi + 0.0);
        if (isfinite(g->change[v])) snprintf(change, sizeof change, " (%+.3f)", g->change[v]);
        snprintf(qkv_report_cell(t, i, k + 1), QKV_REPORT_CELL, "%s; %s%s", iv, qkv__doc_gap_trend_word(g->trend[v], v == b),
                 change);
    }
    const char *base = r->v[b].name;
    qkv__report_doc_note(&doc, "Each cell: the mean difference from %s in evaluation %s at that step, paired by seed "
                         "over the seeds where both runs evaluated it (%d; fewer: their count in parentheses); %s's "
                         "row: its own mean. The last column: the 95%% interval at step %lld, then the change since "
                         "step %lld: flat when smaller than half that interval, else closing (nearer zero; %s: "
                         "improving) or widening.", base, g->bits ? "bits per byte (loss / ln 2)" : "loss (nats)",
                         c->n_seeds, base, g->steps[k - 1], g->steps[g->mid], base);
    char *md = doc.oom ? NULL : qkv__report_render_md(&doc);
    qkv__report_doc_free(&doc);
    return md;
}

/* variant i's name, as a choice in a message */
static void variant_item(qkv_strbuf *b, const void *v, int i) {
    qkv__strbuf_puts(b, ((const qkv_variant_result *)v)[i].name);
}

char *qkv__doc_gap(char *words, qkv_err *e) {
    char *save = NULL, *dir = strtok_r(words, " \t", &save), *names = NULL, *given[2] = {NULL, NULL};
    long long steps[256];
    int ns = 0;
    if (!dir) return qkv_err_set(e, QKV_ERR_FAIL, "qkv gap: expected DIR [steps=A,B] [variants=X,Y]"), NULL;
    for (char *w = strtok_r(NULL, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
        int opt = !strncmp(w, "steps=", 6) ? 0 : !strncmp(w, "variants=", 9) ? 1 : -1;
        if (opt >= 0 && given[opt]) /* the later one would silently win */
            return qkv_err_set(e, QKV_ERR_FAIL, "qkv gap: %s given twice ('%s', then '%s'; expected each option "
                               "once)", opt ? "variants=" : "steps=", given[opt], w), NULL;
        if (opt >= 0) given[opt] = w;
        if (opt == 0 && (ns = parse_steps(w + 6, steps, 256)) > 0) {
            for (int i = 1; i < ns; i++) /* columns left to right in time, so the trend reads forwards */
                if (steps[i] <= steps[i - 1])
                    return qkv_err_set(e, QKV_ERR_FAIL, "qkv gap: %s: step %lld after %lld (expected increasing "
                                       "step numbers, each once)", w, steps[i], steps[i - 1]), NULL;
            continue;
        }
        if (opt == 1 && w[9]) names = w + 9;
        else
            return qkv_err_set(e, QKV_ERR_FAIL, "qkv gap: unexpected '%s' (expected steps=A,B with step numbers, "
                               "variants=X,Y)", w), NULL;
    }
    qkv_ablate_results r;
    qkv_ablate_config c;
    if (qkv__ablate_results_read(&r, &c, dir, e)) return NULL;
    int *rows = calloc((size_t)c.n_variants, sizeof *rows), nr = 0;
    char *out = NULL;
    qkv_ablate_gaps g = {0};
    if (!rows) {
        qkv_err_set(e, QKV_ERR_FAIL, "out of memory");
        goto done;
    }
    rows[nr++] = c.baseline;
    for (int v = 0; !names && v < c.n_variants; v++)
        if (v != c.baseline) rows[nr++] = v;
    for (const char *p = names; p && *p;) {
        size_t len = strcspn(p, ",");
        int v = 0;
        while (v < c.n_variants && (strlen(r.v[v].name) != len || strncmp(r.v[v].name, p, len))) v++;
        if (v == c.n_variants) {
            qkv_strbuf list;
            qkv__strbuf_init(&list);
            qkv__strbuf_list(&list, c.n_variants, variant_item, r.v);
            qkv_err_set(e, QKV_ERR_FAIL, "qkv gap: %s/results.json has no variant '%.*s' (expected one of %s)", dir,
                        (int)len, p, qkv__strbuf_str(&list));
            qkv__strbuf_free(&list);
            goto done;
        }
        for (int i = 0; i < nr; i++)
            if (rows[i] == v && v != c.baseline) { /* a row twice: the table would repeat it */
                qkv_err_set(e, QKV_ERR_FAIL, "qkv gap: variants=%s: '%s' twice (expected each variant once)", names,
                            r.v[v].name);
                goto done;
            }
        if (v != c.baseline && nr < c.n_variants) rows[nr++] = v;
        p += len + (p[len] == ',');
    }
    qkv_err why;
    if (qkv__ablate_gaps(&g, &r, steps, ns, &why)) {
        qkv_err_set(e, QKV_ERR_FAIL, "qkv gap: %s/results.json: %s", dir, why.msg);
        goto done;
    }
    if (!(out = render(&g, &r, rows, nr))) qkv_err_set(e, QKV_ERR_FAIL, "out of memory");
done:
    qkv__ablate_gaps_free(&g);
    free(rows);
    qkv__ablate_results_free(&r);
    qkv_ablate_config_free(&c);
    return out;
}
