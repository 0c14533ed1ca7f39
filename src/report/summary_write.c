/* qkv summarize's documents and files: what the summary says and in which order (the page, and
 * the blocks documents embed), rendered by the report's Markdown and HTML renderers; the CSV;
 * writing them. */
#include "report/summary.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"
#include "report/report_doc.h"
#include "io/strbuf.h"

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
                            a->cfg.metric != QKV_METRIC_ACCURACY ? "its runs record eval_bpb"
                                                                 : "the ablation compared accuracy");
    else
        qkv__report_doc_note(doc, "%s: %sthe differences, intervals and tests are the ablation's own (it compared "
                            "%s%s).", a->label, from, QKV_METRIC_NAMES[a->cfg.metric],
                            a->cfg.metric != QKV_METRIC_LOSS ? "" : ", in nats: divided by ln 2");
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
        qkv_strbuf what;
        qkv__strbuf_init(&what);
        qkv__report_partial_words(&what, &a->r, a->cfg.n_variants * a->r.n_lrs * a->cfg.n_seeds, NULL);
        doc->oom |= what.oom;
        qkv__report_doc_note(doc, "\xe2\x80\xa0 Partial results: %s (%s): %s.", a->label, a->dir,
                             qkv__strbuf_str(&what));
        qkv__strbuf_free(&what);
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
        const qkv_ablate_results *res = &a->r;
        int seeds = a->cfg.n_seeds;
        qkv__strbuf_printf(&b, "%s: %s, \"%s\"", a->label, a->dir, a->cfg.title);
        if (res->task[0]) qkv__strbuf_printf(&b, "; task %s", res->task);
        if (res->d_model > 0) qkv__strbuf_printf(&b, ", d_model %d", res->d_model);
        if (res->layers > 0) qkv__strbuf_printf(&b, ", %d layer%s", res->layers, res->layers == 1 ? "" : "s");
        if (res->heads > 0) qkv__strbuf_printf(&b, ", %d head%s", res->heads, res->heads == 1 ? "" : "s");
        qkv__strbuf_printf(&b, "; %d seed%s; compared on %s", seeds, seeds == 1 ? "" : "s",
                           QKV_METRIC_NAMES[a->cfg.metric]);
        if (isfinite(a->cfg.threshold) && a->cfg.metric == QKV_METRIC_ACCURACY)
            qkv__strbuf_printf(&b, " (threshold %.4g%%)", a->cfg.threshold * 100);
        if (qkv__summary_partial(a)) qkv__strbuf_puts(&b, "; partial");
        else if (res->missing < 0) qkv__strbuf_puts(&b, "; completeness not recorded");
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
                        qkv__sum_words(g->metric, g->text)->numbers);
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

/* a column: named after the key of results.json (ablate/results_schema.h) whose number, of the
 * ablation or of the variant on the column's metric, it holds, or a name of its own */
typedef struct column {
    const char *name;       /* NULL: the key's */
    qkv_results_key key;
} column;
#define OWN(name) {name, QKV_RK_COUNT}
#define KEY(id) {NULL, QKV_RK_##id}

static const column CSV_FIELDS[] = {
    OWN("ablation"), OWN("dir"), KEY(TITLE), KEY(TASK), KEY(D_MODEL), KEY(LAYERS), KEY(HEADS), OWN("partial"),
    OWN("variant"), KEY(BASELINE), KEY(METRIC), OWN("source"), OWN("mean"), OWN("ci_low"), OWN("ci_high"),
    OWN("delta"), KEY(DELTA_CI_LOW), KEY(DELTA_CI_HIGH), KEY(P_VALUE), KEY(P_HOLM), KEY(SIGNIFICANT),
    KEY(RUNS_OK), KEY(SEEDS), KEY(SOLVED), KEY(UNSOLVED), KEY(STEPS_TO_THRESHOLD), KEY(BUDGET), KEY(PARAMS),
    KEY(ATTN_PARAMS), OWN("cell")};
enum { CSV_N = sizeof CSV_FIELDS / sizeof CSV_FIELDS[0] };

/* a count; missing when not recorded (negative) */
static qkv_report_value count(long long v) { return v >= 0 ? qkv_report_int(v) : qkv_report_missing(); }

/* variant j of ablation i: a row of CSV_FIELDS' values */
static void csv_row(qkv_report_value *row, const qkv_sum_report *r, int i, int j) {
    const qkv_summary *s = r->s;
    const qkv_sum_ablation *a = &s->a[i];
    const qkv_variant_result *v = qkv__sum_variant(a, j);
    const qkv_metric_stats *c = qkv__sum_stats(a, j);
    bool base = !strcmp(s->variants[j], s->baseline);
    static const char *const BITS[2][2] = {{"bits_per_token", "bits_per_token_from_loss"},
                                           {"bits_per_byte", "bits_per_byte_from_loss"}};
    const char *metric = a->metric == QKV_METRIC_ACCURACY ? "accuracy"
                         : a->metric == QKV_METRIC_LOSS   ? "loss"
                                                          : BITS[a->text][a->bpb_from_loss];
    const qkv_report_value values[CSV_N] = {
        qkv_report_str(a->label), qkv_report_str(a->dir), qkv_report_str(a->cfg.title), qkv_report_str(a->r.task),
        count(a->r.d_model > 0 ? a->r.d_model : -1), count(a->r.layers > 0 ? a->r.layers : -1),
        count(a->r.heads > 0 ? a->r.heads : -1), qkv_report_bool(qkv__summary_partial(a)),
        qkv_report_str(s->variants[j]), qkv_report_bool(base), qkv_report_str(metric),
        qkv_report_str(a->recomputed ? "summarize" : "ablation"), qkv_report_num(c->mean), qkv_report_num(c->lo),
        qkv_report_num(c->hi), qkv_report_num(c->delta), qkv_report_num(c->delta_lo), qkv_report_num(c->delta_hi),
        qkv_report_num(c->p), qkv_report_num(c->p_holm),
        base || !isfinite(c->p) ? qkv_report_missing() : qkv_report_bool(c->significant), count(v->runs_ok),
        count(a->cfg.n_seeds), count(v->solved), count(v->unsolved), count(v->steps_median), count(v->budget_max),
        count(v->params), count(v->attn_params), qkv_report_str(qkv_report_cell(&r->main, j, i + 1)),
    };
    memcpy(row, values, sizeof values);
}

/* one row per ablation and variant in it (long format), the main table's cell last */
static char *render_csv(const qkv_sum_report *r) {
    const qkv_summary *s = r->s;
    int rows = 0, k = 0;
    for (int i = 0; i < s->n; i++)
        for (int j = 0; j < s->n_variants; j++) rows += s->a[i].at[j] >= 0;
    qkv_report_records rec;
    char *csv = NULL;
    if (!qkv__report_records_alloc(&rec, rows, CSV_N)) {
        for (int f = 0; f < CSV_N; f++)
            rec.fields[f].csv = CSV_FIELDS[f].name ? CSV_FIELDS[f].name : qkv__results_keys[CSV_FIELDS[f].key].key;
        for (int i = 0; i < s->n; i++)
            for (int j = 0; j < s->n_variants; j++)
                if (s->a[i].at[j] >= 0) csv_row(rec.v + (size_t)CSV_N * k++, r, i, j);
        csv = qkv__report_render_csv(&rec);
    }
    qkv__report_records_free(&rec);
    return csv;
}

/* ---- files ---------------------------------------------------------------------------------- */

/* everything is built in memory before the first file is written */
int qkv__summary_write(const qkv_summary *s, const char *out_dir, const char *title, FILE *table, qkv_err *e) {
    char def[64];
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
    if (qkv__report_mkdirs(out_dir, r.n_sizes > 0, e)) goto done;
    for (int k = 0; k < r.n_sizes; k++)
        if (qkv__report_write_text(out_dir, r.sizes[k].plot.path, r.sizes[k].plot.svg, e)) goto done;
    if (qkv__report_write_text(out_dir, "summary.md", md, e) ||
        qkv__report_write_text(out_dir, "summary.csv", csv, e) ||
        qkv__report_write_text(out_dir, "summary.html", html, e))
        goto done;
    if (table) {
        fputs(block, table);
        fflush(table);
    }
    rc = 0;
    goto done;
oom:
    qkv_err_set(e, QKV_ERR_FAIL, "summarize: out of memory");
done:
    qkv__report_doc_free(&page);
    qkv__sum_report_free(&r);
    free(md);
    free(html);
    free(csv);
    free(block);
    return rc;
}
