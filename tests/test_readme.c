/* The README's commands run as written: every `build/qkv` line of its "Using it" block, in
 * order, in a scratch directory that sees the repository's configs/ and docs/, each exiting 0.
 * What would take minutes is cut short, each the same way a user could: a training run takes
 * 20 steps (--set train.steps=20 and a warmup of 5 after the README's own settings), the
 * ablation is planned and not trained (--slurm --dry-run: its config read and every run laid
 * out), the two sweeps
 * summarize reads are the committed results of those configs (docs/results/recall and sort),
 * and bench times 2 steps of its tiny size. The identity run's rate and warmup are the ones
 * the study chose for identity, so the README's example agrees with the answer. */
#include <check.h>
#include <cjson/cJSON.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "probe.h"
#include "suites.h"
#include "testutil.h"
#include "tensor/buildinfo.h"

#define ROOT ".." /* the tests run from tests/ */

/* the lines of README.md's "Using it" code block that run build/qkv, as a malloc'd
 * NUL-separated list (count in *n), each without its comment */
static char *readme_commands(int *n) {
    char *text = qkv_test_get(ROOT, "README.md");
    const char *sec = strstr(text, "\n## Using it\n");
    ck_assert_msg(sec != NULL, "README.md has no \"## Using it\" section");
    const char *open = strstr(sec, "```sh\n");
    ck_assert_ptr_nonnull(open);
    open += 6;
    const char *close = strstr(open, "```");
    ck_assert_ptr_nonnull(close);
    char *out = calloc((size_t)(close - open) + 1, 1), *o = out;
    *n = 0;
    for (const char *l = open; l < close;) {
        const char *end = memchr(l, '\n', (size_t)(close - l));
        if (!end) end = close;
        size_t len = (size_t)(end - l);
        const char *hash = NULL;
        for (const char *p = l; p + 2 < end; p++)
            if (!memcmp(p, "  #", 3)) {
                hash = p;
                break;
            }
        if (hash) len = (size_t)(hash - l);
        while (len && l[len - 1] == ' ') len--;
        if (len > 10 && !strncmp(l, "build/qkv ", 10)) {
            memcpy(o, l, len);
            o += len + 1;
            (*n)++;
        }
        l = end + 1;
    }
    free(text);
    return out;
}

/* the value after "--set KEY=" in cmd, as a number (NAN when it is not there) */
static double set_value(const char *cmd, const char *key) {
    char pat[128];
    snprintf(pat, sizeof pat, "--set %s=", key);
    const char *at = strstr(cmd, pat);
    return at ? strtod(at + strlen(pat), NULL) : NAN;
}

/* the value of "KEY=" in a list of --set strings of an ablation config, or NAN */
static double config_value(const cJSON *sets, const char *key) {
    const cJSON *s;
    size_t k = strlen(key);
    cJSON_ArrayForEach(s, sets) if (cJSON_IsString(s) && !strncmp(s->valuestring, key, k) && s->valuestring[k] == '=')
        return strtod(s->valuestring + k + 1, NULL);
    return NAN;
}

/* the identity example trains at the study's identity rate and warmup (what solved recall), for
 * at least the steps its slowest seed needed */
START_TEST(readme_identity_is_the_answers_recipe) {
    int n;
    char *cmds = readme_commands(&n), *id = NULL;
    char *c = cmds;
    for (int i = 0; i < n && !id; i++, c += strlen(c) + 1)
        if (!strncmp(c, "build/qkv train ", 16) && strstr(c, "qkv=identity")) id = c;
    ck_assert_msg(id != NULL, "README.md trains no identity model");
    char *text = qkv_test_get(ROOT, "configs/study/fourth/recall.json");
    cJSON *cfg = cJSON_Parse(text);
    ck_assert_ptr_nonnull(cfg);
    const cJSON *v, *sets = NULL;
    cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(cfg, "variants")) {
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(v, "name");
        if (cJSON_IsString(name) && !strcmp(name->valuestring, "identity")) sets = cJSON_GetObjectItemCaseSensitive(v, "set");
    }
    ck_assert_ptr_nonnull(sets);
    const cJSON *common = cJSON_GetObjectItemCaseSensitive(cfg, "set");
    ck_assert_msg(set_value(id, "optim.lr") == config_value(sets, "optim.lr"), "README's identity lr %g, the study's %g",
                  set_value(id, "optim.lr"), config_value(sets, "optim.lr"));
    ck_assert_msg(set_value(id, "optim.warmup") == config_value(common, "optim.warmup"),
                  "README's identity warmup %g, the study's %g", set_value(id, "optim.warmup"),
                  config_value(common, "optim.warmup"));
    /* its budget: at least the last step at which one of the study's identity seeds solved */
    char *res = qkv_test_get(ROOT, "docs/results/study-fourth/recall/results.json");
    cJSON *r = cJSON_Parse(res);
    ck_assert_ptr_nonnull(r);
    double latest = -1;
    cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(r, "variants")) {
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(v, "name"), *run;
        if (!cJSON_IsString(name) || strcmp(name->valuestring, "identity")) continue;
        cJSON_ArrayForEach(run, cJSON_GetObjectItemCaseSensitive(v, "runs")) {
            const cJSON *at = cJSON_GetObjectItemCaseSensitive(run, "steps_to_threshold");
            ck_assert_msg(cJSON_IsNumber(at), "a study identity run did not solve recall");
            if (at->valuedouble > latest) latest = at->valuedouble;
        }
    }
    ck_assert(latest > 0);
    ck_assert_msg(set_value(id, "train.steps") >= latest, "README's identity run has %g steps; the study's seeds solved "
                  "by step %g", set_value(id, "train.steps"), latest);
    cJSON_Delete(r);
    cJSON_Delete(cfg);
    free(res);
    free(text);
    free(cmds);
}
END_TEST

START_TEST(readme_commands_run) {
    char tmp[PATH_MAX], root[PATH_MAX + 8], cwd[PATH_MAX];
    ck_assert_ptr_nonnull(getcwd(cwd, sizeof cwd));
    snprintf(root, sizeof root, "%s/%s", cwd, ROOT);
    qkv_test_mkdtemp(tmp, sizeof tmp, "readme");
    static const char *const LINKS[][2] = {
        {"configs", "configs"},
        {"docs", "docs"},
        {"runs/ablate-qkv-recall", "docs/results/recall"},
        {"runs/ablate-qkv-sort", "docs/results/sort"},
    };
    char out[8192];
    ck_assert_int_eq(qkv_test_sh(NULL, 0, false, "mkdir -p '%s/runs'", tmp), 0);
    for (size_t i = 0; i < sizeof LINKS / sizeof LINKS[0]; i++)
        ck_assert_int_eq(qkv_test_sh(NULL, 0, false, "ln -s '%s/%s' '%s/%s'", root, LINKS[i][1], tmp, LINKS[i][0]), 0);
    bool fortunes = access("/usr/share/games/fortunes", R_OK) == 0;
    int skipped = 0;
    int n;
    char *cmds = readme_commands(&n);
    ck_assert_int_ge(n, 10);
    const char *c = cmds;
    for (int i = 0; i < n; i++, c += strlen(c) + 1) {
        const char *args = c + strlen("build/qkv ");
        char extra[256] = "";
        bool text = strstr(args, "text-") != NULL, fresh_run = !strncmp(args, "train ", 6) && !strstr(args, "--resume");
        if (fresh_run)
            snprintf(extra, sizeof extra, " --set train.steps=20 --set optim.warmup=5 --set train.eval_every=10 --set train.eval_examples=16");
        else if (!strncmp(args, "ablate ", 7)) snprintf(extra, sizeof extra, " --slurm --dry-run");
        else if (!strncmp(args, "bench", 5)) snprintf(extra, sizeof extra, " --size tiny --steps 2%s",
                                                       strstr(args, "--precision both") ? " --rounds 1" : "");
        if ((text || strstr(args, "runs/fortunes") || strstr(args, "runs/tokens")) && !fortunes) {
            if (!skipped++) qkv_test_skip("the README's text commands", "Debian's fortunes is not installed");
            continue;
        }
        qkv_err why; /* a command of bf16 products, where this machine or build has none */
        if ((strstr(args, "--precision both") || strstr(args, "precision=bf16")) && !qkv_bf16_available(&why)) {
            qkv_test_skip("the README's bf16 commands", why.msg);
            continue;
        }
        int st = qkv_test_sh(out, sizeof out, true, "cd '%s' && %s %s%s </dev/null", tmp, qkv_test_bin(), args, extra);
        ck_assert_msg(st == 0, "README.md: `build/qkv %s`%s exited %d:\n%s", args, extra, st, out);
    }
    free(cmds);
    qkv_test_rmtree(tmp);
}
END_TEST

Suite *readme_suite(void) {
    Suite *s = suite_create("readme");
    TCase *tc = tcase_create("readme");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, readme_identity_is_the_answers_recipe);
    tcase_add_test(tc, readme_commands_run);
    suite_add_tcase(s, tc);
    return s;
}
