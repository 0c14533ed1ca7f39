/* Faults during training, injected from outside the process:
 *   - kill -9 at random moments while checkpointing every step: the checkpoint and the model file
 *     are always whole and loadable (atomic writes), and a resume works and removes the dead
 *     process's temporary files;
 *   - SIGINT and SIGTERM: a checkpoint is saved, exit 1 with the resume command, and the resumed
 *     run equals an uninterrupted one;
 *   - failed writes (an out directory under a regular file; /dev/full behind the temporary file
 *     of a checkpoint, of the metrics, of the summary): one clear line, exit 1, the previous
 *     checkpoint intact;
 *   - non-finite values: stop at the step they appear, or skip and count them.
 *
 * A write to /dev/full fails with ENOSPC. The temporary files are named PATH.tmp.<pid>.<host tag>
 * (io/fileio.h; the tag is this test's too), and
 * `sh -c 'ln -s /dev/full DIR/FILE.tmp.$$.TAG && exec qkv ...'` keeps the shell's pid, so the
 * symlink is exactly the file qkv will write. (As root, chmod cannot make a directory
 * read-only; the contract's read-only file system is a bind mount in a mount namespace,
 * tests/test_cli_files.c.) No fixed sleeps: files are polled. */
#define _GNU_SOURCE
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "io/fileio.h"
#include "io/safetensors.h"
#include "tensor/fastmath.h"
#include "probe.h"
#include "train/stop.h"
#include "suites.h"
#include "testutil.h"

static char TMP[256];

/* ---- processes ------------------------------------------------------------------------------ */

/* start argv (argv[0] is run as given; "qkv" means the qkv binary) in TMP; stdout discarded,
 * stderr to TMP/<errname> */
static pid_t start(const char *errname, char *const argv[]) {
    char errpath[400];
    snprintf(errpath, sizeof errpath, "%s/%s", TMP, errname);
    return qkv_test_spawn(TMP, errpath, !strcmp(argv[0], "qkv") ? qkv_test_bin() : argv[0], argv);
}

typedef struct { bool exited; int status, sig; char err[8192]; } result;

static void finish(pid_t pid, const char *errname, result *r) {
    int st;
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    r->exited = WIFEXITED(st);
    r->status = r->exited ? WEXITSTATUS(st) : -1;
    r->sig = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
    char path[400];
    snprintf(path, sizeof path, "%s/%s", TMP, errname);
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    size_t n = fread(r->err, 1, sizeof r->err - 1, f);
    r->err[n] = 0;
    fclose(f);
    ck_assert_msg(!strstr(r->err, "Sanitizer") && !strstr(r->err, "runtime error"), "sanitizer report: %s", r->err);
}

/* run `qkv ARGS...` to the end */
static void run_qkv(result *r, const char *a1, ...) __attribute__((sentinel));
static void run_qkv(result *r, const char *a1, ...) {
    char *argv[32] = {"qkv", (char *)a1};
    int n = 2;
    va_list ap;
    va_start(ap, a1);
    while (n < 31 && (argv[n] = va_arg(ap, char *))) n++;
    va_end(ap);
    argv[n] = NULL;
    finish(start("stderr.txt", argv), "stderr.txt", r);
}

/* run `qkv ARGS` through sh with /dev/full linked at DIR/FILE.tmp.<the pid qkv will have>.<tag> */
static void run_with_full(result *r, const char *dir, const char *file, const char *args) {
    char script[8192], tag[QKV_HOST_TAG_LEN + 1];
    qkv__host_tag(tag);
    snprintf(script, sizeof script, "ln -s /dev/full %s/%s.tmp.$$.%s && exec %s %s", dir, file, tag, qkv_test_bin(),
             args);
    char *argv[] = {"/bin/sh", "-c", script, NULL};
    finish(start("stderr.txt", argv), "stderr.txt", r);
}

static bool one_line(const char *s) {
    size_t n = strlen(s);
    return n > 1 && s[n - 1] == '\n' && strchr(s, '\n') == s + n - 1;
}

/* ---- files ------------------------------------------------------------------------------------- */

static char *path_in(char *buf, size_t n, const char *rel) {
    snprintf(buf, n, "%s/%s", TMP, rel);
    return buf;
}

static void write_text(const char *rel, const char *text) {
    char p[512];
    FILE *f = fopen(path_in(p, sizeof p, rel), "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

/* whole file (malloc'd, NUL-terminated) or NULL */
static char *slurp(const char *rel, size_t *len) {
    char p[512];
    FILE *f = fopen(path_in(p, sizeof p, rel), "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap + 1);
    for (size_t got; (got = fread(buf + n, 1, cap - n, f)) > 0;) {
        n += got;
        if (n == cap) buf = realloc(buf, (cap *= 2) + 1);
    }
    fclose(f);
    buf[n] = 0;
    if (len) *len = n;
    return buf;
}

static bool exists(const char *rel) {
    char p[512];
    return access(path_in(p, sizeof p, rel), F_OK) == 0;
}

/* qkv_st_read accepts the file; its qkv_step metadata (or -1) */
static long long st_ok(const char *rel) {
    char p[512];
    qkv_err err;
    qkv_safetensors *st;
    ck_assert_msg(qkv_st_read(path_in(p, sizeof p, rel), &st, &err) == 0, "%s", err.msg);
    const char *s = qkv_st_meta(st, "qkv_step");
    long long step = s ? atoll(s) : -1;
    ck_assert_int_gt(qkv_st_count(st), 0);
    qkv_st_free(st);
    return step;
}

/* a file below dir with ".tmp." in its name */
static bool has_temp(const char *rel, char *found, size_t n) {
    char p[512];
    return qkv_test_find_temp(path_in(p, sizeof p, rel), found, n);
}

/* metrics.jsonl without the timing fields (tokens_per_s, elapsed) */
static char *metrics_sans_timing(const char *dir) {
    char rel[300];
    snprintf(rel, sizeof rel, "%s/metrics.jsonl", dir);
    char *m = slurp(rel, NULL);
    ck_assert_ptr_nonnull(m);
    char *o = m;
    for (char *line = m; *line;) {
        char *nl = strchr(line, '\n');
        char *cut = strstr(line, ",\"tokens_per_s\"");
        size_t keep = cut && (!nl || cut < nl) ? (size_t)(cut - line) : (size_t)((nl ? nl : line + strlen(line)) - line);
        memmove(o, line, keep);
        o += keep;
        *o++ = '\n';
        if (!nl) break;
        line = nl + 1;
    }
    *o = 0;
    return m;
}

/* lines of metrics.jsonl: every line whole, steps 1, 2, 3, ... (log_every 1); the last step */
static long long metrics_consecutive(const char *dir) {
    char rel[300];
    snprintf(rel, sizeof rel, "%s/metrics.jsonl", dir);
    char *m = slurp(rel, NULL);
    ck_assert_ptr_nonnull(m);
    long long want = 1;
    for (char *line = m; *line;) {
        char *nl = strchr(line, '\n');
        ck_assert_msg(nl != NULL, "torn last line in %s", rel);
        long long s;
        ck_assert_msg(sscanf(line, "{\"step\":%lld,", &s) == 1 && s == want && nl[-1] == '}',
                      "%s: line for step %lld is: %.*s", rel, want, (int)(nl - line), line);
        ck_assert_ptr_null(strstr(line, "nan"));
        want++;
        line = nl + 1;
    }
    free(m);
    return want - 1;
}

static void setup(void) { qkv_test_mkdtemp(TMP, sizeof TMP, "faults"); }
static void teardown(void) { qkv_test_rmtree(TMP); }

#define MODEL "\"model\": {\"d_model\": 16, \"heads\": 2, \"layers\": 1, \"d_ff\": 32},\n"
#define TASK "\"task\": {\"name\": \"recall\", \"pairs\": 3, \"keys\": 8, \"values\": 8},\n"

/* ---- (a) kill -9 while checkpointing every step --------------------------------------------- */

START_TEST(test_kill9_checkpoints_atomic) {
    write_text("cfg.json", "{" MODEL TASK
                           " \"train\": {\"steps\": 1000000, \"batch\": 8, \"eval_every\": 0, \"log_every\": 1,"
                           " \"checkpoint_every\": 1, \"eval_examples\": 16}}\n");
    unsigned seed = (unsigned)time(NULL) ^ (unsigned)getpid();
    qkv_rng rng;
    qkv_rng_seed(&rng, seed);
    long long last_step = -1;
    char trace[512] = "";
    for (int k = 0; k < 10; k++) {
        bool resume = exists("run/checkpoint.safetensors");
        /* a kill before the first checkpoint leaves a run with nothing to resume: start it over */
        char *fresh[] = {"qkv", "train", "cfg.json", "--out", "run", "--threads", "1", "--quiet", "--force", NULL};
        char *res[] = {"qkv", "train", "--resume", "run", "--threads", "1", "--quiet", NULL};
        pid_t pid = start("stderr.txt", resume ? res : fresh);
        int ms = 50 + (int)qkv_rng_below(&rng, 251);
        size_t tl = strlen(trace);
        snprintf(trace + tl, sizeof trace - tl, " %s@%dms", resume ? "resume" : "start", ms);
        struct timespec ts = {0, ms * 1000000L};
        while (nanosleep(&ts, &ts) && errno == EINTR) {}
        ck_assert_int_eq(kill(pid, SIGKILL), 0);
        result r;
        finish(pid, "stderr.txt", &r);
        ck_assert_msg(r.sig == SIGKILL, "kill %d (seed %u,%s): the run ended by itself: exit %d: %s", k, seed, trace,
                      r.status, r.err);
        /* whatever moment the kill hit, the files in place are whole */
        if (exists("run/checkpoint.safetensors")) {
            long long s = st_ok("run/checkpoint.safetensors");
            ck_assert_msg(s >= last_step, "checkpoint went back from step %lld to %lld", last_step, s);
            last_step = s;
        }
        if (exists("run/model.safetensors")) st_ok("run/model.safetensors");
    }
    ck_assert_msg(last_step >= 1, "no checkpoint in 10 runs (seed %u,%s)", seed, trace);
    /* a resume works: the checkpoint is the file it reads, not a dead process's temporary */
    result r;
    run_qkv(&r, "train", "--resume", "run", "--threads", "1", "--quiet", "--stop-after", "3", NULL);
    ck_assert_msg(r.exited && r.status == 1 && strstr(r.err, "qkv train --resume run"), "exit %d: %s", r.status,
                  r.err);
    ck_assert_int_eq(st_ok("run/checkpoint.safetensors"), last_step + 3);
    ck_assert_int_eq(st_ok("run/model.safetensors"), last_step + 3);
    char found[300];
    ck_assert_msg(!has_temp("run", found, sizeof found), "temporary file left after resume: %s", found);
    /* the metrics agree with the checkpoint: every step once, no torn line */
    ck_assert_int_eq(metrics_consecutive("run"), last_step + 3);
    /* and the model file evaluates */
    run_qkv(&r, "eval", "run/config.json", "--checkpoint", "run/model.safetensors", "--threads", "1", NULL);
    ck_assert_msg(r.exited && r.status == 0, "eval: exit %d: %s", r.status, r.err);
}
END_TEST

/* ---- (b) SIGINT / SIGTERM, then --resume ----------------------------------------------------- */

#define SIG_CFG "{" MODEL TASK \
    " \"train\": {\"steps\": 1500, \"batch\": 8, \"eval_every\": 500, \"log_every\": 10, \"eval_examples\": 50},\n" \
    " \"optim\": {\"name\": \"adamw\", \"lr\": 0.01, \"weight_decay\": 0.1, \"clip\": 1,\n" \
    "           \"schedule\": \"cosine\", \"warmup\": 50}}\n"

static const int SIGNALS[] = {SIGINT, SIGTERM};

START_TEST(test_signal_saves_and_resumes) {
    int sig = SIGNALS[_i];
    write_text("cfg.json", SIG_CFG);
    result r;
    run_qkv(&r, "train", "cfg.json", "--out", "full", "--threads", "1", "--quiet", NULL);
    ck_assert_msg(r.exited && r.status == 0, "uninterrupted run: exit %d: %s", r.status, r.err);
    /* the interrupted run: the signal arrives once it has logged a few steps */
    char *argv[] = {"qkv", "train", "cfg.json", "--out", "part", "--threads", "1", "--quiet", NULL};
    pid_t pid = start("part.txt", argv);
    for (int polls = 0;; polls++) {
        size_t n = 0;
        char *m = slurp("part/metrics.jsonl", &n);
        int lines = 0;
        for (size_t i = 0; m && i < n; i++) lines += m[i] == '\n';
        free(m);
        if (lines >= 3) break;
        ck_assert_msg(polls < 20000 && waitpid(pid, NULL, WNOHANG) == 0, "the run ended before the signal");
        struct timespec ts = {0, 1000000L};
        nanosleep(&ts, NULL);
    }
    ck_assert_int_eq(kill(pid, sig), 0);
    finish(pid, "part.txt", &r);
    ck_assert_msg(r.exited && r.status == 1, "after %s: exit %d (signal %d): %s", strsignal(sig), r.status, r.sig,
                  r.err);
    ck_assert_msg(strstr(r.err, "checkpoint saved") && strstr(r.err, "qkv train --resume part"), "%s", r.err);
    ck_assert(!exists("part/summary.json"));
    long long stopped = st_ok("part/checkpoint.safetensors");
    ck_assert_int_gt(stopped, 0);
    ck_assert_int_lt(stopped, 1500);
    /* temporaries a killed process left (this host's, pid gone: removed on resume; an older qkv's
     * PATH.tmp.<pid>: removed) beside another host's and a live process's (kept) */
    pid_t dead = fork();
    if (dead == 0) _exit(0);
    waitpid(dead, NULL, 0);
    char tag[QKV_HOST_TAG_LEN + 1], other[QKV_HOST_TAG_LEN + 1], name[4][128];
    qkv__host_tag(tag);
    snprintf(other, sizeof other, "%08x", (unsigned)strtoul(tag, NULL, 16) ^ 1u);
    snprintf(name[0], sizeof name[0], "part/model.safetensors.tmp.%ld.%s", (long)dead, tag);
    snprintf(name[1], sizeof name[1], "part/metrics.jsonl.tmp.%ld", (long)dead);
    snprintf(name[2], sizeof name[2], "part/model.safetensors.tmp.%ld.%s", (long)dead, other);
    snprintf(name[3], sizeof name[3], "part/summary.json.tmp.%ld.%s", (long)getpid(), tag);
    for (int i = 0; i < 4; i++) write_text(name[i], "x");
    run_qkv(&r, "train", "--resume", "part", "--threads", "1", "--quiet", NULL);
    ck_assert_msg(r.exited && r.status == 0, "resume: exit %d: %s", r.status, r.err);
    ck_assert_msg(!exists(name[0]) && !exists(name[1]), "a stale temporary of this host was left");
    ck_assert_msg(exists(name[2]) && exists(name[3]), "another host's or a live process's temporary was removed");
    for (int i = 2; i < 4; i++) unlink(name[i]);
    char *a = metrics_sans_timing("full"), *b = metrics_sans_timing("part");
    ck_assert_int_gt(strlen(a), 1000);
    ck_assert_str_eq(a, b);
    free(a);
    free(b);
    size_t na, nb;
    char *ma = slurp("full/model.safetensors", &na), *mb = slurp("part/model.safetensors", &nb);
    ck_assert_msg(ma && mb && na == nb && !memcmp(ma, mb, na), "model.safetensors differs after the resume");
    free(ma);
    free(mb);
}
END_TEST

/* ---- (c) failed writes ------------------------------------------------------------------------ */

#define W_CFG "{" MODEL TASK \
    " \"train\": {\"steps\": 40, \"batch\": 8, \"eval_every\": 0, \"log_every\": 1, \"checkpoint_every\": 1," \
    " \"eval_examples\": 16}}\n"

/* a run stopped at step 5 with its checkpoint; copies of its files */
static void stopped_run(char **ckpt, size_t *nckpt, char **model, size_t *nmodel, char **metrics, size_t *nmetrics) {
    write_text("cfg.json", W_CFG);
    result r;
    run_qkv(&r, "train", "cfg.json", "--out", "run", "--threads", "1", "--quiet", "--stop-after", "5", NULL);
    ck_assert_msg(r.exited && r.status == 1, "exit %d: %s", r.status, r.err);
    ck_assert_int_eq(st_ok("run/checkpoint.safetensors"), 5);
    *ckpt = slurp("run/checkpoint.safetensors", nckpt);
    *model = slurp("run/model.safetensors", nmodel);
    *metrics = slurp("run/metrics.jsonl", nmetrics);
}

static void assert_same(const char *rel, const char *old, size_t nold) {
    size_t n;
    char *now = slurp(rel, &n);
    ck_assert_msg(now && n == nold && !memcmp(now, old, n), "%s changed", rel);
    free(now);
}

START_TEST(test_out_dir_under_a_file) {
    write_text("cfg.json", W_CFG);
    write_text("file", "a regular file\n");
    result r;
    run_qkv(&r, "train", "cfg.json", "--out", "file/run", "--threads", "1", "--quiet", NULL);
    ck_assert_msg(r.exited && r.status == 1 && one_line(r.err), "exit %d: %s", r.status, r.err);
    ck_assert_msg(strstr(r.err, "qkv train: file/run: cannot create directory: Not a directory"), "%s", r.err);
}
END_TEST

/* the failed-write tests need /dev/full (a container may have a /dev without it) */
static bool have_dev_full(const char *check) {
    if (qkv_probe_dev_full()) return true;
    qkv_test_skip(check, "no /dev/full here (or it takes writes): the failed write cannot be made");
    return false;
}

START_TEST(test_checkpoint_write_fails_keeps_previous) {
    if (!have_dev_full("faults: test_checkpoint_write_fails_keeps_previous")) return;
    char *ck, *model, *metrics;
    size_t nck, nmodel, nmetrics;
    stopped_run(&ck, &nck, &model, &nmodel, &metrics, &nmetrics);
    result r;
    run_with_full(&r, "run", "checkpoint.safetensors", "train --resume run --threads 1 --quiet");
    ck_assert_msg(r.exited && r.status == 1 && one_line(r.err), "exit %d: %s", r.status, r.err);
    ck_assert_msg(strstr(r.err, "qkv train: run/checkpoint.safetensors: writing run/checkpoint.safetensors.tmp.") &&
                  strstr(r.err, "No space left on device"), "%s", r.err);
    /* the previous checkpoint and model are untouched and load; nothing temporary is left */
    assert_same("run/checkpoint.safetensors", ck, nck);
    assert_same("run/model.safetensors", model, nmodel);
    ck_assert_int_eq(st_ok("run/checkpoint.safetensors"), 5);
    char found[300];
    ck_assert_msg(!has_temp("run", found, sizeof found), "left: %s", found);
    ck_assert(!exists("run/summary.json"));
    /* and the run goes on from it */
    run_qkv(&r, "train", "--resume", "run", "--threads", "1", "--quiet", "--stop-after", "2", NULL);
    ck_assert_msg(r.exited && r.status == 1 && strstr(r.err, "stopped at step 7"), "exit %d: %s", r.status, r.err);
    ck_assert_int_eq(metrics_consecutive("run"), 7);
    free(ck);
    free(model);
    free(metrics);
}
END_TEST

START_TEST(test_metrics_write_fails) {
    if (!have_dev_full("faults: test_metrics_write_fails")) return;
    char *ck, *model, *metrics;
    size_t nck, nmodel, nmetrics;
    stopped_run(&ck, &nck, &model, &nmodel, &metrics, &nmetrics);
    result r;
    run_with_full(&r, "run", "metrics.jsonl", "train --resume run --threads 1 --quiet");
    ck_assert_msg(r.exited && r.status == 1 && one_line(r.err), "exit %d: %s", r.status, r.err);
    ck_assert_msg(strstr(r.err, "qkv train: run/metrics.jsonl: cannot write: No space left on device"), "%s", r.err);
    assert_same("run/checkpoint.safetensors", ck, nck);
    assert_same("run/metrics.jsonl", metrics, nmetrics);
    char found[300];
    ck_assert_msg(!has_temp("run", found, sizeof found), "left: %s", found);
    free(ck);
    free(model);
    free(metrics);
}
END_TEST

START_TEST(test_summary_write_fails) {
    if (!have_dev_full("faults: test_summary_write_fails")) return;
    write_text("cfg.json", W_CFG);
    ck_assert_int_eq(mkdir(path_in((char[512]){0}, 512, "run"), 0755), 0);
    result r;
    run_with_full(&r, "run", "summary.json", "train cfg.json --out run --threads 1 --quiet --set train.steps=3");
    ck_assert_msg(r.exited && r.status == 1 && one_line(r.err), "exit %d: %s", r.status, r.err);
    ck_assert_msg(strstr(r.err, "qkv train: run/summary.json: cannot write: No space left on device"), "%s", r.err);
    ck_assert(!exists("run/summary.json"));
    ck_assert_int_eq(st_ok("run/checkpoint.safetensors"), 3);
    ck_assert_int_eq(st_ok("run/model.safetensors"), 3);
    char found[300];
    ck_assert_msg(!has_temp("run", found, sizeof found), "left: %s", found);
}
END_TEST

/* ---- (d) NaN and Inf ------------------------------------------------------------------------- */

/* plain SGD at the largest allowed learning rate, no clipping: the weights grow until the
 * forward pass overflows (about step 23 for this model) */
#define NAN_CFG "{" MODEL TASK \
    " \"train\": {\"steps\": 60, \"batch\": 4, \"eval_every\": 0, \"log_every\": 1, \"eval_examples\": 8},\n" \
    " \"optim\": {\"name\": \"sgd\", \"lr\": 10, \"schedule\": \"constant\"}}\n"

START_TEST(test_nonfinite_stops) {
    write_text("cfg.json", NAN_CFG);
    result r;
    run_qkv(&r, "train", "cfg.json", "--out", "run", "--threads", "1", "--quiet", NULL);
    ck_assert_msg(r.exited && r.status == 1 && one_line(r.err), "exit %d: %s", r.status, r.err);
    long long step = 0;
    char what[64] = "";
    ck_assert_msg(sscanf(r.err, "qkv train: step %lld: non-finite value in %63[^(]", &step, what) == 2, "%s", r.err);
    ck_assert_msg(!strcmp(what, "the loss ") || !strncmp(what, "the gradient of ", 16), "%s", r.err);
    ck_assert_int_gt(step, 1);
    /* it stopped on that step: the metrics end just before it, no summary */
    ck_assert_int_eq(metrics_consecutive("run"), step - 1);
    ck_assert(!exists("run/summary.json"));
}
END_TEST

START_TEST(test_nonfinite_skipped_and_counted) {
    write_text("cfg.json", NAN_CFG);
    result r;
    run_qkv(&r, "train", "cfg.json", "--out", "run", "--threads", "1", "--quiet", "--set", "train.skip_nonfinite=true",
            NULL);
    ck_assert_msg(r.exited && r.status == 0, "exit %d: %s", r.status, r.err);
    char *sum = slurp("run/summary.json", NULL);
    ck_assert_ptr_nonnull(sum);
    double skipped = qkv_test_json_num(sum, "skipped_steps");
    ck_assert_msg(skipped > 0, "%s", sum);
    ck_assert_msg(!strstr(sum, "nan") && !strstr(sum, "inf"), "summary.json is not JSON: %s", sum);
    /* never silent: one line per skipped step, even with --quiet */
    int lines = 0;
    for (const char *p = r.err; (p = strstr(p, "skipped (non-finite value in")); p++) lines++;
    ck_assert_int_eq(lines, (int)skipped);
    ck_assert_int_eq(metrics_consecutive("run"), 60); /* finite numbers or null, every step */
    free(sum);
}
END_TEST

/* the fast exp meets NaN once training diverges: NaN in, NaN out (it used to convert NaN to an
 * integer and shift a negative value: undefined, reported by UBSan in test_nonfinite_stops) */
START_TEST(test_fast_exp_nonfinite) {
    volatile float nan = NAN, inf = INFINITY;
    ck_assert(isnan(qkv_expf_fast(nan)));
    ck_assert(isnan(qkv_expf_fast(-nan)));
    ck_assert(qkv_expf_fast(inf) == INFINITY); /* as expf */
    ck_assert(qkv_expf_fast(-inf) == 0.0f);
    ck_assert(isnan(qkv_normal_cdf_fast(nan)));
}
END_TEST

/* ---- one trainer per run --------------------------------------------------------------------- */

#define LONG_CFG "{" MODEL TASK " \"train\": {\"steps\": 1000000, \"batch\": 8, \"eval_every\": 0, \"log_every\": 10, " \
                 "\"checkpoint_every\": 20}}\n"

/* until TMP/rel holds a line (a run has started training), or fail */
static void wait_for_line(const char *rel, pid_t alive) {
    for (int polls = 0;; polls++) {
        size_t n = 0;
        char *m = slurp(rel, &n);
        bool any = m && memchr(m, '\n', n);
        free(m);
        if (any) return;
        ck_assert_msg(polls < 60000 && waitpid(alive, NULL, WNOHANG) == 0, "%s: no line before the process ended", rel);
        struct timespec ts = {0, 1000000L};
        nanosleep(&ts, NULL);
    }
}

/* while one qkv train trains a run, a second one on that directory (--resume, or --force over it)
 * is refused in one line and changes nothing: the directory's lock */
START_TEST(test_second_trainer_refused) {
    write_text("cfg.json", LONG_CFG);
    char *argv[] = {"qkv", "train", "cfg.json", "--out", "run", "--threads", "1", "--quiet", NULL};
    pid_t first = start("first.txt", argv);
    wait_for_line("run/metrics.jsonl", first);
    for (int polls = 0; !exists("run/checkpoint.safetensors"); polls++) { /* so --resume gets as far as the lock */
        ck_assert_msg(polls < 60000, "no checkpoint");
        struct timespec ts = {0, 1000000L};
        nanosleep(&ts, NULL);
    }
    result r;
    run_qkv(&r, "train", "--resume", "run", "--threads", "1", "--quiet", NULL);
    ck_assert_msg(r.exited && r.status == 1 && one_line(r.err) && strstr(r.err, "another qkv train is training this run"),
                  "--resume: exit %d: %s", r.status, r.err);
    run_qkv(&r, "train", "cfg.json", "--out", "run", "--force", "--threads", "1", "--quiet", NULL);
    ck_assert_msg(r.exited && r.status == 1 && strstr(r.err, "another qkv train is training this run"),
                  "--force: exit %d: %s", r.status, r.err);
    ck_assert_msg(waitpid(first, NULL, WNOHANG) == 0, "the first trainer did not survive the second");
    ck_assert_int_eq(kill(first, SIGTERM), 0);
    finish(first, "first.txt", &r);
    ck_assert_msg(r.exited && r.status == 1 && strstr(r.err, "checkpoint saved"), "%s", r.err);
    run_qkv(&r, "train", "--resume", "run", "--threads", "1", "--quiet", "--stop-after", "10", NULL);
    ck_assert_msg(r.exited && r.status == 1 && strstr(r.err, "checkpoint saved"), "once it is gone: %s", r.err);
}
END_TEST

/* a qkv ablate worker killed with SIGKILL (as the OOM killer does) takes its trainer with it: the
 * trainer saves a checkpoint and ends, so a rerun never meets an orphan training the same run */
START_TEST(test_trainer_dies_with_worker) {
    write_text("cfg.json", LONG_CFG);
    write_text("abl.json", "{\"base\": \"cfg.json\", \"variants\": [{\"name\": \"full\"}], \"seeds\": [0]}\n");
    char *argv[] = {"qkv", "ablate", "abl.json", "--out", "ab", "--jobs", "1", "--quiet", NULL};
    pid_t worker = start("worker.txt", argv);
    wait_for_line("ab/runs/full/seed0/metrics.jsonl", worker);
    pid_t trainer = 0; /* the worker's child: the trainer */
    DIR *d = opendir("/proc");
    for (struct dirent *e; d && (e = readdir(d)) && !trainer;) {
        char path[300], text[512];
        snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        size_t n = fread(text, 1, sizeof text - 1, f);
        fclose(f);
        text[n] = 0;
        const char *rp = strrchr(text, ')');
        long ppid = 0;
        if (rp && sscanf(rp + 2, "%*c %ld", &ppid) == 1 && ppid == (long)worker) trainer = (pid_t)atol(e->d_name);
    }
    if (d) closedir(d);
    ck_assert_msg(trainer > 0, "no trainer under the worker");
    ck_assert_int_eq(kill(worker, SIGKILL), 0);
    waitpid(worker, NULL, 0);
    bool gone = false;
    for (int polls = 0; polls < 60000 && !gone; polls++) { /* up to a minute */
        gone = kill(trainer, 0) != 0 && errno == ESRCH;
        struct timespec ts = {0, 1000000L};
        if (!gone) nanosleep(&ts, NULL);
    }
    if (!gone) kill(trainer, SIGKILL);
    ck_assert_msg(gone, "the trainer outlived its worker by a minute");
    ck_assert_msg(exists("ab/runs/full/seed0/checkpoint.safetensors"), "the trainer saved no checkpoint");
}
END_TEST

/* ---- two hosts on one file system ------------------------------------------------------------ */

/* in a new pid namespace (as a container, or another host over a shared file system: the writer
 * is pid 1 there, as the other writer is in its own), `rounds` atomic writes of a file of one
 * byte value over path; exits 0 when every write succeeded */
static pid_t writer_in_own_pid_ns(const char *path, char fill, int rounds, int flags) {
    pid_t outer = fork();
    if (outer) return outer;
    if (unshare(flags)) _exit(3);
    pid_t inner = fork();
    if (inner < 0) _exit(4);
    if (inner == 0) {
        static char buf[1 << 18];
        memset(buf, fill, sizeof buf);
        if (getpid() != 1) _exit(5);
        for (int i = 0; i < rounds; i++) {
            qkv_wpart part = {buf, sizeof buf};
            qkv_write_status st;
            if (qkv__write_parts_atomic(path, &part, 1, &st)) _exit(6);
        }
        _exit(0);
    }
    int status;
    if (waitpid(inner, &status, 0) != inner) _exit(7);
    _exit(WIFEXITED(status) ? WEXITSTATUS(status) : 8);
}

/* Two writers of one pid (1, each in its own pid namespace) writing one file at once: every write
 * succeeds, the file is always one writer's whole content, and no temporary file is left. (With
 * PATH.tmp.<pid> alone both wrote one temporary file: renames failed with ENOENT and the file
 * mixed both contents.) Needs pid namespaces (root's, or a user namespace's): where neither can
 * be made (a container without CAP_SYS_ADMIN), skipped by name. */
START_TEST(test_two_hosts_one_file) {
    int flags = qkv_probe_pid_ns();
    if (!flags) {
        qkv_test_skip("faults: test_two_hosts_one_file", "no pid namespace here (unshare(CLONE_NEWPID), also in a "
                      "user namespace: not allowed)");
        return;
    }
    char path[4200];
    snprintf(path, sizeof path, "%s/shared.bin", TMP);
    for (int trial = 0; trial < 5; trial++) {
        pid_t a = writer_in_own_pid_ns(path, 'a', 40, flags), b = writer_in_own_pid_ns(path, 'b', 40, flags);
        int sa, sb;
        ck_assert_int_eq(waitpid(a, &sa, 0), a);
        ck_assert_int_eq(waitpid(b, &sb, 0), b);
        ck_assert_msg(WIFEXITED(sa) && WEXITSTATUS(sa) == 0 && WIFEXITED(sb) && WEXITSTATUS(sb) == 0,
                      "trial %d: a writer failed (exit %d, %d)", trial, WEXITSTATUS(sa), WEXITSTATUS(sb));
        FILE *f = fopen(path, "rb");
        ck_assert_ptr_nonnull(f);
        static char got[1 << 18];
        size_t n = fread(got, 1, sizeof got, f);
        fclose(f);
        ck_assert_uint_eq(n, sizeof got);
        for (size_t i = 1; i < n; i++) ck_assert_msg(got[i] == got[0], "trial %d: byte %zu mixes the writers", trial, i);
        char found[4200];
        ck_assert_msg(!qkv_test_find_temp(TMP, found, sizeof found), "a temporary file was left: %s", found);
    }
}
END_TEST

/* the one stop flag: a caught SIGINT or SIGTERM sets it, a new catcher clears it, and releasing
 * the catcher puts the previous handler back (here: SIG_IGN) */
START_TEST(test_stop_flag) {
    struct sigaction ign, old;
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    sigaction(SIGTERM, &ign, &old);
    for (int k = 0; k < 2; k++) {
        qkv_stop_catcher c;
        qkv_stop_catch(&c);
        ck_assert(!qkv_stop_requested());
        raise(k ? SIGINT : SIGTERM);
        ck_assert(qkv_stop_requested());
        qkv_stop_release(&c);
    }
    struct sigaction now;
    sigaction(SIGTERM, NULL, &now);
    ck_assert(now.sa_handler == SIG_IGN);
    qkv_stop_catcher c;
    qkv_stop_catch(&c);
    qkv_request_stop();
    ck_assert(qkv_stop_requested());
    qkv_stop_release(&c);
    sigaction(SIGTERM, &old, NULL);
}
END_TEST

Suite *faults_suite(void) {
    Suite *s = suite_create("faults");
    TCase *tc = tcase_create("faults");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_kill9_checkpoints_atomic);
    tcase_add_loop_test(tc, test_signal_saves_and_resumes, 0, 2);
    tcase_add_test(tc, test_out_dir_under_a_file);
    tcase_add_test(tc, test_checkpoint_write_fails_keeps_previous);
    tcase_add_test(tc, test_metrics_write_fails);
    tcase_add_test(tc, test_summary_write_fails);
    tcase_add_test(tc, test_nonfinite_stops);
    tcase_add_test(tc, test_nonfinite_skipped_and_counted);
    tcase_add_test(tc, test_fast_exp_nonfinite);
    tcase_add_test(tc, test_stop_flag);
    tcase_add_test(tc, test_two_hosts_one_file);
    tcase_add_test(tc, test_second_trainer_refused);
    tcase_add_test(tc, test_trainer_dies_with_worker);
    suite_add_tcase(s, tc);
    return s;
}
