/* A read-only file system without a mount: a shared object the tests preload into the qkv
 * command (LD_PRELOAD) so that every write below $QKV_EROFS_DIR fails with EROFS, as it does on a
 * read-only mount; reads are untouched. It lets the row "summarize --update-doc on a read-only
 * file system" run where no mount namespace can be made (a chroot, a container, a user without
 * privileges); the row that makes a real read-only bind mount runs beside it where one can be
 * made (tests/probe.c). Calls that write or test for writing are covered: access and its kin
 * with W_OK, the open family with a write flag, fopen in a writing mode, creat, the mkstemp
 * family, rename, link, symlink, unlink, mkdir, rmdir, truncate, chmod. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

/* the next definition of name (libc's, or a sanitizer's interceptor) */
#define NEXT(name)                         \
    static __typeof__(&name) real_##name; \
    if (!real_##name) real_##name = (__typeof__(&name))dlsym(RTLD_NEXT, #name)

/* whether path (relative to dirfd, or the working directory) lies below $QKV_EROFS_DIR: its
 * parent directory, resolved, starts with the directory's resolved path */
static bool below(int dirfd, const char *path) {
    const char *root = getenv("QKV_EROFS_DIR");
    if (!root || !root[0] || !path) return false;
    char want[PATH_MAX], full[PATH_MAX * 2], parent[PATH_MAX * 2], got[PATH_MAX];
    if (!realpath(root, want)) return false;
    if (path[0] == '/' || dirfd == AT_FDCWD) {
        if (path[0] == '/') snprintf(full, sizeof full, "%s", path);
        else {
            char cwd[PATH_MAX];
            if (!getcwd(cwd, sizeof cwd)) return false;
            snprintf(full, sizeof full, "%s/%s", cwd, path);
        }
    } else {
        char fdpath[64], dir[PATH_MAX];
        snprintf(fdpath, sizeof fdpath, "/proc/self/fd/%d", dirfd);
        ssize_t n = readlink(fdpath, dir, sizeof dir - 1);
        if (n < 0) return false;
        dir[n] = 0;
        snprintf(full, sizeof full, "%s/%s", dir, path);
    }
    snprintf(parent, sizeof parent, "%s", full);
    char *slash = strrchr(parent, '/');
    if (slash == parent) slash[1] = 0;
    else *slash = 0;
    if (!realpath(parent, got)) return false;
    size_t n = strlen(want);
    return !strncmp(got, want, n) && (got[n] == 0 || got[n] == '/');
}

static int refuse(void) {
    errno = EROFS;
    return -1;
}

static bool writes(int flags) { return (flags & O_ACCMODE) != O_RDONLY || (flags & (O_CREAT | O_TRUNC)); }

EXPORT int access(const char *path, int mode) {
    NEXT(access);
    return (mode & W_OK) && below(AT_FDCWD, path) ? refuse() : real_access(path, mode);
}
EXPORT int euidaccess(const char *path, int mode) {
    NEXT(euidaccess);
    return (mode & W_OK) && below(AT_FDCWD, path) ? refuse() : real_euidaccess(path, mode);
}
EXPORT int eaccess(const char *path, int mode) { return euidaccess(path, mode); }
EXPORT int faccessat(int dirfd, const char *path, int mode, int flags) {
    NEXT(faccessat);
    return (mode & W_OK) && below(dirfd, path) ? refuse() : real_faccessat(dirfd, path, mode, flags);
}

/* the open family: the mode argument is there only with O_CREAT or O_TMPFILE */
#define OPEN_MODE(flags, mode)                                  \
    mode_t mode = 0;                                            \
    if ((flags) & (O_CREAT | __O_TMPFILE)) {                    \
        va_list ap;                                             \
        va_start(ap, flags);                                    \
        mode = (mode_t)va_arg(ap, int);                         \
        va_end(ap);                                             \
    }
EXPORT int open(const char *path, int flags, ...) {
    NEXT(open);
    OPEN_MODE(flags, mode);
    return writes(flags) && below(AT_FDCWD, path) ? refuse() : real_open(path, flags, mode);
}
EXPORT int open64(const char *path, int flags, ...) {
    NEXT(open64);
    OPEN_MODE(flags, mode);
    return writes(flags) && below(AT_FDCWD, path) ? refuse() : real_open64(path, flags, mode);
}
EXPORT int openat(int dirfd, const char *path, int flags, ...) {
    NEXT(openat);
    OPEN_MODE(flags, mode);
    return writes(flags) && below(dirfd, path) ? refuse() : real_openat(dirfd, path, flags, mode);
}
EXPORT int openat64(int dirfd, const char *path, int flags, ...) {
    NEXT(openat64);
    OPEN_MODE(flags, mode);
    return writes(flags) && below(dirfd, path) ? refuse() : real_openat64(dirfd, path, flags, mode);
}
/* what _FORTIFY_SOURCE builds call for open(path, flags) without a mode */
EXPORT int __open_2(const char *path, int flags) { return open(path, flags); }
EXPORT int __open64_2(const char *path, int flags) { return open64(path, flags); }
EXPORT int __openat_2(int dirfd, const char *path, int flags) { return openat(dirfd, path, flags); }
EXPORT int creat(const char *path, mode_t mode) { return open(path, O_WRONLY | O_CREAT | O_TRUNC, mode); }
EXPORT int creat64(const char *path, mode_t mode) { return open64(path, O_WRONLY | O_CREAT | O_TRUNC, mode); }

static bool writing_mode(const char *m) { return strpbrk(m, "wa+") != NULL; }
EXPORT FILE *fopen(const char *path, const char *m) {
    NEXT(fopen);
    if (writing_mode(m) && below(AT_FDCWD, path)) return errno = EROFS, NULL;
    return real_fopen(path, m);
}
EXPORT FILE *fopen64(const char *path, const char *m) {
    NEXT(fopen64);
    if (writing_mode(m) && below(AT_FDCWD, path)) return errno = EROFS, NULL;
    return real_fopen64(path, m);
}

EXPORT int mkstemp(char *t) {
    NEXT(mkstemp);
    return below(AT_FDCWD, t) ? refuse() : real_mkstemp(t);
}
EXPORT int mkostemp(char *t, int flags) {
    NEXT(mkostemp);
    return below(AT_FDCWD, t) ? refuse() : real_mkostemp(t, flags);
}
EXPORT char *mkdtemp(char *t) {
    NEXT(mkdtemp);
    if (below(AT_FDCWD, t)) return errno = EROFS, NULL;
    return real_mkdtemp(t);
}

EXPORT int rename(const char *a, const char *b) {
    NEXT(rename);
    return below(AT_FDCWD, a) || below(AT_FDCWD, b) ? refuse() : real_rename(a, b);
}
EXPORT int renameat(int da, const char *a, int db, const char *b) {
    NEXT(renameat);
    return below(da, a) || below(db, b) ? refuse() : real_renameat(da, a, db, b);
}
EXPORT int renameat2(int da, const char *a, int db, const char *b, unsigned flags) {
    NEXT(renameat2);
    return below(da, a) || below(db, b) ? refuse() : real_renameat2(da, a, db, b, flags);
}
EXPORT int link(const char *a, const char *b) {
    NEXT(link);
    return below(AT_FDCWD, b) ? refuse() : real_link(a, b);
}
EXPORT int symlink(const char *a, const char *b) {
    NEXT(symlink);
    return below(AT_FDCWD, b) ? refuse() : real_symlink(a, b);
}
EXPORT int unlink(const char *p) {
    NEXT(unlink);
    return below(AT_FDCWD, p) ? refuse() : real_unlink(p);
}
EXPORT int unlinkat(int d, const char *p, int flags) {
    NEXT(unlinkat);
    return below(d, p) ? refuse() : real_unlinkat(d, p, flags);
}
EXPORT int remove(const char *p) {
    NEXT(remove);
    return below(AT_FDCWD, p) ? refuse() : real_remove(p);
}
EXPORT int mkdir(const char *p, mode_t m) {
    NEXT(mkdir);
    return below(AT_FDCWD, p) ? refuse() : real_mkdir(p, m);
}
EXPORT int mkdirat(int d, const char *p, mode_t m) {
    NEXT(mkdirat);
    return below(d, p) ? refuse() : real_mkdirat(d, p, m);
}
EXPORT int rmdir(const char *p) {
    NEXT(rmdir);
    return below(AT_FDCWD, p) ? refuse() : real_rmdir(p);
}
EXPORT int truncate(const char *p, off_t n) {
    NEXT(truncate);
    return below(AT_FDCWD, p) ? refuse() : real_truncate(p, n);
}
EXPORT int chmod(const char *p, mode_t m) {
    NEXT(chmod);
    return below(AT_FDCWD, p) ? refuse() : real_chmod(p, m);
}
