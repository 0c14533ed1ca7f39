/* Optimizers against PyTorch: 20 steps of SGD, Adam and AdamW (with momentum, L2 and
 * decoupled weight decay, clipping and a warmup + cosine schedule) on a committed fixture,
 * parameters within 1e-5 relative. Plus the schedule's shape and clipping on its own. */
#include <check.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/safetensors.h"
#include "optim/optim.h"
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
    char path[128], err[256];
    snprintf(path, sizeof path, "fixtures/optim_%s.safetensors", FIX[_i]);
    qkv_safetensors *st;
    ck_assert_msg(qkv_st_read(path, &st, err, sizeof err) == 0, "%s", err);
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

Suite *optim_suite(void) {
    Suite *s = suite_create("optim");
    TCase *tc = tcase_create("optim");
    tcase_add_loop_test(tc, test_optimizer_matches_pytorch, 0, (int)(sizeof FIX / sizeof FIX[0]));
    tcase_add_test(tc, test_schedule_shape);
    tcase_add_test(tc, test_clip_grad_norm);
    suite_add_tcase(s, tc);
    return s;
}
