/* Training an ablation's runs (see runner.h). The state of every run is read back from its
 * directory between launches, so what to do next never depends on memory of earlier sessions:
 * an interrupted sweep, run again, picks up where it stopped. */
#include "ablate/runner.h"
#include "train/run_dir.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static volatile sig_atomic_t interrupted = 0;
static void on_signal(int sig) { (void)sig; interrupted = 1; }

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef enum { IDLE, RUNNING, FAILED } phase;
typedef struct job { pid_t pid; int run; double started; } job;

/* What run r needs next: 0 nothing (done and solved, or at its target), else the steps to
 * train it to; *resume when it continues from its checkpoint. */
static long long next_steps(const qkv_ablate_plan *p, int r, const qkv_ablate_run_state *st, long long max_solved,
                            bool *resume) {
    const qkv_ablate_run_spec *rs = &p->runs[r];
    *resume = st->checkpoint;
    if (!st->done) return rs->steps; /* new, or interrupted: its config says how far */
    long long target = qkv__ablate_target(p, r, max_solved);
    if (st->solved || st->steps >= target) return 0;
    long long twice = 2 * st->steps;
    return twice < target ? twice : target;
}

/* start the caller's train command on run r, its stdout and stderr appended to the run's log */
static pid_t launch(const qkv_ablate_plan *p, int r, const char *const *cmd, bool resume, bool extend,
                    long long steps, char *err, int errlen) {
    const qkv_ablate_run_spec *rs = &p->runs[r];
    char log[1400], n[32];
    snprintf(log, sizeof log, "%s/%s", rs->dir, QKV_RUN_LOG);
    snprintf(n, sizeof n, "%lld", steps);
    int k = 0;
    while (cmd[k]) k++;
    char **argv = calloc((size_t)k + 8, sizeof *argv);
    if (!argv) {
        snprintf(err, (size_t)errlen, "out of memory");
        return -1;
    }
    for (int i = 0; i < k; i++) argv[i] = (char *)cmd[i];
    if (resume) {
        argv[k++] = "--resume";
        argv[k++] = (char *)rs->dir;
        if (extend) {
            argv[k++] = "--steps";
            argv[k++] = n;
        }
    } else { /* a new run: what an earlier attempt left before its first checkpoint goes */
        argv[k++] = (char *)rs->cfg;
        argv[k++] = "--out";
        argv[k++] = (char *)rs->dir;
        argv[k++] = "--force";
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, log, O_WRONLY | O_CREAT | (resume ? O_APPEND : O_TRUNC), 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    pid_t pid;
    int e = posix_spawn(&pid, cmd[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    free(argv);
    if (e) {
        snprintf(err, (size_t)errlen, "cannot start %s: %s", cmd[0], strerror(e));
        return -1;
    }
    return pid;
}

static void fmt_time(double s, char *b, size_t n) {
    if (s < 60) snprintf(b, n, "%.0fs", s);
    else snprintf(b, n, "%dm%02ds", (int)s / 60, (int)s % 60);
}

static void show_progress(int done, int total, int running, int extended, double t0, bool tty) {
    char el[32];
    fmt_time(now() - t0, el, sizeof el);
    fprintf(stderr, tty ? "\r\033[Kqkv ablate: runs %d/%d done, %d running, %d extended, %s elapsed"
                        : "qkv ablate: runs %d/%d done, %d running, %d extended, %s elapsed\n",
            done, total, running, extended, el);
}

int qkv__ablate_execute(const qkv_ablate_plan *p, int jobs, const char *const *cmd, bool quiet, int *extended_out,
                        char *err, int errlen) {
    job *js = calloc((size_t)jobs, sizeof *js);
    phase *ph = calloc((size_t)p->n, sizeof *ph);
    qkv_ablate_run_state *st = calloc((size_t)p->n, sizeof *st);
    if (!js || !ph || !st) {
        free(js); free(ph); free(st);
        snprintf(err, (size_t)errlen, "out of memory");
        return -1;
    }
    struct sigaction sa, old_int, old_term;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    interrupted = 0;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    bool tty = isatty(2) && !quiet, forwarded = false, first = true;
    double t0 = now();
    int running = 0, extended = 0, rc = 0, last_done = -1;
    for (;;) {
        /* every run's state from its directory, and the sweep's largest solved_at */
        long long max_solved = -1;
        int done = 0, kept = 0;
        for (int r = 0; r < p->n; r++) {
            if (ph[r] != RUNNING) qkv__ablate_run_state(p, r, &st[r]);
            if (st[r].done && st[r].solved && st[r].solved_at > max_solved) max_solved = st[r].solved_at;
        }
        for (int r = 0; r < p->n && !rc && !interrupted && running < jobs; r++) {
            if (ph[r] != IDLE) continue;
            bool resume;
            long long steps = next_steps(p, r, &st[r], max_solved, &resume);
            if (!steps) continue;
            bool extend = st[r].done; /* finished, not solved, below its target */
            pid_t pid = launch(p, r, cmd, resume, extend, steps, err, errlen);
            if (pid < 0) { rc = -1; break; }
            for (int k = 0; k < jobs; k++)
                if (!js[k].pid) { js[k] = (job){pid, r, now()}; break; }
            ph[r] = RUNNING;
            running++;
            extended += extend;
        }
        for (int r = 0; r < p->n; r++) {
            bool resume;
            bool settled = ph[r] == IDLE && st[r].done && !next_steps(p, r, &st[r], max_solved, &resume);
            done += settled;
            kept += settled && first;
        }
        if (first && kept && !quiet) fprintf(stderr, "qkv ablate: %d of %d runs already finished (kept)\n", kept, p->n);
        first = false;
        if (!quiet && (done != last_done || running)) show_progress(done, p->n, running, extended, t0, tty);
        last_done = done;
        if (running == 0) break; /* nothing left to start: every run settled, failed, or we stop */
        if (interrupted && !forwarded) { /* SIGTERM to ablate alone (kill, timeout, a scheduler): */
            for (int k = 0; k < jobs; k++) /* the runs save a checkpoint and stop too */
                if (js[k].pid) kill(js[k].pid, SIGTERM);
            forwarded = true;
        }
        int ws;
        pid_t pid = waitpid(-1, &ws, 0);
        if (pid < 0) {
            if (errno == EINTR) continue;
            break;
        }
        for (int k = 0; k < jobs; k++) {
            if (js[k].pid != pid) continue;
            int r = js[k].run;
            bool ok = WIFEXITED(ws) && WEXITSTATUS(ws) == 0;
            ph[r] = ok || interrupted ? IDLE : FAILED;
            running--;
            if (!ok && !interrupted)
                fprintf(stderr, "%sqkv ablate: run %s failed (exit %d); see %s/%s\n", tty ? "\r\033[K" : "",
                        p->runs[r].dir, WIFEXITED(ws) ? WEXITSTATUS(ws) : -1, p->runs[r].dir, QKV_RUN_LOG);
            js[k].pid = 0;
        }
    }
    if (tty) fputc('\n', stderr);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    int finished = 0;
    for (int r = 0; r < p->n; r++) finished += st[r].done;
    free(js);
    free(ph);
    free(st);
    if (extended_out) *extended_out = extended;
    if (rc) return -1;
    if (interrupted) {
        snprintf(err, (size_t)errlen, "interrupted: %d of %d runs have finished a session; run the same command "
                 "again to continue (finished runs are kept, unfinished ones resume)", finished, p->n);
        return -1;
    }
    return 0;
}
