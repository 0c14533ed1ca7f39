/* The report's data (see report_data.h): the facts the summary paragraph states, and the
 * curves, tables, fields and plots built by the other report_*.c files. */
#include "report/report_data.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/strbuf.h"

/* the config's title, else "Ablation: <config file name without extension>" */
static void report_title(qkv_report *p) {
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

/* the task name (and whether tokens are bytes): the baseline's, else the effective config's */
static void read_task(qkv_report *p) {
    if (p->r->task[0]) {
        snprintf(p->task, sizeof p->task, "%s", p->r->task);
        p->text_task = strcmp(p->task, "text") == 0;
        return;
    }
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
static char *command(const qkv_report *p, const char *out_dir) {
    qkv_strbuf b;
    qkv__strbuf_init(&b);
    qkv__strbuf_puts(&b, "build/qkv ablate ");
    shell_word(&b, p->cfg->path);
    qkv__strbuf_puts(&b, " --out ");
    shell_word(&b, out_dir);
    return qkv__strbuf_take(&b);
}

/* the runs are a flat variant-major array; NULL when the results have none */
const qkv_run_result *qkv__report_run(const qkv_report *p, int v, int s) {
    if (!p->r->runs) return NULL;
    return &p->r->runs[(size_t)v * (size_t)p->cfg->n_seeds + (size_t)s];
}

/* the facts first (cheap, cannot fail), then the parts that allocate */
int qkv__report_build(qkv_report *p, const qkv_ablate_results *r, const char *out_dir) {
    memset(p, 0, sizeof *p);
    p->r = r;
    p->cfg = r->cfg;
    p->nv = r->cfg->n_variants;
    report_title(p);
    fmt_threshold(p->thr, sizeof p->thr, p->cfg->threshold);
    read_task(p);
    fmt_duration(p->duration, sizeof p->duration, r->wall_seconds);
    /* every run that failed, at every rate of a grid (all_runs); without all_runs, the chosen ones;
     * and what the finished runs took, each its whole time (a resumed run counts all its sessions) */
    double run_seconds = 0;
    if (r->all_runs)
        for (int k = 0; k < p->nv * r->n_lrs * p->cfg->n_seeds; k++) {
            p->failed_runs += !r->all_runs[k].ok;
            if (r->all_runs[k].ok && isfinite(r->all_runs[k].seconds)) run_seconds += r->all_runs[k].seconds;
        }
    else
        for (int i = 0; i < p->nv; i++) p->failed_runs += p->cfg->n_seeds - (r->v[i].runs_ok < 0 ? 0 : r->v[i].runs_ok);
    if (run_seconds > 0) fmt_duration(p->run_duration, sizeof p->run_duration, run_seconds);

    p->command = command(p, out_dir);
    p->curves = calloc((size_t)p->nv + 1, sizeof *p->curves);
    if (!p->command || !p->curves) return -1;
    for (int i = 0; i < p->nv; i++)
        if (qkv__report_curve_build(&p->curves[i], p, i)) return -1;
    if (qkv__report_tables_build(p) || qkv__report_fields_build(p) || qkv__report_plots_build(p)) return -1;
    return 0;
}

/* frees whatever a complete or failed qkv__report_build allocated */
void qkv__report_free(qkv_report *p) {
    for (int i = 0; p->curves && i < p->nv; i++) qkv__report_curve_free(&p->curves[i]);
    free(p->curves);
    qkv__report_table_free(&p->results);
    qkv__report_table_free(&p->diag);
    qkv__report_table_free(&p->variants);
    qkv__report_records_free(&p->variant_fields);
    qkv__report_records_free(&p->run_fields);
    for (int i = 0; p->plots && i < p->n_plots; i++) free(p->plots[i].svg);
    for (int i = 0; p->maps && i < p->nv; i++) free(p->maps[i].svg);
    free(p->plots);
    free(p->maps);
    free(p->command);
    memset(p, 0, sizeof *p);
}
