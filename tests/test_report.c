/* Tests for src/ablate/report*.c, svg.c and strbuf.c: the ablation report's files from a
 * synthetic result set (3 variants x 2 seeds, a failed run, a variant without a heatmap, a
 * NaN, a name that needs escaping), the exact CSV, the JSON structure, a self-contained
 * HTML page, well-formed SVGs, and the plot builders' edge cases. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L   /* mkdtemp */
#endif

#include <check.h>
#include <cjson/cJSON.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ablate/results.h"
#include "ablate/strbuf.h"
#include "ablate/svg.h"
#include "io/fileio.h"
#include "testutil.h"

Suite *report_suite(void);

static char err[4096];

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
    char *s = qkv_read_file(path, NULL, err, sizeof err);
    ck_assert_msg(s != NULL, "cannot read %s: %s", name, err);
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

/* ---------------------------------------------------------------- the synthetic results */

#define NV 3
#define NS 2
#define WEIRD "a&b<c"

typedef struct fixture {
    qkv_ablate_config cfg;
    qkv_ablate_variant variants[NV];
    long long seeds[NS];
    char *common[1];
    char *vsets[NV][2];
    qkv_variant_result v[NV];
    qkv_run_result runs[NV * NS];
    long long steps[NV * NS][4];
    double acc[NV * NS][4], loss[NV * NS][4];
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

static fixture *fixture_new(void) {
    fixture *f = calloc(1, sizeof *f);
    ck_assert_ptr_nonnull(f);
    qkv_ablate_config *c = &f->cfg;
    snprintf(c->path, sizeof c->path, "configs/ablate-qkv.json");
    snprintf(c->base_path, sizeof c->base_path, "configs/recall.json");
    f->common[0] = "train.steps=150";
    c->sets = f->common;
    c->n_sets = 1;
    const char *names[NV] = {"full", "shared", WEIRD};
    f->vsets[0][0] = "model.attention.qkv=full";
    f->vsets[1][0] = "model.attention.qkv=shared";
    f->vsets[2][0] = "model.attention.qkv=identity";
    f->vsets[2][1] = "task.note=\"x,y\"";
    for (int i = 0; i < NV; i++) {
        snprintf(f->variants[i].name, QKV_ABLATE_NAME, "%s", names[i]);
        f->variants[i].sets = f->vsets[i];
        f->variants[i].n_sets = i == 2 ? 2 : 1;
    }
    c->variants = f->variants;
    c->n_variants = NV;
    f->seeds[0] = 0;
    f->seeds[1] = 1;
    c->seeds = f->seeds;
    c->n_seeds = NS;
    c->threshold = 0.9;
    c->example = 0;
    snprintf(c->title, sizeof c->title, "Q/K/V ablation & <test>");

    /* runs: evaluations at steps 0, 50, 100, 150 */
    for (int i = 0; i < NV; i++)
        for (int s = 0; s < NS; s++) {
            int k = i * NS + s;
            qkv_run_result *run = &f->runs[k];
            run->variant = i;
            run->seed_index = s;
            run->seed = f->seeds[s];
            run->ok = true;
            run->n = 4;
            for (int j = 0; j < 4; j++) {
                f->steps[k][j] = 50 * j;
                f->acc[k][j] = 0.1 + 0.25 * j * (1.0 - 0.2 * i) + 0.02 * s;
                f->loss[k][j] = 3.0 * pow(0.3 + 0.1 * i, j) + 0.01 * s;
            }
            run->step = f->steps[k];
            run->eval_acc = f->acc[k];
            run->eval_loss = f->loss[k];
            run->final_acc = f->acc[k][3];
            run->final_loss = f->loss[k][3];
            run->train_loss = run->final_loss;
            run->seconds = 2.0 + i + 0.5 * s;
            run->steps_to_threshold = run->final_acc >= 0.9 ? 150 : -1;
        }
    /* shared, seed 1: failed after two evaluations */
    f->runs[1 * NS + 1].ok = false;
    f->runs[1 * NS + 1].n = 2;
    f->runs[1 * NS + 1].final_acc = NAN;
    f->runs[1 * NS + 1].final_loss = NAN;
    /* the weird one, seed 0: a NaN loss; seed 1: a shorter run (2 evaluations) */
    f->loss[2 * NS + 0][1] = NAN;
    f->runs[2 * NS + 1].n = 2;

    const double acc_mean[NV] = {0.95, 0.6123, 0.5}, acc_std[NV] = {0.01, 0, 0.25};
    const double acc_min[NV] = {0.94, 0.6123, 0.25};
    for (int i = 0; i < NV; i++) {
        qkv_variant_result *v = &f->v[i];
        snprintf(v->name, QKV_ABLATE_NAME, "%s", names[i]);
        snprintf(v->sets, sizeof v->sets, "%s%s%s", f->vsets[i][0], i == 2 ? " " : "", i == 2 ? f->vsets[2][1] : "");
        v->attn_params = i == 0 ? 3 * 2 * 64 * 64 : i == 1 ? 2 * 64 * 64 : 0;
        v->params = 100000 + v->attn_params;
        v->runs_ok = i == 1 ? 1 : 2;
        v->acc_mean = acc_mean[i];
        v->acc_std = acc_std[i];
        v->acc_min = acc_min[i];
        v->loss_mean = 0.123 + i;
        v->loss_std = 0.001 * (i + 1);
        v->steps_median = i == 0 ? 100 : i == 1 ? 150 : -1;
        v->reached = i == 2 ? 1 : v->runs_ok;
        v->seconds = 2.25 + i;
        v->diag.diag_share = 0.1 * (i + 1);
        v->diag.first_share = 0.05 * (i + 1);
        v->diag.entropy = i == 2 ? NAN : 1.0 + 0.1 * i;
        v->diag.entropy_uniform = 1.7;
    }
    fill_heat(f);
    for (int i = 0; i < NV; i += 2) {  /* no heatmap for "shared" */
        f->v[i].heat = (qkv_heatmap){2, 2, 5, &f->w[0][0][0][0], f->tokens, f->targets};
    }
    f->r.cfg = &f->cfg;
    f->r.v = f->v;
    f->r.runs = f->runs;
    f->r.base_config_json = "{\n  \"task\": {\"name\": \"recall\"},\n  \"note\": \"<b>&</b>\"\n}";
    f->r.version = "0.1.0";
    f->r.wall_seconds = 12.5;
    f->r.jobs = 2;
    return f;
}

/* ---------------------------------------------------------------- the report */

static const char *const FILES[] = {"results.md", "results.csv", "results.json", "report.md", "report.html",
                                    "plots/accuracy.svg", "plots/loss.svg", "plots/attention-full.svg",
                                    "plots/attention-a_b_c-2.svg"};

START_TEST(report_writes_every_file) {
    fixture *f = fixture_new();
    char *dir = make_tmpdir();
    FILE *table = tmpfile();
    ck_assert_ptr_nonnull(table);
    err[0] = 0;
    int rc = qkv_ablate_write_report(&f->r, dir, table, err, sizeof err);
    ck_assert_msg(rc == 0, "report failed: %s", err);
    for (size_t i = 0; i < sizeof FILES / sizeof FILES[0]; i++)
        ck_assert_msg(exists(dir, FILES[i]), "%s is missing", FILES[i]);
    ck_assert_msg(!exists(dir, "plots/attention-shared.svg"), "a heatmap for a variant without one");
    /* no temporary files left behind */
    DIR *d = opendir(dir);
    struct dirent *e;
    while ((e = readdir(d))) ck_assert_msg(!strstr(e->d_name, ".tmp."), "left over: %s", e->d_name);
    closedir(d);

    /* the table printed to the stream is results.md */
    char *md = read_in(dir, "results.md");
    rewind(table);
    char printed[16384];
    size_t n = fread(printed, 1, sizeof printed - 1, table);
    printed[n] = 0;
    fclose(table);
    ck_assert_str_eq(printed, md);
    ck_assert_ptr_nonnull(strstr(md, "| full | 24,576 | 124,576 | 95.0 \xc2\xb1 1.0 (94.0) |"));
    ck_assert_ptr_nonnull(strstr(md, "61.2 \xc2\xb1 0.0 (61.2), 1/2 failed"));
    ck_assert_ptr_nonnull(strstr(md, "| 1/2 never |"));
    ck_assert_ptr_nonnull(strstr(md, "| 100 |"));
    ck_assert_ptr_nonnull(strstr(md, "## Attention diagnostics"));
    ck_assert_ptr_nonnull(strstr(md, "| a&amp;b&lt;c |"));
    ck_assert_ptr_null(strstr(md, WEIRD));
    free(md);

    char *rmd = read_in(dir, "report.md");
    ck_assert_ptr_nonnull(strstr(rmd, "# Q/K/V ablation &amp; &lt;test&gt;"));
    ck_assert_ptr_nonnull(strstr(rmd, "](plots/accuracy.svg)"));
    ck_assert_ptr_nonnull(strstr(rmd, "](plots/loss.svg)"));
    ck_assert_ptr_nonnull(strstr(rmd, "](plots/attention-full.svg)"));
    ck_assert_ptr_nonnull(strstr(rmd, "](plots/attention-a_b_c-2.svg)"));
    ck_assert_ptr_nonnull(strstr(rmd, "No attention map was recorded"));
    ck_assert_ptr_nonnull(strstr(rmd, "```json\n{\n  \"task\""));
    ck_assert_ptr_nonnull(strstr(rmd, "`configs/recall.json`"));
    ck_assert_ptr_nonnull(strstr(rmd, "`--set train.steps=150`"));
    ck_assert_ptr_nonnull(strstr(rmd, "0.1.0"));
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "build/qkv ablate configs/ablate-qkv.json --out %s\n", dir);
    ck_assert_msg(strstr(rmd, cmd) != NULL, "no reproduce command in report.md");
    free(rmd);

    qkv_test_rmtree(dir);
    free(dir);
    free(f);
}
END_TEST

START_TEST(report_csv_is_exact) {
    fixture *f = fixture_new();
    char *dir = make_tmpdir();
    ck_assert_int_eq(qkv_ablate_write_report(&f->r, dir, NULL, err, sizeof err), 0);
    char *csv = read_in(dir, "results.csv");
    const char *header = "variant,attn_params,params,acc_mean,acc_std,acc_min,loss_mean,loss_std,"
                         "steps_to_threshold,seconds,diag_share,first_share,entropy,sets\n";
    ck_assert_int_eq(strncmp(csv, header, strlen(header)), 0);
    ck_assert_int_eq(count(csv, "\n"), 1 + NV);
    char fields[16][256];
    ck_assert_int_eq(csv_split(line_at(csv, 1), fields, 16), 14);
    ck_assert_str_eq(fields[0], "full");
    ck_assert_str_eq(fields[1], "24576");
    ck_assert_str_eq(fields[2], "124576");
    ck_assert_str_eq(fields[3], "0.95");
    ck_assert_str_eq(fields[4], "0.01");
    ck_assert_str_eq(fields[5], "0.94");
    ck_assert_str_eq(fields[6], "0.123");
    ck_assert_str_eq(fields[8], "100");
    ck_assert_str_eq(fields[9], "2.25");
    ck_assert_str_eq(fields[13], "model.attention.qkv=full");
    ck_assert_int_eq(csv_split(line_at(csv, 2), fields, 16), 14);
    ck_assert_str_eq(fields[0], "shared");
    ck_assert_str_eq(fields[3], "0.6123");
    ck_assert_str_eq(fields[4], "0");
    ck_assert_str_eq(fields[8], "150");
    ck_assert_int_eq(csv_split(line_at(csv, 3), fields, 16), 14);
    ck_assert_str_eq(fields[0], WEIRD);
    ck_assert_str_eq(fields[1], "0");
    ck_assert_str_eq(fields[8], "never");       /* one seed of two never reached it */
    ck_assert_str_eq(fields[12], "");           /* the NaN entropy */
    ck_assert_str_eq(fields[13], "model.attention.qkv=identity task.note=\"x,y\"");
    ck_assert_ptr_nonnull(strstr(csv, "\"model.attention.qkv=identity task.note=\"\"x,y\"\"\""));
    free(csv);
    qkv_test_rmtree(dir);
    free(dir);
    free(f);
}
END_TEST

START_TEST(report_json_has_variants_and_runs) {
    fixture *f = fixture_new();
    char *dir = make_tmpdir();
    ck_assert_int_eq(qkv_ablate_write_report(&f->r, dir, NULL, err, sizeof err), 0);
    char *text = read_in(dir, "results.json");
    cJSON *root = cJSON_Parse(text);
    ck_assert_msg(root != NULL, "results.json does not parse");
    ck_assert_str_eq(cJSON_GetObjectItem(root, "title")->valuestring, "Q/K/V ablation & <test>");
    ck_assert(fabs(cJSON_GetObjectItem(root, "threshold")->valuedouble - 0.9) < 1e-12);
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(root, "seeds")), NS);
    ck_assert_str_eq(cJSON_GetObjectItem(root, "version")->valuestring, "0.1.0");
    const cJSON *vars = cJSON_GetObjectItem(root, "variants");
    ck_assert_int_eq(cJSON_GetArraySize(vars), NV);
    const cJSON *v0 = cJSON_GetArrayItem(vars, 0), *v1 = cJSON_GetArrayItem(vars, 1), *v2 = cJSON_GetArrayItem(vars, 2);
    ck_assert_str_eq(cJSON_GetObjectItem(v0, "name")->valuestring, "full");
    ck_assert(fabs(cJSON_GetObjectItem(v0, "acc_mean")->valuedouble - 0.95) < 1e-12);
    ck_assert_int_eq((int)cJSON_GetObjectItem(v0, "steps_to_threshold")->valuedouble, 100);
    ck_assert_int_eq((int)cJSON_GetObjectItem(v0, "attn_params")->valuedouble, 24576);
    ck_assert_str_eq(cJSON_GetObjectItem(v2, "name")->valuestring, WEIRD);
    ck_assert(cJSON_IsNull(cJSON_GetObjectItem(v2, "steps_to_threshold")));
    ck_assert_int_eq((int)cJSON_GetObjectItem(v2, "reached")->valuedouble, 1);
    ck_assert(cJSON_IsNull(cJSON_GetObjectItem(v2, "entropy")));
    /* runs: the failed one is listed as failed; curves with the NaN as null */
    const cJSON *runs1 = cJSON_GetObjectItem(v1, "runs");
    ck_assert_int_eq(cJSON_GetArraySize(runs1), NS);
    ck_assert(cJSON_IsFalse(cJSON_GetObjectItem(cJSON_GetArrayItem(runs1, 1), "ok")));
    ck_assert(cJSON_IsNull(cJSON_GetObjectItem(cJSON_GetArrayItem(runs1, 1), "final_acc")));
    const cJSON *r20 = cJSON_GetArrayItem(cJSON_GetObjectItem(v2, "runs"), 0);
    const cJSON *curve = cJSON_GetObjectItem(r20, "curve");
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(curve, "step")), 4);
    ck_assert_int_eq((int)cJSON_GetArrayItem(cJSON_GetObjectItem(curve, "step"), 3)->valuedouble, 150);
    ck_assert(cJSON_IsNull(cJSON_GetArrayItem(cJSON_GetObjectItem(curve, "eval_loss"), 1)));
    ck_assert(cJSON_IsNull(cJSON_GetObjectItem(r20, "steps_to_threshold")) ||
              cJSON_IsNumber(cJSON_GetObjectItem(r20, "steps_to_threshold")));
    const cJSON *r21 = cJSON_GetArrayItem(cJSON_GetObjectItem(v2, "runs"), 1);
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetObjectItem(r21, "curve"), "eval_acc")), 2);
    ck_assert_ptr_null(strstr(text, "nan"));
    cJSON_Delete(root);
    free(text);
    qkv_test_rmtree(dir);
    free(dir);
    free(f);
}
END_TEST

START_TEST(report_html_is_self_contained) {
    fixture *f = fixture_new();
    char *dir = make_tmpdir();
    ck_assert_int_eq(qkv_ablate_write_report(&f->r, dir, NULL, err, sizeof err), 0);
    char *html = read_in(dir, "report.html");
    ck_assert_int_eq(strncmp(html, "<!DOCTYPE html>", 15), 0);
    ck_assert_int_eq(count(html, "<svg"), 4);       /* accuracy, loss, two heatmaps */
    ck_assert_int_eq(count(html, "</svg>"), 4);
    ck_assert_ptr_nonnull(strstr(html, "<style>"));
    ck_assert_ptr_nonnull(strstr(html, "<table>"));
    ck_assert_ptr_null(strstr(html, "src=\"http"));
    ck_assert_ptr_null(strstr(html, "href="));
    ck_assert_ptr_null(strstr(html, "<script"));
    ck_assert_ptr_null(strstr(html, "<link"));
    ck_assert_ptr_null(strstr(html, "<img"));
    ck_assert_ptr_null(strstr(html, "url("));
    ck_assert_ptr_null(strstr(html, "@import"));
    /* text is escaped: the variant name, the title and the config */
    ck_assert_ptr_null(strstr(html, WEIRD));
    ck_assert_ptr_nonnull(strstr(html, "<h3>a&amp;b&lt;c</h3>"));
    ck_assert_ptr_nonnull(strstr(html, "<h1>Q/K/V ablation &amp; &lt;test&gt;</h1>"));
    ck_assert_ptr_nonnull(strstr(html, "&lt;b&gt;&amp;&lt;/b&gt;"));
    ck_assert_ptr_null(strstr(html, "<b>"));
    ck_assert_ptr_nonnull(strstr(html, "failed"));
    ck_assert_ptr_nonnull(strstr(html, "No attention map was recorded"));
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
    fixture *f = fixture_new();
    char *dir = make_tmpdir();
    ck_assert_int_eq(qkv_ablate_write_report(&f->r, dir, NULL, err, sizeof err), 0);
    for (size_t i = 5; i < sizeof FILES / sizeof FILES[0]; i++) {
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
    free(acc);
    char *heat = read_in(dir, "plots/attention-a_b_c-2.svg");
    ck_assert_ptr_nonnull(strstr(heat, "a&amp;b&lt;c"));
    ck_assert_ptr_nonnull(strstr(heat, ">layer 1, head 1<"));
    ck_assert_ptr_nonnull(strstr(heat, ">31<"));                   /* a token as a tick label */
    free(heat);
    qkv_test_rmtree(dir);
    free(dir);
    free(f);
}
END_TEST

START_TEST(report_one_variant_one_seed_all_failed) {
    fixture *f = fixture_new();
    f->cfg.n_variants = 1;
    f->cfg.n_seeds = 1;
    /* runs are variant-major with n_seeds = 1 now: runs[0] is variant 0, seed 0 */
    f->runs[0].ok = false;
    f->v[0].runs_ok = 0;
    f->v[0].acc_mean = NAN;
    f->v[0].heat.w = NULL;
    f->cfg.title[0] = 0;
    f->r.base_config_json = NULL;
    f->r.version = NULL;
    char *dir = make_tmpdir();
    ck_assert_msg(qkv_ablate_write_report(&f->r, dir, NULL, err, sizeof err) == 0, "%s", err);
    char *csv = read_in(dir, "results.csv");
    char fields[16][256];
    ck_assert_int_eq(count(csv, "\n"), 2);
    ck_assert_int_eq(csv_split(line_at(csv, 1), fields, 16), 14);
    ck_assert_str_eq(fields[3], "");
    ck_assert_str_eq(fields[8], "never");
    free(csv);
    char *md = read_in(dir, "results.md");
    ck_assert_ptr_nonnull(strstr(md, "# Ablation: ablate-qkv"));
    ck_assert_ptr_nonnull(strstr(md, "| failed |"));
    free(md);
    char *acc = read_in(dir, "plots/accuracy.svg");
    assert_svg(acc, "accuracy.svg");
    ck_assert_ptr_nonnull(strstr(acc, ">no data<"));
    ck_assert_ptr_nonnull(strstr(acc, ">full (failed)<"));
    free(acc);
    char *loss = read_in(dir, "plots/loss.svg");
    assert_svg(loss, "loss.svg");
    free(loss);
    char *json = read_in(dir, "results.json");
    cJSON *root = cJSON_Parse(json);
    ck_assert_ptr_nonnull(root);
    ck_assert(cJSON_IsNull(cJSON_GetObjectItem(root, "version")));
    ck_assert(cJSON_IsNull(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(root, "variants"), 0), "acc_mean")));
    cJSON_Delete(root);
    free(json);
    ck_assert(!exists(dir, "plots/attention-full.svg"));
    qkv_test_rmtree(dir);
    free(dir);
    free(f);
}
END_TEST

/* 12 variants with long names, 1 seed each, single-point curves and large heatmaps */
START_TEST(report_twelve_variants_long_names) {
    enum { V = 12, T = 40 };
    qkv_ablate_config cfg;
    memset(&cfg, 0, sizeof cfg);
    snprintf(cfg.path, sizeof cfg.path, "abl.json");
    long long seed = 7;
    cfg.seeds = &seed;
    cfg.n_seeds = 1;
    cfg.n_variants = V;
    cfg.threshold = 0.99;
    static qkv_variant_result v[V];
    static qkv_run_result runs[V];
    static long long step[V];
    static double acc[V], loss[V];
    static float w[1 * 2 * T * T];
    static int32_t tok[T];
    memset(v, 0, sizeof v);
    memset(runs, 0, sizeof runs);
    for (int t = 0; t < T; t++) tok[t] = 1000 + t;
    for (int q = 0; q < T; q++)
        for (int k = 0; k <= q; k++) w[q * T + k] = w[T * T + q * T + k] = 1.0f / (float)(q + 1);
    for (int i = 0; i < V; i++) {
        snprintf(v[i].name, QKV_ABLATE_NAME, "variant-%02d-with-a-rather-long-name-for-the-legend_xx", i);
        v[i].runs_ok = 1;
        v[i].acc_mean = v[i].acc_min = 0.5 + 0.04 * i;
        v[i].loss_mean = 1.0 / (i + 1);
        v[i].steps_median = -1;
        v[i].seconds = 1;
        v[i].diag.entropy = 2.0;
        v[i].heat = (qkv_heatmap){1, 2, T, w, tok, NULL};
        step[i] = 500;
        acc[i] = v[i].acc_mean;
        loss[i] = i == 3 ? INFINITY : v[i].loss_mean;
        runs[i] = (qkv_run_result){.variant = i, .seed = seed, .ok = true, .n = 1, .step = &step[i],
                                   .eval_acc = &acc[i], .eval_loss = &loss[i], .final_acc = acc[i],
                                   .final_loss = loss[i], .steps_to_threshold = -1};
    }
    qkv_ablate_results r = {.cfg = &cfg, .v = v, .runs = runs, .version = "0.1.0", .jobs = 4};
    char *dir = make_tmpdir();
    ck_assert_msg(qkv_ablate_write_report(&r, dir, NULL, err, sizeof err) == 0, "%s", err);
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
    ck_assert_int_eq(count(md, "| never |"), V);
    free(md);
    qkv_test_rmtree(dir);
    free(dir);
}
END_TEST

/* ablate.c's median counts "never" as infinitely late: a median can exist while some seeds
 * never reached the threshold; both are shown */
START_TEST(report_median_with_some_never) {
    fixture *f = fixture_new();
    f->v[0].reached = 1;
    f->v[0].steps_median = 150;
    char *dir = make_tmpdir();
    ck_assert_int_eq(qkv_ablate_write_report(&f->r, dir, NULL, err, sizeof err), 0);
    char *md = read_in(dir, "results.md");
    ck_assert_ptr_nonnull(strstr(md, "| 150 (1/2 never) |"));
    free(md);
    char *csv = read_in(dir, "results.csv");
    char fields[16][256];
    ck_assert_int_eq(csv_split(line_at(csv, 1), fields, 16), 14);
    ck_assert_str_eq(fields[8], "150");
    free(csv);
    char *json = read_in(dir, "results.json");
    cJSON *root = cJSON_Parse(json);
    const cJSON *v0 = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "variants"), 0);
    ck_assert_int_eq((int)cJSON_GetObjectItem(v0, "steps_to_threshold")->valuedouble, 150);
    ck_assert_int_eq((int)cJSON_GetObjectItem(v0, "reached")->valuedouble, 1);
    cJSON_Delete(root);
    free(json);
    qkv_test_rmtree(dir);
    free(dir);
    free(f);
}
END_TEST

START_TEST(report_unwritable_dir_fails_cleanly) {
    fixture *f = fixture_new();
    char *dir = make_tmpdir();
    char file[4200], below[4300];
    snprintf(file, sizeof file, "%s/plain-file", dir);
    ck_assert_int_eq(qkv_write_file_atomic(file, "x", 1, err, sizeof err), 0);
    snprintf(below, sizeof below, "%s/out", file);
    err[0] = 0;
    ck_assert_int_eq(qkv_ablate_write_report(&f->r, below, NULL, err, sizeof err), -1);
    ck_assert_msg(err[0] != 0, "no error message");
    ck_assert_int_eq(qkv_ablate_write_report(NULL, dir, NULL, err, sizeof err), -1);
    qkv_test_rmtree(dir);
    free(dir);
    free(f);
}
END_TEST

/* ---------------------------------------------------------------- the SVG builder */

START_TEST(svg_nice_ticks) {
    ck_assert(fabs(qkv_svg_nice_step(1, 5) - 0.2) < 1e-12);
    ck_assert(fabs(qkv_svg_nice_step(730, 6) - 200) < 1e-9);
    ck_assert(fabs(qkv_svg_nice_step(0.037, 4) - 0.01) < 1e-12);
    ck_assert(fabs(qkv_svg_nice_step(45, 5) - 10) < 1e-9);
    double t[64];
    ck_assert_int_eq(qkv_svg_ticks(0, 1, 0.2, t, 64), 6);
    ck_assert(t[0] == 0 && fabs(t[5] - 1) < 1e-12);
    ck_assert_int_eq(qkv_svg_ticks(-0.3, 0.5, 0.2, t, 64), 4);     /* -0.2 .. 0.4 */
    ck_assert_int_eq(qkv_svg_log_ticks(0.001, 100, t, 64), 6);      /* 5 decades: 10^-3 .. 10^2 */
    ck_assert(fabs(t[0] - 0.001) < 1e-15 && fabs(t[5] - 100) < 1e-12);
    ck_assert_int_eq(qkv_svg_log_ticks(0.01, 10, t, 64), 10);       /* 3 decades: 1, 2, 5 */
    ck_assert_int_eq(qkv_svg_log_ticks(0.2, 30, t, 64), 7);         /* 0.2 0.5 1 2 5 10 20 */
    ck_assert_int_eq(qkv_svg_log_ticks(0.2, 3, t, 64), 4);          /* 0.2 0.5 1 2 */
    ck_assert_int_eq(qkv_svg_log_ticks(0.3, 0.9, t, 64), 7);        /* short: every digit */
    ck_assert_int_eq(qkv_svg_log_ticks(1e-4, 10, t, 64), 6);        /* long: decades */
    char s[32];
    qkv_svg_format_tick(s, sizeof s, 1000);
    ck_assert_str_eq(s, "1000");
    qkv_svg_format_tick(s, sizeof s, 0.05);
    ck_assert_str_eq(s, "0.05");
    qkv_svg_format_tick(s, sizeof s, -1e-17);
    ck_assert_str_eq(s, "0");
    ck_assert_str_eq(qkv_svg_color(0), qkv_svg_color(10));         /* the palette cycles */
    ck_assert_str_ne(qkv_svg_dash(0), qkv_svg_dash(10));           /* ... with a dash */
}
END_TEST

START_TEST(strbuf_and_escape) {
    qkv_strbuf b;
    qkv_strbuf_init(&b);
    qkv_strbuf_escape_xml(&b, "a&b<c>\"d'e\x01");
    qkv_strbuf_printf(&b, "|%d|", 42);
    for (int i = 0; i < 1000; i++) qkv_strbuf_printf(&b, "%0300d", i);   /* growth past the small buffer */
    char *s = qkv_strbuf_take(&b);
    ck_assert_ptr_nonnull(s);
    ck_assert_int_eq(strncmp(s, "a&amp;b&lt;c&gt;&quot;d&#39;e?|42|", 34), 0);
    ck_assert_uint_eq(strlen(s), 34 + 300 * 1000);
    free(s);
    qkv_strbuf_init(&b);
    s = qkv_strbuf_take(&b);   /* empty, not NULL */
    ck_assert_ptr_nonnull(s);
    ck_assert_str_eq(s, "");
    free(s);
}
END_TEST

START_TEST(svg_curves_edge_cases) {
    double x[5] = {0, 10, 20, 30, 40}, y[5] = {0.5, NAN, 0.25, INFINITY, 0.125};
    double lo[5] = {0.4, 0.1, -1, 0.2, 0.1}, hi[5] = {0.6, 0.2, 0.3, NAN, 0.2};
    qkv_svg_series s[3] = {{"NaN & Inf", 5, x, y, lo, hi}, {"single <point>", 1, x + 2, y + 2, NULL, NULL},
                           {"empty", 0, NULL, NULL, NULL, NULL}};
    qkv_svg_plot lin = {.title = "t", .xlabel = "x", .ylabel = "y"};
    char *a = qkv_svg_curves(&lin, s, 3);
    assert_svg(a, "linear");
    ck_assert_ptr_nonnull(strstr(a, ">single &lt;point&gt;<"));
    free(a);
    qkv_svg_plot lg = {.title = "t", .log_y = true};   /* -1 skipped on a log axis */
    a = qkv_svg_curves(&lg, s, 3);
    assert_svg(a, "log");
    free(a);
    a = qkv_svg_curves(&lg, NULL, 0);
    assert_svg(a, "no series");
    ck_assert_ptr_nonnull(strstr(a, ">no data<"));
    free(a);
    /* a constant series: the axis still has a span */
    double c[3] = {2, 2, 2};
    qkv_svg_series one = {"const", 3, x, c, c, c};
    a = qkv_svg_curves(&lg, &one, 1);
    assert_svg(a, "constant log");
    free(a);
    a = qkv_svg_curves(&lin, &one, 1);
    assert_svg(a, "constant linear");
    free(a);
}
END_TEST

START_TEST(svg_heatmap_shapes) {
    float w[3 * 1 * 4 * 4];
    for (int i = 0; i < 48; i++) w[i] = (float)(i % 5) / 4.0f;
    w[7] = NAN;
    char *s = qkv_svg_heatmap("map <1>", NULL, 3, 1, 4, w, NULL);
    assert_svg(s, "heatmap");
    ck_assert_ptr_nonnull(strstr(s, "map &lt;1&gt;"));
    ck_assert_ptr_nonnull(strstr(s, ">layer 2, head 0<"));
    ck_assert_ptr_nonnull(strstr(s, "#bbbbbb"));                    /* the NaN cell */
    ck_assert_ptr_nonnull(strstr(s, ">1.00<"));                     /* the colour bar */
    free(s);
    float one = 1;
    const char *lab[1] = {"&"};
    s = qkv_svg_heatmap("t", "sub", 1, 1, 1, &one, lab);
    assert_svg(s, "1x1 heatmap");
    free(s);
    ck_assert_ptr_null(qkv_svg_heatmap("t", NULL, 0, 1, 4, w, NULL));
    ck_assert_ptr_null(qkv_svg_heatmap("t", NULL, 1, 1, 4, NULL, NULL));
}
END_TEST

Suite *report_suite(void) {
    Suite *s = suite_create("report");
    TCase *tc = tcase_create("report");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, report_writes_every_file);
    tcase_add_test(tc, report_csv_is_exact);
    tcase_add_test(tc, report_json_has_variants_and_runs);
    tcase_add_test(tc, report_html_is_self_contained);
    tcase_add_test(tc, report_svgs_are_well_formed);
    tcase_add_test(tc, report_one_variant_one_seed_all_failed);
    tcase_add_test(tc, report_twelve_variants_long_names);
    tcase_add_test(tc, report_median_with_some_never);
    tcase_add_test(tc, report_unwritable_dir_fails_cleanly);
    tcase_add_test(tc, svg_nice_ticks);
    tcase_add_test(tc, strbuf_and_escape);
    tcase_add_test(tc, svg_curves_edge_cases);
    tcase_add_test(tc, svg_heatmap_shapes);
    suite_add_tcase(s, tc);
    return s;
}
