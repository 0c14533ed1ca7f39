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
#include <sys/stat.h>
#include <unistd.h>

#include "suites.h"
#include "testutil.h"
#include "config/config.h"
#include "nn/model.h"
#include "nn/model_file.h"
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
        qkv_err e;
        ck_assert_msg(qkv__run_observed(g.gl_pathv[i], &o, &e) == 0, "%s: %s", g.gl_pathv[i], e.msg);
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
                  strstr(out, "    1     1    1.000   1.000  +0.000    0.000   0.000  +0.000"), "%s", out);
    /* qkv inspect --figure draws what the runs recorded, and only that: without their models the
     * same bytes; the panels are the runs' layers, captioned by --label */
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, true, "cd %s && %s inspect s/runs/full/seed0 s/runs/qk_tied/seed0 "
                                 "--figure f1.svg --label full --label tied", TMP, q), 0);
    char *f1 = untimed("f1.svg");
    ck_assert_msg(strstr(f1, ">full, layer 1<") && strstr(f1, ">tied, layer 2<") &&
                  strstr(f1, "evaluation example #3") && !strncmp(f1, "<svg ", 5), "%.300s", f1);
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, true, "cd %s && mkdir m && mv s/runs/full/seed0/model.safetensors m/ && "
                                 "%s inspect s/runs/full/seed0 s/runs/qk_tied/seed0 --figure f2.svg --label full "
                                 "--label tied && mv m/model.safetensors s/runs/full/seed0/ && cmp f1.svg f2.svg",
                                 TMP, q), 0);
    free(f1);
    /* and the report sets each variant's diagnostics against their start: a tied Q = K starts
     * symmetric, full starts near 0 */
    ck_assert_msg(strstr(qk, "\"start_score_symmetry\":\t1,") || strstr(qk, "\"start_score_symmetry\":\t0.99999"),
                  "%s", qk);
    double full_start = qkv_test_json_num(strstr(before, "\"name\":\t\"full\""), "start_score_symmetry");
    ck_assert_msg(fabs(full_start) < 0.3 && full_start != full_sym, "full's symmetry at the start %g", full_start);
    char *md = get("s/results.md");
    ck_assert_msg(strstr(md, "| qk_tied | 0.") && strstr(md, " | 1.00 \xe2\x86\x92 1.00 (+0.00) | 0.00 \xe2\x86\x92 "
                                                            "0.00 (+0.00) |\n"), "%s", md);
    ck_assert_ptr_nonnull(strstr(md, "- start \xe2\x86\x92 end (change): the value at step 0"));
    free(md);
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
    md = get("s/report.md");
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
    /* runs without a record of their start (an older qkv's): the others' start is shown, and said */
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, false, "cd %s && rm s/runs/full/seed1/observed-start.safetensors && "
                                 "%s ablate abl.json --out s --report >/dev/null 2>&1", TMP, q), 0);
    md = get("s/report.md");
    ck_assert_ptr_nonnull(strstr(md, "1 finished run recorded no diagnostics at step 0 (made by an older qkv): "
                                     "start not recorded"));
    ck_assert_ptr_nonnull(strstr(md, " \xe2\x86\x92 "));
    free(md);
    /* none: the report and results are as a qkv before the start made them, and qkv inspect says so */
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, false, "cd %s && rm s/runs/*/seed*/observed-start.safetensors; "
                                 "%s ablate abl.json --out s --report >/dev/null 2>&1", TMP, q), 0);
    md = get("s/report.md");
    char *json = get("s/results.json");
    ck_assert_ptr_null(strstr(md, " \xe2\x86\x92 "));
    ck_assert_ptr_null(strstr(md, "step 0"));
    ck_assert_ptr_null(strstr(json, "\"start_"));
    ck_assert_ptr_nonnull(strstr(json, "\"prev_share\"")); /* the end's is recorded still */
    free(md);
    free(json);
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, false, "cd %s && %s inspect s/runs/qk_tied/seed0", TMP, q), 0);
    ck_assert_msg(strstr(out, "layer  head  symmetry  negative  diagonal  previous\n") &&
                  strstr(out, "    1     1     1.000     0.000") &&
                  strstr(out, "\nstart not recorded (a run of an older qkv): the trained model's values only\n"), "%s",
                  out);
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
    char out[16384], dir[400], cfgpath[400];
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, true, "cd %s && %s train one.json --out r --quiet", TMP, qkv_test_bin()),
                     0);
    snprintf(dir, sizeof dir, "%s/r", TMP);
    snprintf(cfgpath, sizeof cfgpath, "%s/r/config.json", TMP);
    qkv_config cfg;
    qkv_err e;
    ck_assert_msg(qkv_config_load(&cfg, cfgpath, &e) == 0, "%s", e.msg);
    qkv_observed o;
    ck_assert_msg(qkv__run_observation(&cfg, dir, 0, 30, &o, &e) == 0, "%s", e.msg);
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
    /* qkv inspect's line in words, worked out from the same numbers: each head under every rule
     * it meets (symmetry >= 0.5 symmetric, else directional; previous, diagonal >= 0.5) */
    char words[1024] = "in words (layer.head): ", *wp = words + strlen(words);
    const double *by[4] = {o.symmetry, o.symmetry, o.prev_share, o.diag_share};
    const char *names[4] = {"symmetric (symmetry >= 0.5: score(i, j) close to score(j, i))",
                            "directional (symmetry < 0.5)", "previous-token (previous >= 0.5)",
                            "self-preferring (diagonal >= 0.5)"};
    int groups = 0;
    for (int k = 0; k < 4; k++) {
        int n = 0;
        for (int i = 0; i < o.layers * o.heads; i++) {
            bool in = k == 1 ? by[k][i] < 0.5 : by[k][i] >= 0.5;
            if (in) wp += sprintf(wp, "%s%d.%d", n++ ? " " : groups ? "; " : "", i / o.heads, i % o.heads);
        }
        if (n) wp += sprintf(wp, " %s", names[k]), groups++;
    }
    sprintf(wp, "\n");
    ck_assert_int_gt(groups, 0);
    char inspected[16384];
    ck_assert_int_eq(qkv_test_sh(inspected, sizeof inspected, false, "cd %s && %s inspect r", TMP, qkv_test_bin()), 0);
    ck_assert_msg(strstr(inspected, words), "expected\n%s\nin\n%s", words, inspected);
    /* the run recorded the same */
    qkv_observed rec;
    ck_assert_int_eq(qkv__run_observed(dir, &rec, &e), 0);
    ck_assert(rec.prev_share && !memcmp(rec.prev_share, o.prev_share, (size_t)o.layers * o.heads * sizeof(double)));
    qkv__observed_free(&rec);
    qkv__observed_free(&o);
    ck_assert_ptr_null(o.prev_share);
    /* and qkv inspect prints it per head, at step 0 and at the end */
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, false, "cd %s && %s inspect r", TMP, qkv_test_bin()), 0);
    ck_assert_msg(strstr(out, "               symmetry                 negative                 diagonal          "
                              "       previous\nlayer  head    start     end  change    start     end  change    start"
                              "     end  change    start     end  change\n"), "%s", out);
}
END_TEST

/* the score diagnostics of a and b, layer by layer and head by head: equal bit for bit, but for
 * the negative eigenvalue share, which LAPACK's symmetric eigensolver gives to within a few units
 * in the last place (its result depends on where the matrix lies in memory) */
static bool same_scores(const qkv_observed *a, const qkv_observed *b) {
    size_t n = (size_t)a->layers * a->heads;
    bool same = a->layers == b->layers && a->heads == b->heads && a->symmetry && b->symmetry && a->prev_share &&
                b->prev_share && !memcmp(a->symmetry, b->symmetry, n * sizeof(double)) &&
                !memcmp(a->diag_share, b->diag_share, n * sizeof(double)) &&
                !memcmp(a->prev_share, b->prev_share, n * sizeof(double));
    for (size_t i = 0; same && i < n; i++) same = fabs(a->negative_mass[i] - b->negative_mass[i]) <= 1e-14;
    return same;
}

/* A fresh run records its diagnostics at step 0 too (observed-start.safetensors): those of the
 * model its seed initialises, before any update. Recomputed here from such a model, built by the
 * test, saved and observed as a trained model is (at one thread both); the end's record differs
 * (training moved it). */
START_TEST(test_start_is_the_fresh_model_of_the_seed) {
    put("base.json", BASE);
    char out[16384], dir[400], fresh[400], path[500];
    qkv_err err;
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, true, "cd %s && %s train base.json --set train.steps=5 --set "
                                 "train.seed=7 --out r --threads 1 --quiet", TMP, qkv_test_bin()), 0);
    snprintf(dir, sizeof dir, "%s/r", TMP);
    snprintf(path, sizeof path, "%s/r/config.json", TMP);
    qkv_config cfg;
    qkv_err qe;
    ck_assert_msg(qkv_config_load(&cfg, path, &qe) == 0, "%s", qe.msg);
    ck_assert_int_eq(cfg.train.seed, 7);
    qkv_observed start, end, again;
    ck_assert_msg(qkv__run_observed_start(dir, &start, &qe) == 0, "%s", qe.msg);
    ck_assert_msg(qkv__run_observed(dir, &end, &qe) == 0, "%s", qe.msg);
    ck_assert(start.step == 0 && end.step == 5 && !start.sample && start.sums.rows > 0);
    /* the seed's model, observed as a run's */
    snprintf(fresh, sizeof fresh, "%s/fresh", TMP);
    ck_assert_int_eq(mkdir(fresh, 0755), 0);
    qkv_model *m = qkv_model_new(&cfg.model, QKV_F32, (uint64_t)cfg.train.seed, &err);
    ck_assert_msg(m != NULL, "%s", err.msg);
    snprintf(path, sizeof path, "%s/model.safetensors", fresh);
    ck_assert_msg(qkv_save_model(m, path, "{}", 0, &err) == 0, "%s", err.msg);
    qkv_model_free(m);
    ck_assert_msg(qkv__run_observation(&cfg, fresh, 0, 0, &again, &qe) == 0, "%s", qe.msg);
    ck_assert(same_scores(&start, &again));
    ck_assert(start.sums.diag == again.sums.diag && start.sums.first == again.sums.first &&
              start.sums.entropy == again.sums.entropy && start.sums.rows == again.sums.rows);
    ck_assert(start.T == again.T && !memcmp(start.w, again.w, (size_t)start.layers * start.heads * start.T * start.T *
                                                                 sizeof(float)));
    ck_assert(!same_scores(&start, &end) && start.sums.diag != end.sums.diag);
    qkv__observed_free(&start);
    qkv__observed_free(&end);
    qkv__observed_free(&again);
    /* --resume keeps the start: it is the run's, not the session's */
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, true, "cd %s && cp r/observed-start.safetensors kept && sed -i "
                                 "'s/\"steps\":\t5,/\"steps\":\t8,/' r/config.json && %s train --resume r --quiet && "
                                 "grep -q '\"steps\":8' r/summary.json && cmp kept r/observed-start.safetensors",
                                 TMP, qkv_test_bin()), 0);
}
END_TEST

Suite *observe_suite(void) {
    Suite *s = suite_create("observe");
    TCase *tc = tcase_create("record");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_runs_record_and_report_reads);
    tcase_add_test(tc, test_previous_share_is_the_weight_one_back);
    tcase_add_test(tc, test_start_is_the_fresh_model_of_the_seed);
    suite_add_tcase(s, tc);
    return s;
}
