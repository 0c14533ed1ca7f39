/* Internal: a sweep as Slurm jobs (qkv ablate --slurm). */
#ifndef QKV_ABLATE_SLURM_H
#define QKV_ABLATE_SLURM_H

#include "qkv_api.h"

#include <stdbool.h>
#include <stdio.h>

typedef struct qkv_slurm_opts {
    const char *qkv;                /* the qkv executable, an absolute path */
    const char *config;             /* the ablation config, absolute */
    const char *out;                /* the output directory, absolute */
    int tasks;                      /* array tasks (each a --shard auto worker) */
    int parallel;                   /* of them at once (%P) */
    int report_jobs;                /* CPUs of the report job, which finishes the sweep */
    const char *const *sbatch;      /* extra #SBATCH arguments for both jobs */
    int n_sbatch;
    bool dry_run;                   /* print the scripts, submit nothing */
} qkv_slurm_opts;

/* Write OUT/slurm/array.sh (an array of `tasks` workers, requeued on preemption) and
 * OUT/slurm/report.sh (after the array, whatever remains, then the report), and submit them
 * with sbatch (printing the job ids on f), or with dry_run print them on f. 0, or -1 with err */
QKV_INTERNAL int qkv__ablate_slurm(const qkv_slurm_opts *o, FILE *f, char *err, int errlen);

#endif
