/* qkv ablate: the Q/K/V ablation (or any other) from an ablation config. */
#include "ablate/ablate.h"
#include "cli/cli.h"
#include "cli/options.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
    const char *config, *out;
    long long jobs;
    bool quiet;
} ablate_args;

static const qkv_cli_option OPTIONS[] = {
    QKV_STRING("--out", "DIR", ablate_args, out, "output directory (default: runs/<config name>)"),
    QKV_INT("--jobs", "N", ablate_args, jobs, 1, 256, "runs at once (default: the number of CPUs)"),
    QKV_FLAG("--quiet", ablate_args, quiet, "no progress and no table on the terminal"),
    QKV_HELP,
    QKV_OPTIONS_END,
};

static const qkv_cli_command COMMAND = {
    "ablate", "CONFIG [OPTION]...",
    "Train every variant x seed of an ablation config (a base training config, named variants\n"
    "as lists of --set overrides, seeds, an accuracy threshold), each as its own `qkv train`\n"
    "process with one BLAS thread, and write a results table (results.md, .csv, .json),\n"
    "attention diagnostics, SVG plots, report.md and a self-contained report.html to DIR.\n"
    "Re-running the same command after an interruption keeps finished runs and resumes the\n"
    "others. See docs/ablate.md for the config format.",
    "CONFIG", OPTIONS,
};

int qkv_cmd_ablate(int argc, char **argv) {
    ablate_args a = {.jobs = sysconf(_SC_NPROCESSORS_ONLN)};
    int rc = qkv_cli_parse(&COMMAND, argc, argv, &a, &a.config);
    if (rc >= 0) return rc;
    const char *cfg_path = a.config, *out = a.out;
    if (!cfg_path) { qkv_cli_error("ablate", "missing CONFIG (try 'qkv ablate --help')"); return QKV_EXIT_USAGE; }
    if (a.jobs < 1) a.jobs = 1; /* sysconf failed */
    char err[1024];
    qkv_ablate_config c;
    if (qkv_ablate_config_load(&c, cfg_path, err, sizeof err)) {
        qkv_cli_error("ablate", "%s", err);
        return QKV_EXIT_USAGE;
    }
    char out_buf[4096];
    if (!out) {
        const char *base = strrchr(cfg_path, '/') ? strrchr(cfg_path, '/') + 1 : cfg_path;
        snprintf(out_buf, sizeof out_buf, "runs/%.*s", (int)strcspn(base, "."), base);
        out = out_buf;
    }
    char bin[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", bin, sizeof bin - 1); /* run the same qkv for every run */
    if (n <= 0) {
        qkv_ablate_config_free(&c);
        qkv_cli_error("ablate", "cannot find the qkv executable (/proc/self/exe)");
        return QKV_EXIT_FAIL;
    }
    bin[n] = 0;
    if (!a.quiet)
        fprintf(stderr, "qkv ablate: %d variants x %d learning rate%s x %d seeds = %d runs, %lld at a time, into %s\n",
                c.n_variants, c.n_lrs ? c.n_lrs : 1, c.n_lrs > 1 ? "s" : "", c.n_seeds,
                c.n_variants * (c.n_lrs ? c.n_lrs : 1) * c.n_seeds, a.jobs, out);
    const char *train_cmd[] = {bin, "train", "--threads", "1", "--quiet", NULL}; /* one BLAS thread per run */
    rc = qkv_ablate_run(&c, out, (int)a.jobs, train_cmd, a.quiet, err, sizeof err);
    if (rc) qkv_cli_error("ablate", "%s", err);
    qkv_ablate_config_free(&c);
    return rc ? QKV_EXIT_FAIL : QKV_EXIT_OK;
}
