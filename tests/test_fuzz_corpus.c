/* The fuzzers' seed corpora (fuzz/corpus/NAME/, with every crash they found), replayed through the
 * readers the fuzzers drive (fuzz/fuzz_NAME.c): no crash (under `make asan`: no sanitizer report),
 * and every error is one line. */
#include <check.h>
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "io/safetensors.h"
#include "suites.h"
#include "tasks/task_data.h"

static uint8_t *read_bytes(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot read %s", path);
    uint8_t *buf = malloc(1 << 20);
    ck_assert_ptr_nonnull(buf);
    *n = fread(buf, 1, 1 << 20, f);
    fclose(f);
    return buf;
}

static const char *const FUZZ_TARGETS[] = {"config", "safetensors", "jsonl"};

static void one_line_error(const char *file, const char *err) {
    ck_assert_msg(err[0] && !strchr(err, '\n'), "%s: not a one-line error: [%s]", file, err);
}

/* each file of fuzz/corpus/NAME/ through the reader its fuzzer drives (fuzz/fuzz_NAME.c): no
 * crash (under `make asan`: no sanitizer report), errors are one line */
START_TEST(test_fuzz_corpus_replay) {
    char dir[256];
    snprintf(dir, sizeof dir, "../fuzz/corpus/%s", FUZZ_TARGETS[_i]);
    DIR *d = opendir(dir);
    ck_assert_msg(d != NULL, "no %s (tests run from tests/)", dir);
    int files = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        char path[600];
        qkv_err err;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        size_t n;
        uint8_t *b = read_bytes(path, &n);
        files++;
        if (_i == 0) { /* JSON, then NUL and --set lines */
            char *text = malloc(n + 2);
            memcpy(text, b, n);
            text[n] = text[n + 1] = 0;
            qkv_config c;
            qkv_config_defaults(&c);
            qkv_err ce;
            if (qkv_config_parse(&c, text, path, &ce)) {
                one_line_error(path, ce.msg);
            } else {
                for (char *line = memchr(text, 0, n) ? text + strlen(text) + 1 : NULL; line && *line;) {
                    char *nl = strchr(line, '\n');
                    if (nl) *nl = 0;
                    if (qkv_config_set(&c, line, &ce)) one_line_error(path, ce.msg);
                    line = nl ? nl + 1 : NULL;
                }
            }
            free(text);
        } else if (_i == 1) {
            qkv_safetensors *st = NULL;
            if (qkv_st_parse(b, n, path, &st, &err)) one_line_error(path, err.msg);
            qkv_st_free(st);
        } else {
            qkv_task t;
            memset(&t, 0, sizeof t);
            t.cfg.kind = QKV_TASK_FILE;
            qkv_err je;
            if (qkv__task_parse_jsonl(&t, (const char *)b, n, path, &je)) one_line_error(path, je.msg);
            qkv_task_close(&t);
        }
        free(b);
    }
    closedir(d);
    ck_assert_int_ge(files, 4);
}
END_TEST

Suite *fuzz_corpus_suite(void) {
    Suite *s = suite_create("fuzz_corpus");
    TCase *tf = tcase_create("replay");
    tcase_set_timeout(tf, 60);
    tcase_add_loop_test(tf, test_fuzz_corpus_replay, 0, 3);
    suite_add_tcase(s, tf);
    return s;
}
