/* One example's recorded attention in several runs side by side (src/report/attention_figure.c):
 * a panel per run and layer holding the mean of the layer's heads, the shares each panel notes,
 * the answer's cells outlined, the largest weight drawn darkest where it is, and runs of other
 * examples refused. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "suites.h"
#include "report/attention_figure.h"
#include "testutil.h"

/* 5 positions: k1 v1 k2 v2 q2, the query's target v2 (token 6), first held at position 3 */
#define T 5
static int32_t TOKENS[T] = {1, 5, 2, 6, 2};
static int32_t TARGETS[T] = {-100, -100, -100, -100, 6};

/* w[l][h][q][k] */
static float WA[2][2][T][T], WB[2][2][T][T];

/* A: layer 1, head 0 looks at its own position, head 1 at the one before (row 0 uniform in
 * both); layer 2, both heads: rows 0-3 uniform, row 4 all on key 3 (the answer). B: uniform. */
static void fill(void) {
    for (int l = 0; l < 2; l++)
        for (int h = 0; h < 2; h++)
            for (int q = 0; q < T; q++)
                for (int k = 0; k < T; k++) {
                    WB[l][h][q][k] = 0.2f;
                    float a = 0.2f;
                    if (l == 0 && q > 0) a = k == (h == 0 ? q : q - 1) ? 1.0f : 0.0f;
                    if (l == 1 && q == 4) a = k == 3 ? 1.0f : 0.0f;
                    WA[l][h][q][k] = a;
                }
}

static qkv_heatmap map(float (*w)[2][T][T], int32_t *tokens) {
    return (qkv_heatmap){2, 2, T, &w[0][0][0][0], tokens, TARGETS};
}

static int count(const char *s, const char *what) {
    int n = 0;
    for (const char *p = s; (p = strstr(p, what)); p += strlen(what)) n++;
    return n;
}

/* a panel is the mean of its layer's heads, with the shares counted as the study counts them */
START_TEST(panel_is_the_mean_of_the_heads) {
    fill();
    WA[0][1][2][0] = 0.5f, WA[0][1][2][1] = 0.5f; /* head 1, row 2: half on key 0 instead */
    qkv_heatmap a = map(WA, TOKENS);
    qkv_attention_panel p;
    ck_assert_int_eq(qkv__attention_panel(&a, 0, &p), 0);
    ck_assert_float_eq_tol(p.w[2 * T + 2], 0.5, 1e-7); /* head 0's 1 and head 1's 0 */
    ck_assert_float_eq_tol(p.w[2 * T + 1], 0.25, 1e-7);
    ck_assert_float_eq_tol(p.w[2 * T + 0], 0.25, 1e-7);
    /* own: rows 0..4 = 0.2, 0.5, 0.5, 0.5, 0.5; previous: rows 1..4 = 0.5, 0.25, 0.5, 0.5 */
    ck_assert_double_eq_tol(p.own, (0.2 + 4 * 0.5) / 5, 1e-7);
    ck_assert_double_eq_tol(p.prev, (0.5 + 0.25 + 0.5 + 0.5) / 4, 1e-7);
    ck_assert_double_eq_tol(p.answer, 0.5, 1e-7); /* row 4's weight on key 3 */
    ck_assert_int_eq(p.rows, 1);
    free(p.w);
    ck_assert_int_eq(qkv__attention_panel(&a, 2, &p), -1); /* no third layer */
    int32_t none[T] = {-100, -100, -100, -100, -100};
    a.targets = none; /* no row with a target: no answer share */
    ck_assert_int_eq(qkv__attention_panel(&a, 1, &p), 0);
    ck_assert(isnan(p.answer) && p.rows == 0 && isfinite(p.own));
    free(p.w);
}
END_TEST

/* the panel origins (x, y) and side, in drawing order, from their frames */
static int panels(const char *svg, double x[], double y[], double *side, int max) {
    int n = 0;
    const char *frame = "fill=\"none\" stroke=\"#888888\" stroke-width=\"0.8\"/>";
    for (const char *p = svg; (p = strstr(p, "<rect x=\"")) && n < max; p++) {
        double rx, ry, rw, rh;
        const char *end = strchr(p, '>');
        if (sscanf(p, "<rect x=\"%lf\" y=\"%lf\" width=\"%lf\" height=\"%lf\"", &rx, &ry, &rw, &rh) != 4) continue;
        if (!end || strncmp(end - strlen(frame) + 1, frame, strlen(frame)) || rw != rh) continue; /* not square: the bar */
        x[n] = rx, y[n] = ry, *side = rw;
        n++;
    }
    return n;
}

START_TEST(figure_draws_what_was_recorded) {
    fill();
    qkv_heatmap maps[2] = {map(WA, TOKENS), map(WB, TOKENS)};
    const char *names[2] = {"A <full>", "B"};
    char *svg;
    qkv_err e;
    ck_assert_int_eq(qkv__attention_figure(maps, names, 2, 7, QKV_FIGURE_EN, &svg, &e), 0);
    ck_assert(!strncmp(svg, "<svg ", 5) && strstr(svg, "</svg>\n"));
    ck_assert_ptr_nonnull(strstr(svg, "evaluation example #7"));
    ck_assert_ptr_nonnull(strstr(svg, "mean over its 2 heads"));
    /* a panel per run and layer: layer l of run i at row l, column i */
    double px[8], py[8], side = 0;
    ck_assert_int_eq(panels(svg, px, py, &side, 8), 4);
    ck_assert(px[0] < px[1] && py[0] == py[1] && px[2] == px[0] && py[2] > py[0]);
    const char *caps[4] = {">A &lt;full&gt;, layer 1<", ">B, layer 1<", ">A &lt;full&gt;, layer 2<", ">B, layer 2<"};
    for (int i = 0; i < 4; i++) ck_assert_msg(strstr(svg, caps[i]), "no caption %s", caps[i]);
    /* the shares, as worked out by hand from the weights */
    ck_assert_ptr_nonnull(strstr(svg, ">own 0.44 \xc2\xb7 previous 0.50 \xc2\xb7 answer 0.50<"));
    ck_assert_ptr_nonnull(strstr(svg, ">own 0.16 \xc2\xb7 previous 0.40 \xc2\xb7 answer 1.00<"));
    ck_assert_int_eq(count(svg, ">own 0.20 \xc2\xb7 previous 0.20 \xc2\xb7 answer 0.20<"), 2);
    /* the answer's one cell outlined in every panel */
    ck_assert_int_eq(count(svg, "<path fill=\"none\" stroke=\"#e15759\""), 4);
    const char *o = strstr(svg, "<path fill=\"none\" stroke=\"#e15759\"");
    double ox, oy;
    ck_assert_int_eq(sscanf(strstr(o, "d=\"") + 3, "M%lf %lf", &ox, &oy), 2);
    ck_assert_double_eq_tol(ox, px[0] + 3 * (side / T), 0.011); /* row 4, column 3 */
    ck_assert_double_eq_tol(oy, py[0] + 4 * (side / T), 0.011);
    /* the axes say what rows and columns are, and the roles are banded and named */
    ck_assert_ptr_nonnull(strstr(svg, "attending position (row)"));
    ck_assert_ptr_nonnull(strstr(svg, "attended position (column)"));
    ck_assert_ptr_nonnull(strstr(svg, ">key</text>"));
    ck_assert_ptr_nonnull(strstr(svg, ">query</text>"));
    char why[160];
    ck_assert_msg(qkv_test_xml_ok(svg, why, sizeof why), "%s", why);
    /* the tokens label the axes, each twice per panel */
    ck_assert_int_eq(count(svg, ">6</text>"), 4 * 2);
    /* the one weight of 1 (A's layer 2, query 4 on key 3) is the only cell of the darkest colour,
     * drawn where that cell is */
    const char *dark = strstr(svg, "<path fill=\"#08306b\" d=\"");
    ck_assert_ptr_nonnull(dark);
    dark += strlen("<path fill=\"#08306b\" d=\"");
    ck_assert_ptr_null(strstr(dark, "fill=\"#08306b\"")); /* one path of that colour */
    double cx, cy;
    ck_assert_int_eq(sscanf(dark, "M%lf %lf", &cx, &cy), 2);
    ck_assert_ptr_null(memchr(dark + 1, 'M', (size_t)(strchr(dark, '"') - dark - 1))); /* one cell */
    const double cell = side / T;
    ck_assert_double_eq_tol(cx, px[2] + 3 * cell, 0.011);
    ck_assert_double_eq_tol(cy, py[2] + 4 * cell, 0.011);
    free(svg);
}
END_TEST

/* where values repeat, a query's answer is the value right after its key, not another copy of
 * that token: the one cell outlined, the answer share counting it alone */
START_TEST(answer_is_the_value_after_the_key) {
    fill();
    int32_t dup[T] = {1, 6, 2, 6, 2}; /* k1 6 k2 6 q2: the query asks for the 6 at position 3 */
    qkv_heatmap a = map(WA, dup);
    unsigned char mark[T * T], roles[T];
    qkv__answer_cells(&a, mark, roles);
    for (int k = 0; k < T; k++) ck_assert_int_eq(mark[4 * T + k], k == 3);
    for (int q = 0; q < 4; q++)
        for (int k = 0; k < T; k++) ck_assert_int_eq(mark[q * T + k], 0);
    const unsigned char want[T] = {QKV_ROLE_NONE, QKV_ROLE_NONE, QKV_ROLE_KEY, QKV_ROLE_VALUE, QKV_ROLE_QUERY};
    ck_assert_mem_eq(roles, want, T);
    /* layer 2, row 4: half on the other copy (position 1), half on the answer */
    for (int h = 0; h < 2; h++) WA[1][h][4][3] = 0.5f, WA[1][h][4][1] = 0.5f;
    qkv_attention_panel p;
    ck_assert_int_eq(qkv__attention_panel(&a, 1, &p), 0);
    ck_assert_double_eq_tol(p.answer, 0.5, 1e-7);
    free(p.w);
    /* with a blank (k1 v1 k2 v2 q2 _): the value after the key the blank's query asks */
    int32_t blank_tok[6] = {1, 6, 2, 6, 2, 9}, blank_tgt[6] = {-100, -100, -100, -100, -100, 6};
    float w6[6 * 6] = {0};
    qkv_heatmap b = {1, 1, 6, w6, blank_tok, blank_tgt};
    unsigned char mark6[36], roles6[6];
    qkv__answer_cells(&b, mark6, roles6);
    for (int k = 0; k < 6; k++) ck_assert_int_eq(mark6[5 * 6 + k], k == 3);
    ck_assert(roles6[4] == QKV_ROLE_QUERY && roles6[5] == QKV_ROLE_QUERY && roles6[2] == QKV_ROLE_KEY);
    /* no key before the row (a sort, say): every earlier copy of its target */
    int32_t nokey[T] = {3, 6, 4, 6, 8}, nokey_tgt[T] = {-100, -100, -100, -100, 6};
    qkv_heatmap c = {2, 2, T, &WA[0][0][0][0], nokey, nokey_tgt};
    qkv__answer_cells(&c, mark, roles);
    for (int k = 0; k < T; k++) ck_assert_int_eq(mark[4 * T + k], k == 1 || k == 3);
    for (int k = 0; k < T; k++) ck_assert_int_eq(roles[k], QKV_ROLE_NONE); /* no pair found: no roles */
}
END_TEST

/* the Chinese figure: its own words (no English axis titles), a valid XML document; captions
 * with markup characters and bytes that are not UTF-8 escaped, the bytes as U+FFFD */
START_TEST(figure_in_chinese_and_escaped) {
    fill();
    qkv_heatmap maps[2] = {map(WA, TOKENS), map(WB, TOKENS)};
    const char *names[2] = {"runs/<a&b>\xff\xfe", "\xc3("};
    char *svg, why[160];
    qkv_err e;
    ck_assert_int_eq(qkv__attention_figure(maps, names, 2, 0, QKV_FIGURE_ZH, &svg, &e), 0);
    ck_assert_msg(qkv_test_xml_ok(svg, why, sizeof why), "%s", why);
    ck_assert_ptr_nonnull(strstr(svg, "关注者"));
    ck_assert_ptr_nonnull(strstr(svg, "被关注者"));
    ck_assert_ptr_nonnull(strstr(svg, ">键</text>"));
    ck_assert_ptr_nonnull(strstr(svg, ">查询</text>"));
    ck_assert_ptr_null(strstr(svg, "attending"));
    ck_assert_ptr_null(strstr(svg, "layer"));
    ck_assert_ptr_nonnull(strstr(svg, "runs/&lt;a&amp;b&gt;\xef\xbf\xbd\xef\xbf\xbd，第 1 层"));
    ck_assert_ptr_nonnull(strstr(svg, ">\xef\xbf\xbd(，第 2 层<"));
    free(svg);
    ck_assert_int_eq(qkv__attention_figure(maps, names, 2, 0, QKV_FIGURE_EN, &svg, &e), 0);
    ck_assert_msg(qkv_test_xml_ok(svg, why, sizeof why), "%s", why);
    free(svg);
}
END_TEST

/* the command: a run folder whose name holds markup and bytes that are not UTF-8 (the default
 * caption), and a --label with the same, make an SVG an XML parser reads */
START_TEST(figure_of_a_strange_folder_is_xml) {
    char tmp[4096], out[8192], why[160];
    qkv_test_mkdtemp(tmp, sizeof tmp, "figname");
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, true,
                                 "cd '%s' && printf '%%s' '{\"model\": {\"d_model\": 16, \"heads\": 2, \"layers\": 1, "
                                 "\"d_ff\": 32}, \"task\": {\"name\": \"recall\", \"pairs\": 3, \"keys\": 8, "
                                 "\"values\": 8}, \"train\": {\"steps\": 5, \"batch\": 4, \"eval_every\": 5, "
                                 "\"eval_examples\": 8}}' > c.json && %s train c.json --out \"$(printf 'r<&>\\377\\376')\" "
                                 "--quiet >/dev/null && %s inspect r* --figure a.svg && %s inspect r* --figure b.svg "
                                 "--lang zh --label \"$(printf 'x<&>\\303(')\"", tmp, qkv_test_bin(), qkv_test_bin(),
                                 qkv_test_bin()), 0);
    const char *names[2] = {"a.svg", "b.svg"};
    for (int i = 0; i < 2; i++) {
        char *svg = qkv_test_get(tmp, names[i]);
        ck_assert_msg(qkv_test_xml_ok(svg, why, sizeof why), "%s: %s", names[i], why);
        ck_assert_ptr_nonnull(strstr(svg, i ? "x&lt;&amp;&gt;\xef\xbf\xbd(" : "r&lt;&amp;&gt;\xef\xbf\xbd\xef\xbf\xbd"));
        free(svg);
    }
    qkv_test_rmtree(tmp);
}
END_TEST

START_TEST(figure_refuses_other_examples) {
    fill();
    int32_t other[T] = {1, 5, 3, 6, 3};
    qkv_heatmap maps[2] = {map(WA, TOKENS), map(WB, other)};
    const char *names[2] = {"runs/a", "runs/b"};
    char *svg = (char *)1;
    qkv_err e;
    ck_assert_int_eq(qkv__attention_figure(maps, names, 2, 0, QKV_FIGURE_EN, &svg, &e), -1);
    ck_assert_ptr_null(svg);
    ck_assert_int_eq(e.code, QKV_ERR_USAGE);
    ck_assert_msg(strstr(e.msg, "runs/a and runs/b recorded different examples") && !strchr(e.msg, '\n'), "%s", e.msg);
    maps[1] = map(WB, TOKENS);
    maps[1].layers = 1;
    ck_assert_int_eq(qkv__attention_figure(maps, names, 2, 0, QKV_FIGURE_EN, &svg, &e), -1);
    ck_assert_msg(e.code == QKV_ERR_USAGE && strstr(e.msg, "runs/a has 2 layers, runs/b 1"), "%s", e.msg);
    ck_assert_int_eq(qkv__attention_figure(maps, names, 0, 0, QKV_FIGURE_EN, &svg, &e), -1);
    ck_assert_int_eq(e.code, QKV_ERR_USAGE);
}
END_TEST

Suite *attention_figure_suite(void) {
    Suite *s = suite_create("attention_figure");
    TCase *tc = tcase_create("figure");
    tcase_add_test(tc, panel_is_the_mean_of_the_heads);
    tcase_add_test(tc, figure_draws_what_was_recorded);
    tcase_add_test(tc, figure_refuses_other_examples);
    tcase_add_test(tc, answer_is_the_value_after_the_key);
    tcase_add_test(tc, figure_in_chinese_and_escaped);
    tcase_add_test(tc, figure_of_a_strange_folder_is_xml);
    suite_add_tcase(s, tc);
    return s;
}
