/* Checkpoints (see checkpoint.h). On disk, besides the parameters:
 *   optim.m, optim.v   F32 (n)  the optimizer's state, when it has one
 *   state.scalars      F64 (9)  the loop's state and the data stream's spare normal, in the
 *                               order of the enum below (checkpoints before 0.1.0's last change
 *                               hold the first 6)
 *   state.rng          I32 (8)  the data stream's four 64-bit words, low half first
 *   metadata           qkv_step, qkv_optim_step (the optimizer's step count), qkv_config (the
 *                      run's effective config, as in the model file) and qkv_crc32 (the data
 *                      buffer's CRC-32: io/safetensors.h); checkpoints of an older qkv have
 *                      neither of the last two; the caller's extra pairs (a token run's
 *                      vocabulary: train/vocabulary.h) */
#include "train/checkpoint.h"
#include "io/safetensors.h"
#include "io/strbuf.h"
#include "nn/model_file.h"
#include "train/run_dir.h"

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* state.scalars: the index of each field */
enum {
    SC_STEP, SC_LOSS_SUM, SC_LOSS_COUNT, SC_SKIPPED, SC_RNG_SPARE, SC_RNG_HAS_SPARE, /* version 1 */
    SC_LAST_LOSS, SC_LOGGED_LOSS, SC_SECONDS,
    SC_COUNT, SC_COUNT_V1 = SC_RNG_HAS_SPARE + 1
};

static void pack(const qkv_train_state *s, const qkv_rng *data, double sc[SC_COUNT], int32_t words[8]) {
    sc[SC_STEP] = (double)s->step;
    sc[SC_LOSS_SUM] = s->loss_sum;
    sc[SC_LOSS_COUNT] = (double)s->loss_count;
    sc[SC_SKIPPED] = (double)s->skipped;
    sc[SC_RNG_SPARE] = data->spare;
    sc[SC_RNG_HAS_SPARE] = (double)data->has_spare;
    sc[SC_LAST_LOSS] = s->last_loss;
    sc[SC_LOGGED_LOSS] = s->logged_loss;
    sc[SC_SECONDS] = s->seconds;
    for (int i = 0; i < 4; i++) {
        words[2 * i] = (int32_t)(uint32_t)(data->s[i] & 0xffffffffu);
        words[2 * i + 1] = (int32_t)(uint32_t)(data->s[i] >> 32);
    }
}

static void unpack(const double sc[SC_COUNT], const int32_t words[8], qkv_train_state *s, qkv_rng *data) {
    s->step = (long long)sc[SC_STEP];
    s->loss_sum = sc[SC_LOSS_SUM];
    s->loss_count = (long long)sc[SC_LOSS_COUNT];
    s->skipped = (long long)sc[SC_SKIPPED];
    data->spare = sc[SC_RNG_SPARE];
    data->has_spare = (int)sc[SC_RNG_HAS_SPARE];
    s->last_loss = sc[SC_LAST_LOSS];
    s->logged_loss = sc[SC_LOGGED_LOSS];
    s->seconds = sc[SC_SECONDS];
    for (int i = 0; i < 4; i++)
        data->s[i] = (uint64_t)(uint32_t)words[2 * i] | (uint64_t)(uint32_t)words[2 * i + 1] << 32;
}

/* a 1-D header over caller memory */
static qkv_tensor vec(qkv_dtype dt, int64_t n, void *data) {
    qkv_tensor t;
    qkv_shape_init(&t, dt, 1, &n);
    t.data = data;
    return t;
}

int qkv_checkpoint_save(const char *dir, const qkv_model *m, const qkv_optim *o, const qkv_train_state *s,
                        const qkv_rng *data, const char *config_json, const char *const *extra, int n_extra,
                        qkv_err *e) {
    int n = m->params.n;
    qkv_st_item *items = malloc((size_t)(n + 4) * sizeof *items);
    if (!items) return qkv_err_set(e, QKV_ERR_FAIL, "out of memory saving a checkpoint");
    for (int i = 0; i < n; i++) items[i] = (qkv_st_item){m->params.items[i]->name, &m->params.items[i]->t};
    int k = n;
    double sc[SC_COUNT];
    int32_t words[8];
    pack(s, data, sc, words);
    qkv_tensor tm = vec(QKV_F32, m->params.numel, o->m), tv = vec(QKV_F32, m->params.numel, o->v),
               ts = vec(QKV_F64, SC_COUNT, sc), tr = vec(QKV_I32, 8, words);
    if (o->m) items[k++] = (qkv_st_item){"optim.m", &tm};
    if (o->v) items[k++] = (qkv_st_item){"optim.v", &tv};
    items[k++] = (qkv_st_item){"state.scalars", &ts};
    items[k++] = (qkv_st_item){"state.rng", &tr};
    char steps[32], osteps[32], crc[9];
    snprintf(steps, sizeof steps, "%lld", s->step);
    snprintf(osteps, sizeof osteps, "%lld", o->step);
    const char *meta[18] = {"format", "pt", "qkv_step", steps, "qkv_optim_step", osteps, QKV_ST_CRC32_KEY, crc,
                            "qkv_config", config_json};
    int n_meta = config_json ? 5 : 4;
    assert(n_extra >= 0 && n_extra <= 4); /* checkpoint.h */
    for (int i = 0; i < n_extra; i++, n_meta++) /* after the config, or in its place */
        meta[2 * n_meta] = extra[2 * i], meta[2 * n_meta + 1] = extra[2 * i + 1];
    char *ck = qkv__pathf("%s/%s", dir, QKV_RUN_CHECKPOINT), *model = qkv__pathf("%s/%s", dir, QKV_RUN_MODEL);
    int rc = -1;
    if (!ck || !model) qkv_err_set(e, QKV_ERR_FAIL, "out of memory saving a checkpoint");
    else if (!qkv_st_data_crc32(items, k, crc, e) && !qkv_st_write(ck, items, k, meta, n_meta, e) &&
             /* the parameters alone, for users and PyTorch */
             !qkv_save_model_meta(m, model, config_json, s->step, extra, n_extra, e))
        rc = 0;
    free(items);
    free(ck);
    free(model);
    return rc;
}

int qkv_checkpoint_load(const char *dir, qkv_model *m, qkv_optim *o, qkv_train_state *s, qkv_rng *data,
                        qkv_err *e) {
    char *path = qkv__pathf("%s/%s", dir, QKV_RUN_CHECKPOINT);
    if (!path) return qkv_err_set(e, QKV_ERR_FAIL, "out of memory reading a checkpoint");
    qkv_safetensors *st;
    if (access(path, R_OK)) {
        qkv_err_set(e, QKV_ERR_FAIL, "%s: no checkpoint to resume from (%s)", qkv__shown(path).s, strerror(errno));
        free(path);
        return -1;
    }
    int bad = qkv_load_model(m, path, e) || qkv_st_read(path, &st, e);
    free(path);
    if (bad) return -1;
    const qkv_st_entry *se = qkv_st_find(st, "state.scalars");
    int64_t nsc = se && se->ndim == 1 && se->shape[0] == SC_COUNT_V1 ? SC_COUNT_V1 : SC_COUNT;
    /* a version-1 file has no losses or time: as at the start of a session */
    double sc[SC_COUNT] = {[SC_LAST_LOSS] = NAN, [SC_LOGGED_LOSS] = NAN, [SC_SECONDS] = 0};
    int32_t words[8];
    qkv_tensor ts = vec(QKV_F64, nsc, sc), tr = vec(QKV_I32, 8, words), tm = vec(QKV_F32, m->params.numel, o->m),
               tv = vec(QKV_F32, m->params.numel, o->v);
    int rc = qkv_st_load_into(st, "state.scalars", &ts, e) || qkv_st_load_into(st, "state.rng", &tr, e);
    if (!rc && o->m) rc = qkv_st_load_into(st, "optim.m", &tm, e);
    if (!rc && o->v) rc = qkv_st_load_into(st, "optim.v", &tv, e);
    const char *os = qkv_st_meta(st, "qkv_optim_step");
    if (!rc) {
        unpack(sc, words, s, data);
        o->step = os ? atoll(os) : s->step - s->skipped;
    }
    qkv_st_free(st);
    return rc ? -1 : 0;
}
