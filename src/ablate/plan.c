/* The runs of an ablation, their directories and input configs, and what their directories say
 * (see plan.h). */
#include "ablate/plan.h"
#include "io/fileio.h"
#include "io/json.h"
#include "io/strbuf.h"
#include "train/run_dir.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <sys/file.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static bool exists(const char *path) { return access(path, F_OK) == 0; }

bool qkv__ablate_same_config(const char *old, const char *json, const char *label) {
    qkv_config oc;
    qkv_err e;
    if (qkv_config_parse(&oc, old, label, &e)) return false;
    char *now = qkv_config_to_json(&oc);
    bool same = now && !strcmp(now, json);
    free(now);
    return same;
}

/* run r's input config: variant, learning rate, seed and threshold; malloc'd JSON or NULL */
static char *run_config(const qkv_ablate_plan *p, const qkv_ablate_run_spec *rs, qkv_config *cfg, qkv_err *e) {
    const qkv_ablate_config *c = p->c;
    if (qkv__ablate_variant_config(c, rs->variant, cfg, e)) return NULL;
    char set[3][96];
    qkv_err inner;
    int n = 0;
    if (c->n_lrs) snprintf(set[n++], sizeof set[0], "optim.lr=%.17g", c->lrs[rs->lr]);
    snprintf(set[n++], sizeof set[0], "train.seed=%lld", c->seeds[rs->seed]);
    snprintf(set[n++], sizeof set[0], "train.threshold=%.17g", c->threshold);
    for (int i = 0; i < n; i++)
        if (qkv_config_set(cfg, set[i], &inner)) {
            qkv_err_set(e, QKV_ERR_FAIL, "%s: run %s: %s", qkv__shown(c->path).s, rs->name, inner.msg);
            return NULL;
        }
    if (qkv_config_validate(cfg, &inner)) {
        qkv_err_set(e, QKV_ERR_FAIL, "%s: run %s: %s", qkv__shown(c->path).s, rs->name, inner.msg);
        return NULL;
    }
    char *json = qkv_config_to_json(cfg);
    if (!json) qkv_err_set(e, QKV_ERR_FAIL, "out of memory");
    return json;
}

/* remove a run directory's files (the results of another config must not be reused) */
static void clear_run(const qkv_ablate_run_spec *rs) {
    const char *files[] = {QKV_RUN_CONFIG, QKV_RUN_METRICS, QKV_RUN_MODEL, QKV_RUN_CHECKPOINT, QKV_RUN_SUMMARY,
                           QKV_RUN_LOG};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char *b = qkv__pathf("%s/%s", rs->dir, files[i]);
        if (b) unlink(b);
        free(b);
    }
}

/* qkv__ablate_plan's work; on failure p->runs may be left allocated (the caller frees it) */
static int plan_build(qkv_ablate_plan *p, const qkv_ablate_config *c, const char *out, bool write, bool force,
                      qkv_err *e) {
    memset(p, 0, sizeof *p);
    p->c = c;
    p->out = out;
    p->n_lrs = c->n_lrs ? c->n_lrs : 1;
    p->n = c->n_variants * p->n_lrs * c->n_seeds;
    p->runs = calloc((size_t)p->n, sizeof *p->runs);
    if (!p->runs)
        return qkv_err_set(e, QKV_ERR_FAIL, "out of memory");
    char differ[512] = "";
    int n_differ = 0, lock = -1, rc = -1;
    char **jsons = calloc((size_t)p->n, sizeof *jsons);
    bool *fresh = calloc((size_t)p->n, sizeof *fresh), *differs = calloc((size_t)p->n, sizeof *differs);
    if (!jsons || !fresh || !differs) {
        qkv_err_set(e, QKV_ERR_FAIL, "out of memory");
        goto done;
    }
    if (write) {
        char *d = qkv__pathf("%s/configs", out);
        int made = d ? qkv__mkdirs(d, e) : qkv_err_set(e, QKV_ERR_FAIL, "out of memory");
        free(d);
        if (made) goto done;
        /* one config wins an --out whole: the check and the writes below run under an exclusive lock
         * on the directory, so two sweeps of different configs started together never interleave
         * their configs/ (the second sees the first's whole and is refused); released at the end */
        lock = open(out, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (lock >= 0) flock(lock, LOCK_EX);
    }
    /* first every run's config, checked against what the directory holds; nothing written yet */
    for (int v = 0; v < c->n_variants; v++)
        for (int l = 0; l < p->n_lrs; l++)
            for (int s = 0; s < c->n_seeds; s++) {
                int i = qkv__ablate_index(p, v, l, s);
                qkv_ablate_run_spec *rs = &p->runs[i];
                *rs = (qkv_ablate_run_spec){.variant = v, .lr = l, .seed = s};
                char lr[48] = "", lrdir[48] = "";
                if (c->n_lrs) {
                    snprintf(lr, sizeof lr, "-lr%g", c->lrs[l]);
                    snprintf(lrdir, sizeof lrdir, "/lr%g", c->lrs[l]);
                }
                snprintf(rs->name, sizeof rs->name, "%s%s/seed%lld", c->variants[v].name, lrdir, c->seeds[s]);
                rs->dir = qkv__pathf("%s/runs/%s", out, rs->name);
                rs->cfg = qkv__pathf("%s/configs/%s%s-seed%lld.json", out, c->variants[v].name, lr, c->seeds[s]);
                if (!rs->dir || !rs->cfg) {
                    qkv_err_set(e, QKV_ERR_FAIL, "out of memory");
                    goto done;
                }
                qkv_config cfg;
                if (!(jsons[i] = run_config(p, rs, &cfg, e))) goto done;
                rs->steps = cfg.train.steps;
                rs->budget = qkv__ablate_budget(c, &cfg);
                size_t len;
                char *old = exists(rs->cfg) ? qkv__read_file(rs->cfg, &len, NULL) : NULL;
                differs[i] = old && strcmp(old, jsons[i]) && !qkv__ablate_same_config(old, jsons[i], rs->cfg);
                fresh[i] = !old || (differs[i] && force);
                free(old);
                if (differs[i] && !force) { /* collected: the error names them all at once */
                    if (n_differ < 4) {
                        size_t at = strlen(differ);
                        snprintf(differ + at, sizeof differ - at, "%s%s", n_differ ? ", " : "", rs->name);
                    }
                    n_differ++;
                }
            }
    if (n_differ) {
        qkv_err_set(e, QKV_ERR_FAIL, "%s holds %d run%s made from another config (%s%s): a sweep never mixes two "
                    "configs; use another --out, or --force to discard them", qkv__shown(out).s, n_differ,
                    n_differ == 1 ? "" : "s",
                    differ, n_differ > 4 ? ", ..." : "");
        goto done;
    }
    /* then, all of them agreeing, the directories and the new configs */
    for (int i = 0; write && i < p->n; i++) {
        const qkv_ablate_run_spec *rs = &p->runs[i];
        if (qkv__mkdirs(rs->dir, e)) goto done;
        if (!fresh[i]) continue;
        if (differs[i]) clear_run(rs); /* --force: the old config's results go */
        if (qkv__write_file_atomic(rs->cfg, jsons[i], strlen(jsons[i]), e)) goto done;
    }
    rc = 0;
done:
    if (lock >= 0) close(lock); /* the lock released */
    for (int i = 0; jsons && i < p->n; i++) free(jsons[i]);
    free(jsons);
    free(fresh);
    free(differs);
    return rc;
}

int qkv__ablate_plan(qkv_ablate_plan *p, const qkv_ablate_config *c, const char *out, bool write, bool force,
                     qkv_err *e) {
    int rc = plan_build(p, c, out, write, force, e);
    if (rc) qkv__ablate_plan_free(p); /* a failed plan holds nothing: callers need not free it */
    return rc;
}

void qkv__ablate_plan_free(qkv_ablate_plan *p) {
    for (int r = 0; r < p->n && p->runs; r++) {
        free(p->runs[r].dir);
        free(p->runs[r].cfg);
    }
    free(p->runs);
    p->runs = NULL;
}

void qkv__ablate_run_state(const qkv_ablate_plan *p, int r, qkv_ablate_run_state *st) {
    const qkv_ablate_run_spec *rs = &p->runs[r];
    memset(st, 0, sizeof *st);
    st->solved_at = -1;
    char *ck = qkv__pathf("%s/%s", rs->dir, QKV_RUN_CHECKPOINT), *sum = qkv__pathf("%s/%s", rs->dir, QKV_RUN_SUMMARY);
    st->checkpoint = !ck || exists(ck); /* out of memory: as if it had one (never started over) */
    size_t len;
    char *text = sum && exists(sum) ? qkv__read_file(sum, &len, NULL) : NULL;
    free(ck);
    free(sum);
    cJSON *j = text ? qkv__json_tree(text, len) : NULL;
    free(text);
    if (!j) return;
    const cJSON *steps = cJSON_GetObjectItemCaseSensitive(j, "steps");
    const cJSON *verdict = cJSON_GetObjectItemCaseSensitive(j, "verdict");
    const cJSON *at = cJSON_GetObjectItemCaseSensitive(j, "solved_at");
    if (cJSON_IsNumber(steps)) {
        st->done = true;
        st->steps = (long long)steps->valuedouble;
        st->solved = cJSON_IsString(verdict) && !strcmp(verdict->valuestring, "solved");
        st->solved_at = st->solved && cJSON_IsNumber(at) ? (long long)at->valuedouble : -1;
    }
    cJSON_Delete(j);
}

long long qkv__ablate_target(const qkv_ablate_plan *p, int r, long long max_solved_at) {
    const qkv_ablate_run_spec *rs = &p->runs[r];
    /* nothing solved yet, or every unsolved run to its budget: as far as the budget goes */
    if (max_solved_at < 0 || p->c->extend_to_max_steps) return rs->budget;
    long long t = rs->steps;
    while (t < 4 * max_solved_at && t < rs->budget) t *= 2;
    return t < rs->budget ? t : rs->budget;
}
