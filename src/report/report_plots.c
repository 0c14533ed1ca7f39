/* The report's figures: the summary plots (one line per variant over training steps) and
 * each variant's attention map, drawn with svg.c. Adding a plot is adding a line to PLOTS
 * (see report_data.h). */
#include "report/report_data.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/attention_figure.h"
#include "report/svg.h"

/* what a plot is drawn from */
typedef struct inputs {
    const qkv_ablate_results *r;
    const qkv_ablate_curve *curves;     /* one per variant */
    const char *thr;                    /* the threshold in words */
    bool text;                          /* the text task: losses per byte */
} inputs;

typedef struct plot {
    const char *file;                   /* under plots/ */
    const char *alt;                    /* what it shows, in words */
    char *(*draw)(const inputs *in);    /* the SVG; NULL when out of memory */
    bool (*wanted)(const qkv_ablate_results *r); /* NULL: always drawn */
} plot;

/* ---- curves over training steps ---------------------------------------------------------- */

/* variant i's name in a legend: "name (why)" when none of its runs finished, else "name (note)",
 * or the name alone when note is "" */
static void legend_name(char *dst, size_t n, const qkv_ablate_results *r, int i, const char *note) {
    const char *v = r->v[i].name;
    if (r->v[i].runs_ok <= 0) snprintf(dst, n, "%s (%s)", v, qkv__ablate_unfinished(r, i));
    else if (*note) snprintf(dst, n, "%s (%s)", v, note);
    else snprintf(dst, n, "%s", v);
}

/* one series per variant of metric k (legend: the name, and how many runs it lost) */
static char *draw_curves(const inputs *in, const qkv_svg_plot *plot_cfg, int k) {
    const qkv_ablate_config *cfg = in->r->cfg;
    int nv = cfg->n_variants;
    qkv_svg_series *series = calloc((size_t)nv + 1, sizeof *series);
    char(*names)[QKV_ABLATE_NAME + 48] = calloc((size_t)nv + 1, sizeof *names);
    char *svg = NULL;
    if (series && names) {
        for (int i = 0; i < nv; i++) {
            const qkv_variant_result *v = &in->r->v[i];
            const qkv_ablate_curve *c = &in->curves[i];
            char runs[48] = "";
            if (v->runs_ok < cfg->n_seeds) snprintf(runs, sizeof runs, "%d of %d runs", v->runs_ok, cfg->n_seeds);
            legend_name(names[i], sizeof names[i], in->r, i, runs);
            series[i] = (qkv_svg_series){names[i], c->n, c->x, c->y[k].mean, c->y[k].lo, c->y[k].hi};
        }
        svg = qkv__svg_curves(plot_cfg, series, nv);
    }
    free(series);
    free(names);
    return svg;
}

/* evaluation accuracy on a fixed 0-100% axis, with the threshold drawn in */
static char *draw_accuracy(const inputs *in) {
    const qkv_ablate_config *cfg = in->r->cfg;
    char label[64];
    snprintf(label, sizeof label, "threshold %s", in->thr);
    qkv_svg_plot pa = {.title = "Evaluation accuracy (mean over seeds, band: min\xe2\x80\x93max)",
                       .xlabel = "training step",
                       .ylabel = "evaluation accuracy (%)",
                       .percent_y = true,
                       .fixed_y = true,
                       .y_min = 0,
                       .y_max = 1,
                       .hline = isfinite(cfg->threshold) && cfg->threshold >= 0 && cfg->threshold <= 1,
                       .hline_y = cfg->threshold,
                       .hline_label = label,
                       .width = 860};
    return draw_curves(in, &pa, QKV_CURVE_ACC);
}

/* evaluation loss on a log axis (losses span decades as a task gets solved) */
static char *draw_loss(const inputs *in) {
    qkv_svg_plot pl = {.title = "Evaluation loss (mean over seeds, band: min\xe2\x80\x93max)",
                       .xlabel = "training step",
                       .ylabel = in->text ? "evaluation loss, nats per byte (log scale)"
                                          : "evaluation loss, nats per token (log scale)",
                       .log_y = true,
                       .width = 860};
    return draw_curves(in, &pl, QKV_CURVE_LOSS);
}

/* ---- learning rates ---------------------------------------------------------------------- */

/* final validation accuracy against the learning rate, one line per variant (mean over seeds,
 * band: min-max), on a log axis: what each variant's rate was chosen on */
static char *draw_lrs(const inputs *in) {
    int nl = in->r->n_lrs, nv = in->r->cfg->n_variants;
    qkv_svg_series *series = calloc((size_t)nv + 1, sizeof *series);
    double *buf = calloc((size_t)nv * (size_t)nl * 4 + 1, sizeof *buf);
    char(*names)[QKV_ABLATE_NAME + 48] = calloc((size_t)nv + 1, sizeof *names);
    char *svg = NULL;
    if (series && buf && names) {
        for (int i = 0; i < nv; i++) {
            const qkv_variant_result *v = &in->r->v[i];
            double *x = buf + (size_t)i * nl * 4, *y = x + nl, *lo = y + nl, *hi = lo + nl;
            for (int l = 0; l < nl; l++) {
                x[l] = v->lrs[l].lr;
                y[l] = v->lrs[l].runs_ok ? v->lrs[l].val_acc_mean : NAN;
                lo[l] = v->lrs[l].runs_ok ? v->lrs[l].val_acc_min : NAN;
                hi[l] = v->lrs[l].runs_ok ? v->lrs[l].val_acc_max : NAN;
            }
            char chosen[48]; /* without a finished run no rate was chosen (choose_lr leaves lr 0) */
            snprintf(chosen, sizeof chosen, "chosen %g", v->lr);
            legend_name(names[i], sizeof names[i], in->r, i, chosen);
            series[i] = (qkv_svg_series){names[i], nl, x, y, lo, hi};
        }
        qkv_svg_plot pl = {.title = "Final validation accuracy against learning rate (mean over seeds, band: "
                                    "min\xe2\x80\x93max)",
                           .xlabel = "learning rate (log scale)",
                           .ylabel = "validation accuracy (%)",
                           .log_x = true,
                           .x_ticks = in->r->cfg->lrs, /* the rates run */
                           .n_x_ticks = in->r->cfg->n_lrs,
                           .percent_y = true,
                           .fixed_y = true,
                           .y_min = 0,
                           .y_max = 1,
                           .width = 860};
        svg = qkv__svg_curves(&pl, series, nv);
    }
    free(series);
    free(buf);
    free(names);
    return svg;
}

/* ---- the shape of the score ---------------------------------------------------------------- */

/* each variant's symmetry score per layer and head (mean over seeds), layer-major on the x axis:
 * head h of layer l at l x heads + h */
static char *draw_symmetry(const inputs *in) {
    const qkv_ablate_results *r = in->r;
    int most = 0, nv = r->cfg->n_variants;
    for (int i = 0; i < nv; i++) {
        const qkv_attn_diag *d = &r->v[i].diag;
        if (d->symmetry_grid && d->grid_layers * d->grid_heads > most) most = d->grid_layers * d->grid_heads;
    }
    qkv_svg_series *series = calloc((size_t)nv + 1, sizeof *series);
    double *x = calloc((size_t)most + 1, sizeof *x);
    char *svg = NULL;
    if (series && x) {
        for (int k = 0; k < most; k++) x[k] = k;
        for (int i = 0; i < nv; i++) {
            const qkv_attn_diag *d = &r->v[i].diag;
            series[i] = (qkv_svg_series){r->v[i].name, d->symmetry_grid ? d->grid_layers * d->grid_heads : 0, x,
                                         d->symmetry_grid, NULL, NULL};
        }
        qkv_svg_plot pl = {.title = "Score symmetry of each head (mean over seeds): 1 symmetric, -1 antisymmetric",
                           .xlabel = "head, layer by layer (layer l, head h at l \xc3\x97 heads + h)",
                           .ylabel = "symmetry score of W_q W_k^T (-1 to 1)",
                           .fixed_y = true,
                           .y_min = -1,
                           .y_max = 1,
                           .hline = true,
                           .hline_y = 0,
                           .width = 860,
                           .x_ticks = most <= 32 ? x : NULL, /* whole heads */
                           .n_x_ticks = most <= 32 ? most : 0};
        svg = qkv__svg_curves(&pl, series, nv);
    }
    free(series);
    free(x);
    return svg;
}

/* a symmetry plot needs a run that recorded its scores */
static bool has_symmetry(const qkv_ablate_results *r) {
    for (int i = 0; i < r->cfg->n_variants; i++)
        if (r->v[i].diag.symmetry_grid) return true;
    return false;
}

/* a learning-rate plot needs a grid */
static bool has_grid(const qkv_ablate_results *r) { return r->n_lrs > 1; }

/* the summary plots, in report order */
static const plot PLOTS[] = {
    {"accuracy.svg", "Evaluation accuracy against training step", draw_accuracy, NULL},
    {"loss.svg", "Evaluation loss against training step", draw_loss, NULL},
    {"learning-rate.svg", "Validation accuracy against learning rate", draw_lrs, has_grid},
    {"symmetry.svg", "Score symmetry by layer and head", draw_symmetry, has_symmetry},
};

/* ---- attention maps ---------------------------------------------------------------------- */

/* whether the variant recorded attention weights to draw */
static bool has_heat(const qkv_variant_result *v) {
    return v->heat.w && v->heat.layers > 0 && v->heat.heads > 0 && v->heat.T > 0;
}

/* a variant's attention map and a task's size plot are named by it (report_data.h) */
void qkv__report_file_part(char *dst, size_t n, const char *name, int index) {
    char tmp[QKV_ABLATE_NAME + 1];
    bool changed = false;
    size_t o = 0;
    for (size_t i = 0; name[i] && i < QKV_ABLATE_NAME && o < sizeof tmp - 1; i++) {
        char c = name[i];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                  c == '+' || c == '.' || c == '-';
        tmp[o++] = ok ? c : '_';
        changed |= !ok;
    }
    tmp[o] = 0;
    if ((changed || o == 0) && index >= 0) snprintf(dst, n, "%s-%d", tmp, index);
    else snprintf(dst, n, "%s", tmp);
}

/* variant i's heatmap, its tokens as tick labels (characters for a byte-level task; positions
 * when it recorded none); on recall, each position's role banded beside the axes and each
 * query's answer outlined (qkv__answer_cells), without tick labels where they would be too small
 * to read; NULL when out of memory or refused by the SVG writer */
static char *draw_map(const qkv_ablate_results *r, int i, bool text) {
    const qkv_ablate_config *cfg = r->cfg;
    const qkv_variant_result *v = &r->v[i];
    const qkv_heatmap *h = &v->heat;
    const int T = h->T, np = h->layers * h->heads;
    const bool recall = h->tokens && h->targets && (!strcmp(r->task, "recall") || !strcmp(r->task, "noisy_recall"));
    const char **labels = h->tokens ? calloc((size_t)T, sizeof *labels) : NULL;
    char(*buf)[16] = h->tokens ? calloc((size_t)T, sizeof *buf) : NULL;
    char(*caps)[48] = calloc((size_t)np, sizeof *caps);
    const char **cap_p = calloc((size_t)np, sizeof *cap_p);
    unsigned char *mark = recall ? malloc((size_t)T * (size_t)T) : NULL, *roles = recall ? malloc((size_t)T) : NULL;
    char *svg = NULL;
    if ((h->tokens && (!labels || !buf)) || !caps || !cap_p || (recall && (!mark || !roles))) goto done;
    for (int t = 0; h->tokens && t < T; t++) {
        int32_t tok = h->tokens[t];
        if (text && tok > 32 && tok < 127) snprintf(buf[t], sizeof buf[t], "%c", (char)tok);
        else if (text && tok == 32) snprintf(buf[t], sizeof buf[t], "\xe2\x90\xa3"); /* open box */
        else snprintf(buf[t], sizeof buf[t], "%d", (int)tok);
        labels[t] = buf[t];
    }
    for (int k = 0; k < np; k++) {
        snprintf(caps[k], sizeof caps[k], "layer %d, head %d", k / h->heads, k % h->heads);
        cap_p[k] = caps[k];
    }
    bool any_role = false;
    if (recall) qkv__answer_cells(h, mark, roles);
    for (int t = 0; recall && t < T; t++) any_role |= roles[t] != QKV_ROLE_NONE;
    char title[160], sub[256];
    snprintf(title, sizeof title, "Attention weights: %s", v->name);
    long long seed0 = cfg->n_seeds > 0 ? cfg->seeds[0] : 0;
    /* a tick label needs about 9 px: a cell of a panel in a row of `heads` about 960 px wide */
    const bool small = recall && (960.0 / h->heads - 60) / T < 9;
    snprintf(sub, sizeof sub, "evaluation example #%d, seed %lld run%s", cfg->example, seed0,
             small ? "" : h->tokens ? "; tick labels: input tokens" : "; tick labels: positions");
    const qkv_svg_panels p = {.title = title, .subtitle = sub, .rows = h->layers, .cols = h->heads, .T = T,
                              .w = h->w, .captions = cap_p, .labels = labels, .mark = mark,
                              .roles = any_role ? roles : NULL, .no_ticks = small && any_role};
    svg = qkv__svg_heatmap_grid(&p);
done:
    free(labels);
    free(buf);
    free(caps);
    free(cap_p);
    free(mark);
    free(roles);
    return svg;
}

/* ---- all figures ------------------------------------------------------------------------- */

/* every plot in PLOTS that is wanted, and every variant's map (a variant without weights has none) */
int qkv__report_figures(qkv_report_figures *f, const qkv_ablate_results *r, const qkv_ablate_curve *curves,
                        const char *thr, bool text) {
    const inputs in = {r, curves, thr, text};
    int n = (int)(sizeof PLOTS / sizeof PLOTS[0]), nv = r->cfg->n_variants;
    memset(f, 0, sizeof *f);
    if (!(f->all = calloc((size_t)(n + nv) + 1, sizeof *f->all))) return -1;
    for (int k = 0; k < n; k++) {
        if (PLOTS[k].wanted && !PLOTS[k].wanted(r)) continue;
        qkv_report_figure *g = &f->all[f->n++];
        snprintf(g->path, sizeof g->path, QKV_REPORT_PLOTS "/%s", PLOTS[k].file);
        snprintf(g->alt, sizeof g->alt, "%s", PLOTS[k].alt);
        if (!(g->svg = PLOTS[k].draw(&in))) return -1;
    }
    f->n_plots = f->n;
    f->maps = f->all + f->n_plots;
    for (int i = 0; i < nv; i++) {
        const qkv_variant_result *v = &r->v[i];
        qkv_report_figure *g = &f->all[f->n++];
        char file[QKV_ABLATE_NAME + 16];
        qkv__report_file_part(file, sizeof file, v->name, i);
        snprintf(g->path, sizeof g->path, QKV_REPORT_PLOTS "/attention-%s.svg", file);
        snprintf(g->alt, sizeof g->alt, "Attention weights of %s", v->name);
        if (has_heat(v) && !(g->svg = draw_map(r, i, text))) return -1;
    }
    return 0;
}

void qkv__report_figures_free(qkv_report_figures *f) {
    for (int i = 0; i < f->n; i++) free(f->all[i].svg);
    free(f->all);
    memset(f, 0, sizeof *f);
}
