/* qkv summarize's tables and plots (summary.h): the main table's cells (a verdict and the
 * difference from the baseline, or bits per byte and its difference), and for each task with
 * ablations at several model sizes a table of the metric, one of parameter counts and a plot of
 * the metric against d_model. */
#include "report/summary.h"
#include "io/strbuf.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/svg.h"

#define DASH QKV_REPORT_DASH       /* not in that ablation */
#define DAGGER "\xe2\x80\xa0"  /* a partial ablation */

/* ---- words and number formats ------------------------------------------------------------ */

const qkv_sum_words *qkv__sum_words(qkv_ablate_metric m, bool text) {
    static const qkv_sum_words WORDS[QKV_METRIC_COUNT + 1] = {
        [QKV_METRIC_ACCURACY] = {"final evaluation accuracy (%)", "verdict; \xce\x94 acc", "final eval accuracy",
                                 "final eval accuracy"},
        [QKV_METRIC_LOSS] = {"final evaluation loss in nats (lower is better)", "eval loss (nats); \xce\x94",
                             "eval loss (nats)", "eval loss in nats (lower is better)"},
        [QKV_METRIC_BPB] = {"final evaluation bits per byte (lower is better)", "bits/byte; \xce\x94",
                            "eval bits per byte", "bits per byte (lower is better)"},
        [QKV_METRIC_COUNT] = {"final evaluation bits per token (lower is better)", "bits/token; \xce\x94",
                              "eval bits per token", "bits per token (lower is better)"},
    };
    return &WORDS[m == QKV_METRIC_BPB && !text ? QKV_METRIC_COUNT : m];
}

/* the difference from the baseline as the ablation report writes it ("+1.0 [-2.0, 4.0]"), with
 * "*" when significant after Holm's correction */
static void fmt_delta(char *dst, size_t n, qkv_ablate_metric m, const qkv_metric_stats *c) {
    if (!isfinite(c->delta)) {
        snprintf(dst, n, DASH);
        return;
    }
    char iv[100];
    qkv__report_interval(iv, sizeof iv, m, c->delta, c->delta_lo, c->delta_hi, true);
    snprintf(dst, n, "%s%s", iv, c->significant ? "*" : "");
}

/* the verdicts over seeds in a few words: "solved at 450", "solved at 900 (3/5)", "2/5 solved,
 * not within 4000", "not within 4000" (the median step over the finished seeds, an unsolved seed
 * counting as later than any; the budget: the most steps an unsolved run ran) */
static void fmt_verdict(char *dst, size_t n, const qkv_variant_result *v) {
    char budget[48];
    if (v->budget_max >= 0) snprintf(budget, sizeof budget, "not within %lld", v->budget_max);
    else snprintf(budget, sizeof budget, "unsolved");
    int done = v->solved + v->unsolved;
    long long at = v->steps_median;
    if (v->solved > 0 && v->unsolved == 0 && at >= 0) snprintf(dst, n, "solved at %lld", at);
    else if (v->solved > 0 && at >= 0) snprintf(dst, n, "solved at %lld (%d/%d)", at, v->solved, done);
    else if (v->solved > 0) snprintf(dst, n, "%d/%d solved, %s", v->solved, done, budget);
    else snprintf(dst, n, "%s", budget);
}

/* whether some of the ablation's seeds' runs of the variant did not finish */
static bool short_of_runs(const qkv_sum_ablation *a, const qkv_variant_result *v) {
    return a->cfg.n_seeds > 0 && v->runs_ok < a->cfg.n_seeds;
}

/* " (4/5 runs)" when they did not */
static void fmt_short(char *dst, size_t n, const qkv_sum_ablation *a, const qkv_variant_result *v) {
    if (short_of_runs(a, v)) snprintf(dst, n, " (%d/%d runs)", v->runs_ok, a->cfg.n_seeds);
    else dst[0] = 0;
}

/* ---- the main table ------------------------------------------------------------------------- */

/* variant j of ablation a: the verdict (accuracy) or bits per byte, then the difference */
static void main_cell(char *dst, size_t n, const qkv_summary *s, const qkv_sum_ablation *a, int j) {
    const qkv_variant_result *v = qkv__sum_variant(a, j);
    if (!v) {
        snprintf(dst, n, DASH);
        return;
    }
    if (v->runs_ok <= 0) {
        snprintf(dst, n, "no finished run");
        return;
    }
    const qkv_metric_stats *c = qkv__sum_stats(a, j);
    char first[128], second[128], tail[32];
    if (a->metric == QKV_METRIC_ACCURACY) fmt_verdict(first, sizeof first, v);
    else qkv__report_fixed(first, sizeof first, c->mean, 3); /* a loss, in nats or bits */
    if (!strcmp(s->variants[j], s->baseline)) snprintf(second, sizeof second, "baseline");
    else fmt_delta(second, sizeof second, a->metric, c);
    fmt_short(tail, sizeof tail, a, v);
    snprintf(dst, n, "%s; %s%s", first, second, tail);
}

/* a row per variant, a column per ablation */
static int main_table(qkv_report_table *t, const qkv_summary *s) {
    if (qkv__report_table_alloc(t, s->n_variants, s->n + 1)) return -1;
    snprintf(t->head[0], QKV_REPORT_CELL, "variant");
    for (int i = 0; i < s->n; i++) {
        const qkv_sum_ablation *a = &s->a[i];
        snprintf(t->head[i + 1], QKV_REPORT_CELL, "%s: %s vs %s%s [95%% CI]%s", a->label,
                 qkv__sum_words(a->metric, a->text)->head, s->baseline,
                 a->metric == QKV_METRIC_ACCURACY ? " (points)" : "", qkv__summary_partial(a) ? " " DAGGER : "");
        t->right[i + 1] = a->metric != QKV_METRIC_ACCURACY;
    }
    for (int j = 0; j < s->n_variants; j++) {
        snprintf(qkv_report_cell(t, j, 0), QKV_REPORT_CELL, "%s", s->variants[j]);
        for (int i = 0; i < s->n; i++) main_cell(qkv_report_cell(t, j, i + 1), QKV_REPORT_CELL, s, &s->a[i], j);
    }
    return 0;
}

/* which of the main table's notes apply: its columns' metrics, a partial ablation, a variant with
 * finished runs short of its seeds */
static void which_notes(qkv_sum_report *r, const qkv_summary *s) {
    for (int i = 0; i < s->n; i++) {
        const qkv_sum_ablation *a = &s->a[i];
        r->any_accuracy |= a->metric == QKV_METRIC_ACCURACY;
        r->any_bpb |= a->metric == QKV_METRIC_BPB;
        r->any_loss |= a->metric == QKV_METRIC_LOSS;
        r->any_partial |= qkv__summary_partial(a);
        for (int j = 0; j < s->n_variants; j++) {
            const qkv_variant_result *v = qkv__sum_variant(a, j);
            r->any_short |= v && v->runs_ok > 0 && short_of_runs(a, v);
        }
    }
}

/* ---- sizes ---------------------------------------------------------------------------------- */

static int cmp_int(const void *a, const void *b) {
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* whether ablation a is on g's size axis: its task, compared on g's metric, its size recorded */
static bool on_axis(const qkv_sum_ablation *a, const qkv_sum_sizes *g) {
    return a->r.d_model > 0 && a->metric == g->metric && !strcmp(a->r.task, g->task);
}

/* variant j at size d of g's task: the first ablation given with that size and that variant */
static const qkv_sum_ablation *at_size(const qkv_summary *s, const qkv_sum_sizes *g, int d, int j) {
    for (int i = 0; i < s->n; i++)
        if (on_axis(&s->a[i], g) && s->a[i].r.d_model == d && s->a[i].at[j] >= 0) return &s->a[i];
    return NULL;
}

/* g's plot: the metric's mean with its interval at each size, a line per variant */
static int size_plot(qkv_sum_sizes *g, const qkv_summary *s) {
    int n = g->n, nv = g->n_variants;
    double *x = calloc((size_t)n, sizeof *x), *y = calloc((size_t)(n * nv) * 3 + 1, sizeof *y);
    qkv_svg_series *ser = calloc((size_t)nv + 1, sizeof *ser);
    if (!x || !y || !ser) {
        free(x); free(y); free(ser);
        return -1;
    }
    for (int k = 0; k < n; k++) x[k] = g->d_model[k];
    for (int v = 0; v < nv; v++) {
        int j = g->variants[v];
        double *m = y + (size_t)(3 * v) * n, *lo = m + n, *hi = lo + n;
        for (int k = 0; k < n; k++) {
            const qkv_sum_ablation *a = at_size(s, g, g->d_model[k], j);
            bool ok = a && qkv__sum_variant(a, j)->runs_ok > 0;
            m[k] = ok ? qkv__sum_stats(a, j)->mean : NAN;
            lo[k] = ok ? qkv__sum_stats(a, j)->lo : NAN;
            hi[k] = ok ? qkv__sum_stats(a, j)->hi : NAN;
        }
        ser[v] = (qkv_svg_series){s->variants[j], n, x, m, lo, hi};
    }
    qkv_svg_plot pl = {.title = g->alt, .xlabel = "d_model (log scale)",
                       .ylabel = qkv__sum_words(g->metric, g->text)->axis, .log_x = true,
                       .percent_y = g->metric == QKV_METRIC_ACCURACY, .x_ticks = x, .n_x_ticks = n, .error_bars = true};
    g->plot.svg = qkv__svg_curves(&pl, ser, nv);
    free(x);
    free(y);
    free(ser);
    return g->plot.svg ? 0 : -1;
}

/* g's tables: the metric with its interval, and the parameter counts, variant x size */
static int size_tables(qkv_sum_sizes *g, const qkv_summary *s) {
    if (qkv__report_table_alloc(&g->values, g->n_variants, g->n + 1) ||
        qkv__report_table_alloc(&g->params, g->n_variants, g->n + 1))
        return -1;
    for (int c = 0; c <= g->n; c++) {
        if (c) snprintf(g->values.head[c], QKV_REPORT_CELL, "d_model=%d", g->d_model[c - 1]);
        else snprintf(g->values.head[c], QKV_REPORT_CELL, "variant");
        memcpy(g->params.head[c], g->values.head[c], QKV_REPORT_CELL);
        g->values.right[c] = g->params.right[c] = c > 0;
    }
    for (int v = 0; v < g->n_variants; v++) {
        int j = g->variants[v];
        snprintf(qkv_report_cell(&g->values, v, 0), QKV_REPORT_CELL, "%s", s->variants[j]);
        snprintf(qkv_report_cell(&g->params, v, 0), QKV_REPORT_CELL, "%s", s->variants[j]);
        for (int k = 0; k < g->n; k++) {
            const qkv_sum_ablation *a = at_size(s, g, g->d_model[k], j);
            char *vc = qkv_report_cell(&g->values, v, k + 1), *pc = qkv_report_cell(&g->params, v, k + 1);
            if (!a) {
                snprintf(vc, QKV_REPORT_CELL, DASH);
                snprintf(pc, QKV_REPORT_CELL, DASH);
                continue;
            }
            const qkv_variant_result *var = qkv__sum_variant(a, j);
            const qkv_metric_stats *c = qkv__sum_stats(a, j);
            char iv[128], tail[32];
            fmt_short(tail, sizeof tail, a, var);
            qkv__report_interval(iv, sizeof iv, g->metric, c->mean, c->lo, c->hi, false);
            if (var->runs_ok <= 0) snprintf(vc, QKV_REPORT_CELL, "no finished run");
            else snprintf(vc, QKV_REPORT_CELL, "%s%s", iv, tail);
            qkv__fmt_count(pc, QKV_REPORT_CELL, var->params);
        }
    }
    return 0;
}

/* tasks (and metrics) with two or more sizes, in the order they first appear */
static int sizes_build(qkv_sum_report *r) {
    const qkv_summary *s = r->s;
    r->sizes = calloc((size_t)s->n + 1, sizeof *r->sizes);
    if (!r->sizes) return -1;
    for (int i = 0; i < s->n; i++) {
        const qkv_sum_ablation *a = &s->a[i];
        if (!a->r.task[0] || a->r.d_model <= 0) continue;
        bool seen = false;
        for (int k = 0; k < r->n_sizes; k++) seen |= on_axis(a, &r->sizes[k]);
        if (seen) continue;
        qkv_sum_sizes *g = &r->sizes[r->n_sizes];
        memset(g, 0, sizeof *g);
        snprintf(g->task, sizeof g->task, "%s", a->r.task);
        g->metric = a->metric;
        g->text = a->text;
        g->d_model = calloc((size_t)s->n, sizeof *g->d_model);
        g->variants = calloc((size_t)s->n_variants + 1, sizeof *g->variants);
        r->n_sizes++; /* owned from here, freed with the report */
        if (!g->d_model || !g->variants) return -1;
        for (int k = i; k < s->n; k++) {
            if (!on_axis(&s->a[k], g)) continue;
            bool have = false;
            for (int m = 0; m < g->n; m++) have |= g->d_model[m] == s->a[k].r.d_model;
            if (!have) g->d_model[g->n++] = s->a[k].r.d_model;
        }
        if (g->n < 2) { /* one size: nothing to put on an axis */
            free(g->d_model);
            free(g->variants);
            r->n_sizes--;
            continue;
        }
        qsort(g->d_model, (size_t)g->n, sizeof *g->d_model, cmp_int);
        for (int j = 0; j < s->n_variants; j++) {
            bool any = false;
            for (int k = 0; k < s->n; k++) any |= on_axis(&s->a[k], g) && s->a[k].at[j] >= 0;
            if (any) g->variants[g->n_variants++] = j;
        }
    }
    /* names: the task's, and its metric's where the task has groups on two metrics */
    for (int k = 0; k < r->n_sizes; k++) {
        qkv_sum_sizes *g = &r->sizes[k];
        bool two = false;
        for (int m = 0; m < r->n_sizes; m++) two |= m != k && !strcmp(r->sizes[m].task, g->task);
        char file[32];
        qkv__report_file_part(file, sizeof file, g->task, -1); /* a task's name: results.json is input */
        snprintf(g->heading, sizeof g->heading, "%s%s%s%s by model size", g->task, two ? " (" : "",
                 two ? QKV_METRIC_NAMES[g->metric] : "", two ? ")" : "");
        snprintf(g->alt, sizeof g->alt, "%s: %s by model size", g->task, qkv__sum_words(g->metric, g->text)->by_size);
        snprintf(g->plot.path, sizeof g->plot.path, "%s/size-%s%s%s.svg", QKV_REPORT_PLOTS, file, two ? "-" : "",
                 two ? QKV_METRIC_NAMES[g->metric] : "");
        snprintf(g->plot.alt, sizeof g->plot.alt, "%s", g->alt);
        if (size_tables(g, s) || size_plot(g, s)) return -1;
    }
    return 0;
}

int qkv__sum_report_build(qkv_sum_report *r, const qkv_summary *s) {
    memset(r, 0, sizeof *r);
    r->s = s;
    which_notes(r, s);
    if (main_table(&r->main, s) || sizes_build(r)) return -1;
    return 0;
}

void qkv__sum_report_free(qkv_sum_report *r) {
    qkv__report_table_free(&r->main);
    for (int k = 0; r->sizes && k < r->n_sizes; k++) {
        qkv_sum_sizes *g = &r->sizes[k];
        qkv__report_table_free(&g->values);
        qkv__report_table_free(&g->params);
        free(g->d_model);
        free(g->variants);
        free(g->plot.svg);
    }
    free(r->sizes);
    memset(r, 0, sizeof *r);
}
