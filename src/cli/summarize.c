/* qkv summarize: several ablations' results side by side (summary.md, .csv, .html), the
 * generated tables of a document checked against the committed results or rewritten, and one
 * ablation's plots redrawn from its results.json. */
#include "ablate/results.h"
#include "ablate/results_schema.h"
#include "report/report.h"
#include "report/summary.h"
#include "cli/cli.h"
#include "cli/options.h"
#include "io/strbuf.h"

#include <stdlib.h>

typedef struct {
    const char *out, *title, *check_doc, *update_doc, *plots;
    bool quiet;
} summarize_args;

static const qkv_cli_option OPTIONS[] = {
    QKV_STRING("--out", "OUTDIR", summarize_args, out,
               "where summary.md, summary.csv, summary.html and plots/ go (needed with DIRs);\n"
               "with --plots, where the redrawn plots/ goes"),
    QKV_STRING("--title", "TEXT", summarize_args, title, "the summary's title (default: \"Summary of N ablations\")"),
    QKV_STRING("--check-doc", "FILE", summarize_args, check_doc,
               "regenerate the tables FILE embeds between markers and compare; exit 1 naming\n"
               "the first line that differs"),
    QKV_STRING("--update-doc", "FILE", summarize_args, update_doc,
               "rewrite the tables FILE embeds between markers in place"),
    QKV_STRING("--plots", "DIR", summarize_args, plots,
               "redraw the plots of the ablation in DIR from its results.json alone (accuracy,\n"
               "loss and learning rate; not the attention maps or the symmetry plot, which need\n"
               "the runs) into OUTDIR/plots/ (default: DIR/plots/), each file replaced whole"),
    QKV_FLAG("--quiet", summarize_args, quiet, "print nothing but errors"),
    QKV_HELP,
    QKV_OPTIONS_END,
};

static const qkv_cli_command COMMAND = {
    "summarize", "DIR... --out OUTDIR [OPTION]...\n--check-doc FILE\n--update-doc FILE\n--plots DIR [--out OUTDIR]",
    "Put the results of several ablations side by side. Each DIR is the output directory of\n"
    "`qkv ablate` (its results.json is read). The table has a row per variant (in the order they\n"
    "first appear) and a column per DIR: for accuracy tasks the verdict and the difference from\n"
    "the baseline with its 95% interval, for text the bits per byte and their difference; * marks\n"
    "a difference significant after Holm's correction, a dash a variant the ablation lacks, a\n"
    "dagger a partial ablation. Ablations of one task at several model.d_model get a size table\n"
    "and plot. Documents embed the tables between markers\n"
    "(<!-- qkv summarize: DIR... --> ... <!-- end -->, or <!-- qkv table: FILE#WHICH -->):\n"
    "--check-doc compares them with the results, --update-doc rewrites them. --plots redraws an\n"
    "ablation's plots as this qkv draws them, from the numbers its results.json holds (the runs\n"
    "need not be there). See docs/ablate.md.",
    "DIR...", OPTIONS,
};

/* --plots: dir's plots redrawn from its results.json into out (NULL: dir); 0, or -1 with e */
static int redraw_plots(const char *dir, const char *out, bool quiet, qkv_err *e) {
    qkv_ablate_results r;
    qkv_ablate_config c;
    if (qkv__ablate_results_read(&r, &c, dir, e)) return -1;
    char names[256];
    int n = -1;
    /* the curves and the rates' accuracies are the runs' (the runs results.json lists): an older
     * results.json without them has nothing to draw */
    if (!r.all_runs)
        qkv_err_set(e, QKV_ERR_FAIL, "%s/results.json: %s[].%s: not every run of every variant is listed "
                    "(an older qkv's results): its plots need the runs (qkv ablate CONFIG --out %s --report)",
                    qkv__shown(dir).s, QKV_RK(VARIANTS), QKV_RK(RUNS), qkv__shown(dir).s);
    else n = qkv__report_write_plots(&r, out ? out : dir, names, sizeof names, e);
    qkv__ablate_results_free(&r);
    qkv_ablate_config_free(&c);
    if (n >= 0 && !quiet) fprintf(stderr, "qkv summarize: redrew %s in %s\n", n ? names : "no plot", out ? out : dir);
    return n < 0 ? -1 : 0;
}

/* the parsed command run on dirs; 0, or -1 with e (QKV_ERR_FAIL when a document's block differs) */
static int summarize_run(const summarize_args *a, const qkv_cli_list *dirs, qkv_err *e) {
    if (a->check_doc && a->update_doc)
        return qkv_err_set(e, QKV_ERR_USAGE, "--check-doc and --update-doc are separate actions: give one");
    if (a->plots && (dirs->n || a->title || a->check_doc || a->update_doc))
        return qkv_err_set(e, QKV_ERR_USAGE, "--plots DIR redraws one ablation's plots: not with other DIRs, --title, "
                           "--check-doc or --update-doc");
    if (a->plots) return redraw_plots(a->plots, a->out, a->quiet, e);
    if (!dirs->n && !a->check_doc && !a->update_doc)
        return qkv_err_set(e, QKV_ERR_USAGE, "missing DIR (the output directories of qkv ablate), --check-doc FILE "
                           "or --plots DIR (try 'qkv summarize --help')");
    if (dirs->n && !a->out)
        return qkv_err_set(e, QKV_ERR_USAGE, "--out OUTDIR: where to write the summary (summary.md, .csv, .html)");
    if (!dirs->n && (a->out || a->title)) return qkv_err_set(e, QKV_ERR_USAGE, "--out and --title go with DIRs");
    if (dirs->n) {
        qkv_summary s;
        if (qkv__summary_load(&s, dirs->v, dirs->n, e)) return -1;
        int w = qkv__summary_write(&s, a->out, a->title, a->quiet ? NULL : stdout, e);
        qkv__summary_free(&s);
        if (w) return -1;
        if (!a->quiet) fprintf(stderr, "qkv summarize: %s/summary.md, summary.csv and summary.html\n", a->out);
    }
    const char *doc = a->check_doc ? a->check_doc : a->update_doc;
    if (doc) {
        int blocks, changed, claims;
        if (qkv__summary_doc(doc, a->update_doc != NULL, &blocks, &changed, &claims, e)) return -1;
        char held[64] = "";
        if (claims) snprintf(held, sizeof held, "; %d claim%s hold%s", claims, claims == 1 ? "" : "s", claims == 1 ? "s" : "");
        if (!a->quiet && a->update_doc)
            printf("%s: %d generated block%s, %d rewritten%s\n", doc, blocks, blocks == 1 ? "" : "s", changed, held);
        else if (!a->quiet && !blocks && !claims)
            printf("%s: no generated blocks\n", doc);
        else if (!a->quiet)
            printf("%s: %d generated block%s as the results make %s%s\n", doc, blocks, blocks == 1 ? "" : "s",
                   blocks == 1 ? "it" : "them", held);
    }
    return 0;
}

int qkv__cmd_summarize(int argc, char **argv) {
    summarize_args a = {0};
    qkv_cli_list dirs;
    qkv_err e;
    if (!qkv__cli_parse_operands(&COMMAND, argc, argv, &a, &dirs, &e) && !summarize_run(&a, &dirs, &e))
        qkv_err_clear(&e);
    free(dirs.v);
    return qkv__cli_exit("summarize", &e);
}
