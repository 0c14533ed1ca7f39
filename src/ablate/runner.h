/* Internal: training an ablation's runs with the caller's train command, `jobs` at a time. */
#ifndef QKV_ABLATE_RUNNER_H
#define QKV_ABLATE_RUNNER_H

#include "qkv_api.h"

#include "ablate/plan.h"

/* Train every run of p to its target (plan.h: qkv__ablate_target): a new run from its input
 * config (CMD... CONFIG --out DIR), an interrupted one from its checkpoint (CMD... --resume DIR),
 * and a finished one that has not solved the task, once its target exceeds its steps, extended
 * to twice its steps or its target (CMD... --resume DIR --steps N), until every run is done,
 * solved, or at its target. SIGINT/SIGTERM stop the runs (they checkpoint) and return -1.
 * extended (may be NULL) counts the extensions started. 0, or -1 with one line in err (a run
 * that fails is reported on stderr and left; the caller sees it as unfinished). */
QKV_INTERNAL int qkv__ablate_execute(const qkv_ablate_plan *p, int jobs, const char *const *cmd, bool quiet,
                                     int *extended, char *err, int errlen);

#endif
