/* Runs trained together (qkv train --group): every run's directory ends exactly as when the
 * run trains alone (weights, checkpoint, metrics and summary; timings aside), for the shipped
 * variants, seeds and learning rates, at 1 and 2 threads; a run that fails stops alone; an
 * interrupted group resumes and a finished one extends as its runs would alone. */
#define _GNU_SOURCE
#include <check.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "io/safetensors.h"
#include "suites.h"
#include "testutil.h"

static char TMP[256];

static void setup(void) { qkv_test_mkdtemp(TMP, sizeof TMP, "group"); }
static void teardown(void) { qkv_test_rmtree(TMP); }

static bool exists(const char *dir, const char *file) {
    char p[1200];
    snprintf(p, sizeof p, "%s/%s", dir, file);
    return access(p, F_OK) == 0;
}

/* a small recall run: its config with the variant's attention keys, the seed and the learning
 * rate (Adam with clipping; with sgd, plain SGD without clipping), evaluated every eval_every
 * steps (0: at the end only) */
static void config_opt(char *buf, size_t n, const char *attention, int batch, int steps, long long seed, double lr,
                       bool sgd, int eval_every) {
    snprintf(buf, n,
             "{\"model\": {\"d_model\": 16, \"heads\": 2, \"layers\": 2, \"d_ff\": 32, \"attention\": {%s}},\n"
             " \"task\": {\"name\": \"recall\", \"pairs\": 3, \"keys\": 8, \"values\": 8},\n"
             " \"train\": {\"steps\": %d, \"batch\": %d, \"seed\": %lld, \"eval_every\": %d, \"log_every\": 5,\n"
             "           \"eval_examples\": 30},\n"
             " \"optim\": {\"name\": \"%s\", \"lr\": %.17g, \"clip\": %d}}\n",
             attention, steps, batch, seed, eval_every, sgd ? "sgd" : "adam", lr, sgd ? 0 : 1);
}

static void config(char *buf, size_t n, const char *attention, int batch, int steps, long long seed, double lr) {
    config_opt(buf, n, attention, batch, steps, seed, lr, false, 10);
}

/* the run in dir as `qkv train` leaves it, without what depends on time: metrics.jsonl without
 * tokens_per_s and elapsed, summary.json without seconds, config.json, every tensor of the model
 * and the checkpoint but the checkpoint's training time (state.scalars[8]) */
static void fingerprint(const char *dir, char *out, size_t n) {
    char text[65536];
    size_t at = 0;
    out[0] = 0;
    ck_assert_int_eq(qkv_test_sh(text, sizeof text, false,
                         "sed -e 's/,\"tokens_per_s\".*//' %s/metrics.jsonl; sed -e 's/\"seconds\":[^,]*,//' %s/summary.json; "
                         "cat %s/config.json", dir, dir, dir), 0);
    at += (size_t)snprintf(out + at, n - at, "%s", text);
    const char *files[2] = {"model.safetensors", "checkpoint.safetensors"};
    for (int f = 0; f < 2; f++) {
        char path[1024], err[256];
        snprintf(path, sizeof path, "%s/%s", dir, files[f]);
        qkv_safetensors *st;
        ck_assert_msg(qkv_st_read(path, &st, err, sizeof err) == 0, "%s", err);
        for (int i = 0; i < qkv_st_count(st); i++) {
            const qkv_st_entry *e = qkv_st_entry_at(st, i);
            const unsigned char *d = qkv_st_data(st, e);
            size_t bytes = (size_t)(e->end - e->begin);
            if (!strcmp(e->name, "state.scalars")) bytes = 8 * sizeof(double); /* [8]: seconds */
            uint64_t h = 0xcbf29ce484222325ull;
            for (size_t k = 0; k < bytes; k++) h = (h ^ d[k]) * 0x100000001b3ull;
            at += (size_t)snprintf(out + at, n - at, "%s %s %016llx\n", files[f], e->name, (unsigned long long)h);
        }
        for (int i = 0; i < qkv_st_meta_count(st); i++) {
            const char *k, *v;
            qkv_st_meta_at(st, i, &k, &v);
            /* the checkpoint's CRC covers state.scalars' seconds too (the model file's is kept) */
            if (f == 1 && !strcmp(k, QKV_ST_CRC32_KEY)) continue;
            at += (size_t)snprintf(out + at, n - at, "%s meta %s=%.60s\n", files[f], k, v);
        }
        qkv_st_free(st);
    }
    ck_assert(at < n - 1);
}

static void same_run(const char *a, const char *b, const char *what) {
    static char fa[1 << 17], fb[1 << 17];
    fingerprint(a, fa, sizeof fa);
    fingerprint(b, fb, sizeof fb);
    ck_assert_int_gt(strlen(fa), 500);
    ck_assert_msg(!strcmp(fa, fb), "%s: %s and %s differ:\n%s\n----\n%s", what, a, b, fa, fb);
}

/* ---- every run of a group ends as alone ------------------------------------------------------ */

typedef struct { const char *name, *attention; int batch; } group_case;

/* the shipped ablations' variants; batch 8: 8 micro-batches of 1 example, batch 6: 2 of 3,
 * batch 5: 1 micro-batch (with 2 threads the threads then split each op, not micro-batches) */
static const group_case CASES[] = {
    {"full", "", 8},
    {"shared", "\"qkv\": \"shared\"", 6},
    {"identity", "\"qkv\": \"identity\"", 8},
    {"qk_tied", "\"qkv\": \"qk_tied\"", 5},
    {"kv_tied", "\"qkv\": \"kv_tied\"", 8},
    {"head_shared", "\"qkv\": \"head_shared\", \"scale\": \"embed\"", 6},
    {"rel_pos_bias", "\"rel_pos_bias\": true", 8},
    {"gate", "\"gate\": \"output\"", 5},
    {"query_proj", "\"query_proj\": false", 8},
    {"key_proj", "\"key_proj\": false, \"query_proj\": false", 6},
    {"self_mask", "\"qkv\": \"qk_tied\", \"self_mask\": true, \"self_mask_rule\": \"reformer\", \"key_norm\": true", 8},
    {"shared_role_scale", "\"qkv\": \"shared\", \"role_scale\": true", 6},
};
#define NCASES ((int)(sizeof CASES / sizeof CASES[0]))

/* case _i / 2 at 1 or 2 threads: 2 seeds x 2 learning rates alone, then together */
START_TEST(test_group_equals_alone) {
    const group_case *c = &CASES[_i / 2];
    int threads = 1 + _i % 2;
    const long long seeds[2] = {3, 4};
    const double lrs[2] = {0.01, 0.003};
    char groups[4096] = "", cfg[2048], path[1024], out[8192];
    int k = 0;
    for (int s = 0; s < 2; s++)
        for (int l = 0; l < 2; l++, k++) {
            config(cfg, sizeof cfg, c->attention, c->batch, 20, seeds[s], lrs[l]);
            snprintf(path, sizeof path, "%s/in%d.json", TMP, k);
            qkv_test_write_file(path, cfg);
            ck_assert_int_eq(qkv_test_sh(out, sizeof out, true, "%s train %s --out %s/alone%d --threads %d --quiet", qkv_test_bin(),
                                 path, TMP, k, threads), 0);
            snprintf(path, sizeof path, "%s/together%d", TMP, k);
            ck_assert_int_eq(mkdir(path, 0755), 0);
            snprintf(path, sizeof path, "%s/together%d/config.json", TMP, k);
            qkv_test_write_file(path, cfg);
            size_t at = strlen(groups);
            snprintf(groups + at, sizeof groups - at, " --group %s/together%d", TMP, k);
        }
    ck_assert_msg(qkv_test_sh(out, sizeof out, true, "%s train%s --threads %d --quiet", qkv_test_bin(), groups, threads) == 0,
                  "%s: %s", c->name, out);
    for (k = 0; k < 4; k++) { /* one summary line per run, naming it */
        snprintf(path, sizeof path, "\"run\":\"%s/together%d\"", TMP, k);
        ck_assert_ptr_nonnull(strstr(out, path));
    }
    for (k = 0; k < 4; k++) {
        char a[512], b[512], what[128];
        snprintf(a, sizeof a, "%s/alone%d", TMP, k);
        snprintf(b, sizeof b, "%s/together%d", TMP, k);
        snprintf(what, sizeof what, "%s, %d threads, run %d", c->name, threads, k);
        same_run(a, b, what);
    }
}
END_TEST

/* ---- a run that fails stops alone ------------------------------------------------------------ */

/* one run's learning rate makes its loss overflow (SGD without clipping, lr 10: at step 24): it
 * fails as it fails alone (same message, same metrics so far, no summary), the others finish as
 * alone */
START_TEST(test_group_failing_run_stops_alone) {
    const double lrs[3] = {0.1, 10, 0.05};
    char groups[2048] = "", cfg[2048], path[1024], out[8192], alone_err[8192];
    for (int k = 0; k < 3; k++) {
        config_opt(cfg, sizeof cfg, "", 8, 30, 8 - k, lrs[k], true, 10);
        snprintf(path, sizeof path, "%s/in%d.json", TMP, k);
        qkv_test_write_file(path, cfg);
        int rc = qkv_test_sh(out, sizeof out, true, "%s train %s --out %s/alone%d --threads 1 --quiet", qkv_test_bin(), path, TMP, k);
        ck_assert_int_eq(rc, k == 1 ? 1 : 0);
        if (k == 1) snprintf(alone_err, sizeof alone_err, "%s", out);
        snprintf(path, sizeof path, "%s/together%d", TMP, k);
        ck_assert_int_eq(mkdir(path, 0755), 0);
        snprintf(path, sizeof path, "%s/together%d/config.json", TMP, k);
        qkv_test_write_file(path, cfg);
        size_t at = strlen(groups);
        snprintf(groups + at, sizeof groups - at, " --group %s/together%d", TMP, k);
    }
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, true, "%s train%s --threads 1 --quiet", qkv_test_bin(), groups), 1);
    /* alone: "qkv train: step N: ..."; together: "qkv train: DIR: step N: ..." */
    const char *msg = strstr(alone_err, "step ");
    ck_assert_ptr_nonnull(msg);
    char want[1024];
    snprintf(want, sizeof want, "qkv train: %s/together1: %.*s", TMP, (int)strcspn(msg, "\n"), msg);
    ck_assert_msg(strstr(out, want), "expected '%s' in:\n%s", want, out);
    char a[512], b[512];
    snprintf(a, sizeof a, "%s/alone1", TMP);
    snprintf(b, sizeof b, "%s/together1", TMP);
    ck_assert(!exists(a, "summary.json") && !exists(b, "summary.json"));
    char ma[65536], mb[65536];
    ck_assert_int_eq(qkv_test_sh(ma, sizeof ma, false, "sed -e 's/,\"tokens_per_s\".*//' %s/metrics.jsonl", a), 0);
    ck_assert_int_eq(qkv_test_sh(mb, sizeof mb, false, "sed -e 's/,\"tokens_per_s\".*//' %s/metrics.jsonl", b), 0);
    ck_assert_str_eq(ma, mb);
    for (int k = 0; k < 3; k += 2) {
        snprintf(a, sizeof a, "%s/alone%d", TMP, k);
        snprintf(b, sizeof b, "%s/together%d", TMP, k);
        same_run(a, b, "a run beside the failing one");
    }
}
END_TEST

/* ---- interrupted, resumed, extended ------------------------------------------------------------ */

/* a group stopped after 7 steps (between checkpoints), resumed, then extended to 40 steps: each
 * run equals the same run alone stopped, resumed and extended alike */
START_TEST(test_group_resume_and_extend) {
    char groups[2048] = "", cfg[2048], path[1024], out[8192];
    for (int k = 0; k < 3; k++) {
        config(cfg, sizeof cfg, "\"qkv\": \"shared\"", 8, 20, 20 + k, k ? 0.01 : 0.02);
        snprintf(path, sizeof path, "%s/in%d.json", TMP, k);
        qkv_test_write_file(path, cfg);
        ck_assert_int_eq(qkv_test_sh(out, sizeof out, true, "%s train %s --out %s/alone%d --threads 1 --quiet --stop-after 7",
                             qkv_test_bin(), path, TMP, k), 1);
        ck_assert_int_eq(qkv_test_sh(out, sizeof out, true, "%s train --resume %s/alone%d --threads 1 --quiet", qkv_test_bin(), TMP,
                             k), 0);
        ck_assert_int_eq(qkv_test_sh(out, sizeof out, true, "%s train --resume %s/alone%d --steps 40 --threads 1 --quiet",
                             qkv_test_bin(), TMP, k), 0);
        snprintf(path, sizeof path, "%s/together%d", TMP, k);
        ck_assert_int_eq(mkdir(path, 0755), 0);
        snprintf(path, sizeof path, "%s/together%d/config.json", TMP, k);
        qkv_test_write_file(path, cfg);
        size_t at = strlen(groups);
        snprintf(groups + at, sizeof groups - at, " --group %s/together%d", TMP, k);
    }
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, true, "%s train%s --threads 1 --quiet --stop-after 7", qkv_test_bin(), groups), 1);
    ck_assert_ptr_nonnull(strstr(out, "stopped at step 7"));
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, true, "%s train%s --threads 1 --quiet", qkv_test_bin(), groups), 0);
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, true, "%s train%s --steps 40 --threads 1 --quiet", qkv_test_bin(), groups), 0);
    for (int k = 0; k < 3; k++) {
        char a[512], b[512];
        snprintf(a, sizeof a, "%s/alone%d", TMP, k);
        snprintf(b, sizeof b, "%s/together%d", TMP, k);
        same_run(a, b, "stopped, resumed and extended");
    }
}
END_TEST

/* the options of issue 22 that train one run at a time (differential and talking-heads attention)
 * and Q = X: runs at 1 and 2 threads are the same bits (that their steady steps allocate
 * nothing: test_allocs.c) */
static const char *const ALONE_OPTIONS[] = {"\"diff\": true", "\"talking_heads\": true",
                                            "\"talking_heads\": true, \"causal\": false", "\"query_proj\": false"};

START_TEST(test_alone_options_deterministic) {
    const char *att = ALONE_OPTIONS[_i];
    char cfg[2048], path[1024], out[8192], a[1024], b[1024];
    config(cfg, sizeof cfg, att, 8, 20, 3, 0.01);
    snprintf(path, sizeof path, "%s/det.json", TMP);
    qkv_test_write_file(path, cfg);
    for (int threads = 1; threads <= 2; threads++)
        ck_assert_msg(qkv_test_sh(out, sizeof out, false, "%s train %s --out %s/det%d --threads %d --quiet",
                                  qkv_test_bin(), path, TMP, threads, threads) == 0, "%s", out);
    snprintf(a, sizeof a, "%s/det1", TMP);
    snprintf(b, sizeof b, "%s/det2", TMP);
    same_run(a, b, att);
}
END_TEST

/* differential and talking-heads attention are refused in a group, with the reason */
START_TEST(test_group_refuses_alone_options) {
    char cfg[2048], path[1024], out[8192];
    for (int k = 0; k < 2; k++) {
        config(cfg, sizeof cfg, "\"diff\": true", 8, 20, 1 + k, 0.01);
        snprintf(path, sizeof path, "%s/d%d", TMP, k);
        ck_assert_int_eq(mkdir(path, 0755), 0);
        snprintf(path, sizeof path, "%s/d%d/config.json", TMP, k);
        qkv_test_write_file(path, cfg);
    }
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, true, "%s train --group %s/d0 --group %s/d1 --quiet", qkv_test_bin(),
                                 TMP, TMP), 1);
    ck_assert_msg(strstr(out, "diff trains one run at a time (not batched runs"), "%s", out);
}
END_TEST

/* ---- what cannot train together -------------------------------------------------------------- */

START_TEST(test_group_refuses_mismatches) {
    char cfg[2048], path[1024], out[8192];
    for (int k = 0; k < 2; k++) {
        config(cfg, sizeof cfg, k ? "\"qkv\": \"shared\"" : "", 8, 20, 1, 0.01);
        snprintf(path, sizeof path, "%s/r%d", TMP, k);
        ck_assert_int_eq(mkdir(path, 0755), 0);
        snprintf(path, sizeof path, "%s/r%d/config.json", TMP, k);
        qkv_test_write_file(path, cfg);
    }
    /* another model: the message names the setting; nothing is written */
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, true, "%s train --group %s/r0 --group %s/r1 --quiet", qkv_test_bin(), TMP, TMP), 1);
    ck_assert_msg(strstr(out, "differ in more than train.seed and optim.lr") && strstr(out, "\"qkv\""), "%s", out);
    snprintf(path, sizeof path, "%s/r0", TMP);
    ck_assert(!exists(path, "metrics.jsonl"));
    /* runs at different steps */
    config(cfg, sizeof cfg, "", 8, 20, 2, 0.01);
    snprintf(path, sizeof path, "%s/r1/config.json", TMP);
    qkv_test_write_file(path, cfg);
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, true, "%s train --group %s/r0 --quiet --stop-after 3", qkv_test_bin(), TMP), 1);
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, true, "%s train --group %s/r0 --group %s/r1 --quiet", qkv_test_bin(), TMP, TMP), 1);
    ck_assert_msg(strstr(out, "stand at steps 3 and 0"), "%s", out);
    /* usage: a config, --out or --resume with --group */
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, true, "%s train %s/in.json --group %s/r0", qkv_test_bin(), TMP, TMP), 2);
    ck_assert_ptr_nonnull(strstr(out, "drop CONFIG"));
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, true, "%s train --group %s/r0 --group %s/r0", qkv_test_bin(), TMP, TMP), 2);
    ck_assert_ptr_nonnull(strstr(out, "given twice"));
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, true, "%s train --group %s/none", qkv_test_bin(), TMP), 2);
    ck_assert_ptr_nonnull(strstr(out, "config.json"));
}
END_TEST

Suite *group_suite(void) {
    Suite *s = suite_create("group");
    TCase *tc = tcase_create("group");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 240);
    tcase_add_loop_test(tc, test_group_equals_alone, 0, 2 * NCASES);
    tcase_add_test(tc, test_group_failing_run_stops_alone);
    tcase_add_test(tc, test_group_resume_and_extend);
    tcase_add_test(tc, test_group_refuses_mismatches);
    tcase_add_loop_test(tc, test_alone_options_deterministic, 0, 4);
    tcase_add_test(tc, test_group_refuses_alone_options);
    suite_add_tcase(s, tc);
    return s;
}
