/* Internal: a sweep as Slurm jobs (qkv ablate --slurm). */
#ifndef QKV_ABLATE_SLURM_H
#define QKV_ABLATE_SLURM_H

#include "qkv_api.h"

#include "tensor/error.h"

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

/* Whether o can go into job scripts: --sbatch values are sbatch options without control
 * characters (an #SBATCH line ends at a newline; past it the shell would run the rest), and no
 * path holds one. 0, or -1 with one line in e naming the value */
QKV_INTERNAL int qkv__slurm_check(const qkv_slurm_opts *o, qkv_err *e);
/* Write OUT/slurm/array.sh (an array of `tasks` workers, requeued on preemption) and
 * OUT/slurm/report.sh (after the array, whatever remains, then the report), and submit them
 * with sbatch (sbatch --output=OUT/slurm/task-%A_%a.log and report-%j.log, given on its command
 * line), printing the job ids on f; with dry_run print the scripts and those commands on f and
 * write nothing. 0, or -1 with e */
QKV_INTERNAL int qkv__ablate_slurm(const qkv_slurm_opts *o, FILE *f, qkv_err *e);

#endif
