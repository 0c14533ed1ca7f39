/* What the report says and in which order: the sections of results.md and of report.md /
 * report.html, the summary paragraph's wording and the explanatory notes. Formats are the
 * renderers' business (report_md.c, report_html.c). */
#include "tensor/tensor.h"
#include "report/report_doc.h"
#include "io/strbuf.h"

#include <math.h>

static const char LR_NOTE[] =
    "Each variant at its learning rate (chosen on the validation set, never on the numbers shown). ";
static const char RESULTS_NOTE[] =
    "Accuracy and "
    "loss: the final evaluation of each finished run, the mean over seeds with a 95% percentile bootstrap "
    "interval, and the worst seed. \xce\x94: the mean difference from the baseline over the seeds both finished "
    "(the same seed gives the same data and, where shapes agree, the same initialisation), with its bootstrap "
    "interval; p: the two-sided sign-flip permutation test of that difference, with Holm's adjustment over all "
    "variants in brackets; * significant at 0.05 after it. Verdicts: a run is solved at the first evaluation "
    "whose validation accuracy reaches the threshold; a run that has not is extended up to its budget and "
    "reported as unsolved at that many steps, with its trend (flat: the best validation loss of the last "
    "quarter of evaluations is not 2% below that of the quarter before; flat at the floor, on recall: over the last "
    "half of its evaluations its validation accuracy never rose more than 2 points above that of a model that never retrieves). Unsolved means not within that many "
    "steps, never that the variant cannot learn the task. s/run: mean wall time of a run. Failed runs are left "
    "out of every statistic.";
static const char DIAG_INTRO[] =
    "Averaged over layers, heads, seeds and the query rows of the evaluation examples that attend somewhere.";
static const char *const DIAG_NOTES[] = {
    "diagonal share: the mean attention weight a query puts on its own position",
    "previous-position share: the mean weight a query puts on the position just before its own (a previous-token "
    "head's mark)",
    "first-position share: the mean weight on the first position (an attention sink)",
    "entropy: the mean entropy of a query's attention weights in nats (low = focused)",
    "uniform causal entropy: the same for uniform attention over the visible positions, for scale",
    "score symmetry: of each head's score matrix M = W_q W_k^T (the bilinear form x_i^T M x_j of the query and "
    "key inputs), (|M_s|^2 - |M_a|^2) / |M|^2 with M_s, M_a its symmetric and antisymmetric parts: 1 symmetric (a "
    "tied Q = K is, by construction), -1 antisymmetric, 0 neither (Saponati et al.); for diff, its first map",
    "negative eigenvalue share: the share of M_s's eigenvalue mass that is negative (0 for a tied Q = K, whose M "
    "is positive semi-definite)",
};
static const char DIAG_START_NOTE[] =
    "start \xe2\x86\x92 end (change): the value at step 0, of the initialised model before its first update (as "
    "each run recorded it), then at the end of training, and the difference; a default-initialised W_q, W_k starts "
    "near score symmetry 0 and negative eigenvalue share 0.5 (docs/ablate.md), so what moved from there is what "
    "training did";
static const char CURVES_NOTE[] =
    "Lines: the mean over the finished runs at each evaluated step; bands: the minimum and maximum over seeds.";
static const char HEAT_NOTE_FMT[] =
    "The attention weights of evaluation example #%d in each variant's first-seed run: one map per layer (rows) "
    "and head (columns); each row of a map is an attending position and each column a position it attends to "
    "(white 0, dark 1; masked future positions are 0). On recall, a band beside the axes marks each position's "
    "role (key, value, query) and the outlined cell in a query's row is its answer, the value stored right after "
    "its key.";

/* a span of text or code at the end of the current paragraph of doc (every function below writes into
 * one named doc) */
#define TEXT(...) qkv__report_doc_span(doc, QKV_SPAN_TEXT, __VA_ARGS__)
#define CODE(s) qkv__report_doc_span(doc, QKV_SPAN_CODE, "%s", (s))

/* " on the `recall` task", where the results name it */
static void on_task(qkv_report_doc *doc, const qkv_report *p) {
    if (!p->facts.task[0]) return;
    TEXT(" on the ");
    CODE(p->facts.task);
    TEXT(" task");
}

/* the differences from the baseline that survive Holm's correction, in one sentence */
static void significance(qkv_report_doc *doc, const qkv_report *p) {
    const qkv_ablate_config *cfg = p->cfg;
    const qkv_ablate_results *r = p->r;
    const qkv_ablate_findings *f = &p->findings;
    const char *base = r->v[cfg->baseline].name;
    static const char *const WHAT[QKV_METRIC_COUNT] = {"accuracy", "evaluation loss", "bits per byte"};
    const char *what = WHAT[cfg->metric];
    int m = f->comparisons;
    qkv__report_doc_paragraph(doc);
    if (m < 1) {
        TEXT("One variant: nothing to compare.");
        return;
    }
    if (!r->significant) {
        TEXT("No difference in final %s from the baseline (%s) is significant at 0.05 after Holm's "
             "correction over %d comparison%s.", what, base, m, m == 1 ? "" : "s");
        if (f->seeds_too_few) /* what the seeds allow: the sign-flip test's smallest two-sided p is 2 / 2^n */
            TEXT(" With %d paired seeds the test's smallest possible p-value is %.3g, above the %.3g that the "
                 "first of %d Holm comparisons needs: more seeds are needed to call any difference significant.",
                 cfg->n_seeds, f->seeds_pmin, f->need, m);
        return;
    }
    TEXT("Significant differences in final %s from the baseline (%s), at 0.05 after Holm's correction "
         "over %d comparison%s: ", what, base, m, m == 1 ? "" : "s");
    int k = 0;
    for (int i = 0; i < p->nv; i++) {
        const qkv_variant_result *v = &r->v[i];
        if (!v->significant) continue;
        if (cfg->metric == QKV_METRIC_ACCURACY)
            TEXT("%s%s %+.1f points [%+.1f, %+.1f] (p = %.3g, Holm %.3g)", k++ ? "; " : "", v->name, 100 * v->delta,
                 100 * v->delta_ci_lo, 100 * v->delta_ci_hi, v->p_value, v->p_holm);
        else
            TEXT("%s%s %+.3f %s [%+.3f, %+.3f] (p = %.3g, Holm %.3g)", k++ ? "; " : "", v->name, v->delta,
                 cfg->metric == QKV_METRIC_BPB ? "bits" : "nats", v->delta_ci_lo, v->delta_ci_hi, v->p_value,
                 v->p_holm);
    }
    TEXT(". No other difference is.");
}

/* when a variant solved against the baseline, in words: ", earlier than full in every one of the 8
 * paired seeds", ", later than full in 7 of 8 paired seeds", or both counts; nothing for a tie */
static void solve_words(qkv_report_doc *doc, const qkv_variant_finding *f, const char *base) {
    int pairs = f->solve_pairs, earlier = f->earlier, later = f->later;
    if (pairs < 2 || (!earlier && !later)) return;
    if (earlier && later)
        TEXT(", earlier than %s in %d and later in %d of %d paired seeds", base, earlier, later, pairs);
    else if (earlier + later == pairs)
        TEXT(", %s than %s in every one of the %d paired seeds", earlier ? "earlier" : "later", base, pairs);
    else
        TEXT(", %s than %s in %d of %d paired seeds", earlier ? "earlier" : "later", base, earlier + later, pairs);
}

/* "1 seed", "8 seeds" */
static const char *seeds_word(long long n) { return n == 1 ? "seed" : "seeds"; }

/* what a variant's verdicts say in words: "reached 99% in 8 of 8 seeds (median step 400)" */
static void verdict_words(qkv_report_doc *doc, const qkv_variant_result *v, const char *thr) {
    int n = v->solved + v->unsolved;
    if (n == 0) TEXT("has no finished run");
    else if (v->solved == 0 && v->budget_min > 0 && v->budget_min < v->budget_max)
        TEXT("reached %s in none of %d %s within their %lld to %lld steps", thr, n, seeds_word(n), v->budget_min,
             v->budget_max);
    else if (v->solved == 0 && n == 1) TEXT("did not reach %s within %lld steps in its one seed", thr, v->budget_max);
    else if (v->solved == 0) TEXT("reached %s in none of %d seeds within %lld steps", thr, n, v->budget_max);
    else if (v->steps_median >= 0)
        TEXT("reached %s in %d of %d %s (median step %lld)", thr, v->solved, n, seeds_word(n), v->steps_median);
    else TEXT("reached %s in %d of %d %s (too few for a median step)", thr, v->solved, n, seeds_word(n));
}

/* recall's two floors in words, where the results have them and accuracy is compared */
static void floors(qkv_report_doc *doc, const qkv_ablate_results *r, bool acc) {
    if (!acc || !(r->chance > 0) || !isfinite(r->no_retrieval)) return;
    TEXT(" For scale: chance is %.1f%% (1 in %.0f values), and a model that never looks up a query's key, "
         "answering with the value its example holds most often, reaches %.1f%%; \"flat at the floor\" marks a run "
         "whose accuracy never rose more than %.0f points above that in the last half of its evaluations.", 100 * r->chance, 1 / r->chance, 100 * r->no_retrieval,
         100 * QKV_FLOOR_MARGIN);
}

/* The findings in plain words, before any statistic: for each variant how often and when it
 * solved the task (or its bits per byte / loss), its final result against the baseline's and in
 * how many paired seeds it was worse (or better); then what the seeds can show. A reader who
 * stops after this paragraph knows what happened; the next says what is significant. */
static void findings(qkv_report_doc *doc, const qkv_report *p) {
    const qkv_ablate_config *cfg = p->cfg;
    const qkv_ablate_results *r = p->r;
    const qkv_ablate_findings *f = &p->findings;
    if (!f->v) return; /* one variant, or no runs: nothing to compare (the next paragraph says so) */
    int b = cfg->baseline;
    const qkv_variant_result *base = &r->v[b];
    bool acc = cfg->metric == QKV_METRIC_ACCURACY;
    double scale = cfg->metric == QKV_METRIC_BPB ? 1 / QKV_LN2 : 1;
    const char *unit = cfg->metric != QKV_METRIC_BPB ? "nats" : p->facts.text_task ? "bits per byte" : "bits per token";
    qkv__report_doc_paragraph(doc);
    TEXT("What was found");
    on_task(doc, p);
    TEXT(acc ? " (validation accuracy %s counts as solved): " : ": ", p->facts.thr);
    for (int k = 0; k < p->nv; k++) {
        int i = k == 0 ? b : (k <= b ? k - 1 : k); /* the baseline first, then the others in order */
        const qkv_variant_result *v = &r->v[i];
        const qkv_variant_finding *fv = &f->v[i];
        TEXT("%s%s%s", k ? " " : "", v->name, k == 0 ? " (the baseline)" : "");
        if (acc) {
            TEXT(" ");
            verdict_words(doc, v, p->facts.thr);
            if (i != b && v->solved > 0 && base->solved > 0) solve_words(doc, fv, base->name);
            if (v->runs_ok > 0) TEXT(", final evaluation accuracy %.1f%%", 100 * v->acc_mean);
        } else if (v->runs_ok > 0) {
            TEXT(" %.3f %s", v->loss_mean * scale, unit);
        } else {
            TEXT(" has no finished run");
        }
        double d = acc ? 100 * v->delta : v->delta; /* points; bits (bpb) or nats, as the tests compared */
        if (fv->differs) {
            if (acc) TEXT(", %.1f points %s ", fabs(d), d < 0 ? "below" : "above");
            else TEXT(", %.3f %s %s than ", fabs(d), unit, d > 0 ? "worse" : "better");
            TEXT("%s", base->name);
            if (fv->consistent)
                TEXT(fv->pairs == 1 ? " in its one paired seed" : " in every one of the %d paired seeds", fv->pairs);
            else TEXT(" on average (%s in %d of %d paired %s)", (d < 0) == acc ? "worse" : "better", fv->same_side,
                      fv->pairs, seeds_word(fv->pairs));
        } else if (fv->pairs > 0) {
            TEXT(", as good as %s on average (within %s%s)", base->name, acc ? "half a point" : "0.0005 ",
                 acc ? "" : unit);
        }
        TEXT(".");
    }
    floors(doc, r, acc);
    /* what the seeds allow: an effect seen in every one of n paired seeds is p = 2 / 2^n at best */
    int n = f->fewest, m = f->comparisons;
    if (f->consistent_too_few)
        TEXT(" With %d paired %s, a difference seen in every seed has a sign-flip p-value of %.3g at best, above "
             "the %.3g that Holm's correction over %d comparison%s needs first: %d %s can show such an effect "
             "consistently, not significantly (%d seeds could: p = %.3g).", n, seeds_word(n), f->fewest_pmin, f->need,
             m, m == 1 ? "" : "s", n, seeds_word(n), f->seeds_needed, f->seeds_needed_pmin);
}

/* the runs missing, then the runs still to extend (report_doc.h), each only when there are some */
void qkv__report_partial_words(qkv_strbuf *b, const qkv_ablate_results *r, int planned, const char *why) {
    int m = r->missing, x = r->to_extend;
    if (m > 0 && planned > 0)
        qkv__strbuf_printf(b, "%d of %d run%s %s not finished", m, planned, planned == 1 ? "" : "s",
                           m == 1 ? "has" : "have");
    else if (m > 0) qkv__strbuf_printf(b, "%d run%s %s not finished", m, m == 1 ? "" : "s", m == 1 ? "has" : "have");
    if (m > 0 && why) qkv__strbuf_printf(b, " (%s)", why);
    if (m > 0 && x > 0) qkv__strbuf_puts(b, " and ");
    if (x > 0) qkv__strbuf_printf(b, "%d finished run%s may still be extended", x, x == 1 ? "" : "s");
}

/* a partial report (qkv ablate --report before the sweep is done) says what it lacks, first */
static void partial(qkv_report_doc *doc, const qkv_report *p) {
    const qkv_ablate_results *r = p->r;
    if (r->missing <= 0 && r->to_extend <= 0) return;
    int not_started = p->facts.not_started; /* of the missing ones, where the results say */
    char why[96] = "failed or not yet run";
    if (not_started > 0 && not_started >= r->missing) snprintf(why, sizeof why, "not started");
    else if (not_started > 0)
        snprintf(why, sizeof why, "%d not started, %d failed or still running", not_started, r->missing - not_started);
    qkv_strbuf b;
    qkv__strbuf_init(&b);
    qkv__report_partial_words(&b, r, p->nv * r->n_lrs * p->cfg->n_seeds, why);
    doc->oom |= b.oom;
    qkv__report_doc_paragraph(doc);
    TEXT("Partial results: %s; the numbers are over the runs finished so far.", qkv__strbuf_str(&b));
    qkv__strbuf_free(&b);
}

/* the overrides every run of the sweep takes, as --set options */
static void common_sets(qkv_report_doc *doc, const qkv_ablate_config *cfg) {
    for (int i = 0; i < cfg->n_sets; i++) {
        if (i) TEXT(" ");
        qkv__report_doc_span(doc, QKV_SPAN_CODE_NOWRAP, "--set %s", cfg->sets[i] ? cfg->sets[i] : "");
    }
}

/* what was run, on what, from which config, and how long it took, in one paragraph */
static void summary(qkv_report_doc *doc, const qkv_report *p) {
    const qkv_ablate_config *cfg = p->cfg;
    const qkv_ablate_results *r = p->r;
    qkv__report_doc_paragraph(doc);
    TEXT("qkv %s trained %d variant%s \xc3\x97 ", r->version[0] ? r->version : "(unknown version)", p->nv,
         p->nv == 1 ? "" : "s");
    if (cfg->n_lrs) {
        TEXT("%d learning rate%s (", cfg->n_lrs, cfg->n_lrs == 1 ? "" : "s");
        for (int l = 0; l < cfg->n_lrs; l++) TEXT("%s%g", l ? ", " : "", cfg->lrs[l]);
        TEXT(") \xc3\x97 ");
    }
    TEXT("%d seed%s (", cfg->n_seeds, cfg->n_seeds == 1 ? "" : "s");
    for (int s = 0; s < cfg->n_seeds; s++) TEXT("%s%lld", s ? ", " : "", cfg->seeds[s]);
    TEXT(")");
    on_task(doc, p);
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
        common_sets(doc, cfg);
    } else {
        TEXT(" with no common overrides");
    }
    TEXT(". A run counts as solved at the first evaluation with validation accuracy \xe2\x89\xa5 %s; one that "
         "has not is extended by doubling its steps, up to ", p->facts.thr);
    if (cfg->max_steps) TEXT("max_steps %lld", cfg->max_steps);
    else TEXT("4\xc3\x97 its train.steps");
    TEXT(" or, when lower, 4\xc3\x97 the largest step at which any run solved it");
    if (r->max_solved_at >= 0) TEXT(" (%lld here)", r->max_solved_at);
    else TEXT(" (none did here)");
    if (cfg->n_lrs > 1) TEXT(". Each variant's learning rate is the one with the best mean validation accuracy");
    TEXT(". This invocation of qkv ablate took %s of wall time with %d parallel job%s (finished runs that it "
         "reused cost it nothing)", p->facts.duration, r->jobs, r->jobs == 1 ? "" : "s");
    if (p->facts.run_duration[0]) TEXT("; the finished runs took %s in all, one after another", p->facts.run_duration);
    TEXT(".");
    int failed = p->facts.failed_runs;
    if (failed > 0)
        TEXT(" %d run%s failed and %s left out of the statistics.", failed, failed == 1 ? "" : "s",
             failed == 1 ? "is" : "are");
}

/* the text task: each variant's bits per byte beside what xz -9 and a unigram model need for
 * the same held-out bytes (one pair of baselines when every variant's task gives the same) */
static void bits_per_byte(qkv_report_doc *doc, const qkv_report *p) {
    if (!p->facts.text_task) return;
    const qkv_ablate_results *r = p->r;
    bool same = p->facts.same_baselines;
    qkv__report_doc_paragraph(doc);
    TEXT("Bits per byte on the held-out text (the final evaluation loss / ln 2, mean over seeds): ");
    for (int i = 0; i < p->nv; i++) {
        const qkv_variant_result *v = &r->v[i];
        TEXT("%s%s ", i ? ", " : "", v->name);
        if (v->runs_ok > 0 && isfinite(v->loss_mean)) TEXT("%.3f", v->loss_mean / QKV_LN2);
        else TEXT("(no finished run)");
        if (!same && isfinite(v->xz_bpb) && isfinite(v->unigram_bpb))
            TEXT(" (xz -9 %.3f, unigram %.3f)", v->xz_bpb, v->unigram_bpb);
    }
    if (same && isfinite(p->facts.xz_bpb))
        TEXT(". On the same bytes, xz -9 needs %.3f bits per byte, and a unigram model of the training bytes "
             "(add-one smoothing) %.3f.", p->facts.xz_bpb, p->facts.unigram_bpb);
    else if (!same)
        TEXT(". In brackets: xz -9 and a unigram model of the training bytes (add-one smoothing) on each variant's "
             "held-out bytes.");
    else
        TEXT(".");
}

/* the results table and how to read it */
static void results(qkv_report_doc *doc, const qkv_report *p) {
    qkv__report_doc_table(doc, &p->tables.results);
    bits_per_byte(doc, p);
    const qkv_ablate_results *r = p->r;
    if (p->cfg->metric == QKV_METRIC_ACCURACY && r->chance > 0 && isfinite(r->no_retrieval))
        qkv__report_doc_note(doc, "The floors of the accuracy column: chance %.1f%% (1 in %.0f values); a model that "
                             "never retrieves %.1f%% (the same task's examples, counted by qkv_task_floors).",
                             100 * r->chance, 1 / r->chance, 100 * r->no_retrieval);
    qkv__report_doc_note(doc, "%s%s", p->cfg->n_lrs > 1 ? LR_NOTE : "", RESULTS_NOTE);
}

/* the text task: what each variant's model writes, from the same prompt with the same seed */
static void samples(qkv_report_doc *doc, const qkv_report *p) {
    if (!p->facts.text_task) return;
    qkv__report_doc_heading(doc, 2, "Samples");
    qkv__report_doc_note(doc, "The final model of each variant's first-seed run (at its chosen learning rate) continues "
                        "the prompt \"%s\" with %d bytes drawn at temperature %.1f with seed %d, as qkv sample "
                        "--prompt '%s' --tokens %d --temperature %.1f --seed %d does. Bytes that are not UTF-8 text "
                        "show as \xef\xbf\xbd.", p->r->sample_prompt, p->r->sample_bytes,
                        p->r->sample_temperature, p->r->sample_seed, p->r->sample_prompt,
                        p->r->sample_bytes, p->r->sample_temperature, p->r->sample_seed);
    for (int i = 0; i < p->nv; i++) {
        const qkv_variant_result *v = &p->r->v[i];
        qkv__report_doc_heading(doc, 3, v->name);
        if (v->sample) qkv__report_doc_code(doc, "text", v->sample);
        else qkv__report_doc_note(doc, "No sample: the first seed's run has no finished model.");
    }
}

/* where the heads look, with what each number means */
static void diagnostics(qkv_report_doc *doc, const qkv_report *p) {
    qkv__report_doc_heading(doc, 2, "Attention diagnostics");
    qkv__report_doc_note(doc, "%s", DIAG_INTRO);
    if (p->r->unobserved) /* runs of an older qkv: the report only shows what runs recorded */
        qkv__report_doc_note(doc, "%d finished run%s recorded no attention diagnostics (made by an older qkv): the "
                            "numbers and maps below leave %s out; `qkv ablate CONFIG --out DIR --refresh` records "
                            "them.", p->r->unobserved, p->r->unobserved == 1 ? "" : "s",
                            p->r->unobserved == 1 ? "it" : "them");
    qkv__report_doc_table(doc, &p->tables.diag);
    /* the notes of the columns there are (the previous-position share: where runs recorded it) */
    enum { NOTES = sizeof DIAG_NOTES / sizeof DIAG_NOTES[0] };
    const char *notes[NOTES + 1];
    int n = 0;
    bool prev = p->facts.has_prev_share, start = p->facts.has_start;
    for (int k = 0; k < NOTES; k++)
        if (k != 1 || prev) notes[n++] = DIAG_NOTES[k];
    if (start) notes[n++] = DIAG_START_NOTE;
    qkv__report_doc_list(doc, notes, n);
    if (start && p->r->unobserved_start > 0)
        qkv__report_doc_note(doc, "%d finished run%s recorded no diagnostics at step 0 (made by an older qkv): start "
                             "not recorded; the start values are over the other runs, and a variant with none shows "
                             "its end alone.", p->r->unobserved_start, p->r->unobserved_start == 1 ? "" : "s");
}

/* what both documents open with: the title, what is missing, what was found, what is significant */
static void opening(qkv_report_doc *doc, const qkv_report *p) {
    qkv__report_doc_heading(doc, 1, p->facts.title);
    partial(doc, p);
    findings(doc, p);
    significance(doc, p);
}

/* results.md: the title and the tables, for a quick look (and the terminal) */
int qkv__report_layout_results(qkv_report_doc *doc, const qkv_report *p) {
    opening(doc, p);
    results(doc, p);
    diagnostics(doc, p);
    return doc->oom ? -1 : 0;
}

/* how to run it again: the command, then the keys that differ from the base config, then the full
 * effective config, collapsed */
static void reproduce(qkv_report_doc *doc, const qkv_report *p) {
    const qkv_ablate_config *cfg = p->cfg;
    qkv__report_doc_heading(doc, 2, "Reproduce");
    qkv__report_doc_text(doc, "To run the ablation again (finished runs are reused):");
    qkv__report_doc_code(doc, "sh", p->facts.command);
    qkv__report_doc_paragraph(doc);
    TEXT("What differs from ");
    if (cfg->base_path[0]) {
        TEXT("the base config ");
        CODE(cfg->base_path);
    } else {
        TEXT(cfg->base_json ? "the base config inline in the ablation config" : "the default config");
    }
    TEXT(": ");
    if (cfg->n_sets > 0) {
        TEXT("every run ");
        common_sets(doc, cfg);
        TEXT("; ");
    }
    TEXT("each variant its overrides in the Variants table");
    if (cfg->n_lrs > 1) TEXT(" and its learning rate");
    TEXT(".");
    qkv__report_doc_code_collapsed(doc, "json", "The full effective config of the first variant's first run",
                                   p->r->base_config_json ? p->r->base_config_json : "null");
}

/* report.md and report.html: everything, from what was run to how to run it again */
int qkv__report_layout_page(qkv_report_doc *doc, const qkv_report *p) {
    opening(doc, p);
    summary(doc, p);
    qkv__report_doc_heading(doc, 2, "Variants");
    qkv__report_doc_table(doc, &p->tables.variants);
    qkv__report_doc_heading(doc, 2, "Results");
    results(doc, p);
    qkv__report_doc_heading(doc, 2, "Training curves");
    for (int i = 0; i < p->figures.n_plots; i++) qkv__report_doc_figure(doc, &p->figures.all[i]);
    qkv__report_doc_note(doc, "%s", CURVES_NOTE);
    diagnostics(doc, p);
    qkv__report_doc_heading(doc, 2, "Attention maps");
    qkv__report_doc_note(doc, HEAT_NOTE_FMT, p->cfg->example);
    for (int i = 0; i < p->nv; i++) {
        qkv__report_doc_heading(doc, 3, p->r->v[i].name);
        if (p->figures.maps[i].svg) qkv__report_doc_figure(doc, &p->figures.maps[i]);
        else qkv__report_doc_note(doc, "No attention map was recorded for this variant.");
    }
    samples(doc, p);
    reproduce(doc, p);
    return doc->oom ? -1 : 0;
}
