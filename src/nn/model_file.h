/* Model files: a model's parameters by name in safetensors (keys as in model.h), readable by
 * PyTorch's safetensors loaders. */
#ifndef QKV_MODEL_FILE_H
#define QKV_MODEL_FILE_H

#include "qkv_api.h"

#include "nn/model.h"

/* load parameters by name from a safetensors file into m (shapes must match exactly, values
 * must be finite; a file with a checksum must match it: io/safetensors.h); 0, or -1 with e
 * (QKV_ERR_FAIL, as for the other two) */
QKV_API int qkv_load_model(qkv_model *m, const char *path, qkv_err *e);
/* write m's parameters atomically, with metadata (format "pt", qkv_step = step, qkv_config =
 * config_json or "{}", qkv_crc32 = the data's CRC-32); 0, or -1 with e */
QKV_API int qkv_save_model(const qkv_model *m, const char *path, const char *config_json, long long step,
                           qkv_err *e);
/* the same, with n_extra more metadata pairs (extra[2*i] key, extra[2*i+1] value; at most 4),
 * e.g. what the model's tokens mean: qkv records its text vocabulary's digest there */
QKV_API int qkv_save_model_meta(const qkv_model *m, const char *path, const char *config_json, long long step,
                                const char *const *extra, int n_extra, qkv_err *e);

#endif
