/* qkv ablate: a base config, named variants (lists of --set overrides) and seeds, run as
 * separate processes, aggregated into a results table, diagnostics, plots and a report. */
#ifndef QKV_ABLATE_H
#define QKV_ABLATE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define QKV_ABLATE_NAME 64

typedef struct qkv_ablate_variant {
    char name[QKV_ABLATE_NAME];     /* [A-Za-z0-9_+.-], used in paths */
    char **sets;                    /* "path.to.key=value" overrides, applied after the common ones */
    int n_sets;
} qkv_ablate_variant;

typedef struct qkv_ablate_config {
    char path[1024];                /* the ablation config file */
    char base_path[1024];           /* the base training config (resolved against path's directory), or "" */
    char *base_json;                /* the inline base config, or NULL */
    char **sets;                    /* overrides applied to every variant */
    int n_sets;
    qkv_ablate_variant *variants;
    int n_variants;
    long long *seeds;
    int n_seeds;
    double threshold;               /* eval accuracy that counts as solved */
    int example;                    /* index of the evaluation example whose attention is drawn */
    char title[256];                /* report title ("" = from the file name) */
} qkv_ablate_config;

/* parse (strict: unknown keys, wrong types, duplicate variant names are errors naming the key) */
int qkv_ablate_config_load(qkv_ablate_config *c, const char *path, char *err, int errlen);
void qkv_ablate_config_free(qkv_ablate_config *c);

/* One training run's record, read back from its run directory. */
typedef struct qkv_run_result {
    int variant, seed_index;
    long long seed;
    bool ok;                        /* finished with a summary.json */
    int n;                          /* evaluation points */
    long long *step;                /* n each */
    double *eval_acc, *eval_loss;
    double final_acc, final_loss, train_loss, seconds;
    long long steps_to_threshold;   /* first evaluated step with eval_acc >= threshold; -1 never */
} qkv_run_result;

/* Attention diagnostics, averaged over layers, heads, seeds and the query rows of the
 * evaluation examples that attend somewhere. */
typedef struct qkv_attn_diag {
    double diag_share;              /* mean weight a query puts on its own position */
    double first_share;             /* mean weight on the first position */
    double entropy;                 /* mean entropy of a query's weights (nats) */
    double entropy_uniform;         /* the same for uniform causal attention, for scale */
} qkv_attn_diag;

/* The attention weights of one fixed evaluation example (seed index 0 run). */
typedef struct qkv_heatmap {
    int layers, heads, T;
    float *w;                       /* (layers, heads, T, T): [l][h][query][key] */
    int32_t *tokens;                /* (T) the example's input tokens */
    int32_t *targets;               /* (T) its targets (-100: no loss) */
} qkv_heatmap;

typedef struct qkv_variant_result {
    char name[QKV_ABLATE_NAME];
    char sets[512];                 /* the variant's overrides, joined with spaces */
    int64_t attn_params, params;
    int runs_ok;
    double acc_mean, acc_std, acc_min, loss_mean, loss_std; /* final evaluation, over seeds */
    long long steps_median;         /* median over seeds of the steps to threshold, a seed that never
                                       reached it counting as infinitely late; -1 when the median is "never" */
    int reached;                    /* seeds that reached the threshold */
    double seconds;                 /* mean wall time of a run */
    qkv_attn_diag diag;
    qkv_heatmap heat;
} qkv_variant_result;

typedef struct qkv_ablate_results {
    const qkv_ablate_config *cfg;
    qkv_variant_result *v;          /* cfg->n_variants */
    qkv_run_result *runs;           /* n_variants x n_seeds, variant-major */
    char *base_config_json;         /* the effective config of the first variant's first run */
    const char *version;
    double wall_seconds;            /* this invocation (finished runs it reused cost nothing) */
    int jobs;
} qkv_ablate_results;

/* Write results.md, results.csv, results.json, plots/ (SVG files), report.md and report.html into
 * out_dir (atomically, file by file); also print the markdown table to `table` if non-NULL. */
int qkv_ablate_write_report(const qkv_ablate_results *r, const char *out_dir, FILE *table,
                            char *err, int errlen);

/* Run every variant x seed (skipping finished runs, resuming interrupted ones), `jobs` processes
 * at a time, then aggregate and report. train_cmd (NULL-terminated; train_cmd[0] a path) trains
 * one run: the runner appends "CONFIG --out RUN_DIR" for a new run and "--resume RUN_DIR" for a
 * run with a checkpoint; it must write the run directory of train/run_dir.h and exit 0 when the
 * run is done (the qkv command passes {qkv, "train", "--threads", "1", "--quiet"}). 0, or -1. */
int qkv_ablate_run(const qkv_ablate_config *c, const char *out_dir, int jobs, const char *const *train_cmd,
                   bool quiet, char *err, int errlen);

#endif
