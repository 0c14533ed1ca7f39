/* What the safetensors reader (st_read.c), its accessors (st_access.c) and the writer
 * (st_write.c) share: limits, the parsed file, one-line messages, overflow-checked sizes, name
 * sorting and UTF-8 validation (st_common.c). Internal: not part of the API. */
#ifndef QKV_ST_INTERNAL_H
#define QKV_ST_INTERNAL_H

#include "qkv_api.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "io/safetensors.h"

/* Tensor bytes are copied between the file and memory without swapping, which is
 * only right on a little-endian host (every platform qkv targets). The length
 * prefix is decoded byte by byte and does not depend on this. */
#if defined(__BYTE_ORDER__) && defined(__ORDER_LITTLE_ENDIAN__)
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
               "safetensors data is little-endian; a big-endian host needs byte swapping here");
#endif
_Static_assert(sizeof(float) == 4 && sizeof(double) == 8 && sizeof(int32_t) == 4,
               "F32/F64/I32 must be 4/8/4 bytes");

#define ST_MAX_HEADER 100000000ULL      /* the reference loader's limit on N */
#define ST_MAX_INT (1ULL << 53)         /* largest shape/offset value accepted */
#define ST_MAX_DEPTH 127                /* serde_json refuses the 128th nested level */
#define ST_SHOW_MAX 96                  /* longest name (in bytes) quoted in a message */
#define ST_LABEL_MAX 256                /* longest file name (in bytes) shown in a message */
#define ST_SHOW_CAP (ST_LABEL_MAX * 4 + 8)
#define ST_MSG_CAP 2048
#define ST_META_KEY "__metadata__"
#define ST_SUPPORTED "qkv reads F32, F64, I32"

struct qkv_safetensors {
    char *label;                 /* file name used in messages */
    int n;                       /* tensors, in header order */
    qkv_st_entry *entries;
    const uint8_t **ptr;         /* per entry: its bytes, aligned for the dtype */
    uint8_t **copy;              /* per entry: a private aligned copy, or NULL */
    int *by_name;                /* entry indices sorted by name, for qkv_st_find */
    int n_meta;
    char **meta_key, **meta_val;
    uint8_t *image;              /* the owned file image; holds the data buffer */
};

/* Where messages go (QKV_ERR_FAIL; NULL: nowhere) and which file they are about. */
typedef struct st_ctx { const char *label; qkv_err *e; } st_ctx;

/* A name made printable for a one-line message: quoted, escaped, truncated. */
typedef struct st_shown { char s[ST_SHOW_CAP]; } st_shown;

/* A name paired with its position, so sorting can find duplicates and build an index. */
typedef struct st_named { const char *name; int idx; } st_named;

/* "label: message" into the caller's error, on one line; always -1, so callers can `return qkv__st_fail(...)` */
__attribute__((format(printf, 2, 3)))
QKV_INTERNAL int qkv__st_fail(const st_ctx *c, const char *fmt, ...);
/* a quoted, escaped rendering of a name ("(null)" for NULL), valid for as long as b */
QKV_INTERNAL const char *qkv__st_show(st_shown *b, const char *s);
/* "(4,6)"; "()" for a scalar */
QKV_INTERNAL const char *qkv__st_fmt_shape(char *buf, size_t len, int ndim, const int64_t *shape);
/* a*b without wrapping; false on overflow */
QKV_INTERNAL bool qkv__st_mul_u64(uint64_t a, uint64_t b, uint64_t *out);
/* product of the dims; false on a negative dim or overflow */
QKV_INTERNAL bool qkv__st_shape_numel(int ndim, const int64_t *shape, uint64_t *out);
/* true for a dtype qkv has */
QKV_INTERNAL bool qkv__st_dtype_valid(int dt);
/* sorts v by name and returns a name that occurs twice, or NULL; n log n, so big headers stay fast */
QKV_INTERNAL const char *qkv__st_sort_find_dup(st_named *v, int n);
/* the CRC-32 of p[0..n) continuing crc (0 to start): liblzma's lzma_crc32, the CRC of zlib,
 * gzip and xz. liblzma is already one of qkv's libraries (the xz baseline of the text task), so
 * the checksum adds no dependency and no hand-written table. */
QKV_INTERNAL uint32_t qkv__st_crc32(uint32_t crc, const void *p, size_t n);

#endif
