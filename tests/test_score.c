/* The shape of a head's score (src/nn/score.c): the symmetry score and the negative share of the
 * symmetric part's eigenvalues, on hand-built matrices with known answers. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autograd/ctx.h"
#include "nn/model_config.h"
#include "nn/params.h"
#include "nn/score.h"
#include "suites.h"
#include "testutil.h"

#define D 6

START_TEST(score_symmetric_antisymmetric_identity) {
    double a[D * D], m[D * D];
    qkv_score_stats s;
    qkv_test_normals(a, D * D, 1);
    /* symmetric: 1 */
    for (int i = 0; i < D; i++)
        for (int j = 0; j < D; j++) m[i * D + j] = a[i * D + j] + a[j * D + i];
    ck_assert_int_eq(qkv_score_stats_of(m, D, &s), 0);
    ck_assert_double_eq_tol(s.symmetry, 1, 1e-12);
    ck_assert(s.negative_mass > 0 && s.negative_mass < 1); /* a random symmetric matrix is indefinite */
    /* antisymmetric: -1, and its symmetric part is 0 (no eigenvalue mass) */
    for (int i = 0; i < D; i++)
        for (int j = 0; j < D; j++) m[i * D + j] = a[i * D + j] - a[j * D + i];
    ck_assert_int_eq(qkv_score_stats_of(m, D, &s), 0);
    ck_assert_double_eq_tol(s.symmetry, -1, 1e-12);
    ck_assert(isnan(s.negative_mass));
    /* the identity (identity attention, and the start of qk_tied with init identity): 1, no
     * negative mass */
    for (int i = 0; i < D * D; i++) m[i] = i % (D + 1) == 0;
    ck_assert_int_eq(qkv_score_stats_of(m, D, &s), 0);
    ck_assert_double_eq_tol(s.symmetry, 1, 1e-15);
    ck_assert_double_eq_tol(s.negative_mass, 0, 1e-15);
    /* diag(1, -1, 2, -2, 3, -3): symmetric, half its mass negative */
    for (int i = 0; i < D * D; i++) m[i] = 0;
    for (int i = 0; i < D; i++) m[i * D + i] = (i % 2 ? -1 : 1) * (double)(i / 2 + 1);
    ck_assert_int_eq(qkv_score_stats_of(m, D, &s), 0);
    ck_assert_double_eq_tol(s.symmetry, 1, 1e-15);
    ck_assert_double_eq_tol(s.negative_mass, 0.5, 1e-12);
    /* zero: neither */
    for (int i = 0; i < D * D; i++) m[i] = 0;
    ck_assert_int_eq(qkv_score_stats_of(m, D, &s), 0);
    ck_assert(isnan(s.symmetry) && isnan(s.negative_mass));
    ck_assert_int_eq(qkv_score_stats_of(m, 0, &s), -1);
}
END_TEST

/* a tied W W^T is positive semi-definite; a general product W_q W_k^T is neither symmetric nor
 * antisymmetric, and S + t A moves the score from 1 towards -1 as (1 - t^2) / (1 + t^2) */
START_TEST(score_tied_general_and_mixed) {
    double wq[D * D], wk[D * D], m[D * D], s_[D * D], a_[D * D];
    qkv_score_stats s;
    qkv_test_normals(wq, D * D, 2);
    qkv_test_normals(wk, D * D, 3);
    for (int i = 0; i < D; i++) /* M = W W^T */
        for (int j = 0; j < D; j++) {
            double t = 0;
            for (int c = 0; c < D; c++) t += wq[i * D + c] * wq[j * D + c];
            m[i * D + j] = t;
        }
    ck_assert_int_eq(qkv_score_stats_of(m, D, &s), 0);
    ck_assert_double_eq_tol(s.symmetry, 1, 1e-12);
    ck_assert_double_eq_tol(s.negative_mass, 0, 1e-12);
    for (int i = 0; i < D; i++) /* M = W_q W_k^T */
        for (int j = 0; j < D; j++) {
            double t = 0;
            for (int c = 0; c < D; c++) t += wq[i * D + c] * wk[j * D + c];
            m[i * D + j] = t;
        }
    ck_assert_int_eq(qkv_score_stats_of(m, D, &s), 0);
    ck_assert(s.symmetry > -1 + 1e-3 && s.symmetry < 1 - 1e-3);
    /* S + t A with |S| = |A|: (1 - t^2) / (1 + t^2) */
    double ns = 0, na = 0;
    for (int i = 0; i < D; i++)
        for (int j = 0; j < D; j++) {
            s_[i * D + j] = wq[i * D + j] + wq[j * D + i];
            a_[i * D + j] = wk[i * D + j] - wk[j * D + i];
            ns += s_[i * D + j] * s_[i * D + j];
            na += a_[i * D + j] * a_[i * D + j];
        }
    double t = 0.5, k = sqrt(ns / na);
    for (int i = 0; i < D * D; i++) m[i] = s_[i] + t * k * a_[i];
    ck_assert_int_eq(qkv_score_stats_of(m, D, &s), 0);
    ck_assert_double_eq_tol(s.symmetry, (1 - t * t) / (1 + t * t), 1e-12);
}
END_TEST

/* The score matrix of every kind of head is the one the module scores with: with two keys and no
 * mask, log(w_i0 / w_i1) = scale (x_i^T M x_0 - x_i^T M x_1) for every head and query i */
typedef struct variant {
    const char *name;
    int qkv;
    bool query_proj, key_proj, role_scale, talking;
    int kv_heads, latent, qk_diag;
} variant;

START_TEST(score_matrix_is_the_modules) {
    const variant V[] = {
        {"full", QKV_ATTN_FULL, true, true, false, false, 0, 0, 0},
        {"shared", QKV_ATTN_SHARED, true, true, false, false, 0, 0, 0},
        {"shared role_scale", QKV_ATTN_SHARED, true, true, true, false, 0, 0, 0},
        {"identity", QKV_ATTN_IDENTITY, true, true, false, false, 0, 0, 0},
        {"qk_tied", QKV_ATTN_QK_TIED, true, true, false, false, 0, 0, 0},
        {"kv_tied", QKV_ATTN_KV_TIED, true, true, false, false, 0, 0, 0},
        {"head_shared", QKV_ATTN_HEAD_SHARED, true, true, false, false, 0, 0, 0},
        {"query_proj false", QKV_ATTN_FULL, false, true, false, false, 0, 0, 0},
        {"key_proj false", QKV_ATTN_FULL, true, false, false, false, 0, 0, 0},
        {"both false", QKV_ATTN_FULL, false, false, false, false, 0, 0, 0},
        {"kv_heads 1", QKV_ATTN_FULL, true, true, false, false, 1, 0, 0},
        {"kv_latent 3", QKV_ATTN_FULL, true, true, false, false, 0, 3, 0},
        {"talking_heads", QKV_ATTN_FULL, true, true, false, true, 0, 0, 0},
        {"qk_tied qk_diag alternating", QKV_ATTN_QK_TIED, true, true, false, false, 0, 0, QKV_QK_DIAG_ALTERNATING},
        {"qk_tied qk_diag positive", QKV_ATTN_QK_TIED, true, true, false, false, 0, 0, QKV_QK_DIAG_POSITIVE},
        {"shared qk_diag random", QKV_ATTN_SHARED, true, true, false, false, 0, 0, QKV_QK_DIAG_RANDOM},
    };
    enum { d = 8, H = 2, T = 2 };
    for (size_t v = 0; v < sizeof V / sizeof V[0]; v++) {
        qkv_params p;
        qkv_params_init(&p, QKV_F64);
        qkv_attention at;
        qkv_attn_config ac = qkv_model_config_default().attn;
        ac.qkv = (qkv_attn_qkv)V[v].qkv;
        ac.causal = false;
        ac.query_proj = V[v].query_proj;
        ac.key_proj = V[v].key_proj;
        ac.role_scale = V[v].role_scale;
        ac.talking_heads = V[v].talking;
        ac.kv_heads = V[v].kv_heads;
        ac.kv_latent = V[v].latent;
        ac.qk_diag = (qkv_qk_diag)V[v].qk_diag;
        qkv_err err;
        ck_assert_msg(qkv_attention_init(&at, &p, "a", d, H, &ac, &err) == 0, "%s: %s", V[v].name, err.msg);
        ck_assert_int_eq(qkv_params_finalize(&p), 0);
        qkv_params_init_values(&p, 7 + v);
        qkv_rng r;
        qkv_rng_seed(&r, 11);
        for (int i = 0; i < p.n; i++) /* role scales and head mixing away from their ones and identity */
            if (strstr(p.items[i]->name, "role_scale") || strstr(p.items[i]->name, "talking_heads.logits"))
                for (int64_t k = 0; k < p.items[i]->t.numel; k++)
                    ((double *)p.items[i]->t.data)[k] += 0.5 * qkv_rng_normal(&r);
        int64_t s[3] = {1, T, d};
        double xv[T * d];
        for (int i = 0; i < T * d; i++) xv[i] = qkv_rng_normal(&r);
        qkv_tensor *x = qkv_tensor_from_buffer(QKV_F64, 3, s, xv);
        qkv_ctx *ctx = qkv_ctx_new();
        qkv_attn_masks none = {0};
        ck_assert_ptr_nonnull(qkv_attention_forward(ctx, &at, x, &none));
        const qkv_tensor *w = at.last_att; /* (1,H,T,T) */
        int n = qkv_attention_score_dim(&at), hd = d / H;
        double scale = 1 / sqrt((double)hd), M[d * d];
        for (int h = 0; h < H; h++) {
            ck_assert_int_eq(qkv_attention_score_matrix(&at, h, 0, M), 0);
            if (V[v].qk_diag) { /* M = W_h D_h W_h^T at D's start: symmetric; negative directions once D has a sign */
                qkv_score_stats st;
                ck_assert_int_eq(qkv_score_stats_of(M, n, &st), 0);
                ck_assert_double_eq_tol(st.symmetry, 1, 1e-12);
                bool signed_d = false; /* D_h has a negative entry (random signs may give a head none) */
                for (int k = 0; k < hd; k++) signed_d |= qkv_tensor_get(at.qk_diag, h * hd + k) < 0;
                ck_assert(signed_d == (V[v].qk_diag == QKV_QK_DIAG_ALTERNATING) || V[v].qk_diag == QKV_QK_DIAG_RANDOM);
                if (!signed_d) ck_assert_double_le_tol(st.negative_mass, 0, 1e-12);
                else ck_assert_msg(st.negative_mass > 0.05, "%s head %d: negative share %g", V[v].name, h, st.negative_mass);
            }
            const double *xs[T];
            for (int t = 0; t < T; t++) xs[t] = xv + t * d + (n == d ? 0 : h * hd); /* head_shared: the slice */
            for (int i = 0; i < T; i++) {
                double sc[T];
                for (int j = 0; j < T; j++) {
                    sc[j] = 0;
                    for (int a = 0; a < n; a++)
                        for (int b = 0; b < n; b++) sc[j] += xs[i][a] * M[a * n + b] * xs[j][b];
                }
                double got = log(qkv_tensor_get(w, (h * T + i) * T + 0) / qkv_tensor_get(w, (h * T + i) * T + 1));
                ck_assert_msg(fabs(got - scale * (sc[0] - sc[1])) < 1e-9 * (1 + fabs(got)), "%s head %d row %d: %g, "
                              "M gives %g", V[v].name, h, i, got, scale * (sc[0] - sc[1]));
            }
        }
        ck_assert_int_eq(qkv_attention_score_matrix(&at, H, 0, M), -1);
        qkv_ctx_free(ctx);
        qkv_tensor_free(x);
        qkv_attention_free(&at);
        qkv_params_free(&p);
    }
}
END_TEST

/* qkv inspect of a run with qk_tied and a signed diagonal: every head's score is symmetric (1) with
 * a negative share above 0, at the start and at the end */
START_TEST(score_inspect_signed_tied_run) {
    char dir[256], out[16384];
    qkv_test_mkdtemp(dir, sizeof dir, "score");
    qkv_test_put(dir, "c.json",
                 "{\"model\": {\"d_model\": 16, \"heads\": 2, \"layers\": 2, \"d_ff\": 32,\n"
                 "  \"attention\": {\"qkv\": \"qk_tied\", \"qk_diag\": \"alternating\"}},\n"
                 " \"task\": {\"name\": \"recall\", \"pairs\": 3, \"keys\": 8, \"values\": 8},\n"
                 " \"train\": {\"steps\": 20, \"batch\": 8, \"eval_every\": 20, \"eval_examples\": 32}}\n");
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, true, "cd %s && %s train c.json --out r --quiet && %s inspect r", dir,
                                 qkv_test_bin(), qkv_test_bin()), 0);
    int heads = 0;
    for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
        int layer, head;
        double v[8];
        if (sscanf(line, "%d %d %lf %lf %lf %lf %lf %lf %lf %lf", &layer, &head, &v[0], &v[1], &v[2], &v[3], &v[4], &v[5],
                   &v[6], &v[7]) != 10)
            continue;
        heads++; /* symmetry start, end, change; negative start, end, change; ... */
        ck_assert_msg(v[0] == 1 && v[1] == 1 && v[3] > 0.05 && v[4] > 0.05, "%s", line);
    }
    ck_assert_int_eq(heads, 4);
    qkv_test_rmtree(dir);
}
END_TEST

Suite *score_suite(void) {
    Suite *s = suite_create("score");
    TCase *tc = tcase_create("stats");
    tcase_add_test(tc, score_symmetric_antisymmetric_identity);
    tcase_add_test(tc, score_tied_general_and_mixed);
    tcase_add_test(tc, score_matrix_is_the_modules);
    tcase_add_test(tc, score_inspect_signed_tied_run);
    suite_add_tcase(s, tc);
    return s;
}
