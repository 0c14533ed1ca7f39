/* Gradient checks: analytic gradients from the tape against central finite differences.
 *
 * The bar is PyTorch gradcheck's: in double precision, eps = 1e-6, and for every checked
 * element |analytic - numeric| <= atol + rtol |numeric| with atol = 1e-5, rtol = 1e-3. */
#ifndef QKV_GRADCHECK_H
#define QKV_GRADCHECK_H

#include "qkv_api.h"

#include "autograd/ctx.h"

/* Builds the function under test from `inputs` (all of one float dtype) and returns its
 * output. A non-scalar output is reduced to a scalar with fixed random weights, so every
 * output element takes part. */
typedef qkv_tensor *(*qkv_gradcheck_fn)(qkv_ctx *ctx, qkv_tensor *const *inputs, int n, void *user);

/* per-input statistics, when the caller asks for them */
typedef struct qkv_gradcheck_stat {
    int64_t checked, failed;
    double max_abs_err, max_excess;
} qkv_gradcheck_stat;

typedef struct qkv_gradcheck_opts {
    double eps, atol, rtol;   /* 1e-6, 1e-5, 1e-3 when zero */
    int64_t max_checks;       /* per input: check at most this many elements, a seeded sample (0 = all) */
    int64_t check_all_below;  /* with max_checks: inputs smaller than this are checked whole */
    uint64_t seed;            /* for the sample and the output weights */
    qkv_gradcheck_stat *stats; /* NULL, or n entries filled per input */
} qkv_gradcheck_opts;

typedef struct qkv_gradcheck_result {
    int64_t checked, failed;
    double max_abs_err;       /* largest |analytic - numeric| */
    double max_excess;        /* largest |a - n| / (atol + rtol |n|); a pass keeps it <= 1 */
    int worst_input;          /* where max_excess occurred */
    int64_t worst_index;
    double worst_analytic, worst_numeric;
} qkv_gradcheck_result;

/* Check d f / d inputs[i] for every input that requires grad (inputs must be F64 and
 * standalone, not arena tensors). 0 when every element passes, 1 when some fail,
 * -1 when f failed (e says why: f's context error, QKV_ERR_FAIL). Resets ctx between evaluations. */
QKV_API int qkv_gradcheck(qkv_ctx *ctx, qkv_gradcheck_fn f, qkv_tensor *const *inputs, int n, void *user,
                          const qkv_gradcheck_opts *opts, qkv_gradcheck_result *res, qkv_err *e);

/* Run f once in F64 and once with the inputs rounded to F32; report the largest difference of
 * the (weighted scalar) output and of every input gradient, each relative to max(1, |F64 value|)
 * over that tensor. 0 on success (differences in *out_rel, *grad_rel), -1 with e when f failed. */
QKV_API int qkv_gradcheck_f32_vs_f64(qkv_ctx *ctx, qkv_gradcheck_fn f, qkv_tensor *const *inputs, int n,
                                     void *user, uint64_t seed, double *out_rel, double *grad_rel, qkv_err *e);

#endif
