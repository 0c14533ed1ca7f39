#include "nn/params.h"
#include "tensor/rng.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void qkv_params_init(qkv_params *p, qkv_dtype dt) {
    memset(p, 0, sizeof *p);
    p->dtype = dt;
}

qkv_tensor *qkv_params_add(qkv_params *p, const char *name, int ndim, const int64_t *shape,
                           qkv_init_kind init, double scale) {
    if (p->n == p->cap) {
        int cap = p->cap ? 2 * p->cap : 32;
        qkv_param **items = realloc(p->items, (size_t)cap * sizeof *items);
        if (!items) return NULL;
        p->items = items;
        p->cap = cap;
    }
    qkv_param *q = calloc(1, sizeof *q); /* one allocation each: pointers stay valid */
    if (!q) return NULL;
    if (qkv_shape_init(&q->t, p->dtype, ndim, shape)) { free(q); return NULL; }
    snprintf(q->name, sizeof q->name, "%s", name);
    q->t.name = q->name;
    q->t.requires_grad = true;
    q->init = init;
    q->scale = scale;
    q->offset = p->numel;
    p->numel += q->t.numel;
    p->items[p->n++] = q;
    return &q->t;
}

int qkv_params_set_eye(qkv_tensor *t, double diag, double noise) {
    if (t->ndim != 2 || t->shape[0] != t->shape[1]) return -1;
    qkv_param *q = (qkv_param *)((char *)t - offsetof(qkv_param, t)); /* params hand out &param->t */
    q->init = QKV_INIT_EYE;
    q->diag = diag;
    q->scale = noise;
    return 0;
}

int qkv_params_finalize(qkv_params *p) {
    size_t es = qkv_dtype_size(p->dtype), n = (size_t)(p->numel ? p->numel : 1);
    p->data = calloc(n, es);
    p->grad = calloc(n, es);
    if (!p->data || !p->grad) return -1;
    for (int i = 0; i < p->n; i++) {
        qkv_param *q = p->items[i];
        q->t.data = (char *)p->data + (size_t)q->offset * es;
        q->t.grad = (char *)p->grad + (size_t)q->offset * es;
    }
    return 0;
}

void qkv_params_init_values(qkv_params *p, uint64_t seed) {
    qkv_rng r;
    qkv_rng_seed_stream(&r, seed, 1);
    for (int i = 0; i < p->n; i++) {
        qkv_param *q = p->items[i];
        switch (q->init) {
        case QKV_INIT_ZEROS: qkv_tensor_fill_uniform(&q->t, &r, 0, 0); break;
        case QKV_INIT_ONES: qkv_tensor_fill_uniform(&q->t, &r, 1, 1); break;
        case QKV_INIT_UNIFORM: qkv_tensor_fill_uniform(&q->t, &r, -q->scale, q->scale); break;
        case QKV_INIT_NORMAL: qkv_tensor_fill_normal(&q->t, &r, 0, q->scale); break;
        case QKV_INIT_EYE: /* noise plus diagonal in double, rounded once: a F32 start is the F64 one rounded */
            for (int64_t e = 0, n = q->t.shape[1]; e < q->t.numel; e++)
                qkv_tensor_set(&q->t, e, q->scale * qkv_rng_normal(&r) + (e / n == e % n ? q->diag : 0));
            break;
        case QKV_INIT_ALTERNATING:
            for (int64_t e = 0, n = q->t.shape[q->t.ndim - 1]; e < q->t.numel; e++) qkv_tensor_set(&q->t, e, e % n % 2 ? -1 : 1);
            break;
        case QKV_INIT_SIGNS:
            for (int64_t e = 0; e < q->t.numel; e++) qkv_tensor_set(&q->t, e, qkv_rng_uniform(&r) < 0.5 ? -1 : 1);
            break;
        }
    }
}

int qkv_params_share(qkv_params *dst, const qkv_params *src) {
    if (dst->n != src->n || dst->numel != src->numel || dst->dtype != src->dtype || !src->data) return -1;
    for (int i = 0; i < dst->n; i++)
        if (strcmp(dst->items[i]->name, src->items[i]->name) || dst->items[i]->offset != src->items[i]->offset ||
            !qkv_same_shape(&dst->items[i]->t, &src->items[i]->t))
            return -1;
    if (!dst->shared) free(dst->data);
    dst->data = src->data;
    dst->shared = true;
    size_t es = qkv_dtype_size(dst->dtype);
    for (int i = 0; i < dst->n; i++) dst->items[i]->t.data = (char *)dst->data + (size_t)dst->items[i]->offset * es;
    return 0;
}

void qkv_params_zero_grad(qkv_params *p) {
    if (p->grad) memset(p->grad, 0, (size_t)p->numel * qkv_dtype_size(p->dtype));
}

qkv_param *qkv_params_find(const qkv_params *p, const char *name) {
    for (int i = 0; i < p->n; i++)
        if (!strcmp(p->items[i]->name, name)) return p->items[i];
    return NULL;
}

void qkv_params_free(qkv_params *p) {
    for (int i = 0; i < p->n; i++) free(p->items[i]);
    free(p->items);
    if (!p->shared) free(p->data);
    free(p->grad);
    memset(p, 0, sizeof *p);
}
