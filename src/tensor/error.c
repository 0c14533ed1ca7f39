/* The error value (error.h). */
#include "tensor/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* a cut message ends in "..." so a reader sees it was cut */
static void mark_cut(char *msg, int n) {
    if (n >= QKV_ERR_MSG) memcpy(msg + QKV_ERR_MSG - 4, "...", 4);
}

void qkv_err_clear(qkv_err *e) {
    if (!e) return;
    e->code = QKV_ERR_OK;
    e->msg[0] = 0;
}

int qkv_err_vset(qkv_err *e, qkv_err_code code, const char *fmt, va_list ap) {
    if (!e) return -1;
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
    if (!e) return -1;
    char head[QKV_ERR_MSG];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(head, sizeof head, fmt, ap);
    va_end(ap);
    if (n < 0) n = 0, head[0] = 0;
    size_t h = strlen(head), m = strlen(e->msg), room = sizeof e->msg - 1; /* h <= room */
    size_t keep = m < room - h ? m : room - h;
    memmove(e->msg + h, e->msg, keep);
    memcpy(e->msg, head, h);
    e->msg[h + keep] = 0;
    mark_cut(e->msg, (int)((size_t)n + m));
    return -1;
}
