/* A steady training step allocates nothing (README, "Memory"). The heap allocations of whole
 * `qkv train` processes are counted by the tests' allocation counter (tests/shim/alloc_count.c,
 * preloaded: testutil's qkv_test_allocs; the command itself does not count) and compared between
 * runs that differ in their steps only. Every call of the malloc family in the process counts
 * (qkv's, libc's, OpenBLAS's, cJSON's). A run also allocates at its start (model, arena, files)
 * and at its end (the evaluation, the checkpoint, and the summary, which reads every metric line
 * back), so the runs compared write the same number of metric lines, or the difference is what
 * reading them back costs:
 *   - 40 steps with a metric line every 5 and 80 steps with a line every 10 allocate equally:
 *     a step allocates nothing, at 1 and 2 threads (2: the pool's per-worker buffers), and for
 *     the attention options composed of ops;
 *     and with bf16 products (train.precision);
 *   - 80 steps with a line every 5 allocate more than 80 with a line every 10 by exactly what
 *     resuming the runs without their summary.json costs more (a run whose checkpoint has every
 *     step takes no step: it reads its lines back and writes its summary again; with the summary
 *     it would be finished, and resuming it does nothing): writing a metric line allocates
 *     nothing.
 * A sanitizer's build has its own malloc and nothing to count: these tests pass there without
 * checking anything. */
#include <check.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "probe.h"
#include "suites.h"
#include "tensor/buildinfo.h"
#include "testutil.h"

static char TMP[256];

static void setup(void) { qkv_test_mkdtemp(TMP, sizeof TMP, "allocs"); }
static void teardown(void) { qkv_test_rmtree(TMP); }

/* the heap allocations of one `qkv train` process: the recall run (2 layers of d_model 16, the
 * attention keys given, seed 1 + k for run k) at `steps` steps with a metric line every `every`,
 * evaluated once, at the end, in TMP/TAG0; -1 when the build cannot count */
static long long train_allocs_with(const char *attention, const char *train, int threads, int steps, int every,
                                   const char *tag) {
    char cfg[2048], path[1024], args[4096] = "";
    for (int k = 0; k < 1; k++) {
        snprintf(cfg, sizeof cfg,
                 "{\"model\": {\"d_model\": 16, \"heads\": 2, \"layers\": 2, \"d_ff\": 32, \"attention\": {%s}},\n"
                 " \"task\": {\"name\": \"recall\", \"pairs\": 3, \"keys\": 8, \"values\": 8},\n"
                 " \"train\": {\"steps\": %d, \"batch\": 8, \"seed\": %d, \"eval_every\": 0, \"log_every\": %d,\n"
                 "           \"eval_examples\": 30%s},\n"
                 " \"optim\": {\"name\": \"adam\", \"lr\": 0.01, \"clip\": 1}}\n",
                 attention, steps, 1 + k, every, train);
        snprintf(path, sizeof path, "%s/%s%d", TMP, tag, k);
        ck_assert_int_eq(mkdir(path, 0755), 0);
        size_t at = strlen(args);
        snprintf(path, sizeof path, "%s/%s.json", TMP, tag);
        snprintf(args + at, sizeof args - at, " %s --out %s/%s0 --force", path, TMP, tag);
        qkv_test_write_file(path, cfg);
    }
    return qkv_test_allocs("%s train%s --threads %d --quiet > /dev/null", qkv_test_bin(), args, threads);
}

static long long train_allocs(const char *attention, int threads, int steps, int every, const char *tag) {
    return train_allocs_with(attention, "", threads, steps, every, tag);
}

/* the heap allocations of resuming the run TMP/TAG0 without its summary.json (no step: the summary
 * again; a run with its summary is finished, and resuming it does nothing) */
static long long resume_allocs(int threads, const char *tag) {
    char summary[600];
    snprintf(summary, sizeof summary, "%s/%s0/summary.json", TMP, tag);
    ck_assert_int_eq(unlink(summary), 0);
    return qkv_test_allocs("%s train --resume %s/%s0 --threads %d --quiet > /dev/null", qkv_test_bin(), TMP, tag,
                           threads);
}

START_TEST(test_steady_step_allocates_nothing) {
    int threads = 1 + _i;
    long long a = train_allocs("", threads, 40, 5, "short"), b = train_allocs("", threads, 80, 10, "long");
    if (a < 0 || b < 0) return; /* a sanitizer's malloc: nothing to count */
    ck_assert_int_gt(a, 0);
    ck_assert_msg(a == b, "%d threads: %lld heap allocations at 40 steps, %lld at 80 (8 metric lines each)", threads, a,
                  b);
}
END_TEST

START_TEST(test_metric_line_allocates_nothing) {
    int threads = 1 + _i;
    long long few = train_allocs("", threads, 80, 10, "few"), many = train_allocs("", threads, 80, 5, "many");
    if (few < 0 || many < 0) return; /* a sanitizer's malloc: nothing to count */
    long long read_few = resume_allocs(threads, "few"), read_many = resume_allocs(threads, "many");
    ck_assert_msg(many > few && read_many > read_few, "the comparison sees no reading back: %lld, %lld; %lld, %lld", few,
                  many, read_few, read_many);
    ck_assert_msg(many - few == read_many - read_few,
                  "%d threads: 8 more metric lines cost %lld heap allocations, reading them back %lld", threads,
                  many - few, read_many - read_few);
}
END_TEST

/* the attention options composed of ops (differential and talking-heads attention) and Q = X */
static const char *const ALONE_OPTIONS[] = {"\"diff\": true", "\"talking_heads\": true",
                                            "\"talking_heads\": true, \"causal\": false", "\"query_proj\": false"};

START_TEST(test_alone_options_steady) {
    const char *att = ALONE_OPTIONS[_i];
    for (int threads = 1; threads <= 2; threads++) {
        char t1[16], t2[16];
        snprintf(t1, sizeof t1, "s%d", threads);
        snprintf(t2, sizeof t2, "l%d", threads);
        long long a = train_allocs(att, threads, 40, 5, t1), b = train_allocs(att, threads, 80, 10, t2);
        if (a < 0 || b < 0) return; /* a sanitizer's malloc: nothing to count */
        ck_assert_msg(a == b, "%s, %d threads: %lld heap allocations at 40 steps, %lld at 80", att, threads, a, b);
    }
}
END_TEST

/* bf16 products: their conversion buffers come from the step's arena */
START_TEST(test_bf16_steady) {
    qkv_err why;
    if (!qkv_bf16_available(&why)) {
        qkv_test_skip("allocs: a steady bf16 step", why.msg);
        return;
    }
    for (int threads = 1; threads <= 2; threads++) {
        char t1[16], t2[16];
        snprintf(t1, sizeof t1, "bs%d", threads);
        snprintf(t2, sizeof t2, "bl%d", threads);
        const char *bf16 = ", \"precision\": \"bf16\"";
        long long a = train_allocs_with("", bf16, threads, 40, 5, t1), b = train_allocs_with("", bf16, threads, 80, 10, t2);
        if (a < 0 || b < 0) return; /* a sanitizer's malloc: nothing to count */
        ck_assert_msg(a == b, "bf16, %d threads: %lld heap allocations at 40 steps, %lld at 80", threads, a, b);
    }
}
END_TEST

Suite *allocs_suite(void) {
    Suite *s = suite_create("allocs");
    TCase *tc = tcase_create("allocs");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, test_steady_step_allocates_nothing, 0, 2);
    tcase_add_loop_test(tc, test_metric_line_allocates_nothing, 0, 2);
    tcase_add_loop_test(tc, test_alone_options_steady, 0, 4);
    tcase_add_test(tc, test_bf16_steady);
    suite_add_tcase(s, tc);
    return s;
}
