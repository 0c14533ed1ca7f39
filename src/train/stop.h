/* The process's one stop flag. A signal handler cannot reach an object, so this is the one piece
 * of state qkv keeps in the process: SIGINT and SIGTERM set it while a catcher is installed, and
 * every loop that can be stopped (a training run, a sweep's runner, qkv bench --sweep) reads it
 * through qkv_stop_requested. */
#ifndef QKV_TRAIN_STOP_H
#define QKV_TRAIN_STOP_H

#include "qkv_api.h"

#include <signal.h>
#include <stdbool.h>

/* the handlers a catcher replaced, put back by qkv_stop_release */
typedef struct {
    struct sigaction old_int, old_term;
} qkv_stop_catcher;

/* clear the flag, then catch SIGINT and SIGTERM into it (the previous handlers into c) */
QKV_APP_API void qkv_stop_catch(qkv_stop_catcher *c);
/* the handlers c replaced back (the flag stays as it is) */
QKV_APP_API void qkv_stop_release(const qkv_stop_catcher *c);
/* while on, a caught signal ends the process at once, as an uncaught one would: for long work
 * before a run has anything to save (a vocabulary's training), which reads no stop flag; every
 * file is written whole or not at all, so what is left is what a kill -9 there leaves */
QKV_APP_API void qkv_stop_nothing_to_save(bool on);
/* a stop was asked for: a caught signal, or qkv_request_stop */
QKV_APP_API bool qkv_stop_requested(void);
/* ask every loop that reads the flag to stop (a running qkv_train saves a checkpoint and returns
 * 1 after its current step); async-signal-safe */
QKV_APP_API void qkv_request_stop(void);

#endif
