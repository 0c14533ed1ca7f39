/* Strict JSON reading: a recursive-descent syntax scanner (RFC 8259, first error with its
 * offset and a hint), then cJSON for the tree. See json.h. */
#include "io/json.h"
#include "io/utf8.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct scanner {
    const char *s;
    size_t n, pos;
    int depth;
    const qkv_json_opts *o;
    qkv_json_error *e;
} scanner;

static bool is_ws(char ch) { return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r'; }

static bool is_digit(char ch) { return ch >= '0' && ch <= '9'; }

static bool is_word(char ch) {
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || is_digit(ch) || ch == '_';
}

/* records the first error; a grammar error at a control character is reported as that character */
static bool sc_error(scanner *S, qkv_json_kind kind, size_t at, const char *msg) {
    qkv_json_error *e = S->e;
    e->kind = kind;
    e->pos = e->at = at;
    e->in_string = false;
    snprintf(e->msg, sizeof e->msg, "%s", msg);
    if (kind == QKV_JSON_SYNTAX && at < S->n && (unsigned char)S->s[at] < 0x20 && !is_ws(S->s[at]))
        e->kind = QKV_JSON_CONTROL;
    return false;
}

static bool sc_fail(scanner *S, size_t at, const char *msg) { return sc_error(S, QKV_JSON_SYNTAX, at, msg); }

/* a raw control character at offset ch inside the string starting at start */
static bool sc_control(scanner *S, size_t at, size_t ch, const char *msg) {
    sc_error(S, QKV_JSON_CONTROL, at, msg);
    S->e->at = ch;
    S->e->in_string = true;
    return false;
}

static void sc_ws(scanner *S) {
    while (S->pos < S->n && is_ws(S->s[S->pos])) S->pos++;
}

static bool sc_unexpected(scanner *S, const char *what) {
    unsigned char ch = (unsigned char)S->s[S->pos];
    char buf[80];
    if (ch >= 0x20 && ch < 0x7f) snprintf(buf, sizeof buf, "%s, got '%c'", what, ch);
    else snprintf(buf, sizeof buf, "%s, got byte 0x%02x", what, ch);
    return sc_fail(S, S->pos, buf);
}

static int hex4(const char *p) {
    int v = 0;
    for (int i = 0; i < 4; i++) {
        char ch = p[i];
        int d = ch >= '0' && ch <= '9'   ? ch - '0'
                : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10
                : ch >= 'A' && ch <= 'F' ? ch - 'A' + 10
                                         : -1;
        if (d < 0) return -1;
        v = v * 16 + d;
    }
    return v;
}

/* the escape at S->pos (just past the backslash at esc) */
static bool sc_escape(scanner *S, size_t start, size_t esc) {
    if (S->pos >= S->n) return sc_fail(S, start, "unterminated string");
    char e = S->s[S->pos];
    if (e && strchr("\"\\/bfnrt", e)) {
        S->pos++;
        return true;
    }
    if (e != 'u') return sc_fail(S, esc, "invalid escape in a string");
    int u = S->pos + 4 < S->n ? hex4(S->s + S->pos + 1) : -1;
    if (u < 0) return sc_fail(S, esc, "invalid \\u escape (needs 4 hex digits)");
    if (u == 0 && S->o->reject_nul)
        return sc_error(S, QKV_JSON_NUL, esc, "\\u0000 (NUL) is not allowed in strings");
    S->pos += 5;
    if (u >= 0xDC00 && u <= 0xDFFF) return sc_fail(S, esc, "unpaired UTF-16 surrogate");
    if (u >= 0xD800 && u <= 0xDBFF) {
        int lo = S->pos + 6 <= S->n && S->s[S->pos] == '\\' && S->s[S->pos + 1] == 'u'
                     ? hex4(S->s + S->pos + 2)
                     : -1;
        if (lo < 0xDC00 || lo > 0xDFFF) return sc_fail(S, esc, "unpaired UTF-16 surrogate");
        S->pos += 6;
    }
    return true;
}

static bool sc_string(scanner *S) {
    size_t start = S->pos++;
    for (;;) {
        if (S->pos >= S->n) return sc_fail(S, start, "unterminated string");
        unsigned char ch = (unsigned char)S->s[S->pos];
        if (ch == '"') {
            S->pos++;
            return true;
        }
        if (ch == '\n' || ch == '\r')
            return sc_control(S, start, S->pos, "unterminated string (a line break inside a string is "
                                                "written \\n)");
        if (ch < 0x20) return sc_control(S, S->pos, S->pos, "control character in a string (escape it)");
        if (ch >= 0x80) { /* JSON text is UTF-8 (RFC 8259 8.1): a string must be well formed */
            const char *why = "";
            size_t len = qkv__utf8_seq((const uint8_t *)S->s + S->pos, S->n - S->pos, &why);
            if (!len) {
                char buf[80];
                snprintf(buf, sizeof buf, "invalid UTF-8 in a string (%s)", why);
                return sc_error(S, QKV_JSON_UTF8, S->pos, buf);
            }
            S->pos += len;
            continue;
        }
        if (ch != '\\') {
            S->pos++;
            continue;
        }
        size_t esc = S->pos++;
        if (!sc_escape(S, start, esc)) return false;
    }
}

static bool sc_number(scanner *S) {
    size_t start = S->pos;
    const char *s = S->s;
#define AT(i) ((i) < S->n ? s[i] : '\0')
#define BAD(msg) sc_error(S, QKV_JSON_NUMBER, start, msg)
    if (AT(S->pos) == '-') S->pos++;
    if (!is_digit(AT(S->pos))) return BAD("invalid number");
    if (AT(S->pos) == '0') {
        S->pos++;
        if (is_digit(AT(S->pos))) return BAD("invalid number (leading zeros are not allowed)");
    } else {
        while (is_digit(AT(S->pos))) S->pos++;
    }
    if (AT(S->pos) == '.') {
        S->pos++;
        if (!is_digit(AT(S->pos))) return BAD("invalid number (digits after '.')");
        while (is_digit(AT(S->pos))) S->pos++;
    }
    if (AT(S->pos) == 'e' || AT(S->pos) == 'E') {
        S->pos++;
        if (AT(S->pos) == '+' || AT(S->pos) == '-') S->pos++;
        if (!is_digit(AT(S->pos))) return BAD("invalid number (exponent digits)");
        while (is_digit(AT(S->pos))) S->pos++;
    }
    /* a letter or '.' straight after: part of a malformed number when it could continue one
     * (1.5. 1e5e), otherwise a number followed by junk (12abc) */
    char next = AT(S->pos);
    if (next == '.' || next == 'e' || next == 'E') return BAD("invalid number");
    if (is_word(next)) return sc_fail(S, start, "invalid number");
#undef BAD
#undef AT
    if (S->o->max_number && S->pos - start > S->o->max_number) return sc_fail(S, start, "number too long");
    if (S->o->on_number && S->o->on_number(S->o->ctx, start))
        return sc_error(S, QKV_JSON_NOMEM, start, "out of memory");
    return true;
}

static bool sc_value(scanner *S);

/* after '{' or '[': members up to the closing bracket */
static bool sc_members(scanner *S, bool object) {
    char close = object ? '}' : ']';
    size_t comma = 0;
    bool after_comma = false;
    for (;;) {
        sc_ws(S);
        if (S->pos >= S->n)
            return sc_fail(S, S->pos, object ? "unexpected end of input (missing '}')"
                                             : "unexpected end of input (missing ']')");
        if (after_comma && S->s[S->pos] == close)
            return sc_fail(S, comma, object ? "trailing comma before '}'" : "trailing comma before ']'");
        if (object) {
            char ch = S->s[S->pos];
            if (ch == '\'') return sc_fail(S, S->pos, "strings need double quotes, not single");
            if (is_word(ch)) return sc_fail(S, S->pos, "keys need double quotes");
            if (ch != '"') return sc_unexpected(S, "expected a key in double quotes");
            if (!sc_string(S)) return false;
            sc_ws(S);
            if (S->pos >= S->n) return sc_fail(S, S->pos, "unexpected end of input (missing ':')");
            if (S->s[S->pos] != ':') return sc_unexpected(S, "expected ':' after the key");
            S->pos++;
        }
        if (!sc_value(S)) return false;
        sc_ws(S);
        if (S->pos >= S->n)
            return sc_fail(S, S->pos, object ? "unexpected end of input (missing '}')"
                                             : "unexpected end of input (missing ']')");
        char ch = S->s[S->pos];
        if (ch == ',') {
            comma = S->pos++;
            after_comma = true;
            continue;
        }
        if (ch == close) {
            S->pos++;
            return true;
        }
        if (ch == '"' || ch == '{' || ch == '[' || is_word(ch) || ch == '-')
            return sc_fail(S, S->pos, "missing ',' between values");
        if (ch == '/') return sc_fail(S, S->pos, "comments are not allowed in JSON");
        return sc_unexpected(S, object ? "expected ',' or '}'" : "expected ',' or ']'");
    }
}

static bool sc_container(scanner *S, bool object) {
    if (++S->depth > S->o->max_depth) return sc_error(S, QKV_JSON_DEPTH, S->pos, "nested too deeply");
    S->pos++;
    sc_ws(S);
    if (S->pos < S->n && S->s[S->pos] == (object ? '}' : ']')) {
        S->pos++;
    } else if (!sc_members(S, object)) {
        return false;
    }
    S->depth--;
    return true;
}

/* a bare word that is not a literal: a miscased literal or unquoted text */
static bool sc_word(scanner *S, const char *const *lits) {
    size_t len = 0;
    while (S->pos + len < S->n && is_word(S->s[S->pos + len])) len++;
    for (int i = 0; i < 3; i++) {
        size_t l = strlen(lits[i]), m = len < l ? len : l;
        bool same = true;
        for (size_t j = 0; j < m && same; j++) same = (S->s[S->pos + j] | 0x20) == lits[i][j]; /* ASCII lowercase */
        if (same) return sc_fail(S, S->pos, "invalid literal (JSON has true, false, null)");
    }
    return sc_fail(S, S->pos, "unquoted text (strings need double quotes)");
}

static bool sc_value(scanner *S) {
    sc_ws(S);
    if (S->pos >= S->n) return sc_fail(S, S->pos, "unexpected end of input (a value is missing)");
    char ch = S->s[S->pos];
    if (ch == '{' || ch == '[') return sc_container(S, ch == '{');
    if (ch == '"') return sc_string(S);
    if (ch == '-' || is_digit(ch)) return sc_number(S);
    static const char *const lits[] = {"true", "false", "null"};
    for (int i = 0; i < 3; i++) {
        size_t l = strlen(lits[i]);
        if (S->n - S->pos >= l && !memcmp(S->s + S->pos, lits[i], l) &&
            !(S->pos + l < S->n && is_word(S->s[S->pos + l]))) {
            S->pos += l;
            return true;
        }
    }
    if (ch == '\'') return sc_fail(S, S->pos, "strings need double quotes, not single");
    if (ch == '/') return sc_fail(S, S->pos, "comments are not allowed in JSON");
    if (is_word(ch)) return sc_word(S, lits);
    if (ch == '+' || ch == '.') return sc_fail(S, S->pos, "invalid number");
    return sc_unexpected(S, "expected a value");
}

/* bytes of a leading UTF-8 byte-order mark to skip */
static size_t bom_len(const char *text, size_t len, const qkv_json_opts *o) {
    return o->skip_bom && len >= 3 && !memcmp(text, "\xEF\xBB\xBF", 3) ? 3 : 0;
}

int qkv__json_check(const char *text, size_t len, const qkv_json_opts *o, qkv_json_error *e) {
    memset(e, 0, sizeof *e);
    scanner S = {.s = text, .n = len, .pos = bom_len(text, len, o), .o = o, .e = e};
    /* the whole text: one value and nothing after it */
    sc_ws(&S);
    bool ok = S.pos < S.n ? sc_value(&S) : sc_fail(&S, S.pos, "empty input (expected a JSON object)");
    if (ok) sc_ws(&S);
    if (ok && S.pos < S.n) ok = sc_fail(&S, S.pos, "unexpected text after the JSON value");
    return ok ? 0 : -1;
}

int qkv__json_parse(const char *text, size_t len, const qkv_json_opts *o, cJSON **out, qkv_json_error *e) {
    *out = NULL;
    if (qkv__json_check(text, len, o, e)) return -1;
    /* the syntax is checked: cJSON fails only when it runs out of memory; it needs no terminator
     * when it need not check for trailing text */
    size_t skip = bom_len(text, len, o);
    const char *end = NULL;
    *out = cJSON_ParseWithLengthOpts(text + skip, len - skip, &end, 0);
    if (*out) return 0;
    e->kind = QKV_JSON_NOMEM;
    e->pos = e->at = end && end >= text + skip && end <= text + len ? (size_t)(end - text) : skip;
    snprintf(e->msg, sizeof e->msg, "rejected by cJSON (out of memory?)");
    return -1;
}

void qkv__json_line_col(const char *text, size_t pos, int *line, int *col) {
    int l = 1;
    size_t last = 0; /* index just after the last newline */
    for (size_t i = 0; i < pos; i++)
        if (text[i] == '\n') l++, last = i + 1;
    *line = l;
    *col = (int)(pos - last) + 1;
}

cJSON *qkv__json_tree(const char *text, size_t len) {
    static const qkv_json_opts RULES = {.max_depth = 64, .reject_nul = true};
    qkv_json_error e;
    cJSON *root;
    return qkv__json_parse(text, len, &RULES, &root, &e) ? NULL : root;
}

/* ---- typed reading ------------------------------------------------------------------------ */

/* a JSON value in a few characters, for "got ..." */
static void show(const cJSON *v, char *dst, size_t n) {
    if (cJSON_IsString(v)) snprintf(dst, n, "\"%.40s%s\"", v->valuestring, strlen(v->valuestring) > 40 ? "..." : "");
    else if (cJSON_IsNumber(v)) snprintf(dst, n, "%.6g", v->valuedouble);
    else if (cJSON_IsBool(v)) snprintf(dst, n, "%s", cJSON_IsTrue(v) ? "true" : "false");
    else if (cJSON_IsNull(v)) snprintf(dst, n, "null");
    else if (cJSON_IsArray(v)) snprintf(dst, n, "an array");
    else snprintf(dst, n, "an object");
}

void qkv__json_wrong(qkv_json_reader *r, const char *where, const char *key, const char *what, const cJSON *v) {
    if (r->bad) return;
    char got[64];
    if (v) show(v, got, sizeof got);
    qkv_err_set(r->e, QKV_ERR_FAIL, "%s: %s%s: expected %s, %s%s", r->label, where, key, what, v ? "got " : "",
                v ? got : "missing");
    r->bad = true;
}

/* o[key], NULL when o is NULL or has no such key */
static const cJSON *item(const cJSON *o, const char *key) {
    return o ? cJSON_GetObjectItemCaseSensitive(o, key) : NULL;
}

double qkv__json_num(qkv_json_reader *r, const cJSON *o, const char *where, const char *key) {
    const cJSON *v = item(o, key);
    if (!v || cJSON_IsNull(v)) return NAN;
    /* a literal too large for a double (1e999) parses as infinity, which qkv never writes */
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble)) {
        qkv__json_wrong(r, where, key, cJSON_IsNumber(v) ? "a finite number or null" : "a number or null", v);
        return NAN;
    }
    return r->bad ? NAN : v->valuedouble;
}

double qkv__json_num_in(qkv_json_reader *r, const cJSON *o, const char *where, const char *key, double lo,
                        double hi) {
    double x = qkv__json_num(r, o, where, key);
    if (!isnan(x) && !(x >= lo && x <= hi)) {
        char what[64];
        if (isinf(hi)) snprintf(what, sizeof what, "a number >= %g or null", lo);
        else snprintf(what, sizeof what, "a number in [%g, %g] or null", lo, hi);
        qkv__json_wrong(r, where, key, what, item(o, key));
        return NAN;
    }
    return x;
}

long long qkv__json_count(qkv_json_reader *r, const cJSON *o, const char *where, const char *key) {
    double x = qkv__json_num(r, o, where, key);
    if (isnan(x)) return -1;
    if (!(x >= 0 && x <= 9007199254740992.0) || x != floor(x)) {
        qkv__json_wrong(r, where, key, "a whole number >= 0 or null", item(o, key));
        return -1;
    }
    return (long long)x;
}

const char *qkv__json_str(qkv_json_reader *r, const cJSON *o, const char *where, const char *key, bool required) {
    const cJSON *v = item(o, key);
    if ((!v || cJSON_IsNull(v)) && !required) return NULL;
    if (!cJSON_IsString(v)) {
        qkv__json_wrong(r, where, key, required ? "a string" : "a string or null", v);
        return NULL;
    }
    return r->bad ? NULL : v->valuestring;
}

bool qkv__json_bool(qkv_json_reader *r, const cJSON *o, const char *where, const char *key, bool dflt) {
    const cJSON *v = item(o, key);
    if (!v || cJSON_IsNull(v)) return dflt;
    if (!cJSON_IsBool(v)) {
        qkv__json_wrong(r, where, key, "true, false or null", v);
        return dflt;
    }
    return r->bad ? dflt : cJSON_IsTrue(v);
}

const cJSON *qkv__json_array(qkv_json_reader *r, const cJSON *o, const char *where, const char *key, bool required) {
    const cJSON *v = item(o, key);
    if (!v && !required) return NULL;
    if (!cJSON_IsArray(v)) {
        qkv__json_wrong(r, where, key, "an array", v);
        return NULL;
    }
    return r->bad ? NULL : v;
}
