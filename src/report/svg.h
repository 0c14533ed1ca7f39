/* A tiny SVG writer for the ablation report: "nice" axis ticks, line plots with min-max
 * bands, and attention heatmaps. No external libraries; every function returns a malloc'd
 * string (NULL when out of memory). The SVGs use no ids, so several can be inlined into
 * one HTML page. */
#ifndef QKV_SVG_H
#define QKV_SVG_H

#include "qkv_api.h"

#include <stdbool.h>
#include <stddef.h>

/* ---- axes -------------------------------------------------------------------------------- */

/* the "nice" step (1, 2 or 5 x 10^k) that divides span into about `target` intervals */
QKV_INTERNAL double qkv__svg_nice_step(double span, int target);
/* ticks: multiples of step in [lo, hi] (up to max of them); returns the count */
QKV_INTERNAL int qkv__svg_ticks(double lo, double hi, double step, double *out, int max);
/* ticks for a log axis over [lo, hi] (lo > 0): decades, with 2 and 5 (or every digit)
 * between them when the range is short; returns the count */
QKV_INTERNAL int qkv__svg_log_ticks(double lo, double hi, double *out, int max);
/* a tick label: integers without decimals, otherwise %g with up to 4 significant digits */
QKV_INTERNAL void qkv__svg_format_tick(char *dst, size_t n, double v);

/* colour i of a colour-blind-friendly palette (Tableau 10; cycles) as "#rrggbb" */
QKV_INTERNAL const char *qkv__svg_color(int i);
/* the dash pattern used for series i ("" for the first cycle of colours, then dashed) */
QKV_INTERNAL const char *qkv__svg_dash(int i);

/* ---- line plots -------------------------------------------------------------------------- */

typedef struct qkv_svg_series {
    const char *name;           /* legend text */
    int n;                      /* points (0: listed in the legend only) */
    const double *x;            /* n x values (steps) */
    const double *y;            /* n values of the line (non-finite: skipped) */
    const double *lo, *hi;      /* n band bounds, or NULL for no band (non-finite: skipped) */
} qkv_svg_series;

typedef struct qkv_svg_plot {
    const char *title, *xlabel, *ylabel;
    bool log_y;                 /* logarithmic y axis (values <= 0 are skipped) */
    bool log_x;                 /* logarithmic x axis (values <= 0 are skipped), e.g. learning rates */
    bool percent_y;             /* tick labels show 100 * value with a % sign */
    bool fixed_y;               /* the y axis is [y_min, y_max] instead of the data range */
    double y_min, y_max;
    bool hline;                 /* a dashed horizontal reference line at hline_y */
    double hline_y;
    const char *hline_label;
    int width;                  /* pixels; 0 = 720 */
    const double *x_ticks;      /* n_x_ticks explicit x ticks (e.g. the model sizes); NULL: automatic */
    int n_x_ticks;
    bool error_bars;            /* each point's lo..hi as a vertical bar with caps instead of a band;
                                   series are nudged sideways a little so bars at one x stay apart */
} qkv_svg_plot;

/* lines with semi-transparent bands (or error bars), axes with ticks, labels, title and a legend
 * below the plot (series i drawn with qkv__svg_color(i)); malloc'd, NULL when out of memory */
QKV_INTERNAL char *qkv__svg_curves(const qkv_svg_plot *p, const qkv_svg_series *s, int n_series);

/* ---- heatmaps ---------------------------------------------------------------------------- */

/* small multiples of T x T weights w[(l * heads + h) * T * T + query * T + key] (layers
 * as rows, heads as columns; query on y, key on x), white -> dark for 0 -> 1 with a
 * colour bar; labels: T tick labels (the tokens) or NULL for positions; subtitle may be
 * NULL. Non-finite weights are drawn grey. malloc'd, NULL when out of memory or bad sizes */
QKV_INTERNAL char *qkv__svg_heatmap(const char *title, const char *subtitle, int layers, int heads, int T,
                      const float *w, const char *const *labels);

/* the role of a position in an example (the band beside a heatmap's axes) */
enum { QKV_ROLE_NONE, QKV_ROLE_KEY, QKV_ROLE_VALUE, QKV_ROLE_QUERY, QKV_ROLE_COUNT };

/* the words a heatmap grid is drawn with; any NULL: the English default */
typedef struct qkv_svg_heat_words {
    const char *y_title, *x_title;  /* the rows' and columns' axis titles */
    const char *bar;                /* the colour bar's title ("weight") */
    const char *roles;              /* the role legend's lead ("position roles:") */
    const char *role[QKV_ROLE_COUNT]; /* each role's name ([QKV_ROLE_NONE] unused) */
    const char *outline;            /* the legend's name of the outlined cells */
} qkv_svg_heat_words;

/* rows x cols panels, each T x T weights (query on y, key on x) with a caption of its own */
typedef struct qkv_svg_panels {
    const char *title, *subtitle;   /* subtitle may be NULL */
    const char *foot[2];            /* up to two lines below the key axis's title (NULL: none) */
    int rows, cols, T;
    const float *w;                 /* (rows * cols, T, T): panel i = r * cols + c at row r, column c */
    const char *const *captions;    /* rows * cols panel captions */
    const char *const *notes;       /* rows * cols second lines below them, or NULL */
    const char *const *labels;      /* T tick labels (the tokens), or NULL for positions */
    const unsigned char *mark;      /* (T, T): cells outlined in every panel, or NULL */
    const unsigned char *roles;     /* (T) QKV_ROLE_*: a band of colour beside both axes and a legend
                                       (NULL: none) */
    const qkv_svg_heat_words *words; /* NULL: English */
    bool no_ticks;                  /* no tick labels (the roles' band says where things are) */
} qkv_svg_panels;

/* p's panels, drawn as qkv__svg_heatmap draws layers and heads (the same ramp and colour bar),
 * each captioned, the marked cells outlined; malloc'd, NULL when out of memory or bad sizes */
QKV_INTERNAL char *qkv__svg_heatmap_grid(const qkv_svg_panels *p);

#endif
