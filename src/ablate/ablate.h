/* qkv ablate: a base config, named variants (lists of --set overrides), learning rates and
 * seeds, run as separate processes; runs that have not solved the task are extended up to a
 * budget; a learning rate is chosen per variant on validation; the results are aggregated with
 * confidence intervals and tests against a baseline into a table, plots and a report
 * (docs/ablate.md). */
#ifndef QKV_ABLATE_H
#define QKV_ABLATE_H

#include "qkv_api.h"

#include "tensor/error.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define QKV_ABLATE_NAME 64
/* the most rates and seeds an ablation config's rate_choice names */
#define QKV_ABLATE_MAX_PILOT 32

typedef struct qkv_ablate_variant {
    char name[QKV_ABLATE_NAME];     /* [A-Za-z0-9_+.-], used in paths */
    char **sets;                    /* "path.to.key=value" overrides, applied after the common ones */
    int n_sets;
    bool match_params;              /* widen model.d_ff to the baseline's parameter count */
    int matched_d_ff;               /* that width (0: not matched) */
    int64_t params, baseline_params;/* this variant's parameter count (matched) and the baseline's */
} qkv_ablate_variant;

/* What the sweep compares: final accuracy (higher is better), or the evaluation loss in nats or
 * in bits per token (= per byte on byte-level text; lower is better). */
typedef enum { QKV_METRIC_ACCURACY, QKV_METRIC_LOSS, QKV_METRIC_BPB, QKV_METRIC_COUNT } qkv_ablate_metric;
/* names used in ablation configs ("accuracy", "loss", "bpb"; index = enum value) */
QKV_APP_API extern const char *const QKV_METRIC_NAMES[QKV_METRIC_COUNT];
/* the metric called name (QKV_METRIC_NAMES), or QKV_METRIC_COUNT when none is (or name is NULL) */
QKV_APP_API qkv_ablate_metric qkv_ablate_metric_named(const char *name);

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
    double *lrs;                    /* optim.lr of each run; n_lrs = 0: the config's own */
    int n_lrs;
    long long max_steps;            /* extension budget (0: 4 x train.steps of each run) */
    bool extend_to_max_steps;       /* every unsolved run extended to its budget, not only to 4 x
                                       the sweep's largest solved_at (to tell slow from stuck) */
    int baseline;                   /* the variant the others are compared with */
    double threshold;               /* validation accuracy that counts as solved */
    qkv_ablate_metric metric;       /* compared against the baseline and chosen on (learning rates) */
    int example;                    /* index of the evaluation example whose attention is drawn */
    char title[256];                /* report title ("" = from the file name) */
    char pilot[1024];               /* the sweep that chose the rates its variants set ("" = none named) */
    /* how the pilot chose them ("rate_choice" in the file; results.json's rate_choice): its rule
     * in words ("" = not given), its grid of rates and its seeds (n_* = 0: not given) */
    char rate_rule[1024];
    double rate_grid[QKV_ABLATE_MAX_PILOT];
    int n_rate_grid;
    long long pilot_seeds[QKV_ABLATE_MAX_PILOT];
    int n_pilot_seeds;
} qkv_ablate_config;

/* parse (strict: unknown keys, wrong types, duplicate variant names are errors naming the key) */
QKV_APP_API int qkv_ablate_config_load(qkv_ablate_config *c, const char *path, qkv_err *e);
QKV_APP_API void qkv_ablate_config_free(qkv_ablate_config *c);

/* How qkv_ablate_run works through a sweep. */
typedef struct qkv_ablate_opts {
    int jobs;                       /* runs at once in this process */
    const char *const *train_cmd;   /* trains one run (see qkv_ablate_run) */
    bool quiet;                     /* no progress and no table */
    int shard, shards;              /* this worker's share: runs r with r % shards == shard (docs/ablate.md's
                                       order); 0 of 1: every run */
    double stale;                   /* seconds without a heartbeat before another worker's claim on a run
                                       is taken over (0: 600) */
    bool force;                     /* discard runs made from another config instead of refusing */
    const char *const *reuse;       /* other sweeps' directories whose finished runs of the same name and
                                       input config (not extended) are copied in rather than trained */
    int n_reuse;
} qkv_ablate_opts;

/* Run every variant x seed (skipping finished runs, resuming interrupted ones), `jobs` processes
 * at a time (the report is src/report/'s: qkv_report_sweep). train_cmd (NULL-terminated; train_cmd[0] a path) trains
 * one run: the runner appends "CONFIG --out RUN_DIR" for a new run and "--resume RUN_DIR" for a
 * run with a checkpoint; it must write the run directory of train/run_dir.h and exit 0 when the
 * run is done (the qkv command passes {qkv, "train", "--threads", "1", "--quiet"}). 0, or -1. */
QKV_APP_API int qkv_ablate_run(const qkv_ablate_config *c, const char *out_dir, const qkv_ablate_opts *o, qkv_err *e);
/* What the sweep in out_dir has done, one line per run that is not done (running where,
 * failed why, waiting for what) and the counts, to f. 0, or -1 with e */
QKV_APP_API int qkv_ablate_status(const qkv_ablate_config *c, const char *out_dir, const qkv_ablate_opts *o, FILE *f,
                              qkv_err *e);
/* Record, for every finished run in out_dir, what a report shows of it (train/observe.h), as a
 * run of today's qkv does when it finishes: for runs made before runs recorded it. 0, or -1 */
QKV_APP_API int qkv_ablate_refresh(const qkv_ablate_config *c, const char *out_dir, bool quiet, qkv_err *e);

#endif
