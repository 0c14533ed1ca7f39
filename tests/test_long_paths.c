/* Paths of any length (src/io/strbuf.h): a path qkv builds is never cut short. With an --out of
 * about 1,140 and 1,207 bytes (deep directories; Linux takes paths of up to 4,095 bytes), a
 * training run and a sweep write every file under its own name inside --out and nothing beside
 * it: each seed's input config and run directory its own, none of them a cut name shared by two
 * seeds, no directory made from a cut --out. Near the system's limit, a run is refused on one line
 * that names the path (bounded) and says why. And the two helpers: qkv__pathf keeps a path whole,
 * qkv__shown bounds one in a message at both ends. */
#define _GNU_SOURCE /* nftw */
#include <check.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "suites.h"
#include "testutil.h"
#include "config/config.h"
#include "io/fileio.h"
#include "io/strbuf.h"

static char TMP[256];

static void setup(void) { qkv_test_mkdtemp(TMP, sizeof TMP, "long-paths"); }
/* rm -r, which goes down trees deeper than a path can name */
static void teardown(void) { qkv_test_sh(NULL, 0, true, "rm -rf '%s'", TMP); }

#define SMALL                                                                                            \
    "{\"model\": {\"d_model\": 16, \"heads\": 2, \"layers\": 1, \"d_ff\": 32},\n"                        \
    " \"task\": {\"name\": \"recall\", \"pairs\": 3, \"keys\": 8, \"values\": 8},\n"                     \
    " \"train\": {\"steps\": 10, \"batch\": 8, \"eval_every\": 5, \"eval_examples\": 32},\n"             \
    " \"optim\": {\"lr\": 0.01}}\n"
/* variant names of 40 and 42 bytes: with an --out of 1,140 bytes, OUT/configs/NAME-lrLR-seedS.json
 * and OUT/runs/NAME/lrLR/seedS pass 1,200 bytes */
#define V0 "variant_with_a_rather_long_name_for_path"
#define V1 V0 "_s"
static const char *const VARIANTS[2] = {V0, V1};
static const char *const LRS[2] = {"0.003", "0.03"};
static const int SEEDS[2] = {1, 2};
#define SWEEP                                                                                            \
    "{\"base\": \"small.json\", \"max_steps\": 10, \"lrs\": [0.003, 0.03],\n"                            \
    " \"variants\": [{\"name\": \"" V0 "\"}, {\"name\": \"" V1 "\", \"set\": [\"model.attention.qkv=shared\"]}],\n" \
    " \"seeds\": [1, 2]}\n"

/* TMP/tag/D.../LAST, exactly len bytes: its parents made (components of at most 200 bytes), itself
 * not; LAST is 150 to 255 bytes, so a path cut anywhere past the parent names a sibling of it */
static char *long_dir(const char *tag, size_t len) {
    char *p = qkv__pathf("%s/%s", TMP, tag);
    ck_assert_ptr_nonnull(p);
    ck_assert_int_eq(mkdir(p, 0755), 0);
    for (;;) {
        size_t rem = len - strlen(p); /* what is still to come, the last component's slash included */
        ck_assert_uint_gt(rem, 150);
        char part[256];
        size_t k = rem > 256 ? (rem - 152 > 200 ? 200 : rem - 152) : rem - 1;
        memset(part, rem > 256 ? 'd' : 'o', k);
        part[k] = 0;
        char *q = qkv__pathf("%s/%s", p, part);
        ck_assert_ptr_nonnull(q);
        free(p);
        p = q;
        if (rem <= 256) break;
        ck_assert_int_eq(mkdir(p, 0755), 0);
    }
    ck_assert_uint_eq(strlen(p), len);
    return p;
}

/* nothing under the tree but out's parents, out and what is inside it (nftw's callback) */
static const char *OUT;
static char STRAY[8192];
static int not_outside(const char *f, const struct stat *sb, int flag, struct FTW *ftw) {
    (void)sb, (void)flag, (void)ftw;
    size_t n = strlen(f), no = strlen(OUT);
    bool parent_or_out = n <= no && !strncmp(f, OUT, n) && (OUT[n] == '/' || !OUT[n]);
    bool inside = n > no && !strncmp(f, OUT, no) && f[no] == '/';
    if (!parent_or_out && !inside && !STRAY[0]) snprintf(STRAY, sizeof STRAY, "%s", f);
    return 0;
}
static void assert_nothing_outside(const char *tag, const char *out) {
    char *root = qkv__pathf("%s/%s", TMP, tag);
    OUT = out;
    STRAY[0] = 0;
    ck_assert_int_eq(nftw(root, not_outside, 16, FTW_PHYS), 0);
    ck_assert_msg(!STRAY[0], "a file or directory outside --out (%zu bytes): %s (%zu bytes)", strlen(out), STRAY,
                  strlen(STRAY));
    free(root);
}

/* qkv ARGS... run in TMP, its stderr into TMP/err: the exit status; *err the stderr (malloc'd) */
static int qkv(char **err, char *const args[]) {
    char *argv[16] = {(char *)qkv_test_bin()};
    for (int i = 0; args[i]; i++) argv[i + 1] = args[i];
    char *errpath = qkv__pathf("%s/err", TMP);
    int st;
    ck_assert_int_gt(waitpid(qkv_test_spawn(TMP, errpath, argv[0], argv), &st, 0), 0);
    size_t len;
    qkv_err e;
    *err = qkv__read_file(errpath, &len, &e);
    ck_assert_msg(*err != NULL, "%s", e.msg);
    free(errpath);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static bool exists(const char *dir, const char *file) {
    char *p = qkv__pathf("%s/%s", dir, file);
    bool there = access(p, F_OK) == 0;
    free(p);
    return there;
}

/* the config at dir/file, which must be there and readable */
static qkv_config config_at(const char *dir, const char *file) {
    char *p = qkv__pathf("%s/%s", dir, file);
    qkv_err e;
    qkv_config c;
    qkv_config_defaults(&c);
    ck_assert_msg(qkv_config_load(&c, p, &e) == 0, "%s", e.msg);
    free(p);
    return c;
}

static int entries(const char *dir, const char *sub) {
    char *p = qkv__pathf("%s/%s", dir, sub), out[32];
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, false, "ls -A '%s' | wc -l", p), 0);
    free(p);
    return atoi(out);
}

/* a run of qkv train into an --out of that length, then resumed */
static void train_into(size_t len) {
    qkv_test_put(TMP, "small.json", SMALL);
    char tag[32], *err;
    snprintf(tag, sizeof tag, "train-%zu", len);
    char *out = long_dir(tag, len);
    int rc = qkv(&err, (char *const[]){"train", "small.json", "--out", out, "--quiet", NULL});
    ck_assert_msg(rc == 0, "--out of %zu bytes: exit %d: %s", len, rc, err);
    free(err);
    const char *files[] = {"config.json", "metrics.jsonl", "model.safetensors", "checkpoint.safetensors",
                           "summary.json", "observed.safetensors", "observed-start.safetensors"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
        ck_assert_msg(exists(out, files[i]), "--out of %zu bytes: no %s in it", len, files[i]);
    ck_assert_int_eq(entries(out, "."), 7);
    rc = qkv(&err, (char *const[]){"train", "--resume", out, "--quiet", NULL});
    ck_assert_msg(rc == 0, "--resume of %zu bytes: exit %d: %s", len, rc, err);
    free(err);
    assert_nothing_outside(tag, out);
    free(out);
}

START_TEST(test_train_out_1140) { train_into(1140); }
END_TEST

START_TEST(test_train_out_1207) { train_into(1207); }
END_TEST

/* a sweep of 2 variants x 2 rates x 2 seeds into an --out of that length: each run's input config
 * and run directory under its own name, holding its own seed and rate */
static void ablate_into(size_t len) {
    qkv_test_put(TMP, "small.json", SMALL);
    qkv_test_put(TMP, "abl.json", SWEEP);
    char tag[32], *err;
    snprintf(tag, sizeof tag, "ablate-%zu", len);
    char *out = long_dir(tag, len);
    int rc = qkv(&err, (char *const[]){"ablate", "abl.json", "--out", out, "--jobs", "2", "--quiet", NULL});
    ck_assert_msg(rc == 0, "--out of %zu bytes: exit %d: %s", len, rc, err);
    ck_assert_msg(!strstr(err, "failed"), "--out of %zu bytes: %s", len, err);
    free(err);
    ck_assert_int_eq(entries(out, "configs"), 8);
    for (int v = 0; v < 2; v++)
        for (int l = 0; l < 2; l++)
            for (int s = 0; s < 2; s++) {
                char cfg[256], run[256];
                snprintf(cfg, sizeof cfg, "configs/%s-lr%s-seed%d.json", VARIANTS[v], LRS[l], SEEDS[s]);
                snprintf(run, sizeof run, "runs/%s/lr%s/seed%d", VARIANTS[v], LRS[l], SEEDS[s]);
                qkv_config a = config_at(out, cfg);
                char *dir = qkv__pathf("%s/%s", out, run);
                qkv_config b = config_at(dir, "config.json");
                ck_assert_msg(a.train.seed == SEEDS[s] && b.train.seed == SEEDS[s], "%s: seeds %lld and %lld", run,
                              (long long)a.train.seed, (long long)b.train.seed);
                ck_assert_double_eq(a.optim.lr, atof(LRS[l]));
                ck_assert_double_eq(b.optim.lr, atof(LRS[l]));
                ck_assert_msg(exists(dir, "summary.json"), "%s: not finished", run);
                free(dir);
            }
    for (int v = 0; v < 2; v++) {
        char sub[128];
        snprintf(sub, sizeof sub, "runs/%s/lr%s", VARIANTS[v], LRS[0]);
        ck_assert_int_eq(entries(out, sub), 2); /* seed1 and seed2, no cut names */
    }
    ck_assert(exists(out, "report.md"));
    assert_nothing_outside(tag, out);
    free(out);
}

START_TEST(test_ablate_out_1140) { ablate_into(1140); }
END_TEST

START_TEST(test_ablate_out_1207) { ablate_into(1207); }
END_TEST

/* an --out whose files' temporary names pass the system's limit: refused on one line that names
 * the path and says why (the message is not cut before its reason), nothing outside --out */
START_TEST(test_train_out_near_the_limit) {
    qkv_test_put(TMP, "small.json", SMALL);
    char *out = long_dir("limit", 4080), *err;
    int rc = qkv(&err, (char *const[]){"train", "small.json", "--out", out, "--quiet", NULL});
    ck_assert_int_eq(rc, 1);
    char *nl = strchr(err, '\n');
    ck_assert_msg(nl && !nl[1], "not one line: %s", err);
    ck_assert_msg(strstr(err, "File name too long"), "no reason: %.300s", err);
    ck_assert_msg(strstr(err, "/config.json: cannot write"), "the path's end is not named: %.300s", err);
    ck_assert_msg(strstr(err, TMP) && strlen(err) < 400, "the path is not named, or not bounded: %.300s", err);
    free(err);
    assert_nothing_outside("limit", out);
    free(out);
}
END_TEST

START_TEST(test_pathf_and_shown) {
    char long_name[5001];
    memset(long_name, 'x', 5000);
    long_name[5000] = 0;
    char *p = qkv__pathf("/%s/%s", long_name, "end");
    ck_assert_uint_eq(strlen(p), 5005); /* whole, past any fixed limit */
    ck_assert_str_eq(p + 5001, "/end");
    qkv_shown s = qkv__shown(p);
    ck_assert_uint_le(strlen(s.s), QKV_SHOWN_MAX);
    ck_assert(!strncmp(s.s, p, 40) && strstr(s.s, "xxx...xxx"));
    ck_assert_str_eq(s.s + strlen(s.s) - 4, "/end"); /* its end, which names the file */
    free(p);
    ck_assert_str_eq(qkv__shown("runs/a/config.json").s, "runs/a/config.json");
    ck_assert_str_eq(qkv__shown(NULL).s, "(null)");
    /* cut at character boundaries: "é" is two bytes, so both parts hold whole ones */
    char utf[1001];
    for (int i = 0; i < 500; i++) memcpy(utf + 2 * i, "\xc3\xa9", 2);
    utf[1000] = 0;
    s = qkv__shown(utf);
    const char *dots = strstr(s.s, "...");
    ck_assert_ptr_nonnull(dots);
    ck_assert_int_eq((int)(dots - s.s) % 2, 0);
    ck_assert_int_eq((int)strlen(dots + 3) % 2, 0);
    ck_assert_int_eq((unsigned char)dots[3], 0xc3);
}
END_TEST

Suite *long_paths_suite(void) {
    Suite *s = suite_create("long_paths");
    TCase *tc = tcase_create("long_paths");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_pathf_and_shown);
    tcase_add_test(tc, test_train_out_1140);
    tcase_add_test(tc, test_train_out_1207);
    tcase_add_test(tc, test_train_out_near_the_limit);
    tcase_add_test(tc, test_ablate_out_1140);
    tcase_add_test(tc, test_ablate_out_1207);
    suite_add_tcase(s, tc);
    return s;
}
