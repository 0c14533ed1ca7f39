/* From finished runs to an ablation's results (results.h): each variant's learning rate chosen
 * on validation, its chosen runs' means with bootstrap intervals, the paired comparison with the
 * baseline (sign-flip test, Holm over the variants), the verdicts, the attention diagnostics. */
#include "tensor/tensor.h"
#include "ablate/claim.h"
#include "ablate/plan.h"
#include "ablate/results.h"
#include "ablate/runner.h"
#include "ablate/stats.h"
#include "io/fileio.h"
#include "io/json.h"
#include "io/strbuf.h"
#include "train/observe.h"
#include "tasks/task.h"
#include "train/run_dir.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { RESAMPLES = QKV_ABLATE_RESAMPLES, SIGNFLIP_RESAMPLES = QKV_ABLATE_SIGNFLIP_RESAMPLES };
#define LEVEL QKV_ABLATE_LEVEL
#define ALPHA QKV_ABLATE_ALPHA

static double num(const cJSON *j, const char *k) {
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(j, k);
    return cJSON_IsNumber(x) ? x->valuedouble : NAN;
}

/* dir/file's JSON (a file the run wrote), NULL when it cannot be read */
static cJSON *read_json(const char *dir, const char *file) {
    char *path = qkv__pathf("%s/%s", dir, file);
    size_t len;
    char *t = path ? qkv__read_file(path, &len, NULL) : NULL;
    free(path);
    cJSON *j = t ? qkv__json_tree(t, len) : NULL;
    free(t);
    return j;
}

/* whether the run in dir read its text as subword pieces (its config.json's task.tokenizer is not
 * "bytes"): its losses are then taken per byte of text, as the sweep compares them */
static bool read_pieces(const char *dir) {
    cJSON *c = read_json(dir, QKV_RUN_CONFIG);
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(c, "task"), "tokenizer");
    bool pieces = cJSON_IsString(t) && strcmp(t->valuestring, "bytes");
    cJSON_Delete(c);
    return pieces;
}

/* a loss in nats: per token, or (pieces) per byte of text, from the bits per byte beside it */
static double per_byte(const cJSON *j, const char *loss, const char *bpb, bool pieces) {
    return pieces ? num(j, bpb) * QKV_LN2 : num(j, loss);
}

/* the evaluations of metrics.jsonl into rr's curves (pieces: the losses per byte of text); -1
 * when out of memory */
static int read_curves(const char *dir, qkv_run_result *rr, bool pieces) {
    char *path = qkv__pathf("%s/%s", dir, QKV_RUN_METRICS);
    size_t len;
    if (!path) return -1;
    char *m = qkv__read_file(path, &len, NULL);
    free(path);
    if (!m) return 0;
    int cap = 0, rc = 0;
    for (char *line = strtok(m, "\n"); line && !rc; line = strtok(NULL, "\n")) {
        cJSON *j = qkv__json_tree(line, strlen(line));
        double acc = num(j, "eval_accuracy");
        if (j && !isnan(acc)) {
            if (rr->n == cap) {
                cap = cap ? 2 * cap : 64;
                long long *s = realloc(rr->step, (size_t)cap * sizeof *s);
                if (s) rr->step = s;
                double **arr[4] = {&rr->eval_acc, &rr->eval_loss, &rr->val_acc, &rr->val_loss};
                for (int k = 0; k < 4 && s; k++) {
                    double *x = realloc(*arr[k], (size_t)cap * sizeof *x);
                    if (x) *arr[k] = x;
                    else s = NULL;
                }
                if (!s) rc = -1;
            }
            if (!rc) {
                rr->step[rr->n] = (long long)num(j, "step");
                rr->eval_acc[rr->n] = acc;
                rr->eval_loss[rr->n] = per_byte(j, "eval_loss", "eval_bpb", pieces);
                rr->val_acc[rr->n] = num(j, "val_accuracy");
                rr->val_loss[rr->n] = per_byte(j, "val_loss", "val_bpb", pieces);
                rr->n++;
            }
        }
        cJSON_Delete(j);
    }
    free(m);
    return rc;
}

/* whether a session of the run in dir began: its directory (made for every run when the sweep is
 * planned) holds a trace of one: a worker's claim, its log, its failure mark or a file qkv train writes */
static bool started(const char *dir) {
    static const char *const TRACES[] = {QKV_CLAIM_FILE, QKV_RUN_LOG, QKV_RUN_FAILED, QKV_RUN_CONFIG,
                                         QKV_RUN_METRICS, QKV_RUN_CHECKPOINT, QKV_RUN_SUMMARY};
    for (size_t i = 0; i < sizeof TRACES / sizeof TRACES[0]; i++) {
        char *path = qkv__pathf("%s/%s", dir, TRACES[i]);
        bool there = !path || access(path, F_OK) == 0; /* out of memory: as if it had begun (said failed) */
        free(path);
        if (there) return true;
    }
    return false;
}

/* a finished run's summary and curves */
static int read_run(const qkv_ablate_plan *p, int r, qkv_run_result *rr, qkv_variant_result *vr) {
    const qkv_ablate_run_spec *rs = &p->runs[r];
    rr->started = started(rs->dir);
    rr->variant = rs->variant;
    rr->lr_index = rs->lr;
    rr->seed_index = rs->seed;
    rr->seed = p->c->seeds[rs->seed];
    rr->lr = p->c->n_lrs ? p->c->lrs[rs->lr] : NAN;
    rr->steps_to_threshold = rr->flat_since = -1;
    rr->eval_bpb = NAN;
    cJSON *s = read_json(rs->dir, QKV_RUN_SUMMARY);
    if (!s) return 0;
    bool pieces = read_pieces(rs->dir);
    rr->final_acc = num(s, "eval_accuracy");
    rr->final_loss = per_byte(s, "eval_loss", "eval_bpb", pieces);
    rr->val_final_acc = num(s, "val_accuracy");
    rr->val_final_loss = per_byte(s, "val_loss", "val_bpb", pieces);
    if (pieces) rr->eval_bpb = num(s, "eval_bpb");
    rr->train_loss = num(s, "train_loss");
    rr->seconds = num(s, "seconds");
    rr->steps = (long long)num(s, "steps");
    const cJSON *verdict = cJSON_GetObjectItemCaseSensitive(s, "verdict");
    const cJSON *trend = cJSON_GetObjectItemCaseSensitive(s, "trend");
    rr->solved = cJSON_IsString(verdict) && !strcmp(verdict->valuestring, "solved");
    rr->improving = !cJSON_IsString(trend) || strcmp(trend->valuestring, "flat");
    double at = num(s, "solved_at"), flat = num(s, "flat_since");
    rr->steps_to_threshold = rr->solved && isfinite(at) ? (long long)at : -1;
    rr->flat_since = isfinite(flat) ? (long long)flat : -1;
    rr->xz_bpb = num(s, "baseline_xz_bpb");
    rr->unigram_bpb = num(s, "baseline_unigram_bpb");
    rr->bytes_per_token = num(s, "bytes_per_token");
    if (!vr->params) { /* the same for every run of the variant */
        vr->params = (int64_t)num(s, "params");
        vr->attn_params = (int64_t)num(s, "attn_params");
    }
    cJSON_Delete(s);
    if (read_curves(rs->dir, rr, pieces)) return -1;
    rr->ok = true;
    return 0;
}

/* a run's number on the sweep's metric: accuracy, or the loss in nats or bits (lower is better) */
static double metric_value(qkv_ablate_metric m, double acc, double loss) {
    return m == QKV_METRIC_ACCURACY ? acc : m == QKV_METRIC_BPB ? loss / QKV_LN2 : loss;
}

void qkv__ablate_rate_stats(qkv_lr_result *lrs, const qkv_run_result *runs, int nl, int ns) {
    for (int l = 0; l < nl; l++) {
        qkv_lr_result *lr = &lrs[l];
        double acc[512], loss[512];
        int k = 0;
        lr->val_acc_min = INFINITY;
        lr->val_acc_max = -INFINITY;
        for (int s = 0; s < ns && k < 512; s++) {
            const qkv_run_result *rr = &runs[l * ns + s];
            if (!rr->ok) continue;
            lr->lr = rr->lr;
            acc[k] = isfinite(rr->val_final_acc) ? rr->val_final_acc : rr->final_acc;
            loss[k] = isfinite(rr->val_final_acc) ? rr->val_final_loss : rr->final_loss;
            lr->val_acc_min = fmin(lr->val_acc_min, acc[k]);
            lr->val_acc_max = fmax(lr->val_acc_max, acc[k]);
            k++;
        }
        lr->runs_ok = k;
        lr->val_acc_mean = qkv_stats_mean(acc, k);
        lr->val_loss_mean = qkv_stats_mean(loss, k);
        if (!k) lr->val_acc_min = lr->val_acc_max = NAN;
    }
}

/* the rate with the best mean validation accuracy, then the lowest mean validation loss, then the
 * first (comparing losses: the lowest mean validation loss, then the first); a run without
 * validation (task.val_fraction 0) counts with its evaluation numbers */
static void choose_lr(qkv_variant_result *vr, const qkv_run_result *all, int v, int nl, int ns,
                      qkv_ablate_metric metric) {
    qkv__ablate_rate_stats(vr->lrs, all + (size_t)v * nl * ns, nl, ns);
    vr->lr_chosen = 0;
    for (int l = 0; l < nl; l++) {
        const qkv_lr_result *lr = &vr->lrs[l], *b = &vr->lrs[vr->lr_chosen];
        bool better = metric == QKV_METRIC_ACCURACY
                          ? lr->val_acc_mean > b->val_acc_mean ||
                                (lr->val_acc_mean == b->val_acc_mean && lr->val_loss_mean < b->val_loss_mean)
                          : lr->val_loss_mean < b->val_loss_mean;
        if (lr->runs_ok && (!b->runs_ok || better)) vr->lr_chosen = l;
    }
    vr->lr = vr->lrs[vr->lr_chosen].lr;
}

static void fmt_range(char *b, size_t n, long long lo, long long hi) {
    if (lo == hi) snprintf(b, n, "%lld", lo);
    else snprintf(b, n, "%lld-%lld", lo, hi);
}

/* whether unsolved run rr is flat at the floor: over the last half of its evaluations, its
 * validation accuracy (its evaluation accuracy without a validation set) never rose more than
 * QKV_FLOOR_MARGIN above floor, the accuracy of a model that never retrieves (NaN: no floor) */
static bool at_floor(const qkv_run_result *rr, double floor) {
    if (!isfinite(floor) || rr->n < 1) return false;
    for (int i = rr->n / 2; i < rr->n; i++) {
        double a = rr->val_acc && isfinite(rr->val_acc[i]) ? rr->val_acc[i] : rr->eval_acc ? rr->eval_acc[i] : NAN;
        if (!isfinite(a) || a > floor + QKV_FLOOR_MARGIN) return false;
    }
    return true;
}

/* the chosen runs over seeds: means, spread, intervals, verdicts (floor: recall's accuracy without
 * retrieval, NaN for another task) */
static void summarise(qkv_variant_result *vr, const qkv_run_result *runs, int ns, qkv_ablate_metric metric,
                      uint64_t seed, double floor) {
    double acc[512] = {0}, loss[512], at[512], secs = 0; /* zeroed: gcc cannot see that only the first m are read */
    bool censored[512];
    int m = 0;
    vr->acc_min = INFINITY;
    vr->budget_min = vr->flat_min = INT64_MAX;
    vr->budget_max = vr->flat_max = -1;
    for (int s = 0; s < ns && m < 512; s++) {
        const qkv_run_result *rr = &runs[s];
        if (!rr->ok) continue;
        acc[m] = rr->final_acc;
        loss[m] = rr->final_loss;
        at[m] = rr->solved ? (double)rr->steps_to_threshold : INFINITY;
        censored[m] = !rr->solved;
        secs += rr->seconds;
        vr->acc_min = fmin(vr->acc_min, rr->final_acc);
        if (rr->solved) {
            vr->solved++;
        } else {
            vr->unsolved++;
            vr->budget_min = rr->steps < vr->budget_min ? rr->steps : vr->budget_min;
            vr->budget_max = rr->steps > vr->budget_max ? rr->steps : vr->budget_max;
            if (metric == QKV_METRIC_ACCURACY && at_floor(rr, floor)) vr->unsolved_floor++;
            else if (rr->improving) vr->unsolved_improving++;
            else {
                vr->flat_min = rr->flat_since < vr->flat_min ? rr->flat_since : vr->flat_min;
                vr->flat_max = rr->flat_since > vr->flat_max ? rr->flat_since : vr->flat_max;
            }
        }
        m++;
    }
    vr->runs_ok = m;
    vr->reached = vr->solved;
    vr->acc_mean = qkv_stats_mean(acc, m);
    vr->loss_mean = qkv_stats_mean(loss, m);
    vr->acc_std = m > 1 ? qkv_stats_sd(acc, m) : 0;
    vr->loss_std = m > 1 ? qkv_stats_sd(loss, m) : 0;
    vr->seconds = m ? secs / m : NAN;
    if (!m) vr->acc_min = NAN;
    qkv_stats_bootstrap_ci(acc, m, RESAMPLES, LEVEL, seed, &vr->acc_ci_lo, &vr->acc_ci_hi);
    qkv_stats_bootstrap_ci(loss, m, RESAMPLES, LEVEL, seed + 1, &vr->loss_ci_lo, &vr->loss_ci_hi);
    double med = qkv_stats_median_censored(at, censored, m);
    vr->steps_median = isfinite(med) ? (long long)med : -1;
    /* "3/5 solved (median step 850, unsolved counted as censored), 2/5 unsolved at 4000, flat since 1500" */
    char *o = vr->verdicts;
    size_t cap = sizeof vr->verdicts, len = 0;
    int not_started = 0;
    for (int s = 0; s < ns; s++) not_started += !runs[s].ok && !runs[s].started;
    int failed = ns - m - not_started;
#define PUT(...) (len += (size_t)snprintf(o + len, len < cap ? cap - len : 0, __VA_ARGS__))
    if (metric != QKV_METRIC_ACCURACY) { /* no threshold: how long, and whether still improving */
        long long lo = INT64_MAX, hi = -1;
        int improving = 0;
        for (int s = 0; s < ns; s++)
            if (runs[s].ok) {
                lo = runs[s].steps < lo ? runs[s].steps : lo;
                hi = runs[s].steps > hi ? runs[s].steps : hi;
                improving += runs[s].improving;
            }
        char b[64];
        if (m) fmt_range(b, sizeof b, lo, hi);
        if (m) PUT("%s steps, %d/%d still improving", b, improving, m);
        if (failed) PUT("%s%d/%d failed", m ? ", " : "", failed, ns);
        if (not_started) PUT("%s%d/%d not started", m || failed ? ", " : "", not_started, ns);
        return;
    }
    if (vr->solved) {
        if (vr->steps_median >= 0)
            PUT("%d/%d solved (median step %lld%s)", vr->solved, ns, vr->steps_median,
                vr->unsolved ? ", unsolved counted as censored" : "");
        else { /* fewer than half solved: say when those did */
            PUT("%d/%d solved (at step", vr->solved, ns);
            for (int s = 0, k = 0; s < ns; s++)
                if (runs[s].ok && runs[s].solved) PUT("%s %lld", k++ ? "," : "", runs[s].steps_to_threshold);
            PUT("; the median is not reached)");
        }
    }
    if (vr->unsolved) {
        char b[64], f[64];
        fmt_range(b, sizeof b, vr->budget_min, vr->budget_max);
        PUT("%s%d/%d unsolved at %s", vr->solved ? ", " : "", vr->unsolved, ns, b);
        int floor_n = vr->unsolved_floor, flat = vr->unsolved - floor_n - vr->unsolved_improving;
        if (flat) fmt_range(f, sizeof f, vr->flat_min, vr->flat_max);
        if (floor_n == vr->unsolved) PUT(", flat at the floor");
        else if (!flat && !floor_n) PUT(", still improving");
        else if (!vr->unsolved_improving && !floor_n) PUT(", flat since %s", f);
        else {
            const char *sep = " (";
            if (vr->unsolved_improving) PUT("%s%d still improving", sep, vr->unsolved_improving), sep = ", ";
            if (flat) PUT("%s%d flat since %s", sep, flat, f), sep = ", ";
            PUT("%s%d flat at the floor)", sep, floor_n);
        }
    }
    if (failed) PUT("%s%d/%d failed", m ? ", " : "", failed, ns);
    if (not_started) PUT("%s%d/%d not started", m || failed ? ", " : "", not_started, ns);
#undef PUT
}

void qkv__ablate_results_free(qkv_ablate_results *res) {
    int nv = res->cfg ? res->cfg->n_variants : 0, n = nv * res->n_lrs * (res->cfg ? res->cfg->n_seeds : 0);
    for (int i = 0; res->all_runs && i < n; i++) {
        qkv_run_result *rr = &res->all_runs[i];
        free(rr->step); free(rr->eval_acc); free(rr->eval_loss); free(rr->val_acc); free(rr->val_loss);
    }
    for (int v = 0; res->v && v < nv; v++) {
        free(res->v[v].lrs);
        free(res->v[v].diag.symmetry_grid);
        free(res->v[v].heat.w);
        free(res->v[v].heat.tokens);
        free(res->v[v].heat.targets);
        free(res->v[v].sample);
    }
    for (int i = 0; !res->all_runs && res->runs && i < nv * (res->cfg ? res->cfg->n_seeds : 0); i++) {
        qkv_run_result *rr = &res->runs[i]; /* without all_runs, the chosen runs own their arrays */
        free(rr->step); free(rr->eval_acc); free(rr->eval_loss); free(rr->val_acc); free(rr->val_loss);
    }
    free(res->all_runs);
    free(res->runs); /* copies of all_runs' entries: their arrays are all_runs' */
    free(res->v);
    free(res->base_config_json);
    memset(res, 0, sizeof *res);
}

/* the attention diagnostics of a variant's chosen runs, summed: of their final models, or of their
 * models at step 0 */
typedef struct diag_acc {
    qkv_diag_sums sums;
    double sym, neg, prev;          /* over every layer, head and run with a number */
    int n_sym, n_neg, n_prev;
    double *grid;                   /* the symmetry per layer and head, over runs (with_grid) */
    int *grid_n, layers, heads;
} diag_acc;

/* o's diagnostics added to *a (its score diagnostics only where it has them) */
static void add_record(diag_acc *a, const qkv_observed *o, bool with_grid) {
    a->sums.diag += o->sums.diag;
    a->sums.first += o->sums.first;
    a->sums.entropy += o->sums.entropy;
    a->sums.entropy_uniform += o->sums.entropy_uniform;
    a->sums.rows += o->sums.rows;
    if (!o->symmetry) return;
    int n = o->layers * o->heads;
    if (with_grid && !a->grid) {
        a->grid = calloc((size_t)n, sizeof *a->grid);
        a->grid_n = calloc((size_t)n, sizeof *a->grid_n);
        a->layers = o->layers;
        a->heads = o->heads;
    }
    bool grid = a->grid && a->grid_n && a->layers == o->layers && a->heads == o->heads;
    for (int i = 0; i < n; i++) {
        if (isfinite(o->symmetry[i])) {
            a->sym += o->symmetry[i];
            a->n_sym++;
            if (grid) a->grid[i] += o->symmetry[i], a->grid_n[i]++;
        }
        if (isfinite(o->negative_mass[i])) a->neg += o->negative_mass[i], a->n_neg++;
        if (o->prev_share && isfinite(o->prev_share[i])) a->prev += o->prev_share[i], a->n_prev++;
    }
}

/* the means of *a (its grid taken over) */
static qkv_attn_diag diag_means(diag_acc *a) {
    double rows = a->sums.rows ? (double)a->sums.rows : NAN;
    qkv_attn_diag d = {.diag_share = a->sums.diag / rows, .first_share = a->sums.first / rows,
                       .entropy = a->sums.entropy / rows, .entropy_uniform = a->sums.entropy_uniform / rows,
                       .symmetry = a->n_sym ? a->sym / a->n_sym : NAN, .negative_mass = a->n_neg ? a->neg / a->n_neg : NAN,
                       .prev_share = a->n_prev ? a->prev / a->n_prev : NAN};
    if (a->grid && a->grid_n) {
        for (int i = 0; i < a->layers * a->heads; i++) a->grid[i] = a->grid_n[i] ? a->grid[i] / a->grid_n[i] : NAN;
        d.symmetry_grid = a->grid;
        d.grid_layers = a->layers;
        d.grid_heads = a->heads;
        a->grid = NULL;
    }
    free(a->grid);
    free(a->grid_n);
    return d;
}

/* run r's recorded attention (observe.h) added to *end and, where the run recorded its step 0 too,
 * that to *start (*no_start counts the runs that did not); with vr, its heatmap and sample into vr.
 * A run without a record of its final model's (older runs, or another example) is said on stderr
 * (unless quiet), with how to record one: 1; 0 when added */
static int observed(const qkv_ablate_plan *p, int r, int example, long long steps, diag_acc *end, diag_acc *start,
                    int *no_start, qkv_variant_result *vr, bool quiet) {
    qkv_observed o;
    qkv_err e;
    int got = qkv__run_observed(p->runs[r].dir, &o, &e);
    if (!got && (o.step != steps || o.example != example))
        got = qkv_err_set(&e, QKV_ERR_FAIL, "%.400s/%s records step %lld and example %d, not the run's step %lld and "
                          "example %d", p->runs[r].dir, QKV_RUN_OBSERVED, o.step, o.example, steps, example);
    if (got) {
        if (!quiet)
            fprintf(stderr, "qkv ablate: no attention diagnostics of %s (%s); qkv ablate CONFIG --out DIR --refresh "
                    "records them\n", p->runs[r].name, got > 0 ? "a run of an older qkv: it recorded none" : e.msg);
        qkv__observed_free(&o);
        return 1;
    }
    add_record(end, &o, true);
    qkv_observed s0; /* its start: only beside its end, so that the change is over the same runs */
    if (!qkv__run_observed_start(p->runs[r].dir, &s0, &e) && s0.step == 0) add_record(start, &s0, false);
    else (*no_start)++;
    qkv__observed_free(&s0);
    if (vr) {
        vr->heat = (qkv_heatmap){o.layers, o.heads, o.T, o.w, o.tokens, o.targets};
        o.w = NULL;
        o.tokens = o.targets = NULL;
        if (o.sample) { /* bytes to display text; a token past the bytes shows as U+FFFD, as NUL does */
            uint8_t *b = malloc((size_t)o.sample_len + 1);
            for (int i = 0; b && i < o.sample_len; i++) b[i] = o.sample[i] >= 0 && o.sample[i] < 256 ? (uint8_t)o.sample[i] : 0;
            vr->sample = b ? qkv__display_text(b, (size_t)o.sample_len) : NULL;
            free(b);
        }
    }
    qkv__observed_free(&o);
    return 0;
}

/* variant v's result: its name and sets, its runs read at every rate and seed (the largest
 * solved_at noted), the rate chosen, its statistics over the chosen runs; -1 out of memory */
static int aggregate_variant(qkv_ablate_results *res, const qkv_ablate_plan *p, int v) {
    const qkv_ablate_config *c = p->c;
    int nl = p->n_lrs, ns = c->n_seeds;
    qkv_variant_result *vr = &res->v[v];
    snprintf(vr->name, sizeof vr->name, "%s", c->variants[v].name);
    for (int i = 0; i < c->variants[v].n_sets; i++) {
        if (i) strncat(vr->sets, " ", sizeof vr->sets - strlen(vr->sets) - 1);
        strncat(vr->sets, c->variants[v].sets[i], sizeof vr->sets - strlen(vr->sets) - 1);
    }
    vr->matched_d_ff = c->variants[v].matched_d_ff;
    vr->baseline_params = c->variants[v].baseline_params;
    vr->lrs = calloc((size_t)nl, sizeof *vr->lrs);
    bool oom = !vr->lrs;
    for (int l = 0; !oom && l < nl; l++)
        for (int s = 0; !oom && s < ns; s++) {
            int r = qkv__ablate_index(p, v, l, s);
            oom = read_run(p, r, &res->all_runs[r], vr) != 0;
            const qkv_run_result *rr = &res->all_runs[r];
            vr->not_started += !rr->started;
            if (rr->ok && rr->solved && rr->steps_to_threshold > res->max_solved_at)
                res->max_solved_at = rr->steps_to_threshold;
        }
    if (oom) return -1;
    choose_lr(vr, res->all_runs, v, nl, ns, c->metric);
    for (int s = 0; s < ns; s++) res->runs[v * ns + s] = res->all_runs[qkv__ablate_index(p, v, vr->lr_chosen, s)];
    summarise(vr, res->runs + v * ns, ns, c->metric, QKV_ABLATE_SEED_MEANS(v), res->no_retrieval);
    vr->xz_bpb = vr->unigram_bpb = NAN;
    for (int s = 0; s < ns && isnan(vr->xz_bpb); s++)
        if (res->runs[v * ns + s].ok) {
            vr->xz_bpb = res->runs[v * ns + s].xz_bpb;
            vr->unigram_bpb = res->runs[v * ns + s].unigram_bpb;
        }
    return 0;
}

/* what is missing: runs not finished, and finished ones the sweep would extend further */
static void count_missing(qkv_ablate_results *res, const qkv_ablate_plan *p) {
    for (int r = 0; r < p->n; r++) {
        qkv_ablate_run_state st;
        bool resume, extend;
        qkv__ablate_run_state(p, r, &st);
        res->missing += !st.done;
        res->to_extend += st.done && qkv__ablate_next(p, r, &st, res->max_solved_at, &resume, &extend) > 0;
    }
}

int qkv__ablate_compare(qkv_variant_result *vr, const double *x, const bool *counted, int nv, int ns, int baseline) {
    double *pv = calloc((size_t)nv + 1, sizeof *pv), *adj = calloc((size_t)nv + 1, sizeof *adj);
    double *a = calloc((size_t)ns * 3 + 1, sizeof *a), *bb = a + ns, *d = bb + ns;
    bool *rej = calloc((size_t)nv + 1, sizeof *rej);
    if (!pv || !adj || !a || !rej) {
        free(pv); free(adj); free(a); free(rej);
        return -1;
    }
    int m = 0, significant = 0;
    for (int v = 0; v < nv; v++) {
        qkv_variant_result *r = &vr[v];
        r->p_value = r->p_holm = r->delta = r->delta_ci_lo = r->delta_ci_hi = NAN;
        r->pairs = 0;
        r->significant = false;
        if (v == baseline) continue;
        int k = 0;
        for (int s = 0; s < ns && k < 512; s++)
            if (counted[v * ns + s] && counted[baseline * ns + s]) {
                a[k] = x[v * ns + s];
                bb[k] = x[baseline * ns + s];
                d[k] = a[k] - bb[k];
                k++;
            }
        uint64_t seed = QKV_ABLATE_SEED_PAIRED(v);
        r->pairs = k;
        r->delta = qkv_stats_mean(d, k);
        qkv_stats_bootstrap_ci_paired(a, bb, k, RESAMPLES, LEVEL, seed, &r->delta_ci_lo, &r->delta_ci_hi);
        r->p_value = k ? qkv_stats_signflip_p(d, k, SIGNFLIP_RESAMPLES, seed + 1) : NAN;
        pv[m++] = r->p_value;
    }
    qkv_stats_holm(pv, m, ALPHA, adj, rej);
    for (int v = 0, k = 0; v < nv; v++) {
        if (v == baseline) continue;
        vr[v].p_holm = adj[k];
        vr[v].significant = rej[k] && isfinite(vr[v].p_value);
        significant += vr[v].significant;
        k++;
    }
    free(pv); free(adj); free(a); free(rej);
    return significant;
}

/* every variant against the baseline on the sweep's metric, over the seeds both finished; -1 out of memory */
static int compare_variants(qkv_ablate_results *res, const qkv_ablate_config *c) {
    int n = c->n_variants * c->n_seeds;
    double *x = calloc((size_t)n + 1, sizeof *x);
    bool *ok = calloc((size_t)n + 1, sizeof *ok);
    for (int k = 0; x && ok && k < n; k++) {
        x[k] = metric_value(c->metric, res->runs[k].final_acc, res->runs[k].final_loss);
        ok[k] = res->runs[k].ok;
    }
    int sig = x && ok ? qkv__ablate_compare(res->v, x, ok, c->n_variants, c->n_seeds, c->baseline) : -1;
    free(x);
    free(ok);
    if (sig < 0) return -1;
    res->significant = sig;
    return 0;
}

/* attention diagnostics of the chosen runs, the heatmap of the first seed's and (the text
 * task) its sample: as the runs recorded them (train/observe.h); no model is built here */
static void observe_variants(qkv_ablate_results *res, const qkv_ablate_plan *p, bool quiet) {
    const qkv_ablate_config *c = p->c;
    int ns = c->n_seeds;
    for (int v = 0; v < c->n_variants; v++) {
        qkv_variant_result *vr = &res->v[v];
        diag_acc end = {0}, start = {0};
        for (int s = 0; s < ns; s++) {
            int r = qkv__ablate_index(p, v, vr->lr_chosen, s);
            if (!res->all_runs[r].ok) continue;
            if (observed(p, r, c->example, res->all_runs[r].steps, &end, &start, &res->unobserved_start,
                         s == 0 ? vr : NULL, quiet))
                res->unobserved++;
        }
        vr->diag = diag_means(&end);
        /* results.json carries the start's diagonal and previous-position shares and score numbers */
        vr->diag_start = diag_means(&start);
        vr->diag_start.first_share = vr->diag_start.entropy = vr->diag_start.entropy_uniform = NAN;
    }
    res->sample_prompt = QKV_OBSERVE_SAMPLE_PROMPT;
    res->sample_bytes = QKV_OBSERVE_SAMPLE_BYTES;
    res->sample_temperature = QKV_OBSERVE_SAMPLE_TEMPERATURE;
    res->sample_seed = QKV_OBSERVE_SAMPLE_SEED;
}

/* recall's floors of accuracy (qkv_task_floors) as the baseline's task draws examples, NaN for
 * another task, before the verdicts that name them */
static void floors(qkv_ablate_results *res, const qkv_ablate_config *c) {
    qkv_config bc;
    qkv_err ignored;
    res->chance = res->no_retrieval = NAN;
    if (!qkv__ablate_variant_config(c, c->baseline, &bc, &ignored))
        qkv_task_floors(&bc.task, QKV_FLOOR_EXAMPLES, &res->chance, &res->no_retrieval);
}

/* the task and model size the variants share, as the baseline has them (qkv summarize puts
 * ablations of one task at several sizes side by side), and the first finished run's config */
static void shared_config(qkv_ablate_results *res, const qkv_ablate_plan *p) {
    const qkv_ablate_config *c = p->c;
    qkv_config bc;
    qkv_err ignored; /* its message: without the config, these fields stay empty */
    if (!qkv__ablate_variant_config(c, c->baseline, &bc, &ignored)) {
        snprintf(res->task, sizeof res->task, "%s", QKV_TASK_NAMES[bc.task.kind]);
        res->d_model = bc.model.d_model;
        res->layers = bc.model.layers;
        res->heads = bc.model.heads;
        if (bc.task.kind == QKV_TASK_TEXT) { /* how its text was read */
            snprintf(res->tokenizer, sizeof res->tokenizer, "%s", QKV_TOKENIZER_NAMES[bc.task.tokenizer]);
            res->pieces = bc.task.tokenizer == QKV_TOKENIZER_BYTES ? 0 : bc.task.pieces;
        }
    }
    res->bytes_per_token = NAN;
    for (int r = 0; r < p->n && isnan(res->bytes_per_token) && res->tokenizer[0]; r++)
        if (res->all_runs[r].ok) res->bytes_per_token = res->all_runs[r].bytes_per_token;
    snprintf(res->pilot, sizeof res->pilot, "%s", c->pilot);
    snprintf(res->rate_rule, sizeof res->rate_rule, "%s", c->rate_rule);
    memcpy(res->rate_grid, c->rate_grid, sizeof res->rate_grid);
    res->n_rate_grid = c->n_rate_grid;
    memcpy(res->pilot_seeds, c->pilot_seeds, sizeof res->pilot_seeds);
    res->n_pilot_seeds = c->n_pilot_seeds;
    for (int r = 0; r < p->n && !res->base_config_json; r++)
        if (res->all_runs[r].ok) {
            char *path = qkv__pathf("%s/%s", p->runs[r].dir, QKV_RUN_CONFIG);
            size_t len;
            res->base_config_json = path ? qkv__read_file(path, &len, NULL) : NULL;
            free(path);
        }
}

int qkv__ablate_aggregate(qkv_ablate_results *res, const qkv_ablate_plan *p, bool quiet, qkv_err *e) {
    const qkv_ablate_config *c = p->c;
    int nv = c->n_variants, nl = p->n_lrs, ns = c->n_seeds;
    res->cfg = c;
    res->n_lrs = nl;
    res->v = calloc((size_t)nv, sizeof *res->v);
    res->all_runs = calloc((size_t)p->n, sizeof *res->all_runs);
    res->runs = calloc((size_t)nv * (size_t)ns, sizeof *res->runs);
    res->max_solved_at = -1;
    floors(res, c);
    bool oom = !res->v || !res->all_runs || !res->runs;
    for (int v = 0; !oom && v < nv; v++) oom = aggregate_variant(res, p, v) != 0;
    if (!oom) count_missing(res, p);
    if (oom || compare_variants(res, c))
        return qkv_err_set(e, QKV_ERR_FAIL, "out of memory");
    observe_variants(res, p, quiet);
    shared_config(res, p);
    return 0;
}
