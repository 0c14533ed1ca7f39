/* Tests for qkv summarize (src/report/summary*.c, src/cli/summarize.c) on hand-written
 * results.json files whose numbers are chosen so every cell is known exactly:
 *   A  recall, d_model 32, 3 seeds: full solved at 400; shared unsolved (budgets 1600, 3200,
 *      3200; a run at a rate not chosen ran 6400), significantly worse; qk_tied solved at 900 by
 *      2 of 3; kv_tied with a failed run, 1 of 2 solved
 *   B  recall, d_model 64, partial (2 of 9 runs missing, 1 to extend): full, shared, gate
 *   C  text, d_model 32, 7 seeds: bits per byte from the loss (full 1.0 .. 1.6, shared 0.5 above
 *      each: p = 2/128), identity's from eval_bpb (2.0; its loss is nonsense)
 * The main table cell by cell, the size table and plot of recall (32 and 64), summary.md, .csv
 * and .html, then documents with generated blocks: a fresh one fails --check-doc naming its first
 * line, --update-doc fills it, an edited line is named with its column, fenced examples are text,
 * and tables quoted from a Markdown file by number, heading, column name and cols=; last, the gaps
 * to the baseline against training steps of G (its curves, chosen so every gap is known by hand). */
#define _GNU_SOURCE
#include <check.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ablate/results.h"
#include "ablate/stats.h"
#include "report/report_data.h"
#include "report/summary.h"
#include "io/fileio.h"
#include "suites.h"
#include "testutil.h"

static char TMP[256];

static void setup(void) { qkv_test_mkdtemp(TMP, sizeof TMP, "summary"); }
static void teardown(void) { qkv_test_rmtree(TMP); }

#define EM "\xe2\x80\x94"
#define DAGGER "\xe2\x80\xa0"
#define DELTA "\xce\x94"

/* ---- fixtures -------------------------------------------------------------------------------- */

typedef struct rspec {
    double seed;
    bool ok, chosen, solved;
    double loss, bpb;                   /* NaN: null (bpb: the key left out) */
    double budget;
} rspec;

typedef struct vspec {
    const char *name;
    int runs_ok, solved, unsolved;
    double steps;                       /* steps_to_threshold (NaN: null) */
    double acc, lo, hi, d, dlo, dhi, p, ph;
    int sig;                            /* -1: null */
    double params;
    int n_runs;
    rspec runs[8];
    double loss, llo, lhi;              /* loss_mean and its interval (nats) */
} vspec;

typedef struct aspec {
    const char *dir, *title, *task;
    int d_model, seeds;
    double planned, missing, extend;    /* NaN: keys left out */
    int n;
    vspec v[4];
    const char *metric;                 /* what the ablation compared on; NULL: the key left out */
} aspec;

static void num_or_null(cJSON *o, const char *k, double v) {
    if (isfinite(v)) cJSON_AddNumberToObject(o, k, v);
    else cJSON_AddNullToObject(o, k);
}

/* dir/results.json as report_json.c would write it (the keys summarize reads) */
static void write_results(const aspec *a) {
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "title", a->title);
    cJSON_AddNumberToObject(root, "threshold", 0.99);
    cJSON_AddStringToObject(root, "baseline", "full");
    if (a->metric) cJSON_AddStringToObject(root, "metric", a->metric);
    cJSON_AddStringToObject(root, "task", a->task);
    cJSON_AddNumberToObject(root, "d_model", a->d_model);
    cJSON_AddNumberToObject(root, "layers", 2);
    cJSON_AddNumberToObject(root, "heads", 4);
    cJSON *seeds = cJSON_AddArrayToObject(root, "seeds");
    for (int s = 0; s < a->seeds; s++) cJSON_AddItemToArray(seeds, cJSON_CreateNumber(s));
    if (isfinite(a->planned)) {
        cJSON_AddNumberToObject(root, "runs_planned", a->planned);
        cJSON_AddNumberToObject(root, "missing_runs", a->missing);
        cJSON_AddNumberToObject(root, "runs_to_extend", a->extend);
    }
    cJSON *vars = cJSON_AddArrayToObject(root, "variants");
    for (int i = 0; i < a->n; i++) {
        const vspec *v = &a->v[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddItemToArray(vars, o);
        cJSON_AddStringToObject(o, "name", v->name);
        cJSON_AddNumberToObject(o, "attn_params", floor(v->params / 4));
        cJSON_AddNumberToObject(o, "params", v->params);
        cJSON_AddNumberToObject(o, "runs_ok", v->runs_ok);
        num_or_null(o, "acc_mean", v->acc);
        num_or_null(o, "loss_mean", v->loss);
        num_or_null(o, "loss_ci_low", v->llo);
        num_or_null(o, "loss_ci_high", v->lhi);
        num_or_null(o, "steps_to_threshold", v->steps);
        cJSON_AddNumberToObject(o, "budget", 99999); /* the longest run: summarize takes the unsolved runs' */
        num_or_null(o, "acc_ci_low", v->lo);
        num_or_null(o, "acc_ci_high", v->hi);
        num_or_null(o, "delta_vs_baseline", v->d);
        num_or_null(o, "delta_ci_low", v->dlo);
        num_or_null(o, "delta_ci_high", v->dhi);
        num_or_null(o, "p_value", v->p);
        num_or_null(o, "p_holm", v->ph);
        if (v->sig < 0) cJSON_AddNullToObject(o, "significant");
        else cJSON_AddBoolToObject(o, "significant", v->sig);
        cJSON_AddNumberToObject(o, "solved", v->solved);
        cJSON_AddNumberToObject(o, "unsolved", v->unsolved);
        cJSON *runs = cJSON_AddArrayToObject(o, "runs");
        for (int k = 0; k < v->n_runs; k++) {
            const rspec *r = &v->runs[k];
            cJSON *ro = cJSON_CreateObject();
            cJSON_AddItemToArray(runs, ro);
            cJSON_AddNumberToObject(ro, "seed", r->seed);
            cJSON_AddBoolToObject(ro, "chosen", r->chosen);
            cJSON_AddBoolToObject(ro, "ok", r->ok);
            num_or_null(ro, "final_loss", r->ok ? r->loss : NAN);
            if (isfinite(r->bpb)) cJSON_AddNumberToObject(ro, "eval_bpb", r->bpb);
            if (r->ok) cJSON_AddStringToObject(ro, "verdict", r->solved ? "solved" : "unsolved");
            else cJSON_AddNullToObject(ro, "verdict");
            num_or_null(ro, "budget", r->ok ? r->budget : NAN);
        }
    }
    char *text = cJSON_Print(root), path[600];
    cJSON_Delete(root);
    snprintf(path, sizeof path, "%s/%s", TMP, a->dir);
    ck_assert_int_eq(qkv__mkdirs(path, NULL), 0);
    snprintf(path, sizeof path, "%s/%s/results.json", TMP, a->dir);
    ck_assert_int_eq(qkv__write_file_atomic(path, text, strlen(text), NULL), 0);
    free(text);
}

#define RUN(seed, solved, budget) {seed, true, true, solved, 0.5, NAN, budget}
#define NO_RUNS {{0, false, false, false, 0, 0, 0}}   /* (filled in afterwards, or none) */
#define NO_LOSS NAN, NAN, NAN                         /* loss_mean and its interval: null */
#define LN2 0.69314718055994530942

static void write_fixtures(void) {
    static const aspec A = {"A", "Recall at 32", "recall", 32, 3, 12, 0, 0, 4, {
        {"full", 3, 3, 0, 400, 1, 1, 1, NAN, NAN, NAN, NAN, NAN, -1, 1000, 3,
         {RUN(0, true, 400), RUN(1, true, 400), RUN(2, true, 800)}, NO_LOSS},
        {"shared", 3, 0, 3, NAN, 0.2, 0.18, 0.22, -0.8, -0.82, -0.78, 0.004, 0.012, 1, 900, 4,
         {RUN(0, false, 1600), RUN(1, false, 3200), RUN(2, false, 3200), {0, true, false, false, 0.5, NAN, 6400}},
         NO_LOSS},
        {"qk_tied", 3, 2, 1, 900, 0.95, 0.9, 1, -0.05, -0.1, 0, 0.25, 0.5, 0, 950, 3,
         {RUN(0, true, 800), RUN(1, true, 1600), RUN(2, false, 1600)}, NO_LOSS},
        {"kv_tied", 2, 1, 1, NAN, 0.97, 0.95, 0.99, 0.015, -0.005, 0.03, 0.5, 0.5, 0, 950, 3,
         {RUN(0, true, 800), RUN(1, false, 1600), {2, false, true, false, NAN, NAN, NAN}}, NO_LOSS},
    }, NULL};
    static const aspec B = {"B", "Recall at 64", "recall", 64, 3, 9, 2, 1, 3, {
        {"full", 3, 3, 0, 300, 1, 1, 1, NAN, NAN, NAN, NAN, NAN, -1, 4000, 3,
         {RUN(0, true, 400), RUN(1, true, 400), RUN(2, true, 400)}, NO_LOSS},
        {"shared", 3, 0, 3, NAN, 0.6, 0.5, 0.7, -0.4, -0.5, -0.3, 0.25, 0.5, 0, 3500, 3,
         {RUN(0, false, 6400), RUN(1, false, 6400), RUN(2, false, 6400)}, NO_LOSS},
        {"gate", 2, 2, 0, 250, 1, 1, 1, 0.004, 0, 0.01, 1, 1, 0, 4200, 2, {RUN(0, true, 400), RUN(1, true, 400)},
         NO_LOSS},
    }, NULL};
    aspec C = {"C", "Text", "text", 32, 7, 21, 0, 0, 3, {
        {"full", 7, 0, 7, NAN, 0.5, 0.4, 0.6, NAN, NAN, NAN, NAN, NAN, -1, 2000, 7, NO_RUNS, NO_LOSS},
        {"shared", 7, 0, 7, NAN, 0.4, 0.3, 0.5, -0.1, -0.2, 0, 0.1, 0.2, 0, 1800, 7, NO_RUNS, NO_LOSS},
        {"identity", 7, 0, 7, NAN, 0.3, 0.2, 0.4, -0.2, -0.3, -0.1, 0.1, 0.2, 0, 1500, 7, NO_RUNS, NO_LOSS},
    }, NULL};
    for (int s = 0; s < 7; s++) {
        C.v[0].runs[s] = (rspec){s, true, true, false, (1.0 + 0.1 * s) * LN2, NAN, 4000};
        C.v[1].runs[s] = (rspec){s, true, true, false, (1.5 + 0.1 * s) * LN2, NAN, 4000};
        C.v[2].runs[s] = (rspec){s, true, true, false, 9.0, 2.0, 4000};
    }
    write_results(&A);
    write_results(&B);
    write_results(&C);
}

/* A B C, loaded from TMP */
static void load(qkv_summary *s, int n, const char *const *names) {
    char paths[4][600];
    const char *dirs[4];
    qkv_err e;
    for (int i = 0; i < n; i++) {
        snprintf(paths[i], sizeof paths[i], "%s/%s", TMP, names[i]);
        dirs[i] = paths[i];
    }
    int rc = qkv__summary_load(s, dirs, n, &e);
    ck_assert_msg(rc == 0, "%s", e.msg);
}

static const char *const ABC[] = {"A", "B", "C"};

/* sh -c in TMP; stdout and stderr into out; the exit status */
static int sh(char *out, size_t n, const char *fmt, ...) {
    char cmd[4096], path[600];
    va_list ap;
    va_start(ap, fmt);
    int k = snprintf(cmd, sizeof cmd, "cd %s && ", TMP);
    vsnprintf(cmd + k, sizeof cmd - (size_t)k, fmt, ap);
    va_end(ap);
    snprintf(path, sizeof path, "%s/out.txt", TMP);
    strncat(cmd, " >", sizeof cmd - strlen(cmd) - 1);
    strncat(cmd, path, sizeof cmd - strlen(cmd) - 1);
    strncat(cmd, " 2>&1", sizeof cmd - strlen(cmd) - 1);
    int st = system(cmd);
    FILE *f = fopen(path, "r");
    size_t m = f ? fread(out, 1, n - 1, f) : 0;
    out[m] = 0;
    if (f) fclose(f);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static char *read_tmp(const char *name) {
    char path[600];
    qkv_err err;
    snprintf(path, sizeof path, "%s/%s", TMP, name);
    char *s = qkv__read_file(path, NULL, &err);
    ck_assert_msg(s != NULL, "%s", err.msg);
    return s;
}

static void write_tmp(const char *name, const char *text) {
    char path[600];
    snprintf(path, sizeof path, "%s/%s", TMP, name);
    ck_assert_int_eq(qkv__write_file_atomic(path, text, strlen(text), NULL), 0);
}

/* ---- the main table -------------------------------------------------------------------------- */

START_TEST(summary_main_table_cells) {
    write_fixtures();
    qkv_summary s;
    load(&s, 3, ABC);
    ck_assert_int_eq(s.n, 3);
    ck_assert_str_eq(s.baseline, "full");
    /* every variant once, in the order they first appear */
    const char *rows[] = {"full", "shared", "qk_tied", "kv_tied", "gate", "identity"};
    ck_assert_int_eq(s.n_variants, 6);
    for (int j = 0; j < 6; j++) ck_assert_str_eq(s.variants[j], rows[j]);
    ck_assert(!qkv__summary_partial(&s.a[0]) && qkv__summary_partial(&s.a[1]) && !qkv__summary_partial(&s.a[2]));
    ck_assert(!s.a[0].bpb_from_loss && s.a[2].bpb_from_loss);

    qkv_sum_report r;
    ck_assert_int_eq(qkv__sum_report_build(&r, &s), 0);
    ck_assert_int_eq(r.main.rows, 6);
    ck_assert_int_eq(r.main.cols, 4);
    ck_assert_str_eq(r.main.head[0], "variant");
    ck_assert_str_eq(r.main.head[1], "recall d_model=32: verdict; " DELTA " acc vs full (points) [95% CI]");
    ck_assert_str_eq(r.main.head[2], "recall d_model=64: verdict; " DELTA " acc vs full (points) [95% CI] " DAGGER);
    ck_assert_str_eq(r.main.head[3], "text d_model=32: bits/byte; " DELTA " vs full [95% CI]");
    ck_assert(!r.main.right[1] && !r.main.right[2] && r.main.right[3]);

    /* identity's bits per byte: its runs' eval_bpb (2.0), against full's 1.0 .. 1.6 paired by seed,
     * with aggregate.c's bootstrap for variant 2 of C; Holm over 2 comparisons of p = 2/128 */
    double a[7], b[7], lo, hi;
    for (int k = 0; k < 7; k++) {
        a[k] = 2.0;
        b[k] = 1.0 + 0.1 * k;
    }
    ck_assert_int_eq(qkv_stats_bootstrap_ci_paired(a, b, 7, QKV_ABLATE_RESAMPLES, QKV_ABLATE_LEVEL,
                                                   QKV_ABLATE_SEED_PAIRED(2), &lo, &hi), 0);
    char identity[128];
    snprintf(identity, sizeof identity, "2.000; +0.700 [%.3f, %.3f]*", lo, hi);
    ck_assert(lo > 0.4 && hi < 1.0 && lo < hi);
    const char *want[6][4] = {
        {"full", "solved at 400; baseline", "solved at 300; baseline", "1.300; baseline"},
        {"shared", "not within 3200; -80.0 [-82.0, -78.0]*", "not within 6400; -40.0 [-50.0, -30.0]",
         "1.800; +0.500 [0.500, 0.500]*"},
        {"qk_tied", "solved at 900 (2/3); -5.0 [-10.0, 0.0]", EM, EM},
        {"kv_tied", "1/2 solved, not within 1600; +1.5 [-0.5, 3.0] (2/3 runs)", EM, EM},
        {"gate", EM, "solved at 250; +0.4 [0.0, 1.0] (2/3 runs)", EM},
        {"identity", EM, EM, identity},
    };
    for (int j = 0; j < 6; j++)
        for (int c = 0; c < 4; c++)
            ck_assert_msg(!strcmp(qkv_report_cell(&r.main, j, c), want[j][c]), "row %d column %d: [%s], expected [%s]",
                          j, c, qkv_report_cell(&r.main, j, c), want[j][c]);
    /* the text ablation's statistics as computed: shared's p = 2/2^7, Holm doubles it */
    const qkv_metric_stats *sh_c = qkv__sum_stats(&s.a[2], 1);
    ck_assert(fabs(sh_c->p - 2.0 / 128) < 1e-12 && fabs(sh_c->p_holm - 4.0 / 128) < 1e-12 && sh_c->significant);
    ck_assert(fabs(qkv__sum_stats(&s.a[2], 0)->mean - 1.3) < 1e-12);
    qkv__sum_report_free(&r);
    qkv__summary_free(&s);
}
END_TEST

/* recall at 32 and 64: the size table (metric, parameters), the plot's points; text has one size */
START_TEST(summary_sizes) {
    write_fixtures();
    qkv_summary s;
    load(&s, 3, ABC);
    qkv_sum_report r;
    ck_assert_int_eq(qkv__sum_report_build(&r, &s), 0);
    ck_assert_int_eq(r.n_sizes, 1);
    const qkv_sum_sizes *g = &r.sizes[0];
    ck_assert_str_eq(g->task, "recall");
    ck_assert_int_eq(g->n, 2);
    ck_assert(g->d_model[0] == 32 && g->d_model[1] == 64);
    const char *want[5][3] = {
        {"full", "100.0 [100.0, 100.0]", "100.0 [100.0, 100.0]"},
        {"shared", "20.0 [18.0, 22.0]", "60.0 [50.0, 70.0]"},
        {"qk_tied", "95.0 [90.0, 100.0]", EM},
        {"kv_tied", "97.0 [95.0, 99.0] (2/3 runs)", EM},
        {"gate", EM, "100.0 [100.0, 100.0] (2/3 runs)"},
    };
    const char *params[5][3] = {{"full", "1,000", "4,000"}, {"shared", "900", "3,500"}, {"qk_tied", "950", EM},
                                {"kv_tied", "950", EM}, {"gate", EM, "4,200"}};
    ck_assert_int_eq(g->values.rows, 5);
    ck_assert_str_eq(g->values.head[1], "d_model=32");
    ck_assert_str_eq(g->values.head[2], "d_model=64");
    for (int v = 0; v < 5; v++)
        for (int c = 0; c < 3; c++) {
            ck_assert_str_eq(qkv_report_cell(&g->values, v, c), want[v][c]);
            ck_assert_str_eq(qkv_report_cell(&g->params, v, c), params[v][c]);
        }
    /* the plot: ticks at the sizes, a point per present cell (7), an interval bar for each */
    ck_assert_str_eq(g->plot.path, "plots/size-recall.svg");
    const char *svg = g->plot.svg;
    ck_assert_ptr_nonnull(svg);
    ck_assert_ptr_nonnull(strstr(svg, ">32</text>"));
    ck_assert_ptr_nonnull(strstr(svg, ">64</text>"));
    ck_assert_ptr_null(strstr(svg, ">50</text>"));
    int circles = 0;
    for (const char *p = strstr(svg, "<circle"); p; p = strstr(p + 1, "<circle")) circles++;
    ck_assert_int_eq(circles, 7);
    ck_assert_ptr_nonnull(strstr(svg, "recall: final eval accuracy by model size"));
    ck_assert_ptr_null(strstr(svg, "<polygon"));
    qkv__sum_report_free(&r);
    qkv__summary_free(&s);
}
END_TEST

/* the files: summary.md holds the table and notes, the CSV a row per present cell, the HTML the
 * plot inline; the command prints the table and writes the same */
START_TEST(summary_files) {
    write_fixtures();
    char out[65536];
    int rc = sh(out, sizeof out, "%s summarize A B C --out sum", qkv_test_bin());
    ck_assert_msg(rc == 0, "%s", out);
    ck_assert_msg(strstr(out, "| shared | not within 3200; -80.0 [-82.0, -78.0]* | not within 6400; -40.0 [-50.0, "
                              "-30.0] | 1.800; +0.500 [0.500, 0.500]* |\n"), "%s", out);
    char *md = read_tmp("sum/summary.md"), *csv = read_tmp("sum/summary.csv"), *html = read_tmp("sum/summary.html");
    ck_assert(!strncmp(md, "# Summary of 3 ablations\n", 25));
    ck_assert_ptr_nonnull(strstr(md, "| kv_tied | 1/2 solved, not within 1600; +1.5 [-0.5, 3.0] (2/3 runs) | " EM
                                     " | " EM " |\n"));
    ck_assert_ptr_nonnull(strstr(md, DAGGER " Partial results: recall d_model=64 (B): 2 of 9 runs have not finished "
                                     "and 1 finished run may still be extended.\n"));
    ck_assert_ptr_nonnull(strstr(md, "\ntext d_model=32: bits per byte = the evaluation loss / ln 2 (nats per byte), "
                                     "its runs recording no eval_bpb; the differences, intervals and tests are "
                                     "computed by qkv summarize from the runs at each variant's chosen learning rate, "
                                     "paired by seed, with qkv ablate's bootstrap, sign-flip test and Holm correction "
                                     "(the ablation compared accuracy).\n"));
    ck_assert_ptr_nonnull(strstr(md, "- recall d_model=64: B, \"Recall at 64\"; task recall, d_model 64, 2 layers, "
                                     "4 heads; 3 seeds; compared on accuracy (threshold 99%); partial\n"));
    ck_assert_ptr_nonnull(strstr(md, "## recall by model size\n"));
    ck_assert_ptr_nonnull(strstr(md, "![recall: final eval accuracy by model size](plots/size-recall.svg)\n"));
    ck_assert_ptr_nonnull(strstr(md, "| kv_tied | 97.0 [95.0, 99.0] (2/3 runs) | " EM " |\n"));
    /* the CSV: its header, 4 + 3 + 3 rows, exact rows for a baseline, a significant one and text */
    const char *header = "ablation,dir,title,task,d_model,layers,heads,partial,variant,baseline,metric,source,mean,"
                         "ci_low,ci_high,delta,delta_ci_low,delta_ci_high,p_value,p_holm,significant,runs_ok,seeds,"
                         "solved,unsolved,steps_to_threshold,budget,params,attn_params,cell\n";
    ck_assert(!strncmp(csv, header, strlen(header)));
    int lines = 0;
    for (const char *p = csv; *p; p++) lines += *p == '\n';
    ck_assert_int_eq(lines, 11);
    ck_assert_ptr_nonnull(strstr(csv, "\nrecall d_model=32,A,Recall at 32,recall,32,2,4,false,full,true,accuracy,"
                                      "ablation,1,1,1,,,,,,,3,3,3,0,400,,1000,250,solved at 400; baseline\n"));
    ck_assert_ptr_nonnull(strstr(csv, "\nrecall d_model=32,A,Recall at 32,recall,32,2,4,false,shared,false,accuracy,"
                                      "ablation,0.2,0.18,0.22,-0.8,-0.82,-0.78,0.004,0.012,true,3,3,0,3,,3200,900,225,"
                                      "\"not within 3200; -80.0 [-82.0, -78.0]*\"\n"));
    ck_assert_ptr_nonnull(strstr(csv, "\nrecall d_model=64,B,Recall at 64,recall,64,2,4,true,gate,false,"));
    ck_assert_ptr_nonnull(strstr(csv, "\ntext d_model=32,C,Text,text,32,2,4,false,shared,false,bits_per_byte_from_loss,"
                                      "summarize,1.8,"));
    /* the HTML: one page, the plot inline, no network */
    ck_assert_ptr_nonnull(strstr(html, "<title>Summary of 3 ablations</title>"));
    ck_assert_ptr_nonnull(strstr(html, "<svg"));
    ck_assert_ptr_null(strstr(html, "src=\"http"));
    ck_assert_ptr_nonnull(strstr(html, "<th class=\"num\">text d_model=32: bits/byte; "));
    char path[600];
    snprintf(path, sizeof path, "%s/sum/plots/size-recall.svg", TMP);
    ck_assert_int_eq(access(path, R_OK), 0);
    /* --title; labels of two columns alike get their directories' names */
    rc = sh(out, sizeof out, "%s summarize A A/ --out sum2 --title 'Twice & again' --quiet", qkv_test_bin());
    ck_assert_msg(rc == 0 && !out[0], "%s", out);
    char *md2 = read_tmp("sum2/summary.md");
    ck_assert(!strncmp(md2, "# Twice &amp; again\n", 20));
    ck_assert_ptr_nonnull(strstr(md2, "| variant | recall d_model=32 (A) (#1): verdict; "));
    ck_assert_ptr_nonnull(strstr(md2, " | recall d_model=32 (A) (#2): verdict; "));
    free(md);
    free(md2);
    free(csv);
    free(html);
}
END_TEST

/* Ablations compared on a loss publish their differences: bits per byte on text (D, compared on
 * bpb; F, on loss in nats: divided by ln 2), nats elsewhere (E); G's runs record eval_bpb, so its
 * numbers are computed from them (its published ones are nonsense). Text at 32, 64, 128: sizes. */
START_TEST(summary_published_metrics) {
    const double L = LN2;
    aspec D = {"D", "Text bpb", "text", 32, 3, NAN, NAN, NAN, 2, {
        {"full", 3, 0, 3, NAN, 0.5, 0.4, 0.6, NAN, NAN, NAN, NAN, NAN, -1, 2000, 0, NO_RUNS, L, 0.9 * L, 1.1 * L},
        {"shared", 3, 0, 3, NAN, 0.4, 0.3, 0.5, 0.25, 0.2, 0.3, 0.01, 0.02, 1, 1800, 0, NO_RUNS,
         1.25 * L, 1.2 * L, 1.3 * L}}, "bpb"};
    aspec E = {"E", "Recall loss", "recall", 32, 3, NAN, NAN, NAN, 2, {
        {"full", 3, 3, 0, 300, 1, 1, 1, NAN, NAN, NAN, NAN, NAN, -1, 1000, 0, NO_RUNS, 0.5, 0.4, 0.6},
        {"shared", 3, 0, 3, NAN, 0.2, 0.1, 0.3, 1.0, 0.8, 1.2, 0.5, 0.5, 0, 900, 0, NO_RUNS, 1.5, 1.4, 1.6}},
        "loss"};
    aspec F = {"F", "Text loss", "text", 64, 3, NAN, NAN, NAN, 2, {
        {"full", 3, 0, 3, NAN, 0.5, 0.4, 0.6, NAN, NAN, NAN, NAN, NAN, -1, 8000, 0, NO_RUNS,
         2 * L, 1.9 * L, 2.1 * L},
        {"shared", 3, 0, 3, NAN, 0.4, 0.3, 0.5, 0.2 * L, 0.1 * L, 0.3 * L, 0.01, 0.01, 1, 7000, 0, NO_RUNS,
         2.2 * L, 2.1 * L, 2.3 * L}}, "loss"};
    aspec G = {"G", "Text eval_bpb", "text", 128, 7, NAN, NAN, NAN, 2, {
        {"full", 7, 0, 7, NAN, 0.5, 0.4, 0.6, NAN, NAN, NAN, NAN, NAN, -1, 30000, 7, NO_RUNS, 9, 9, 9},
        {"shared", 7, 0, 7, NAN, 0.4, 0.3, 0.5, 5, 5, 5, 1, 1, 0, 28000, 7, NO_RUNS, 9, 9, 9}}, "bpb"};
    for (int k = 0; k < 7; k++) {
        G.v[0].runs[k] = (rspec){k, true, true, false, 9.0, 1.0 + 0.1 * k, 4000};
        G.v[1].runs[k] = (rspec){k, true, true, false, 9.0, 0.9 + 0.1 * k, 4000};
    }
    write_results(&D);
    write_results(&E);
    write_results(&F);
    write_results(&G);
    static const char *const DEFG[] = {"D", "E", "F", "G"};
    qkv_summary s;
    load(&s, 4, DEFG);
    ck_assert(s.a[0].metric == QKV_METRIC_BPB && s.a[1].metric == QKV_METRIC_LOSS && s.a[2].metric == QKV_METRIC_BPB &&
              s.a[3].metric == QKV_METRIC_BPB);
    ck_assert(!s.a[0].recomputed && !s.a[2].recomputed && s.a[3].recomputed);
    ck_assert(s.a[0].bpb_from_loss && s.a[2].bpb_from_loss && !s.a[3].bpb_from_loss);
    qkv_sum_report r;
    ck_assert_int_eq(qkv__sum_report_build(&r, &s), 0);
    ck_assert_str_eq(r.main.head[1], "text d_model=32: bits/byte; " DELTA " vs full [95% CI]");
    ck_assert_str_eq(r.main.head[2], "recall d_model=32: eval loss (nats); " DELTA " vs full [95% CI]");
    const char *want[2][5] = {
        {"full", "1.000; baseline", "0.500; baseline", "2.000; baseline", "1.300; baseline"},
        {"shared", "1.250; +0.250 [0.200, 0.300]*", "1.500; +1.000 [0.800, 1.200]", "2.200; +0.200 [0.100, 0.300]*",
         "1.200; -0.100 [-0.100, -0.100]*"},
    };
    for (int j = 0; j < 2; j++)
        for (int c = 0; c < 5; c++)
            ck_assert_msg(!strcmp(qkv_report_cell(&r.main, j, c), want[j][c]), "row %d column %d: [%s], expected [%s]",
                          j, c, qkv_report_cell(&r.main, j, c), want[j][c]);
    /* text at three sizes, in bits; recall's one size (on loss) has no axis */
    ck_assert_int_eq(r.n_sizes, 1);
    const qkv_sum_sizes *g = &r.sizes[0];
    ck_assert(g->n == 3 && g->d_model[0] == 32 && g->d_model[1] == 64 && g->d_model[2] == 128);
    ck_assert_str_eq(qkv_report_cell(&g->values, 0, 1), "1.000 [0.900, 1.100]");
    ck_assert_str_eq(qkv_report_cell(&g->values, 1, 2), "2.200 [2.100, 2.300]");
    ck_assert(!strncmp(qkv_report_cell(&g->values, 1, 3), "1.200 [", 7));
    ck_assert_str_eq(g->plot.path, "plots/size-text.svg");
    ck_assert_ptr_nonnull(strstr(g->plot.svg, ">eval bits per byte</text>"));
    /* the notes say where each column's bits come from */
    char *md = qkv__summary_block(&r, QKV_SUM_PART_MAIN);
    ck_assert_ptr_nonnull(md);
    ck_assert_ptr_nonnull(strstr(md, "\ntext d_model=32: bits per byte = the evaluation loss / ln 2 (nats per byte); "
                                     "the differences, intervals and tests are the ablation's own (it compared "
                                     "bpb).\n"));
    ck_assert_ptr_nonnull(strstr(md, "\ntext d_model=64: bits per byte = the evaluation loss / ln 2 (nats per byte); "
                                     "the differences, intervals and tests are the ablation's own (it compared "
                                     "loss, in nats: divided by ln 2).\n"));
    ck_assert_ptr_nonnull(strstr(md, "\ntext d_model=128: the differences, intervals and tests are computed by qkv "
                                     "summarize from the runs"));
    ck_assert_ptr_nonnull(strstr(md, "(its runs record eval_bpb).\n"));
    ck_assert_ptr_nonnull(strstr(md, "Loss columns: the mean final evaluation loss in nats"));
    ck_assert_ptr_null(strstr(md, "Accuracy columns"));
    free(md);
    qkv__sum_report_free(&r);
    qkv__summary_free(&s);
}
END_TEST

/* ---- documents -------------------------------------------------------------------------------- */

static const char QUOTED[] =
    "# Some results\n\nText.\n\n| variant | acc | steps to 99% |\n|---|---:|---:|\n| full | 100.0 | 450 |\n"
    "| shared | 19.1 | never |\n\n## Attention diagnostics\n\n| variant | diagonal share | entropy |\n"
    "|---|---:|---:|\n| full | 0.11 | 1.2 |\n| a\\|b | 0.41 | 1.1 |\n";

static const char DOC[] =
    "# A document\n\nThe answer:\n\n<!-- qkv summarize: A B C -->\n<!-- end -->\n\nBy size:\n\n"
    "  <!-- qkv summarize: A B --sizes -->\n<!-- end -->\n\nQuoted:\n\n"
    "<!-- qkv table: quoted.md#attention-diagnostics cols=variant,entropy -->\n<!-- end -->\n\n"
    "How to write one:\n\n```\n<!-- qkv summarize: nowhere -->\n```\n";

START_TEST(summary_doc_check_and_update) {
    write_fixtures();
    write_tmp("quoted.md", QUOTED);
    write_tmp("doc.md", DOC);
    char out[16384];
    const char *q = qkv_test_bin();
    /* a fresh document: its first block is empty, named by its first line */
    ck_assert_int_eq(sh(out, sizeof out, "%s summarize --check-doc doc.md", q), 1);
    ck_assert_msg(strstr(out, "qkv summarize: doc.md:6:1: differs from what the marker on line 5 generates: expected "
                              "\"\", found \"<!-- end -->\"") && strchr(out, '\n') == out + strlen(out) - 1,
                  "%s", out);
    char *before = read_tmp("doc.md");
    ck_assert_str_eq(before, DOC); /* a check writes nothing */
    free(before);
    ck_assert_int_eq(sh(out, sizeof out, "%s summarize --update-doc doc.md", q), 0);
    ck_assert_str_eq(out, "doc.md: 3 generated blocks, 3 rewritten\n");
    ck_assert_int_eq(sh(out, sizeof out, "%s summarize --check-doc doc.md", q), 0);
    ck_assert_str_eq(out, "doc.md: 3 generated blocks as the results make them\n");
    char *doc = read_tmp("doc.md");
    /* the blocks are what the summary generates, between blank lines; the rest is as it was */
    ck_assert_ptr_nonnull(strstr(doc, "<!-- qkv summarize: A B C -->\n\n| variant | recall d_model=32: verdict; "));
    ck_assert_ptr_nonnull(strstr(doc, "| gate | " EM " | solved at 250; +0.4 [0.0, 1.0] (2/3 runs) | " EM " |\n"));
    ck_assert_ptr_nonnull(strstr(doc, "may still be extended.\n\n<!-- end -->\n\nBy size:\n\n  <!-- qkv summarize: A B "
                                      "--sizes -->\n\nrecall by model size: final evaluation accuracy (%)"));
    ck_assert_ptr_nonnull(strstr(doc, "| variant | d_model=32 | d_model=64 |\n|---|---:|---:|\n"));
    ck_assert_ptr_null(strstr(doc, "![")); /* no plots in a block */
    ck_assert_ptr_nonnull(strstr(doc, "cols=variant,entropy -->\n\n| variant | entropy |\n| --- | ---: |\n"
                                      "| full | 1.2 |\n| a\\|b | 1.1 |\n\n<!-- end -->\n"));
    ck_assert_ptr_nonnull(strstr(doc, "```\n<!-- qkv summarize: nowhere -->\n```\n"));
    const char *head = "# A document\n\nThe answer:\n\n<!-- qkv summarize: A B C -->\n\n| variant";
    ck_assert(!strncmp(doc, head, strlen(head)));
    /* updating again changes nothing */
    ck_assert_int_eq(sh(out, sizeof out, "%s summarize --update-doc doc.md", q), 0);
    ck_assert_str_eq(out, "doc.md: 3 generated blocks, 0 rewritten\n");
    char *again = read_tmp("doc.md");
    ck_assert_str_eq(again, doc);
    free(again);
    /* an edited cell: its line and column named, both versions shown */
    char *edit = strdup(doc), *cell = strstr(edit, "solved at 250");
    cell[10] = '9';
    write_tmp("doc.md", edit);
    int line = 1;
    for (const char *p = edit; p < cell; p++) line += *p == '\n';
    const char *bol = cell;
    while (bol[-1] != '\n') bol--;
    ck_assert_int_eq(sh(out, sizeof out, "%s summarize --check-doc doc.md", q), 1);
    char want[128];
    snprintf(want, sizeof want, "doc.md:%d:%d: differs from what the marker on line 5 generates: expected \"", line,
             (int)(cell - bol) + 11);
    ck_assert_msg(strstr(out, want), "%s (wanted %s)", out, want);
    ck_assert_msg(strstr(out, "solved at 250;") && strstr(out, "solved at 950;"), "%s", out);
    /* a changed result: the document no longer matches until it is updated */
    ck_assert_int_eq(sh(out, sizeof out, "%s summarize --update-doc doc.md --quiet", q), 0);
    ck_assert_str_eq(out, "");
    char *fixed = read_tmp("doc.md");
    ck_assert_str_eq(fixed, doc);
    free(fixed);
    write_tmp("quoted.md", "# Some results\n\n## Attention diagnostics\n\n| variant | entropy (nats) |\n|---|---|\n"
                           "| full | 1.3 |\n");
    ck_assert_int_eq(sh(out, sizeof out, "%s summarize --check-doc doc.md", q), 1);
    ck_assert_msg(strstr(out, "expected \"| variant | entropy (nats) |\", found \"| variant | entropy |\""), "%s", out);
    free(edit);
    free(doc);
}
END_TEST

/* which table of a file a marker quotes: by number, heading or column name; cols= by name prefix or
 * number; what is not there is an error naming the marker's line */
START_TEST(summary_doc_quotes_tables) {
    write_tmp("quoted.md", QUOTED);
    char out[16384];
    const char *q = qkv_test_bin();
    const struct {
        const char *which, *expect;
    } cases[] = {
        {"quoted.md",
         "| variant | acc | steps to 99% |\n|---|---:|---:|\n| full | 100.0 | 450 |\n| shared | 19.1 | never |\n"},
        {"quoted.md#2", "| variant | diagonal share | entropy |\n"},
        {"quoted.md#some-results", "| variant | acc | steps to 99% |\n"},
        {"quoted.md#diagonal", "| variant | diagonal share | entropy |\n"},
        {"quoted.md#steps cols=3,1",
         "| steps to 99% | variant |\n| ---: | --- |\n| 450 | full |\n| never | shared |\n"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char doc[512];
        snprintf(doc, sizeof doc, "x\n<!-- qkv table: %s -->\n<!-- end -->\n", cases[k].which);
        write_tmp("d.md", doc);
        ck_assert_int_eq(sh(out, sizeof out, "%s summarize --update-doc d.md --quiet", q), 0);
        char *t = read_tmp("d.md");
        ck_assert_msg(strstr(t, cases[k].expect) && strstr(t, "-->\n\n|") && strstr(t, "|\n\n<!-- end -->\n"),
                      "%s: %s", cases[k].which, t);
        free(t);
    }
    const struct {
        const char *doc, *expect;
    } bad[] = {
        {"<!-- qkv table: quoted.md#3 -->\n<!-- end -->\n",
         "d.md:1: quoted.md#3: no such table (of 2: give a number, a heading's anchor or a column's name)"},
        {"a\n<!-- qkv table: quoted.md cols=variant,p -->\n<!-- end -->\n",
         "d.md:2: quoted.md: cols: no column \"p\" (the table has 3)"},
        {"<!-- qkv table: nope.md -->\n<!-- end -->\n", "d.md:1: nope.md: cannot read: No such file or directory"},
        /* an option given twice would drop the first silently */
        {"<!-- qkv summarize: A --published p.md --published q.md -->\n<!-- end -->\n",
         "d.md:1: qkv summarize: --published given twice (expected each option once)"},
        {"<!-- qkv table: quoted.md cols=variant cols=p -->\n<!-- end -->\n",
         "d.md:1: qkv table: cols= given twice ('cols=variant', then 'cols=p'; expected each option once)"},
        {"<!-- qkv summarize: A -->\n", "d.md:1: no <!-- end --> after this marker (before the end of the file)"},
        {"<!-- qkv summarize: A -->\n<!-- qkv table: quoted.md -->\n<!-- end -->\n",
         "d.md:1: no <!-- end --> after this marker (before the next marker)"},
        {"<!-- qkv frobnicate: x -->\n<!-- end -->\n", "d.md:1: unknown marker 'frobnicate:'"},
        {"<!-- qkv summarize: A\n-->\n<!-- end -->\n", "d.md:1: a marker is one line that ends with -->"},
        {"<!-- qkv summarize: --sizes -->\n<!-- end -->\n", "d.md:1: qkv summarize: needs the ablations' directories"},
        {"<!-- qkv summarize: nodir -->\n<!-- end -->\n", "d.md:1: nodir: no such directory"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        write_tmp("d.md", bad[k].doc);
        ck_assert_int_eq(sh(out, sizeof out, "%s summarize --update-doc d.md", q), 1);
        ck_assert_msg(strstr(out, bad[k].expect) && strchr(out, '\n') == out + strlen(out) - 1, "%zu: %s", k, out);
        char *t = read_tmp("d.md");
        ck_assert_str_eq(t, bad[k].doc); /* nothing written */
        free(t);
    }
}
END_TEST

/* --published FILE: FILE's table of published results (first column a variant), our cells of each
 * variant appended (a dash where no ablation has it); a row with other cells than the header, a
 * file without a table and --published without its FILE are errors naming the marker */
START_TEST(summary_doc_published) {
    write_fixtures();
    write_tmp("pub.md", "# Quoted\n\n| variant | published | source |\n|---|---|---|\n| gate | perplexity -4.4% | Q. et al. |\n"
                        "| elsewhere | +1% | X |\n");
    write_tmp("doc.md", "<!-- qkv summarize: A B C --published pub.md -->\n<!-- end -->\n");
    char out[16384];
    const char *q = qkv_test_bin();
    ck_assert_int_eq(sh(out, sizeof out, "%s summarize --update-doc doc.md --quiet", q), 0);
    char *doc = read_tmp("doc.md");
    ck_assert_msg(strstr(doc, "-->\n\n| variant | published | source | ours, recall d_model=32: verdict; "), "%s", doc);
    ck_assert_msg(strstr(doc, "|---|---|---|---:|---:|---:|\n"), "%s", doc);
    ck_assert_msg(strstr(doc, "| gate | perplexity -4.4% | Q. et al. | " EM " | solved at 250; +0.4 [0.0, 1.0] (2/3 runs) | "
                              EM " |\n"), "%s", doc);
    ck_assert_msg(strstr(doc, "| elsewhere | +1% | X | " EM " | " EM " | " EM " |\n\n<!-- end -->\n"), "%s", doc);
    ck_assert_int_eq(sh(out, sizeof out, "%s summarize --check-doc doc.md", q), 0);
    free(doc);
    const struct {
        const char *pub, *marker, *expect;
    } bad[] = {
        {"| variant | x |\n|---|---|\n| gate |\n", "A --published pub.md", "d.md:1: pub.md:3: 1 cells, the header has 2"},
        {"no table here\n", "A --published pub.md", "d.md:1: pub.md: no table (expected a pipe table"},
        {"| variant |\n|---|\n", "A --published", "d.md:1: --published needs a FILE"},
        {"| variant |\n|---|\n", "A --publish pub.md", "d.md:1: unknown option '--publish'"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        char d[256];
        snprintf(d, sizeof d, "<!-- qkv summarize: %s -->\n<!-- end -->\n", bad[k].marker);
        write_tmp("pub.md", bad[k].pub);
        write_tmp("d.md", d);
        ck_assert_int_eq(sh(out, sizeof out, "%s summarize --check-doc d.md", q), 1);
        ck_assert_msg(strstr(out, bad[k].expect) && strchr(out, '\n') == out + strlen(out) - 1, "%zu: %s", k, out);
    }
}
END_TEST

/* ---- gaps against training steps ------------------------------------------------------------ */

/* G/results.json, compared on the loss, 3 seeds (evaluation loss at steps 100, 200, 300; "-" a step
 * the run lacks):
 *   full  3.0 2.0 1.5 | 3.2 2.2 1.7 | 3.1  -  1.6
 *   a     3.5 2.9 1.9 | 3.6 2.5 2.0 | 3.3 2.5 1.8
 *   b     3.1 2.1  -  | 3.4 2.3 2.2 | failed (its curve 9 9 9 is not counted)
 *   c     3.0 2.1 1.7 | 3.2 2.2 1.6 | 3.1 2.2 1.6
 * By hand, variant - full over the seeds where both evaluated the step: a +0.367 (0.5, 0.4, 0.2),
 * +0.600 (0.9, 0.3: full's seed 2 lacks 200), +0.300 (0.4, 0.3, 0.2); b +0.150 (0.1, 0.2), +0.100
 * (0.1, 0.1), +0.500 (seed 1 alone); c 0, +0.050 (0.1, 0), +0.033 (0.2, -0.1, 0); full's own mean
 * 3.100, 2.100 (2 runs), 1.600. From the middle step (200) to the last: full -0.5 and a -0.3 (an
 * interval of three numbers within 0.2 of each other is at most 0.2 wide: closing), b +0.4 (one
 * pair: a zero-width interval: widening), c -0.017 (its interval spans 0.2 and -0.1: flat). */
#define G_RUN(seed, ok, steps, losses) \
    "{\"seed\": " #seed ", \"ok\": " #ok ", \"curve\": {\"step\": " steps ", \"eval_loss\": " losses "}}"
#define G_ALL "[100, 200, 300]"
static const char G_RESULTS[] =
    "{\"title\": \"g\", \"baseline\": \"full\", \"metric\": \"loss\", \"task\": \"%s\", \"seeds\": [0, 1, 2], "
    "\"variants\": [\n"
    "{\"name\": \"full\", \"runs\": [" G_RUN(0, true, G_ALL, "[3.0, 2.0, 1.5]") ", "
    G_RUN(1, true, G_ALL, "[3.2, 2.2, 1.7]") ", " G_RUN(2, true, "[100, 300]", "[3.1, 1.6]") "]},\n"
    "{\"name\": \"a\", \"runs\": [" G_RUN(0, true, G_ALL, "[3.5, 2.9, 1.9]") ", "
    G_RUN(1, true, G_ALL, "[3.6, 2.5, 2.0]") ", " G_RUN(2, true, G_ALL, "[3.3, 2.5, 1.8]") "]},\n"
    "{\"name\": \"b\", \"runs\": [" G_RUN(0, true, "[100, 200]", "[3.1, 2.1]") ", "
    G_RUN(1, true, G_ALL, "[3.4, 2.3, 2.2]") ", " G_RUN(2, false, G_ALL, "[9, 9, 9]") "]},\n"
    "{\"name\": \"c\", \"runs\": [" G_RUN(0, true, G_ALL, "[3.0, 2.1, 1.7]") ", "
    G_RUN(1, true, G_ALL, "[3.2, 2.2, 1.6]") ", " G_RUN(2, true, G_ALL, "[3.1, 2.2, 1.6]") "]}]}\n";

/* G/results.json of task `task` read into r and c */
static void read_g(qkv_ablate_results *r, qkv_ablate_config *c, const char *task) {
    char text[4096], dir[600];
    snprintf(text, sizeof text, G_RESULTS, task);
    snprintf(dir, sizeof dir, "%s/G", TMP);
    ck_assert_int_eq(qkv__mkdirs(dir, NULL), 0);
    write_tmp("G/results.json", text);
    qkv_err e;
    ck_assert_msg(qkv__ablate_results_read(r, c, dir, &e) == 0, "%s", e.msg);
}

START_TEST(summary_gaps_by_hand) {
    qkv_ablate_results r;
    qkv_ablate_config c;
    read_g(&r, &c, "toy");
    qkv_ablate_gaps g;
    qkv_err e;
    ck_assert_msg(qkv__ablate_gaps(&g, &r, NULL, 0, &e) == 0, "%s", e.msg);
    ck_assert(!g.bits);
    ck_assert_int_eq(g.n_steps, 3);
    ck_assert(g.steps[0] == 100 && g.steps[1] == 200 && g.steps[2] == 300);
    ck_assert_int_eq(g.mid, 1);
    const struct {
        double mean;
        int pairs;
    } want[4][3] = {{{3.1, 3}, {2.1, 2}, {1.6, 3}},
                    {{1.1 / 3, 3}, {0.6, 2}, {0.3, 3}},
                    {{0.15, 2}, {0.1, 2}, {0.5, 1}},
                    {{0, 3}, {0.05, 2}, {0.1 / 3, 3}}};
    for (int v = 0; v < 4; v++)
        for (int j = 0; j < 3; j++) {
            const qkv_gap *a = &g.at[v * 3 + j];
            ck_assert_msg(fabs(a->mean - want[v][j].mean) < 1e-12 && a->pairs == want[v][j].pairs,
                          "%s at %lld: %g over %d", r.v[v].name, g.steps[j], a->mean, a->pairs);
            ck_assert_msg(a->lo <= a->mean + 1e-12 && a->mean <= a->hi + 1e-12, "%s at %lld", r.v[v].name, g.steps[j]);
        }
    /* the interval is the report's paired bootstrap with its seed; the baseline's, its mean's */
    const double av[] = {1.9, 2.0, 1.8}, fv[] = {1.5, 1.7, 1.6};
    double lo, hi;
    qkv_stats_bootstrap_ci_paired(av, fv, 3, QKV_ABLATE_RESAMPLES, QKV_ABLATE_LEVEL, QKV_ABLATE_SEED_PAIRED(1), &lo, &hi);
    ck_assert(lo == g.at[1 * 3 + 2].lo && hi == g.at[1 * 3 + 2].hi);
    qkv_stats_bootstrap_ci(fv, 3, QKV_ABLATE_RESAMPLES, QKV_ABLATE_LEVEL, QKV_ABLATE_SEED_MEANS(0) + 1, &lo, &hi);
    ck_assert(lo == g.at[2].lo && hi == g.at[2].hi);
    const qkv_gap *one = &g.at[2 * 3 + 2]; /* b at 300: one pair, a zero-width interval */
    ck_assert(one->lo == one->mean && one->hi == one->mean);
    const double change[] = {-0.5, -0.3, 0.4, 0.1 / 3 - 0.05};
    const qkv_gap_trend trend[] = {QKV_GAP_CLOSING, QKV_GAP_CLOSING, QKV_GAP_WIDENING, QKV_GAP_FLAT};
    for (int v = 0; v < 4; v++) {
        ck_assert_msg(fabs(g.change[v] - change[v]) < 1e-12, "%s: %g", r.v[v].name, g.change[v]);
        ck_assert_msg(g.trend[v] == trend[v], "%s: %d", r.v[v].name, (int)g.trend[v]);
    }
    qkv__ablate_gaps_free(&g);
    /* steps asked for: the middle of two is the first */
    const long long two[] = {100, 300};
    ck_assert_int_eq(qkv__ablate_gaps(&g, &r, two, 2, &e), 0);
    ck_assert(g.mid == 0 && fabs(g.change[2] - 0.35) < 1e-12 && g.trend[2] == QKV_GAP_WIDENING);
    qkv__ablate_gaps_free(&g);
    const long long none[] = {250};
    ck_assert_int_eq(qkv__ablate_gaps(&g, &r, none, 1, &e), -1);
    ck_assert_str_eq(e.msg, "step 250: the baseline 'full' has no evaluation there (expected one of 100, 200, 300)");
    qkv__ablate_results_free(&r);
    qkv_ablate_config_free(&c);
    /* text: bits per byte, the loss / ln 2 */
    read_g(&r, &c, "text");
    ck_assert_int_eq(qkv__ablate_gaps(&g, &r, NULL, 0, &e), 0);
    ck_assert(g.bits && fabs(g.at[1 * 3 + 1].mean - 0.6 / LN2) < 1e-12 && fabs(g.at[0].mean - 3.1 / LN2) < 1e-12);
    qkv__ablate_gaps_free(&g);
    qkv__ablate_results_free(&r);
    qkv_ablate_config_free(&c);
}
END_TEST

/* the gap table in a document: a row per variant (the baseline's own mean first), the seeds counted
 * where fewer than all, the trend in words; variants= and steps= choose */
START_TEST(summary_doc_gap_table) {
    qkv_ablate_results r;
    qkv_ablate_config c;
    read_g(&r, &c, "toy");
    qkv__ablate_results_free(&r);
    qkv_ablate_config_free(&c);
    write_tmp("d.md", "# Gaps\n\n<!-- qkv gap: G -->\n<!-- end -->\n\n<!-- qkv gap: G steps=100,300 variants=b -->\n"
                      "<!-- end -->\n\nb: <!-- qkv value: G b gap@300 -->?<!-- end --> nats, full "
                      "<!-- qkv value: G full gap@200 -->?<!-- end -->\n");
    char out[16384];
    const char *q = qkv_test_bin();
    ck_assert_int_eq(sh(out, sizeof out, "%s summarize --update-doc d.md", q), 0);
    ck_assert_str_eq(out, "d.md: 4 generated blocks, 4 rewritten\n");
    char *t = read_tmp("d.md");
    const char *rows[] = {
        "<!-- qkv gap: G -->\n\n| variant | step 100 | step 200 | step 300 | at 300: 95% CI; since 200 |\n"
        "|---|---:|---:|---:|---|\n| full | 3.100 | 2.100 (2) | 1.600 | [",
        "]; improving (-0.500) |\n| a | +0.367 | +0.600 (2) | +0.300 | [",
        "]; closing (-0.300) |\n| b | +0.150 (2) | +0.100 (2) | +0.500 (1) | [0.500, 0.500]; widening (+0.400) |\n"
        "| c | +0.000 | +0.050 (2) | +0.033 | [",
        "]; flat (-0.017) |\n\nEach cell: the mean difference from full in evaluation loss (nats) at that step, paired "
        "by seed over the seeds where both runs evaluated it (3; fewer: their count in parentheses)",
        "<!-- qkv gap: G steps=100,300 variants=b -->\n\n| variant | step 100 | step 300 | at 300: 95% CI; since 100 |\n"
        "|---|---:|---:|---|\n| full | 3.100 | 1.600 | [",
        "]; improving (-1.500) |\n| b | +0.150 (2) | +0.500 (1) | [0.500, 0.500]; widening (+0.350) |\n\n",
        "b: <!-- qkv value: G b gap@300 -->+0.500<!-- end --> nats, full <!-- qkv value: G full gap@200 -->2.100"
        "<!-- end -->\n"};
    const char *at = t;
    for (size_t k = 0; k < sizeof rows / sizeof rows[0]; k++) {
        const char *hit = strstr(at, rows[k]);
        ck_assert_msg(hit, "%zu: %s\nin\n%s", k, rows[k], at);
        at = hit + strlen(rows[k]);
    }
    ck_assert_int_eq(sh(out, sizeof out, "%s summarize --check-doc d.md", q), 0);
    free(t);
}
END_TEST

/* every word a gap table can write for a trend is defined in docs/ablate.md (in italics, as it
 * defines them) */
START_TEST(summary_doc_gap_words_defined) {
    qkv_err err;
    size_t len;
    char *doc = qkv__read_file("../docs/ablate.md", &len, &err);
    ck_assert_msg(doc != NULL, "%s", err.msg);
    int words = 0;
    for (int t = QKV_GAP_UNKNOWN; t <= QKV_GAP_WIDENING; t++)
        for (int baseline = 0; baseline < 2; baseline++) {
            const char *w = qkv__doc_gap_trend_word((qkv_gap_trend)t, baseline);
            char want[64];
            if (!strcmp(w, QKV_REPORT_DASH)) continue;
            snprintf(want, sizeof want, "*%s*", w);
            ck_assert_msg(strstr(doc, want), "docs/ablate.md does not define the gap table's word %s", want);
            words++;
        }
    ck_assert_int_eq(words, 6); /* flat twice, closing, improving, widening, worsening */
    free(doc);
}
END_TEST

Suite *summary_suite(void) {
    Suite *s = suite_create("summary");
    TCase *tc = tcase_create("summary");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, summary_main_table_cells);
    tcase_add_test(tc, summary_sizes);
    tcase_add_test(tc, summary_published_metrics);
    tcase_add_test(tc, summary_files);
    tcase_add_test(tc, summary_doc_gap_words_defined);
    tcase_add_test(tc, summary_doc_check_and_update);
    tcase_add_test(tc, summary_doc_quotes_tables);
    tcase_add_test(tc, summary_doc_published);
    tcase_add_test(tc, summary_gaps_by_hand);
    tcase_add_test(tc, summary_doc_gap_table);
    suite_add_tcase(s, tc);
    return s;
}
