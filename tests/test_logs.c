/* What the commands write to a stderr that is not a terminal (a Slurm log, CI, nohup; here a
 * pipe), and that the numbers they print read back to the bit (docs/reliability.md, "Logs"):
 * qkv ablate writes a line per run started and per run finished, and a summary at most once per
 * QKV_LOG_INTERVAL (60 s); qkv train its first evaluation, its last, and at most one a minute
 * between them; qkv eval's loss, parsed, is summary.json's. The sweeps here take seconds, so no
 * interval passes and the lines are counted exactly (a slow machine that takes longer is allowed
 * one summary per minute it took). */
#include <check.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "io/fileio.h"
#include "probe.h"
#include "suites.h"
#include "tensor/bf16.h"
#include "testutil.h"

static char TMP[256];

static void setup(void) { qkv_test_mkdtemp(TMP, sizeof TMP, "logs"); }
static void teardown(void) { qkv_test_rmtree(TMP); }

/* a small recall model: a run of a few hundred steps takes about a second */
#define BASE                                                                                              \
    "{\"model\": {\"d_model\": 16, \"heads\": 2, \"layers\": 2, \"d_ff\": 32},\n"                       \
    " \"task\": {\"name\": \"recall\", \"pairs\": 3, \"keys\": 8, \"values\": 8},\n"                     \
    " \"train\": {\"steps\": 50, \"batch\": 16, \"eval_every\": 25, \"eval_examples\": 64},\n"          \
    " \"optim\": {\"lr\": 0.01, \"clip\": 1}}\n"

/* a text run of bpe pieces (a vocabulary trained first), 3000 steps evaluated only at the end: about
 * a second */
#define TOKENS                                                                                            \
    "{\"model\": {\"d_model\": 16, \"heads\": 2, \"layers\": 1, \"d_ff\": 32},\n"                        \
    " \"task\": {\"name\": \"text\", \"path\": \"/usr/share/common-licenses/GPL-3\", \"seq_len\": 16,\n"     \
    "           \"tokenizer\": \"bpe\", \"pieces\": 400},\n"                                               \
    " \"train\": {\"steps\": 3000, \"batch\": 4, \"eval_every\": 0, \"eval_examples\": 8}}\n"

/* 2 variants x 2 seeds, some runs extended (up to 200 steps) */
#define SWEEP                                                                                           \
    "{\"base\": \"base.json\", \"threshold\": 0.6, \"max_steps\": 200,\n"                              \
    " \"variants\": [{\"name\": \"full\"}, {\"name\": \"identity\", \"set\": [\"model.attention.qkv=identity\"]}],\n" \
    " \"seeds\": [0, 1]}\n"

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* lines of text that start with prefix */
static int count_lines(const char *text, const char *prefix) {
    int n = 0;
    size_t k = strlen(prefix);
    for (const char *line = text; *line;) {
        if (!strncmp(line, prefix, k)) n++;
        const char *nl = strchr(line, '\n');
        if (!nl) break;
        line = nl + 1;
    }
    return n;
}

/* every line of text */
static int all_lines(const char *text) {
    int n = 0;
    for (const char *c = text; *c; c++) n += *c == '\n';
    return n;
}

/* the summary lines a run of `seconds` may write: one per whole interval it lasted */
static int summaries_allowed(double seconds) { return (int)(seconds / 60.0); }

/* the lines a training run of `seconds` may write between its first and last (heartbeat.h): one
 * per 10 s in its first minute, one per minute after */
static int train_lines_allowed(double seconds) {
    return seconds < 60 ? (int)(seconds / 10) : 6 + (int)((seconds - 60) / 60);
}

/* A sweep whose stderr is a pipe: for every run one "starting" line, for every session one
 * start (starting or extending) and one "finished" line, no failure, and beside them only the
 * sweep's first line and the report's two; no "\r" (no line rewritten in place) */
START_TEST(test_ablate_pipe_lines) {
    char path[600], out[65536];
    snprintf(path, sizeof path, "%s/base.json", TMP);
    qkv_test_write_file(path, BASE);
    snprintf(path, sizeof path, "%s/abl.json", TMP);
    qkv_test_write_file(path, SWEEP);
    double t = now();
    /* stderr into the pipe, stdout (the table) discarded */
    int rc = qkv_test_sh(out, sizeof out, false, "%s ablate %s/abl.json --out %s/abl --jobs 2 2>&1 >/dev/null",
                         qkv_test_bin(), TMP, TMP);
    double took = now() - t;
    ck_assert_msg(rc == 0, "exit %d: %s", rc, out);
    ck_assert_msg(!strchr(out, '\r') && !strstr(out, "\033["), "a terminal's line in a pipe:\n%s", out);
    const char *runs[] = {"full/seed0", "full/seed1", "identity/seed0", "identity/seed1"};
    for (int i = 0; i < 4; i++) {
        char want[128];
        snprintf(want, sizeof want, "qkv ablate: starting %s (50 steps)", runs[i]);
        ck_assert_msg(count_lines(out, want) == 1, "not one '%s' line in:\n%s", want, out);
    }
    int started = count_lines(out, "qkv ablate: starting "), extended = count_lines(out, "qkv ablate: extending ");
    int finished = count_lines(out, "qkv ablate: finished "), summaries = count_lines(out, "qkv ablate: runs ");
    ck_assert_int_eq(started, 4);
    ck_assert_msg(finished == started + extended, "%d sessions started, %d finished:\n%s", started + extended,
                  finished, out);
    ck_assert_int_eq(count_lines(out, "qkv ablate: run "), 0); /* "run DIR failed" */
    ck_assert_msg(summaries <= summaries_allowed(took), "%d summary lines in %.0f s:\n%s", summaries, took, out);
    ck_assert_int_eq(count_lines(out, "qkv ablate: 2 variants x 1 learning rate x 2 seeds = 4 runs"), 1);
    ck_assert_int_eq(count_lines(out, "qkv ablate: aggregating"), 1);
    ck_assert_int_eq(count_lines(out, "qkv ablate: report in "), 1);
    ck_assert_msg(all_lines(out) == 3 + started + extended + finished + summaries, "other lines in:\n%s", out);
    /* each finished line says where its run got: the same run's summary.json steps */
    char want[128];
    snprintf(want, sizeof want, "qkv ablate: finished full/seed0 (");
    const char *f = strstr(out, want);
    ck_assert_ptr_nonnull(f);
    long long steps = -1;
    ck_assert_int_eq(sscanf(f + strlen(want), "%lld steps", &steps), 1);
    snprintf(path, sizeof path, "%s/abl/runs/full/seed0/summary.json", TMP);
    qkv_err err;
    size_t len;
    char *sum = qkv__read_file(path, &len, &err);
    ck_assert_msg(sum != NULL, "%s", err.msg);
    /* the first finished line of the run is its first session; the last is its final one */
    const char *last = f;
    for (const char *g = f; (g = strstr(g + 1, want));) last = g;
    ck_assert_int_eq(sscanf(last + strlen(want), "%lld steps", &steps), 1);
    ck_assert_int_eq(steps, (long long)qkv_test_json_num(sum, "steps"));
    free(sum);
    /* a worker of a share (as a Slurm array task is): the same lines for its own runs */
    rc = qkv_test_sh(out, sizeof out, false, "%s ablate %s/abl.json --out %s/part --shard 1/2 --jobs 1 2>&1 >/dev/null",
                     qkv_test_bin(), TMP, TMP);
    ck_assert_msg(rc == 0, "exit %d: %s", rc, out);
    ck_assert_msg(count_lines(out, "qkv ablate: starting full/seed1 (50 steps)") == 1 &&
                      count_lines(out, "qkv ablate: starting identity/seed1 (50 steps)") == 1 &&
                      count_lines(out, "qkv ablate: starting ") == 2, "%s", out);
    ck_assert_int_eq(count_lines(out, "qkv ablate: finished "),
                     count_lines(out, "qkv ablate: starting ") + count_lines(out, "qkv ablate: extending "));
}
END_TEST

/* qkv train with eval_every 1 (an evaluation every step), stderr a pipe: the first evaluation's
 * line and the last step's, not one per evaluation (and between them one per 10 s of the first
 * minute, were the machine so slow) */
START_TEST(test_train_pipe_lines) {
    char path[600], out[65536];
    snprintf(path, sizeof path, "%s/base.json", TMP);
    qkv_test_write_file(path, BASE);
    double t = now();
    int rc = qkv_test_sh(out, sizeof out, false,
                         "%s train %s/base.json --out %s/run --threads 1 --set train.steps=150 --set train.eval_every=1 "
                         "2>&1 >/dev/null", qkv_test_bin(), TMP, TMP);
    double took = now() - t;
    ck_assert_msg(rc == 0, "exit %d: %s", rc, out);
    int lines = count_lines(out, "step ");
    ck_assert_msg(!strchr(out, '\r'), "a terminal's line in a pipe:\n%s", out);
    ck_assert_msg(count_lines(out, "step 1/150 ") == 1 && count_lines(out, "step 150/150 ") == 1, "%s", out);
    int beats = count_lines(out, "qkv train: ") - 2; /* heartbeat.h's, but the run directory's and accuracy lines */
    ck_assert_msg(lines + beats <= 2 + train_lines_allowed(took), "%d progress lines in %.0f s:\n%.2000s", lines, took,
                  out);
    ck_assert_int_eq(count_lines(out, "qkv train: run directory "), 1);
    ck_assert_int_eq(count_lines(out, "qkv train: accuracy "), 1); /* recall's, beside its floors */
    ck_assert_int_eq(all_lines(out), lines + beats + 2);
    /* the metrics still have every evaluation: the log is what was cut, not the record */
    qkv_err err;
    size_t len;
    snprintf(path, sizeof path, "%s/run/metrics.jsonl", TMP);
    char *m = qkv__read_file(path, &len, &err);
    ck_assert_msg(m != NULL, "%s", err.msg);
    int evals = 0;
    for (const char *p = m; (p = strstr(p, "\"eval_loss\":")); p++) evals++;
    ck_assert_int_eq(evals, 150);
    free(m);
}
END_TEST

/* Long silent stretches get a line (heartbeat.h), at least every QKV_PROGRESS_INTERVAL seconds (10
 * s in a command's first minute; here 0.02 s, so a run of a second shows the rule): a token run's
 * vocabulary training says so before its first step, a run without evaluations between its first
 * and last step writes lines of the step and loss, qkv bench says what it is timing, and --quiet
 * stays quiet */
START_TEST(test_silent_stretches_get_lines) {
    char path[600], out[65536];
    snprintf(path, sizeof path, "%s/tok.json", TMP);
    qkv_test_write_file(path, TOKENS);
    int rc = qkv_test_sh(out, sizeof out, false, "QKV_PROGRESS_INTERVAL=0.02 %s train %s --out %s/tok --threads 1 2>&1 "
                         ">/dev/null", qkv_test_bin(), path, TMP);
    ck_assert_msg(rc == 0, "exit %d: %s", rc, out);
    ck_assert_msg(!strchr(out, '\r'), "a terminal's line in a pipe:\n%s", out);
    const char *vocab = strstr(out, "qkv train: training the vocabulary (400 bpe pieces) on the training text ("),
               *first = strstr(out, "step ");
    ck_assert_msg(vocab && first && vocab < first, "no line while the vocabulary trained:\n%.3000s", out);
    /* between the first and the last step, lines without an evaluation (there is none) */
    int between = count_lines(out, "step ") - count_lines(out, "step 3000/3000 ");
    ck_assert_msg(between >= 2 && strstr(out, " tok/s ") && strstr(out, "elapsed"), "%d lines:\n%.3000s", between, out);
    rc = qkv_test_sh(out, sizeof out, false, "QKV_PROGRESS_INTERVAL=0.02 %s train %s --out %s/tokq --threads 1 --quiet "
                     "2>&1 >/dev/null", qkv_test_bin(), path, TMP);
    ck_assert_int_eq(rc, 0);
    ck_assert_str_eq(out, "");
    /* qkv bench: what it times, on stderr; its table on stdout as before */
    rc = qkv_test_sh(out, sizeof out, false, "QKV_PROGRESS_INTERVAL=0.02 %s bench --size tiny --steps 20 2>&1 >/dev/null",
                     qkv_test_bin());
    ck_assert_msg(rc == 0 && strstr(out, "qkv bench: timing tiny ("), "exit %d: %s", rc, out);
    qkv_err why; /* --precision both: each child of a row (silent for minutes at the larger sizes) */
    if (qkv_bf16_available(&why)) {
        rc = qkv_test_sh(out, sizeof out, false, "QKV_PROGRESS_INTERVAL=0.02 %s bench --size tiny --steps 20 "
                         "--precision both --rounds 1 2>&1 >/dev/null", qkv_test_bin());
        ck_assert_msg(rc == 0 && strstr(out, "qkv bench: timing tiny in f32, round 1 of 1 (") &&
                          strstr(out, "qkv bench: timing tiny in bf16, round 1 of 1 ("), "exit %d: %s", rc, out);
    } else qkv_test_skip("qkv bench --precision both's lines", why.msg);
    /* on a terminal (a pseudo-terminal of util-linux's script, where there is one): a live line,
     * at once, rewritten in place and cleared before the step's line */
    if (qkv_test_sh(out, sizeof out, true, "script -qec true /dev/null") != 0) {
        qkv_test_skip("heartbeat on a terminal", "no pseudo-terminal here (util-linux's script cannot open one)");
        return;
    }
    rc = qkv_test_sh(out, sizeof out, true, "script -qec '%s train %s --out %s/tokt --threads 1 --set train.steps=50 "
                     "--set train.log_every=50' /dev/null", qkv_test_bin(), path, TMP);
    ck_assert_msg(rc == 0 && strstr(out, "qkv train: training the vocabulary (400 bpe pieces) on the training text"
                                         "\r\033[K") && strstr(out, "\r\033[Kstep 50/50 "),
                  "exit %d: %.3000s", rc, out);
}
END_TEST

/* qkv eval's numbers, parsed back, are summary.json's to the bit (both %.9g of the same
 * evaluation of the same weights, in the products' precision the run trained with: _i 0
 * float32, 1 bf16, skipped by name where this machine has no bf16 products), and so is qkv
 * train's summary line on stdout */
START_TEST(test_eval_loss_round_trips) {
    char path[600], out[4096], eout[1024];
    qkv_err why;
    const char *precision = _i ? "bf16" : "f32";
    if (_i && !qkv_bf16_available(&why)) {
        qkv_test_skip("qkv eval of a bf16 run", why.msg);
        return;
    }
    snprintf(path, sizeof path, "%s/base.json", TMP);
    qkv_test_write_file(path, BASE);
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, false, "%s train %s/base.json --out %s/run --threads 1 --quiet "
                                 "--set train.precision=%s", qkv_test_bin(), TMP, TMP, precision), 0);
    ck_assert_int_eq(qkv_test_sh(eout, sizeof eout, false,
                                 "%s eval %s/run/config.json --checkpoint %s/run/model.safetensors --threads 1",
                                 qkv_test_bin(), TMP, TMP), 0);
    qkv_err err;
    size_t len;
    snprintf(path, sizeof path, "%s/run/summary.json", TMP);
    char *sum = qkv__read_file(path, &len, &err);
    ck_assert_msg(sum != NULL, "%s", err.msg);
    double eval_loss = qkv_test_json_num(eout, "loss"), file_loss = qkv_test_json_num(sum, "eval_loss");
    double eval_acc = qkv_test_json_num(eout, "accuracy"), file_acc = qkv_test_json_num(sum, "eval_accuracy");
    ck_assert_msg(isfinite(eval_loss) && eval_loss > 0, "%s", eout);
    ck_assert_msg(!memcmp(&eval_loss, &file_loss, sizeof eval_loss), "qkv eval's loss %.17g (%s) is not summary.json's %.17g",
                  eval_loss, eout, file_loss);
    ck_assert_msg(!memcmp(&eval_acc, &file_acc, sizeof eval_acc), "qkv eval's accuracy %.17g is not summary.json's %.17g",
                  eval_acc, file_acc);
    /* and a float parsed from it is the float the loss rounds to (%.9g round-trips a float) */
    ck_assert((float)eval_loss == (float)file_loss);
    double line_loss = qkv_test_json_num(out, "eval_loss"), line_train = qkv_test_json_num(out, "train_loss");
    double file_train = qkv_test_json_num(sum, "train_loss");
    ck_assert_msg(!memcmp(&line_loss, &file_loss, sizeof line_loss) && !memcmp(&line_train, &file_train, sizeof line_train),
                  "qkv train's line %s is not summary.json's %s", out, sum);
    free(sum);
}
END_TEST

Suite *logs_suite(void) {
    Suite *s = suite_create("logs");
    TCase *tc = tcase_create("logs");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_ablate_pipe_lines);
    tcase_add_test(tc, test_train_pipe_lines);
    tcase_add_loop_test(tc, test_eval_loss_round_trips, 0, 2);
    tcase_add_test(tc, test_silent_stretches_get_lines);
    suite_add_tcase(s, tc);
    return s;
}
