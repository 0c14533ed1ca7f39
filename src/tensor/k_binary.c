/* Elementwise add, sub, mul, div with broadcasting, and scalar affine maps. */
#include "tensor/kernel_prelude.h"
#include "tensor/check.h"

static inline real apply(qkv_binop op, real a, real b) {
    switch (op) {
    case QKV_BIN_ADD: return a + b;
    case QKV_BIN_SUB: return a - b;
    case QKV_BIN_MUL: return a * b;
    default: return a / b;
    }
}

/* y = a (op) b, broadcast by bc */
void K(binary)(qkv_binop op, const qkv_bcast *bc, const real *a, const real *b, real *y) {
    QKV_ASSERT(bc && a && b && y && (unsigned)op <= QKV_BIN_DIV, "binary: operands, an op of qkv_binop");
    const int64_t *n = bc->n, *sa = bc->sa, *sb = bc->sb;
    for (int64_t i0 = 0; i0 < n[0]; i0++)
        for (int64_t i1 = 0; i1 < n[1]; i1++)
            for (int64_t i2 = 0; i2 < n[2]; i2++) {
                const real *pa = a + i0 * sa[0] + i1 * sa[1] + i2 * sa[2];
                const real *pb = b + i0 * sb[0] + i1 * sb[1] + i2 * sb[2];
                int64_t s3a = sa[3], s3b = sb[3];
                if (s3a == 1 && s3b == 1) /* the common same-shape row: vectorisable */
                    for (int64_t j = 0; j < n[3]; j++) y[j] = apply(op, pa[j], pb[j]);
                else
                    for (int64_t j = 0; j < n[3]; j++) y[j] = apply(op, pa[j * s3a], pb[j * s3b]);
                y += n[3];
            }
}

/* da += dy * dy/da, db += dy * dy/db, summed over broadcast dims; da or db may be NULL */
void K(binary_backward)(qkv_binop op, const qkv_bcast *bc, const real *a, const real *b,
                        const real *dy, real *da, real *db) {
    const int64_t *n = bc->n, *sa = bc->sa, *sb = bc->sb;
    for (int64_t i0 = 0; i0 < n[0]; i0++)
        for (int64_t i1 = 0; i1 < n[1]; i1++)
            for (int64_t i2 = 0; i2 < n[2]; i2++) {
                int64_t oa = i0 * sa[0] + i1 * sa[1] + i2 * sa[2];
                int64_t ob = i0 * sb[0] + i1 * sb[1] + i2 * sb[2];
                for (int64_t j = 0; j < n[3]; j++) {
                    int64_t ia = oa + j * sa[3], ib = ob + j * sb[3];
                    real g = dy[j];
                    switch (op) {
                    case QKV_BIN_ADD:
                        if (da) da[ia] += g;
                        if (db) db[ib] += g;
                        break;
                    case QKV_BIN_SUB:
                        if (da) da[ia] += g;
                        if (db) db[ib] -= g;
                        break;
                    case QKV_BIN_MUL:
                        if (da) da[ia] += g * b[ib];
                        if (db) db[ib] += g * a[ia];
                        break;
                    case QKV_BIN_DIV: /* y = a / b: dy/da = 1/b, dy/db = -a/b^2 */
                        if (da) da[ia] += g / b[ib];
                        if (db) db[ib] -= g * a[ia] / (b[ib] * b[ib]);
                        break;
                    }
                }
                dy += n[3];
            }
}

QKV_VECTOR_CLONES
static void binary_flat_serial(qkv_binop op, int64_t n, const real *a, const real *b, real *y) {
    switch (op) { /* the switch is outside the loops so each one vectorises */
    case QKV_BIN_ADD: for (int64_t i = 0; i < n; i++) y[i] = a[i] + b[i]; break;
    case QKV_BIN_SUB: for (int64_t i = 0; i < n; i++) y[i] = a[i] - b[i]; break;
    case QKV_BIN_MUL: for (int64_t i = 0; i < n; i++) y[i] = a[i] * b[i]; break;
    default: for (int64_t i = 0; i < n; i++) y[i] = a[i] / b[i]; break;
    }
}

/* zero: 1 = da, 2 = db are new (assigned, not added to); when da is db, da is written first */
QKV_VECTOR_CLONES
static void binary_flat_backward_serial(qkv_binop op, int64_t n, const real *a, const real *b,
                                        const real *dy, real *da, real *db, int zero) {
    int za = zero & 1, zb = zero & 2;
    switch (op) {
    case QKV_BIN_ADD:
    case QKV_BIN_SUB: /* x - y is x + (-y) exactly */
        if (da) for (int64_t i = 0; i < n; i++) QKV_PUT(da[i], za, dy[i]);
        if (db && op == QKV_BIN_ADD) for (int64_t i = 0; i < n; i++) QKV_PUT(db[i], zb, dy[i]);
        if (db && op == QKV_BIN_SUB) for (int64_t i = 0; i < n; i++) QKV_PUT(db[i], zb, -dy[i]);
        break;
    case QKV_BIN_MUL:
        if (da) for (int64_t i = 0; i < n; i++) QKV_PUT(da[i], za, dy[i] * b[i]);
        if (db) for (int64_t i = 0; i < n; i++) QKV_PUT(db[i], zb, dy[i] * a[i]);
        break;
    default:
        if (da) for (int64_t i = 0; i < n; i++) QKV_PUT(da[i], za, dy[i] / b[i]);
        if (db) for (int64_t i = 0; i < n; i++) QKV_PUT(db[i], zb, -(dy[i] * a[i] / (b[i] * b[i])));
        break;
    }
}

QKV_VECTOR_CLONES
static void accumulate_zero_serial(int64_t n, real *acc, real *g, int first) {
    if (first)
        for (int64_t i = 0; i < n; i++) {
            acc[i] = g[i];
            g[i] = 0;
        }
    else
        for (int64_t i = 0; i < n; i++) {
            acc[i] += g[i];
            g[i] = 0;
        }
}

QKV_VECTOR_CLONES
static void affine_serial(int64_t n, const real *x, double alpha, double beta, real *y) {
    real a = (real)alpha, b = (real)beta;
    for (int64_t i = 0; i < n; i++) y[i] = a * x[i] + b;
}

QKV_VECTOR_CLONES
static void axpy_serial(int64_t n, double alpha, const real *x, real *y) {
    real a = (real)alpha;
    if (a == 1)
        for (int64_t i = 0; i < n; i++) y[i] += x[i];
    else
        for (int64_t i = 0; i < n; i++) y[i] += a * x[i];
}

/* the public flat kernels: ranges of elements on qkv's threads */
typedef struct { qkv_binop op; const real *a, *b, *dy; real *y, *da, *db; double alpha, beta; int zero; } flat_job;

static void binary_flat_range(void *p, int64_t s, int64_t e) {
    flat_job *j = p;
    binary_flat_serial(j->op, e - s, j->a + s, j->b + s, j->y + s);
}
/* y = a (op) b for same-shape a, b (n elements): the common case, one flat loop per op */
void K(binary_flat)(qkv_binop op, int64_t n, const real *a, const real *b, real *y) {
    QKV_ASSERT(n >= 0 && (unsigned)op <= QKV_BIN_DIV, "binary_flat: n >= 0, an op of qkv_binop");
    flat_job j = {.op = op, .a = a, .b = b, .y = y};
    qkv__parallel_for(n, QKV_GRAIN, binary_flat_range, &j);
}

static void binary_flat_backward_range(void *p, int64_t s, int64_t e) {
    flat_job *j = p;
    binary_flat_backward_serial(j->op, e - s, j->a + s, j->b + s, j->dy + s, j->da ? j->da + s : NULL,
                                j->db ? j->db + s : NULL, j->zero);
}
/* da += dy dy/da, db += dy dy/db for same-shape a, b; da or db may be NULL;
 * zero: 1 = da, 2 = db start as garbage (kernels.h) */
void K(binary_flat_backward)(qkv_binop op, int64_t n, const real *a, const real *b, const real *dy, real *da,
                             real *db, int zero) {
    flat_job j = {.op = op, .a = a, .b = b, .dy = dy, .da = da, .db = db, .zero = zero};
    qkv__parallel_for(n, QKV_GRAIN, binary_flat_backward_range, &j);
}

static void accumulate_zero_range(void *p, int64_t s, int64_t e) {
    flat_job *j = p;
    accumulate_zero_serial(e - s, j->y + s, j->da + s, j->zero);
}
/* a gradient taken into a running sum and left zero for the next one: acc = g (first) or
 * acc += g, then g = 0, in one pass */
void K(accumulate_zero)(int64_t n, real *acc, real *g, int first) {
    QKV_ASSERT(n >= 0 && acc && g && acc != g, "accumulate_zero: n >= 0, two buffers");
    flat_job j = {.y = acc, .da = g, .zero = first};
    qkv__parallel_for(n, QKV_GRAIN, accumulate_zero_range, &j);
}

static void affine_range(void *p, int64_t s, int64_t e) {
    flat_job *j = p;
    affine_serial(e - s, j->a + s, j->alpha, j->beta, j->y + s);
}
/* y = alpha x + beta  (n elements) */
void K(affine)(int64_t n, const real *x, double alpha, double beta, real *y) {
    flat_job j = {.a = x, .y = y, .alpha = alpha, .beta = beta};
    qkv__parallel_for(n, QKV_GRAIN, affine_range, &j);
}

static void axpy_range(void *p, int64_t s, int64_t e) {
    flat_job *j = p;
    axpy_serial(e - s, j->alpha, j->a + s, j->y + s);
}
/* y += alpha x  (n elements) */
void K(axpy)(int64_t n, double alpha, const real *x, real *y) {
    flat_job j = {.a = x, .y = y, .alpha = alpha};
    qkv__parallel_for(n, QKV_GRAIN, axpy_range, &j);
}
