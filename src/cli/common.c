/* Shared helpers of the qkv subcommands. */
#include "cli/cli.h"
#include "tensor/parallel.h"

#include <stdarg.h>
#include <stdlib.h>
#include <unistd.h>

void qkv_cli_error(const char *cmd, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "qkv %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

int qkv_cli_load_config(const char *cmd, const char *path, const char *const *sets, int nsets, qkv_config *c) {
    char err[1024];
    qkv_config_defaults(c);
    if (qkv_config_load(c, path, err, sizeof err)) {
        qkv_cli_error(cmd, "%s", err);
        return -1;
    }
    for (int i = 0; i < nsets; i++)
        if (qkv_config_set(c, sets[i], err, sizeof err)) {
            qkv_cli_error(cmd, "%s", err);
            return -1;
        }
    if (qkv_config_validate(c, err, sizeof err)) {
        qkv_cli_error(cmd, "%s: %s", path, err);
        return -1;
    }
    return 0;
}

int qkv_cli_default_threads(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > QKV_MAX_THREADS ? QKV_MAX_THREADS : (int)n;
}

void qkv_cli_set_threads(int n) {
    /* qkv's pool on every core by default: faster than OpenBLAS's own threads (which would
     * compete with the pool for the cores; docs/performance.md) */
    qkv_set_threads(n > 0 ? n : qkv_cli_default_threads()); /* also keeps OpenBLAS at one thread */
}

void qkv_cli_children_one_blas_thread(void) {
    /* OpenBLAS starts its threads (one per core) when it loads, before qkv can set it to one,
     * and they busy-wait for work for a while before they sleep. A `--threads 1` run never
     * gives them any (same kernels, same bits), but with one run per core they spin on the
     * cores the other runs compute on: measured, the sweep of docs/performance.md gains 1-5%
     * runs per minute without them. bench/torch_sweep.py starts its workers the same way. */
    setenv("OPENBLAS_NUM_THREADS", "1", 0);
}
