/* The report's machine-readable fields: per variant (results.csv's columns and the keys of
 * results.json's variant objects) and per run (the keys of its run objects). Each list gives a
 * field's CSV and JSON names, how its value is read and from where; adding a column is adding a
 * line to a list (see report_data.h). Statistics of a variant without a finished run are
 * missing, not zero; so are a run's results when it did not finish. */
#include "report/report_data.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* how a field's value is read from its struct (a qkv_variant_result or a qkv_run_result) */
typedef enum how {
    NUM,                /* a double; a non-finite one is missing */
    STAT,               /* a double over the variant's finished runs: missing when it has none */
    RESULT,             /* a double of a run: missing when it did not finish */
    INT,                /* an int */
    I64,                /* an int64_t */
    LL,                 /* a long long */
    STEPS,              /* a long long step count: missing when negative (never reached) */
    STR,                /* a char array */
    BOOL,               /* a bool */
    MEDIAN_STEPS,       /* the variant's median steps to the threshold (missing without a finished run) */
    BUDGET,             /* the steps the longest of the variant's chosen runs ran */
    SIGNIFICANT,        /* significant after Holm (missing for the baseline) */
    MATCHED,            /* an int that is 0 when the variant is not a matched control: missing then */
    BASELINE_PARAMS,    /* the baseline's count, for a matched control only */
    CHOSEN,             /* whether a run is at its variant's chosen rate */
    VERDICT,            /* "solved" or "unsolved" for a finished run */
    RUN_BUDGET,         /* the steps a finished run ran */
    TREND,              /* "improving" or "flat" for a finished run */
    NOT_STARTED,        /* an int said in a partial report only (missing when no run is missing, or negative) */
} how;

typedef struct field {
    qkv_report_field name;
    how how;
    size_t at;          /* the value's offset in its struct */
    bool optional;      /* left out (column and key) where no row has a value: what older runs did not record */
} field;

#define V(csv, json, how, member) {{csv, json, NULL}, how, offsetof(qkv_variant_result, member), false}
#define V_OPT(name, how, member) {{name, name, NULL}, how, offsetof(qkv_variant_result, member), true}
#define R(json, how, member) {{NULL, json, NULL}, how, offsetof(qkv_run_result, member), false}

/* CSV columns in CSV order, JSON keys in JSON order; "sets" appears twice because it is the 18th
 * CSV column (after the first columns results.csv had, so that a reader of those by position
 * still finds them) but the second JSON key */
static const field VARIANT_FIELDS[] = {
    V("variant", "name", STR, name),
    V(NULL, "sets", STR, sets),
    V("attn_params", "attn_params", I64, attn_params),
    V("params", "params", I64, params),
    V(NULL, "runs_ok", INT, runs_ok),
    V("acc_mean", "acc_mean", STAT, acc_mean),
    V("acc_std", "acc_std", STAT, acc_std),
    V("acc_min", "acc_min", STAT, acc_min),
    V("loss_mean", "loss_mean", STAT, loss_mean),
    V("loss_std", "loss_std", STAT, loss_std),
    {{"steps_to_threshold", "steps_to_threshold", "never"}, MEDIAN_STEPS, offsetof(qkv_variant_result, steps_median), false},
    V(NULL, "reached", INT, reached),
    V("seconds", "seconds", NUM, seconds),
    V("diag_share", "diag_share", STAT, diag.diag_share),
    V("first_share", "first_share", STAT, diag.first_share),
    V("entropy", "entropy", STAT, diag.entropy),
    V(NULL, "entropy_uniform", NUM, diag.entropy_uniform), /* a property of the task: kept for failed variants */
    V("sets", NULL, STR, sets),
    V("verdicts", "verdicts", STR, verdicts),
    V("budget", "budget", BUDGET, name),
    V("lr", "lr", STAT, lr), /* choose_lr leaves it 0 without a finished run */
    V("acc_ci_low", "acc_ci_low", STAT, acc_ci_lo),
    V("acc_ci_high", "acc_ci_high", STAT, acc_ci_hi),
    V("loss_ci_low", "loss_ci_low", STAT, loss_ci_lo),
    V("loss_ci_high", "loss_ci_high", STAT, loss_ci_hi),
    V("delta_vs_baseline", "delta_vs_baseline", NUM, delta),
    V("delta_ci_low", "delta_ci_low", NUM, delta_ci_lo),
    V("delta_ci_high", "delta_ci_high", NUM, delta_ci_hi),
    V("p_value", "p_value", NUM, p_value),
    V("p_holm", "p_holm", NUM, p_holm),
    V("significant", "significant", SIGNIFICANT, significant),
    V("solved", "solved", INT, solved),
    V("unsolved", "unsolved", INT, unsolved),
    V("matched_d_ff", "matched_d_ff", MATCHED, matched_d_ff),
    V("baseline_params", "baseline_params", BASELINE_PARAMS, baseline_params),
    V("score_symmetry", "score_symmetry", STAT, diag.symmetry),
    V("score_negative_share", "score_negative_share", STAT, diag.negative_mass),
    V_OPT("prev_share", STAT, diag.prev_share),
    /* the same at step 0, before the first update (train/observe.h) */
    V_OPT("start_diag_share", STAT, diag_start.diag_share),
    V_OPT("start_prev_share", STAT, diag_start.prev_share),
    V_OPT("start_score_symmetry", STAT, diag_start.symmetry),
    V_OPT("start_score_negative_share", STAT, diag_start.negative_mass),
    V_OPT("runs_not_started", NOT_STARTED, not_started), /* of every rate's runs */
};

/* JSON keys of a run object (runs are not in the CSV); its curve follows them */
static const field RUN_FIELDS[] = {
    R("seed", LL, seed),
    R("lr", NUM, lr),
    R("chosen", CHOSEN, lr_index),
    R("ok", BOOL, ok),
    R("final_acc", RESULT, final_acc),
    R("final_loss", RESULT, final_loss),
    R("val_acc", RESULT, val_final_acc),
    R("val_loss", RESULT, val_final_loss),
    R("verdict", VERDICT, solved),
    R("steps_to_threshold", STEPS, steps_to_threshold),
    R("budget", RUN_BUDGET, steps),
    R("trend", TREND, improving),
    R("flat_since", STEPS, flat_since),
    R("seconds", RESULT, seconds),
};

/* field f's value in its struct at base: variant i's (run NULL) or run's */
static qkv_report_value value(const field *f, const void *base, const qkv_ablate_results *r, int i,
                              const qkv_run_result *run) {
#define AT(type) (*(const type *)(const void *)((const char *)base + f->at))
    const qkv_variant_result *v = run ? &r->v[run->variant] : &r->v[i];
    bool finished = run ? run->ok : v->runs_ok > 0;
    switch (f->how) {
    case NUM: return qkv_report_num(AT(double));
    case STAT: case RESULT: return finished ? qkv_report_num(AT(double)) : qkv_report_missing();
    case INT: return qkv_report_int(AT(int));
    case I64: return qkv_report_int(AT(int64_t));
    case LL: return qkv_report_int(AT(long long));
    case STEPS: return AT(long long) >= 0 ? qkv_report_int(AT(long long)) : qkv_report_missing();
    case STR: return qkv_report_str(&AT(char));
    case BOOL: return qkv_report_bool(AT(bool));
    case MEDIAN_STEPS: return finished && AT(long long) >= 0 ? qkv_report_int(AT(long long)) : qkv_report_missing();
    case BUDGET: {
        long long b = -1;
        for (int s = 0; s < r->cfg->n_seeds; s++) {
            const qkv_run_result *c = qkv__ablate_chosen(r, i, s);
            if (c && c->ok && c->steps > b) b = c->steps;
        }
        return b >= 0 ? qkv_report_int(b) : qkv_report_missing();
    }
    case SIGNIFICANT: return i == r->cfg->baseline ? qkv_report_missing() : qkv_report_bool(v->significant);
    case MATCHED: return v->matched_d_ff ? qkv_report_int(v->matched_d_ff) : qkv_report_missing();
    case BASELINE_PARAMS: /* the config records the baseline's count for every variant: shown for a matched one */
        return v->matched_d_ff && v->baseline_params > 0 ? qkv_report_int(v->baseline_params) : qkv_report_missing();
    case CHOSEN: return qkv_report_bool(v->lr_chosen == run->lr_index);
    case VERDICT: return run->ok ? qkv_report_str(run->solved ? "solved" : "unsolved") : qkv_report_missing();
    case RUN_BUDGET: return run->ok && run->steps >= 0 ? qkv_report_int(run->steps) : qkv_report_missing();
    case TREND: return run->ok ? qkv_report_str(run->improving ? "improving" : "flat") : qkv_report_missing();
    case NOT_STARTED: return r->missing > 0 && AT(int) >= 0 ? qkv_report_int(AT(int)) : qkv_report_missing();
    }
#undef AT
    return qkv_report_missing();
}

/* the value of field f in row k: variant k's (runs NULL) or runs[k]'s */
static qkv_report_value value_of(const field *f, int k, const qkv_ablate_results *r, const qkv_run_result *runs) {
    return value(f, runs ? (const void *)&runs[k] : (const void *)&r->v[k], r, k, runs ? &runs[k] : NULL);
}

/* the names and rows values each of the n fields that are kept (an optional one: where a row has a
 * value) */
static int records(qkv_report_records *rec, const field *fields, int n, int rows, const qkv_ablate_results *r,
                   const qkv_run_result *runs) {
    bool keep[64];
    int kept = 0;
    for (int f = 0; f < n && f < 64; f++) {
        keep[f] = !fields[f].optional;
        for (int k = 0; k < rows && !keep[f]; k++) keep[f] = value_of(&fields[f], k, r, runs).kind != QKV_REPORT_MISSING;
        kept += keep[f];
    }
    if (n > 64 || qkv__report_records_alloc(rec, rows, kept)) return -1;
    for (int f = 0, c = 0; f < n; f++)
        if (keep[f]) rec->fields[c++] = fields[f].name;
    for (int k = 0; k < rows; k++)
        for (int f = 0, c = 0; f < n; f++)
            if (keep[f]) rec->v[(size_t)k * kept + c++] = value_of(&fields[f], k, r, runs);
    return 0;
}

qkv_report_value qkv__report_variant_value(const qkv_ablate_results *r, int i, const char *key) {
    for (size_t f = 0; f < sizeof VARIANT_FIELDS / sizeof *VARIANT_FIELDS; f++)
        if (VARIANT_FIELDS[f].name.json && !strcmp(VARIANT_FIELDS[f].name.json, key))
            return value_of(&VARIANT_FIELDS[f], i, r, NULL);
    return qkv_report_missing();
}

int qkv__report_fields(qkv_report_fields *f, const qkv_ablate_results *r) {
    memset(f, 0, sizeof *f);
    int nv = r->cfg->n_variants, nr = r->all_runs ? nv * r->n_lrs * r->cfg->n_seeds : 0; /* plan order */
    return records(&f->variants, VARIANT_FIELDS, (int)(sizeof VARIANT_FIELDS / sizeof *VARIANT_FIELDS), nv, r, NULL) ||
           records(&f->runs, RUN_FIELDS, (int)(sizeof RUN_FIELDS / sizeof *RUN_FIELDS), nr, r, r->all_runs)
               ? -1 : 0;
}

void qkv__report_fields_free(qkv_report_fields *f) {
    qkv__report_records_free(&f->variants);
    qkv__report_records_free(&f->runs);
}
