/* Internal: training an ablation's runs with the caller's train command, `jobs` at a time, by
 * any number of workers sharing the output directory (claims: claim.h). */
#ifndef QKV_ABLATE_RUNNER_H
#define QKV_ABLATE_RUNNER_H

#include "qkv_api.h"

#include "tensor/error.h"

#include "ablate/plan.h"

#define QKV_RUN_FAILED "failed" /* a run directory's marker of a failed session: "exit N: last log line" */

/* Train the runs of this worker's share of p (ablate.h: shards) to their targets (plan.h:
 * qkv__ablate_target): a new run from its input config (CMD... CONFIG --out DIR --force), an
 * interrupted one from its checkpoint (CMD... --resume DIR), and a finished one that has not
 * solved the task, once its target exceeds its steps, extended to twice its steps or its target
 * (CMD... --resume DIR --steps N); each run only after claiming it. Returns when every run of
 * the share is settled (done and solved, or at its target), failed in this session, or claimed
 * by a worker that is not waited for (one of another share). SIGINT/SIGTERM stop the runs (they
 * checkpoint) and return -1. extended (may be NULL) counts the extensions started. 0, or -1
 * with one line in e (a failing run is reported on stderr and marked, QKV_RUN_FAILED). */
QKV_INTERNAL int qkv__ablate_execute(const qkv_ablate_plan *p, const qkv_ablate_opts *o, int *extended, qkv_err *e);

/* run r's next session: 0 when it needs none (done and solved, or at its target), else the
 * steps to train it to; *resume: from its checkpoint; *extend: a finished run, extended */
QKV_INTERNAL long long qkv__ablate_next(const qkv_ablate_plan *p, int r, const qkv_ablate_run_state *st,
                                        long long max_solved, bool *resume, bool *extend);

#endif
