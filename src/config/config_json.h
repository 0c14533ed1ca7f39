/* Internal: JSON text to a cJSON tree by the config file's rules, for the other JSON files the
 * application reads with the same strictness (ablation configs). */
#ifndef QKV_CONFIG_JSON_H
#define QKV_CONFIG_JSON_H

#include "qkv_api.h"

#include <stdbool.h>
#include <stddef.h>
#include "tensor/error.h"

struct cJSON;

/* JSON text (len bytes) to a cJSON tree by the config's rules (io/json.h: strict RFC 8259,
 * nesting up to 512 levels, no \u0000, a UTF-8 byte-order mark skipped, numbers of at most 63
 * characters): 0, or -1 with e (which may be NULL): "label:line:column: JSON syntax error: ..."
 * (QKV_ERR_USAGE; QKV_ERR_FAIL when out of memory); *oom, if given, is set when cJSON ran out of
 * memory rather than the text being wrong */
QKV_INTERNAL int qkv__config_json(const char *text, size_t len, const char *label, struct cJSON **out, bool *oom,
                                  qkv_err *e);
#endif
