/* Well-formed UTF-8 (utf8.h). */
#include "io/utf8.h"

/* Length of the well-formed UTF-8 sequence at s (n bytes available), or 0 with *why set.
 * Follows the Unicode table of well-formed byte sequences, as Rust's from_utf8 does. */
size_t qkv__utf8_seq(const uint8_t *s, size_t n, const char **why) {
    uint8_t c = s[0], lo = 0x80, hi = 0xBF;
    size_t len;
    if (c < 0x80) return 1;
    if (c < 0xC0) { *why = "unexpected continuation byte"; return 0; }
    if (c < 0xC2) { *why = "overlong encoding"; return 0; }
    if (c < 0xE0) {
        len = 2;
    } else if (c < 0xF0) {
        len = 3;
        if (c == 0xE0) lo = 0xA0;        /* below: overlong */
        if (c == 0xED) hi = 0x9F;        /* above: UTF-16 surrogates */
    } else if (c < 0xF5) {
        len = 4;
        if (c == 0xF0) lo = 0x90;        /* below: overlong */
        if (c == 0xF4) hi = 0x8F;        /* above: past U+10FFFF */
    } else {
        *why = "code point above U+10FFFF";
        return 0;
    }
    if (n < 2 || (s[1] & 0xC0) != 0x80) { *why = "truncated multi-byte sequence"; return 0; }
    if (s[1] < lo || s[1] > hi) {
        *why = c == 0xED ? "UTF-16 surrogate" : c == 0xF4 ? "code point above U+10FFFF" : "overlong encoding";
        return 0;
    }
    for (size_t i = 2; i < len; i++)
        if (i >= n || (s[i] & 0xC0) != 0x80) { *why = "truncated multi-byte sequence"; return 0; }
    return len;
}

bool qkv__utf8_valid(const uint8_t *s, size_t n, size_t *bad, const char **why) {
    for (size_t i = 0; i < n;) {
        size_t k = qkv__utf8_seq(s + i, n - i, why);
        if (k == 0) {
            *bad = i;
            return false;
        }
        i += k;
    }
    return true;
}
