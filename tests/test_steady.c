/* Runs of the options whose attention is composed of ops (differential and talking-heads
 * attention, Q = X) at 1 and 2 threads end the same bits. (That a steady step allocates nothing:
 * test_allocs.c.) */
#define _GNU_SOURCE
#include <check.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/safetensors.h"
#include "suites.h"
#include "testutil.h"

static char TMP[256];

static void setup(void) { qkv_test_mkdtemp(TMP, sizeof TMP, "steady"); }
static void teardown(void) { qkv_test_rmtree(TMP); }

/* a small recall run of batch 8 (8 micro-batches of 1 example): its config with the attention
 * keys and the seed, Adam at 0.01 with clipping, evaluated every eval_every steps (0: at the end
 * only) */
static void config(char *buf, size_t n, const char *attention, int steps, long long seed, int eval_every) {
    snprintf(buf, n,
             "{\"model\": {\"d_model\": 16, \"heads\": 2, \"layers\": 2, \"d_ff\": 32, \"attention\": {%s}},\n"
             " \"task\": {\"name\": \"recall\", \"pairs\": 3, \"keys\": 8, \"values\": 8},\n"
             " \"train\": {\"steps\": %d, \"batch\": 8, \"seed\": %lld, \"eval_every\": %d, \"log_every\": 5,\n"
             "           \"eval_examples\": 30},\n"
             " \"optim\": {\"name\": \"adam\", \"lr\": 0.01, \"clip\": 1}}\n",
             attention, steps, seed, eval_every);
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
        char path[1024];
        qkv_err err;
        snprintf(path, sizeof path, "%s/%s", dir, files[f]);
        qkv_safetensors *st;
        ck_assert_msg(qkv_st_read(path, &st, &err) == 0, "%s", err.msg);
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

/* the options whose attention is composed of ops (differential and talking-heads attention) and
 * Q = X: runs at 1 and 2 threads are the same bits (that their steady steps allocate nothing:
 * test_allocs.c) */
static const char *const COMPOSED_OPTIONS[] = {"\"diff\": true", "\"talking_heads\": true",
                                               "\"talking_heads\": true, \"causal\": false", "\"query_proj\": false"};

START_TEST(test_composed_options_deterministic) {
    const char *att = COMPOSED_OPTIONS[_i];
    char cfg[2048], path[1024], out[8192], a[1024], b[1024];
    config(cfg, sizeof cfg, att, 20, 3, 10);
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

Suite *steady_suite(void) {
    Suite *s = suite_create("steady");
    TCase *tc = tcase_create("steady");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 240);
    tcase_add_loop_test(tc, test_composed_options_deterministic, 0, 4);
    suite_add_tcase(s, tc);
    return s;
}
