/* Tests for src/report/report*.c, svg.c and strbuf.c: the ablation report's files from synthetic
 * results shaped as aggregate.c leaves them (3 variants x 2 seeds, with and without a learning-rate
 * grid: a baseline, a parameter-matched control, a failed run, a variant without a heatmap, a NaN,
 * a name that needs escaping), the exact results table, CSV and JSON, the sentence on significance,
 * a self-contained HTML page, well-formed SVGs (the learning-rate plot on a log axis), and the plot
 * builders' edge cases. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L   /* mkdtemp */
#endif

#include <check.h>
#include <cjson/cJSON.h>
#include <glob.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ablate/results.h"
#include "ablate/results_schema.h"
#include "tensor/tensor.h"
#include "report/report.h"
#include "io/strbuf.h"
#include "io/strbuf.h"
#include "report/svg.h"
#include "io/fileio.h"
#include "testutil.h"

Suite *report_suite(void);

static qkv_err err;
static qkv_err qerr; /* the report writer's */

/* ---------------------------------------------------------------- helpers */

static char *make_tmpdir(void) {
    char *d = malloc(64);
    ck_assert_ptr_nonnull(d);
    qkv_test_mkdtemp(d, 64, "report-test");
    return d;
}

static char *read_in(const char *dir, const char *name) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    char *s = qkv__read_file(path, NULL, &err);
    ck_assert_msg(s != NULL, "cannot read %s: %s", name, err.msg);
    return s;
}

static bool exists(const char *dir, const char *name) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0;
}

static int count(const char *s, const char *needle) {
    int n = 0;
    for (const char *p = strstr(s, needle); p; p = strstr(p + 1, needle)) n++;
    return n;
}

/* A minimal XML well-formedness check: tags balance (with names), one root element named
 * `root`, attribute values quoted, '<' never raw inside them, and every '&' starts a known
 * entity. Returns NULL when fine, else a description of the first problem. */
static const char *xml_check(const char *s, const char *root) {
    static char msg[256];
    enum { MAXD = 64 };
    char stack[MAXD][32];
    int depth = 0, roots = 0;
    const char *p = s;
    while (*p) {
        if (*p == '&') {
            static const char *const ents[] = {"&amp;", "&lt;", "&gt;", "&quot;", "&#"};
            bool ok = false;
            for (int i = 0; i < 5; i++) ok |= strncmp(p, ents[i], strlen(ents[i])) == 0;
            if (!ok) return "raw '&' in text";
            p++;
            continue;
        }
        if (*p == '>') return "raw '>' in text";
        if (*p != '<') {
            if (depth == 0 && !strchr(" \t\r\n", *p)) return "text outside the root element";
            p++;
            continue;
        }
        if (!strncmp(p, "<!--", 4)) {
            const char *e = strstr(p, "-->");
            if (!e) return "unterminated comment";
            p = e + 3;
            continue;
        }
        if (!strncmp(p, "<?", 2)) {
            const char *e = strstr(p, "?>");
            if (!e) return "unterminated declaration";
            p = e + 2;
            continue;
        }
        bool closing = p[1] == '/';
        const char *n = p + (closing ? 2 : 1);
        size_t nl = 0;
        while (n[nl] && !strchr(" \t\r\n/>", n[nl])) nl++;
        if (nl == 0 || nl >= 32) return "bad tag name";
        const char *q = n + nl;
        bool self = false;
        for (;;) {   /* attributes */
            while (*q && strchr(" \t\r\n", *q)) q++;
            if (*q == '>') break;
            if (*q == '/' && q[1] == '>') {
                self = true;
                q++;
                break;
            }
            if (closing) return "attribute in a closing tag";
            const char *a = q;
            while (*q && !strchr(" \t\r\n=/>", *q)) q++;
            if (q == a || *q != '=') return "attribute without a value";
            q++;
            if (*q != '"' && *q != '\'') return "unquoted attribute value";
            char quote = *q++;
            while (*q && *q != quote) {
                if (*q == '<') return "'<' in an attribute value";
                if (*q == '&' && strncmp(q, "&amp;", 5) && strncmp(q, "&lt;", 4) && strncmp(q, "&gt;", 4) &&
                    strncmp(q, "&quot;", 6) && strncmp(q, "&#", 2))
                    return "raw '&' in an attribute value";
                q++;
            }
            if (!*q) return "unterminated attribute value";
            q++;
        }
        if (!*q) return "unterminated tag";
        if (closing) {
            if (depth == 0 || strlen(stack[depth - 1]) != nl || strncmp(stack[depth - 1], n, nl)) {
                snprintf(msg, sizeof msg, "</%.*s> does not close <%s>", (int)nl, n, depth ? stack[depth - 1] : "");
                return msg;
            }
            depth--;
        } else {
            if (depth == 0) {
                roots++;
                if (roots > 1) return "more than one root element";
                if (strlen(root) != nl || strncmp(root, n, nl)) return "wrong root element";
            }
            if (!self) {
                if (depth == MAXD) return "nested too deeply";
                memcpy(stack[depth], n, nl);
                stack[depth][nl] = 0;
                depth++;
            }
        }
        p = q + 1;
    }
    if (depth) return "unclosed element";
    if (!roots) return "no root element";
    return NULL;
}

static void assert_svg(const char *svg, const char *what) {
    ck_assert_msg(svg != NULL, "%s: no SVG", what);
    ck_assert_msg(strncmp(svg, "<svg ", 5) == 0, "%s: does not start with <svg", what);
    const char *e = xml_check(svg, "svg");
    ck_assert_msg(e == NULL, "%s: not well-formed: %s", what, e ? e : "");
    ck_assert_msg(!strstr(svg, "nan") && !strstr(svg, "inf"), "%s: a non-finite number was written", what);
}

/* one CSV record split into fields (quotes understood); returns the field count */
static int csv_split(const char *line, char fields[][256], int max) {
    int n = 0;
    const char *p = line;
    for (;;) {
        if (n == max) return -1;
        size_t o = 0;
        if (*p == '"') {
            p++;
            for (;;) {
                if (!*p) return -1;
                if (*p == '"' && p[1] == '"') {
                    if (o < 255) fields[n][o++] = '"';
                    p += 2;
                } else if (*p == '"') {
                    p++;
                    break;
                } else {
                    if (o < 255) fields[n][o++] = *p;
                    p++;
                }
            }
        } else {
            while (*p && *p != ',' && *p != '\n') {
                if (o < 255) fields[n][o++] = *p;
                p++;
            }
        }
        fields[n++][o] = 0;
        if (*p == ',') {
            p++;
            continue;
        }
        return (*p == '\n' || !*p) ? n : -1;
    }
}

/* the record starting at line `i` (0-based) of a text */
static const char *line_at(const char *s, int i) {
    for (; i > 0 && s; i--) {
        s = strchr(s, '\n');
        if (s) s++;
    }
    return s;
}

/* the keys of a JSON object in order, each followed by a space */
static void keys_of(const cJSON *o, char *dst, size_t n) {
    size_t len = 0;
    dst[0] = 0;
    for (const cJSON *c = o ? o->child : NULL; c && len < n; c = c->next)
        len += (size_t)snprintf(dst + len, n - len, "%s ", c->string ? c->string : "?");
}

static const cJSON *item(const cJSON *o, const char *key) {
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, key);
    ck_assert_msg(x != NULL, "no key %s", key);
    return x;
}

static double number(const cJSON *o, const char *key) {
    const cJSON *x = item(o, key);
    ck_assert_msg(cJSON_IsNumber(x), "%s is not a number", key);
    return x->valuedouble;
}

static bool is_null(const cJSON *o, const char *key) { return cJSON_IsNull(item(o, key)); }

/* the x of the x-axis tick labelled `label` (tick labels are the only texts centred without
 * further attributes) */
static double x_tick(const char *svg, const char *label) {
    char pat[96];
    snprintf(pat, sizeof pat, " text-anchor=\"middle\">%s</text>", label);
    const char *e = strstr(svg, pat);
    ck_assert_msg(e != NULL, "no x tick %s", label);
    const char *t = e;
    while (t > svg && strncmp(t, "<text x=\"", 9)) t--;
    double x = NAN;
    ck_assert_int_eq(sscanf(t, "<text x=\"%lf\"", &x), 1);
    return x;
}

/* whether a point of a series is drawn at x (the SVG writes both with %.2f) */
static bool circle_at(const char *svg, double x) {
    char pat[64];
    snprintf(pat, sizeof pat, "<circle cx=\"%.2f\"", x);
    return strstr(svg, pat) != NULL;
}

/* ---------------------------------------------------------------- the synthetic results */

/* Results as aggregate.c leaves them (results.h) for 3 variants: "full" (the baseline), "shared"
 * (a parameter-matched control) and WEIRD (a name that needs escaping). The statistics are worked
 * out by hand: with two seeds a 95% percentile bootstrap interval is the range of the two values,
 * and the sign-flip p of n differences of one sign is 2 / 2^n. */

#define NV 3
#define NS 2            /* seeds of the main fixture */
#define MAXS 7          /* ... and of the significance fixtures */
#define MAXL 2          /* the learning-rate grid */
#define MAXE 9          /* evaluations of a run: steps 0, 50, ..., 400 */
#define NR (NV * MAXL * MAXS)
#define WEIRD "a&b<c"

/* what a run's summary.json says */
typedef struct spec {
    bool ok;                    /* false: failed (no summary.json) */
    double acc, loss;           /* its final evaluation */
    long long solved_at;        /* -1: unsolved */
    long long steps;            /* the steps it ran: train.steps (150), or extended to max_steps (400) */
    long long flat_since;       /* -1: still improving */
} spec;

static const spec FAILED = {false, 0, 0, -1, 0, -1};

typedef struct fixture {
    qkv_ablate_config cfg;
    qkv_ablate_variant variants[NV];
    long long seeds[MAXS];
    double lrs[MAXL];
    char *common[1];
    char *vsets[NV][2];
    qkv_variant_result v[NV];
    qkv_lr_result lr[NV][MAXL];
    qkv_run_result all_runs[NR], runs[NV * MAXS];
    long long steps[NR][MAXE];
    double acc[NR][MAXE], loss[NR][MAXE], val_acc[NR][MAXE], val_loss[NR][MAXE];
    float w[2][2][5][5];
    int32_t tokens[5], targets[5];
    qkv_ablate_results r;
} fixture;

static void fill_heat(fixture *f) {
    for (int l = 0; l < 2; l++)
        for (int h = 0; h < 2; h++)
            for (int q = 0; q < 5; q++) {
                for (int k = 0; k < 5; k++) f->w[l][h][q][k] = k <= q ? 1.0f / (float)(q + 1) : 0.0f;
                if (l == 1 && h == 1 && q > 0) {   /* a sharp head: all weight on the previous token */
                    for (int k = 0; k < 5; k++) f->w[l][h][q][k] = k == q - 1 ? 1.0f : 0.0f;
                }
            }
    for (int t = 0; t < 5; t++) {
        f->tokens[t] = 3 + 7 * t;
        f->targets[t] = t == 4 ? 10 : -100;
    }
}

/* run (variant i, rate l, seed s) as read_run leaves it: a finished run with its summary and its
 * evaluations every 50 steps up to the steps it ran (validation 1 point below, its loss 0.01
 * above); a failed one with only its indices and rate (no summary.json: zeros, no curve) */
static void fill_run(fixture *f, int i, int l, int s, const spec *sp) {
    int k = (i * f->r.n_lrs + l) * f->cfg.n_seeds + s;   /* plan.h's order */
    ck_assert(k < NR);
    qkv_run_result *run = &f->all_runs[k];
    memset(run, 0, sizeof *run);
    run->variant = i;
    run->lr_index = l;
    run->seed_index = s;
    run->seed = f->seeds[s];
    run->lr = f->cfg.n_lrs ? f->lrs[l] : NAN;
    run->steps_to_threshold = run->flat_since = -1;
    if (!sp->ok) return;
    run->ok = true;
    run->n = (int)(sp->steps / 50) + 1;
    ck_assert(run->n <= MAXE);
    for (int j = 0; j < run->n; j++) {
        double t = (double)j / (run->n - 1);
        f->steps[k][j] = 50 * j;
        f->acc[k][j] = 0.1 + (sp->acc - 0.1) * t;
        f->loss[k][j] = 3.0 * pow(sp->loss / 3.0, t);
        f->val_acc[k][j] = f->acc[k][j] - 0.01;
        f->val_loss[k][j] = f->loss[k][j] + 0.01;
    }
    f->acc[k][run->n - 1] = sp->acc;
    f->loss[k][run->n - 1] = sp->loss;
    run->step = f->steps[k];
    run->eval_acc = f->acc[k];
    run->eval_loss = f->loss[k];
    run->val_acc = f->val_acc[k];
    run->val_loss = f->val_loss[k];
    run->final_acc = sp->acc;
    run->final_loss = sp->loss;
    run->val_final_acc = sp->acc - 0.01;
    run->val_final_loss = sp->loss + 0.01;
    run->train_loss = sp->loss;
    run->seconds = 2.0 + i + 0.5 * s;
    run->steps = sp->steps;
    run->solved = sp->solved_at >= 0;
    run->steps_to_threshold = sp->solved_at;
    run->improving = sp->flat_since < 0;
    run->flat_since = sp->flat_since;
}

/* each variant's chosen rate, and its runs there as r->runs (copies, as aggregate.c makes) */
static void choose(fixture *f, const int chosen[NV]) {
    int ns = f->cfg.n_seeds, nl = f->r.n_lrs;
    for (int i = 0; i < f->cfg.n_variants; i++) {
        f->v[i].lr_chosen = chosen[i];
        f->v[i].lr = f->lr[i][chosen[i]].lr;
        for (int s = 0; s < ns; s++) f->runs[i * ns + s] = f->all_runs[(i * nl + chosen[i]) * ns + s];
    }
}

/* summarise()'s accuracy and loss over the chosen runs: means, sds, worst seed, 95% intervals */
static void set_acc(qkv_variant_result *v, int runs_ok, double mean, double sd, double min, double lo, double hi) {
    v->runs_ok = runs_ok;
    v->acc_mean = mean;
    v->acc_std = sd;
    v->acc_min = min;
    v->acc_ci_lo = lo;
    v->acc_ci_hi = hi;
}

static void set_loss(qkv_variant_result *v, double mean, double sd, double lo, double hi) {
    v->loss_mean = mean;
    v->loss_std = sd;
    v->loss_ci_lo = lo;
    v->loss_ci_hi = hi;
}

/* summarise()'s verdicts: counts, the censored median (-1: not reached), the unsolved runs' steps
 * and flat_since (the sentinels INT64_MAX / -1 where there is none), the sentence */
static void set_verdicts(qkv_variant_result *v, int solved, int unsolved, int improving, long long median,
                         long long budget, long long flat, const char *text) {
    v->solved = v->reached = solved;
    v->unsolved = unsolved;
    v->unsolved_improving = improving;
    v->steps_median = median;
    v->budget_min = unsolved ? budget : INT64_MAX;
    v->budget_max = unsolved ? budget : -1;
    v->flat_min = unsolved > improving ? flat : INT64_MAX;
    v->flat_max = unsolved > improving ? flat : -1;
    snprintf(v->verdicts, sizeof v->verdicts, "%s", text);
}

/* compare()'s paired difference from the baseline and the Holm step */
static void set_delta(qkv_variant_result *v, int pairs, double d, double lo, double hi, double p, double holm) {
    v->pairs = pairs;
    v->delta = d;
    v->delta_ci_lo = lo;
    v->delta_ci_hi = hi;
    v->p_value = p;
    v->p_holm = holm;
    v->significant = holm <= 0.05;
}

/* what runs of a qkv before them did not record: the previous-position share and every diagnostic
 * at step 0 (NaN) */
static void no_start(qkv_variant_result *v) {
    v->diag.prev_share = NAN;
    v->diag_start = (qkv_attn_diag){.diag_share = NAN, .first_share = NAN, .entropy = NAN, .entropy_uniform = NAN,
                                    .symmetry = NAN, .negative_mass = NAN, .prev_share = NAN};
}

static const char *const NAMES[NV] = {"full", "shared", WEIRD};

/* the config, the variants' fixed facts (parameters, overrides, diagnostics, heatmaps) and the
 * results' settings; runs and statistics are the callers' */
static fixture *fixture_base(int ns, bool grid) {
    ck_assert(ns >= 1 && ns <= MAXS);
    fixture *f = calloc(1, sizeof *f);
    ck_assert_ptr_nonnull(f);
    qkv_ablate_config *c = &f->cfg;
    snprintf(c->path, sizeof c->path, "configs/ablate-qkv.json");
    snprintf(c->base_path, sizeof c->base_path, "configs/recall.json");
    f->common[0] = "train.steps=150";
    c->sets = f->common;
    c->n_sets = 1;
    f->vsets[0][0] = "model.attention.qkv=full";
    f->vsets[1][0] = "model.attention.qkv=shared";
    f->vsets[2][0] = "model.attention.qkv=identity";
    f->vsets[2][1] = "task.note=\"x,y\"";
    const int64_t attn[NV] = {3 * 2 * 64 * 64, 2 * 64 * 64, 0}, params[NV] = {124576, 124560, 100000};
    for (int i = 0; i < NV; i++) {
        qkv_ablate_variant *cv = &f->variants[i];
        snprintf(cv->name, QKV_ABLATE_NAME, "%s", NAMES[i]);
        cv->sets = f->vsets[i];
        cv->n_sets = i == 2 ? 2 : 1;
        cv->params = params[i];
        cv->baseline_params = params[0];   /* ablate_config.c records it for every variant */
    }
    /* "shared" is matched to the baseline: model.d_ff widened to 288 brings it nearest */
    f->variants[1].match_params = true;
    f->variants[1].matched_d_ff = 288;
    c->variants = f->variants;
    c->n_variants = NV;
    for (int s = 0; s < ns; s++) f->seeds[s] = s;
    c->seeds = f->seeds;
    c->n_seeds = ns;
    f->lrs[0] = 0.001;
    f->lrs[1] = 0.01;
    if (grid) {
        c->lrs = f->lrs;
        c->n_lrs = MAXL;
    }
    c->max_steps = 400;
    c->baseline = 0;
    c->threshold = 0.9;
    c->example = 0;
    snprintf(c->title, sizeof c->title, "Q/K/V ablation & <test>");

    fill_heat(f);
    for (int i = 0; i < NV; i++) {
        qkv_variant_result *v = &f->v[i];
        const qkv_ablate_variant *cv = &f->variants[i];
        memcpy(v->name, cv->name, sizeof v->name);
        snprintf(v->sets, sizeof v->sets, "%s%s%s", f->vsets[i][0], i == 2 ? " " : "", i == 2 ? f->vsets[2][1] : "");
        v->attn_params = attn[i];
        v->params = cv->params;
        v->baseline_params = cv->baseline_params;
        v->matched_d_ff = cv->matched_d_ff;
        v->lrs = f->lr[i];
        set_delta(v, 0, NAN, NAN, NAN, NAN, NAN);   /* the baseline's stay so */
        v->significant = false;
        v->diag.diag_share = 0.1 * (i + 1);
        v->diag.first_share = 0.05 * (i + 1);
        v->diag.entropy = i == 2 ? NAN : 1.0 + 0.1 * i;
        v->diag.entropy_uniform = 1.7;
        v->diag.symmetry = i == 1 ? 1 : 0.25 * i - 0.125; /* shared: a tied Q = K is symmetric */
        v->diag.negative_mass = i == 1 ? 0 : i == 2 ? NAN : 0.5;
        no_start(v);
        if (i != 1)   /* no heatmap for "shared" */
            v->heat = (qkv_heatmap){2, 2, 5, &f->w[0][0][0][0], f->tokens, f->targets};
    }
    f->r.cfg = c;
    f->r.v = f->v;
    f->r.runs = f->runs;
    f->r.all_runs = f->all_runs;
    f->r.n_lrs = grid ? MAXL : 1;
    f->r.max_solved_at = -1;
    f->r.base_config_json = "{\n  \"task\": {\"name\": \"recall\"},\n  \"note\": \"<b>&</b>\"\n}";
    snprintf(f->r.task, sizeof f->r.task, "recall"); /* the baseline's task (aggregate.c reads it from its config) */
    f->r.d_model = 64;   /* the baseline's size (aggregate.c reads it from its config) */
    f->r.layers = 2;
    f->r.heads = 4;
    snprintf(f->r.version, sizeof f->r.version, "0.1.0");
    f->r.wall_seconds = 12.5;
    f->r.jobs = 2;
    return f;
}

/* The main fixture: 2 seeds, with the grid lrs = {0.001, 0.01} or without one. The chosen rates'
 * runs are the same either way:
 *   full (baseline):  seed 0 solved at 150 (94%), seed 1 unsolved at 400, flat since 100 (50%)
 *   shared (matched): seed 0 unsolved at 400, still improving (61.23%), seed 1 failed
 *   WEIRD:            seed 0 solved at 150 (98%, a NaN loss on the way), seed 1 unsolved at 400,
 *                     still improving (48%): paired differences +4 and -2 points
 * The grid's other rates did worse on validation; WEIRD's seed 1 failed there. */
static fixture *fixture_new(bool grid) {
    fixture *f = fixture_base(NS, grid);
    static const spec chosen[NV][NS] = {
        {{true, 0.94, 0.12, 150, 150, -1}, {true, 0.50, 1.5, -1, 400, 100}},
        {{true, 0.6123, 1.2, -1, 400, -1}, {false, 0, 0, -1, 0, -1}},
        {{true, 0.98, 0.05, 150, 150, -1}, {true, 0.48, 1.6, -1, 400, -1}},
    };
    static const spec other[NV][NS] = {
        {{true, 0.30, 2.0, -1, 400, -1}, {true, 0.32, 1.9, -1, 400, -1}},
        {{true, 0.20, 2.5, -1, 400, 200}, {true, 0.22, 2.4, -1, 400, 200}},
        {{true, 0.40, 1.8, -1, 400, -1}, {false, 0, 0, -1, 0, -1}},
    };
    const int grid_chosen[NV] = {1, 0, 1}, none[NV] = {0, 0, 0};
    const int *ch = grid ? grid_chosen : none;
    for (int i = 0; i < NV; i++)
        for (int l = 0; l < f->r.n_lrs; l++)
            for (int s = 0; s < NS; s++) fill_run(f, i, l, s, l == ch[i] ? &chosen[i][s] : &other[i][s]);
    f->loss[(2 * f->r.n_lrs + ch[2]) * NS + 0][1] = NAN;

    /* choose_lr: validation accuracy (mean, min, max) and loss per rate */
    const qkv_lr_result at_chosen[NV] = {{0, 2, 0.71, 0.49, 0.93, 0.82}, {0, 1, 0.6023, 0.6023, 0.6023, 1.21},
                                         {0, 2, 0.72, 0.47, 0.97, 0.835}};
    const qkv_lr_result at_other[NV] = {{0, 2, 0.30, 0.29, 0.31, 1.96}, {0, 2, 0.20, 0.19, 0.21, 2.46},
                                        {0, 1, 0.39, 0.39, 0.39, 1.81}};
    for (int i = 0; i < NV; i++)
        for (int l = 0; l < f->r.n_lrs; l++) {
            f->lr[i][l] = l == ch[i] ? at_chosen[i] : at_other[i];
            f->lr[i][l].lr = grid ? f->lrs[l] : NAN;
        }
    choose(f, ch);

    qkv_variant_result *v = f->v;
    set_acc(&v[0], 2, 0.72, 0.22 * sqrt(2), 0.50, 0.50, 0.94);
    set_loss(&v[0], 0.81, 0.69 * sqrt(2), 0.12, 1.5);
    set_verdicts(&v[0], 1, 1, 0, -1, 400, 100,
                 "1/2 solved (median not reached within the budget), 1/2 unsolved at 400, flat since 100");
    v[0].seconds = 2.25;
    set_acc(&v[1], 1, 0.6123, 0, 0.6123, 0.6123, 0.6123);
    set_loss(&v[1], 1.2, 0, 1.2, 1.2);
    set_verdicts(&v[1], 0, 1, 1, -1, 400, -1, "1/2 unsolved at 400, still improving, 1/2 failed");
    v[1].seconds = 3.0;
    set_acc(&v[2], 2, 0.73, 0.25 * sqrt(2), 0.48, 0.48, 0.98);
    set_loss(&v[2], 0.825, 0.775 * sqrt(2), 0.05, 1.6);
    set_verdicts(&v[2], 1, 1, 1, -1, 400, -1,
                 "1/2 solved (median not reached within the budget), 1/2 unsolved at 400, still improving");
    v[2].seconds = 4.25;
    /* one pair for shared (its seed 1 failed): p = 1; two of opposite signs for WEIRD: p = 1 */
    set_delta(&v[1], 1, 0.6123 - 0.94, 0.6123 - 0.94, 0.6123 - 0.94, 1, 1);
    set_delta(&v[2], 2, 0.01, -0.02, 0.04, 1, 1);
    f->r.max_solved_at = 150;
    return f;
}

/* The significance fixture: ns seeds, no grid. full and shared solve every seed at 150 with 95%;
 * WEIRD is, with `effect`, 25 or 35 points worse on alternate seeds (30 on the last of an odd
 * count), unsolved at 400 and flat since 100: every difference negative, p = 2 / 2^ns; without
 * it, 5 points better or worse on alternate seeds (equal on the last of an odd count), solved
 * too: p = 1. Holm over the two comparisons doubles the smaller p. */
static fixture *fixture_seeds(int ns, bool effect) {
    fixture *f = fixture_base(ns, false);
    const spec good = {true, 0.95, 0.10, 150, 150, -1};
    for (int s = 0; s < ns; s++) {
        double d = s == ns - 1 ? 0 : s % 2 ? 0.05 : -0.05;
        spec weird = effect ? (spec){true, 0.65 + d, 1.0, -1, 400, 100} : (spec){true, 0.95 + d, 0.10, 150, 150, -1};
        fill_run(f, 0, 0, s, &good);
        fill_run(f, 1, 0, s, &good);
        fill_run(f, 2, 0, s, &weird);
    }
    for (int i = 0; i < NV; i++) f->lr[i][0] = (qkv_lr_result){NAN, ns, 0.94, 0.94, 0.94, 0.11};
    f->lr[2][0].val_acc_mean = effect ? 0.64 : 0.94;
    const int ch[NV] = {0, 0, 0};
    choose(f, ch);
    char solved[64], unsolved[64];
    snprintf(solved, sizeof solved, "%d/%d solved (median step 150)", ns, ns);
    snprintf(unsolved, sizeof unsolved, "%d/%d unsolved at 400, flat since 100", ns, ns);
    for (int i = 0; i < NV; i++) {
        qkv_variant_result *v = &f->v[i];
        set_acc(v, ns, 0.95, 0, 0.95, 0.95, 0.95);
        set_loss(v, 0.10, 0, 0.10, 0.10);
        set_verdicts(v, ns, 0, 0, 150, -1, -1, solved);
        v->seconds = 2.0 + i + 0.25 * (ns - 1);
    }
    /* alternate +-5 points (and one 0 over an odd count) */
    double p = effect ? 2.0 / (double)(1 << ns) : 1, sd = 0.05 * sqrt((double)(ns - ns % 2) / (ns - 1));
    if (effect) {
        set_acc(&f->v[2], ns, 0.65, sd, 0.60, 0.62, 0.68);
        set_loss(&f->v[2], 1.0, 0, 1.0, 1.0);
        set_verdicts(&f->v[2], 0, ns, 0, -1, 400, 100, unsolved);
        set_delta(&f->v[2], ns, -0.30, -0.33, -0.27, p, fmin(1, 2 * p));
    } else {
        set_acc(&f->v[2], ns, 0.95, sd, 0.90, 0.92, 0.98);
        set_delta(&f->v[2], ns, 0, -0.03, 0.03, 1, 1);
    }
    set_delta(&f->v[1], ns, 0, 0, 0, 1, 1);
    f->r.significant = f->v[2].significant;
    f->r.max_solved_at = 150;
    return f;
}

/* ---------------------------------------------------------------- the report */

/* writes the report of f into a new directory (returned) */
static char *write_report(const fixture *f) {
    char *dir = make_tmpdir();
    int rc = qkv__report_write(&f->r, dir, NULL, &qerr);
    ck_assert_msg(rc == 0, "report failed: %s", qerr.msg);
    return dir;
}

static const char *const FILES[] = {"results.md", "results.csv", "results.json", "report.md", "report.html",
                                    "plots/accuracy.svg", "plots/loss.svg", "plots/attention-full.svg",
                                    "plots/attention-a_b_c-2.svg", "plots/learning-rate.svg"};
#define N_FILES ((int)(sizeof FILES / sizeof FILES[0]))

#define TITLE_MD "# Q/K/V ablation &amp; &lt;test&gt;\n\n"
#define EM "\xe2\x80\x94"

/* the results table of the main fixture: its header and rows, split around the lr column */
#define HEAD_A "| variant | attention params | params |"
#define HEAD_B " verdicts (validation acc \xe2\x89\xa5 90%) | final eval acc %: mean [95% CI] (min) | " \
               "\xce\x94 acc vs full (points) [95% CI] | p (Holm) | eval loss: mean [95% CI] | s/run |\n"
#define FULL_A "| full | 24,576 | 124,576 |"
#define FULL_B " 1/2 solved (median not reached within the budget), 1/2 unsolved at 400, flat since 100 | " \
               "72.0 [50.0, 94.0] (50.0) | baseline | " EM " | 0.8100 [0.1200, 1.5000] | 2.2 |\n"
#define SHARED_A "| shared | 8,192 | 124,560 (d_ff 288, matched to full's 124,576) |"
#define SHARED_B " 1/2 unsolved at 400, still improving, 1/2 failed | 61.2 [61.2, 61.2] (61.2) | " \
                 "-32.8 [-32.8, -32.8] | 1 (1) | 1.2000 [1.2000, 1.2000] | 3.0 |\n"
#define WEIRD_A "| a&amp;b&lt;c | 0 | 100,000 |"
#define WEIRD_B " 1/2 solved (median not reached within the budget), 1/2 unsolved at 400, still improving | " \
                "73.0 [48.0, 98.0] (48.0) | +1.0 [-2.0, 4.0] | 1 (1) | 0.8250 [0.0500, 1.6000] | 4.2 |\n"

/* fixture_seeds' findings with an effect: a&b<c below full in every seed */
#define FINDINGS(n)                                                                                            \
    "What was found on the `recall` task (validation accuracy 90% counts as solved): full (the baseline) "     \
    "reached 90% in " n " of " n " seeds (median step 150), final evaluation accuracy 95.0%. shared reached "    \
    "90% in " n " of " n " seeds (median step 150), final evaluation accuracy 95.0%, as good as full on "       \
    "average (within half a point). a&amp;b&lt;c reached 90% in none of " n " seeds within 400 steps, final "  \
    "evaluation accuracy 65.0%, 30.0 points below full in every one of the " n " paired seeds."

/* two seeds cannot make any difference significant, and the report says why */
#define NONE_SIG(n, pmin)                                                                                   \
    "No difference in final accuracy from the baseline (full) is significant at 0.05 after Holm's "      \
    "correction over 2 comparisons. With " n " paired seeds the test's smallest possible p-value is " pmin \
    ", above the 0.025 that the first of 2 Holm comparisons needs: more seeds are needed to call any "    \
    "difference significant.\n"

/* results.md and report.md start with the title, the findings in plain words (a paragraph
 * starting "What was found") and then `sentence`, the significance paragraph */
static void assert_sentence(const char *dir, const char *sentence) {
    const char *files[] = {"results.md", "report.md"};
    for (int i = 0; i < 2; i++) {
        char *md = read_in(dir, files[i]);
        ck_assert_msg(!strncmp(md, TITLE_MD "What was found", strlen(TITLE_MD "What was found")),
                      "%s starts:\n%.300s", files[i], md);
        const char *next = strstr(md + strlen(TITLE_MD), "\n\n");
        ck_assert_ptr_nonnull(next);
        ck_assert_msg(!strncmp(next + 2, sentence, strlen(sentence)), "%s: after the findings:\n%.*s\nexpected:\n%s",
                      files[i], (int)strlen(sentence), next + 2, sentence);
        free(md);
    }
}

/* the findings paragraph of dir's results.md (a new string) */
static char *findings_of(const char *dir) {
    char *md = read_in(dir, "results.md");
    char *at = strstr(md, "What was found");
    ck_assert_ptr_nonnull(at);
    char *end = strstr(at, "\n\n");
    ck_assert_ptr_nonnull(end);
    *end = 0;
    char *out = strdup(at);
    free(md);
    return out;
}

/* _i: 0 without a learning-rate grid, 1 with one */
START_TEST(report_writes_every_file) {
    bool grid = _i;
    fixture *f = fixture_new(grid);
    char *dir = make_tmpdir();
    FILE *table = tmpfile();
    ck_assert_ptr_nonnull(table);
    int rc = qkv__report_write(&f->r, dir, table, &qerr);
    ck_assert_msg(rc == 0, "report failed: %s", qerr.msg);
    for (int i = 0; i < N_FILES - 1; i++) ck_assert_msg(exists(dir, FILES[i]), "%s is missing", FILES[i]);
    /* the learning-rate plot only with a grid */
    ck_assert_msg(exists(dir, "plots/learning-rate.svg") == grid, "learning-rate.svg %s",
                  grid ? "missing" : "written without a grid");
    ck_assert_msg(!exists(dir, "plots/attention-shared.svg"), "a heatmap for a variant without one");
    /* no temporary files left behind */
    char found[4096];
    ck_assert_msg(!qkv_test_find_temp(dir, found, sizeof found), "left over: %s", found);

    /* the table printed to the stream is results.md */
    char *md = read_in(dir, "results.md");
    rewind(table);
    static char printed[65536];
    size_t n = fread(printed, 1, sizeof printed - 1, table);
    printed[n] = 0;
    fclose(table);
    ck_assert_msg(!strcmp(printed, md), "the table printed is not results.md");
    /* the findings and the significance sentence at the top, then the results table, row by row */
    assert_sentence(dir, NONE_SIG("2", "0.5") "\n");
    const char *rows = grid ? HEAD_A " lr |" HEAD_B "|---|---:|---:|---:|---|---:|---:|---:|---:|---:|\n"
                                FULL_A " 0.01 |" FULL_B SHARED_A " 0.001 |" SHARED_B WEIRD_A " 0.01 |" WEIRD_B
                            : HEAD_A HEAD_B "|---|---:|---:|---|---:|---:|---:|---:|---:|\n"
                                FULL_A FULL_B SHARED_A SHARED_B WEIRD_A WEIRD_B;
    ck_assert_msg(strstr(md, rows) != NULL, "results table:\n%s\nexpected:\n%s", md, rows);
    ck_assert_ptr_nonnull(strstr(md, "## Attention diagnostics"));
    ck_assert_ptr_nonnull(strstr(md, "| a&amp;b&lt;c | 0.300 | 0.150 | " EM " | 1.700 |"));
    ck_assert_ptr_null(strstr(md, WEIRD));
    ck_assert_ptr_null(strstr(md, "nan"));
    free(md);

    char *rmd = read_in(dir, "report.md");
    ck_assert_ptr_nonnull(strstr(rmd, "\n\n" NONE_SIG("2", "0.5")));
    ck_assert_ptr_nonnull(strstr(rmd, rows));
    /* the invocation's wall time, and the finished runs' own times summed (a re-rendered report's
     * invocation reuses every run) */
    double run_s = 0;
    for (int k = 0; k < NV * f->r.n_lrs * 2; k++) run_s += f->all_runs[k].ok ? f->all_runs[k].seconds : 0;
    char took[256];
    snprintf(took, sizeof took, "This invocation of qkv ablate took 12.5 s of wall time with 2 parallel jobs "
             "(finished runs that it reused cost it nothing); the finished runs took %.1f s in all, one after "
             "another.", run_s);
    ck_assert_msg(strstr(rmd, took) != NULL, "no \"%s\"", took);
    ck_assert_ptr_nonnull(strstr(rmd, grid ? "qkv 0.1.0 trained 3 variants \xc3\x97 2 learning rates (0.001, 0.01) "
                                             "\xc3\x97 2 seeds (0, 1) on the `recall` task"
                                           : "qkv 0.1.0 trained 3 variants \xc3\x97 2 seeds (0, 1) on the "
                                             "`recall` task"));
    ck_assert_ptr_nonnull(strstr(rmd, "up to max_steps 400 or, when lower, 4\xc3\x97 the largest step at which "
                                      "any run solved it (150 here)"));
    /* shared's seed 1 failed, and with the grid WEIRD's seed 1 at the rate not chosen */
    ck_assert_ptr_nonnull(strstr(rmd, grid ? " 2 runs failed and are left out of the statistics.\n"
                                           : " 1 run failed and is left out of the statistics.\n"));
    ck_assert((strstr(rmd, "Each variant's learning rate is the one with the best mean validation accuracy") != NULL) ==
              grid);
    ck_assert_ptr_nonnull(strstr(rmd, "](plots/accuracy.svg)"));
    ck_assert_ptr_nonnull(strstr(rmd, "](plots/loss.svg)"));
    ck_assert((strstr(rmd, "](plots/learning-rate.svg)") != NULL) == grid);
    ck_assert_ptr_nonnull(strstr(rmd, "](plots/attention-full.svg)"));
    ck_assert_ptr_nonnull(strstr(rmd, "](plots/attention-a_b_c-2.svg)"));
    ck_assert_ptr_nonnull(strstr(rmd, "No attention map was recorded"));
    ck_assert_ptr_nonnull(strstr(rmd, "```json\n{\n  \"task\""));
    ck_assert_ptr_nonnull(strstr(rmd, "`configs/recall.json`"));
    ck_assert_ptr_nonnull(strstr(rmd, "`--set train.steps=150`"));
    ck_assert_ptr_null(strstr(rmd, "nan"));
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "build/qkv ablate configs/ablate-qkv.json --out %s\n", dir);
    ck_assert_msg(strstr(rmd, cmd) != NULL, "no reproduce command in report.md");
    /* the page ends with the command, what differs from the base config, then the full config
     * collapsed; the sentence on choosing rates only where rates were chosen */
    const char *rep = strstr(rmd, "## Reproduce\n");
    ck_assert_ptr_nonnull(rep);
    const char *c1 = strstr(rep, cmd), *d1 = strstr(rep, "What differs from the base config `configs/recall.json`: every "
                                                         "run `--set train.steps=150`"),
               *z1 = strstr(rep, "<details><summary>The full effective config of the first variant&#39;s first run"
                                 "</summary>\n\n```json\n");
    ck_assert_msg(c1 && d1 && z1 && c1 < d1 && d1 < z1, "%s", rep);
    ck_assert_ptr_nonnull(strstr(z1, "```\n\n</details>\n"));
    ck_assert((strstr(rmd, "Each variant at its learning rate (chosen on the validation set") != NULL) == grid);
    char *html = read_in(dir, "report.html");
    ck_assert_ptr_nonnull(strstr(html, "<details><summary>The full effective config of the first variant&#39;s first "
                                       "run</summary><pre><code>{"));
    free(html);
    free(rmd);

    qkv_test_rmtree(dir);
    free(dir);
    free(f);
}
END_TEST

/* the columns results.csv had before the grid, in their order, then the ones added with it */
#define CSV_HEADER                                                                                          \
    "variant,attn_params,params,acc_mean,acc_std,acc_min,loss_mean,loss_std,steps_to_threshold,seconds,"   \
    "diag_share,first_share,entropy,sets,verdicts,budget,lr,acc_ci_low,acc_ci_high,loss_ci_low,"           \
    "loss_ci_high,delta_vs_baseline,delta_ci_low,delta_ci_high,p_value,p_holm,significant,solved,unsolved," \
    "matched_d_ff,baseline_params,score_symmetry,score_negative_share\n"
#define CSV_FIELDS 33

/* the main fixture's rows, split around the lr column; computed by hand from fixture_new */
#define CSV_FULL_A "full,24576,124576,0.72,0.311127,0.5,0.81,0.975807,never,2.25,0.1,0.05,1,"              \
                   "model.attention.qkv=full,"                                                             \
                   "\"1/2 solved (median not reached within the budget), 1/2 unsolved at 400, flat since 100\",400,"
#define CSV_FULL_B ",0.5,0.94,0.12,1.5,,,,,,,1,1,,,-0.125,0.5\n"
#define CSV_SHARED_A "shared,8192,124560,0.6123,0,0.6123,1.2,0,never,3,0.2,0.1,1.1,model.attention.qkv=shared,"   \
                     "\"1/2 unsolved at 400, still improving, 1/2 failed\",400,"
#define CSV_SHARED_B ",0.6123,0.6123,1.2,1.2,-0.3277,-0.3277,-0.3277,1,1,false,0,1,288,124576,1,0\n"
#define CSV_WEIRD_A WEIRD ",0,100000,0.73,0.353553,0.48,0.825,1.09602,never,4.25,0.3,0.15,,"                    \
                    "\"model.attention.qkv=identity task.note=\"\"x,y\"\"\","                                   \
                    "\"1/2 solved (median not reached within the budget), 1/2 unsolved at 400, still improving\",400,"
#define CSV_WEIRD_B ",0.48,0.98,0.05,1.6,0.01,-0.02,0.04,1,1,false,1,1,,,0.375,\n"

/* _i: 0 without a learning-rate grid, 1 with one */
START_TEST(report_csv_is_exact) {
    bool grid = _i;
    fixture *f = fixture_new(grid);
    char *dir = write_report(f);
    char *csv = read_in(dir, "results.csv");
    const char *want = grid ? CSV_HEADER CSV_FULL_A "0.01" CSV_FULL_B CSV_SHARED_A "0.001" CSV_SHARED_B
                                  CSV_WEIRD_A "0.01" CSV_WEIRD_B
                            : CSV_HEADER CSV_FULL_A CSV_FULL_B CSV_SHARED_A CSV_SHARED_B CSV_WEIRD_A CSV_WEIRD_B;
    ck_assert_str_eq(csv, want);
    /* every record has every column, and the quoting reads back */
    char fields[40][256];
    for (int r = 0; r <= NV; r++) ck_assert_int_eq(csv_split(line_at(csv, r), fields, 40), CSV_FIELDS);
    ck_assert_str_eq(fields[0], WEIRD);
    ck_assert_str_eq(fields[13], "model.attention.qkv=identity task.note=\"x,y\"");
    ck_assert_str_eq(fields[14], "1/2 solved (median not reached within the budget), 1/2 unsolved at 400, "
                                 "still improving");
    free(csv);
    qkv_test_rmtree(dir);
    free(dir);
    free(f);
}
END_TEST

/* the value of column `name` in record `row` of a CSV text (0: the header) */
static void csv_field(const char *csv, int row, const char *name, char *dst, size_t n) {
    static char head[64][256], rec[64][256];
    int nh = csv_split(csv, head, 64), nr = csv_split(line_at(csv, row), rec, 64);
    ck_assert_int_eq(nh, nr);
    for (int i = 0; i < nh; i++)
        if (!strcmp(head[i], name)) {
            snprintf(dst, n, "%s", rec[i]);
            return;
        }
    ck_abort_msg("no column %s", name);
}

static void assert_csv_field(const char *csv, int row, const char *name, const char *want) {
    char got[256];
    csv_field(csv, row, name, got, sizeof got);
    ck_assert_msg(!strcmp(got, want), "row %d, %s: \"%s\", expected \"%s\"", row, name, got, want);
}

#define VARIANT_KEYS                                                                                       \
    "name sets attn_params params runs_ok acc_mean acc_std acc_min loss_mean loss_std steps_to_threshold " \
    "reached seconds diag_share first_share entropy entropy_uniform verdicts budget lr acc_ci_low "        \
    "acc_ci_high loss_ci_low loss_ci_high delta_vs_baseline delta_ci_low delta_ci_high p_value p_holm "    \
    "significant solved unsolved matched_d_ff baseline_params score_symmetry score_negative_share runs "
#define RUN_KEYS                                                                                      \
    "seed lr chosen ok final_acc final_loss val_acc val_loss verdict steps_to_threshold budget trend " \
    "flat_since seconds curve "
#define CURVE_KEYS "step eval_acc eval_loss val_acc val_loss "

/* _i: 0 without a learning-rate grid, 1 with one */
START_TEST(report_json_has_variants_and_runs) {
    bool grid = _i;
    int nl = grid ? MAXL : 1;
    fixture *f = fixture_new(grid);
    char *dir = write_report(f);
    char *text = read_in(dir, "results.json");
    cJSON *root = cJSON_Parse(text);
    ck_assert_msg(root != NULL, "results.json does not parse");
    char keys[1024];
    keys_of(root, keys, sizeof keys);
    ck_assert_str_eq(keys, "title threshold baseline metric task d_model layers heads lrs rate_choice max_solved_at seeds "
                           "version wall_seconds jobs runs_planned missing_runs runs_to_extend variants ");
    /* how each variant's rate was chosen: the grid and its rule, or each variant's own setting */
    const cJSON *rate = item(root, "rate_choice");
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(rate, "grid")), grid ? 2 : 0);
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(rate, "rule")->valuestring,
                     grid ? QKV_RATE_RULE_GRID : QKV_RATE_RULE_SET);
    ck_assert(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(rate, "pilot")));
    ck_assert_ptr_null(cJSON_GetObjectItemCaseSensitive(rate, "pilot_seeds")); /* none named */
    ck_assert_str_eq(item(root, "title")->valuestring, "Q/K/V ablation & <test>");
    ck_assert(fabs(number(root, "threshold") - 0.9) < 1e-12);
    ck_assert_str_eq(item(root, "baseline")->valuestring, "full");
    ck_assert_str_eq(item(root, "metric")->valuestring, "accuracy");
    /* the task (from the effective config here) and the baseline's size */
    ck_assert_str_eq(item(root, "task")->valuestring, "recall");
    ck_assert_int_eq((int)number(root, "d_model"), 64);
    ck_assert_int_eq((int)number(root, "layers"), 2);
    ck_assert_int_eq((int)number(root, "heads"), 4);
    /* every run of every rate planned; the failed one is the aggregation's business, not a missing run */
    ck_assert_int_eq((int)number(root, "runs_planned"), NV * nl * NS);
    ck_assert_int_eq((int)number(root, "missing_runs"), 0);
    ck_assert_int_eq((int)number(root, "runs_to_extend"), 0);
    const cJSON *lrs = item(root, "lrs");
    ck_assert_int_eq(cJSON_GetArraySize(lrs), grid ? MAXL : 0);
    for (int l = 0; grid && l < MAXL; l++) ck_assert(cJSON_GetArrayItem(lrs, l)->valuedouble == f->lrs[l]);
    ck_assert_int_eq((int)number(root, "max_solved_at"), 150);
    ck_assert_int_eq(cJSON_GetArraySize(item(root, "seeds")), NS);
    ck_assert_str_eq(item(root, "version")->valuestring, "0.1.0");
    const cJSON *vars = item(root, "variants");
    ck_assert_int_eq(cJSON_GetArraySize(vars), NV);
    const cJSON *v[NV];
    for (int i = 0; i < NV; i++) {
        v[i] = cJSON_GetArrayItem(vars, i);
        keys_of(v[i], keys, sizeof keys);
        ck_assert_str_eq(keys, VARIANT_KEYS);
        ck_assert_str_eq(item(v[i], "name")->valuestring, NAMES[i]);
    }
    /* the baseline: its statistics, no difference from itself */
    ck_assert(fabs(number(v[0], "acc_mean") - 0.72) < 1e-12);
    ck_assert(fabs(number(v[0], "acc_ci_low") - 0.50) < 1e-12);
    ck_assert(fabs(number(v[0], "acc_ci_high") - 0.94) < 1e-12);
    ck_assert(fabs(number(v[0], "loss_ci_low") - 0.12) < 1e-12);
    ck_assert(fabs(number(v[0], "loss_ci_high") - 1.5) < 1e-12);
    ck_assert_int_eq((int)number(v[0], "attn_params"), 24576);
    ck_assert(is_null(v[0], "steps_to_threshold"));   /* the censored median is not reached */
    ck_assert_int_eq((int)number(v[0], "reached"), 1);
    ck_assert_int_eq((int)number(v[0], "solved"), 1);
    ck_assert_int_eq((int)number(v[0], "unsolved"), 1);
    ck_assert_int_eq((int)number(v[0], "budget"), 400);
    ck_assert_str_eq(item(v[0], "verdicts")->valuestring, f->v[0].verdicts);
    const char *nulls[] = {"delta_vs_baseline", "delta_ci_low", "delta_ci_high", "p_value", "p_holm", "significant",
                           "matched_d_ff", "baseline_params"};
    for (size_t k = 0; k < sizeof nulls / sizeof nulls[0]; k++)
        ck_assert_msg(is_null(v[0], nulls[k]), "the baseline's %s is not null", nulls[k]);
    /* the learning rate chosen: null without a grid */
    for (int i = 0; i < NV; i++) {
        if (grid) ck_assert(number(v[i], "lr") == f->lrs[i == 1 ? 0 : 1]);
        else ck_assert(is_null(v[i], "lr"));
    }
    /* the matched control, one pair */
    ck_assert_int_eq((int)number(v[1], "matched_d_ff"), 288);
    ck_assert_int_eq((int)number(v[1], "baseline_params"), 124576);
    ck_assert_int_eq((int)number(v[1], "runs_ok"), 1);
    ck_assert(fabs(number(v[1], "delta_vs_baseline") - (0.6123 - 0.94)) < 1e-12);
    ck_assert(number(v[1], "p_value") == 1 && number(v[1], "p_holm") == 1);
    ck_assert(cJSON_IsFalse(item(v[1], "significant")));
    /* WEIRD: the NaN entropy, its difference */
    ck_assert(is_null(v[2], "entropy"));
    ck_assert(fabs(number(v[2], "delta_vs_baseline") - 0.01) < 1e-12);
    ck_assert(fabs(number(v[2], "delta_ci_low") + 0.02) < 1e-12);
    ck_assert(fabs(number(v[2], "delta_ci_high") - 0.04) < 1e-12);
    ck_assert(cJSON_IsFalse(item(v[2], "significant")));
    ck_assert(is_null(v[2], "matched_d_ff"));
    ck_assert(is_null(v[2], "baseline_params"));   /* recorded for every variant, shown for the matched */

    /* every run of a variant, at every rate (rate-major, as plan.h orders them), with its curve */
    const int chosen[NV] = {grid ? 1 : 0, 0, grid ? 1 : 0};
    const cJSON *runs[NV];
    for (int i = 0; i < NV; i++) {
        runs[i] = item(v[i], "runs");
        ck_assert_int_eq(cJSON_GetArraySize(runs[i]), nl * NS);
        for (int k = 0; k < nl * NS; k++) {
            const cJSON *run = cJSON_GetArrayItem(runs[i], k), *curve = item(run, "curve");
            int l = k / NS, s = k % NS, n = f->all_runs[(i * nl + l) * NS + s].n;
            keys_of(run, keys, sizeof keys);
            ck_assert_str_eq(keys, RUN_KEYS);
            keys_of(curve, keys, sizeof keys);
            ck_assert_str_eq(keys, CURVE_KEYS);
            ck_assert_int_eq((int)number(run, "seed"), s);
            if (grid) ck_assert(number(run, "lr") == f->lrs[l]);
            else ck_assert(is_null(run, "lr"));
            ck_assert(cJSON_IsBool(item(run, "chosen")) && cJSON_IsTrue(item(run, "chosen")) == (l == chosen[i]));
            const char *arrays[] = {"step", "eval_acc", "eval_loss", "val_acc", "val_loss"};
            for (int a = 0; a < 5; a++) ck_assert_int_eq(cJSON_GetArraySize(item(curve, arrays[a])), n);
        }
    }
    /* full at its rate: seed 0 solved at 150 in its 150 steps; seed 1 unsolved at 400, flat */
    const cJSON *r00 = cJSON_GetArrayItem(runs[0], chosen[0] * NS);
    const cJSON *r01 = cJSON_GetArrayItem(runs[0], chosen[0] * NS + 1);
    ck_assert_str_eq(item(r00, "verdict")->valuestring, "solved");
    ck_assert_int_eq((int)number(r00, "steps_to_threshold"), 150);
    ck_assert_int_eq((int)number(r00, "budget"), 150);
    ck_assert_str_eq(item(r00, "trend")->valuestring, "improving");
    ck_assert(is_null(r00, "flat_since"));
    ck_assert(cJSON_IsTrue(item(r01, "ok")));
    ck_assert(fabs(number(r01, "final_acc") - 0.50) < 1e-12);
    ck_assert(fabs(number(r01, "val_acc") - 0.49) < 1e-12);
    ck_assert(fabs(number(r01, "val_loss") - 1.51) < 1e-12);
    ck_assert_str_eq(item(r01, "verdict")->valuestring, "unsolved");
    ck_assert(is_null(r01, "steps_to_threshold"));
    ck_assert_int_eq((int)number(r01, "budget"), 400);
    ck_assert_str_eq(item(r01, "trend")->valuestring, "flat");
    ck_assert_int_eq((int)number(r01, "flat_since"), 100);
    const cJSON *c01 = item(r01, "curve");
    ck_assert_int_eq((int)cJSON_GetArrayItem(item(c01, "step"), 8)->valuedouble, 400);
    ck_assert(fabs(cJSON_GetArrayItem(item(c01, "val_acc"), 8)->valuedouble - 0.49) < 1e-12);
    ck_assert(fabs(cJSON_GetArrayItem(item(c01, "val_loss"), 8)->valuedouble - 1.51) < 1e-12);
    /* shared's failed run: listed, as failed, with no results (read_run leaves them 0, not NaN) */
    const cJSON *r11 = cJSON_GetArrayItem(runs[1], 1);
    ck_assert(cJSON_IsFalse(item(r11, "ok")));
    ck_assert(cJSON_IsTrue(item(r11, "chosen")));
    const char *none[] = {"final_acc", "final_loss", "val_acc", "val_loss", "verdict", "steps_to_threshold",
                          "budget", "trend", "flat_since", "seconds"};
    for (size_t k = 0; k < sizeof none / sizeof none[0]; k++)
        ck_assert_msg(is_null(r11, none[k]), "a failed run's %s is not null", none[k]);
    /* WEIRD's runs: 4 evaluations with the NaN as null, and 9 */
    const cJSON *r20 = cJSON_GetArrayItem(runs[2], chosen[2] * NS);
    const cJSON *r21 = cJSON_GetArrayItem(runs[2], chosen[2] * NS + 1);
    const cJSON *c20 = item(r20, "curve");
    ck_assert_int_eq((int)cJSON_GetArrayItem(item(c20, "step"), 3)->valuedouble, 150);
    ck_assert(cJSON_IsNull(cJSON_GetArrayItem(item(c20, "eval_loss"), 1)));
    ck_assert(cJSON_IsNumber(cJSON_GetArrayItem(item(c20, "val_loss"), 1)));
    ck_assert_int_eq(cJSON_GetArraySize(item(item(r21, "curve"), "eval_acc")), 9);
    if (grid) {   /* the rates not chosen: full's lower one, WEIRD's failed seed there */
        const cJSON *r = cJSON_GetArrayItem(runs[0], 0);
        ck_assert(cJSON_IsFalse(item(r, "chosen")));
        ck_assert(fabs(number(r, "final_acc") - 0.30) < 1e-12);
        ck_assert_str_eq(item(r, "trend")->valuestring, "improving");
        ck_assert(cJSON_IsFalse(item(cJSON_GetArrayItem(runs[2], 1), "ok")));
    }
    ck_assert_ptr_null(strstr(text, "nan"));
    cJSON_Delete(root);
    free(text);
    qkv_test_rmtree(dir);
    free(dir);
    free(f);
}
END_TEST

/* _i: 0 without a learning-rate grid, 1 with one */
START_TEST(report_html_is_self_contained) {
    bool grid = _i;
    fixture *f = fixture_new(grid);
    char *dir = write_report(f);
    char *html = read_in(dir, "report.html");
    ck_assert_int_eq(strncmp(html, "<!DOCTYPE html>", 15), 0);
    int svgs = grid ? 5 : 4;   /* accuracy, loss, [learning rate,] two heatmaps */
    ck_assert_int_eq(count(html, "<svg"), svgs);
    ck_assert_int_eq(count(html, "</svg>"), svgs);
    ck_assert_ptr_nonnull(strstr(html, "<style>"));
    ck_assert_ptr_nonnull(strstr(html, "<table>"));
    ck_assert_ptr_null(strstr(html, "src=\"http"));
    ck_assert_ptr_null(strstr(html, "href="));
    ck_assert_ptr_null(strstr(html, "<script"));
    ck_assert_ptr_null(strstr(html, "<link"));
    ck_assert_ptr_null(strstr(html, "<img"));
    ck_assert_ptr_null(strstr(html, "url("));
    ck_assert_ptr_null(strstr(html, "@import"));
    /* text is escaped: the variant name, the title, the config, the sentence and the cells */
    ck_assert_ptr_null(strstr(html, WEIRD));
    ck_assert_ptr_nonnull(strstr(html, "<h3>a&amp;b&lt;c</h3>"));
    const char *found_p = strstr(html, "<h1>Q/K/V ablation &amp; &lt;test&gt;</h1>\n<p>What was found on the ");
    ck_assert_ptr_nonnull(found_p);
    /* the significance paragraph is the one right after the findings */
    ck_assert_ptr_eq(strstr(found_p, "</p>\n<p>No difference in final "), strstr(found_p, "</p>"));
    ck_assert_ptr_nonnull(strstr(html, "</p>\n<p>No difference in final "
                                       "accuracy from the baseline (full) is significant at 0.05 after Holm&#39;s "
                                       "correction over 2 comparisons. With 2 paired seeds the test&#39;s smallest "
                                       "possible p-value is 0.5, above the 0.025"));
    ck_assert_ptr_nonnull(strstr(html, "&lt;b&gt;&amp;&lt;/b&gt;"));
    ck_assert_ptr_null(strstr(html, "<b>"));
    ck_assert_ptr_nonnull(strstr(html, "<td class=\"num\">124,560 (d_ff 288, matched to full&#39;s 124,576)</td>"));
    ck_assert_ptr_nonnull(strstr(html, "<td class=\"num\">baseline</td><td class=\"num\">" EM "</td>"));
    ck_assert_ptr_nonnull(strstr(html, "<td class=\"num\">+1.0 [-2.0, 4.0]</td><td class=\"num\">1 (1)</td>"));
    ck_assert_ptr_nonnull(strstr(html, "<td>1/2 unsolved at 400, still improving, 1/2 failed</td>"));
    ck_assert_ptr_nonnull(strstr(html, "No attention map was recorded"));
    ck_assert_ptr_null(strstr(html, "nan"));
    /* every inlined SVG is well-formed on its own */
    for (const char *p = strstr(html, "<svg"); p; p = strstr(p + 1, "<svg")) {
        const char *e = strstr(p, "</svg>");
        ck_assert_ptr_nonnull(e);
        char *one = strndup(p, (size_t)(e + 6 - p));
        assert_svg(one, "inlined SVG");
        free(one);
    }
    free(html);
    qkv_test_rmtree(dir);
    free(dir);
    free(f);
}
END_TEST

START_TEST(report_svgs_are_well_formed) {
    fixture *f = fixture_new(true);
    char *dir = write_report(f);
    for (int i = 5; i < N_FILES; i++) {
        char *svg = read_in(dir, FILES[i]);
        assert_svg(svg, FILES[i]);
        free(svg);
    }
    char *acc = read_in(dir, "plots/accuracy.svg");
    ck_assert_ptr_nonnull(strstr(acc, ">a&amp;b&lt;c<"));          /* the legend, escaped */
    ck_assert_ptr_nonnull(strstr(acc, ">shared (1 of 2 runs)<"));
    ck_assert_ptr_nonnull(strstr(acc, ">threshold 90%<"));
    ck_assert_ptr_nonnull(strstr(acc, "stroke-dasharray=\"6 4\""));
    ck_assert_ptr_nonnull(strstr(acc, ">100%<"));
    ck_assert_int_eq(count(acc, "<polygon"), NV);                  /* one band each */
    ck_assert_int_eq(count(acc, "<polyline"), NV);                 /* one mean line each */
    ck_assert_ptr_nonnull(strstr(acc, ">training step<"));
    ck_assert_ptr_nonnull(strstr(acc, ">400<"));                   /* runs extended to the budget */
    free(acc);
    char *heat = read_in(dir, "plots/attention-a_b_c-2.svg");
    ck_assert_ptr_nonnull(strstr(heat, "a&amp;b&lt;c"));
    ck_assert_ptr_nonnull(strstr(heat, ">layer 1, head 1<"));
    ck_assert_ptr_nonnull(strstr(heat, ">31<"));                   /* a token as a tick label */
    /* recall: the answer outlined (row 4's target, token 10, is at position 1; no key before it,
     * so no roles), with its legend */
    ck_assert_int_eq(count(heat, "<path fill=\"none\" stroke=\"#e15759\""), 4);
    ck_assert_ptr_nonnull(strstr(heat, ">answer<"));
    ck_assert_ptr_null(strstr(heat, ">position roles:<"));
    free(heat);
    /* validation accuracy against the rate, one line per variant, the rates on a log axis */
    char *lr = read_in(dir, "plots/learning-rate.svg");
    ck_assert_ptr_nonnull(strstr(lr, ">Final validation accuracy against learning rate"));
    ck_assert_ptr_nonnull(strstr(lr, ">learning rate (log scale)<"));
    ck_assert_ptr_nonnull(strstr(lr, ">full (chosen 0.01)<"));
    ck_assert_ptr_nonnull(strstr(lr, ">shared (chosen 0.001)<"));
    ck_assert_ptr_nonnull(strstr(lr, ">a&amp;b&lt;c (chosen 0.01)<"));
    ck_assert_int_eq(count(lr, "<polyline"), NV);
    ck_assert_int_eq(count(lr, "<polygon"), NV);
    /* ticks at the rates run, and no others */
    double x1 = x_tick(lr, "0.001"), x10 = x_tick(lr, "0.01");
    ck_assert(x10 - x1 > 300);
    ck_assert_ptr_null(strstr(lr, ">0.002<"));
    ck_assert_ptr_null(strstr(lr, ">0.005<"));
    ck_assert_int_eq(count(lr, "<circle"), 2 * NV);                /* each variant at both rates */
    ck_assert(circle_at(lr, x1) && circle_at(lr, x10));
    free(lr);
    qkv_test_rmtree(dir);
    free(dir);
    free(f);
}
END_TEST

/* 7 seeds, every difference of WEIRD's negative: p = 2 / 2^7, Holm's 2p = 0.03125 <= 0.05 */
START_TEST(report_significant_difference) {
    fixture *f = fixture_seeds(7, true);
    char *dir = write_report(f);
    /* first, in plain words: who solved it, how far below the baseline, in how many seeds */
    char *found = findings_of(dir);
    ck_assert_str_eq(found, FINDINGS("7"));
    ck_assert_ptr_null(strstr(found, "With 7 paired seeds")); /* 7 seeds can make it significant: nothing to add */
    free(found);
    assert_sentence(dir, "Significant differences in final accuracy from the baseline (full), at 0.05 after Holm's "
                         "correction over 2 comparisons: a&amp;b&lt;c -30.0 points [-33.0, -27.0] (p = 0.0156, Holm "
                         "0.0312). No other difference is.\n");
    char *html = read_in(dir, "report.html");
    ck_assert_ptr_nonnull(strstr(html, "<p>Significant differences in final accuracy from the baseline (full), at "
                                       "0.05 after Holm&#39;s correction over 2 comparisons: a&amp;b&lt;c -30.0 "
                                       "points [-33.0, -27.0] (p = 0.0156, Holm 0.0312). No other difference is.</p>"));
    free(html);
    /* the table marks it */
    char *md = read_in(dir, "results.md");
    ck_assert_ptr_nonnull(strstr(md, "\n| a&amp;b&lt;c | 0 | 100,000 | 7/7 unsolved at 400, flat since 100 | "
                                     "65.0 [62.0, 68.0] (60.0) | -30.0 [-33.0, -27.0] | 0.0156 (0.0312) * | "
                                     "1.0000 [1.0000, 1.0000] | 5.5 |\n"));
    ck_assert_ptr_nonnull(strstr(md, "\n| shared | 8,192 | 124,560 (d_ff 288, matched to full's 124,576) | "
                                     "7/7 solved (median step 150) | 95.0 [95.0, 95.0] (95.0) | 0.0 [0.0, 0.0] | "
                                     "1 (1) | 0.1000 [0.1000, 0.1000] | 4.5 |\n"));
    ck_assert_int_eq(count(md, " * |"), 1);
    free(md);
    char *csv = read_in(dir, "results.csv");
    assert_csv_field(csv, 3, "p_value", "0.015625");
    assert_csv_field(csv, 3, "p_holm", "0.03125");
    assert_csv_field(csv, 3, "significant", "true");
    assert_csv_field(csv, 2, "significant", "false");
    assert_csv_field(csv, 1, "significant", "");
    free(csv);
    qkv_test_rmtree(dir);
    free(dir);
    free(f);
}
END_TEST

/* Too few seeds: the smallest possible p, 2 / 2^n, is above the 0.05 / 2 that Holm's first step
 * needs over two comparisons, and the report says so; _i: 5 seeds (0.0625, above 0.05 too) or 6
 * (0.03125, below 0.05 but not below 0.025) */
START_TEST(report_no_significance_with_few_seeds) {
    int ns = 5 + _i;
    fixture *f = fixture_seeds(ns, true);
    char *dir = write_report(f);
    /* the findings say what the seeds can show: an effect in every seed, not significantly */
    char *found = findings_of(dir);
    ck_assert_str_eq(found, ns == 5 ? FINDINGS("5") " With 5 paired seeds, a difference seen in every seed has a sign-flip "
                                                    "p-value of 0.0625 at best, above the 0.025 that Holm's correction "
                                                    "over 2 comparisons needs first: 5 seeds can show such an effect "
                                                    "consistently, not significantly (7 seeds could: p = 0.0156)."
                                      : FINDINGS("6") " With 6 paired seeds, a difference seen in every seed has a sign-flip "
                                                      "p-value of 0.0312 at best, above the 0.025 that Holm's "
                                                      "correction over 2 comparisons needs first: 6 seeds can show "
                                                      "such an effect consistently, not significantly (7 seeds could: "
                                                      "p = 0.0156).");
    free(found);
    assert_sentence(dir, ns == 5 ? NONE_SIG("5", "0.0625") : NONE_SIG("6", "0.0312"));
    char *html = read_in(dir, "report.html");
    ck_assert_ptr_nonnull(strstr(html, ns == 5 ? "With 5 paired seeds the test&#39;s smallest possible p-value is "
                                                 "0.0625, above the 0.025 that the first of 2 Holm comparisons "
                                                 "needs: more seeds are needed to call any difference "
                                                 "significant.</p>"
                                               : "With 6 paired seeds the test&#39;s smallest possible p-value is "
                                                 "0.0312, above the 0.025 that the first of 2 Holm comparisons "
                                                 "needs: more seeds are needed to call any difference "
                                                 "significant.</p>"));
    free(html);
    char *md = read_in(dir, "results.md");
    ck_assert_ptr_nonnull(strstr(md, ns == 5 ? " | -30.0 [-33.0, -27.0] | 0.0625 (0.125) | "
                                             : " | -30.0 [-33.0, -27.0] | 0.0312 (0.0625) | "));
    ck_assert_ptr_null(strstr(md, " * |"));
    free(md);
    char *csv = read_in(dir, "results.csv");
    assert_csv_field(csv, 3, "significant", "false");
    free(csv);
    qkv_test_rmtree(dir);
    free(dir);
    free(f);
}
END_TEST

/* The findings for a loss in bits (metric bpb): the means in bits per token, worse in every seed,
 * as good as the baseline within the printed precision, and what 5 seeds can show */
START_TEST(report_findings_in_bits) {
    fixture *f = fixture_seeds(5, true);
    f->cfg.metric = QKV_METRIC_BPB;
    set_delta(&f->v[2], 5, 0.9 / QKV_LN2, 0.8, 1.0, 0.0625, 0.125); /* a&b<c's loss 1.0 against 0.1 nats */
    f->v[2].significant = false;
    f->r.significant = 0;
    char *dir = write_report(f);
    char *found = findings_of(dir);
    ck_assert_str_eq(found, "What was found on the `recall` task: full (the baseline) 0.144 bits per token. shared 0.144 "
                            "bits per token, as good as full on average (within 0.0005 bits per token). a&amp;b&lt;c "
                            "1.443 bits per token, 1.298 bits per token worse than full in every one of the 5 paired "
                            "seeds. With 5 paired seeds, a difference seen in every seed has a sign-flip p-value of "
                            "0.0625 at best, above the 0.025 that Holm's correction over 2 comparisons needs first: 5 "
                            "seeds can show such an effect consistently, not significantly (7 seeds could: p = "
                            "0.0156).");
    free(found);
    qkv_test_rmtree(dir);
    free(dir);
    free(f);
}
END_TEST

/* The findings compare when each variant solved with the baseline, seed by seed: earlier in every
 * paired seed is said so; a mix is counted; a tie (or a variant that never solved) says nothing.
 * _i: 0 shared solves at 100 in every seed (full at 150); 1 at 100 in seed 0, 200 in seed 1, 150 else;
 * 2 at 200 in seeds 0-3, 150 in seed 4 */
START_TEST(report_findings_compare_solve_steps) {
    fixture *f = fixture_seeds(5, true);
    for (int s = 0; s < 5; s++) {
        long long at = _i == 0 ? 100 : _i == 2 ? (s < 4 ? 200 : 150) : s == 0 ? 100 : s == 1 ? 200 : 150;
        const spec sp = {true, 0.95, 0.10, at, at > 150 ? 200 : 150, -1};
        fill_run(f, 1, 0, s, &sp);
    }
    const int ch[NV] = {0, 0, 0};
    choose(f, ch);
    char *dir = write_report(f);
    char *found = findings_of(dir);
    const char *want = _i == 0 ? "shared reached 90% in 5 of 5 seeds (median step 150), earlier than full in every one "
                                 "of the 5 paired seeds, final evaluation accuracy 95.0%, as good as full"
                       : _i == 1 ? "shared reached 90% in 5 of 5 seeds (median step 150), earlier than full in 1 and later "
                                   "in 1 of 5 paired seeds, final evaluation accuracy 95.0%, as good as full"
                                 : "shared reached 90% in 5 of 5 seeds (median step 150), later than full in 4 of 5 "
                                   "paired seeds, final evaluation accuracy 95.0%, as good as full";
    ck_assert_msg(strstr(found, want), "%s\nexpected within it:\n%s", found, want);
    /* the baseline says nothing of itself, and a variant that never solved gets no comparison */
    ck_assert_msg(strstr(found, "full (the baseline) reached 90% in 5 of 5 seeds (median step 150), final evaluation"),
                  "%s", found);
    ck_assert_msg(strstr(found, "a&amp;b&lt;c reached 90% in none of 5 seeds within 400 steps, final"), "%s", found);
    free(found);
    qkv_test_rmtree(dir);
    free(dir);
    free(f);
}
END_TEST

/* 7 seeds and no difference: nothing is significant, but the seeds are not what is missing */
START_TEST(report_no_significance_with_enough_seeds) {
    fixture *f = fixture_seeds(7, false);
    char *dir = write_report(f);
    assert_sentence(dir, "No difference in final accuracy from the baseline (full) is significant at 0.05 after "
                         "Holm's correction over 2 comparisons.\n");
    char *md = read_in(dir, "results.md");
    ck_assert_ptr_null(strstr(md, "paired seeds"));
    ck_assert_ptr_nonnull(strstr(md, " | 0.0 [-3.0, 3.0] | 1 (1) | "));
    free(md);
    qkv_test_rmtree(dir);
    free(dir);
    free(f);
}
END_TEST

/* one variant, one seed, every run failed; _i: 0 without a learning-rate grid, 1 with one */
START_TEST(report_one_variant_one_seed_all_failed) {
    bool grid = _i;
    fixture *f = fixture_base(1, grid);
    f->cfg.n_variants = 1;
    int nl = f->r.n_lrs;
    for (int l = 0; l < nl; l++) {
        fill_run(f, 0, l, 0, &FAILED);
        /* choose_lr reads a rate from the finished runs: with none it stays 0, the means NaN */
        f->lr[0][l] = (qkv_lr_result){0, 0, NAN, NAN, NAN, NAN};
    }
    const int ch[NV] = {0, 0, 0};
    choose(f, ch);
    /* summarise() over no finished run */
    qkv_variant_result *v = &f->v[0];
    set_acc(v, 0, NAN, 0, NAN, NAN, NAN);
    set_loss(v, NAN, 0, NAN, NAN);
    set_verdicts(v, 0, 0, 0, -1, 0, 0, "1/1 failed");
    v->seconds = NAN;
    v->diag = (qkv_attn_diag){.diag_share = NAN, .first_share = NAN, .entropy = NAN, .entropy_uniform = NAN,
                              .symmetry = NAN, .negative_mass = NAN};
    no_start(v);
    v->heat = (qkv_heatmap){0};
    f->cfg.title[0] = 0;
    f->r.base_config_json = NULL;
    f->r.task[0] = 0;
    f->r.version[0] = 0;
    char *dir = write_report(f);
    char *csv = read_in(dir, "results.csv");
    char fields[40][256];
    ck_assert_int_eq(count(csv, "\n"), 2);
    ck_assert_int_eq(csv_split(line_at(csv, 1), fields, 40), CSV_FIELDS);
    assert_csv_field(csv, 1, "acc_mean", "");
    assert_csv_field(csv, 1, "acc_std", "");
    assert_csv_field(csv, 1, "acc_ci_low", "");
    assert_csv_field(csv, 1, "steps_to_threshold", "never");
    assert_csv_field(csv, 1, "verdicts", "1/1 failed");
    assert_csv_field(csv, 1, "budget", "");
    assert_csv_field(csv, 1, "lr", "");   /* none was chosen: not choose_lr's 0 */
    assert_csv_field(csv, 1, "solved", "0");
    assert_csv_field(csv, 1, "unsolved", "0");
    assert_csv_field(csv, 1, "significant", "");
    free(csv);
    char *md = read_in(dir, "results.md");
    ck_assert_ptr_nonnull(strstr(md, "# Ablation: ablate-qkv\n\nOne variant: nothing to compare.\n"));
    /* every column that needs a finished run says so (the lr one too) */
    ck_assert_ptr_nonnull(strstr(md, grid ? "\n| full | 24,576 | 124,576 | failed | failed | failed | failed | "
                                            "failed | failed | " EM " |\n"
                                          : "\n| full | 24,576 | 124,576 | failed | failed | failed | failed | "
                                            "failed | " EM " |\n"));
    ck_assert_ptr_null(strstr(md, "nan"));
    free(md);
    char *acc = read_in(dir, "plots/accuracy.svg");
    assert_svg(acc, "accuracy.svg");
    ck_assert_ptr_nonnull(strstr(acc, ">no data<"));
    ck_assert_ptr_nonnull(strstr(acc, ">full (failed)<"));
    free(acc);
    char *loss = read_in(dir, "plots/loss.svg");
    assert_svg(loss, "loss.svg");
    free(loss);
    ck_assert(exists(dir, "plots/learning-rate.svg") == grid);
    if (grid) {
        char *lr = read_in(dir, "plots/learning-rate.svg");
        assert_svg(lr, "learning-rate.svg");
        ck_assert_ptr_nonnull(strstr(lr, ">no data<"));
        ck_assert_ptr_nonnull(strstr(lr, ">full (failed)<"));
        ck_assert_ptr_null(strstr(lr, "chosen"));
        free(lr);
    }
    char *json = read_in(dir, "results.json");
    cJSON *root = cJSON_Parse(json);
    ck_assert_ptr_nonnull(root);
    ck_assert(is_null(root, "version"));
    ck_assert(is_null(root, "max_solved_at"));
    const cJSON *v0 = cJSON_GetArrayItem(item(root, "variants"), 0);
    ck_assert(is_null(v0, "acc_mean") && is_null(v0, "acc_ci_low") && is_null(v0, "budget") && is_null(v0, "lr"));
    const cJSON *runs = item(v0, "runs");
    ck_assert_int_eq(cJSON_GetArraySize(runs), nl);
    for (int l = 0; l < nl; l++) {
        const cJSON *run = cJSON_GetArrayItem(runs, l);
        ck_assert(cJSON_IsFalse(item(run, "ok")));
        ck_assert(is_null(run, "final_acc") && is_null(run, "val_acc") && is_null(run, "seconds"));
        ck_assert(cJSON_IsTrue(item(run, "chosen")) == (l == 0));
        if (grid) ck_assert(number(run, "lr") == f->lrs[l]);
        else ck_assert(is_null(run, "lr"));
        ck_assert_int_eq(cJSON_GetArraySize(item(item(run, "curve"), "step")), 0);
    }
    cJSON_Delete(root);
    free(json);
    ck_assert(!exists(dir, "plots/attention-full.svg"));
    char *rmd = read_in(dir, "report.md");
    ck_assert_ptr_nonnull(strstr(rmd, grid ? " 2 runs failed and are left out of the statistics.\n"
                                           : " 1 run failed and is left out of the statistics.\n"));
    free(rmd);
    qkv_test_rmtree(dir);
    free(dir);
    free(f);
}
END_TEST

/* 12 variants with long names, 1 seed each, single-point curves and large heatmaps */
START_TEST(report_twelve_variants_long_names) {
    enum { V = 12, T = 40 };
    static qkv_ablate_variant cv[V];
    static qkv_variant_result v[V];
    static qkv_run_result runs[V];
    static qkv_lr_result lrs[V];
    static long long step[V];
    static double acc[V], loss[V];
    static float w[1 * 2 * T * T];
    static int32_t tok[T];
    qkv_ablate_config cfg;
    memset(&cfg, 0, sizeof cfg);
    memset(cv, 0, sizeof cv);
    memset(v, 0, sizeof v);
    memset(runs, 0, sizeof runs);
    snprintf(cfg.path, sizeof cfg.path, "abl.json");
    long long seed = 7;
    cfg.seeds = &seed;
    cfg.n_seeds = 1;
    cfg.variants = cv;
    cfg.n_variants = V;
    cfg.max_steps = 500;
    cfg.threshold = 0.99;
    for (int t = 0; t < T; t++) tok[t] = 1000 + t;
    for (int q = 0; q < T; q++)
        for (int k = 0; k <= q; k++) w[q * T + k] = w[T * T + q * T + k] = 1.0f / (float)(q + 1);
    for (int i = 0; i < V; i++) {
        snprintf(cv[i].name, QKV_ABLATE_NAME, "variant-%02d-with-a-rather-long-name-for-the-legend_xx", i);
        memcpy(v[i].name, cv[i].name, sizeof v[i].name);
        step[i] = 500;
        acc[i] = 0.5 + 0.04 * i;
        loss[i] = i == 3 ? INFINITY : 1.0 / (i + 1);
        /* every run unsolved at its budget of 500 steps, still improving */
        runs[i] = (qkv_run_result){.variant = i, .seed = seed, .lr = NAN, .ok = true, .n = 1, .step = &step[i],
                                   .eval_acc = &acc[i], .eval_loss = &loss[i], .final_acc = acc[i],
                                   .final_loss = loss[i], .val_final_acc = acc[i], .val_final_loss = loss[i],
                                   .steps = 500, .improving = true, .steps_to_threshold = -1, .flat_since = -1};
        lrs[i] = (qkv_lr_result){NAN, 1, acc[i], acc[i], acc[i], loss[i]};
        v[i].lrs = &lrs[i];
        v[i].lr = NAN;
        set_acc(&v[i], 1, acc[i], 0, acc[i], acc[i], acc[i]);
        set_loss(&v[i], loss[i], 0, loss[i], loss[i]);
        set_verdicts(&v[i], 0, 1, 1, -1, 500, -1, "1/1 unsolved at 500, still improving");
        if (i == 0) set_delta(&v[i], 0, NAN, NAN, NAN, NAN, NAN);
        else set_delta(&v[i], 1, acc[i] - acc[0], acc[i] - acc[0], acc[i] - acc[0], 1, 1);
        v[i].seconds = 1;
        v[i].diag.entropy = 2.0;
        no_start(&v[i]);
        v[i].heat = (qkv_heatmap){1, 2, T, w, tok, NULL};
    }
    qkv_ablate_results r = {.cfg = &cfg, .v = v, .runs = runs, .all_runs = runs, .n_lrs = 1,
                            .max_solved_at = -1, .version = "0.1.0", .jobs = 4};
    char *dir = make_tmpdir();
    ck_assert_msg(qkv__report_write(&r, dir, NULL, &qerr) == 0, "%s", qerr.msg);
    char *acc_svg = read_in(dir, "plots/accuracy.svg");
    assert_svg(acc_svg, "accuracy.svg");
    ck_assert_int_eq(count(acc_svg, "-with-a-rather-long-name-for-the-legend_xx<"), V);
    ck_assert_int_eq(count(acc_svg, "<circle"), V);                /* one marker per single point */
    free(acc_svg);
    char *loss_svg = read_in(dir, "plots/loss.svg");
    assert_svg(loss_svg, "loss.svg");
    free(loss_svg);
    char name[128];
    snprintf(name, sizeof name, "plots/attention-%s.svg", v[11].name);
    char *heat = read_in(dir, name);
    assert_svg(heat, name);
    ck_assert_ptr_nonnull(strstr(heat, ">1000<"));
    ck_assert_ptr_null(strstr(heat, ">1001<"));                    /* T > 32: every k-th label */
    free(heat);
    char *md = read_in(dir, "results.md");
    ck_assert_int_eq(count(md, " | 1/1 unsolved at 500, still improving | "), V);
    ck_assert_int_eq(count(md, " | 1 (1) | "), V - 1);
    ck_assert_ptr_nonnull(strstr(md, " | 54.0 [54.0, 54.0] (54.0) | +4.0 [4.0, 4.0] | "));
    ck_assert_ptr_null(strstr(md, "nan"));
    ck_assert_ptr_null(strstr(md, "inf"));
    free(md);
    ck_assert(!exists(dir, "plots/learning-rate.svg"));
    qkv_test_rmtree(dir);
    free(dir);
}
END_TEST

/* summarise()'s median counts an unsolved seed as later than any: a median can exist while some
 * seeds are unsolved, and the verdicts say both */
START_TEST(report_median_with_some_unsolved) {
    fixture *f = fixture_seeds(3, true);
    const spec sp[3] = {{true, 0.95, 0.10, 100, 150, -1}, {true, 0.95, 0.10, 150, 150, -1},
                        {true, 0.50, 1.0, -1, 400, 100}};
    for (int s = 0; s < 3; s++) fill_run(f, 1, 0, s, &sp[s]);
    const int ch[NV] = {0, 0, 0};
    choose(f, ch);
    qkv_variant_result *v = &f->v[1];
    set_acc(v, 3, 0.80, sqrt(0.0675), 0.50, 0.50, 0.95);
    set_loss(v, 0.40, sqrt(0.27), 0.10, 1.0);
    set_verdicts(v, 2, 1, 0, 150, 400, 100,
                 "2/3 solved (median step 150, unsolved counted as censored), 1/3 unsolved at 400, flat since 100");
    set_delta(v, 3, -0.15, -0.45, 0, 1, 1);
    char *dir = write_report(f);
    char *md = read_in(dir, "results.md");
    ck_assert_ptr_nonnull(strstr(md, "| shared | 8,192 | 124,560 (d_ff 288, matched to full's 124,576) | "
                                     "2/3 solved (median step 150, unsolved counted as censored), 1/3 unsolved at "
                                     "400, flat since 100 | 80.0 [50.0, 95.0] (50.0) | -15.0 [-45.0, 0.0] | 1 (1) | "
                                     "0.4000 [0.1000, 1.0000] | 3.5 |\n"));
    free(md);
    char *csv = read_in(dir, "results.csv");
    assert_csv_field(csv, 2, "steps_to_threshold", "150");
    assert_csv_field(csv, 2, "solved", "2");
    assert_csv_field(csv, 2, "unsolved", "1");
    assert_csv_field(csv, 2, "budget", "400");
    free(csv);
    char *json = read_in(dir, "results.json");
    cJSON *root = cJSON_Parse(json);
    ck_assert_ptr_nonnull(root);
    const cJSON *v1 = cJSON_GetArrayItem(item(root, "variants"), 1), *runs = item(v1, "runs");
    ck_assert_int_eq((int)number(v1, "steps_to_threshold"), 150);
    ck_assert_int_eq((int)number(v1, "reached"), 2);
    ck_assert_int_eq((int)number(v1, "solved"), 2);
    ck_assert_int_eq((int)number(v1, "unsolved"), 1);
    ck_assert_int_eq((int)number(cJSON_GetArrayItem(runs, 0), "steps_to_threshold"), 100);
    ck_assert_str_eq(item(cJSON_GetArrayItem(runs, 2), "verdict")->valuestring, "unsolved");
    ck_assert_int_eq((int)number(cJSON_GetArrayItem(runs, 2), "flat_since"), 100);
    cJSON_Delete(root);
    free(json);
    qkv_test_rmtree(dir);
    free(dir);
    free(f);
}
END_TEST

START_TEST(report_unwritable_dir_fails_cleanly) {
    fixture *f = fixture_new(true);
    char *dir = make_tmpdir();
    char file[4200], below[4300];
    snprintf(file, sizeof file, "%s/plain-file", dir);
    ck_assert_int_eq(qkv__write_file_atomic(file, "x", 1, &err), 0);
    snprintf(below, sizeof below, "%s/out", file);
    qkv_err_clear(&qerr);
    ck_assert_int_eq(qkv__report_write(&f->r, below, NULL, &qerr), -1);
    ck_assert_msg(qerr.msg[0] != 0, "no error message");
    ck_assert_int_eq(qerr.code, QKV_ERR_FAIL);
    ck_assert_int_eq(qkv__report_write(NULL, dir, NULL, &qerr), -1);
    qkv_test_rmtree(dir);
    free(dir);
    free(f);
}
END_TEST

/* ---------------------------------------------------------------- the SVG builder */

START_TEST(svg_nice_ticks) {
    ck_assert(fabs(qkv__svg_nice_step(1, 5) - 0.2) < 1e-12);
    ck_assert(fabs(qkv__svg_nice_step(730, 6) - 200) < 1e-9);
    ck_assert(fabs(qkv__svg_nice_step(0.037, 4) - 0.01) < 1e-12);
    ck_assert(fabs(qkv__svg_nice_step(45, 5) - 10) < 1e-9);
    double t[64];
    ck_assert_int_eq(qkv__svg_ticks(0, 1, 0.2, t, 64), 6);
    ck_assert(t[0] == 0 && fabs(t[5] - 1) < 1e-12);
    ck_assert_int_eq(qkv__svg_ticks(-0.3, 0.5, 0.2, t, 64), 4);     /* -0.2 .. 0.4 */
    ck_assert_int_eq(qkv__svg_log_ticks(0.001, 100, t, 64), 6);      /* 5 decades: 10^-3 .. 10^2 */
    ck_assert(fabs(t[0] - 0.001) < 1e-15 && fabs(t[5] - 100) < 1e-12);
    ck_assert_int_eq(qkv__svg_log_ticks(0.01, 10, t, 64), 10);       /* 3 decades: 1, 2, 5 */
    ck_assert_int_eq(qkv__svg_log_ticks(0.2, 30, t, 64), 7);         /* 0.2 0.5 1 2 5 10 20 */
    ck_assert_int_eq(qkv__svg_log_ticks(0.2, 3, t, 64), 4);          /* 0.2 0.5 1 2 */
    ck_assert_int_eq(qkv__svg_log_ticks(0.3, 0.9, t, 64), 7);        /* short: every digit */
    ck_assert_int_eq(qkv__svg_log_ticks(1e-4, 10, t, 64), 6);        /* long: decades */
    char s[32];
    qkv__svg_format_tick(s, sizeof s, 1000);
    ck_assert_str_eq(s, "1000");
    qkv__svg_format_tick(s, sizeof s, 0.05);
    ck_assert_str_eq(s, "0.05");
    qkv__svg_format_tick(s, sizeof s, -1e-17);
    ck_assert_str_eq(s, "0");
    ck_assert_str_eq(qkv__svg_color(0), qkv__svg_color(10));         /* the palette cycles */
    ck_assert_str_ne(qkv__svg_dash(0), qkv__svg_dash(10));           /* ... with a dash */
}
END_TEST

START_TEST(strbuf_and_escape) {
    qkv_strbuf b;
    qkv__strbuf_init(&b);
    qkv__strbuf_escape_xml(&b, "a&b<c>\"d'e\x01");
    char *x = qkv__strbuf_take(&b); /* bytes that are not UTF-8: U+FFFD each, valid UTF-8 kept */
    qkv__strbuf_escape_xml(&b, "\xff<\xc3(\xc3\xa9\xe4\xb8\xad\t\xed\xa0\x80\xc2\x85");
    char *y = qkv__strbuf_take(&b);
    ck_assert_str_eq(y, "\xef\xbf\xbd&lt;\xef\xbf\xbd(\xc3\xa9\xe4\xb8\xad\t\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
    free(y);
    qkv__strbuf_puts(&b, x);
    free(x);
    qkv__strbuf_printf(&b, "|%d|", 42);
    for (int i = 0; i < 1000; i++) qkv__strbuf_printf(&b, "%0300d", i);   /* growth past the small buffer */
    char *s = qkv__strbuf_take(&b);
    ck_assert_ptr_nonnull(s);
    ck_assert_int_eq(strncmp(s, "a&amp;b&lt;c&gt;&quot;d&#39;e\xef\xbf\xbd|42|", 36), 0);
    ck_assert_uint_eq(strlen(s), 36 + 300 * 1000);
    free(s);
    qkv__strbuf_init(&b);
    s = qkv__strbuf_take(&b);   /* empty, not NULL */
    ck_assert_ptr_nonnull(s);
    ck_assert_str_eq(s, "");
    free(s);
}
END_TEST

/* item i of a list of numbers: 1000 + i */
static void number_item(qkv_strbuf *b, const void *items, int i) {
    (void)items;
    qkv__strbuf_printf(b, "%d", 1000 + i);
}

/* a list of choices: whole while short, else its first items up to 400 bytes and ", ..." once,
 * counted from where the list began */
START_TEST(strbuf_list_of_choices) {
    qkv_strbuf b;
    qkv__strbuf_init(&b);
    qkv__strbuf_list(&b, 3, number_item, NULL);
    ck_assert_str_eq(qkv__strbuf_str(&b), "1000, 1001, 1002");
    qkv__strbuf_free(&b);
    ck_assert_str_eq(qkv__strbuf_str(&b), "");
    qkv__strbuf_puts(&b, "expected one of ");
    qkv__strbuf_list(&b, 500, number_item, NULL); /* items of 4 bytes and ", ": 67 of them reach 400 */
    ck_assert_ptr_nonnull(b.s);
    const char *s = b.s + strlen("expected one of ");
    ck_assert_uint_eq(strlen(s), 67 * 6 - 2 + strlen(", ..."));
    ck_assert_str_eq(s + strlen(s) - strlen("1066, ..."), "1066, ...");
    qkv__strbuf_free(&b);
    qkv__strbuf_list(&b, 67, number_item, NULL); /* exactly that long, nothing left out: no "..." */
    ck_assert_uint_eq(b.len, 67 * 6 - 2);
    qkv__strbuf_free(&b);
}
END_TEST

START_TEST(svg_curves_edge_cases) {
    double x[5] = {0, 10, 20, 30, 40}, y[5] = {0.5, NAN, 0.25, INFINITY, 0.125};
    double lo[5] = {0.4, 0.1, -1, 0.2, 0.1}, hi[5] = {0.6, 0.2, 0.3, NAN, 0.2};
    qkv_svg_series s[3] = {{"NaN & Inf", 5, x, y, lo, hi}, {"single <point>", 1, x + 2, y + 2, NULL, NULL},
                           {"empty", 0, NULL, NULL, NULL, NULL}};
    qkv_svg_plot lin = {.title = "t", .xlabel = "x", .ylabel = "y"};
    char *a = qkv__svg_curves(&lin, s, 3);
    assert_svg(a, "linear");
    ck_assert_ptr_nonnull(strstr(a, ">single &lt;point&gt;<"));
    free(a);
    qkv_svg_plot lg = {.title = "t", .log_y = true};   /* -1 skipped on a log axis */
    a = qkv__svg_curves(&lg, s, 3);
    assert_svg(a, "log");
    free(a);
    a = qkv__svg_curves(&lg, NULL, 0);
    assert_svg(a, "no series");
    ck_assert_ptr_nonnull(strstr(a, ">no data<"));
    free(a);
    /* a constant series: the axis still has a span */
    double c[3] = {2, 2, 2};
    qkv_svg_series one = {"const", 3, x, c, c, c};
    a = qkv__svg_curves(&lg, &one, 1);
    assert_svg(a, "constant log");
    free(a);
    a = qkv__svg_curves(&lin, &one, 1);
    assert_svg(a, "constant linear");
    free(a);
}
END_TEST

START_TEST(svg_heatmap_shapes) {
    float w[3 * 1 * 4 * 4];
    for (int i = 0; i < 48; i++) w[i] = (float)(i % 5) / 4.0f;
    w[7] = NAN;
    char *s = qkv__svg_heatmap("map <1>", NULL, 3, 1, 4, w, NULL);
    assert_svg(s, "heatmap");
    ck_assert_ptr_nonnull(strstr(s, "map &lt;1&gt;"));
    ck_assert_ptr_nonnull(strstr(s, ">layer 2, head 0<"));
    ck_assert_ptr_nonnull(strstr(s, "#bbbbbb"));                    /* the NaN cell */
    ck_assert_ptr_nonnull(strstr(s, ">1.00<"));                     /* the colour bar */
    free(s);
    float one = 1;
    const char *lab[1] = {"&"};
    s = qkv__svg_heatmap("t", "sub", 1, 1, 1, &one, lab);
    assert_svg(s, "1x1 heatmap");
    free(s);
    ck_assert_ptr_null(qkv__svg_heatmap("t", NULL, 0, 1, 4, w, NULL));
    ck_assert_ptr_null(qkv__svg_heatmap("t", NULL, 1, 1, 4, NULL, NULL));
}
END_TEST

/* a series drawn over by a later one with the same values is named under the legend, and the two
 * are told apart by their markers: a filled dot, then a hollow ring */
START_TEST(svg_coinciding_series_noted) {
    double x[3] = {0, 1, 2}, y[3] = {1, 1, 1}, z[3] = {0.5, 0, -1};
    qkv_svg_series s[3] = {{"qk_tied", 3, x, y, NULL, NULL}, {"shared", 3, x, y, NULL, NULL}, {"full", 3, x, z, NULL, NULL}};
    qkv_svg_plot pl = {.title = "t", .fixed_y = true, .y_min = -1, .y_max = 1};
    char *a = qkv__svg_curves(&pl, s, 3);
    assert_svg(a, "coinciding");
    ck_assert_ptr_nonnull(strstr(a, ">qk_tied lies under shared (within 2.5 px; drawn wider beneath it, 2.5 px apart to "
                                    "the left)<"));
    /* qk_tied's line 3 px wider than shared's, beneath it */
    ck_assert_ptr_nonnull(strstr(a, "<polyline fill=\"none\" stroke=\"#4e79a7\" stroke-width=\"5\""));
    ck_assert_ptr_nonnull(strstr(a, "<polyline fill=\"none\" stroke=\"#f28e2b\" stroke-width=\"2\""));
    /* qk_tied's points 2.5 px left of shared's */
    const char *m0 = strstr(a, "<circle cx=\""), *m1 = strstr(strstr(a, "stroke=\"#f28e2b\" stroke-width=\"1.6\">"), "<circle cx=\"");
    double c0, c1;
    ck_assert(sscanf(m0, "<circle cx=\"%lf\"", &c0) == 1 && sscanf(m1, "<circle cx=\"%lf\"", &c1) == 1);
    ck_assert_double_eq_tol(c1 - c0, 2.5, 1e-9);
    ck_assert_ptr_null(strstr(a, "full lies"));
    ck_assert_ptr_nonnull(strstr(a, "<g fill=\"none\" stroke=\"#f28e2b\" stroke-width=\"1.6\"><circle"));
    free(a);
    /* 1.5 px apart on the 300 px axis (0.01 of 2): hidden as well; 7.5 px (0.05): not */
    double near[3] = {0.99, 0.99, 0.99}, far[3] = {0.95, 0.95, 0.95};
    s[1].y = near;
    a = qkv__svg_curves(&pl, s, 2);
    ck_assert_ptr_nonnull(strstr(a, ">qk_tied lies under shared (within 2.5 px"));
    free(a);
    s[1].y = far;
    a = qkv__svg_curves(&pl, s, 2);
    ck_assert_ptr_null(strstr(a, "lies under"));
    free(a);
    s[1].y = z; /* nothing hidden: no note */
    a = qkv__svg_curves(&pl, s, 2);
    ck_assert_ptr_null(strstr(a, "lies under"));
    free(a);
}
END_TEST

/* a logarithmic x axis (the learning-rate plot's): ticks at decades, with 2 and 5 between them
 * over a short range, each at its logarithm; points at x <= 0 left out as if absent */
START_TEST(svg_log_x) {
    double x[5] = {-1, 0, 1e-3, 1e-2, 1e-1}, y[5] = {0.9, 0.8, 0.5, 0.7, 0.6};
    qkv_svg_series all = {"rate", 5, x, y, y, y}, positive = {"rate", 3, x + 2, y + 2, y + 2, y + 2};
    qkv_svg_plot pl = {.title = "t", .xlabel = "learning rate", .log_x = true};
    char *a = qkv__svg_curves(&pl, &all, 1), *b = qkv__svg_curves(&pl, &positive, 1);
    assert_svg(a, "log x");
    ck_assert_msg(!strcmp(a, b), "x <= 0 changed the plot");   /* not drawn, nor part of the axes' ranges */
    ck_assert_int_eq(count(a, "<circle"), 3);
    double x1 = x_tick(a, "0.001"), x2 = x_tick(a, "0.002"), x5 = x_tick(a, "0.005"), x10 = x_tick(a, "0.01"),
           x100 = x_tick(a, "0.1");
    double decade = x10 - x1;
    ck_assert(decade > 100);
    ck_assert(fabs((x100 - x10) - decade) < 0.03);
    ck_assert(fabs((x2 - x1) - log10(2) * decade) < 0.03);
    ck_assert(fabs((x5 - x1) - log10(5) * decade) < 0.03);
    ck_assert(circle_at(a, x1) && circle_at(a, x10) && circle_at(a, x100));
    ck_assert_ptr_null(strstr(a, ">0.2<"));   /* nothing beyond the data's decades (and the padding) */
    free(a);
    free(b);
    /* one positive point among them is a single point (a marker, no line) */
    qkv_svg_series one_of = {"rate", 3, x, y, NULL, NULL}, one = {"rate", 1, x + 2, y + 2, NULL, NULL};
    a = qkv__svg_curves(&pl, &one_of, 1);
    b = qkv__svg_curves(&pl, &one, 1);
    assert_svg(a, "one positive x");
    ck_assert_msg(!strcmp(a, b), "x <= 0 changed the plot of one point");
    ck_assert_int_eq(count(a, "<polyline"), 0);
    ck_assert_ptr_nonnull(strstr(a, "r=\"3.5\""));
    free(a);
    free(b);
    /* the same points on a linear axis: evenly spaced values, no decades */
    pl.log_x = false;
    a = qkv__svg_curves(&pl, &positive, 1);
    assert_svg(a, "linear x");
    ck_assert_ptr_null(strstr(a, ">0.001<"));
    ck_assert(fabs(x_tick(a, "0.04") - x_tick(a, "0.02") - (x_tick(a, "0.02") - x_tick(a, "0"))) < 0.03);
    free(a);
    pl.log_x = true;
    /* six decades: decades only */
    double wx[2] = {1e-6, 1}, wy[2] = {0.5, 0.6};
    qkv_svg_series wide = {"wide", 2, wx, wy, NULL, NULL};
    a = qkv__svg_curves(&pl, &wide, 1);
    assert_svg(a, "wide log x");
    double w4 = x_tick(a, "0.0001"), w3 = x_tick(a, "0.001"), w2 = x_tick(a, "0.01");
    ck_assert(fabs((w3 - w4) - (w2 - w3)) < 0.03);
    ck_assert_ptr_nonnull(strstr(a, ">1e-06<"));
    ck_assert_ptr_null(strstr(a, ">0.002<"));
    free(a);
    /* nothing positive: no data, still a well-formed plot */
    qkv_svg_series none = {"none", 2, x, y, y, y};
    a = qkv__svg_curves(&pl, &none, 1);
    assert_svg(a, "no positive x");
    ck_assert_ptr_nonnull(strstr(a, ">no data<"));
    ck_assert_int_eq(count(a, "<circle"), 0);
    free(a);
}
END_TEST

/* The text task: the variants' bits per byte and the baselines under the results table (one
 * pair when the variants share them, per variant when not), and a sample per variant in a code
 * block whose fence no backtick run in it can end, escaped in HTML; other tasks have neither */
#define BPB_LINE "Bits per byte on the held-out text (the final evaluation loss / ln 2, mean over seeds): full 1.169, " \
                 "shared 1.731, a&amp;b&lt;c 1.190"
START_TEST(report_text_task) {
    fixture *f = fixture_new(false);
    char *dir = write_report(f);
    char *md = read_in(dir, "report.md");
    ck_assert_ptr_null(strstr(md, "Bits per byte"));
    ck_assert_ptr_null(strstr(md, "## Samples"));
    free(md);
    qkv_test_rmtree(dir);
    free(dir);

    f->r.base_config_json = "{\"task\": {\"name\": \"text\"}}";
    snprintf(f->r.task, sizeof f->r.task, "text");
    f->r.sample_prompt = "The "; /* as train/observe.h has them: the aggregation fills them in */
    f->r.sample_bytes = 200;
    f->r.sample_temperature = 0.8;
    f->r.sample_seed = 0;
    for (int i = 0; i < NV; i++) f->v[i].xz_bpb = 3.1133, f->v[i].unigram_bpb = 4.7941;
    char s0[] = "The ``` fence <b>&amp;\n\n```` four\nend", s2[] = "The x";
    f->v[0].sample = s0;
    f->v[2].sample = s2;
    snprintf(f->r.tokenizer, sizeof f->r.tokenizer, "bpe"); /* how the text was read: in results.json, read back */
    f->r.pieces = 2048;
    f->r.bytes_per_token = 2.54638868;
    snprintf(f->r.pilot, sizeof f->r.pilot, "docs/results/pilot");
    dir = write_report(f);
    qkv_ablate_results back;
    qkv_ablate_config back_c;
    qkv_err re;
    ck_assert_msg(qkv__ablate_results_read(&back, &back_c, dir, &re) == 0, "%s", re.msg);
    ck_assert_str_eq(back.tokenizer, "bpe");
    ck_assert_int_eq(back.pieces, 2048);
    ck_assert(back.bytes_per_token == 2.54638868);
    ck_assert_str_eq(back.pilot, "docs/results/pilot");
    ck_assert_str_eq(back.rate_rule, QKV_RATE_RULE_SET);
    qkv__ablate_results_free(&back);
    qkv_ablate_config_free(&back_c);
    char *res = read_in(dir, "results.md");
    md = read_in(dir, "report.md");
    char *html = read_in(dir, "report.html");
    const char *bpb = BPB_LINE ". On the same bytes, xz -9 needs 3.113 bits per byte, and a unigram model of the "
                      "training bytes (add-one smoothing) 4.794.\n";
    ck_assert_msg(strstr(res, bpb) != NULL, "%s", res);
    ck_assert_ptr_nonnull(strstr(md, bpb));
    ck_assert_ptr_nonnull(strstr(md, "## Samples\n"));
    ck_assert_ptr_nonnull(strstr(md, "\n### full\n\n`````text\nThe ``` fence <b>&amp;\n\n```` four\nend\n`````\n"));
    ck_assert_ptr_nonnull(strstr(md, "\n### shared\n\nNo sample: the first seed's run has no finished model.\n"));
    ck_assert_ptr_nonnull(strstr(md, "```text\nThe x\n```\n"));
    ck_assert_ptr_nonnull(strstr(html, "<pre><code>The ``` fence &lt;b&gt;&amp;amp;\n\n```` four\nend</code></pre>"));
    ck_assert_ptr_nonnull(strstr(html, "<h2>Samples</h2>"));
    ck_assert(strstr(md, "## Samples") < strstr(md, "## Reproduce"));
    free(res);
    free(md);
    free(html);
    qkv_test_rmtree(dir);
    free(dir);

    /* baselines that differ between variants (their tasks differ): each variant's own */
    f->v[2].xz_bpb = 3.0;
    dir = write_report(f);
    res = read_in(dir, "results.md");
    ck_assert_msg(strstr(res, "full 1.169 (xz -9 3.113, unigram 4.794), shared 1.731 (xz -9 3.113, unigram 4.794), "
                              "a&amp;b&lt;c 1.190 (xz -9 3.000, unigram 4.794). In brackets:") != NULL, "%s", res);
    free(res);
    qkv_test_rmtree(dir);
    free(dir);
    free(f);
}
END_TEST

/* a partial report (--report before the sweep is done) says so before any number, in results.md and
 * report.md, and results.json counts what is missing; a complete one says nothing of it */
START_TEST(report_marks_partial_results) {
    fixture *f = fixture_new(false);
    f->r.missing = 1;
    f->r.to_extend = 2;
    f->r.task[0] = 0;
    f->r.d_model = 0;   /* unknown: null */
    char *dir = write_report(f);
    const char *note = "Partial results: 1 of 6 runs has not finished (failed or not yet run) and 2 finished runs "
                       "may still be extended; the numbers are over the runs finished so far.\n";
    char *md = read_in(dir, "results.md"), *rmd = read_in(dir, "report.md"), *json = read_in(dir, "results.json");
    ck_assert_msg(!strncmp(md, TITLE_MD, strlen(TITLE_MD)) && !strncmp(md + strlen(TITLE_MD), note, strlen(note)),
                  "%s", md);
    ck_assert_msg(!strncmp(rmd + strlen(TITLE_MD), note, strlen(note)), "%s", rmd);
    cJSON *root = cJSON_Parse(json);
    ck_assert_ptr_nonnull(root);
    ck_assert_int_eq((int)number(root, "missing_runs"), 1);
    ck_assert_int_eq((int)number(root, "runs_to_extend"), 2);
    ck_assert(is_null(root, "d_model"));
    cJSON_Delete(root);
    free(md);
    free(rmd);
    free(json);
    qkv_test_rmtree(dir);
    free(dir);
    /* only what is missing is said: one run left, nothing to extend */
    f->r.missing = 0;
    f->r.to_extend = 1;
    dir = write_report(f);
    md = read_in(dir, "results.md");
    ck_assert_ptr_nonnull(strstr(md, "\nPartial results: 1 finished run may still be extended; the numbers"));
    free(md);
    qkv_test_rmtree(dir);
    free(dir);
    f->r.to_extend = 0;
    dir = write_report(f);
    md = read_in(dir, "results.md");
    ck_assert_ptr_null(strstr(md, "Partial"));
    free(md);
    qkv_test_rmtree(dir);
    free(dir);
    free(f);
}
END_TEST

/* two directories of make_tmpdir's, removed and freed */
static void remove_dirs(char *a, char *b) {
    qkv_test_rmtree(a);
    qkv_test_rmtree(b);
    free(a);
    free(b);
}

/* results.json read back (ablate/results.h's reader) is the results it was written from: the
 * fixture's report written again from its own results.json gives the same results.json,
 * results.csv and results.md (_i: with a learning-rate grid or without one) */
START_TEST(report_read_back_renders_alike) {
    fixture *f = fixture_new(_i);
    char *dir = write_report(f), *again = make_tmpdir();
    qkv_ablate_results r;
    qkv_ablate_config c;
    qkv_err re;
    ck_assert_msg(qkv__ablate_results_read(&r, &c, dir, &re) == 0, "%s", re.msg);
    ck_assert_int_eq(r.n_lrs, f->r.n_lrs);
    ck_assert_ptr_nonnull(r.all_runs);
    ck_assert_msg(qkv__report_write(&r, again, NULL, &qerr) == 0, "%s", qerr.msg);
    const char *files[] = {"results.json", "results.csv", "results.md"};
    for (int k = 0; k < 3; k++) {
        char *a = read_in(dir, files[k]), *b = read_in(again, files[k]);
        ck_assert_msg(!strcmp(a, b), "%s differs when written from what it was read into:\n%s\n----\n%s", files[k], a, b);
        free(a);
        free(b);
    }
    qkv__ablate_results_free(&r);
    qkv_ablate_config_free(&c);
    remove_dirs(dir, again);
    free(f);
}
END_TEST

/* whether SVGs a and b are the same text but for numbers within 0.01 of each other: a plot drawn
 * from results.json, whose numbers cJSON prints to 15 significant digits (17 only when 15 do not
 * read back within its epsilon), may put a point 0.01 px from where the exact number does */
static bool same_drawing(const char *a, const char *b) {
    while (*a && *b) {
        bool num = (*a >= '0' && *a <= '9') || (*a == '-' && a[1] >= '0' && a[1] <= '9');
        if (num) {
            char *ea, *eb;
            double x = strtod(a, &ea), y = strtod(b, &eb);
            if (eb == b || fabs(x - y) > 0.0101) return false;
            a = ea;
            b = eb;
        } else if (*a++ != *b++) return false;
    }
    return *a == *b;
}

/* qkv summarize --plots: the plots drawn again from results.json alone are the drawings the report
 * made from the results themselves (same_drawing) (_i: with a learning-rate grid or without one), into
 * OUTDIR/plots/ and nothing else there, or in place over stale ones; refused, writing nothing, when
 * results.json lists no runs (an older qkv's) or is not JSON */
START_TEST(report_plots_redrawn_from_results_json) {
    fixture *f = fixture_new(_i);
    char *dir = write_report(f), *again = make_tmpdir(), out[4096];
    const char *plots[] = {"plots/accuracy.svg", "plots/loss.svg", "plots/learning-rate.svg"};
    const int n = _i ? 3 : 2;
    ck_assert_msg(qkv_test_sh(out, sizeof out, true, "%s summarize --plots %s --out %s/o --quiet", qkv_test_bin(), dir,
                              again) == 0 && !out[0], "%s", out);
    char o[200];
    snprintf(o, sizeof o, "%s/o", again);
    for (int k = 0; k < 3; k++) {
        ck_assert_msg(exists(o, plots[k]) == (k < n), "%s", plots[k]);
        if (k >= n) continue;
        char *a = read_in(dir, plots[k]), *b = read_in(o, plots[k]);
        ck_assert_msg(same_drawing(a, b), "%s redrawn from results.json differs from the report's", plots[k]);
        free(a);
        free(b);
    }
    ck_assert(!exists(o, "results.json") && !exists(o, "report.md") && !exists(o, "plots/attention-full.svg"));
    /* in place (no --out), over a stale file; the command names what it drew */
    qkv_test_put(dir, "plots/accuracy.svg", "stale");
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, true, "%s summarize --plots %s", qkv_test_bin(), dir), 0);
    ck_assert_msg(strstr(out, _i ? "qkv summarize: redrew plots/accuracy.svg, plots/loss.svg, plots/learning-rate.svg in "
                                 : "qkv summarize: redrew plots/accuracy.svg, plots/loss.svg in "), "%s", out);
    char *a = read_in(dir, "plots/accuracy.svg"), *b = read_in(o, "plots/accuracy.svg");
    ck_assert_str_eq(a, b);
    free(a);
    free(b);
    /* bad input: one line, exit 1, nothing written */
    char sub[300];
    for (int k = 0; k < 2; k++) {
        snprintf(sub, sizeof sub, "%s/%s", again, k ? "bad" : "old");
        ck_assert_int_eq(mkdir(sub, 0755), 0);
    }
    qkv_test_put(again, "old/results.json", "{\"title\": \"t\", \"baseline\": \"full\", \"variants\": "
                                            "[{\"name\": \"full\"}]}\n");
    qkv_test_put(again, "bad/results.json", "{\"title\": \"t\",}\n");
    const char *bad[][2] = {{"old", "old/results.json: variants[].runs: not every run of every variant is listed"},
                            {"bad", "bad/results.json:1:14: JSON syntax error"},
                            {"none", "none: no such directory"}};
    for (int k = 0; k < 3; k++) {
        ck_assert_int_eq(qkv_test_sh(out, sizeof out, true, "cd %s && %s summarize --plots %s --out w%d", again,
                                     qkv_test_bin(), bad[k][0], k), 1);
        ck_assert_msg(!strncmp(out, "qkv summarize: ", 15) && strstr(out, bad[k][1]) && count(out, "\n") == 1, "%s",
                      out);
        char w[300];
        snprintf(w, sizeof w, "%s/w%d", again, k);
        ck_assert_int_ne(access(w, F_OK), 0);
        snprintf(w, sizeof w, "%s/%s", again, bad[k][0]);
        ck_assert(!exists(w, "plots/accuracy.svg"));
    }
    /* one action at a time */
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, true, "%s summarize --plots %s %s --out x", qkv_test_bin(), dir, dir),
                     2);
    ck_assert_msg(strstr(out, "--plots DIR redraws one ablation's plots: not with other DIRs, --title, --check-doc"), "%s", out);
    remove_dirs(dir, again);
    free(f);
}
END_TEST

/* every committed results.json (docs/results/) read back and written again is the same file but
 * for the keys of the score diagnostics, which files of a qkv before them lack (written as null) */
START_TEST(report_committed_results_read_back) {
    glob_t g;
    ck_assert_int_eq(glob("../docs/results/*/results.json", 0, NULL, &g), 0);
    ck_assert_int_eq(glob("../docs/results/*/*/results.json", GLOB_APPEND, NULL, &g), 0);
    ck_assert_int_ge((int)g.gl_pathc, 20);
    char *out = make_tmpdir();
    for (size_t k = 0; k < g.gl_pathc; k++) {
        char dir[4096];
        snprintf(dir, sizeof dir, "%.*s", (int)(strlen(g.gl_pathv[k]) - strlen("/results.json")), g.gl_pathv[k]);
        qkv_ablate_results r;
        qkv_ablate_config c;
        qkv_err re;
        ck_assert_msg(qkv__ablate_results_read(&r, &c, dir, &re) == 0, "%s", re.msg);
        ck_assert_msg(qkv__report_write(&r, out, NULL, &qerr) == 0, "%s: %s", dir, qerr.msg);
        char *committed = read_in(dir, "results.json"), *written = read_in(out, "results.json");
        if (!strstr(committed, "\"score_symmetry\"")) /* the older file: its lines without the two keys */
            for (char *l; (l = strstr(written, "\t\t\t\"score_")) != NULL;)
                memmove(l, strchr(l, '\n') + 1, strlen(strchr(l, '\n') + 1) + 1);
        ck_assert_msg(!strcmp(committed, written), "%s/results.json differs when written from what it was read into",
                      dir);
        free(committed);
        free(written);
        qkv__ablate_results_free(&r);
        qkv_ablate_config_free(&c);
    }
    globfree(&g);
    qkv_test_rmtree(out);
    free(out);
}
END_TEST

/* ---- results.json against its schema (ablate/results_schema.h) ---- */

/* the schema's row of `key`, or NULL */
static const qkv_results_key_def *schema_row(const char *key) {
    for (int k = 0; k < QKV_RK_COUNT; k++)
        if (!strcmp(qkv__results_keys[k].key, key)) return &qkv__results_keys[k];
    return NULL;
}

/* whether v is a number of the row's scalar type (NUM in its range, COUNT whole) */
static bool schema_number(const cJSON *v, const qkv_results_key_def *d) {
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble)) return false;
    double x = v->valuedouble;
    if (d->type == QKV_RT_COUNT || d->type == QKV_RT_COUNTS) return x >= 0 && x <= 9007199254740992.0 && x == floor(x);
    return x >= d->lo && x <= d->hi;
}

/* whether v is a value of d's type (null where the key may be missing; in a curve, a series of it) */
static bool schema_value(const cJSON *v, const qkv_results_key_def *d, bool series) {
    if (cJSON_IsNull(v)) return !d->required;
    if (series || d->type == QKV_RT_NUMS || d->type == QKV_RT_COUNTS || d->type == QKV_RT_OBJECTS) {
        if (!cJSON_IsArray(v)) return false;
        for (const cJSON *e = v->child; e; e = e->next)
            if (d->type == QKV_RT_OBJECTS ? !cJSON_IsObject(e) : !(series && cJSON_IsNull(e)) && !schema_number(e, d))
                return false;
        return true;
    }
    switch (d->type) {
    case QKV_RT_NUM: case QKV_RT_COUNT: return schema_number(v, d);
    case QKV_RT_STR: return cJSON_IsString(v);
    case QKV_RT_BOOL: return cJSON_IsBool(v);
    case QKV_RT_OBJECT: return cJSON_IsObject(v);
    default: return false;
    }
}

/* the object a key's value (or its array's elements) is: QKV_RO_*, 0 for none */
static unsigned schema_inner(const qkv_results_key_def *d) {
    const struct { qkv_results_key k; unsigned in; } inner[] = {
        {QKV_RK_TEXT, QKV_RO_TEXT}, {QKV_RK_RATE_CHOICE, QKV_RO_RATE}, {QKV_RK_VARIANTS, QKV_RO_VARIANT},
        {QKV_RK_RUNS, QKV_RO_RUN}, {QKV_RK_CURVE, QKV_RO_CURVE}};
    for (size_t i = 0; i < sizeof inner / sizeof *inner; i++)
        if (d == &qkv__results_keys[inner[i].k]) return inner[i].in;
    return 0;
}

/* every key of o (an object of kind `in`) is a key of the schema's in that object, with a value of
 * its type and range, and every key the schema requires there is present (seen[k]: key k was) */
static void schema_check(const cJSON *o, unsigned in, bool *seen, const char *file) {
    for (const cJSON *v = o->child; v; v = v->next) {
        const qkv_results_key_def *d = schema_row(v->string);
        ck_assert_msg(d && (d->in & in), "%s: key %s is not in the schema's object %u", file, v->string, in);
        ck_assert_msg(schema_value(v, d, in == QKV_RO_CURVE), "%s: key %s is not of its schema's type or range", file,
                      v->string);
        seen[d - qkv__results_keys] = true;
        unsigned inner = schema_inner(d);
        if (inner && cJSON_IsObject(v)) schema_check(v, inner, seen, file);
        for (const cJSON *e = inner && cJSON_IsArray(v) ? v->child : NULL; e; e = e->next)
            schema_check(e, inner, seen, file);
    }
    for (int k = 0; k < QKV_RK_COUNT; k++) {
        const qkv_results_key_def *d = &qkv__results_keys[k];
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, d->key);
        ck_assert_msg(!d->required || !(d->in & in) || (v && !cJSON_IsNull(v)), "%s: required key %s is missing", file,
                      d->key);
    }
}

/* dir/results.json checked against the schema */
static void schema_check_file(const char *dir, bool *seen) {
    char *text = read_in(dir, "results.json");
    cJSON *root = cJSON_Parse(text);
    ck_assert_msg(root && cJSON_IsObject(root), "%s/results.json is not a JSON object", dir);
    schema_check(root, QKV_RO_TOP, seen, dir);
    cJSON_Delete(root);
    free(text);
}

/* results.json follows its schema: what the report writes (with a grid and without, a partial
 * report, the text task with its pilot) and every committed results.json have only the schema's
 * keys, each in its object, of its type and range, the required ones present; and between them
 * they have every key of the schema but eval_bpb, which qkv reads and never writes (a key the
 * schema keeps that nothing writes fails here) */
START_TEST(report_json_follows_its_schema) {
    bool seen[QKV_RK_COUNT] = {false};
    for (int grid = 0; grid < 2; grid++) {
        fixture *f = fixture_new(grid);
        char *dir = write_report(f);
        schema_check_file(dir, seen);
        qkv_test_rmtree(dir);
        free(dir);
        f->r.missing = 1; /* partial: the runs not started are said */
        for (int i = 0; i < NV; i++) f->v[i].not_started = i;
        f->r.chance = 0.1, f->r.no_retrieval = 0.2;
        snprintf(f->r.tokenizer, sizeof f->r.tokenizer, "bpe");
        f->r.pieces = 512;
        f->r.bytes_per_token = 2.5;
        snprintf(f->r.pilot, sizeof f->r.pilot, "docs/results/pilot");
        f->r.n_pilot_seeds = 2, f->r.pilot_seeds[0] = 0, f->r.pilot_seeds[1] = 1;
        dir = write_report(f);
        schema_check_file(dir, seen);
        qkv_test_rmtree(dir);
        free(dir);
        free(f);
    }
    glob_t g;
    ck_assert_int_eq(glob("../docs/results/*/results.json", 0, NULL, &g), 0);
    ck_assert_int_eq(glob("../docs/results/*/*/results.json", GLOB_APPEND, NULL, &g), 0);
    for (size_t k = 0; k < g.gl_pathc; k++) {
        char dir[4096];
        snprintf(dir, sizeof dir, "%.*s", (int)(strlen(g.gl_pathv[k]) - strlen("/results.json")), g.gl_pathv[k]);
        schema_check_file(dir, seen);
    }
    globfree(&g);
    for (int k = 0; k < QKV_RK_COUNT; k++)
        ck_assert_msg(seen[k] == (k != QKV_RK_EVAL_BPB), "the schema's key %s is %s", qkv__results_keys[k].key,
                      seen[k] ? "written (eval_bpb: expected never)" : "never written");
}
END_TEST

/* diagnostics set against their start (train/observe.h): the diagnostics table shows "start -> end
 * (change)" where a variant's runs recorded their start and its end alone where not, beside a
 * previous-position column and a note; results.csv and results.json carry them, and read back they
 * render alike */
START_TEST(report_diagnostics_from_their_start) {
    fixture *f = fixture_new(false);
    qkv_variant_result *full = &f->v[0], *shared = &f->v[1];
    full->diag.prev_share = 0.2;
    full->diag_start.diag_share = 0.15;
    full->diag_start.prev_share = 0.12;
    full->diag_start.symmetry = 0.0212;
    full->diag_start.negative_mass = 0.48;
    shared->diag.prev_share = 0.1;
    shared->diag_start.diag_share = 0.25;
    shared->diag_start.symmetry = 1;
    shared->diag_start.negative_mass = 0;
    char *dir = write_report(f);
    char *md = read_in(dir, "results.md"), *csv = read_in(dir, "results.csv"), *json = read_in(dir, "results.json");
    ck_assert_ptr_nonnull(strstr(md, "## Attention"));
    ck_assert_msg(strstr(md, "| variant | diagonal share | previous-position share | first-position share |"), "%s", strstr(md, "## Attention"));
    ck_assert_msg(strstr(md, "| full | 0.150 \xe2\x86\x92 0.100 (-0.050) | 0.120 \xe2\x86\x92 0.200 (+0.080) | "
                             "0.050 |"), "%s", strstr(md, "## Attention"));
    ck_assert_msg(strstr(md, " | 0.02 \xe2\x86\x92 -0.12 (-0.15) | 0.48 \xe2\x86\x92 0.50 (+0.02) |\n"), "%s", strstr(md, "## Attention"));
    ck_assert_msg(strstr(md, "| shared | 0.250 \xe2\x86\x92 0.200 (-0.050) | 0.100 | "), "%s", strstr(md, "## Attention"));
    ck_assert_msg(strstr(md, " | 1.00 \xe2\x86\x92 1.00 (+0.00) | 0.00 \xe2\x86\x92 0.00 (+0.00) |\n"), "%s", strstr(md, "## Attention"));
    ck_assert_msg(strstr(md, "| a&amp;b&lt;c | 0.300 | " EM " | 0.150 | " EM " | 1.700 | 0.38 | " EM " |\n"), "%s", strstr(md, "## Attention"));
    ck_assert_ptr_nonnull(strstr(md, "- previous-position share: the mean weight a query puts on the position just "
                                     "before its own"));
    ck_assert_ptr_nonnull(strstr(md, "- start \xe2\x86\x92 end (change): the value at step 0, of the initialised "
                                     "model before its first update"));
    ck_assert_msg(strstr(csv, ",score_symmetry,score_negative_share,prev_share,start_diag_share,start_prev_share,"
                              "start_score_symmetry,start_score_negative_share\n"), "%.300s", strchr(csv, '\n') - 300);
    cJSON *root = cJSON_Parse(json);
    const cJSON *v = item(root, "variants");
    ck_assert(number(cJSON_GetArrayItem(v, 0), "start_diag_share") == 0.15);
    ck_assert(number(cJSON_GetArrayItem(v, 0), "start_score_negative_share") == 0.48);
    ck_assert(number(cJSON_GetArrayItem(v, 1), "start_score_symmetry") == 1);
    ck_assert(is_null(cJSON_GetArrayItem(v, 1), "start_prev_share") && is_null(cJSON_GetArrayItem(v, 2), "start_diag_share"));
    cJSON_Delete(root);
    /* read back, the same files */
    qkv_ablate_results r;
    qkv_ablate_config c;
    char *again = make_tmpdir();
    qkv_err re;
    ck_assert_msg(qkv__ablate_results_read(&r, &c, dir, &re) == 0, "%s", re.msg);
    ck_assert_msg(qkv__report_write(&r, again, NULL, &qerr) == 0, "%s", qerr.msg);
    const char *files[] = {"results.json", "results.csv", "results.md"};
    for (int k = 0; k < 3; k++) {
        char *a = read_in(dir, files[k]), *b = read_in(again, files[k]);
        ck_assert_msg(!strcmp(a, b), "%s differs when written from what it was read into:\n%s\n----\n%s", files[k], a, b);
        free(a);
        free(b);
    }
    qkv__ablate_results_free(&r);
    qkv_ablate_config_free(&c);
    free(md);
    free(csv);
    free(json);
    remove_dirs(dir, again);
    free(f);
}
END_TEST

/* sample bytes as text a page shows as it is: UTF-8 kept, everything else U+FFFD */
START_TEST(report_display_text) {
    static const uint8_t in[] = "a\0b\xff\xc3\xa9\r\t\n\xc0\xaf\xc2\x85\xed\xa0\x80\xf0\x9f\x98\x80\x7f\xe2\x82";
    char *t = qkv__display_text(in, sizeof in - 1);
#define R "\xef\xbf\xbd"
    ck_assert_str_eq(t, "a" R "b" R "\xc3\xa9" R "\t\n" R R R R R R R "\xf0\x9f\x98\x80" R R R);
#undef R
    free(t);
    t = qkv__display_text(in, 0);
    ck_assert_str_eq(t, "");
    free(t);
}
END_TEST

/* model sizes on a log axis (qkv summarize): the caller's ticks at the sizes, equally spaced, and
 * no others; intervals as bars with caps at the points (no band), two series nudged apart */
START_TEST(svg_error_bars_and_x_ticks) {
    double x[3] = {32, 64, 128}, ya[3] = {0.5, 0.7, 0.9}, la[3] = {0.4, 0.6, 0.85}, ha[3] = {0.6, 0.8, 0.95};
    double yb[3] = {0.3, NAN, 0.6}, lb[3] = {0.2, NAN, 0.5}, hb[3] = {0.4, NAN, 0.7};
    double ticks[4] = {32, 64, 128, 1024};   /* 1024 is off the axis: not drawn */
    qkv_svg_series s[2] = {{"a", 3, x, ya, la, ha}, {"b", 3, x, yb, lb, hb}};
    qkv_svg_plot pl = {.title = "sizes", .xlabel = "d_model", .ylabel = "acc", .log_x = true, .percent_y = true,
                       .x_ticks = ticks, .n_x_ticks = 4, .error_bars = true};
    char *a = qkv__svg_curves(&pl, s, 2);
    assert_svg(a, "error bars");
    double t32 = x_tick(a, "32"), t64 = x_tick(a, "64"), t128 = x_tick(a, "128");
    ck_assert(fabs((t64 - t32) - (t128 - t64)) < 0.03);
    ck_assert_ptr_null(strstr(a, ">100</text>"));
    ck_assert_ptr_null(strstr(a, ">1024</text>"));
    ck_assert_ptr_null(strstr(a, "<polygon"));
    /* series a 2.5 px left of each tick, b 2.5 px right (b has no point at 64) */
    for (int j = 0; j < 3; j++) {
        double t = j == 0 ? t32 : j == 1 ? t64 : t128;
        ck_assert_msg(circle_at(a, t - 2.5), "no point of a at tick %d", j);
        ck_assert(circle_at(a, t + 2.5) == (j != 1));
        char bar[96];   /* the bar's vertical line at the point's x */
        snprintf(bar, sizeof bar, "<line x1=\"%.2f\" y1=", t - 2.5);
        ck_assert_msg(strstr(a, bar), "no bar of a at tick %d", j);
    }
    /* 5 bars of 3 lines (a bar, two caps), in the series' colours: 3 of a, 2 of b */
    const char *ga = strstr(a, "<g stroke=\"#4e79a7\" stroke-width=\"1.5\">");
    const char *gb = strstr(a, "<g stroke=\"#f28e2b\" stroke-width=\"1.5\">");
    ck_assert_ptr_nonnull(ga);
    ck_assert_ptr_nonnull(gb);
    ck_assert_int_eq(count(ga, "<line") - count(strstr(ga, "</g>"), "<line"), 9);
    ck_assert_int_eq(count(gb, "<line") - count(strstr(gb, "</g>"), "<line"), 6);
    free(a);
}
END_TEST

Suite *report_suite(void) {
    Suite *s = suite_create("report");
    TCase *tc = tcase_create("report");
    tcase_set_timeout(tc, 30);
    tcase_add_loop_test(tc, report_writes_every_file, 0, 2);
    tcase_add_loop_test(tc, report_read_back_renders_alike, 0, 2);
    tcase_add_loop_test(tc, report_plots_redrawn_from_results_json, 0, 2);
    tcase_add_test(tc, report_committed_results_read_back);
    tcase_add_test(tc, report_json_follows_its_schema);
    tcase_add_loop_test(tc, report_csv_is_exact, 0, 2);
    tcase_add_loop_test(tc, report_json_has_variants_and_runs, 0, 2);
    tcase_add_loop_test(tc, report_html_is_self_contained, 0, 2);
    tcase_add_test(tc, report_svgs_are_well_formed);
    tcase_add_test(tc, report_significant_difference);
    tcase_add_test(tc, report_findings_in_bits);
    tcase_add_loop_test(tc, report_findings_compare_solve_steps, 0, 3);
    tcase_add_loop_test(tc, report_no_significance_with_few_seeds, 0, 2);
    tcase_add_test(tc, report_no_significance_with_enough_seeds);
    tcase_add_loop_test(tc, report_one_variant_one_seed_all_failed, 0, 2);
    tcase_add_test(tc, report_twelve_variants_long_names);
    tcase_add_test(tc, report_median_with_some_unsolved);
    tcase_add_test(tc, report_unwritable_dir_fails_cleanly);
    tcase_add_test(tc, report_marks_partial_results);
    tcase_add_test(tc, report_diagnostics_from_their_start);
    tcase_add_test(tc, svg_nice_ticks);
    tcase_add_test(tc, strbuf_and_escape);
    tcase_add_test(tc, svg_coinciding_series_noted);
    tcase_add_test(tc, strbuf_list_of_choices);
    tcase_add_test(tc, svg_curves_edge_cases);
    tcase_add_test(tc, svg_heatmap_shapes);
    tcase_add_test(tc, svg_log_x);
    tcase_add_test(tc, report_text_task);
    tcase_add_test(tc, report_display_text);
    tcase_add_test(tc, svg_error_bars_and_x_ticks);
    suite_add_tcase(s, tc);
    return s;
}
