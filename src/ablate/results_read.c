/* results.json back into the results model (results.h): the report's own file (report_json.c),
 * read strictly with the typed getters of its schema (results_schema.h: each key's type and range),
 * for qkv summarize and the documents' generated blocks. Every key read is checked; keys an older
 * qkv did not write may be absent. */
#include "ablate/results.h"
#include "ablate/results_schema.h"
#include "ablate/stats.h"
#include "config/config_json.h"
#include "io/fileio.h"
#include "io/json.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* dir's results.json (its name into path) parsed into *root; 0 or -1 with e, naming what dir is
 * not (a directory, the output directory of qkv ablate) */
static int parse_file(const char *dir, char *path, size_t path_max, cJSON **root, qkv_err *e) {
    if ((size_t)snprintf(path, path_max, "%s/results.json", dir) >= path_max)
        return qkv_err_set(e, QKV_ERR_FAIL, "%.200s...: path too long", dir);
    struct stat st;
    if (stat(dir, &st) || !S_ISDIR(st.st_mode))
        return qkv_err_set(e, QKV_ERR_FAIL, "%s: %s (expected the output directory of qkv ablate)", dir,
                           stat(dir, &st) ? "no such directory" : "not a directory");
    if (stat(path, &st))
        return qkv_err_set(e, QKV_ERR_FAIL, "%s: no results.json (not the output directory of qkv ablate, or its "
                           "report was never written: qkv ablate CONFIG --out %s --report)", dir, dir);
    size_t len;
    char *text = qkv__read_file(path, &len, e);
    if (!text) return -1;
    bool oom = false;
    qkv_err je;
    int rc = qkv__config_json(text, len, path, root, &oom, &je);
    free(text);
    if (rc && oom) return qkv_err_set(e, QKV_ERR_FAIL, "%s: out of memory", path);
    if (rc) return qkv_err_set(e, QKV_ERR_FAIL, "%s", je.msg);
    return 0;
}

/* a count as an int (results.json's are whole numbers up to 2^53; -1: not recorded) */
static int as_int(long long x) { return x > INT32_MAX ? INT32_MAX : (int)x; }

/* "PATH: out of memory" as the reader's message */
static void out_of_memory(qkv_json_reader *r) {
    if (!r->bad) qkv_err_set(r->e, QKV_ERR_FAIL, "%s: out of memory", r->label);
    r->bad = true;
}

/* curve o's series id: numbers (in the key's range; a COUNT's are checked whole by the caller) or
 * nulls (NaN), malloc'd, of n elements (n < 0: any, *n set) or none (NULL: not recorded); a number
 * out of range is refused as the reader's single numbers are (qkv__json_num_in) */
static double *series(qkv_json_reader *r, const cJSON *o, const char *where, qkv_results_key id, int *n) {
    const qkv_results_key_def *d = &qkv__results_keys[id];
    const char *key = d->key;
    double lo = d->type == QKV_RT_NUM ? d->lo : -INFINITY, hi = d->type == QKV_RT_NUM ? d->hi : INFINITY;
    const cJSON *a = qkv__results_series(r, o, where, id);
    int got = a ? cJSON_GetArraySize(a) : 0, k = 0;
    if (*n < 0) *n = got;
    double *x = r->bad || !got ? NULL : malloc((size_t)got * sizeof *x);
    if (!r->bad && got && !x) out_of_memory(r);
    for (const cJSON *e = x ? a->child : NULL; e && !r->bad; e = e->next, k++) {
        if (got != *n || (!cJSON_IsNumber(e) && !cJSON_IsNull(e))) {
            char what[64];
            snprintf(what, sizeof what, "an array of %d numbers or nulls (one per step)", *n);
            qkv__json_wrong(r, where, key, what, a);
        }
        x[k] = cJSON_IsNumber(e) ? e->valuedouble : NAN;
        if (!r->bad && cJSON_IsNumber(e) && !(x[k] >= lo && x[k] <= hi && isfinite(x[k]))) {
            char what[96];
            if (hi < INFINITY) snprintf(what, sizeof what, "numbers in [%g, %g] or nulls", lo, hi);
            else snprintf(what, sizeof what, "numbers >= %g or nulls", lo);
            qkv__json_wrong(r, where, key, what, e);
        }
    }
    if (r->bad) {
        free(x);
        return NULL;
    }
    return x;
}

/* a run's evaluations (its curve object: its steps and four series, one number per step) into rr */
static void read_curve(qkv_json_reader *r, const cJSON *ro, const char *where, qkv_run_result *rr) {
    const cJSON *curve = qkv__results_object(r, ro, where, QKV_RK_CURVE);
    if (!curve) return;
    char cw[128];
    snprintf(cw, sizeof cw, "%s%s.", where, QKV_RK(CURVE));
    int n = -1;
    double *steps = series(r, curve, cw, QKV_RK_STEP, &n); /* whole numbers: below */
    if (steps && !(rr->step = malloc((size_t)n * sizeof *rr->step))) out_of_memory(r);
    for (int k = 0; rr->step && k < n; k++) {
        if (!(steps[k] >= 0 && steps[k] == floor(steps[k]) && steps[k] <= 9007199254740992.0))
            qkv__json_wrong(r, cw, QKV_RK(STEP), "an array of whole numbers >= 0",
                            qkv__results_item(curve, QKV_RK_STEP));
        rr->step[k] = (long long)steps[k];
    }
    free(steps);
    rr->n = rr->step ? n : 0;
    /* in range as the runs' final numbers are (one row of the schema each) */
    rr->eval_acc = series(r, curve, cw, QKV_RK_EVAL_ACC, &rr->n);
    rr->eval_loss = series(r, curve, cw, QKV_RK_EVAL_LOSS, &rr->n);
    rr->val_acc = series(r, curve, cw, QKV_RK_VAL_ACC, &rr->n);
    rr->val_loss = series(r, curve, cw, QKV_RK_VAL_LOSS, &rr->n);
}

/* frees a run's arrays */
static void free_run(qkv_run_result *rr) {
    free(rr->step); free(rr->eval_acc); free(rr->eval_loss); free(rr->val_acc); free(rr->val_loss);
}

/* run object ro of variant v (where: its key path, "variants[0].runs[1].") into rr; *chosen: at the
 * variant's chosen rate (absent: every run is, there being no grid) */
static void read_run(qkv_json_reader *r, const cJSON *ro, const char *where, int v, qkv_run_result *rr,
                     bool *chosen) {
    *rr = (qkv_run_result){.variant = v, .steps_to_threshold = -1, .flat_since = -1, .xz_bpb = NAN,
                           .unigram_bpb = NAN, .train_loss = NAN};
    *chosen = qkv__results_bool(r, ro, where, QKV_RK_CHOSEN, true);
    rr->seed = qkv__results_count(r, ro, where, QKV_RK_SEED);
    rr->ok = qkv__results_bool(r, ro, where, QKV_RK_OK, false);
    const char *verdict = qkv__results_str(r, ro, where, QKV_RK_VERDICT);
    rr->eval_bpb = qkv__results_num(r, ro, where, QKV_RK_EVAL_BPB);
    rr->final_loss = qkv__results_num(r, ro, where, QKV_RK_FINAL_LOSS);
    rr->steps = qkv__results_count(r, ro, where, QKV_RK_BUDGET);
    rr->lr = qkv__results_num(r, ro, where, QKV_RK_LR);
    rr->final_acc = qkv__results_num(r, ro, where, QKV_RK_FINAL_ACC);
    rr->val_final_acc = qkv__results_num(r, ro, where, QKV_RK_VAL_ACC);
    rr->val_final_loss = qkv__results_num(r, ro, where, QKV_RK_VAL_LOSS);
    rr->steps_to_threshold = qkv__results_count(r, ro, where, QKV_RK_STEPS_TO_THRESHOLD);
    const char *trend = qkv__results_str(r, ro, where, QKV_RK_TREND);
    rr->flat_since = qkv__results_count(r, ro, where, QKV_RK_FLAT_SINCE);
    rr->seconds = qkv__results_num(r, ro, where, QKV_RK_SECONDS);
    rr->solved = verdict && !strcmp(verdict, QKV_RESULTS_SOLVED);
    rr->improving = !trend || strcmp(trend, QKV_RESULTS_FLAT);
    rr->started = rr->ok;
    read_curve(r, ro, where, rr);
}

/* variant object vo (index i) into v, its name into cv, its runs into *runs (*n_runs of them, each
 * marked in *chosen) */
static void read_variant(qkv_json_reader *r, const cJSON *vo, int i, qkv_variant_result *v, qkv_ablate_variant *cv,
                         qkv_run_result **runs, bool **chosen, int *n_runs) {
    char where[48];
    snprintf(where, sizeof where, "%s[%d].", QKV_RK(VARIANTS), i);
    if (!cJSON_IsObject(vo)) {
        char at[48];
        snprintf(at, sizeof at, "%s[%d]", QKV_RK(VARIANTS), i);
        qkv__json_wrong(r, at, "", "an object", vo);
        return;
    }
    const char *name = qkv__results_str(r, vo, where, QKV_RK_NAME);
    if (!r->bad && (!name[0] || strlen(name) >= QKV_ABLATE_NAME))
        qkv__json_wrong(r, where, QKV_RK(NAME), "a variant name of 1 to 63 characters",
                        qkv__results_item(vo, QKV_RK_NAME));
    if (r->bad) return;
    snprintf(v->name, sizeof v->name, "%s", name);
    memcpy(cv->name, v->name, sizeof cv->name);
    long long runs_ok = qkv__results_count(r, vo, where, QKV_RK_RUNS_OK);
    long long solved = qkv__results_count(r, vo, where, QKV_RK_SOLVED);
    long long unsolved = qkv__results_count(r, vo, where, QKV_RK_UNSOLVED);
    v->steps_median = qkv__results_count(r, vo, where, QKV_RK_STEPS_TO_THRESHOLD);
    v->params = qkv__results_count(r, vo, where, QKV_RK_PARAMS);
    v->attn_params = qkv__results_count(r, vo, where, QKV_RK_ATTN_PARAMS);
    v->acc_mean = qkv__results_num(r, vo, where, QKV_RK_ACC_MEAN);
    v->acc_ci_lo = qkv__results_num(r, vo, where, QKV_RK_ACC_CI_LOW);
    v->acc_ci_hi = qkv__results_num(r, vo, where, QKV_RK_ACC_CI_HIGH);
    v->loss_mean = qkv__results_num(r, vo, where, QKV_RK_LOSS_MEAN);
    v->loss_ci_lo = qkv__results_num(r, vo, where, QKV_RK_LOSS_CI_LOW);
    v->loss_ci_hi = qkv__results_num(r, vo, where, QKV_RK_LOSS_CI_HIGH);
    v->delta = qkv__results_num(r, vo, where, QKV_RK_DELTA_VS_BASELINE);
    v->delta_ci_lo = qkv__results_num(r, vo, where, QKV_RK_DELTA_CI_LOW);
    v->delta_ci_hi = qkv__results_num(r, vo, where, QKV_RK_DELTA_CI_HIGH);
    v->p_value = qkv__results_num(r, vo, where, QKV_RK_P_VALUE);
    v->p_holm = qkv__results_num(r, vo, where, QKV_RK_P_HOLM);
    /* Holm-adjusted p < 0.05, as the ablation decided it (qkv_stats_holm: adjusted <= alpha) */
    v->significant = qkv__results_bool(r, vo, where, QKV_RK_SIGNIFICANT, v->p_holm <= QKV_ABLATE_ALPHA);
    double budget = (double)qkv__results_count(r, vo, where, QKV_RK_BUDGET);
    const char *sets = qkv__results_str(r, vo, where, QKV_RK_SETS);
    const char *verdicts = qkv__results_str(r, vo, where, QKV_RK_VERDICTS);
    snprintf(v->sets, sizeof v->sets, "%s", sets ? sets : "");
    snprintf(v->verdicts, sizeof v->verdicts, "%s", verdicts ? verdicts : "");
    v->acc_std = qkv__results_num(r, vo, where, QKV_RK_ACC_STD);
    v->acc_min = qkv__results_num(r, vo, where, QKV_RK_ACC_MIN);
    v->loss_std = qkv__results_num(r, vo, where, QKV_RK_LOSS_STD);
    long long reached = qkv__results_count(r, vo, where, QKV_RK_REACHED);
    long long not_started = qkv__results_count(r, vo, where, QKV_RK_RUNS_NOT_STARTED); /* a partial report's */
    v->seconds = qkv__results_num(r, vo, where, QKV_RK_SECONDS);
    v->lr = qkv__results_num(r, vo, where, QKV_RK_LR);
    long long matched = qkv__results_count(r, vo, where, QKV_RK_MATCHED_D_FF);
    v->baseline_params = qkv__results_count(r, vo, where, QKV_RK_BASELINE_PARAMS);
    v->diag = (qkv_attn_diag){.diag_share = qkv__results_num(r, vo, where, QKV_RK_DIAG_SHARE),
                              .first_share = qkv__results_num(r, vo, where, QKV_RK_FIRST_SHARE),
                              .entropy = qkv__results_num(r, vo, where, QKV_RK_ENTROPY),
                              .entropy_uniform = qkv__results_num(r, vo, where, QKV_RK_ENTROPY_UNIFORM),
                              .symmetry = qkv__results_num(r, vo, where, QKV_RK_SCORE_SYMMETRY),
                              .negative_mass = qkv__results_num(r, vo, where, QKV_RK_SCORE_NEGATIVE_SHARE),
                              .prev_share = qkv__results_num(r, vo, where, QKV_RK_PREV_SHARE)};
    /* at step 0 (absent: not recorded) */
    v->diag_start = (qkv_attn_diag){.diag_share = qkv__results_num(r, vo, where, QKV_RK_START_DIAG_SHARE),
                                    .first_share = NAN, .entropy = NAN, .entropy_uniform = NAN,
                                    .symmetry = qkv__results_num(r, vo, where, QKV_RK_START_SCORE_SYMMETRY),
                                    .negative_mass = qkv__results_num(r, vo, where, QKV_RK_START_SCORE_NEGATIVE_SHARE),
                                    .prev_share = qkv__results_num(r, vo, where, QKV_RK_START_PREV_SHARE)};
    v->matched_d_ff = matched > 0 ? as_int(matched) : 0;
    if (v->baseline_params < 0) v->baseline_params = 0;
    v->xz_bpb = v->unigram_bpb = NAN;
    const cJSON *ra = qkv__results_array(r, vo, where, QKV_RK_RUNS);
    int n = ra ? cJSON_GetArraySize(ra) : 0, k = 0;
    *runs = calloc((size_t)n + 1, sizeof **runs);
    *chosen = calloc((size_t)n + 1, sizeof **chosen);
    if (!*runs || !*chosen) {
        out_of_memory(r);
        return;
    }
    for (const cJSON *ro = ra ? ra->child : NULL; ro && !r->bad; ro = ro->next, k++) {
        char rw[96];
        snprintf(rw, sizeof rw, "%s%s[%d]", where, QKV_RK(RUNS), k);
        if (!cJSON_IsObject(ro)) {
            qkv__json_wrong(r, rw, "", "an object", ro);
            return;
        }
        strcat(rw, "."); /* the prefix of its keys */
        read_run(r, ro, rw, i, &(*runs)[k], &(*chosen)[k]);
        *n_runs = k + 1;
    }
    /* counts an older results.json left out: none (runs_ok: from the chosen runs, derive()) */
    v->runs_ok = as_int(runs_ok);
    v->solved = solved < 0 ? 0 : as_int(solved);
    v->unsolved = unsolved < 0 ? 0 : as_int(unsolved);
    v->reached = reached < 0 ? v->solved : as_int(reached);
    v->not_started = as_int(not_started); /* -1: not recorded */
    v->budget_max = isfinite(budget) ? (long long)budget : -1; /* the variant's, until derive() reads the runs' */
}

/* how the text was read (optional: older results.json files do not say) */
static void read_text(qkv_json_reader *r, const cJSON *root, qkv_ablate_results *res) {
    res->bytes_per_token = NAN;
    const cJSON *text = qkv__results_object(r, root, "", QKV_RK_TEXT);
    if (!text) return;
    char w[32]; /* "text.", the prefix of its keys */
    snprintf(w, sizeof w, "%s.", QKV_RK(TEXT));
    const char *tok = qkv__results_str(r, text, w, QKV_RK_TOKENIZER);
    long long pieces = qkv__results_count(r, text, w, QKV_RK_PIECES);
    res->bytes_per_token = qkv__results_num(r, text, w, QKV_RK_BYTES_PER_TOKEN);
    if (r->bad) return;
    if (strlen(tok) >= sizeof res->tokenizer || !*tok)
        return qkv__json_wrong(r, w, QKV_RK(TOKENIZER), "a tokenizer's name",
                               qkv__results_item(text, QKV_RK_TOKENIZER));
    snprintf(res->tokenizer, sizeof res->tokenizer, "%s", tok);
    res->pieces = pieces > 0 ? as_int(pieces) : 0;
}

/* how the rates were chosen (optional: older results.json files do not say) */
static void read_rates(qkv_json_reader *r, const cJSON *root, qkv_ablate_results *res) {
    const cJSON *rate = qkv__results_object(r, root, "", QKV_RK_RATE_CHOICE);
    if (rate) {
        char w[32]; /* "rate_choice.", the prefix of its keys */
        snprintf(w, sizeof w, "%s.", QKV_RK(RATE_CHOICE));
        const char *rule = qkv__results_str(r, rate, w, QKV_RK_RULE);
        const char *pilot = qkv__results_str(r, rate, w, QKV_RK_PILOT);
        const cJSON *grid = qkv__results_array(r, rate, w, QKV_RK_GRID);
        const cJSON *seeds = qkv__results_array(r, rate, w, QKV_RK_PILOT_SEEDS);
        if (r->bad) return;
        snprintf(res->rate_rule, sizeof res->rate_rule, "%s", rule ? rule : "");
        snprintf(res->pilot, sizeof res->pilot, "%s", pilot ? pilot : "");
        /* the grid (with rates set per variant, the pilot's) and the pilot's seeds, as far as they fit */
        for (const cJSON *x = grid ? grid->child : NULL; x && res->n_rate_grid < QKV_ABLATE_MAX_PILOT; x = x->next)
            if (cJSON_IsNumber(x)) res->rate_grid[res->n_rate_grid++] = x->valuedouble;
        for (const cJSON *x = seeds ? seeds->child : NULL; x && res->n_pilot_seeds < QKV_ABLATE_MAX_PILOT; x = x->next)
            if (cJSON_IsNumber(x)) res->pilot_seeds[res->n_pilot_seeds++] = (long long)x->valuedouble;
    }
}

/* the header's keys of root into r and c; *vars: the variants array, *seeds: the seeds array or NULL */
static void read_header(qkv_json_reader *r, const cJSON *root, qkv_ablate_results *res, qkv_ablate_config *c,
                        const char **baseline, const cJSON **vars, const cJSON **seeds) {
    const char *title = qkv__results_str(r, root, "", QKV_RK_TITLE);
    *baseline = qkv__results_str(r, root, "", QKV_RK_BASELINE);
    const char *task = qkv__results_str(r, root, "", QKV_RK_TASK);
    const char *compared = qkv__results_str(r, root, "", QKV_RK_METRIC);
    *vars = qkv__results_array(r, root, "", QKV_RK_VARIANTS);
    *seeds = qkv__results_array(r, root, "", QKV_RK_SEEDS);
    c->threshold = qkv__results_num(r, root, "", QKV_RK_THRESHOLD);
    long long d_model = qkv__results_count(r, root, "", QKV_RK_D_MODEL);
    long long layers = qkv__results_count(r, root, "", QKV_RK_LAYERS);
    long long heads = qkv__results_count(r, root, "", QKV_RK_HEADS);
    qkv__results_count(r, root, "", QKV_RK_RUNS_PLANNED); /* variants x rates x seeds: checked, not kept */
    res->missing = as_int(qkv__results_count(r, root, "", QKV_RK_MISSING_RUNS));
    res->to_extend = as_int(qkv__results_count(r, root, "", QKV_RK_RUNS_TO_EXTEND));
    if (r->bad) return;
    qkv_ablate_metric cm = qkv_ablate_metric_named(compared);
    if (compared && cm == QKV_METRIC_COUNT)
        qkv__json_wrong(r, "", QKV_RK(METRIC), "\"accuracy\", \"loss\", \"bpb\" or null",
                        qkv__results_item(root, QKV_RK_METRIC));
    else if (strlen(*baseline) >= QKV_ABLATE_NAME)
        qkv__json_wrong(r, "", QKV_RK(BASELINE), "a variant name of 1 to 63 characters",
                        qkv__results_item(root, QKV_RK_BASELINE));
    if (r->bad) return;
    c->metric = compared ? cm : QKV_METRIC_ACCURACY;
    snprintf(c->title, sizeof c->title, "%s", title);
    snprintf(res->task, sizeof res->task, "%s", task ? task : "");
    read_text(r, root, res);
    if (!r->bad) read_rates(r, root, res);
    res->d_model = d_model > 0 ? as_int(d_model) : 0;
    res->layers = layers > 0 ? as_int(layers) : 0;
    res->heads = heads > 0 ? as_int(heads) : 0;
    const cJSON *lrs = qkv__results_array(r, root, "", QKV_RK_LRS);
    res->max_solved_at = qkv__results_count(r, root, "", QKV_RK_MAX_SOLVED_AT);
    const char *version = qkv__results_str(r, root, "", QKV_RK_VERSION);
    snprintf(res->version, sizeof res->version, "%s", version ? version : "");
    res->wall_seconds = qkv__results_num(r, root, "", QKV_RK_WALL_SECONDS);
    res->chance = qkv__results_num(r, root, "", QKV_RK_CHANCE);
    res->no_retrieval = qkv__results_num(r, root, "", QKV_RK_NO_RETRIEVAL);
    long long jobs = qkv__results_count(r, root, "", QKV_RK_JOBS);
    res->jobs = jobs > 0 ? as_int(jobs) : 0;
    int nl = lrs ? cJSON_GetArraySize(lrs) : 0, l = 0;
    if (r->bad || !nl) return;
    if (!(c->lrs = calloc((size_t)nl, sizeof *c->lrs))) {
        out_of_memory(r);
        return;
    }
    for (const cJSON *e = lrs->child; e; e = e->next, l++) {
        const qkv_results_key_def *d = &qkv__results_keys[QKV_RK_LRS];
        if (!cJSON_IsNumber(e) || !(e->valuedouble >= d->lo && e->valuedouble <= d->hi)) {
            qkv__json_wrong(r, "", d->key, "an array of learning rates", lrs);
            return;
        }
        c->lrs[l] = e->valuedouble;
    }
    c->n_lrs = nl;
}

/* the seeds: the seeds array's, else (absent or empty) those of the first variant with chosen runs */
static void read_seeds(qkv_json_reader *r, const cJSON *seeds, qkv_ablate_config *c, qkv_run_result *const *runs,
                       bool *const *chosen, const int *n_runs) {
    int n = seeds ? cJSON_GetArraySize(seeds) : 0;
    if (!n) seeds = NULL; /* empty: as absent */
    for (int i = 0; !seeds && i < c->n_variants && !n; i++)
        for (int k = 0; k < n_runs[i]; k++) n += chosen[i][k];
    if (!n) return;
    if (!(c->seeds = calloc((size_t)n, sizeof *c->seeds))) {
        out_of_memory(r);
        return;
    }
    int k = 0;
    for (const cJSON *e = seeds ? seeds->child : NULL; e; e = e->next, k++) {
        if (!cJSON_IsNumber(e) || !(e->valuedouble >= 0) || e->valuedouble != floor(e->valuedouble)) {
            qkv__json_wrong(r, "", QKV_RK(SEEDS), "an array of whole numbers >= 0", seeds);
            return;
        }
        c->seeds[k] = (long long)e->valuedouble;
    }
    for (int i = 0; !seeds && !k && i < c->n_variants; i++)
        for (int j = 0; j < n_runs[i]; j++)
            if (chosen[i][j]) c->seeds[k++] = runs[i][j].seed;
    c->n_seeds = n;
}

/* each variant's chosen runs copied into res->runs by seed (a seed without one: a run that is not ok),
 * every run into res->all_runs when each variant lists one per rate and seed (the copies share the
 * runs' arrays: the caller gives them to res) */
static void place_runs(qkv_json_reader *r, qkv_ablate_results *res, const qkv_ablate_config *c,
                       qkv_run_result *const *runs, bool *const *chosen, const int *n_runs) {
    int nv = c->n_variants, ns = c->n_seeds, per = res->n_lrs * ns;
    bool every = per > 0;
    for (int i = 0; i < nv; i++) every &= n_runs[i] == per;
    res->runs = calloc((size_t)nv * ns + 1, sizeof *res->runs);
    res->all_runs = every ? calloc((size_t)nv * per, sizeof *res->all_runs) : NULL;
    bool *taken = calloc((size_t)nv * ns + 1, sizeof *taken);
    if (!res->runs || (every && !res->all_runs) || !taken) {
        free(taken);
        out_of_memory(r);
        return;
    }
    for (int k = 0; k < nv * ns; k++)
        res->runs[k] = (qkv_run_result){.variant = k / ns, .seed_index = k % ns, .seed = c->seeds[k % ns],
                                        .lr = NAN, .steps = -1, .steps_to_threshold = -1, .flat_since = -1,
                                        .xz_bpb = NAN, .unigram_bpb = NAN, .eval_bpb = NAN, .train_loss = NAN};
    for (int i = 0; i < nv && !r->bad; i++)
        for (int j = 0; j < n_runs[i] && !r->bad; j++) {
            qkv_run_result *rr = &runs[i][j];
            if (every) {
                rr->lr_index = j / ns;
                rr->seed_index = j % ns;
                res->all_runs[(size_t)i * per + j] = *rr;
            }
            if (!chosen[i][j]) continue;
            int s = 0;
            while (s < ns && c->seeds[s] != rr->seed) s++;
            if (s == ns || taken[(size_t)i * ns + s]) {
                qkv_err_set(r->e, QKV_ERR_FAIL, "%s: %s[%d].%s[%d].%s: %s %lld", r->label, QKV_RK(VARIANTS), i,
                            QKV_RK(RUNS), j, QKV_RK(SEED),
                            s == ns ? "expected one of the seeds, got" : "a second chosen run of seed", rr->seed);
                r->bad = true;
                break;
            }
            rr->seed_index = s;
            taken[(size_t)i * ns + s] = true;
            res->runs[(size_t)i * ns + s] = *rr;
            res->v[i].lr_chosen = rr->lr_index;
        }
    free(taken);
}

/* what results.json does not record of a variant, from its chosen runs as aggregate.c's summarise
 * finds it (the unsolved runs' budgets and trends, the pairs with the baseline), each rate's
 * validation numbers; a file without runs gives the variant's budget to its unsolved ones */
static int derive(qkv_ablate_results *res, int i) {
    const qkv_ablate_config *c = res->cfg;
    qkv_variant_result *v = &res->v[i];
    long long budget = v->budget_max;
    int ok = 0, ns = c->n_seeds;
    v->budget_min = v->flat_min = INT64_MAX;
    v->budget_max = v->flat_max = -1;
    for (int s = 0; s < ns; s++) {
        const qkv_run_result *rr = qkv__ablate_chosen(res, i, s), *b = qkv__ablate_chosen(res, c->baseline, s);
        ok += rr->ok;
        v->pairs += i != c->baseline && rr->ok && b->ok;
        if (!rr->ok || rr->solved || rr->steps < 0) continue;
        v->budget_min = rr->steps < v->budget_min ? rr->steps : v->budget_min;
        v->budget_max = rr->steps > v->budget_max ? rr->steps : v->budget_max;
        if (rr->improving) v->unsolved_improving++;
        else {
            v->flat_min = rr->flat_since < v->flat_min ? rr->flat_since : v->flat_min;
            v->flat_max = rr->flat_since > v->flat_max ? rr->flat_since : v->flat_max;
        }
    }
    if (v->runs_ok < 0) v->runs_ok = ok; /* not recorded: the finished chosen runs */
    if (v->budget_max < 0 && v->unsolved > 0 && budget >= 0) v->budget_min = v->budget_max = budget;
    res->significant += v->significant;
    if (!(v->lrs = calloc((size_t)res->n_lrs, sizeof *v->lrs))) return -1;
    if (res->all_runs) qkv__ablate_rate_stats(v->lrs, res->all_runs + (size_t)i * res->n_lrs * ns, res->n_lrs, ns);
    else
        for (int l = 0; l < res->n_lrs; l++)
            v->lrs[l] = (qkv_lr_result){c->n_lrs ? c->lrs[l] : NAN, 0, NAN, NAN, NAN, NAN};
    return 0;
}

int qkv__ablate_results_read(qkv_ablate_results *res, qkv_ablate_config *c, const char *dir, qkv_err *e) {
    memset(res, 0, sizeof *res);
    memset(c, 0, sizeof *c);
    res->unobserved_start = -1; /* results.json does not say */
    char path[1200];
    cJSON *root = NULL;
    if (parse_file(dir, path, sizeof path, &root, e)) return -1;
    qkv_json_reader r = {path, e, false}; /* the reader's messages go to e (io/json.h) */
    const char *baseline = NULL;
    const cJSON *vars = NULL, *seeds = NULL;
    qkv_run_result **runs = NULL;
    bool **chosen = NULL;
    int *n_runs = NULL, nv = 0;
    res->cfg = c;
    if (!cJSON_IsObject(root)) {
        qkv_err_set(e, QKV_ERR_FAIL, "%s: expected a JSON object (the results qkv ablate writes)", path);
        r.bad = true;
    }
    if (!r.bad) read_header(&r, root, res, c, &baseline, &vars, &seeds);
    if (!r.bad && (nv = cJSON_GetArraySize(vars)) < 1)
        qkv__json_wrong(&r, "", QKV_RK(VARIANTS), "a non-empty array", vars);
    if (!r.bad) {
        res->v = calloc((size_t)nv, sizeof *res->v);
        c->variants = calloc((size_t)nv, sizeof *c->variants);
        runs = calloc((size_t)nv, sizeof *runs);
        chosen = calloc((size_t)nv, sizeof *chosen);
        n_runs = calloc((size_t)nv, sizeof *n_runs);
        if (!res->v || !c->variants || !runs || !chosen || !n_runs) out_of_memory(&r);
    }
    c->baseline = -1;
    int i = 0;
    for (const cJSON *vo = r.bad ? NULL : vars->child; vo && !r.bad; vo = vo->next, i++) {
        read_variant(&r, vo, i, &res->v[i], &c->variants[i], &runs[i], &chosen[i], &n_runs[i]);
        for (int k = 0; k < i && !r.bad; k++)
            if (!strcmp(res->v[k].name, res->v[i].name)) {
                qkv_err_set(e, QKV_ERR_FAIL, "%s: %s[%d].%s: \"%s\" is also %s[%d]'s", path, QKV_RK(VARIANTS), i,
                            QKV_RK(NAME), res->v[i].name, QKV_RK(VARIANTS), k);
                r.bad = true;
            }
        if (!r.bad && !strcmp(res->v[i].name, baseline)) c->baseline = i;
    }
    if (!r.bad && c->baseline < 0) {
        qkv_err_set(e, QKV_ERR_FAIL, "%s: %s: \"%s\" is not one of the variants", path, QKV_RK(BASELINE), baseline);
        r.bad = true;
    }
    c->n_variants = nv;
    res->n_lrs = c->n_lrs > 0 ? c->n_lrs : 1;
    if (!r.bad) read_seeds(&r, seeds, c, runs, chosen, n_runs);
    if (!r.bad) place_runs(&r, res, c, runs, chosen, n_runs);
    for (int k = 0; k < nv && !r.bad; k++)
        if (derive(res, k)) out_of_memory(&r);
    /* the runs' arrays: all_runs' (every run), else the chosen copies' (the others' are freed) */
    for (int k = 0; k < nv; k++) {
        for (int j = 0; runs && runs[k] && j < n_runs[k]; j++)
            if (r.bad || (!res->all_runs && !chosen[k][j])) free_run(&runs[k][j]);
        free(runs ? runs[k] : NULL);
        free(chosen ? chosen[k] : NULL);
    }
    free(runs);
    free(chosen);
    free(n_runs);
    cJSON_Delete(root);
    if (r.bad) {
        free(res->all_runs); /* (their arrays are freed above) */
        free(res->runs);
        res->all_runs = res->runs = NULL;
        qkv__ablate_results_free(res);
        qkv_ablate_config_free(c);
        memset(c, 0, sizeof *c);
        return -1;
    }
    return 0;
}
