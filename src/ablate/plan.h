/* Internal: what qkv ablate trains. The runs are variants x learning rates x seeds, in this
 * order (variant-major, then learning rate, then seed); each has a run directory and an input
 * config, and is trained, resumed or extended by the caller's train command. */
#ifndef QKV_ABLATE_PLAN_H
#define QKV_ABLATE_PLAN_H

#include "qkv_api.h"

#include "tensor/error.h"

#include "ablate/ablate.h"
#include "config/config.h"

/* variant v's config: the base, the common overrides, the variant's, its matched width; validated.
 * 0, or -1 with "PATH: variant NAME: ..." in e */
QKV_INTERNAL int qkv__ablate_variant_config(const qkv_ablate_config *c, int v, qkv_config *cfg, qkv_err *e);
/* the steps a run of this config may be extended to: max_steps, or 4 x train.steps without it */
QKV_INTERNAL long long qkv__ablate_budget(const qkv_ablate_config *c, const qkv_config *cfg);

/* One run of the sweep. */
typedef struct qkv_ablate_run_spec {
    int variant, lr, seed;          /* indices: variants, lrs (0 without a grid), seeds */
    char name[160];                 /* VARIANT[/lrLR]/seedS, for messages */
    char *dir;                      /* OUT/runs/VARIANT[/lrLR]/seedS (malloc'd, the plan's) */
    char *cfg;                      /* OUT/configs/VARIANT[-lrLR]-seedS.json, its input config (the same) */
    long long steps;                /* the config's train.steps */
    long long budget;               /* the most steps it may be extended to (qkv__ablate_budget) */
} qkv_ablate_run_spec;

typedef struct qkv_ablate_plan {
    const qkv_ablate_config *c;
    const char *out;
    int n_lrs;                      /* learning rates per variant (1 without a grid) */
    int n;                          /* runs: variants x n_lrs x seeds */
    qkv_ablate_run_spec *runs;
} qkv_ablate_plan;

/* The plan of c into out. A run whose input config on disk differs from c's is an error that
 * names the runs (a sweep never mixes results of two configs), unless `force`, which discards
 * them. With `write`, also create the run directories and write the input configs. 0, or -1 with
 * one line in e (and nothing left to free) */
QKV_INTERNAL int qkv__ablate_plan(qkv_ablate_plan *p, const qkv_ablate_config *c, const char *out, bool write,
                                  bool force, qkv_err *e);
QKV_INTERNAL void qkv__ablate_plan_free(qkv_ablate_plan *p);
/* whether the input config `old` (as an earlier qkv wrote it) is `json` (as this one writes it):
 * read with today's reader, keys added since take their defaults, which are the behaviour of
 * the qkv that wrote it; so a finished sweep survives an upgrade that only adds keys */
QKV_INTERNAL bool qkv__ablate_same_config(const char *old, const char *json, const char *label);
/* Copy into the plan's runs that have not started the finished runs of the same name in the
 * sweeps dirs[0..n) (qkv ablate --reuse) whose input config is the same and which ran exactly
 * their train.steps (how far an extended run went depends on the rest of its sweep); the files
 * are copied with summary.json last, so a copy cut short is a run that has not finished. Said on
 * stderr unless quiet. 0, or -1 with e */
QKV_INTERNAL int qkv__ablate_reuse(const qkv_ablate_plan *p, const char *const *dirs, int n, bool quiet, qkv_err *e);
/* whether each of dirs[0..n) is a sweep's directory (it has configs/); 0, or -1 with e (QKV_ERR_USAGE) */
QKV_INTERNAL int qkv__ablate_reuse_check(const char *const *dirs, int n, qkv_err *e);
/* the index of run (variant v, learning rate l, seed s) */
static inline int qkv__ablate_index(const qkv_ablate_plan *p, int v, int l, int s) {
    return (v * p->n_lrs + l) * p->c->n_seeds + s;
}

/* What a run directory says about its run. */
typedef struct qkv_ablate_run_state {
    bool done;                      /* summary.json: its last session finished */
    bool checkpoint;                /* checkpoint.safetensors: it can be resumed */
    long long steps;                /* done: the steps it ran */
    bool solved;                    /* done: reached the threshold (summary.json's verdict) */
    long long solved_at;
} qkv_ablate_run_state;

/* read run r's state from its directory */
QKV_INTERNAL void qkv__ablate_run_state(const qkv_ablate_plan *p, int r, qkv_ablate_run_state *st);
/* The steps run r trains to, given the largest solved_at of any run so far (-1: none): its own
 * train.steps doubled until it is at least 4 x max_solved_at (or without any solved run,
 * without end), but never beyond its budget. The steps a run ends at are therefore always its
 * train.steps times a power of two, or its budget: the same whatever order runs finish in. */
QKV_INTERNAL long long qkv__ablate_target(const qkv_ablate_plan *p, int r, long long max_solved_at);

#endif
