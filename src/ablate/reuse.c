/* qkv ablate --reuse DIR: finished runs of another sweep taken into this one when they are the
 * same runs (the same name, the same input config, not extended), so that a baseline shared by
 * several ablations is trained once (see plan.h). Its bits are the bits a run here would make:
 * a run is a function of its config, seed and thread count, and every sweep trains with one. */
#include "ablate/claim.h"
#include "ablate/plan.h"
#include "ablate/runner.h"
#include "io/fileio.h"
#include "io/strbuf.h"
#include "train/run_dir.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static bool exists(const char *path) { return access(path, F_OK) == 0; }

/* whether file `name` of run directory dir exists */
static bool has(const char *dir, const char *name) {
    char *p = qkv__pathf("%s/%s", dir, name);
    bool yes = !p || exists(p); /* out of memory: as if it did (nothing is copied over it) */
    free(p);
    return yes;
}

/* copy file `name` from directory from to directory to (atomically); 0 or -1 with e */
static int copy_file(const char *from, const char *to, const char *name, qkv_err *e) {
    char *src = qkv__pathf("%s/%s", from, name), *dst = qkv__pathf("%s/%s", to, name);
    int rc = -1;
    size_t len;
    char *buf = src && dst ? qkv__read_file(src, &len, e) : NULL;
    if (!src || !dst) qkv_err_set(e, QKV_ERR_FAIL, "out of memory");
    else if (buf) rc = qkv__write_file_atomic(dst, buf, len, e);
    free(buf);
    free(src);
    free(dst);
    return rc;
}

/* the regular files of run directory from copied to to, summary.json last; a claim or a failure
 * marker is not the run's result and stays behind. 0 or -1 with e */
static int copy_run(const char *from, const char *to, qkv_err *e) {
    DIR *d = opendir(from);
    if (!d) return qkv_err_set(e, QKV_ERR_FAIL, "%s: cannot read the directory", qkv__shown(from).s);
    int rc = qkv__mkdirs(to, e);
    for (struct dirent *f; !rc && (f = readdir(d));) {
        const char *n = f->d_name;
        if (n[0] == '.' || !strcmp(n, QKV_RUN_SUMMARY) || !strcmp(n, QKV_CLAIM_FILE) || !strcmp(n, QKV_RUN_FAILED))
            continue;
        char *p = qkv__pathf("%s/%s", from, n);
        struct stat st;
        bool regular = p && stat(p, &st) == 0 && S_ISREG(st.st_mode);
        free(p);
        if (regular) rc = copy_file(from, to, n, e);
    }
    closedir(d);
    return rc ? -1 : copy_file(from, to, QKV_RUN_SUMMARY, e);
}

/* whether run r of p may take the run of the same name in sweep dir: it is finished there, ran
 * exactly its train.steps, and was made from this run's input config (already written to
 * rs->cfg by the plan) */
static bool same_run(const qkv_ablate_plan *p, int r, const char *dir, const char *from) {
    const qkv_ablate_run_spec *rs = &p->runs[r];
    qkv_ablate_run_spec there = *rs;
    there.dir = (char *)from;
    qkv_ablate_plan one = *p;
    one.runs = &there;
    qkv_ablate_run_state st;
    qkv__ablate_run_state(&one, 0, &st);
    if (!st.done || st.steps != rs->steps) return false;
    const char *base = strrchr(rs->cfg, '/') ? strrchr(rs->cfg, '/') + 1 : rs->cfg;
    char *theirs_path = qkv__pathf("%s/configs/%s", dir, base);
    size_t len;
    char *ours = qkv__read_file(rs->cfg, &len, NULL);
    char *theirs = theirs_path && exists(theirs_path) ? qkv__read_file(theirs_path, &len, NULL) : NULL;
    bool same = ours && theirs && (!strcmp(ours, theirs) || qkv__ablate_same_config(theirs, ours, theirs_path));
    free(theirs_path);
    free(ours);
    free(theirs);
    return same;
}

int qkv__ablate_reuse_check(const char *const *dirs, int n, qkv_err *e) {
    for (int k = 0; k < n; k++) {
        char *cfgs = qkv__pathf("%s/configs", dirs[k]);
        struct stat st;
        bool sweep = cfgs && stat(cfgs, &st) == 0 && S_ISDIR(st.st_mode);
        free(cfgs);
        if (!sweep)
            return qkv_err_set(e, QKV_ERR_USAGE, "--reuse %s: not a sweep's directory (it has no configs/)",
                               qkv__shown(dirs[k]).s);
    }
    return 0;
}

int qkv__ablate_reuse(const qkv_ablate_plan *p, const char *const *dirs, int n, bool quiet, qkv_err *e) {
    if (qkv__ablate_reuse_check(dirs, n, e)) return -1;
    for (int k = 0; k < n; k++) {
        int copied = 0;
        for (int r = 0; r < p->n; r++) {
            const qkv_ablate_run_spec *rs = &p->runs[r];
            /* only a run nobody has started here: its own results, or a worker's, are never replaced */
            if (has(rs->dir, QKV_RUN_SUMMARY) || has(rs->dir, QKV_RUN_CHECKPOINT) || has(rs->dir, QKV_CLAIM_FILE))
                continue;
            char *from = qkv__pathf("%s/runs/%s", dirs[k], rs->name);
            if (!from) return qkv_err_set(e, QKV_ERR_FAIL, "out of memory");
            int rc = same_run(p, r, dirs[k], from) ? copy_run(from, rs->dir, e) : 0;
            copied += !rc && has(rs->dir, QKV_RUN_SUMMARY);
            free(from);
            if (rc) return -1;
        }
        if (!quiet && copied)
            fprintf(stderr, "qkv ablate: reused %d finished run%s of %s (the same configs)\n", copied,
                    copied == 1 ? "" : "s", qkv__shown(dirs[k]).s);
    }
    return 0;
}
