/* Internal: claiming a run of a sweep, so that any number of `qkv ablate` processes, on any
 * machines sharing the output directory, can work on one sweep: a run is trained by whoever
 * creates its claim file first (O_EXCL), which holds "host pid time". The owner touches it
 * while the run trains (a heartbeat) and removes it when the run's process has exited. A claim
 * whose process is gone (on this host) or whose heartbeat is older than `stale` seconds (on any
 * host: a machine that died) is stale: it is taken over, and that is said on stderr. */
#ifndef QKV_ABLATE_CLAIM_H
#define QKV_ABLATE_CLAIM_H

#include "qkv_api.h"

#include <stdbool.h>
#include <sys/types.h>

#define QKV_CLAIM_FILE "claim"
#define QKV_CLAIM_HEARTBEAT 30 /* seconds between touches of a held claim */

typedef struct qkv_claim_info {
    bool held;                  /* a claim file exists */
    char host[256];
    long pid;
    long long started;          /* unix time of the claim */
    double age;                 /* seconds since its last heartbeat */
    bool stale;                 /* its process is gone, or its heartbeat too old */
} qkv_claim_info;

/* read the claim of the run in dir */
QKV_INTERNAL void qkv__claim_read(const char *dir, double stale, qkv_claim_info *c);
/* claim the run in dir for this process: true when it is ours now (taking over a stale claim,
 * said on stderr unless quiet), false when another live process holds it */
QKV_INTERNAL bool qkv__claim(const char *dir, double stale, bool quiet);
/* the heartbeat of a claim we hold */
QKV_INTERNAL void qkv__claim_touch(const char *dir);
/* give up a claim we hold */
QKV_INTERNAL void qkv__claim_release(const char *dir);
/* this machine's name, as claims record it */
QKV_INTERNAL const char *qkv__claim_host(void);

#endif
