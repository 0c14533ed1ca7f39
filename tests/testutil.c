/* Helpers shared by the suites (testutil.h). */
#define _GNU_SOURCE /* realpath, memmem */
#include "testutil.h"

#include <check.h>
#include <expat.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "io/safetensors.h"
#include "nn/model.h"
#include "nn/model_file.h"
#include "probe.h"

const char *qkv_test_bin(void) {
    static char abs_path[PATH_MAX];
    const char *b = getenv("QKV_BIN"); /* set by the Makefile (build/ or build-asan/) */
    if (!b) b = "../build/qkv";
    if (!realpath(b, abs_path)) snprintf(abs_path, sizeof abs_path, "%s", b);
    return abs_path;
}

const char *qkv_test_tmpdir(void) {
    const char *t = getenv("TMPDIR");
    return t && t[0] == '/' ? t : "/tmp";
}

void qkv_test_mkdtemp(char *dir, size_t n, const char *tag) {
    snprintf(dir, n, "%s/qkv-%s-XXXXXX", qkv_test_tmpdir(), tag);
    ck_assert_ptr_nonnull(mkdtemp(dir));
}

void qkv_test_rmtree(const char *dir) {
    DIR *d = opendir(dir);
    if (d) {
        for (struct dirent *e; (e = readdir(d));) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
            char sub[4096];
            snprintf(sub, sizeof sub, "%s/%s", dir, e->d_name);
            struct stat st;
            if (!lstat(sub, &st) && S_ISDIR(st.st_mode)) qkv_test_rmtree(sub);
            else unlink(sub);
        }
        closedir(d);
    }
    rmdir(dir);
}

pid_t qkv_test_spawn(const char *dir, const char *errpath, const char *bin, char *const argv[]) {
    fflush(NULL);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        qkv_test_child_stdio(dir, NULL, errpath);
        alarm(60);
        execv(bin, argv);
        _exit(127);
    }
    return pid;
}

void qkv_test_child_stdio(const char *dir, const char *outpath, const char *errpath) {
    int in = open("/dev/null", O_RDONLY);
    int out = outpath ? open(outpath, O_WRONLY | O_CREAT | O_TRUNC, 0644) : open("/dev/null", O_WRONLY);
    int err = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (in < 0 || out < 0 || err < 0 || chdir(dir)) _exit(127);
    dup2(in, 0);
    dup2(out, 1);
    dup2(err, 2);
}

double qkv_test_json_num(const char *text, const char *key) {
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    const char *p = strstr(text, pat);
    ck_assert_msg(p != NULL, "no %s in: %s", key, text);
    return strtod(p + strlen(pat), NULL);
}

bool qkv_test_find_temp(const char *dir, char *found, size_t n) {
    DIR *d = opendir(dir);
    if (!d) return false;
    bool hit = false;
    for (struct dirent *e; !hit && (e = readdir(d));) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        char p[1024];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        struct stat st;
        if (strstr(e->d_name, ".tmp.")) {
            snprintf(found, n, "%s", p);
            hit = true;
        } else if (!lstat(p, &st) && S_ISDIR(st.st_mode)) {
            hit = qkv_test_find_temp(p, found, n);
        }
    }
    closedir(d);
    return hit;
}

int qkv_test_sh(char *out, size_t outlen, bool merge, const char *fmt, ...) {
    char cmd[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    if (merge) strncat(cmd, " 2>&1", sizeof cmd - strlen(cmd) - 1);
    FILE *p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    if (out && outlen) {
        size_t n = fread(out, 1, outlen - 1, p);
        out[n] = 0;
    }
    char sink[4096];
    while (fread(sink, 1, sizeof sink, p) > 0) {}
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

const char *qkv_test_alloc_shim(void) {
#if defined(__SANITIZE_ADDRESS__)
    return NULL;
#else
    const char *shim = getenv("QKV_ALLOC_SHIM");
    ck_assert_msg(shim && access(shim, R_OK) == 0,
                  "QKV_ALLOC_SHIM, the allocation counter make test builds and sets, is %s (run make test)",
                  shim ? "not readable" : "not set");
    return shim;
#endif
}

long long qkv_test_allocs(const char *fmt, ...) {
    const char *shim = qkv_test_alloc_shim();
    if (!shim) return -1;
    char cmd[8192], count_path[600], out[8192];
    snprintf(count_path, sizeof count_path, "%s/qkv-allocs-XXXXXX", qkv_test_tmpdir());
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    int fd = mkstemp(count_path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    int rc = qkv_test_sh(out, sizeof out, true, "QKV_ALLOC_COUNT_OUT=%s LD_PRELOAD=%s %s", count_path, shim, cmd);
    ck_assert_msg(rc == 0, "%s: exit %d\n%s", cmd, rc, out);
    FILE *f = fopen(count_path, "r");
    unsigned long long n = 0;
    int got = f ? fscanf(f, "%llu", &n) : 0;
    if (f) fclose(f);
    unlink(count_path);
    ck_assert_msg(got == 1, "%s: the allocation counter wrote no count", cmd);
    return (long long)n;
}

void qkv_test_write_file(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

void qkv_test_put(const char *dir, const char *rel, const char *text) {
    char p[1200];
    snprintf(p, sizeof p, "%s/%s", dir, rel);
    qkv_test_write_file(p, text);
}

char *qkv_test_get(const char *dir, const char *rel) {
    char p[1200];
    snprintf(p, sizeof p, "%s/%s", dir, rel);
    FILE *f = fopen(p, "rb");
    ck_assert_msg(f != NULL, "cannot read %s", p);
    char *b = calloc(1, 1 << 20);
    ck_assert_ptr_nonnull(b);
    size_t n = fread(b, 1, (1 << 20) - 1, f);
    b[n] = 0;
    fclose(f);
    return b;
}

char *qkv_test_get_untimed(const char *dir, const char *rel) {
    char *t = qkv_test_get(dir, rel), *o = t;
    for (char *l = t, *e; *l; l = e + 1) {
        e = strchr(l, '\n');
        if (!e) e = l + strlen(l);
        if (!strstr(l, "seconds") || strstr(l, "seconds") > e) {
            memmove(o, l, (size_t)(e - l) + (*e != 0));
            o += (e - l) + (*e != 0);
        }
        if (!*e) break;
    }
    *o = 0;
    return t;
}

qkv_model_config qkv_test_small_model(void) {
    qkv_model_config mc = qkv_model_config_default();
    mc.vocab = 16;
    mc.seq_len = 9;
    mc.d_model = 16;
    mc.heads = 2;
    mc.layers = 1;
    mc.d_ff = 32;
    return mc;
}

/* ---- random test data ------------------------------------------------------------------------ */

static qkv_rng test_rng;
static bool test_rng_seeded;

void qkv_test_seed(uint64_t seed) {
    qkv_rng_seed(&test_rng, seed);
    test_rng_seeded = true;
}

double qkv_test_uniform(double lo, double hi) {
    if (!test_rng_seeded) qkv_test_seed(0);
    return lo + (hi - lo) * qkv_rng_uniform(&test_rng);
}

void qkv_test_normals(double *x, int64_t n, uint64_t seed) {
    qkv_rng r;
    qkv_rng_seed(&r, seed);
    for (int64_t i = 0; i < n; i++) x[i] = qkv_rng_normal(&r);
}

qkv_tensor *qkv_test_randn(qkv_rng *r, int nd, const int64_t *shape, bool grad) {
    qkv_tensor *t = qkv_tensor_zeros(QKV_F32, nd, shape);
    ck_assert_ptr_nonnull(t);
    qkv_tensor_fill_normal(t, r, 0, 1);
    if (grad) ck_assert_int_eq(qkv_tensor_require_grad(t), 0);
    return t;
}

/* ---- closeness ------------------------------------------------------------------------------- */

bool qkv_test_near(double got, double want, double tol) { return fabs(got - want) <= tol * (1 + fabs(want)); }

bool qkv_test_nearf(float got, float want, float tol) { return fabsf(got - want) <= tol * (1 + fabsf(want)); }

bool qkv_test_close(double got, double want, double abs, double rel) {
    return fabs(got - want) <= fmax(abs, rel * fabs(want));
}

/* ---- model files for the command-line rows --------------------------------------------------- */

/* the effective config of the tests' small recall config, as qkv train writes it into a model file */
#define SMALL_EFFECTIVE                                                                                         \
    "{\"model\": {\"vocab\": 16, \"seq_len\": 9, \"d_model\": 16, \"heads\": 2, \"layers\": 1, \"d_ff\": 32}, " \
    "\"task\": {\"name\": \"recall\", \"pairs\": 3, \"keys\": 8, \"values\": 8}}"

static void write_bytes(const char *path, const void *data, size_t n) {
    FILE *f = fopen(path, "wb");
    ck_assert_msg(f != NULL, "cannot write %s", path);
    if (n) ck_assert_int_eq(fwrite(data, 1, n, f), n);
    ck_assert_int_eq(fclose(f), 0);
}

void qkv_test_checkpoint(qkv_test_ck kind, const char *path, const char *scratch) {
    if (kind == TEST_CK_NONE) return;
    qkv_model_config mc = qkv_test_small_model();
    qkv_err err;
    qkv_model *m = qkv_model_new(&mc, QKV_F32, 1, &err);
    ck_assert_msg(m != NULL, "%s", err.msg);
    ck_assert_msg(qkv_save_model(m, scratch, kind == TEST_CK_META ? SMALL_EFFECTIVE : "{}", 0, &err) == 0,
                  "%s", err.msg);
    qkv_model_free(m);
    FILE *f = fopen(scratch, "rb");
    ck_assert_msg(f != NULL, "cannot read %s", scratch);
    uint8_t *b = malloc(1 << 20);
    ck_assert_ptr_nonnull(b);
    size_t n = fread(b, 1, 1 << 20, f);
    fclose(f);
    unlink(scratch);
    ck_assert_int_gt(n, 200);
    uint64_t hlen = 0;
    for (int i = 7; i >= 0; i--) hlen = hlen << 8 | b[i];
    switch (kind) {
    case TEST_CK_NONE: break;
    case TEST_CK_GOOD: case TEST_CK_META: write_bytes(path, b, n); break;
    case TEST_CK_EMPTY: write_bytes(path, b, 0); break;
    case TEST_CK_TRUNCATED: write_bytes(path, b, 100); break;
    case TEST_CK_SHORT_DATA: write_bytes(path, b, n - 4); break;
    case TEST_CK_HUGE_HEADER: {
        uint8_t h[10] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, '{', '}'};
        write_bytes(path, h, sizeof h);
        break;
    }
    case TEST_CK_HEADER_PAST_END: b[0] = (uint8_t)(b[0] + 0x40); b[1] = 0x40; write_bytes(path, b, n); break;
    case TEST_CK_NOT_OBJECT: b[8] = '['; write_bytes(path, b, n); break;
    case TEST_CK_BAD_DTYPE: {
        char *d = memmem(b + 8, (size_t)hlen, "\"F32\"", 5);
        ck_assert_ptr_nonnull(d);
        memcpy(d, "\"Q32\"", 5);
        write_bytes(path, b, n);
        break;
    }
    case TEST_CK_NAN: { /* the last bias element, in a file without a checksum (as PyTorch writes one):
                         * the finiteness check is what refuses it (with qkv's checksum the CRC would first) */
        char *k = memmem(b + 8, (size_t)hlen, "\"" QKV_ST_CRC32_KEY "\"", strlen(QKV_ST_CRC32_KEY) + 2);
        ck_assert_ptr_nonnull(k);
        k[1] = 'x'; /* another key of the same length: "xkv_crc32" */
        memset(b + n - 4, 0xff, 4);
        write_bytes(path, b, n);
        break;
    }
    case TEST_CK_TEXT: write_bytes(path, "hello, world\n", 13); break;
    }
    free(b);
}

/* ---- the command-line contract's runner ------------------------------------------------------ */

/* one directory entry as it was: what "unchanged" compares */
typedef struct entry {
    char path[600];
    unsigned mode;
    long long size, ino, mtime_ns;
    uint64_t hash; /* FNV-1a of a regular file's bytes up to 4 MiB (0: bigger, or not a file) */
} entry;

typedef struct snapshot { entry *e; int n, cap; } snapshot;

static uint64_t file_hash(const char *path, long long size) {
    if (size > (4 << 20)) return 0;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return 0;
    uint64_t h = 1469598103934665603ull;
    unsigned char b[65536];
    for (ssize_t r; (r = read(fd, b, sizeof b)) > 0;)
        for (ssize_t i = 0; i < r; i++) h = (h ^ b[i]) * 1099511628211ull;
    close(fd);
    return h;
}

/* every entry below dir (rel: its path from the row's directory), by lstat: links and FIFOs are
 * never opened */
static void snap(snapshot *s, const char *dir, const char *rel) {
    DIR *d = opendir(dir);
    if (!d) return;
    for (struct dirent *de; (de = readdir(d));) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
        char p[1024], r[600];
        snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
        snprintf(r, sizeof r, "%s%s%s", rel, rel[0] ? "/" : "", de->d_name);
        struct stat st;
        if (lstat(p, &st)) continue;
        if (s->n == s->cap) {
            s->cap = s->cap ? 2 * s->cap : 64;
            s->e = realloc(s->e, (size_t)s->cap * sizeof *s->e);
            ck_assert_ptr_nonnull(s->e);
        }
        entry *e = &s->e[s->n++];
        snprintf(e->path, sizeof e->path, "%s", r);
        e->mode = (unsigned)st.st_mode;
        e->size = S_ISDIR(st.st_mode) ? 0 : (long long)st.st_size;
        e->ino = (long long)st.st_ino;
        e->mtime_ns = S_ISDIR(st.st_mode) ? 0 : (long long)st.st_mtim.tv_sec * 1000000000ll + st.st_mtim.tv_nsec;
        e->hash = S_ISREG(st.st_mode) ? file_hash(p, e->size) : 0;
        if (S_ISDIR(st.st_mode)) snap(s, p, r);
    }
    closedir(d);
}

static const entry *find_entry(const snapshot *s, const char *path) {
    for (int i = 0; i < s->n; i++)
        if (!strcmp(s->e[i].path, path)) return &s->e[i];
    return NULL;
}

/* path is one of list's comma-separated paths or below one */
static bool in_list(const char *list, const char *path) {
    if (!list) return false;
    char w[512];
    snprintf(w, sizeof w, "%s", list);
    for (char *save, *t = strtok_r(w, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        size_t n = strlen(t);
        if (!strncmp(path, t, n) && (path[n] == 0 || path[n] == '/')) return true;
    }
    return false;
}

int qkv_cli_row_limit(void) {
    const char *m = getenv("CK_TIMEOUT_MULTIPLIER");
    int k = m ? atoi(m) : 1;
    return 30 * (k > 0 ? k : 1);
}

static void read_into(const char *path, char *buf, size_t n) {
    FILE *f = fopen(path, "r");
    size_t k = f ? fread(buf, 1, n - 1, f) : 0;
    buf[k] = 0;
    if (f) fclose(f);
}

/* sh -c script in dir (its own process group, stdin /dev/null, stdout and stderr into outpath and
 * errpath), killed with its group after limit seconds; a status over 128 is sh's word for a
 * signal */
static void sh_run(const char *dir, const char *script, const char *outpath, const char *errpath, int limit,
                   qkv_cli_outcome *o) {
    fflush(NULL);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        setpgid(0, 0);
        qkv_test_child_stdio(dir, outpath, errpath);
        execl("/bin/sh", "sh", "-c", script, (char *)NULL);
        _exit(127);
    }
    setpgid(pid, pid);
    struct timespec t0, now, nap = {0, 5000000};
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int st = 0;
    for (;;) {
        pid_t w = waitpid(pid, &st, WNOHANG);
        if (w == pid) break;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec - t0.tv_sec >= limit) {
            kill(-pid, SIGKILL);
            waitpid(pid, &st, 0);
            o->hung = true;
            break;
        }
        nanosleep(&nap, NULL);
    }
    kill(-pid, SIGKILL); /* whatever the script left behind (a writer blocked on a FIFO) */
    o->status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    o->sig = WIFSIGNALED(st) ? WTERMSIG(st) : o->status > 128 ? o->status - 128 : 0;
    read_into(outpath, o->out, sizeof o->out);
    read_into(errpath, o->err, sizeof o->err);
}

/* the first path of list that exists (want false) or does not (want true) below dir, or NULL */
static const char *path_not(const char *dir, const char *list, bool want, char *buf, size_t n) {
    if (!list) return NULL;
    char w[512];
    snprintf(w, sizeof w, "%s", list);
    for (char *save, *t = strtok_r(w, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        char p[1200];
        snprintf(p, sizeof p, "%s/%s", dir, t);
        struct stat st;
        if ((lstat(p, &st) == 0) != want) {
            snprintf(buf, n, "%s", t);
            return buf;
        }
    }
    return NULL;
}

#define PROBLEM(...) (o->problem[0] ? 0 : snprintf(o->problem, sizeof o->problem, __VA_ARGS__))

void qkv_cli_run(const qkv_cli_row *r, int id, const char *tmp, const char *fixture, qkv_cli_outcome *o) {
    memset(o, 0, sizeof *o);
    char dir[400], outpath[450], errpath[450], p[1200];
    snprintf(dir, sizeof dir, "%s/row%03d", tmp, id);
    snprintf(outpath, sizeof outpath, "%s/stdout-%03d", tmp, id);
    snprintf(errpath, sizeof errpath, "%s/stderr-%03d", tmp, id);
    setenv("QKV", qkv_test_bin(), 1);
    if (strstr(r->run, "QKV_EROFS_SHIM")) {
        const char *shim = getenv("QKV_EROFS_SHIM");
        ck_assert_msg(shim && access(shim, R_OK) == 0, "row %d: $QKV_EROFS_SHIM (set by make test) is %s", id,
                      shim ? "not readable" : "not set");
    }
    if (strstr(r->run, "QKV_CPUINFO_SHIM")) {
        const char *shim = getenv("QKV_CPUINFO_SHIM");
        ck_assert_msg(shim && access(shim, R_OK) == 0, "row %d: $QKV_CPUINFO_SHIM (set by make test) is %s", id,
                      shim ? "not readable" : "not set");
    }
    if (r->needs == QKV_NEED_MOUNT_NS && !qkv_probe_mount_ns()) {
        char what[300];
        snprintf(what, sizeof what, "cli_contract row %d (%s, %s, %s)", id, r->cmd, r->input, r->kind);
        qkv_test_skip(what, "no mount namespace here (unshare --mount, or a user namespace: neither allowed)");
        o->skipped = true;
        return;
    }
    /* the directory */
    if (r->start.fixture) {
        ck_assert_ptr_nonnull(fixture);
        ck_assert_int_eq(qkv_test_sh(NULL, 0, false, "cp -a '%s' '%s'", fixture, dir), 0);
    } else {
        ck_assert_int_eq(mkdir(dir, 0755), 0);
    }
    for (int i = 0; i < 5 && r->start.files[i][0]; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, r->start.files[i][0]);
        if (r->start.files[i][1] == QKV_TEST_DIR) ck_assert_int_eq(mkdir(p, 0755), 0);
        else write_bytes(p, r->start.files[i][1], strlen(r->start.files[i][1]));
    }
    if (r->start.ck != TEST_CK_NONE) {
        char scratch[450];
        snprintf(p, sizeof p, "%s/ck.safetensors", dir);
        snprintf(scratch, sizeof scratch, "%s/good-%03d.safetensors", tmp, id);
        qkv_test_checkpoint(r->start.ck, p, scratch);
    }
    if (r->start.sh) {
        qkv_cli_outcome *so = malloc(sizeof *so);
        ck_assert_ptr_nonnull(so);
        memset(so, 0, sizeof *so);
        sh_run(dir, r->start.sh, outpath, errpath, qkv_cli_row_limit(), so);
        ck_assert_msg(so->status == 0 && !so->hung, "row %d (%s, %s, %s): setup failed: %s", id, r->cmd, r->input,
                      r->kind, so->err);
        free(so);
    }
    /* the command */
    snapshot before = {0}, after = {0};
    snap(&before, dir, "");
    int limit = r->within ? r->within : qkv_cli_row_limit();
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    sh_run(dir, r->run, outpath, errpath, limit, o);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    snap(&after, dir, "");
    /* the contract */
    size_t len = strlen(o->err);
    int lines = 0;
    for (const char *q = o->err; *q; q++) lines += *q == '\n';
    bool failed = o->status != 0;
    char found[600];
    if (o->hung) PROBLEM("no answer within %d s (a hang)", limit);
    if (o->sig) PROBLEM("killed by signal %d", o->sig);
    if (o->status < 0 || o->status > 2) PROBLEM("exit status %d, not 0, 1 or 2", o->status);
    if (failed && (lines != 1 || len < 2 || o->err[len - 1] != '\n'))
        PROBLEM("stderr is not exactly one line (%d lines)", lines);
    if (failed && strncmp(o->err, "qkv", 3)) PROBLEM("the message does not start with qkv");
    if (strstr(o->err, "Sanitizer") || strstr(o->err, "runtime error")) PROBLEM("sanitizer report");
    if (o->status != r->status) PROBLEM("exit %d, expected %d", o->status, r->status);
    if (r->err && !strstr(o->err, r->err)) PROBLEM("stderr lacks [%s]", r->err);
    if (failed && o->out[0]) PROBLEM("a failure printed on stdout: %.200s", o->out);
    if (r->out && !strstr(o->out, r->out)) PROBLEM("stdout lacks [%s]", r->out);
    if (r->within && secs >= r->within) PROBLEM("answered in %.1f s, not within %d s", secs, r->within);
    for (int k = 0; k < after.n; k++)
        if (strstr(after.e[k].path, ".tmp.")) PROBLEM("temporary file left: %s", after.e[k].path);
    for (int k = 0; k < before.n; k++) {
        const entry *b = &before.e[k], *a = find_entry(&after, b->path);
        if (in_list(r->writes, b->path)) continue;
        if (!a) PROBLEM("%s was removed", b->path);
        else if (a->mode != b->mode || a->size != b->size || a->ino != b->ino || a->mtime_ns != b->mtime_ns ||
                 a->hash != b->hash)
            PROBLEM("%s was changed", b->path);
    }
    for (int k = 0; k < after.n && failed; k++)
        if (!find_entry(&before, after.e[k].path) && !in_list(r->writes, after.e[k].path))
            PROBLEM("%s was created by a failed command", after.e[k].path);
    if (path_not(dir, r->absent, false, found, sizeof found)) PROBLEM("%s exists", found);
    if (path_not(dir, r->made, true, found, sizeof found)) PROBLEM("%s was not made", found);
    free(before.e);
    free(after.e);
    if (!o->problem[0] && r->then) r->then(dir, o->out);
    qkv_test_rmtree(dir);
}

bool qkv_test_xml_ok(const char *text, char *why, size_t n) {
    XML_Parser p = XML_ParserCreate("UTF-8");
    ck_assert_ptr_nonnull(p);
    bool ok = XML_Parse(p, text, (int)strlen(text), 1) == XML_STATUS_OK;
    if (!ok)
        snprintf(why, n, "%s at line %lu", XML_ErrorString(XML_GetErrorCode(p)),
                 (unsigned long)XML_GetCurrentLineNumber(p));
    else snprintf(why, n, "well-formed");
    XML_ParserFree(p);
    return ok;
}
