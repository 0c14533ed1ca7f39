/* The ablation report's entry point: compute the data (report_data.c), arrange the documents
 * (report_layout.c), render every file (report_md.c, report_html.c, report_csv.c,
 * report_json.c) and write them, each atomically. */
#include "report/report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report_data.h"
#include "report/report_doc.h"
#include "io/fileio.h"
#include "io/strbuf.h"

int qkv__report_write_text(const char *dir, const char *name, const char *text, qkv_err *e) {
    char *path = qkv__pathf("%s/%s", dir, name);
    int rc = 0;
    if (!path) rc = qkv_err_set(e, QKV_ERR_FAIL, "out of memory");
    else if (qkv__write_file_atomic(path, text, strlen(text), e)) rc = -1;
    free(path);
    return rc;
}

int qkv__report_mkdirs(const char *out_dir, bool plots, qkv_err *e) {
    char *path = qkv__pathf("%s/%s", out_dir, QKV_REPORT_PLOTS);
    int rc = 0;
    if (!path) rc = qkv_err_set(e, QKV_ERR_FAIL, "out of memory");
    else if (qkv__mkdirs(plots ? path : out_dir, e)) rc = -1;
    free(path);
    return rc;
}

/* every figure that was drawn, under its path */
static int write_figures(const char *out_dir, const qkv_report_figure *f, int n, qkv_err *e) {
    for (int i = 0; i < n; i++)
        if (f[i].svg && qkv__report_write_text(out_dir, f[i].path, f[i].svg, e)) return -1;
    return 0;
}

/* r complete enough to report (its config, variants and seeds) and out_dir named; 0, or -1 with e */
static int check_results(const qkv_ablate_results *r, const char *out_dir, qkv_err *e) {
    if (!r || !r->cfg || !out_dir || !*out_dir || (r->cfg->n_variants > 0 && !r->v) || r->cfg->n_variants < 0 ||
        r->cfg->n_seeds < 0 || (r->cfg->n_seeds > 0 && !r->cfg->seeds)) {
        return qkv_err_set(e, QKV_ERR_FAIL, "ablate report: incomplete results");
    }
    return 0;
}

/* built like the whole report (qkv__report_build), so the plots are the ones it draws */
int qkv__report_write_plots(const qkv_ablate_results *r, const char *out_dir, char *names, size_t n, qkv_err *e) {
    if (check_results(r, out_dir, e)) return -1;
    qkv_report p;
    if (qkv__report_build(&p, r, out_dir)) {
        qkv__report_free(&p);
        return qkv_err_set(e, QKV_ERR_FAIL, "ablate report: out of memory");
    }
    int written = 0;
    size_t o = 0;
    if (names && n) names[0] = 0;
    if (qkv__report_mkdirs(out_dir, true, e) || write_figures(out_dir, p.figures.all, p.figures.n_plots, e))
        written = -1;
    for (int i = 0; written >= 0 && i < p.figures.n_plots; i++) {
        if (!p.figures.all[i].svg) continue;
        if (names && o < n) o += (size_t)snprintf(names + o, n - o, "%s%s", written ? ", " : "", p.figures.all[i].path);
        written++;
    }
    qkv__report_free(&p);
    return written;
}

/* everything is built in memory before the first file is written, so running out of memory
 * leaves the previous report's files as they were */
int qkv__report_write(const qkv_ablate_results *r, const char *out_dir, FILE *table_out, qkv_err *e) {
    if (check_results(r, out_dir, e) || qkv__report_mkdirs(out_dir, true, e)) return -1;

    int rc = -1;
    qkv_report p;
    qkv_report_doc results, page;
    char *md = NULL, *csv = NULL, *json = NULL, *rmd = NULL, *html = NULL;
    int built = qkv__report_build(&p, r, out_dir);
    qkv__report_doc_init(&results, p.facts.title);
    qkv__report_doc_init(&page, p.facts.title);
    if (built || qkv__report_layout_results(&results, &p) || qkv__report_layout_page(&page, &p)) goto oom;
    md = qkv__report_render_md(&results);
    csv = qkv__report_render_csv(&p.fields.variants);
    json = qkv__report_render_json(&p);
    rmd = qkv__report_render_md(&page);
    html = qkv__report_render_html(&page);
    if (!md || !csv || !json || !rmd || !html) goto oom;

    if (table_out) {
        fputs(md, table_out);
        fflush(table_out);
    }
    if (qkv__report_write_text(out_dir, "results.md", md, e) ||
        qkv__report_write_text(out_dir, "results.csv", csv, e) ||
        qkv__report_write_text(out_dir, "results.json", json, e) ||
        write_figures(out_dir, p.figures.all, p.figures.n, e) ||
        qkv__report_write_text(out_dir, "report.md", rmd, e) ||
        qkv__report_write_text(out_dir, "report.html", html, e))
        goto done;
    rc = 0;
    goto done;
oom:
    qkv_err_set(e, QKV_ERR_FAIL, "ablate report: out of memory");
done:
    qkv__report_doc_free(&results);
    qkv__report_doc_free(&page);
    qkv__report_free(&p);
    free(md);
    free(csv);
    free(json);
    free(rmd);
    free(html);
    return rc;
}

