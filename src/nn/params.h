/* Named parameters in flat buffers.
 *
 * Modules declare their parameters (name, shape, initialiser) while the model is built;
 * qkv_params_finalize then places every parameter in one data buffer and one gradient
 * buffer, so zeroing gradients, clipping, optimizers and checkpoints each see a single
 * contiguous array. Names are PyTorch-style checkpoint keys: "blocks.0.attn.wq.weight". */
#ifndef QKV_PARAMS_H
#define QKV_PARAMS_H

#include "qkv_api.h"

#include "tensor/tensor.h"

/* EYE: diag times the identity plus N(0, scale^2) noise (a square 2-D parameter); ALTERNATING:
 * +1, -1, +1, ... along the last dim (restarting in each row); SIGNS: +1 or -1 at random */
typedef enum { QKV_INIT_ZEROS, QKV_INIT_ONES, QKV_INIT_UNIFORM, QKV_INIT_NORMAL, QKV_INIT_EYE, QKV_INIT_ALTERNATING,
               QKV_INIT_SIGNS } qkv_init_kind;

typedef struct qkv_param {
    char name[96];
    qkv_tensor t;          /* data and grad point into the flat buffers after finalize */
    qkv_init_kind init;
    double scale;          /* U(-scale, scale) or N(0, scale^2) */
    double diag;           /* EYE: the identity's factor */
    int64_t offset;        /* element offset in the flat buffers */
} qkv_param;

typedef struct qkv_params {
    qkv_dtype dtype;
    int n, cap;
    qkv_param **items;     /* declaration order (also initialisation and checkpoint order) */
    int64_t numel;         /* total elements */
    void *data, *grad;     /* flat buffers, numel elements each */
    bool shared;           /* data belongs to another store (qkv_params_share) */
} qkv_params;

/* an empty store for dtype (F32 to train, F64 for gradient checks) */
QKV_API void qkv_params_init(qkv_params *p, qkv_dtype dt);
/* declare a parameter; returns its tensor (data NULL until finalize), NULL on OOM/bad shape */
QKV_API qkv_tensor *qkv_params_add(qkv_params *p, const char *name, int ndim, const int64_t *shape,
                           qkv_init_kind init, double scale);
/* start a declared square parameter at diag I + N(0, noise^2) instead; -1 when it is not square */
QKV_API int qkv_params_set_eye(qkv_tensor *t, double diag, double noise);
/* allocate the flat buffers and point every parameter into them; 0 or -1 (OOM) */
QKV_API int qkv_params_finalize(qkv_params *p);
/* draw every parameter's initial values, in declaration order, from one seeded stream */
QKV_API void qkv_params_init_values(qkv_params *p, uint64_t seed);
/* dst (finalized, declared exactly as src: names, shapes, order) uses src's values from now on
 * instead of its own, keeping its own gradients: a replica that computes gradients of the same
 * weights (a micro-batch on another thread). src's data must outlive dst. 0, or -1 when the
 * layouts differ */
QKV_API int qkv_params_share(qkv_params *dst, const qkv_params *src);
/* grad = 0 for every parameter (one memset) */
QKV_API void qkv_params_zero_grad(qkv_params *p);
/* the parameter called name, or NULL */
QKV_API qkv_param *qkv_params_find(const qkv_params *p, const char *name);
QKV_API void qkv_params_free(qkv_params *p);

#endif
