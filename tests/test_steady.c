/* A training step in steady state: it allocates nothing on the heap (runs of 40 and 80 steps
 * allocate equally), for the default attention and for the options whose attention is composed
 * of ops (differential and talking-heads attention, Q = X), at 1 and 2 threads; and runs of those
 * options at 1 and 2 threads end the same bits. */
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

/* ---- a steady step allocates nothing -------------------------------------------------------- */

/* the heap allocations of `qkv train` (QKV_COUNT_ALLOCS=1) of a run at `steps` steps; -1 when the
 * build cannot count */
static long long train_allocs_of(const char *attention, int threads, int steps, const char *tag) {
    char cfg[2048], path[1024], out[8192];
    config(cfg, sizeof cfg, attention, steps, 1, 0); /* one evaluation, at the end */
    snprintf(path, sizeof path, "%s/%s0", TMP, tag);
    ck_assert_int_eq(mkdir(path, 0755), 0);
    snprintf(path, sizeof path, "%s/%s.json", TMP, tag);
    qkv_test_write_file(path, cfg);
    ck_assert_msg(qkv_test_sh(out, sizeof out, false,
                              "QKV_COUNT_ALLOCS=1 %s train %s --out %s/%s0 --force --threads %d --quiet 2>&1 > /dev/null",
                              qkv_test_bin(), path, TMP, tag, threads) == 0, "%s", out);
    if (strstr(out, "not counted")) return -1;
    const char *p = strstr(out, "qkv: ");
    ck_assert_msg(p && strstr(p, " heap allocations"), "%s", out);
    return atoll(p + 5);
}

/* runs of 40 and of 80 steps (metric lines every 5, one evaluation and checkpoint at the end)
 * allocate equally: a training step allocates nothing, its metric lines included; at 1 and 2
 * threads (2: the per-worker replicas and gradient slots). (An evaluation allocates its batches,
 * and the checkpoint written with it its file: a fixed count per evaluation, docs/performance.md.) */
START_TEST(test_steady_steps_allocate_nothing) {
    int threads = 1 + _i;
    long long a = train_allocs_of("", threads, 40, "short"), b = train_allocs_of("", threads, 80, "long");
    if (a < 0 || b < 0) return; /* a sanitizer's malloc: nothing to count */
    ck_assert_int_gt(a, 0);
    ck_assert_msg(a == b, "%d threads: %lld heap allocations at 40 steps, %lld at 80", threads, a, b);
}
END_TEST

/* the options whose attention is composed of ops (differential and talking-heads attention) and
 * Q = X: a steady step allocates nothing at 1 and 2 threads, and runs at 1 and 2 threads are the
 * same bits */
static const char *const COMPOSED_OPTIONS[] = {"\"diff\": true", "\"talking_heads\": true",
                                               "\"talking_heads\": true, \"causal\": false", "\"query_proj\": false"};

START_TEST(test_composed_options_steady_and_deterministic) {
    const char *att = COMPOSED_OPTIONS[_i];
    for (int threads = 1; threads <= 2; threads++) {
        char t1[16], t2[16];
        snprintf(t1, sizeof t1, "s%d", threads);
        snprintf(t2, sizeof t2, "l%d", threads);
        long long a = train_allocs_of(att, threads, 40, t1), b = train_allocs_of(att, threads, 80, t2);
        if (a < 0 || b < 0) break; /* a sanitizer's malloc: nothing to count */
        ck_assert_msg(a == b, "%s, %d threads: %lld heap allocations at 40 steps, %lld at 80", att, threads, a, b);
    }
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
    tcase_add_loop_test(tc, test_steady_steps_allocate_nothing, 0, 2);
    tcase_add_loop_test(tc, test_composed_options_steady_and_deterministic, 0, 4);
    suite_add_tcase(s, tc);
    return s;
}
