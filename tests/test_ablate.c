/* qkv ablate end to end, on the sweeps' own rules (docs/ablate.md): runs that have not solved
 * the task are extended by doubling up to the budget, the same steps whatever order runs finish
 * in; each variant's learning rate is the one with the best validation accuracy; a matched
 * control has the baseline's parameter count to within one width step. */
#include <check.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "io/fileio.h"
#include "suites.h"
#include "testutil.h"

static char TMP[256];

static void setup(void) { qkv_test_mkdtemp(TMP, sizeof TMP, "ablate"); }
static void teardown(void) { qkv_test_rmtree(TMP); }

static void write_file(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

/* qkv ablate CONFIG --out TMP/OUT --jobs J --quiet; fails the test on a non-zero exit */
static void ablate(const char *cfg, const char *out, int jobs) {
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "%s ablate %s/%s --out %s/%s --jobs %d --quiet >/dev/null 2>%s/%s.err", qkv_test_bin(),
             TMP, cfg, TMP, out, jobs, TMP, out);
    int st = system(cmd);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s failed (see %s/%s.err)", cmd, TMP, out);
}

static cJSON *read_json(const char *path) {
    char err[512];
    size_t len;
    char *t = qkv_read_file(path, &len, err, sizeof err);
    ck_assert_msg(t != NULL, "%s", err);
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

/* The extension rule: every run ends at its train.steps x 2^k or at its budget, solved runs at
 * the first such step at or after their solved_at, unsolved ones at min(budget, the first such
 * step at or after 4 x the sweep's largest solved_at); and one job or two give the same runs. */
START_TEST(test_extension_rule_and_order) {
    char path[600];
    snprintf(path, sizeof path, "%s/base.json", TMP);
    write_file(path, BASE);
    snprintf(path, sizeof path, "%s/abl.json", TMP);
    write_file(path, "{\"base\": \"base.json\", \"threshold\": 0.6, \"max_steps\": 400,\n"
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

/* the learning rate of each variant is the one with the best mean final validation accuracy
 * over its seeds (then the lower validation loss): recomputed here from every run's numbers */
START_TEST(test_lr_chosen_on_validation) {
    char path[600];
    snprintf(path, sizeof path, "%s/base.json", TMP);
    write_file(path, BASE);
    snprintf(path, sizeof path, "%s/abl.json", TMP);
    write_file(path, "{\"base\": \"base.json\", \"threshold\": 0.99, \"max_steps\": 50, \"lrs\": [0.001, 0.01, 0.1],\n"
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

/* a parameter-matched control: model.d_ff widened so that its count is the baseline's to
 * within half a width step (2 layers x (2 d + 1) parameters per unit of d_ff) */
START_TEST(test_match_params) {
    char path[600];
    snprintf(path, sizeof path, "%s/base.json", TMP);
    write_file(path, BASE);
    snprintf(path, sizeof path, "%s/abl.json", TMP);
    write_file(path, "{\"base\": \"base.json\", \"max_steps\": 50,\n"
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
    char err[256];
    size_t len;
    char *cfg = qkv_read_file(path, &len, err, sizeof err);
    ck_assert_ptr_nonnull(cfg);
    ck_assert_ptr_nonnull(strstr(cfg, "\"d_ff\":\t48"));
    free(cfg);
}
END_TEST

Suite *ablate_suite(void) {
    Suite *s = suite_create("ablate");
    TCase *tc = tcase_create("sweeps");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_extension_rule_and_order);
    tcase_add_test(tc, test_lr_chosen_on_validation);
    tcase_add_test(tc, test_match_params);
    suite_add_tcase(s, tc);
    return s;
}
