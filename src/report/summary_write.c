/* qkv summarize's documents and files: what the summary says and in which order (the page, and
 * the blocks documents embed), rendered by the report's Markdown and HTML renderers; the CSV;
 * writing them. */
#include "report/summary.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report_doc.h"
#include "report/report_render.h"
#include "io/strbuf.h"
#include "io/fileio.h"

/* ---- what the summary says ------------------------------------------------------------------ */

/* where a bits-per-byte column's numbers come from: the loss or eval_bpb, the ablation's
 * statistics or this program's */
static void bpb_note(qkv_report_doc *doc, const qkv_sum_ablation *a) {
    if (a->metric != QKV_METRIC_BPB) return;
    const char *unit = a->text ? "byte" : "token";
    char from[160] = "";
    if (a->bpb_from_loss)
        snprintf(from, sizeof from, "bits per %s = the evaluation loss / ln 2 (nats per %s)%s; ", unit, unit,
                 a->recomputed ? ", its runs recording no eval_bpb" : "");
    if (a->recomputed)
        qkv__report_doc_note(doc, "%s: %sthe differences, intervals and tests are computed by qkv summarize from the "
                            "runs at each variant's chosen learning rate, paired by seed, with qkv ablate's bootstrap, "
                            "sign-flip test and Holm correction (%s).", a->label, from,
                            a->compared != QKV_METRIC_ACCURACY ? "its runs record eval_bpb"
                                                            : "the ablation compared accuracy");
    else
        qkv__report_doc_note(doc, "%s: %sthe differences, intervals and tests are the ablation's own (it compared "
                            "%s%s).", a->label, from, QKV_METRIC_NAMES[a->compared],
                            a->compared != QKV_METRIC_LOSS ? "" : ", in nats: divided by ln 2");
}

/* how to read the main table: only what applies to its columns */
static void main_notes(qkv_report_doc *doc, const qkv_sum_report *r) {
    const qkv_summary *s = r->s;
    qkv_strbuf b;
    qkv__strbuf_init(&b);
    qkv__strbuf_puts(&b, "One column per ablation (its results.json). ");
    if (r->any_accuracy)
        qkv__strbuf_printf(&b, "Accuracy columns: the verdict over seeds (solved at S: the median over seeds of the "
                          "first evaluated step whose validation accuracy reached the ablation's threshold, an "
                          "unsolved seed counting as later than any; (k/n): k of the n finished seeds solved; not "
                          "within N: no seed, or too few for a median, solved within the N-step budget) and the mean "
                          "paired difference in final evaluation accuracy from the baseline (%s) in points, with its "
                          "95%% bootstrap interval. ", s->baseline);
    if (r->any_bpb)
        qkv__strbuf_printf(&b, "Bits/byte columns (text): the mean final evaluation bits per byte (lower is better) "
                          "and its mean paired difference from the baseline (%s) with its 95%% bootstrap "
                          "interval. ", s->baseline);
    if (r->any_loss)
        qkv__strbuf_printf(&b, "Loss columns: the mean final evaluation loss in nats (lower is better) and its mean "
                          "paired difference from the baseline (%s) with its 95%% bootstrap interval. ", s->baseline);
    qkv__strbuf_puts(&b, "* significant: Holm-adjusted p < 0.05 over the ablation's variants. "
                        "\xe2\x80\x94: not in that ablation.");
    if (r->any_short) qkv__strbuf_puts(&b, " (k/n runs): only k of the n seeds' runs finished.");
    char *text = qkv__strbuf_take(&b);
    if (!text) {
        doc->oom = true;
        return;
    }
    qkv__report_doc_note(doc, "%s", text);
    free(text);
    for (int i = 0; r->any_bpb && i < s->n; i++) bpb_note(doc, &s->a[i]);
    for (int i = 0; r->any_partial && i < s->n; i++) {
        const qkv_sum_ablation *a = &s->a[i];
        if (!qkv__summary_partial(a)) continue;
        char what[160] = "";
        if (a->missing > 0 && a->runs_planned > 0)
            snprintf(what, sizeof what, "%d of %d run%s %s not finished", a->missing, a->runs_planned,
                     a->runs_planned == 1 ? "" : "s", a->missing == 1 ? "has" : "have");
        else if (a->missing > 0)
            snprintf(what, sizeof what, "%d run%s %s not finished", a->missing, a->missing == 1 ? "" : "s",
                     a->missing == 1 ? "has" : "have");
        if (a->to_extend > 0)
            snprintf(what + strlen(what), sizeof what - strlen(what), "%s%d finished run%s may still be extended",
                     a->missing > 0 ? " and " : "", a->to_extend, a->to_extend == 1 ? "" : "s");
        qkv__report_doc_note(doc, "\xe2\x80\xa0 Partial results: %s (%s): %s.", a->label, a->dir, what);
    }
}

/* one item per ablation: where it came from and what it trained */
static void ablation_list(qkv_report_doc *doc, const qkv_summary *s) {
    char **items = calloc((size_t)s->n + 1, sizeof *items);
    if (!items) {
        doc->oom = true;
        return;
    }
    for (int i = 0; i < s->n; i++) {
        const qkv_sum_ablation *a = &s->a[i];
        qkv_strbuf b;
        qkv__strbuf_init(&b);
        qkv__strbuf_printf(&b, "%s: %s, \"%s\"", a->label, a->dir, a->title);
        if (a->task[0]) qkv__strbuf_printf(&b, "; task %s", a->task);
        if (a->d_model > 0) qkv__strbuf_printf(&b, ", d_model %d", a->d_model);
        if (a->layers > 0) qkv__strbuf_printf(&b, ", %d layer%s", a->layers, a->layers == 1 ? "" : "s");
        if (a->heads > 0) qkv__strbuf_printf(&b, ", %d head%s", a->heads, a->heads == 1 ? "" : "s");
        qkv__strbuf_printf(&b, "; %d seed%s; compared on %s", a->seeds, a->seeds == 1 ? "" : "s", QKV_METRIC_NAMES[a->compared]);
        if (isfinite(a->threshold) && a->compared == QKV_METRIC_ACCURACY)
            qkv__strbuf_printf(&b, " (threshold %.4g%%)", a->threshold * 100);
        if (qkv__summary_partial(a)) qkv__strbuf_puts(&b, "; partial");
        else if (a->runs_planned < 0) qkv__strbuf_puts(&b, "; completeness not recorded");
        items[i] = qkv__strbuf_take(&b);
        if (!items[i]) doc->oom = true;
    }
    if (!doc->oom) qkv__report_doc_list(doc, (const char *const *)items, s->n);
    for (int i = 0; i < s->n; i++) free(items[i]);
    free(items);
}

/* a task's sizes: what the table holds, the table, (the plot), the parameter counts */
static void sizes_section(qkv_report_doc *doc, const qkv_sum_sizes *g, bool page) {
    if (page) qkv__report_doc_heading(doc, 2, g->heading);
    qkv__report_doc_note(doc, "%s: %s, the mean over seeds with its 95%% bootstrap interval, at each model width "
                        "d_model (where two ablations have one width, the first given).", g->heading,
                        qkv__metric_words(g->metric, g->text));
    qkv__report_doc_table(doc, &g->values);
    if (page) qkv__report_doc_figure(doc, &g->plot);
    qkv__report_doc_note(doc, "%s: parameters.", g->heading);
    qkv__report_doc_table(doc, &g->params);
}

/* the page: summary.md and summary.html */
static int layout_page(qkv_report_doc *doc, const qkv_sum_report *r, const char *title) {
    const qkv_summary *s = r->s;
    qkv__report_doc_heading(doc, 1, title);
    qkv__report_doc_paragraph(doc);
    qkv__report_doc_span(doc, QKV_SPAN_TEXT, "%d ablation%s side by side, %d variant%s, each compared with the "
                        "baseline ", s->n, s->n == 1 ? "" : "s", s->n_variants, s->n_variants == 1 ? "" : "s");
    qkv__report_doc_span(doc, QKV_SPAN_CODE, "%s", s->baseline);
    qkv__report_doc_span(doc, QKV_SPAN_TEXT, " of its own ablation.");
    qkv__report_doc_table(doc, &r->main);
    main_notes(doc, r);
    qkv__report_doc_heading(doc, 2, "Ablations");
    ablation_list(doc, s);
    for (int k = 0; k < r->n_sizes; k++) sizes_section(doc, &r->sizes[k], true);
    return doc->oom ? -1 : 0;
}

char *qkv__summary_block(const qkv_sum_report *r, qkv_sum_part part) {
    qkv_report_doc doc;
    qkv__report_doc_init(&doc, "");
    if (part == QKV_SUM_PART_MAIN) {
        qkv__report_doc_table(&doc, &r->main);
        main_notes(&doc, r);
    } else if (r->n_sizes == 0) {
        qkv__report_doc_note(&doc, "No task has ablations at two or more model sizes here.");
    } else {
        for (int k = 0; k < r->n_sizes; k++) sizes_section(&doc, &r->sizes[k], false);
    }
    char *md = doc.oom ? NULL : qkv__report_render_md(&doc);
    qkv__report_doc_free(&doc);
    return md;
}

/* ---- summary.csv ---------------------------------------------------------------------------- */

/* ",%.6g", or "," alone for a missing number */
static void csv_num(qkv_strbuf *b, double v) {
    if (isfinite(v)) qkv__strbuf_printf(b, ",%.6g", v);
    else qkv__strbuf_puts(b, ",");
}

/* ",%lld", or "," when negative (not recorded) */
static void csv_int(qkv_strbuf *b, long long v) {
    if (v >= 0) qkv__strbuf_printf(b, ",%lld", v);
    else qkv__strbuf_puts(b, ",");
}

static const char CSV_HEADER[] =
    "ablation,dir,title,task,d_model,layers,heads,partial,variant,baseline,metric,source,mean,ci_low,ci_high,delta,"
    "delta_ci_low,delta_ci_high,p_value,p_holm,significant,runs_ok,seeds,solved,unsolved,steps_to_threshold,"
    "budget,params,attn_params,cell\n";

/* one row per ablation and variant in it (long format), the main table's cell last */
static char *render_csv(const qkv_sum_report *r) {
    const qkv_summary *s = r->s;
    qkv_strbuf b;
    qkv__strbuf_init(&b);
    qkv__strbuf_puts(&b, CSV_HEADER);
    for (int i = 0; i < s->n; i++) {
        const qkv_sum_ablation *a = &s->a[i];
        for (int j = 0; j < s->n_variants; j++) {
            const qkv_sum_cell *c = &a->cells[j];
            if (!c->present) continue;
            bool base = !strcmp(s->variants[j], s->baseline);
            static const char *const BITS[2][2] = {{"bits_per_token", "bits_per_token_from_loss"},
                                                   {"bits_per_byte", "bits_per_byte_from_loss"}};
            const char *metric = a->metric == QKV_METRIC_ACCURACY ? "accuracy"
                                 : a->metric == QKV_METRIC_LOSS   ? "loss"
                                                               : BITS[a->text][a->bpb_from_loss];
            qkv__strbuf_csv_field(&b, a->label);
            qkv__strbuf_puts(&b, ",");
            qkv__strbuf_csv_field(&b, a->dir);
            qkv__strbuf_puts(&b, ",");
            qkv__strbuf_csv_field(&b, a->title);
            qkv__strbuf_puts(&b, ",");
            qkv__strbuf_csv_field(&b, a->task);
            csv_int(&b, a->d_model > 0 ? a->d_model : -1);
            csv_int(&b, a->layers > 0 ? a->layers : -1);
            csv_int(&b, a->heads > 0 ? a->heads : -1);
            qkv__strbuf_printf(&b, ",%s,", qkv__summary_partial(a) ? "true" : "false");
            qkv__strbuf_csv_field(&b, s->variants[j]);
            qkv__strbuf_printf(&b, ",%s,%s,%s", base ? "true" : "false", metric,
                              a->recomputed ? "summarize" : "ablation");
            csv_num(&b, c->mean);
            csv_num(&b, c->lo);
            csv_num(&b, c->hi);
            csv_num(&b, c->delta);
            csv_num(&b, c->delta_lo);
            csv_num(&b, c->delta_hi);
            csv_num(&b, c->p);
            csv_num(&b, c->p_holm);
            qkv__strbuf_puts(&b, base || !isfinite(c->p) ? "," : c->significant ? ",true" : ",false");
            csv_int(&b, c->runs_ok);
            csv_int(&b, c->seeds);
            csv_int(&b, c->solved);
            csv_int(&b, c->unsolved);
            csv_int(&b, c->solved_at);
            csv_int(&b, c->budget);
            csv_int(&b, c->params);
            csv_int(&b, c->attn_params);
            qkv__strbuf_puts(&b, ",");
            qkv__strbuf_csv_field(&b, qkv_report_cell(&r->main, j, i + 1));
            qkv__strbuf_puts(&b, "\n");
        }
    }
    return qkv__strbuf_take(&b);
}

/* ---- files ---------------------------------------------------------------------------------- */

/* text into dir/name, atomically */
static int write_text(const char *dir, const char *name, const char *text, char *err, int errlen) {
    char path[4096];
    if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, name) >= sizeof path) {
        snprintf(err, (size_t)errlen, "%.200s/%s: path too long", dir, name);
        return -1;
    }
    return qkv__write_file_atomic(path, text, strlen(text), err, errlen);
}

/* everything is built in memory before the first file is written */
int qkv__summary_write(const qkv_summary *s, const char *out_dir, const char *title, FILE *table, char *err,
                      int errlen) {
    char def[64], plots[4096];
    snprintf(def, sizeof def, "Summary of %d ablation%s", s->n, s->n == 1 ? "" : "s");
    if (!title) title = def;
    qkv_sum_report r;
    qkv_report_doc page;
    char *md = NULL, *html = NULL, *csv = NULL, *block = NULL;
    int rc = -1, built = qkv__sum_report_build(&r, s);
    qkv__report_doc_init(&page, title);
    if (built || layout_page(&page, &r, title)) goto oom;
    md = qkv__report_render_md(&page);
    html = qkv__report_render_html(&page);
    csv = render_csv(&r);
    block = table ? qkv__summary_block(&r, QKV_SUM_PART_MAIN) : NULL;
    if (!md || !html || !csv || (table && !block)) goto oom;
    if ((size_t)snprintf(plots, sizeof plots, "%s/%s", out_dir, QKV_REPORT_PLOTS) >= sizeof plots) {
        snprintf(err, (size_t)errlen, "%.200s: path too long", out_dir);
        goto done;
    }
    if (qkv__mkdirs(r.n_sizes ? plots : out_dir, err, errlen)) goto done;
    for (int k = 0; k < r.n_sizes; k++)
        if (write_text(out_dir, r.sizes[k].plot.path, r.sizes[k].plot.svg, err, errlen)) goto done;
    if (write_text(out_dir, "summary.md", md, err, errlen) || write_text(out_dir, "summary.csv", csv, err, errlen) ||
        write_text(out_dir, "summary.html", html, err, errlen))
        goto done;
    if (table) {
        fputs(block, table);
        fflush(table);
    }
    rc = 0;
    goto done;
oom:
    snprintf(err, (size_t)errlen, "summarize: out of memory");
done:
    qkv__report_doc_free(&page);
    qkv__sum_report_free(&r);
    free(md);
    free(html);
    free(csv);
    free(block);
    return rc;
}
