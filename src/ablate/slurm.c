/* qkv ablate --slurm: the sweep as a Slurm job array and a report job that depends on it. The
 * run directories stay the only state: array tasks claim runs as any worker does (claim.h), a
 * preempted task checkpoints, releases its claims and is requeued, and the report job finishes
 * whatever the tasks could not (extensions whose budget another task's runs raised, failed runs
 * tried again) before it writes the report. qkv talks to Slurm through sbatch only. */
#include "ablate/slurm.h"
#include "ablate/strbuf.h"
#include "io/fileio.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* s as one single-quoted shell word */
static void shq(qkv_strbuf *b, const char *s) {
    qkv_strbuf_puts(b, "'");
    for (; *s; s++) {
        if (*s == '\'') qkv_strbuf_puts(b, "'\\''");
        else qkv_strbuf_putn(b, s, 1);
    }
    qkv_strbuf_puts(b, "'");
}

static void sbatch_lines(qkv_strbuf *b, const qkv_slurm_opts *o) {
    for (int i = 0; i < o->n_sbatch; i++) qkv_strbuf_printf(b, "#SBATCH %s\n", o->sbatch[i]);
}

static char *array_script(const qkv_slurm_opts *o) {
    qkv_strbuf b;
    qkv_strbuf_init(&b);
    qkv_strbuf_puts(&b, "#!/bin/sh\n# qkv ablate --slurm: the workers of a sweep, one share of its runs each\n");
    qkv_strbuf_printf(&b, "#SBATCH --job-name=qkv-ablate\n#SBATCH --array=0-%d%%%d\n#SBATCH --cpus-per-task=1\n",
                      o->tasks - 1, o->parallel);
    qkv_strbuf_puts(&b, "#SBATCH --requeue\n#SBATCH --signal=B:TERM@60\n#SBATCH --open-mode=append\n");
    qkv_strbuf_printf(&b, "#SBATCH --output=%s/slurm/task-%%A_%%a.log\n", o->out);
    sbatch_lines(&b, o);
    qkv_strbuf_puts(&b,
        "# --shard auto: share SLURM_ARRAY_TASK_ID of SLURM_ARRAY_TASK_COUNT. On SIGTERM (preemption,\n"
        "# the time limit, scontrol requeue) the runs checkpoint and their claims are released; the\n"
        "# task then requeues itself and its next start resumes them from their checkpoints.\n");
    qkv_strbuf_puts(&b, "echo \"qkv ablate --slurm: task ${SLURM_ARRAY_TASK_ID} of ${SLURM_ARRAY_TASK_COUNT}, attempt "
                        "$((${SLURM_RESTART_COUNT:-0} + 1)) on $(hostname)\"\n");
    shq(&b, o->qkv);
    qkv_strbuf_puts(&b, " ablate ");
    shq(&b, o->config);
    qkv_strbuf_puts(&b, " --out ");
    shq(&b, o->out);
    qkv_strbuf_puts(&b, " --shard auto --jobs 1 &\npid=$!\n"
                        "trap 'kill -TERM $pid 2>/dev/null; wait $pid; "
                        "scontrol requeue \"${SLURM_ARRAY_JOB_ID}_${SLURM_ARRAY_TASK_ID}\"; exit 0' TERM\n"
                        "wait $pid\n");
    return qkv_strbuf_take(&b);
}

static char *report_script(const qkv_slurm_opts *o) {
    qkv_strbuf b;
    qkv_strbuf_init(&b);
    qkv_strbuf_puts(&b, "#!/bin/sh\n# qkv ablate --slurm: after the workers, finish the sweep and write its report\n");
    qkv_strbuf_printf(&b, "#SBATCH --job-name=qkv-ablate-report\n#SBATCH --cpus-per-task=%d\n", o->report_jobs);
    qkv_strbuf_printf(&b, "#SBATCH --open-mode=append\n#SBATCH --output=%s/slurm/report-%%j.log\n", o->out);
    sbatch_lines(&b, o);
    qkv_strbuf_puts(&b, "# runs whose budget another task's results raised, and failed runs, are trained here\nexec ");
    shq(&b, o->qkv);
    qkv_strbuf_puts(&b, " ablate ");
    shq(&b, o->config);
    qkv_strbuf_puts(&b, " --out ");
    shq(&b, o->out);
    qkv_strbuf_printf(&b, " --jobs %d\n", o->report_jobs);
    return qkv_strbuf_take(&b);
}

/* sbatch ARGS... SCRIPT; its --parsable output (the job id) into id */
static int submit(const char *dependency, const char *script, char *id, size_t n, char *err, int errlen) {
    int fd[2];
    if (pipe(fd)) {
        snprintf(err, (size_t)errlen, "pipe: %s", strerror(errno));
        return -1;
    }
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(err, (size_t)errlen, "fork: %s", strerror(errno));
        return -1;
    }
    if (pid == 0) {
        dup2(fd[1], 1);
        close(fd[0]);
        close(fd[1]);
        if (dependency) execlp("sbatch", "sbatch", "--parsable", dependency, script, (char *)NULL);
        else execlp("sbatch", "sbatch", "--parsable", script, (char *)NULL);
        fprintf(stderr, "qkv ablate: cannot run sbatch: %s\n", strerror(errno));
        _exit(127);
    }
    close(fd[1]);
    ssize_t got = read(fd[0], id, n - 1);
    close(fd[0]);
    id[got > 0 ? got : 0] = 0;
    id[strcspn(id, ";\n")] = 0; /* "123" or "123;cluster" */
    int st;
    waitpid(pid, &st, 0);
    if (!WIFEXITED(st) || WEXITSTATUS(st) || !id[0]) {
        snprintf(err, (size_t)errlen, "sbatch %s failed (exit %d)%s", script, WIFEXITED(st) ? WEXITSTATUS(st) : -1,
                 WIFEXITED(st) && WEXITSTATUS(st) == 127 ? ": is Slurm installed (sbatch on PATH)?" : "");
        return -1;
    }
    return 0;
}

int qkv__ablate_slurm(const qkv_slurm_opts *o, FILE *f, char *err, int errlen) {
    char *array = array_script(o), *rep = report_script(o);
    int rc = 0;
    if (!array || !rep) {
        snprintf(err, (size_t)errlen, "out of memory");
        rc = -1;
    } else if (o->dry_run) {
        fprintf(f, "# %s/slurm/array.sh\n%s\n# %s/slurm/report.sh (sbatch --dependency=afterany:<array job>)\n%s",
                o->out, array, o->out, rep);
    } else {
        char dir[4200], pa[4300], pr[4300], id[64], id2[64], dep[96];
        snprintf(dir, sizeof dir, "%s/slurm", o->out);
        snprintf(pa, sizeof pa, "%s/array.sh", dir);
        snprintf(pr, sizeof pr, "%s/report.sh", dir);
        rc = qkv_mkdirs(dir, err, errlen) || qkv_write_file_atomic(pa, array, strlen(array), err, errlen) ||
             qkv_write_file_atomic(pr, rep, strlen(rep), err, errlen) || submit(NULL, pa, id, sizeof id, err, errlen);
        if (!rc) {
            snprintf(dep, sizeof dep, "--dependency=afterany:%s", id);
            rc = submit(dep, pr, id2, sizeof id2, err, errlen);
        }
        if (!rc)
            fprintf(f, "qkv ablate: submitted array job %s (%d tasks, %d at a time) and report job %s (after it); "
                    "follow it with: qkv ablate %s --out %s --status\n", id, o->tasks, o->parallel, id2, o->config,
                    o->out);
    }
    free(array);
    free(rep);
    return rc ? -1 : 0;
}
