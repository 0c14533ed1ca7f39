/* The heartbeat (heartbeat.h): a thread that sleeps on a condition variable and, while an
 * activity is set, rewrites a terminal's live line each second or writes a log's line when its
 * gap has passed. Every write to stderr it makes is under its lock, as are the changes of the
 * activity, so a live line is cleared before the command writes its own. */
#include "app/heartbeat.h"

#include "tensor/clock.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t th;
    bool on, stop, tty, live;
    char cmd[32], what[256];
    double t0, t_last, t_what; /* the command's start, its last line, the activity's start */
} hb = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

static double gap = 10.0; /* seconds; QKV_PROGRESS_INTERVAL's, read once (both threads read it) */
static pthread_once_t gap_once = PTHREAD_ONCE_INIT;

static void read_gap(void) {
    const char *s = getenv("QKV_PROGRESS_INTERVAL");
    double v = s ? strtod(s, NULL) : 0;
    if (v > 0 && v <= 3600) gap = v;
}

double qkv__progress_gap(double since_start) {
    pthread_once(&gap_once, read_gap);
    return since_start < 6 * gap ? gap : 6 * gap;
}

/* the live line cleared (hb.mu held) */
static void clear_live(void) {
    if (hb.live) fputs("\r\033[K", stderr);
    hb.live = false;
}

/* a log's line of the activity when its gap has passed (hb.mu held): from the thread as time
 * goes, and when the activity ends, so a stretch longer than the gap gets its line even when the
 * thread was not scheduled in it (a loaded machine) */
static void log_line_if_due(double now) {
    if (hb.tty || !hb.what[0] || now - hb.t_last < qkv__progress_gap(now - hb.t0)) return;
    fprintf(stderr, "%s: %s (%.0f s)\n", hb.cmd, hb.what, now - hb.t_what);
    hb.t_last = now;
}

static void *beat(void *arg) {
    (void)arg;
    pthread_mutex_lock(&hb.mu);
    while (!hb.stop) {
        /* a terminal's line each second; a log's checked as often, its line written when due */
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        double step = qkv__progress_gap(0) < 4 ? qkv__progress_gap(0) / 4 : 1;
        long ns = until.tv_nsec + (long)(step * 1e9);
        until.tv_sec += ns / 1000000000L;
        until.tv_nsec = ns % 1000000000L;
        pthread_cond_timedwait(&hb.cv, &hb.mu, &until);
        double now = qkv_clock_seconds();
        if (hb.stop || !hb.what[0]) continue;
        if (hb.tty) {
            fprintf(stderr, "\r\033[K%s: %s (%.0f s)", hb.cmd, hb.what, now - hb.t_what);
            hb.live = true;
        } else {
            log_line_if_due(now);
        }
        fflush(stderr);
    }
    clear_live();
    fflush(stderr);
    pthread_mutex_unlock(&hb.mu);
    return NULL;
}

void qkv__heartbeat_start(const char *cmd) {
    pthread_mutex_lock(&hb.mu);
    if (!hb.on) {
        snprintf(hb.cmd, sizeof hb.cmd, "%s", cmd);
        hb.tty = isatty(2);
        hb.t0 = hb.t_last = qkv_clock_seconds();
        hb.what[0] = 0;
        hb.stop = false;
        hb.on = pthread_create(&hb.th, NULL, beat, NULL) == 0; /* without a thread: silent, as before */
    }
    pthread_mutex_unlock(&hb.mu);
}

void qkv__heartbeat_doing(const char *fmt, ...) {
    pthread_mutex_lock(&hb.mu);
    if (hb.on) {
        clear_live();
        log_line_if_due(qkv_clock_seconds()); /* the activity that ends, if it ran past its gap */
        hb.what[0] = 0;
        if (fmt) {
            va_list ap;
            va_start(ap, fmt);
            vsnprintf(hb.what, sizeof hb.what, fmt, ap);
            va_end(ap);
            hb.t_what = qkv_clock_seconds();
            if (hb.tty) { /* at once: a terminal shows what starts */
                fprintf(stderr, "%s: %s", hb.cmd, hb.what);
                hb.live = true;
            }
        }
        fflush(stderr);
    }
    pthread_mutex_unlock(&hb.mu);
}

void qkv__heartbeat_said(void) {
    pthread_mutex_lock(&hb.mu);
    hb.t_last = qkv_clock_seconds();
    pthread_mutex_unlock(&hb.mu);
}

void qkv__heartbeat_stop(void) {
    pthread_mutex_lock(&hb.mu);
    bool on = hb.on;
    hb.stop = true;
    hb.on = false;
    pthread_cond_signal(&hb.cv);
    pthread_mutex_unlock(&hb.mu);
    if (on) pthread_join(hb.th, NULL);
}
