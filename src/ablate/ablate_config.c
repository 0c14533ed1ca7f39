/* Ablation configs: strict JSON, validated against the training config before any run. */
#include "ablate/ablate.h"
#include "ablate/plan.h"
#include "config/config.h"
#include "config/config_json.h"
#include "io/fileio.h"
#include "io/strbuf.h"
#include "nn/model.h"
#include "tasks/task.h"

#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char **string_list(const cJSON *a, int *n, const char *path, const char *key, qkv_err *e) {
    *n = 0;
    if (!a) return NULL;
    if (!cJSON_IsArray(a)) {
        qkv_err_set(e, QKV_ERR_USAGE, "%s: %s: expected an array of \"path.to.key=value\" strings", path, key);
        return (char **)-1;
    }
    int m = cJSON_GetArraySize(a);
    char **out = calloc((size_t)m + 1, sizeof *out);
    int i = 0;
    for (const cJSON *x = a->child; out && x; x = x->next, i++) {
        if (!cJSON_IsString(x) || !strchr(x->valuestring, '=')) {
            qkv_err_set(e, QKV_ERR_USAGE, "%s: %s[%d]: expected a \"path.to.key=value\" string", path, key, i);
            for (int j = 0; j < i; j++) free(out[j]);
            free(out);
            return (char **)-1;
        }
        out[i] = strdup(x->valuestring);
    }
    *n = m;
    return out;
}

static void free_list(char **l, int n) {
    if (!l) return;
    for (int i = 0; i < n; i++) free(l[i]);
    free(l);
}

static bool name_ok(const char *s) {
    if (!*s || strlen(s) >= QKV_ABLATE_NAME) return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              *s == '_' || *s == '-' || *s == '+' || *s == '.'))
            return false;
    return true;
}

/* every key of obj must be in allowed (NULL-terminated) and appear once */
static int check_keys(const cJSON *obj, const char *const *allowed, const char *path, const char *where,
                      qkv_err *e) {
    for (const cJSON *k = obj->child; k; k = k->next) {
        bool ok = false;
        for (int i = 0; allowed[i]; i++) ok |= !strcmp(k->string, allowed[i]);
        if (!ok) {
            char list[256] = "";
            for (int i = 0; allowed[i]; i++) {
                strncat(list, i ? ", " : "", sizeof list - strlen(list) - 1);
                strncat(list, allowed[i], sizeof list - strlen(list) - 1);
            }
            return qkv_err_set(e, QKV_ERR_USAGE, "%s: %s%s: unknown key (expected one of %s)", path, where, k->string, list);
        }
        for (const cJSON *o = obj->child; o != k; o = o->next)
            if (!strcmp(o->string, k->string))
                return qkv_err_set(e, QKV_ERR_USAGE, "%s: %s%s: duplicate key", path, where, k->string);
    }
    return 0;
}

int qkv__ablate_variant_config(const qkv_ablate_config *c, int v, qkv_config *cfg, qkv_err *e) {
    qkv_err inner;
    qkv_config_defaults(cfg);
    int rc = c->base_json ? qkv_config_parse(cfg, c->base_json, c->path, &inner)
                          : qkv_config_load(cfg, c->base_path, &inner);
    for (int k = 0; !rc && k < c->n_sets; k++) rc = qkv_config_set(cfg, c->sets[k], &inner);
    for (int k = 0; !rc && k < c->variants[v].n_sets; k++)
        rc = qkv_config_set(cfg, c->variants[v].sets[k], &inner);
    if (!rc && c->variants[v].matched_d_ff) cfg->model.d_ff = c->variants[v].matched_d_ff;
    if (!rc) rc = qkv_config_validate(cfg, &inner);
    if (rc) qkv_err_set(e, inner.code, "%s: variant %s: %s", qkv__shown(c->path).s, c->variants[v].name, inner.msg);
    return rc ? -1 : 0;
}

const char *const QKV_METRIC_NAMES[QKV_METRIC_COUNT] = {"accuracy", "loss", "bpb"};

qkv_ablate_metric qkv_ablate_metric_named(const char *name) {
    int k = 0;
    while (name && k < QKV_METRIC_COUNT && strcmp(name, QKV_METRIC_NAMES[k])) k++;
    return name ? (qkv_ablate_metric)k : QKV_METRIC_COUNT;
}

long long qkv__ablate_budget(const qkv_ablate_config *c, const qkv_config *cfg) {
    /* without max_steps: 4 x train.steps, unless the schedule decays or the sweep compares losses
     * (then no extension: "solved" is an accuracy threshold) */
    long long m = c->max_steps                            ? c->max_steps
                  : c->metric != QKV_METRIC_ACCURACY      ? cfg->train.steps
                  : cfg->optim.schedule == QKV_SCHED_CONSTANT ? 4LL * cfg->train.steps
                                                          : cfg->train.steps;
    return m > cfg->train.steps ? m : cfg->train.steps;
}

/* a variant's config must allow what the sweep will do with it: extension by doubling (a
 * learning rate that does not depend on the run's length) and every learning rate of the grid */
static int check_variant(const qkv_ablate_config *c, int v, qkv_err *e) {
    qkv_config cfg;
    if (qkv__ablate_variant_config(c, v, &cfg, e)) return -1;
    const char *name = c->variants[v].name;
    long long steps = cfg.train.steps, budget = qkv__ablate_budget(c, &cfg);
    if (c->max_steps && c->max_steps < steps)
        return qkv_err_set(e, QKV_ERR_USAGE, "%s: max_steps %lld is below variant %s's train.steps %lld",
                           qkv__shown(c->path).s,
                           c->max_steps, name, steps);
    if (budget > steps && cfg.optim.schedule != QKV_SCHED_CONSTANT) /* max_steps given */
        return qkv_err_set(e, QKV_ERR_USAGE, "%s: max_steps: variant %s's optim.schedule %s decays over train.steps, "
                           "so an extended run would differ from a longer one; use the constant schedule, or drop "
                           "max_steps (no extension)", qkv__shown(c->path).s, name,
                           QKV_SCHEDULE_NAMES[cfg.optim.schedule]);
    for (int l = 0; l < c->n_lrs; l++) {
        char set[64];
        qkv_err inner;
        snprintf(set, sizeof set, "optim.lr=%.17g", c->lrs[l]);
        if (qkv_config_set(&cfg, set, &inner) || qkv_config_validate(&cfg, &inner))
            return qkv_err_set(e, inner.code, "%s: lrs[%d]: variant %s: %s", qkv__shown(c->path).s, l, name,
                               inner.msg);
    }
    return 0;
}

/* the parameter count of variant v's model (its task fills in vocab and seq_len) */
static int64_t variant_params(const qkv_ablate_config *c, int v, int d_ff, qkv_err *e) {
    qkv_config cfg;
    if (qkv__ablate_variant_config(c, v, &cfg, e)) return -1;
    if (d_ff) cfg.model.d_ff = d_ff;
    qkv_task t;
    qkv_err inner;
    int rc = qkv_task_open(&t, &cfg.task, 0, &inner) || qkv_task_fit_model(&t, &cfg.model, &inner);
    qkv_task_close(&t);
    if (rc) /* its code kept: a model that does not fit a built-in task is the config's, a damaged data file not */
        return qkv_err_set(e, inner.code, "%s: variant %s: %s", qkv__shown(c->path).s, c->variants[v].name,
                           inner.msg);
    return qkv_model_param_count(&cfg.model);
}

/* record v's parameter count, and for a matched control the d_ff that brings it nearest to the
 * baseline's (the count is linear in d_ff: P(f) = P(0) + f dP) */
static int match_params(qkv_ablate_config *c, int v, qkv_err *e) {
    qkv_ablate_variant *var = &c->variants[v];
    int64_t base = variant_params(c, c->baseline, 0, e);
    int64_t p1 = base < 0 ? -1 : variant_params(c, v, 1, e), p2 = p1 < 0 ? -1 : variant_params(c, v, 2, e);
    if (p2 < 0) return -1;
    var->baseline_params = base;
    if (!var->match_params) {
        var->params = variant_params(c, v, 0, e);
        return var->params < 0 ? -1 : 0;
    }
    int64_t slope = p2 - p1, p0 = p1 - slope;
    long long f = (long long)((double)(base - p0) / (double)slope + 0.5);
    if (f < 1) f = 1;
    if (f > 65536)
        return qkv_err_set(e, QKV_ERR_USAGE, "%s: variant %s: matching the baseline's %lld parameters needs model.d_ff %lld, "
                           "more than 65536", qkv__shown(c->path).s, var->name, (long long)base, f);
    /* the rounding picks the nearest width; check the neighbour for ties of the integer counts */
    if (f > 1 && llabs((long long)(p0 + (f - 1) * slope - base)) < llabs((long long)(p0 + f * slope - base))) f--;
    var->matched_d_ff = (int)f;
    var->params = p0 + f * slope;
    return 0;
}

/* the ablation config's keys, and a variant's */
static const char *const TOP[] = {"title", "base", "set", "variants", "seeds", "lrs", "max_steps", "baseline",
                                  "threshold", "metric", "example", "pilot", "rate_choice", "extend_to_max_steps",
                                  NULL};
static const char *const RATE_CHOICE[] = {"rule", "grid", "pilot_seeds", NULL};
/* keys that are no longer read: refused by name, not as unknown */
static const char *const REMOVED[] = {"batch_runs", "batch_max_runs", NULL};
static const char *const VAR[] = {"name", "set", "match_params", NULL};

/* title, base (a path relative to c->path's directory, or an inline config) and the common set;
 * path: the file as messages name it */
static int parse_head(qkv_ablate_config *c, const cJSON *j, const char *path, qkv_err *e) {
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(j, "title");
    if (t && !cJSON_IsString(t)) return qkv_err_set(e, QKV_ERR_USAGE, "%s: title: expected a string", path);
    if (t) snprintf(c->title, sizeof c->title, "%s", t->valuestring);

    const cJSON *b = cJSON_GetObjectItemCaseSensitive(j, "base");
    if (cJSON_IsString(b)) { /* a path, relative to this file's directory */
        const char *slash = strrchr(c->path, '/');
        int dir = b->valuestring[0] == '/' || !slash ? 0 : (int)(slash - c->path) + 1; /* with its slash */
        if ((size_t)dir + strlen(b->valuestring) >= sizeof c->base_path)
            return qkv_err_set(e, QKV_ERR_USAGE, "%s: base: \"%s\" names a file whose path is longer than %zu bytes, the most a base config's "
                               "path may be", path, qkv__shown(b->valuestring).s, sizeof c->base_path - 1);
        snprintf(c->base_path, sizeof c->base_path, "%.*s%s", dir, c->path, b->valuestring);
    } else if (cJSON_IsObject(b)) {
        c->base_json = cJSON_Print(b);
    } else {
        return qkv_err_set(e, QKV_ERR_USAGE, "%s: base: expected a config path (string) or an inline config (object)", path);
    }

    char **l = string_list(cJSON_GetObjectItemCaseSensitive(j, "set"), &c->n_sets, path, "set", e);
    if (l == (char **)-1) return -1;
    c->sets = l;
    return 0;
}

/* variants[i]: its name (unique among the first i), set and match_params */
static int parse_variant(qkv_ablate_config *c, const cJSON *v, int i, const char *path, qkv_err *e) {
    char where[64];
    snprintf(where, sizeof where, "variants[%d].", i);
    if (!cJSON_IsObject(v)) return qkv_err_set(e, QKV_ERR_USAGE, "%s: variants[%d]: expected an object {\"name\": ..., \"set\": [...]}", path, i);
    if (check_keys(v, VAR, path, where, e)) return -1;
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(v, "name");
    if (!cJSON_IsString(n) || !name_ok(n->valuestring))
        return qkv_err_set(e, QKV_ERR_USAGE, "%s: variants[%d].name: expected 1-63 characters of A-Z a-z 0-9 _ - + .", path, i);
    for (int k = 0; k < i; k++)
        if (!strcmp(c->variants[k].name, n->valuestring))
            return qkv_err_set(e, QKV_ERR_USAGE, "%s: variants[%d].name: \"%s\" is used twice", path, i, n->valuestring);
    snprintf(c->variants[i].name, QKV_ABLATE_NAME, "%s", n->valuestring);
    char key[80];
    snprintf(key, sizeof key, "variants[%d].set", i);
    char **l = string_list(cJSON_GetObjectItemCaseSensitive(v, "set"), &c->variants[i].n_sets, path, key, e);
    if (l == (char **)-1) return -1;
    c->variants[i].sets = l;
    const cJSON *mp = cJSON_GetObjectItemCaseSensitive(v, "match_params");
    if (mp && (!cJSON_IsString(mp) || strcmp(mp->valuestring, "baseline")))
        return qkv_err_set(e, QKV_ERR_USAGE, "%s: variants[%d].match_params: expected \"baseline\" (widen model.d_ff to the baseline's "
                           "parameter count)", path, i);
    c->variants[i].match_params = mp != NULL;
    return 0;
}

/* the non-empty variants array */
static int parse_variants(qkv_ablate_config *c, const cJSON *j, const char *path, qkv_err *e) {
    const cJSON *vs = cJSON_GetObjectItemCaseSensitive(j, "variants");
    if (!cJSON_IsArray(vs) || cJSON_GetArraySize(vs) < 1)
        return qkv_err_set(e, QKV_ERR_USAGE, "%s: variants: expected a non-empty array of {\"name\": ..., \"set\": [...]}", path);
    c->n_variants = cJSON_GetArraySize(vs);
    c->variants = calloc((size_t)c->n_variants, sizeof *c->variants);
    int i = 0;
    for (const cJSON *v = vs->child; v; v = v->next, i++)
        if (parse_variant(c, v, i, path, e)) return -1;
    return 0;
}

/* x in the fewest significant digits that read back as x */
static const char *shortest(double x, char *buf, size_t n) {
    for (int p = 1; p <= 17; p++) {
        snprintf(buf, n, "%.*g", p, x);
        if (strtod(buf, NULL) == x) break;
    }
    return buf;
}

/* the seeds (distinct integers in [0, 2^53)) and the optional learning-rate grid (distinct, in (0, 10]) */
static int parse_seeds_lrs(qkv_ablate_config *c, const cJSON *j, const char *path, qkv_err *e) {
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(j, "seeds");
    if (!cJSON_IsArray(s) || cJSON_GetArraySize(s) < 1)
        return qkv_err_set(e, QKV_ERR_USAGE, "%s: seeds: expected a non-empty array of integers", path);
    c->n_seeds = cJSON_GetArraySize(s);
    c->seeds = calloc((size_t)c->n_seeds, sizeof *c->seeds);
    int i = 0;
    for (const cJSON *x = s->child; x; x = x->next, i++) {
        if (!cJSON_IsNumber(x) || x->valuedouble < 0 || x->valuedouble > 9007199254740991.0 ||
            x->valuedouble != (double)(long long)x->valuedouble)
            return qkv_err_set(e, QKV_ERR_USAGE, "%s: seeds[%d]: expected an integer in [0, 2^53)", path, i);
        c->seeds[i] = (long long)x->valuedouble;
        for (int k = 0; k < i; k++)
            if (c->seeds[k] == c->seeds[i]) return qkv_err_set(e, QKV_ERR_USAGE, "%s: seeds[%d]: %lld is listed twice", path, i, c->seeds[i]);
    }
    const cJSON *lr = cJSON_GetObjectItemCaseSensitive(j, "lrs");
    if (!lr) return 0;
    if (!cJSON_IsArray(lr) || cJSON_GetArraySize(lr) < 1)
        return qkv_err_set(e, QKV_ERR_USAGE, "%s: lrs: expected a non-empty array of learning rates in (0, 10]", path);
    c->n_lrs = cJSON_GetArraySize(lr);
    c->lrs = calloc((size_t)c->n_lrs, sizeof *c->lrs);
    i = 0;
    for (const cJSON *x = lr->child; x; x = x->next, i++) {
        if (!cJSON_IsNumber(x) || !(x->valuedouble > 0 && x->valuedouble <= 10))
            return qkv_err_set(e, QKV_ERR_USAGE, "%s: lrs[%d]: expected a learning rate in (0, 10]", path, i);
        c->lrs[i] = x->valuedouble;
        for (int k = 0; k < i; k++) {
            if (c->lrs[k] == c->lrs[i]) return qkv_err_set(e, QKV_ERR_USAGE, "%s: lrs[%d]: %g is listed twice", path, i, c->lrs[i]);
            char a[32], b[32]; /* the run directories' names (plan.c: lr%g) */
            snprintf(a, sizeof a, "%g", c->lrs[k]);
            snprintf(b, sizeof b, "%g", c->lrs[i]);
            char xi[32], xk[32];
            if (!strcmp(a, b))
                return qkv_err_set(e, QKV_ERR_USAGE, "%s: lrs[%d]: %s and lrs[%d] (%s) would share the run directories named lr%s; give rates "
                                   "that differ within 6 significant digits", path, i, shortest(c->lrs[i], xi, sizeof xi), k,
                                   shortest(c->lrs[k], xk, sizeof xk), a);
        }
    }
    return 0;
}

/* max_steps, the baseline (by name; not itself matched), threshold and metric (no extension
 * unless on accuracy) */
static int parse_study(qkv_ablate_config *c, const cJSON *j, const char *path, qkv_err *e) {
    const cJSON *ms = cJSON_GetObjectItemCaseSensitive(j, "max_steps");
    if (ms && (!cJSON_IsNumber(ms) || ms->valuedouble < 1 || ms->valuedouble > 1e9 ||
               ms->valuedouble != (double)(long long)ms->valuedouble))
        return qkv_err_set(e, QKV_ERR_USAGE, "%s: max_steps: expected an integer in [1, 1000000000] (the extension budget)", path);
    if (ms) c->max_steps = (long long)ms->valuedouble;
    const cJSON *em = cJSON_GetObjectItemCaseSensitive(j, "extend_to_max_steps");
    if (em && !cJSON_IsBool(em))
        return qkv_err_set(e, QKV_ERR_USAGE, "%s: extend_to_max_steps: expected true or false", path);
    c->extend_to_max_steps = cJSON_IsTrue(em);
    if (c->extend_to_max_steps && !ms)
        return qkv_err_set(e, QKV_ERR_USAGE, "%s: extend_to_max_steps: needs max_steps (the steps to extend to)", path);
    const cJSON *bl = cJSON_GetObjectItemCaseSensitive(j, "baseline");
    if (bl) {
        if (!cJSON_IsString(bl)) return qkv_err_set(e, QKV_ERR_USAGE, "%s: baseline: expected a variant's name", path);
        c->baseline = -1;
        for (int k = 0; k < c->n_variants; k++)
            if (!strcmp(c->variants[k].name, bl->valuestring)) c->baseline = k;
        if (c->baseline < 0) return qkv_err_set(e, QKV_ERR_USAGE, "%s: baseline: \"%s\" is not one of the variants", path, bl->valuestring);
    }
    if (c->variants[c->baseline].match_params)
        return qkv_err_set(e, QKV_ERR_USAGE, "%s: variants[%d].match_params: %s is the baseline itself", path, c->baseline,
                           c->variants[c->baseline].name);
    const cJSON *th = cJSON_GetObjectItemCaseSensitive(j, "threshold");
    if (th && (!cJSON_IsNumber(th) || !(th->valuedouble > 0 && th->valuedouble <= 1)))
        return qkv_err_set(e, QKV_ERR_USAGE, "%s: threshold: expected an accuracy in (0, 1]", path);
    if (th) c->threshold = th->valuedouble;
    const cJSON *me = cJSON_GetObjectItemCaseSensitive(j, "metric");
    if (me) {
        qkv_ablate_metric k = qkv_ablate_metric_named(cJSON_IsString(me) ? me->valuestring : NULL);
        if (k == QKV_METRIC_COUNT) return qkv_err_set(e, QKV_ERR_USAGE, "%s: metric: expected \"accuracy\", \"loss\" or \"bpb\"", path);
        c->metric = k;
    }
    if (c->metric != QKV_METRIC_ACCURACY && c->max_steps)
        return qkv_err_set(e, QKV_ERR_USAGE, "%s: max_steps: a sweep on metric \"%s\" is not extended (solving is an accuracy threshold); "
                           "drop max_steps", path, QKV_METRIC_NAMES[c->metric]);
    return 0;
}

/* the example shown in the report, and the pilot that chose the variants' rates */
static int parse_extras(qkv_ablate_config *c, const cJSON *j, const char *path, qkv_err *e) {
    const cJSON *ex = cJSON_GetObjectItemCaseSensitive(j, "example");
    if (ex && (!cJSON_IsNumber(ex) || ex->valuedouble < 0 || ex->valuedouble > 1e6 ||
               ex->valuedouble != (double)(int)ex->valuedouble))
        return qkv_err_set(e, QKV_ERR_USAGE, "%s: example: expected an evaluation example index in [0, 1000000]", path);
    if (ex) c->example = (int)ex->valuedouble;
    const cJSON *pi = cJSON_GetObjectItemCaseSensitive(j, "pilot");
    if (pi && (!cJSON_IsString(pi) || strlen(pi->valuestring) >= sizeof c->pilot))
        return qkv_err_set(e, QKV_ERR_USAGE, "%s: pilot: expected the path of the sweep that chose the rates (a string "
                           "shorter than %zu bytes)", path, sizeof c->pilot);
    if (pi) snprintf(c->pilot, sizeof c->pilot, "%s", pi->valuestring);
    const cJSON *rc = cJSON_GetObjectItemCaseSensitive(j, "rate_choice");
    if (!rc) return 0;
    if (!cJSON_IsObject(rc))
        return qkv_err_set(e, QKV_ERR_USAGE, "%s: rate_choice: expected an object (rule, grid, pilot_seeds)", path);
    if (check_keys(rc, RATE_CHOICE, path, "rate_choice.", e)) return -1;
    const cJSON *ru = cJSON_GetObjectItemCaseSensitive(rc, "rule"), *gr = cJSON_GetObjectItemCaseSensitive(rc, "grid"),
                *ps = cJSON_GetObjectItemCaseSensitive(rc, "pilot_seeds");
    if (!cJSON_IsString(ru) || !ru->valuestring[0] || strlen(ru->valuestring) >= sizeof c->rate_rule)
        return qkv_err_set(e, QKV_ERR_USAGE, "%s: rate_choice.rule: expected how the rates were chosen, in words (a "
                           "string of 1 to %zu bytes)", path, sizeof c->rate_rule - 1);
    snprintf(c->rate_rule, sizeof c->rate_rule, "%s", ru->valuestring);
    int i = 0;
    for (const cJSON *x = cJSON_IsArray(gr) ? gr->child : NULL; x; x = x->next, i++) {
        if (i == QKV_ABLATE_MAX_PILOT || !cJSON_IsNumber(x) || !(x->valuedouble > 0 && x->valuedouble <= 10))
            return qkv_err_set(e, QKV_ERR_USAGE, "%s: rate_choice.grid[%d]: expected at most %d learning rates in (0, 10]",
                               path, i, QKV_ABLATE_MAX_PILOT);
        c->rate_grid[c->n_rate_grid++] = x->valuedouble;
    }
    if (gr && !cJSON_IsArray(gr))
        return qkv_err_set(e, QKV_ERR_USAGE, "%s: rate_choice.grid: expected the pilot's learning rates", path);
    i = 0;
    for (const cJSON *x = cJSON_IsArray(ps) ? ps->child : NULL; x; x = x->next, i++) {
        if (i == QKV_ABLATE_MAX_PILOT || !cJSON_IsNumber(x) || x->valuedouble < 0 || x->valuedouble > 9007199254740991.0 ||
            x->valuedouble != (double)(long long)x->valuedouble)
            return qkv_err_set(e, QKV_ERR_USAGE, "%s: rate_choice.pilot_seeds[%d]: expected at most %d seeds (integers "
                               ">= 0)", path, i, QKV_ABLATE_MAX_PILOT);
        c->pilot_seeds[c->n_pilot_seeds++] = (long long)x->valuedouble;
    }
    if (ps && !cJSON_IsArray(ps))
        return qkv_err_set(e, QKV_ERR_USAGE, "%s: rate_choice.pilot_seeds: expected the pilot's seeds", path);
    return 0;
}

/* the whole parsed config j into c, key by key in the order of the file format */
static int parse_config(qkv_ablate_config *c, const cJSON *j, const char *path, qkv_err *e) {
    if (!cJSON_IsObject(j)) return qkv_err_set(e, QKV_ERR_USAGE, "%s: expected a JSON object", path);
    for (int i = 0; REMOVED[i]; i++)
        if (cJSON_GetObjectItemCaseSensitive(j, REMOVED[i]))
            return qkv_err_set(e, QKV_ERR_USAGE, "%s: %s: removed (each run trains in a process of its own); drop the key", path, REMOVED[i]);
    if (check_keys(j, TOP, path, "", e)) return -1;
    if (parse_head(c, j, path, e) || parse_variants(c, j, path, e) ||
        parse_seeds_lrs(c, j, path, e) || parse_study(c, j, path, e) ||
        parse_extras(c, j, path, e))
        return -1;
    return 0;
}

#undef BAD

/* every variant's config checked, before any directory or run is made; then the parameter-matched
 * controls: the baseline's count, then each matched variant's width */
static int check_variants(qkv_ablate_config *c, qkv_err *e) {
    for (int v = 0; v < c->n_variants; v++)
        if (check_variant(c, v, e)) return -1;
    for (int v = 0; v < c->n_variants; v++)
        if (match_params(c, v, e)) return -1;
    return 0;
}

int qkv_ablate_config_load(qkv_ablate_config *c, const char *path, qkv_err *e) {
    memset(c, 0, sizeof *c);
    qkv_shown label = qkv__shown(path); /* the file as messages name it */
    if (strlen(path) >= sizeof c->path) /* the report names it: held whole, or refused */
        return qkv_err_set(e, QKV_ERR_USAGE, "%s: longer than %zu bytes, the most an ablation config's path may be",
                           label.s, sizeof c->path - 1);
    memcpy(c->path, path, strlen(path) + 1);
    c->threshold = 0.99;
    size_t len;
    char *text = qkv__read_config_file(path, &len, e); /* the same cap as a training config */
    if (!text) return -1;
    cJSON *j = NULL;
    bool oom;
    qkv_err je;
    int bad = qkv__config_json(text, len, label.s, &j, &oom, &je); /* line:column and what was wrong */
    free(text);
    if (bad && oom) return qkv_err_set(e, QKV_ERR_FAIL, "%s: out of memory reading the config", label.s);
    if (bad) return qkv_err_set(e, QKV_ERR_USAGE, "%s", je.msg);
    int rc = parse_config(c, j, label.s, e);
    cJSON_Delete(j);
    if (rc || check_variants(c, e)) {
        qkv_ablate_config_free(c);
        return -1;
    }
    return 0;
}

void qkv_ablate_config_free(qkv_ablate_config *c) {
    free(c->base_json);
    free_list(c->sets, c->n_sets);
    for (int i = 0; c->variants && i < c->n_variants; i++) free_list(c->variants[i].sets, c->variants[i].n_sets);
    free(c->variants);
    free(c->seeds);
    free(c->lrs);
    memset(c, 0, sizeof *c);
}
