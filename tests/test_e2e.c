/* End to end: the qkv command as a user runs it. Loss falls and tasks reach their
 * thresholds, resume equals an uninterrupted run, runs are deterministic, every shipped
 * config validates, gradcheck passes for every variant, usage errors exit 2. */
#define _GNU_SOURCE
#include <check.h>
#include <math.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "io/safetensors.h"
#include "tensor/buildinfo.h"
#include "probe.h"
#include "suites.h"
#include "testutil.h"

static char TMP[256];

static void setup(void) { qkv_test_mkdtemp(TMP, sizeof TMP, "e2e"); }
static void teardown(void) { qkv_test_rmtree(TMP); }

/* a small recall model that learns in a few seconds */
static const char *SMALL_RECALL =
    "{\"model\": {\"d_model\": 32, \"heads\": 2, \"layers\": 2, \"d_ff\": 64},\n"
    " \"task\": {\"name\": \"recall\", \"pairs\": 4, \"keys\": 16, \"values\": 16},\n"
    " \"train\": {\"steps\": 600, \"batch\": 32, \"seed\": 1, \"eval_every\": 200, \"eval_examples\": 400},\n"
    " \"optim\": {\"name\": \"adam\", \"lr\": 0.003, \"clip\": 1.0}}\n";

START_TEST(test_help_and_version) {
    char out[8192];
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, false, "%s --help", qkv_test_bin()), 0);
    ck_assert_ptr_nonnull(strstr(out, "train"));
    ck_assert_ptr_nonnull(strstr(out, "gradcheck"));
    ck_assert_ptr_nonnull(strstr(out, "summarize"));
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, false, "%s --version", qkv_test_bin()), 0);
    ck_assert_ptr_nonnull(strstr(out, "qkv "));
    const char *cmds[] = {"train", "eval", "sample", "params", "gradcheck", "summarize"};
    for (int i = 0; i < 6; i++) {
        ck_assert_int_eq(qkv_test_sh(out, sizeof out, false, "%s %s --help", qkv_test_bin(), cmds[i]), 0);
        ck_assert_ptr_nonnull(strstr(out, "usage: qkv"));
    }
}
END_TEST

START_TEST(test_usage_errors_exit_2) {
    char out[4096];
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, true, "%s frobnicate", qkv_test_bin()), 2);
    ck_assert_ptr_nonnull(strstr(out, "unknown command"));
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, true, "%s train ../configs/recall.json --bogus", qkv_test_bin()), 2);
    ck_assert_ptr_nonnull(strstr(out, "--bogus"));
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, true, "%s train ../configs/recall.json --set model.attention.qvk=1", qkv_test_bin()), 2);
    ck_assert_ptr_nonnull(strstr(out, "did you mean"));
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, true, "%s train %s/nope.json", qkv_test_bin(), TMP), 2);
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, true, "%s params ../configs/recall.json --set model.heads=3", qkv_test_bin()), 2);
    ck_assert_ptr_nonnull(strstr(out, "does not divide"));
}
END_TEST

START_TEST(test_shipped_configs_validate) {
    const char *names[] = {"recall", "copy", "reverse", "sort", "induction", "text", "file",
                           "fuzzy_recall", "noisy_recall", "selective_copy"};
    char out[8192];
    for (int i = 0; i < 10; i++) {
        int rc = qkv_test_sh(out, sizeof out, true, "cd .. && %s%s params configs/%s.json",
                     qkv_test_bin()[0] == '/' ? "" : "tests/", qkv_test_bin(), names[i]);
        ck_assert_msg(rc == 0, "configs/%s.json: %s", names[i], out);
        ck_assert_ptr_nonnull(strstr(out, "total"));
    }
}
END_TEST

/* every shipped ablation (configs/ablate-*.json, the study's configs/study/{base,quick,extra,full}
 * ablations) loads: its base config, variants, sets and keys are valid (qkv ablate --status reads
 * them all and writes nothing) */
START_TEST(test_shipped_ablations_validate) {
    char out[8192];
    int rc = qkv_test_sh(out, sizeof out, true,
                 "cd .. && n=0 && for f in configs/ablate-*.json configs/study/quick/*.json configs/study/extra/*.json "
                 "configs/study/full/*.json; do "
                 "%s%s ablate \"$f\" --out %s/never-made --status > /dev/null 2> %s/status.err || "
                 "{ echo \"$f: $(tail -n 1 %s/status.err)\"; exit 1; }; n=$((n + 1)); done; echo \"$n ablations\"",
                 qkv_test_bin()[0] == '/' ? "" : "tests/", qkv_test_bin(), TMP, TMP, TMP);
    ck_assert_msg(rc == 0, "%s", out);
    int n = atoi(out);
    ck_assert_msg(n >= 4 + 6 + 1 + 9, "%s", out); /* the shipped four, the quick study's six and its
                                                  * extra one, the full study's nine */
    char path[512];
    snprintf(path, sizeof path, "%s/never-made", TMP);
    ck_assert_int_ne(access(path, F_OK), 0);
}
END_TEST

START_TEST(test_recall_learns) {
    char cfg[512], out[4096];
    snprintf(cfg, sizeof cfg, "%s/recall.json", TMP);
    qkv_test_write_file(cfg, SMALL_RECALL);
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, false, "%s train %s --out %s/run --threads 1 --quiet", qkv_test_bin(), cfg, TMP), 0);
    ck_assert_msg(qkv_test_json_num(out, "eval_accuracy") >= 0.99, "%s", out);
    /* the loss fell: first logged loss vs last */
    char path[512], text[65536];
    snprintf(path, sizeof path, "%s/run/metrics.jsonl", TMP);
    FILE *f = fopen(path, "r");
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = 0;
    double first = qkv_test_json_num(text, "loss"), last = qkv_test_json_num(strrchr(text, '{'), "loss");
    ck_assert_msg(last < 0.1 * first, "loss %g -> %g", first, last);
    /* the run directory has what the README promises */
    const char *files[] = {"config.json", "metrics.jsonl", "model.safetensors", "checkpoint.safetensors", "summary.json"};
    for (int i = 0; i < 5; i++) {
        snprintf(path, sizeof path, "%s/run/%s", TMP, files[i]);
        ck_assert_msg(access(path, R_OK) == 0, "missing %s", files[i]);
    }
    /* qkv eval on the saved model gives the summary's accuracy */
    char eout[1024];
    ck_assert_int_eq(qkv_test_sh(eout, sizeof eout, false, "%s eval %s/run/config.json --checkpoint %s/run/model.safetensors --threads 1",
                         qkv_test_bin(), TMP, TMP), 0);
    ck_assert_double_eq_tol(qkv_test_json_num(eout, "accuracy"), qkv_test_json_num(out, "eval_accuracy"), 1e-6);
}
END_TEST

START_TEST(test_copy_learns) {
    char cfg[512], out[4096];
    snprintf(cfg, sizeof cfg, "%s/copy.json", TMP);
    qkv_test_write_file(cfg, "{\"model\": {\"d_model\": 32, \"heads\": 2, \"layers\": 2, \"d_ff\": 64},\n"
                    " \"task\": {\"name\": \"copy\", \"length\": 5, \"symbols\": 8},\n"
                    " \"train\": {\"steps\": 500, \"batch\": 32, \"eval_every\": 250, \"eval_examples\": 400},\n"
                    " \"optim\": {\"lr\": 0.003, \"clip\": 1.0}}\n");
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, false, "%s train %s --out %s/run --threads 1 --quiet", qkv_test_bin(), cfg, TMP), 0);
    ck_assert_msg(qkv_test_json_num(out, "eval_accuracy") >= 0.99, "%s", out);
}
END_TEST

/* metrics without the timing fields (tokens_per_s, elapsed), for comparisons */
static void metrics_sans_timing(const char *dir, char *buf, size_t len) {
    char cmd[512];
    snprintf(cmd, sizeof cmd, "sed -e 's/,\"tokens_per_s\".*//' %s/metrics.jsonl", dir);
    ck_assert_int_eq(qkv_test_sh(buf, len, false, "%s", cmd), 0);
}

static bool same_file(const char *a, const char *b) {
    char out[64];
    return qkv_test_sh(out, sizeof out, true, "cmp -s %s %s", a, b) == 0;
}

START_TEST(test_resume_equals_uninterrupted) {
    char cfg[512], out[4096], a[65536], b[65536], pa[512], pb[512];
    snprintf(cfg, sizeof cfg, "%s/recall.json", TMP);
    qkv_test_write_file(cfg, "{\"model\": {\"d_model\": 16, \"heads\": 2, \"layers\": 1, \"d_ff\": 32},\n"
                    " \"task\": {\"name\": \"recall\", \"pairs\": 3, \"keys\": 8, \"values\": 8},\n"
                    " \"train\": {\"steps\": 60, \"batch\": 8, \"eval_every\": 20, \"log_every\": 5, \"eval_examples\": 50},\n"
                    " \"optim\": {\"name\": \"adamw\", \"lr\": 0.01, \"weight_decay\": 0.1, \"clip\": 0.5,\n"
                    "            \"schedule\": \"cosine\", \"warmup\": 10}}\n");
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, false, "%s train %s --out %s/full --threads 1 --quiet", qkv_test_bin(), cfg, TMP), 0);
    /* interrupted at step 27 (between checkpoints), then resumed to the end */
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, true, "%s train %s --out %s/part --threads 1 --quiet --stop-after 27", qkv_test_bin(), cfg, TMP), 1);
    ck_assert_ptr_nonnull(strstr(out, "--resume"));
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, false, "%s train --resume %s/part --threads 1 --quiet", qkv_test_bin(), TMP), 0);
    snprintf(pa, sizeof pa, "%s/full", TMP);
    snprintf(pb, sizeof pb, "%s/part", TMP);
    metrics_sans_timing(pa, a, sizeof a);
    metrics_sans_timing(pb, b, sizeof b);
    ck_assert_int_gt(strlen(a), 100);
    ck_assert_str_eq(a, b);
    snprintf(pa, sizeof pa, "%s/full/model.safetensors", TMP);
    snprintf(pb, sizeof pb, "%s/part/model.safetensors", TMP);
    ck_assert_msg(same_file(pa, pb), "model.safetensors differs after resume");
    /* elapsed time carries over the interruption: it never goes backwards */
    char elapsed[8192];
    ck_assert_int_eq(qkv_test_sh(elapsed, sizeof elapsed, false, "sed -e 's/.*\"elapsed\"://' -e 's/}//' %s/part/metrics.jsonl", TMP), 0);
    double prev = -1;
    for (char *tok = strtok(elapsed, "\n"); tok; tok = strtok(NULL, "\n")) {
        double e = strtod(tok, NULL);
        ck_assert_msg(e >= prev, "elapsed went from %g back to %g after the resume", prev, e);
        prev = e;
    }
    /* resuming the finished run again says it is finished, exits 0 and rewrites nothing: every
     * file of the run keeps its inode (an atomic rewrite makes a new one), bytes and mtime, and
     * no file comes or goes */
    char before[4096], after[4096];
    const char *list = "cd %s/full && find . -printf '%%p %%i %%s %%T@\\n' | sort && cat *.json *.jsonl | cksum";
    ck_assert_int_eq(qkv_test_sh(before, sizeof before, false, list, TMP), 0);
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, true, "%s train --resume %s/full --threads 1", qkv_test_bin(), TMP), 0);
    ck_assert_msg(strstr(out, "full is finished (60 of 60 steps): nothing to do, nothing rewritten") && !strchr(out, '{'),
                  "%s", out);
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, true, "%s train --resume %s/full --threads 1 --quiet", qkv_test_bin(),
                                 TMP), 0);
    ck_assert_str_eq(out, ""); /* --quiet: nothing said */
    ck_assert_int_eq(qkv_test_sh(after, sizeof after, false, list, TMP), 0);
    ck_assert_str_eq(after, before);
}
END_TEST

/* qkv train --time-products: the products' seconds, the wall seconds, the threads and the share
 * in the summary line, the same weights as without it */
START_TEST(test_train_time_products) {
    char cfg[512], out[4096], plain[4096], pa[600], pb[600];
    snprintf(cfg, sizeof cfg, "%s/recall-timed.json", TMP);
    qkv_test_write_file(cfg, SMALL_RECALL);
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, false, "%s train %s --out %s/timed --set train.steps=30 --threads 1 "
                                 "--quiet --time-products", qkv_test_bin(), cfg, TMP), 0);
    double prod = qkv_test_json_num(out, "products_seconds"), wall = qkv_test_json_num(out, "wall_seconds"),
           share = qkv_test_json_num(out, "products_share");
    ck_assert_int_eq((int)qkv_test_json_num(out, "threads"), 1);
    /* wall time on both sides: products on one thread cannot take longer than the run; the
     * seconds are printed to 1 ms, so the share lies within what their rounding allows */
    ck_assert_msg(prod > 0 && wall >= prod && share > 0 && share <= 1 && share >= (prod - 5e-4) / (wall + 5e-4) - 1e-4 &&
                      share <= (prod + 5e-4) / (wall - 5e-4) + 1e-4,
                  "%s", out);
    ck_assert_int_eq(qkv_test_sh(plain, sizeof plain, false, "%s train %s --out %s/untimed --set train.steps=30 "
                                 "--threads 1 --quiet", qkv_test_bin(), cfg, TMP), 0);
    ck_assert_msg(!strstr(plain, "products_share") && !strstr(plain, "wall_seconds"), "%s", plain);
    snprintf(pa, sizeof pa, "%s/timed/model.safetensors", TMP);
    snprintf(pb, sizeof pb, "%s/untimed/model.safetensors", TMP);
    ck_assert_msg(same_file(pa, pb), "timing the products changed the weights");
}
END_TEST

/* A checkpoint written before the loop state grew to 9 scalars (6: no losses, no time, no
 * optimizer step in the metadata) still resumes, and to the same weights. */
START_TEST(test_resume_version1_checkpoint) {
    char cfg[512], out[4096], path[512], pa[512], pb[512];
    qkv_err err;
    snprintf(cfg, sizeof cfg, "%s/recall.json", TMP);
    qkv_test_write_file(cfg, "{\"model\": {\"d_model\": 16, \"heads\": 2, \"layers\": 1, \"d_ff\": 32},\n"
                    " \"task\": {\"name\": \"recall\", \"pairs\": 3, \"keys\": 8, \"values\": 8},\n"
                    " \"train\": {\"steps\": 40, \"batch\": 8, \"eval_every\": 20, \"eval_examples\": 50},\n"
                    " \"optim\": {\"name\": \"adam\", \"lr\": 0.01}}\n");
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, false, "%s train %s --out %s/full --threads 1 --quiet", qkv_test_bin(), cfg, TMP), 0);
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, true, "%s train %s --out %s/old --threads 1 --quiet --stop-after 13", qkv_test_bin(), cfg, TMP), 1);
    /* rewrite the checkpoint as the old version wrote it */
    snprintf(path, sizeof path, "%s/old/checkpoint.safetensors", TMP);
    qkv_safetensors *st;
    ck_assert_msg(qkv_st_read(path, &st, &err) == 0, "%s", err.msg);
    int n = qkv_st_count(st);
    qkv_st_item *items = calloc((size_t)n, sizeof *items);
    qkv_tensor *ts = calloc((size_t)n, sizeof *ts);
    ck_assert(items && ts);
    bool found = false;
    for (int i = 0; i < n; i++) {
        const qkv_st_entry *e = qkv_st_entry_at(st, i);
        ck_assert_int_eq(qkv_shape_init(&ts[i], e->dtype, e->ndim, e->shape), 0);
        ts[i].data = (void *)qkv_st_data(st, e);
        if (!strcmp(e->name, "state.scalars")) {
            ck_assert_int_eq(e->shape[0], 9);
            int64_t six = 6;
            ck_assert_int_eq(qkv_shape_init(&ts[i], QKV_F64, 1, &six), 0);
            ts[i].data = (void *)qkv_st_data(st, e); /* the first 6 of the 9 */
            found = true;
        }
        items[i] = (qkv_st_item){e->name, &ts[i]};
    }
    ck_assert(found);
    const char *meta[4] = {"format", "pt", "qkv_step", qkv_st_meta(st, "qkv_step")};
    ck_assert_msg(qkv_st_write(path, items, n, meta, 2, &err) == 0, "%s", err.msg);
    qkv_st_free(st);
    free(items);
    free(ts);
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, false, "%s train --resume %s/old --threads 1 --quiet", qkv_test_bin(), TMP), 0);
    snprintf(pa, sizeof pa, "%s/full/model.safetensors", TMP);
    snprintf(pb, sizeof pb, "%s/old/model.safetensors", TMP);
    ck_assert_msg(same_file(pa, pb), "model.safetensors differs after resuming a version-1 checkpoint");
}
END_TEST

/* A finished run extended with --resume --steps N ends with the weights, metrics and verdict of a
 * run of N steps from the start (constant schedule; evaluations at multiples of eval_every) */
START_TEST(test_extend_equals_longer_run) {
    char cfg[512], out[4096], a[65536], b[65536], pa[512], pb[512];
    snprintf(cfg, sizeof cfg, "%s/recall.json", TMP);
    qkv_test_write_file(cfg, "{\"model\": {\"d_model\": 16, \"heads\": 2, \"layers\": 1, \"d_ff\": 32},\n"
                    " \"task\": {\"name\": \"recall\", \"pairs\": 3, \"keys\": 8, \"values\": 8},\n"
                    " \"train\": {\"steps\": 40, \"batch\": 8, \"eval_every\": 20, \"log_every\": 10, \"eval_examples\": 50},\n"
                    " \"optim\": {\"name\": \"adam\", \"lr\": 0.01, \"warmup\": 5, \"clip\": 1}}\n");
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, false, "%s train %s --out %s/short --threads 1 --quiet", qkv_test_bin(), cfg, TMP), 0);
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, false, "%s train %s --set train.steps=100 --out %s/long --threads 1 --quiet",
                         qkv_test_bin(), cfg, TMP), 0);
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, false, "%s train --resume %s/short --steps 100 --threads 1 --quiet", qkv_test_bin(), TMP), 0);
    snprintf(pa, sizeof pa, "%s/long", TMP);
    snprintf(pb, sizeof pb, "%s/short", TMP);
    metrics_sans_timing(pa, a, sizeof a);
    metrics_sans_timing(pb, b, sizeof b);
    ck_assert_int_gt(strlen(a), 100);
    ck_assert_str_eq(a, b);
    snprintf(pa, sizeof pa, "%s/long/model.safetensors", TMP);
    snprintf(pb, sizeof pb, "%s/short/model.safetensors", TMP);
    ck_assert_msg(same_file(pa, pb), "model.safetensors of the extended run differs from the longer run's");
    snprintf(pa, sizeof pa, "%s/long/config.json", TMP);
    snprintf(pb, sizeof pb, "%s/short/config.json", TMP);
    ck_assert_msg(same_file(pa, pb), "the extended run's config.json does not say its new train.steps");
    char sum[2048];
    ck_assert_int_eq(qkv_test_sh(sum, sizeof sum, false, "cat %s/short/summary.json", TMP), 0);
    ck_assert_double_eq(qkv_test_json_num(sum, "budget"), 100);
    /* shrinking, a new run, or a decaying schedule: usage errors */
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, true, "%s train --resume %s/short --steps 50 --quiet", qkv_test_bin(), TMP), 2);
    ck_assert_ptr_nonnull(strstr(out, "can only extend"));
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, true, "%s train %s --steps 50 --out %s/x --quiet", qkv_test_bin(), cfg, TMP), 2);
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, false, "%s train %s --set optim.schedule=cosine --out %s/cos --threads 1 --quiet",
                         qkv_test_bin(), cfg, TMP), 0);
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, true, "%s train --resume %s/cos --steps 80 --quiet", qkv_test_bin(), TMP), 2);
    ck_assert_ptr_nonnull(strstr(out, "optim.schedule constant"));
}
END_TEST

/* qkv train --out DIR into a directory that holds a run refuses (naming --resume and --force);
 * --force starts it over */
START_TEST(test_train_refuses_existing_run) {
    char cfg[512], out[4096];
    snprintf(cfg, sizeof cfg, "%s/recall.json", TMP);
    qkv_test_write_file(cfg, "{\"model\": {\"d_model\": 16, \"heads\": 2, \"layers\": 1, \"d_ff\": 32},\n"
                    " \"task\": {\"name\": \"recall\", \"pairs\": 3, \"keys\": 8, \"values\": 8},\n"
                    " \"train\": {\"steps\": 10, \"batch\": 8, \"eval_examples\": 16}}\n");
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, false, "%s train %s --out %s/r --quiet", qkv_test_bin(), cfg, TMP), 0);
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, true, "%s train %s --out %s/r --quiet", qkv_test_bin(), cfg, TMP), 2);
    ck_assert_msg(strstr(out, "already holds a run") && strstr(out, "--resume") && strstr(out, "--force"), "%s", out);
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, false, "%s train %s --set train.steps=12 --out %s/r --force --quiet",
                         qkv_test_bin(), cfg, TMP), 0);
    char sum[2048];
    ck_assert_int_eq(qkv_test_sh(sum, sizeof sum, false, "cat %s/r/summary.json", TMP), 0);
    ck_assert_double_eq(qkv_test_json_num(sum, "steps"), 12);
}
END_TEST

/* SIGTERM to qkv ablate alone (kill, timeout, a scheduler) stops its runs too: they save
 * checkpoints, ablate says how to continue, and the same command then finishes */
START_TEST(test_ablate_sigterm_stops_runs) {
    char base[512], cfg[512], out[8192];
    snprintf(base, sizeof base, "%s/base.json", TMP);
    qkv_test_write_file(base, "{\"model\": {\"d_model\": 16, \"heads\": 2, \"layers\": 1, \"d_ff\": 32},\n"
                     " \"task\": {\"name\": \"recall\", \"pairs\": 3, \"keys\": 8, \"values\": 8},\n"
                     " \"train\": {\"steps\": 300000, \"batch\": 8, \"eval_every\": 0, \"eval_examples\": 16}}\n");
    snprintf(cfg, sizeof cfg, "%s/abl.json", TMP);
    qkv_test_write_file(cfg, "{\"base\": \"base.json\", \"variants\": [{\"name\": \"a\", \"set\": []},\n"
                    " {\"name\": \"b\", \"set\": [\"model.attention.qkv=shared\"]}], \"seeds\": [0]}\n");
    /* a run of 300000 steps takes minutes: only the forwarded SIGTERM ends it in time */
    int rc = qkv_test_sh(out, sizeof out, true,
                 "%s ablate %s --out %s/abl --jobs 2 --quiet 2>&1 & p=$!; "
                 "for i in $(seq 100); do [ -d %s/abl/runs/b/seed0 ] && [ -s %s/abl/runs/b/seed0/metrics.jsonl ] && break; sleep 0.1; done; "
                 "kill -TERM $p; wait $p", qkv_test_bin(), cfg, TMP, TMP, TMP);
    ck_assert_msg(rc == 1, "exit %d: %s", rc, out);
    ck_assert_ptr_nonnull(strstr(out, "run the same command again"));
    char path[600];
    for (int v = 0; v < 2; v++) {
        snprintf(path, sizeof path, "%s/abl/runs/%c/seed0/checkpoint.safetensors", TMP, "ab"[v]);
        ck_assert_msg(access(path, R_OK) == 0, "run %c saved no checkpoint", "ab"[v]);
    }
}
END_TEST

START_TEST(test_deterministic) {
    char cfg[512], out[4096], a[65536], b[65536], pa[512], pb[512];
    snprintf(cfg, sizeof cfg, "%s/recall.json", TMP);
    qkv_test_write_file(cfg, "{\"model\": {\"d_model\": 16, \"heads\": 2, \"layers\": 1, \"d_ff\": 32},\n"
                    " \"task\": {\"name\": \"recall\", \"pairs\": 3, \"keys\": 8, \"values\": 8},\n"
                    " \"train\": {\"steps\": 40, \"batch\": 8, \"eval_every\": 20, \"log_every\": 5, \"eval_examples\": 50}}\n");
    for (int i = 0; i < 2; i++)
        ck_assert_int_eq(qkv_test_sh(out, sizeof out, false, "%s train %s --out %s/r%d --threads 1 --quiet", qkv_test_bin(), cfg, TMP, i), 0);
    snprintf(pa, sizeof pa, "%s/r0", TMP);
    snprintf(pb, sizeof pb, "%s/r1", TMP);
    metrics_sans_timing(pa, a, sizeof a);
    metrics_sans_timing(pb, b, sizeof b);
    ck_assert_str_eq(a, b);
    snprintf(pa, sizeof pa, "%s/r0/model.safetensors", TMP);
    snprintf(pb, sizeof pb, "%s/r1/model.safetensors", TMP);
    ck_assert(same_file(pa, pb));
    /* two threads: again the same bits from run to run */
    for (int i = 3; i < 5; i++)
        ck_assert_int_eq(qkv_test_sh(out, sizeof out, false, "%s train %s --out %s/r%d --threads 2 --quiet", qkv_test_bin(), cfg, TMP, i), 0);
    snprintf(pa, sizeof pa, "%s/r3", TMP);
    snprintf(pb, sizeof pb, "%s/r4", TMP);
    metrics_sans_timing(pa, a, sizeof a);
    metrics_sans_timing(pb, b, sizeof b);
    ck_assert_str_eq(a, b);
    snprintf(pa, sizeof pa, "%s/r3/model.safetensors", TMP);
    snprintf(pb, sizeof pb, "%s/r4/model.safetensors", TMP);
    ck_assert(same_file(pa, pb));
    /* micro-batches are computed whole, each on one thread: one thread and two give the same bits */
    snprintf(pa, sizeof pa, "%s/r0/model.safetensors", TMP);
    snprintf(pb, sizeof pb, "%s/r3/model.safetensors", TMP);
    ck_assert_msg(same_file(pa, pb), "--threads 1 and --threads 2 trained different weights");
    snprintf(pa, sizeof pa, "%s/r0", TMP);
    snprintf(pb, sizeof pb, "%s/r3", TMP);
    metrics_sans_timing(pa, a, sizeof a);
    metrics_sans_timing(pb, b, sizeof b);
    ck_assert_str_eq(a, b);
    /* no --threads: one thread per core, the same bits as asking for that many */
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, false, "%s train %s --out %s/r5 --quiet", qkv_test_bin(), cfg, TMP), 0);
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, false, "%s train %s --out %s/r6 --threads %ld --quiet", qkv_test_bin(), cfg, TMP,
                         sysconf(_SC_NPROCESSORS_ONLN) > 64 ? 64L : sysconf(_SC_NPROCESSORS_ONLN)), 0);
    snprintf(pa, sizeof pa, "%s/r5/model.safetensors", TMP);
    snprintf(pb, sizeof pb, "%s/r6/model.safetensors", TMP);
    ck_assert(same_file(pa, pb));
    snprintf(pa, sizeof pa, "%s/r0/model.safetensors", TMP);
    /* another seed gives other numbers */
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, false, "%s train %s --set train.seed=7 --out %s/r2 --threads 1 --quiet", qkv_test_bin(), cfg, TMP), 0);
    snprintf(pb, sizeof pb, "%s/r2/model.safetensors", TMP);
    ck_assert(!same_file(pa, pb));
}
END_TEST

static const char *const VARIANT_SETS[] = {
    "--set model.attention.qkv=full",
    "--set model.attention.qkv=shared",
    "--set model.attention.qkv=identity",
    "--set model.attention.qkv=qk_tied",
    "--set model.attention.qkv=kv_tied",
    "--set model.attention.qkv=head_shared --set model.attention.scale=embed",
    "--set model.attention.rel_pos_bias=true --set model.attention.rel_pos_max=2",
    "--set model.attention.gate=output",
    "--set model.attention.gate=value",
    "--set model.attention.qkv=qk_tied --set model.attention.self_mask=true",
    "--set model.attention.causal=false --pad",
    "--set model.activation=relu",
    "--set model.attention.kv_heads=1",
    "--set model.heads=4 --set model.attention.kv_heads=2",
    "--set model.attention.qkv=kv_tied --set model.attention.kv_heads=1",
    "--set model.attention.qkv=qk_tied --set model.attention.key_norm=true --set model.attention.self_mask=true "
    "--set model.attention.self_mask_rule=reformer",
    "--set model.attention.qkv=shared --set model.attention.role_scale=true",
    "--set model.attention.value_proj=false",
    "--set model.attention.out_proj=false",
    "--set model.attention.kv_latent=4",
    "--set model.attention.alibi=true",
    "--set model.attention.init=identity",
    "--set model.attention.init=mimetic",
    "--set model.attention.gate=headwise",
    "--set model.attention.query_proj=false",
    "--set model.attention.key_proj=false",
    "--set model.attention.query_proj=false --set model.attention.key_proj=false",
    "--set model.attention.diff=true",
    "--set model.attention.diff=true --set model.attention.causal=false --pad",
    "--set model.attention.talking_heads=true",
    "--set model.attention.talking_heads=true --set model.attention.kv_heads=1",
};

START_TEST(test_gradcheck_command_every_variant) {
    char cfg[512], out[16384];
    snprintf(cfg, sizeof cfg, "%s/gc.json", TMP);
    qkv_test_write_file(cfg, "{\"model\": {\"d_model\": 8, \"heads\": 2, \"layers\": 2, \"d_ff\": 12},\n"
                    " \"task\": {\"name\": \"recall\", \"pairs\": 2, \"keys\": 4, \"values\": 4}}\n");
    int rc = qkv_test_sh(out, sizeof out, true, "%s gradcheck %s %s", qkv_test_bin(), cfg, VARIANT_SETS[_i]);
    ck_assert_msg(rc == 0, "%s: exit %d\n%s", VARIANT_SETS[_i], rc, out);
    ck_assert_ptr_nonnull(strstr(out, "PASS:"));
    ck_assert_ptr_null(strstr(out, "FAIL"));
    /* the line under the table says how to read it, with the table's largest excess */
    double worst = 0, x;
    for (const char *l = strchr(out, '\n'); l && (l = strchr(l + 1, '\n'));) {
        char name[64], checked[40], result[8];
        double err;
        if (sscanf(l + 1, "%63s %39s %lf %lf %7s", name, checked, &err, &x, result) == 5 && !strcmp(result, "PASS"))
            worst = x > worst ? x : worst;
    }
    const char *how = strstr(out, "\nhow to read it: checked, the elements compared");
    ck_assert_msg(how && strstr(how, "an element passes at 1 or below, so "), "%s", out);
    ck_assert_int_eq(sscanf(strstr(how, "or below, so ") + 13, "%lf", &x), 1);
    ck_assert_double_eq_tol(x, worst, worst * 1e-9); /* both %.3g */
}
END_TEST

START_TEST(test_params_table_matches_claim) {
    char out[16384];
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, false, "%s params ../configs/recall.json --set model.layers=1", qkv_test_bin()), 0);
    ck_assert_ptr_nonnull(strstr(out, "12288 = 3 x d_model^2"));
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, false, "%s params ../configs/recall.json --set model.layers=1 "
                         "--set model.attention.qkv=head_shared", qkv_test_bin()), 0);
    ck_assert_ptr_nonnull(strstr(out, "768 = 0.188 x d_model^2")); /* 3 x 16^2 */
    /* recall: d_model 64, 4 heads of 16. Multi-query: Wq 64^2, Wk and Wv 64 x 16 each */
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, false, "%s params ../configs/recall.json --set model.layers=1 "
                         "--set model.attention.kv_heads=1 --set model.attention.alibi=true", qkv_test_bin()), 0);
    ck_assert_msg(strstr(out, "options: kv_heads 1 (4 query heads each), alibi\n"), "%s", out);
    ck_assert_ptr_nonnull(strstr(out, "blocks.0.attn.wk                           1024  1\n"));
    ck_assert_ptr_nonnull(strstr(out, "6144 = 1.5 x d_model^2"));
    /* attention modules: 6144 + Wo (64^2 + 64) = 10304 of 53568 */
    ck_assert_msg(strstr(out, "attention modules (all layers): 10304 (19.2% of the model)"), "%s", out);
    /* shared with role scales: the three scales one module of 3 x 64, counted with W */
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, false, "%s params ../configs/recall.json --set model.layers=1 "
                         "--set model.attention.qkv=shared --set model.attention.role_scale=true", qkv_test_bin()), 0);
    ck_assert_msg(strstr(out, "blocks.0.attn.role_scale                    192  3\n"), "%s", out);
    ck_assert_ptr_nonnull(strstr(out, "4288 = 1.05 x d_model^2"));
    /* issue 22: Q = K = X leaves Wv (64^2); diff adds lambda's 4 x 8 and the head norm's 16; talking
     * heads two 4 x 4 maps */
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, false, "%s params ../configs/recall.json --set model.layers=1 "
                         "--set model.attention.query_proj=false --set model.attention.key_proj=false", qkv_test_bin()), 0);
    ck_assert_msg(strstr(out, "options: query_proj off (Q = X), key_proj off (K = X)\n"), "%s", out);
    ck_assert_ptr_nonnull(strstr(out, "4096 = 1 x d_model^2"));
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, false, "%s params ../configs/recall.json --set model.layers=1 "
                         "--set model.attention.diff=true", qkv_test_bin()), 0);
    ck_assert_msg(strstr(out, "options: diff\n") && strstr(out, "blocks.0.attn.subln                          16  1\n"),
                  "%s", out);
    ck_assert_ptr_nonnull(strstr(out, "12336 = 3.01 x d_model^2"));
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, false, "%s params ../configs/recall.json --set model.layers=1 "
                         "--set model.attention.talking_heads=true", qkv_test_bin()), 0);
    ck_assert_msg(strstr(out, "blocks.0.attn.talking_heads.logits           16  1\n"), "%s", out);
    ck_assert_ptr_nonnull(strstr(out, "12320 = 3.01 x d_model^2"));
    /* a latent of 16 for keys and values: W_down 64 x 16, W_uk and W_uv 16 x 64 */
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, false, "%s params ../configs/recall.json --set model.layers=1 "
                         "--set model.attention.kv_latent=16 --set model.attention.gate=headwise --all", qkv_test_bin()), 0);
    ck_assert_msg(strstr(out, "blocks.0.attn.wdown.weight                 1024  (16,64)\n") &&
                  strstr(out, "blocks.0.attn.wuv.weight                   1024  (64,16)\n") &&
                  strstr(out, "blocks.0.attn.wg.weight                     256  (4,64)\n"), "%s", out);
    ck_assert_ptr_nonnull(strstr(out, "7168 = 1.75 x d_model^2")); /* 4096 + 3 x 1024; the gate is not Q/K/V */
}
END_TEST

/* qkv bench --micro-batches: the step as qkv train takes it (whole micro-batches on each thread)
 * runs, allocates nothing in the steady step, and does the same matrix-product work as the
 * whole batch in one pass (no timing is checked) */
START_TEST(test_bench_micro_batches) {
    char one[4096], micro[4096];
    int rc = qkv_test_sh(one, sizeof one, false, "%s bench --size tiny --steps 2 --threads 2 --json 2>&1", qkv_test_bin());
    ck_assert_msg(rc == 0, "%s", one);
    const char *shim = qkv_test_alloc_shim(); /* the allocation counter; NULL: a sanitizer's build */
    rc = qkv_test_sh(micro, sizeof micro, false, "%s%s %s bench --size tiny --steps 2 --threads 2 --micro-batches 8 "
                     "--json 2>&1", shim ? "LD_PRELOAD=" : "", shim ? shim : "", qkv_test_bin());
    ck_assert_msg(rc == 0, "%s", micro);
    ck_assert_msg(strstr(micro, "\"micro_batches\":8") && strstr(one, "\"micro_batches\":1"), "%s\n%s", one, micro);
    /* counted when the counter is preloaded, and -1 (not counted) when not */
    ck_assert_msg(qkv_test_json_num(micro, "allocs_per_step") == (shim ? 0 : -1), "%s", micro);
    ck_assert_msg(qkv_test_json_num(one, "allocs_per_step") == -1, "%s", one);
    /* the share of the threads' time in the products, from steps with every product timed */
    for (int k = 0; k < 2; k++) {
        const char *o = k ? micro : one;
        double share = qkv_test_json_num(o, "products_share"), msp = qkv_test_json_num(o, "ms_products");
        ck_assert_msg(share > 0 && share <= 1 && msp > 0, "products_share %g, ms_products %g: %s", share, msp, o);
    }
    double g1 = qkv_test_json_num(one, "gflop_per_step"), g8 = qkv_test_json_num(micro, "gflop_per_step");
    ck_assert_msg(g1 > 0 && fabs(g1 - g8) <= 0.0015, "whole batch %g GFLOP, micro-batches %g", g1, g8); /* printed %.3f */
}
END_TEST

/* qkv bench --sweep runs its 12 runs (a few steps each: no timing is checked) and prints what
 * docs/performance.md shows; run from tests/, it finds configs/recall.json beside build/ */
START_TEST(test_bench_sweep) {
    char out[8192];
    int rc = qkv_test_sh(out, sizeof out, false, "%s bench --sweep --runs-steps 3 --json --time-products 2>&1",
                         qkv_test_bin());
    ck_assert_msg(rc == 0, "exit %d: %s", rc, out);
    /* --time-products: the runs' share of time in the products */
    double prod = qkv_test_json_num(out, "products_share");
    ck_assert_msg(prod > 0 && prod <= 1, "products_share %g: %s", prod, out);
    const char *keys[] = {"runs_per_min", "tokens_per_s_per_core", "gemm_flops", "gflops", "ceiling_gflops_per_core",
                          "ceiling_share", "seconds", "run_seconds_median", "peak_rss_mb", "eval_accuracy_mean"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        ck_assert_msg(qkv_test_json_num(out, keys[i]) > 0, "%s: %s", keys[i], out);
    ck_assert_int_eq((int)qkv_test_json_num(out, "runs"), 12);
    ck_assert_int_eq((int)qkv_test_json_num(out, "steps"), 3);
    ck_assert_int_eq((int)qkv_test_json_num(out, "micro_batches"), 8);
    ck_assert_int_eq((int)qkv_test_json_num(out, "evaluations_per_run"), 1);
    /* trained tokens: 12 runs x 3 steps x 32 examples x 24 positions */
    ck_assert_int_eq((long long)qkv_test_json_num(out, "tokens"), 12LL * 3 * 32 * 24);
    /* the FLOPs are counted, not timed: 4 variants x 3 seeds, each 3 steps of 8 micro-batches of 4
     * examples (forward and backward: 3 x the forward) and one evaluation of 1000 + 1000 examples
     * in 64 batches of 32 (forward); a forward of 4 examples (96 positions) of d_model 64, d_ff 256,
     * 2 layers, T 24, head_dim 16, vocab 64 is 2 x 96 x (2 x (P x 64 x 64 + 2 x 64 x 256) + 64 x 64)
     * + 2 layers x 2 x 2 x 4 x 4 x 24 x 24 x 16, with P the attention's projections (4 full, 2
     * shared, 3 qk_tied and kv_tied). At its start and at its end each run records what reports
     * show of it (train/observe.h): each time one forward of 256 evaluation examples and one of a
     * single example */
    long long fwd[4] = {0}, P[4] = {4, 2, 3, 3}, total = 0;
    for (int v = 0; v < 4; v++) {
        fwd[v] = 2LL * 96 * (2 * (P[v] * 64 * 64 + 2 * 64 * 256) + 64 * 64) + 2LL * 2 * 2 * 4 * 4 * 24 * 24 * 16;
        total += 3 * (3 * 8 * 3 * fwd[v] + 64 * 8 * fwd[v] + 2 * (64 * fwd[v] + fwd[v] / 4));
    }
    ck_assert_msg((long long)qkv_test_json_num(out, "gemm_flops") == total, "gemm_flops: expected %lld: %s", total, out);
    /* the table */
    rc = qkv_test_sh(out, sizeof out, false, "%s bench --sweep --runs-steps 2 --jobs 1 2>/dev/null", qkv_test_bin());
    ck_assert_msg(rc == 0, "exit %d: %s", rc, out);
    const char *cols[] = {"runs/min", "tokens/s/core", "GFLOP/s", "ceiling", "share", "12 runs of 2 steps, 1 at a time"};
    for (size_t i = 0; i < sizeof cols / sizeof cols[0]; i++) ck_assert_msg(strstr(out, cols[i]), "%s: %s", cols[i], out);
    ck_assert_msg(!strstr(out, "matrix products"), "untimed, yet: %s", out); /* no --time-products */
    /* qkv train --gemm-flops is internal: not in --help */
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, false, "%s train --help", qkv_test_bin()), 0);
    ck_assert_ptr_null(strstr(out, "gemm-flops"));
}
END_TEST

/* qkv bench --precision both: float32 and bf16 side by side, alternating, for the step and for
 * the sweep (a few steps each: no timing is checked); on a machine without bf16 products it is
 * skipped by name (the refusal is tests/test_cli_options.c's row, through the cpuinfo shim) */
START_TEST(test_bench_precision_both) {
    qkv_err why;
    if (!qkv_bf16_available(&why)) {
        qkv_test_skip("bench --precision both", why.msg);
        return;
    }
    char out[16384];
    /* the step: two rounds of the pair, each a JSON line naming its precision, in turn */
    int rc = qkv_test_sh(out, sizeof out, false, "%s bench --size tiny --steps 2 --precision both --rounds 2 --json 2>&1",
                         qkv_test_bin());
    ck_assert_msg(rc == 0, "exit %d: %s", rc, out);
    const char *p = out, *want[] = {"f32", "bf16", "f32", "bf16"};
    for (int i = 0; i < 4; i++) {
        char key[64];
        snprintf(key, sizeof key, "\"precision\":\"%s\"}", want[i]);
        const char *line_end = strchr(p, '\n');
        ck_assert_msg(line_end && strstr(p, key) && strstr(p, key) < line_end, "line %d not %s: %s", i, want[i], out);
        /* both ceilings, and the step's products at the ceiling of its own precision */
        double c32 = qkv_test_json_num(p, "ceiling_gflops"), c16 = qkv_test_json_num(p, "bf16_ceiling_gflops");
        double at = qkv_test_json_num(p, "ms_products_at_ceiling"), gf = qkv_test_json_num(p, "gflop_per_step");
        ck_assert_msg(c32 > 0 && c16 > 0 && at > 0, "line %d: ceilings %g, %g, at ceiling %g ms: %s", i, c32, c16, at, out);
        ck_assert_msg(fabs(at - gf / (i % 2 ? c16 : c32) * 1e3) <= 1e-3 * at + 2e-3, "line %d: %g ms at ceiling: %s", i, at,
                      out);
        ck_assert_msg(fabs(qkv_test_json_num(p, "bf16_ceiling_share") - qkv_test_json_num(p, "gflops") / c16) < 1e-3,
                      "line %d: bf16_ceiling_share: %s", i, out);
        p = line_end + 1;
    }
    ck_assert_msg(!*p, "more than four lines: %s", out);
    /* the table: both columns and the speed-up */
    rc = qkv_test_sh(out, sizeof out, false, "%s bench --size tiny --steps 2 --precision both --rounds 1 2>&1",
                     qkv_test_bin());
    ck_assert_msg(rc == 0 && strstr(out, "f32 ms") && strstr(out, "bf16 ms") && strstr(out, "speed-up") &&
                  strstr(out, "f32 ceil") && strstr(out, "bf16 ceil") && strstr(out, "medians of 1 rounds"),
                  "exit %d: %s", rc, out);
    /* the sweep: one sweep in each, each run's products as asked (the FLOPs are the same count) */
    rc = qkv_test_sh(out, sizeof out, false, "%s bench --sweep --runs-steps 2 --precision both --rounds 1 --json 2>&1",
                     qkv_test_bin());
    ck_assert_msg(rc == 0, "exit %d: %s", rc, out);
    const char *b = strstr(out, "\"precision\":\"bf16\"");
    ck_assert_msg(strstr(out, "\"precision\":\"f32\"") < b && b, "%s", out);
    ck_assert_msg(qkv_test_json_num(out, "gemm_flops") == qkv_test_json_num(b, "gemm_flops"), "%s", out);
    rc = qkv_test_sh(out, sizeof out, false, "%s bench --sweep --runs-steps 2 --precision both --rounds 1 2>/dev/null",
                     qkv_test_bin());
    ck_assert_msg(rc == 0 && strstr(out, "bf16: ") && strstr(out, "the runs per minute of f32"), "exit %d: %s", rc, out);
}
END_TEST

/* a tiny ablation end to end: 2 variants x 2 seeds, every output present and consistent */
START_TEST(test_tiny_ablation) {
    char cfg[512], base[512], out[16384], path[600], text[200000];
    snprintf(base, sizeof base, "%s/base.json", TMP);
    qkv_test_write_file(base, "{\"model\": {\"d_model\": 16, \"heads\": 2, \"layers\": 2, \"d_ff\": 32},\n"
                     " \"task\": {\"name\": \"recall\", \"pairs\": 3, \"keys\": 8, \"values\": 8},\n"
                     " \"train\": {\"steps\": 60, \"batch\": 16, \"eval_every\": 20, \"eval_examples\": 64},\n"
                     " \"optim\": {\"lr\": 0.01}}\n");
    snprintf(cfg, sizeof cfg, "%s/abl.json", TMP);
    qkv_test_write_file(cfg, "{\"title\": \"tiny & <test>\", \"base\": \"base.json\",\n"
                    " \"variants\": [{\"name\": \"full\", \"set\": []},\n"
                    "   {\"name\": \"identity\", \"set\": [\"model.attention.qkv=identity\"]}],\n"
                    " \"seeds\": [0, 5], \"threshold\": 0.5}\n");
    int rc = qkv_test_sh(out, sizeof out, false, "%s ablate %s --out %s/abl --jobs 2 --quiet", qkv_test_bin(), cfg, TMP);
    ck_assert_msg(rc == 0, "exit %d: %s", rc, out);
    const char *files[] = {"results.md", "results.csv", "results.json", "report.md", "report.html",
                           "plots/accuracy.svg", "plots/loss.svg", "plots/attention-full.svg",
                           "plots/attention-identity.svg", "runs/full/seed0/summary.json",
                           "runs/identity/seed5/model.safetensors", "configs/identity-seed5.json"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(path, sizeof path, "%s/abl/%s", TMP, files[i]);
        ck_assert_msg(access(path, R_OK) == 0, "missing %s", files[i]);
    }
    /* the CSV: the documented header and one row per variant with the attention parameter counts */
    snprintf(path, sizeof path, "%s/abl/results.csv", TMP);
    FILE *f = fopen(path, "r");
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = 0;
    ck_assert_msg(!strncmp(text, "variant,attn_params,params,acc_mean,acc_std,acc_min,loss_mean,loss_std,"
                                 "steps_to_threshold,seconds", 82), "%s", text);
    ck_assert_ptr_nonnull(strstr(text, "\nfull,2080,")); /* 2 layers x (3 x 16^2 + 16^2 + 16) */
    ck_assert_ptr_nonnull(strstr(text, "\nidentity,544,")); /* output projections only */
    /* the HTML report is one self-contained page */
    snprintf(path, sizeof path, "%s/abl/report.html", TMP);
    f = fopen(path, "r");
    n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = 0;
    ck_assert_ptr_nonnull(strstr(text, "<svg"));
    ck_assert_ptr_null(strstr(text, "src=\"http"));
    ck_assert_ptr_nonnull(strstr(text, "tiny &amp; &lt;test&gt;"));
    /* a second run keeps every finished run */
    rc = qkv_test_sh(out, sizeof out, true, "%s ablate %s --out %s/abl --jobs 2", qkv_test_bin(), cfg, TMP);
    ck_assert_msg(rc == 0 && strstr(out, "4 of 4 runs already finished"), "%s", out);
}
END_TEST

/* qkv sample: a small byte model of Debian's GPL-3 text (seq_len 16) and a recall model */
static void sample_model(void) {
    char cfg[512], out[4096];
    snprintf(cfg, sizeof cfg, "%s/text.json", TMP);
    qkv_test_write_file(cfg, "{\"model\": {\"d_model\": 32, \"heads\": 2, \"layers\": 1, \"d_ff\": 64},\n"
                    " \"task\": {\"name\": \"text\", \"path\": \"/usr/share/common-licenses/GPL-3\", \"seq_len\": 16},\n"
                    " \"train\": {\"steps\": 150, \"batch\": 16, \"eval_examples\": 32},\n"
                    " \"optim\": {\"lr\": 0.005}}\n");
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, false, "%s train %s --out %s/text --threads 1 --quiet", qkv_test_bin(), cfg,
                         TMP), 0);
}

/* the sample's bytes (the prompt and what follows) for these options */
static void sample(char *out, size_t n, const char *opts) {
    int rc = qkv_test_sh(out, n, false, "%s sample %s/text/config.json --checkpoint %s/text/model.safetensors %s",
                 qkv_test_bin(), TMP, TMP, opts);
    ck_assert_msg(rc == 0, "qkv sample %s: exit %d", opts, rc);
}

START_TEST(test_sample) {
    sample_model();
    char a[4096], b[4096], c[4096];
    /* the prompt, then exactly --tokens bytes and a newline that ends the output (the sample's
     * last byte may be a newline too); a seed gives the same sample every time */
    sample(a, sizeof a, "--prompt 'the Program' --tokens 120 --seed 3");
    ck_assert_int_eq(strlen(a), 11 + 120 + 1);
    ck_assert_int_eq(a[11 + 120], '\n');
    ck_assert(!strncmp(a, "the Program", 11));
    sample(b, sizeof b, "--prompt 'the Program' --tokens 120 --seed 3");
    ck_assert_str_eq(a, b);
    /* another seed, another sample */
    sample(c, sizeof c, "--prompt 'the Program' --tokens 120 --seed 4");
    ck_assert_str_ne(a, c);
    /* greedy (temperature 0) ignores the seed, is what a temperature near 0 draws, and what
     * top-k 1 draws at any temperature */
    sample(a, sizeof a, "--prompt 'the Program' --tokens 120 --temperature 0 --seed 1");
    sample(b, sizeof b, "--prompt 'the Program' --tokens 120 --temperature 0 --seed 2");
    ck_assert_str_eq(a, b);
    sample(b, sizeof b, "--prompt 'the Program' --tokens 120 --temperature 1e-6 --seed 3");
    ck_assert_str_eq(a, b);
    sample(b, sizeof b, "--prompt 'the Program' --tokens 120 --top-k 1 --temperature 1.5 --seed 4");
    ck_assert_str_eq(a, b);
    /* top-k 2 draws only the two most likely bytes: not greedy, and the same for a seed */
    sample(b, sizeof b, "--prompt 'the Program' --tokens 120 --top-k 2 --seed 5");
    sample(c, sizeof c, "--prompt 'the Program' --tokens 120 --top-k 2 --seed 5");
    ck_assert_str_eq(b, c);
    ck_assert_str_ne(a, b);
    /* a context longer than seq_len (16) keeps its last 16 bytes: a long prompt continues as its
     * last 16 bytes do */
    sample(a, sizeof a, "--prompt 'of this License, the Program' --tokens 60 --temperature 0");
    sample(b, sizeof b, "--prompt 'icense, the Program' --tokens 60 --temperature 0");
    ck_assert_str_eq(a + 28, b + 19);
    /* the default prompt is a newline */
    sample(a, sizeof a, "--tokens 5 --temperature 0");
    ck_assert_int_eq(strlen(a), 7);
    ck_assert_int_eq(a[6], '\n');
    ck_assert_int_eq(a[0], '\n');
}
END_TEST

/* a task whose tokens are not bytes: ids in, ids out, as JSON */
START_TEST(test_sample_tokens) {
    char cfg[512], out[4096];
    snprintf(cfg, sizeof cfg, "%s/recall.json", TMP);
    qkv_test_write_file(cfg, "{\"model\": {\"d_model\": 16, \"heads\": 2, \"layers\": 1, \"d_ff\": 32},\n"
                    " \"task\": {\"name\": \"recall\", \"pairs\": 3, \"keys\": 8, \"values\": 8},\n"
                    " \"train\": {\"steps\": 20, \"batch\": 8, \"eval_examples\": 16}}\n");
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, false, "%s train %s --out %s/r --threads 1 --quiet", qkv_test_bin(), cfg, TMP), 0);
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, false, "%s sample %s/r/config.json --checkpoint %s/r/checkpoint.safetensors "
                         "--prompt '1, 9 2 10' --tokens 12", qkv_test_bin(), TMP, TMP), 0);
    const char *head = "{\"prompt\": [1, 9, 2, 10], \"tokens\": [";
    ck_assert_msg(!strncmp(out, head, strlen(head)), "%s", out);
    int k = 0;
    for (char *p = strstr(out, "\"tokens\": [") + 11; *p && *p != ']'; k++) {
        long v = strtol(p, &p, 10);
        ck_assert(v >= 0 && v < 16);
        while (*p == ',' || *p == ' ') p++;
    }
    ck_assert_int_eq(k, 12);
}
END_TEST

Suite *e2e_suite(void) {
    Suite *s = suite_create("e2e");
    TCase *tc = tcase_create("cli");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_help_and_version);
    tcase_add_test(tc, test_usage_errors_exit_2);
    tcase_add_test(tc, test_shipped_configs_validate);
    tcase_add_test(tc, test_shipped_ablations_validate);
    tcase_add_test(tc, test_params_table_matches_claim);
    tcase_add_loop_test(tc, test_gradcheck_command_every_variant, 0,
                        (int)(sizeof VARIANT_SETS / sizeof VARIANT_SETS[0]));
    tcase_add_test(tc, test_recall_learns);
    tcase_add_test(tc, test_copy_learns);
    tcase_add_test(tc, test_resume_equals_uninterrupted);
    tcase_add_test(tc, test_resume_version1_checkpoint);
    tcase_add_test(tc, test_train_time_products);
    tcase_add_test(tc, test_extend_equals_longer_run);
    tcase_add_test(tc, test_train_refuses_existing_run);
    tcase_add_test(tc, test_deterministic);
    tcase_add_test(tc, test_tiny_ablation);
    tcase_add_test(tc, test_bench_sweep);
    tcase_add_test(tc, test_bench_precision_both);
    tcase_add_test(tc, test_bench_micro_batches);
    tcase_add_test(tc, test_ablate_sigterm_stops_runs);
    tcase_add_test(tc, test_sample);
    tcase_add_test(tc, test_sample_tokens);
    suite_add_tcase(s, tc);
    return s;
}
