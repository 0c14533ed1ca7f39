/* Elementwise exp, log, tanh, sqrt, ReLU, GELU (erf and tanh forms), sigmoid. */
#include "tensor/kernel_prelude.h"
#include "tensor/check.h"
#include "tensor/fastmath.h"

#define SQRT_2_OVER_PI 0.7978845608028654
#define INV_SQRT_2 0.7071067811865476
#define INV_SQRT_2PI 0.3989422804014327
#define GELU_C 0.044715

/* GELU x Phi(x) and its derivative Phi + x phi; in float from fastmath.h (qkv_gelu_fast: the bits
 * of its Phi and phi, without their range and NaN handling), in double from libm (one
 * definition each: the unary op and the linear's epilogue give the same bits) */
static inline __attribute__((always_inline)) real gelu_d(real x, real *d) {
#if QKV_KERNEL_F64
    real cdf = (real)0.5 * (1 + erf(x * (real)INV_SQRT_2));
    *d = cdf + x * (real)INV_SQRT_2PI * exp((real)-0.5 * x * x);
    return x * cdf;
#else
    return qkv_gelu_fast(x, d);
#endif
}

/* x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) / 2 and its derivative */
static inline __attribute__((always_inline)) real gelu_tanh_d(real x, real *d) {
    real x2 = x * x;
    real t = tanh((real)SQRT_2_OVER_PI * (x + (real)GELU_C * x2 * x));
    *d = (real)0.5 * (1 + t) + (real)0.5 * x * (1 - t * t) * ((real)SQRT_2_OVER_PI * (1 + 3 * (real)GELU_C * x2));
    return (real)0.5 * x * (1 + t);
}

QKV_VECTOR_CLONES
static void unary_serial(qkv_unop op, int64_t n, const real *x, real *y, real *d) {
    switch (op) {
    case QKV_UN_EXP: for (int64_t i = 0; i < n; i++) y[i] = exp(x[i]); break;
    case QKV_UN_LOG: for (int64_t i = 0; i < n; i++) y[i] = log(x[i]); break;
    case QKV_UN_TANH: for (int64_t i = 0; i < n; i++) y[i] = tanh(x[i]); break;
    case QKV_UN_SQRT: for (int64_t i = 0; i < n; i++) y[i] = sqrt(x[i]); break;
    case QKV_UN_RELU: for (int64_t i = 0; i < n; i++) y[i] = x[i] > 0 ? x[i] : 0; break;
    case QKV_UN_GELU: /* x Phi(x), Phi(x) = (1 + erf(x / sqrt 2)) / 2; f' = Phi + x phi */
        if (d)
            for (int64_t i = 0; i < n; i++) y[i] = gelu_d(x[i], &d[i]);
        else
#if QKV_KERNEL_F64
            for (int64_t i = 0; i < n; i++) y[i] = x[i] * ((real)0.5 * (1 + erf(x[i] * (real)INV_SQRT_2)));
#else
            for (int64_t i = 0; i < n; i++) {
                real dd;
                y[i] = qkv_gelu_fast(x[i], &dd);
            }
#endif
        break;
    case QKV_UN_GELU_TANH: /* x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) / 2 */
        if (d)
            for (int64_t i = 0; i < n; i++) y[i] = gelu_tanh_d(x[i], &d[i]);
        else
            for (int64_t i = 0; i < n; i++) {
                real dd;
                y[i] = gelu_tanh_d(x[i], &dd);
            }
        break;
    case QKV_UN_SIGMOID: /* 1 / (1 + exp(-x)), split by sign so exp never overflows */
        for (int64_t i = 0; i < n; i++) {
            real e = exp(-fabs(x[i]));
            y[i] = x[i] >= 0 ? 1 / (1 + e) : e / (1 + e);
        }
        break;
    default: break;
    }
}

QKV_VECTOR_CLONES
static void unary_backward_serial(qkv_unop op, int64_t n, const real *x, const real *y, const real *d,
                                  const real *dy, real *dx, int assign) {
    if (d) { /* the forward saved f'(x) */
        for (int64_t i = 0; i < n; i++) QKV_PUT(dx[i], assign, dy[i] * d[i]);
        return;
    }
    switch (op) {
    case QKV_UN_EXP: for (int64_t i = 0; i < n; i++) QKV_PUT(dx[i], assign, dy[i] * y[i]); break;
    case QKV_UN_LOG: for (int64_t i = 0; i < n; i++) QKV_PUT(dx[i], assign, dy[i] / x[i]); break;
    case QKV_UN_TANH: for (int64_t i = 0; i < n; i++) QKV_PUT(dx[i], assign, dy[i] * (1 - y[i] * y[i])); break;
    case QKV_UN_SQRT: for (int64_t i = 0; i < n; i++) QKV_PUT(dx[i], assign, dy[i] * (real)0.5 / y[i]); break;
    case QKV_UN_RELU: for (int64_t i = 0; i < n; i++) QKV_PUT(dx[i], assign, x[i] > 0 ? dy[i] : 0); break;
    case QKV_UN_GELU: /* Phi(x) + x phi(x) */
        for (int64_t i = 0; i < n; i++) {
            real cdf = (real)0.5 * (1 + erf(x[i] * (real)INV_SQRT_2));
            real pdf = (real)INV_SQRT_2PI * exp((real)-0.5 * x[i] * x[i]);
            QKV_PUT(dx[i], assign, dy[i] * (cdf + x[i] * pdf));
        }
        break;
    case QKV_UN_GELU_TANH:
        for (int64_t i = 0; i < n; i++) {
            real x2 = x[i] * x[i];
            real t = tanh((real)SQRT_2_OVER_PI * (x[i] + (real)GELU_C * x2 * x[i]));
            real du = (real)SQRT_2_OVER_PI * (1 + 3 * (real)GELU_C * x2);
            QKV_PUT(dx[i], assign, dy[i] * ((real)0.5 * (1 + t) + (real)0.5 * x[i] * (1 - t * t) * du));
        }
        break;
    case QKV_UN_SIGMOID: for (int64_t i = 0; i < n; i++) QKV_PUT(dx[i], assign, dy[i] * y[i] * (1 - y[i])); break;
    default: break;
    }
}

/* the public kernels: ranges of elements on qkv's threads */
typedef struct { qkv_unop op; const real *x, *y, *d, *dy; real *out, *dout; int zero; } unary_job;

static void unary_range(void *p, int64_t b, int64_t e) {
    unary_job *j = p;
    unary_serial(j->op, e - b, j->x + b, j->out + b, j->dout ? j->dout + b : NULL);
}

/* y = f(x) elementwise for f in qkv_unop; for GELU (both forms) also d = f'(x) when d != NULL,
 * so the backward needs no second erf/tanh */
void K(unary)(qkv_unop op, int64_t n, const real *x, real *y, real *d) {
    QKV_ASSERT(n >= 0 && (unsigned)op < QKV_UN_COUNT, "unary: n >= 0, an op of qkv_unop");
    unary_job j = {.op = op, .x = x, .out = y, .dout = d};
    qkv__parallel_for(n, QKV_GRAIN, unary_range, &j);
}

static void unary_backward_range(void *p, int64_t b, int64_t e) {
    unary_job *j = p;
    unary_backward_serial(j->op, e - b, j->x + b, j->y + b, j->d ? j->d + b : NULL, j->dy + b, j->out + b, j->zero);
}

/* dx += dy f'(x); uses x, y = f(x) or the saved d = f'(x), whichever is cheapest;
 * zero: dx starts as garbage (kernels.h) */
void K(unary_backward)(qkv_unop op, int64_t n, const real *x, const real *y, const real *d, const real *dy,
                       real *dx, int zero) {
    QKV_ASSERT(n >= 0 && (unsigned)op < QKV_UN_COUNT && dy && dx, "unary_backward: n >= 0, an op of qkv_unop");
    unary_job j = {.op = op, .x = x, .y = y, .d = d, .dy = dy, .out = dx, .zero = zero};
    qkv__parallel_for(n, QKV_GRAIN, unary_backward_range, &j);
}

/* rows [r0, r1) of the epilogue: y = f(y + b), d = f'(y + b) */
typedef struct { qkv_unop op; int64_t n; const real *b; real *y, *d; } bias_act_job;

QKV_VECTOR_CLONES
static void bias_act_range(void *p, int64_t r0, int64_t r1) {
    const bias_act_job *j = p;
    const int64_t n = j->n;
    const real *b = j->b;
    for (int64_t r = r0; r < r1; r++) {
        real *y = j->y + r * n;
        if (b)
            for (int64_t k = 0; k < n; k++) y[k] += b[k];
        if (!j->d) { /* no backward to come: f alone (the unary op's formulas without d) */
            real dd;
            switch (j->op) {
            case QKV_UN_RELU: for (int64_t k = 0; k < n; k++) y[k] = y[k] > 0 ? y[k] : 0; break;
            case QKV_UN_GELU_TANH: for (int64_t k = 0; k < n; k++) y[k] = gelu_tanh_d(y[k], &dd); break;
            default:
#if QKV_KERNEL_F64
                for (int64_t k = 0; k < n; k++) y[k] = y[k] * ((real)0.5 * (1 + erf(y[k] * (real)INV_SQRT_2)));
#else
                for (int64_t k = 0; k < n; k++) y[k] = qkv_gelu_fast(y[k], &dd);
#endif
                break;
            }
            continue;
        }
        real *d = j->d + r * n;
        switch (j->op) {
        case QKV_UN_RELU:
            for (int64_t k = 0; k < n; k++) {
                d[k] = y[k] > 0 ? 1 : 0;
                y[k] = y[k] > 0 ? y[k] : 0;
            }
            break;
        case QKV_UN_GELU_TANH: for (int64_t k = 0; k < n; k++) y[k] = gelu_tanh_d(y[k], &d[k]); break;
        default: for (int64_t k = 0; k < n; k++) y[k] = gelu_d(y[k], &d[k]); break; /* GELU */
        }
    }
}

/* the epilogue of a linear, in place over its (rows,n) output y: y = f(y + b) and d = f'(y + b)
 * (d NULL: f alone), for f = ReLU (d: 1 or 0), GELU or its tanh form; b (n) or NULL */
void K(bias_act)(qkv_unop op, int64_t rows, int64_t n, const real *b, real *y, real *d) {
    QKV_ASSERT(rows >= 0 && n >= 1 && y, "bias_act: rows >= 0, n >= 1");
    bias_act_job j = {op, n, b, y, d};
    qkv__parallel_for(rows, qkv_row_grain(n), bias_act_range, &j);
}
