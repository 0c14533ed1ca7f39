/* Helpers shared by the command-running suites (testutil.h). */
#define _GNU_SOURCE /* realpath */
#include "testutil.h"

#include <check.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

const char *qkv_test_bin(void) {
    static char abs_path[PATH_MAX];
    const char *b = getenv("QKV_BIN"); /* set by the Makefile (build/ or build-asan/) */
    if (!b) b = "../build/qkv";
    if (!realpath(b, abs_path)) snprintf(abs_path, sizeof abs_path, "%s", b);
    return abs_path;
}

void qkv_test_mkdtemp(char *dir, size_t n, const char *tag) {
    snprintf(dir, n, "/tmp/qkv-%s-XXXXXX", tag);
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
        qkv_test_child_stdio(dir, errpath);
        alarm(60);
        execv(bin, argv);
        _exit(127);
    }
    return pid;
}

void qkv_test_child_stdio(const char *dir, const char *errpath) {
    int in = open("/dev/null", O_RDONLY), out = open("/dev/null", O_WRONLY);
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
    char cmd[8192], count_path[] = "/tmp/qkv-allocs-XXXXXX", out[8192];
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
