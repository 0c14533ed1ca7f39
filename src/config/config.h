/* qkv run configuration files: JSON (cJSON), strict, with --set overrides, mapped onto the
 * structs the layers own (qkv_config, config/run_config.h; defaults: qkv_config_defaults).
 *
 * Sections: model (with attention inside), task, train, optim. Every key is in a table
 * (config.c) that gives its type, range and meaning; docs/config.md lists them.
 * Errors are one line naming the file, the key path and what was expected. */
#ifndef QKV_CONFIG_H
#define QKV_CONFIG_H

#include "qkv_api.h"

#include <stdbool.h>
#include <stddef.h>
#include "tensor/error.h"
#include "config/run_config.h" /* qkv_config: model, task, train and optim, each its layer's struct */

/* parse JSON text (label names it in messages, e.g. the file path) on top of the defaults.
 * Unknown keys (with the closest valid key), duplicate keys, wrong types, out-of-range
 * values and syntax errors (label:line:column) are errors. 0, or -1 with e (one line;
 * QKV_ERR_USAGE, or QKV_ERR_FAIL when out of memory). */
QKV_APP_API int qkv_config_parse(qkv_config *c, const char *json, const char *label, qkv_err *e);
/* read and parse a file (a file that cannot be read: QKV_ERR_USAGE, the user's path) */
QKV_APP_API int qkv_config_load(qkv_config *c, const char *path, qkv_err *e);
/* apply one "path.to.key=value" override with the same validation (value is JSON, or a bare string) */
QKV_APP_API int qkv_config_set(qkv_config *c, const char *assignment, qkv_err *e);
/* cross-key checks after all overrides (heads divides d_model, files exist, ...) */
QKV_APP_API int qkv_config_validate(const qkv_config *c, qkv_err *e);
/* the effective config as pretty JSON (every key, defaults filled in); malloc'd, NULL on OOM */
QKV_APP_API char *qkv_config_to_json(const qkv_config *c);
/* strict RFC 8259 syntax check of any JSON text by the config file's rules: 0, or -1
 * with e: "label:line:column: JSON syntax error: what was wrong" (QKV_ERR_USAGE) */
QKV_APP_API int qkv_json_syntax_check(const char *text, size_t len, const char *label, qkv_err *e);
/* every valid key path, NULL-terminated (for help and tests) */
QKV_APP_API const char *const *qkv_config_keys(void);

/* the config a model file or checkpoint was written with (its metadata qkv_config) into *c: 1
 * when it has one this version reads; 0 when it has none (an older qkv's checkpoint, a PyTorch
 * file, "{}") or one this version cannot read; -1 when the file cannot be read (damaged, missing,
 * not safetensors), with e (QKV_ERR_FAIL) */
QKV_APP_API int qkv_config_of_model_file(const char *path, qkv_config *c, qkv_err *e);
/* the first key of qkv_config_keys() (in that order) whose value differs between a and b, among
 * those starting with one of the NULL-terminated `keys` (NULL: every key): its path in key and
 * its values as JSON in va (a's) and vb (b's); false when they agree */
QKV_APP_API bool qkv_config_first_diff(const qkv_config *a, const qkv_config *b, const char *const *keys, char *key,
                                       size_t kn, char *va, char *vb, size_t vn);
/* a run's config (cfg, read from cfg_path) against the config its model file carries: 0 when they
 * agree in every model.* and task.* key (or the file carries none); -1 with e: QKV_ERR_USAGE
 * naming the first key that differs, QKV_ERR_FAIL when the file cannot be read. A command that
 * builds a model from a run directory calls it first: config.json edited after training would
 * build another model. */
QKV_APP_API int qkv_config_check_model_file(const char *model_path, const qkv_config *cfg, const char *cfg_path,
                                            qkv_err *e);

#endif
