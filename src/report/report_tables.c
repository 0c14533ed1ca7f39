/* The report's human-readable tables (results, attention diagnostics, variants) as text
 * cells. Each table is a list of columns: a header, an alignment and how one variant's cell is
 * written (a member of its result, or a function); adding a column is adding a line to a list
 * (see report_data.h). */
#include "tensor/tensor.h"
#include "report/report_data.h"
#include "io/strbuf.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* writes variant i's cell */
typedef void (*cell_fn)(char *dst, size_t n, const qkv_ablate_results *r, int i);

/* how a cell is written: the char array, the int64_t count or the double (with `decimals`) at
 * `at` in the variant's result, a diagnostic (the double at `at` in its qkv_attn_diag, at the end
 * and at step 0), or by a function */
typedef enum how { TEXT, COUNT, NUMBER, FROM_START, FN } how;

typedef struct column {
    const char *head;   /* NULL: the column is left out */
    bool right;         /* a number: right-aligned */
    bool failed;        /* says "failed" (or "not started") for a variant without a finished run */
    how how;
    size_t at;
    int decimals;
    cell_fn cell;       /* FN */
} column;

#define MEMBER(head, right, failed, how, member, d) \
    {head, right, failed, how, offsetof(qkv_variant_result, member), d, NULL}
#define DIAG(head, member, d) {head, true, true, FROM_START, offsetof(qkv_attn_diag, member), d, NULL}
#define CELL(head, right, failed, fn) {head, right, failed, FN, 0, 0, fn}

/* ---- number formats ---------------------------------------------------------------------- */

/* a loss-like value: 4 decimals, or 2 significant digits in exponent form when tiny */
static void fmt_small(char *dst, size_t n, double v) {
    if (!isfinite(v)) snprintf(dst, n, QKV_REPORT_DASH);
    else if (v == 0 || fabs(v) >= 0.001) snprintf(dst, n, "%.4f", v);
    else snprintf(dst, n, "%.1e", v);
}

void qkv__report_fixed(char *dst, size_t n, double v, int d) {
    if (!isfinite(v)) snprintf(dst, n, QKV_REPORT_DASH);
    else snprintf(dst, n, "%.*f", d, v);
}

void qkv__report_interval(char *dst, size_t n, qkv_ablate_metric m, double mean, double lo, double hi, bool sign) {
    bool acc = m == QKV_METRIC_ACCURACY;
    double k = acc ? 100 : 1;
    char a[32], b[32], c[32];
    qkv__report_fixed(a, sizeof a, mean * k, acc ? 1 : 3);
    qkv__report_fixed(b, sizeof b, lo * k, acc ? 1 : 3);
    qkv__report_fixed(c, sizeof c, hi * k, acc ? 1 : 3);
    snprintf(dst, n, "%s%s [%s, %s]", sign && mean > 0 ? "+" : "", a, b, c);
}

/* ---- cells ------------------------------------------------------------------------------- */

/* the model's parameter count, and for a matched control the width and the baseline's count */
static void cell_params(char *dst, size_t n, const qkv_ablate_results *r, int i) {
    const qkv_variant_result *v = &r->v[i];
    char a[32], b[32];
    qkv__fmt_count(a, sizeof a, v->params);
    if (!v->matched_d_ff) {
        snprintf(dst, n, "%s", a);
        return;
    }
    qkv__fmt_count(b, sizeof b, v->baseline_params);
    snprintf(dst, n, "%s (d_ff %d, matched to %s's %s)", a, v->matched_d_ff, r->v[r->cfg->baseline].name, b);
}

/* the learning rate chosen on validation */
static void cell_lr(char *dst, size_t n, const qkv_ablate_results *r, int i) {
    if (isfinite(r->v[i].lr)) snprintf(dst, n, "%g", r->v[i].lr);
    else snprintf(dst, n, QKV_REPORT_DASH);
}

/* final accuracy in percent: mean [95% interval] (worst seed) */
static void cell_acc_ci(char *dst, size_t n, const qkv_ablate_results *r, int i) {
    const qkv_variant_result *v = &r->v[i];
    char a[100], m[32];
    qkv__report_interval(a, sizeof a, QKV_METRIC_ACCURACY, v->acc_mean, v->acc_ci_lo, v->acc_ci_hi, false);
    qkv__report_fixed(m, sizeof m, v->acc_min * 100, 1);
    snprintf(dst, n, "%s (%s)", a, m);
}

/* the mean paired difference from the baseline, with its interval */
static void cell_delta(char *dst, size_t n, const qkv_ablate_results *r, int i) {
    const qkv_variant_result *v = &r->v[i];
    if (i == r->cfg->baseline) snprintf(dst, n, "baseline");
    else qkv__report_interval(dst, n, r->cfg->metric, v->delta, v->delta_ci_lo, v->delta_ci_hi, true);
}

/* the sign-flip p-value, Holm's adjustment, a mark when significant */
static void cell_p(char *dst, size_t n, const qkv_ablate_results *r, int i) {
    const qkv_variant_result *v = &r->v[i];
    if (i == r->cfg->baseline || !isfinite(v->p_value)) snprintf(dst, n, QKV_REPORT_DASH);
    else snprintf(dst, n, "%.3g (%.3g)%s", v->p_value, v->p_holm, v->significant ? " *" : "");
}

/* final loss (in bits when the sweep compares bits per byte): mean [95% interval] */
static void cell_loss_ci(char *dst, size_t n, const qkv_ablate_results *r, int i) {
    const qkv_variant_result *v = &r->v[i];
    double k = r->cfg->metric == QKV_METRIC_BPB ? 1 / QKV_LN2 : 1; /* nats -> bits */
    char a[32], lo[32], hi[32];
    fmt_small(a, sizeof a, v->loss_mean * k);
    fmt_small(lo, sizeof lo, v->loss_ci_lo * k);
    fmt_small(hi, sizeof hi, v->loss_ci_hi * k);
    snprintf(dst, n, "%s [%s, %s]", a, lo, hi);
}

/* a diagnostic at the end of training with d decimals, or where the variant recorded its start
 * "start → end (change)" */
static void fmt_from_start(char *dst, size_t n, double start, double end, int d) {
    char a[32], b[32];
    qkv__report_fixed(b, sizeof b, end, d);
    if (!isfinite(start) || !isfinite(end)) {
        snprintf(dst, n, "%s", b);
        return;
    }
    qkv__report_fixed(a, sizeof a, start, d);
    double scale = pow(10, d), change = round((end - start) * scale) / scale;
    snprintf(dst, n, "%s \xe2\x86\x92 %s (%+.*f)", a, b, d, change == 0 ? 0.0 : change); /* no -0.00 */
}

/* the variant's overrides */
static void cell_sets(char *dst, size_t n, const qkv_ablate_results *r, int i) {
    snprintf(dst, n, "%s", r->v[i].sets[0] ? r->v[i].sets : "(none)");
}

/* ---- tables ------------------------------------------------------------------------------ */

/* the value at offset `at` of the struct at base */
#define AT(type, base, at) (*(const type *)(const void *)((const char *)(base) + (at)))

/* variant i's cell of column c */
static void cell(char *dst, size_t n, const column *c, const qkv_ablate_results *r, int i) {
    const qkv_variant_result *v = &r->v[i];
    if (c->failed && v->runs_ok <= 0) snprintf(dst, n, "%s", qkv__ablate_unfinished(r, i));
    else if (c->how == TEXT) snprintf(dst, n, "%s", &AT(char, v, c->at));
    else if (c->how == COUNT) qkv__fmt_count(dst, n, AT(int64_t, v, c->at));
    else if (c->how == NUMBER) qkv__report_fixed(dst, n, AT(double, v, c->at), c->decimals);
    else if (c->how == FROM_START)
        fmt_from_start(dst, n, AT(double, &v->diag_start, c->at), AT(double, &v->diag, c->at), c->decimals);
    else c->cell(dst, n, r, i);
}

/* one row per variant, one column per entry of cols that has a header */
static int table(qkv_report_table *t, const qkv_ablate_results *r, const column *all, int n_all) {
    column cols[16]; /* more than any list here */
    int nc = 0;
    for (int k = 0; k < n_all && nc < 16; k++)
        if (all[k].head) cols[nc++] = all[k];
    if (qkv__report_table_alloc(t, r->cfg->n_variants, nc)) return -1;
    for (int c = 0; c < nc; c++) {
        snprintf(t->head[c], QKV_REPORT_CELL, "%s", cols[c].head);
        t->right[c] = cols[c].right;
    }
    for (int i = 0; i < t->rows; i++)
        for (int c = 0; c < nc; c++) cell(qkv_report_cell(t, i, c), QKV_REPORT_CELL, &cols[c], r, i);
    return 0;
}

/* the column lists, in report order */
int qkv__report_tables(qkv_report_tables *t, const qkv_ablate_results *r, const qkv_report_facts *f) {
    memset(t, 0, sizeof *t);
    const qkv_ablate_config *cfg = r->cfg;
    char steps_head[64], delta_head[QKV_ABLATE_NAME + 48];
    if (cfg->metric == QKV_METRIC_ACCURACY)
        snprintf(steps_head, sizeof steps_head, "verdicts (validation acc \xe2\x89\xa5 %s)", f->thr);
    else
        snprintf(steps_head, sizeof steps_head, "steps (validation loss still improving?)");
    static const char *const DELTA[QKV_METRIC_COUNT] = {"acc", "eval loss", "bits per byte"};
    static const char *const UNIT[QKV_METRIC_COUNT] = {"points", "nats", "bits"};
    snprintf(delta_head, sizeof delta_head, "\xce\x94 %s vs %s (%s) [95%% CI]", DELTA[cfg->metric],
             r->v[cfg->baseline].name, UNIT[cfg->metric]);
    const column results[] = {
        MEMBER("variant", false, false, TEXT, name, 0),
        MEMBER("attention params", true, false, COUNT, attn_params, 0),
        CELL("params", true, false, cell_params),
        CELL(cfg->n_lrs ? "lr" : NULL, true, true, cell_lr), /* with a grid */
        MEMBER(steps_head, false, true, TEXT, verdicts, 0),
        CELL("final eval acc %: mean [95% CI] (min)", true, true, cell_acc_ci),
        CELL(delta_head, true, true, cell_delta),
        CELL("p (Holm)", true, true, cell_p),
        CELL(cfg->metric == QKV_METRIC_BPB ? "eval bits per byte: mean [95% CI]" : "eval loss: mean [95% CI]", true,
             true, cell_loss_ci),
        MEMBER("s/run", true, false, NUMBER, seconds, 1),
    };
    const column diag[] = {
        MEMBER("variant", false, false, TEXT, name, 0),
        DIAG("diagonal share", diag_share, 3),
        /* where a run recorded it (runs of an older qkv did not) */
        DIAG(f->has_prev_share ? "previous-position share" : NULL, prev_share, 3),
        MEMBER("first-position share", true, true, NUMBER, diag.first_share, 3),
        MEMBER("entropy (nats)", true, true, NUMBER, diag.entropy, 3),
        MEMBER("uniform causal entropy (nats)", true, true, NUMBER, diag.entropy_uniform, 3),
        DIAG("score symmetry", symmetry, 2),
        DIAG("negative eigenvalue share", negative_mass, 2),
    };
    const column variants[] = {
        MEMBER("variant", false, false, TEXT, name, 0),
        CELL("overrides (after the common ones)", false, false, cell_sets),
    };
#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))
    return table(&t->results, r, results, N(results)) || table(&t->diag, r, diag, N(diag)) ||
                   table(&t->variants, r, variants, N(variants))
               ? -1 : 0;
#undef N
}

void qkv__report_tables_free(qkv_report_tables *t) {
    qkv__report_table_free(&t->results);
    qkv__report_table_free(&t->diag);
    qkv__report_table_free(&t->variants);
}
