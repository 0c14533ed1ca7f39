/* qkv ablate --slurm: the sweep as a Slurm job array and a report job that depends on it. The
 * run directories stay the only state: array tasks claim runs as any worker does (claim.h), a
 * preempted task checkpoints, releases its claims and is requeued, and the report job finishes
 * whatever the tasks could not (extensions whose budget another task's runs raised, failed runs
 * tried again) before it writes the report. qkv talks to Slurm through sbatch only. */
#include "ablate/slurm.h"
#include "io/strbuf.h"
#include "io/fileio.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* s as one single-quoted shell word */
static void shq(qkv_strbuf *b, const char *s) {
    qkv__strbuf_puts(b, "'");
    for (; *s; s++) {
        if (*s == '\'') qkv__strbuf_puts(b, "'\\''");
        else qkv__strbuf_putn(b, s, 1);
    }
    qkv__strbuf_puts(b, "'");
}

static void sbatch_lines(qkv_strbuf *b, const qkv_slurm_opts *o) {
    for (int i = 0; i < o->n_sbatch; i++) qkv__strbuf_printf(b, "#SBATCH %s\n", o->sbatch[i]);
}

/* the index of the first control character (a byte below 0x20, or DEL) in s, or -1 */
static long control_at(const char *s) {
    for (const char *p = s; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f) return (long)(p - s);
    return -1;
}

/* What goes into a script from the user is checked here, so that it can never start a line or a
 * command: an #SBATCH line is a comment to the shell up to its newline, so an --sbatch value may
 * hold anything but a control character (and must be an option); every path is a single-quoted
 * shell word or an argument of sbatch itself (--output is given to sbatch, not written in an
 * #SBATCH line, where a space would end it). 0, or -1 with e naming the value */
int qkv__slurm_check(const qkv_slurm_opts *o, qkv_err *e) {
    for (int i = 0; i < o->n_sbatch; i++) {
        long at = control_at(o->sbatch[i]);
        if (at >= 0)
            return qkv_err_set(e, QKV_ERR_USAGE, "--sbatch: value %d holds a control character (byte 0x%02x at %ld): "
                               "an #SBATCH line is one line of the job script", i + 1, (unsigned char)o->sbatch[i][at],
                               at);
        if (o->sbatch[i][0] != '-')
            return qkv_err_set(e, QKV_ERR_USAGE, "--sbatch: expected an sbatch option (such as --partition=cpu), got "
                               "'%.200s'", o->sbatch[i]);
    }
    const char *paths[3][2] = {{"the config path", o->config}, {"--out", o->out}, {"the qkv executable", o->qkv}};
    for (int i = 0; i < 3; i++)
        if (control_at(paths[i][1]) >= 0)
            return qkv_err_set(e, QKV_ERR_USAGE, "%s holds a control character: a job script names it; use a path "
                               "without one", paths[i][0]);
    return 0;
}

static char *array_script(const qkv_slurm_opts *o) {
    qkv_strbuf b;
    qkv__strbuf_init(&b);
    qkv__strbuf_puts(&b, "#!/bin/sh\n# qkv ablate --slurm: the workers of a sweep, one share of its runs each\n");
    qkv__strbuf_printf(&b, "#SBATCH --job-name=qkv-ablate\n#SBATCH --array=0-%d%%%d\n#SBATCH --cpus-per-task=1\n",
                      o->tasks - 1, o->parallel);
    qkv__strbuf_puts(&b, "#SBATCH --requeue\n#SBATCH --signal=B:TERM@60\n#SBATCH --open-mode=append\n");
    sbatch_lines(&b, o);
    qkv__strbuf_puts(&b,
        "# --shard auto: share SLURM_ARRAY_TASK_ID of SLURM_ARRAY_TASK_COUNT. On SIGTERM (preemption,\n"
        "# the time limit, scontrol requeue) the runs checkpoint and their claims are released; the\n"
        "# task then requeues itself and its next start resumes them from their checkpoints.\n");
    qkv__strbuf_puts(&b, "echo \"qkv ablate --slurm: task ${SLURM_ARRAY_TASK_ID} of ${SLURM_ARRAY_TASK_COUNT}, attempt "
                        "$((${SLURM_RESTART_COUNT:-0} + 1)) on $(hostname)\"\n");
    shq(&b, o->qkv);
    qkv__strbuf_puts(&b, " ablate ");
    shq(&b, o->config);
    qkv__strbuf_puts(&b, " --out ");
    shq(&b, o->out);
    qkv__strbuf_puts(&b, " --shard auto --jobs 1 &\npid=$!\n"
                        "trap 'kill -TERM $pid 2>/dev/null; wait $pid; "
                        "scontrol requeue \"${SLURM_ARRAY_JOB_ID}_${SLURM_ARRAY_TASK_ID}\"; exit 0' TERM\n"
                        "wait $pid\n");
    return qkv__strbuf_take(&b);
}

static char *report_script(const qkv_slurm_opts *o) {
    qkv_strbuf b;
    qkv__strbuf_init(&b);
    qkv__strbuf_puts(&b, "#!/bin/sh\n# qkv ablate --slurm: after the workers, finish the sweep and write its report\n");
    qkv__strbuf_printf(&b, "#SBATCH --job-name=qkv-ablate-report\n#SBATCH --cpus-per-task=%d\n", o->report_jobs);
    qkv__strbuf_puts(&b, "#SBATCH --open-mode=append\n");
    sbatch_lines(&b, o);
    qkv__strbuf_puts(&b, "# runs whose budget another task's results raised, and failed runs, are trained here\nexec ");
    shq(&b, o->qkv);
    qkv__strbuf_puts(&b, " ablate ");
    shq(&b, o->config);
    qkv__strbuf_puts(&b, " --out ");
    shq(&b, o->out);
    qkv__strbuf_printf(&b, " --jobs %d\n", o->report_jobs);
    return qkv__strbuf_take(&b);
}

/* sbatch --parsable --output=LOG [DEPENDENCY] SCRIPT (no shell between): its output, the job id,
 * into id */
static int submit(const char *output, const char *dependency, const char *script, char *id, size_t n, qkv_err *e) {
    int fd[2];
    if (pipe(fd))
        return qkv_err_set(e, QKV_ERR_FAIL, "pipe: %s", strerror(errno));
    pid_t pid = fork();
    if (pid < 0) {
        qkv_err_set(e, QKV_ERR_FAIL, "fork: %s", strerror(errno));
        close(fd[0]);
        close(fd[1]);
        return -1;
    }
    if (pid == 0) {
        dup2(fd[1], 1);
        close(fd[0]);
        close(fd[1]);
        if (dependency) execlp("sbatch", "sbatch", "--parsable", output, dependency, script, (char *)NULL);
        else execlp("sbatch", "sbatch", "--parsable", output, script, (char *)NULL);
        fprintf(stderr, "qkv ablate: cannot run sbatch: %s\n", strerror(errno));
        _exit(127);
    }
    close(fd[1]);
    ssize_t got;
    do got = read(fd[0], id, n - 1);
    while (got < 0 && errno == EINTR);
    close(fd[0]);
    id[got > 0 ? got : 0] = 0;
    id[strcspn(id, ";\n")] = 0; /* "123" or "123;cluster" */
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
    if (!WIFEXITED(st) || WEXITSTATUS(st) || !id[0])
        return qkv_err_set(e, QKV_ERR_FAIL, "sbatch %s failed (exit %d)%s", qkv__shown(script).s,
                           WIFEXITED(st) ? WEXITSTATUS(st) : -1,
                           WIFEXITED(st) && WEXITSTATUS(st) == 127 ? ": is Slurm installed (sbatch on PATH)?" : "");
    return 0;
}

/* the sbatch command that submits script (as a shell would take it, for --dry-run) */
static void command_line(qkv_strbuf *b, const char *output, const char *dependency, const char *script) {
    qkv__strbuf_puts(b, "# sbatch --parsable ");
    shq(b, output);
    if (dependency) qkv__strbuf_printf(b, " %s", dependency);
    qkv__strbuf_puts(b, " ");
    shq(b, script);
    qkv__strbuf_puts(b, "\n");
}

int qkv__ablate_slurm(const qkv_slurm_opts *o, FILE *f, qkv_err *e) {
    if (qkv__slurm_check(o, e)) return -1;
    char *array = array_script(o), *rep = report_script(o), id[64] = "", id2[64], dep[96];
    char *dir = qkv__pathf("%s/slurm", o->out), *pa = qkv__pathf("%s/slurm/array.sh", o->out),
         *pr = qkv__pathf("%s/slurm/report.sh", o->out);
    qkv_strbuf pct; /* sbatch expands %A, %a, %j, ... in --output: the directory's own % doubled */
    qkv__strbuf_init(&pct);
    for (const char *c = dir ? dir : ""; *c; c++) qkv__strbuf_puts(&pct, *c == '%' ? "%%" : (char[2]){*c, 0});
    char *dir_pct = qkv__strbuf_take(&pct);
    char *oa = dir_pct ? qkv__pathf("--output=%s/task-%%A_%%a.log", dir_pct) : NULL;
    char *orep = dir_pct ? qkv__pathf("--output=%s/report-%%j.log", dir_pct) : NULL;
    int rc = 0;
    if (!array || !rep || !dir || !pa || !pr || !oa || !orep) {
        qkv_err_set(e, QKV_ERR_FAIL, "out of memory");
        rc = -1;
    } else if (o->dry_run) { /* nothing is written: the scripts and the commands that would submit them */
        qkv_strbuf b;
        qkv__strbuf_init(&b);
        command_line(&b, oa, NULL, pa);
        qkv__strbuf_printf(&b, "%s\n", array);
        command_line(&b, orep, "--dependency=afterany:<array job>", pr);
        qkv__strbuf_puts(&b, rep);
        char *text = qkv__strbuf_take(&b);
        if (text) fputs(text, f);
        else { qkv_err_set(e, QKV_ERR_FAIL, "out of memory"); rc = -1; }
        free(text);
    } else {
        rc = qkv__mkdirs(dir, e) || qkv__write_file_atomic(pa, array, strlen(array), e) ||
             qkv__write_file_atomic(pr, rep, strlen(rep), e);
        if (!rc) rc = submit(oa, NULL, pa, id, sizeof id, e);
        if (!rc) {
            snprintf(dep, sizeof dep, "--dependency=afterany:%s", id);
            rc = submit(orep, dep, pr, id2, sizeof id2, e);
        }
        if (!rc)
            fprintf(f, "qkv ablate: submitted array job %s (%d tasks, %d at a time) and report job %s (after it); "
                    "follow it with: qkv ablate %s --out %s --status\n", id, o->tasks, o->parallel, id2, o->config,
                    o->out);
    }
    free(array);
    free(rep);
    free(dir);
    free(pa);
    free(pr);
    free(dir_pct);
    free(oa);
    free(orep);
    return rc ? -1 : 0;
}
