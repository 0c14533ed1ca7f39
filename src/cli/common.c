/* Shared helpers of the qkv subcommands. */
#include "cli/cli.h"
#include "io/safetensors.h"
#include "io/strbuf.h"
#include "tensor/parallel.h"

#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void qkv__cli_error(const char *cmd, const char *fmt, ...) {
    /* the message is formatted whole (as long as it is: the paths in it are never cut), then
     * written with every control character shown as \xNN: it quotes paths and values from the
     * user (a file name may hold a newline), and an error is one line whatever they hold */
    qkv_strbuf b;
    qkv__strbuf_init(&b);
    va_list ap;
    va_start(ap, fmt);
    qkv__strbuf_vprintf(&b, fmt, ap);
    va_end(ap);
    char *msg = qkv__strbuf_take(&b);
    if (cmd) fprintf(stderr, "qkv %s: ", cmd);
    else fputs("qkv: ", stderr);
    for (const unsigned char *p = (const unsigned char *)(msg ? msg : "out of memory"); *p; p++) {
        if (*p < 0x20 || *p == 0x7f) fprintf(stderr, "\\x%02x", *p);
        else fputc(*p, stderr);
    }
    fputc('\n', stderr);
    free(msg);
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

int qkv__cli_load_config(const char *cmd, const char *path, const char *const *sets, int nsets, qkv_config *c) {
    char err[1024];
    qkv_config_defaults(c);
    if (qkv_config_load(c, path, err, sizeof err)) {
        qkv__cli_error(cmd, "%s", err);
        return -1;
    }
    for (int i = 0; i < nsets; i++)
        if (qkv_config_set(c, sets[i], err, sizeof err)) {
            qkv__cli_error(cmd, "%s", err);
            return -1;
        }
    if (qkv_config_validate(c, err, sizeof err)) {
        qkv__cli_error(cmd, "%s: %s", path, err);
        return -1;
    }
    return 0;
}

int qkv__cli_file_config(const char *path, qkv_config *c, char *err, size_t errlen) {
    qkv_safetensors *st;
    if (qkv_st_read(path, &st, err, errlen)) return -1; /* a damaged file: its checksum */
    const char *meta = qkv_st_meta(st, "qkv_config");
    char e[256];
    qkv_config_defaults(c);
    int rc = meta && strcmp(meta, "{}") && !qkv_config_parse(c, meta, path, e, sizeof e) ? 1 : 0;
    qkv_st_free(st);
    return rc;
}

/* the item at a dotted key path ("model.attention.qkv") of a config's JSON, or NULL */
static const cJSON *at_path(const cJSON *root, const char *path) {
    char part[128];
    const cJSON *x = root;
    for (const char *p = path; x && *p;) {
        size_t n = strcspn(p, ".");
        snprintf(part, sizeof part, "%.*s", (int)n, p);
        x = cJSON_GetObjectItemCaseSensitive(x, part);
        p += n + (p[n] == '.');
    }
    return x;
}

bool qkv__cli_config_diff(const qkv_config *a, const qkv_config *b, const char *const *keys, char *key, size_t kn,
                         char *va, char *vb, size_t vn) {
    char *ja = qkv_config_to_json(a), *jb = qkv_config_to_json(b);
    cJSON *x = ja ? cJSON_Parse(ja) : NULL, *y = jb ? cJSON_Parse(jb) : NULL;
    free(ja);
    free(jb);
    bool diff = false;
    for (const char *const *k = qkv_config_keys(); x && y && *k && !diff; k++) {
        bool wanted = !keys;
        for (const char *const *w = keys; w && *w && !wanted; w++) wanted = !strncmp(*k, *w, strlen(*w));
        if (!wanted) continue;
        char *pa = cJSON_PrintUnformatted(at_path(x, *k)), *pb = cJSON_PrintUnformatted(at_path(y, *k));
        diff = pa && pb && strcmp(pa, pb);
        if (diff) {
            snprintf(key, kn, "%s", *k);
            snprintf(va, vn, "%s", pa);
            snprintf(vb, vn, "%s", pb);
        }
        cJSON_free(pa);
        cJSON_free(pb);
    }
    cJSON_Delete(x);
    cJSON_Delete(y);
    return diff;
}

int qkv__cli_check_trained_with(const char *cmd, const char *path, const char *cfg_path, const qkv_config *eff) {
    /* the model's keys, then the task's name: the same model on another task would read its
     * tokens as other things (the task's other keys may differ: another length, say) */
    static const char *const KEYS[] = {"model.", "task.name", NULL};
    qkv_config k;
    char err[1024], key[256], a[128], b[128];
    int have = qkv__cli_file_config(path, &k, err, sizeof err);
    if (have < 0) {
        qkv__cli_error(cmd, "%s", err);
        return -1;
    }
    if (!have || !qkv__cli_config_diff(&k, eff, KEYS, key, sizeof key, a, b, sizeof a)) return 0;
    qkv__cli_error(cmd, "%s was trained with %s %s, but %s has %s (%s with the run's config.json)", path, key, a,
                  cfg_path, b, strcmp(cmd, "eval") ? cmd : "evaluate");
    return -1;
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
