/* Run claims (see claim.h). */
#include "ablate/claim.h"
#include "io/strbuf.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

const char *qkv__claim_host(void) {
    static char host[256];
    if (!host[0] && gethostname(host, sizeof host - 1)) snprintf(host, sizeof host, "unknown");
    return host;
}

/* dir's claim file; malloc'd, NULL when out of memory */
static char *claim_path(const char *dir) { return qkv__pathf("%s/%s", dir, QKV_CLAIM_FILE); }

/* qkv__claim_read of the claim file at path (NULL, out of memory: read as no claim, and qkv__claim
 * then fails, so the run is left for another time) */
static void read_claim(const char *path, double stale, qkv_claim_info *c) {
    memset(c, 0, sizeof *c);
    if (!path) return;
    /* O_NONBLOCK, and only a regular file is read: a FIFO put there would block the open or the
     * read for good (--status would hang); anything but a file reads as a torn claim, which ages
     * into staleness as one does */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return;
    struct stat st;
    c->held = true;
    FILE *f = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? fdopen(fd, "r") : NULL;
    if (!f || fscanf(f, "%255s %ld %lld", c->host, &c->pid, &c->started) != 3) c->host[0] = 0; /* torn: being written */
    if (f) fclose(f);
    else close(fd);
    c->age = stat(path, &st) == 0 ? difftime(time(NULL), st.st_mtime) : 0;
    bool here = !strcmp(c->host, qkv__claim_host());
    bool gone = here && c->pid > 0 && kill((pid_t)c->pid, 0) != 0 && errno == ESRCH;
    c->stale = gone || c->age > stale;
}

void qkv__claim_read(const char *dir, double stale, qkv_claim_info *c) {
    char *path = claim_path(dir);
    read_claim(path, stale, c);
    free(path);
}

/* create the claim file with O_EXCL: true when this process made it */
static bool create(const char *path) {
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) return false;
    char line[400];
    int n = snprintf(line, sizeof line, "%s %ld %lld\n", qkv__claim_host(), (long)getpid(), (long long)time(NULL));
    ssize_t w = write(fd, line, (size_t)n);
    (void)w; /* a short write reads as a torn claim, which only ages into staleness */
    fsync(fd);
    close(fd);
    return true;
}

/* qkv__claim of the claim file at path, whose takeover lock is at lock */
static bool claim(const char *dir, const char *path, const char *lock, double stale, bool quiet) {
    if (create(path)) return true;
    qkv_claim_info c;
    read_claim(path, stale, &c);
    if (!c.held) return create(path); /* released meanwhile */
    if (!c.stale) return false;
    /* a stale claim: one taker at a time, through a lock file of its own (itself taken over when
     * older than `stale`, so a taker that died cannot block the run for ever) */
    if (!create(lock)) {
        struct stat st;
        if (stat(lock, &st) == 0 && difftime(time(NULL), st.st_mtime) > stale) unlink(lock);
        return false;
    }
    qkv_claim_info again;
    read_claim(path, stale, &again);
    bool ours = false;
    if (!again.held || (again.stale && again.pid == c.pid && !strcmp(again.host, c.host))) {
        unlink(path);
        ours = create(path);
        if (ours && !quiet)
            fprintf(stderr, "qkv ablate: %s: taking over the stale claim of %s pid %ld (%s)\n", dir, c.host, c.pid,
                    !strcmp(c.host, qkv__claim_host()) && c.age <= stale ? "its process is gone"
                                                                          : "no heartbeat for a while");
    }
    unlink(lock);
    return ours;
}

bool qkv__claim(const char *dir, double stale, bool quiet) {
    char *path = claim_path(dir), *lock = qkv__pathf("%s/%s", dir, QKV_CLAIM_FILE ".takeover");
    bool ours = path && lock && claim(dir, path, lock, stale, quiet); /* out of memory: not claimed */
    free(path);
    free(lock);
    return ours;
}

void qkv__claim_touch(const char *dir) {
    char *path = claim_path(dir);
    if (path) utimensat(AT_FDCWD, path, NULL, 0);
    free(path);
}

void qkv__claim_release(const char *dir) {
    char *path = claim_path(dir);
    qkv_claim_info c;
    read_claim(path, 1e30, &c);
    if (path && c.held && c.pid == (long)getpid() && !strcmp(c.host, qkv__claim_host())) unlink(path);
    free(path);
}
