/* qkv summarize's input: each ablation's results.json (report_json.c writes it), read strictly
 * into a qkv_summary (summary.h). A column takes the ablation's own statistics as it published
 * them: accuracy, or the loss of an ablation compared on "loss" or "bpb" (in bits for text and
 * for "bpb"). Text ablations compared on accuracy publish nothing in bits per byte, so theirs
 * are computed here from the chosen runs with the bootstrap, sign-flip test, Holm correction and
 * seeds of aggregate.c, paired by seed; so are those whose runs record eval_bpb. */
#include "tensor/tensor.h"
#include "report/summary.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ablate/results.h"
#include "ablate/stats.h"
#include "config/config_json.h"
#include "io/fileio.h"

/* a run's bits per byte when the run records it (qkv train's summary of a text task); without
 * it, eval loss / ln 2 (the loss is nats per byte: text tokens are bytes) */
#define BPB_KEY "eval_bpb"

#define MAX_SEEDS 512               /* as aggregate.c */

/* ---- strict reading ------------------------------------------------------------------------ */

typedef struct reader {
    const char *path;               /* DIR/results.json, for messages */
    char *err;
    int errlen;
    bool bad;                       /* an error is in err: later reads do nothing */
} reader;

/* a JSON value in a few characters, for "got ..." */
static void show(const cJSON *v, char *dst, size_t n) {
    if (cJSON_IsString(v)) snprintf(dst, n, "\"%.40s%s\"", v->valuestring, strlen(v->valuestring) > 40 ? "..." : "");
    else if (cJSON_IsNumber(v)) snprintf(dst, n, "%.6g", v->valuedouble);
    else if (cJSON_IsBool(v)) snprintf(dst, n, "%s", cJSON_IsTrue(v) ? "true" : "false");
    else if (cJSON_IsNull(v)) snprintf(dst, n, "null");
    else if (cJSON_IsArray(v)) snprintf(dst, n, "an array");
    else snprintf(dst, n, "an object");
}

/* "PATH: WHEREKEY: expected WHAT, got VALUE" (v NULL: "missing") */
static void wrong(reader *r, const char *where, const char *key, const char *what, const cJSON *v) {
    if (r->bad) return;
    char got[64];
    if (v) show(v, got, sizeof got);
    snprintf(r->err, (size_t)r->errlen, "%s: %s%s: expected %s, %s%s", r->path, where, key, what, v ? "got " : "",
             v ? got : "missing");
    r->bad = true;
}

/* o[key]: a number; NaN when absent or null */
static double get_num(reader *r, const cJSON *o, const char *where, const char *key) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v || cJSON_IsNull(v)) return NAN;
    if (!cJSON_IsNumber(v)) {
        wrong(r, where, key, "a number or null", v);
        return NAN;
    }
    return v->valuedouble;
}

/* o[key]: a number in [lo, hi] (a share: [0, 1]; a loss: [0, inf)); NaN when absent or null */
static double get_in(reader *r, const cJSON *o, const char *where, const char *key, double lo, double hi) {
    double x = get_num(r, o, where, key);
    if (!isnan(x) && !(x >= lo && x <= hi)) {
        char what[64];
        if (isinf(hi)) snprintf(what, sizeof what, "a number >= %g or null", lo);
        else snprintf(what, sizeof what, "a number in [%g, %g] or null", lo, hi);
        wrong(r, where, key, what, cJSON_GetObjectItemCaseSensitive(o, key));
        return NAN;
    }
    return x;
}

/* o[key]: a whole number >= 0; -1 when absent or null */
static long long get_count(reader *r, const cJSON *o, const char *where, const char *key) {
    double x = get_num(r, o, where, key);
    if (isnan(x)) return -1;
    if (!(x >= 0 && x <= 9007199254740992.0) || x != floor(x)) {
        wrong(r, where, key, "a whole number >= 0 or null", cJSON_GetObjectItemCaseSensitive(o, key));
        return -1;
    }
    return (long long)x;
}

/* o[key]: a string (NULL when absent or null, an error when required) */
static const char *get_str(reader *r, const cJSON *o, const char *where, const char *key, bool required) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if ((!v || cJSON_IsNull(v)) && !required) return NULL;
    if (!cJSON_IsString(v)) {
        wrong(r, where, key, required ? "a string" : "a string or null", v);
        return NULL;
    }
    return v->valuestring;
}

/* o[key]: true/false; dflt when absent or null */
static bool get_bool(reader *r, const cJSON *o, const char *where, const char *key, bool dflt) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v || cJSON_IsNull(v)) return dflt;
    if (!cJSON_IsBool(v)) {
        wrong(r, where, key, "true, false or null", v);
        return dflt;
    }
    return cJSON_IsTrue(v);
}

/* o[key]: an array (NULL when absent, an error when required) */
static const cJSON *get_array(reader *r, const cJSON *o, const char *where, const char *key, bool required) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v && !required) return NULL;
    if (!cJSON_IsArray(v)) {
        wrong(r, where, key, "an array", v);
        return NULL;
    }
    return v;
}

/* ---- one ablation --------------------------------------------------------------------------- */

/* a run at a variant's chosen rate, as much as the bits per byte and the verdicts need */
typedef struct run_rec {
    double seed;
    bool ok, solved;
    double loss, bpb;               /* final eval loss (nats) and eval_bpb; NaN: not recorded */
    long long budget;
} run_rec;

/* a variant as results.json has it, in its order there */
typedef struct var_rec {
    char name[QKV_ABLATE_NAME];
    qkv_sum_cell cell;              /* mean, lo, hi: accuracy's until the column's metric is known */
    double loss, loss_lo, loss_hi;  /* the final eval loss (nats): mean and interval */
    run_rec *runs;                  /* chosen runs */
    int n_runs;
} var_rec;

/* variant i's chosen runs (all runs when results.json marks none chosen: no grid) and the budget
 * of its unsolved runs */
static void read_runs(reader *r, const cJSON *vo, const char *where, var_rec *v) {
    const cJSON *runs = get_array(r, vo, where, "runs", false);
    int n = runs ? cJSON_GetArraySize(runs) : 0, k = 0, i = 0;
    v->runs = calloc((size_t)n + 1, sizeof *v->runs);
    if (!v->runs) {
        snprintf(r->err, (size_t)r->errlen, "%s: out of memory", r->path);
        r->bad = true;
        return;
    }
    v->cell.budget = -1;
    for (const cJSON *ro = runs ? runs->child : NULL; ro && !r->bad; ro = ro->next, i++) {
        char rw[96];
        snprintf(rw, sizeof rw, "%sruns[%d]", where, i);
        if (!cJSON_IsObject(ro)) {
            wrong(r, rw, "", "an object", ro);
            break;
        }
        strcat(rw, "."); /* the prefix of its keys */
        bool chosen = get_bool(r, ro, rw, "chosen", true);
        run_rec rr = {.seed = get_num(r, ro, rw, "seed"), .ok = get_bool(r, ro, rw, "ok", false)};
        const char *verdict = get_str(r, ro, rw, "verdict", false);
        rr.bpb = get_in(r, ro, rw, BPB_KEY, 0, INFINITY);
        rr.loss = get_in(r, ro, rw, "final_loss", 0, INFINITY);
        rr.budget = get_count(r, ro, rw, "budget");
        if (!chosen || r->bad) continue;
        rr.solved = verdict && !strcmp(verdict, "solved");
        if (rr.ok && !rr.solved && rr.budget > v->cell.budget) v->cell.budget = rr.budget;
        v->runs[k++] = rr;
    }
    v->n_runs = k;
}

/* a variant object's fields into v (accuracy statistics as published) */
static void read_variant(reader *r, const cJSON *vo, int i, var_rec *v) {
    char where[48];
    snprintf(where, sizeof where, "variants[%d].", i);
    if (!cJSON_IsObject(vo)) {
        char at[48];
        snprintf(at, sizeof at, "variants[%d]", i);
        wrong(r, at, "", "an object", vo);
        return;
    }
    const char *name = get_str(r, vo, where, "name", true);
    if (r->bad) return;
    if (!name[0] || strlen(name) >= QKV_ABLATE_NAME) {
        wrong(r, where, "name", "a variant name of 1 to 63 characters", cJSON_GetObjectItemCaseSensitive(vo, "name"));
        return;
    }
    snprintf(v->name, sizeof v->name, "%s", name);
    qkv_sum_cell *c = &v->cell;
    c->present = true;
    c->runs_ok = (int)get_count(r, vo, where, "runs_ok");
    c->solved = (int)get_count(r, vo, where, "solved");
    c->unsolved = (int)get_count(r, vo, where, "unsolved");
    c->solved_at = get_count(r, vo, where, "steps_to_threshold");
    c->params = get_count(r, vo, where, "params");
    c->attn_params = get_count(r, vo, where, "attn_params");
    c->mean = get_in(r, vo, where, "acc_mean", 0, 1);
    c->lo = get_in(r, vo, where, "acc_ci_low", 0, 1);
    c->hi = get_in(r, vo, where, "acc_ci_high", 0, 1);
    v->loss = get_in(r, vo, where, "loss_mean", 0, INFINITY);
    v->loss_lo = get_in(r, vo, where, "loss_ci_low", 0, INFINITY);
    v->loss_hi = get_in(r, vo, where, "loss_ci_high", 0, INFINITY);
    c->delta = get_num(r, vo, where, "delta_vs_baseline");
    c->delta_lo = get_num(r, vo, where, "delta_ci_low");
    c->delta_hi = get_num(r, vo, where, "delta_ci_high");
    c->p = get_in(r, vo, where, "p_value", 0, 1);
    c->p_holm = get_in(r, vo, where, "p_holm", 0, 1);
    /* Holm-adjusted p < 0.05, as the ablation decided it (qkv_stats_holm: adjusted <= alpha) */
    c->significant = get_bool(r, vo, where, "significant", c->p_holm <= QKV_ABLATE_ALPHA);
    double budget = get_num(r, vo, where, "budget");
    read_runs(r, vo, where, v);
    if (c->budget < 0 && c->unsolved > 0 && isfinite(budget)) c->budget = (long long)budget;
    if (c->runs_ok < 0) { /* not recorded: count the finished chosen runs */
        c->runs_ok = 0;
        for (int k = 0; k < v->n_runs; k++) c->runs_ok += v->runs[k].ok;
    }
    if (c->solved < 0) c->solved = 0;
    if (c->unsolved < 0) c->unsolved = 0;
}

/* a finished run's bits per byte: its eval_bpb, else its eval loss / ln 2 (*from_loss set) */
static double run_bpb(const run_rec *r, bool *from_loss) {
    if (!r->ok) return NAN;
    if (isfinite(r->bpb)) return r->bpb;
    if (isfinite(r->loss)) *from_loss = true;
    return r->loss / QKV_LN2;
}

/* bits per byte computed from the chosen runs: each variant's mean with its interval, and the
 * difference from the baseline paired by seed, as aggregate.c does its metric (Holm over the
 * other variants) */
static int bpb_stats(var_rec *v, int nv, int base, bool *from_loss) {
    double *pv = calloc((size_t)nv + 1, sizeof *pv), *adj = calloc((size_t)nv + 1, sizeof *adj);
    bool *rej = calloc((size_t)nv + 1, sizeof *rej);
    int *idx = calloc((size_t)nv + 1, sizeof *idx), m = 0;
    if (!pv || !adj || !rej || !idx) {
        free(pv); free(adj); free(rej); free(idx);
        return -1;
    }
    for (int i = 0; i < nv; i++) {
        qkv_sum_cell *c = &v[i].cell;
        double x[MAX_SEEDS], a[MAX_SEEDS], b[MAX_SEEDS], d[MAX_SEEDS];
        int n = 0, k = 0;
        for (int j = 0; j < v[i].n_runs && n < MAX_SEEDS; j++) {
            double bits = run_bpb(&v[i].runs[j], from_loss);
            if (isfinite(bits)) x[n++] = bits;
        }
        c->mean = qkv_stats_mean(x, n);
        qkv_stats_bootstrap_ci(x, n, QKV_ABLATE_RESAMPLES, QKV_ABLATE_LEVEL, QKV_ABLATE_SEED_MEANS(i) + 1, &c->lo,
                               &c->hi);
        c->delta = c->delta_lo = c->delta_hi = c->p = c->p_holm = NAN;
        c->significant = false;
        if (i == base) continue;
        for (int j = 0; j < v[i].n_runs && k < MAX_SEEDS; j++)
            for (int l = 0; l < v[base].n_runs; l++)
                if (v[base].runs[l].seed == v[i].runs[j].seed) {
                    a[k] = run_bpb(&v[i].runs[j], from_loss);
                    b[k] = run_bpb(&v[base].runs[l], from_loss);
                    d[k] = a[k] - b[k];
                    k += isfinite(d[k]);
                    break;
                }
        c->delta = qkv_stats_mean(d, k);
        qkv_stats_bootstrap_ci_paired(a, b, k, QKV_ABLATE_RESAMPLES, QKV_ABLATE_LEVEL, QKV_ABLATE_SEED_PAIRED(i),
                                      &c->delta_lo, &c->delta_hi);
        c->p = k ? qkv_stats_signflip_p(d, k, QKV_ABLATE_SIGNFLIP_RESAMPLES, QKV_ABLATE_SEED_PAIRED(i) + 1) : NAN;
        idx[m] = i;
        pv[m++] = c->p;
    }
    qkv_stats_holm(pv, m, QKV_ABLATE_ALPHA, adj, rej);
    for (int k = 0; k < m; k++) {
        v[idx[k]].cell.p_holm = adj[k];
        v[idx[k]].cell.significant = rej[k] && isfinite(pv[k]);
    }
    free(pv); free(adj); free(rej); free(idx);
    return 0;
}

/* the cells' mean and interval in the column's metric; bits per byte computed from the runs when
 * the ablation published none (it compared accuracy) or its runs record eval_bpb; 0 or -1 (out of
 * memory) */
static int column_stats(qkv_sum_ablation *a, var_rec *v, int nv, int base) {
    if (a->metric == QKV_METRIC_ACCURACY) return 0; /* as read */
    bool eval_bpb = false, all = true;       /* whether every finished run records eval_bpb */
    for (int i = 0; i < nv; i++)
        for (int j = 0; j < v[i].n_runs; j++)
            if (v[i].runs[j].ok) {
                eval_bpb = true;
                all &= isfinite(v[i].runs[j].bpb);
            }
    if (a->metric == QKV_METRIC_BPB && ((eval_bpb && all) || a->compared == QKV_METRIC_ACCURACY)) {
        a->recomputed = true;
        return bpb_stats(v, nv, base, &a->bpb_from_loss);
    }
    /* the ablation's own: its loss in nats, or in bits (its differences are in bits already when it
     * compared on bpb; a loss's are in nats, and scaling changes neither p nor the verdict) */
    double k = a->metric == QKV_METRIC_BPB ? 1 / QKV_LN2 : 1, kd = a->compared == QKV_METRIC_LOSS ? k : 1;
    a->bpb_from_loss = a->metric == QKV_METRIC_BPB;
    for (int i = 0; i < nv; i++) {
        qkv_sum_cell *c = &v[i].cell;
        c->mean = v[i].loss * k;
        c->lo = v[i].loss_lo * k;
        c->hi = v[i].loss_hi * k;
        c->delta *= kd;
        c->delta_lo *= kd;
        c->delta_hi *= kd;
    }
    return 0;
}

static void free_recs(var_rec *v, int n) {
    for (int i = 0; v && i < n; i++) free(v[i].runs);
    free(v);
}

/* dir's results.json (path: room for its name) parsed into *root; 0 or -1 with err, naming what dir is
 * not (too long a name, no directory, no results.json) */
static int read_results(const char *dir, size_t dir_max, char *path, size_t path_max, cJSON **root, char *err,
                        int errlen) {
    if (snprintf(path, path_max, "%s/results.json", dir) >= (int)path_max || strlen(dir) >= dir_max) {
        snprintf(err, (size_t)errlen, "%.200s...: path too long", dir);
        return -1;
    }
    struct stat st;
    if (stat(dir, &st) || !S_ISDIR(st.st_mode)) {
        snprintf(err, (size_t)errlen, "%s: %s (expected the output directory of qkv ablate)", dir,
                 stat(dir, &st) ? "no such directory" : "not a directory");
        return -1;
    }
    if (stat(path, &st)) {
        snprintf(err, (size_t)errlen, "%s: no results.json (not the output directory of qkv ablate, or its report "
                 "was never written: qkv ablate CONFIG --out %s --report)", dir, dir);
        return -1;
    }
    size_t len;
    char *text = qkv__read_file(path, &len, err, errlen);
    if (!text) return -1;
    bool oom = false;
    int rc = qkv__config_json(text, len, path, root, &oom, err, errlen);
    free(text);
    if (rc) {
        if (oom) snprintf(err, (size_t)errlen, "%s: out of memory", path);
        return -1;
    }
    return 0;
}

/* the ablation's own keys of root (title, baseline, task, metric, sizes, run counts) into a, and
 * its baseline's name and variants array; 0 or -1 with r->bad */
static int read_header(reader *r, const cJSON *root, const char *dir, qkv_sum_ablation *a, const char **baseline_out,
                       const cJSON **vars_out) {
    if (!cJSON_IsObject(root)) {
        snprintf(r->err, (size_t)r->errlen, "%s: expected a JSON object (the results qkv ablate writes)", r->path);
        r->bad = true;
        return -1;
    }
    memset(a, 0, sizeof *a);
    snprintf(a->dir, sizeof a->dir, "%s", dir);
    const char *title = get_str(r, root, "", "title", true);
    const char *baseline = get_str(r, root, "", "baseline", true);
    const char *task = get_str(r, root, "", "task", false);
    const char *compared = get_str(r, root, "", "metric", false);
    const cJSON *vars = get_array(r, root, "", "variants", true);
    const cJSON *seeds = get_array(r, root, "", "seeds", false);
    a->threshold = get_in(r, root, "", "threshold", 0, INFINITY);
    a->d_model = (int)get_count(r, root, "", "d_model");
    a->layers = (int)get_count(r, root, "", "layers");
    a->heads = (int)get_count(r, root, "", "heads");
    a->runs_planned = (int)get_count(r, root, "", "runs_planned");
    a->missing = (int)get_count(r, root, "", "missing_runs");
    a->to_extend = (int)get_count(r, root, "", "runs_to_extend");
    if (r->bad) return -1;
    qkv_ablate_metric cm = qkv_ablate_metric_named(compared); /* once: compared below by value */
    if (compared && cm == QKV_METRIC_COUNT) {
        wrong(r, "", "metric", "\"accuracy\", \"loss\", \"bpb\" or null",
              cJSON_GetObjectItemCaseSensitive(root, "metric"));
        return -1;
    }
    a->compared = compared ? cm : QKV_METRIC_ACCURACY;
    if (a->d_model < 0) a->d_model = 0;
    if (a->layers < 0) a->layers = 0;
    if (a->heads < 0) a->heads = 0;
    if (strlen(baseline) >= sizeof a->baseline) {
        wrong(r, "", "baseline", "a variant name of 1 to 63 characters",
              cJSON_GetObjectItemCaseSensitive(root, "baseline"));
        return -1;
    }
    snprintf(a->baseline, sizeof a->baseline, "%s", baseline);
    snprintf(a->title, sizeof a->title, "%s", title);
    snprintf(a->task, sizeof a->task, "%s", task ? task : "");
    a->seeds = seeds ? cJSON_GetArraySize(seeds) : 0;
    a->text = task && !strcmp(task, "text");
    a->metric = a->text ? QKV_METRIC_BPB : a->compared;
    *baseline_out = baseline;
    *vars_out = vars;
    return 0;
}

/* the variants array vars (non-empty, distinct names, baseline among them) into *out (*n_out of
 * them, also when this fails), each with its column's statistics; 0 or -1 with r->bad */
static int read_variants(reader *r, qkv_sum_ablation *a, const cJSON *vars, const char *baseline, var_rec **out,
                         int *n_out) {
    int nv = *n_out = cJSON_GetArraySize(vars);
    if (nv < 1) {
        wrong(r, "", "variants", "a non-empty array", vars);
        return -1;
    }
    var_rec *v = *out = calloc((size_t)nv, sizeof *v);
    if (!v) {
        snprintf(r->err, (size_t)r->errlen, "%s: out of memory", r->path);
        r->bad = true;
        return -1;
    }
    int i = 0, base = -1;
    for (const cJSON *vo = vars->child; vo && !r->bad; vo = vo->next, i++) {
        read_variant(r, vo, i, &v[i]);
        for (int k = 0; k < i && !r->bad; k++)
            if (!strcmp(v[k].name, v[i].name)) {
                snprintf(r->err, (size_t)r->errlen, "%s: variants[%d].name: \"%s\" is also variants[%d]'s", r->path,
                         i, v[i].name, k);
                r->bad = true;
            }
        if (!r->bad && !strcmp(v[i].name, baseline)) base = i;
        if (!r->bad && !a->seeds) a->seeds = v[i].n_runs;
    }
    if (r->bad) return -1;
    for (int k = 0; k < nv; k++) v[k].cell.seeds = a->seeds;
    if (base < 0) {
        snprintf(r->err, (size_t)r->errlen, "%s: baseline: \"%s\" is not one of the variants", r->path, baseline);
        r->bad = true;
        return -1;
    }
    if (column_stats(a, v, nv, base)) {
        snprintf(r->err, (size_t)r->errlen, "%s: out of memory", r->path);
        r->bad = true;
        return -1;
    }
    return 0;
}

/* dir's results.json into *a and its variants (in file order) into *out; 0 or -1 with err */
static int load_one(qkv_sum_ablation *a, const char *dir, var_rec **out, int *n_out, char *err, int errlen) {
    char path[1200];
    *out = NULL;
    *n_out = 0;
    cJSON *root = NULL;
    if (read_results(dir, sizeof a->dir, path, sizeof path, &root, err, errlen)) return -1;
    reader r = {path, err, errlen, false};
    var_rec *v = NULL;
    int nv = 0;
    const char *baseline = NULL;
    const cJSON *vars = NULL;
    if (!read_header(&r, root, dir, a, &baseline, &vars)) read_variants(&r, a, vars, baseline, &v, &nv);
    cJSON_Delete(root);
    if (r.bad) {
        free_recs(v, nv);
        return -1;
    }
    *out = v;
    *n_out = nv;
    return 0;
}

/* ---- the summary ---------------------------------------------------------------------------- */

bool qkv__summary_partial(const qkv_sum_ablation *a) { return a->missing > 0 || a->to_extend > 0; }

/* the last component of a path ("a/b/" -> "b") */
static void base_name(char *dst, size_t n, const char *path) {
    size_t len = strlen(path);
    while (len > 1 && path[len - 1] == '/') len--;
    size_t start = len;
    while (start > 0 && path[start - 1] != '/') start--;
    snprintf(dst, n, "%.*s", (int)(len - start), path + start);
}

/* each column's name: "task d_model=N" (or the title when the task is not recorded), then the
 * directory's name where two are alike, then a number where those are too */
static void label_columns(qkv_summary *s) {
    for (int i = 0; i < s->n; i++) {
        qkv_sum_ablation *a = &s->a[i];
        if (a->task[0] && a->d_model > 0) snprintf(a->label, sizeof a->label, "%s d_model=%d", a->task, a->d_model);
        else if (a->task[0]) snprintf(a->label, sizeof a->label, "%s", a->task);
        else snprintf(a->label, sizeof a->label, "%.150s", a->title);
    }
    for (int pass = 0; pass < 2; pass++) {
        bool *dup = calloc((size_t)s->n, sizeof *dup);
        if (!dup) return; /* names stay ambiguous, nothing worse */
        for (int i = 0; i < s->n; i++)
            for (int j = 0; j < s->n; j++)
                if (i != j && !strcmp(s->a[i].label, s->a[j].label)) dup[i] = true;
        for (int i = 0, k = 1; i < s->n; i++) {
            if (!dup[i]) continue;
            char extra[64], old[sizeof s->a[i].label];
            memcpy(old, s->a[i].label, sizeof old);
            if (pass == 0) base_name(extra, sizeof extra, s->a[i].dir);
            else snprintf(extra, sizeof extra, "#%d", k++);
            snprintf(s->a[i].label, sizeof s->a[i].label, "%.120s (%s)", old, extra);
        }
        free(dup);
    }
}

/* v's variant names into the summary's list (new names at its end) */
static int merge(qkv_summary *s, const var_rec *v, int nv) {
    for (int i = 0; i < nv; i++) {
        int k = 0;
        while (k < s->n_variants && strcmp(s->variants[k], v[i].name)) k++;
        if (k < s->n_variants) continue;
        char(*nn)[QKV_ABLATE_NAME] = realloc(s->variants, ((size_t)s->n_variants + 1) * sizeof *nn);
        if (!nn) return -1;
        s->variants = nn;
        memcpy(s->variants[s->n_variants++], v[i].name, QKV_ABLATE_NAME);
    }
    return 0;
}

int qkv__summary_load(qkv_summary *s, const char *const *dirs, int n, char *err, int errlen) {
    memset(s, 0, sizeof *s);
    if (n < 1) {
        snprintf(err, (size_t)errlen, "no ablation directories");
        return -1;
    }
    s->a = calloc((size_t)n, sizeof *s->a);
    var_rec **recs = calloc((size_t)n, sizeof *recs);
    int *counts = calloc((size_t)n, sizeof *counts), rc = -1;
    if (!s->a || !recs || !counts) {
        snprintf(err, (size_t)errlen, "out of memory");
        goto done;
    }
    for (int i = 0; i < n; i++) {
        if (load_one(&s->a[i], dirs[i], &recs[i], &counts[i], err, errlen)) goto done;
        s->n = i + 1;
        if (i == 0) memcpy(s->baseline, s->a[0].baseline, sizeof s->baseline);
        else if (strcmp(s->a[i].baseline, s->baseline)) {
            snprintf(err, (size_t)errlen, "%s/results.json: baseline: \"%s\" differs from %s/results.json's \"%s\" "
                     "(every column is compared with one baseline: summarize them separately)", dirs[i],
                     s->a[i].baseline, dirs[0], s->baseline);
            goto done;
        }
        if (merge(s, recs[i], counts[i])) {
            snprintf(err, (size_t)errlen, "out of memory");
            goto done;
        }
    }
    rc = 0;
done:
    if (!rc) { /* the cells, in the summary's variant order */
        for (int i = 0; i < s->n && !rc; i++) {
            s->a[i].cells = calloc((size_t)s->n_variants, sizeof *s->a[i].cells);
            if (!s->a[i].cells) {
                snprintf(err, (size_t)errlen, "out of memory");
                rc = -1;
                break;
            }
            for (int k = 0; k < counts[i]; k++)
                for (int j = 0; j < s->n_variants; j++)
                    if (!strcmp(s->variants[j], recs[i][k].name)) s->a[i].cells[j] = recs[i][k].cell;
        }
    }
    for (int i = 0; recs && i < n; i++) free_recs(recs[i], counts[i]);
    free(recs);
    free(counts);
    if (rc) qkv__summary_free(s);
    else label_columns(s);
    return rc;
}

void qkv__summary_free(qkv_summary *s) {
    for (int i = 0; s->a && i < s->n; i++) free(s->a[i].cells);
    free(s->a);
    free(s->variants);
    memset(s, 0, sizeof *s);
}
