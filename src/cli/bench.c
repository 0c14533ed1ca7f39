/* qkv bench: milliseconds per training step, throughput, share of the sgemm ceiling,
 * peak memory and (with the tests' allocation counter preloaded, as make bench does) heap
 * allocations per step, for the standard sizes. */
#include "cli/cli.h"
#include "cli/options.h"
#include "config/config.h"
#include "train/run_config.h"
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
    const char *size, *config;
    qkv_cli_list sets;
    long long threads, steps, runs_steps, jobs, micro;
    bool json, sweep, time_products;
} bench_args;

static const qkv_cli_option OPTIONS[] = {
    QKV_STRING("--size", "S", bench_args, size, "one size: tiny, small or medium (default: all three)"),
    QKV_LIST("--set", "KEY=VALUE", bench_args, sets,
             "a model.attention key of the timed model (repeatable), e.g. model.attention.diff=true,\n"
             "or train.precision=bf16: the step's matrix products in bf16 (a CPU with avx512_bf16)"),
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
             "make bench counts them), products_share, ms_products, ...; with --sweep: runs_per_min, tokens_per_s_per_core, gemm_flops,\n"
             "ceiling_share, ..."),
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
    "K steps after warm-up, tokens/s, matrix-product GFLOP/s, this machine's sgemm ceiling at\n"
    "the same thread count and the step's share of it, peak resident memory, heap allocations\n"
    "per step, and (\"products\") the share of the threads' time spent in matrix products, from\n"
    "K more steps with each product timed. Each size runs in its own process, so memory is per\n"
    "size.\n"
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
    char why[200];
    if (*bf16 && !qkv_bf16_available(why, sizeof why))
        return qkv_err_set(e, QKV_ERR_USAGE, "train.precision: \"bf16\" is refused: %s (use \"f32\")", why);
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
    qkv_bench_result r;
    qkv_err in;
    if (qkv_bench_run_with(s, over, micro, bf16, 3, steps, preloaded_alloc_counter(), &r, &in))
        return qkv_err_set(e, QKV_ERR_FAIL, "%s: %s", s->name, in.msg);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    double rss = (double)ru.ru_maxrss / 1024.0;
    printf("{\"size\":\"%s\",\"threads\":%d,\"ms_per_step\":%.3f,\"ms_min\":%.3f,\"ms_max\":%.3f,"
           "\"tokens_per_s\":%.0f,\"gflops\":%.2f,\"ceiling_gflops\":%.2f,\"ceiling_share\":%.4f,"
           "\"peak_rss_mb\":%.1f,\"allocs_per_step\":%.2f,\"params\":%lld,\"model_state_mb\":%.2f,"
           "\"activation_mb\":%.2f,\"gflop_per_step\":%.3f,\"memory_bound_mb\":%.1f,\"steps\":%d,"
           "\"micro_batches\":%d,\"products_share\":%.4f,\"ms_products\":%.3f,\"precision\":\"%s\"}\n",
           s->name, threads, r.ms_per_step, r.ms_min, r.ms_max, r.tokens_per_s, r.gflops, ceiling,
           ceiling > 0 ? r.gflops / ceiling : 0, rss, r.steady_allocs, (long long)r.params, r.model_mb,
           r.activation_mb, r.flops_per_step / 1e9, 2 * (r.model_mb + r.activation_mb) + 16, steps, micro,
           r.products_share, r.ms_products, bf16 ? "bf16" : "f32");
    return 0;
}

static int default_steps(const qkv_bench_size *s) {
    return !strcmp(s->name, "tiny") ? 50 : !strcmp(s->name, "small") ? 20 : 10;
}

static int bench_children(const bench_args *a, char *bin, qkv_err *e);

/* the parsed command run; 0, or -1 with e */
static int bench_run(const bench_args *a, qkv_err *e) {
    if (a->sweep) {
        if (a->size || a->steps || a->threads != 1 || a->micro)
            return qkv_err_set(e, QKV_ERR_USAGE, "--sweep times whole runs, each on one thread: --size, --steps, "
                               "--threads and --micro-batches time one step (--runs-steps N sets the runs' steps)");
        return qkv__cli_bench_sweep(a->config, a->runs_steps ? (int)a->runs_steps : 300,
                                    a->jobs ? (int)a->jobs : qkv__cli_default_threads(), a->json, a->time_products, e);
    }
    qkv_model_config over;
    bool bf16;
    if (model_of(&a->sets, &over, &bf16, e)) return -1;
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
    if (a->size && a->json) { /* one size, in this process */
        const qkv_bench_size *s = find_size(a->size);
        return bench_one(s, &over, bf16, (int)a->threads, a->steps ? (int)a->steps : default_steps(s),
                         a->micro ? (int)a->micro : 1, e);
    }

    /* every requested size in a child process of its own (clean peak memory per size) */
    char *bin = qkv__cli_self_exe();
    if (!bin) return qkv_err_set(e, QKV_ERR_FAIL, "cannot find the qkv executable");
    int rc = bench_children(a, bin, e);
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

/* qkv bench's sizes, each in a child process `bin bench --size S --json ...`: a table, or their
 * JSON lines; 0, or -1 with e */
static int bench_children(const bench_args *a, char *bin, qkv_err *e) {
    if (!a->json)
        printf("%-7s %7s %10s %11s %9s %9s %7s %9s %11s %9s\n", "size", "threads", "ms/step", "tokens/s",
               "GFLOP/s", "ceiling", "share", "RSS MB", "allocs/step", "products");
    for (int i = 0; i < 3; i++) {
        const qkv_bench_size *s = &QKV_BENCH_SIZES[i];
        if (a->size && strcmp(a->size, s->name)) continue;
        char th[16], st[16], mb[16];
        snprintf(th, sizeof th, "%lld", a->threads);
        snprintf(mb, sizeof mb, "%lld", a->micro ? a->micro : 1);
        snprintf(st, sizeof st, "%lld", a->steps ? a->steps : default_steps(s));
        int fd[2];
        if (pipe(fd)) return qkv_err_set(e, QKV_ERR_FAIL, "pipe failed");
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_adddup2(&fa, fd[1], 1);
        posix_spawn_file_actions_addclose(&fa, fd[0]);
        char *args[12 + 2 * 64] = {bin, "bench", "--size", (char *)s->name, "--threads", th, "--steps", st, "--json",
                                   "--micro-batches", mb};
        for (int k = 0, at = 11; k < a->sets.n && k < 64; k++) args[at++] = "--set", args[at++] = (char *)a->sets.v[k];
        pid_t pid;
        int spawned = posix_spawn(&pid, bin, &fa, NULL, args, environ);
        posix_spawn_file_actions_destroy(&fa);
        close(fd[1]);
        char line[2048] = "";
        FILE *f = fdopen(fd[0], "r");
        if (spawned || !f || !fgets(line, sizeof line, f)) line[0] = 0;
        if (f) fclose(f);
        int status = 0;
        if (!spawned) waitpid(pid, &status, 0);
        if (!line[0] || !WIFEXITED(status) || WEXITSTATUS(status))
            return qkv_err_set(e, QKV_ERR_FAIL, "size %s failed", s->name);
        if (a->json) { fputs(line, stdout); fflush(stdout); continue; }
        double ms = 0, tps = 0, gf = 0, ceil = 0, share = 0, rss = 0, al = 0, prod = 0;
        const char *p;
        if ((p = strstr(line, "\"ms_per_step\":"))) ms = atof(p + 14);
        if ((p = strstr(line, "\"tokens_per_s\":"))) tps = atof(p + 15);
        if ((p = strstr(line, "\"gflops\":"))) gf = atof(p + 9);
        if ((p = strstr(line, "\"ceiling_gflops\":"))) ceil = atof(p + 17);
        if ((p = strstr(line, "\"ceiling_share\":"))) share = atof(p + 16);
        if ((p = strstr(line, "\"peak_rss_mb\":"))) rss = atof(p + 14);
        if ((p = strstr(line, "\"allocs_per_step\":"))) al = atof(p + 18);
        if ((p = strstr(line, "\"products_share\":"))) prod = atof(p + 17);
        char allocs[32] = "-"; /* not counted */
        if (al >= 0) snprintf(allocs, sizeof allocs, "%.2f", al);
        printf("%-7s %7lld %10.2f %11.0f %9.1f %9.1f %6.1f%% %9.1f %11s %8.1f%%\n", s->name, a->threads, ms, tps, gf,
               ceil, 100 * share, rss, allocs, 100 * prod);
        fflush(stdout);
    }
    return 0;
}
