/* Run verdicts (see verdict.h). */
#include "train/verdict.h"
#include "io/fileio.h"
#include "io/strbuf.h"
#include "io/json.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* smallest finite value of x[lo, hi), +inf if none */
static double best(const double *x, int lo, int hi) {
    double b = INFINITY;
    for (int i = lo; i < hi; i++)
        if (isfinite(x[i]) && x[i] < b) b = x[i];
    return b;
}

void qkv_verdict_compute(const long long *step, const double *acc, const double *loss, int n, double threshold,
                         long long budget, bool on_validation, qkv_verdict *v) {
    memset(v, 0, sizeof *v);
    v->budget = budget;
    v->on_validation = on_validation;
    v->evaluations = n;
    v->solved_at = -1;
    for (int i = 0; i < n && v->solved_at < 0; i++)
        if (acc[i] >= threshold) v->solved_at = step[i];
    v->solved = v->solved_at >= 0;
    /* trend: the last quarter against the quarter before (at least one evaluation each) */
    int q = n / 4 > 0 ? n / 4 : 1;
    v->improving = n < 2 || best(loss, n - q, n) <= (1 - QKV_TREND_GAIN) * best(loss, n - 2 * q > 0 ? n - 2 * q : 0, n - q);
    /* flat since the earliest step X whose best-so-far no later evaluation beats by 2%: once it
     * holds it holds for every later X (the best after X only rises, the best by X only falls) */
    v->flat_since = -1;
    if (!v->improving) {
        double after = INFINITY; /* best of evaluations i .. n-1 */
        for (int i = n - 1; i >= 0; i--) {
            if (isfinite(loss[i]) && loss[i] < after) after = loss[i];
            if (isfinite(loss[i]) && after >= (1 - QKV_TREND_GAIN) * best(loss, 0, i + 1)) v->flat_since = step[i];
        }
    }
}

static double num(const cJSON *j, const char *k) {
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(j, k);
    return cJSON_IsNumber(x) ? x->valuedouble : NAN;
}

int qkv_verdict_read(const char *metrics_path, double threshold, long long budget, qkv_verdict *v, qkv_err *e) {
    size_t len;
    char *text = qkv__read_file(metrics_path, &len, e);
    if (!text) return -1;
    int n = 0, cap = 0, nval = 0;
    long long *step = NULL;
    double *acc[2] = {NULL, NULL}, *loss[2] = {NULL, NULL}; /* [0] evaluation, [1] validation */
    int rc = 0;
    for (char *line = strtok(text, "\n"); line && !rc; line = strtok(NULL, "\n")) {
        cJSON *j = qkv__json_tree(line, strlen(line));
        double ea = num(j, "eval_accuracy");
        if (j && !isnan(ea)) {
            if (n == cap) {
                cap = cap ? 2 * cap : 64;
                long long *s2 = realloc(step, (size_t)cap * sizeof *s2);
                if (s2) step = s2;
                for (int k = 0; k < 2 && s2; k++) {
                    double *a2 = realloc(acc[k], (size_t)cap * sizeof *a2);
                    if (a2) acc[k] = a2;
                    double *l2 = a2 ? realloc(loss[k], (size_t)cap * sizeof *l2) : NULL;
                    if (l2) loss[k] = l2;
                    if (!a2 || !l2) s2 = NULL;
                }
                if (!s2) {
                    qkv_err_set(e, QKV_ERR_FAIL, "%s: out of memory", qkv__shown(metrics_path).s);
                    rc = -1;
                }
            }
            if (!rc) {
                step[n] = (long long)num(j, "step");
                acc[0][n] = ea;
                loss[0][n] = num(j, "eval_loss");
                acc[1][n] = num(j, "val_accuracy");
                loss[1][n] = num(j, "val_loss");
                nval += !isnan(acc[1][n]);
                n++;
            }
        }
        cJSON_Delete(j);
    }
    bool val = n > 0 && nval == n; /* every evaluation validated too */
    if (!rc) qkv_verdict_compute(step, acc[val], loss[val], n, threshold, budget, val, v);
    free(text);
    free(step);
    for (int k = 0; k < 2; k++) { free(acc[k]); free(loss[k]); }
    return rc;
}

void qkv_verdict_describe(const qkv_verdict *v, char *buf, int n) {
    if (v->solved) snprintf(buf, (size_t)n, "solved at %lld", v->solved_at);
    else if (v->improving) snprintf(buf, (size_t)n, "unsolved at %lld, improving", v->budget);
    else snprintf(buf, (size_t)n, "unsolved at %lld, flat since %lld", v->budget, v->flat_since);
}
