/* Monotonic wall time in seconds: for timing and progress lines, never for results. Internal
 * (not installed): a static inline function, so every layer may use it without an export. */
#ifndef QKV_CLOCK_H
#define QKV_CLOCK_H

#include <time.h>

/* Seconds between two summary lines of progress written to a file or a pipe (a Slurm log, CI,
 * nohup): a sweep or a run under a scheduler may last hours, and a line per step or per
 * evaluation would fill its log; a terminal's one updating line is not limited. As tqdm's
 * mininterval and pip do for the same reason. docs/reliability.md, "Logs". */
#define QKV_LOG_INTERVAL 60.0

/* seconds since an arbitrary fixed point (CLOCK_MONOTONIC) */
static inline double qkv_clock_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#endif
