/* qkv summarize's columns (summary.h): each ablation's results.json read into the results model
 * by its reader (ablate/results.h), and its numbers in the column's metric (ablate/findings.h):
 * accuracy, or a loss as the ablation published them, or bits per byte for text (computed from
 * the runs where the ablation published none). */
#include "report/summary.h"

#include <stdlib.h>
#include <string.h>

bool qkv__summary_partial(const qkv_sum_ablation *a) { return a->r.missing > 0 || a->r.to_extend > 0; }

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
        const char *task = a->r.task;
        if (task[0] && a->r.d_model > 0) snprintf(a->label, sizeof a->label, "%s d_model=%d", task, a->r.d_model);
        else if (task[0]) snprintf(a->label, sizeof a->label, "%s", task);
        else snprintf(a->label, sizeof a->label, "%.150s", a->cfg.title);
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

/* a's variant names into the summary's list (new names at its end) */
static int merge(qkv_summary *s, const qkv_sum_ablation *a) {
    for (int i = 0; i < a->cfg.n_variants; i++) {
        int k = 0;
        while (k < s->n_variants && strcmp(s->variants[k], a->r.v[i].name)) k++;
        if (k < s->n_variants) continue;
        char(*nn)[QKV_ABLATE_NAME] = realloc(s->variants, ((size_t)s->n_variants + 1) * sizeof *nn);
        if (!nn) return -1;
        s->variants = nn;
        memcpy(s->variants[s->n_variants++], a->r.v[i].name, QKV_ABLATE_NAME);
    }
    return 0;
}

/* dir's results into a, and its numbers in the column's metric; 0 or -1 with e */
static int load_one(qkv_sum_ablation *a, const char *dir, qkv_err *e) {
    if (strlen(dir) >= sizeof a->dir)
        return qkv_err_set(e, QKV_ERR_FAIL, "%.200s...: path too long", dir);
    snprintf(a->dir, sizeof a->dir, "%s", dir);
    if (qkv__ablate_results_read(&a->r, &a->cfg, dir, e)) return -1;
    a->text = !strcmp(a->r.task, "text");
    a->metric = a->text ? QKV_METRIC_BPB : a->cfg.metric;
    a->stats = calloc((size_t)a->cfg.n_variants, sizeof *a->stats);
    if (!a->stats || qkv__ablate_metric_stats(&a->r, a->metric, a->stats, &a->recomputed, &a->bpb_from_loss))
        return qkv_err_set(e, QKV_ERR_FAIL, "%s/results.json: out of memory", dir);
    return 0;
}

int qkv__summary_load(qkv_summary *s, const char *const *dirs, int n, qkv_err *e) {
    memset(s, 0, sizeof *s);
    if (n < 1)
        return qkv_err_set(e, QKV_ERR_FAIL, "no ablation directories");
    if (!(s->a = calloc((size_t)n, sizeof *s->a)))
        return qkv_err_set(e, QKV_ERR_FAIL, "out of memory");
    for (int i = 0; i < n; i++) {
        qkv_sum_ablation *a = &s->a[i];
        s->n = i + 1; /* freed with the summary from here */
        if (load_one(a, dirs[i], e)) goto fail;
        const char *baseline = a->cfg.variants[a->cfg.baseline].name;
        if (i == 0) snprintf(s->baseline, sizeof s->baseline, "%s", baseline);
        else if (strcmp(baseline, s->baseline)) {
            qkv_err_set(e, QKV_ERR_FAIL, "%s/results.json: baseline: \"%s\" differs from %s/results.json's \"%s\" "
                        "(every column is compared with one baseline: summarize them separately)", dirs[i], baseline,
                        dirs[0], s->baseline);
            goto fail;
        }
        if (merge(s, a)) goto oom;
    }
    for (int i = 0; i < n; i++) { /* where each of the summary's variants is in each ablation */
        qkv_sum_ablation *a = &s->a[i];
        if (!(a->at = malloc((size_t)s->n_variants * sizeof *a->at))) goto oom;
        for (int j = 0; j < s->n_variants; j++) {
            a->at[j] = -1;
            for (int k = 0; k < a->cfg.n_variants; k++)
                if (!strcmp(s->variants[j], a->r.v[k].name)) a->at[j] = k;
        }
    }
    label_columns(s);
    return 0;
oom:
    qkv_err_set(e, QKV_ERR_FAIL, "out of memory");
fail:
    qkv__summary_free(s);
    return -1;
}

void qkv__summary_free(qkv_summary *s) {
    for (int i = 0; s->a && i < s->n; i++) {
        qkv__ablate_results_free(&s->a[i].r);
        qkv_ablate_config_free(&s->a[i].cfg);
        free(s->a[i].stats);
        free(s->a[i].at);
    }
    free(s->a);
    free(s->variants);
    memset(s, 0, sizeof *s);
}
