/* Internal: what an ablation's results show, decided here before any sentence is written (the
 * report and qkv summarize only phrase it):
 *   findings.c      for the report: each variant's side of the baseline seed by seed, when it
 *                   solved the task against the baseline, and what the seeds can show (the
 *                   sign-flip test's bound, the seeds a significant difference needs);
 *   metric_stats.c  for qkv summarize: each variant's numbers on the metric of a column, as the
 *                   ablation published them or computed from its runs;
 *   gaps.c          for the documents' gap tables: each variant's difference from the baseline at
 *                   each evaluated step, and whether it closes. */
#ifndef QKV_ABLATE_FINDINGS_H
#define QKV_ABLATE_FINDINGS_H

#include "qkv_api.h"

#include <stdbool.h>

#include "ablate/results.h"

/* one variant against the baseline, paired by seed (all 0 for the baseline itself) */
typedef struct qkv_variant_finding {
    int pairs;                      /* seeds at which both finished with a finite final result on the metric */
    int worse, better;              /* of those, where its result is worse / better than the baseline's */
    bool differs;                   /* its mean difference is at least half a point of accuracy (0.0005 nats
                                       or bits): smaller, or not a number, it is as good as the baseline */
    int same_side;                  /* the pairs on the side of its mean difference (worse or better) */
    bool consistent;                /* it differs, and on that side in every pair */
    int solve_pairs;                /* seeds at which both finished */
    int earlier, later;             /* of those, where it reached the threshold earlier / later than the
                                       baseline (a run that did not counting as later; neither: a tie) */
} qkv_variant_finding;

typedef struct qkv_ablate_findings {
    qkv_variant_finding *v;         /* n_variants; NULL when there is nothing to compare (one variant, no runs) */
    int comparisons;                /* variants compared with the baseline: n_variants - 1 */
    double need;                    /* the p-value the first of Holm's comparisons needs: alpha / comparisons */
    double seeds_pmin;              /* the smallest sign-flip p-value the sweep's n_seeds pairs can give */
    bool seeds_too_few;             /* seeds_pmin is above need: no difference can be significant */
    int consistent;                 /* variants consistently on one side of the baseline */
    int fewest;                     /* the fewest pairs among those (0: none) */
    double fewest_pmin;             /* the smallest p-value that many pairs can give */
    int seeds_needed;               /* the fewest pairs whose smallest p-value is not above need (at most 60) */
    double seeds_needed_pmin;       /* the smallest p-value that many pairs can give */
    bool consistent_too_few;        /* consistent effects whose pairs cannot make them significant */
} qkv_ablate_findings;

/* the smallest two-sided p-value of the paired sign-flip test with n pairs: 2 / 2^n (all n signs
 * alike); 0 where 2^n does not fit (n >= 60: no bound is claimed) or n < 1 */
QKV_INTERNAL double qkv__signflip_pmin(int n);
/* what r shows (r's metric; its chosen runs); 0, or -1 when out of memory */
QKV_INTERNAL int qkv__ablate_findings(qkv_ablate_findings *f, const qkv_ablate_results *r);
QKV_INTERNAL void qkv__ablate_findings_free(qkv_ablate_findings *f);

/* one variant's numbers on a metric, as a column of qkv summarize shows them */
typedef struct qkv_metric_stats {
    double mean, lo, hi;            /* the mean over its chosen runs, with the 95% interval */
    double delta, delta_lo, delta_hi; /* the mean paired difference from the baseline, with its interval */
    double p, p_holm;               /* the sign-flip p-value, Holm's adjustment over the other variants */
    bool significant;               /* after Holm, at 0.05 (false for the baseline) */
} qkv_metric_stats;

/* Every variant's numbers (out: n_variants) on metric m: r's own metric, or bits per byte (a text
 * task's). Accuracy and a loss in nats as the ablation published them. Bits per byte computed from
 * the chosen runs (each run's eval_bpb, else its evaluation loss / ln 2), paired by seed, with
 * aggregate.c's bootstrap, sign-flip test, Holm correction and seeds when the ablation compared
 * accuracy or every finished run records eval_bpb (*computed), else its published loss / ln 2 (a
 * difference published in nats divided too). *from_loss: some bits are a loss / ln 2. 0, or -1
 * (out of memory) */
QKV_INTERNAL int qkv__ablate_metric_stats(const qkv_ablate_results *r, qkv_ablate_metric m, qkv_metric_stats *out,
                                          bool *computed, bool *from_loss);

/* one variant's gap to the baseline at one evaluated step */
typedef struct qkv_gap {
    int pairs;                      /* seeds at which both runs evaluated the step (the baseline: its runs that did) */
    double mean, lo, hi;            /* the mean paired difference, variant - baseline, with its 95% interval (the
                                       baseline: its own mean and interval); NaN without pairs */
} qkv_gap;

/* how a gap moved from the middle step shown to the last: flat when |change| is below half the last
 * step's interval, else closing (the last nearer zero than the middle: for the baseline's own loss,
 * improving) or widening */
typedef enum { QKV_GAP_UNKNOWN, QKV_GAP_FLAT, QKV_GAP_CLOSING, QKV_GAP_WIDENING } qkv_gap_trend;

typedef struct qkv_ablate_gaps {
    bool bits;                      /* in bits per byte (evaluation loss / ln 2), else the evaluation loss in nats */
    int n_steps;
    long long *steps;               /* n_steps, as asked or every step the baseline's chosen runs evaluated */
    int mid;                        /* the middle step's index: (n_steps - 1) / 2 */
    qkv_gap *at;                    /* n_variants x n_steps, variant-major */
    double *change;                 /* n_variants: at[last].mean - at[mid].mean (NaN: either missing, or one step) */
    qkv_gap_trend *trend;           /* n_variants */
} qkv_ablate_gaps;

/* Every variant's gap to the baseline on r's chosen runs' evaluation curves at steps[0..n) (n 0: at
 * every step the baseline's runs evaluated): a loss's, in bits per byte where r compared bits per byte
 * or is the text task. With aggregate.c's pairing, bootstrap and seeds (qkv__ablate_compare) at each
 * step, over the seeds where both runs evaluated it. Refused (e, one line without the file's name): an
 * ablation compared on accuracy, results whose baseline has no curves, a step the baseline never
 * evaluated. 0, or -1 with e (g is then empty); free with qkv__ablate_gaps_free */
QKV_INTERNAL int qkv__ablate_gaps(qkv_ablate_gaps *g, const qkv_ablate_results *r, const long long *steps, int n,
                                  qkv_err *e);
QKV_INTERNAL void qkv__ablate_gaps_free(qkv_ablate_gaps *g);

#endif
