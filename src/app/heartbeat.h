/* A line while a command works without writing one (docs/reliability.md, "Logs"): a vocabulary
 * being trained, baselines computed, a benchmark's child processes timed. On a terminal a live
 * line, rewritten every second, says what is being done and for how long; in a log (a file, a
 * pipe) a line is written once qkv__progress_gap seconds passed since the command's last line:
 * at least every 10 s in its first minute, then once a minute. One per process; a command started
 * with --quiet never starts it, and without qkv__heartbeat_start the calls do nothing (library
 * code calls qkv__heartbeat_doing whoever runs it). */
#ifndef QKV_APP_HEARTBEAT_H
#define QKV_APP_HEARTBEAT_H

#include "qkv_api.h"

#include <stdbool.h>

/* seconds a log may go without a line, since_start seconds into the command: 10 in its first
 * minute, 60 after (QKV_PROGRESS_INTERVAL=S in the environment scales both: S, then 6 S; for
 * tests) */
QKV_INTERNAL double qkv__progress_gap(double since_start);
/* the heartbeat of command cmd ("qkv train") on stderr, from now; its lines begin "cmd: " */
QKV_INTERNAL void qkv__heartbeat_start(const char *cmd);
/* what is being done from now (printf-style; NULL: nothing, the live line cleared): the heartbeat
 * speaks while it is set */
QKV_INTERNAL void qkv__heartbeat_doing(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* the command wrote a line of its own just now (a log's next heartbeat is a full gap later) */
QKV_INTERNAL void qkv__heartbeat_said(void);
/* the heartbeat stopped, its live line cleared */
QKV_INTERNAL void qkv__heartbeat_stop(void);

#endif
