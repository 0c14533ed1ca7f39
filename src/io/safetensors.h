/* safetensors checkpoints: read and write the Hugging Face format.
 *
 * Layout: an 8-byte little-endian u64 N, N bytes of UTF-8 JSON (an object that
 * starts with '{' and may be padded with trailing spaces), then the data buffer.
 * Each tensor is "name": {"dtype", "shape", "data_offsets": [begin, end]} with
 * offsets relative to the start of the data buffer; the optional "__metadata__"
 * maps strings to strings.
 *
 * The reader validates a file the way the reference loader does (header size,
 * UTF-8, strict JSON, duplicate keys, tensors tiling the buffer exactly, byte
 * counts matching shape and dtype, nothing trailing) and additionally rejects
 * what qkv cannot hold: dtypes other than F32, F64, I32 and ranks above
 * QKV_MAX_DIMS. Every function reports bad input through a return value and a
 * one-line message in the caller's buffer; none of them exits or aborts.
 *
 * Checksum: a file whose metadata holds QKV_ST_CRC32_KEY ("qkv_crc32", 8 lowercase hex digits;
 * qkv's model files and checkpoints carry it) is refused by the reader, as damaged, when the
 * CRC-32 of its whole data buffer (every byte after the header) is another, or when the value is
 * not 8 hex digits. A file without the key (an older qkv's, PyTorch's) is read as before.
 * Readers that do not know the key (PyTorch's safetensors) ignore it, as any metadata.
 *
 * Tensor data is stored little-endian; this module assumes a little-endian host
 * (checked at compile time). */
#ifndef QKV_SAFETENSORS_H
#define QKV_SAFETENSORS_H

#include "qkv_api.h"

#include <stddef.h>
#include <stdint.h>
#include "tensor/error.h"
#include "tensor/tensor.h"

/* one tensor of a parsed file; shape entries past ndim are 1 */
typedef struct qkv_st_entry {
    char *name;
    qkv_dtype dtype;
    int ndim;
    int64_t shape[QKV_MAX_DIMS];
    uint64_t begin, end;           /* byte range within the data buffer */
} qkv_st_entry;

/* opaque: entries (in header order), metadata, data buffer */
typedef struct qkv_safetensors qkv_safetensors;

/* parse a whole file image held in memory (copied); label names it in messages; 0 on success, -1 with e
 * (QKV_ERR_FAIL, as every error of this file's functions; e may be NULL) */
QKV_API int qkv_st_parse(const uint8_t *buf, size_t len, const char *label, qkv_safetensors **out, qkv_err *e);
/* read and parse a file; a missing/unreadable/empty file is an error naming the path and the reason */
QKV_API int qkv_st_read(const char *path, qkv_safetensors **out, qkv_err *e);
/* number of tensors in the file (0 for NULL) */
QKV_API int qkv_st_count(const qkv_safetensors *st);
/* the i-th tensor in header order, or NULL when i is out of range */
QKV_API const qkv_st_entry *qkv_st_entry_at(const qkv_safetensors *st, int i);
/* the tensor called name, or NULL if absent */
QKV_API const qkv_st_entry *qkv_st_find(const qkv_safetensors *st, const char *name);
/* an entry's little-endian raw bytes (end - begin of them), aligned for its dtype; NULL if e is not from st */
QKV_API const void *qkv_st_data(const qkv_safetensors *st, const qkv_st_entry *e);
/* the metadata value for key, or NULL if absent */
QKV_API const char *qkv_st_meta(const qkv_safetensors *st, const char *key);
/* number of metadata pairs (0 for NULL) */
QKV_API int qkv_st_meta_count(const qkv_safetensors *st);
/* the i-th metadata pair in header order: 0, or -1 when i is out of range */
QKV_API int qkv_st_meta_at(const qkv_safetensors *st, int i, const char **key, const char **value);
/* copy entry name into t (which must have data): dtype and shape must match exactly, except that
 * F32 <-> F64 converts; a missing name or a mismatch is an error naming both sides */
QKV_API int qkv_st_load_into(const qkv_safetensors *st, const char *name, qkv_tensor *t, qkv_err *e);
/* release everything qkv_st_parse / qkv_st_read allocated (NULL is fine) */
QKV_API void qkv_st_free(qkv_safetensors *st);

/* one tensor to write */
typedef struct qkv_st_item { const char *name; const qkv_tensor *t; } qkv_st_item;

/* the metadata key of the data buffer's CRC-32 (see the top of this file) */
#define QKV_ST_CRC32_KEY "qkv_crc32"
/* the CRC-32 of the data buffer qkv_st_write would write for items[0..n) (their bytes one after
 * the other), as 8 lowercase hex digits and a NUL in hex: the value of QKV_ST_CRC32_KEY to pass
 * in the metadata. The CRC is zlib's, gzip's and xz's (CRC-32/ISO-HDLC). 0, or -1 with e when an
 * item is not writable. */
QKV_API int qkv_st_data_crc32(const qkv_st_item *items, int n, char hex[9], qkv_err *e);

/* write tensors (in the given order, offsets ascending) and string metadata pairs (meta[2*i] key,
 * meta[2*i+1] value; "format":"pt" is added unless given) atomically (io/fileio.h): write
 * PATH.tmp.<pid>.<host tag>, fsync, rename over PATH, fsync the directory; on a failure before the rename the
 * temp file is removed and PATH is untouched; the header is padded with spaces to a multiple of 8;
 * duplicate names are an error; 0 or -1 with e */
QKV_API int qkv_st_write(const char *path, const qkv_st_item *items, int n, const char *const *meta, int n_meta,
                         qkv_err *e);
/* the same file image, into a malloc'd buffer the caller frees (for tests and fuzzing) */
QKV_API int qkv_st_write_mem(const qkv_st_item *items, int n, const char *const *meta, int n_meta,
                             uint8_t **out, size_t *out_len, qkv_err *e);

#endif
