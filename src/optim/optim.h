/* Optimizers over flat float32 parameter and gradient buffers, with PyTorch's update rules.
 *
 *   SGD:   g += wd p; b = mu b + g (b = g at step 1); p -= lr b
 *   Adam:  g += wd p; m = b1 m + (1-b1) g; v = b2 v + (1-b2) g^2;
 *          p -= lr/(1-b1^t) * m / (sqrt(v)/sqrt(1-b2^t) + eps)
 *   AdamW: p *= 1 - lr wd; then Adam with no L2 term */
#ifndef QKV_OPTIM_H
#define QKV_OPTIM_H

#include "qkv_api.h"

#include <stdint.h>
#include "optim/optim_config.h"

typedef struct qkv_optim {
    qkv_optim_config cfg;
    int64_t n;           /* parameters */
    float *m, *v;        /* Adam moments, or SGD momentum buffer in m; NULL when unused */
    long long step;      /* steps taken */
} qkv_optim;

/* floats of optimizer state per parameter: 2 for Adam and AdamW (m, v), 1 for SGD with momentum, else 0 */
QKV_API int qkv_optim_state_floats(const qkv_optim_config *cfg);
/* state for n parameters (zeroed); 0 or -1 (OOM) */
QKV_API int qkv_optim_init(qkv_optim *o, const qkv_optim_config *cfg, int64_t n);
QKV_API void qkv_optim_free(qkv_optim *o);
/* one update of p (n) from g (n) at learning rate lr; g is modified when weight decay is L2 */
QKV_API void qkv_optim_step(qkv_optim *o, float *p, float *g, double lr);

/* ||g||_2 over n elements (accumulated in double, in a fixed order) */
QKV_API double qkv_grad_norm(const float *g, int64_t n);
/* if ||g|| > max_norm: g *= max_norm / (||g|| + 1e-6) (PyTorch clip_grad_norm_); returns ||g|| before */
QKV_API double qkv_clip_grad_norm(float *g, int64_t n, double max_norm);

/* learning rate at step (0-based) of total: linear warmup to lr over cfg->warmup steps,
 * then constant, cosine or linear decay to min_lr at the last step */
QKV_API double qkv_schedule_lr(const qkv_optim_config *cfg, long long step, long long total);

#endif
