/* Internal to the qkv command: subcommands and their shared helpers. */
#ifndef QKV_CLI_H
#define QKV_CLI_H

#include "qkv_api.h"

#include <stdbool.h>
#include <stdio.h>
#include "config/config.h"
#include "app/error.h"

/* exit statuses: 0 ok, 1 runtime error (or a failed check), 2 usage error (bad option or config) */
enum { QKV_EXIT_OK = 0, QKV_EXIT_FAIL = 1, QKV_EXIT_USAGE = 2 };

/* the exit status of an error's code, the one place codes become statuses: QKV_ERR_OK 0;
 * QKV_ERR_USAGE and QKV_ERR_MEMORY (the config does not fit: the user's to change) 2; QKV_ERR_FAIL
 * and QKV_ERR_INTERRUPTED 1 */
QKV_INTERNAL int qkv__cli_exit_status(qkv_err_code code);
/* e's message as one "qkv CMD: ..." line (nothing for QKV_ERR_OK), and its exit status */
QKV_INTERNAL int qkv__cli_exit(const char *cmd, const qkv_err *e);

QKV_INTERNAL int qkv__cmd_train(int argc, char **argv);
QKV_INTERNAL int qkv__cmd_eval(int argc, char **argv);
QKV_INTERNAL int qkv__cmd_params(int argc, char **argv);
QKV_INTERNAL int qkv__cmd_gradcheck(int argc, char **argv);
QKV_INTERNAL int qkv__cmd_ablate(int argc, char **argv);
QKV_INTERNAL int qkv__cmd_summarize(int argc, char **argv);
QKV_INTERNAL int qkv__cmd_bench(int argc, char **argv);
QKV_INTERNAL int qkv__cmd_sample(int argc, char **argv);
QKV_INTERNAL int qkv__cmd_inspect(int argc, char **argv);

/* qkv bench --sweep (bench_sweep.c): the fixed sweep of config (NULL: configs/recall.json),
 * steps per run, jobs runs at once, with time_products each run timed in its products (qkv train
 * --time-products); a table, or one JSON line; the exit status */
QKV_INTERNAL int qkv__cli_bench_sweep(const char *config, int steps, int jobs, bool json, bool time_products);

/* "qkv CMD: message" (cmd NULL: "qkv: message") on stderr, one line: control characters in the
 * message are written as \xNN */
QKV_INTERNAL void qkv__cli_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* this executable's path (/proc/self/exe, whole), malloc'd; NULL when it cannot be read */
QKV_INTERNAL char *qkv__cli_self_exe(void);
/* defaults, then the file, then the --set overrides in order, then validation */
QKV_INTERNAL int qkv__cli_load_config(const char *cmd, const char *path, const char *const *sets, int nsets, qkv_config *c);
/* qkv sample and qkv eval: refuse the model file or checkpoint at path when the config it was
 * written with differs from eff (CONFIG's effective config, read from cfg_path) in its model
 * (any model.* key) or its task (task.name), even when the shapes agree; a file without a config
 * is checked by its shapes alone (when loaded). 0, or -1 after one "qkv CMD: ..." line. */
QKV_INTERNAL int qkv__cli_check_trained_with(const char *cmd, const char *path, const char *cfg_path,
                                            const qkv_config *eff);
/* the number of online cores, at most QKV_MAX_THREADS */
QKV_INTERNAL int qkv__cli_default_threads(void);
/* qkv's thread count (0 = qkv__cli_default_threads()) */
QKV_INTERNAL void qkv__cli_set_threads(int n);
/* before starting `qkv train --threads 1` children: OPENBLAS_NUM_THREADS=1 in the environment
 * they inherit, unless the user set it */
QKV_INTERNAL void qkv__cli_children_one_blas_thread(void);

#endif
