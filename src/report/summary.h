/* Internal: qkv summarize. The results of several ablations (each the output directory of qkv
 * ablate, its results.json read into the results model, ablate/results.h) side by side: a table
 * with a row per variant and a column per ablation (the verdict and the difference from the
 * baseline, or bits per byte for text), ablations of one task at several model sizes as a size
 * table and plot, written as summary.md, summary.csv and summary.html; and the generated tables
 * that documents embed between markers, checked or rewritten in place (docs/ablate.md,
 * "Summaries across ablations").
 *
 *   summary.c         the ablations' results as the summary's columns
 *   summary_tables.c  the cells' text, the tables and the size plots
 *   summary_write.c   the documents, the CSV, the files
 *   summary_doc.c     the markers in a document: check or update
 *   doc_values.c      the inline markers: one number of an ablation in a sentence
 *   doc_gaps.c        the gap markers: each variant's gap to the baseline against training steps
 *   doc_claims.c      the claim markers: a sentence's finding as predicates over the results */
#ifndef QKV_SUMMARY_H
#define QKV_SUMMARY_H

#include "qkv_api.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "ablate/ablate.h"
#include "ablate/findings.h"
#include "ablate/results.h"
#include "report/report_data.h"

/* one ablation: a column of the table */
typedef struct qkv_sum_ablation {
    char dir[1024];                 /* as given */
    char label[192];                /* "recall d_model=64": the column's name, unique among the columns */
    qkv_ablate_config cfg;          /* what its results.json records of the sweep's config */
    qkv_ablate_results r;           /* its results.json (ablate/results.h's reader) */
    qkv_ablate_metric metric;       /* what the column measures: bits per byte for text (its tokens are bytes),
                                       else what the ablation compared on (accuracy, or a loss: lower is better) */
    bool text;
    bool bpb_from_loss;             /* bits per byte as eval loss / ln 2 (runs without eval_bpb) */
    bool recomputed;                /* the bits-per-byte statistics are computed from the runs (the ablation
                                       compared accuracy, or its runs record eval_bpb), not its own */
    qkv_metric_stats *stats;        /* r's variants: their numbers in the column's metric (ablate/findings.h) */
    int *at;                        /* the summary's variants: the index in r (-1: not in this ablation) */
} qkv_sum_ablation;

/* the summary's variant j in ablation a: its results, or NULL when a lacks it */
static inline const qkv_variant_result *qkv__sum_variant(const qkv_sum_ablation *a, int j) {
    return a->at[j] >= 0 ? &a->r.v[a->at[j]] : NULL;
}
/* its numbers in the column's metric (j must be in a) */
static inline const qkv_metric_stats *qkv__sum_stats(const qkv_sum_ablation *a, int j) { return &a->stats[a->at[j]]; }

typedef struct qkv_summary {
    qkv_sum_ablation *a;            /* n, in the order given */
    int n;
    char (*variants)[QKV_ABLATE_NAME]; /* every variant of any ablation, in the order they first appear */
    int n_variants;
    char baseline[QKV_ABLATE_NAME]; /* every ablation's */
} qkv_summary;

/* summary.c: read DIR/results.json of each of dirs[0..n) (n >= 1) with the results model's reader
 * (strict: a missing file, bad JSON, a key of the wrong type, an unknown baseline are one line in e
 * naming the file and key), two different baselines being an error too. 0, or -1 (s is then empty) */
QKV_INTERNAL int qkv__summary_load(qkv_summary *s, const char *const *dirs, int n, qkv_err *e);
QKV_INTERNAL void qkv__summary_free(qkv_summary *s);
/* whether an ablation's report was partial: runs missing, or finished runs it would still extend */
QKV_INTERNAL bool qkv__summary_partial(const qkv_sum_ablation *a);

/* ---- the rendered summary (summary_tables.c) ------------------------------------------------ */

/* ablations of one task at two or more model sizes */
typedef struct qkv_sum_sizes {
    char task[32];
    int n;                          /* sizes */
    int *d_model;                   /* n, ascending */
    int *variants;                  /* n_variants summary variant indices (those in any of the ablations) */
    int n_variants;
    char heading[96], alt[128];
    qkv_ablate_metric metric;          /* the ablations' (a task on two metrics makes two groups) */
    bool text;
    qkv_report_table values, params; /* variant x size: the metric with its interval; parameters */
    qkv_report_figure plot;         /* the metric against d_model, one line per variant */
} qkv_sum_sizes;

typedef struct qkv_sum_report {
    const qkv_summary *s;
    qkv_report_table main;          /* variant x ablation */
    qkv_sum_sizes *sizes;           /* one per task with several sizes, in the order tasks first appear */
    int n_sizes;
    bool any_accuracy, any_bpb, any_loss, any_partial, any_short; /* which notes apply */
} qkv_sum_report;

/* a column's metric in words, wherever the summary names it */
typedef struct qkv_sum_words {
    const char *numbers;            /* what its numbers are: "final evaluation accuracy (%)" */
    const char *head;               /* in a column's header: "verdict; \xce\x94 acc" */
    const char *axis;               /* on a size plot's axis: "final eval accuracy" */
    const char *by_size;            /* in a size plot's title: "final eval accuracy" */
} qkv_sum_words;
/* metric m's words (bits per token where the bits per byte's tokens are not bytes: !text) */
QKV_INTERNAL const qkv_sum_words *qkv__sum_words(qkv_ablate_metric m, bool text);
/* the tables and plots of s (which must outlive it); 0, or -1 when out of memory (then still safe to free) */
QKV_INTERNAL int qkv__sum_report_build(qkv_sum_report *r, const qkv_summary *s);
QKV_INTERNAL void qkv__sum_report_free(qkv_sum_report *r);

/* ---- documents and files (summary_write.c) ------------------------------------------------- */

/* which generated block a document embeds */
typedef enum qkv_sum_part {
    QKV_SUM_PART_MAIN,              /* the table with its notes */
    QKV_SUM_PART_SIZES,             /* each task's size tables (no plots) */
} qkv_sum_part;

/* the Markdown a marker block holds (malloc'd; NULL when out of memory) */
QKV_INTERNAL char *qkv__summary_block(const qkv_sum_report *r, qkv_sum_part part);
/* summary.md, summary.csv, summary.html and plots/size-TASK.svg into out_dir (made if needed), each
 * atomically; title NULL: "Summary of N ablations"; the table (Markdown) also to `table` if not NULL.
 * 0, or -1 with e */
QKV_INTERNAL int qkv__summary_write(const qkv_summary *s, const char *out_dir, const char *title, FILE *table,
                                   qkv_err *e);

/* ---- documents with generated blocks (summary_doc.c) --------------------------------------- */

/* Regenerate every marked block of the Markdown file at path (docs/ablate.md has the syntax) and
 * compare: 0 when every block is as generated, 1 when one differs (e, QKV_ERR_FAIL: "PATH:LINE: ..." naming the
 * first differing line; with update, the blocks are rewritten instead, the file replaced
 * atomically, and 0 returned), -1 on an error (a malformed marker, unreadable results: e). *blocks
 * gets the number of blocks, *changed how many differed. */
QKV_INTERNAL int qkv__summary_doc(const char *path, bool update, int *blocks, int *changed, int *claims, qkv_err *e);
/* the text of an inline marker <!-- qkv value: DIR VARIANT FIELD --> (doc_values.c: the fields and
 * their formats): one number of VARIANT in DIR/results.json; NULL with e */
QKV_INTERNAL char *qkv__doc_value(char *words, qkv_err *e);
/* the number FIELD (a value marker's field name, or fisher:OTHER) of variant v of r, unformatted, into
 * *x (NaN: not recorded); 0, or -1 with e (an unknown field or OTHER) */
QKV_INTERNAL int qkv__doc_number(const qkv_ablate_results *r, int v, const char *field, double *x, qkv_err *e);
/* a claim's tests (doc_claims.c): each test a claim's wording implies, for Holm's correction over the
 * document */
typedef struct qkv_doc_test {
    double p;                       /* the raw p-value */
    int line;                       /* the claim's line */
    char key[400];                  /* the predicate: a test stated twice is one hypothesis */
    char what[640];                 /* the predicate and the test, for a message */
} qkv_doc_test;
typedef struct qkv_doc_tests {
    qkv_doc_test *t;
    int n, cap;
} qkv_doc_tests;
/* the predicates `words` of a claim <!-- qkv claim: PRED[; PRED]... --> on line `line` (doc_claims.c: the
 * syntax, what each compares and which test it implies): 0 when every one holds (their tests appended
 * to *tests), 1 when one does not (why names it and what it found), -1 with e (a malformed predicate,
 * unreadable results) */
QKV_INTERNAL int qkv__doc_claim(const char *words, qkv_doc_tests *tests, int line, char *why, size_t n, qkv_err *e);
/* Holm's correction over the document's tests at 0.05 (adjusted: t->n each): -1 when every test is
 * significant (or there are none), the index of the first that is not, -2 when out of memory */
QKV_INTERNAL int qkv__doc_tests_holm(const qkv_doc_tests *t, double *adjusted);
QKV_INTERNAL void qkv__doc_tests_free(qkv_doc_tests *t);
/* the table of a gap marker <!-- qkv gap: DIR [steps=A,B] [variants=X,Y] --> (doc_gaps.c): each
 * variant's gap to the baseline at each step of DIR/results.json's curves (ablate/findings.h); NULL
 * with e (an accuracy ablation, an unknown variant or step, no curves: one line) */
QKV_INTERNAL char *qkv__doc_gap(char *words, qkv_err *e);
/* one cell of that table into out: a gap signed with three decimals, the baseline's own mean unsigned,
 * "—" without pairs */
QKV_INTERNAL void qkv__doc_gap_cell(const qkv_gap *a, bool baseline, char *out, size_t n);
/* the word of that table's trend t (ablate/findings.h) in a variant's row, or the baseline's (its own
 * loss improving where a gap closes); "—" for none. docs/ablate.md defines each */
QKV_INTERNAL const char *qkv__doc_gap_trend_word(qkv_gap_trend t, bool baseline);

#endif
