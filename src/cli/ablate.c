/* qkv ablate: the Q/K/V ablation (or any other) from an ablation config. */
#include "ablate/ablate.h"
#include "cli/cli.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char USAGE[] =
    "usage: qkv ablate CONFIG [--out DIR] [--jobs N] [--quiet]\n"
    "\n"
    "Train every variant x seed of an ablation config (a base training config, named variants\n"
    "as lists of --set overrides, seeds, an accuracy threshold), each as its own `qkv train`\n"
    "process with one BLAS thread, and write a results table (results.md, .csv, .json),\n"
    "attention diagnostics, SVG plots, report.md and a self-contained report.html to DIR.\n"
    "Re-running the same command after an interruption keeps finished runs and resumes the\n"
    "others. See docs/ablate.md for the config format.\n"
    "\n"
    "options:\n"
    "  --out DIR   output directory (default: runs/<config name>)\n"
    "  --jobs N    runs at once (default: the number of CPUs)\n"
    "  --quiet     no progress and no table on the terminal\n"
    "  -h, --help  show this help\n";

int qkv_cmd_ablate(int argc, char **argv) {
    const char *cfg_path = NULL, *out = NULL, *v;
    long long jobs = sysconf(_SC_NPROCESSORS_ONLN);
    bool quiet = false, missing = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) { fputs(USAGE, stdout); return 0; }
        if (qkv_cli_opt(argc, argv, &i, "--out", &v, &missing)) out = v;
        else if (qkv_cli_opt(argc, argv, &i, "--jobs", &v, &missing)) {
            if (!missing && !qkv_cli_int("ablate", "--jobs", v, 1, 256, &jobs)) return QKV_EXIT_USAGE;
        } else if (!strcmp(a, "--quiet")) quiet = true;
        else if (a[0] == '-' && a[1]) { qkv_cli_error("ablate", "unknown option '%s' (try 'qkv ablate --help')", a); return QKV_EXIT_USAGE; }
        else if (!cfg_path) cfg_path = a;
        else { qkv_cli_error("ablate", "unexpected argument '%s'", a); return QKV_EXIT_USAGE; }
        if (missing) { qkv_cli_error("ablate", "%s needs a value", a); return QKV_EXIT_USAGE; }
    }
    if (!cfg_path) { qkv_cli_error("ablate", "missing CONFIG (try 'qkv ablate --help')"); return QKV_EXIT_USAGE; }
    if (jobs < 1) jobs = 1;
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
    if (!quiet)
        fprintf(stderr, "qkv ablate: %d variants x %d seeds = %d runs, %lld at a time, into %s\n", c.n_variants,
                c.n_seeds, c.n_variants * c.n_seeds, jobs, out);
    const char *train_cmd[] = {bin, "train", "--threads", "1", "--quiet", NULL}; /* one BLAS thread per run */
    int rc = qkv_ablate_run(&c, out, (int)jobs, train_cmd, quiet, err, sizeof err);
    if (rc) qkv_cli_error("ablate", "%s", err);
    qkv_ablate_config_free(&c);
    return rc ? QKV_EXIT_FAIL : QKV_EXIT_OK;
}
