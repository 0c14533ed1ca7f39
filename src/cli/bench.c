/* qkv bench: milliseconds per training step, throughput, share of the sgemm ceiling,
 * peak memory and (with the tests' allocation counter preloaded, as make bench does) heap
 * allocations per step, for the standard sizes. */
#include "ablate/stats.h"
#include "app/heartbeat.h"
#include "cli/cli.h"
#include "cli/options.h"
#include "config/config.h"
#include "config/run_config.h"
#include "tensor/buildinfo.h"
#include "tensor/parallel.h"
#include "train/bench.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

typedef struct {
    const char *size, *config, *precision;
    qkv_cli_list sets;
    long long threads, steps, runs_steps, jobs, micro, rounds;
    bool json, sweep, time_products;
} bench_args;

static const qkv_cli_option OPTIONS[] = {
    QKV_STRING("--size", "S", bench_args, size, "one size: tiny, small or medium (default: all three)"),
    QKV_LIST("--set", "KEY=VALUE", bench_args, sets,
             "a model.attention key of the timed model (repeatable), e.g. model.attention.diff=true,\n"
             "or train.precision=bf16: the step's matrix products in bf16 (a CPU with avx512_bf16)"),
    QKV_STRING("--precision", "P", bench_args, precision,
               "the matrix products' precision (train.precision): f32 (default), bf16, or both: f32\n"
               "and bf16 side by side, alternating (each size, or the sweep, once in each per\n"
               "round), their medians and bf16's speed-up"),
    QKV_INT("--rounds", "R", bench_args, rounds, 1, 1000,
            "with --precision both: rounds of the pair, alternating (default 3)"),
    QKV_INT("--threads", "N", bench_args, threads, 1, QKV_MAX_THREADS,
            "threads, at most " QKV_STR(QKV_MAX_THREADS) " (default 1): qkv's pool, each matrix-product\n"
            "piece on one BLAS thread"),
    QKV_INT("--steps", "K", bench_args, steps, 1, 100000, "timed steps (default: 50 tiny, 20 small, 10 medium)"),
    QKV_INT("--micro-batches", "S", bench_args, micro, 1, 4096,
            "the step in S micro-batches, as qkv train takes it with train.shards S: whole\n"
            "micro-batches on each thread (default 1: the whole batch in one pass, its ops\n"
            "split across the threads); S must divide the size's batch"),
    QKV_FLAG("--json", bench_args, json,
             "one JSON object per line: size, threads, ms_per_step, tokens_per_s, gflops,\n"
             "ceiling_gflops, ceiling_share, peak_rss_mb, allocs_per_step (-1: not counted;\n"
             "make bench counts them), products_share, ms_products, bf16_ceiling_gflops (0: no\n"
             "bf16 products here), bf16_ceiling_share, ms_products_at_ceiling (the step's products\n"
             "at its precision's ceiling), ...; with --sweep: runs_per_min, tokens_per_s_per_core,\n"
             "gemm_flops, ceiling_share, ..."),
    QKV_FLAG("--sweep", bench_args, sweep,
             "time a sweep of tiny runs instead: the recall config x 4 attention variants x 3\n"
             "seeds, each run a `qkv train --threads 1` process (evaluations included), one run\n"
             "per core at a time; runs per minute, tokens/s per core, matrix-product FLOPs and\n"
             "their share of the per-core sgemm ceiling times the cores"),
    QKV_INT("--runs-steps", "N", bench_args, runs_steps, 1, 1000000, "with --sweep: steps per run (default 300)"),
    QKV_INT("--jobs", "N", bench_args, jobs, 1, 256, "with --sweep: runs at once (default: the number of cores)"),
    QKV_STRING("--config", "FILE", bench_args, config, "with --sweep: the runs' config (default: configs/recall.json)"),
    QKV_FLAG("--time-products", bench_args, time_products,
             "with --sweep: each run with qkv train --time-products, and the share of the runs'\n"
             "time in matrix products (each product is timed, so runs/min are a little lower; the\n"
             "step benchmark always reports the share, from extra steps)"),
    QKV_HELP,
    QKV_OPTIONS_END,
};

static const qkv_cli_command COMMAND = {
    "bench", "[OPTION]...",
    "Time the training step (forward, backward, Adam; full attention; cross-entropy at every\n"
    "position; random tokens) of the standard sizes (docs/performance.md): median ms/step over\n"
    "K steps after warm-up, tokens/s, matrix-product GFLOP/s, this machine's ceiling at the\n"
    "same thread count (sgemm's; with bf16 products, qkv's bf16 product's) and the step's share\n"
    "of it, peak resident memory, heap allocations per step, and (\"products\") the share of\n"
    "the threads' time spent in matrix products, from K more steps with each product timed.\n"
    "Each size runs in its own process, so memory is per size.\n"
    "--sweep times a sweep of whole tiny training runs instead (bench/torch_sweep.py is the\n"
    "same sweep in PyTorch).",
    NULL, OPTIONS,
};

static const qkv_bench_size *find_size(const char *name) {
    for (int i = 0; i < 3; i++)
        if (!strcmp(QKV_BENCH_SIZES[i].name, name)) return &QKV_BENCH_SIZES[i];
    return NULL;
}

/* the attention and positions of the --set assignments (model.attention keys, model.position and
 * model.rope_base: the sizes fix the rest) into *over, and train.precision into *bf16; 0, or -1
 * with e (bf16 where this CPU or build has none: refused as qkv train refuses it) */
static int model_of(const qkv_cli_list *sets, qkv_model_config *over, bool *bf16, qkv_err *e) {
    qkv_config c;
    qkv_config_defaults(&c);
    for (int i = 0; i < sets->n; i++) {
        const char *a = sets->v[i];
        if (strncmp(a, "model.attention.", 16) && strncmp(a, "model.position=", 15) &&
            strncmp(a, "model.rope_base=", 16) && strncmp(a, "train.precision=", 16))
            return qkv_err_set(e, QKV_ERR_USAGE, "--set: %s: only model.attention keys, model.position, "
                               "model.rope_base and train.precision (the sizes fix the rest)", a);
        if (qkv_config_set(&c, a, e)) return -1; /* it names --set and the key */
    }
    *over = c.model;
    *bf16 = c.train.precision == QKV_PRECISION_BF16;
    qkv_err why;
    if (*bf16 && !qkv_bf16_available(&why))
        return qkv_err_set(e, why.code, "train.precision: \"bf16\" is refused: %s (use \"f32\")", why.msg);
    return 0;
}
/* the precisions a benchmark times, as bits */
enum { PREC_F32 = 1, PREC_BF16 = 2 };
static const char *prec_name(int p) { return p == PREC_BF16 ? "bf16" : "f32"; }

/* --precision (and --rounds) into *precs and *rounds, given whether a --set asked for bf16
 * (set_bf16) or named train.precision at all (set_any); 0, or -1 with e (bf16 where this CPU or
 * build has none: refused as qkv train refuses it, naming the key and the missing feature) */
static int precisions_of(const bench_args *a, bool set_bf16, bool set_any, int *precs, int *rounds, qkv_err *e) {
    *precs = set_bf16 ? PREC_BF16 : PREC_F32;
    *rounds = 1;
    if (!a->precision) {
        if (a->rounds) return qkv_err_set(e, QKV_ERR_USAGE, "--rounds goes with --precision both");
        return 0;
    }
    if (set_any) return qkv_err_set(e, QKV_ERR_USAGE, "--precision and --set train.precision: give one of them");
    if (!strcmp(a->precision, "f32")) *precs = PREC_F32;
    else if (!strcmp(a->precision, "bf16")) *precs = PREC_BF16;
    else if (!strcmp(a->precision, "both")) *precs = PREC_F32 | PREC_BF16;
    else return qkv_err_set(e, QKV_ERR_USAGE, "--precision: expected f32, bf16 or both, got '%s'", a->precision);
    if (a->rounds && *precs != (PREC_F32 | PREC_BF16))
        return qkv_err_set(e, QKV_ERR_USAGE, "--rounds goes with --precision both");
    if (*precs == (PREC_F32 | PREC_BF16)) *rounds = a->rounds ? (int)a->rounds : 3;
    qkv_err why;
    if ((*precs & PREC_BF16) && !qkv_bf16_available(&why))
        return qkv_err_set(e, why.code, "--precision %s: train.precision \"bf16\" is refused: %s (use \"f32\")",
                           a->precision, why.msg);
    return 0;
}

/* the attention fits the model of every size that will run (size NULL: all), before anything is
 * printed: 0, or -1 with e naming the size and the key */
static int check_sizes(const qkv_model_config *over, const char *size, qkv_err *e) {
    qkv_err v;
    for (int i = 0; i < 3; i++) {
        const qkv_bench_size *z = &QKV_BENCH_SIZES[i];
        if (size && strcmp(size, z->name)) continue;
        qkv_config c; /* as a config names its keys: model.attention.KEY */
        qkv_config_defaults(&c);
        c.model = qkv_bench_model_config(z, over);
        if (qkv_config_validate(&c, &v)) return qkv_err_set(e, v.code, "--set: size %s: %s", z->name, v.msg);
    }
    return 0;
}

/* the running count of heap allocations of the tests' counter (tests/shim/alloc_count.c) when it is
 * preloaded, as make bench and the tests do; NULL otherwise (allocs_per_step is then -1): qkv
 * itself does not count */
typedef uint64_t (*alloc_counter)(void);
static alloc_counter preloaded_alloc_counter(void) {
    void *self = dlopen(NULL, RTLD_NOW);
    alloc_counter f = NULL;
    if (self) {
        *(void **)&f = dlsym(self, "qkv_alloc_count"); /* POSIX's way to a function pointer */
        dlclose(self);
    }
    return f;
}

/* one size in this process; prints one JSON line; 0, or -1 with e */
static int bench_one(const qkv_bench_size *s, const qkv_model_config *over, bool bf16, int threads, int steps,
                     int micro, qkv_err *e) {
    qkv__cli_set_threads(threads);
    double ceiling = qkv_bench_sgemm_ceiling(1024, 10); /* best of 10: a shared machine has slow moments */
    double ceiling16 = qkv_bench_bf16_ceiling(1024, 10); /* 0 where bf16 products do not run */
    qkv_bench_result r;
    qkv_err in;
    if (qkv_bench_run_with(s, over, micro, bf16, 3, steps, preloaded_alloc_counter(), &r, &in))
        return qkv_err_set(e, QKV_ERR_FAIL, "%s: %s", s->name, in.msg);
    double own = bf16 ? ceiling16 : ceiling; /* the ceiling of the precision in use */
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    double rss = (double)ru.ru_maxrss / 1024.0;
    printf("{\"size\":\"%s\",\"threads\":%d,\"ms_per_step\":%.3f,\"ms_min\":%.3f,\"ms_max\":%.3f,"
           "\"tokens_per_s\":%.0f,\"gflops\":%.2f,\"ceiling_gflops\":%.2f,\"ceiling_share\":%.4f,"
           "\"peak_rss_mb\":%.1f,\"allocs_per_step\":%.2f,\"params\":%lld,\"model_state_mb\":%.2f,"
           "\"activation_mb\":%.2f,\"gflop_per_step\":%.3f,\"memory_bound_mb\":%.1f,\"steps\":%d,"
           "\"micro_batches\":%d,\"products_share\":%.4f,\"ms_products\":%.3f,\"bf16_ceiling_gflops\":%.2f,"
           "\"bf16_ceiling_share\":%.4f,\"ms_products_at_ceiling\":%.3f,\"precision\":\"%s\"}\n",
           s->name, threads, r.ms_per_step, r.ms_min, r.ms_max, r.tokens_per_s, r.gflops, ceiling,
           ceiling > 0 ? r.gflops / ceiling : 0, rss, r.steady_allocs, (long long)r.params, r.model_mb,
           r.activation_mb, r.flops_per_step / 1e9, 2 * (r.model_mb + r.activation_mb) + 16, steps, micro,
           r.products_share, r.ms_products, ceiling16, ceiling16 > 0 ? r.gflops / ceiling16 : 0,
           own > 0 ? r.flops_per_step / own / 1e6 : 0, bf16 ? "bf16" : "f32");
    return 0;
}

static int default_steps(const qkv_bench_size *s) {
    return !strcmp(s->name, "tiny") ? 50 : !strcmp(s->name, "small") ? 20 : 10;
}

static int bench_children(const bench_args *a, char *bin, int precs, int rounds, qkv_err *e);

/* whether a --set names train.precision */
static bool sets_precision(const qkv_cli_list *sets) {
    for (int i = 0; i < sets->n; i++)
        if (!strncmp(sets->v[i], "train.precision=", 16)) return true;
    return false;
}

/* the parsed command run; 0, or -1 with e */
static int bench_run(const bench_args *a, qkv_err *e) {
    int precs, rounds;
    if (a->sweep) {
        if (a->size || a->steps || a->threads != 1 || a->micro)
            return qkv_err_set(e, QKV_ERR_USAGE, "--sweep times whole runs, each on one thread: --size, --steps, "
                               "--threads and --micro-batches time one step (--runs-steps N sets the runs' steps)");
        if (a->sets.n)
            return qkv_err_set(e, QKV_ERR_USAGE, "--set: the sweep's runs are its config's (--config); "
                               "--precision sets their products' precision");
        if (precisions_of(a, false, false, &precs, &rounds, e)) return -1;
        return qkv__cli_bench_sweep(a->config, a->runs_steps ? (int)a->runs_steps : 300,
                                    a->jobs ? (int)a->jobs : qkv__cli_default_threads(), a->json, a->time_products,
                                    precs & PREC_F32, precs & PREC_BF16, rounds, e);
    }
    qkv_model_config over;
    bool bf16;
    if (model_of(&a->sets, &over, &bf16, e)) return -1;
    if (precisions_of(a, bf16, sets_precision(&a->sets), &precs, &rounds, e)) return -1;
    if (a->runs_steps || a->jobs || a->config || a->time_products)
        return qkv_err_set(e, QKV_ERR_USAGE, "--runs-steps, --jobs, --config and --time-products go with --sweep");
    if (a->size && !find_size(a->size))
        return qkv_err_set(e, QKV_ERR_USAGE, "--size: expected tiny, small or medium, got '%s'", a->size);
    if (check_sizes(&over, a->size, e)) return -1;
    for (int i = 0; a->micro > 1 && i < 3; i++) {
        const qkv_bench_size *z = &QKV_BENCH_SIZES[i];
        if ((!a->size || !strcmp(a->size, z->name)) && z->batch % a->micro)
            return qkv_err_set(e, QKV_ERR_USAGE, "--micro-batches %lld: does not divide %s's batch of %d", a->micro,
                               z->name, z->batch);
    }
    if (a->size && a->json && precs != (PREC_F32 | PREC_BF16)) { /* one size, in this process */
        const qkv_bench_size *s = find_size(a->size);
        return bench_one(s, &over, precs == PREC_BF16, (int)a->threads, a->steps ? (int)a->steps : default_steps(s),
                         a->micro ? (int)a->micro : 1, e);
    }

    /* every requested size in a child process of its own (clean peak memory per size) */
    char *bin = qkv__cli_self_exe();
    if (!bin) return qkv_err_set(e, QKV_ERR_FAIL, "cannot find the qkv executable");
    /* on stderr, what is being timed while no row comes (a table is read by people; --json's lines
     * by programs, which want nothing else) */
    if (!a->json) qkv__heartbeat_start("qkv bench");
    int rc = bench_children(a, bin, precs, rounds, e);
    qkv__heartbeat_stop();
    free(bin);
    return rc;
}

int qkv__cmd_bench(int argc, char **argv) {
    bench_args a = {.threads = 1};
    qkv_err e;
    if (!qkv__cli_parse(&COMMAND, argc, argv, &a, NULL, &e) && !bench_run(&a, &e)) qkv_err_clear(&e);
    free(a.sets.v); /* the --set list the parser allocated */
    return qkv__cli_exit("bench", &e);
}

/* what a child's JSON line says of its step */
typedef struct {
    double ms, tps, gf, ceil, share, rss, allocs, prod, ms_prod, gflop, ceil16, share16, ms_ceil;
} step_figures;

static step_figures figures_of(const char *line) {
    return (step_figures){qkv__cli_json_num(line, "ms_per_step"), qkv__cli_json_num(line, "tokens_per_s"), qkv__cli_json_num(line, "gflops"),
                          qkv__cli_json_num(line, "ceiling_gflops"), qkv__cli_json_num(line, "ceiling_share"), qkv__cli_json_num(line, "peak_rss_mb"),
                          qkv__cli_json_num(line, "allocs_per_step"), qkv__cli_json_num(line, "products_share"), qkv__cli_json_num(line, "ms_products"),
                          qkv__cli_json_num(line, "gflop_per_step"), qkv__cli_json_num(line, "bf16_ceiling_gflops"),
                          qkv__cli_json_num(line, "bf16_ceiling_share"), qkv__cli_json_num(line, "ms_products_at_ceiling")};
}

/* size s in precision prec, in a child process `bin bench --size S --json ...`: its JSON line
 * into line (n bytes); 0, or -1 with e */
static int child_line(const bench_args *a, char *bin, const qkv_bench_size *s, int prec, char *line, size_t n,
                      qkv_err *e) {
    char th[16], st[16], mb[16], pr[32];
    snprintf(th, sizeof th, "%lld", a->threads);
    snprintf(mb, sizeof mb, "%lld", a->micro ? a->micro : 1);
    snprintf(st, sizeof st, "%lld", a->steps ? a->steps : default_steps(s));
    snprintf(pr, sizeof pr, "train.precision=%s", prec_name(prec));
    int fd[2];
    if (pipe(fd)) return qkv_err_set(e, QKV_ERR_FAIL, "pipe failed");
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fd[1], 1);
    posix_spawn_file_actions_addclose(&fa, fd[0]);
    char *args[14 + 2 * 64] = {bin, "bench", "--size", (char *)s->name, "--threads", th, "--steps", st, "--json",
                               "--micro-batches", mb};
    int at = 11;
    for (int k = 0; k < a->sets.n && k < 64; k++) args[at++] = "--set", args[at++] = (char *)a->sets.v[k];
    args[at++] = "--set", args[at++] = pr; /* the last word on the precision: --precision's, or the --set's own */
    pid_t pid;
    int spawned = posix_spawn(&pid, bin, &fa, NULL, args, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fd[1]);
    line[0] = 0;
    FILE *f = fdopen(fd[0], "r");
    if (spawned || !f || !fgets(line, (int)n, f)) line[0] = 0;
    if (f) fclose(f);
    else close(fd[0]);
    int status = 0;
    if (!spawned) waitpid(pid, &status, 0);
    if (!line[0] || !WIFEXITED(status) || WEXITSTATUS(status))
        return qkv_err_set(e, QKV_ERR_FAIL, "size %s (%s) failed", s->name, prec_name(prec));
    return 0;
}

/* the step's products' speed: its product FLOPs over its median time in them (GFLOP/s) */
static double products_gflops(const step_figures *f) { return f->ms_prod > 0 ? f->gflop / (f->ms_prod / 1e3) : 0; }

/* one size in float32 and bf16, rounds times alternating: a row of their medians and bf16's
 * speed-up; 0, or -1 with e */
static int side_by_side(const bench_args *a, char *bin, const qkv_bench_size *s, int rounds, qkv_err *e) {
    enum { MAX_ROUNDS = 1000 };
    static double ms[2][MAX_ROUNDS], pg[2][MAX_ROUNDS], prod[2][MAX_ROUNDS], ceil[2][MAX_ROUNDS], at[2][MAX_ROUNDS],
        rest[2][MAX_ROUNDS];
    char line[2048];
    for (int r = 0; r < rounds; r++)
        for (int k = 0; k < 2; k++) {
            qkv__heartbeat_doing("timing %s in %s, round %d of %d", s->name, k ? "bf16" : "f32", r + 1, rounds);
            int failed = child_line(a, bin, s, k ? PREC_BF16 : PREC_F32, line, sizeof line, e);
            qkv__heartbeat_doing(NULL);
            if (failed) return -1;
            if (a->json) {
                fputs(line, stdout);
                fflush(stdout);
                qkv__heartbeat_said();
            }
            step_figures f = figures_of(line);
            ms[k][r] = f.ms, pg[k][r] = products_gflops(&f), prod[k][r] = f.prod;
            ceil[k][r] = k ? f.ceil16 : f.ceil, at[k][r] = f.ms_ceil, rest[k][r] = f.ms - f.ms_prod;
        }
    if (a->json) return 0;
    double m[2], g[2], p[2], c[2], t[2], o[2];
    static const bool NONE[MAX_ROUNDS]; /* no round is censored */
    for (int k = 0; k < 2; k++)
        m[k] = qkv_stats_median_censored(ms[k], NONE, rounds), g[k] = qkv_stats_median_censored(pg[k], NONE, rounds),
        p[k] = qkv_stats_median_censored(prod[k], NONE, rounds), c[k] = qkv_stats_median_censored(ceil[k], NONE, rounds),
        t[k] = qkv_stats_median_censored(at[k], NONE, rounds), o[k] = qkv_stats_median_censored(rest[k], NONE, rounds);
    printf("%-7s %7lld %10.2f %10.2f %8.2fx %10.1f %10.1f %8.2fx %8.1f%% %8.1f%% %9.1f %9.1f %8.2f %8.2f %8.2f %8.2f\n",
           s->name, a->threads, m[0], m[1], m[1] > 0 ? m[0] / m[1] : 0, g[0], g[1], g[0] > 0 ? g[1] / g[0] : 0,
           100 * p[0], 100 * p[1], c[0], c[1], t[0], t[1], o[0], o[1]);
    fflush(stdout);
    qkv__heartbeat_said();
    return 0;
}

/* qkv bench's sizes, each in a child process `bin bench --size S --json ...` (with --precision
 * both, one per precision and round, alternating): a table, or their JSON lines; 0, or -1 with e */
static int bench_children(const bench_args *a, char *bin, int precs, int rounds, qkv_err *e) {
    bool both = precs == (PREC_F32 | PREC_BF16);
    if (!a->json && both)
        printf("%-7s %7s %10s %10s %9s %10s %10s %9s %9s %9s %9s %9s %8s %8s %8s %8s   (medians of %d rounds, "
               "alternating)\n", "size", "threads", "f32 ms", "bf16 ms", "speed-up", "f32 prodGF", "bf16 prodGF",
               "speed-up", "f32 prod", "bf16 prod", "f32 ceil", "bf16 ceil", "f32 @c", "bf16 @c", "f32 rest",
               "bf16 rest", rounds);
    else if (!a->json)
        printf("%-7s %7s %10s %11s %9s %9s %7s %9s %11s %9s\n", "size", "threads", "ms/step", "tokens/s",
               "GFLOP/s", "ceiling", "share", "RSS MB", "allocs/step", "products");
    for (int i = 0; i < 3; i++) {
        const qkv_bench_size *s = &QKV_BENCH_SIZES[i];
        if (a->size && strcmp(a->size, s->name)) continue;
        if (both) {
            if (side_by_side(a, bin, s, rounds, e)) return -1;
            continue;
        }
        char line[2048];
        qkv__heartbeat_doing("timing %s", s->name);
        int failed = child_line(a, bin, s, precs, line, sizeof line, e);
        qkv__heartbeat_doing(NULL);
        if (failed) return -1;
        qkv__heartbeat_said();
        if (a->json) { fputs(line, stdout); fflush(stdout); continue; }
        step_figures f = figures_of(line);
        if (precs == PREC_BF16) f.ceil = f.ceil16, f.share = f.share16; /* the ceiling of the precision in use */
        char allocs[32] = "-"; /* not counted */
        if (f.allocs >= 0) snprintf(allocs, sizeof allocs, "%.2f", f.allocs);
        printf("%-7s %7lld %10.2f %11.0f %9.1f %9.1f %6.1f%% %9.1f %11s %8.1f%%\n", s->name, a->threads, f.ms, f.tps,
               f.gf, f.ceil, 100 * f.share, f.rss, allocs, 100 * f.prod);
        fflush(stdout);
    }
    if (!a->json && both)
        printf("speed-up: f32's ms/step over bf16's, and bf16's products' GFLOP/s over f32's (a step's product FLOPs "
               "over its median time in them); prod: the threads' share of time in matrix products; ceil: the "
               "ceiling of each precision's product at these threads (GFLOP/s, 1024 x 1024 x 1024: sgemm, and qkv's "
               "bf16 product); @c: ms of the step's products at that ceiling; rest: ms/step outside the products\n");
    return 0;
}
