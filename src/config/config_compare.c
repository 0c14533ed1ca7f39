/* A config beside the config a model file carries (config.h): read it, find the first key where
 * the two differ, refuse a run directory whose config.json was edited since its model was saved. */
#include "config/config.h"
#include "tensor/error.h"
#include "io/safetensors.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int qkv_config_of_model_file(const char *path, qkv_config *c, qkv_err *e) {
    qkv_safetensors *st;
    if (qkv_st_read(path, &st, e)) return -1; /* a damaged file: its checksum */
    const char *meta = qkv_st_meta(st, "qkv_config");
    qkv_config_defaults(c);
    qkv_err unread; /* a config this version cannot read: as none */
    int rc = meta && strcmp(meta, "{}") && !qkv_config_parse(c, meta, path, &unread) ? 1 : 0;
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

bool qkv_config_first_diff(const qkv_config *a, const qkv_config *b, const char *const *keys, char *key, size_t kn,
                           char *va, char *vb, size_t vn) {
    char *ja = qkv_config_to_json(a), *jb = qkv_config_to_json(b);
    cJSON *x = ja ? cJSON_Parse(ja) : NULL, *y = jb ? cJSON_Parse(jb) : NULL; /* our own output */
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

int qkv_config_check_model_file(const char *model_path, const qkv_config *cfg, const char *cfg_path, qkv_err *e) {
    /* what builds the model and what it was trained on: the model's keys, the task's */
    static const char *const KEYS[] = {"model.", "task.", NULL};
    qkv_config k;
    char key[256], a[128], b[128];
    int have = qkv_config_of_model_file(model_path, &k, e);
    if (have < 0) return -1;
    if (!have || !qkv_config_first_diff(&k, cfg, KEYS, key, sizeof key, a, b, sizeof a)) return 0;
    return qkv_err_set(e, QKV_ERR_USAGE, "%s was trained with %s %s, but %s has %s (edited since the run?)",
                        model_path, key, a, cfg_path, b);
}
