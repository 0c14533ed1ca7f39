/* qkv ablate end to end, on the sweeps' own rules (docs/ablate.md): runs that have not solved
 * the task are extended by doubling up to the budget, the same steps whatever order runs finish
 * in; each variant's learning rate is the one with the best validation accuracy; a matched
 * control has the baseline's parameter count to within one width step. */
#define _GNU_SOURCE /* utimensat, usleep */
#include <check.h>
#include <cjson/cJSON.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <time.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ablate/claim.h"
#include "ablate/results.h"
#include "report/report.h"
#include "io/fileio.h"
#include "suites.h"
#include "testutil.h"

static char TMP[256];

static void setup(void) { qkv_test_mkdtemp(TMP, sizeof TMP, "ablate"); }
static void teardown(void) { qkv_test_rmtree(TMP); }

/* qkv ablate CONFIG --out TMP/OUT --jobs J --quiet; fails the test on a non-zero exit */
static void ablate(const char *cfg, const char *out, int jobs) {
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "%s ablate %s/%s --out %s/%s --jobs %d --quiet >/dev/null 2>%s/%s.err", qkv_test_bin(),
             TMP, cfg, TMP, out, jobs, TMP, out);
    int st = system(cmd);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s failed (see %s/%s.err)", cmd, TMP, out);
}

static cJSON *read_json(const char *path) {
    qkv_err err;
    size_t len;
    char *t = qkv__read_file(path, &len, &err);
    ck_assert_msg(t != NULL, "%s", err.msg);
    cJSON *j = cJSON_Parse(t);
    free(t);
    ck_assert_ptr_nonnull(j);
    return j;
}

static double num(const cJSON *o, const char *k) {
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(x) ? x->valuedouble : NAN;
}

/* recall that a small model solves in a few hundred steps at some rates and seeds, not others */
#define BASE                                                                                              \
    "{\"model\": {\"d_model\": 16, \"heads\": 2, \"layers\": 2, \"d_ff\": 32},\n"                       \
    " \"task\": {\"name\": \"recall\", \"pairs\": 3, \"keys\": 8, \"values\": 8},\n"                     \
    " \"train\": {\"steps\": 50, \"batch\": 16, \"eval_every\": 25, \"eval_examples\": 64},\n"          \
    " \"optim\": {\"lr\": 0.01, \"clip\": 1}}\n"

/* TMP/base.json (BASE) and the ablation config TMP/file of it */
static void sweep(const char *file, const char *text) {
    char path[600];
    snprintf(path, sizeof path, "%s/base.json", TMP);
    qkv_test_write_file(path, BASE);
    snprintf(path, sizeof path, "%s/%s", TMP, file);
    qkv_test_write_file(path, text);
}

/* The extension rule: every run ends at its train.steps x 2^k or at its budget, solved runs at
 * the first such step at or after their solved_at, unsolved ones at min(budget, the first such
 * step at or after 4 x the sweep's largest solved_at); and one job or two give the same runs. */
START_TEST(test_extension_rule_and_order) {
    char path[600];
    sweep("abl.json", "{\"base\": \"base.json\", \"threshold\": 0.6, \"max_steps\": 400,\n"
                     " \"variants\": [{\"name\": \"full\"}, {\"name\": \"identity\", \"set\": [\"model.attention.qkv=identity\"]}],\n"
                     " \"seeds\": [0, 1]}\n");
    ablate("abl.json", "one", 1);
    ablate("abl.json", "two", 2);
    snprintf(path, sizeof path, "%s/one/results.json", TMP);
    cJSON *a = read_json(path);
    snprintf(path, sizeof path, "%s/two/results.json", TMP);
    cJSON *b = read_json(path);
    double max_solved = num(a, "max_solved_at");
    ck_assert_msg(isfinite(max_solved), "no run solved: the test needs one that does");
    ck_assert(num(b, "max_solved_at") == max_solved);
    long long target = 50;
    while (target < 4 * (long long)max_solved && target < 400) target *= 2;
    if (target > 400) target = 400;
    int solved = 0, unsolved = 0;
    const cJSON *va = cJSON_GetObjectItemCaseSensitive(a, "variants"), *vb = cJSON_GetObjectItemCaseSensitive(b, "variants");
    for (int v = 0; v < cJSON_GetArraySize(va); v++) {
        const cJSON *ra = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(va, v), "runs");
        const cJSON *rb = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(vb, v), "runs");
        for (int r = 0; r < cJSON_GetArraySize(ra); r++) {
            const cJSON *x = cJSON_GetArrayItem(ra, r), *y = cJSON_GetArrayItem(rb, r);
            long long steps = (long long)num(x, "budget"), at = (long long)num(x, "steps_to_threshold");
            const char *verdict = cJSON_GetObjectItemCaseSensitive(x, "verdict")->valuestring;
            ck_assert_msg(num(y, "budget") == (double)steps && num(y, "final_acc") == num(x, "final_acc"),
                          "run %d of variant %d differs between --jobs 1 and --jobs 2", r, v);
            if (!strcmp(verdict, "solved")) {
                long long want = 50;
                while (want < at) want *= 2;
                ck_assert_int_eq(steps, want < target ? want : target);
                solved++;
            } else {
                ck_assert_int_eq(steps, target);
                unsolved++;
            }
        }
    }
    ck_assert_int_gt(solved + unsolved, 0);
    cJSON_Delete(a);
    cJSON_Delete(b);
    /* the weights too: the same run, bit for bit */
    char pa[600], pb[600], cmd[1400];
    snprintf(pa, sizeof pa, "%s/one/runs/identity/seed1/model.safetensors", TMP);
    snprintf(pb, sizeof pb, "%s/two/runs/identity/seed1/model.safetensors", TMP);
    snprintf(cmd, sizeof cmd, "cmp -s %s %s", pa, pb);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* a run that never learns is "flat at the floor", not "still improving", and results.json names
 * the floors the report says: chance 1 / values and the accuracy of never retrieving */
START_TEST(test_flat_at_the_floor) {
    char path[600];
    sweep("floor.json", "{\"base\": \"base.json\", \"threshold\": 0.99, \"max_steps\": 50,\n"
                     " \"set\": [\"optim.lr=1e-9\"], \"variants\": [{\"name\": \"full\"}], \"seeds\": [0]}\n");
    ablate("floor.json", "floor", 1);
    snprintf(path, sizeof path, "%s/floor/results.json", TMP);
    cJSON *a = read_json(path);
    ck_assert(num(a, "chance") == 0.125);
    /* 3 pairs of 8 values (test_tasks' hand count) */
    ck_assert_double_eq_tol(num(a, "no_retrieval"), (336.0 / 3 + 168.0 * 2 / 3 + 8.0) / 512, 0.015);
    const cJSON *v = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(a, "variants"), 0);
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(v, "verdicts")->valuestring, "1/1 unsolved at 50, flat at the floor");
    cJSON_Delete(a);
    char *md = qkv_test_get(TMP, "floor/results.md");
    ck_assert_ptr_nonnull(strstr(md, "chance 12.5% (1 in 8 values); a model that never retrieves 4"));
    free(md);
}
END_TEST

/* extend_to_max_steps: every unsolved run goes to max_steps, not only to 4 x the sweep's largest
 * solved_at (a run that learns nothing at a rate of 1e-6 beside one that solves early); and the
 * config's rate_choice (the pilot's rule, grid and seeds) is what results.json records */
START_TEST(test_extend_to_max_steps_and_rate_choice) {
    char path[600];
    sweep("abl.json", "{\"base\": \"base.json\", \"threshold\": 0.6, \"max_steps\": 3200, \"extend_to_max_steps\": true,\n"
                     " \"variants\": [{\"name\": \"full\"}, {\"name\": \"still\", \"set\": [\"optim.lr=0.000001\"]}],\n"
                     " \"seeds\": [0], \"pilot\": \"p/x\",\n"
                     " \"rate_choice\": {\"rule\": \"the pilot's rule\", \"grid\": [0.001, 0.01], \"pilot_seeds\": [100, 101]}}\n");
    ablate("abl.json", "ext", 2);
    snprintf(path, sizeof path, "%s/ext/results.json", TMP);
    cJSON *a = read_json(path);
    double max_solved = num(a, "max_solved_at");
    /* the usual rule would stop the unsolved run at 50 x 2^k >= 4 x max_solved, below 3200 */
    long long usual = 50;
    while (isfinite(max_solved) && usual < 4 * (long long)max_solved) usual *= 2;
    ck_assert_msg(isfinite(max_solved) && usual < 3200, "the test needs full to solve early (at %g)", max_solved);
    const cJSON *va = cJSON_GetObjectItemCaseSensitive(a, "variants");
    const cJSON *still = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(va, 1), "runs"), 0);
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(still, "verdict")->valuestring, "unsolved");
    ck_assert_int_eq((long long)num(still, "budget"), 3200);
    const cJSON *rate = cJSON_GetObjectItemCaseSensitive(a, "rate_choice");
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(rate, "rule")->valuestring, "the pilot's rule");
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(rate, "pilot")->valuestring, "p/x");
    const cJSON *grid = cJSON_GetObjectItemCaseSensitive(rate, "grid"), *ps = cJSON_GetObjectItemCaseSensitive(rate, "pilot_seeds");
    ck_assert_int_eq(cJSON_GetArraySize(grid), 2);
    ck_assert(cJSON_GetArrayItem(grid, 1)->valuedouble == 0.01);
    ck_assert_int_eq(cJSON_GetArraySize(ps), 2);
    ck_assert_int_eq((int)cJSON_GetArrayItem(ps, 0)->valuedouble, 100);
    ck_assert_int_eq((int)cJSON_GetArrayItem(ps, 1)->valuedouble, 101);
    cJSON_Delete(a);
}
END_TEST

/* the learning rate of each variant is the one with the best mean final validation accuracy
 * over its seeds (then the lower validation loss): recomputed here from every run's numbers */
START_TEST(test_lr_chosen_on_validation) {
    char path[600];
    sweep("abl.json", "{\"base\": \"base.json\", \"threshold\": 0.99, \"max_steps\": 50, \"lrs\": [0.001, 0.01, 0.1],\n"
                     " \"variants\": [{\"name\": \"full\"}, {\"name\": \"shared\", \"set\": [\"model.attention.qkv=shared\"]}],\n"
                     " \"seeds\": [0, 1]}\n");
    ablate("abl.json", "lr", 2);
    snprintf(path, sizeof path, "%s/lr/results.json", TMP);
    cJSON *j = read_json(path);
    const cJSON *vars = cJSON_GetObjectItemCaseSensitive(j, "variants");
    for (int v = 0; v < cJSON_GetArraySize(vars); v++) {
        const cJSON *var = cJSON_GetArrayItem(vars, v), *runs = cJSON_GetObjectItemCaseSensitive(var, "runs");
        ck_assert_int_eq(cJSON_GetArraySize(runs), 6); /* 3 rates x 2 seeds */
        double best_acc = -1, best_loss = INFINITY, best_lr = NAN, chosen_lr = NAN;
        for (int l = 0; l < 3; l++) {
            double acc = 0, loss = 0, lr = NAN;
            for (int s = 0; s < 2; s++) {
                const cJSON *r = cJSON_GetArrayItem(runs, l * 2 + s);
                acc += num(r, "val_acc") / 2;
                loss += num(r, "val_loss") / 2;
                lr = num(r, "lr");
                if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "chosen"))) chosen_lr = lr;
            }
            if (acc > best_acc || (acc == best_acc && loss < best_loss)) best_acc = acc, best_loss = loss, best_lr = lr;
        }
        ck_assert_double_eq(num(var, "lr"), best_lr);
        ck_assert_double_eq(chosen_lr, best_lr);
        /* the reported accuracy is the chosen runs' evaluation, not their validation */
        const cJSON *r0 = cJSON_GetArrayItem(runs, 0);
        ck_assert(isfinite(num(r0, "final_acc")) && isfinite(num(r0, "val_acc")));
    }
    cJSON_Delete(j);
    snprintf(path, sizeof path, "%s/lr/plots/learning-rate.svg", TMP);
    ck_assert_int_eq(access(path, R_OK), 0);
    snprintf(path, sizeof path, "%s/lr/runs/shared/lr0.1/seed1/summary.json", TMP);
    ck_assert_int_eq(access(path, R_OK), 0);
}
END_TEST

/* batch_runs and batch_max_runs (a variant's runs trained together, as one model) are no longer
 * read: an ablation config that has either is refused with one line naming the key, and nothing
 * is written */
START_TEST(test_removed_keys_refused) {
    const char *keys[] = {"batch_runs\": true", "batch_max_runs\": 4"};
    char path[600], text[1024], out[2048];
    snprintf(path, sizeof path, "%s/base.json", TMP);
    qkv_test_write_file(path, BASE);
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s/abl.json", TMP);
        snprintf(text, sizeof text, "{\"base\": \"base.json\", \"variants\": [{\"name\": \"full\"}], \"seeds\": [0], \"%s}\n",
                 keys[i]);
        qkv_test_write_file(path, text);
        ck_assert_int_eq(qkv_test_sh(out, sizeof out, true, "%s ablate %s/abl.json --out %s/out --quiet", qkv_test_bin(), TMP,
                                     TMP), 2);
        char want[256];
        snprintf(want, sizeof want, "abl.json: %.*s: removed (each run trains in a process of its own); drop the key\n",
                 (int)strcspn(keys[i], "\""), keys[i]);
        ck_assert_msg(strstr(out, want) && strchr(out, '\n') == strrchr(out, '\n'), "expected one line ending '%s':\n%s",
                      want, out);
        snprintf(path, sizeof path, "%s/out", TMP);
        ck_assert_int_ne(access(path, F_OK), 0);
    }
}
END_TEST

static int sh(char *out, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* metric "bpb" on byte-level text: learning rates chosen on validation loss, the difference
 * from the baseline in bits (the paired mean of (loss - baseline loss) / ln 2), no extension */
START_TEST(test_metric_bpb) {
    char path[600];
    snprintf(path, sizeof path, "%s/corpus.txt", TMP);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    for (int i = 0; i < 400; i++) fprintf(f, "the quick brown fox %d jumps over the lazy dog.\n", i * 7919 % 1000);
    fclose(f);
    snprintf(path, sizeof path, "%s/base.json", TMP);
    qkv_test_write_file(path, "{\"model\": {\"d_model\": 16, \"heads\": 2, \"layers\": 1, \"d_ff\": 32},\n"
                     " \"task\": {\"name\": \"text\", \"path\": \"corpus.txt\", \"seq_len\": 16},\n"
                     " \"train\": {\"steps\": 30, \"batch\": 8, \"eval_every\": 10, \"eval_examples\": 32},\n"
                     " \"optim\": {\"lr\": 0.01, \"clip\": 1}}\n");
    snprintf(path, sizeof path, "%s/abl.json", TMP);
    qkv_test_write_file(path, "{\"base\": \"base.json\", \"metric\": \"bpb\", \"lrs\": [0.003, 0.03],\n"
                     " \"variants\": [{\"name\": \"full\"}, {\"name\": \"shared\", \"set\": [\"model.attention.qkv=shared\"]}],\n"
                     " \"seeds\": [0, 1, 2]}\n");
    /* the text task's path is relative to the working directory: run from TMP */
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "cd %s && %s ablate abl.json --out bpb --jobs 2 --quiet >/dev/null 2>bpb.err", TMP,
             qkv_test_bin());
    int st = system(cmd);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s failed", cmd);
    snprintf(path, sizeof path, "%s/bpb/results.json", TMP);
    cJSON *j = read_json(path);
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(j, "metric");
    ck_assert(cJSON_IsString(m) && !strcmp(m->valuestring, "bpb"));
    const cJSON *vars = cJSON_GetObjectItemCaseSensitive(j, "variants");
    double base_loss[3];
    for (int v = 0; v < 2; v++) {
        const cJSON *var = cJSON_GetArrayItem(vars, v), *runs = cJSON_GetObjectItemCaseSensitive(var, "runs");
        ck_assert_int_eq(cJSON_GetArraySize(runs), 6); /* 2 rates x 3 seeds */
        double best = INFINITY, best_lr = NAN, chosen[3];
        int l_chosen = -1;
        for (int l = 0; l < 2; l++) {
            double loss = 0;
            for (int s = 0; s < 3; s++) {
                const cJSON *r = cJSON_GetArrayItem(runs, l * 3 + s);
                loss += num(r, "val_loss") / 3;
                ck_assert_double_eq(num(r, "budget"), 30); /* never extended */
            }
            if (loss < best) best = loss, best_lr = num(cJSON_GetArrayItem(runs, l * 3), "lr"), l_chosen = l;
        }
        ck_assert_double_eq(num(var, "lr"), best_lr);
        for (int s = 0; s < 3; s++) chosen[s] = num(cJSON_GetArrayItem(runs, l_chosen * 3 + s), "final_loss");
        if (v == 0) {
            memcpy(base_loss, chosen, sizeof base_loss);
            continue;
        }
        double d = 0;
        for (int s = 0; s < 3; s++) d += (chosen[s] - base_loss[s]) / log(2.0) / 3;
        ck_assert_msg(fabs(num(var, "delta_vs_baseline") - d) < 1e-9, "delta %g, expected %g",
                      num(var, "delta_vs_baseline"), d);
    }
    cJSON_Delete(j);
    snprintf(path, sizeof path, "%s/bpb/results.md", TMP);
    size_t len;
    char *md = qkv__read_file(path, &len, NULL);
    ck_assert_ptr_nonnull(md);
    ck_assert_ptr_nonnull(strstr(md, "bits per byte vs full (bits)"));
    free(md);
    /* qkv summarize: the same runs compared on bpb (the ablation's own bits) and on accuracy (bits
     * computed by summarize from the runs, paired by seed as aggregate.c pairs them) give the same cells */
    snprintf(path, sizeof path, "%s/one-bpb.json", TMP);
    qkv_test_write_file(path, "{\"base\": \"base.json\", \"metric\": \"bpb\",\n"
                     " \"variants\": [{\"name\": \"full\"}, {\"name\": \"shared\", \"set\": [\"model.attention.qkv=shared\"]}],\n"
                     " \"seeds\": [0, 1, 2]}\n");
    snprintf(path, sizeof path, "%s/one-acc.json", TMP);
    qkv_test_write_file(path, "{\"base\": \"base.json\", \"max_steps\": 30,\n"
                     " \"variants\": [{\"name\": \"full\"}, {\"name\": \"shared\", \"set\": [\"model.attention.qkv=shared\"]}],\n"
                     " \"seeds\": [0, 1, 2]}\n");
    char out[16384];
    ck_assert_int_eq(sh(out, sizeof out, "cd %s && %s ablate one-bpb.json --out one-bpb --jobs 2 --quiet && %s ablate "
                        "one-acc.json --out one-acc --jobs 2 --quiet && %s summarize one-bpb one-acc --out sum --quiet",
                        TMP, qkv_test_bin(), qkv_test_bin(), qkv_test_bin()), 0);
    snprintf(path, sizeof path, "%s/sum/summary.md", TMP);
    md = qkv__read_file(path, &len, NULL);
    ck_assert_ptr_nonnull(md);
    ck_assert_msg(strstr(md, "| variant | text d_model=16 (one-bpb): bits/byte; \xce\x94 vs full [95% CI] | text "
                             "d_model=16 (one-acc): bits/byte; "), "%s", md);
    const char *rows[] = {"\n| full | ", "\n| shared | "};
    for (int v = 0; v < 2; v++) {
        const char *a = strstr(md, rows[v]);
        ck_assert_msg(a != NULL, "%s", md);
        a += strlen(rows[v]);
        const char *b = strstr(a, " | ") + 3, *e = strstr(b, " |\n");
        size_t w = (size_t)(b - 3 - a); /* the first cell's width */
        ck_assert_msg(w == (size_t)(e - b) && !strncmp(a, b, w), "%s", md);
        if (v == 0) ck_assert(w > 10 && !strncmp(a + w - 10, "; baseline", 10));
        else ck_assert(a[0] >= '0' && a[0] <= '9' && memchr(a, '[', w));
    }
    free(md);
}
END_TEST

/* a parameter-matched control: model.d_ff widened so that its count is the baseline's to
 * within half a width step (2 layers x (2 d + 1) parameters per unit of d_ff) */
START_TEST(test_match_params) {
    char path[600];
    sweep("abl.json", "{\"base\": \"base.json\", \"max_steps\": 50,\n"
                     " \"variants\": [{\"name\": \"full\"},\n"
                     "   {\"name\": \"shared\", \"set\": [\"model.attention.qkv=shared\"], \"match_params\": \"baseline\"}],\n"
                     " \"seeds\": [0]}\n");
    ablate("abl.json", "mp", 1);
    snprintf(path, sizeof path, "%s/mp/results.json", TMP);
    cJSON *j = read_json(path);
    const cJSON *vars = cJSON_GetObjectItemCaseSensitive(j, "variants");
    const cJSON *full = cJSON_GetArrayItem(vars, 0), *shared = cJSON_GetArrayItem(vars, 1);
    double base = num(full, "params"), matched = num(shared, "params"), step = 2 * (2 * 16 + 1);
    ck_assert_double_eq(num(shared, "baseline_params"), base);
    /* shared drops 2 of the 3 16x16 projections in each of 2 layers: 1024 parameters, ~15.5 width units */
    ck_assert_double_eq(num(shared, "matched_d_ff"), 32 + 16);
    ck_assert_msg(fabs(matched - base) <= step / 2, "matched %g, baseline %g", matched, base);
    ck_assert(isnan(num(full, "matched_d_ff")));
    cJSON_Delete(j);
    /* the run really has the wider feed-forward */
    snprintf(path, sizeof path, "%s/mp/runs/shared/seed0/config.json", TMP);
    size_t len;
    char *cfg = qkv__read_file(path, &len, NULL);
    ck_assert_ptr_nonnull(cfg);
    ck_assert_ptr_nonnull(strstr(cfg, "\"d_ff\":\t48"));
    free(cfg);
}
END_TEST

/* a command's exit status, its stdout and stderr into out */
static int sh(char *out, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int sh(char *out, size_t n, const char *fmt, ...) {
    char cmd[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    strncat(cmd, " 2>&1", sizeof cmd - strlen(cmd) - 1);
    FILE *p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    size_t got = fread(out, 1, n - 1, p);
    out[got] = 0;
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* the CSV without the wall-time column (10th), which differs from run to run */
static void csv_sans_time(const char *dir, char *out, size_t n) {
    char path[600];
    snprintf(path, sizeof path, "%s/%s/results.csv", TMP, dir);
    qkv_err err;
    size_t len;
    char *t = qkv__read_file(path, &len, &err);
    ck_assert_msg(t != NULL, "%s", err.msg);
    size_t o = 0;
    for (char *line = strtok(t, "\n"); line && o < n; line = strtok(NULL, "\n")) {
        int field = 0;
        bool quoted = false;
        for (char *c = line; *c && o < n - 2; c++) {
            if (*c == '"') quoted = !quoted;
            if (*c == ',' && !quoted) field++;
            if (field != 9 || (*c == ',' && !quoted)) out[o++] = *c;
        }
        out[o++] = '\n';
    }
    out[o] = 0;
    free(t);
}

#define SWEEP                                                                                           \
    "{\"base\": \"base.json\", \"threshold\": 0.6, \"max_steps\": 200,\n"                              \
    " \"variants\": [{\"name\": \"full\"}, {\"name\": \"identity\", \"set\": [\"model.attention.qkv=identity\"]}],\n" \
    " \"seeds\": [0, 1]}\n"

/* Shares are disjoint and cover the sweep: shard 0/2, then --status and a partial --report,
 * then shard 1/2 (and --shard auto from Slurm's variables) and the report equal one worker's */
START_TEST(test_shards_status_report) {
    char path[600], out[16384], a[65536], b[65536];
    sweep("abl.json", SWEEP);
    ablate("abl.json", "whole", 2);
    ck_assert_int_eq(sh(out, sizeof out, "%s ablate %s/abl.json --out %s/part --shard 0/2 --quiet", qkv_test_bin(), TMP,
                        TMP), 0);
    ck_assert_int_eq(sh(out, sizeof out, "%s ablate %s/abl.json --out %s/part --status", qkv_test_bin(), TMP, TMP), 0);
    /* share 0 is runs 0 and 2 (full/seed0, identity/seed0); 1 and 3 wait */
    ck_assert_msg(strstr(out, "waiting  full/seed1") && strstr(out, "waiting  identity/seed1") &&
                      !strstr(out, "full/seed0") && strstr(out, "4 runs: 2 done, 0 running, 0 failed, 2 waiting"),
                  "%s", out);
    ck_assert_int_eq(sh(out, sizeof out, "%s ablate %s/abl.json --out %s/part --report", qkv_test_bin(), TMP, TMP), 0);
    ck_assert_msg(strstr(out, "a partial report: 2 of 4 runs have not finished"), "%s", out);
    /* the partial report says so in its files, and records the baseline's task and size */
    snprintf(path, sizeof path, "%s/part/results.json", TMP);
    cJSON *j = read_json(path);
    ck_assert(num(j, "missing_runs") == 2 && num(j, "runs_planned") == 4);
    ck_assert(num(j, "d_model") == 16 && num(j, "layers") == 2 && num(j, "heads") == 2);
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(j, "task")->valuestring, "recall");
    cJSON_Delete(j);
    snprintf(path, sizeof path, "%s/part/results.md", TMP);
    char *md = qkv__read_file(path, NULL, NULL);
    ck_assert_ptr_nonnull(md);
    ck_assert_msg(strstr(md, "\nPartial results: 2 of 4 runs have not finished"), "%s", md);
    free(md);
    ck_assert_int_eq(sh(out, sizeof out, "SLURM_ARRAY_TASK_ID=1 SLURM_ARRAY_TASK_COUNT=2 %s ablate %s/abl.json --out "
                        "%s/part --shard auto --quiet", qkv_test_bin(), TMP, TMP), 0);
    ck_assert_int_eq(sh(out, sizeof out, "%s ablate %s/abl.json --out %s/part --report --quiet", qkv_test_bin(), TMP,
                        TMP), 0);
    csv_sans_time("whole", a, sizeof a);
    csv_sans_time("part", b, sizeof b);
    ck_assert_str_eq(a, b);
    snprintf(path, sizeof path, "%s/part/results.json", TMP);
    j = read_json(path);
    ck_assert(num(j, "missing_runs") == 0);
    cJSON_Delete(j);
    /* qkv summarize reads what qkv ablate writes: the two sweeps side by side, cell for cell alike */
    ck_assert_int_eq(sh(out, sizeof out, "%s summarize %s/whole %s/part --out %s/sum --quiet", qkv_test_bin(), TMP, TMP,
                        TMP), 0);
    snprintf(path, sizeof path, "%s/sum/summary.csv", TMP);
    char *csv = qkv__read_file(path, NULL, NULL);
    ck_assert_ptr_nonnull(csv);
    /* each sweep's rows past its label and directory: full, then identity, the same in both */
    char rows[2][2][2048];
    int nr[2] = {0, 0};
    for (char *line = strtok(csv, "\n"); line; line = strtok(NULL, "\n")) {
        int k = !strncmp(line, "recall d_model=16 (whole),", 26) ? 0 : !strncmp(line, "recall d_model=16 (part),", 25) ? 1 : -1;
        if (k < 0 || nr[k] == 2) continue;
        snprintf(rows[k][nr[k]++], sizeof rows[k][0], "%s", strchr(strchr(line, ',') + 1, ','));
    }
    ck_assert(nr[0] == 2 && nr[1] == 2);
    for (int v = 0; v < 2; v++) {
        ck_assert_str_eq(rows[0][v], rows[1][v]);
        const char *want = v ? ",Ablation: abl,recall,16,2,2,false,identity,false,accuracy,"
                             : ",Ablation: abl,recall,16,2,2,false,full,true,accuracy,";
        ck_assert_msg(!strncmp(rows[0][v], want, strlen(want)), "%s", rows[0][v]);
    }
    free(csv);
}
END_TEST

/* A partial report names what never started as such, not as failed: share 0 of 2 of a sweep of
 * one seed trains full alone; identity's run is not started, and its cells, legend and verdicts
 * say so, in the report and as read back from results.json */
START_TEST(test_partial_report_says_not_started) {
    char path[600], out[16384];
    sweep("abl.json", "{\"base\": \"base.json\", \"threshold\": 0.6, \"max_steps\": 200,\n"
                              " \"variants\": [{\"name\": \"full\"}, {\"name\": \"identity\", \"set\": "
                              "[\"model.attention.qkv=identity\"]}],\n \"seeds\": [0]}\n");
    ck_assert_int_eq(sh(out, sizeof out, "%s ablate %s/abl.json --out %s/part --shard 0/2 --quiet && %s ablate "
                        "%s/abl.json --out %s/part --report --quiet", qkv_test_bin(), TMP, TMP, qkv_test_bin(), TMP,
                        TMP), 0);
    char again[600];
    snprintf(path, sizeof path, "%s/part", TMP);
    snprintf(again, sizeof again, "%s/again", TMP);
    qkv_ablate_results r;
    qkv_ablate_config c;
    qkv_err re;
    ck_assert_msg(qkv__ablate_results_read(&r, &c, path, &re) == 0, "%s", re.msg);
    ck_assert_int_eq(r.v[0].not_started, 0);
    ck_assert_int_eq(r.v[1].not_started, 1);
    ck_assert_msg(qkv__report_write(&r, again, NULL, &re) == 0, "%s", re.msg);
    qkv__ablate_results_free(&r);
    qkv_ablate_config_free(&c);
    for (int k = 0; k < 2; k++) { /* the report, and the one written from its results.json */
        snprintf(path, sizeof path, "%s/%s/results.md", TMP, k ? "again" : "part");
        char *md = qkv__read_file(path, NULL, NULL);
        ck_assert_ptr_nonnull(md);
        const char *row = strstr(md, "\n| identity |");
        ck_assert_msg(row && strstr(row, "| not started | not started | not started |"), "%s", md);
        ck_assert_msg(strstr(md, "\nPartial results: 1 of 2 runs has not finished (not started);"), "%s", md);
        ck_assert_msg(!strstr(md, "| failed |") && !strstr(md, "run failed"), "%s", md);
        free(md);
    }
    snprintf(path, sizeof path, "%s/part/plots/accuracy.svg", TMP);
    char *svg = qkv__read_file(path, NULL, NULL);
    ck_assert_ptr_nonnull(svg);
    ck_assert_msg(strstr(svg, ">identity (not started)<") && !strstr(svg, "failed"), "%s", svg);
    free(svg);
    snprintf(path, sizeof path, "%s/part/results.json", TMP);
    cJSON *j = read_json(path);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, "variants");
    ck_assert(num(cJSON_GetArrayItem(v, 0), "runs_not_started") == 0 &&
              num(cJSON_GetArrayItem(v, 1), "runs_not_started") == 1);
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(v, 1), "verdicts")->valuestring,
                     "1/1 not started");
    cJSON_Delete(j);
}
END_TEST

/* two workers at once on one sweep: each run is claimed by one of them, and the results are one
 * worker's; then a changed config is refused (naming the runs) unless --force */
START_TEST(test_two_workers_and_changed_config) {
    char path[600], out[16384], a[65536], b[65536];
    sweep("abl.json", SWEEP);
    ablate("abl.json", "one", 1);
    ck_assert_int_eq(sh(out, sizeof out, "(%s ablate %s/abl.json --out %s/two --jobs 1 --quiet & "
                        "%s ablate %s/abl.json --out %s/two --jobs 1 --quiet; wait)", qkv_test_bin(), TMP, TMP,
                        qkv_test_bin(), TMP, TMP), 0);
    ck_assert_msg(!strstr(out, "taking over"), "%s", out); /* live claims are never taken over */
    ck_assert_int_eq(sh(out, sizeof out, "%s ablate %s/abl.json --out %s/two --report --quiet", qkv_test_bin(), TMP,
                        TMP), 0);
    csv_sans_time("one", a, sizeof a);
    csv_sans_time("two", b, sizeof b);
    ck_assert_str_eq(a, b);
    /* input configs written by an older qkv, before a key existed (here: without
     * model.attention.kv_latent and alibi, at their defaults): the same config, the runs kept */
    const char *inputs[] = {"full-seed0", "full-seed1", "identity-seed0", "identity-seed1"};
    for (int i = 0; i < 4; i++) {
        snprintf(path, sizeof path, "%s/one/configs/%s.json", TMP, inputs[i]);
        cJSON *j = read_json(path), *att = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "model"), "attention");
        ck_assert_ptr_nonnull(cJSON_GetObjectItem(att, "kv_latent"));
        cJSON_DeleteItemFromObject(att, "kv_latent");
        cJSON_DeleteItemFromObject(att, "alibi");
        char *text = cJSON_Print(j);
        qkv_test_write_file(path, text);
        free(text);
        cJSON_Delete(j);
    }
    ck_assert_int_eq(sh(out, sizeof out, "%s ablate %s/abl.json --out %s/one --quiet", qkv_test_bin(), TMP, TMP), 0);
    csv_sans_time("one", b, sizeof b);
    ck_assert_str_eq(a, b);
    /* but an older config whose value differs from today's default is another config */
    snprintf(path, sizeof path, "%s/one/configs/full-seed1.json", TMP);
    cJSON *j = read_json(path);
    cJSON_AddNumberToObject(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "model"), "attention"), "kv_latent", 4);
    char *text = cJSON_Print(j);
    qkv_test_write_file(path, text);
    free(text);
    cJSON_Delete(j);
    ck_assert_int_eq(sh(out, sizeof out, "%s ablate %s/abl.json --out %s/one --status", qkv_test_bin(), TMP, TMP), 1);
    ck_assert_msg(strstr(out, "holds 1 run made from another config (full/seed1)"), "%s", out);
    snprintf(path, sizeof path, "%s/abl.json", TMP);
    qkv_test_write_file(path, "{\"base\": \"base.json\", \"threshold\": 0.7, \"max_steps\": 200,\n"
                     " \"variants\": [{\"name\": \"full\"}], \"seeds\": [0, 1]}\n");
    ck_assert_int_eq(sh(out, sizeof out, "%s ablate %s/abl.json --out %s/one --quiet", qkv_test_bin(), TMP, TMP), 1);
    ck_assert_msg(strstr(out, "holds 2 runs made from another config (full/seed0, full/seed1)") &&
                      strstr(out, "--force"), "%s", out);
    ck_assert_int_eq(sh(out, sizeof out, "%s ablate %s/abl.json --out %s/one --status", qkv_test_bin(), TMP, TMP), 1);
    ck_assert_int_eq(sh(out, sizeof out, "%s ablate %s/abl.json --out %s/one --force --quiet", qkv_test_bin(), TMP, TMP),
                     0);
}
END_TEST

/* claims: a live process's claim is respected; one whose process is gone, or whose heartbeat is
 * older than the limit (a machine that died), is taken over and that is said */
START_TEST(test_claims) {
    char dir[600], path[700];
    snprintf(dir, sizeof dir, "%s/run", TMP);
    ck_assert_int_eq(mkdir(dir, 0755), 0);
    pid_t child = fork();
    if (child == 0) {
        qkv__claim(dir, 600, true);
        pause();
        _exit(0);
    }
    qkv_claim_info ci;
    for (int i = 0; i < 200; i++) {
        qkv__claim_read(dir, 600, &ci);
        if (ci.held && ci.pid == child) break;
        usleep(10000);
    }
    ck_assert(ci.held && ci.pid == child && !ci.stale);
    ck_assert(!qkv__claim(dir, 600, true)); /* alive: not ours */
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    qkv__claim_read(dir, 600, &ci);
    ck_assert(ci.stale);
    ck_assert(qkv__claim(dir, 600, true)); /* gone: taken over */
    qkv__claim_read(dir, 600, &ci);
    ck_assert(ci.held && ci.pid == getpid());
    qkv__claim_release(dir);
    qkv__claim_read(dir, 600, &ci);
    ck_assert(!ci.held);
    /* another machine's claim: stale only once its heartbeat is older than the limit */
    snprintf(path, sizeof path, "%s/%s", dir, QKV_CLAIM_FILE);
    qkv_test_write_file(path, "some-other-host 4242 1700000000\n");
    ck_assert(!qkv__claim(dir, 600, true));
    struct timespec old[2] = {{time(NULL) - 700, 0}, {time(NULL) - 700, 0}};
    ck_assert_int_eq(utimensat(AT_FDCWD, path, old, 0), 0);
    qkv__claim_read(dir, 600, &ci);
    ck_assert(ci.stale && ci.age > 600 && !strcmp(ci.host, "some-other-host"));
    ck_assert(qkv__claim(dir, 600, true));
    qkv__claim_release(dir);
}
END_TEST

/* --slurm --dry-run: the array of workers, requeued on preemption, and the report job after it */
START_TEST(test_slurm_scripts) {
    char out[16384];
    sweep("abl.json", SWEEP);
    ck_assert_int_eq(sh(out, sizeof out, "%s ablate %s/abl.json --out %s/sl --slurm --tasks 3 --parallel 2 --dry-run "
                        "--sbatch --partition=cpu", qkv_test_bin(), TMP, TMP), 0);
    const char *want[] = {"#SBATCH --array=0-2%2", "#SBATCH --requeue", "#SBATCH --signal=B:TERM@60",
                          "#SBATCH --partition=cpu", "--shard auto --jobs 1", "scontrol requeue", "afterany",
                          "SLURM_RESTART_COUNT"};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        ck_assert_msg(strstr(out, want[i]), "no '%s' in:\n%s", want[i], out);
    ck_assert_int_eq(sh(out, sizeof out, "%s ablate %s/abl.json --out %s/sl --tasks 3", qkv_test_bin(), TMP, TMP), 2);
    ck_assert_int_eq(sh(out, sizeof out, "%s ablate %s/abl.json --out %s/sl --shard 2/2", qkv_test_bin(), TMP, TMP), 2);
    ck_assert_msg(strstr(out, "--shard: expected I/N with 0 <= I < N"), "%s", out);
    ck_assert_int_eq(sh(out, sizeof out, "env -u SLURM_ARRAY_TASK_ID %s ablate %s/abl.json --out %s/sl --shard auto",
                        qkv_test_bin(), TMP, TMP), 2);
}
END_TEST

/* two sweeps of different configs started together on one --out: one wins it whole, the other is
 * refused; configs/ never holds files of both (with configs/ checked and written file by file it
 * did, and both failed) */
START_TEST(test_two_configs_one_out) {
    char path[600], out[8192];
    for (int k = 0; k < 2; k++) {
        snprintf(path, sizeof path, "%s/base%d.json", TMP, k);
        char cfg[1024];
        snprintf(cfg, sizeof cfg,
                 "{\"model\": {\"d_model\": 16, \"heads\": 2, \"layers\": 1, \"d_ff\": 32},\n"
                 " \"task\": {\"name\": \"recall\", \"pairs\": 3, \"keys\": 8, \"values\": 8},\n"
                 " \"train\": {\"steps\": %d, \"batch\": 8, \"eval_every\": 0, \"eval_examples\": 16}}\n", 2 + k);
        qkv_test_write_file(path, cfg);
        snprintf(path, sizeof path, "%s/abl%d.json", TMP, k);
        snprintf(cfg, sizeof cfg, "{\"base\": \"base%d.json\", \"variants\": [{\"name\": \"a\"}, {\"name\": \"b\"}], "
                 "\"seeds\": [0, 1, 2]}\n", k);
        qkv_test_write_file(path, cfg);
    }
    for (int trial = 0; trial < 5; trial++) {
        int rc = sh(out, sizeof out,
                    "cd %s && o=race%d && { \"%s\" ablate abl0.json --out $o --jobs 1 --quiet > /dev/null 2> e0 & "
                    "\"%s\" ablate abl1.json --out $o --jobs 1 --quiet > /dev/null 2> e1 & wait; } && "
                    "grep -h '\"steps\"' $o/configs/*.json | sort -u | wc -l",
                    TMP, trial, qkv_test_bin(), qkv_test_bin());
        ck_assert_msg(rc == 0 && atoi(out) == 1, "trial %d: configs/ holds %s kinds of config", trial, out);
        snprintf(path, sizeof path, "%s/race%d/configs", TMP, trial);
        ck_assert_int_eq(sh(out, sizeof out, "ls %s | wc -l", path), 0);
        ck_assert_msg(atoi(out) == 6, "trial %d: %s configs", trial, out);
    }
}
END_TEST

/* --reuse: a finished run of another sweep with the same name and input config is copied in, not
 * trained, and its bits are the bits training it here gives; a run of the same name made from
 * another config, or extended past its train.steps, is trained here; bad uses are refused */
START_TEST(test_reuse) {
    char path[600], out[8192];
    const char *abl[][2] = {{"a.json", "identity"}, {"b.json", "qk_tied"}};
    for (int k = 0; k < 2; k++) { /* full (the same in both) and another variant named "other"; 4 steps */
        char cfg[512];
        snprintf(cfg, sizeof cfg, "{\"base\": \"base.json\", \"set\": [\"train.steps=4\", \"train.eval_every=0\"], "
                 "\"max_steps\": 4, \"variants\": [{\"name\": \"full\"}, {\"name\": \"other\", \"set\": "
                 "[\"model.attention.qkv=%s\"]}], \"seeds\": [0, 1%s]}\n", abl[k][1], k ? ", 2" : "");
        sweep(abl[k][0], cfg);
    }
    ablate("a.json", "a", 2);
    /* a's full/seed1 as if extended past its 4 steps: not the run b would make */
    snprintf(path, sizeof path, "%s/a/runs/full/seed1/summary.json", TMP);
    char *sum = qkv__read_file(path, NULL, NULL), *at = sum ? strstr(sum, "\"steps\":4,") : NULL;
    ck_assert_ptr_nonnull(at);
    at[8] = '8';
    qkv_test_write_file(path, sum);
    free(sum);
    ck_assert_int_eq(sh(out, sizeof out, "cd %s && { %s ablate b.json --out b --jobs 2 --reuse a 2>&1 >/dev/null; }",
                        TMP, qkv_test_bin()), 0);
    ck_assert_msg(strstr(out, "qkv ablate: reused 1 finished run of a (the same configs)"), "%s", out);
    ablate("b.json", "fresh", 2);
    const char *runs[] = {"full/seed0", "full/seed1", "full/seed2", "other/seed0"};
    for (int r = 0; r < 4; r++) { /* every run's model is the one training it here gives */
        char x[600], y[600];
        snprintf(x, sizeof x, "%s/b/runs/%s/%s", TMP, runs[r], "model.safetensors");
        snprintf(y, sizeof y, "%s/fresh/runs/%s/%s", TMP, runs[r], "model.safetensors");
        ck_assert_msg(sh(out, sizeof out, "cmp %s %s", x, y) == 0, "%s: %s", runs[r], out);
    }
    /* the reused run is a's (its log names where it was trained); the others were trained in b */
    ck_assert_int_eq(sh(out, sizeof out, "cat %s/b/runs/full/seed0/train.log %s/b/runs/full/seed1/train.log", TMP,
                        TMP), 0);
    ck_assert_msg(strstr(out, "a/runs/full/seed0\"") && strstr(out, "\"b/runs/full/seed1\"") &&
                  !strstr(out, "a/runs/full/seed1"), "%s", out);
    ck_assert_int_eq(sh(out, sizeof out, "cmp %s/a/runs/other/seed0/model.safetensors "
                        "%s/b/runs/other/seed0/model.safetensors", TMP, TMP), 1); /* identity is not qk_tied */
    ck_assert_int_eq(sh(out, sizeof out, "cd %s && %s ablate b.json --out b --reuse nowhere", TMP, qkv_test_bin()), 2);
    ck_assert_msg(strstr(out, "--reuse nowhere: not a sweep's directory (it has no configs/)"), "%s", out);
    ck_assert_int_eq(sh(out, sizeof out, "cd %s && %s ablate b.json --out b --reuse a --status", TMP, qkv_test_bin()),
                     2);
    ck_assert_msg(strstr(out, "--reuse copies finished runs in before training"), "%s", out);
}
END_TEST

Suite *ablate_suite(void) {
    Suite *s = suite_create("ablate");
    TCase *tc = tcase_create("sweeps");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_extension_rule_and_order);
    tcase_add_test(tc, test_flat_at_the_floor);
    tcase_add_test(tc, test_extend_to_max_steps_and_rate_choice);
    tcase_add_test(tc, test_lr_chosen_on_validation);
    tcase_add_test(tc, test_removed_keys_refused);
    tcase_add_test(tc, test_match_params);
    tcase_add_test(tc, test_metric_bpb);
    tcase_add_test(tc, test_shards_status_report);
    tcase_add_test(tc, test_partial_report_says_not_started);
    tcase_add_test(tc, test_two_workers_and_changed_config);
    tcase_add_test(tc, test_claims);
    tcase_add_test(tc, test_two_configs_one_out);
    tcase_add_test(tc, test_slurm_scripts);
    tcase_add_test(tc, test_reuse);
    suite_add_tcase(s, tc);
    return s;
}
