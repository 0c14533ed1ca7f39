/* What the report says and in which order: the sections of results.md and of report.md /
 * report.html, the summary paragraph's wording and the explanatory notes. Formats are the
 * renderers' business (report_md.c, report_html.c). */
#include "ablate/report_doc.h"

static const char RESULTS_NOTE[] =
    "Accuracy and loss: the final evaluation of each finished run, over seeds; steps: the median over seeds of "
    "the first evaluated step that reached the threshold, a seed that never did counting as never "
    "(\"k/n never\": k of n seeds never did); "
    "s/run: mean wall time of a run. Failed runs are left out of every statistic.";
static const char DIAG_INTRO[] =
    "Averaged over layers, heads, seeds and the query rows of the evaluation examples that attend somewhere.";
static const char *const DIAG_NOTES[] = {
    "diagonal share: the mean attention weight a query puts on its own position",
    "first-position share: the mean weight on the first position (an attention sink)",
    "entropy: the mean entropy of a query's attention weights in nats (low = focused)",
    "uniform causal entropy: the same for uniform attention over the visible positions, for scale",
};
static const char CURVES_NOTE[] =
    "Lines: the mean over the finished runs at each evaluated step; bands: the minimum and maximum over seeds.";
static const char HEAT_NOTE_FMT[] =
    "The attention weights of evaluation example #%d in each variant's first-seed run: one map per layer (rows) "
    "and head (columns); each row of a map is a query position and each column the key it attends to "
    "(white 0, dark 1; masked future positions are 0).";

/* what was run, on what, from which config, and how long it took, in one paragraph */
static void summary(qkv_report_doc *doc, const qkv_report *p) {
    const qkv_ablate_config *cfg = p->cfg;
    const qkv_ablate_results *r = p->r;
#define TEXT(...) qkv_report_doc_span(doc, QKV_SPAN_TEXT, __VA_ARGS__)
#define CODE(s) qkv_report_doc_span(doc, QKV_SPAN_CODE, "%s", (s))
    qkv_report_doc_paragraph(doc);
    TEXT("qkv %s trained %d variant%s \xc3\x97 %d seed%s (", r->version ? r->version : "(unknown version)", p->nv,
         p->nv == 1 ? "" : "s", cfg->n_seeds, cfg->n_seeds == 1 ? "" : "s");
    for (int s = 0; s < cfg->n_seeds; s++) TEXT("%s%lld", s ? ", " : "", cfg->seeds[s]);
    TEXT(")");
    if (p->task[0]) {
        TEXT(" on the ");
        CODE(p->task);
        TEXT(" task");
    }
    TEXT(", starting from ");
    if (cfg->base_path[0]) {
        TEXT("the base config ");
        CODE(cfg->base_path);
    } else if (cfg->base_json) {
        TEXT("the base config inline in ");
        CODE(cfg->path);
    } else {
        TEXT("the default config");
    }
    if (cfg->n_sets > 0) {
        TEXT(" with the common overrides ");
        for (int i = 0; i < cfg->n_sets; i++) {
            if (i) TEXT(" ");
            qkv_report_doc_span(doc, QKV_SPAN_CODE_NOWRAP, "--set %s", cfg->sets[i] ? cfg->sets[i] : "");
        }
    } else {
        TEXT(" with no common overrides");
    }
    TEXT(". A run counts as solved at the first evaluation with accuracy \xe2\x89\xa5 %s", p->thr);
    TEXT(". The whole ablation took %s of wall time with %d parallel job%s.", p->duration, r->jobs,
         r->jobs == 1 ? "" : "s");
    if (p->failed_runs > 0)
        TEXT(" %d run%s failed and %s left out of the statistics.", p->failed_runs, p->failed_runs == 1 ? "" : "s",
             p->failed_runs == 1 ? "is" : "are");
#undef TEXT
#undef CODE
}

/* the results table and how to read it */
static void results(qkv_report_doc *doc, const qkv_report *p) {
    qkv_report_doc_table(doc, &p->results);
    qkv_report_doc_note(doc, "%s", RESULTS_NOTE);
}

/* where the heads look, with what each number means */
static void diagnostics(qkv_report_doc *doc, const qkv_report *p) {
    qkv_report_doc_heading(doc, 2, "Attention diagnostics");
    qkv_report_doc_note(doc, "%s", DIAG_INTRO);
    qkv_report_doc_table(doc, &p->diag);
    qkv_report_doc_list(doc, DIAG_NOTES, (int)(sizeof DIAG_NOTES / sizeof DIAG_NOTES[0]));
}

/* results.md: the title and the tables, for a quick look (and the terminal) */
int qkv_report_layout_results(qkv_report_doc *doc, const qkv_report *p) {
    qkv_report_doc_heading(doc, 1, p->title);
    results(doc, p);
    diagnostics(doc, p);
    return doc->oom ? -1 : 0;
}

/* report.md and report.html: everything, from what was run to how to run it again */
int qkv_report_layout_page(qkv_report_doc *doc, const qkv_report *p) {
    qkv_report_doc_heading(doc, 1, p->title);
    summary(doc, p);
    qkv_report_doc_heading(doc, 2, "Variants");
    qkv_report_doc_table(doc, &p->variants);
    qkv_report_doc_heading(doc, 2, "Results");
    results(doc, p);
    qkv_report_doc_heading(doc, 2, "Training curves");
    for (int i = 0; i < p->n_plots; i++) qkv_report_doc_figure(doc, &p->plots[i]);
    qkv_report_doc_note(doc, "%s", CURVES_NOTE);
    diagnostics(doc, p);
    qkv_report_doc_heading(doc, 2, "Attention maps");
    qkv_report_doc_note(doc, HEAT_NOTE_FMT, p->cfg->example);
    for (int i = 0; i < p->nv; i++) {
        qkv_report_doc_heading(doc, 3, p->r->v[i].name);
        if (p->maps[i].svg) qkv_report_doc_figure(doc, &p->maps[i]);
        else qkv_report_doc_note(doc, "No attention map was recorded for this variant.");
    }
    qkv_report_doc_heading(doc, 2, "Reproduce");
    qkv_report_doc_text(doc, "The effective config of the first variant's first run:");
    qkv_report_doc_code(doc, "json", p->r->base_config_json ? p->r->base_config_json : "null");
    qkv_report_doc_text(doc, "To run the ablation again (finished runs are reused):");
    qkv_report_doc_code(doc, "sh", p->command);
    return doc->oom ? -1 : 0;
}
