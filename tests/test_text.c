/* The text task's real text: the fortunes corpus (fortune files, duplicates, symlinks and
 * indexes; fortune-aligned splits), bits per byte and its baselines (xz -9 checked against the
 * xz command, the unigram model recomputed here), the ablation report of a text task (bits per
 * byte beside the baselines, a sample per variant), and install-deps' corpus detection. The
 * tests that need Debian's fortunes package or the xz command say so and skip that part when
 * it is missing (make test installs both when it can). */
#define _GNU_SOURCE
#include <check.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "io/strbuf.h"
#include "probe.h"
#include "tasks/task.h"
#include "tasks/task_data.h"
#include "suites.h"
#include "testutil.h"

static char TMP[256];

static void setup(void) { qkv_test_mkdtemp(TMP, sizeof TMP, "text"); }
static void teardown(void) { qkv_test_rmtree(TMP); }

/* ---- helpers ------------------------------------------------------------------------------- */

static void put(const char *dir, const char *name, const void *data, size_t n) {
    char path[600];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    ck_assert_msg(f != NULL, "cannot write %s", path);
    if (n) ck_assert_int_eq(fwrite(data, 1, n, f), n);
    ck_assert_int_eq(fclose(f), 0);
}

static void put_str(const char *dir, const char *name, const char *text) { put(dir, name, text, strlen(text)); }

/* a shell command's stdout into out (NUL-terminated); its exit status */
static int run(char *out, size_t n, const char *fmt, ...) {
    char cmd[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    FILE *p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    size_t got = out ? fread(out, 1, n - 1, p) : 0;
    if (out) out[got] = 0;
    char sink[4096];
    while (fread(sink, 1, sizeof sink, p) > 0) {}
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* whether Debian's fortunes are installed; where not, check (unless NULL: a test of the refusal,
 * which runs either way) is a counted skip */
static bool have_fortunes(const char *check) {
    struct stat st;
    bool ok = stat(QKV_FORTUNES_DIR, &st) == 0 && S_ISDIR(st.st_mode);
    if (!ok && check) qkv_test_skip(check, QKV_FORTUNES_DIR " is missing (" QKV_FORTUNES_INSTALL ")");
    return ok;
}

/* whether the xz command is there; where not, check's comparison with it is a counted skip */
static bool have_xz(const char *check) {
    if (qkv_probe_command("xz")) return true;
    char what[200];
    snprintf(what, sizeof what, "%s: the comparison with the xz command", check);
    qkv_test_skip(what, "xz is missing (apt-get install xz-utils)");
    return false;
}

/* how many of the corpus's fortunes (the pieces between "%" lines, without the "%\n") are
 * exactly f; every piece must end with a newline and the corpus with "%\n" */
static int occurrences(const uint8_t *text, int64_t len, const char *f) {
    int n = 0;
    int64_t start = 0;
    for (int64_t i = 0; i + 1 < len; i++) {
        if (text[i] != '%' || text[i + 1] != '\n' || (i > 0 && text[i - 1] != '\n')) continue;
        ck_assert_msg(i > start, "an empty fortune at byte %lld", (long long)i);
        n += (int64_t)strlen(f) == i - start && !memcmp(text + start, f, (size_t)(i - start));
        start = i + 2;
    }
    ck_assert_int_eq(start, len);
    return n;
}

static qkv_task_config fortunes_config(const char *dir, int seq_len) {
    qkv_task_config c = qkv_task_config_default();
    c.kind = QKV_TASK_TEXT;
    c.corpus = QKV_CORPUS_FORTUNES;
    snprintf(c.path, sizeof c.path, "%s", dir ? dir : "");
    c.seq_len = seq_len;
    return c;
}

/* ---- the fortunes corpus ------------------------------------------------------------------- */

/* the fortune files of a directory: regular files only, not strfile's .dat indexes, not the
 * .u8 symlinks, not hidden files or subdirectories; every fortune once (blank ones and exact
 * duplicates dropped), a last line without its newline given one, "%" CR LF separating too */
START_TEST(test_fortunes_files) {
    char dir[400], sub[500], link[500];
    snprintf(dir, sizeof dir, "%s/fortunes", TMP);
    ck_assert_int_eq(mkdir(dir, 0755), 0);
    put_str(dir, "b", "two\n%\none\nline two\n%\n%\n   \n%\nthree");
    put_str(dir, "a", "one\nline two\n%\nfour\n");
    put(dir, "a.dat", "\0\0\0\2junk\n%\n", 12);
    put_str(dir, "c.dat", "index of nothing\n");
    put_str(dir, ".hidden", "secret\n");
    put_str(dir, "crlf", "crlf one\r\n%\r\ncrlf two\r\n");
    snprintf(link, sizeof link, "%s/a.u8", dir);
    ck_assert_int_eq(symlink("a", link), 0);
    snprintf(link, sizeof link, "%s/linked", dir);
    ck_assert_int_eq(symlink("b", link), 0);
    snprintf(sub, sizeof sub, "%s/off", dir);
    ck_assert_int_eq(mkdir(sub, 0755), 0);
    put_str(sub, "x", "offensive\n");

    uint8_t *text = NULL, *again = NULL;
    int64_t len = 0, len2 = 0, nf = 0;
    int files = 0;
    qkv_err qe;
    ck_assert_msg(!qkv__task_read_fortunes(dir, NULL, false, "task.path", &text, &len, &files, &nf, &qe), "%s", qe.msg);
    ck_assert_int_eq(files, 3); /* a, b, crlf */
    ck_assert_int_eq(nf, 6);
    const char *want[] = {"one\nline two\n", "four\n", "two\n", "three\n", "crlf one\r\n", "crlf two\r\n"};
    int64_t total = 0;
    for (int i = 0; i < 6; i++) {
        ck_assert_msg(occurrences(text, len, want[i]) == 1, "fortune %d [%s] is not in the corpus once", i, want[i]);
        total += (int64_t)strlen(want[i]) + 2;
    }
    ck_assert_int_eq(len, total); /* nothing else: no index, link, hidden or subdirectory text */
    /* the same corpus every time */
    ck_assert(!qkv__task_read_fortunes(dir, NULL, false, "task.path", &again, &len2, NULL, NULL, &qe));
    ck_assert_int_eq(len, len2);
    ck_assert(!memcmp(text, again, (size_t)len));
    free(text);
    free(again);
}
END_TEST

/* a directory that is missing or holds no fortunes: one line naming the key, the directory
 * and the package to install */
START_TEST(test_fortunes_missing) {
    char dir[400];
    qkv_err qe;
    uint8_t *text = NULL;
    int64_t len;
    snprintf(dir, sizeof dir, "%s/none", TMP);
    ck_assert_int_eq(qkv__task_read_fortunes(dir, NULL, false, "task.path", &text, &len, NULL, NULL, &qe), -1);
    ck_assert_msg(strstr(qe.msg, "task.path: cannot open the fortunes directory") && strstr(qe.msg, "apt-get install fortunes") &&
                  !strchr(qe.msg, '\n'), "%s", qe.msg);
    ck_assert_int_eq(mkdir(dir, 0755), 0);
    put_str(dir, "empty", "%\n  \n%\n");
    put_str(dir, "empty.dat", "x");
    ck_assert_int_eq(qkv__task_read_fortunes(dir, NULL, false, "task.corpus", &text, &len, NULL, NULL, &qe), -1);
    ck_assert_msg(strstr(qe.msg, "task.corpus: ") && strstr(qe.msg, "holds no fortunes") &&
                  strstr(qe.msg, "scripts/install-deps.sh fortunes"), "%s", qe.msg);
    ck_assert_ptr_null(text);
}
END_TEST

/* whether a part of the corpus starts where a fortune does: after "\n%\n" (or at 0) */
static bool fortune_starts_at(const qkv_task *t, int64_t p) {
    return p == 0 || (p >= 3 && !memcmp(t->text + p - 3, "\n%\n", 3));
}

/* the evaluation and validation parts of the fortunes start at fortunes (no fortune straddles
 * two parts), at the first fortune after the fractions' byte positions; a plain file keeps
 * its byte cuts */
START_TEST(test_fortunes_split) {
    char dir[400];
    qkv_err qe;
    snprintf(dir, sizeof dir, "%s/many", TMP);
    ck_assert_int_eq(mkdir(dir, 0755), 0);
    char *buf = malloc(1 << 16);
    size_t n = 0;
    qkv_rng r;
    qkv_rng_seed(&r, 7);
    for (int i = 0; i < 300; i++) {
        n += (size_t)sprintf(buf + n, "fortune %03d: ", i);
        for (int k = (int)qkv_rng_below(&r, 100); k >= 0; k--) buf[n++] = (char)('a' + qkv_rng_below(&r, 26));
        n += (size_t)sprintf(buf + n, "\n%%\n");
    }
    put(dir, "f", buf, n);
    qkv_task_config c = fortunes_config(dir, 8);
    qkv_task t;
    ck_assert_msg(!qkv_task_open(&t, &c, 0, &qe), "%s", qe.msg);
    int64_t len = t.text_len;
    ck_assert_int_eq(len, (int64_t)n); /* 300 distinct fortunes, each with its "%" line */
    int64_t split = len - (int64_t)((double)len * c.eval_fraction), val = t.text_split - (int64_t)((double)len * c.val_fraction);
    ck_assert(fortune_starts_at(&t, t.text_split) && fortune_starts_at(&t, t.text_val));
    ck_assert(!memcmp(t.text + t.text_split, "fortune ", 8) && !memcmp(t.text + t.text_val, "fortune ", 8));
    /* the first fortune start at or after the cut: none between the cut and it */
    ck_assert_int_ge(t.text_split, split);
    for (int64_t p = split; p < t.text_split; p++) ck_assert(!fortune_starts_at(&t, p));
    ck_assert_int_ge(t.text_val, val);
    for (int64_t p = val; p < t.text_val; p++) ck_assert(!fortune_starts_at(&t, p));
    ck_assert_int_lt(t.text_val, t.text_split);
    ck_assert_int_eq(qkv_task_split_size(&t, QKV_SPLIT_VAL), INT64_MAX); /* a validation part exists */
    qkv_task_close(&t);

    /* the same bytes as one plain file: the cuts stay at the byte positions */
    put(TMP, "plain.txt", buf, n);
    c.corpus = QKV_CORPUS_FILE;
    snprintf(c.path, sizeof c.path, "%s/plain.txt", TMP);
    ck_assert_msg(!qkv_task_open(&t, &c, 0, &qe), "%s", qe.msg);
    ck_assert_int_eq(t.text_split, split);
    ck_assert_int_eq(t.text_val, split - (int64_t)((double)len * c.val_fraction));
    qkv_task_close(&t);
    free(buf);
}
END_TEST

/* a package's corpus reads its own files by name: another file beside them (another fortunes-*
 * package) changes nothing; one of them missing stops with the file and the package to install;
 * with colour, terminal colour codes (ESC [ digits and semicolons m) are left out */
START_TEST(test_fortunes_package_files) {
    char dir[400];
    snprintf(dir, sizeof dir, "%s/pkg", TMP);
    ck_assert_int_eq(mkdir(dir, 0755), 0);
    static const char *const FILES[] = {"b", "a", NULL};
    const qkv__fortunes_package pkg = {"fortunes-xx", "apt-get install fortunes-xx", FILES, true};
    put_str(dir, "a", "\x1b[32m<title>\x1b[m\nline \x1b[;\x1b[34;1mblue\x1b[0m end\n%\nsecond\n");
    put_str(dir, "b", "bee\n");
    uint8_t *text = NULL, *with = NULL;
    int64_t len, len2, nf;
    int files;
    qkv_err qe;
    ck_assert_msg(!qkv__task_read_fortunes(dir, &pkg, pkg.colour, "task.corpus", &text, &len, &files, &nf, &qe), "%s",
                  qe.msg);
    ck_assert_int_eq(files, 2);
    ck_assert_int_eq(nf, 3);
    ck_assert_int_eq(occurrences(text, len, "<title>\nline blue end\n"), 1);
    ck_assert_int_eq(occurrences(text, len, "bee\n"), 1);
    ck_assert_ptr_null(memchr(text, 0x1b, (size_t)len));
    /* another package's file beside them: the same corpus, byte for byte */
    put_str(dir, "chinese", "\xe4\xb8\xad\n%\nbee two\n");
    ck_assert_msg(!qkv__task_read_fortunes(dir, &pkg, pkg.colour, "task.corpus", &with, &len2, &files, &nf, &qe), "%s",
                  qe.msg);
    ck_assert_int_eq(files, 2);
    ck_assert(len == len2 && !memcmp(text, with, (size_t)len));
    free(with);
    free(text);
    text = NULL;
    /* without colour the codes stay (the English package has none to leave out) */
    ck_assert(!qkv__task_read_fortunes(dir, &pkg, false, "task.corpus", &text, &len, NULL, NULL, &qe));
    ck_assert_ptr_nonnull(memchr(text, 0x1b, (size_t)len));
    free(text);
    text = NULL;
    /* one of its files missing */
    char path[500];
    snprintf(path, sizeof path, "%s/b", dir);
    ck_assert_int_eq(unlink(path), 0);
    ck_assert_int_eq(qkv__task_read_fortunes(dir, &pkg, true, "task.corpus", &text, &len, NULL, NULL, &qe), -1);
    ck_assert_msg(strstr(qe.msg, "task.corpus: fortunes-xx reads the 2 fortune files of Debian's fortunes-xx package") &&
                  strstr(qe.msg, "/pkg/b is not one") && strstr(qe.msg, "apt-get install fortunes-xx") &&
                  !strchr(qe.msg, '\n'), "%s", qe.msg);
    ck_assert_ptr_null(text);
}
END_TEST

/* the count of fortunes strfile's indexes give for a package's files (the big-endian u32 at byte
 * 4 of NAME.dat); -1 when one is missing */
static long long strfile_count(const qkv__fortunes_package *pkg) {
    long long total = 0;
    for (const char *const *f = pkg->files; *f; f++) {
        char path[600];
        snprintf(path, sizeof path, "%s/%s.dat", QKV_FORTUNES_DIR, *f);
        FILE *fp = fopen(path, "rb");
        uint8_t h[8];
        size_t got = fp ? fread(h, 1, sizeof h, fp) : 0;
        if (fp) fclose(fp);
        if (got != sizeof h) return -1;
        total += (long long)h[4] << 24 | (long long)h[5] << 16 | h[6] << 8 | h[7];
    }
    return total;
}

/* Debian's fortunes, when installed: the English package's 43 files and no other (fortunes-zh
 * beside it changes nothing), every fortune strfile counted in them but the blank and duplicate
 * ones, the same corpus every time; the Chinese package's, where installed, without colour codes */
START_TEST(test_fortunes_debian) {
    if (!have_fortunes("text: test_fortunes_debian")) return;
    qkv_err qe;
    uint8_t *text = NULL, *again = NULL;
    int64_t len, len2, nf;
    int files;
    const qkv__fortunes_package *en = qkv__fortunes_package_of(QKV_CORPUS_FORTUNES);
    qkv_task_config c = fortunes_config(NULL, 32);
    qkv_task t;
    ck_assert_msg(!qkv_task_open(&t, &c, 0, &qe), "%s", qe.msg);
    ck_assert_msg(!qkv__task_read_fortunes(QKV_FORTUNES_DIR, en, false, "task.corpus", &text, &len, &files, &nf, &qe),
                  "%s", qe.msg);
    ck_assert(t.text_len == len && !memcmp(t.text, text, (size_t)len)); /* the task reads the package's files */
    qkv_task_close(&t);
    ck_assert_int_eq(files, 43);
    long long counted = strfile_count(en);
    ck_assert_int_gt(counted, 0);
    ck_assert_int_le(nf, counted);
    ck_assert_msg(nf >= counted * 99 / 100, "%lld fortunes of strfile's %lld", (long long)nf, counted);
    printf("test_text: %s: %d files, %lld fortunes (strfile counts %lld), %lld bytes\n", QKV_FORTUNES_DIR, files,
           (long long)nf, counted, (long long)len);
    ck_assert(!qkv__task_read_fortunes(QKV_FORTUNES_DIR, en, false, "task.corpus", &again, &len2, NULL, NULL, &qe));
    ck_assert(len == len2 && !memcmp(text, again, (size_t)len));
    free(again);
    /* nothing of fortunes-zh: no byte of a CJK character (UTF-8 lead bytes 0xe4 to 0xe9) */
    int64_t cjk = 0;
    for (int64_t i = 0; i < len; i++) cjk += text[i] >= 0xe4 && text[i] <= 0xe9;
    ck_assert_int_lt(cjk, 100);
    free(text);
    const qkv__fortunes_package *zh = qkv__fortunes_package_of(QKV_CORPUS_FORTUNES_ZH);
    if (strfile_count(zh) < 0) {
        qkv_test_skip("text: the fortunes-zh corpus", "fortunes-zh is not installed (" QKV_FORTUNES_ZH_INSTALL ")");
        return;
    }
    c.corpus = QKV_CORPUS_FORTUNES_ZH;
    ck_assert_msg(!qkv_task_open(&t, &c, 0, &qe), "%s", qe.msg);
    ck_assert_ptr_null(memchr(t.text, 0x1b, (size_t)t.text_len));
    cjk = 0;
    for (int64_t i = 0; i < t.text_len; i++) cjk += t.text[i] >= 0xe4 && t.text[i] <= 0xe9;
    ck_assert_int_gt(cjk, t.text_len / 10); /* a lead byte per 3-byte character: about 1 in 6 here */
    printf("test_text: fortunes-zh: %lld bytes (strfile counts %lld fortunes)\n", (long long)t.text_len,
           strfile_count(zh));
    qkv_task_close(&t);
}
END_TEST

/* the shipped config validates where the package is installed; where it is not, the command
 * stops with one line that says how to install it */
START_TEST(test_fortunes_config) {
    char out[4096];
    bool have = have_fortunes(NULL);
    int rc = run(out, sizeof out, "cd .. && %s params configs/text-fortunes.json 2>&1", qkv_test_bin());
    if (have) {
        ck_assert_msg(rc == 0 && strstr(out, "total"), "exit %d: %s", rc, out);
    } else {
        ck_assert_msg(rc == 2, "exit %d: %s", rc, out);
        ck_assert_msg(strstr(out, "task.corpus: fortunes reads Debian's fortunes package, which is not installed") &&
                      strstr(out, "apt-get install fortunes (or scripts/install-deps.sh fortunes)") &&
                      strchr(out, '\n') == out + strlen(out) - 1, "%s", out);
    }
}
END_TEST

/* ---- bits per byte and its baselines ------------------------------------------------------- */

/* a text of words from a small vocabulary: compressible, with a skewed byte distribution */
static void write_words(const char *path_name, int bytes) {
    static const char *const W[] = {"the", "of", "attention", "query", "key", "value", "projection", "head",
                                    "and", "a", "model", "learns", "to", "copy", "tokens", "\n"};
    char *buf = malloc((size_t)bytes + 32);
    qkv_rng r;
    qkv_rng_seed(&r, 3);
    int n = 0;
    while (n < bytes) n += sprintf(buf + n, "%s ", W[qkv_rng_below(&r, 16)]);
    put(TMP, path_name, buf, (size_t)n);
    free(buf);
}

/* xz -9's size of the evaluation bytes equals the xz command's; the unigram baseline equals
 * the add-one formula computed here */
static void check_baselines(const qkv_task *t, const char *check) {
    double xz, uni;
    char out[256], slice[600];
    qkv_err qe;
    ck_assert_msg(!qkv_task_text_baselines(t, &xz, &uni, &qe), "%s", qe.msg);
    int64_t n = t->text_len - t->text_split;
    double count[256] = {0}, bits = 0;
    for (int64_t i = 0; i < t->text_val; i++) count[t->text[i]]++;
    for (int64_t i = t->text_split; i < t->text_len; i++)
        bits -= log2((count[t->text[i]] + 1) / ((double)t->text_val + 256));
    ck_assert_double_eq_tol(uni, bits / (double)n, 1e-9 * uni);
    ck_assert(xz > 0 && xz < 8.1);
    if (!have_xz(check)) return;
    snprintf(slice, sizeof slice, "%s/eval-slice", TMP);
    put(TMP, "eval-slice", t->text + t->text_split, (size_t)n);
    ck_assert_int_eq(run(out, sizeof out, "xz -9 -c %s | wc -c", slice), 0);
    long long size = atoll(out);
    ck_assert_msg(8.0 * (double)size / (double)n == xz, "xz -9 -c: %lld bytes of %lld = %.9g bpb; qkv: %.9g", size,
                  (long long)n, 8.0 * (double)size / (double)n, xz);
}

START_TEST(test_baselines_file) {
    write_words("words.txt", 40000);
    qkv_task_config c = qkv_task_config_default();
    c.kind = QKV_TASK_TEXT;
    snprintf(c.path, sizeof c.path, "%s/words.txt", TMP);
    qkv_task t;
    qkv_err qe;
    ck_assert_msg(!qkv_task_open(&t, &c, 0, &qe), "%s", qe.msg);
    check_baselines(&t, "text: test_baselines_file");
    double xz, uni;
    ck_assert(!qkv_task_text_baselines(&t, &xz, &uni, &qe));
    ck_assert_msg(xz < uni, "xz -9 %.3f should beat a unigram model %.3f on repetitive words", xz, uni);
    qkv_task_close(&t);
    /* not a text task: an error, not a crash */
    c = qkv_task_config_default();
    ck_assert(!qkv_task_open(&t, &c, 0, &qe));
    ck_assert_int_eq(qkv_task_text_baselines(&t, &xz, &uni, &qe), -1);
    qkv_task_close(&t);
}
END_TEST

START_TEST(test_baselines_fortunes) {
    if (!have_fortunes("text: test_baselines_fortunes")) return;
    qkv_task_config c = fortunes_config(NULL, 64);
    qkv_task t;
    qkv_err qe;
    ck_assert_msg(!qkv_task_open(&t, &c, 0, &qe), "%s", qe.msg);
    check_baselines(&t, "text: test_baselines_fortunes");
    qkv_task_close(&t);
}
END_TEST

/* a text run reports bits per byte (loss / ln 2) in metrics.jsonl, summary.json, its output
 * and qkv eval's, with the baselines of its task beside it; other tasks do not */
START_TEST(test_bpb_reported) {
    char cfg[512], out[4096], sum[4096], ev[1024], metrics[65536];
    write_words("words.txt", 20000);
    snprintf(cfg, sizeof cfg, "%s/text.json", TMP);
    char body[1024];
    snprintf(body, sizeof body,
             "{\"model\": {\"d_model\": 16, \"heads\": 2, \"layers\": 1, \"d_ff\": 32},\n"
             " \"task\": {\"name\": \"text\", \"path\": \"%s/words.txt\", \"seq_len\": 16},\n"
             " \"train\": {\"steps\": 30, \"batch\": 8, \"eval_every\": 10, \"eval_examples\": 32}}\n", TMP);
    put_str(TMP, "text.json", body);
    ck_assert_int_eq(run(out, sizeof out, "%s train %s --out %s/run --threads 1 --quiet", qkv_test_bin(), cfg, TMP), 0);
    ck_assert_int_eq(run(sum, sizeof sum, "cat %s/run/summary.json", TMP), 0);
    double loss = qkv_test_json_num(sum, "eval_loss"), bpb = qkv_test_json_num(sum, "eval_bpb");
    ck_assert_double_eq_tol(bpb, loss / log(2), 1e-7 * bpb);
    ck_assert_double_eq_tol(qkv_test_json_num(sum, "val_bpb"), qkv_test_json_num(sum, "val_loss") / log(2), 1e-6);
    ck_assert_double_eq_tol(qkv_test_json_num(out, "eval_bpb"), bpb, 1e-6);
    /* the baselines are the task's */
    qkv_task_config c = qkv_task_config_default();
    c.kind = QKV_TASK_TEXT;
    c.seq_len = 16;
    snprintf(c.path, sizeof c.path, "%s/words.txt", TMP);
    qkv_task t;
    qkv_err qe;
    double xz, uni;
    ck_assert(!qkv_task_open(&t, &c, 0, &qe) && !qkv_task_text_baselines(&t, &xz, &uni, &qe));
    qkv_task_close(&t);
    ck_assert_double_eq_tol(qkv_test_json_num(sum, "baseline_xz_bpb"), xz, 1e-8);
    ck_assert_double_eq_tol(qkv_test_json_num(sum, "baseline_unigram_bpb"), uni, 1e-8);
    ck_assert_double_eq_tol(qkv_test_json_num(out, "baseline_xz_bpb"), xz, 1e-6);
    /* every evaluation in metrics.jsonl, and qkv eval */
    ck_assert_int_eq(run(metrics, sizeof metrics, "grep -c eval_bpb %s/run/metrics.jsonl", TMP), 0);
    ck_assert_int_eq(atoi(metrics), 3);
    ck_assert_int_eq(run(ev, sizeof ev, "%s eval %s/run/config.json --checkpoint %s/run/model.safetensors --threads 1",
                         qkv_test_bin(), TMP, TMP), 0);
    ck_assert_double_eq_tol(qkv_test_json_num(ev, "bpb"), bpb, 1e-5);
    /* its progress lines say bits per byte, not a byte accuracy: in a log, and on a terminal (script
     * gives the run a pseudo-terminal) */
    char log[8192];
    ck_assert_int_eq(run(log, sizeof log, "%s train %s --out %s/log --threads 1 2>&1 >/dev/null", qkv_test_bin(), cfg,
                         TMP), 0);
    ck_assert_msg(strstr(log, " eval_bpb ") && !strstr(log, "eval_acc"), "%s", log);
    ck_assert_int_eq(run(log, sizeof log, "script -qec '%s train %s --out %s/tty --threads 1' /dev/null", qkv_test_bin(),
                         cfg, TMP), 0);
    ck_assert_msg(strstr(log, " bits/byte") && !strstr(log, "eval acc"), "%s", log);
    /* a task whose tokens are not bytes has none */
    put_str(TMP, "recall.json", "{\"model\": {\"d_model\": 16, \"heads\": 2, \"layers\": 1, \"d_ff\": 32},\n"
                                " \"task\": {\"name\": \"recall\", \"pairs\": 3, \"keys\": 8, \"values\": 8},\n"
                                " \"train\": {\"steps\": 5, \"batch\": 8, \"eval_examples\": 16}}\n");
    ck_assert_int_eq(run(out, sizeof out, "%s train %s/recall.json --out %s/rrun --threads 1 --quiet", qkv_test_bin(),
                         TMP, TMP), 0);
    ck_assert_int_eq(run(sum, sizeof sum, "cat %s/rrun/summary.json %s/rrun/metrics.jsonl", TMP, TMP), 0);
    ck_assert_ptr_null(strstr(sum, "bpb"));
    ck_assert_ptr_null(strstr(out, "bpb"));
}
END_TEST

/* the text task's ablation report: each variant's bits per byte beside the baselines, and a
 * sample per variant that is the same when the report is made again */
START_TEST(test_ablation_report_text) {
    char out[16384], body[1024], a[65536], b[65536];
    write_words("words.txt", 20000);
    snprintf(body, sizeof body,
             "{\"model\": {\"d_model\": 16, \"heads\": 2, \"layers\": 1, \"d_ff\": 32},\n"
             " \"task\": {\"name\": \"text\", \"path\": \"%s/words.txt\", \"seq_len\": 16},\n"
             " \"train\": {\"steps\": 30, \"batch\": 8, \"eval_every\": 15, \"eval_examples\": 32}}\n", TMP);
    put_str(TMP, "base.json", body);
    put_str(TMP, "abl.json", "{\"base\": \"base.json\", \"variants\": [{\"name\": \"full\"}, "
                             "{\"name\": \"shared\", \"set\": [\"model.attention.qkv=shared\"]}], \"seeds\": [0]}\n");
    ck_assert_int_eq(run(out, sizeof out, "%s ablate %s/abl.json --out %s/abl --jobs 1 --quiet", qkv_test_bin(), TMP,
                         TMP), 0);
    ck_assert_int_eq(run(out, sizeof out, "cat %s/abl/results.md", TMP), 0);
    ck_assert_msg(strstr(out, "Bits per byte on the held-out text (the final evaluation loss / ln 2, mean over seeds): "
                              "full ") && strstr(out, "On the same bytes, xz -9 needs "), "%s", out);
    ck_assert_int_eq(run(a, sizeof a, "sed -n '/^## Samples/,/^## Reproduce/p' %s/abl/report.md", TMP), 0);
    ck_assert_msg(strstr(a, "### full\n\n```text\nThe ") && strstr(a, "### shared\n\n```text\nThe "), "%s", a);
    /* the sample is what qkv sample writes for the run with the report's options (shown as text) */
    ck_assert_int_eq(run(NULL, 0, "%s sample %s/abl/runs/full/seed0/config.json --checkpoint "
                         "%s/abl/runs/full/seed0/model.safetensors --prompt 'The ' --tokens 200 --temperature 0.8 "
                         "--seed 0 > %s/sample.out", qkv_test_bin(), TMP, TMP, TMP), 0);
    char path[600];
    snprintf(path, sizeof path, "%s/sample.out", TMP);
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    uint8_t raw[1024];
    size_t n = fread(raw, 1, sizeof raw, f);
    fclose(f);
    ck_assert_int_eq(n, 4 + 200 + 1); /* and the newline that ends qkv sample's output */
    ck_assert_int_eq(raw[n - 1], '\n');
    char *shown = qkv__display_text(raw, n - 1);
    ck_assert_msg(strstr(a, shown) != NULL, "the report's sample of full is not qkv sample's:\n%s\n%s", a, shown);
    free(shown);
    ck_assert_int_eq(run(out, sizeof out, "%s ablate %s/abl.json --out %s/abl --jobs 1 --quiet", qkv_test_bin(), TMP,
                         TMP), 0);
    ck_assert_int_eq(run(b, sizeof b, "sed -n '/^## Samples/,/^## Reproduce/p' %s/abl/report.md", TMP), 0);
    ck_assert_str_eq(a, b);
}
END_TEST

/* ---- install-deps: a config that needs the fortunes corpus gets the fortunes package ------- */

START_TEST(test_install_deps_detects_corpus) {
    char out[1024];
    put_str(TMP, "f.json", "{\"task\": {\"name\": \"text\", \"corpus\": \"fortunes\"}}\n");
    put_str(TMP, "plain.json", "{\"task\": {\"name\": \"text\", \"path\": \"x.txt\"}}\n");
    put_str(TMP, "abl-base.json", "{\"base\": \"f.json\", \"variants\": [{\"name\": \"a\"}], \"seeds\": [0]}\n");
    put_str(TMP, "abl-set.json", "{\"base\": \"plain.json\", \"set\": [\"task.corpus=fortunes\"], "
                                 "\"variants\": [{\"name\": \"a\"}], \"seeds\": [0]}\n");
    put_str(TMP, "abl-plain.json", "{\"base\": \"plain.json\", \"variants\": [{\"name\": \"a\"}], \"seeds\": [0]}\n");
    const char *yes[] = {"f.json", "abl-base.json", "abl-set.json"}, *no[] = {"plain.json", "abl-plain.json"};
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(run(out, sizeof out, "../scripts/install-deps.sh --list %s/%s", TMP, yes[i]), 0);
        ck_assert_msg(!strcmp(out, "fortunes\n"), "%s: [%s]", yes[i], out);
    }
    for (int i = 0; i < 2; i++) {
        ck_assert_int_eq(run(out, sizeof out, "../scripts/install-deps.sh --list %s/%s", TMP, no[i]), 0);
        ck_assert_msg(!strcmp(out, ""), "%s: [%s]", no[i], out);
    }
    /* the Chinese corpus needs its own package, and "fortunes" alone does not ask for it */
    put_str(TMP, "zh.json", "{\"task\": {\"name\": \"text\", \"corpus\": \"fortunes-zh\"}}\n");
    put_str(TMP, "abl-zh-base.json", "{\"base\": \"zh.json\", \"variants\": [{\"name\": \"a\"}], \"seeds\": [0]}\n");
    put_str(TMP, "abl-zh-set.json", "{\"base\": \"plain.json\", \"set\": [\"task.corpus=fortunes-zh\"], "
                                    "\"variants\": [{\"name\": \"a\"}], \"seeds\": [0]}\n");
    const char *zh[] = {"zh.json", "abl-zh-base.json", "abl-zh-set.json"};
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(run(out, sizeof out, "../scripts/install-deps.sh --list %s/%s", TMP, zh[i]), 0);
        ck_assert_msg(!strcmp(out, "fortunes-zh\n"), "%s: [%s]", zh[i], out);
    }
    ck_assert_int_eq(run(out, sizeof out, "../scripts/install-deps.sh --list ../configs/text-fortunes.json"), 0);
    ck_assert_str_eq(out, "fortunes\n");
    ck_assert_int_eq(run(out, sizeof out, "../scripts/install-deps.sh --list fortunes xz-utils fortunes"), 0);
    ck_assert_str_eq(out, "fortunes\nxz-utils\n");
    ck_assert_int_eq(run(out, sizeof out, "../scripts/install-deps.sh --list %s/nope.json 2>&1", TMP), 2);
    ck_assert_ptr_nonnull(strstr(out, "no such config file"));
}
END_TEST

/* ---- install-deps: the package lock another install holds is waited for, bounded ----------- */

/* a process holding a file of dir open as the package lock, for `seconds`; its pid */
static long hold_lock(const char *dir, int seconds) {
    char out[64];
    ck_assert_int_eq(run(out, sizeof out, "(exec 3>>%s/lock; exec sleep %d) >/dev/null 2>&1 & echo $!; sleep 0.3", dir,
                         seconds), 0);
    return strtol(out, NULL, 10);
}

/* as root (the script installs only then), a lock file of the test's held by a `sleep`, and
 * apt-get a script that says what it was asked: with QKV_LOCK_WAIT 1 the script says who holds
 * the lock and what to do, in one line, and fails; a holder that ends within the wait is waited
 * for (a line says so) and the install goes on, apt-get told to wait as long for a lock taken
 * after the script's check */
START_TEST(test_install_deps_waits_for_lock) {
    if (geteuid() != 0) {
        qkv_test_skip("install-deps waiting for the package lock", "not root (the script installs nothing then)");
        return;
    }
    char out[4096], env[1024];
    ck_assert_int_eq(run(NULL, 0, "mkdir -p %s/bin && printf '#!/bin/sh\\necho \"fake apt-get $*\"\\n' > %s/bin/apt-get && "
                         "chmod +x %s/bin/apt-get", TMP, TMP, TMP), 0);
    snprintf(env, sizeof env, "PATH=%s/bin:$PATH QKV_APT_LOCKS=%s/lock QKV_EXTRA_PKGS=qkv-test-not-a-package", TMP, TMP);
    long pid = hold_lock(TMP, 60);
    int rc = run(out, sizeof out, "%s QKV_LOCK_WAIT=1 ../scripts/install-deps.sh 2>&1", env);
    kill((pid_t)pid, SIGKILL);
    ck_assert_msg(rc == 1 && strstr(out, "qkv: the package lock is still held after 1 s, by 'sleep 60' (pid ") &&
                      strstr(out, "then run this again (make deps, or scripts/install-deps.sh)") &&
                      !strstr(out, "fake apt-get"), "exit %d: %s", rc, out);
    hold_lock(TMP, 2);
    rc = run(out, sizeof out, "%s QKV_LOCK_WAIT=30 ../scripts/install-deps.sh 2>&1", env);
    ck_assert_msg(rc == 0 && strstr(out, "qkv: another package install holds the package lock: 'sleep 2' (pid ") &&
                      strstr(out, "waiting for it, at most 30 s") && strstr(out, "qkv: the package lock is free (after ") &&
                      strstr(out, "fake apt-get -o DPkg::Lock::Timeout=30 install -y -qq --no-install-recommends "
                             "qkv-test-not-a-package"), /* apt waits too, should the lock be taken again */
                  "exit %d: %s", rc, out);
    /* a wait beyond test(1)'s integers is refused at once, not compared in vain every second */
    pid = hold_lock(TMP, 60);
    rc = run(out, sizeof out, "%s QKV_LOCK_WAIT=99999999999999999999 timeout 20 ../scripts/install-deps.sh 2>&1", env);
    kill((pid_t)pid, SIGKILL);
    ck_assert_msg(rc == 2 && strstr(out, "qkv: install-deps: QKV_LOCK_WAIT=99999999999999999999: expected whole seconds") &&
                      strchr(out, '\n') == out + strlen(out) - 1, "exit %d: %s", rc, out);
    /* no holder: no line about the lock */
    rc = run(out, sizeof out, "%s ../scripts/install-deps.sh 2>&1", env);
    ck_assert_msg(rc == 0 && !strstr(out, "package lock"), "exit %d: %s", rc, out);
}
END_TEST

Suite *text_suite(void) {
    Suite *s = suite_create("text");
    TCase *tc = tcase_create("text");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_fortunes_files);
    tcase_add_test(tc, test_fortunes_missing);
    tcase_add_test(tc, test_fortunes_split);
    tcase_add_test(tc, test_fortunes_package_files);
    tcase_add_test(tc, test_fortunes_debian);
    tcase_add_test(tc, test_fortunes_config);
    tcase_add_test(tc, test_baselines_file);
    tcase_add_test(tc, test_baselines_fortunes);
    tcase_add_test(tc, test_bpb_reported);
    tcase_add_test(tc, test_ablation_report_text);
    tcase_add_test(tc, test_install_deps_detects_corpus);
    tcase_add_test(tc, test_install_deps_waits_for_lock);
    suite_add_tcase(s, tc);
    return s;
}
