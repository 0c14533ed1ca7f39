/* The one error convention of qkv, library and application alike: an error value that carries
 * what kind of failure it is and its one line of text. A function that can fail takes a
 * qkv_err * (last), sets it with qkv_err_set and returns -1 (or NULL); its caller passes it up,
 * adding what it knows in front (qkv_err_prefix). The qkv command turns the code into its exit
 * status in one place (cli/common.c, qkv__cli_exit).
 *
 * It is a value rather than a message buffer so that the kind of failure travels with the text
 * from where it is known (a config the model layer refuses is the user's input; a file that
 * cannot be written is a failure at run time) to where the exit status is chosen. The autograd
 * context keeps one as its sticky error: ops recorded on the tape set it and return NULL, and
 * the caller reads it once after the whole forward (autograd/ctx.h). */
#ifndef QKV_ERROR_H
#define QKV_ERROR_H

#include "qkv_api.h"

#include <stdarg.h>

#ifdef __cplusplus /* the one C++ file, tasks/tokenizer_spm.cc, reports through it too */
extern "C" {
#endif

/* what kind of failure (the qkv command's exit status follows from it) */
typedef enum qkv_err_code {
    QKV_ERR_OK = 0,
    QKV_ERR_FAIL,        /* at run time: a file that cannot be read or written, a damaged checkpoint, a
                          * failed op or run (exit 1) */
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

/* a cleared error: code QKV_ERR_OK, empty message (e NULL: nothing) */
QKV_API void qkv_err_clear(qkv_err *e);
/* e = code and the printf-formatted message (a message longer than the room ends in "...");
 * returns -1, so a caller writes `return qkv_err_set(e, QKV_ERR_USAGE, "...", ...);`. e may be
 * NULL: a caller that only needs to know that something failed passes none */
QKV_API int qkv_err_set(qkv_err *e, qkv_err_code code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* the same with a va_list, for a module's own helper that fills in its code */
QKV_API int qkv_err_vset(qkv_err *e, qkv_err_code code, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));
/* the printf-formatted text put in front of e's message (its code kept), for a caller that adds
 * what it knows: the key a file was named by, the step that failed; -1 (e NULL: nothing) */
QKV_API int qkv_err_prefix(qkv_err *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#ifdef __cplusplus
}
#endif
#endif
