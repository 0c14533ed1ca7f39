/* Internal: the ablation report's data, computed once from a qkv_ablate_results (ablate.h)
 * and then only read: report_layout.c arranges it into a document, report_md.c and
 * report_html.c render that document, report_csv.c and report_json.c render the fields.
 *
 * Where things are decided, so that an addition is one local change:
 *   - a column of the Markdown/HTML tables: a line in a column list in report_tables.c;
 *   - a column of results.csv or a key of results.json: a line in report_fields.c;
 *   - a plot: a line in report_plots.c's list (it then appears under "Training curves",
 *     is written to plots/ and is linked from report.md and inlined in report.html);
 *   - a curve metric over training steps: report_curves.c.
 * The renderers follow generically. */
#ifndef QKV_REPORT_DATA_H
#define QKV_REPORT_DATA_H

#include "qkv_api.h"

#include <stdbool.h>

#include "ablate/results.h"

#define QKV_REPORT_CELL 640             /* one table cell's text */
#define QKV_REPORT_PLOTS "plots"        /* the SVG files' directory, relative to the output directory */

/* ---- tables: cells as text, rendered as Markdown or HTML ----------------------------------- */

typedef struct qkv_report_table {
    int rows, cols;
    const char **head;                  /* cols headers (static text or owned by the qkv_report) */
    bool *right;                        /* cols: right-aligned (numbers) */
    char (*cell)[QKV_REPORT_CELL];      /* rows x cols, row-major */
} qkv_report_table;

/* the text of row r, column c */
static inline const char *qkv_report_cell(const qkv_report_table *t, int r, int c) {
    return t->cell[(size_t)r * (size_t)t->cols + (size_t)c];
}

/* ---- fields: typed values, rendered as CSV columns or JSON keys ---------------------------- */

typedef enum qkv_report_kind {
    QKV_REPORT_MISSING,                 /* CSV: the field's csv_missing text; JSON: null */
    QKV_REPORT_NUM,                     /* always finite (a non-finite number is MISSING) */
    QKV_REPORT_INT,
    QKV_REPORT_STR,
    QKV_REPORT_BOOL,
} qkv_report_kind;

typedef struct qkv_report_value {
    qkv_report_kind kind;
    double num;
    long long i;
    const char *str;                    /* points into the results */
    bool b;
} qkv_report_value;

typedef struct qkv_report_field {
    const char *csv;                    /* results.csv column name; NULL: not in the CSV */
    const char *json;                   /* results.json key; NULL: not in the JSON */
    const char *csv_missing;            /* the CSV text of a missing value; NULL: empty */
} qkv_report_field;

/* a row of values per variant (or per run), one column per field */
typedef struct qkv_report_records {
    int rows, n_fields;
    qkv_report_field *fields;           /* n_fields */
    qkv_report_value *v;                /* rows x n_fields, row-major */
} qkv_report_records;

/* the value of row r, field f */
static inline const qkv_report_value *qkv_report_value_at(const qkv_report_records *rec, int r, int f) {
    return &rec->v[(size_t)r * (size_t)rec->n_fields + (size_t)f];
}

/* ---- curves: a variant's evaluations over training steps, summarised over seeds ------------ */

enum { QKV_REPORT_ACC, QKV_REPORT_LOSS, QKV_REPORT_METRICS };

/* mean, minimum and maximum over the finished runs at each step (NaN: no run has a value) */
typedef struct qkv_report_band {
    double *mean, *lo, *hi;
} qkv_report_band;

typedef struct qkv_report_curve {
    int n;                              /* evaluated steps (0: no finished run has any) */
    double *x;                          /* n steps; owns the one allocation behind every array */
    qkv_report_band y[QKV_REPORT_METRICS];
} qkv_report_curve;

/* ---- figures: SVG files under plots/ ---------------------------------------------------------- */

typedef struct qkv_report_figure {
    char path[QKV_ABLATE_NAME + 64];    /* relative to the output directory: "plots/accuracy.svg" */
    char alt[QKV_ABLATE_NAME + 64];     /* what it shows, in words (Markdown's alt text) */
    char *svg;                          /* NULL: no figure */
} qkv_report_figure;

/* ---- the report --------------------------------------------------------------------------- */

typedef struct qkv_report {
    const qkv_ablate_results *r;
    const qkv_ablate_config *cfg;
    int nv;                             /* variants */
    char title[1100];
    char thr[32];                       /* the threshold as a percentage: "99%" */
    char task[64];                      /* the task's name from the effective config, or "" */
    bool text_task;                     /* its tokens are bytes: label them as characters */
    char duration[64];                  /* this invocation's wall time in words (reused runs cost it nothing) */
    char run_duration[64];              /* the finished runs' own times, summed, in words ("": none recorded) */
    int failed_runs;
    char *command;                      /* the shell command that runs the ablation again */
    char steps_head[64];                /* the results table's verdicts column header */
    char delta_head[QKV_ABLATE_NAME + 48]; /* its difference-from-the-baseline column header */
    qkv_report_curve *curves;           /* nv */
    qkv_report_table results, diag, variants;
    qkv_report_records variant_fields;  /* nv rows */
    qkv_report_records run_fields;      /* nv x n_seeds rows, variant-major; 0 without runs */
    qkv_report_figure *plots;           /* n_plots summary plots, in report order */
    int n_plots;
    qkv_report_figure *maps;            /* nv attention maps (svg NULL: none recorded) */
} qkv_report;

/* report_data.c: everything above from r (out_dir goes into the command); 0, or -1 when out
 * of memory (p is then still safe to free) */
QKV_INTERNAL int qkv__report_build(qkv_report *p, const qkv_ablate_results *r, const char *out_dir);
/* frees what qkv__report_build allocated, complete or not */
QKV_INTERNAL void qkv__report_free(qkv_report *p);
/* run s of variant v, or NULL when the results carry no runs */
QKV_INTERNAL const qkv_run_result *qkv__report_run(const qkv_report *p, int v, int s);

/* report_curves.c: variant v's curve (n = 0 without evaluations); 0 or -1 (out of memory) */
QKV_INTERNAL int qkv__report_curve_build(qkv_report_curve *c, const qkv_report *p, int v);
/* frees a curve's arrays */
QKV_INTERNAL void qkv__report_curve_free(qkv_report_curve *c);

/* report_tables.c: p->results, p->diag and p->variants; 0 or -1 (out of memory) */
QKV_INTERNAL int qkv__report_tables_build(qkv_report *p);
/* frees a table's arrays (its headers are borrowed) */
QKV_INTERNAL void qkv__report_table_free(qkv_report_table *t);

/* report_fields.c: p->variant_fields and p->run_fields; 0 or -1 (out of memory) */
QKV_INTERNAL int qkv__report_fields_build(qkv_report *p);
/* frees the records' arrays (their strings are borrowed) */
QKV_INTERNAL void qkv__report_records_free(qkv_report_records *rec);

/* report_plots.c: p->plots and p->maps from p->curves and the heatmaps; 0 or -1 (out of
 * memory, or a heatmap the SVG writer refused) */
QKV_INTERNAL int qkv__report_plots_build(qkv_report *p);

#endif
