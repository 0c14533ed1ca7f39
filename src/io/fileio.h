/* Small file helpers: atomic writes and directory creation. */
#ifndef QKV_FILEIO_H
#define QKV_FILEIO_H

#include <stddef.h>

/* write buf to PATH.tmp.<pid>, fsync, rename over PATH: a reader sees the old file or the
 * new one, never a part; on failure PATH is untouched and the temporary file removed */
int qkv_write_file_atomic(const char *path, const void *buf, size_t len, char *err, int errlen);
/* mkdir -p; 0 or -1 with err */
int qkv_mkdirs(const char *path, char *err, int errlen);
/* the whole file, NUL-terminated, malloc'd; NULL with err (missing, unreadable) */
char *qkv_read_file(const char *path, size_t *len, char *err, int errlen);

#endif
