/* qkv inspect: what a trained run's heads do, from its directory: the shape of every layer's and
 * head's score matrix (symmetric or directional) and where its queries look; or, with --figure,
 * the attention several runs recorded of one example drawn side by side. */
#include "ablate/results.h"
#include "cli/cli.h"
#include "cli/options.h"
#include "io/fileio.h"
#include "io/strbuf.h"
#include "report/attention_figure.h"
#include "train/observe.h"
#include "train/run_dir.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *dir, *figure, *lang;
    qkv_cli_list labels;
} inspect_args;

static const qkv_cli_option OPTIONS[] = {
    QKV_STRING("--figure", "FILE", inspect_args, figure,
               "draw the attention each RUN_DIR recorded of its evaluation example\n"
               "(observed.safetensors) side by side into FILE, an SVG: a panel per RUN_DIR, its\n"
               "last layer's heads averaged; the runs must have recorded the same example"),
    QKV_LIST("--label", "NAME", inspect_args, labels,
             "with --figure: a panel's caption, one per RUN_DIR in order (default: the RUN_DIR)"),
    QKV_STRING("--lang", "LANG", inspect_args, lang,
               "with --figure: the words of the figure, en (English, the default) or zh (Chinese)"),
    QKV_HELP,
    QKV_OPTIONS_END,
};

static const qkv_cli_command COMMAND = {
    "inspect", "RUN_DIR [OPTION]...\nRUN_DIR... --figure FILE [--label NAME]...",
    "Print, for the trained model in RUN_DIR (its config.json and model.safetensors), every\n"
    "layer's and head's score matrix M = W_q W_k^T described (docs/ablate.md, \"Attention\n"
    "diagnostics\"): its symmetry score (1 symmetric, -1 antisymmetric, 0 neither), the negative\n"
    "share of its symmetric part's eigenvalue mass (0 for a tied Q = K), and the mean weight its\n"
    "queries put on their own position and on the one just before it (a previous-token head's\n"
    "mark) over the run's first 256 evaluation examples. Beside each, where the run recorded it\n"
    "(a fresh run does, observed-start.safetensors), its value at step 0, before the first update,\n"
    "and the change. Nothing is written. With --figure, the weights the runs recorded of one\n"
    "evaluation example are drawn instead (no model is built), the positions' roles (key, value,\n"
    "query) banded beside the axes, each panel noting the mean weight the query rows put on their\n"
    "own position, the one before it and their answer (outlined: the value stored right after\n"
    "the query's key).",
    "RUN_DIR...", OPTIONS,
};

/* x in format fmt (one %f conversion with a width), or "-" in that width when it is not a number */
static void show(double x, const char *fmt) {
    if (isfinite(x)) {
        double r = round(x * 1000) / 1000; /* every format has 3 decimals */
        printf(fmt, r == 0 ? 0.0 : r); /* no -0.000 */
        return;
    }
    char b[32];
    int w = snprintf(b, sizeof b, fmt, 0.0);
    printf("%*s", w, "-");
}

/* the heads of o (as "layer.head") whose value v[i] passes keep, after "; name: ", or nothing */
static void heads_where(const qkv_observed *o, const double *v, bool (*keep)(double), const char *name, int *shown) {
    int n = 0;
    for (int i = 0; i < o->layers * o->heads; i++)
        if (isfinite(v[i]) && keep(v[i])) printf("%s%d.%d", n++ ? " " : *shown ? "; " : "", i / o->heads, i % o->heads);
    if (n) printf(" %s", name), (*shown)++;
}
static bool symmetric(double s) { return s >= 0.5; }
static bool directional(double s) { return s < 0.5; }
static bool most(double share) { return share >= 0.5; }

/* one line under the table: which heads are what, in words, with the rule that says so */
static void in_words(const qkv_observed *o) {
    int shown = 0;
    printf("in words (layer.head): ");
    heads_where(o, o->symmetry, symmetric, "symmetric (symmetry >= 0.5: score(i, j) close to score(j, i))", &shown);
    heads_where(o, o->symmetry, directional, "directional (symmetry < 0.5)", &shown);
    heads_where(o, o->prev_share, most, "previous-token (previous >= 0.5)", &shown);
    heads_where(o, o->diag_share, most, "self-preferring (diagonal >= 0.5)", &shown);
    printf("%s\n", shown ? "" : "no head measured");
}

/* dir's config.json into *cfg, checked against its model.safetensors (config.json edited since
 * the run?); 0, or -1 with e */
static int run_config(const char *dir, qkv_config *cfg, qkv_err *e) {
    char *path = qkv__pathf("%s/" QKV_RUN_CONFIG, dir), *model = qkv__pathf("%s/" QKV_RUN_MODEL, dir);
    int rc = -1;
    if (!path || !model) qkv_err_set(e, QKV_ERR_FAIL, "out of memory");
    else if (!qkv__cli_load_run_config(path, NULL, 0, dir, true, cfg, e) &&
             !qkv_config_check_model_file(model, cfg, path, e))
        rc = 0;
    free(path);
    free(model);
    return rc;
}

/* --figure: the runs' recorded attention side by side into a->figure (atomically); 0, or -1 with e */
static int inspect_figure(const inspect_args *a, const qkv_cli_list *dirs, qkv_err *e) {
    int lang = QKV_FIGURE_EN;
    if (a->lang && !strcmp(a->lang, "zh")) lang = QKV_FIGURE_ZH;
    else if (a->lang && strcmp(a->lang, "en"))
        return qkv_err_set(e, QKV_ERR_USAGE, "--lang: '%s' is not a language of the figure (en or zh)",
                           qkv__shown(a->lang).s);
    if (a->labels.n && a->labels.n != dirs->n)
        return qkv_err_set(e, QKV_ERR_USAGE, "--label: %d given for %d RUN_DIRs (one per RUN_DIR, in order)",
                           a->labels.n, dirs->n);
    qkv_heatmap *maps = calloc((size_t)dirs->n, sizeof *maps);
    if (!maps) return qkv_err_set(e, QKV_ERR_FAIL, "out of memory");
    int rc = 0, example = 0, ex;
    for (int i = 0; i < dirs->n && !rc; i++) {
        rc = qkv__run_heatmap(dirs->v[i], &maps[i], &ex, e);
        if (!i) example = ex;
    }
    char *svg = NULL;
    if (!rc) rc = qkv__attention_figure(maps, a->labels.n ? a->labels.v : dirs->v, dirs->n, example, lang, &svg, e);
    if (!rc && qkv__write_file_atomic(a->figure, svg, strlen(svg), e)) rc = -1;
    for (int i = 0; i < dirs->n; i++) qkv__heatmap_free(&maps[i]);
    free(maps);
    free(svg);
    return rc;
}

/* the parsed command run: the table on stdout (or the figure); 0, or -1 with e */
static int inspect_run(const inspect_args *a, const qkv_cli_list *dirs, qkv_err *e) {
    if (!dirs->n) return qkv_err_set(e, QKV_ERR_USAGE, "missing RUN_DIR (try 'qkv inspect --help')");
    if (a->labels.n && !a->figure) return qkv_err_set(e, QKV_ERR_USAGE, "--label goes with --figure");
    if (a->lang && !a->figure) return qkv_err_set(e, QKV_ERR_USAGE, "--lang goes with --figure");
    if (a->figure) return inspect_figure(a, dirs, e);
    if (dirs->n > 1)
        return qkv_err_set(e, QKV_ERR_USAGE, "unexpected argument '%s' (one RUN_DIR only)", dirs->v[1]);
    qkv_config cfg;
    if (run_config(a->dir, &cfg, e)) return -1;
    qkv__cli_set_threads(1); /* as the run that recorded them: one BLAS thread, the same bits */
    qkv_observed o;
    if (qkv__run_observation(&cfg, a->dir, 0, 0, &o, e)) return -1;
    /* the start as the run recorded it (observe.h): a fresh run of this qkv wrote one */
    qkv_observed st;
    qkv_err se;
    int got = qkv__run_observed_start(a->dir, &st, &se);
    if (!got && (st.layers != o.layers || st.heads != o.heads || !st.symmetry || !st.prev_share))
        got = qkv_err_set(&se, QKV_ERR_FAIL, "%s/%s holds %d layers x %d heads%s", a->dir, QKV_RUN_OBSERVED_START,
                          st.layers, st.heads, st.symmetry && st.prev_share ? "" : " without the score diagnostics");
    bool start = got == 0;
    printf("%s: qkv %s%s%s, %d layers x %d heads\n", a->dir, QKV_ATTN_QKV_NAMES[cfg.model.attn.qkv],
           cfg.model.attn.diff ? ", diff (its first map)" : "", cfg.model.attn.talking_heads ? ", talking_heads" : "",
           o.layers, o.heads);
    static const char *const NAMES[4] = {"symmetry", "negative", "diagonal", "previous"};
    if (start) {
        printf("           ");
        for (int k = 0; k < 4; k++) printf("%*s%s", k ? 25 - (int)strlen(NAMES[k - 1]) : 4, "", NAMES[k]);
        printf("\nlayer  head");
        for (int k = 0; k < 4; k++) printf("    start     end  change");
        printf("\n");
    } else {
        printf("layer  head  symmetry  negative  diagonal  previous\n");
    }
    double sum[8] = {0};
    int cnt[8] = {0};
    for (int l = 0; l <= o.layers; l++)
        for (int h = 0; h < (l < o.layers ? o.heads : 1); h++) {
            size_t i = (size_t)l * o.heads + h;
            bool mean = l == o.layers; /* the last line: the means */
            double v[8];
            if (!mean) {
                const double *end[4] = {o.symmetry, o.negative_mass, o.diag_share, o.prev_share};
                const double *beg[4] = {st.symmetry, st.negative_mass, st.diag_share, st.prev_share};
                for (int k = 0; k < 4; k++) {
                    v[k] = end[k][i];
                    v[4 + k] = start ? beg[k][i] : NAN;
                }
                for (int k = 0; k < 8; k++)
                    if (isfinite(v[k])) sum[k] += v[k], cnt[k]++;
                printf("%5d  %4d", l, h);
            } else {
                for (int k = 0; k < 8; k++) v[k] = cnt[k] ? sum[k] / cnt[k] : NAN;
                printf("mean       ");
            }
            for (int k = 0; k < 4; k++)
                if (start) {
                    show(v[4 + k], "  %7.3f");
                    show(v[k], " %7.3f");
                    show(v[k] - v[4 + k], " %+7.3f");
                } else {
                    show(v[k], "  %8.3f");
                }
            printf("\n");
        }
    printf("symmetry: (|M_s|^2 - |M_a|^2) / |M|^2 of M = W_q W_k^T; negative: the negative share of M_s's "
           "eigenvalue mass; diagonal: the mean weight a query puts on its own position; previous: on the position "
           "just before it (a previous-token head's mark)\n");
    in_words(&o);
    if (start)
        printf("start: the model at step 0, before its first update, as the run recorded it (%s); end: the trained "
               "model; change: end - start\n", QKV_RUN_OBSERVED_START);
    else if (got > 0)
        printf("start not recorded (a run of an older qkv): the trained model's values only\n");
    else
        printf("start not recorded (%s): the trained model's values only\n", se.msg);
    if (!got) qkv__observed_free(&st);
    qkv__observed_free(&o);
    return 0;
}

int qkv__cmd_inspect(int argc, char **argv) {
    inspect_args a = {0};
    qkv_cli_list dirs;
    qkv_err e;
    if (!qkv__cli_parse_operands(&COMMAND, argc, argv, &a, &dirs, &e)) {
        a.dir = dirs.n ? dirs.v[0] : NULL;
        if (!inspect_run(&a, &dirs, &e)) qkv_err_clear(&e);
    }
    free(dirs.v);
    free(a.labels.v);
    return qkv__cli_exit("inspect", &e);
}
