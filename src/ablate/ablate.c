/* qkv ablate: plan the runs, train them (extending those that have not solved the task),
 * aggregate, report; or say where a sweep stands, or report whatever has finished. The plan
 * (plan.c), the runner (runner.c), the claims (claim.c), the aggregation (aggregate.c) and
 * the report (report*.c) each have a file of their own. */
#include "ablate/ablate.h"
#include "tensor/clock.h"
#include "ablate/claim.h"
#include "ablate/plan.h"
#include "ablate/results.h"
#include "ablate/runner.h"
#include "io/fileio.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>


/* aggregate what has finished and write the report */
static int report(const qkv_ablate_plan *p, const qkv_ablate_opts *o, double t0, char *err, int errlen) {
    qkv_ablate_results res = {0};
    if (!o->quiet) fprintf(stderr, "qkv ablate: aggregating and drawing the report\n");
    int rc = qkv__ablate_aggregate(&res, p, o->quiet, err, errlen);
    if (!rc) {
        res.version = QKV_VERSION;
        res.jobs = o->jobs;
        res.wall_seconds = qkv_clock_seconds() - t0;
        rc = qkv_ablate_write_report(&res, p->out, o->quiet ? NULL : stdout, err, errlen);
    }
    if (!rc && !o->quiet) {
        if (res.missing || res.to_extend)
            fprintf(stderr, "qkv ablate: a partial report: %d of %d runs have not finished and %d may still be "
                    "extended\n", res.missing, p->n, res.to_extend);
        fprintf(stderr, "qkv ablate: report in %s/report.md and %s/report.html\n", p->out, p->out);
    }
    qkv__ablate_results_free(&res);
    return rc;
}

int qkv_ablate_run(const qkv_ablate_config *c, const char *out_dir, const qkv_ablate_opts *o, char *err,
                   int errlen) {
    double t0 = qkv_clock_seconds();
    qkv_ablate_plan p;
    int rc = qkv__ablate_plan(&p, c, out_dir, true, o->force, err, errlen);
    qkv_ablate_opts run_opts = *o; /* runs trained together as the config says */
    if (!run_opts.group) run_opts.group = c->batch_runs ? c->batch_max_runs : 1;
    if (!rc) rc = qkv__ablate_execute(&p, &run_opts, NULL, err, errlen);
    /* a worker with a share of the sweep leaves the report to whoever finishes it */
    if (!rc && (o->shards <= 1)) rc = report(&p, o, t0, err, errlen);
    qkv__ablate_plan_free(&p);
    return rc;
}

int qkv_ablate_report(const qkv_ablate_config *c, const char *out_dir, const qkv_ablate_opts *o, char *err,
                      int errlen) {
    qkv_ablate_plan p;
    int rc = qkv__ablate_plan(&p, c, out_dir, false, false, err, errlen);
    if (!rc) rc = report(&p, o, qkv_clock_seconds(), err, errlen);
    qkv__ablate_plan_free(&p);
    return rc;
}

int qkv_ablate_status(const qkv_ablate_config *c, const char *out_dir, const qkv_ablate_opts *o, FILE *f,
                      char *err, int errlen) {
    qkv_ablate_plan p;
    if (qkv__ablate_plan(&p, c, out_dir, false, false, err, errlen)) return -1;
    double stale = o->stale > 0 ? o->stale : 600;
    qkv_ablate_run_state *st = calloc((size_t)p.n, sizeof *st);
    if (!st) {
        qkv__ablate_plan_free(&p);
        snprintf(err, (size_t)errlen, "out of memory");
        return -1;
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
        char path[1400], e[256], why[700] = "";
        size_t len;
        snprintf(path, sizeof path, "%s/%s", rs->dir, QKV_RUN_FAILED);
        char *mark = access(path, F_OK) == 0 ? qkv_read_file(path, &len, e, sizeof e) : NULL;
        if (mark) {
            snprintf(why, sizeof why, "%s", mark);
            why[strcspn(why, "\n")] = 0;
            free(mark);
        }
        if (ci.held && !ci.stale) {
            running++;
            fprintf(f, "running  %-40s on %s pid %ld, heartbeat %.0f s ago, toward %lld steps\n", rs->name, ci.host,
                    ci.pid, ci.age, steps ? steps : st[r].steps);
        } else if (why[0] && steps) {
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
    }
    fprintf(f, "qkv ablate: %s: %d runs: %d done, %d running, %d failed, %d waiting\n", out_dir, p.n, done, running,
            failed, waiting);
    free(st);
    qkv__ablate_plan_free(&p);
    return 0;
}
