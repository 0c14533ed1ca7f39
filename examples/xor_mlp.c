/* XOR with a 2 -> 8 -> 2 MLP, written directly against the tape.
 *
 *   h = tanh(X W1 + b1)        X: (4,2), W1: (2,8), b1: (8)   -> h: (4,8)
 *   logits = h W2 + b2         W2: (8,2), b2: (2)             -> logits: (4,2)
 *   loss = mean_i -log softmax(logits_i)[y_i]                 (cross-entropy, 2 classes)
 *
 * No model or layer modules: just tensors, ops, qkv_backward, and Adam over the flat
 * parameter buffer that qkv_params provides. Exit 0 only if all four points are right. */
#include <stdio.h>

#include <qkv/qkv.h>

#define STEPS 300
#define LOG_EVERY 50

typedef struct mlp { qkv_params p; qkv_tensor *w1, *b1, *w2, *b2; } mlp;

/* the four XOR points and their labels: y = x0 xor x1 */
static const float XS[4][2] = {{0, 0}, {0, 1}, {1, 0}, {1, 1}};
static const int32_t YS[4] = {0, 1, 1, 0};

/* declare W1 (2,8), b1 (8), W2 (8,2), b2 (2) in one F32 store and draw their initial values */
static int mlp_init(mlp *m, uint64_t seed) {
    qkv_params_init(&m->p, QKV_F32);
    /* U(-1, 1) weights: large enough that the 8 tanh units start out different from each other */
    m->w1 = qkv_params_add(&m->p, "w1", 2, (const int64_t[]){2, 8}, QKV_INIT_UNIFORM, 1.0);
    m->b1 = qkv_params_add(&m->p, "b1", 1, (const int64_t[]){8}, QKV_INIT_ZEROS, 0);
    m->w2 = qkv_params_add(&m->p, "w2", 2, (const int64_t[]){8, 2}, QKV_INIT_UNIFORM, 1.0);
    m->b2 = qkv_params_add(&m->p, "b2", 1, (const int64_t[]){2}, QKV_INIT_ZEROS, 0);
    if (!m->w1 || !m->b1 || !m->w2 || !m->b2 || qkv_params_finalize(&m->p)) return -1;
    qkv_params_init_values(&m->p, seed);
    return 0;
}

/* x: (4,2) -> logits (4,2); the bias adds broadcast over the 4 rows (trailing-aligned) */
static qkv_tensor *mlp_forward(qkv_ctx *ctx, const mlp *m, qkv_tensor *x) {
    qkv_tensor *h = qkv_tanh(ctx, qkv_add(ctx, qkv_matmul(ctx, x, m->w1, false, false), m->b1));
    return qkv_add(ctx, qkv_matmul(ctx, h, m->w2, false, false), m->b2);
}

int main(void) {
    mlp m;
    qkv_ctx *ctx = qkv_ctx_new();
    qkv_optim opt;
    qkv_optim_config oc = qkv_optim_config_default(); /* Adam with PyTorch's betas and eps */
    oc.lr = 0.05; /* four points, no noise: a large step is safe and fast */
    if (!ctx || mlp_init(&m, 1) || qkv_optim_init(&opt, &oc, m.p.numel)) {
        fprintf(stderr, "xor_mlp: out of memory\n");
        return 1;
    }
    int rc = 0;
    for (int step = 1; step <= STEPS && !rc; step++) {
        /* the inputs live in the arena, so they must be re-made after every reset */
        qkv_ctx_reset(ctx);
        qkv_tensor *x = qkv_ctx_tensor_from(ctx, QKV_F32, 2, (const int64_t[]){4, 2}, XS);
        qkv_tensor *y = qkv_ctx_tensor_from(ctx, QKV_I32, 1, (const int64_t[]){4}, YS);
        qkv_tensor *loss = qkv_cross_entropy(ctx, mlp_forward(ctx, &m, x), y, -100);
        /* ops pass NULL along, so one check after backward covers the whole forward */
        if (qkv_backward(ctx, loss)) {
            fprintf(stderr, "xor_mlp: step %d: %s\n", step, qkv_ctx_error(ctx));
            rc = 1;
            break;
        }
        if (step == 1 || step % LOG_EVERY == 0) printf("step %4d  loss %.4f\n", step, qkv_tensor_get(loss, 0));
        /* backward ACCUMULATES into the flat grad buffer: step, then zero for the next pass */
        qkv_optim_step(&opt, m.p.data, m.p.grad, oc.lr);
        qkv_params_zero_grad(&m.p);
    }

    /* predictions without recording: p(y=1) = softmax(logits)[1] */
    int right = 0;
    if (!rc) {
        qkv_ctx_reset(ctx);
        qkv_ctx_set_grad_enabled(ctx, false);
        qkv_tensor *x = qkv_ctx_tensor_from(ctx, QKV_F32, 2, (const int64_t[]){4, 2}, XS);
        qkv_tensor *p = qkv_softmax(ctx, mlp_forward(ctx, &m, x));
        if (!p) { fprintf(stderr, "xor_mlp: %s\n", qkv_ctx_error(ctx)); rc = 1; }
        for (int i = 0; p && i < 4; i++) {
            double p1 = qkv_tensor_get(p, 2 * i + 1);
            int pred = p1 > 0.5;
            right += pred == YS[i];
            printf("%g xor %g = %d  (p1 %.3f)%s\n", XS[i][0], XS[i][1], pred, p1,
                   pred == YS[i] ? "" : "  WRONG");
        }
        printf("%d/4 right\n", right);
    }
    qkv_optim_free(&opt);
    qkv_params_free(&m.p);
    qkv_ctx_free(ctx);
    return rc || right != 4;
}
