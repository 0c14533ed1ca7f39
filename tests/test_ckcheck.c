/* Checksummed, self-describing checkpoints (docs/reliability.md): qkv's model files and
 * checkpoints carry their effective config (qkv_config) and the CRC-32 of their data
 * (qkv_crc32); every read checks the CRC, qkv train --resume compares the configs, qkv sample
 * and qkv eval refuse a file of another model or task. Files without them (an older qkv's,
 * PyTorch's) load as before. Each test runs the qkv binary on a tiny recall run in its own
 * temporary directory. */
#define _GNU_SOURCE /* memmem */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/safetensors.h"
#include "nn/model.h"
#include "nn/model_file.h"
#include "suites.h"
#include "testutil.h"

static char TMP[256];

/* a tiny recall run: vocab 16 and seq_len 9 from the task (the shapes of the copy task below) */
#define CFG                                                                                                 \
    "{\"model\": {\"d_model\": 16, \"heads\": 2, \"layers\": 1, \"d_ff\": 32},\n"                            \
    " \"task\": {\"name\": \"recall\", \"pairs\": 3, \"keys\": 8, \"values\": 8},\n"                         \
    " \"train\": {\"steps\": 10, \"batch\": 8, \"eval_every\": 0, \"eval_examples\": 16, \"log_every\": 5},\n" \
    " \"optim\": {\"schedule\": \"constant\", \"warmup\": 0}}\n"

static void setup(void) {
    qkv_test_mkdtemp(TMP, sizeof TMP, "ckcheck");
    char p[400];
    snprintf(p, sizeof p, "%s/cfg.json", TMP);
    qkv_test_write_file(p, CFG);
}
static void teardown(void) { qkv_test_rmtree(TMP); }

/* `qkv ARGS` in TMP: its exit status, its stderr in err */
static int qkv(char *err, size_t n, const char *args) {
    return qkv_test_sh(err, n, false, "cd '%s' && '%s' %s 2>&1 >/dev/null", TMP, qkv_test_bin(), args);
}

/* err is exactly one line, holding want */
static void one_line_with(const char *err, const char *want) {
    size_t len = strlen(err);
    ck_assert_msg(len > 1 && err[len - 1] == '\n' && strchr(err, '\n') == err + len - 1,
                  "stderr is not exactly one line: [%s]", err);
    ck_assert_msg(strstr(err, want) != NULL, "the message lacks [%s]: %s", want, err);
}

/* the tiny run, trained to its end in TMP/run */
static void train_run(void) {
    char err[4096];
    int rc = qkv(err, sizeof err, "train cfg.json --out run --quiet --threads 1");
    ck_assert_msg(rc == 0, "train: exit %d: %s", rc, err);
}

static uint8_t *read_all(const char *rel, size_t *n) {
    char p[400];
    snprintf(p, sizeof p, "%s/%s", TMP, rel);
    FILE *f = fopen(p, "rb");
    ck_assert_msg(f != NULL, "cannot open %s", p);
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = malloc((size_t)len + 1);
    ck_assert(b && fread(b, 1, (size_t)len, f) == (size_t)len);
    fclose(f);
    b[len] = 0;
    *n = (size_t)len;
    return b;
}

static void write_all(const char *rel, const void *b, size_t n) {
    char p[400];
    snprintf(p, sizeof p, "%s/%s", TMP, rel);
    FILE *f = fopen(p, "wb");
    ck_assert(f && fwrite(b, 1, n, f) == n && fclose(f) == 0);
}

/* flip the lowest bit of the first byte of the data buffer: the low mantissa bit of the first
 * tensor's first float, so every value stays finite (the finiteness check cannot see it) */
static void flip_data_byte(const char *rel) {
    size_t n;
    uint8_t *b = read_all(rel, &n);
    uint64_t hlen = 0;
    for (int i = 7; i >= 0; i--) hlen = hlen << 8 | b[i];
    ck_assert_uint_lt(8 + hlen, n);
    b[8 + hlen] ^= 1;
    write_all(rel, b, n);
    free(b);
}

/* replace the first `from` in a text file by `to` (the same length or not) */
static void edit_text(const char *rel, const char *from, const char *to) {
    size_t n;
    char *t = (char *)read_all(rel, &n);
    char *at = strstr(t, from);
    ck_assert_msg(at != NULL, "%s lacks [%s]", rel, from);
    size_t fl = strlen(from), tl = strlen(to);
    char *out = malloc(n - fl + tl + 1);
    memcpy(out, t, (size_t)(at - t));
    memcpy(out + (at - t), to, tl);
    memcpy(out + (at - t) + tl, at + fl, n - (size_t)(at - t) - fl);
    write_all(rel, out, n - fl + tl);
    free(out);
    free(t);
}

/* rewrite a safetensors file as an older qkv wrote it: the same tensors, metadata without
 * qkv_crc32 and qkv_config */
static void strip_qkv_metadata(const char *rel) {
    char p[400];
    qkv_err err;
    snprintf(p, sizeof p, "%s/%s", TMP, rel);
    qkv_safetensors *st;
    ck_assert_msg(qkv_st_read(p, &st, &err) == 0, "%s", err.msg);
    int n = qkv_st_count(st), nm = 0;
    qkv_st_item *items = calloc((size_t)n, sizeof *items);
    qkv_tensor *ts = calloc((size_t)n, sizeof *ts);
    const char *meta[16];
    for (int i = 0; i < n; i++) {
        const qkv_st_entry *e = qkv_st_entry_at(st, i);
        qkv_shape_init(&ts[i], e->dtype, e->ndim, e->shape);
        ts[i].data = (void *)qkv_st_data(st, e);
        items[i] = (qkv_st_item){e->name, &ts[i]};
    }
    for (int i = 0; i < qkv_st_meta_count(st); i++) {
        const char *k, *v;
        qkv_st_meta_at(st, i, &k, &v);
        if (strcmp(k, QKV_ST_CRC32_KEY) && strcmp(k, "qkv_config") && nm < 8) {
            meta[2 * nm] = k;
            meta[2 * nm + 1] = v;
            nm++;
        }
    }
    ck_assert_msg(qkv_st_write(p, items, n, meta, nm, &err) == 0, "%s", err.msg);
    qkv_st_free(st);
    free(items);
    free(ts);
    ck_assert_msg(qkv_st_read(p, &st, &err) == 0, "%s", err.msg);
    ck_assert_ptr_null(qkv_st_meta(st, QKV_ST_CRC32_KEY));
    ck_assert_ptr_null(qkv_st_meta(st, "qkv_config"));
    qkv_st_free(st);
}

/* ---- the checksum ---------------------------------------------------------------------------- */

START_TEST(test_checkpoint_flipped_byte_refused) {
    train_run();
    flip_data_byte("run/checkpoint.safetensors");
    char err[4096];
    int rc = qkv(err, sizeof err, "train --resume run --steps 20 --quiet --threads 1");
    ck_assert_msg(rc == 1, "resume from a damaged checkpoint: exit %d, expected 1: %s", rc, err);
    one_line_with(err, "qkv train: run/checkpoint.safetensors: data checksum mismatch (crc32 ");
    one_line_with(err, " computed): the file is damaged");
}
END_TEST

START_TEST(test_model_flipped_byte_refused) {
    train_run();
    flip_data_byte("run/model.safetensors");
    char err[4096];
    int rc = qkv(err, sizeof err, "eval run/config.json --checkpoint run/model.safetensors --threads 1");
    ck_assert_msg(rc == 1, "eval of a damaged model file: exit %d, expected 1: %s", rc, err);
    one_line_with(err, "qkv eval: run/model.safetensors: data checksum mismatch (crc32 ");
    rc = qkv(err, sizeof err, "sample run/config.json --checkpoint run/model.safetensors --prompt 1");
    ck_assert_msg(rc == 1, "sample from a damaged model file: exit %d, expected 1: %s", rc, err);
    one_line_with(err, "qkv sample: run/model.safetensors: data checksum mismatch (crc32 ");
    one_line_with(err, "the file is damaged");
}
END_TEST

/* ---- the config ------------------------------------------------------------------------------ */

START_TEST(test_resume_edited_config_refused) {
    train_run();
    edit_text("run/config.json", "\"gelu\"", "\"relu\"");
    char err[4096];
    int rc = qkv(err, sizeof err, "train --resume run --steps 20 --quiet --threads 1");
    ck_assert_msg(rc == 2, "resume with another activation: exit %d, expected 2: %s", rc, err);
    one_line_with(err, "qkv train: run/config.json: model.activation is \"relu\" here, \"gelu\" in the checkpoint "
                       "run/checkpoint.safetensors (give --force to resume anyway)");
    rc = qkv(err, sizeof err, "train --resume run --steps 20 --force --quiet --threads 1");
    ck_assert_msg(rc == 0, "resume --force: exit %d, expected 0: %s", rc, err);
}
END_TEST

/* train.steps may differ: an extension (--steps, qkv ablate's) writes config.json's new count
 * when its session starts, the checkpoint only at its first save; a session killed between the
 * two resumes */
START_TEST(test_resume_grown_steps_not_refused) {
    train_run();
    edit_text("run/config.json", "\"steps\":\t10", "\"steps\":\t20");
    char err[4096];
    int rc = qkv(err, sizeof err, "train --resume run --quiet --threads 1");
    ck_assert_msg(rc == 0, "resume with train.steps grown: exit %d, expected 0: %s", rc, err);
    char out[4096];
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, false, "cd '%s' && tail -n 1 run/metrics.jsonl", TMP), 0);
    ck_assert_msg(strstr(out, "\"step\":20") || strstr(out, "\"step\": 20"), "not trained to 20 steps: %s", out);
}
END_TEST

START_TEST(test_sample_checkpoint_other_task_refused) {
    train_run();
    /* the copy task with the recall run's shapes: vocab 16, seq_len 9 */
    static const char *const OTHER = "--set task.name=copy --set task.symbols=15 --set task.length=4 "
                                     "--set model.seq_len=9";
    char err[4096], args[512];
    snprintf(args, sizeof args, "sample run/config.json --checkpoint run/checkpoint.safetensors --prompt 1 %s", OTHER);
    int rc = qkv(err, sizeof err, args);
    ck_assert_msg(rc == 1, "sample of another task: exit %d, expected 1: %s", rc, err);
    one_line_with(err, "qkv sample: run/checkpoint.safetensors was trained with task.name \"recall\", but "
                       "run/config.json has \"copy\" (sample with the run's config.json)");
    snprintf(args, sizeof args, "eval run/config.json --checkpoint run/checkpoint.safetensors --threads 1 %s", OTHER);
    rc = qkv(err, sizeof err, args);
    ck_assert_msg(rc == 1, "eval of another task: exit %d, expected 1: %s", rc, err);
    one_line_with(err, "qkv eval: run/checkpoint.safetensors was trained with task.name \"recall\", but "
                       "run/config.json has \"copy\" (evaluate with the run's config.json)");
    /* another activation, the same shapes */
    rc = qkv(err, sizeof err, "eval run/config.json --checkpoint run/checkpoint.safetensors --threads 1 "
                              "--set model.activation=relu");
    ck_assert_msg(rc == 1, "eval with another activation: exit %d, expected 1: %s", rc, err);
    one_line_with(err, "qkv eval: run/checkpoint.safetensors was trained with model.activation \"gelu\", but "
                       "run/config.json has \"relu\"");
    /* the run's own config: accepted */
    rc = qkv(err, sizeof err, "sample run/config.json --checkpoint run/checkpoint.safetensors --prompt 1 --tokens 4");
    ck_assert_msg(rc == 0, "sample with the run's config: exit %d: %s", rc, err);
}
END_TEST

/* ---- files without checksum or config --------------------------------------------------------- */

START_TEST(test_old_checkpoint_without_checksum_loads) {
    char err[4096];
    int rc = qkv(err, sizeof err, "train cfg.json --out run --quiet --threads 1 --stop-after 5");
    ck_assert_msg(rc == 1, "stop after 5 steps: exit %d, expected 1: %s", rc, err);
    strip_qkv_metadata("run/checkpoint.safetensors");
    strip_qkv_metadata("run/model.safetensors");
    /* no config to compare: an edited config.json resumes as it did before checkpoints had one */
    edit_text("run/config.json", "\"log_every\":\t5", "\"log_every\":\t2");
    rc = qkv(err, sizeof err, "train --resume run --quiet --threads 1 --stop-after 2");
    ck_assert_msg(rc == 1, "resume of an old checkpoint: exit %d, expected 1 (stopped): %s", rc, err);
    strip_qkv_metadata("run/checkpoint.safetensors");
    rc = qkv(err, sizeof err, "train --resume run --quiet --threads 1");
    ck_assert_msg(rc == 0, "resume of an old checkpoint: exit %d, expected 0: %s", rc, err);
    strip_qkv_metadata("run/model.safetensors");
    rc = qkv(err, sizeof err, "eval run/config.json --checkpoint run/model.safetensors --threads 1");
    ck_assert_msg(rc == 0, "eval of an old model file: exit %d: %s", rc, err);
    rc = qkv(err, sizeof err, "sample run/config.json --checkpoint run/model.safetensors --prompt 1 --tokens 4");
    ck_assert_msg(rc == 0, "sample of an old model file: exit %d: %s", rc, err);
}
END_TEST

/* unit: a file as PyTorch's safetensors writes it (format "pt", no qkv metadata) loads into a
 * model; the same bytes with a qkv_crc32 that does not match, or is not one, are refused */
START_TEST(test_pytorch_file_without_qkv_metadata_loads) {
    qkv_model_config mc = qkv_test_small_model();
    char path[400];
    qkv_err err;
    qkv_model *m = qkv_model_new(&mc, QKV_F32, 1, &err), *m2 = qkv_model_new(&mc, QKV_F32, 2, &err);
    ck_assert_msg(m && m2, "%s", err.msg);
    int n = m->params.n;
    qkv_st_item *items = calloc((size_t)n, sizeof *items);
    for (int i = 0; i < n; i++) items[i] = (qkv_st_item){m->params.items[i]->name, &m->params.items[i]->t};
    const char *meta[2] = {"format", "pt"};
    snprintf(path, sizeof path, "%s/torch.safetensors", TMP);
    ck_assert_msg(qkv_st_write(path, items, n, meta, 1, &err) == 0, "%s", err.msg);
    ck_assert_msg(qkv_load_model(m2, path, &err) == 0, "%s", err.msg);
    ck_assert(!memcmp(m->params.data, m2->params.data, (size_t)m->params.numel * sizeof(float)));
    /* the same data, a checksum: the right one loads, a wrong one and a malformed one do not */
    char crc[9];
    ck_assert_msg(qkv_st_data_crc32(items, n, crc, &err) == 0, "%s", err.msg);
    const char *with[4] = {"format", "pt", QKV_ST_CRC32_KEY, crc};
    uint8_t *buf;
    size_t len;
    qkv_safetensors *st;
    ck_assert(qkv_st_write_mem(items, n, with, 2, &buf, &len, &err) == 0);
    ck_assert_msg(qkv_st_parse(buf, len, "ok.safetensors", &st, &err) == 0, "%s", err.msg);
    qkv_st_free(st);
    char *at = memmem(buf, len, crc, 8);
    ck_assert_ptr_nonnull(at);
    char want[9];
    memcpy(want, crc, 9);
    at[0] = at[0] == '0' ? '1' : '0'; /* another CRC in the metadata */
    ck_assert_int_eq(qkv_st_parse(buf, len, "ck.safetensors", &st, &err), -1);
    char expect[160];
    snprintf(expect, sizeof expect, "ck.safetensors: data checksum mismatch (crc32 %.8s in the metadata, %s computed): "
             "the file is damaged", at, want);
    ck_assert_str_eq(err.msg, expect);
    at[0] = 'g'; /* not hex */
    ck_assert_int_eq(qkv_st_parse(buf, len, "ck.safetensors", &st, &err), -1);
    ck_assert_msg(strstr(err.msg, "is not a CRC-32 (8 hex digits): the file is damaged"), "%s", err.msg);
    free(buf);
    free(items);
    qkv_model_free(m);
    qkv_model_free(m2);
}
END_TEST

/* unit: the checksum is the standard CRC-32 (zlib's, xz's), over the tensors' bytes one after
 * the other: Python's zlib.crc32(b"123456789abc") is 0xbdb0c0e4 */
START_TEST(test_data_crc32_is_standard_crc32) {
    char bytes[13] = "123456789abc";
    int64_t one = 1, two = 2;
    qkv_tensor a, b;
    qkv_shape_init(&a, QKV_I32, 1, &one);
    qkv_shape_init(&b, QKV_I32, 1, &two);
    a.data = bytes;
    b.data = bytes + 4;
    qkv_st_item it[2] = {{"a", &a}, {"b", &b}};
    char crc[9];
    qkv_err err;
    ck_assert_msg(qkv_st_data_crc32(it, 2, crc, &err) == 0, "%s", err.msg);
    ck_assert_str_eq(crc, "bdb0c0e4");
    ck_assert_int_eq(qkv_st_data_crc32(NULL, 0, crc, &err), 0);
    ck_assert_str_eq(crc, "00000000"); /* no data */
}
END_TEST

Suite *ckcheck_suite(void) {
    Suite *s = suite_create("ckcheck");
    TCase *tc = tcase_create("ckcheck");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_checkpoint_flipped_byte_refused);
    tcase_add_test(tc, test_model_flipped_byte_refused);
    tcase_add_test(tc, test_resume_edited_config_refused);
    tcase_add_test(tc, test_resume_grown_steps_not_refused);
    tcase_add_test(tc, test_sample_checkpoint_other_task_refused);
    tcase_add_test(tc, test_old_checkpoint_without_checksum_loads);
    tcase_add_test(tc, test_pytorch_file_without_qkv_metadata_loads);
    tcase_add_test(tc, test_data_crc32_is_standard_crc32);
    suite_add_tcase(s, tc);
    return s;
}
