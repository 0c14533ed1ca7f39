/* The ablation report: results.md/.csv/.json, the SVG plots, report.md and a self-contained
 * report.html, all from a qkv_ablate_results (see ablate.h). */
#include "ablate/ablate.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ablate/strbuf.h"
#include "ablate/svg.h"
#include "io/fileio.h"

#define CELL 640            /* one table cell's text */
#define DASH "\xe2\x80\x94" /* em dash: a missing value */
#define PM "\xc2\xb1"       /* plus-minus sign */

/* ---- small formatting helpers ------------------------------------------------------------ */

static void set_err(char *err, int errlen, const char *msg) {
    if (err && errlen > 0) snprintf(err, (size_t)errlen, "%s", msg);
}

/* 1234567 -> "1,234,567"; negative -> a dash (unknown) */
static void fmt_count(char *dst, size_t n, int64_t v) {
    if (v < 0) {
        snprintf(dst, n, DASH);
        return;
    }
    char raw[32], out[48];
    snprintf(raw, sizeof raw, "%lld", (long long)v);
    size_t len = strlen(raw), o = 0;
    for (size_t i = 0; i < len; i++) {
        if (i > 0 && (len - i) % 3 == 0) out[o++] = ',';
        out[o++] = raw[i];
    }
    out[o] = 0;
    snprintf(dst, n, "%s", out);
}

/* a loss-like value: 4 decimals, or 2 significant digits in exponent form when tiny */
static void fmt_small(char *dst, size_t n, double v) {
    if (!isfinite(v)) snprintf(dst, n, DASH);
    else if (v == 0 || fabs(v) >= 0.001) snprintf(dst, n, "%.4f", v);
    else snprintf(dst, n, "%.1e", v);
}

static void fmt_fixed(char *dst, size_t n, double v, int decimals) {
    if (!isfinite(v)) snprintf(dst, n, DASH);
    else snprintf(dst, n, "%.*f", decimals, v);
}

/* a threshold (fraction) as a percentage, without needless decimals: 0.99 -> "99%" */
static void fmt_threshold(char *dst, size_t n, double t) {
    if (!isfinite(t)) snprintf(dst, n, "?");
    else snprintf(dst, n, "%.4g%%", t * 100);
}

static void fmt_duration(char *dst, size_t n, double s) {
    if (!isfinite(s) || s < 0) snprintf(dst, n, "unknown");
    else if (s < 120) snprintf(dst, n, "%.1f s", s);
    else if (s < 7200) snprintf(dst, n, "%.1f min (%.0f s)", s / 60, s);
    else snprintf(dst, n, "%.2f h (%.0f s)", s / 3600, s);
}

static const qkv_run_result *run_at(const qkv_ablate_results *r, int v, int s) {
    if (!r->runs) return NULL;
    return &r->runs[(size_t)v * (size_t)r->cfg->n_seeds + (size_t)s];
}

static bool has_heat(const qkv_variant_result *v) {
    return v->heat.w && v->heat.layers > 0 && v->heat.heads > 0 && v->heat.T > 0;
}

/* the plots file name part of a variant: its name when it is path-safe, otherwise a cleaned
 * copy with the variant index appended (so two cleaned names cannot collide) */
static void safe_name(char *dst, size_t n, const char *name, int index) {
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
    if (changed || o == 0) snprintf(dst, n, "%s-%d", tmp, index);
    else snprintf(dst, n, "%s", tmp);
}

static int join(char *dst, size_t n, const char *dir, const char *name, char *err, int errlen) {
    if ((size_t)snprintf(dst, n, "%s/%s", dir, name) >= n) {
        if (err && errlen > 0) snprintf(err, (size_t)errlen, "%s/%s: path too long", dir, name);
        return -1;
    }
    return 0;
}

static int write_text(const char *dir, const char *name, const char *text, char *err, int errlen) {
    char path[4096];
    if (join(path, sizeof path, dir, name, err, errlen)) return -1;
    return qkv_write_file_atomic(path, text, strlen(text), err, errlen);
}

/* ---- tables: built once, rendered as markdown, HTML or printed ---------------------------- */

typedef struct table {
    int rows, cols;
    const char *head[12];
    bool right[12];             /* right-aligned (numbers) */
    char (*cell)[12][CELL];     /* rows x 12 */
} table;

static int table_init(table *t, int rows, int cols) {
    memset(t, 0, sizeof *t);
    t->rows = rows;
    t->cols = cols;
    t->cell = calloc(rows > 0 ? (size_t)rows : 1, sizeof *t->cell);
    return t->cell ? 0 : -1;
}

static void table_free(table *t) {
    free(t->cell);
    t->cell = NULL;
}

/* markdown cell text: HTML-significant characters as entities, '|' escaped, no newlines */
static void md_cell(qkv_strbuf *b, const char *s) {
    for (; *s; s++) {
        switch (*s) {
        case '&': qkv_strbuf_puts(b, "&amp;"); break;
        case '<': qkv_strbuf_puts(b, "&lt;"); break;
        case '>': qkv_strbuf_puts(b, "&gt;"); break;
        case '|': qkv_strbuf_puts(b, "\\|"); break;
        case '\n': case '\r': case '\t': qkv_strbuf_puts(b, " "); break;
        default: qkv_strbuf_putn(b, s, 1); break;
        }
    }
}

static void table_md(qkv_strbuf *b, const table *t) {
    qkv_strbuf_puts(b, "|");
    for (int c = 0; c < t->cols; c++) {
        qkv_strbuf_puts(b, " ");
        md_cell(b, t->head[c]);
        qkv_strbuf_puts(b, " |");
    }
    qkv_strbuf_puts(b, "\n|");
    for (int c = 0; c < t->cols; c++) qkv_strbuf_puts(b, t->right[c] ? "---:|" : "---|");
    qkv_strbuf_puts(b, "\n");
    for (int r = 0; r < t->rows; r++) {
        qkv_strbuf_puts(b, "|");
        for (int c = 0; c < t->cols; c++) {
            qkv_strbuf_puts(b, " ");
            md_cell(b, t->cell[r][c]);
            qkv_strbuf_puts(b, " |");
        }
        qkv_strbuf_puts(b, "\n");
    }
}

static void table_html(qkv_strbuf *b, const table *t) {
    qkv_strbuf_puts(b, "<div class=\"tw\"><table>\n<thead><tr>");
    for (int c = 0; c < t->cols; c++) {
        qkv_strbuf_puts(b, t->right[c] ? "<th class=\"num\">" : "<th>");
        qkv_strbuf_escape_xml(b, t->head[c]);
        qkv_strbuf_puts(b, "</th>");
    }
    qkv_strbuf_puts(b, "</tr></thead>\n<tbody>\n");
    for (int r = 0; r < t->rows; r++) {
        qkv_strbuf_puts(b, "<tr>");
        for (int c = 0; c < t->cols; c++) {
            qkv_strbuf_puts(b, t->right[c] ? "<td class=\"num\">" : "<td>");
            qkv_strbuf_escape_xml(b, t->cell[r][c]);
            qkv_strbuf_puts(b, "</td>");
        }
        qkv_strbuf_puts(b, "</tr>\n");
    }
    qkv_strbuf_puts(b, "</tbody></table></div>\n");
}

/* ---- curves: the mean and min-max of each evaluated step over a variant's runs ------------ */

typedef struct curve {
    int n;
    double *x, *acc, *acc_lo, *acc_hi, *loss, *loss_lo, *loss_hi;
} curve;

static void curve_free(curve *c) {
    free(c->x);
    memset(c, 0, sizeof *c);
}

static int cmp_ll(const void *a, const void *b) {
    long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}

/* one variant over its finished runs; a step missing from some runs uses the others */
static int curve_build(curve *c, const qkv_ablate_results *r, int v) {
    memset(c, 0, sizeof *c);
    int ns = r->cfg->n_seeds;
    size_t total = 0;
    for (int s = 0; s < ns; s++) {
        const qkv_run_result *run = run_at(r, v, s);
        if (run && run->ok && run->step && run->n > 0) total += (size_t)run->n;
    }
    if (total == 0) return 0;
    long long *steps = malloc(total * sizeof *steps);
    if (!steps) return -1;
    size_t k = 0;
    for (int s = 0; s < ns; s++) {
        const qkv_run_result *run = run_at(r, v, s);
        if (run && run->ok && run->step && run->n > 0)
            for (int i = 0; i < run->n; i++) steps[k++] = run->step[i];
    }
    qsort(steps, total, sizeof *steps, cmp_ll);
    size_t u = 0;
    for (size_t i = 0; i < total; i++)
        if (u == 0 || steps[i] != steps[u - 1]) steps[u++] = steps[i];
    c->x = malloc(u * 7 * sizeof(double));
    if (!c->x) {
        free(steps);
        return -1;
    }
    c->n = (int)u;
    c->acc = c->x + u;
    c->acc_lo = c->x + 2 * u;
    c->acc_hi = c->x + 3 * u;
    c->loss = c->x + 4 * u;
    c->loss_lo = c->x + 5 * u;
    c->loss_hi = c->x + 6 * u;
    for (size_t j = 0; j < u; j++) {
        c->x[j] = (double)steps[j];
        double sa = 0, sl = 0, amin = INFINITY, amax = -INFINITY, lmin = INFINITY, lmax = -INFINITY;
        int na = 0, nl = 0;
        for (int s = 0; s < ns; s++) {
            const qkv_run_result *run = run_at(r, v, s);
            if (!run || !run->ok || !run->step) continue;
            int at = -1;
            for (int i = run->n - 1; i >= 0; i--)   /* the last record of a step wins */
                if (run->step[i] == steps[j]) {
                    at = i;
                    break;
                }
            if (at < 0) continue;
            double a = run->eval_acc ? run->eval_acc[at] : NAN, l = run->eval_loss ? run->eval_loss[at] : NAN;
            if (isfinite(a)) {
                sa += a;
                na++;
                amin = fmin(amin, a);
                amax = fmax(amax, a);
            }
            if (isfinite(l)) {
                sl += l;
                nl++;
                lmin = fmin(lmin, l);
                lmax = fmax(lmax, l);
            }
        }
        c->acc[j] = na ? sa / na : NAN;
        c->acc_lo[j] = na ? amin : NAN;
        c->acc_hi[j] = na ? amax : NAN;
        c->loss[j] = nl ? sl / nl : NAN;
        c->loss_lo[j] = nl ? lmin : NAN;
        c->loss_hi[j] = nl ? lmax : NAN;
    }
    free(steps);
    return 0;
}

/* ---- the report's pieces ------------------------------------------------------------------ */

typedef struct report {
    const qkv_ablate_results *r;
    const qkv_ablate_config *cfg;
    int nv;
    char title[1100];
    char thr[32];               /* "99%" */
    char steps_head[64];        /* the results table's steps column */
    char task[64];              /* from the base config, or "" */
    bool text_task;             /* tokens are bytes: label them as characters */
    table results, diag, variants;
    curve *curves;
    char **heat_svg;            /* nv, NULL without a heatmap */
    char (*file)[QKV_ABLATE_NAME + 16]; /* nv plot file name parts */
    char *acc_svg, *loss_svg;
    char *paragraph_md, *paragraph_html;
} report;

static void report_title(report *p) {
    if (p->cfg->title[0]) {
        snprintf(p->title, sizeof p->title, "%s", p->cfg->title);
        return;
    }
    const char *base = strrchr(p->cfg->path, '/');
    base = base ? base + 1 : p->cfg->path;
    char name[sizeof p->cfg->path];
    snprintf(name, sizeof name, "%s", base);
    char *dot = strrchr(name, '.');
    if (dot && dot != name) *dot = 0;
    snprintf(p->title, sizeof p->title, "Ablation: %s", name[0] ? name : "qkv");
}

static void outcome_note(char *dst, size_t n, const qkv_variant_result *v, int n_seeds) {
    if (v->runs_ok >= n_seeds) dst[0] = 0;
    else snprintf(dst, n, ", %d/%d failed", n_seeds - v->runs_ok, n_seeds);
}

static int build_tables(report *p) {
    const qkv_ablate_config *cfg = p->cfg;
    if (table_init(&p->results, p->nv, 7) || table_init(&p->diag, p->nv, 5) ||
        table_init(&p->variants, p->nv, 2))
        return -1;
    snprintf(p->steps_head, sizeof p->steps_head, "steps to %s (median)", p->thr);
    table *t = &p->results;
    const char *rh[] = {"variant", "attention params", "params", "final eval acc %: mean " PM " std (min)",
                        "eval loss: mean " PM " std", p->steps_head, "s/run"};
    for (int c = 0; c < 7; c++) {
        t->head[c] = rh[c];
        t->right[c] = c > 0;
    }
    table *d = &p->diag;
    const char *dh[] = {"variant", "diagonal share", "first-position share", "entropy (nats)",
                        "uniform causal entropy (nats)"};
    for (int c = 0; c < 5; c++) {
        d->head[c] = dh[c];
        d->right[c] = c > 0;
    }
    p->variants.head[0] = "variant";
    p->variants.head[1] = "overrides (after the common ones)";

    for (int i = 0; i < p->nv; i++) {
        const qkv_variant_result *v = &p->r->v[i];
        char(*row)[CELL] = t->cell[i];
        char note[64], a[32], b[32], m[32];
        bool failed = v->runs_ok <= 0;
        outcome_note(note, sizeof note, v, cfg->n_seeds);
        snprintf(row[0], CELL, "%s", v->name);
        fmt_count(row[1], CELL, v->attn_params);
        fmt_count(row[2], CELL, v->params);
        if (failed) {
            snprintf(row[3], CELL, "failed");
            snprintf(row[4], CELL, "failed");
            snprintf(row[5], CELL, "failed");
        } else {
            fmt_fixed(a, sizeof a, v->acc_mean * 100, 1);
            fmt_fixed(b, sizeof b, v->acc_std * 100, 1);
            fmt_fixed(m, sizeof m, v->acc_min * 100, 1);
            snprintf(row[3], CELL, "%s " PM " %s (%s)%s", a, b, m, note);
            fmt_small(a, sizeof a, v->loss_mean);
            if (isfinite(v->loss_mean) && (v->loss_mean == 0 || fabs(v->loss_mean) >= 0.001))
                fmt_fixed(b, sizeof b, v->loss_std, 4);  /* the same decimals as the mean */
            else fmt_small(b, sizeof b, v->loss_std);
            snprintf(row[4], CELL, "%s " PM " %s", a, b);
            /* steps_median counts a seed that never got there as infinitely late: it can be a
             * number while some seeds never reached the threshold, so those are named too */
            int never = v->runs_ok - v->reached;
            if (v->reached <= 0) snprintf(row[5], CELL, "never");
            else if (never > 0 && v->steps_median >= 0)
                snprintf(row[5], CELL, "%lld (%d/%d never)", v->steps_median, never, v->runs_ok);
            else if (never > 0) snprintf(row[5], CELL, "%d/%d never", never, v->runs_ok);
            else if (v->steps_median >= 0) snprintf(row[5], CELL, "%lld", v->steps_median);
            else snprintf(row[5], CELL, "never");
        }
        fmt_fixed(row[6], CELL, v->seconds, 1);

        char(*drow)[CELL] = d->cell[i];
        snprintf(drow[0], CELL, "%s", v->name);
        if (failed) {
            for (int c = 1; c < 5; c++) snprintf(drow[c], CELL, "failed");
        } else {
            fmt_fixed(drow[1], CELL, v->diag.diag_share, 3);
            fmt_fixed(drow[2], CELL, v->diag.first_share, 3);
            fmt_fixed(drow[3], CELL, v->diag.entropy, 3);
            fmt_fixed(drow[4], CELL, v->diag.entropy_uniform, 3);
        }

        snprintf(p->variants.cell[i][0], CELL, "%s", v->name);
        snprintf(p->variants.cell[i][1], CELL, "%s", v->sets[0] ? v->sets : "(none)");
    }
    return 0;
}

/* what was run, in one paragraph; html selects escaping and code markup */
static void paragraph(qkv_strbuf *b, const report *p, bool html) {
    const qkv_ablate_config *cfg = p->cfg;
    const qkv_ablate_results *r = p->r;
#define TEXT(s) (html ? qkv_strbuf_escape_xml(b, (s)) : md_cell(b, (s)))
#define CODE(s)                                                         \
    do {                                                                \
        qkv_strbuf_puts(b, html ? "<code>" : "`");                     \
        if (html) qkv_strbuf_escape_xml(b, (s));                           \
        else qkv_strbuf_puts(b, (s));                                  \
        qkv_strbuf_puts(b, html ? "</code>" : "`");                    \
    } while (0)
    char tmp[256];
    snprintf(tmp, sizeof tmp, "qkv %s trained %d variant%s %s %d seed%s (", r->version ? r->version : "(unknown version)",
             p->nv, p->nv == 1 ? "" : "s", "\xc3\x97", cfg->n_seeds, cfg->n_seeds == 1 ? "" : "s");
    TEXT(tmp);
    for (int s = 0; s < cfg->n_seeds; s++) {
        snprintf(tmp, sizeof tmp, "%s%lld", s ? ", " : "", cfg->seeds[s]);
        TEXT(tmp);
    }
    TEXT(")");
    if (p->task[0]) {
        TEXT(" on the ");
        CODE(p->task);
        TEXT(" task");
    }
    TEXT(", starting from ");
    if (cfg->base_path[0]) {
        TEXT("the base config ");
        CODE(cfg->base_path);
    } else if (cfg->base_json) {
        TEXT("the base config inline in ");
        CODE(cfg->path);
    } else {
        TEXT("the default config");
    }
    if (cfg->n_sets > 0) {
        TEXT(" with the common overrides ");
        for (int i = 0; i < cfg->n_sets; i++) {
            if (i) TEXT(" ");
            const char *set = cfg->sets[i] ? cfg->sets[i] : "";
            if (html) {   /* an override is not broken across lines */
                qkv_strbuf_puts(b, "<code class=\"nw\">--set ");
                qkv_strbuf_escape_xml(b, set);
                qkv_strbuf_puts(b, "</code>");
            } else {
                qkv_strbuf_puts(b, strchr(set, '`') ? "`` --set " : "`--set ");
                qkv_strbuf_puts(b, set);
                qkv_strbuf_puts(b, strchr(set, '`') ? " ``" : "`");
            }
        }
    } else {
        TEXT(" with no common overrides");
    }
    TEXT(". A run counts as solved at the first evaluation with accuracy ");
    snprintf(tmp, sizeof tmp, "\xe2\x89\xa5 %s", p->thr);
    TEXT(tmp);
    char dur[64];
    fmt_duration(dur, sizeof dur, r->wall_seconds);
    snprintf(tmp, sizeof tmp, ". The whole ablation took %s of wall time with %d parallel job%s.", dur, r->jobs,
             r->jobs == 1 ? "" : "s");
    TEXT(tmp);
    int failed = 0;
    for (int i = 0; i < p->nv; i++) failed += cfg->n_seeds - (p->r->v[i].runs_ok < 0 ? 0 : p->r->v[i].runs_ok);
    if (failed > 0) {
        snprintf(tmp, sizeof tmp, " %d run%s failed and %s left out of the statistics.", failed,
                 failed == 1 ? "" : "s", failed == 1 ? "is" : "are");
        TEXT(tmp);
    }
#undef TEXT
#undef CODE
}

static const char *const DIAG_NOTES[] = {
    "diagonal share: the mean attention weight a query puts on its own position",
    "first-position share: the mean weight on the first position (an attention sink)",
    "entropy: the mean entropy of a query's attention weights in nats (low = focused)",
    "uniform causal entropy: the same for uniform attention over the visible positions, for scale",
};
static const char RESULTS_NOTE[] =
    "Accuracy and loss: the final evaluation of each finished run, over seeds; steps: the median over seeds of "
    "the first evaluated step that reached the threshold, a seed that never did counting as never "
    "(\"k/n never\": k of n seeds never did); "
    "s/run: mean wall time of a run. Failed runs are left out of every statistic.";
static const char DIAG_INTRO[] =
    "Averaged over layers, heads, seeds and the query rows of the evaluation examples that attend somewhere.";

static char *results_md(const report *p) {
    qkv_strbuf b;
    qkv_strbuf_init(&b);
    qkv_strbuf_puts(&b, "# ");
    md_cell(&b, p->title);
    qkv_strbuf_puts(&b, "\n\n");
    table_md(&b, &p->results);
    qkv_strbuf_printf(&b, "\n%s\n\n## Attention diagnostics\n\n%s\n\n", RESULTS_NOTE, DIAG_INTRO);
    table_md(&b, &p->diag);
    qkv_strbuf_puts(&b, "\n");
    for (size_t i = 0; i < sizeof DIAG_NOTES / sizeof DIAG_NOTES[0]; i++)
        qkv_strbuf_printf(&b, "- %s\n", DIAG_NOTES[i]);
    return qkv_strbuf_take(&b);
}

/* ---- CSV ----------------------------------------------------------------------------------- */

static void csv_field(qkv_strbuf *b, const char *s) {
    if (!strpbrk(s, ",\"\r\n")) {
        qkv_strbuf_puts(b, s);
        return;
    }
    qkv_strbuf_puts(b, "\"");
    for (; *s; s++) qkv_strbuf_puts(b, *s == '"' ? "\"\"" : (char[2]){*s, 0});
    qkv_strbuf_puts(b, "\"");
}

static void csv_num(qkv_strbuf *b, double v) {
    if (isfinite(v)) qkv_strbuf_printf(b, ",%.6g", v);
    else qkv_strbuf_puts(b, ",");
}

static char *results_csv(const report *p) {
    qkv_strbuf b;
    qkv_strbuf_init(&b);
    qkv_strbuf_puts(&b, "variant,attn_params,params,acc_mean,acc_std,acc_min,loss_mean,loss_std,"
                        "steps_to_threshold,seconds,diag_share,first_share,entropy,sets\n");
    for (int i = 0; i < p->nv; i++) {
        const qkv_variant_result *v = &p->r->v[i];
        bool ok = v->runs_ok > 0;
        csv_field(&b, v->name);
        qkv_strbuf_printf(&b, ",%lld,%lld", (long long)v->attn_params, (long long)v->params);
        csv_num(&b, ok ? v->acc_mean : NAN);
        csv_num(&b, ok ? v->acc_std : NAN);
        csv_num(&b, ok ? v->acc_min : NAN);
        csv_num(&b, ok ? v->loss_mean : NAN);
        csv_num(&b, ok ? v->loss_std : NAN);
        if (ok && v->steps_median >= 0) qkv_strbuf_printf(&b, ",%lld", v->steps_median);
        else qkv_strbuf_puts(&b, ",never");
        csv_num(&b, v->seconds);
        csv_num(&b, ok ? v->diag.diag_share : NAN);
        csv_num(&b, ok ? v->diag.first_share : NAN);
        csv_num(&b, ok ? v->diag.entropy : NAN);
        qkv_strbuf_puts(&b, ",");
        csv_field(&b, v->sets);
        qkv_strbuf_puts(&b, "\n");
    }
    return qkv_strbuf_take(&b);
}

/* ---- JSON ---------------------------------------------------------------------------------- */

static void j_num(cJSON *o, const char *key, double v) {
    if (isfinite(v)) cJSON_AddNumberToObject(o, key, v);
    else cJSON_AddNullToObject(o, key);
}

static cJSON *j_array(const double *v, int n) {
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; a && v && i < n; i++)
        cJSON_AddItemToArray(a, isfinite(v[i]) ? cJSON_CreateNumber(v[i]) : cJSON_CreateNull());
    return a;
}

static char *results_json(const report *p) {
    const qkv_ablate_config *cfg = p->cfg;
    cJSON *root = cJSON_CreateObject();
    if (!root) return NULL;
    cJSON_AddStringToObject(root, "title", p->title);
    j_num(root, "threshold", cfg->threshold);
    cJSON *seeds = cJSON_AddArrayToObject(root, "seeds");
    for (int s = 0; seeds && s < cfg->n_seeds; s++) cJSON_AddItemToArray(seeds, cJSON_CreateNumber((double)cfg->seeds[s]));
    if (p->r->version) cJSON_AddStringToObject(root, "version", p->r->version);
    else cJSON_AddNullToObject(root, "version");
    j_num(root, "wall_seconds", p->r->wall_seconds);
    cJSON_AddNumberToObject(root, "jobs", p->r->jobs);
    cJSON *vars = cJSON_AddArrayToObject(root, "variants");
    for (int i = 0; vars && i < p->nv; i++) {
        const qkv_variant_result *v = &p->r->v[i];
        bool ok = v->runs_ok > 0;
        cJSON *o = cJSON_CreateObject();
        if (!o) break;
        cJSON_AddItemToArray(vars, o);
        cJSON_AddStringToObject(o, "name", v->name);
        cJSON_AddStringToObject(o, "sets", v->sets);
        cJSON_AddNumberToObject(o, "attn_params", (double)v->attn_params);
        cJSON_AddNumberToObject(o, "params", (double)v->params);
        cJSON_AddNumberToObject(o, "runs_ok", v->runs_ok);
        j_num(o, "acc_mean", ok ? v->acc_mean : NAN);
        j_num(o, "acc_std", ok ? v->acc_std : NAN);
        j_num(o, "acc_min", ok ? v->acc_min : NAN);
        j_num(o, "loss_mean", ok ? v->loss_mean : NAN);
        j_num(o, "loss_std", ok ? v->loss_std : NAN);
        j_num(o, "steps_to_threshold", ok && v->steps_median >= 0 ? (double)v->steps_median : NAN);
        cJSON_AddNumberToObject(o, "reached", v->reached);
        j_num(o, "seconds", v->seconds);
        j_num(o, "diag_share", ok ? v->diag.diag_share : NAN);
        j_num(o, "first_share", ok ? v->diag.first_share : NAN);
        j_num(o, "entropy", ok ? v->diag.entropy : NAN);
        j_num(o, "entropy_uniform", v->diag.entropy_uniform);
        cJSON *runs = cJSON_AddArrayToObject(o, "runs");
        for (int s = 0; runs && s < cfg->n_seeds; s++) {
            const qkv_run_result *run = run_at(p->r, i, s);
            if (!run) break;
            cJSON *ro = cJSON_CreateObject();
            if (!ro) break;
            cJSON_AddItemToArray(runs, ro);
            cJSON_AddNumberToObject(ro, "seed", (double)run->seed);
            cJSON_AddBoolToObject(ro, "ok", run->ok);
            j_num(ro, "final_acc", run->final_acc);
            j_num(ro, "final_loss", run->final_loss);
            j_num(ro, "steps_to_threshold", run->steps_to_threshold >= 0 ? (double)run->steps_to_threshold : NAN);
            j_num(ro, "seconds", run->seconds);
            cJSON *cu = cJSON_AddObjectToObject(ro, "curve");
            if (!cu) continue;
            int n = run->n > 0 ? run->n : 0;
            double *steps = n && run->step ? malloc((size_t)n * sizeof *steps) : NULL;
            for (int k = 0; steps && k < n; k++) steps[k] = (double)run->step[k];
            cJSON_AddItemToObject(cu, "step", j_array(steps, steps ? n : 0));
            cJSON_AddItemToObject(cu, "eval_acc", j_array(run->eval_acc, n));
            cJSON_AddItemToObject(cu, "eval_loss", j_array(run->eval_loss, n));
            free(steps);
        }
    }
    char *s = cJSON_Print(root);
    cJSON_Delete(root);
    if (!s) return NULL;
    /* cJSON's allocator is malloc by default; copy anyway so the caller can free() it */
    size_t len = strlen(s);
    char *out = malloc(len + 2);
    if (out) {
        memcpy(out, s, len);
        out[len] = '\n';
        out[len + 1] = 0;
    }
    cJSON_free(s);
    return out;
}

/* ---- plots --------------------------------------------------------------------------------- */

static int build_plots(report *p) {
    const qkv_ablate_config *cfg = p->cfg;
    qkv_svg_series *acc = calloc((size_t)p->nv + 1, sizeof *acc), *loss = calloc((size_t)p->nv + 1, sizeof *loss);
    char(*names)[QKV_ABLATE_NAME + 48] = calloc((size_t)p->nv + 1, sizeof *names);
    int rc = -1;
    if (!acc || !loss || !names) goto done;
    for (int i = 0; i < p->nv; i++) {
        const qkv_variant_result *v = &p->r->v[i];
        const curve *c = &p->curves[i];
        if (v->runs_ok <= 0) snprintf(names[i], sizeof names[i], "%s (failed)", v->name);
        else if (v->runs_ok < cfg->n_seeds)
            snprintf(names[i], sizeof names[i], "%s (%d of %d runs)", v->name, v->runs_ok, cfg->n_seeds);
        else snprintf(names[i], sizeof names[i], "%s", v->name);
        acc[i] = (qkv_svg_series){names[i], c->n, c->x, c->acc, c->acc_lo, c->acc_hi};
        loss[i] = (qkv_svg_series){names[i], c->n, c->x, c->loss, c->loss_lo, c->loss_hi};
    }
    char label[64];
    snprintf(label, sizeof label, "threshold %s", p->thr);
    qkv_svg_plot pa = {.title = "Evaluation accuracy (mean over seeds, band: min\xe2\x80\x93max)",
                       .xlabel = "training step",
                       .ylabel = "evaluation accuracy",
                       .percent_y = true,
                       .fixed_y = true,
                       .y_min = 0,
                       .y_max = 1,
                       .hline = isfinite(cfg->threshold) && cfg->threshold >= 0 && cfg->threshold <= 1,
                       .hline_y = cfg->threshold,
                       .hline_label = label,
                       .width = 860};
    qkv_svg_plot pl = {.title = "Evaluation loss (mean over seeds, band: min\xe2\x80\x93max)",
                       .xlabel = "training step",
                       .ylabel = "evaluation loss (log scale)",
                       .log_y = true,
                       .width = 860};
    p->acc_svg = qkv_svg_curves(&pa, acc, p->nv);
    p->loss_svg = qkv_svg_curves(&pl, loss, p->nv);
    if (!p->acc_svg || !p->loss_svg) goto done;

    /* heatmaps */
    for (int i = 0; i < p->nv; i++) {
        const qkv_variant_result *v = &p->r->v[i];
        if (!has_heat(v)) continue;
        const qkv_heatmap *h = &v->heat;
        char **labels = NULL;
        if (h->tokens) {
            labels = calloc((size_t)h->T, sizeof *labels);
            if (!labels) goto done;
            for (int t = 0; t < h->T; t++) {
                labels[t] = malloc(16);
                if (!labels[t]) break;
                int32_t tok = h->tokens[t];
                if (p->text_task && tok > 32 && tok < 127) snprintf(labels[t], 16, "%c", (char)tok);
                else if (p->text_task && tok == 32) snprintf(labels[t], 16, "\xe2\x90\xa3"); /* open box */
                else snprintf(labels[t], 16, "%d", (int)tok);
            }
        }
        bool labels_ok = true;
        for (int t = 0; labels && t < h->T; t++) labels_ok &= labels[t] != NULL;
        char title[160], sub[256];
        snprintf(title, sizeof title, "Attention weights: %s", v->name);
        long long seed0 = cfg->n_seeds > 0 ? cfg->seeds[0] : 0;
        snprintf(sub, sizeof sub, "evaluation example #%d, seed %lld run%s; row: query, column: key", cfg->example,
                 seed0, h->tokens ? "; tick labels: input tokens" : "");
        if (labels_ok)
            p->heat_svg[i] = qkv_svg_heatmap(title, sub, h->layers, h->heads, h->T, h->w,
                                             (const char *const *)labels);
        for (int t = 0; labels && t < h->T; t++) free(labels[t]);
        free(labels);
        if (!p->heat_svg[i]) goto done;
    }
    rc = 0;
done:
    free(acc);
    free(loss);
    free(names);
    return rc;
}

/* ---- report.md and report.html --------------------------------------------------------------- */

static void shell_word(qkv_strbuf *b, const char *s) {
    bool plain = *s != 0;
    for (const char *c = s; *c; c++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_+-./=,:@%", *c)) plain = false;
    if (plain) {
        qkv_strbuf_puts(b, s);
        return;
    }
    qkv_strbuf_puts(b, "'");
    for (; *s; s++) qkv_strbuf_puts(b, *s == '\'' ? "'\\''" : (char[2]){*s, 0});
    qkv_strbuf_puts(b, "'");
}

static char *command(const report *p, const char *out_dir) {
    qkv_strbuf b;
    qkv_strbuf_init(&b);
    qkv_strbuf_puts(&b, "build/qkv ablate ");
    shell_word(&b, p->cfg->path);
    qkv_strbuf_puts(&b, " --out ");
    shell_word(&b, out_dir);
    return qkv_strbuf_take(&b);
}

static const char CURVES_NOTE[] =
    "Lines: the mean over the finished runs at each evaluated step; bands: the minimum and maximum over seeds.";
static const char HEAT_NOTE_FMT[] =
    "The attention weights of evaluation example #%d in each variant's first-seed run: one map per layer (rows) "
    "and head (columns); each row of a map is a query position and each column the key it attends to "
    "(white 0, dark 1; masked future positions are 0).";

static char *report_md(const report *p, const char *cmd) {
    const qkv_ablate_config *cfg = p->cfg;
    qkv_strbuf b;
    qkv_strbuf_init(&b);
    qkv_strbuf_puts(&b, "# ");
    md_cell(&b, p->title);
    qkv_strbuf_puts(&b, "\n\n");
    paragraph(&b, p, false);
    qkv_strbuf_puts(&b, "\n\n## Variants\n\n");
    table_md(&b, &p->variants);
    qkv_strbuf_puts(&b, "\n## Results\n\n");
    table_md(&b, &p->results);
    qkv_strbuf_printf(&b, "\n%s\n\n## Training curves\n\n", RESULTS_NOTE);
    qkv_strbuf_puts(&b, "![Evaluation accuracy against training step](plots/accuracy.svg)\n\n");
    qkv_strbuf_puts(&b, "![Evaluation loss against training step](plots/loss.svg)\n\n");
    qkv_strbuf_printf(&b, "%s\n\n## Attention diagnostics\n\n%s\n\n", CURVES_NOTE, DIAG_INTRO);
    table_md(&b, &p->diag);
    qkv_strbuf_puts(&b, "\n");
    for (size_t i = 0; i < sizeof DIAG_NOTES / sizeof DIAG_NOTES[0]; i++)
        qkv_strbuf_printf(&b, "- %s\n", DIAG_NOTES[i]);
    qkv_strbuf_puts(&b, "\n## Attention maps\n\n");
    qkv_strbuf_printf(&b, HEAT_NOTE_FMT, cfg->example);
    qkv_strbuf_puts(&b, "\n\n");
    for (int i = 0; i < p->nv; i++) {
        const qkv_variant_result *v = &p->r->v[i];
        qkv_strbuf_puts(&b, "### ");
        md_cell(&b, v->name);
        qkv_strbuf_puts(&b, "\n\n");
        if (p->heat_svg[i]) {
            qkv_strbuf_puts(&b, "![Attention weights of ");
            md_cell(&b, v->name);
            qkv_strbuf_printf(&b, "](plots/attention-%s.svg)\n\n", p->file[i]);
        } else {
            qkv_strbuf_puts(&b, "No attention map was recorded for this variant.\n\n");
        }
    }
    qkv_strbuf_puts(&b, "## Reproduce\n\nThe effective config of the first variant's first run:\n\n```json\n");
    if (p->r->base_config_json) {
        qkv_strbuf_puts(&b, p->r->base_config_json);
        size_t n = strlen(p->r->base_config_json);
        if (n == 0 || p->r->base_config_json[n - 1] != '\n') qkv_strbuf_puts(&b, "\n");
    } else {
        qkv_strbuf_puts(&b, "null\n");
    }
    qkv_strbuf_printf(&b, "```\n\nTo run the ablation again (finished runs are reused):\n\n```sh\n%s\n```\n",
                      cmd ? cmd : "");
    return qkv_strbuf_take(&b);
}

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

static void html_svg(qkv_strbuf *b, const char *svg, const char *caption) {
    qkv_strbuf_puts(b, "<figure>\n");
    qkv_strbuf_puts(b, svg);
    if (caption) {
        qkv_strbuf_puts(b, "<figcaption>");
        qkv_strbuf_escape_xml(b, caption);
        qkv_strbuf_puts(b, "</figcaption>\n");
    }
    qkv_strbuf_puts(b, "</figure>\n");
}

static char *report_html(const report *p, const char *cmd) {
    const qkv_ablate_config *cfg = p->cfg;
    qkv_strbuf b;
    qkv_strbuf_init(&b);
    qkv_strbuf_puts(&b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>");
    qkv_strbuf_escape_xml(&b, p->title);
    qkv_strbuf_printf(&b, "</title>\n<style>\n%s</style>\n</head>\n<body>\n<h1>", HTML_STYLE);
    qkv_strbuf_escape_xml(&b, p->title);
    qkv_strbuf_puts(&b, "</h1>\n<p>");
    paragraph(&b, p, true);
    qkv_strbuf_puts(&b, "</p>\n<h2>Variants</h2>\n");
    table_html(&b, &p->variants);
    qkv_strbuf_puts(&b, "<h2>Results</h2>\n");
    table_html(&b, &p->results);
    qkv_strbuf_puts(&b, "<p class=\"note\">");
    qkv_strbuf_escape_xml(&b, RESULTS_NOTE);
    qkv_strbuf_puts(&b, "</p>\n<h2>Training curves</h2>\n");
    html_svg(&b, p->acc_svg, NULL);
    html_svg(&b, p->loss_svg, NULL);
    qkv_strbuf_puts(&b, "<p class=\"note\">");
    qkv_strbuf_escape_xml(&b, CURVES_NOTE);
    qkv_strbuf_puts(&b, "</p>\n<h2>Attention diagnostics</h2>\n<p class=\"note\">");
    qkv_strbuf_escape_xml(&b, DIAG_INTRO);
    qkv_strbuf_puts(&b, "</p>\n");
    table_html(&b, &p->diag);
    qkv_strbuf_puts(&b, "<ul>\n");
    for (size_t i = 0; i < sizeof DIAG_NOTES / sizeof DIAG_NOTES[0]; i++) {
        qkv_strbuf_puts(&b, "<li>");
        qkv_strbuf_escape_xml(&b, DIAG_NOTES[i]);
        qkv_strbuf_puts(&b, "</li>\n");
    }
    qkv_strbuf_puts(&b, "</ul>\n<h2>Attention maps</h2>\n<p class=\"note\">");
    char note[sizeof HEAT_NOTE_FMT + 32];
    snprintf(note, sizeof note, HEAT_NOTE_FMT, cfg->example);
    qkv_strbuf_escape_xml(&b, note);
    qkv_strbuf_puts(&b, "</p>\n");
    for (int i = 0; i < p->nv; i++) {
        qkv_strbuf_puts(&b, "<h3>");
        qkv_strbuf_escape_xml(&b, p->r->v[i].name);
        qkv_strbuf_puts(&b, "</h3>\n");
        if (p->heat_svg[i]) html_svg(&b, p->heat_svg[i], NULL);
        else qkv_strbuf_puts(&b, "<p class=\"note\">No attention map was recorded for this variant.</p>\n");
    }
    qkv_strbuf_puts(&b, "<h2>Reproduce</h2>\n<p>The effective config of the first variant&#39;s first run:</p>\n"
                        "<pre><code>");
    qkv_strbuf_escape_xml(&b, p->r->base_config_json ? p->r->base_config_json : "null");
    qkv_strbuf_puts(&b, "</code></pre>\n<p>To run the ablation again (finished runs are reused):</p>\n<pre><code>");
    qkv_strbuf_escape_xml(&b, cmd ? cmd : "");
    qkv_strbuf_puts(&b, "</code></pre>\n</body>\n</html>\n");
    return qkv_strbuf_take(&b);
}

/* the task name (and whether tokens are bytes) from the effective config */
static void read_task(report *p) {
    if (!p->r->base_config_json) return;
    cJSON *root = cJSON_Parse(p->r->base_config_json);
    const cJSON *task = cJSON_GetObjectItemCaseSensitive(root, "task");
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(task, "name");
    if (cJSON_IsString(name) && name->valuestring) {
        snprintf(p->task, sizeof p->task, "%s", name->valuestring);
        p->text_task = strcmp(name->valuestring, "text") == 0;
    }
    cJSON_Delete(root);
}

/* ---- the entry point ----------------------------------------------------------------------- */

int qkv_ablate_write_report(const qkv_ablate_results *r, const char *out_dir, FILE *table_out, char *err,
                            int errlen) {
    if (!r || !r->cfg || !out_dir || !*out_dir || (r->cfg->n_variants > 0 && !r->v) || r->cfg->n_variants < 0 ||
        r->cfg->n_seeds < 0 || (r->cfg->n_seeds > 0 && !r->cfg->seeds)) {
        set_err(err, errlen, "ablate report: incomplete results");
        return -1;
    }
    report p;
    memset(&p, 0, sizeof p);
    p.r = r;
    p.cfg = r->cfg;
    p.nv = r->cfg->n_variants;
    report_title(&p);
    fmt_threshold(p.thr, sizeof p.thr, p.cfg->threshold);
    read_task(&p);

    int rc = -1;
    char *md = NULL, *csv = NULL, *json = NULL, *rmd = NULL, *html = NULL, *cmd = NULL;
    char plots[4096];
    if (join(plots, sizeof plots, out_dir, "plots", err, errlen) || qkv_mkdirs(plots, err, errlen)) goto done;

    size_t nv1 = (size_t)p.nv + 1;
    p.curves = calloc(nv1, sizeof *p.curves);
    p.heat_svg = calloc(nv1, sizeof *p.heat_svg);
    p.file = calloc(nv1, sizeof *p.file);
    if (!p.curves || !p.heat_svg || !p.file) goto oom;
    for (int i = 0; i < p.nv; i++) {
        safe_name(p.file[i], sizeof p.file[i], r->v[i].name, i);
        if (curve_build(&p.curves[i], r, i)) goto oom;
    }
    if (build_tables(&p) || build_plots(&p)) goto oom;

    md = results_md(&p);
    csv = results_csv(&p);
    json = results_json(&p);
    cmd = command(&p, out_dir);
    rmd = report_md(&p, cmd);
    html = report_html(&p, cmd);
    if (!md || !csv || !json || !cmd || !rmd || !html) goto oom;

    if (table_out) {
        fputs(md, table_out);
        fflush(table_out);
    }
    if (write_text(out_dir, "results.md", md, err, errlen) || write_text(out_dir, "results.csv", csv, err, errlen) ||
        write_text(out_dir, "results.json", json, err, errlen) ||
        write_text(plots, "accuracy.svg", p.acc_svg, err, errlen) ||
        write_text(plots, "loss.svg", p.loss_svg, err, errlen))
        goto done;
    for (int i = 0; i < p.nv; i++) {
        if (!p.heat_svg[i]) continue;
        char name[QKV_ABLATE_NAME + 32];
        snprintf(name, sizeof name, "attention-%s.svg", p.file[i]);
        if (write_text(plots, name, p.heat_svg[i], err, errlen)) goto done;
    }
    if (write_text(out_dir, "report.md", rmd, err, errlen) || write_text(out_dir, "report.html", html, err, errlen))
        goto done;
    rc = 0;
    goto done;
oom:
    set_err(err, errlen, "ablate report: out of memory");
done:
    for (int i = 0; p.curves && i < p.nv; i++) curve_free(&p.curves[i]);
    for (int i = 0; p.heat_svg && i < p.nv; i++) free(p.heat_svg[i]);
    free(p.curves);
    free(p.heat_svg);
    free(p.file);
    free(p.acc_svg);
    free(p.loss_svg);
    table_free(&p.results);
    table_free(&p.diag);
    table_free(&p.variants);
    free(md);
    free(csv);
    free(json);
    free(cmd);
    free(rmd);
    free(html);
    return rc;
}
