/* Whole files: the atomic writer, the reader, mkdir -p. See fileio.h. */
#include "io/fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---------------------------------------------------------------- writing */

/* all of buf to fd: 0, or the errno */
static int write_all(int fd, const void *buf, size_t len) {
    const char *p = buf;
    while (len > 0) {
        ssize_t w = write(fd, p, len);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) return errno ? errno : EIO;
        if (w == 0) return EIO;
        p += w;
        len -= (size_t)w;
    }
    return 0;
}

/* fsync the directory holding path, so a rename into it survives a crash: 0, or -1 with errno */
static int sync_parent_dir(const char *path) {
    const char *slash = strrchr(path, '/');
    char *dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
    if (!dir) { errno = ENOMEM; return -1; }
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    free(dir);
    if (fd < 0) return -1;
    int rc = fsync(fd);
    int e = errno;
    close(fd);
    if (rc != 0 && e == EINVAL) rc = 0;   /* the file system cannot sync directories: nothing to do */
    errno = e;
    return rc;
}

static int write_fail(qkv_write_status *st, qkv_write_stage stage, int errnum) {
    st->stage = stage;
    st->errnum = errnum ? errnum : EIO;
    return -1;
}

int qkv_write_parts_atomic(const char *path, const qkv_wpart *parts, int n, qkv_write_status *st) {
    st->stage = QKV_WRITE_OK;
    st->errnum = 0;
    if (snprintf(st->tmp, sizeof st->tmp, "%s.tmp.%ld", path, (long)getpid()) >= (int)sizeof st->tmp)
        return write_fail(st, QKV_WRITE_PATH, ENAMETOOLONG);
    int fd = open(st->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd < 0) return write_fail(st, QKV_WRITE_CREATE, errno);
    int e = 0;
    for (int i = 0; i < n && !e; i++) e = write_all(fd, parts[i].buf, parts[i].len);
    if (!e && fsync(fd)) e = errno;
    if (close(fd) && !e) e = errno;
    if (e) {
        unlink(st->tmp);
        return write_fail(st, QKV_WRITE_DATA, e);
    }
    if (rename(st->tmp, path)) {
        e = errno;
        unlink(st->tmp);
        return write_fail(st, QKV_WRITE_RENAME, e);
    }
    /* past the rename the new file is in place; a failed directory sync is reported all the
     * same, since the caller asked for a durable file */
    if (sync_parent_dir(path)) return write_fail(st, QKV_WRITE_SYNC_DIR, errno);
    return 0;
}

int qkv_write_file_atomic(const char *path, const void *buf, size_t len, char *err, int errlen) {
    qkv_write_status st;
    qkv_wpart part = {buf, len};
    if (qkv_write_parts_atomic(path, &part, 1, &st) == 0) return 0;
    if (st.stage == QKV_WRITE_PATH)
        snprintf(err, (size_t)errlen, "%s: path too long", path);
    else if (st.stage == QKV_WRITE_SYNC_DIR)
        snprintf(err, (size_t)errlen, "%s: written, but syncing its directory failed: %s", path, strerror(st.errnum));
    else
        snprintf(err, (size_t)errlen, "%s: cannot write: %s", path, strerror(st.errnum));
    return -1;
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

/* ---------------------------------------------------------------- reading */

static char *read_fail(qkv_read_status *st, qkv_read_stage stage, int errnum, int fd, char *buf) {
    st->stage = stage;
    st->errnum = errnum;
    if (fd >= 0) close(fd);
    free(buf);
    return NULL;
}

char *qkv_read_file_max(const char *path, size_t max, size_t *len, qkv_read_status *st) {
    *st = (qkv_read_status){QKV_READ_OK, 0};
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return read_fail(st, QKV_READ_OPEN, errno, -1, NULL);
    /* a regular file's size is where the buffer starts (+1 for the terminator, +1 so the read
     * that finds the end needs no growth): one allocation for a big file */
    struct stat sb;
    size_t cap = 4096, n = 0;
    if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode)) {
        if (max && (uint64_t)sb.st_size > max) return read_fail(st, QKV_READ_TOO_BIG, 0, fd, NULL);
        if ((uint64_t)sb.st_size + 2 > cap && (uint64_t)sb.st_size < SIZE_MAX / 4) cap = (size_t)sb.st_size + 2;
    }
    char *buf = malloc(cap);
    if (!buf) return read_fail(st, QKV_READ_NOMEM, ENOMEM, fd, NULL);
    for (;;) {
        if (n + 1 == cap) {   /* full but for the terminator */
            char *nb = cap <= SIZE_MAX / 2 ? realloc(buf, cap * 2) : NULL;
            if (!nb) return read_fail(st, QKV_READ_NOMEM, ENOMEM, fd, buf);
            buf = nb;
            cap *= 2;
        }
        ssize_t r = read(fd, buf + n, cap - 1 - n);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return read_fail(st, QKV_READ_IO, errno, fd, buf);
        if (r == 0) break;
        n += (size_t)r;
        if (max && n > max) return read_fail(st, QKV_READ_TOO_BIG, 0, fd, buf);
    }
    close(fd);
    buf[n] = '\0';
    if (len) *len = n;
    return buf;
}

char *qkv_read_file(const char *path, size_t *len, char *err, int errlen) {
    qkv_read_status st;
    char *buf = qkv_read_file_max(path, 0, len, &st);
    if (!buf)
        snprintf(err, (size_t)errlen, "%s: cannot read: %s", path,
                 st.stage == QKV_READ_OPEN ? strerror(st.errnum)
                 : st.stage == QKV_READ_IO ? "read error"
                                           : "out of memory");
    return buf;
}
