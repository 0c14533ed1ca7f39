/* Probes for what a test needs of the machine, and the counted skips (probe.h). */
#define _GNU_SOURCE /* unshare, CLONE_NEW* */
#include "probe.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"

bool qkv_probe_command(const char *name) {
    char out[16];
    return qkv_test_sh(out, sizeof out, false, "command -v '%s' >/dev/null 2>&1", name) == 0;
}

/* the probe does what the tests do: a bind mount of a directory over itself, remounted read-only,
 * and a write into it refused (through its path: the shell's working directory is still the
 * directory under the mount) */
bool qkv_probe_mount_ns(void) {
    static const char *const ways[] = {"unshare --mount", "unshare --user --map-root-user --mount"};
    if (!qkv_probe_command("unshare")) return false;
    char dir[512];
    qkv_test_mkdtemp(dir, sizeof dir, "probe-mount");
    bool ok = false;
    for (size_t k = 0; k < sizeof ways / sizeof ways[0] && !ok; k++) {
        if (k == 0 && geteuid() != 0) continue;
        ok = qkv_test_sh(NULL, 0, true,
                         "cd '%s' && %s sh -c 'mount --bind . . && mount -o remount,bind,ro . && ! touch \"$PWD/probe\"' "
                         ">/dev/null 2>&1",
                         dir, ways[k]) == 0;
        char p[600];
        snprintf(p, sizeof p, "%s/probe", dir);
        if (ok && access(p, F_OK) == 0) ok = false; /* the write went through: no read-only mount */
        if (ok) setenv("QKV_MOUNT_NS", ways[k], 1);
    }
    qkv_test_rmtree(dir);
    return ok;
}

/* flags gives a pid namespace when a child that unshares them forks a grandchild of pid 1 */
static bool pid_ns_works(int flags) {
    fflush(NULL);
    pid_t outer = fork();
    if (outer < 0) return false;
    if (outer == 0) {
        if (unshare(flags)) _exit(3);
        pid_t inner = fork();
        if (inner < 0) _exit(4);
        if (inner == 0) _exit(getpid() == 1 ? 0 : 5);
        int st;
        if (waitpid(inner, &st, 0) != inner) _exit(6);
        _exit(WIFEXITED(st) ? WEXITSTATUS(st) : 7);
    }
    int st;
    if (waitpid(outer, &st, 0) != outer) return false;
    return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

int qkv_probe_pid_ns(void) {
    if (pid_ns_works(CLONE_NEWPID)) return CLONE_NEWPID;
    if (pid_ns_works(CLONE_NEWUSER | CLONE_NEWPID)) return CLONE_NEWUSER | CLONE_NEWPID;
    return 0;
}

bool qkv_probe_dev_full(void) {
    int fd = open("/dev/full", O_WRONLY | O_CLOEXEC);
    if (fd < 0) return false;
    bool ok = write(fd, "x", 1) < 0 && errno == ENOSPC;
    close(fd);
    return ok;
}

/* ---- the counted skips -------------------------------------------------------------------- */

void qkv_test_skip(const char *what, const char *why) {
    const char *strict = getenv("QKV_TEST_NO_SKIPS");
    if (strict && !strcmp(strict, "1"))
        ck_abort_msg("%s: %s (QKV_TEST_NO_SKIPS=1: this machine must run every check)", what, why);
    fprintf(stderr, "skipped: %s: %s\n", what, why);
    const char *path = getenv("QKV_TEST_SKIPS");
    if (!path || !path[0]) return;
    /* one write of one line with O_APPEND: tests in forked processes add theirs whole */
    char line[1024];
    int n = snprintf(line, sizeof line, "%s: %s\n", what, why);
    if (n >= (int)sizeof line) {
        n = (int)sizeof line - 1;
        line[n - 1] = '\n';
    }
    int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
    ck_assert_msg(fd >= 0, "cannot open the skips file %s", path);
    ck_assert_int_eq(write(fd, line, (size_t)n), n);
    close(fd);
}

static char skips_path[600];

void qkv_test_skips_begin(void) {
    snprintf(skips_path, sizeof skips_path, "%s/qkv-skips-XXXXXX", qkv_test_tmpdir());
    int fd = mkstemp(skips_path);
    if (fd < 0) {
        fprintf(stderr, "qkv tests: cannot make %s: %s (skips will not be counted)\n", skips_path, strerror(errno));
        skips_path[0] = 0;
        return;
    }
    close(fd);
    setenv("QKV_TEST_SKIPS", skips_path, 1);
}

void qkv_test_skips_end(int checks) {
    if (!skips_path[0]) return;
    FILE *f = fopen(skips_path, "r");
    char lines[64][1024];
    int counts[64] = {0}, distinct = 0, total = 0;
    char line[1024];
    while (f && fgets(line, sizeof line, f)) {
        total++;
        int k = 0;
        while (k < distinct && strcmp(lines[k], line)) k++;
        if (k == distinct && distinct < 64) snprintf(lines[distinct++], sizeof lines[0], "%s", line);
        if (k < 64) counts[k]++;
    }
    if (f) fclose(f);
    unlink(skips_path);
    if (total == 0) {
        printf("Skipped: none of the %d checks\n", checks);
        return;
    }
    printf("Skipped: %d of the %d checks (whole or in part), for this machine's sake; Check counts them as "
           "passed above:\n", total, checks);
    for (int k = 0; k < distinct; k++) {
        if (counts[k] > 1) printf("  %d x %s", counts[k], lines[k]);
        else printf("  %s", lines[k]);
    }
}
