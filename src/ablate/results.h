/* Internal: an ablation's results, the one model of them: aggregate.c makes it from the runs of a
 * sweep, results_read.c from the results.json that the report wrote, and the report, qkv summarize
 * and the documents' generated blocks (src/report/) all start from it. results.json's format, the
 * keys both sides name, is results_schema.h. */
#ifndef QKV_ABLATE_RESULTS_H
#define QKV_ABLATE_RESULTS_H

#include "qkv_api.h"

#include "tensor/error.h"

#include <stdio.h>
#include "ablate/ablate.h"

/* The statistics' settings: the bootstrap's resamples and level, the sign-flip test's random
 * patterns (beyond QKV_STATS_EXACT_MAX seeds), the significance level, and the seeds of variant
 * v's draws (its means' intervals, its comparison with the baseline; each uses seed and seed + 1).
 * aggregate.c computes the accuracy statistics with them and qkv summarize the bits per byte of
 * text tasks, so both give the same kind of interval for the same numbers. */
enum { QKV_ABLATE_RESAMPLES = 10000, QKV_ABLATE_SIGNFLIP_RESAMPLES = 100000 };
#define QKV_ABLATE_LEVEL 0.95
/* a run is flat at the floor when, over the last half of its evaluations, its validation accuracy
 * never rose more than this above the accuracy of a model that never retrieves */
#define QKV_FLOOR_MARGIN 0.02
#define QKV_ABLATE_ALPHA 0.05
#define QKV_ABLATE_SEED_MEANS(v) (0x5eed0000u + (uint64_t)(v) * 16)
#define QKV_ABLATE_SEED_PAIRED(v) (0xd1ff0000u + (uint64_t)(v) * 16)

/* how a sweep's rates were chosen, in results.json's words: from its grid, or set per variant */
#define QKV_RATE_RULE_GRID "each variant's rate of the grid with the best mean validation accuracy (then loss) over the reported seeds"
#define QKV_RATE_RULE_SET "each variant's own optim.lr, set in the ablation config (a pilot's choice where one is named)"

/* One training run's record, read back from its run directory. */
typedef struct qkv_run_result {
    int variant, lr_index, seed_index;
    long long seed;
    double lr;                      /* its optim.lr */
    bool ok;                        /* finished with a summary.json */
    bool started;                   /* a session of it began (its directory holds a trace of one); read from
                                     * results.json: as ok (the variant's not_started counts the others) */
    int n;                          /* evaluation points */
    long long *step;                /* n each */
    double *eval_acc, *eval_loss;   /* the evaluation set (what is reported) */
    double *val_acc, *val_loss;     /* the validation set (what is chosen on; NaN without one) */
    /* losses in nats per token; for text read as subword pieces (task.tokenizer), per byte of
     * text (its bits per byte x ln 2): the unit a sweep on bits per byte compares, the same for
     * byte and token models (train_loss stays per token) */
    double final_acc, final_loss, train_loss, seconds;
    double val_final_acc, val_final_loss;
    long long steps;                /* the steps it ran: its budget */
    bool solved, improving;         /* its verdict (summary.json, train/verdict.h) */
    long long steps_to_threshold;   /* solved_at: the first evaluated step at the threshold; -1 none */
    long long flat_since;           /* -1 while improving */
    double xz_bpb, unigram_bpb;     /* the text task: its baselines in bits per byte (summary.json); NaN otherwise */
    double bytes_per_token;         /* the text task: its evaluation bytes per token, measured (summary.json); NaN
                                     * otherwise or not recorded (older runs) */
    double eval_bpb;                /* its evaluation bits per byte where results.json records one (qkv writes none:
                                     * NaN, and bits per byte are the evaluation loss / ln 2) */
} qkv_run_result;

/* Attention diagnostics, averaged over layers, heads, seeds and the query rows of the
 * evaluation examples that attend somewhere. */
typedef struct qkv_attn_diag {
    double diag_share;              /* mean weight a query puts on its own position */
    double first_share;             /* mean weight on the first position */
    double entropy;                 /* mean entropy of a query's weights (nats) */
    double entropy_uniform;         /* the same for uniform causal attention, for scale */
    /* the shape of the heads' score matrices (nn/score.h), averaged over layers, heads and seeds: */
    double symmetry;                /* symmetry score: 1 symmetric, -1 antisymmetric, 0 neither */
    double negative_mass;           /* the negative share of the symmetric part's eigenvalue mass */
    /* the symmetry score per layer and head, averaged over seeds ([l][h]; NULL: none recorded) */
    double *symmetry_grid;
    int grid_layers, grid_heads;
    double prev_share;              /* mean weight on the position just before a query's own (NaN: not recorded) */
} qkv_attn_diag;

/* The attention weights of one fixed evaluation example (seed index 0 run). */
typedef struct qkv_heatmap {
    int layers, heads, T;
    float *w;                       /* (layers, heads, T, T): [l][h][query][key] */
    int32_t *tokens;                /* (T) the example's input tokens */
    int32_t *targets;               /* (T) its targets (-100: no loss) */
} qkv_heatmap;

/* DIR/observed.safetensors' weights, tokens and targets (what the run recorded of its trained
 * model, train/observe.h) into *h and the example's index into *example: 0, or -1 with one line
 * in e (QKV_ERR_USAGE when the run recorded none); free with qkv__heatmap_free */
QKV_INTERNAL int qkv__run_heatmap(const char *dir, qkv_heatmap *h, int *example, qkv_err *e);
QKV_INTERNAL void qkv__heatmap_free(qkv_heatmap *h);

/* A variant's learning rate: how its runs did on validation at each rate of the grid. */
typedef struct qkv_lr_result {
    double lr;
    int runs_ok;
    double val_acc_mean, val_acc_min, val_acc_max, val_loss_mean;
} qkv_lr_result;

typedef struct qkv_variant_result {
    char name[QKV_ABLATE_NAME];
    char sets[512];                 /* the variant's overrides, joined with spaces */
    int64_t attn_params, params;    /* -1: not recorded (read from a results.json without them) */
    int64_t baseline_params;        /* the baseline's count, for a matched control */
    int matched_d_ff;               /* the width that matches it (0: not matched) */
    qkv_lr_result *lrs;             /* n_lrs: the grid (one entry without one) */
    int lr_chosen;                  /* the rate with the best mean validation accuracy (then loss) */
    double lr;                      /* its value */
    /* the chosen rate's runs, over seeds (final evaluation) */
    int runs_ok;
    double acc_mean, acc_std, acc_min, loss_mean, loss_std;
    double acc_ci_lo, acc_ci_hi, loss_ci_lo, loss_ci_hi; /* 95% bootstrap intervals of the means */
    /* against the baseline, paired by seed: mean accuracy difference, its interval, the
     * two-sided sign-flip p-value, Holm's adjustment over all variants, significant at 0.05 */
    int pairs;
    double delta, delta_ci_lo, delta_ci_hi, p_value, p_holm;
    bool significant;
    /* verdicts: solved seeds with the median step (unsolved censored), unsolved seeds with
     * their budgets and how many were still improving, flat since (earliest, latest) */
    int solved, unsolved, unsolved_improving;
    int unsolved_floor;             /* of the unsolved, those flat at the floor (qkv_task_floors' no_retrieval;
                                       aggregate.c), counted in neither unsolved_improving nor as flat since */
    long long steps_median;         /* median solved_at, unsolved counted as later than any; -1: not reached */
    long long budget_min, budget_max, flat_min, flat_max; /* INT64_MAX and -1 where there is none; read from a
                                     * results.json without runs, the budgets are its variant's budget key */
    char verdicts[256];             /* "3/5 solved (median step 850), 2/5 unsolved at 4000, flat since 1500" */
    int reached;                    /* = solved (kept for the older columns) */
    int not_started;                /* its runs (every rate and seed) that no session began: a partial
                                     * sweep's (-1: not recorded, read from a results.json without it) */
    double seconds;                 /* mean wall time of a run */
    qkv_attn_diag diag;
    /* the same of the chosen runs' models at step 0, before their first update, over the runs that
     * recorded it (train/observe.h; no grid); NaN where none did (older runs, older results.json) */
    qkv_attn_diag diag_start;
    qkv_heatmap heat;
    /* the text task: the baselines of its first finished chosen run (NaN: none), and the sample
     * of its first seed's chosen run (as the run recorded it, train/observe.h; NULL: none, or not the text task) */
    double xz_bpb, unigram_bpb;
    char *sample;
} qkv_variant_result;

typedef struct qkv_ablate_results {
    const qkv_ablate_config *cfg;
    qkv_variant_result *v;          /* cfg->n_variants */
    qkv_run_result *runs;           /* the chosen rate's runs: n_variants x n_seeds, variant-major (copies of
                                     * all_runs' entries, sharing their arrays; without all_runs, their own) */
    qkv_run_result *all_runs;       /* every run: n_variants x n_lrs x n_seeds (plan.h order); may be NULL */
    int n_lrs;                      /* learning rates per variant (1 without a grid) */
    int significant;                /* variants whose difference from the baseline is significant */
    long long max_solved_at;        /* the sweep's largest solved_at (-1: none), which set the budget */
    int missing;                    /* runs without a finished session (a partial report); -1: not recorded */
    int unobserved;                 /* finished chosen runs without recorded attention diagnostics */
    int unobserved_start;           /* finished chosen runs without those of their step 0 (-1: not known) */
    /* how the runs drew their samples (train/observe.h), for the report to say */
    const char *sample_prompt;
    int sample_bytes, sample_seed;
    double sample_temperature;
    int to_extend;                  /* finished runs that the sweep would still extend; -1: not recorded */
    char *base_config_json;         /* the effective config of the first variant's first run */
    char task[32];                  /* the baseline's task ("recall", "text"; "" unknown) */
    double chance, no_retrieval;    /* recall's floors of accuracy (qkv_task_floors), as the baseline's task
                                       draws examples; NaN: another task, or not recorded */
    int d_model, layers, heads;     /* the baseline's model size (0: unknown), for sizes across ablations */
    char version[32];               /* of the qkv that wrote the report ("": unknown) */
    /* how the text was read (results.json's text object): the tokenizer ("": not the text task, or not
     * recorded), its pieces (0: bytes) and the evaluation bytes per token the first finished run
     * measured (NaN: not measured, as runs before it was recorded) */
    char tokenizer[16];
    int pieces;
    double bytes_per_token;
    /* how each variant's rate was chosen (results.json's rate_choice object): in words as read ("": not
     * recorded; the report writes QKV_RATE_RULE_GRID or _SET),
     * and the pilot sweep that chose the rates set per variant ("": none named) */
    char rate_rule[1024];
    double rate_grid[QKV_ABLATE_MAX_PILOT]; /* the pilot's grid and seeds (n_* 0: not recorded) */
    int n_rate_grid;
    long long pilot_seeds[QKV_ABLATE_MAX_PILOT];
    int n_pilot_seeds;
    char pilot[1024];
    double wall_seconds;            /* this invocation (finished runs it reused cost nothing) */
    int jobs;
} qkv_ablate_results;

/* Aggregate the finished runs of p (ablate/plan.h): choose each variant's learning rate, the
 * intervals, the tests and the verdicts; attention diagnostics of the chosen runs (quiet: no
 * warnings). r->cfg is p's config; free with qkv__ablate_results_free. 0, or -1 (out of memory). */
struct qkv_ablate_plan;
QKV_INTERNAL int qkv__ablate_aggregate(qkv_ablate_results *r, const struct qkv_ablate_plan *p, bool quiet,
                                       qkv_err *e);
QKV_INTERNAL void qkv__ablate_results_free(qkv_ablate_results *r);

/* Read DIR/results.json (the report's, report_json.c) into r and what it records of the sweep's
 * config into c (title, threshold, baseline, metric, seeds, learning rates, variant names; r->cfg =
 * c), strictly: a missing directory or file, bad JSON, a key of the wrong type or range, a variant
 * named twice or an unknown baseline is one line in e naming the file and the key. Keys an older
 * qkv did not write are optional. The chosen runs are placed by seed (r->runs, a run that is not
 * there: not ok); every run is in r->all_runs when each variant lists one per rate and seed (else
 * all_runs is NULL). What results.json does not hold (the heatmaps, samples, score grids, the base
 * config, the unsolved runs' trends when it has no runs) is left empty. 0, or -1 (r and c are then
 * empty); free with qkv__ablate_results_free and qkv_ablate_config_free. */
QKV_INTERNAL int qkv__ablate_results_read(qkv_ablate_results *r, qkv_ablate_config *c, const char *dir, qkv_err *e);

/* Each rate's validation numbers of one variant over its runs there (runs[l * ns + s], l < nl):
 * finished runs, mean, least and most validation accuracy (evaluation accuracy without a
 * validation set), mean validation loss (NaN without a finished run). */
QKV_INTERNAL void qkv__ablate_rate_stats(qkv_lr_result *lrs, const qkv_run_result *runs, int nl, int ns);

/* Every variant of vr[0..nv) against the baseline on one number per run, paired by seed: x[v * ns + s]
 * is variant v's number at seed s, counted where counted[v * ns + s] is (a pair: both counted; at
 * most 512 pairs). Into each: pairs, delta (the mean paired difference), delta_ci_lo and _hi (its
 * bootstrap interval, seeded with QKV_ABLATE_SEED_PAIRED(v)), p_value (the two-sided sign-flip test,
 * seed + 1), p_holm (Holm over every variant but the baseline) and significant (at
 * QKV_ABLATE_ALPHA); the baseline's are NaN. The variants that are significant, or -1 (out of
 * memory). */
QKV_INTERNAL int qkv__ablate_compare(qkv_variant_result *vr, const double *x, const bool *counted, int nv, int ns,
                                     int baseline);

/* what variant v is when it has no finished run: "not started" when none of its runs began (a
 * partial sweep's), else "failed" */
static inline const char *qkv__ablate_unfinished(const qkv_ablate_results *r, int v) {
    return r->v[v].not_started > 0 && r->v[v].not_started >= r->n_lrs * r->cfg->n_seeds ? "not started" : "failed";
}

/* run s (seed index) of variant v at its chosen rate; NULL when the results carry no runs */
static inline const qkv_run_result *qkv__ablate_chosen(const qkv_ablate_results *r, int v, int s) {
    return r->runs ? &r->runs[(size_t)v * (size_t)r->cfg->n_seeds + (size_t)s] : NULL;
}

#endif
