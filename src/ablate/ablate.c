/* qkv ablate: run every variant x seed as separate `qkv train` processes, then aggregate. */
#include "ablate/results.h"
#include "ablate/diagnostics.h"
#include "config/config.h"
#include "io/fileio.h"
#include "train/run_dir.h"
#include "train/train.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

static bool exists(const char *path) { return access(path, F_OK) == 0; }

/* ---- per-run configs ------------------------------------------------------------------ */

/* base + common overrides + the variant's + train.seed, validated; malloc'd JSON or NULL */
static char *run_config(const qkv_ablate_config *c, int v, int s, char *err, int errlen) {
    qkv_config cfg;
    qkv_config_defaults(&cfg);
    int rc = c->base_json ? qkv_config_parse(&cfg, c->base_json, c->path, err, errlen)
                          : qkv_config_load(&cfg, c->base_path, err, errlen);
    for (int i = 0; !rc && i < c->n_sets; i++) rc = qkv_config_set(&cfg, c->sets[i], err, errlen);
    for (int i = 0; !rc && i < c->variants[v].n_sets; i++) rc = qkv_config_set(&cfg, c->variants[v].sets[i], err, errlen);
    char seed[64];
    snprintf(seed, sizeof seed, "train.seed=%lld", c->seeds[s]);
    if (!rc) rc = qkv_config_set(&cfg, seed, err, errlen);
    if (!rc) rc = qkv_config_validate(&cfg, err, errlen);
    if (rc) {
        char inner[768];
        snprintf(inner, sizeof inner, "%s", err);
        snprintf(err, (size_t)errlen, "%s: variant %s: %s", c->path, c->variants[v].name, inner);
        return NULL;
    }
    return qkv_config_to_json(&cfg);
}

typedef struct job { pid_t pid; int run; double started; } job;

typedef struct plan {
    const qkv_ablate_config *c;
    const char *out;
    int n;                 /* runs */
    char (*dir)[1200];     /* run directories */
    char (*cfg)[1200];     /* their input configs */
    int *state;            /* 0 to do, 1 running, 2 done, 3 failed */
} plan;

static const char *run_file(const plan *p, int r, const char *f, char *buf, size_t n) {
    snprintf(buf, n, "%s/%s", p->dir[r], f);
    return buf;
}

/* remove a run directory's files (a stale run from a different config) */
static void clear_run(const plan *p, int r) {
    const char *files[] = {QKV_RUN_CONFIG, QKV_RUN_METRICS, QKV_RUN_MODEL, QKV_RUN_CHECKPOINT, QKV_RUN_SUMMARY,
                           QKV_RUN_LOG};
    char b[1400];
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) unlink(run_file(p, r, files[i], b, sizeof b));
}

static int prepare(plan *p, char *err, int errlen) {
    const qkv_ablate_config *c = p->c;
    char d[1200];
    snprintf(d, sizeof d, "%s/configs", p->out);
    if (qkv_mkdirs(d, err, errlen)) return -1;
    for (int v = 0; v < c->n_variants; v++)
        for (int s = 0; s < c->n_seeds; s++) {
            int r = v * c->n_seeds + s;
            snprintf(p->dir[r], sizeof p->dir[r], "%s/runs/%s/seed%lld", p->out, c->variants[v].name, c->seeds[s]);
            snprintf(p->cfg[r], sizeof p->cfg[r], "%s/configs/%s-seed%lld.json", p->out, c->variants[v].name, c->seeds[s]);
            char *json = run_config(c, v, s, err, errlen);
            if (!json) return -1;
            size_t len;
            char e2[256];
            char *old = exists(p->cfg[r]) ? qkv_read_file(p->cfg[r], &len, e2, sizeof e2) : NULL;
            bool changed = !old || strcmp(old, json);
            free(old);
            int rc = qkv_mkdirs(p->dir[r], err, errlen);
            if (!rc && changed) {
                clear_run(p, r); /* results of another config must not be reused */
                rc = qkv_write_file_atomic(p->cfg[r], json, strlen(json), err, errlen);
            }
            free(json);
            if (rc) return -1;
            char b[1400];
            p->state[r] = exists(run_file(p, r, QKV_RUN_SUMMARY, b, sizeof b)) ? 2 : 0;
        }
    return 0;
}

/* start the caller's train command on run r: CMD... CONFIG --out DIR, or CMD... --resume DIR when the
 * run has a checkpoint; its stdout and stderr go to the run's log */
static pid_t launch(const plan *p, int r, const char *const *cmd, char *err, int errlen) {
    char log[1400], ck[1400];
    run_file(p, r, QKV_RUN_LOG, log, sizeof log);
    bool resume = exists(run_file(p, r, QKV_RUN_CHECKPOINT, ck, sizeof ck));
    int n = 0;
    while (cmd[n]) n++;
    char **argv = calloc((size_t)n + 4, sizeof *argv);
    if (!argv) {
        snprintf(err, (size_t)errlen, "out of memory");
        return -1;
    }
    for (int i = 0; i < n; i++) argv[i] = (char *)cmd[i];
    if (resume) {
        argv[n] = "--resume";
        argv[n + 1] = p->dir[r];
    } else {
        argv[n] = p->cfg[r];
        argv[n + 1] = "--out";
        argv[n + 2] = p->dir[r];
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

static void show_progress(int finished, int total, int running, int left, int done, double run_time, int jobs,
                          double t0, bool tty) {
    double per = done ? run_time / done : 0, eta = per * left / jobs;
    char e[32], el[32];
    fmt_time(eta, e, sizeof e);
    fmt_time(now() - t0, el, sizeof el);
    fprintf(stderr, tty ? "\r\033[Kqkv ablate: runs %d/%d done, %d running, %s elapsed, ETA %s"
                        : "qkv ablate: runs %d/%d done, %d running, %s elapsed, ETA %s\n",
            finished, total, running, el, done ? e : "?");
}

static int execute(plan *p, int jobs, const char *const *cmd, bool quiet, char *err, int errlen) {
    job *js = calloc((size_t)jobs, sizeof *js);
    if (!js) {
        snprintf(err, (size_t)errlen, "out of memory");
        return -1;
    }
    int running = 0, done = 0, pending = 0, failed = 0;
    for (int r = 0; r < p->n; r++) pending += p->state[r] == 0; /* runs not finished before */
    int skipped = p->n - pending;
    if (!quiet && skipped)
        fprintf(stderr, "qkv ablate: %d of %d runs already finished (kept)\n", skipped, p->n);
    bool tty = isatty(2) && !quiet;
    double t0 = now(), run_time = 0;
    int next = 0, rc = 0;
    bool progress_due = false, forwarded = false;
    while (done + failed < pending) {
        while (!interrupted && running < jobs && next < p->n) {
            if (p->state[next] != 0) { next++; continue; }
            pid_t pid = launch(p, next, cmd, err, errlen);
            if (pid < 0) { rc = -1; break; }
            for (int k = 0; k < jobs; k++)
                if (!js[k].pid) { js[k] = (job){pid, next, now()}; break; }
            p->state[next++] = 1;
            running++;
        }
        if (progress_due && !quiet) /* after the next runs started, so "running" is current */
            show_progress(skipped + done, p->n, running, pending - done - failed, done, run_time, jobs, t0, tty);
        progress_due = false;
        if (running == 0) break;
        if (interrupted && !forwarded) { /* SIGTERM to ablate alone (kill, timeout, a scheduler): */
            for (int k = 0; k < jobs; k++) /* the runs save a checkpoint and stop too */
                if (js[k].pid) kill(js[k].pid, SIGTERM);
            forwarded = true;
        }
        int st;
        pid_t pid = waitpid(-1, &st, 0);
        if (pid < 0) {
            if (errno == EINTR) continue;
            break;
        }
        for (int k = 0; k < jobs; k++) {
            if (js[k].pid != pid) continue;
            int r = js[k].run;
            bool ok = WIFEXITED(st) && WEXITSTATUS(st) == 0;
            p->state[r] = ok ? 2 : interrupted ? 0 : 3;
            running--;
            if (ok) { done++; run_time += now() - js[k].started; }
            else if (!interrupted) {
                failed++;
                fprintf(stderr, "%sqkv ablate: run %s failed (exit %d); see %s/train.log\n", tty ? "\r\033[K" : "",
                        p->dir[r], WIFEXITED(st) ? WEXITSTATUS(st) : -1, p->dir[r]);
            }
            js[k].pid = 0;
            if (ok || !interrupted) progress_due = true;
        }
    }
    if (progress_due && !quiet) show_progress(skipped + done, p->n, running, 0, done, run_time, jobs, t0, tty);
    if (tty) fputc('\n', stderr);
    free(js);
    if (rc) return -1;
    if (interrupted) {
        snprintf(err, (size_t)errlen, "interrupted: %d of %d runs finished; run the same command again to "
                 "continue (finished runs are kept, unfinished ones resume)", skipped + done, p->n);
        return -1;
    }
    return 0;
}

/* ---- reading runs back ------------------------------------------------------------------- */

static cJSON *read_json(const char *path) {
    char e[256];
    size_t len;
    char *t = qkv_read_file(path, &len, e, sizeof e);
    cJSON *j = t ? cJSON_Parse(t) : NULL;
    free(t);
    return j;
}

static double num(const cJSON *j, const char *k) {
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(j, k);
    return cJSON_IsNumber(x) ? x->valuedouble : NAN;
}

static void read_run(const plan *p, int r, qkv_run_result *rr, qkv_variant_result *vr, double threshold) {
    char b[1400];
    rr->steps_to_threshold = -1;
    cJSON *s = read_json(run_file(p, r, QKV_RUN_SUMMARY, b, sizeof b));
    if (!s) return;
    rr->final_acc = num(s, "eval_accuracy");
    rr->final_loss = num(s, "eval_loss");
    rr->train_loss = num(s, "train_loss");
    rr->seconds = num(s, "seconds");
    vr->params = (int64_t)num(s, "params");
    vr->attn_params = (int64_t)num(s, "attn_params");
    cJSON_Delete(s);
    size_t len;
    char e[256];
    char *m = qkv_read_file(run_file(p, r, QKV_RUN_METRICS, b, sizeof b), &len, e, sizeof e);
    if (!m) return;
    int cap = 0;
    for (char *line = strtok(m, "\n"); line; line = strtok(NULL, "\n")) {
        cJSON *j = cJSON_Parse(line);
        double acc = num(j, "eval_accuracy");
        if (j && !isnan(acc)) {
            if (rr->n == cap) {
                cap = cap ? 2 * cap : 64;
                rr->step = realloc(rr->step, (size_t)cap * sizeof *rr->step);
                rr->eval_acc = realloc(rr->eval_acc, (size_t)cap * sizeof *rr->eval_acc);
                rr->eval_loss = realloc(rr->eval_loss, (size_t)cap * sizeof *rr->eval_loss);
            }
            rr->step[rr->n] = (long long)num(j, "step");
            rr->eval_acc[rr->n] = acc;
            rr->eval_loss[rr->n] = num(j, "eval_loss");
            if (rr->steps_to_threshold < 0 && acc >= threshold) rr->steps_to_threshold = rr->step[rr->n];
            rr->n++;
        }
        cJSON_Delete(j);
    }
    free(m);
    rr->ok = true;
}

static int cmp_ll(const void *a, const void *b) {
    long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}

static void aggregate(qkv_variant_result *vr, const qkv_run_result *runs, int n) {
    double sa = 0, sl = 0, ss = 0;
    long long st[256];
    int k = 0;
    vr->acc_min = INFINITY;
    for (int i = 0; i < n; i++) {
        if (!runs[i].ok) continue;
        sa += runs[i].final_acc;
        sl += runs[i].final_loss;
        ss += runs[i].seconds;
        vr->acc_min = fmin(vr->acc_min, runs[i].final_acc);
        if (k < 256) st[k++] = runs[i].steps_to_threshold < 0 ? LLONG_MAX : runs[i].steps_to_threshold;
        vr->reached += runs[i].steps_to_threshold >= 0;
        vr->runs_ok++;
    }
    int m = vr->runs_ok;
    if (!m) { vr->acc_min = NAN; vr->acc_mean = vr->loss_mean = NAN; vr->steps_median = -1; return; }
    vr->acc_mean = sa / m;
    vr->loss_mean = sl / m;
    vr->seconds = ss / m;
    double va = 0, vl = 0;
    for (int i = 0; i < n; i++) {
        if (!runs[i].ok) continue;
        va += (runs[i].final_acc - vr->acc_mean) * (runs[i].final_acc - vr->acc_mean);
        vl += (runs[i].final_loss - vr->loss_mean) * (runs[i].final_loss - vr->loss_mean);
    }
    vr->acc_std = m > 1 ? sqrt(va / (m - 1)) : 0; /* sample standard deviation */
    vr->loss_std = m > 1 ? sqrt(vl / (m - 1)) : 0;
    qsort(st, (size_t)k, sizeof st[0], cmp_ll);
    long long med = k % 2 ? st[k / 2] : (st[k / 2 - 1] == LLONG_MAX || st[k / 2] == LLONG_MAX ? LLONG_MAX
                                                                                             : (st[k / 2 - 1] + st[k / 2]) / 2);
    vr->steps_median = med == LLONG_MAX ? -1 : med;
}

/* ---- the whole ablation -------------------------------------------------------------------- */

static void free_results(qkv_ablate_results *res, int n_runs, int n_variants) {
    for (int i = 0; res->runs && i < n_runs; i++) {
        free(res->runs[i].step);
        free(res->runs[i].eval_acc);
        free(res->runs[i].eval_loss);
    }
    for (int v = 0; res->v && v < n_variants; v++) {
        free(res->v[v].heat.w);
        free(res->v[v].heat.tokens);
        free(res->v[v].heat.targets);
    }
    free(res->runs);
    free(res->v);
    free(res->base_config_json);
}

int qkv_ablate_run(const qkv_ablate_config *c, const char *out_dir, int jobs, const char *const *train_cmd,
                   bool quiet, char *err, int errlen) {
    double t0 = now();
    int n = c->n_variants * c->n_seeds, rc = -1;
    plan p = {.c = c, .out = out_dir, .n = n};
    p.dir = calloc((size_t)n, sizeof *p.dir);
    p.cfg = calloc((size_t)n, sizeof *p.cfg);
    p.state = calloc((size_t)n, sizeof *p.state);
    qkv_ablate_results res = {.cfg = c, .version = QKV_VERSION, .jobs = jobs};
    res.v = calloc((size_t)c->n_variants, sizeof *res.v);
    res.runs = calloc((size_t)n, sizeof *res.runs);
    if (!p.dir || !p.cfg || !p.state || !res.v || !res.runs) {
        snprintf(err, (size_t)errlen, "out of memory");
        goto done;
    }
    if (prepare(&p, err, errlen)) goto done;
    struct sigaction sa, old_int, old_term;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    int ex = execute(&p, jobs, train_cmd, quiet, err, errlen);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    if (ex) goto done;

    if (!quiet) fprintf(stderr, "qkv ablate: aggregating and drawing the report\n");
    for (int v = 0; v < c->n_variants; v++) {
        qkv_variant_result *vr = &res.v[v];
        snprintf(vr->name, sizeof vr->name, "%s", c->variants[v].name);
        for (int i = 0; i < c->variants[v].n_sets; i++) {
            if (i) strncat(vr->sets, " ", sizeof vr->sets - strlen(vr->sets) - 1);
            strncat(vr->sets, c->variants[v].sets[i], sizeof vr->sets - strlen(vr->sets) - 1);
        }
        qkv_diag_sums sums = {0};
        for (int s = 0; s < c->n_seeds; s++) {
            int r = v * c->n_seeds + s;
            qkv_run_result *rr = &res.runs[r];
            rr->variant = v;
            rr->seed_index = s;
            rr->seed = c->seeds[s];
            read_run(&p, r, rr, vr, c->threshold);
            if (!rr->ok) continue;
            char e2[512];
            if (qkv_ablate_diagnose(p.dir[r], 256, c->example, &sums, s == 0 ? &vr->heat : NULL, e2, sizeof e2))
                fprintf(stderr, "qkv ablate: diagnostics of %s skipped: %s\n", p.dir[r], e2);
        }
        aggregate(vr, res.runs + v * c->n_seeds, c->n_seeds);
        double rows = sums.rows ? (double)sums.rows : NAN;
        vr->diag = (qkv_attn_diag){sums.diag / rows, sums.first / rows, sums.entropy / rows,
                                   sums.entropy_uniform / rows};
    }
    char b[1400];
    for (int r = 0; r < n && !res.base_config_json; r++)
        if (res.runs[r].ok) {
            size_t len;
            char e2[256];
            res.base_config_json = qkv_read_file(run_file(&p, r, QKV_RUN_CONFIG, b, sizeof b), &len, e2, sizeof e2);
        }
    res.wall_seconds = now() - t0;
    rc = qkv_ablate_write_report(&res, out_dir, quiet ? NULL : stdout, err, errlen);
    if (!rc && !quiet) fprintf(stderr, "qkv ablate: report in %s/report.md and %s/report.html\n", out_dir, out_dir);
done:
    free_results(&res, n, c->n_variants);
    free(p.dir);
    free(p.cfg);
    free(p.state);
    return rc;
}
