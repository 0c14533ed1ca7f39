/* qkv bench --sweep: the throughput of a sweep of tiny runs, the way qkv ablate trains them.
 *
 * A fixed sweep: the recall config (configs/recall.json) x the attention variants below x the
 * seeds below, each run a `qkv train --threads 1` process of its own (as qkv ablate starts
 * them), `jobs` at a time (default: one per core), in a temporary directory removed at the end.
 * Each run is a whole training run of the config with train.steps set to the sweep's steps:
 * its micro-batches, Adam, clipping, its periodic evaluation and validation, its metrics and
 * checkpoints; no report is written. The clock runs from the first run's start to the last
 * run's end. Each run reports the matrix-product FLOPs it executed (qkv train --gemm-flops) and,
 * with time_products, its seconds in them and its wall seconds (qkv train --time-products).
 * bench/torch_sweep.py is the same sweep in PyTorch (docs/performance.md). */
#define _DEFAULT_SOURCE  /* wait4 */
#define _XOPEN_SOURCE 700 /* nftw, mkdtemp */
#include "ablate/stats.h"
#include "cli/cli.h"
#include "io/strbuf.h"
#include "tensor/clock.h"
#include "tensor/parallel.h"
#include "train/bench.h"
#include "config/run_config.h"
#include "train/stop.h"
#include "tasks/task.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* the sweep: every variant with every seed (bench/torch_sweep.py has the same lists) */
static const char *const VARIANTS[] = {"full", "shared", "qk_tied", "kv_tied"};
static const int SEEDS[] = {0, 1, 2};
enum { N_VARIANTS = sizeof VARIANTS / sizeof VARIANTS[0], N_SEEDS = sizeof SEEDS / sizeof SEEDS[0],
       N_RUNS = N_VARIANTS * N_SEEDS };

typedef struct {
    pid_t pid;
    double start, seconds;   /* wall time of the process */
    double rss_mb;           /* its peak resident memory */
    double flops, accuracy;  /* from its summary line */
    double products, wall;   /* with --time-products: its seconds in products, its wall seconds (one thread) */
    long long steps;
} sweep_run;



static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
    (void)sb; (void)flag; (void)ftw;
    remove(path);
    return 0;
}

/* the default config: configs/recall.json from here, else beside the executable's directory
 * (build/qkv -> configs/recall.json of its source tree); malloc'd, NULL when there is none */
static char *find_config(const char *bin) {
    if (access("configs/recall.json", R_OK) == 0) return strdup("configs/recall.json");
    const char *slash = strrchr(bin, '/');
    char *p = slash ? qkv__pathf("%.*s/../configs/recall.json", (int)(slash - bin), bin) : NULL;
    if (p && access(p, R_OK) == 0) return p;
    free(p);
    return NULL;
}

double qkv__cli_json_num(const char *text, const char *key) {
    char k[64];
    snprintf(k, sizeof k, "\"%s\":", key);
    const char *p = strstr(text, k);
    return p ? strtod(p + strlen(k), NULL) : -1;
}

/* run r's file with extension ext (NULL: its run directory) in dir; malloc'd, NULL when out of memory */
static char *run_path(const char *dir, int r, const char *ext) {
    return qkv__pathf("%s/%s-s%d%s", dir, VARIANTS[r / N_SEEDS], SEEDS[r % N_SEEDS], ext ? ext : "");
}

/* launch's spawn of run r: `bin train config ... --out run_dir`, stdout into out and stderr into log */
static pid_t spawn_run(const char *bin, const char *config, const char *run_dir, const char *out, const char *log,
                       int r, int steps, bool time_products, bool bf16) {
    char qkv[64], seed[64], st[64];
    snprintf(qkv, sizeof qkv, "model.attention.qkv=%s", VARIANTS[r / N_SEEDS]);
    snprintf(seed, sizeof seed, "train.seed=%d", SEEDS[r % N_SEEDS]);
    snprintf(st, sizeof st, "train.steps=%d", steps);
    char *argv[] = {(char *)bin, "train", (char *)config, "--set", qkv, "--set", seed, "--set", st, "--set",
                    bf16 ? "train.precision=bf16" : "train.precision=f32", "--out", (char *)run_dir, "--threads", "1",
                    "--quiet", "--gemm-flops", time_products ? "--time-products" : NULL, NULL};
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&fa, 2, log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    pid_t pid;
    int e = posix_spawn(&pid, bin, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    return e ? -1 : pid;
}

/* run r started in dir: its pid, or -1 */
static pid_t launch(const char *bin, const char *config, const char *dir, int r, int steps, bool time_products,
                    bool bf16) {
    char *run_dir = run_path(dir, r, NULL), *out = run_path(dir, r, ".json"), *log = run_path(dir, r, ".log");
    pid_t pid = -1;
    if (run_dir && out && log) pid = spawn_run(bin, config, run_dir, out, log, r, steps, time_products, bf16);
    free(run_dir);
    free(out);
    free(log);
    return pid;
}

/* run r's summary line into *s; 0, or -1 with e */
static int read_result(const char *dir, int r, sweep_run *s, qkv_err *e) {
    char line[4096] = "", *path = run_path(dir, r, ".json");
    FILE *f = path ? fopen(path, "r") : NULL;
    free(path);
    if (f) {
        if (!fgets(line, sizeof line, f)) line[0] = 0;
        fclose(f);
    }
    s->flops = qkv__cli_json_num(line, "gemm_flops");
    s->accuracy = qkv__cli_json_num(line, "eval_accuracy");
    s->steps = (long long)qkv__cli_json_num(line, "steps");
    s->products = qkv__cli_json_num(line, "products_seconds");
    s->wall = qkv__cli_json_num(line, "wall_seconds");
    if (s->flops < 0 || s->steps < 0)
        return qkv_err_set(e, QKV_ERR_FAIL, "--sweep: run %s seed %d printed no summary", VARIANTS[r / N_SEEDS],
                           SEEDS[r % N_SEEDS]);
    return 0;
}

/* why run r failed, from the last line of its log, into e; -1 */
static int run_failed(const char *dir, int r, int status, qkv_err *e) {
    char line[1024] = "", last[1024] = "", *path = run_path(dir, r, ".log");
    FILE *f = path ? fopen(path, "r") : NULL;
    free(path);
    while (f && fgets(line, sizeof line, f))
        if (line[0] && line[0] != '\n') snprintf(last, sizeof last, "%s", line);
    if (f) fclose(f);
    last[strcspn(last, "\n")] = 0;
    return qkv_err_set(e, QKV_ERR_FAIL, "--sweep: run %s seed %d failed (%s %d)%s%s", VARIANTS[r / N_SEEDS],
                       SEEDS[r % N_SEEDS], WIFEXITED(status) ? "exit" : "signal",
                       WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status), last[0] ? ": " : "", last);
}

/* the config as every run sees it, and what the report says of it */
typedef struct sweep_shape {
    qkv_config cfg;
    int seq_len;                /* tokens of an example */
    long long val_examples;     /* validation examples of an evaluation (0: the task has none) */
    int evals;                  /* evaluations of a run */
} sweep_shape;

/* config with train.steps = steps, checked here so a bad one fails before any run; 0, or -1 with e */
static int sweep_config(const char *config, int steps, sweep_shape *sh, qkv_err *e) {
    char st[64];
    snprintf(st, sizeof st, "train.steps=%d", steps);
    const char *sets[] = {st, "train.precision=f32"}; /* each sweep sets its own */
    if (qkv__cli_load_config(config, sets, 2, &sh->cfg, e)) return -1;
    qkv_task task;
    qkv_err in;
    if (qkv_task_open(&task, &sh->cfg.task, 0, &in)) {
        qkv_task_close(&task);
        return qkv_err_set(e, in.code, "%s: %s", config, in.msg);
    }
    const qkv_config *cfg = &sh->cfg;
    sh->seq_len = cfg->model.seq_len ? cfg->model.seq_len : task.seq_len;
    sh->val_examples = qkv_task_split_size(&task, QKV_SPLIT_VAL) > 0
                           ? (cfg->train.val_examples ? cfg->train.val_examples : cfg->train.eval_examples) : 0;
    qkv_task_close(&task);
    const qkv_train_config *tc = &cfg->train;
    sh->evals = tc->eval_every > 0 ? steps / tc->eval_every + (steps % tc->eval_every != 0) : 1;
    return 0;
}

/* a fresh directory for the runs under $TMPDIR (or /tmp) into *dir (malloc'd); 0, or -1 with e */
static int sweep_dir(char **dir, qkv_err *e) {
    const char *tmp = getenv("TMPDIR");
    const char *parent = tmp && tmp[0] ? tmp : "/tmp";
    if (!(*dir = qkv__pathf("%s/qkv-sweep-XXXXXX", parent))) return qkv_err_set(e, QKV_ERR_FAIL, "out of memory");
    if (!mkdtemp(*dir)) /* named by the parent and its origin: the random name mkdtemp tried says nothing */
        return qkv_err_set(e, QKV_ERR_FAIL, "--sweep: cannot make a directory in %s%s: %s", parent,
                           parent == tmp ? " (TMPDIR)" : "", strerror(errno));
    return 0;
}

/* run r has ended with status: its wall time and memory, then its result checked; 0, or -1 with e */
static int sweep_ended(const char *dir, sweep_run *runs, int r, int status, const struct rusage *ru, int steps,
                       bool time_products, qkv_err *e) {
    double t = qkv_clock_seconds();
    runs[r].pid = 0;
    runs[r].seconds = t - runs[r].start;
    runs[r].rss_mb = (double)ru->ru_maxrss / 1024.0;
    if (!WIFEXITED(status) || WEXITSTATUS(status)) return run_failed(dir, r, status, e);
    int unread = read_result(dir, r, &runs[r], e);
    if (runs[r].steps >= 0 && runs[r].steps != steps)
        return qkv_err_set(e, QKV_ERR_FAIL, "--sweep: run %s seed %d trained %lld steps, not %d", VARIANTS[r / N_SEEDS],
                           SEEDS[r % N_SEEDS], runs[r].steps, steps);
    if (unread) return -1;
    if (time_products && (runs[r].products < 0 || runs[r].wall <= 0))
        return qkv_err_set(e, QKV_ERR_FAIL, "--sweep: run %s seed %d printed no products_seconds and wall_seconds",
                           VARIANTS[r / N_SEEDS], SEEDS[r % N_SEEDS]);
    return 0;
}

/* the runs, jobs at a time, until all have ended, one fails or a signal comes; *started: how many
 * were started; 0, or -1 with e */
static int sweep_runs(const char *bin, const char *config, const char *dir, int steps, int jobs, bool time_products,
                      bool bf16, sweep_run *runs, int *started, qkv_err *e) {
    int next = 0, running = 0, done = 0, rc = 0;
    while (done < N_RUNS && !rc) {
        while (!qkv_stop_requested() && running < jobs && next < N_RUNS) {
            runs[next].start = qkv_clock_seconds();
            if ((runs[next].pid = launch(bin, config, dir, next, steps, time_products, bf16)) < 0) {
                rc = qkv_err_set(e, QKV_ERR_FAIL, "--sweep: cannot start %s train", bin);
                break;
            }
            next++;
            running++;
        }
        if (rc || qkv_stop_requested()) break;
        int status;
        struct rusage ru;
        pid_t pid = wait4(-1, &status, 0, &ru);
        if (pid < 0) {
            if (errno == EINTR) continue;
            rc = qkv_err_set(e, QKV_ERR_FAIL, "--sweep: wait: %s", strerror(errno));
            break;
        }
        int r = 0;
        while (r < next && runs[r].pid != pid) r++;
        if (r == next) continue;
        running--;
        done++;
        rc = sweep_ended(dir, runs, r, status, &ru, steps, time_products, e);
    }
    *started = next;
    return rc;
}

/* the runs still going (stopped early: an error, a signal) stopped (they checkpoint) and waited for */
static void stop_runs(const sweep_run *runs, int n) {
    for (int r = 0; r < n; r++)
        if (runs[r].pid > 0) kill(runs[r].pid, SIGTERM);
    for (int r = 0; r < n; r++)
        if (runs[r].pid > 0) waitpid(runs[r].pid, NULL, 0);
}

/* what a finished sweep measured */
typedef struct sweep_stats {
    double seconds, ceiling;
    double flops, acc, rss;         /* the runs' matrix-product FLOPs, mean accuracy, peak memory */
    double run_median, run_max;     /* a run's wall time */
    double tokens, runs_per_min, tps_core, gflops, share;
    double products_share;          /* the runs' seconds in products over their seconds (-1: not timed) */
} sweep_stats;

/* the figures of a finished sweep: its runs, wall time and the per-core ceiling */
static sweep_stats sweep_figures(const sweep_run *runs, double seconds, double ceiling, int steps, int jobs,
                                 const sweep_shape *sh, bool time_products) {
    sweep_stats st = {.seconds = seconds, .ceiling = ceiling, .products_share = -1};
    double secs[N_RUNS], products = 0, wall = 0;
    for (int r = 0; r < N_RUNS; r++) {
        products += runs[r].products;
        wall += runs[r].wall;
        st.flops += runs[r].flops;
        st.acc += runs[r].accuracy / N_RUNS;
        st.rss = runs[r].rss_mb > st.rss ? runs[r].rss_mb : st.rss;
        secs[r] = runs[r].seconds;
    }
    qsort(secs, N_RUNS, sizeof secs[0], cmp_d);
    st.run_median = N_RUNS % 2 ? secs[N_RUNS / 2] : 0.5 * (secs[N_RUNS / 2 - 1] + secs[N_RUNS / 2]);
    st.run_max = secs[N_RUNS - 1];
    st.tokens = (double)N_RUNS * steps * sh->cfg.train.batch * sh->seq_len; /* trained tokens */
    st.runs_per_min = N_RUNS / seconds * 60;
    st.tps_core = st.tokens / seconds / jobs;
    st.gflops = st.flops / seconds / 1e9;
    st.share = ceiling > 0 ? st.gflops / (ceiling * jobs) : 0;
    if (time_products) st.products_share = products / wall;
    return st;
}

/* the figures as one JSON object on stdout (round: its round of --precision both, else -1) */
static void print_json(const char *config, int steps, int jobs, const sweep_shape *sh, const sweep_stats *st,
                       bool bf16, int round) {
    const qkv_train_config *tc = &sh->cfg.train;
    printf("{\"program\":\"qkv\",\"sweep\":\"recall\",\"config\":\"%s\",\"precision\":\"%s\",", config,
           bf16 ? "bf16" : "f32");
    if (round >= 0) printf("\"round\":%d,", round);
    printf("\"variants\":[");
    for (int v = 0; v < N_VARIANTS; v++) printf("%s\"%s\"", v ? "," : "", VARIANTS[v]);
    printf("],\"seeds\":[");
    for (int s = 0; s < N_SEEDS; s++) printf("%s%d", s ? "," : "", SEEDS[s]);
    printf("],\"runs\":%d,\"steps\":%d,\"jobs\":%d,\"batch\":%d,\"micro_batches\":%d,\"seq_len\":%d,"
           "\"eval_every\":%d,\"eval_examples\":%d,\"val_examples\":%lld,\"evaluations_per_run\":%d,"
           "\"seconds\":%.3f,\"runs_per_min\":%.3f,\"tokens\":%.0f,\"tokens_per_s_per_core\":%.0f,"
           "\"gemm_flops\":%.0f,\"gflops\":%.3f,\"ceiling_gflops_per_core\":%.2f,\"ceiling_gflops\":%.2f,"
           "\"ceiling_share\":%.4f,\"run_seconds_median\":%.3f,\"run_seconds_max\":%.3f,"
           "\"peak_rss_mb\":%.1f,\"eval_accuracy_mean\":%.4f",
           N_RUNS, steps, jobs, tc->batch, qkv_train_shards(tc), sh->seq_len, tc->eval_every, tc->eval_examples,
           sh->val_examples, sh->evals, st->seconds, st->runs_per_min, st->tokens, st->tps_core, st->flops,
           st->gflops, st->ceiling, st->ceiling * jobs, st->share, st->run_median, st->run_max, st->rss, st->acc);
    if (st->products_share >= 0) printf(",\"products_share\":%.4f", st->products_share);
    printf("}\n");
    fflush(stdout);
}

/* the sweep in words, then the table's columns, on stdout */
static void print_heading(const char *config, int steps, int jobs, const sweep_shape *sh) {
    const qkv_train_config *tc = &sh->cfg.train;
    printf("sweep: %s, variants", config);
    for (int v = 0; v < N_VARIANTS; v++) printf(" %s", VARIANTS[v]);
    printf(" x seeds");
    for (int s = 0; s < N_SEEDS; s++) printf(" %d", SEEDS[s]);
    printf(" = %d runs of %d steps, %d at a time, each `qkv train --threads 1`;\n", N_RUNS, steps, jobs);
    printf("a step: %d examples of %d tokens in %d micro-batches; evaluation every %d steps (%d + %lld examples), "
           "%d per run\n", tc->batch, sh->seq_len, qkv_train_shards(tc), tc->eval_every, tc->eval_examples,
           sh->val_examples, sh->evals);
    printf("%-9s %5s %6s %5s %8s %9s %14s %9s %8s %8s %7s %8s %7s %9s\n", "precision", "runs", "steps", "jobs",
           "seconds", "runs/min", "tokens/s/core", "GFLOP", "GFLOP/s", "ceiling", "share", "run s", "RSS MB",
           "eval acc");
}

/* one sweep's figures as a row of the table */
static void print_row(int steps, int jobs, const sweep_stats *st, bool bf16) {
    printf("%-9s %5d %6d %5d %8.2f %9.2f %14.0f %9.1f %8.2f %8.1f %6.1f%% %8.2f %7.1f %9.3f\n", bf16 ? "bf16" : "f32",
           N_RUNS, steps, jobs, st->seconds, st->runs_per_min, st->tps_core, st->flops / 1e9, st->gflops,
           st->ceiling * jobs, 100 * st->share, st->run_median, st->rss, st->acc);
    if (st->products_share >= 0)
        printf("the runs' time in matrix products (each product timed: --time-products): %.1f%%\n",
               100 * st->products_share);
    fflush(stdout);
}

/* one sweep of the runs, their products in bf16 or float32, into *st; 0, or -1 with e */
static int sweep_once(const char *bin, const char *config, int steps, int jobs, bool json, bool time_products,
                      bool bf16, double ceiling, const sweep_shape *sh, sweep_stats *st, qkv_err *e) {
    char *dir = NULL;
    if (sweep_dir(&dir, e)) {
        free(dir);
        return -1;
    }
    if (!json)
        fprintf(stderr, "qkv bench: sweep of %d runs (%d variants x %d seeds) of %d steps, %d at a time, %s, in %s\n",
                N_RUNS, N_VARIANTS, N_SEEDS, steps, jobs, bf16 ? "bf16" : "f32", dir);
    qkv_stop_catcher stop;
    qkv_stop_catch(&stop);

    sweep_run runs[N_RUNS];
    memset(runs, 0, sizeof runs);
    int started;
    double t0 = qkv_clock_seconds();
    int rc = sweep_runs(bin, config, dir, steps, jobs, time_products, bf16, runs, &started, e);
    double seconds = qkv_clock_seconds() - t0;
    stop_runs(runs, started);
    qkv_stop_release(&stop);
    nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    free(dir);
    if (qkv_stop_requested() && !rc) rc = qkv_err_set(e, QKV_ERR_INTERRUPTED, "--sweep: interrupted");
    if (rc) return -1;
    *st = sweep_figures(runs, seconds, ceiling, steps, jobs, sh, time_products);
    return 0;
}

/* qkv__cli_bench_sweep with the executable at bin and the config found */
static int sweep(const char *bin, const char *config, int steps, int jobs, bool json, bool time_products, bool f32,
                 bool bf16, int rounds, qkv_err *e) {
    sweep_shape sh;
    if (sweep_config(config, steps, &sh, e)) return -1;
    if (jobs > N_RUNS) jobs = N_RUNS;

    /* the per-core ceiling: OpenBLAS's sgemm on one thread, before the sweep, on an idle machine */
    qkv__cli_set_threads(1);
    double ceiling = qkv_bench_sgemm_ceiling(1024, 10);
    qkv__cli_children_one_blas_thread(); /* as qkv ablate starts its runs */

    sweep_stats st;
    if (!(f32 && bf16)) {
        if (sweep_once(bin, config, steps, jobs, json, time_products, bf16, ceiling, &sh, &st, e)) return -1;
        if (json) print_json(config, steps, jobs, &sh, &st, bf16, -1);
        else {
            print_heading(config, steps, jobs, &sh);
            print_row(steps, jobs, &st, bf16);
        }
        return 0;
    }
    /* side by side: rounds pairs, alternating, so both see the machine as it is; the medians */
    enum { MAX_ROUNDS = 1000 };
    static double rpm[2][MAX_ROUNDS], run_s[2][MAX_ROUNDS];
    if (!json) print_heading(config, steps, jobs, &sh);
    for (int r = 0; r < rounds; r++)
        for (int k = 0; k < 2; k++) {
            if (sweep_once(bin, config, steps, jobs, json, time_products, k, ceiling, &sh, &st, e)) return -1;
            if (json) print_json(config, steps, jobs, &sh, &st, k, r);
            else print_row(steps, jobs, &st, k);
            rpm[k][r] = st.runs_per_min, run_s[k][r] = st.run_median;
        }
    if (!json) {
        static const bool NONE[MAX_ROUNDS]; /* no round is censored */
        double m[2], w[2];
        for (int k = 0; k < 2; k++)
            m[k] = qkv_stats_median_censored(rpm[k], NONE, rounds), w[k] = qkv_stats_median_censored(run_s[k], NONE, rounds);
        printf("medians of %d rounds, alternating: f32 %.2f runs/min, a run %.2f s; bf16 %.2f runs/min, a run %.2f s\n"
               "bf16: %.2fx the runs per minute of f32, a run %.2fx as fast\n", rounds, m[0], w[0], m[1], w[1],
               m[0] > 0 ? m[1] / m[0] : 0, w[1] > 0 ? w[0] / w[1] : 0);
    }
    return 0;
}

int qkv__cli_bench_sweep(const char *config, int steps, int jobs, bool json, bool time_products, bool f32,
                         bool bf16, int rounds, qkv_err *e) {
    char *bin = qkv__cli_self_exe(), *found = NULL;
    int rc;
    if (!bin) rc = qkv_err_set(e, QKV_ERR_FAIL, "cannot find the qkv executable");
    else if (!config && !(config = found = find_config(bin)))
        rc = qkv_err_set(e, QKV_ERR_USAGE, "--sweep: cannot find configs/recall.json (run from qkv's source tree, or "
                         "give --config FILE)");
    else
        rc = sweep(bin, config, steps, jobs, json, time_products, f32, bf16, rounds, e);
    free(bin);
    free(found);
    return rc;
}
