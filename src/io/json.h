/* Strict JSON reading: the one reader for configs, --set values, ablation files, the files a
 * run and a sweep write (summary.json, metrics.jsonl, results.json) and safetensors headers.
 *
 * A syntax scanner checks the text against RFC 8259 and stops at the first error with its byte
 * offset and a message naming the usual mistake ("trailing comma before '}'", "keys need double
 * quotes", ...); only text that passes is handed to cJSON, which builds the tree. The scanner is
 * what makes the result strict: cJSON alone takes any byte <= 0x20 as whitespace, numbers such as
 * 01 or 1. and raw control characters inside strings.
 *
 * The caller chooses the nesting limit, whether \u0000 is refused (cJSON would silently cut the
 * string there), whether a leading UTF-8 byte-order mark is skipped, and may be told the offset of
 * every number token (cJSON keeps only a double). The caller formats the position: a config names
 * the line and column (qkv__json_line_col), a safetensors header the byte. Nothing here exits or
 * aborts on bad input. */
#ifndef QKV_JSON_H
#define QKV_JSON_H

#include "qkv_api.h"

#include <stdbool.h>
#include <stddef.h>
#include "tensor/error.h"

struct cJSON;

/* what kind of error the scanner found (callers that word their own messages use it) */
typedef enum qkv_json_kind {
    QKV_JSON_OK = 0,
    QKV_JSON_SYNTAX,     /* the grammar: a missing comma, an unquoted key, text after the value, ... */
    QKV_JSON_CONTROL,    /* a raw control character (0x00-0x1f), inside a string or between tokens */
    QKV_JSON_NUL,        /* \u0000 in a string, with reject_nul */
    QKV_JSON_NUMBER,     /* a malformed number token (01, 1., -, 2.e5, 1e5e) */
    QKV_JSON_DEPTH,      /* objects and arrays nested deeper than max_depth */
    QKV_JSON_UTF8,       /* a string (or key) that is not well-formed UTF-8 */
    QKV_JSON_NOMEM,      /* out of memory, in cJSON or in the number hook */
} qkv_json_kind;

/* the first error in the text */
typedef struct qkv_json_error {
    qkv_json_kind kind;
    size_t pos;          /* the byte offset msg is about (a token's start, the comma before a bracket, ...) */
    size_t at;           /* QKV_JSON_CONTROL: the offset of the control character itself (pos may be the
                          * start of the string it breaks); otherwise pos */
    bool in_string;      /* QKV_JSON_CONTROL: the character is inside a string */
    char msg[80];        /* what was wrong, one line, e.g. "missing ',' between values" */
} qkv_json_error;

/* how strict to be, and what to report */
typedef struct qkv_json_opts {
    int max_depth;       /* deepest nesting of objects and arrays accepted (1 = no containers inside the top one) */
    bool reject_nul;     /* \u0000 in a string is an error (a C string cannot hold it) */
    bool skip_bom;       /* a leading UTF-8 byte-order mark is skipped */
    size_t max_number;   /* longest number token accepted, in bytes (0: any length) */
    /* called with each number token's byte offset, in document order (the order of cJSON's number
     * items); a non-zero return stops the scan as out of memory. NULL: not called */
    int (*on_number)(void *ctx, size_t pos);
    void *ctx;
} qkv_json_opts;

/* strict RFC 8259 syntax check of text[0..len) (no terminator needed): 0, or -1 with *e filled */
QKV_INTERNAL int qkv__json_check(const char *text, size_t len, const qkv_json_opts *o, qkv_json_error *e);
/* qkv__json_check, then the cJSON tree (the caller frees it with cJSON_Delete): 0 and *out, or -1
 * with *out NULL and *e filled (cJSON running out of memory is QKV_JSON_NOMEM at cJSON's offset) */
QKV_INTERNAL int qkv__json_parse(const char *text, size_t len, const qkv_json_opts *o, struct cJSON **out, qkv_json_error *e);
/* line and column (both from 1; a column counts bytes) of byte offset pos in text */
QKV_INTERNAL void qkv__json_line_col(const char *text, size_t pos, int *line, int *col);
/* the tree of text[0..len) that qkv wrote itself and reads back without saying why it cannot (a
 * run's summary.json, a line of its metrics.jsonl): strict, nested up to 64 levels, no \u0000;
 * NULL when it is not one JSON value, or out of memory (free with cJSON_Delete) */
QKV_INTERNAL struct cJSON *qkv__json_tree(const char *text, size_t len);

/* ---- typed reading of a parsed document --------------------------------------------------------
 * For a file that qkv wrote and a person may have edited (an ablation's results.json). Each getter
 * reads o[key] (o NULL: every key absent); its message names the key as WHERE KEY, where being the
 * path to o ("variants[2]."). The first value of the wrong type or range puts "LABEL: WHEREKEY:
 * expected WHAT, got VALUE" (VALUE "missing" when absent) in e (QKV_ERR_FAIL) and sets bad; from
 * then on the getters return their defaults and leave e as it is, so a reader checks bad once at
 * the end. */
typedef struct qkv_json_reader {
    const char *label;   /* the file, first in every message */
    qkv_err *e;
    bool bad;            /* a message is in e */
} qkv_json_reader;

/* the message "LABEL: WHEREKEY: expected WHAT, got VALUE" for v (NULL: "missing"), unless one is there */
QKV_INTERNAL void qkv__json_wrong(qkv_json_reader *r, const char *where, const char *key, const char *what,
                                  const struct cJSON *v);
/* a finite number; NaN when absent or null */
QKV_INTERNAL double qkv__json_num(qkv_json_reader *r, const struct cJSON *o, const char *where, const char *key);
/* a finite number in [lo, hi] (hi may be INFINITY: no upper bound); NaN when absent or null */
QKV_INTERNAL double qkv__json_num_in(qkv_json_reader *r, const struct cJSON *o, const char *where, const char *key,
                                     double lo, double hi);
/* a whole number in [0, 2^53]; -1 when absent or null */
QKV_INTERNAL long long qkv__json_count(qkv_json_reader *r, const struct cJSON *o, const char *where,
                                       const char *key);
/* a string (borrowed from the tree); NULL when absent or null, which is wrong when required */
QKV_INTERNAL const char *qkv__json_str(qkv_json_reader *r, const struct cJSON *o, const char *where, const char *key,
                                       bool required);
/* true or false; dflt when absent or null */
QKV_INTERNAL bool qkv__json_bool(qkv_json_reader *r, const struct cJSON *o, const char *where, const char *key,
                                 bool dflt);
/* an array; NULL when absent (which is wrong when required; null is never an array) */
QKV_INTERNAL const struct cJSON *qkv__json_array(qkv_json_reader *r, const struct cJSON *o, const char *where,
                                                 const char *key, bool required);

#endif
