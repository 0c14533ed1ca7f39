/* The error value (error.h). */
#include "app/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

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
