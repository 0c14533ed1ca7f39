#include "io/fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int qkv_write_file_atomic(const char *path, const void *buf, size_t len, char *err, int errlen) {
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid()) >= (int)sizeof tmp) {
        snprintf(err, (size_t)errlen, "%s: path too long", path);
        return -1;
    }
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        snprintf(err, (size_t)errlen, "%s: cannot write: %s", path, strerror(errno));
        return -1;
    }
    const char *p = buf;
    size_t left = len;
    while (left > 0) {
        ssize_t w = write(fd, p, left);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) break;
        p += w;
        left -= (size_t)w;
    }
    int e = left ? errno : 0;
    if (!e && fsync(fd)) e = errno;
    if (close(fd) && !e) e = errno;
    if (!e && rename(tmp, path)) e = errno;
    if (e) {
        unlink(tmp);
        snprintf(err, (size_t)errlen, "%s: cannot write: %s", path, strerror(e ? e : EIO));
        return -1;
    }
    return 0;
}

int qkv_mkdirs(const char *path, char *err, int errlen) {
    char buf[4096];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf) {
        snprintf(err, (size_t)errlen, "%s: path too long", path);
        return -1;
    }
    for (char *p = buf + 1;; p++) {
        char c = *p;
        if (c == '/' || c == 0) {
            *p = 0;
            if (mkdir(buf, 0755) && errno != EEXIST) {
                snprintf(err, (size_t)errlen, "%s: cannot create directory: %s", buf, strerror(errno));
                return -1;
            }
            *p = c;
            if (!c) break;
        }
    }
    struct stat st;
    if (stat(path, &st) || !S_ISDIR(st.st_mode)) {
        snprintf(err, (size_t)errlen, "%s: not a directory", path);
        return -1;
    }
    return 0;
}

char *qkv_read_file(const char *path, size_t *len, char *err, int errlen) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, (size_t)errlen, "%s: cannot read: %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        n += fread(buf + n, 1, cap - 1 - n, f);
        if (n < cap - 1) break;
        char *nb = realloc(buf, cap * 2);
        if (!nb) { free(buf); buf = NULL; break; }
        buf = nb;
        cap *= 2;
    }
    int bad = ferror(f);
    fclose(f);
    if (!buf || bad) {
        snprintf(err, (size_t)errlen, "%s: cannot read: %s", path, buf ? "read error" : "out of memory");
        free(buf);
        return NULL;
    }
    buf[n] = 0;
    if (len) *len = n;
    return buf;
}
