/* `qkv params` prints the same tensors and counts for every shipped model: each row of
 * tests/fixtures/params_snapshot.tsv (a config of configs/ or below, and for an ablation every variant's
 * model and task overrides) is rerun as `qkv params CONFIG --set ... --all` from the repository's
 * top, and its output with its exit status must hash (FNV-1a 64) to what the command printed
 * before the counts came from declaring the tensors (nn/model.c). A row whose config reads the
 * fortunes corpus is skipped by name on a machine without /usr/share/games/fortunes. */
#define _GNU_SOURCE
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "probe.h"
#include "suites.h"
#include "testutil.h"

static uint64_t fnv1a(const unsigned char *p, size_t n) {
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ULL;
    return h;
}

/* whether the config file at ../path names the fortunes corpus */
static bool reads_fortunes(const char *path) {
    char full[512];
    snprintf(full, sizeof full, "../%s", path);
    FILE *f = fopen(full, "rb");
    if (!f) return false;
    char buf[8192];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    return strstr(buf, "\"fortunes\"") != NULL;
}

START_TEST(test_params_unchanged) {
    FILE *f = fopen("fixtures/params_snapshot.tsv", "r");
    ck_assert_msg(f != NULL, "cannot read tests/fixtures/params_snapshot.tsv");
    struct stat st;
    bool fortunes = stat("/usr/share/games/fortunes", &st) == 0 && S_ISDIR(st.st_mode);
    char line[2048], cmd[4096];
    static char out[1 << 20];
    int rows = 0, skipped = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#') continue;
        line[strcspn(line, "\n")] = 0;
        char *save = NULL, *hash = strtok_r(line, "\t", &save), *total = strtok_r(NULL, "\t", &save);
        char *config = strtok_r(NULL, "\t", &save);
        ck_assert_msg(hash && total && config, "params_snapshot.tsv: row %d is short", rows + 1);
        if (!fortunes && reads_fortunes(config)) {
            skipped++;
            continue;
        }
        size_t o = (size_t)snprintf(cmd, sizeof cmd, "cd .. && \"%s\" params %s", qkv_test_bin(), config);
        for (char *s; (s = strtok_r(NULL, "\t", &save));) o += (size_t)snprintf(cmd + o, sizeof cmd - o, " --set %s", s);
        snprintf(cmd + o, sizeof cmd - o, " --all 2>&1; echo rc=$?");
        FILE *p = popen(cmd, "r");
        ck_assert_ptr_nonnull(p);
        size_t n = fread(out, 1, sizeof out, p);
        pclose(p);
        char got[17];
        snprintf(got, sizeof got, "%016llx", (unsigned long long)fnv1a((const unsigned char *)out, n));
        ck_assert_msg(!strcmp(got, hash), "qkv params changed for: %s (total then %s):\n%.*s", cmd, total, (int)n, out);
        rows++;
    }
    fclose(f);
    ck_assert_int_ge(rows + skipped, 300); /* the fixture holds 309 rows */
    if (skipped) qkv_test_skip("params of the configs that read fortunes", "no /usr/share/games/fortunes");
}
END_TEST

Suite *params_snapshot_suite(void) {
    Suite *s = suite_create("params_snapshot");
    TCase *tc = tcase_create("shipped");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_params_unchanged);
    suite_add_tcase(s, tc);
    return s;
}
