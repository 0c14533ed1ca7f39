/* The one error convention (tensor/error.h): qkv_err_set and qkv_err_prefix keep a message whole
 * or mark the cut, accept no error at all, and every layer reports its failures in a qkv_err whose
 * code says whose fault it is: the user's input (a config, a config file) or a failure at run time
 * (a file that cannot be read, a damaged checkpoint, an op that failed). The context keeps a
 * qkv_err for its deferred op errors: the first, whole. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autograd/ops.h"
#include "io/fileio.h"
#include "io/safetensors.h"
#include "nn/model.h"
#include "suites.h"
#include "tensor/error.h"
#include "testutil.h"

static char TMP[256];
static void setup(void) { qkv_test_mkdtemp(TMP, sizeof TMP, "errors"); }
static void teardown(void) { qkv_test_rmtree(TMP); }

START_TEST(test_set_and_cut) {
    qkv_err e;
    ck_assert_int_eq(qkv_err_set(&e, QKV_ERR_USAGE, "%s: expected %d", "heads", 4), -1);
    ck_assert_int_eq(e.code, QKV_ERR_USAGE);
    ck_assert_str_eq(e.msg, "heads: expected 4");
    /* a message longer than the room: cut, and the cut shown */
    char *long_text = malloc(QKV_ERR_MSG + 100);
    memset(long_text, 'x', QKV_ERR_MSG + 99);
    long_text[QKV_ERR_MSG + 99] = 0;
    qkv_err_set(&e, QKV_ERR_FAIL, "%s", long_text);
    ck_assert_uint_eq(strlen(e.msg), QKV_ERR_MSG - 1);
    ck_assert_str_eq(e.msg + QKV_ERR_MSG - 4, "...");
    free(long_text);
    /* no error to fill: the failure is still returned */
    ck_assert_int_eq(qkv_err_set(NULL, QKV_ERR_FAIL, "nowhere"), -1);
    qkv_err_clear(NULL);
    qkv_err_clear(&e);
    ck_assert_int_eq(e.code, QKV_ERR_OK);
    ck_assert_str_eq(e.msg, "");
}
END_TEST

START_TEST(test_prefix) {
    qkv_err e;
    qkv_err_set(&e, QKV_ERR_FAIL, "data.jsonl: cannot read: No such file or directory");
    ck_assert_int_eq(qkv_err_prefix(&e, "%s: ", "task.path"), -1);
    ck_assert_int_eq(e.code, QKV_ERR_FAIL); /* the code is the callee's */
    ck_assert_str_eq(e.msg, "task.path: data.jsonl: cannot read: No such file or directory");
    /* prefixed past the room: the message's end is cut, and the cut shown */
    char *head = malloc(QKV_ERR_MSG);
    memset(head, 'h', QKV_ERR_MSG - 10);
    head[QKV_ERR_MSG - 10] = 0;
    qkv_err_prefix(&e, "%s", head);
    ck_assert_uint_eq(strlen(e.msg), QKV_ERR_MSG - 1);
    ck_assert_int_eq(strncmp(e.msg, head, QKV_ERR_MSG - 10), 0);
    ck_assert_str_eq(e.msg + QKV_ERR_MSG - 4, "...");
    free(head);
    ck_assert_int_eq(qkv_err_prefix(NULL, "x"), -1);
}
END_TEST

/* the library says whose fault a failure is, where it knows it */
START_TEST(test_library_codes) {
    qkv_err e;
    qkv_model_config c = qkv_test_small_model();
    c.heads = 3; /* does not divide d_model */
    ck_assert_int_eq(qkv_model_config_check(&c, &e), -1);
    ck_assert_int_eq(e.code, QKV_ERR_USAGE);
    ck_assert_msg(!strncmp(e.msg, "heads: 3 does not divide d_model", 32), "%s", e.msg);
    qkv_err_clear(&e);
    ck_assert_ptr_null(qkv_model_new(&c, QKV_F32, 0, &e));
    ck_assert_int_eq(e.code, QKV_ERR_USAGE);
    char path[512];
    snprintf(path, sizeof path, "%s/missing.json", TMP);
    ck_assert_ptr_null(qkv__read_config_file(path, NULL, &e)); /* a config: the user's file */
    ck_assert_int_eq(e.code, QKV_ERR_USAGE);
    ck_assert_ptr_nonnull(strstr(e.msg, "missing.json: cannot open: "));
    ck_assert_ptr_null(qkv__read_file(path, NULL, &e)); /* any other file: at run time */
    ck_assert_int_eq(e.code, QKV_ERR_FAIL);
    ck_assert_ptr_nonnull(strstr(e.msg, "missing.json: cannot read: "));
    qkv_safetensors *st = NULL;
    ck_assert_int_eq(qkv_st_read(path, &st, &e), -1);
    ck_assert_int_eq(e.code, QKV_ERR_FAIL);
    snprintf(path, sizeof path, "%s/file", TMP);
    ck_assert_int_eq(qkv__write_file_atomic(path, "x", 1, &e), 0);
    snprintf(path, sizeof path, "%s/file/below", TMP); /* a directory under a file */
    ck_assert_int_eq(qkv__mkdirs(path, &e), -1);
    ck_assert_int_eq(e.code, QKV_ERR_FAIL);
}
END_TEST

/* the context's deferred error is a qkv_err: the first op's, whole, until the reset */
START_TEST(test_context_error) {
    qkv_ctx *ctx = qkv_ctx_new();
    ck_assert(qkv_ctx_ok(ctx));
    char *long_text = malloc(1001);
    memset(long_text, 'm', 1000);
    long_text[1000] = 0;
    ck_assert_ptr_null(qkv_ctx_fail(ctx, "first: %s", long_text));
    qkv_ctx_fail(ctx, "second");
    ck_assert(!qkv_ctx_ok(ctx));
    ck_assert_uint_eq(strlen(qkv_ctx_error(ctx)), 7 + 1000); /* whole: no shorter room than any error's */
    ck_assert_int_eq(strncmp(qkv_ctx_error(ctx), "first: ", 7), 0);
    free(long_text);
    /* an op given a NULL input keeps the first error */
    int64_t s[1] = {2};
    qkv_tensor *a = qkv_ctx_tensor(ctx, QKV_F32, 1, s);
    ck_assert_ptr_null(qkv_add(ctx, a, NULL));
    ck_assert_int_eq(strncmp(qkv_ctx_error(ctx), "first: ", 7), 0);
    qkv_ctx_reset(ctx);
    ck_assert(qkv_ctx_ok(ctx));
    ck_assert_str_eq(qkv_ctx_error(ctx), "");
    qkv_ctx_free(ctx);
}
END_TEST

Suite *errors_suite(void) {
    Suite *s = suite_create("errors");
    TCase *tc = tcase_create("errors");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_set_and_cut);
    tcase_add_test(tc, test_prefix);
    tcase_add_test(tc, test_library_codes);
    tcase_add_test(tc, test_context_error);
    suite_add_tcase(s, tc);
    return s;
}
