/* Internal to the qkv command: subcommands and their shared helpers. */
#ifndef QKV_CLI_H
#define QKV_CLI_H

#include "qkv_api.h"

#include <stdbool.h>
#include <stdio.h>
#include "config/config.h"
#include "tensor/error.h"

/* The exit status follows from an error's code, in one place (common.c; scripts/check-layers.sh
 * keeps it there): every subcommand's helpers take a qkv_err * and return -1 with it set, and the
 * subcommand returns qkv__cli_exit(CMD, &e). The rule: the user's input, or a config that cannot
 * be used, is a usage error (QKV_ERR_USAGE, exit 2); a failure at run time, the machine's (out of
 * memory) included, is QKV_ERR_FAIL (exit 1). */

/* the exit status of an error's code: QKV_ERR_OK 0; QKV_ERR_USAGE and QKV_ERR_MEMORY (the config
 * does not fit: the user's to change) 2; QKV_ERR_FAIL and QKV_ERR_INTERRUPTED 1. For a command
 * that has said what happened itself (a failed gradient check, an interrupted run's resume line) */
QKV_INTERNAL int qkv__cli_exit_status(qkv_err_code code);
/* e's message as one line on stderr, "qkv CMD: ..." (cmd NULL: "qkv: ..."; control characters
 * written as \xNN; nothing for QKV_ERR_OK), and its exit status: the one way a command reports */
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
 * --time-products), its products in float32 (f32), in bf16 (bf16) or both side by side (rounds
 * pairs, alternating); a table, or one JSON line per sweep. 0, or -1 with e */
QKV_INTERNAL int qkv__cli_bench_sweep(const char *config, int steps, int jobs, bool json, bool time_products,
                                     bool f32, bool bf16, int rounds, qkv_err *e);

/* the number after "key": in a JSON line (qkv bench's and qkv train's summary lines), or -1 */
QKV_INTERNAL double qkv__cli_json_num(const char *text, const char *key);

/* this executable's path (/proc/self/exe, whole), malloc'd; NULL when it cannot be read */
QKV_INTERNAL char *qkv__cli_self_exe(void);
/* defaults, then the file, then the --set overrides in order, then validation (its message after
 * "PATH: "); 0, or -1 with e */
QKV_INTERNAL int qkv__cli_load_config(const char *path, const char *const *sets, int nsets, qkv_config *c,
                                     qkv_err *e);
/* the same for a run's config (eval, sample, inspect, --resume): validated with the run's kept
 * vocabulary (train/vocabulary.h: qkv_use_run_tokenizer of file_in_run, or of the directory with
 * is_dir) in place of task.tokenizer_path, which the run no longer needs; *c is left as read */
QKV_INTERNAL int qkv__cli_load_run_config(const char *path, const char *const *sets, int nsets, const char *file_in_run,
                                          bool is_dir, qkv_config *c, qkv_err *e);
/* qkv sample and qkv eval: refuse the model file or checkpoint at path when the config it was
 * written with differs from eff (CONFIG's effective config, read from cfg_path) in its model
 * (any model.* key) or its task (task.name), even when the shapes agree; a file without a config
 * is checked by its shapes alone (when loaded). 0, or -1 with e (QKV_ERR_FAIL: a mismatched file;
 * the message names CMD's verb) */
QKV_INTERNAL int qkv__cli_check_trained_with(const char *cmd, const char *path, const char *cfg_path,
                                            const qkv_config *eff, qkv_err *e);
/* the number of online cores, at most QKV_MAX_THREADS */
QKV_INTERNAL int qkv__cli_default_threads(void);
/* qkv's thread count (0 = qkv__cli_default_threads()) */
QKV_INTERNAL void qkv__cli_set_threads(int n);
/* before starting `qkv train --threads 1` children: OPENBLAS_NUM_THREADS=1 in the environment
 * they inherit, unless the user set it */
QKV_INTERNAL void qkv__cli_children_one_blas_thread(void);

#endif
