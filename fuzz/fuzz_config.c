/* libFuzzer target: the config parser, the --set overrides and the validator.
 *
 * Input: JSON text, then optionally a NUL byte and --set assignments, one per line:
 *   {"model": {"d_model": 32}}\0model.heads=2\noptim.lr=0.1
 * Checks beyond "no crash, no sanitizer report":
 *   - every error is one non-empty line;
 *   - a config that validates round-trips: qkv_config_to_json, parsed again, gives the same
 *     JSON text (every key, exactly). */
#include "config/config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void one_line(const char *err) {
    if (!err[0] || strchr(err, '\n')) {
        fprintf(stderr, "not a one-line error: [%s]\n", err);
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size > 1 << 20) return 0;
    char *buf = malloc(size + 2);
    if (!buf) return 0;
    memcpy(buf, data, size);
    buf[size] = buf[size + 1] = 0;
    const char *json = buf;
    char *sets = memchr(buf, 0, size) ? buf + strlen(buf) + 1 : NULL;
    qkv_err e;
    qkv_config c;
    qkv_config_defaults(&c);
    if (qkv_config_parse(&c, json, "fuzz.json", &e)) {
        one_line(e.msg);
        free(buf);
        return 0;
    }
    for (char *line = sets; line && *line;) {
        char *nl = strchr(line, '\n');
        if (nl) *nl = 0;
        if (qkv_config_set(&c, line, &e)) one_line(e.msg);
        line = nl ? nl + 1 : NULL;
    }
    /* data files: a readable stand-in for any path (the fuzzer must not open its own choices) */
    if (c.task.path[0]) snprintf(c.task.path, sizeof c.task.path, "/dev/null");
    if (c.task.eval_path[0]) snprintf(c.task.eval_path, sizeof c.task.eval_path, "/dev/null");
    if (qkv_config_validate(&c, &e)) {
        one_line(e.msg);
        free(buf);
        return 0;
    }
    char *a = qkv_config_to_json(&c);
    if (a) {
        qkv_config d;
        qkv_config_defaults(&d);
        if (qkv_config_parse(&d, a, "effective", &e)) {
            fprintf(stderr, "the effective config does not parse: %s\n%s", e.msg, a);
            abort();
        }
        char *b = qkv_config_to_json(&d);
        if (b && strcmp(a, b)) {
            fprintf(stderr, "the effective config does not round-trip:\n%s\n%s", a, b);
            abort();
        }
        free(b);
        free(a);
    }
    free(buf);
    return 0;
}
