/* qkv ablate: plan the runs and train them (extending those that have not solved the task); or
 * say where a sweep stands; or record what old runs did not (--refresh). The plan (plan.c), the
 * runner (runner.c), the claims (claim.c) and the aggregation (aggregate.c) each have a file of
 * their own; the report, one floor up, is src/report/. */
#include "ablate/ablate.h"
#include "ablate/claim.h"
#include "ablate/plan.h"
#include "ablate/results.h"
#include "ablate/runner.h"
#include "config/config.h"
#include "io/fileio.h"
#include "io/strbuf.h"
#include "train/observe.h"
#include "train/run_dir.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>


int qkv_ablate_run(const qkv_ablate_config *c, const char *out_dir, const qkv_ablate_opts *o, qkv_err *e) {
    qkv_ablate_plan p; /* the sweeps to reuse checked before anything is written */
    if (qkv__ablate_reuse_check(o->reuse, o->n_reuse, e)) return -1;
    int rc = qkv__ablate_plan(&p, c, out_dir, true, o->force, e);
    if (!rc && o->n_reuse) rc = qkv__ablate_reuse(&p, o->reuse, o->n_reuse, o->quiet, e);
    if (!rc) rc = qkv__ablate_execute(&p, o, NULL, e);
    qkv__ablate_plan_free(&p);
    return rc;
}

int qkv_ablate_refresh(const qkv_ablate_config *c, const char *out_dir, bool quiet, qkv_err *e) {
    qkv_ablate_plan p;
    if (qkv__ablate_plan(&p, c, out_dir, false, false, e)) return -1;
    int rc = 0, n = 0;
    for (int r = 0; r < p.n && !rc; r++) {
        qkv_ablate_run_state st;
        qkv__ablate_run_state(&p, r, &st);
        if (!st.done) continue; /* nothing finished to observe: its run records it when it is */
        qkv_config cfg;
        qkv_config_defaults(&cfg);
        char *path = qkv__pathf("%s/%s", p.runs[r].dir, QKV_RUN_CONFIG);
        char *model = qkv__pathf("%s/%s", p.runs[r].dir, QKV_RUN_MODEL);
        qkv_err ce; /* the run's own files: a config.json that cannot be read, or edited since (another
                     * model), is a damaged run, not the user's input */
        if (!path || !model) rc = qkv_err_set(e, QKV_ERR_FAIL, "out of memory");
        else if (qkv_config_load(&cfg, path, &ce) || qkv_config_check_model_file(model, &cfg, path, &ce))
            rc = qkv_err_set(e, QKV_ERR_FAIL, "%s", ce.msg);
        else rc = qkv__run_observe(&cfg, p.runs[r].dir, c->example, st.steps, e);
        free(path);
        free(model);
        n += !rc;
    }
    if (!rc && !quiet) fprintf(stderr, "qkv ablate: recorded the attention diagnostics of %d finished runs\n", n);
    qkv__ablate_plan_free(&p);
    return rc ? -1 : 0;
}

int qkv_ablate_status(const qkv_ablate_config *c, const char *out_dir, const qkv_ablate_opts *o, FILE *f,
                      qkv_err *e) {
    qkv_ablate_plan p;
    if (qkv__ablate_plan(&p, c, out_dir, false, false, e)) return -1;
    double stale = o->stale > 0 ? o->stale : 600;
    qkv_ablate_run_state *st = calloc((size_t)p.n, sizeof *st);
    if (!st) {
        qkv__ablate_plan_free(&p);
        return qkv_err_set(e, QKV_ERR_FAIL, "out of memory");
    }
    long long max_solved = -1;
    for (int r = 0; r < p.n; r++) {
        qkv__ablate_run_state(&p, r, &st[r]);
        if (st[r].done && st[r].solved && st[r].solved_at > max_solved) max_solved = st[r].solved_at;
    }
    int done = 0, running = 0, failed = 0, waiting = 0;
    for (int r = 0; r < p.n; r++) {
        const qkv_ablate_run_spec *rs = &p.runs[r];
        bool resume, extend;
        long long steps = qkv__ablate_next(&p, r, &st[r], max_solved, &resume, &extend);
        qkv_claim_info ci;
        qkv__claim_read(rs->dir, stale, &ci);
        size_t len;
        char *path = qkv__pathf("%s/%s", rs->dir, QKV_RUN_FAILED);
        char *why = path && access(path, F_OK) == 0 ? qkv__read_file(path, &len, NULL) : NULL; /* unread: no note */
        free(path);
        if (why) why[strcspn(why, "\n")] = 0; /* its first line, whole */
        if (ci.held && !ci.stale) {
            running++;
            fprintf(f, "running  %-40s on %s pid %ld, heartbeat %.0f s ago, toward %lld steps\n", rs->name, ci.host,
                    ci.pid, ci.age, steps ? steps : st[r].steps);
        } else if (why && why[0] && steps) {
            failed++;
            fprintf(f, "failed   %-40s %s\n", rs->name, why);
        } else if (!steps) {
            done++;
        } else {
            waiting++;
            char what[128];
            if (extend) snprintf(what, sizeof what, "to be extended from %lld to %lld steps", st[r].steps, steps);
            else if (resume) snprintf(what, sizeof what, "to resume from its checkpoint (%lld steps)", steps);
            else snprintf(what, sizeof what, "not started (%lld steps)", steps);
            fprintf(f, "waiting  %-40s %s%s%s\n", rs->name, what, ci.held ? " (its claim is stale)" : "", "");
        }
        free(why);
    }
    fprintf(f, "qkv ablate: %s: %d runs: %d done, %d running, %d failed, %d waiting\n", out_dir, p.n, done, running,
            failed, waiting);
    free(st);
    qkv__ablate_plan_free(&p);
    return 0;
}
