/* The report's machine-readable fields: per variant (results.csv's columns and the keys of
 * results.json's variant objects) and per run (the keys of its run objects). Each list gives a
 * field's key in results.json's schema (ablate/results_schema.h: its name, which its CSV column
 * has too unless it is given another), whether it is a column, a key or both, how its value is
 * read and from where; adding a column is adding a line to a list (see report_data.h).
 * Statistics of a variant without a finished run are missing, not zero; so are a run's results
 * when it did not finish. */
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
    VERDICT,            /* QKV_RESULTS_SOLVED or _UNSOLVED for a finished run */
    RUN_BUDGET,         /* the steps a finished run ran */
    TREND,              /* "improving" or "flat" for a finished run */
    NOT_STARTED,        /* an int said in a partial report only (missing when no run is missing, or negative) */
} how;

/* where a field is written: results.csv and results.json, or one of them */
typedef enum in { BOTH, JSON, CSV } in;

typedef struct field {
    qkv_results_key key;    /* its key in results.json; the CSV column's name too, unless csv */
    in in;
    const char *csv;        /* the CSV column's name where it is not the key's (NULL: the key's) */
    const char *csv_missing; /* the CSV text of a missing value (NULL: empty) */
    how how;
    size_t at;              /* the value's offset in its struct */
    bool optional;          /* left out (column and key) where no row has a value: what older runs did not record */
} field;

#define V_(in, id, how, member, opt) {QKV_RK_##id, in, NULL, NULL, how, offsetof(qkv_variant_result, member), opt}
#define V(id, how, member) V_(BOTH, id, how, member, false)
#define V_JSON(id, how, member) V_(JSON, id, how, member, false)
#define V_OPT(id, how, member) V_(BOTH, id, how, member, true)
#define R(id, how, member) {QKV_RK_##id, JSON, NULL, NULL, how, offsetof(qkv_run_result, member), false}

/* CSV columns in CSV order, JSON keys in JSON order; sets appears twice because it is the 18th
 * CSV column (after the first columns results.csv had, so that a reader of those by position
 * still finds them) but the second JSON key */
static const field VARIANT_FIELDS[] = {
    {QKV_RK_NAME, BOTH, "variant", NULL, STR, offsetof(qkv_variant_result, name), false},
    V_JSON(SETS, STR, sets),
    V(ATTN_PARAMS, I64, attn_params),
    V(PARAMS, I64, params),
    V_JSON(RUNS_OK, INT, runs_ok),
    V(ACC_MEAN, STAT, acc_mean),
    V(ACC_STD, STAT, acc_std),
    V(ACC_MIN, STAT, acc_min),
    V(LOSS_MEAN, STAT, loss_mean),
    V(LOSS_STD, STAT, loss_std),
    {QKV_RK_STEPS_TO_THRESHOLD, BOTH, NULL, "never", MEDIAN_STEPS, offsetof(qkv_variant_result, steps_median), false},
    V_JSON(REACHED, INT, reached),
    V(SECONDS, NUM, seconds),
    V(DIAG_SHARE, STAT, diag.diag_share),
    V(FIRST_SHARE, STAT, diag.first_share),
    V(ENTROPY, STAT, diag.entropy),
    V_JSON(ENTROPY_UNIFORM, NUM, diag.entropy_uniform), /* a property of the task: kept for failed variants */
    V_(CSV, SETS, STR, sets, false),
    V(VERDICTS, STR, verdicts),
    V(BUDGET, BUDGET, name),
    V(LR, STAT, lr), /* choose_lr leaves it 0 without a finished run */
    V(ACC_CI_LOW, STAT, acc_ci_lo),
    V(ACC_CI_HIGH, STAT, acc_ci_hi),
    V(LOSS_CI_LOW, STAT, loss_ci_lo),
    V(LOSS_CI_HIGH, STAT, loss_ci_hi),
    V(DELTA_VS_BASELINE, NUM, delta),
    V(DELTA_CI_LOW, NUM, delta_ci_lo),
    V(DELTA_CI_HIGH, NUM, delta_ci_hi),
    V(P_VALUE, NUM, p_value),
    V(P_HOLM, NUM, p_holm),
    V(SIGNIFICANT, SIGNIFICANT, significant),
    V(SOLVED, INT, solved),
    V(UNSOLVED, INT, unsolved),
    V(MATCHED_D_FF, MATCHED, matched_d_ff),
    V(BASELINE_PARAMS, BASELINE_PARAMS, baseline_params),
    V(SCORE_SYMMETRY, STAT, diag.symmetry),
    V(SCORE_NEGATIVE_SHARE, STAT, diag.negative_mass),
    V_OPT(PREV_SHARE, STAT, diag.prev_share),
    /* the same at step 0, before the first update (train/observe.h) */
    V_OPT(START_DIAG_SHARE, STAT, diag_start.diag_share),
    V_OPT(START_PREV_SHARE, STAT, diag_start.prev_share),
    V_OPT(START_SCORE_SYMMETRY, STAT, diag_start.symmetry),
    V_OPT(START_SCORE_NEGATIVE_SHARE, STAT, diag_start.negative_mass),
    V_OPT(RUNS_NOT_STARTED, NOT_STARTED, not_started), /* of every rate's runs */
};

/* JSON keys of a run object (runs are not in the CSV); its curve follows them */
static const field RUN_FIELDS[] = {
    R(SEED, LL, seed),
    R(LR, NUM, lr),
    R(CHOSEN, CHOSEN, lr_index),
    R(OK, BOOL, ok),
    R(FINAL_ACC, RESULT, final_acc),
    R(FINAL_LOSS, RESULT, final_loss),
    R(VAL_ACC, RESULT, val_final_acc),
    R(VAL_LOSS, RESULT, val_final_loss),
    R(VERDICT, VERDICT, solved),
    R(STEPS_TO_THRESHOLD, STEPS, steps_to_threshold),
    R(BUDGET, RUN_BUDGET, steps),
    R(TREND, TREND, improving),
    R(FLAT_SINCE, STEPS, flat_since),
    R(SECONDS, RESULT, seconds),
};

/* field f's names: its CSV column and its JSON key, each NULL where it is not written */
static qkv_report_field names(const field *f) {
    const char *key = qkv__results_keys[f->key].key;
    return (qkv_report_field){f->in == JSON ? NULL : f->csv ? f->csv : key, f->in == CSV ? NULL : key, f->csv_missing};
}

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
    case VERDICT:
        return run->ok ? qkv_report_str(run->solved ? QKV_RESULTS_SOLVED : QKV_RESULTS_UNSOLVED) : qkv_report_missing();
    case RUN_BUDGET: return run->ok && run->steps >= 0 ? qkv_report_int(run->steps) : qkv_report_missing();
    case TREND:
        return run->ok ? qkv_report_str(run->improving ? QKV_RESULTS_IMPROVING : QKV_RESULTS_FLAT) : qkv_report_missing();
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
        if (keep[f]) rec->fields[c++] = names(&fields[f]);
    for (int k = 0; k < rows; k++)
        for (int f = 0, c = 0; f < n; f++)
            if (keep[f]) rec->v[(size_t)k * kept + c++] = value_of(&fields[f], k, r, runs);
    return 0;
}

qkv_report_value qkv__report_variant_value(const qkv_ablate_results *r, int i, qkv_results_key key) {
    for (size_t f = 0; f < sizeof VARIANT_FIELDS / sizeof *VARIANT_FIELDS; f++)
        if (VARIANT_FIELDS[f].in != CSV && VARIANT_FIELDS[f].key == key)
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
