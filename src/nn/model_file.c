/* Model files: parameters by name in safetensors, readable by PyTorch's safetensors loaders. */
#include "nn/model_file.h"
#include "io/safetensors.h"
#include "io/strbuf.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

int qkv_load_model(qkv_model *m, const char *path, qkv_err *e) {
    qkv_safetensors *st;
    if (qkv_st_read(path, &st, e)) return -1;
    int rc = 0;
    for (int i = 0; !rc && i < m->params.n; i++) {
        qkv_param *p = m->params.items[i];
        if (!qkv_st_find(st, p->name)) {
            rc = qkv_err_set(e, QKV_ERR_FAIL, "%s: no tensor \"%s\": the checkpoint is from a model of "
                             "another shape or variant", qkv__shown(path).s, p->name);
        } else if (qkv_st_load_into(st, p->name, &p->t, e)) {
            rc = -1;
        } else { /* training never saves NaN or Inf: such a value means a damaged file */
            for (int64_t j = 0; !rc && j < p->t.numel; j++) {
                double v = p->t.dtype == QKV_F64 ? ((const double *)p->t.data)[j] : ((const float *)p->t.data)[j];
                if (!isfinite(v))
                    rc = qkv_err_set(e, QKV_ERR_FAIL, "%s: tensor \"%s\" holds %s at element %lld; expected finite "
                                     "values (the file is damaged)", qkv__shown(path).s, p->name,
                                     isnan(v) ? "NaN" : "Inf", (long long)j);
            }
        }
    }
    qkv_st_free(st);
    return rc;
}

int qkv_save_model(const qkv_model *m, const char *path, const char *config_json, long long step,
                   qkv_err *e) {
    return qkv_save_model_meta(m, path, config_json, step, NULL, 0, e);
}

int qkv_save_model_meta(const qkv_model *m, const char *path, const char *config_json, long long step,
                        const char *const *extra, int n_extra, qkv_err *e) {
    if (n_extra < 0 || n_extra > 4)
        return qkv_err_set(e, QKV_ERR_FAIL, "%s: %d extra metadata pairs (at most 4)", qkv__shown(path).s, n_extra);
    qkv_st_item *items = malloc((size_t)m->params.n * sizeof *items);
    if (!items) return qkv_err_set(e, QKV_ERR_FAIL, "%s: out of memory", qkv__shown(path).s);
    for (int i = 0; i < m->params.n; i++) items[i] = (qkv_st_item){m->params.items[i]->name, &m->params.items[i]->t};
    char steps[32], crc[9];
    snprintf(steps, sizeof steps, "%lld", step);
    const char *meta[16] = {"format", "pt", "qkv_step", steps, "qkv_config", config_json ? config_json : "{}",
                            QKV_ST_CRC32_KEY, crc};
    for (int i = 0; i < 2 * n_extra; i++) meta[8 + i] = extra[i];
    int rc = qkv_st_data_crc32(items, m->params.n, crc, e) ||
             qkv_st_write(path, items, m->params.n, meta, 4 + n_extra, e) ? -1 : 0;
    free(items);
    return rc;
}
