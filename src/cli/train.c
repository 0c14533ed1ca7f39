/* qkv train: train a model from a config, or resume a run. */
#include "app/heartbeat.h"
#include "cli/cli.h"
#include "cli/options.h"
#include "io/fileio.h"
#include "io/strbuf.h"
#include "tensor/clock.h"
#include "tensor/kernels.h"
#include "tensor/parallel.h"
#include "train/dist.h"
#include "train/run_dir.h"
#include "train/stop.h"
#include "train/train.h"
#include "tasks/task.h"

#include <math.h>
#include <signal.h>
#include <sys/prctl.h>
#include <stdlib.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct {
    const char *config, *out, *resume;
    qkv_cli_list sets;
    long long threads, stop_after, steps, example, stop_with;
    bool quiet, force, gemm_flops, time_products;
} train_args;

static const qkv_cli_option OPTIONS[] = {
    QKV_LIST("--set", "KEY=VALUE", train_args, sets,
             "override a config key, e.g. --set model.attention.qkv=shared (repeatable)"),
    QKV_STRING("--out", "DIR", train_args, out, "run directory (default: runs/<config name>-<date>-<time>)"),
    QKV_STRING("--resume", "DIR", train_args, resume,
               "continue the run in DIR from its last checkpoint (a finished run: says so and\n"
               "changes nothing)"),
    QKV_INT("--steps", "N", train_args, steps, 1, 1000000000,
            "with --resume: train on to N steps (extends a finished run; its weights equal those of\n"
            "a run of N steps from the start; needs the constant learning-rate schedule)"),
    QKV_INT("--threads", "N", train_args, threads, 1, QKV_MAX_THREADS,
            "threads for the step, at most " QKV_STR(QKV_MAX_THREADS) " (default: one per core); the same N\n"
            "gives the same bits, different N agree to float precision"),
    QKV_FLAG("--force", train_args, force,
             "start over in an --out DIR that already holds a run (its files are removed); with\n"
             "--resume: resume even though DIR/config.json differs from the config the\n"
             "checkpoint was written with (train.steps may always differ)"),
    QKV_FLAG("--quiet", train_args, quiet, "no progress on stderr"),
    QKV_INT("--example", "N", train_args, example, 0, 1000000000,
            "the evaluation example whose attention weights the run records for reports\n"
            "(DIR/observed.safetensors; default 0; qkv ablate passes its config's example)"),
    QKV_FLAG("--time-products", train_args, time_products,
             "time every matrix product and add to the summary line the run's seconds in them\n"
             "(\"products_seconds\", summed over its threads), its wall seconds and threads, and\n"
             "\"products_share\" = products / (threads x wall), for docs/performance.md"),
    QKV_INT("--stop-with", "PID", train_args, stop_with, 2, 2147483647,
            "stop (saving a checkpoint) when process PID, the one that started this one, ends\n"
            "(qkv ablate gives its own: a worker's trainer never outlives it)"),
    QKV_INT("--stop-after", "N", train_args, stop_after, 1, 1000000000,
            "stop (as Ctrl-C does) after N more steps; for testing resume"),
    /* internal (qkv bench --sweep): the matrix-product FLOPs this process executed, as
     * "gemm_flops" in the summary line */
    QKV_HIDDEN_FLAG("--gemm-flops", train_args, gemm_flops),
    QKV_HELP,
    QKV_OPTIONS_END,
};

static const qkv_cli_command COMMAND = {
    "train", "CONFIG [OPTION]...\n--resume DIR [--steps N] [--force] [--threads N] [--quiet]",
    "Train a transformer on the config's task. Writes DIR/config.json (the effective config),\n"
    "metrics.jsonl, model.safetensors, checkpoint.safetensors and summary.json, and prints the\n"
    "summary as JSON on stdout. Ctrl-C saves a checkpoint; --resume DIR continues it, with the\n"
    "same results as an uninterrupted run.",
    "CONFIG", OPTIONS,
};

/* a number of the summary line as JSON: %.9g, as summary.json has it (so the line and the file
 * agree to the bit when read back), or null when it is not finite (JSON has no NaN or Inf) */
static const char *json_num(double x, char *buf, size_t n) {
    if (isfinite(x)) snprintf(buf, n, "%.9g", x);
    else snprintf(buf, n, "null");
    return buf;
}

static int train_command(int argc, char **argv);

/* Resuming DIR: the config its checkpoint was written with against DIR/config.json (cfg, read
 * from cfg_path). Exempt: train.steps (--steps, and qkv ablate's extensions, grow it: config.json
 * holds the new count from the session's start, the checkpoint from its first save), and
 * model.vocab and model.seq_len where config.json leaves them to the task (0). Any other
 * difference is refused naming the first key, in qkv_config_keys() order, unless force (then
 * a note unless quiet). A checkpoint without a config (an older qkv's) or without a file (qkv_train
 * says so) passes. 0, or -1 with e: QKV_ERR_USAGE (a difference) or QKV_ERR_FAIL (the checkpoint is
 * damaged or unreadable). */
static int check_resume_config(const char *dir, const char *cfg_path, const qkv_config *cfg, bool force, bool quiet,
                               qkv_err *e) {
    char key[256], here[128], there[128];
    char *ck = qkv__pathf("%s/" QKV_RUN_CHECKPOINT, dir);
    if (!ck) return qkv_err_set(e, QKV_ERR_FAIL, "out of memory");
    qkv_config k;
    int have = access(ck, F_OK) ? 0 : qkv_config_of_model_file(ck, &k, e), rc = 0;
    qkv_config c = *cfg;
    if (have > 0) {
        c.train.steps = k.train.steps;
        if (!c.model.vocab) c.model.vocab = k.model.vocab;
        if (!c.model.seq_len) c.model.seq_len = k.model.seq_len;
    }
    if (have < 0) {
        rc = -1;
    } else if (!have || !qkv_config_first_diff(&c, &k, NULL, key, sizeof key, here, there, sizeof here)) {
        rc = 0;
    } else if (!force) {
        rc = qkv_err_set(e, QKV_ERR_USAGE, "%s: %s is %s here, %s in the checkpoint %s (give --force to resume anyway)",
                         cfg_path, key, here, there, ck);
    } else if (!quiet && qkv__dist_world().rank == 0) {
        fprintf(stderr, "qkv train: note: %s: %s is %s here, %s in the checkpoint %s; resuming anyway (--force)\n",
                cfg_path, key, here, there, ck);
    }
    free(ck);
    return rc;
}

int qkv__cmd_train(int argc, char **argv) {
    /* under mpirun, every process trains the same run together (docs/distributed.md) */
    qkv_dist d;
    qkv_err e;
    if (qkv__dist_init(NULL, NULL, &d, &e)) return qkv__cli_exit("train", &e);
    int status = train_command(argc, argv);
    qkv__dist_finalize();
    return status;
}

/* a run's summary line on stdout: JSON, bpb (the text figures, or "") after eval_loss, extra at the end */
static void print_summary(const qkv_run_summary *s, const char *dir, const char *bpb, const char *extra) {
    char acc[64], el[64], tl[64]; /* JSON has no NaN or Inf: null */
    printf("{\"eval_accuracy\":%s,\"eval_loss\":%s%s,\"train_loss\":%s,\"steps\":%lld,"
           "\"skipped_steps\":%lld,\"seconds\":%.2f,\"params\":%lld,\"attn_params\":%lld,\"run\":\"%s\"%s}\n",
           json_num(s->eval.accuracy, acc, sizeof acc), json_num(s->eval.loss, el, sizeof el), bpb,
           json_num(s->train_loss, tl, sizeof tl), s->steps, s->skipped_steps, s->seconds,
           (long long)s->params, (long long)s->attn_params, dir, extra);
}

/* the config file and run directory of a's run (*out NULL: the default name, made later), checked
 * against the other arguments and the number of processes; with --resume DIR, *cfg_path is
 * DIR/config.json in *resume_cfg (malloc'd, the caller's to free). 0, or -1 with e (QKV_ERR_USAGE;
 * QKV_ERR_FAIL when out of memory) */
static int run_paths(const train_args *a, qkv_dist d, char **resume_cfg, const char **cfg_path, const char **out,
                     qkv_err *e) {
    *cfg_path = a->config;
    *out = a->out;
    if (a->resume) {
        if (a->config || a->sets.n || a->out)
            return qkv_err_set(e, QKV_ERR_USAGE, "--resume DIR takes its config from DIR/config.json; drop CONFIG, "
                               "--set and --out");
        if (!(*resume_cfg = qkv__pathf("%s/" QKV_RUN_CONFIG, a->resume)))
            return qkv_err_set(e, QKV_ERR_FAIL, "out of memory");
        *cfg_path = *resume_cfg;
        *out = a->resume;
    }
    if (!*cfg_path) return qkv_err_set(e, QKV_ERR_USAGE, "missing CONFIG (try 'qkv train --help')");
    if (d.size > 1 && !*out) /* the default name has the time in it: each process would pick its own */
        return qkv_err_set(e, QKV_ERR_USAGE, "with %d processes, name the run directory: --out DIR", d.size);
    if (a->steps && !a->resume)
        return qkv_err_set(e, QKV_ERR_USAGE, "--steps extends a run: use it with --resume DIR (a new run takes "
                           "train.steps)");
    return 0;
}

/* --steps N on the resumed run of cfg: its new train.steps, when it only extends a constant
 * schedule; 0, or -1 with e (QKV_ERR_USAGE) */
static int extend_steps(const train_args *a, qkv_config *cfg, qkv_err *e) {
    if (!a->steps) return 0;
    if (a->steps < cfg->train.steps)
        return qkv_err_set(e, QKV_ERR_USAGE, "--steps %lld: the run in %s already has train.steps %d; --steps can "
                           "only extend it", a->steps, a->resume, cfg->train.steps);
    if (cfg->optim.schedule != QKV_SCHED_CONSTANT && a->steps != cfg->train.steps)
        return qkv_err_set(e, QKV_ERR_USAGE, "--steps: the run's %s schedule decays over train.steps %d, so a longer "
                           "run would have had other learning rates; extending needs optim.schedule constant",
                           QKV_SCHEDULE_NAMES[cfg->optim.schedule], cfg->train.steps);
    cfg->train.steps = (int)a->steps;
    return 0;
}

/* the default run directory, runs/NAME-YYYYmmdd-HHMMSS (NAME: the config file's up to its first
 * dot); malloc'd, NULL when out of memory */
static char *default_out(const char *cfg_path) {
    const char *base = strrchr(cfg_path, '/') ? strrchr(cfg_path, '/') + 1 : cfg_path;
    size_t n = strcspn(base, ".");
    time_t now = time(NULL);
    struct tm tm;
    localtime_r(&now, &tm);
    char stamp[32];
    strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
    return qkv__pathf("runs/%.*s-%s", (int)n, base, stamp);
}

/* a new run into out: refused (QKV_ERR_USAGE) when out holds any file of a run, as qkv_train's own
 * check has them (a directory holding only a model.safetensors, or metrics.jsonl, too, with the
 * same code); 0, or -1 with e */
static int refuse_existing_run(const char *out, qkv_err *e) {
    static const char *const files[] = {QKV_RUN_CONFIG, QKV_RUN_METRICS, QKV_RUN_MODEL, QKV_RUN_CHECKPOINT,
                                        QKV_RUN_SUMMARY};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char *p = qkv__pathf("%s/%s", out, files[i]);
        if (!p) return qkv_err_set(e, QKV_ERR_FAIL, "out of memory");
        bool held = access(p, F_OK) == 0;
        free(p);
        if (!held) continue;
        /* a run stopped before its first checkpoint has nothing --resume could continue */
        char *ck = qkv__pathf("%s/%s", out, QKV_RUN_CHECKPOINT);
        if (!ck) return qkv_err_set(e, QKV_ERR_FAIL, "out of memory");
        bool resumable = access(ck, F_OK) == 0;
        free(ck);
        if (!resumable)
            return qkv_err_set(e, QKV_ERR_USAGE, "%s holds a run stopped before its first checkpoint (nothing to "
                               "resume); start it over with --force", out);
        return qkv_err_set(e, QKV_ERR_USAGE, "%s already holds a run; continue it with --resume %s, or start it "
                           "over with --force", out, out);
    }
    return 0;
}

/* the summary line of a finished run of d.size processes (with --gemm-flops, the FLOPs; with
 * --time-products, the products' time since timed_since), by the first */
static void print_run(const qkv_run_summary *s, const char *out, const train_args *a, qkv_dist d, double timed_since) {
    char procs[160] = "";
    if (d.size > 1)
        snprintf(procs, sizeof procs, ",\"processes\":%d,\"param_checksum\":\"%016llx\"", s->processes,
                 (unsigned long long)s->param_checksum);
    if (a->gemm_flops)
        snprintf(procs + strlen(procs), sizeof procs - strlen(procs), ",\"gemm_flops\":%llu",
                 (unsigned long long)qkv__gemm_flops);
    if (a->time_products) { /* this process's threads: their wall time in products over all of it */
        double wall = qkv_clock_seconds() - timed_since, prod = (double)qkv__gemm_ns / 1e9;
        int threads = qkv_get_threads();
        snprintf(procs + strlen(procs), sizeof procs - strlen(procs),
                 ",\"products_seconds\":%.3f,\"wall_seconds\":%.3f,\"threads\":%d,\"products_share\":%.4f", prod,
                 wall, threads, wall > 0 ? prod / (threads * wall) : 0);
    }
    char bpb[256] = "", b1[64], b2[64], b3[64]; /* bytes: bits per byte and the baselines beside it */
    if (s->text)
        snprintf(bpb, sizeof bpb, ",\"eval_bpb\":%s,\"baseline_xz_bpb\":%s,\"baseline_unigram_bpb\":%s",
                 json_num(s->eval_bpb, b1, sizeof b1), json_num(s->baseline_xz_bpb, b2, sizeof b2),
                 json_num(s->baseline_unigram_bpb, b3, sizeof b3));
    print_summary(s, out, bpb, procs);
}

/* train_one's run of the config at cfg_path into out; 0, or -1 with e */
static int train_run(const train_args *a, qkv_dist d, const char *cfg_path, const char *out, qkv_err *e) {
    qkv_config cfg;
    if ((a->resume ? qkv__cli_load_run_config(cfg_path, a->sets.v, a->sets.n, a->resume, true, &cfg, e)
                   : qkv__cli_load_config(cfg_path, a->sets.v, a->sets.n, &cfg, e)) ||
        (a->resume && check_resume_config(a->resume, cfg_path, &cfg, a->force, a->quiet, e)) ||
        extend_steps(a, &cfg, e))
        return -1;
    qkv__cli_set_threads((int)a->threads);
    double timed_since = qkv_clock_seconds();
    if (a->time_products) atomic_store(&qkv__gemm_timing, 1);

    qkv_run_opts opt = {.out_dir = out, .quiet = a->quiet, .resume = a->resume != NULL,
                        .stop_after = a->stop_after, .force = a->force, .example = (int)a->example};
    qkv_run_summary s;
    /* a usage error (qkv_train checks too, for several processes) */
    if (d.size == 1 && !a->resume && !a->force && refuse_existing_run(out, e)) return -1;
    qkv_stop_catcher stop; /* Ctrl-C and SIGTERM: the run saves a checkpoint and stops */
    qkv_stop_catch(&stop);
    if (a->stop_with) { /* SIGTERM when the parent ends; it may have ended already */
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (getppid() != (pid_t)a->stop_with) qkv_request_stop();
    }
    if (!a->quiet && d.rank == 0) qkv__heartbeat_start("qkv train"); /* a line through long silent work */
    int r = qkv_train(&cfg, &opt, &s, e);
    qkv__heartbeat_stop();
    qkv_stop_release(&stop);
    /* the first process speaks for all, errors included: qkv_train's error is every process's
     * (the first failing one's), so the others end quietly with 0, and mpirun reports the first's
     * status with no early exit cutting its line short */
    if (d.rank) {
        qkv_err_clear(e);
        return 0;
    }
    if (r) return -1;
    if (s.finished) { /* its summary stays the one it wrote when it finished */
        if (!a->quiet)
            fprintf(stderr, "qkv train: %s is finished (%lld of %d steps): nothing to do, nothing rewritten (train "
                    "on with --resume %s --steps N)\n", out, s.steps, cfg.train.steps, out);
        return 0;
    }
    print_run(&s, out, a, d, timed_since);
    double chance, never;
    if (!a->quiet && !qkv_task_floors(&cfg.task, QKV_FLOOR_EXAMPLES, &chance, &never) && isfinite(s.eval.accuracy))
        fprintf(stderr, "qkv train: accuracy %.1f%%; for scale, chance is %.1f%% (1 in %d values) and a model that "
                "never looks up a query's key reaches %.1f%%\n", 100 * s.eval.accuracy, 100 * chance, cfg.task.values,
                100 * never);
    if (!a->quiet) fprintf(stderr, "qkv train: run directory %s\n", out);
    return 0;
}

/* one run: a new one from CONFIG, or --resume DIR; its summary line; 0, or -1 with e */
static int train_one(const train_args *a, qkv_err *e) {
    qkv_dist d = qkv__dist_world();
    const char *cfg_path, *out;
    char *resume_cfg = NULL, *default_dir = NULL;
    int rc = run_paths(a, d, &resume_cfg, &cfg_path, &out, e);
    if (!rc && !out && !(out = default_dir = default_out(cfg_path))) rc = qkv_err_set(e, QKV_ERR_FAIL, "out of memory");
    if (!rc) rc = train_run(a, d, cfg_path, out, e);
    /* interrupted: the command to resume with, on a line of its own (by the first process) */
    if (rc && e->code == QKV_ERR_INTERRUPTED && d.rank == 0)
        fprintf(stderr, "qkv train: %s. Resume with:\n  qkv train --resume %s\n", e->msg, out);
    free(resume_cfg);
    free(default_dir);
    return rc;
}

/* the parsed command run; its exit status */
static int train_command(int argc, char **argv) {
    train_args a = {0};
    qkv_err e;
    if (!qkv__cli_parse(&COMMAND, argc, argv, &a, &a.config, &e) && !train_one(&a, &e)) qkv_err_clear(&e);
    free(a.sets.v);
    if (e.code == QKV_ERR_INTERRUPTED) return qkv__cli_exit_status(e.code); /* train_one has said it */
    return qkv__cli_exit("train", &e);
}
