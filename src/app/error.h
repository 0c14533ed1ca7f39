/* One error channel for the application: an error value that carries what kind of failure it is
 * and its one line of text. A function that can fail takes a qkv_err *, sets it with
 * qkv_err_set (the one helper) and returns -1; its caller passes it up. The qkv command turns the code into its exit status in one
 * place (cli/common.c, qkv__cli_exit). The library's ops keep their own channel, the context's
 * message (autograd/ctx.h). */
#ifndef QKV_APP_ERROR_H
#define QKV_APP_ERROR_H

#include "qkv_api.h"

#include <stdarg.h>


/* what kind of failure (the exit status follows from it) */
typedef enum qkv_err_code {
    QKV_ERR_OK = 0,
    QKV_ERR_FAIL,        /* at run time: a file that cannot be read or written, a damaged checkpoint, a
                          * failed run (exit 1) */
    QKV_ERR_USAGE,       /* the user's input: an option, a config key or value, a path that cannot be
                          * used (exit 2) */
    QKV_ERR_MEMORY,      /* the config does not fit in this machine's memory: known before any work
                          * (exit 2, as a usage error) */
    QKV_ERR_INTERRUPTED, /* a stop was asked for (a signal); what was done is saved (exit 1) */
    QKV_ERR_CODE_COUNT
} qkv_err_code;

/* the message's room: a path (at most PATH_MAX, 4096) and its reason fit */
#define QKV_ERR_MSG 6144

typedef struct qkv_err {
    qkv_err_code code;
    char msg[QKV_ERR_MSG]; /* one line; "" while code is QKV_ERR_OK */
} qkv_err;

/* a cleared error: code QKV_ERR_OK, empty message */
QKV_APP_API void qkv_err_clear(qkv_err *e);
/* e = code and the printf-formatted message (a message longer than the room ends in "...");
 * returns -1, so a caller writes `return qkv_err_set(e, QKV_ERR_USAGE, "...", ...);` */
QKV_APP_API int qkv_err_set(qkv_err *e, qkv_err_code code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* the same with a va_list, for a module's own helper that fills in its code */
QKV_APP_API int qkv_err_vset(qkv_err *e, qkv_err_code code, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));
#endif
