/* Monotonic wall time in seconds: for timing and progress lines, never for results. Internal
 * (not installed): a static inline function, so every layer may use it without an export. */
#ifndef QKV_CLOCK_H
#define QKV_CLOCK_H

#include <time.h>

/* seconds since an arbitrary fixed point (CLOCK_MONOTONIC) */
static inline double qkv_clock_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#endif
