/* Optimizers against PyTorch: 20 steps of SGD, Adam and AdamW (with momentum, L2 and
 * decoupled weight decay, clipping and a warmup + cosine schedule) on a committed fixture,
 * parameters within 1e-5 relative. Plus the schedule's shape and clipping on its own, and the
 * training loop's fused passes over the flat buffers against the passes they replace. */
#include <check.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/safetensors.h"
#include "optim/optim_internal.h"
#include "tensor/kernels.h"
#include "suites.h"

static const char *const FIX[] = {"sgd", "sgd_momentum_wd", "adam", "adam_l2", "adamw",
                                  "adamw_clip_cosine"};

static double meta_num(const qkv_safetensors *st, const char *key, double dflt) {
    const char *v = qkv_st_meta(st, key);
    if (!v) return dflt;
    cJSON *j = cJSON_Parse(v);
    double d = dflt;
    if (cJSON_IsNumber(j)) d = j->valuedouble;
    cJSON_Delete(j);
    return d;
}

static int meta_name(const qkv_safetensors *st, const char *key, const char *const *names, int n) {
    const char *v = qkv_st_meta(st, key);
    for (int i = 0; v && i < n; i++) {
        char q[64];
        snprintf(q, sizeof q, "\"%s\"", names[i]);
        if (!strcmp(v, q)) return i;
    }
    return 0;
}

static const float *entry(const qkv_safetensors *st, const char *name, int64_t *n) {
    const qkv_st_entry *e = qkv_st_find(st, name);
    ck_assert_msg(e != NULL, "fixture lacks %s", name);
    *n = e->shape[0];
    return qkv_st_data(st, e);
}

START_TEST(test_optimizer_matches_pytorch) {
    char path[128];
    qkv_err err;
    snprintf(path, sizeof path, "fixtures/optim_%s.safetensors", FIX[_i]);
    qkv_safetensors *st;
    ck_assert_msg(qkv_st_read(path, &st, &err) == 0, "%s", err.msg);
    qkv_optim_config c = {
        .kind = (qkv_optim_kind)meta_name(st, "name", QKV_OPTIM_NAMES, QKV_OPT_COUNT),
        .lr = meta_num(st, "lr", 0), .momentum = meta_num(st, "momentum", 0),
        .beta1 = meta_num(st, "beta1", 0.9), .beta2 = meta_num(st, "beta2", 0.999),
        .eps = meta_num(st, "eps", 1e-8), .weight_decay = meta_num(st, "weight_decay", 0),
        .clip = meta_num(st, "clip", 0),
        .schedule = (qkv_schedule_kind)meta_name(st, "schedule", QKV_SCHEDULE_NAMES, QKV_SCHED_COUNT),
        .warmup = (int)meta_num(st, "warmup", 0), .min_lr = meta_num(st, "min_lr", 0)};
    int steps = atoi(qkv_st_meta(st, "steps"));
    int64_t n, n2;
    const float *p0 = entry(st, "p0", &n), *tg = entry(st, "target", &n2), *coef = entry(st, "coef", &n2);
    const float *p20 = entry(st, "p20", &n2);
    float *p = malloc((size_t)n * sizeof *p), *g = malloc((size_t)n * sizeof *g);
    memcpy(p, p0, (size_t)n * sizeof *p);
    qkv_optim o;
    ck_assert_int_eq(qkv_optim_init(&o, &c, n), 0);
    for (int s = 0; s < steps; s++) {
        /* d/dp [coef (p - t)^2 + 0.1 p^4] */
        for (int64_t i = 0; i < n; i++) g[i] = coef[i] * (2 * (p[i] - tg[i])) + 0.1f * (4 * (p[i] * p[i] * p[i]));
        if (c.clip > 0) qkv_clip_grad_norm(g, n, c.clip);
        qkv_optim_step(&o, p, g, qkv_schedule_lr(&c, s, steps));
    }
    double worst = 0;
    for (int64_t i = 0; i < n; i++) {
        double d = fabs((double)p[i] - p20[i]);
        ck_assert_msg(d <= 1e-5 * fabs(p20[i]) + 1e-7, "%s: p[%lld] = %.9g, PyTorch %.9g", FIX[_i],
                      (long long)i, p[i], p20[i]);
        worst = fmax(worst, d / fmax(fabs(p20[i]), 1e-2));
        ck_assert(fabs((double)p20[i] - p0[i]) > 1e-4 || fabs(p20[i]) < 1e-3); /* it moved */
    }
    if (getenv("QKV_TEST_VERBOSE")) fprintf(stderr, "optim %-20s worst relative %.3g\n", FIX[_i], worst);
    qkv_optim_free(&o);
    free(p); free(g);
    qkv_st_free(st);
}
END_TEST

START_TEST(test_schedule_shape) {
    qkv_optim_config c = {.lr = 1.0, .warmup = 10, .min_lr = 0.1, .schedule = QKV_SCHED_COSINE};
    ck_assert_double_eq_tol(qkv_schedule_lr(&c, 0, 110), 0.1, 1e-12);   /* warmup starts at lr/warmup */
    ck_assert_double_eq_tol(qkv_schedule_lr(&c, 9, 110), 1.0, 1e-12);   /* and ends at lr */
    ck_assert_double_eq_tol(qkv_schedule_lr(&c, 10, 110), 1.0, 1e-12);  /* decay starts at lr */
    ck_assert_double_eq_tol(qkv_schedule_lr(&c, 109, 110), 0.1, 1e-12); /* ends at min_lr */
    /* step 59 is 49/99 of the way from step 10 to step 109 */
    double t = 49.0 / 99.0;
    ck_assert_double_eq_tol(qkv_schedule_lr(&c, 59, 110), 0.1 + 0.9 * 0.5 * (1 + cos(3.141592653589793 * t)), 1e-12);
    c.schedule = QKV_SCHED_LINEAR;
    ck_assert_double_eq_tol(qkv_schedule_lr(&c, 59, 110), 1.0 - 0.9 * t, 1e-12);
    c.schedule = QKV_SCHED_CONSTANT;
    ck_assert_double_eq_tol(qkv_schedule_lr(&c, 100, 110), 1.0, 1e-12);
}
END_TEST

START_TEST(test_clip_grad_norm) {
    float g[3] = {3, 4, 0};
    ck_assert_double_eq_tol(qkv_clip_grad_norm(g, 3, 1.0), 5.0, 1e-9);
    ck_assert_double_eq_tol(qkv_grad_norm(g, 3), 1.0, 1e-5);
    ck_assert_double_eq_tol(g[0], 0.6, 1e-5);
    float h[2] = {0.3f, 0.4f};
    qkv_clip_grad_norm(h, 2, 1.0); /* below the bound: untouched */
    ck_assert_float_eq(h[0], 0.3f);
}
END_TEST

/* n pseudo-random floats of both signs spread over a few decades */
static void fill_random(float *x, int64_t n, uint32_t seed) {
    for (int64_t i = 0; i < n; i++) {
        seed = seed * 1664525u + 1013904223u;
        x[i] = ((float)(int32_t)seed * 0x1p-31f) * (float)(1 << (seed >> 29));
    }
}

static int same_floats(const float *a, const float *b, int64_t n) { return memcmp(a, b, (size_t)n * sizeof *a) == 0; }

/* the gradient's norm in 16 fixed lanes: the serial double sum's value (1e-12 relative; they
 * round differently), the same bits twice, and a changed element seen */
START_TEST(test_grad_norm_lanes) {
    enum { N = 100003 }; /* not a multiple of 16: the tail too */
    static float g[N];
    fill_random(g, N, 7);
    for (int64_t n = 0; n <= N; n += n < 40 ? 1 : 49999) {
        double serial = 0;
        for (int64_t i = 0; i < n; i++) serial += (double)g[i] * g[i];
        serial = sqrt(serial);
        double a = qkv_grad_norm(g, n), b = qkv_grad_norm(g, n);
        ck_assert_msg(fabs(a - serial) <= 1e-12 * serial, "n = %lld: lanes %.17g, serial %.17g", (long long)n, a, serial);
        ck_assert(memcmp(&a, &b, sizeof a) == 0);
    }
    double before = qkv_grad_norm(g, N);
    g[N - 1] = 1e3f; /* in the tail */
    ck_assert(qkv_grad_norm(g, N) > before);
}
END_TEST

/* the optimizer's step that leaves g zero: the parameters and moments of qkv_optim_step, bit
 * for bit, for every kind, and g zero afterwards; a step that did not zero is caught */
START_TEST(test_step_zero_same_bits) {
    enum { N = 1029, STEPS = 4 };
    static float p1[N], p2[N], g1[N], g2[N];
    const qkv_optim_config cs[] = {
        {.kind = QKV_OPT_SGD, .lr = 0.1},
        {.kind = QKV_OPT_SGD, .lr = 0.1, .momentum = 0.9, .weight_decay = 0.01},
        {.kind = QKV_OPT_ADAM, .lr = 1e-3, .beta1 = 0.9, .beta2 = 0.999, .eps = 1e-8},
        {.kind = QKV_OPT_ADAM, .lr = 1e-3, .beta1 = 0.9, .beta2 = 0.999, .eps = 1e-8, .weight_decay = 0.1},
        {.kind = QKV_OPT_ADAMW, .lr = 1e-3, .beta1 = 0.9, .beta2 = 0.98, .eps = 1e-6, .weight_decay = 0.1},
        {.kind = QKV_OPT_ADAMW, .lr = 1e-3, .beta1 = 0.9, .beta2 = 0.98, .eps = 1e-6},
    };
    static const float zeros[N];
    for (size_t k = 0; k < sizeof cs / sizeof cs[0]; k++) {
        qkv_optim a, b;
        ck_assert_int_eq(qkv_optim_init(&a, &cs[k], N), 0);
        ck_assert_int_eq(qkv_optim_init(&b, &cs[k], N), 0);
        fill_random(p1, N, 11);
        memcpy(p2, p1, sizeof p1);
        for (int s = 0; s < STEPS; s++) {
            fill_random(g1, N, 100 + (uint32_t)s);
            memcpy(g2, g1, sizeof g1);
            qkv_optim_step(&a, p1, g1, cs[k].lr);
            qkv__optim_step_zero(&b, p2, g2, cs[k].lr);
            ck_assert_msg(same_floats(p1, p2, N), "optimizer %zu, step %d: parameters differ", k, s);
            ck_assert(!a.m || same_floats(a.m, b.m, N));
            ck_assert(!a.v || same_floats(a.v, b.v, N));
            ck_assert_msg(same_floats(g2, zeros, N), "optimizer %zu, step %d: g not zero", k, s);
        }
        ck_assert(!same_floats(g1, zeros, N)); /* the plain step leaves g: the check above can fail */
        qkv_optim_free(&a);
        qkv_optim_free(&b);
    }
}
END_TEST

/* acc = g, then acc += g with g left zero each time: the running sum of the plain adds, bit for
 * bit (the training loop's sum of micro-batch gradients), at sizes with vector tails */
START_TEST(test_accumulate_zero) {
    enum { N = 40007, PARTS = 5 };
    static float acc[N], ref[N], g[N], gs[PARTS][N];
    static const float zeros[N];
    for (int64_t n = 1; n <= N; n += n < 64 ? 7 : 19997) {
        for (int k = 0; k < PARTS; k++) fill_random(gs[k], n, 31 + (uint32_t)k);
        memcpy(ref, gs[0], (size_t)n * sizeof *ref);
        for (int k = 1; k < PARTS; k++) qkv__k_binary_flat_f32(QKV_BIN_ADD, n, ref, gs[k], ref);
        for (int k = 0; k < PARTS; k++) {
            memcpy(g, gs[k], (size_t)n * sizeof *g);
            qkv__k_accumulate_zero_f32(n, acc, g, k == 0);
            ck_assert_msg(same_floats(g, zeros, n), "n = %lld: g not zero after part %d", (long long)n, k);
        }
        ck_assert_msg(same_floats(acc, ref, n), "n = %lld: the sum differs from the plain adds'", (long long)n);
        /* the sum taken in another order differs: the comparison sees the order */
        if (n > 1000) {
            memcpy(ref, gs[PARTS - 1], (size_t)n * sizeof *ref);
            for (int k = PARTS - 2; k >= 0; k--) qkv__k_binary_flat_f32(QKV_BIN_ADD, n, ref, gs[k], ref);
            ck_assert(!same_floats(acc, ref, n));
        }
    }
}
END_TEST

Suite *optim_suite(void) {
    Suite *s = suite_create("optim");
    TCase *tc = tcase_create("optim");
    tcase_add_loop_test(tc, test_optimizer_matches_pytorch, 0, (int)(sizeof FIX / sizeof FIX[0]));
    tcase_add_test(tc, test_schedule_shape);
    tcase_add_test(tc, test_clip_grad_norm);
    tcase_add_test(tc, test_grad_norm_lanes);
    tcase_add_test(tc, test_step_zero_same_bits);
    tcase_add_test(tc, test_accumulate_zero);
    suite_add_tcase(s, tc);
    return s;
}
