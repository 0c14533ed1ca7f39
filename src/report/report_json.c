/* results.json: the ablation's settings, then per variant its fields and its runs (their
 * fields and evaluation curves), printed by cJSON, each under its key of the schema
 * (ablate/results_schema.h). Missing values are null. */
#include "report/report_data.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* a number, null when not finite (JSON has no NaN or infinity) */
static void j_num(cJSON *o, const char *key, double v) {
    if (isfinite(v)) cJSON_AddNumberToObject(o, key, v);
    else cJSON_AddNullToObject(o, key);
}

/* a positive count, null when 0 (unknown) */
static void j_count(cJSON *o, const char *key, int v) {
    if (v > 0) cJSON_AddNumberToObject(o, key, v);
    else cJSON_AddNullToObject(o, key);
}

/* n numbers as an array, null for the non-finite ones */
static cJSON *j_array(const double *v, int n) {
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; a && v && i < n; i++)
        cJSON_AddItemToArray(a, isfinite(v[i]) ? cJSON_CreateNumber(v[i]) : cJSON_CreateNull());
    return a;
}

/* row r's fields that have a JSON key, in list order */
static void j_fields(cJSON *o, const qkv_report_records *rec, int r) {
    for (int f = 0; f < rec->n_fields; f++) {
        const char *key = rec->fields[f].json;
        const qkv_report_value *v = qkv_report_value_at(rec, r, f);
        if (!key) continue;
        switch (v->kind) {
        case QKV_REPORT_MISSING: cJSON_AddNullToObject(o, key); break;
        case QKV_REPORT_NUM: cJSON_AddNumberToObject(o, key, v->num); break;
        case QKV_REPORT_INT: cJSON_AddNumberToObject(o, key, (double)v->i); break;
        case QKV_REPORT_STR: cJSON_AddStringToObject(o, key, v->str ? v->str : ""); break;
        case QKV_REPORT_BOOL: cJSON_AddBoolToObject(o, key, v->b); break;
        }
    }
}

/* a run's evaluations: steps, accuracies and losses as three parallel arrays */
static void j_curve(cJSON *ro, const qkv_run_result *run) {
    cJSON *cu = cJSON_AddObjectToObject(ro, QKV_RK(CURVE));
    if (!cu) return;
    int n = run->n > 0 ? run->n : 0;
    double *steps = n && run->step ? malloc((size_t)n * sizeof *steps) : NULL;
    for (int k = 0; steps && k < n; k++) steps[k] = (double)run->step[k];
    cJSON_AddItemToObject(cu, QKV_RK(STEP), j_array(steps, steps ? n : 0));
    cJSON_AddItemToObject(cu, QKV_RK(EVAL_ACC), j_array(run->eval_acc, n));
    cJSON_AddItemToObject(cu, QKV_RK(EVAL_LOSS), j_array(run->eval_loss, n));
    cJSON_AddItemToObject(cu, QKV_RK(VAL_ACC), j_array(run->val_acc, n));
    cJSON_AddItemToObject(cu, QKV_RK(VAL_LOSS), j_array(run->val_loss, n));
    free(steps);
}

/* variant i's object: its fields, then its runs; false when out of memory */
static bool j_variant(cJSON *vars, const qkv_report *p, int i) {
    cJSON *o = cJSON_CreateObject();
    if (!o) return false;
    cJSON_AddItemToArray(vars, o);
    j_fields(o, &p->fields.variants, i);
    cJSON *runs = cJSON_AddArrayToObject(o, QKV_RK(RUNS));
    int per = p->r->n_lrs * p->cfg->n_seeds; /* the variant's runs: every rate x seed */
    for (int k = 0; runs && k < per && p->fields.runs.rows > 0; k++) {
        cJSON *ro = cJSON_CreateObject();
        if (!ro) break;
        cJSON_AddItemToArray(runs, ro);
        j_fields(ro, &p->fields.runs, i * per + k);
        j_curve(ro, &p->r->all_runs[i * per + k]);
    }
    return true;
}

/* how each variant's rate was chosen: the grid (this sweep's, or its pilot's), the rule in words,
 * the pilot and its seeds */
static void j_rate_choice(cJSON *root, const qkv_report *p) {
    const qkv_ablate_config *cfg = p->cfg;
    cJSON *rate = cJSON_AddObjectToObject(root, QKV_RK(RATE_CHOICE));
    cJSON *grid = rate ? cJSON_AddArrayToObject(rate, QKV_RK(GRID)) : NULL;
    for (int l = 0; grid && l < cfg->n_lrs; l++) cJSON_AddItemToArray(grid, cJSON_CreateNumber(cfg->lrs[l]));
    for (int l = 0; grid && !cfg->n_lrs && l < p->r->n_rate_grid; l++)
        cJSON_AddItemToArray(grid, cJSON_CreateNumber(p->r->rate_grid[l]));
    const char *rule = p->r->rate_rule[0] ? p->r->rate_rule : cfg->n_lrs ? QKV_RATE_RULE_GRID : QKV_RATE_RULE_SET;
    if (rate) cJSON_AddStringToObject(rate, QKV_RK(RULE), rule);
    if (rate && p->r->pilot[0]) cJSON_AddStringToObject(rate, QKV_RK(PILOT), p->r->pilot);
    else if (rate) cJSON_AddNullToObject(rate, QKV_RK(PILOT));
    /* the pilot's seeds, when the config names them (results written before had no such key) */
    cJSON *ps = rate && p->r->n_pilot_seeds ? cJSON_AddArrayToObject(rate, QKV_RK(PILOT_SEEDS)) : NULL;
    for (int s = 0; ps && s < p->r->n_pilot_seeds; s++)
        cJSON_AddItemToArray(ps, cJSON_CreateNumber((double)p->r->pilot_seeds[s]));
}

/* how the text was read (the text task's) */
static void j_text(cJSON *root, const qkv_report *p) {
    cJSON *text = p->r->tokenizer[0] ? cJSON_AddObjectToObject(root, QKV_RK(TEXT)) : NULL;
    if (!text) return;
    cJSON_AddStringToObject(text, QKV_RK(TOKENIZER), p->r->tokenizer);
    cJSON_AddNumberToObject(text, QKV_RK(PIECES), p->r->pieces);
    j_num(text, QKV_RK(BYTES_PER_TOKEN), p->r->bytes_per_token);
}

/* the largest solve step, the seeds, who wrote the file and how long it took, what is missing, the
 * variants */
static void j_tail(cJSON *root, const qkv_report *p) {
    const qkv_ablate_config *cfg = p->cfg;
    if (p->r->max_solved_at >= 0) cJSON_AddNumberToObject(root, QKV_RK(MAX_SOLVED_AT), (double)p->r->max_solved_at);
    else cJSON_AddNullToObject(root, QKV_RK(MAX_SOLVED_AT));
    cJSON *seeds = cJSON_AddArrayToObject(root, QKV_RK(SEEDS));
    for (int s = 0; seeds && s < cfg->n_seeds; s++)
        cJSON_AddItemToArray(seeds, cJSON_CreateNumber((double)cfg->seeds[s]));
    if (p->r->version[0]) cJSON_AddStringToObject(root, QKV_RK(VERSION), p->r->version);
    else cJSON_AddNullToObject(root, QKV_RK(VERSION));
    j_num(root, QKV_RK(WALL_SECONDS), p->r->wall_seconds);
    cJSON_AddNumberToObject(root, QKV_RK(JOBS), p->r->jobs);
    /* a partial report (ablate --report before the sweep is done) says so */
    cJSON_AddNumberToObject(root, QKV_RK(RUNS_PLANNED), (double)p->nv * p->r->n_lrs * cfg->n_seeds);
    cJSON_AddNumberToObject(root, QKV_RK(MISSING_RUNS), p->r->missing);
    cJSON_AddNumberToObject(root, QKV_RK(RUNS_TO_EXTEND), p->r->to_extend);
    cJSON *vars = cJSON_AddArrayToObject(root, QKV_RK(VARIANTS));
    for (int i = 0; vars && i < p->nv; i++)
        if (!j_variant(vars, p, i)) break;
}

/* the whole file, with a final newline */
char *qkv__report_render_json(const qkv_report *p) {
    const qkv_ablate_config *cfg = p->cfg;
    cJSON *root = cJSON_CreateObject();
    if (!root) return NULL;
    cJSON_AddStringToObject(root, QKV_RK(TITLE), p->facts.title);
    j_num(root, QKV_RK(THRESHOLD), cfg->threshold);
    cJSON_AddStringToObject(root, QKV_RK(BASELINE), cfg->variants[cfg->baseline].name);
    cJSON_AddStringToObject(root, QKV_RK(METRIC), QKV_METRIC_NAMES[cfg->metric]);
    /* what was trained, as the baseline has it (null: unknown): qkv summarize's size axis */
    if (p->facts.task[0]) cJSON_AddStringToObject(root, QKV_RK(TASK), p->facts.task);
    else cJSON_AddNullToObject(root, QKV_RK(TASK));
    if (p->r->chance > 0 && isfinite(p->r->no_retrieval)) { /* recall's floors, where there are some */
        cJSON_AddNumberToObject(root, QKV_RK(CHANCE), p->r->chance);
        cJSON_AddNumberToObject(root, QKV_RK(NO_RETRIEVAL), p->r->no_retrieval);
    }
    j_count(root, QKV_RK(D_MODEL), p->r->d_model);
    j_count(root, QKV_RK(LAYERS), p->r->layers);
    j_count(root, QKV_RK(HEADS), p->r->heads);
    cJSON *lrs = cJSON_AddArrayToObject(root, QKV_RK(LRS));
    for (int l = 0; lrs && l < cfg->n_lrs; l++) cJSON_AddItemToArray(lrs, cJSON_CreateNumber(cfg->lrs[l]));
    /* how each variant's rate was chosen, and how the text was read (a claim can test them) */
    j_rate_choice(root, p);
    j_text(root, p);
    j_tail(root, p);
    char *s = cJSON_Print(root);
    cJSON_Delete(root);
    if (!s) return NULL;
    /* cJSON's allocator is malloc by default; copy anyway so the caller can free() it */
    size_t len = strlen(s);
    char *out = malloc(len + 2);
    if (out) {
        memcpy(out, s, len);
        out[len] = '\n';
        out[len + 1] = 0;
    }
    cJSON_free(s);
    return out;
}
