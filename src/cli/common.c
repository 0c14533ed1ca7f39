/* Shared helpers of the qkv subcommands. */
#include "cli/cli.h"
#include "tensor/parallel.h"
#include "train/vocabulary.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* "qkv CMD: msg" (cmd NULL: "qkv: msg") on stderr, with every control character shown as \xNN: a
 * message quotes paths and values from the user (a file name may hold a newline), and an error is
 * one line whatever they hold */
static void error_line(const char *cmd, const char *msg) {
    if (cmd) fprintf(stderr, "qkv %s: ", cmd);
    else fputs("qkv: ", stderr);
    for (const unsigned char *p = (const unsigned char *)msg; *p; p++) {
        if (*p < 0x20 || *p == 0x7f) fprintf(stderr, "\\x%02x", *p);
        else fputc(*p, stderr);
    }
    fputc('\n', stderr);
}

char *qkv__cli_self_exe(void) {
    for (size_t n = 256; n <= ((size_t)1 << 20); n *= 2) { /* readlink cuts silently: grown until it fits */
        char *b = malloc(n);
        ssize_t got = b ? readlink("/proc/self/exe", b, n) : -1;
        if (got > 0 && (size_t)got < n) {
            b[got] = 0;
            return b;
        }
        free(b);
        if (got <= 0) return NULL;
    }
    return NULL;
}

/* the exit statuses: 0 done, 1 a runtime error (or a failed check), 2 a usage error (the command
 * line or the config); this file alone names them, qkv__cli_exit_status the one map to them */
enum { QKV_EXIT_OK = 0, QKV_EXIT_FAIL = 1, QKV_EXIT_USAGE = 2 };

int qkv__cli_exit_status(qkv_err_code code) {
    switch (code) {
    case QKV_ERR_OK: return QKV_EXIT_OK;
    case QKV_ERR_USAGE:
    case QKV_ERR_MEMORY: return QKV_EXIT_USAGE;
    case QKV_ERR_FAIL:
    case QKV_ERR_INTERRUPTED:
    case QKV_ERR_CODE_COUNT: break;
    }
    return QKV_EXIT_FAIL;
}

int qkv__cli_exit(const char *cmd, const qkv_err *e) {
    if (e->code != QKV_ERR_OK) error_line(cmd, e->msg);
    return qkv__cli_exit_status(e->code);
}

/* qkv__cli_load_config, and with file_in_run qkv__cli_load_run_config */
static int load_config(const char *path, const char *const *sets, int nsets, const char *file_in_run, bool is_dir,
                       qkv_config *c, qkv_err *e) {
    qkv_config_defaults(c);
    if (qkv_config_load(c, path, e)) return -1;
    for (int i = 0; i < nsets; i++)
        if (qkv_config_set(c, sets[i], e)) return -1;
    qkv_config v = *c; /* a run's: checked with the vocabulary it kept, which is the one it uses */
    if (file_in_run) qkv_use_run_tokenizer(&v.task, file_in_run, is_dir);
    qkv_err ve;
    if (qkv_config_validate(&v, &ve)) return qkv_err_set(e, ve.code, "%s: %s", path, ve.msg);
    return 0;
}

int qkv__cli_load_config(const char *path, const char *const *sets, int nsets, qkv_config *c, qkv_err *e) {
    return load_config(path, sets, nsets, NULL, false, c, e);
}

int qkv__cli_load_run_config(const char *path, const char *const *sets, int nsets, const char *file_in_run, bool is_dir,
                             qkv_config *c, qkv_err *e) {
    return load_config(path, sets, nsets, file_in_run, is_dir, c, e);
}

int qkv__cli_check_trained_with(const char *cmd, const char *path, const char *cfg_path, const qkv_config *eff,
                                qkv_err *e) {
    /* the model's keys, then the task's name: the same model on another task would read its
     * tokens as other things (the task's other keys may differ: another length, say) */
    static const char *const KEYS[] = {"model.", "task.name", NULL};
    qkv_config k;
    char key[256], a[128], b[128];
    int have = qkv_config_of_model_file(path, &k, e);
    if (have < 0) return -1;
    if (!have || !qkv_config_first_diff(&k, eff, KEYS, key, sizeof key, a, b, sizeof a)) return 0;
    return qkv_err_set(e, QKV_ERR_FAIL, "%s was trained with %s %s, but %s has %s (%s with the run's config.json)",
                       path, key, a, cfg_path, b, strcmp(cmd, "eval") ? cmd : "evaluate");
}

int qkv__cli_default_threads(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > QKV_MAX_THREADS ? QKV_MAX_THREADS : (int)n;
}

void qkv__cli_set_threads(int n) {
    /* qkv's pool on every core by default: faster than OpenBLAS's own threads (which would
     * compete with the pool for the cores; docs/performance.md) */
    qkv_set_threads(n > 0 ? n : qkv__cli_default_threads()); /* also keeps OpenBLAS at one thread */
}

void qkv__cli_children_one_blas_thread(void) {
    /* OpenBLAS starts its threads (one per core) when it loads, before qkv can set it to one,
     * and they busy-wait for work for a while before they sleep. A `--threads 1` run never
     * gives them any (same kernels, same bits), but with one run per core they spin on the
     * cores the other runs compute on: measured, the sweep of docs/performance.md gains 1-5%
     * runs per minute without them. bench/torch_sweep.py starts its workers the same way. */
    setenv("OPENBLAS_NUM_THREADS", "1", 0);
}
