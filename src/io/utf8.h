/* Well-formed UTF-8, as the Unicode table of well-formed byte sequences (and Rust's from_utf8)
 * decides: no overlong forms, no UTF-16 surrogates, nothing above U+10FFFF. The one check for
 * JSON strings (json.c) and safetensors headers and names (st_*.c). */
#ifndef QKV_UTF8_H
#define QKV_UTF8_H

#include "qkv_api.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* the length of the well-formed sequence at s (n >= 1 bytes available), or 0 with *why set
 * ("overlong encoding", "UTF-16 surrogate", "truncated multi-byte sequence", ...) */
QKV_INTERNAL size_t qkv__utf8_seq(const uint8_t *s, size_t n, const char **why);
/* true when s[0..n) is well-formed; otherwise the offending sequence's offset in *bad and the
 * reason in *why */
QKV_INTERNAL bool qkv__utf8_valid(const uint8_t *s, size_t n, size_t *bad, const char **why);

#endif
