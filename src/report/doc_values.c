/* One number of an ablation's results, written inline in a document's sentence:
 *
 *   <!-- qkv value: DIR VARIANT FIELD -->TEXT<!-- end -->
 *
 * TEXT is FIELD of VARIANT in DIR/results.json (read into the one results model), formatted as
 * below; qkv summarize --check-doc compares it, --update-doc rewrites it (summary_doc.c). So a
 * sentence of prose, in any language, carries numbers that make test checks against the
 * committed results. FIELD gap@STEP is the cell of that step in the gap table (doc_gaps.c).
 * The model's size is a recorded number too: params and attn_params count it, attn_share is the
 * attention's part of it and saved what a variant does without, both of them shares. FIELD
 * fisher:OTHER is Fisher's exact p of the variant's solved and unsolved seeds against OTHER's (of
 * the same DIR), the test a contrast of two solved counts implies; bpb a text variant's mean bits
 * per byte, the scale beside its gap. Claims (doc_claims.c) compare these numbers. */
#include "report/summary.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ablate/stats.h"
#include "io/strbuf.h"

/* F_DELTA: in points for an accuracy, else (bits per byte, a loss) signed with 3 decimals;
 * F_COUNT: an integer with thousands separators, as the tables print parameter counts */
typedef enum { F_INT, F_COUNT, F_STEP, F_PCT, F_PCT0, F_DELTA, F_LR, F_2, F_3, F_P } field_format;

/* where a field's number comes from: the variant's key in results.json, or computed */
typedef enum { S_KEY, S_SEEDS, S_BUDGET, S_ATTN_SHARE, S_SAVED, S_BPB, S_SOLVED_SHARE, S_LR, S_BYTES_PER_TOKEN } field_source;

/* a field: its name in a marker, what it formats as, where its number comes from and the key of
 * results.json (ablate/results_schema.h) it is read from (S_KEY: the variant object's key that
 * holds it, report_fields.c's list) or named after. A field named as its key has no name of its
 * own (NULL): a marker says the key. */
typedef struct field {
    const char *name;
    field_format fmt;
    field_source src;
    qkv_results_key key;
} field;

#define NO_KEY QKV_RK_COUNT

static const field FIELDS[] = {
    {NULL, F_INT, S_KEY, QKV_RK_SOLVED},                    /* seeds that solved the task */
    {NULL, F_INT, S_KEY, QKV_RK_UNSOLVED},                  /* seeds that did not within their budget */
    {NULL, F_INT, S_SEEDS, QKV_RK_SEEDS},                   /* the ablation's seeds: how many */
    {"runs", F_INT, S_KEY, QKV_RK_RUNS_OK},                 /* finished runs at the chosen rate */
    {"median", F_STEP, S_KEY, QKV_RK_STEPS_TO_THRESHOLD},   /* the median solve step (unsolved counted as later) */
    {NULL, F_STEP, S_BUDGET, QKV_RK_BUDGET},                /* the largest budget of its unsolved runs */
    {"acc", F_PCT, S_KEY, QKV_RK_ACC_MEAN},                 /* final evaluation accuracy, mean, in percent */
    {NULL, F_PCT, S_KEY, QKV_RK_ACC_MIN},                   /* the worst seed's final accuracy, in percent */
    {"bpb", F_3, S_BPB, NO_KEY},                            /* bits per byte of text: the mean final loss / ln 2 */
    {"delta", F_DELTA, S_KEY, QKV_RK_DELTA_VS_BASELINE},    /* the paired difference from the baseline (points, bits) */
    {NULL, F_P, S_KEY, QKV_RK_P_HOLM},                      /* the sign-flip p-value after Holm's correction */
    {NULL, F_LR, S_LR, QKV_RK_LR},                          /* the chosen learning rate (or the variant's own) */
    {"symmetry", F_2, S_KEY, QKV_RK_SCORE_SYMMETRY},        /* the attention diagnostics at the end ... */
    {"negative", F_2, S_KEY, QKV_RK_SCORE_NEGATIVE_SHARE},
    {"diagonal", F_3, S_KEY, QKV_RK_DIAG_SHARE},
    {"previous", F_3, S_KEY, QKV_RK_PREV_SHARE},
    {"symmetry0", F_2, S_KEY, QKV_RK_START_SCORE_SYMMETRY}, /* ... and at step 0 */
    {"negative0", F_2, S_KEY, QKV_RK_START_SCORE_NEGATIVE_SHARE},
    {"diagonal0", F_3, S_KEY, QKV_RK_START_DIAG_SHARE},
    {"previous0", F_3, S_KEY, QKV_RK_START_PREV_SHARE},
    {NULL, F_COUNT, S_KEY, QKV_RK_PARAMS},                  /* the model's parameters */
    {NULL, F_COUNT, S_KEY, QKV_RK_ATTN_PARAMS},             /* its attention's (every layer, the output map too) */
    {"attn_share", F_PCT, S_ATTN_SHARE, NO_KEY},            /* attn_params / params, in percent */
    {"saved", F_PCT, S_SAVED, NO_KEY},                      /* 1 - params / the baseline's params, in percent */
    {"solved_pct", F_PCT0, S_SOLVED_SHARE, NO_KEY},         /* solved / (solved + unsolved), in whole percent */
    {NULL, F_2, S_BYTES_PER_TOKEN, QKV_RK_BYTES_PER_TOKEN}, /* how the text was read: its evaluation bytes per token */
};
#define NFIELDS ((int)(sizeof FIELDS / sizeof FIELDS[0]))

/* field f's name in a marker */
static const char *name_of(const field *f) { return f->name ? f->name : qkv__results_keys[f->key].key; }

/* field f of variant i in r (NaN where r holds none: a share of a size not recorded, 0) */
static double number(const field *f, const qkv_ablate_results *r, int i) {
    const qkv_variant_result *v = &r->v[i], *base = &r->v[r->cfg->baseline];
    switch (f->src) {
    case S_SEEDS: return r->cfg->n_seeds;
    case S_BUDGET: return v->budget_max == INT64_MAX ? -1.0 : (double)v->budget_max;
    case S_ATTN_SHARE: return v->params > 0 ? (double)v->attn_params / (double)v->params : NAN;
    case S_SAVED: return v->params > 0 && base->params > 0 ? 1.0 - (double)v->params / (double)base->params : NAN;
    case S_SOLVED_SHARE: return v->solved + v->unsolved > 0 ? (double)v->solved / (v->solved + v->unsolved) : NAN;
    case S_LR: { /* without a grid the rate is the variant's own setting: its optim.lr= override */
        const char *set = strstr(v->sets, "optim.lr=");
        if (!isfinite(v->lr) && set && (set == v->sets || set[-1] == ' ')) return strtod(set + strlen("optim.lr="), NULL);
        break;
    }
    case S_BYTES_PER_TOKEN: return r->tokenizer[0] ? r->bytes_per_token : NAN;
    case S_BPB: return r->cfg->metric == QKV_METRIC_BPB ? v->loss_mean / log(2.0) : NAN;
    case S_KEY: break;
    }
    qkv_report_value x = qkv__report_variant_value(r, i, f->key);
    return x.kind == QKV_REPORT_NUM ? x.num : x.kind == QKV_REPORT_INT ? (double)x.i : NAN;
}

/* the field named `name` (NULL: none; fisher:OTHER is none of FIELDS) */
static const field *field_named(const char *name) {
    for (int i = 0; i < NFIELDS; i++)
        if (!strcmp(name_of(&FIELDS[i]), name)) return &FIELDS[i];
    return NULL;
}

/* the index of the variant named `name` in r, or -1 */
static int variant_index(const qkv_ablate_results *r, const char *name) {
    for (int v = 0; v < r->cfg->n_variants; v++)
        if (!strcmp(r->v[v].name, name)) return v;
    return -1;
}

/* fisher:OTHER of variant v: Fisher's exact p of its solved and unsolved seeds against OTHER's;
 * NaN (with e) when r has no variant OTHER */
static double fisher(const qkv_ablate_results *r, int v, const char *other, qkv_err *e) {
    int o = variant_index(r, other);
    if (o < 0) {
        qkv_err_set(e, QKV_ERR_FAIL, "fisher:%s: no variant '%s'", other, other);
        return NAN;
    }
    return qkv_stats_fisher_p(r->v[v].solved, r->v[v].unsolved, r->v[o].solved, r->v[o].unsolved);
}

int qkv__doc_number(const qkv_ablate_results *r, int v, const char *name, double *x, qkv_err *e) {
    const field *f = field_named(name);
    if (f) *x = number(f, r, v);
    else if (!strncmp(name, "fisher:", 7) && name[7]) {
        *x = fisher(r, v, name + 7, e);
        if (isnan(*x)) return -1;
    } else return qkv_err_set(e, QKV_ERR_FAIL, "unknown field '%s' (a value marker's, or fisher:OTHER)", name);
    return 0;
}

/* x as the field's format, into out ("—" for a step never reached or a number not recorded) */
static void format(field_format f, double x, bool accuracy, char *out, size_t n) {
    if (isnan(x) || (f == F_STEP && x < 0)) {
        snprintf(out, n, "—");
        return;
    }
    switch (f) {
    case F_INT: case F_STEP: snprintf(out, n, "%.0f", x); break;
    case F_COUNT: qkv__fmt_count(out, n, (long long)x); break;
    case F_PCT: snprintf(out, n, "%.1f", 100 * x); break;
    case F_PCT0: snprintf(out, n, "%.0f", 100 * x); break;
    case F_DELTA: accuracy ? snprintf(out, n, "%+.1f", 100 * x) : snprintf(out, n, "%+.3f", x); break;
    case F_LR: snprintf(out, n, "%g", x); break;
    case F_2: snprintf(out, n, "%.2f", x + 0.0); break; /* + 0.0: no "-0.00" */
    case F_3: snprintf(out, n, "%.3f", x + 0.0); break;
    case F_P: snprintf(out, n, "%.3g", x); break;
    }
    if (!strcmp(out, "-0.00") || !strcmp(out, "-0.000") || !strcmp(out, "-0.0")) memmove(out, out + 1, strlen(out));
}

/* field i's name, as a choice in a message */
static void field_item(qkv_strbuf *b, const void *f, int i) { qkv__strbuf_puts(b, name_of((const field *)f + i)); }

char *qkv__doc_value(char *words, qkv_err *e) {
    char *save = NULL, *dir = strtok_r(words, " \t", &save), *name = strtok_r(NULL, " \t", &save),
         *fname = strtok_r(NULL, " \t", &save), *more = strtok_r(NULL, " \t", &save);
    if (!dir || !name || !fname || more) {
        qkv_err_set(e, QKV_ERR_FAIL, "qkv value: expected DIR VARIANT FIELD");
        return NULL;
    }
    const field *f = field_named(fname);
    char *end;
    long long step = !strncmp(fname, "gap@", 4) && fname[4] ? strtoll(fname + 4, &end, 10) : -1;
    bool by_fisher = !strncmp(fname, "fisher:", 7) && fname[7];
    if (!f && !by_fisher && (step < 0 || *end)) {
        qkv_strbuf list;
        qkv__strbuf_init(&list);
        qkv__strbuf_list(&list, NFIELDS, field_item, FIELDS);
        qkv_err_set(e, QKV_ERR_FAIL, "qkv value: unknown field '%s' (expected one of %s, gap@STEP, fisher:OTHER)", fname,
                    qkv__strbuf_str(&list));
        qkv__strbuf_free(&list);
        return NULL;
    }
    qkv_ablate_results r;
    qkv_ablate_config c;
    if (qkv__ablate_results_read(&r, &c, dir, e)) return NULL;
    char *out = NULL;
    int v = variant_index(&r, name);
    double x;
    qkv_err why;
    if (v < 0) qkv_err_set(e, QKV_ERR_FAIL, "qkv value: %s/results.json has no variant '%s'", dir, name);
    else if (!(out = malloc(64))) qkv_err_set(e, QKV_ERR_FAIL, "out of memory");
    else if (f) format(f->fmt, number(f, &r, v), c.metric == QKV_METRIC_ACCURACY, out, 64);
    else if (by_fisher) {
        if (qkv__doc_number(&r, v, fname, &x, &why)) {
            qkv_err_set(e, QKV_ERR_FAIL, "qkv value: %s/results.json: %s", dir, why.msg);
            free(out);
            out = NULL;
        } else format(F_P, x, false, out, 64);
    }
    else { /* gap@STEP: the gap table's cell (doc_gaps.c) */
        qkv_ablate_gaps g;
        if (qkv__ablate_gaps(&g, &r, &step, 1, &why)) {
            qkv_err_set(e, QKV_ERR_FAIL, "qkv value: %s/results.json: %s", dir, why.msg);
            free(out);
            out = NULL;
        } else qkv__doc_gap_cell(&g.at[v], v == c.baseline, out, 64);
        qkv__ablate_gaps_free(&g);
    }
    qkv__ablate_results_free(&r);
    qkv_ablate_config_free(&c);
    return out;
}
