/* Internal: an ablation's results as the runner aggregates them and the report renders them. */
#ifndef QKV_ABLATE_RESULTS_H
#define QKV_ABLATE_RESULTS_H

#include "qkv_api.h"

#include <stdio.h>
#include "ablate/ablate.h"

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
QKV_INTERNAL int qkv_ablate_write_report(const qkv_ablate_results *r, const char *out_dir, FILE *table,
                            char *err, int errlen);

#endif
