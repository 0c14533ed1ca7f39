/* Whole files: the atomic writer, the reader, mkdir -p. See fileio.h. */
#define _DEFAULT_SOURCE /* realpath */
#include "io/fileio.h"
#include "io/strbuf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
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

/* FNV-1a over n bytes, continuing from h */
static uint32_t fnv1a(uint32_t h, const char *p, size_t n) {
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)p[i]) * 16777619u;
    return h;
}

void qkv__host_tag(char tag[QKV_HOST_TAG_LEN + 1]) {
    uint32_t h = 2166136261u;
    char buf[256];
    /* the machine (its boot) and the pid namespace; without /proc, the host name */
    int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf) : -1;
    if (fd >= 0) close(fd);
    if (n > 0) h = fnv1a(h, buf, (size_t)n);
    else if (!gethostname(buf, sizeof buf)) h = fnv1a(h, buf, strnlen(buf, sizeof buf));
    n = readlink("/proc/self/ns/pid", buf, sizeof buf);
    if (n > 0) h = fnv1a(h, buf, (size_t)n);
    snprintf(tag, QKV_HOST_TAG_LEN + 1, "%08x", (unsigned)h);
}

static int write_fail(qkv_write_status *st, qkv_write_stage stage, int errnum) {
    st->stage = stage;
    st->errnum = errnum ? errnum : EIO;
    return -1;
}

char *qkv__temp_path(const char *path) {
    /* a name no other writer has: the pid and the host tag (two hosts, or two pid namespaces, on
     * one shared file system can each run a process of one pid) */
    char tag[QKV_HOST_TAG_LEN + 1];
    qkv__host_tag(tag);
    return qkv__pathf("%s.tmp.%ld.%s", path, (long)getpid(), tag);
}

/* the temporary file's stages of write_parts_mode: 0, or -1 with *st set (the file removed) */
static int write_temp(const char *tmp, const char *path, const qkv_wpart *parts, int n, int mode,
                      qkv_write_status *st) {
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd < 0) return write_fail(st, QKV_WRITE_CREATE, errno);
    int e = mode >= 0 && fchmod(fd, (mode_t)mode) ? errno : 0;
    for (int i = 0; i < n && !e; i++) e = write_all(fd, parts[i].buf, parts[i].len);
    if (!e && fsync(fd)) e = errno;
    if (close(fd) && !e) e = errno;
    if (e) {
        unlink(tmp);
        return write_fail(st, QKV_WRITE_DATA, e);
    }
    if (rename(tmp, path)) {
        e = errno;
        unlink(tmp);
        return write_fail(st, QKV_WRITE_RENAME, e);
    }
    return 0;
}

/* qkv__write_parts_atomic with the new file's permission bits set to mode (-1: 0666 less the umask) */
static int write_parts_mode(const char *path, const qkv_wpart *parts, int n, int mode, qkv_write_status *st) {
    st->stage = QKV_WRITE_OK;
    st->errnum = 0;
    char *tmp = qkv__temp_path(path);
    if (!tmp) return write_fail(st, QKV_WRITE_NOMEM, ENOMEM);
    int rc = write_temp(tmp, path, parts, n, mode, st);
    free(tmp);
    if (rc) return -1;
    /* past the rename the new file is in place; a failed directory sync is reported all the
     * same, since the caller asked for a durable file */
    if (sync_parent_dir(path)) return write_fail(st, QKV_WRITE_SYNC_DIR, errno);
    return 0;
}

int qkv__write_parts_atomic(const char *path, const qkv_wpart *parts, int n, qkv_write_status *st) {
    return write_parts_mode(path, parts, n, -1, st);
}

/* "PATH: cannot write: reason" (or written, but not durably) for a failed atomic write */
static int write_message(const char *path, const qkv_write_status *st, qkv_err *e) {
    if (st->stage == QKV_WRITE_SYNC_DIR)
        return qkv_err_set(e, QKV_ERR_FAIL, "%s: written, but syncing its directory failed: %s", qkv__shown(path).s,
                           strerror(st->errnum));
    return qkv_err_set(e, QKV_ERR_FAIL, "%s: cannot write: %s", qkv__shown(path).s, strerror(st->errnum));
}

int qkv__rewrite_file_atomic(const char *path, const qkv_wpart *parts, int n, qkv_err *e) {
    struct stat sb;
    char *target = realpath(path, NULL); /* through every symbolic link to the file itself */
    if (!target || stat(target, &sb)) {
        qkv_err_set(e, QKV_ERR_FAIL, "%s: cannot write: %s", qkv__shown(path).s, strerror(errno));
        free(target);
        return -1;
    }
    int rc = -1;
    if (!S_ISREG(sb.st_mode)) {
        qkv_err_set(e, QKV_ERR_FAIL, "%s: is %s, not a regular file: not rewritten", qkv__shown(path).s,
                    qkv__file_type_name((unsigned)sb.st_mode));
    } else if (!(sb.st_mode & 0222) || access(target, W_OK)) {
        /* read-only as a user sees it: no write bit, or no write permission (root has it regardless
         * of the bits, and is refused by the bits, as an editor warns before overwriting); or the
         * bits allow it and the file system does not */
        if ((sb.st_mode & 0222) && errno == EROFS)
            qkv_err_set(e, QKV_ERR_FAIL, "%s: is on a read-only file system: not rewritten", qkv__shown(path).s);
        else
            qkv_err_set(e, QKV_ERR_FAIL, "%s: is read-only (mode %04o): not rewritten; make it writable first",
                        qkv__shown(path).s, (unsigned)(sb.st_mode & 07777));
    } else {
        qkv_write_status st;
        rc = write_parts_mode(target, parts, n, (int)(sb.st_mode & 07777), &st);
        if (rc) write_message(path, &st, e);
    }
    free(target);
    return rc;
}

int qkv__write_file_atomic(const char *path, const void *buf, size_t len, qkv_err *e) {
    qkv_write_status st;
    qkv_wpart part = {buf, len};
    return qkv__write_parts_atomic(path, &part, 1, &st) ? write_message(path, &st, e) : 0;
}

int qkv__mkdirs(const char *path, qkv_err *e) {
    char *buf = strdup(path);
    if (!buf) return qkv_err_set(e, QKV_ERR_FAIL, "%s: cannot create directory: out of memory", qkv__shown(path).s);
    for (char *p = buf + 1;; p++) {
        char c = *p;
        if (c == '/' || c == 0) {
            *p = 0;
            if (mkdir(buf, 0755) && errno != EEXIST) {
                qkv_err_set(e, QKV_ERR_FAIL, "%s: cannot create directory: %s", qkv__shown(buf).s, strerror(errno));
                free(buf);
                return -1;
            }
            *p = c;
            if (!c) break;
        }
    }
    free(buf);
    struct stat st;
    if (stat(path, &st) || !S_ISDIR(st.st_mode)) return qkv_err_set(e, QKV_ERR_FAIL, "%s: not a directory", qkv__shown(path).s);
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

const char *qkv__file_type_name(unsigned mode) {
    switch (mode & S_IFMT) {
    case S_IFREG: return "a regular file";
    case S_IFDIR: return "a directory";
    case S_IFIFO: return "a pipe (FIFO)";
    case S_IFCHR: return "a character device";
    case S_IFBLK: return "a block device";
    case S_IFSOCK: return "a socket";
    default: return "not a regular file";
    }
}

/* path opened for reading and checked against flags and max before anything is read: the fd
 * (O_NONBLOCK still set) with *sb filled, or -1 with *st saying why. O_NONBLOCK: a FIFO without a
 * writer opens at once instead of blocking in open() (where no signal handler of ours could end
 * the wait); then it is refused by its type, or read from a writer that has it open */
static int open_checked(const char *path, size_t max, int flags, struct stat *sb, qkv_read_status *st) {
    *st = (qkv_read_status){QKV_READ_OK, 0, 0};
    bool regular_only = flags & QKV_READ_REGULAR;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return read_fail(st, QKV_READ_OPEN, errno, -1, NULL), -1;
    if (fstat(fd, sb)) {
        if (regular_only) return read_fail(st, QKV_READ_IO, errno, fd, NULL), -1;
        sb->st_mode = 0;
        return fd;
    }
    st->mode = (unsigned)sb->st_mode;
    if (regular_only && S_ISDIR(sb->st_mode)) return read_fail(st, QKV_READ_IO, EISDIR, fd, NULL), -1;
    if (regular_only && !S_ISREG(sb->st_mode)) return read_fail(st, QKV_READ_NOT_REGULAR, 0, fd, NULL), -1;
    if (S_ISREG(sb->st_mode) && max && (uint64_t)sb->st_size > max) return read_fail(st, QKV_READ_TOO_BIG, 0, fd, NULL), -1;
    return fd;
}

int qkv__probe_file(const char *path, size_t max, int flags, qkv_read_status *st) {
    struct stat sb;
    int fd = open_checked(path, max, flags, &sb, st);
    if (fd < 0) return -1;
    close(fd);
    return 0;
}

char *qkv__read_file_max(const char *path, size_t max, int flags, size_t *len, qkv_read_status *st) {
    struct stat sb;
    int fd = open_checked(path, max, flags, &sb, st);
    if (fd < 0) return NULL;
    /* a regular file's size is where the buffer starts (+1 for the terminator, +1 so the read
     * that finds the end needs no growth): one allocation for a big file */
    size_t cap = 4096, n = 0;
    if (S_ISREG(sb.st_mode) && (uint64_t)sb.st_size + 2 > cap && (uint64_t)sb.st_size < SIZE_MAX / 4)
        cap = (size_t)sb.st_size + 2;
    int fl = fcntl(fd, F_GETFL); /* blocking reads as usual from here */
    if (fl >= 0) fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    char *buf = malloc(cap);
    if (!buf) return read_fail(st, QKV_READ_NOMEM, ENOMEM, fd, NULL);
    for (;;) {
        if (n + 1 == cap) {   /* full but for the terminator */
            if (max && n > max) return read_fail(st, QKV_READ_TOO_BIG, 0, fd, buf);
            size_t grow = cap <= SIZE_MAX / 2 ? cap * 2 : 0;
            if (max && grow > max + 2) grow = max + 2; /* one byte past the cap tells "too big" */
            char *nb = grow > cap ? realloc(buf, grow) : NULL;
            if (!nb) return read_fail(st, QKV_READ_NOMEM, ENOMEM, fd, buf);
            buf = nb;
            cap = grow;
        }
        ssize_t r = read(fd, buf + n, cap - 1 - n);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return read_fail(st, QKV_READ_IO, errno, fd, buf);
        if (r == 0) break;
        n += (size_t)r;
        if (max && n > max) return read_fail(st, QKV_READ_TOO_BIG, 0, fd, buf);
    }
    close(fd);
    /* a pipe that gave nothing: no process had it open for writing (a named FIFO nobody
     * writes to reads as end of file at once), or its writer wrote nothing. Said as such rather
     * than parsed as an empty file */
    if (n == 0 && S_ISFIFO(st->mode)) return read_fail(st, QKV_READ_EMPTY_PIPE, 0, -1, buf);
    buf[n] = '\0';
    if (len) *len = n;
    return buf;
}

/* "PATH: ..." for a failed read of a file capped at max bytes, with code */
static void read_message(const char *path, size_t max, const qkv_read_status *st, qkv_err_code code, qkv_err *e) {
    char cap[32];
    if (max >= (size_t)1 << 30) snprintf(cap, sizeof cap, "%zu GiB", max >> 30);
    else snprintf(cap, sizeof cap, "%zu MiB", (max + 2) >> 20);
    qkv_shown p = qkv__shown(path);
    switch (st->stage) {
    case QKV_READ_OPEN:
    case QKV_READ_IO: qkv_err_set(e, code, "%s: cannot read: %s", p.s, strerror(st->errnum)); break;
    case QKV_READ_TOO_BIG: qkv_err_set(e, code, "%s: larger than %s, the most qkv reads of such a file", p.s, cap); break;
    case QKV_READ_EMPTY_PIPE:
        qkv_err_set(e, code, "%s: is a pipe (FIFO) that gave nothing to read: no process had it open for "
                    "writing, or the writer wrote nothing", p.s);
        break;
    case QKV_READ_NOT_REGULAR:
        qkv_err_set(e, code, "%s: is %s, not a regular file: qkv reads data from regular "
                    "files only (every run of a sweep reads it again); save it to a file first", p.s,
                    qkv__file_type_name(st->mode));
        break;
    default: qkv_err_set(e, code, "%s: cannot read: out of memory", p.s); break;
    }
}

char *qkv__read_file(const char *path, size_t *len, qkv_err *e) {
    qkv_read_status st;
    char *buf = qkv__read_file_max(path, QKV_MAX_FILE_BYTES, 0, len, &st);
    if (!buf) read_message(path, QKV_MAX_FILE_BYTES, &st, QKV_ERR_FAIL, e);
    return buf;
}

char *qkv__read_config_file(const char *path, size_t *len, qkv_err *e) {
    qkv_read_status st;
    char *buf = qkv__read_file_max(path, QKV_MAX_CONFIG_BYTES, 0, len, &st);
    if (buf) return buf;
    /* a config is the user's input, whatever stopped its reading */
    if (st.stage == QKV_READ_OPEN)
        qkv_err_set(e, QKV_ERR_USAGE, "%s: cannot open: %s", qkv__shown(path).s, strerror(st.errnum));
    else if (st.stage == QKV_READ_TOO_BIG)
        qkv_err_set(e, QKV_ERR_USAGE, "%s: file too large for a config (over 16 MiB)", qkv__shown(path).s);
    else read_message(path, QKV_MAX_CONFIG_BYTES, &st, QKV_ERR_USAGE, e);
    return NULL;
}

char *qkv__read_regular_file(const char *path, size_t *len, qkv_err *e) {
    qkv_read_status st;
    char *buf = qkv__read_file_max(path, QKV_MAX_FILE_BYTES, QKV_READ_REGULAR, len, &st);
    if (!buf) read_message(path, QKV_MAX_FILE_BYTES, &st, QKV_ERR_FAIL, e);
    return buf;
}
