/* Training an ablation's runs (see runner.h). What to do next is read back from the run
 * directories between launches, never remembered, so an interrupted sweep picks up where it
 * stopped and several workers (processes, machines, Slurm array tasks) can share one sweep:
 * each run is claimed before it is trained (claim.h). */
#include "ablate/runner.h"
#include "tensor/clock.h"
#include "ablate/claim.h"
#include "io/fileio.h"
#include "io/strbuf.h"
#include "train/run_dir.h"
#include "train/stop.h"

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

static void nap(double s) {
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
}

typedef enum { IDLE, RUNNING, FAILED } phase;
typedef struct job { pid_t pid; int run; double started, beat; } job; /* a train process: one run */

long long qkv__ablate_next(const qkv_ablate_plan *p, int r, const qkv_ablate_run_state *st, long long max_solved,
                           bool *resume, bool *extend) {
    const qkv_ablate_run_spec *rs = &p->runs[r];
    *resume = st->checkpoint;
    *extend = false;
    if (!st->done) return rs->steps; /* new, or interrupted: its config says how far */
    long long target = qkv__ablate_target(p, r, max_solved);
    if (st->solved || st->steps >= target) return 0;
    *extend = true;
    long long twice = 2 * st->steps;
    return twice < target ? twice : target;
}

/* start the caller's train command on run r, its stdout and stderr appended to the run's log */
static pid_t launch(const qkv_ablate_plan *p, int r, const char *const *cmd, bool resume, bool extend,
                    long long steps, qkv_err *e) {
    const qkv_ablate_run_spec *rs = &p->runs[r];
    char n[32], *log = qkv__pathf("%s/%s", rs->dir, QKV_RUN_LOG);
    snprintf(n, sizeof n, "%lld", steps);
    int k = 0;
    while (cmd[k]) k++;
    char **argv = log ? calloc((size_t)k + 10, sizeof *argv) : NULL;
    if (!argv) {
        free(log);
        return qkv_err_set(e, QKV_ERR_FAIL, "out of memory");
    }
    for (int i = 0; i < k; i++) argv[i] = (char *)cmd[i];
    char me[32]; /* the trainer stops (with a checkpoint) if this worker dies first, even by SIGKILL */
    snprintf(me, sizeof me, "%ld", (long)getpid());
    argv[k++] = "--stop-with";
    argv[k++] = me;
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
    int no = posix_spawn(&pid, cmd[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    free(argv);
    free(log);
    if (no) return qkv_err_set(e, QKV_ERR_FAIL, "cannot start %s: %s", qkv__shown(cmd[0]).s, strerror(no));
    return pid;
}

/* the last non-empty line of the run's log (whole: it may name long paths), for the failure
 * marker and --status; malloc'd, NULL when there is none */
static char *last_log_line(const char *dir) {
    char *path = qkv__pathf("%s/%s", dir, QKV_RUN_LOG);
    size_t len;
    char *t = path ? qkv__read_file(path, &len, NULL) : NULL;
    free(path);
    if (!t) return NULL;
    while (len && (t[len - 1] == '\n' || t[len - 1] == '\r' || t[len - 1] == ' ')) t[--len] = 0;
    char *last = strrchr(t, '\n');
    if (last) memmove(t, last + 1, strlen(last + 1) + 1);
    return t;
}

/* mark run r failed: "exit N: its log's last line" */
static void mark_failed(const qkv_ablate_plan *p, int r, int code) {
    char *line = last_log_line(p->runs[r].dir);
    char *text = qkv__pathf("exit %d: %s\n", code, line && line[0] ? line : "(no output)");
    char *path = qkv__pathf("%s/%s", p->runs[r].dir, QKV_RUN_FAILED);
    if (text && path) qkv__write_file_atomic(path, text, strlen(text), NULL);
    free(line);
    free(text);
    free(path);
}

static void unmark_failed(const qkv_ablate_plan *p, int r) {
    char *path = qkv__pathf("%s/%s", p->runs[r].dir, QKV_RUN_FAILED);
    if (path) unlink(path);
    free(path);
}

static void fmt_time(double s, char *b, size_t n) {
    if (s < 60) snprintf(b, n, "%.0fs", s);
    else snprintf(b, n, "%dm%02ds", (int)s / 60, (int)s % 60);
}

/* the summary line: on a terminal rewritten in place, in a log one line (the caller decides how
 * often: every loop on a terminal, at most once per QKV_LOG_INTERVAL in a log) */
static void show_progress(int done, int total, int running, int elsewhere, int extended, double t0, bool tty) {
    char el[32], other[48] = "";
    fmt_time(qkv_clock_seconds() - t0, el, sizeof el);
    if (elsewhere) snprintf(other, sizeof other, " (+%d elsewhere)", elsewhere);
    fprintf(stderr, tty ? "\r\033[Kqkv ablate: runs %d/%d done, %d running%s, %d extended, %s elapsed"
                        : "qkv ablate: runs %d/%d done, %d running%s, %d extended, %s elapsed\n",
            done, total, running, other, extended, el);
}

/* in a log (not a terminal): one line for a run whose session ended well, with what it reached */
static void show_finished(const qkv_ablate_plan *p, int r, double seconds) {
    qkv_ablate_run_state now;
    char el[32], how[48] = "not solved";
    qkv__ablate_run_state(p, r, &now);
    fmt_time(seconds, el, sizeof el);
    if (now.solved) snprintf(how, sizeof how, "solved at step %lld", now.solved_at);
    fprintf(stderr, "qkv ablate: finished %s (%lld steps, %s, %s)\n", p->runs[r].name, now.steps, how, el);
}

int qkv__ablate_execute(const qkv_ablate_plan *p, const qkv_ablate_opts *o, int *extended_out, qkv_err *e) {
    int jobs = o->jobs > 0 ? o->jobs : 1, shards = o->shards > 0 ? o->shards : 1;
    double stale = o->stale > 0 ? o->stale : 600;
    job *js = calloc((size_t)jobs, sizeof *js);
    phase *ph = calloc((size_t)p->n, sizeof *ph);
    qkv_ablate_run_state *st = calloc((size_t)p->n, sizeof *st);
    if (!js || !ph || !st) {
        free(js); free(ph); free(st);
        return qkv_err_set(e, QKV_ERR_FAIL, "out of memory");
    }
    qkv_stop_catcher stop;
    qkv_stop_catch(&stop);
    /* a terminal gets one updating line; a log a line per run started, finished or failed and a
     * summary at most once per QKV_LOG_INTERVAL (a Slurm task's log must not grow with time) */
    bool tty = isatty(2) && !o->quiet, forwarded = false, first = true, refresh = true;
    double t0 = qkv_clock_seconds(), last_refresh = 0, last_summary = t0;
    int running = 0, extended = 0, rc = 0, last_done = -1, mine = 0;
    for (int r = 0; r < p->n; r++) mine += r % shards == o->shard;
    for (;;) {
        /* every run's state (the budget depends on all of them), this share's claims */
        long long max_solved = -1;
        int done = 0, kept = 0, elsewhere = 0;
        if (refresh || qkv_clock_seconds() - last_refresh > 2) {
            for (int r = 0; r < p->n; r++)
                if (ph[r] != RUNNING) qkv__ablate_run_state(p, r, &st[r]);
            last_refresh = qkv_clock_seconds();
        }
        refresh = false;
        for (int r = 0; r < p->n; r++)
            if (st[r].done && st[r].solved && st[r].solved_at > max_solved) max_solved = st[r].solved_at;
        for (int r = 0; r < p->n && !rc; r++) {
            if (r % shards != o->shard || ph[r] != IDLE) continue;
            bool resume, extend;
            long long steps = qkv__ablate_next(p, r, &st[r], max_solved, &resume, &extend);
            if (!steps) {
                done++;
                kept += first;
                continue;
            }
            if (running >= jobs && !qkv_stop_requested()) continue; /* no slot: no need to look at claims */
            qkv_claim_info ci;
            qkv__claim_read(p->runs[r].dir, stale, &ci);
            if (ci.held && !ci.stale) { /* another worker trains it */
                elsewhere++;
                continue;
            }
            if (qkv_stop_requested() || !qkv__claim(p->runs[r].dir, stale, o->quiet)) continue;
            /* claimed: the state may have changed while another worker held it */
            qkv__ablate_run_state(p, r, &st[r]);
            steps = qkv__ablate_next(p, r, &st[r], max_solved, &resume, &extend);
            if (!steps) {
                qkv__claim_release(p->runs[r].dir);
                continue;
            }
            pid_t pid = launch(p, r, o->train_cmd, resume, extend, steps, e);
            if (pid < 0) {
                qkv__claim_release(p->runs[r].dir);
                rc = -1;
                break;
            }
            for (int k = 0; k < jobs; k++)
                if (!js[k].pid) { js[k] = (job){pid, r, qkv_clock_seconds(), qkv_clock_seconds()}; break; }
            if (!o->quiet && !tty) /* a log (a Slurm task's, say) tells what each worker did */
                fprintf(stderr, extend   ? "qkv ablate: extending %s to %lld steps\n"
                                : resume ? "qkv ablate: resuming %s from its checkpoint (to %lld steps)\n"
                                         : "qkv ablate: starting %s (%lld steps)\n",
                        p->runs[r].name, steps);
            ph[r] = RUNNING;
            running++;
            extended += extend;
        }
        if (first && kept && !o->quiet)
            fprintf(stderr, "qkv ablate: %d of %d runs already finished (kept)\n", kept, mine);
        first = false;
        if (!o->quiet && tty && (done != last_done || running))
            show_progress(done, mine, running, elsewhere, extended, t0, true);
        else if (!o->quiet && !tty && (running || elsewhere) && qkv_clock_seconds() - last_summary >= QKV_LOG_INTERVAL) {
            show_progress(done, mine, running, elsewhere, extended, t0, false);
            last_summary = qkv_clock_seconds();
        }
        last_done = done;
        if (rc) break;
        /* nothing running here: finished, unless other workers hold runs of this share whose
         * results may raise the budget (wait for them) */
        if (running == 0 && (qkv_stop_requested() || elsewhere == 0 || shards > 1)) break;
        if (qkv_stop_requested() && !forwarded) { /* SIGTERM to ablate alone (kill, timeout, a scheduler): */
            for (int k = 0; k < jobs; k++) /* the runs save a checkpoint and stop too */
                if (js[k].pid) kill(js[k].pid, SIGTERM);
            forwarded = true;
        }
        /* wait for a run to end, keeping the claims' heartbeats */
        int ws;
        pid_t pid = running ? waitpid(-1, &ws, WNOHANG) : 0;
        if (pid < 0 && errno != EINTR && errno != ECHILD) break;
        if (pid <= 0) {
            for (int k = 0; k < jobs; k++)
                if (js[k].pid && qkv_clock_seconds() - js[k].beat > QKV_CLAIM_HEARTBEAT) {
                    qkv__claim_touch(p->runs[js[k].run].dir);
                    js[k].beat = qkv_clock_seconds();
                }
            nap(running ? 0.05 : 2);
            continue;
        }
        for (int k = 0; k < jobs; k++) {
            if (js[k].pid != pid) continue;
            int r = js[k].run;
            bool ok = WIFEXITED(ws) && WEXITSTATUS(ws) == 0;
            int code = WIFEXITED(ws) ? WEXITSTATUS(ws) : -1;
            ph[r] = ok || qkv_stop_requested() ? IDLE : FAILED;
            if (ok) {
                unmark_failed(p, r);
                if (!o->quiet && !tty) show_finished(p, r, qkv_clock_seconds() - js[k].started);
            } else if (!qkv_stop_requested()) {
                mark_failed(p, r, code);
                fprintf(stderr, "%sqkv ablate: run %s failed (exit %d); see %s/%s\n", tty ? "\r\033[K" : "",
                        p->runs[r].dir, code, p->runs[r].dir, QKV_RUN_LOG);
            }
            qkv__claim_release(p->runs[r].dir);
            running--;
            js[k].pid = 0;
            refresh = true;
        }
    }
    if (tty) fputc('\n', stderr);
    qkv_stop_release(&stop);
    int finished = 0;
    for (int r = 0; r < p->n; r++) finished += r % shards == o->shard && st[r].done;
    free(js);
    free(ph);
    free(st);
    if (extended_out) *extended_out = extended;
    if (rc) return -1;
    if (qkv_stop_requested())
        return qkv_err_set(e, QKV_ERR_INTERRUPTED, "interrupted: %d of %d runs have finished a session; run the same "
                           "command again to continue (finished runs are kept, unfinished ones resume)", finished,
                           mine);
    return 0;
}
