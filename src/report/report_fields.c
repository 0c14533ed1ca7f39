/* The report's machine-readable fields: per variant (results.csv's columns and the keys of
 * results.json's variant objects) and per run (the keys of its run objects). Each list gives
 * a field's CSV and JSON names and the function that reads its value; adding a column is
 * adding a line to a list (see report_data.h). Statistics of a variant without a finished run
 * are missing, not zero. */
#include "report/report_data.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* variant i's value (i indexes p->r->v, p->curves ...) */
typedef qkv_report_value (*variant_fn)(const qkv_report *p, int i);
/* a run's value (p for what it is compared with) */
typedef qkv_report_value (*run_fn)(const qkv_report *p, const qkv_run_result *run);

typedef struct variant_field {
    qkv_report_field name;
    variant_fn get;
} variant_field;

typedef struct run_field {
    qkv_report_field name;
    run_fn get;
} run_field;

/* ---- values ------------------------------------------------------------------------------ */

/* no value (null in JSON) */
static qkv_report_value missing(void) { return (qkv_report_value){.kind = QKV_REPORT_MISSING}; }

/* a number; a non-finite one is missing */
static qkv_report_value num(double x) {
    return isfinite(x) ? (qkv_report_value){.kind = QKV_REPORT_NUM, .num = x} : missing();
}

/* an integer */
static qkv_report_value integer(long long i) { return (qkv_report_value){.kind = QKV_REPORT_INT, .i = i}; }

/* a step count, missing when negative (never reached) */
static qkv_report_value steps(long long i) { return i >= 0 ? integer(i) : missing(); }

/* a string borrowed from the results */
static qkv_report_value str(const char *s) { return (qkv_report_value){.kind = QKV_REPORT_STR, .str = s}; }

/* a statistic over variant i's finished runs: missing when it has none */
static qkv_report_value stat(const qkv_report *p, int i, double x) { return num(p->r->v[i].runs_ok > 0 ? x : NAN); }

/* ---- per variant ------------------------------------------------------------------------- */

/* variant i's results */
static const qkv_variant_result *var(const qkv_report *p, int i) { return &p->r->v[i]; }

/* the variant's name */
static qkv_report_value v_name(const qkv_report *p, int i) { return str(var(p, i)->name); }
/* its overrides, joined with spaces */
static qkv_report_value v_sets(const qkv_report *p, int i) { return str(var(p, i)->sets); }
/* the attention layers' parameter count */
static qkv_report_value v_attn_params(const qkv_report *p, int i) { return integer(var(p, i)->attn_params); }
/* the model's parameter count */
static qkv_report_value v_params(const qkv_report *p, int i) { return integer(var(p, i)->params); }
/* the finished runs */
static qkv_report_value v_runs_ok(const qkv_report *p, int i) { return integer(var(p, i)->runs_ok); }
/* mean final accuracy */
static qkv_report_value v_acc_mean(const qkv_report *p, int i) { return stat(p, i, var(p, i)->acc_mean); }
/* its standard deviation over seeds */
static qkv_report_value v_acc_std(const qkv_report *p, int i) { return stat(p, i, var(p, i)->acc_std); }
/* the worst seed's final accuracy */
static qkv_report_value v_acc_min(const qkv_report *p, int i) { return stat(p, i, var(p, i)->acc_min); }
/* mean final loss */
static qkv_report_value v_loss_mean(const qkv_report *p, int i) { return stat(p, i, var(p, i)->loss_mean); }
/* its standard deviation over seeds */
static qkv_report_value v_loss_std(const qkv_report *p, int i) { return stat(p, i, var(p, i)->loss_std); }
/* the median steps to the threshold (missing: never, or no finished run) */
static qkv_report_value v_steps(const qkv_report *p, int i) {
    return steps(var(p, i)->runs_ok > 0 ? var(p, i)->steps_median : -1);
}
/* the seeds that reached the threshold */
static qkv_report_value v_reached(const qkv_report *p, int i) { return integer(var(p, i)->reached); }
/* mean wall seconds of a run */
static qkv_report_value v_seconds(const qkv_report *p, int i) { return num(var(p, i)->seconds); }
/* the verdicts over seeds, in words */
static qkv_report_value v_verdicts(const qkv_report *p, int i) { return str(var(p, i)->verdicts); }
/* the steps the longest of its chosen runs ran */
static qkv_report_value v_budget(const qkv_report *p, int i) {
    long long b = -1;
    for (int s = 0; s < p->cfg->n_seeds; s++) {
        const qkv_run_result *run = qkv__report_run(p, i, s);
        if (run && run->ok && run->steps > b) b = run->steps;
    }
    return steps(b);
}
/* the learning rate chosen on validation (missing without a grid, and without a finished run,
 * for which choose_lr leaves it 0) */
static qkv_report_value v_lr(const qkv_report *p, int i) { return stat(p, i, var(p, i)->lr); }
/* the 95% bootstrap interval of the mean final accuracy */
static qkv_report_value v_acc_ci_lo(const qkv_report *p, int i) { return stat(p, i, var(p, i)->acc_ci_lo); }
static qkv_report_value v_acc_ci_hi(const qkv_report *p, int i) { return stat(p, i, var(p, i)->acc_ci_hi); }
/* the same for the loss */
static qkv_report_value v_loss_ci_lo(const qkv_report *p, int i) { return stat(p, i, var(p, i)->loss_ci_lo); }
static qkv_report_value v_loss_ci_hi(const qkv_report *p, int i) { return stat(p, i, var(p, i)->loss_ci_hi); }
/* mean paired accuracy difference from the baseline, its interval, p-values, significance
 * (missing for the baseline itself) */
static qkv_report_value v_delta(const qkv_report *p, int i) { return num(var(p, i)->delta); }
static qkv_report_value v_delta_lo(const qkv_report *p, int i) { return num(var(p, i)->delta_ci_lo); }
static qkv_report_value v_delta_hi(const qkv_report *p, int i) { return num(var(p, i)->delta_ci_hi); }
static qkv_report_value v_p(const qkv_report *p, int i) { return num(var(p, i)->p_value); }
static qkv_report_value v_p_holm(const qkv_report *p, int i) { return num(var(p, i)->p_holm); }
static qkv_report_value v_significant(const qkv_report *p, int i) {
    if (i == p->cfg->baseline) return missing();
    return (qkv_report_value){.kind = QKV_REPORT_BOOL, .b = var(p, i)->significant};
}
/* seeds solved and unsolved */
static qkv_report_value v_solved(const qkv_report *p, int i) { return integer(var(p, i)->solved); }
static qkv_report_value v_unsolved(const qkv_report *p, int i) { return integer(var(p, i)->unsolved); }
/* a matched control's d_ff and the baseline's parameter count (missing when not matched: the
 * config records the baseline's count for every variant) */
static qkv_report_value v_matched(const qkv_report *p, int i) {
    return var(p, i)->matched_d_ff ? integer(var(p, i)->matched_d_ff) : missing();
}
static qkv_report_value v_baseline_params(const qkv_report *p, int i) {
    const qkv_variant_result *v = var(p, i);
    return v->matched_d_ff && v->baseline_params > 0 ? integer(v->baseline_params) : missing();
}
/* the mean weight a query puts on its own position */
static qkv_report_value v_diag_share(const qkv_report *p, int i) { return stat(p, i, var(p, i)->diag.diag_share); }
/* the mean weight on the first position */
static qkv_report_value v_first_share(const qkv_report *p, int i) { return stat(p, i, var(p, i)->diag.first_share); }
/* the mean entropy of a query's weights */
static qkv_report_value v_entropy(const qkv_report *p, int i) { return stat(p, i, var(p, i)->diag.entropy); }
/* the same for uniform causal attention (a property of the task, so kept for failed variants) */
static qkv_report_value v_entropy_uniform(const qkv_report *p, int i) { return num(var(p, i)->diag.entropy_uniform); }

/* the shape of the heads' score matrices: symmetry score, negative eigenvalue share */
static qkv_report_value v_symmetry(const qkv_report *p, int i) { return stat(p, i, var(p, i)->diag.symmetry); }
static qkv_report_value v_negative(const qkv_report *p, int i) { return stat(p, i, var(p, i)->diag.negative_mass); }

/* CSV columns in CSV order, JSON keys in JSON order; "sets" appears twice because it is the
 * 14th CSV column (the last of those results.csv had first: a column is added after them, so a
 * reader of the older columns by position still finds them) but the second JSON key */
static const variant_field VARIANT_FIELDS[] = {
    {{"variant", "name", NULL}, v_name},
    {{NULL, "sets", NULL}, v_sets},
    {{"attn_params", "attn_params", NULL}, v_attn_params},
    {{"params", "params", NULL}, v_params},
    {{NULL, "runs_ok", NULL}, v_runs_ok},
    {{"acc_mean", "acc_mean", NULL}, v_acc_mean},
    {{"acc_std", "acc_std", NULL}, v_acc_std},
    {{"acc_min", "acc_min", NULL}, v_acc_min},
    {{"loss_mean", "loss_mean", NULL}, v_loss_mean},
    {{"loss_std", "loss_std", NULL}, v_loss_std},
    {{"steps_to_threshold", "steps_to_threshold", "never"}, v_steps},
    {{NULL, "reached", NULL}, v_reached},
    {{"seconds", "seconds", NULL}, v_seconds},
    {{"diag_share", "diag_share", NULL}, v_diag_share},
    {{"first_share", "first_share", NULL}, v_first_share},
    {{"entropy", "entropy", NULL}, v_entropy},
    {{NULL, "entropy_uniform", NULL}, v_entropy_uniform},
    {{"sets", NULL, NULL}, v_sets},
    {{"verdicts", "verdicts", NULL}, v_verdicts},
    {{"budget", "budget", NULL}, v_budget},
    {{"lr", "lr", NULL}, v_lr},
    {{"acc_ci_low", "acc_ci_low", NULL}, v_acc_ci_lo},
    {{"acc_ci_high", "acc_ci_high", NULL}, v_acc_ci_hi},
    {{"loss_ci_low", "loss_ci_low", NULL}, v_loss_ci_lo},
    {{"loss_ci_high", "loss_ci_high", NULL}, v_loss_ci_hi},
    {{"delta_vs_baseline", "delta_vs_baseline", NULL}, v_delta},
    {{"delta_ci_low", "delta_ci_low", NULL}, v_delta_lo},
    {{"delta_ci_high", "delta_ci_high", NULL}, v_delta_hi},
    {{"p_value", "p_value", NULL}, v_p},
    {{"p_holm", "p_holm", NULL}, v_p_holm},
    {{"significant", "significant", NULL}, v_significant},
    {{"solved", "solved", NULL}, v_solved},
    {{"unsolved", "unsolved", NULL}, v_unsolved},
    {{"matched_d_ff", "matched_d_ff", NULL}, v_matched},
    {{"baseline_params", "baseline_params", NULL}, v_baseline_params},
    {{"score_symmetry", "score_symmetry", NULL}, v_symmetry},
    {{"score_negative_share", "score_negative_share", NULL}, v_negative},
};

/* ---- per run ----------------------------------------------------------------------------- */

/* the run's seed */
static qkv_report_value r_seed(const qkv_report *p, const qkv_run_result *run) { (void)p; return integer(run->seed); }
/* its learning rate (missing without a grid) */
static qkv_report_value r_lr(const qkv_report *p, const qkv_run_result *run) { (void)p; return num(run->lr); }
/* whether its learning rate is the one chosen for its variant */
static qkv_report_value r_chosen(const qkv_report *p, const qkv_run_result *run) {
    return (qkv_report_value){.kind = QKV_REPORT_BOOL, .b = p->r->v[run->variant].lr_chosen == run->lr_index};
}
/* whether it finished */
static qkv_report_value r_ok(const qkv_report *p, const qkv_run_result *run) {
    (void)p;
    return (qkv_report_value){.kind = QKV_REPORT_BOOL, .b = run->ok};
}
/* a finished run's number: a run without a summary has none (aggregate.c leaves its fields 0) */
static qkv_report_value result(const qkv_run_result *run, double x) { return run->ok ? num(x) : missing(); }
/* its final evaluation accuracy and loss */
static qkv_report_value r_final_acc(const qkv_report *p, const qkv_run_result *run) { (void)p; return result(run, run->final_acc); }
static qkv_report_value r_final_loss(const qkv_report *p, const qkv_run_result *run) { (void)p; return result(run, run->final_loss); }
/* its final validation accuracy and loss (what the rate is chosen on) */
static qkv_report_value r_val_acc(const qkv_report *p, const qkv_run_result *run) { (void)p; return result(run, run->val_final_acc); }
static qkv_report_value r_val_loss(const qkv_report *p, const qkv_run_result *run) { (void)p; return result(run, run->val_final_loss); }
/* its verdict, first evaluated step at the threshold (missing: none), steps, trend */
static qkv_report_value r_verdict(const qkv_report *p, const qkv_run_result *run) {
    (void)p;
    return run->ok ? str(run->solved ? "solved" : "unsolved") : missing();
}
static qkv_report_value r_steps(const qkv_report *p, const qkv_run_result *run) { (void)p; return steps(run->steps_to_threshold); }
static qkv_report_value r_budget(const qkv_report *p, const qkv_run_result *run) { (void)p; return steps(run->ok ? run->steps : -1); }
static qkv_report_value r_trend(const qkv_report *p, const qkv_run_result *run) {
    (void)p;
    return run->ok ? str(run->improving ? "improving" : "flat") : missing();
}
static qkv_report_value r_flat(const qkv_report *p, const qkv_run_result *run) { (void)p; return steps(run->flat_since); }
/* its wall seconds */
static qkv_report_value r_seconds(const qkv_report *p, const qkv_run_result *run) { (void)p; return result(run, run->seconds); }

/* JSON keys of a run object (runs are not in the CSV); its curve follows them */
static const run_field RUN_FIELDS[] = {
    {{NULL, "seed", NULL}, r_seed},
    {{NULL, "lr", NULL}, r_lr},
    {{NULL, "chosen", NULL}, r_chosen},
    {{NULL, "ok", NULL}, r_ok},
    {{NULL, "final_acc", NULL}, r_final_acc},
    {{NULL, "final_loss", NULL}, r_final_loss},
    {{NULL, "val_acc", NULL}, r_val_acc},
    {{NULL, "val_loss", NULL}, r_val_loss},
    {{NULL, "verdict", NULL}, r_verdict},
    {{NULL, "steps_to_threshold", NULL}, r_steps},
    {{NULL, "budget", NULL}, r_budget},
    {{NULL, "trend", NULL}, r_trend},
    {{NULL, "flat_since", NULL}, r_flat},
    {{NULL, "seconds", NULL}, r_seconds},
};

/* ---- records ----------------------------------------------------------------------------- */

/* room for rows x n_fields values; 0 or -1 (out of memory) */
static int records_alloc(qkv_report_records *rec, int rows, int n_fields) {
    memset(rec, 0, sizeof *rec);
    rec->rows = rows;
    rec->n_fields = n_fields;
    rec->fields = calloc((size_t)n_fields, sizeof *rec->fields);
    rec->v = calloc((size_t)rows * (size_t)n_fields + 1, sizeof *rec->v);
    return rec->fields && rec->v ? 0 : -1;
}

/* every variant's and every run's values, read once */
int qkv__report_fields_build(qkv_report *p) {
    const int nvf = (int)(sizeof VARIANT_FIELDS / sizeof VARIANT_FIELDS[0]);
    const int nrf = (int)(sizeof RUN_FIELDS / sizeof RUN_FIELDS[0]);
    int nr = p->nv * p->r->n_lrs * p->cfg->n_seeds; /* every run, plan order */
    if (records_alloc(&p->variant_fields, p->nv, nvf) ||
        records_alloc(&p->run_fields, p->r->all_runs ? nr : 0, nrf))
        return -1;
    for (int f = 0; f < nvf; f++) p->variant_fields.fields[f] = VARIANT_FIELDS[f].name;
    for (int f = 0; f < nrf; f++) p->run_fields.fields[f] = RUN_FIELDS[f].name;
    for (int i = 0; i < p->nv; i++) {
        qkv_report_value *row = p->variant_fields.v + (size_t)i * (size_t)nvf;
        for (int f = 0; f < nvf; f++) row[f] = VARIANT_FIELDS[f].get(p, i);
    }
    for (int k = 0; k < p->run_fields.rows; k++) {
        qkv_report_value *row = p->run_fields.v + (size_t)k * (size_t)nrf;
        const qkv_run_result *run = &p->r->all_runs[k];
        for (int f = 0; f < nrf; f++) row[f] = RUN_FIELDS[f].get(p, run);
    }
    return 0;
}

/* the names are copied, the strings in the values borrowed */
void qkv__report_records_free(qkv_report_records *rec) {
    free(rec->fields);
    free(rec->v);
    memset(rec, 0, sizeof *rec);
}
