/* The report's data (see report_data.h): the facts the sentences state, then every other part
 * from its builder, each given what it is made from. */
#include "report/report_data.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/strbuf.h"

/* the config's title, else "Ablation: <config file name without extension>" */
static void report_title(char *dst, size_t n, const qkv_ablate_config *c) {
    if (c->title[0]) {
        snprintf(dst, n, "%s", c->title);
        return;
    }
    const char *base = strrchr(c->path, '/');
    base = base ? base + 1 : c->path;
    char name[sizeof c->path];
    snprintf(name, sizeof name, "%s", base);
    char *dot = strrchr(name, '.');
    if (dot && dot != name) *dot = 0;
    snprintf(dst, n, "Ablation: %s", name[0] ? name : "qkv");
}

/* a threshold (fraction) as a percentage, without needless decimals: 0.99 -> "99%" */
static void fmt_threshold(char *dst, size_t n, double t) {
    if (!isfinite(t)) snprintf(dst, n, "?");
    else snprintf(dst, n, "%.4g%%", t * 100);
}

/* seconds in the unit a reader wants: seconds, minutes or hours (with the seconds too) */
static void fmt_duration(char *dst, size_t n, double s) {
    if (!isfinite(s) || s < 0) snprintf(dst, n, "unknown");
    else if (s < 120) snprintf(dst, n, "%.1f s", s);
    else if (s < 7200) snprintf(dst, n, "%.1f min (%.0f s)", s / 60, s);
    else snprintf(dst, n, "%.2f h (%.0f s)", s / 3600, s);
}

/* s as one shell word: as is when it needs no quoting, else single-quoted */
static void shell_word(qkv_strbuf *b, const char *s) {
    bool plain = *s != 0;
    for (const char *c = s; *c; c++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_+-./=,:@%", *c)) plain = false;
    if (plain) {
        qkv__strbuf_puts(b, s);
        return;
    }
    qkv__strbuf_puts(b, "'");
    for (; *s; s++) qkv__strbuf_puts(b, *s == '\'' ? "'\\''" : (char[2]){*s, 0});
    qkv__strbuf_puts(b, "'");
}

/* the command that reruns this ablation into the same directory (reusing finished runs) */
static char *command(const qkv_ablate_config *c, const char *out_dir) {
    qkv_strbuf b;
    qkv__strbuf_init(&b);
    qkv__strbuf_puts(&b, "build/qkv ablate ");
    shell_word(&b, c->path);
    qkv__strbuf_puts(&b, " --out ");
    shell_word(&b, out_dir);
    return qkv__strbuf_take(&b);
}

/* what the sentences state; 0, or -1 when out of memory */
static int facts(qkv_report_facts *f, const qkv_ablate_results *r, const char *out_dir) {
    const qkv_ablate_config *c = r->cfg;
    int nv = c->n_variants;
    report_title(f->title, sizeof f->title, c);
    fmt_threshold(f->thr, sizeof f->thr, c->threshold);
    snprintf(f->task, sizeof f->task, "%s", r->task);
    f->text_task = !strcmp(r->task, "text");
    fmt_duration(f->duration, sizeof f->duration, r->wall_seconds);
    /* the runs not started; the diagnostics a variant with a finished run recorded (the
     * previous-position share and the values at step 0 only where runs of this qkv did); the text
     * task's baselines */
    f->xz_bpb = f->unigram_bpb = NAN;
    f->same_baselines = true;
    for (int i = 0; i < nv; i++) {
        const qkv_variant_result *v = &r->v[i];
        const qkv_attn_diag *d = &v->diag_start;
        f->not_started += v->not_started > 0 ? v->not_started : 0;
        f->has_prev_share |= v->runs_ok > 0 && isfinite(v->diag.prev_share);
        f->has_start |= v->runs_ok > 0 && (isfinite(d->diag_share) || isfinite(d->symmetry) ||
                                           isfinite(d->negative_mass) || isfinite(d->prev_share));
        if (!isfinite(v->xz_bpb) || !isfinite(v->unigram_bpb)) continue;
        if (isnan(f->xz_bpb)) f->xz_bpb = v->xz_bpb, f->unigram_bpb = v->unigram_bpb;
        else f->same_baselines &= v->xz_bpb == f->xz_bpb && v->unigram_bpb == f->unigram_bpb;
    }
    /* every run that failed (not one that was never started), at every rate of a grid (all_runs);
     * without all_runs, the chosen ones; and what the finished runs took, each its whole time (a resumed run counts all its sessions) */
    double run_seconds = 0;
    if (r->all_runs)
        for (int k = 0; k < nv * r->n_lrs * c->n_seeds; k++) {
            f->failed_runs += !r->all_runs[k].ok;
            if (r->all_runs[k].ok && isfinite(r->all_runs[k].seconds)) run_seconds += r->all_runs[k].seconds;
        }
    else
        for (int i = 0; i < nv; i++) f->failed_runs += c->n_seeds - (r->v[i].runs_ok < 0 ? 0 : r->v[i].runs_ok);
    f->failed_runs -= f->not_started; /* a partial sweep's: not failed */
    if (f->failed_runs < 0) f->failed_runs = 0;
    if (run_seconds > 0) fmt_duration(f->run_duration, sizeof f->run_duration, run_seconds);
    f->command = command(c, out_dir);
    return f->command ? 0 : -1;
}

/* the facts first, then each part from its inputs */
int qkv__report_build(qkv_report *p, const qkv_ablate_results *r, const char *out_dir) {
    memset(p, 0, sizeof *p);
    p->r = r;
    p->cfg = r->cfg;
    p->nv = r->cfg->n_variants;
    if (facts(&p->facts, r, out_dir) || qkv__ablate_findings(&p->findings, r) || !(p->curves = qkv__ablate_curves(r)) ||
        qkv__report_tables(&p->tables, r, &p->facts) || qkv__report_fields(&p->fields, r) ||
        qkv__report_figures(&p->figures, r, p->curves, p->facts.thr, p->facts.text_task))
        return -1;
    return 0;
}

/* frees whatever a complete or failed qkv__report_build allocated */
void qkv__report_free(qkv_report *p) {
    free(p->facts.command);
    qkv__ablate_findings_free(&p->findings);
    qkv__ablate_curves_free(p->curves, p->nv);
    qkv__report_tables_free(&p->tables);
    qkv__report_fields_free(&p->fields);
    qkv__report_figures_free(&p->figures);
    memset(p, 0, sizeof *p);
}
