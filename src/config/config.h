/* qkv run configuration files: JSON (cJSON), strict, with --set overrides, mapped onto the
 * structs the layers own (qkv_config, train/run_config.h; defaults: qkv_config_defaults).
 *
 * Sections: model (with attention inside), task, train, optim. Every key is in a table
 * (config.c) that gives its type, range and meaning; docs/config.md lists them.
 * Errors are one line naming the file, the key path and what was expected. */
#ifndef QKV_CONFIG_H
#define QKV_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include "train/run_config.h" /* qkv_config: model, task, train and optim, each its layer's struct */

struct cJSON;

/* parse JSON text (label names it in messages, e.g. the file path) on top of the defaults.
 * Unknown keys (with the closest valid key), duplicate keys, wrong types, out-of-range
 * values and syntax errors (label:line:column) are errors. 0, or -1 with one line in err. */
int qkv_config_parse(qkv_config *c, const char *json, const char *label, char *err, int errlen);
/* read and parse a file */
int qkv_config_load(qkv_config *c, const char *path, char *err, int errlen);
/* apply one "path.to.key=value" override with the same validation (value is JSON, or a bare string) */
int qkv_config_set(qkv_config *c, const char *assignment, char *err, int errlen);
/* cross-key checks after all overrides (heads divides d_model, files exist, ...) */
int qkv_config_validate(const qkv_config *c, char *err, int errlen);
/* the effective config as pretty JSON (every key, defaults filled in); malloc'd, NULL on OOM */
char *qkv_config_to_json(const qkv_config *c);
/* strict RFC 8259 syntax check of any JSON text by the config's rules (qkv_config_json): 0, or -1
 * with "label:line:column: JSON syntax error: what was wrong" in err */
int qkv_json_syntax_check(const char *text, size_t len, const char *label, char *err, int errlen);
/* JSON text (len bytes) to a cJSON tree by the config's rules (io/json.h: strict RFC 8259,
 * nesting up to 512 levels, no \u0000, a UTF-8 byte-order mark skipped, numbers of at most 63
 * characters): 0, or -1 with "label:line:column: JSON syntax error: ..." in err (which may be
 * NULL); *oom, if given, is set when cJSON ran out of memory rather than the text being wrong */
int qkv_config_json(const char *text, size_t len, const char *label, struct cJSON **out, bool *oom, char *err,
                    int errlen);
/* every valid key path, NULL-terminated (for help and tests) */
const char *const *qkv_config_keys(void);

#endif
