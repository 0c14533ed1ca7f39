/* A run records what reports show of it (src/train/observe.c), and the report renders only what
 * was recorded: every finished run of a sweep holds observed.safetensors; without it (a run of an
 * older qkv) the report says so and leaves the run out; qkv ablate --refresh records it again,
 * and the report is then what it was. */
#define _GNU_SOURCE
#include <check.h>
#include <glob.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "suites.h"
#include "testutil.h"
#include "config/config.h"
#include "train/observe.h"

static char TMP[256];

static void setup(void) { qkv_test_mkdtemp(TMP, sizeof TMP, "observe"); }
static void teardown(void) { qkv_test_rmtree(TMP); }

static void put(const char *rel, const char *text) { qkv_test_put(TMP, rel, text); }
static char *get(const char *rel) { return qkv_test_get(TMP, rel); }

static char *untimed(const char *rel) { return qkv_test_get_untimed(TMP, rel); }

#define BASE                                                                                             \
    "{\"model\": {\"d_model\": 16, \"heads\": 2, \"layers\": 2, \"d_ff\": 32},\n"                        \
    " \"task\": {\"name\": \"recall\", \"pairs\": 3, \"keys\": 8, \"values\": 8},\n"                     \
    " \"train\": {\"steps\": 40, \"batch\": 8, \"eval_every\": 20, \"eval_examples\": 32}}\n"
#define SWEEP                                                                                            \
    "{\"base\": \"base.json\", \"threshold\": 0.6, \"max_steps\": 80, \"example\": 3,\n"                \
    " \"variants\": [{\"name\": \"full\"}, {\"name\": \"qk_tied\", \"set\": [\"model.attention.qkv=qk_tied\"]}],\n" \
    " \"seeds\": [0, 1]}\n"

START_TEST(test_runs_record_and_report_reads) {
    put("base.json", BASE);
    put("abl.json", SWEEP);
    char out[16384];
    const char *q = qkv_test_bin();
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, true, "cd %s && %s ablate abl.json --out s --jobs 2 --quiet", TMP, q),
                     0);
    /* every run recorded its final model's attention, for the sweep's example */
    char pat[600];
    snprintf(pat, sizeof pat, "%s/s/runs/*/seed*", TMP);
    glob_t g;
    ck_assert_int_eq(glob(pat, 0, NULL, &g), 0);
    ck_assert_int_eq((int)g.gl_pathc, 4);
    for (size_t i = 0; i < g.gl_pathc; i++) {
        qkv_observed o;
        char err[512];
        ck_assert_msg(qkv__run_observed(g.gl_pathv[i], &o, err, sizeof err) == 0, "%s: %s", g.gl_pathv[i], err);
        ck_assert_int_eq(o.example, 3);
        ck_assert(o.sums.rows > 0 && o.layers == 2 && o.heads == 2 && o.T > 0 && o.w && !o.sample);
        qkv__observed_free(&o);
    }
    char *before = untimed("s/results.json");
    ck_assert_ptr_nonnull(strstr(before, "\"diag_share\":\t0."));
    /* the score's shape per variant: a tied Q = K is symmetric and positive semi-definite by
     * construction, full is not */
    char *qk = strstr(before, "\"name\":\t\"qk_tied\"");
    ck_assert_ptr_nonnull(qk);
    ck_assert_msg(strstr(qk, "\"score_symmetry\":\t1,") || strstr(qk, "\"score_symmetry\":\t0.99999"), "%s", qk);
    ck_assert_ptr_nonnull(strstr(qk, "\"score_negative_share\":\t0"));
    double full_sym = qkv_test_json_num(strstr(before, "\"name\":\t\"full\""), "score_symmetry");
    ck_assert_msg(full_sym > -1 && full_sym < 0.99, "full's symmetry %g", full_sym);
    char *svg = get("s/plots/symmetry.svg"); /* per layer and head, one line per variant */
    ck_assert_ptr_nonnull(strstr(svg, "Score symmetry of each head"));
    free(svg);
    /* qkv inspect prints them per layer and head, writing nothing */
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, false, "cd %s && %s inspect s/runs/qk_tied/seed0", TMP, q), 0);
    ck_assert_msg(strstr(out, "s/runs/qk_tied/seed0: qkv qk_tied, 2 layers x 2 heads\n") &&
                  strstr(out, "    1     1     1.000     0.000"), "%s", out);
    /* a sweep whose runs recorded nothing (an older qkv): said per run, marked in the report */
    for (size_t i = 0; i < g.gl_pathc; i++) {
        char p[900];
        snprintf(p, sizeof p, "%s/observed.safetensors", g.gl_pathv[i]);
        ck_assert_int_eq(unlink(p), 0);
    }
    globfree(&g);
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, false, "cd %s && %s ablate abl.json --out s --report 2>&1 >/dev/null",
                                 TMP, q), 0);
    ck_assert_msg(strstr(out, "qkv ablate: no attention diagnostics of full/seed0 (a run of an older qkv: it recorded "
                              "none); qkv ablate CONFIG --out DIR --refresh records them"), "%s", out);
    ck_assert_msg(strstr(out, "qkv ablate: 4 runs have no recorded attention diagnostics"), "%s", out);
    char *md = get("s/report.md");
    ck_assert_ptr_nonnull(strstr(md, "4 finished runs recorded no attention diagnostics (made by an older qkv)"));
    free(md);
    char *without = untimed("s/results.json");
    ck_assert_ptr_null(strstr(without, "\"diag_share\":\t0.")); /* left out, not made up */
    free(without);
    /* --refresh records them (training nothing): the results are what they were */
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, false, "cd %s && %s ablate abl.json --out s --refresh 2>&1 >/dev/null",
                                 TMP, q), 0);
    ck_assert_msg(strstr(out, "recorded the attention diagnostics of 4 finished runs"), "%s", out);
    ck_assert_ptr_null(strstr(out, "no attention diagnostics of"));
    char *after = untimed("s/results.json");
    ck_assert_str_eq(after, before);
    free(after);
    free(before);
    md = get("s/report.md");
    ck_assert_ptr_null(strstr(md, "recorded no attention diagnostics"));
    free(md);
}
END_TEST

/* qkv inspect's "previous" column: the mean weight a query puts on the position just before its
 * own. With one evaluation example (a data file) the observation's average is over that example's
 * rows alone, which its weights (the same example) let the test recompute. */
START_TEST(test_previous_share_is_the_weight_one_back) {
    char cfgtext[1400]; /* absolute data paths: the observation below runs in the tests' directory */
    snprintf(cfgtext, sizeof cfgtext,
             "{\"model\": {\"d_model\": 16, \"heads\": 2, \"layers\": 2, \"d_ff\": 32},\n"
             " \"task\": {\"name\": \"file\", \"path\": \"%s/d.jsonl\", \"eval_path\": \"%s/e.jsonl\"},\n"
             " \"train\": {\"steps\": 30, \"batch\": 4, \"eval_every\": 30}}\n", TMP, TMP);
    put("one.json", cfgtext);
    put("d.jsonl", "{\"input\": [1, 2, 3, 4, 5, 6], \"target\": [2, 3, 4, 5, 6, 7]}\n"
                   "{\"input\": [7, 6, 5, 4, 3, 2], \"target\": [6, 5, 4, 3, 2, 1]}\n");
    put("e.jsonl", "{\"input\": [3, 1, 4, 1, 5, 7], \"target\": [1, 4, 1, 5, 7, 2]}\n"); /* one, no padding */
    char out[16384], dir[400], cfgpath[400], err[512];
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, true, "cd %s && %s train one.json --out r --quiet", TMP, qkv_test_bin()),
                     0);
    snprintf(dir, sizeof dir, "%s/r", TMP);
    snprintf(cfgpath, sizeof cfgpath, "%s/r/config.json", TMP);
    qkv_config cfg;
    qkv_err e;
    ck_assert_msg(qkv_config_load(&cfg, cfgpath, &e) == 0, "%s", e.msg);
    qkv_observed o;
    ck_assert_msg(qkv__run_observation(&cfg, dir, 0, 30, &o, err, sizeof err) == 0, "%s", err);
    ck_assert_ptr_nonnull(o.prev_share);
    int T = o.T;
    for (int l = 0; l < o.layers; l++)
        for (int h = 0; h < o.heads; h++) {
            const float *w = o.w + ((size_t)l * o.heads + h) * T * T;
            double sum = 0;
            for (int i = 1; i < T; i++) sum += w[i * T + i - 1];
            double want = sum / (T - 1), got = o.prev_share[l * o.heads + h];
            ck_assert_msg(fabs(got - want) < 1e-6 && got > 0 && got < 1, "layer %d head %d: %g, expected %g", l, h, got,
                          want);
        }
    qkv__observed_free(&o);
    ck_assert_ptr_null(o.prev_share);
    /* a record read back has none (it is not written) */
    ck_assert_int_eq(qkv__run_observed(dir, &o, err, sizeof err), 0);
    ck_assert_ptr_null(o.prev_share);
    qkv__observed_free(&o);
    /* and qkv inspect prints it per head */
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, false, "cd %s && %s inspect r", TMP, qkv_test_bin()), 0);
    ck_assert_msg(strstr(out, "layer  head  symmetry  negative  diagonal  previous\n"), "%s", out);
}
END_TEST

Suite *observe_suite(void) {
    Suite *s = suite_create("observe");
    TCase *tc = tcase_create("record");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_runs_record_and_report_reads);
    tcase_add_test(tc, test_previous_share_is_the_weight_one_back);
    suite_add_tcase(s, tc);
    return s;
}
