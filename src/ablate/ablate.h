/* qkv ablate: a base config, named variants (lists of --set overrides) and seeds, run as
 * separate processes, aggregated into a results table, diagnostics, plots and a report. */
#ifndef QKV_ABLATE_H
#define QKV_ABLATE_H

#include "qkv_api.h"

#include <stdbool.h>
#include <stdint.h>

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
QKV_API int qkv_ablate_config_load(qkv_ablate_config *c, const char *path, char *err, int errlen);
QKV_API void qkv_ablate_config_free(qkv_ablate_config *c);

/* Run every variant x seed (skipping finished runs, resuming interrupted ones), `jobs` processes
 * at a time, then aggregate and report. train_cmd (NULL-terminated; train_cmd[0] a path) trains
 * one run: the runner appends "CONFIG --out RUN_DIR" for a new run and "--resume RUN_DIR" for a
 * run with a checkpoint; it must write the run directory of train/run_dir.h and exit 0 when the
 * run is done (the qkv command passes {qkv, "train", "--threads", "1", "--quiet"}). 0, or -1. */
QKV_API int qkv_ablate_run(const qkv_ablate_config *c, const char *out_dir, int jobs, const char *const *train_cmd,
                   bool quiet, char *err, int errlen);

#endif
