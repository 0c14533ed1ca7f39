#include "tensor/vector_clones.h"
#include "optim/optim_internal.h"
#include "tensor/parallel.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

int qkv_optim_state_floats(const qkv_optim_config *cfg) {
    return cfg->kind != QKV_OPT_SGD ? 2 : cfg->momentum > 0 ? 1 : 0;
}

int qkv_optim_init(qkv_optim *o, const qkv_optim_config *cfg, int64_t n) {
    memset(o, 0, sizeof *o);
    o->cfg = *cfg;
    o->n = n;
    size_t bytes = (size_t)(n ? n : 1) * sizeof(float);
    bool adam = cfg->kind != QKV_OPT_SGD;
    if (adam || cfg->momentum > 0) o->m = calloc(1, bytes);
    if (adam) o->v = calloc(1, bytes);
    if ((adam || cfg->momentum > 0) && (!o->m || (adam && !o->v))) {
        qkv_optim_free(o);
        return -1;
    }
    return 0;
}

void qkv_optim_free(qkv_optim *o) {
    free(o->m);
    free(o->v);
    o->m = o->v = NULL;
}

static void sgd(qkv_optim *o, float *p, float *g, double lr) {
    const qkv_optim_config *c = &o->cfg;
    float wd = (float)c->weight_decay, mu = (float)c->momentum, a = (float)lr;
    for (int64_t i = 0; i < o->n; i++) {
        float gi = wd != 0 ? g[i] + wd * p[i] : g[i];
        if (o->m) {
            o->m[i] = o->step == 1 ? gi : mu * o->m[i] + gi;
            gi = o->m[i];
        }
        p[i] -= a * gi;
    }
}

typedef struct {
    float *p, *g, *m, *v;
    float b1, b2, a1, a2, eps, step_size, bc2_sqrt, wd, shrink;
    bool decoupled, zero; /* zero: g = 0 after it is read */
} adam_job;

/* one pass over [i0, i1), vectorisable, in the order of PyTorch's single-tensor Adam */
QKV_VECTOR_CLONES
static void adam_range(void *arg, int64_t i0, int64_t i1) {
    const adam_job *j = arg;
    float *p = j->p, *m = j->m, *v = j->v, *g = j->g;
    const float b1 = j->b1, b2 = j->b2, a1 = j->a1, a2 = j->a2, eps = j->eps, step = j->step_size;
    const float bc2_sqrt = j->bc2_sqrt, wd = j->wd, shrink = j->shrink;
    const bool decoupled = j->decoupled, zero = j->zero;
    for (int64_t i = i0; i < i1; i++) {
        float gi = g[i];
        if (zero) g[i] = 0;
        if (decoupled) p[i] *= shrink;
        else if (wd != 0) gi += wd * p[i];
        m[i] = m[i] * b1 + a1 * gi;
        v[i] = v[i] * b2 + a2 * gi * gi;
        float denom = sqrtf(v[i]) / bc2_sqrt + eps;
        p[i] -= step * (m[i] / denom);
    }
}

static void adam(qkv_optim *o, float *p, float *g, double lr, bool decoupled, bool zero) {
    const qkv_optim_config *c = &o->cfg;
    double bc1 = 1 - pow(c->beta1, (double)o->step), bc2 = 1 - pow(c->beta2, (double)o->step);
    /* scalars are computed in double and rounded once, as PyTorch passes them to its kernels */
    adam_job j = {.p = p, .g = g, .m = o->m, .v = o->v, .b1 = (float)c->beta1, .b2 = (float)c->beta2,
                  .a1 = (float)(1 - c->beta1), .a2 = (float)(1 - c->beta2), .eps = (float)c->eps,
                  .step_size = (float)(lr / bc1), .bc2_sqrt = (float)sqrt(bc2), .wd = (float)c->weight_decay,
                  .shrink = (float)(1 - lr * c->weight_decay), .decoupled = decoupled, .zero = zero};
    qkv__parallel_for(o->n, 16384, adam_range, &j);
}

static void step(qkv_optim *o, float *p, float *g, double lr, bool zero) {
    o->step++;
    switch (o->cfg.kind) {
    case QKV_OPT_SGD:
        sgd(o, p, g, lr);
        if (zero) memset(g, 0, (size_t)o->n * sizeof *g);
        break;
    case QKV_OPT_ADAM: adam(o, p, g, lr, false, zero); break;
    default: adam(o, p, g, lr, o->cfg.weight_decay != 0, zero); break;
    }
}

void qkv_optim_step(qkv_optim *o, float *p, float *g, double lr) { step(o, p, g, lr, false); }

void qkv__optim_step_zero(qkv_optim *o, float *p, float *g, double lr) { step(o, p, g, lr, true); }

/* the sum of g's squares in double, in 16 fixed lanes (element i in lane i mod 16) added
 * pairwise in a fixed order: it vectorises on every width with the same bits (a serial sum is
 * one chain of dependent adds) */
QKV_VECTOR_CLONES
static double sum_squares(const float *g, int64_t n) {
    double acc[16] = {0};
    int64_t b = 0;
    for (; b + 16 <= n; b += 16)
        for (int k = 0; k < 16; k++) acc[k] += (double)g[b + k] * g[b + k];
    for (int64_t i = b; i < n; i++) acc[i - b] += (double)g[i] * g[i];
    for (int w = 8; w >= 1; w /= 2)
        for (int k = 0; k < w; k++) acc[k] += acc[k + w];
    return acc[0];
}

double qkv_grad_norm(const float *g, int64_t n) { return sqrt(sum_squares(g, n)); }

double qkv_clip_grad_norm(float *g, int64_t n, double max_norm) {
    double norm = qkv_grad_norm(g, n);
    if (max_norm > 0 && norm > max_norm) {
        float s = (float)(max_norm / (norm + 1e-6));
        for (int64_t i = 0; i < n; i++) g[i] *= s;
    }
    return norm;
}

double qkv_schedule_lr(const qkv_optim_config *c, long long step, long long total) {
    if (step < c->warmup) return c->lr * (double)(step + 1) / (double)c->warmup;
    long long span = total - c->warmup - 1;
    double t = span > 0 ? (double)(step - c->warmup) / (double)span : 1.0;
    if (t > 1) t = 1;
    switch (c->schedule) {
    case QKV_SCHED_COSINE: return c->min_lr + (c->lr - c->min_lr) * 0.5 * (1 + cos(3.14159265358979323846 * t));
    case QKV_SCHED_LINEAR: return c->lr + (c->min_lr - c->lr) * t;
    default: return c->lr;
    }
}
