/* The error value (error.h). */
#include "app/error.h"

#include <stdio.h>
#include <string.h>

static const char *const CODE_NAMES[] = {"ok", "failure", "usage", "memory", "interrupted"};
_Static_assert(sizeof CODE_NAMES / sizeof CODE_NAMES[0] == QKV_ERR_CODE_COUNT, "CODE_NAMES out of step with qkv_err_code");

/* a cut message ends in "..." so a reader sees it was cut */
static void mark_cut(char *msg, int n) {
    if (n >= QKV_ERR_MSG) memcpy(msg + QKV_ERR_MSG - 4, "...", 4);
}

void qkv_err_clear(qkv_err *e) {
    e->code = QKV_ERR_OK;
    e->msg[0] = 0;
}

int qkv_err_vset(qkv_err *e, qkv_err_code code, const char *fmt, va_list ap) {
    e->code = code;
    int n = vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    if (n < 0) snprintf(e->msg, sizeof e->msg, "(a message that could not be formatted)");
    mark_cut(e->msg, n);
    return -1;
}

int qkv_err_set(qkv_err *e, qkv_err_code code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    qkv_err_vset(e, code, fmt, ap);
    va_end(ap);
    return -1;
}

int qkv_err_prefix(qkv_err *e, const char *fmt, ...) {
    char head[QKV_ERR_MSG], tail[QKV_ERR_MSG];
    va_list ap;
    va_start(ap, fmt);
    int h = vsnprintf(head, sizeof head, fmt, ap);
    va_end(ap);
    if (h < 0) head[0] = 0;
    memcpy(tail, e->msg, sizeof tail);
    int n = snprintf(e->msg, sizeof e->msg, "%s%s", head, tail);
    mark_cut(e->msg, n);
    if (e->code == QKV_ERR_OK) e->code = QKV_ERR_FAIL;
    return -1;
}

const char *qkv_err_code_name(qkv_err_code code) {
    return (unsigned)code < QKV_ERR_CODE_COUNT ? CODE_NAMES[code] : "?";
}
