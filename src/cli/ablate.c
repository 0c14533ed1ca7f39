/* qkv ablate: the Q/K/V ablation (or any other) from an ablation config: run it, or a share of
 * it, or say where it stands, or report what has finished, or submit it to Slurm. */
#define _DEFAULT_SOURCE /* realpath */
#include "ablate/ablate.h"
#include "ablate/claim.h"
#include "ablate/plan.h"
#include "ablate/results.h"
#include "ablate/slurm.h"
#include "cli/cli.h"
#include "cli/options.h"
#include "io/strbuf.h"
#include "report/report.h"
#include "tensor/clock.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* the shortest --stale-after: two heartbeats, so a live worker's claim is never taken */
#define STALE_MIN 60
_Static_assert(STALE_MIN >= 2 * QKV_CLAIM_HEARTBEAT, "--stale-after must allow two heartbeats");

typedef struct {
    const char *config, *out, *shard;
    long long jobs, stale, tasks, parallel;
    bool quiet, status, report, refresh, force, slurm, dry_run;
    qkv_cli_list sbatch, reuse;
} ablate_args;

static const qkv_cli_option OPTIONS[] = {
    QKV_STRING("--out", "DIR", ablate_args, out, "output directory (default: runs/<config name>)"),
    QKV_INT("--jobs", "N", ablate_args, jobs, 1, 256, "runs at once (default: the number of CPUs)"),
    QKV_STRING("--shard", "I/N", ablate_args, shard,
               "train only share I of N (runs r with r mod N = I, in docs/ablate.md's order); 'auto':\n"
               "SLURM_ARRAY_TASK_ID of SLURM_ARRAY_TASK_COUNT. A share leaves the report to others"),
    QKV_FLAG("--status", ablate_args, status, "say what the sweep in DIR has done: running (where), failed (why),\n"
                                               "waiting; train nothing"),
    QKV_FLAG("--report", ablate_args, report, "write the report of whatever has finished (marking what is\n"
                                               "missing); train nothing"),
    QKV_FLAG("--refresh", ablate_args, refresh, "record what the report shows of finished runs made by an older qkv\n"
                                                 "(their attention diagnostics and samples), then write the report;\n"
                                                 "train nothing"),
    QKV_FLAG("--force", ablate_args, force, "discard runs in DIR made from another config (else an error)"),
    QKV_LIST("--reuse", "SWEEP", ablate_args, reuse,
             "copy in, rather than train, the finished runs of another sweep's directory that have\n"
             "the same name and input config and were not extended (repeatable)"),
    /* at least two heartbeats (STALE_MIN): a live worker's claim is never stale */
    QKV_INT("--stale-after", "S", ablate_args, stale, STALE_MIN, 1000000000,
            "seconds without a heartbeat before another worker's claim is taken over (600;\n"
            "at least 60: a live worker touches its claims every 30 s)"),
    QKV_FLAG("--slurm", ablate_args, slurm, "submit the sweep to Slurm: an array of --tasks workers (--shard auto,\n"
                                             "requeued on preemption) and a report job after it; print the job ids"),
    QKV_INT("--tasks", "N", ablate_args, tasks, 1, 100000, "with --slurm: array tasks (default: the runs, at most 64)"),
    QKV_INT("--parallel", "P", ablate_args, parallel, 1, 100000,
            "with --slurm: tasks at once (default: all); the report job's CPUs (1)"),
    QKV_FLAG("--dry-run", ablate_args, dry_run, "with --slurm: print the job scripts, submit nothing"),
    QKV_LIST("--sbatch", "ARG", ablate_args, sbatch, "with --slurm: an #SBATCH line for both jobs, e.g. --sbatch\n"
                                                      "--partition=cpu (repeatable)"),
    QKV_FLAG("--quiet", ablate_args, quiet, "no progress and no table on the terminal"),
    QKV_HELP,
    QKV_OPTIONS_END,
};

static const qkv_cli_command COMMAND = {
    "ablate", "CONFIG [OPTION]...",
    "Train every variant x learning rate x seed of an ablation config (a base training config,\n"
    "named variants as lists of --set overrides, seeds, an accuracy threshold), each as its own\n"
    "`qkv train` process with one BLAS thread, extend the runs that have not solved the task,\n"
    "and write a results table (results.md, .csv, .json), attention diagnostics, SVG plots,\n"
    "report.md and a self-contained report.html to DIR. The run directories are the only state:\n"
    "re-running keeps finished runs and resumes the others, and any number of qkv ablate\n"
    "processes (on machines that share DIR) can work on one sweep. See docs/ablate.md and\n"
    "docs/distributed.md.",
    "CONFIG", OPTIONS,
};

/* "I/N" or "auto" (Slurm's array task: each variable parsed whole, its name in the message); 0,
 * or -1 with e (QKV_ERR_USAGE) */
static int parse_shard(const char *s, int *i, int *n, qkv_err *e) {
    if (!strcmp(s, "auto")) {
        const char *id = getenv("SLURM_ARRAY_TASK_ID"), *count = getenv("SLURM_ARRAY_TASK_COUNT");
        const char *min = getenv("SLURM_ARRAY_TASK_MIN");
        if (!id || !count)
            return qkv_err_set(e, QKV_ERR_USAGE, "--shard auto: SLURM_ARRAY_TASK_ID and SLURM_ARRAY_TASK_COUNT are "
                               "not set (not a Slurm array task); give --shard I/N");
        long long vi, vn, vmin = 0;
        if (qkv__cli_parse_int("--shard auto: SLURM_ARRAY_TASK_ID", id, 0, 100000000, &vi, e) ||
            qkv__cli_parse_int("--shard auto: SLURM_ARRAY_TASK_COUNT", count, 1, 1000000, &vn, e) ||
            (min && qkv__cli_parse_int("--shard auto: SLURM_ARRAY_TASK_MIN", min, 0, 100000000, &vmin, e)))
            return -1;
        *i = (int)(vi - vmin);
        *n = (int)vn;
    } else {
        char *end;
        errno = 0;
        long a = strtol(s, &end, 10), b = -1;
        bool digits = s[0] >= '0' && s[0] <= '9' && (*end != '/' || (end[1] >= '0' && end[1] <= '9'));
        if (*end == '/') b = strtol(end + 1, &end, 10); /* both numbers bare: no space or sign */
        if (!digits || errno || *end || a < 0 || b < 1 || a >= b || b > 1000000)
            return qkv_err_set(e, QKV_ERR_USAGE, "--shard: expected I/N with 0 <= I < N (or auto), got '%s'", s);
        *i = (int)a;
        *n = (int)b;
    }
    if (*n < 1 || *i < 0 || *i >= *n)
        return qkv_err_set(e, QKV_ERR_USAGE, "--shard auto: task %d of %d is not a share (SLURM_ARRAY_TASK_ID - "
                           "SLURM_ARRAY_TASK_MIN must be below SLURM_ARRAY_TASK_COUNT)", *i, *n);
    return 0;
}

/* dir as an absolute path without touching the file system when it does not exist yet (a dry
 * run creates nothing): its real path if it exists, else the working directory joined to it;
 * malloc'd. NULL when it cannot be made (the reason in e) */
static char *absolute(const char *dir, qkv_err *e) {
    char *abs = realpath(dir, NULL);
    if (abs) return abs;
    if (errno != ENOENT) {
        qkv_err_set(e, QKV_ERR_FAIL, "%s: %s", qkv__shown(dir).s, strerror(errno));
        return NULL;
    }
    if (dir[0] == '/') abs = strdup(dir);
    else {
        char *cwd = getcwd(NULL, 0); /* as long as it is (glibc) */
        if (!cwd) {
            qkv_err_set(e, QKV_ERR_FAIL, "the working directory: %s", strerror(errno));
            return NULL;
        }
        abs = qkv__pathf("%s/%s", cwd, dir);
        free(cwd);
    }
    if (!abs) qkv_err_set(e, QKV_ERR_FAIL, "out of memory");
    return abs;
}

/* The report of whatever runs of the sweep in out_dir have finished, saying what is missing:
 * aggregated by the study, then written by the report; progress on stderr unless o->quiet, the
 * table on stdout. t0: when the command started (the report's wall time). 0, or -1 with e */
static int report_sweep(const qkv_ablate_config *c, const char *out_dir, const qkv_ablate_opts *o, double t0,
                        qkv_err *e) {
    qkv_ablate_plan p;
    if (qkv__ablate_plan(&p, c, out_dir, false, false, e)) return -1;
    qkv_ablate_results res = {0};
    if (!o->quiet) fprintf(stderr, "qkv ablate: aggregating and drawing the report\n");
    int rc = qkv__ablate_aggregate(&res, &p, o->quiet, e);
    if (!rc) {
        snprintf(res.version, sizeof res.version, "%s", QKV_VERSION);
        res.jobs = o->jobs;
        res.wall_seconds = qkv_clock_seconds() - t0;
        rc = qkv__report_write(&res, p.out, o->quiet ? NULL : stdout, e);
    }
    if (!rc && !o->quiet) {
        if (res.missing || res.to_extend)
            fprintf(stderr, "qkv ablate: a partial report: %d of %d runs have not finished and %d may still be "
                    "extended\n", res.missing, p.n, res.to_extend);
        if (res.unobserved)
            fprintf(stderr, "qkv ablate: %d runs have no recorded attention diagnostics (the report marks them); "
                    "qkv ablate CONFIG --out %s --refresh records them\n", res.unobserved, p.out);
        fprintf(stderr, "qkv ablate: report in %s/report.md and %s/report.html\n", p.out, p.out);
    }
    qkv__ablate_results_free(&res);
    qkv__ablate_plan_free(&p);
    return rc;
}

/* submit_slurm's work, with the config's and the output directory's absolute paths */
static int submit_paths(const ablate_args *a, qkv_ablate_config *c, const char *cfg_abs, const char *out,
                        const char *out_abs, const char *bin, int runs, qkv_err *e) {
    int tasks = a->tasks ? (int)a->tasks : runs < 64 ? runs : 64;
    if (tasks > runs) { /* a task without a run would start, find nothing and end: not submitted */
        fprintf(stderr, "qkv ablate: --tasks %d is more than the sweep's %d runs: submitting %d tasks\n", tasks,
                runs, runs);
        tasks = runs;
    }
    int parallel = a->parallel && a->parallel < tasks ? (int)a->parallel : tasks;
    qkv_slurm_opts so = {.qkv = bin, .config = cfg_abs, .out = out_abs, .tasks = tasks, .parallel = parallel,
                         .report_jobs = 1, .sbatch = a->sbatch.v, .n_sbatch = a->sbatch.n, .dry_run = a->dry_run};
    if (qkv__slurm_check(&so, e)) return -1; /* QKV_ERR_USAGE */
    qkv_ablate_plan p;
    if (qkv__ablate_plan(&p, c, out, !a->dry_run, a->force, e)) return -1;
    qkv__ablate_plan_free(&p);
    return qkv__ablate_slurm(&so, stdout, e) ? -1 : 0;
}

/* --slurm: the sweep submitted as an array job and a report job, with absolute paths (the jobs run
 * elsewhere); the plan is checked now, and written unless this is a dry run, which writes nothing
 * anywhere. 0, or -1 with e (QKV_ERR_USAGE when sbatch's options are wrong) */
static int submit_slurm(const ablate_args *a, qkv_ablate_config *c, const char *cfg_path, const char *out,
                        const char *bin, int runs, qkv_err *e) {
    char *cfg_abs = realpath(cfg_path, NULL), *out_abs = cfg_abs ? absolute(out, e) : NULL;
    if (!cfg_abs) qkv_err_set(e, QKV_ERR_FAIL, "%s: %s", qkv__shown(cfg_path).s, strerror(errno));
    int rc = out_abs ? submit_paths(a, c, cfg_abs, out, out_abs, bin, runs, e) : -1;
    free(cfg_abs);
    free(out_abs);
    return rc;
}

/* the sweep (or this worker's share of it) run here, o->jobs at a time, each run a `bin train`
 * with one BLAS thread; then the report unless this is a share; 0 or -1 with e */
static int run_here(const ablate_args *a, qkv_ablate_config *c, const char *out, qkv_ablate_opts *o, const char *bin,
                    int runs, double t0, qkv_err *e) {
    if (!a->quiet) {
        char share[64] = "";
        if (o->shards > 1) snprintf(share, sizeof share, " (share %d of %d)", o->shard, o->shards);
        fprintf(stderr, "qkv ablate: %d variants x %d learning rate%s x %d seeds = %d runs%s, %d at a time, into %s\n",
                c->n_variants, c->n_lrs ? c->n_lrs : 1, c->n_lrs > 1 ? "s" : "", c->n_seeds, runs, share, o->jobs,
                out);
    }
    /* one BLAS thread per run; the example whose attention the runs record, when not the first */
    char example[32];
    snprintf(example, sizeof example, "%d", c->example);
    const char *train_cmd[] = {bin, "train", "--threads", "1", "--quiet", c->example ? "--example" : NULL, example,
                               NULL};
    o->train_cmd = train_cmd;
    qkv__cli_children_one_blas_thread();
    if (qkv_ablate_run(c, out, o, e)) return -1;
    /* a worker with a share of the sweep leaves the report to whoever finishes it */
    if (o->shards <= 1 && report_sweep(c, out, o, t0, e)) return -1;
    return 0;
}

/* the arguments that cannot go together; 0, or -1 with e (QKV_ERR_USAGE) */
static int check_actions(const ablate_args *a, qkv_err *e) {
    if (!a->config) return qkv_err_set(e, QKV_ERR_USAGE, "missing CONFIG (try 'qkv ablate --help')");
    if (a->status + a->report + a->refresh + a->slurm > 1)
        return qkv_err_set(e, QKV_ERR_USAGE, "--status, --report, --refresh and --slurm are separate actions: give one");
    if (!a->slurm && (a->tasks || a->parallel || a->dry_run || a->sbatch.n))
        return qkv_err_set(e, QKV_ERR_USAGE, "--tasks, --parallel, --dry-run and --sbatch go with --slurm");
    if (a->reuse.n && (a->status || a->report || a->refresh || a->slurm))
        return qkv_err_set(e, QKV_ERR_USAGE, "--reuse copies finished runs in before training: not with --status, "
                           "--report, --refresh or --slurm");
    if (a->shard && (a->status || a->report || a->refresh || a->slurm)) /* it would be ignored */
        return qkv_err_set(e, QKV_ERR_USAGE, "--shard trains a share of the sweep: not with --status, --report, "
                           "--refresh or --slurm (whose array tasks are the shares)");
    return 0;
}

/* the parsed command run, its action on the sweep of c (loaded here); t0: when the command
 * started. 0, or -1 with e */
static int ablate_run(const ablate_args *a, qkv_ablate_config *c, double t0, qkv_err *e) {
    const char *cfg_path = a->config, *out = a->out;
    qkv_ablate_opts o = {.jobs = a->jobs < 1 ? 1 : (int)a->jobs, .quiet = a->quiet, .shards = 1,
                         .stale = (double)a->stale, .force = a->force, .reuse = a->reuse.v,
                         .n_reuse = a->reuse.n};
    if (check_actions(a, e) || (a->shard && parse_shard(a->shard, &o.shard, &o.shards, e)) ||
        qkv_ablate_config_load(c, cfg_path, e))
        return -1;
    char *out_buf = NULL, *bin = NULL;
    int rc = -1;
    if (!out) {
        const char *base = strrchr(cfg_path, '/') ? strrchr(cfg_path, '/') + 1 : cfg_path;
        if (!(out = out_buf = qkv__pathf("runs/%.*s", (int)strcspn(base, "."), base))) {
            qkv_err_set(e, QKV_ERR_FAIL, "out of memory");
            goto done;
        }
    }
    bin = qkv__cli_self_exe(); /* run the same qkv for every run */
    if (!bin) {
        qkv_err_set(e, QKV_ERR_FAIL, "cannot find the qkv executable (/proc/self/exe)");
        goto done;
    }
    int runs = c->n_variants * (c->n_lrs ? c->n_lrs : 1) * c->n_seeds;
    if (a->status) {
        rc = qkv_ablate_status(c, out, &o, stdout, e);
    } else if (a->report) {
        rc = report_sweep(c, out, &o, t0, e);
    } else if (a->refresh) {
        qkv__cli_set_threads(1); /* as the runs record them: one BLAS thread, the same bits */
        rc = qkv_ablate_refresh(c, out, a->quiet, e) || report_sweep(c, out, &o, t0, e) ? -1 : 0;
    } else if (a->slurm) {
        rc = submit_slurm(a, c, cfg_path, out, bin, runs, e);
    } else if (!qkv__ablate_reuse_check(o.reuse, o.n_reuse, e)) { /* before the first line of progress */
        rc = run_here(a, c, out, &o, bin, runs, t0, e);
    }
done:
    free(out_buf);
    free(bin);
    return rc ? -1 : 0;
}

int qkv__cmd_ablate(int argc, char **argv) {
    double t0 = qkv_clock_seconds(); /* the report's wall time counts from here */
    ablate_args a = {.jobs = sysconf(_SC_NPROCESSORS_ONLN)};
    qkv_ablate_config c = {0};
    qkv_err e;
    if (!qkv__cli_parse(&COMMAND, argc, argv, &a, &a.config, &e) && !ablate_run(&a, &c, t0, &e)) qkv_err_clear(&e);
    free(a.sbatch.v);
    free(a.reuse.v);
    qkv_ablate_config_free(&c);
    return qkv__cli_exit("ablate", &e);
}
