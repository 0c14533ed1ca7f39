/* results.json's keys (results_schema.h) and their reading with io/json.h's getters. */
#include "ablate/results_schema.h"

#include <assert.h>
#include <cjson/cJSON.h>

#define QKV_RK_ROW_(id, key, type, lo, hi, required, in) {key, type, lo, hi, required, in},
const qkv_results_key_def qkv__results_keys[QKV_RK_COUNT] = {QKV_RESULTS_KEYS(QKV_RK_ROW_)};
#undef QKV_RK_ROW_

/* key k's row, which must be of one of the types the getter reads */
static const qkv_results_key_def *row(qkv_results_key k, unsigned types) {
    assert(k >= 0 && k < QKV_RK_COUNT && (types >> qkv__results_keys[k].type & 1u));
    return &qkv__results_keys[k];
}

const cJSON *qkv__results_item(const cJSON *o, qkv_results_key k) {
    return o ? cJSON_GetObjectItemCaseSensitive(o, row(k, ~0u)->key) : NULL;
}

double qkv__results_num(qkv_json_reader *r, const cJSON *o, const char *where, qkv_results_key k) {
    const qkv_results_key_def *d = row(k, 1u << QKV_RT_NUM);
    return qkv__json_num_in(r, o, where, d->key, d->lo, d->hi);
}

long long qkv__results_count(qkv_json_reader *r, const cJSON *o, const char *where, qkv_results_key k) {
    return qkv__json_count(r, o, where, row(k, 1u << QKV_RT_COUNT)->key);
}

const char *qkv__results_str(qkv_json_reader *r, const cJSON *o, const char *where, qkv_results_key k) {
    const qkv_results_key_def *d = row(k, 1u << QKV_RT_STR);
    return qkv__json_str(r, o, where, d->key, d->required);
}

bool qkv__results_bool(qkv_json_reader *r, const cJSON *o, const char *where, qkv_results_key k, bool dflt) {
    return qkv__json_bool(r, o, where, row(k, 1u << QKV_RT_BOOL)->key, dflt);
}

const cJSON *qkv__results_array(qkv_json_reader *r, const cJSON *o, const char *where, qkv_results_key k) {
    const qkv_results_key_def *d = row(k, 1u << QKV_RT_NUMS | 1u << QKV_RT_COUNTS | 1u << QKV_RT_OBJECTS);
    return qkv__json_array(r, o, where, d->key, d->required);
}

const cJSON *qkv__results_series(qkv_json_reader *r, const cJSON *o, const char *where, qkv_results_key k) {
    const qkv_results_key_def *d = row(k, 1u << QKV_RT_NUM | 1u << QKV_RT_COUNT);
    assert(d->in & QKV_RO_CURVE);
    return qkv__json_array(r, o, where, d->key, false);
}

const cJSON *qkv__results_object(qkv_json_reader *r, const cJSON *o, const char *where, qkv_results_key k) {
    const qkv_results_key_def *d = row(k, 1u << QKV_RT_OBJECT);
    const cJSON *v = o ? cJSON_GetObjectItemCaseSensitive(o, d->key) : NULL;
    if (!v || cJSON_IsNull(v)) return NULL;
    if (!cJSON_IsObject(v)) {
        qkv__json_wrong(r, where, d->key, "an object or null", v);
        return NULL;
    }
    return v;
}
