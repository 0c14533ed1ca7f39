/* Whole files: the one atomic writer, the one reader, and directory creation.
 *
 * Every file qkv writes whole (configs, summaries, checkpoints, model files, reports) goes
 * through qkv__write_parts_atomic: PATH.tmp.<pid>.<host tag> (so no two writers share one, even
 * processes of one pid on two hosts or in two pid namespaces over one file system) is written,
 * fsynced and renamed over PATH, and
 * the directory is fsynced so the rename survives a crash. A reader sees the old file or the new
 * one, never a part; on a failure before the rename the temporary file is removed and PATH is
 * untouched. (A killed process can leave PATH.tmp.<pid>.<host tag> behind; the run directory's
 * owner removes those of its host whose process is gone.) */
#ifndef QKV_FILEIO_H
#define QKV_FILEIO_H

#include "qkv_api.h"

#include <stddef.h>
#include "tensor/error.h"

/* one piece of a file to write */
typedef struct qkv_wpart { const void *buf; size_t len; } qkv_wpart;

/* where an atomic write failed */
typedef enum qkv_write_stage {
    QKV_WRITE_OK = 0,
    QKV_WRITE_NOMEM,     /* out of memory for the temporary name */
    QKV_WRITE_CREATE,    /* creating the temporary file */
    QKV_WRITE_DATA,      /* writing, fsyncing or closing it */
    QKV_WRITE_RENAME,    /* renaming it over the path */
    QKV_WRITE_SYNC_DIR,  /* fsyncing the directory: the new file is in place, its rename may not be durable */
} qkv_write_stage;

/* the outcome of an atomic write, for the caller's message */
typedef struct qkv_write_status {
    qkv_write_stage stage;
    int errnum;          /* errno of the failure */
} qkv_write_status;

/* the host tag of temporary names: 8 hex digits of a hash of this machine's boot id and this
 * process's pid namespace (the host name where /proc is not mounted); computed on each call, so
 * a process forked into a new pid namespace gets its own */
#define QKV_HOST_TAG_LEN 8
QKV_INTERNAL void qkv__host_tag(char tag[QKV_HOST_TAG_LEN + 1]);
/* the temporary file an atomic write of path goes through, PATH.tmp.<pid>.<host tag>; malloc'd, NULL when
 * out of memory */
QKV_INTERNAL char *qkv__temp_path(const char *path);

/* parts[0..n) one after the other into PATH, atomically and durably (see above): 0, or -1 with
 * *st saying where and why */
QKV_INTERNAL int qkv__write_parts_atomic(const char *path, const qkv_wpart *parts, int n, qkv_write_status *st);
/* buf into PATH with qkv__write_parts_atomic: 0, or -1 with e: "PATH: cannot write: reason"
 * (QKV_ERR_FAIL, as every failure to write, create or read below but a config's) */
QKV_INTERNAL int qkv__write_file_atomic(const char *path, const void *buf, size_t len, qkv_err *e);
/* Rewrite an existing file the user owns (a document), as an editor saves it: through symbolic
 * links to the file itself (the link stays a link), atomically beside it, with its permission
 * bits kept; a file that is not regular or is read-only (no write bit, even for root) is refused.
 * 0, or -1 with e: "PATH: ..." */
QKV_INTERNAL int qkv__rewrite_file_atomic(const char *path, const qkv_wpart *parts, int n, qkv_err *e);
/* mkdir -p; 0 or -1 with e */
QKV_INTERNAL int qkv__mkdirs(const char *path, qkv_err *e);

/* where reading a whole file failed */
typedef enum qkv_read_stage {
    QKV_READ_OK = 0,
    QKV_READ_OPEN,       /* opening it (errnum) */
    QKV_READ_IO,         /* reading it (errnum; EISDIR for a directory) */
    QKV_READ_TOO_BIG,    /* longer than the limit */
    QKV_READ_NOMEM,      /* out of memory */
    QKV_READ_NOT_REGULAR,/* QKV_READ_REGULAR was asked and it is a pipe, a device, a socket (errnum 0) */
    QKV_READ_EMPTY_PIPE, /* a pipe or FIFO that gave no bytes: nothing was writing to it (errnum 0) */
} qkv_read_stage;

/* the outcome of a read, for the caller's message (mode: the file's type bits when known) */
typedef struct qkv_read_status { qkv_read_stage stage; int errnum; unsigned mode; } qkv_read_status;

/* The size caps of what qkv reads whole (docs/reliability.md, "Size caps"): a config (training
 * or ablation) is at most 16 MiB - 2 bytes, any other file (a corpus, JSON Lines data, metrics,
 * results, a document) at most 1 GiB, a safetensors file at most 16 GiB. A pipe is read up to
 * its cap and no further, so /dev/zero ends in an error, not in the machine's memory. */
#define QKV_MAX_CONFIG_BYTES ((size_t)(16 << 20) - 2)
#define QKV_MAX_FILE_BYTES ((size_t)1 << 30)
#define QKV_MAX_SAFETENSORS_BYTES ((size_t)16 << 30)

/* flags of qkv__read_file_max */
enum {
    QKV_READ_REGULAR = 1, /* only a regular file: a pipe, FIFO, device or socket is refused without
                           * blocking or reading from it (opened O_NONBLOCK, then fstat) */
};

/* the whole file, NUL-terminated, malloc'd, refusing one longer than max bytes (0: any length);
 * opened once and read once. NULL with *st saying where and why */
QKV_INTERNAL char *qkv__read_file_max(const char *path, size_t max, int flags, size_t *len, qkv_read_status *st);
/* what qkv__read_file_max checks before it reads (the open, and with QKV_READ_REGULAR the type;
 * the size against max), done and nothing read: a config checks its data files with it, and the
 * task reads them later. 0, or -1 with *st saying why */
QKV_INTERNAL int qkv__probe_file(const char *path, size_t max, int flags, qkv_read_status *st);
/* the file type in mode as words for a message: "a directory", "a pipe (FIFO)", ... */
QKV_INTERNAL const char *qkv__file_type_name(unsigned mode);
/* a config file (training or ablation; at most QKV_MAX_CONFIG_BYTES), NUL-terminated, malloc'd;
 * NULL with e: "PATH: cannot open: reason", "PATH: cannot read: reason" or "PATH: file too large
 * for a config (over 16 MiB)", QKV_ERR_USAGE (the user named it) */
QKV_INTERNAL char *qkv__read_config_file(const char *path, size_t *len, qkv_err *e);
/* the whole file (at most QKV_MAX_FILE_BYTES), NUL-terminated, malloc'd; NULL with e:
 * "PATH: cannot read: reason" */
QKV_INTERNAL char *qkv__read_file(const char *path, size_t *len, qkv_err *e);
/* qkv__read_file of a regular file only (a corpus, data): a pipe or a device is refused with
 * "PATH: is a pipe (FIFO), not a regular file: ..." in e; nothing is read from it */
QKV_INTERNAL char *qkv__read_regular_file(const char *path, size_t *len, qkv_err *e);

#endif
