/* Internal: each variant's evaluations over training steps, summarised over its chosen runs (the
 * report draws them: the mean as a line, the least and most as a band). */
#ifndef QKV_ABLATE_CURVES_H
#define QKV_ABLATE_CURVES_H

#include "qkv_api.h"

#include "ablate/results.h"

/* the metrics a curve follows */
enum { QKV_CURVE_ACC, QKV_CURVE_LOSS, QKV_CURVE_METRICS };

/* mean, minimum and maximum over the finished runs at each step (NaN: no run has a value) */
typedef struct qkv_ablate_band {
    double *mean, *lo, *hi;
} qkv_ablate_band;

typedef struct qkv_ablate_curve {
    int n;                              /* evaluated steps (0: no finished run has any) */
    double *x;                          /* n steps; owns the one allocation behind every array */
    qkv_ablate_band y[QKV_CURVE_METRICS];
} qkv_ablate_curve;

/* every variant's curve over its chosen runs (a step some runs lack is over the others); NULL
 * when out of memory */
QKV_INTERNAL qkv_ablate_curve *qkv__ablate_curves(const qkv_ablate_results *r);
/* frees n curves */
QKV_INTERNAL void qkv__ablate_curves_free(qkv_ablate_curve *c, int n);

#endif
