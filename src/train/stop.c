/* The process's one stop flag and its signal catcher (stop.h). */
#include "train/stop.h"

#include <string.h>

static volatile sig_atomic_t stop_flag = 0;
static volatile sig_atomic_t nothing_to_save = 0;

static void on_stop_signal(int sig) {
    if (nothing_to_save) { /* the signal's own action: the process ends now, as if uncaught */
        signal(sig, SIG_DFL);
        raise(sig);
        return;
    }
    stop_flag = 1;
}

void qkv_stop_nothing_to_save(bool on) { nothing_to_save = on; }

void qkv_stop_catch(qkv_stop_catcher *c) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop_signal;
    stop_flag = 0;
    sigaction(SIGINT, &sa, &c->old_int);
    sigaction(SIGTERM, &sa, &c->old_term);
}

void qkv_stop_release(const qkv_stop_catcher *c) {
    sigaction(SIGINT, &c->old_int, NULL);
    sigaction(SIGTERM, &c->old_term, NULL);
}

bool qkv_stop_requested(void) { return stop_flag != 0; }

void qkv_request_stop(void) { stop_flag = 1; }
