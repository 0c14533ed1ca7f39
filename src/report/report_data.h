/* Internal: the report's data. First the rendering toolkit's parts (tables of text cells, typed
 * fields, figures), which the report and qkv summarize both fill; then the ablation
 * report, built once from the results model (ablate/results.h) and then only read:
 * report_layout.c arranges it into a document, report_md.c and report_html.c render that
 * document, report_csv.c and report_json.c render the fields.
 *
 * Each part of the report is made by one builder from its inputs, in report_data.c's order:
 *   - the facts the sentences state (title, threshold, task, durations): report_data.c;
 *   - the findings (sides, pairs, what the seeds can show): ablate/findings.h;
 *   - a curve metric over training steps: ablate/curves.c;
 *   - a column of the Markdown/HTML tables: a line in a column list in report_tables.c;
 *   - a column of results.csv or a key of results.json: a line in report_fields.c (a new key of
 *     results.json: first a row of its schema, ablate/results_schema.h);
 *   - a plot: a line in report_plots.c's list (it then appears under "Training curves", is written
 *     to plots/, linked from report.md and inlined in report.html).
 * The renderers follow generically. */
#ifndef QKV_REPORT_DATA_H
#define QKV_REPORT_DATA_H

#include "qkv_api.h"

#include <math.h>
#include <stdbool.h>

#include "ablate/curves.h"
#include "ablate/findings.h"
#include "ablate/results.h"
#include "ablate/results_schema.h"

#define QKV_REPORT_CELL 640             /* one table cell's text */
#define QKV_REPORT_PLOTS "plots"        /* the SVG files' directory, relative to the output directory */

/* ---- tables: cells as text, rendered as Markdown or HTML ----------------------------------- */

typedef struct qkv_report_table {
    int rows, cols;
    char (*head)[QKV_REPORT_CELL];      /* cols headers, written by the table's maker */
    bool *right;                        /* cols: right-aligned (numbers) */
    char (*cell)[QKV_REPORT_CELL];      /* rows x cols, row-major */
    bool markdown;                      /* the text is Markdown already (quoted from a document): written as it
                                           is, not escaped (report_md.c only) */
} qkv_report_table;

/* the text of row r, column c (its maker writes it there) */
static inline char *qkv_report_cell(const qkv_report_table *t, int r, int c) {
    return t->cell[(size_t)r * (size_t)t->cols + (size_t)c];
}

/* report_tables.c: the cells' number formats, the report's and qkv summarize's */
#define QKV_REPORT_DASH "\xe2\x80\x94"  /* em dash: a missing value */
/* v with d decimals, a dash when not finite */
QKV_INTERNAL void qkv__report_fixed(char *dst, size_t n, double v, int d);
/* "mean [lo, hi]" on metric m's scale (accuracy in percent with 1 decimal, losses in nats or bits
 * with 3), "+mean [lo, hi]" when sign and the mean is positive (a difference) */
QKV_INTERNAL void qkv__report_interval(char *dst, size_t n, qkv_ablate_metric m, double mean, double lo, double hi,
                                       bool sign);

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
    const char *str;                    /* borrowed from what the records were made from */
    bool b;
} qkv_report_value;

/* a value of each kind (a non-finite number is missing) */
static inline qkv_report_value qkv_report_missing(void) { return (qkv_report_value){.kind = QKV_REPORT_MISSING}; }
static inline qkv_report_value qkv_report_num(double x) {
    return isfinite(x) ? (qkv_report_value){.kind = QKV_REPORT_NUM, .num = x} : qkv_report_missing();
}
static inline qkv_report_value qkv_report_int(long long i) {
    return (qkv_report_value){.kind = QKV_REPORT_INT, .i = i};
}
static inline qkv_report_value qkv_report_str(const char *s) {
    return (qkv_report_value){.kind = QKV_REPORT_STR, .str = s};
}
static inline qkv_report_value qkv_report_bool(bool b) {
    return (qkv_report_value){.kind = QKV_REPORT_BOOL, .b = b};
}

typedef struct qkv_report_field {
    const char *csv;                    /* the CSV column's name; NULL: not in the CSV */
    const char *json;                   /* the JSON key; NULL: not in the JSON */
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

/* report_doc.c: room for rows x cols cells and cols headers, or rows x n_fields values; 0 or -1
 * (out of memory: then still safe to free) */
QKV_INTERNAL int qkv__report_table_alloc(qkv_report_table *t, int rows, int cols);
QKV_INTERNAL void qkv__report_table_free(qkv_report_table *t);
QKV_INTERNAL int qkv__report_records_alloc(qkv_report_records *rec, int rows, int n_fields);
QKV_INTERNAL void qkv__report_records_free(qkv_report_records *rec);

/* ---- figures: SVG files under plots/ ---------------------------------------------------------- */

typedef struct qkv_report_figure {
    char path[QKV_ABLATE_NAME + 64];    /* relative to the output directory: "plots/accuracy.svg" */
    char alt[QKV_ABLATE_NAME + 64];     /* what it shows, in words (Markdown's alt text) */
    char *svg;                          /* NULL: no figure */
} qkv_report_figure;

/* report_plots.c: name as a part of a file name: as it is when every character is one of A-Z a-z
 * 0-9 _ + . -, else with '_' for the others and "-index" after it, so that two cleaned names
 * cannot collide (index < 0: nothing after it) */
QKV_INTERNAL void qkv__report_file_part(char *dst, size_t n, const char *name, int index);

/* ---- the report's parts, each its builder's product ------------------------------------------ */

/* what the sentences state about the sweep, in words */
typedef struct qkv_report_facts {
    char title[1100];
    char thr[32];                       /* the threshold as a percentage: "99%" */
    char task[64];                      /* the baseline's task, or "" */
    bool text_task;                     /* its tokens are bytes: label them as characters */
    char duration[64];                  /* this invocation's wall time in words (reused runs cost it nothing) */
    char run_duration[64];              /* the finished runs' own times, summed, in words ("": none recorded) */
    int failed_runs;
    int not_started;                    /* runs no session began (a partial sweep's) */
    bool has_prev_share;                /* a variant with a finished run has a previous-position share (runs
                                           of an older qkv recorded none): its column and note appear */
    bool has_start;                     /* one has its diagnostics at step 0 (train/observe.h): likewise */
    double xz_bpb, unigram_bpb;         /* the text task: the held-out bytes' baselines when every variant
                                           has the same (else NaN, and same_baselines false) */
    bool same_baselines;
    char *command;                      /* the shell command that runs the ablation again */
} qkv_report_facts;

/* report_tables.c: the results, attention diagnostics and variants tables */
typedef struct qkv_report_tables {
    qkv_report_table results, diag, variants;
} qkv_report_tables;

/* report_fields.c: results.csv's columns and results.json's keys */
typedef struct qkv_report_fields {
    qkv_report_records variants;        /* a row per variant */
    qkv_report_records runs;            /* a row per run of all_runs (plan order); none without all_runs */
} qkv_report_fields;

/* report_plots.c: the summary plots and each variant's attention map */
typedef struct qkv_report_figures {
    qkv_report_figure *all;             /* n: the plots, then the maps */
    int n;
    int n_plots;                        /* the plots: all[0 .. n_plots), in report order */
    const qkv_report_figure *maps;      /* all + n_plots: one per variant (svg NULL: none recorded) */
} qkv_report_figures;

typedef struct qkv_report {
    const qkv_ablate_results *r;
    const qkv_ablate_config *cfg;       /* r's */
    int nv;                             /* variants */
    qkv_report_facts facts;
    qkv_ablate_findings findings;
    qkv_ablate_curve *curves;           /* nv (ablate/curves.h) */
    qkv_report_tables tables;
    qkv_report_fields fields;
    qkv_report_figures figures;
} qkv_report;

/* report_data.c: every part from r, in order (out_dir goes into the command); 0, or -1 when out
 * of memory (p is then still safe to free) */
QKV_INTERNAL int qkv__report_build(qkv_report *p, const qkv_ablate_results *r, const char *out_dir);
/* frees what qkv__report_build allocated, complete or not */
QKV_INTERNAL void qkv__report_free(qkv_report *p);

/* report_tables.c: r's tables, with the columns its facts call for; 0 or -1 (out of memory) */
QKV_INTERNAL int qkv__report_tables(qkv_report_tables *t, const qkv_ablate_results *r, const qkv_report_facts *f);
QKV_INTERNAL void qkv__report_tables_free(qkv_report_tables *t);

/* report_json.c: results.json (the configuration, the variants and their runs); malloc'd, NULL when
 * out of memory */
QKV_INTERNAL char *qkv__report_render_json(const qkv_report *p);

/* report_fields.c: r's fields; 0 or -1 (out of memory) */
QKV_INTERNAL int qkv__report_fields(qkv_report_fields *f, const qkv_ablate_results *r);
/* report_fields.c: variant i's value under results.json's key (missing for a key it has not) */
QKV_INTERNAL qkv_report_value qkv__report_variant_value(const qkv_ablate_results *r, int i, qkv_results_key key);
QKV_INTERNAL void qkv__report_fields_free(qkv_report_fields *f);

/* report_plots.c: r's plots from its curves (one per variant) and its heatmaps, thr the
 * threshold in words, text: label tokens as characters; 0 or -1 (out of memory, or a heatmap the
 * SVG writer refused) */
QKV_INTERNAL int qkv__report_figures(qkv_report_figures *f, const qkv_ablate_results *r,
                                     const qkv_ablate_curve *curves, const char *thr, bool text);
QKV_INTERNAL void qkv__report_figures_free(qkv_report_figures *f);

#endif
