/* A differentiable op defined outside the library: SiLU ("swish"), checked by gradcheck.
 *
 *   y = x s(x),  s(x) = 1 / (1 + exp(-x))
 *   dy/dx = s(x) + x s(x) (1 - s(x))          (product rule, s' = s (1 - s))
 *
 * qkv_custom records the op on the tape like a built-in one; the backward callback is given
 * dL/dy and must ADD dL/dx into din[0]. The op is used in a small layer, silu(x W), whose
 * gradients with respect to x and W are compared with central differences in F64.
 *
 *   usage: custom_op [--wrong]
 * Without a flag: exit 0 when the gradient passes the check. With --wrong the backward
 * drops the x s (1 - s) term on purpose: exit 0 when the check catches it, 1 if it does not. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <qkv/qkv.h>

typedef struct silu_opts { bool wrong; } silu_opts;

/* s(x) = 1 / (1 + e^-x), in double for either dtype */
static double sig(double x) { return 1.0 / (1.0 + exp(-x)); }

/* forward callback: out[i] = x[i] s(x[i]); out is already allocated with x's dtype and shape */
static int silu_forward(const qkv_tensor *const *in, int n, qkv_tensor *out, void *user) {
    (void)n;
    (void)user;
    const qkv_tensor *x = in[0];
    if (x->dtype == QKV_F64) {
        const double *xd = x->data;
        double *yd = out->data;
        for (int64_t i = 0; i < x->numel; i++) yd[i] = xd[i] * sig(xd[i]);
    } else { /* F32: computed in double, rounded once */
        const float *xd = x->data;
        float *yd = out->data;
        for (int64_t i = 0; i < x->numel; i++) yd[i] = (float)(xd[i] * sig(xd[i]));
    }
    return 0;
}

/* dL/dy at element i times dy/dx there (or, with --wrong, times s(x) alone) */
static double silu_grad(const silu_opts *o, double x, double dy) {
    double s = sig(x);
    return dy * (o->wrong ? s : s + x * s * (1 - s));
}

/* backward callback: din[0][i] += dout[i] dy/dx(x[i]); din[0] is NULL when x needs no gradient */
static int silu_backward(const qkv_tensor *const *in, int n, const qkv_tensor *out,
                         const void *dout, void *const *din, void *user) {
    (void)n;
    (void)out;
    const qkv_tensor *x = in[0];
    if (!din[0]) return 0;
    if (x->dtype == QKV_F64) {
        const double *xd = x->data, *gy = dout;
        double *gx = din[0];
        for (int64_t i = 0; i < x->numel; i++) gx[i] += silu_grad(user, xd[i], gy[i]);
    } else {
        const float *xd = x->data, *gy = dout;
        float *gx = din[0];
        for (int64_t i = 0; i < x->numel; i++) gx[i] += (float)silu_grad(user, xd[i], gy[i]);
    }
    return 0;
}

/* y = silu(x), same shape as x; NULL in, NULL out, like the built-in ops */
static qkv_tensor *silu(qkv_ctx *ctx, qkv_tensor *x, silu_opts *o) {
    if (!x) return NULL;
    return qkv_custom(ctx, "silu", &x, 1, x->ndim, x->shape, silu_forward, silu_backward, o);
}

/* the function under test: in[0] = x (3,4), in[1] = W (4,5) -> silu(x W): (3,5) */
static qkv_tensor *layer(qkv_ctx *ctx, qkv_tensor *const *in, int n, void *user) {
    (void)n;
    return silu(ctx, qkv_matmul(ctx, in[0], in[1], false, false), user);
}

int main(int argc, char **argv) {
    silu_opts opts = {.wrong = argc > 1 && !strcmp(argv[1], "--wrong")};
    if (argc > 1 && !opts.wrong) { fprintf(stderr, "usage: custom_op [--wrong]\n"); return 2; }
    qkv_ctx *ctx = qkv_ctx_new();
    qkv_tensor *in[2] = {qkv_tensor_zeros(QKV_F64, 2, (const int64_t[]){3, 4}),
                         qkv_tensor_zeros(QKV_F64, 2, (const int64_t[]){4, 5})};
    if (!ctx || !in[0] || !in[1] || qkv_tensor_require_grad(in[0]) || qkv_tensor_require_grad(in[1])) {
        fprintf(stderr, "custom_op: out of memory\n");
        return 1;
    }
    /* N(0,1) inputs put x W over roughly [-3, 3], where SiLU is far from linear */
    qkv_rng r;
    qkv_rng_seed(&r, 42);
    qkv_tensor_fill_normal(in[0], &r, 0, 1);
    qkv_tensor_fill_normal(in[1], &r, 0, 1);

    /* gradcheck needs F64: at eps = 1e-6 a float32 difference quotient would be all rounding */
    qkv_gradcheck_result res;
    qkv_err err;
    int rc = qkv_gradcheck(ctx, layer, in, 2, &opts, NULL, &res, &err);
    if (rc < 0) {
        fprintf(stderr, "custom_op: %s\n", err.msg);
    } else {
        printf("gradcheck silu(x W)%s: %lld elements, %lld fail, max |analytic - numeric| %.3g "
               "(max excess %.3g, pass <= 1)\n", opts.wrong ? " with the wrong backward" : "",
               (long long)res.checked, (long long)res.failed, res.max_abs_err, res.max_excess);
        if (rc == 1)
            printf("  worst: input %d [%lld]: analytic %.6f, numeric %.6f\n", res.worst_input,
                   (long long)res.worst_index, res.worst_analytic, res.worst_numeric);
    }

    int status;
    if (opts.wrong) { /* the point of --wrong: the check must fail */
        status = rc == 1 ? 0 : 1;
        printf("%s\n", status ? "NOT CAUGHT: the wrong backward passed" : "caught: the check rejects it");
    } else { /* the F32 callbacks: the same function on inputs rounded to float, against F64 */
        double out_rel = 0, grad_rel = 0;
        int rc32 = qkv_gradcheck_f32_vs_f64(ctx, layer, in, 2, &opts, 1, &out_rel, &grad_rel, &err);
        if (rc32) fprintf(stderr, "custom_op: %s\n", err.msg);
        else printf("F32 vs F64: output differs by %.2g, gradients by %.2g (relative)\n", out_rel, grad_rel);
        /* float32 keeps ~7 digits; 1e-5 relative leaves room for the sums inside x W */
        status = rc != 0 || rc32 != 0 || !(out_rel < 1e-5 && grad_rel < 1e-5);
        printf("%s\n", status ? "FAILED" : "ok");
    }
    qkv_tensor_free(in[0]);
    qkv_tensor_free(in[1]);
    qkv_ctx_free(ctx);
    return status;
}
