/* qkv ablate: plan the runs, train them (extending those that have not solved the task),
 * aggregate, report. The plan (plan.c), the runner (runner.c), the aggregation (aggregate.c)
 * and the report (report*.c) each have a file of their own. */
#include "ablate/ablate.h"
#include "ablate/plan.h"
#include "ablate/results.h"
#include "ablate/runner.h"

#include <stdio.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int qkv_ablate_run(const qkv_ablate_config *c, const char *out_dir, int jobs, const char *const *train_cmd,
                   bool quiet, char *err, int errlen) {
    double t0 = now();
    qkv_ablate_plan p;
    qkv_ablate_results res = {0};
    int rc = -1;
    if (qkv__ablate_plan(&p, c, out_dir, true, err, errlen) ||
        qkv__ablate_execute(&p, jobs, train_cmd, quiet, NULL, err, errlen))
        goto done;
    if (!quiet) fprintf(stderr, "qkv ablate: aggregating and drawing the report\n");
    if (qkv__ablate_aggregate(&res, &p, quiet, err, errlen)) goto done;
    res.version = QKV_VERSION;
    res.jobs = jobs;
    res.wall_seconds = now() - t0;
    rc = qkv_ablate_write_report(&res, out_dir, quiet ? NULL : stdout, err, errlen);
    if (!rc && !quiet) fprintf(stderr, "qkv ablate: report in %s/report.md and %s/report.html\n", out_dir, out_dir);
done:
    qkv__ablate_results_free(&res);
    qkv__ablate_plan_free(&p);
    return rc;
}
