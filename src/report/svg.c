/* A tiny SVG writer for the ablation report (see svg.h). */
#include "report/svg.h"
#include "io/strbuf.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FONT "system-ui,-apple-system,'Segoe UI',Roboto,Helvetica,Arial,sans-serif"

/* ---- axes -------------------------------------------------------------------------------- */

double qkv__svg_nice_step(double span, int target) {
    if (!(span > 0) || !isfinite(span)) return 1;
    if (target < 1) target = 1;
    double raw = span / target;
    double e = pow(10, floor(log10(raw)));
    double f = raw / e;
    double nice = f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10;
    return nice * e;
}

int qkv__svg_ticks(double lo, double hi, double step, double *out, int max) {
    if (!(step > 0) || !isfinite(lo) || !isfinite(hi) || hi < lo) return 0;
    double eps = step * 1e-9;
    double first = ceil((lo - eps) / step);
    int n = 0;
    for (double k = first; n < max; k += 1) {
        double v = k * step;
        if (v > hi + eps) break;
        if (fabs(v) < eps) v = 0;   /* no "-0" */
        out[n++] = v;
    }
    return n;
}

int qkv__svg_log_ticks(double lo, double hi, double *out, int max) {
    if (!(lo > 0) || !(hi >= lo) || !isfinite(hi)) return 0;
    double llo = log10(lo), lhi = log10(hi), span = lhi - llo;
    static const double every[] = {1, 2, 3, 4, 5, 6, 7, 8, 9}, some[] = {1, 2, 5}, one[] = {1};
    const double *mult = span >= 4.5 ? one : span >= 0.7 ? some : every;
    int nm = span >= 4.5 ? 1 : span >= 0.7 ? 3 : 9;
    int d0 = (int)floor(llo), d1 = (int)ceil(lhi);
    int dstep = span > 8 ? (int)ceil(span / 8) : 1;
    int n = 0;
    for (int d = d0; d <= d1 && n < max; d += dstep) {
        for (int m = 0; m < nm && n < max; m++) {
            double v = mult[m] * pow(10, d);
            if (v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9)) out[n++] = v;
        }
    }
    return n;
}

void qkv__svg_format_tick(char *dst, size_t n, double v) {
    if (fabs(v) < 1e15 && fabs(v - round(v)) < 1e-9 * fmax(1, fabs(v)))
        snprintf(dst, n, "%.0f", round(v) == 0 ? 0.0 : round(v));
    else
        snprintf(dst, n, "%.4g", v);
}

static const char *const PALETTE[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                      "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
#define N_PALETTE ((int)(sizeof PALETTE / sizeof PALETTE[0]))

const char *qkv__svg_color(int i) { return PALETTE[(i < 0 ? -i : i) % N_PALETTE]; }

const char *qkv__svg_dash(int i) {
    static const char *const dashes[] = {"", "7 3", "2 2", "7 2 2 2"};
    return dashes[((i < 0 ? -i : i) / N_PALETTE) % 4];
}

/* ---- shared by every picture: the element, text, lines, the header ----------------------- */

/* characters (not bytes) of UTF-8 text */
static int utf8_len(const char *s) {
    int n = 0;
    for (; s && *s; s++)
        if (((unsigned char)*s & 0xC0) != 0x80) n++;
    return n;
}

/* a rough width of text in a sans-serif font of size fs: CJK and other characters from U+3000 up
 * (a lead byte of 0xE3 or more) are about one em wide, the rest about 0.6 */
static double text_width(const char *s, double fs) {
    double w = 0;
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if ((c & 0xC0) != 0x80) w += c >= 0xE3 ? 1.0 : 0.6;
    }
    return w * fs;
}

/* text at (x, y): anchor and extra attributes (both optional), the text escaped */
static void svg_text(qkv_strbuf *b, double x, double y, const char *anchor, const char *extra,
                     const char *text) {
    qkv__strbuf_printf(b, "<text x=\"%.2f\" y=\"%.2f\"", x, y);
    if (anchor && *anchor) qkv__strbuf_printf(b, " text-anchor=\"%s\"", anchor);
    if (extra && *extra) qkv__strbuf_printf(b, " %s", extra);
    qkv__strbuf_puts(b, ">");
    qkv__strbuf_escape_xml(b, text);
    qkv__strbuf_puts(b, "</text>\n");
}

/* text read upwards (rotated -90 degrees) about (x, y), x with x_decimals decimals */
static void svg_text_up(qkv_strbuf *b, double x, int x_decimals, double y, const char *attrs, const char *text) {
    qkv__strbuf_printf(b, "<text transform=\"translate(%.*f,%.2f) rotate(-90)\" %s>", x_decimals, x, y, attrs);
    qkv__strbuf_escape_xml(b, text);
    qkv__strbuf_puts(b, "</text>\n");
}

/* a line from (x1, y1) to (x2, y2); tail: its further attributes and the end of the element */
static void svg_line(qkv_strbuf *b, double x1, double y1, double x2, double y2, const char *tail) {
    qkv__strbuf_printf(b, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\"%s", x1, y1, x2, y2, tail);
}

/* the picture's opening: the <svg> element of w x h on a white background, the title (if any) and
 * the subtitle (if any) */
static void svg_header(qkv_strbuf *b, double w, double h, const char *title, const char *subtitle) {
    qkv__strbuf_printf(b, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
                          "viewBox=\"0 0 %.0f %.0f\" font-family=\"%s\" font-size=\"11\">\n", w, h, w, h, FONT);
    qkv__strbuf_printf(b, "<rect width=\"%.0f\" height=\"%.0f\" fill=\"#ffffff\"/>\n", w, h);
    if (title) svg_text(b, w / 2, 26, "middle", "font-size=\"16\" font-weight=\"bold\"", title);
    if (subtitle && *subtitle) svg_text(b, w / 2, 46, "middle", "font-size=\"12\" fill=\"#444444\"", subtitle);
}

/* ---- line plots: axes -------------------------------------------------------------------- */

typedef struct axis {
    double lo, hi;
    bool log;
} axis;

static double axis_t(const axis *a, double v) {
    double t = a->log ? (log10(v) - a->lo) / (a->hi - a->lo) : (v - a->lo) / (a->hi - a->lo);
    return t < 0 ? 0 : t > 1 ? 1 : t;
}

static bool usable(double v, bool log) { return isfinite(v) && (!log || v > 0); }

#define MAX_TICKS 64

/* a plot frame: the plotting area (left, top, width, height in pixels), its axes and ticks */
typedef struct frame {
    double ml, mt, pw, ph;
    axis ax, ay;
    double xticks[MAX_TICKS], yticks[MAX_TICKS];
    int nxt, nyt;
} frame;

/* the pixel column of x value v */
static double frame_x(const frame *f, double v) { return f->ml + axis_t(&f->ax, v) * f->pw; }

/* the pixel row of y value v */
static double frame_y(const frame *f, double v) { return f->mt + f->ph - axis_t(&f->ay, v) * f->ph; }

/* the point (x, y) lies on both axes (finite, and positive on a log axis) */
static bool frame_has(const frame *f, double x, double y) { return usable(x, f->ax.log) && usable(y, f->ay.log); }

/* the data's x and y ranges over the points with a usable x and a usable line or band value;
 * empty (min > max) when there are none */
static void data_range(const qkv_svg_plot *p, const qkv_svg_series *s, int n_series, double *xmin,
                       double *xmax, double *ymin, double *ymax) {
    *xmin = *ymin = INFINITY;
    *xmax = *ymax = -INFINITY;
    for (int i = 0; i < n_series; i++) {
        for (int j = 0; j < s[i].n; j++) {
            if (!s[i].x || !usable(s[i].x[j], p->log_x)) continue;
            const double vals[3] = {s[i].y ? s[i].y[j] : NAN, s[i].lo ? s[i].lo[j] : NAN,
                                    s[i].hi ? s[i].hi[j] : NAN};
            bool any = false;
            for (int k = 0; k < 3; k++) {
                if (!usable(vals[k], p->log_y)) continue;
                any = true;
                *ymin = fmin(*ymin, vals[k]);
                *ymax = fmax(*ymax, vals[k]);
            }
            if (any) {
                *xmin = fmin(*xmin, s[i].x[j]);
                *xmax = fmax(*xmax, s[i].x[j]);
            }
        }
    }
}

/* f's x axis and ticks for data over [xmin, xmax] (linear: from 0 when the data starts close to
 * it, as steps do; log: decades); the caller's x ticks instead when given, those on the axis */
static void x_axis(frame *f, const qkv_svg_plot *p, bool have_data, double xmin, double xmax) {
    const bool lx = p->log_x;
    if (lx) {
        double l0 = have_data ? log10(xmin) : -1, l1 = have_data ? log10(xmax) : 1;
        double pad = l1 - l0 < 1e-9 ? 0.25 : (l1 - l0) * 0.06;
        f->ax = (axis){l0 - pad, l1 + pad, true};
        f->nxt = qkv__svg_log_ticks(pow(10, f->ax.lo), pow(10, f->ax.hi), f->xticks, MAX_TICKS);
    } else {
        if (have_data && xmin > 0 && xmin <= 0.25 * xmax) xmin = 0;
        if (!have_data) {
            xmin = 0;
            xmax = 1;
        } else if (xmin == xmax) {
            double pad = fmax(1, fabs(xmin) * 0.1);
            xmin -= pad;
            xmax += pad;
        }
        double xstep = qkv__svg_nice_step(xmax - xmin, 6);
        f->ax = (axis){floor(xmin / xstep) * xstep, ceil(xmax / xstep) * xstep, false};
        if (!(f->ax.hi > f->ax.lo)) f->ax.hi = f->ax.lo + xstep;
        f->nxt = qkv__svg_ticks(f->ax.lo, f->ax.hi, xstep, f->xticks, MAX_TICKS);
    }
    if (p->x_ticks && p->n_x_ticks > 0) {
        const axis *ax = &f->ax;
        f->nxt = 0;
        for (int i = 0; i < p->n_x_ticks && f->nxt < MAX_TICKS; i++) {
            double v = p->x_ticks[i];
            if (!usable(v, lx)) continue;
            double t = lx ? log10(v) : v;
            if (t >= ax->lo - 1e-9 * fabs(ax->lo) && t <= ax->hi + 1e-9 * fabs(ax->hi)) f->xticks[f->nxt++] = v;
        }
    }
}

/* f's y axis and ticks for data over [ymin, ymax] (the plot's fixed range instead when it has
 * a valid one; a default range without data): padded, on nice steps or decades */
static void y_axis(frame *f, const qkv_svg_plot *p, double ymin, double ymax) {
    const bool lg = p->log_y;
    f->ay = (axis){0, 1, lg};
    if (p->fixed_y && (lg ? (p->y_min > 0 && p->y_max > p->y_min) : p->y_max > p->y_min)) {
        ymin = p->y_min;
        ymax = p->y_max;
    } else if (!(ymin <= ymax)) {
        ymin = lg ? 0.1 : 0;
        ymax = lg ? 10 : 1;
    }
    if (lg) {
        double l0 = log10(ymin), l1 = log10(ymax);
        if (p->fixed_y) {
            /* exactly the requested range */
        } else if (l1 - l0 < 1e-9) {
            l0 -= 0.15;
            l1 += 0.15;
        } else {
            double pad = (l1 - l0) * 0.04;
            l0 -= pad;
            l1 += pad;
        }
        f->ay.lo = l0;
        f->ay.hi = l1;
        f->nyt = qkv__svg_log_ticks(pow(10, l0), pow(10, l1), f->yticks, MAX_TICKS);
        if (f->nyt < 3) {  /* a very short range: plain nice steps */
            double a = pow(10, l0), c = pow(10, l1);
            f->nyt = qkv__svg_ticks(a, c, qkv__svg_nice_step(c - a, 7), f->yticks, MAX_TICKS);
        }
    } else {
        if (ymax - ymin < 1e-12 * fmax(1, fabs(ymax))) {
            double pad = fmax(0.5, fabs(ymax) * 0.1);
            ymin -= pad;
            ymax += pad;
        }
        double ystep = qkv__svg_nice_step(ymax - ymin, 5);
        if (!p->fixed_y) {
            ymin = floor(ymin / ystep) * ystep;
            ymax = ceil(ymax / ystep) * ystep;
        }
        f->ay.lo = ymin;
        f->ay.hi = ymax;
        f->nyt = qkv__svg_ticks(ymin, ymax, ystep, f->yticks, MAX_TICKS);
    }
}

/* a line at each tick of f's y axis from x = from to x = to, or of its x axis (y: false) from y = from
 * to y = to: the grid's lines, or the marks on an axis */
static void tick_lines(qkv_strbuf *b, const frame *f, bool y, double from, double to) {
    for (int i = 0; i < (y ? f->nyt : f->nxt); i++) {
        double at = y ? frame_y(f, f->yticks[i]) : frame_x(f, f->xticks[i]);
        if (y) svg_line(b, from, at, to, at, "/>\n");
        else svg_line(b, at, from, at, to, "/>\n");
    }
}

/* f's grid, the two axes with their ticks and tick labels (y as percent when asked), and the
 * axis labels */
static void svg_axes(qkv_strbuf *b, const frame *f, const qkv_svg_plot *p) {
    const double ML = f->ml, MT = f->mt, PW = f->pw, PH = f->ph;
    char lab[64];
    qkv__strbuf_puts(b, "<g stroke=\"#e3e3e3\" stroke-width=\"1\">\n"); /* the grid */
    tick_lines(b, f, true, ML, ML + PW);
    tick_lines(b, f, false, MT, MT + PH);
    qkv__strbuf_puts(b, "</g>\n<g stroke=\"#333333\" stroke-width=\"1\">\n");
    svg_line(b, ML, MT, ML, MT + PH, "/>\n");
    svg_line(b, ML, MT + PH, ML + PW, MT + PH, "/>\n");
    tick_lines(b, f, true, ML - 5, ML); /* the tick marks */
    tick_lines(b, f, false, MT + PH, MT + PH + 5);
    qkv__strbuf_puts(b, "</g>\n<g fill=\"#333333\">\n");
    for (int i = 0; i < f->nyt; i++) {
        qkv__svg_format_tick(lab, sizeof lab - 2, p->percent_y ? f->yticks[i] * 100 : f->yticks[i]);
        if (p->percent_y) strcat(lab, "%");
        svg_text(b, ML - 8, frame_y(f, f->yticks[i]), "end", "dy=\".35em\"", lab);
    }
    for (int i = 0; i < f->nxt; i++) {
        qkv__svg_format_tick(lab, sizeof lab, f->xticks[i]);
        svg_text(b, frame_x(f, f->xticks[i]), MT + PH + 18, "middle", NULL, lab);
    }
    if (p->xlabel) svg_text(b, ML + PW / 2, MT + PH + 38, "middle", "font-size=\"12\"", p->xlabel);
    if (p->ylabel) svg_text_up(b, 16, 0, MT + PH / 2, "text-anchor=\"middle\" font-size=\"12\"", p->ylabel);
    qkv__strbuf_puts(b, "</g>\n");
}

/* ---- line plots: markers ----------------------------------------------------------------- */

/* the group attributes of series i's markers: filled dots for even i, hollow rings for odd i, so
 * two series whose lines coincide still show apart (a ring around a dot: not filled, so a dot
 * drawn before it shows through) */
static void marker_group(qkv_strbuf *b, int i) {
    const char *c = qkv__svg_color(i);
    if (i % 2) qkv__strbuf_printf(b, "<g fill=\"none\" stroke=\"%s\" stroke-width=\"1.6\">", c);
    else qkv__strbuf_printf(b, "<g fill=\"%s\">", c);
}

/* a marker's radius: a ring a little larger than a dot of radius r */
static double marker_r(int i, double r) { return i % 2 ? r + 1.5 : r; }

/* ---- line plots: legend ------------------------------------------------------------------ */

/* a legend: a grid of items (a swatch and the series name) below the plot */
typedef struct legend {
    double x, y;        /* the first item's swatch: left end and middle */
    double item_w;      /* a column's width */
    int ncol, nrow;
} legend;

#define LEGEND_FS 12.0
#define LEGEND_ROW_H 18.0
#define LEGEND_SWATCH 26.0

/* the widest legend item of the series' names (0 without series) */
static double legend_item_width(const qkv_svg_series *s, int n_series) {
    double item_w = 0;
    for (int i = 0; i < n_series; i++)
        item_w = fmax(item_w, LEGEND_SWATCH + 8 + text_width(s[i].name, LEGEND_FS) + 18);
    return item_w;
}

/* the legend of n_series items of width item_w at (x, y), in as many columns as fit in width w */
static legend legend_layout(int n_series, double item_w, double x, double y, double w) {
    legend l = {x, y, item_w, item_w > 0 ? (int)(w / item_w) : 1, 0};
    if (l.ncol < 1) l.ncol = 1;
    if (l.ncol > n_series && n_series > 0) l.ncol = n_series;
    l.nrow = n_series > 0 ? (n_series + l.ncol - 1) / l.ncol : 0;
    return l;
}

/* the legend's items: series i's colour and dash as a band swatch with a line, then its name */
static void svg_legend(qkv_strbuf *b, const legend *l, const qkv_svg_series *s, int n_series) {
    char tail[160];
    for (int i = 0; i < n_series; i++) {
        int row = i / l->ncol, col = i % l->ncol;
        double x = l->x + col * l->item_w, y = l->y + row * LEGEND_ROW_H;
        const char *c = qkv__svg_color(i), *dash = qkv__svg_dash(i);
        qkv__strbuf_printf(b, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"10\" fill=\"%s\" "
                             "fill-opacity=\"0.18\"/>\n", x, y - 5, LEGEND_SWATCH, c);
        snprintf(tail, sizeof tail, " stroke=\"%s\" stroke-width=\"2.5\"%s%s%s/>\n", c,
                 *dash ? " stroke-dasharray=\"" : "", dash, *dash ? "\"" : "");
        svg_line(b, x, y, x + LEGEND_SWATCH, y, tail);
        marker_group(b, i); /* (a path, not a circle: the plot's points are the circles) */
        double r = marker_r(i, 3), mx = x + LEGEND_SWATCH / 2;
        qkv__strbuf_printf(b, "<path d=\"M%.2f %.2fa%.2f %.2f 0 1 0 %.2f 0a%.2f %.2f 0 1 0 %.2f 0z\"/></g>\n", mx - r, y, r,
                           r, 2 * r, r, r, -2 * r);
        svg_text(b, x + LEGEND_SWATCH + 6, y, NULL, "dy=\".35em\" font-size=\"12\" fill=\"#222222\"", s[i].name);
    }
}

/* ---- line plots: series ------------------------------------------------------------------ */

/* the sideways nudge of series i of n_series: with error bars, at most 5 px apart and 30 in all */
static double series_dx(const qkv_svg_plot *p, int i, int n_series) {
    const double dodge = n_series > 1 ? fmin(5, 30.0 / (n_series - 1)) : 0;
    return p->error_bars ? (i - (n_series - 1) / 2.0) * dodge : 0;
}

/* point j of series s has a usable x and band */
static bool band_at(const frame *f, const qkv_svg_series *s, int j) {
    return frame_has(f, s->x[j], s->lo[j]) && usable(s->hi[j], f->ay.log);
}

/* each series' lo..hi as vertical bars with caps, in its colour and nudged aside */
static void svg_error_bars(qkv_strbuf *b, const frame *f, const qkv_svg_plot *p, const qkv_svg_series *s,
                           int n_series) {
    for (int i = 0; i < n_series; i++) {
        if (!s[i].lo || !s[i].hi || !s[i].x) continue;
        qkv__strbuf_printf(b, "<g stroke=\"%s\" stroke-width=\"1.5\">", qkv__svg_color(i));
        for (int j = 0; j < s[i].n; j++) {
            if (!band_at(f, &s[i], j)) continue;
            double x = frame_x(f, s[i].x[j]) + series_dx(p, i, n_series), y0 = frame_y(f, s[i].lo[j]),
                   y1 = frame_y(f, s[i].hi[j]);
            svg_line(b, x, y0, x, y1, "/>");
            for (int k = 0; k < 2; k++) svg_line(b, x - 3, k ? y1 : y0, x + 3, k ? y1 : y0, "/>");
        }
        qkv__strbuf_puts(b, "</g>\n");
    }
}

/* each series' lo..hi as a semi-transparent band in its colour (a thick bar for one point) */
static void svg_bands(qkv_strbuf *b, const frame *f, const qkv_svg_series *s, int n_series) {
    char tail[96];
    for (int i = 0; i < n_series; i++) {
        if (!s[i].lo || !s[i].hi || !s[i].x) continue;
        int cnt = 0, last = -1;
        for (int j = 0; j < s[i].n; j++)
            if (band_at(f, &s[i], j)) {
                cnt++;
                last = j;
            }
        if (cnt == 0) continue;
        const char *c = qkv__svg_color(i);
        if (cnt == 1) {
            snprintf(tail, sizeof tail, " stroke=\"%s\" stroke-width=\"7\" stroke-opacity=\"0.25\"/>\n", c);
            svg_line(b, frame_x(f, s[i].x[last]), frame_y(f, s[i].lo[last]), frame_x(f, s[i].x[last]),
                     frame_y(f, s[i].hi[last]), tail);
            continue;
        }
        qkv__strbuf_printf(b, "<polygon fill=\"%s\" fill-opacity=\"0.18\" stroke=\"none\" points=\"", c);
        for (int j = 0; j < s[i].n; j++)
            if (band_at(f, &s[i], j)) qkv__strbuf_printf(b, "%.2f,%.2f ", frame_x(f, s[i].x[j]), frame_y(f, s[i].hi[j]));
        for (int j = s[i].n - 1; j >= 0; j--)
            if (band_at(f, &s[i], j)) qkv__strbuf_printf(b, "%.2f,%.2f ", frame_x(f, s[i].x[j]), frame_y(f, s[i].lo[j]));
        qkv__strbuf_puts(b, "\"/>\n");
    }
}

/* the plot's dashed horizontal reference line and its label, when it has one on the y axis */
static void svg_hline(qkv_strbuf *b, const frame *f, const qkv_svg_plot *p) {
    if (!p->hline || !usable(p->hline_y, p->log_y)) return;
    double y = frame_y(f, p->hline_y);
    svg_line(b, f->ml, y, f->ml + f->pw, y, " stroke=\"#444444\" stroke-width=\"1.2\" stroke-dasharray=\"6 4\"/>\n");
    /* at the left end, where training curves start low: below the line in the upper half */
    if (p->hline_label)
        svg_text(b, f->ml + 6, y < f->mt + f->ph / 2 ? y + 14 : y - 6, NULL,
                 "fill=\"#444444\" font-size=\"11\" stroke=\"#ffffff\" stroke-width=\"3\" "
                 "paint-order=\"stroke\"", p->hline_label);
}

/* whether series a and b draw the same line: the same x values, each point within NEAR_PX px of
 * the other's (two lines 2 px wide that close hide each other) */
#define NEAR_PX 2.5
static bool same_line(const frame *f, const qkv_svg_series *a, const qkv_svg_series *b) {
    if (!a->y || !b->y || !a->x || !b->x || a->n != b->n || a->n < 1) return false;
    int drawn = 0;
    for (int j = 0; j < a->n; j++) {
        bool ha = frame_has(f, a->x[j], a->y[j]), hb = frame_has(f, b->x[j], b->y[j]);
        if (ha != hb || (ha && (a->x[j] != b->x[j] || fabs(frame_y(f, a->y[j]) - frame_y(f, b->y[j])) > NEAR_PX)))
            return false;
        drawn += ha;
    }
    return drawn > 0;
}

/* how many later series draw series i's line over it: for each of them it is drawn HIDDEN_DX px
 * further left and its line HIDDEN_W px wider, so it shows as a border along theirs (an offset
 * alone would not show along a flat stretch) */
#define HIDDEN_DX 2.5
#define HIDDEN_W 3.0
static int hidden_by(const frame *f, const qkv_svg_series *s, int n_series, int i) {
    int later = 0;
    for (int j = i + 1; j < n_series; j++) later += same_line(f, &s[i], &s[j]);
    return later;
}

/* each series' line in its colour and dash, with dots at its points when there are at most 30 */
static void svg_lines(qkv_strbuf *b, const frame *f, const qkv_svg_plot *p, const qkv_svg_series *s,
                      int n_series) {
    for (int i = 0; i < n_series; i++) {
        if (!s[i].y || !s[i].x) continue;
        const char *c = qkv__svg_color(i), *dash = qkv__svg_dash(i);
        const int under = hidden_by(f, s, n_series, i);
        const double dx = series_dx(p, i, n_series) - HIDDEN_DX * under;
        int cnt = 0;
        for (int j = 0; j < s[i].n; j++)
            if (frame_has(f, s[i].x[j], s[i].y[j])) cnt++;
        if (cnt == 0) continue;
        if (cnt > 1) {
            qkv__strbuf_printf(b, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"%g\" "
                                 "stroke-linejoin=\"round\"", c, 2 + HIDDEN_W * under);
            if (*dash) qkv__strbuf_printf(b, " stroke-dasharray=\"%s\"", dash);
            qkv__strbuf_puts(b, " points=\"");
            for (int j = 0; j < s[i].n; j++)
                if (frame_has(f, s[i].x[j], s[i].y[j]))
                    qkv__strbuf_printf(b, "%.2f,%.2f ", frame_x(f, s[i].x[j]) + dx, frame_y(f, s[i].y[j]));
            qkv__strbuf_puts(b, "\"/>\n");
        }
        if (cnt <= 30) {
            marker_group(b, i);
            for (int j = 0; j < s[i].n; j++)
                if (frame_has(f, s[i].x[j], s[i].y[j]))
                    qkv__strbuf_printf(b, "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"%.2g\"/>", frame_x(f, s[i].x[j]) + dx,
                                       frame_y(f, s[i].y[j]), marker_r(i, cnt == 1 || p->error_bars ? 3.5 : 2.5));
            qkv__strbuf_puts(b, "</g>\n");
        }
    }
}

/* ---- line plots -------------------------------------------------------------------------- */

/* text broken at spaces into lines of at most width px in a font of size fs (a longer word on a
 * line of its own), each appended to b with its NUL; returns their count */
static int wrap(qkv_strbuf *b, const char *text, double width, double fs) {
    int lines = 0;
    while (*text) {
        size_t fit = strlen(text);
        char *line = strdup(text);
        if (!line) return lines;
        while (text_width(line, fs) > width) { /* back to the space before the last word */
            char *sp = strrchr(line, ' ');
            if (!sp || sp == line) break;
            *sp = 0;
        }
        fit = strlen(line);
        free(line);
        qkv__strbuf_putn(b, text, fit);
        qkv__strbuf_putn(b, "", 1);
        lines++;
        text += fit;
        while (*text == ' ') text++;
    }
    return lines;
}

/* for each series drawn over by later ones with the same line, text naming them and the last of
 * those drawn, the one on top ("a, b lie under c"), wrapped to width px (wrap's lines into b);
 * returns the number of lines */
static int hidden_notes(qkv_strbuf *b, const frame *f, const qkv_svg_series *s, int n_series, double width) {
    int lines = 0;
    qkv_strbuf t;
    qkv__strbuf_init(&t);
    for (int top = n_series - 1; top > 0; top--) {
        bool listed = false;
        int hidden = 0;
        for (int j = top + 1; j < n_series; j++) listed |= same_line(f, &s[top], &s[j]); /* under a later one */
        if (listed) continue;
        qkv__strbuf_free(&t);
        for (int i = 0; i < top; i++)
            if (same_line(f, &s[i], &s[top])) qkv__strbuf_printf(&t, "%s%s", hidden++ ? ", " : "", s[i].name);
        if (!hidden) continue;
        qkv__strbuf_printf(&t, " %s under %s (within %g px; drawn wider beneath it, %g px apart to the left)",
                           hidden == 1 ? "lies" : "lie", s[top].name, NEAR_PX, HIDDEN_DX);
        lines += wrap(b, qkv__strbuf_str(&t), width, 11);
    }
    b->oom |= t.oom;
    qkv__strbuf_free(&t);
    return lines;
}

char *qkv__svg_curves(const qkv_svg_plot *p, const qkv_svg_series *s, int n_series) {
    if (!p || n_series < 0 || (n_series > 0 && !s)) return NULL;
    double xmin, xmax, ymin, ymax;
    data_range(p, s, n_series, &xmin, &xmax, &ymin, &ymax);
    const bool have_data = xmin <= xmax;
    frame f = {.ml = 72, .mt = 44, .ph = 300};
    x_axis(&f, p, have_data, xmin, xmax);
    y_axis(&f, p, ymin, ymax);

    /* layout: the legend's widest item widens the picture when it must */
    const double MR = 24;
    double W = p->width > 0 ? p->width : 720;
    const double item_w = legend_item_width(s, n_series);
    if (f.ml + item_w + MR > W) W = f.ml + item_w + MR;
    f.pw = W - f.ml - MR;
    const legend leg = legend_layout(n_series, item_w, f.ml, f.mt + f.ph + 60, f.pw);
    qkv_strbuf note;
    qkv__strbuf_init(&note);
    const int notes = hidden_notes(&note, &f, s, n_series, f.pw);
    const double H = leg.y + leg.nrow * LEGEND_ROW_H + 10 + 16 * notes;

    qkv_strbuf b;
    qkv__strbuf_init(&b);
    svg_header(&b, W, H, p->title, NULL);
    svg_axes(&b, &f, p);
    if (!have_data)
        svg_text(&b, f.ml + f.pw / 2, f.mt + f.ph / 2, "middle", "fill=\"#777777\" font-size=\"14\"", "no data");
    /* bands (or bars) first, then the reference line, then lines on top */
    if (p->error_bars) svg_error_bars(&b, &f, p, s, n_series);
    else svg_bands(&b, &f, s, n_series);
    svg_hline(&b, &f, p);
    svg_lines(&b, &f, p, s, n_series);
    svg_legend(&b, &leg, s, n_series);
    const char *line = qkv__strbuf_str(&note);
    for (int k = 0; k < notes; k++, line += strlen(line) + 1)
        svg_text(&b, f.ml, leg.y + leg.nrow * LEGEND_ROW_H + 8 + 16 * k, NULL, "font-size=\"11\" fill=\"#444444\"",
                 line);
    b.oom |= note.oom;
    qkv__strbuf_free(&note);
    qkv__strbuf_puts(&b, "</svg>\n");
    return qkv__strbuf_take(&b);
}

/* ---- heatmaps ---------------------------------------------------------------------------- */

/* white -> dark blue (a sequential ramp), t in [0, 1] */
static void ramp(double t, char out[8]) {
    static const double stops[5][3] = {
        {255, 255, 255}, {198, 219, 239}, {107, 174, 214}, {33, 113, 181}, {8, 48, 107}};
    if (!(t > 0)) t = 0;
    if (t > 1) t = 1;
    double u = t * 4;
    int k = (int)u;
    if (k > 3) k = 3;
    double f = u - k;
    int c[3];
    for (int j = 0; j < 3; j++) c[j] = (int)lround(stops[k][j] + (stops[k + 1][j] - stops[k][j]) * f);
    snprintf(out, 8, "#%02x%02x%02x", c[0] & 255, c[1] & 255, c[2] & 255);
}

/* quantised colour level of a weight: 0 white ... 255 darkest; -1 not finite */
static int level(float v) {
    if (!isfinite(v)) return -1;
    double t = v < 0 ? 0 : v > 1 ? 1 : (double)v;
    return (int)lround(t * 255);
}

/* a run of cells of one colour level in a row of a heatmap: keys [k0, k1) of query q */
typedef struct cell_run {
    int level, q, k0, k1;
} cell_run;

static int cmp_run(const void *a, const void *b) {
    const cell_run *x = a, *y = b;
    if (x->level != y->level) return x->level < y->level ? -1 : 1;
    if (x->q != y->q) return x->q < y->q ? -1 : 1;
    return (x->k0 > y->k0) - (x->k0 < y->k0);
}

/* token i's tick label: lab[i], or its position (written into buf) without labels */
static const char *tick_label(const char *const *lab, int i, char buf[12]) {
    if (lab) return lab[i];
    snprintf(buf, 12, "%d", i);
    return buf;
}

#define HM_ML 30.0      /* left margin */
#define HM_MR_BAR 84.0  /* right margin, holding the colour bar */
#define HM_GAPX 18.0    /* between panels */
#define HM_GAPY 14.0
#define HM_CAP 18.0     /* a panel's caption */
#define HM_CAP2 32.0    /* a panel's caption with a note below it */

#define HM_BAND 7.0     /* the role band beside an axis, with its gap */
#define HM_LEGEND 18.0  /* the role legend's line */

/* the heatmap's layout: panel and cell sizes, label font and spacing, the picture's size */
typedef struct heat_layout {
    double fs, panel, cell;     /* tick label font size, a panel's side, a cell's side */
    int k;                      /* every k-th token labelled */
    double band;                /* the role band's room beside each axis (0: none) */
    double ylab, xlab;          /* room for the query labels (left) and key labels (below) */
    bool rotate_x;              /* key labels read upwards */
    double cap;                 /* room for a panel's caption (and note) */
    double block_w, block_h;    /* a panel with its labels and gaps */
    double mt, mb, W, H;
} heat_layout;

/* what is drawn: layers x heads panels of T x T weights, their captions (NULL: "layer l, head h")
 * and notes (NULL: none), the tick labels (NULL: positions), the outlined cells (NULL: none), the
 * positions' roles (NULL: none) and the words (NULL: English) */
typedef struct heat_input {
    const char *title, *subtitle, *foot[2];
    int layers, heads, T;
    const float *w;
    const char *const *captions, *const *notes, *const *labels;
    const unsigned char *mark, *roles;
    const qkv_svg_heat_words *words;
    bool no_ticks;
} heat_input;

static const qkv_svg_heat_words ENGLISH = {
    "\xe2\x86\x90 attending position (row)", "attended position (column) \xe2\x86\x92", "weight",
    "position roles:", {"", "key", "value", "query"}, "answer"};

/* word w of in's words, or its English default */
#define WORD(in, w) ((in)->words && (in)->words->w ? (in)->words->w : ENGLISH.w)

/* the role legend's width: the lead, then a swatch and a name per role, then the outline's */
static double legend_width(const heat_input *in) {
    double w = 0;
    if (in->roles) {
        w += text_width(WORD(in, roles), 11) + 8;
        for (int r = 1; r < QKV_ROLE_COUNT; r++) w += 16 + text_width(WORD(in, role[r]), 11) + 12;
    }
    return w + (in->mark ? 16 + text_width(WORD(in, outline), 11) : 0);
}

/* the layout of in's panels with labels of up to maxlab characters: panels sized so the page is
 * about 960 px wide, wide enough for the title, subtitle, legend and the lines below */
static heat_layout heatmap_layout(const heat_input *in, int maxlab) {
    const int layers = in->layers, heads = in->heads, T = in->T;
    heat_layout L = {.fs = 9, .cap = in->notes ? HM_CAP2 : HM_CAP, .band = in->roles ? HM_BAND : 0};
    for (int pass = 0; pass < 2; pass++) {
        double ylab = (in->no_ticks ? 0 : maxlab * L.fs * 0.6) + 6 + L.band;
        L.panel = (960 - HM_ML - HM_MR_BAR) / heads - ylab - HM_GAPX;
        if (L.panel > 300) L.panel = 300;
        if (L.panel > T * 28.0) L.panel = T * 28.0;
        if (L.panel < 96) L.panel = 96;
        L.cell = L.panel / T;
        L.fs = L.cell * 0.85;
        if (L.fs > 9) L.fs = 9;
        if (L.fs < 5) L.fs = 5;
    }
    L.k = 1;
    while (L.k * L.cell < L.fs * 1.15) L.k++;
    if (T > 32 && L.k < (T + 31) / 32) L.k = (T + 31) / 32;
    const double labw = maxlab * L.fs * 0.6;
    L.ylab = labw + 6 + L.band;
    L.rotate_x = labw > L.k * L.cell * 0.9;
    L.xlab = (L.rotate_x ? labw + 8 : L.fs + 8) + L.band;
    if (in->no_ticks) L.ylab = 6 + L.band, L.xlab = 6 + L.band, L.rotate_x = false;
    L.block_w = L.ylab + L.panel + HM_GAPX;
    L.block_h = L.cap + L.panel + L.xlab + HM_GAPY;
    L.mt = (in->subtitle && *in->subtitle ? 62 : 44) + (in->roles || in->mark ? HM_LEGEND : 0);
    int lines = (in->foot[0] && *in->foot[0]) + (in->foot[1] && *in->foot[1]);
    L.mb = 30 + 16 * lines;
    L.W = HM_ML + heads * L.block_w + HM_MR_BAR;
    double need[5] = {in->title ? text_width(in->title, 16) + 40 : 0,
                      in->subtitle ? text_width(in->subtitle, 12) + 40 : 0, in->roles || in->mark ? legend_width(in) + 40 : 0};
    for (int i = 0; i < 2; i++) need[3 + i] = in->foot[i] ? text_width(in->foot[i], 11) + 40 : 0;
    for (int i = 0; i < 5; i++)
        if (L.W < need[i]) L.W = need[i];
    L.H = L.mt + layers * L.block_h + L.mb;
    return L;
}

/* the T x T weights m as cells at (px, py): runs of equal colour along a row merged, white (0)
 * left to the background, then one path per colour (compact: about 30 bytes per run); runs:
 * room for T x T of them */
static void heatmap_cells(qkv_strbuf *b, const heat_layout *L, const float *m, int T, double px, double py,
                          cell_run *runs) {
    const double cell = L->cell;
    char col[8];
    int nr = 0;
    for (int q = 0; q < T; q++) {
        int key = 0;
        while (key < T) {
            int lv = level(m[(size_t)q * T + key]), end = key + 1;
            while (end < T && level(m[(size_t)q * T + end]) == lv) end++;
            if (lv != 0) runs[nr++] = (cell_run){lv, q, key, end};
            key = end;
        }
    }
    qsort(runs, (size_t)nr, sizeof *runs, cmp_run);
    qkv__strbuf_puts(b, "<g shape-rendering=\"crispEdges\">\n");
    for (int i = 0; i < nr; i++) {
        if (i == 0 || runs[i].level != runs[i - 1].level) {
            if (runs[i].level < 0) snprintf(col, sizeof col, "#bbbbbb");
            else ramp(runs[i].level / 255.0, col);
            qkv__strbuf_printf(b, "<path fill=\"%s\" d=\"", col);
        }
        double rw = (runs[i].k1 - runs[i].k0) * cell;
        qkv__strbuf_printf(b, "M%.2f %.2fh%.2fv%.2fh%.2fz", px + runs[i].k0 * cell, py + runs[i].q * cell, rw, cell,
                          -rw);
        if (i == nr - 1 || runs[i + 1].level != runs[i].level) qkv__strbuf_puts(b, "\"/>\n");
    }
    qkv__strbuf_puts(b, "</g>\n");
}

/* a panel's tick labels (every k-th of the T tokens lab, or positions): queries on the left, keys below */
static void heatmap_ticks(qkv_strbuf *b, const heat_layout *L, const char *const *lab, int T, double px,
                          double py) {
    char buf[12];
    qkv__strbuf_printf(b, "<g font-size=\"%.1f\" fill=\"#333333\">\n", L->fs);
    for (int i = 0; i < T; i += L->k)
        svg_text(b, px - 3 - L->band, py + (i + 0.5) * L->cell, "end", "dy=\".35em\"", tick_label(lab, i, buf));
    for (int i = 0; i < T; i += L->k) {
        double x = px + (i + 0.5) * L->cell;
        if (L->rotate_x)
            svg_text_up(b, x, 2, py + L->panel + 3 + L->band, "text-anchor=\"end\" dy=\".35em\"",
                        tick_label(lab, i, buf));
        else svg_text(b, x, py + L->panel + L->fs + 2 + L->band, "middle", NULL, tick_label(lab, i, buf));
    }
    qkv__strbuf_puts(b, "</g>\n");
}

/* the colour bar right of a grid grid_w wide: the ramp from 0 at the bottom to 1 at the top, with
 * ticks at quarters */
static void heatmap_colour_bar(qkv_strbuf *b, const heat_layout *L, double grid_w, const char *title) {
    const int nbar = 50;
    const double panel = L->panel;
    double bx = HM_ML + grid_w + 8, by = L->mt + L->cap, bh = panel < 120 ? 120 : panel > 220 ? 220 : panel;
    char col[8], txt[32];
    qkv__strbuf_puts(b, "<g shape-rendering=\"crispEdges\">\n");
    for (int i = 0; i < nbar; i++) {
        ramp((i + 0.5) / nbar, col);
        qkv__strbuf_printf(b, "<rect x=\"%.2f\" y=\"%.2f\" width=\"14\" height=\"%.2f\" fill=\"%s\"/>\n", bx,
                          by + bh - (i + 1) * bh / nbar, bh / nbar + 0.05, col);
    }
    qkv__strbuf_puts(b, "</g>\n");
    qkv__strbuf_printf(b, "<rect x=\"%.2f\" y=\"%.2f\" width=\"14\" height=\"%.2f\" fill=\"none\" "
                         "stroke=\"#888888\" stroke-width=\"0.8\"/>\n", bx, by, bh);
    qkv__strbuf_puts(b, "<g font-size=\"10\" fill=\"#333333\">\n");
    for (int i = 0; i <= 4; i++) {
        double y = by + bh - i * bh / 4;
        svg_line(b, bx + 14, y, bx + 18, y, " stroke=\"#333333\"/>\n");
        snprintf(txt, sizeof txt, "%.2f", i / 4.0);
        svg_text(b, bx + 21, y, NULL, "dy=\".35em\"", txt);
    }
    qkv__strbuf_puts(b, "</g>\n");
    svg_text(b, bx, by - 12, NULL, "font-size=\"11\" fill=\"#222222\"", title);
}

/* the outlined cells of a panel at (px, py): mark[query * T + key] set */
static void heatmap_marks(qkv_strbuf *b, const heat_layout *L, const unsigned char *mark, int T, double px,
                          double py) {
    qkv__strbuf_puts(b, "<path fill=\"none\" stroke=\"#e15759\" stroke-width=\"1.5\" d=\"");
    for (int q = 0; q < T; q++)
        for (int k = 0; k < T; k++)
            if (mark[(size_t)q * T + k])
                qkv__strbuf_printf(b, "M%.2f %.2fh%.2fv%.2fh%.2fz", px + k * L->cell, py + q * L->cell, L->cell,
                                   L->cell, -L->cell);
    qkv__strbuf_puts(b, "\"/>\n");
}

static const char *const ROLE_COLOUR[QKV_ROLE_COUNT] = {"", "#f28e2b", "#59a14f", "#b07aa1"};

/* the positions' roles as bands of colour left of a panel at (px, py) (beside its rows) and below
 * it (beside its columns), a cell's side long each */
static void heatmap_roles(qkv_strbuf *b, const heat_layout *L, const unsigned char *roles, int T, double px,
                          double py) {
    const double w = L->band - 2;
    for (int r = 1; r < QKV_ROLE_COUNT; r++) {
        qkv__strbuf_printf(b, "<path fill=\"%s\" d=\"", ROLE_COLOUR[r]);
        for (int i = 0; i < T; i++)
            if (roles[i] == r)
                qkv__strbuf_printf(b, "M%.2f %.2fh%.2fv%.2fh%.2fzM%.2f %.2fh%.2fv%.2fh%.2fz", px - L->band,
                                   py + i * L->cell, w, L->cell, -w, px + i * L->cell, py + L->panel + 2, L->cell, w,
                                   -L->cell);
        qkv__strbuf_puts(b, "\"/>\n");
    }
}

/* the legend of the roles' colours (and of the outline) centred at y */
static void heatmap_legend(qkv_strbuf *b, const heat_input *in, double W, double y) {
    double x = (W - legend_width(in)) / 2;
    if (in->roles) {
        svg_text(b, x, y, NULL, "font-size=\"11\" fill=\"#222222\"", WORD(in, roles));
        x += text_width(WORD(in, roles), 11) + 8;
    }
    for (int r = 1; in->roles && r < QKV_ROLE_COUNT; r++) {
        qkv__strbuf_printf(b, "<rect x=\"%.2f\" y=\"%.2f\" width=\"11\" height=\"11\" fill=\"%s\"/>\n", x, y - 9,
                           ROLE_COLOUR[r]);
        svg_text(b, x + 16, y, NULL, "font-size=\"11\" fill=\"#222222\"", WORD(in, role[r]));
        x += 16 + text_width(WORD(in, role[r]), 11) + 12;
    }
    if (!in->mark) return;
    qkv__strbuf_printf(b, "<rect x=\"%.2f\" y=\"%.2f\" width=\"10\" height=\"10\" fill=\"none\" stroke=\"#e15759\" "
                          "stroke-width=\"1.5\"/>\n", x + 0.5, y - 8.5);
    svg_text(b, x + 16, y, NULL, "font-size=\"11\" fill=\"#222222\"", WORD(in, outline));
}

/* the picture: the panels (layer l's head h at row l, column h), axis titles and colour bar */
static void heatmap_draw(qkv_strbuf *b, const heat_layout *L, const heat_input *in, cell_run *runs) {
    const int layers = in->layers, heads = in->heads, T = in->T;
    const size_t TT = (size_t)T * (size_t)T;
    char txt[64];
    svg_header(b, L->W, L->H, in->title, in->subtitle);
    for (int l = 0; l < layers; l++) {
        for (int h = 0; h < heads; h++) {
            const size_t i = (size_t)l * (size_t)heads + (size_t)h;
            const float *m = in->w + i * TT;
            double px = HM_ML + h * L->block_w + L->ylab, py = L->mt + l * L->block_h + L->cap;
            snprintf(txt, sizeof txt, "layer %d, head %d", l, h);
            double cy = in->notes ? py - 20 : py - 6;
            if (in->captions)
                svg_text(b, px + L->panel / 2, cy, "middle", "font-size=\"12\" font-weight=\"bold\" fill=\"#222222\"",
                         in->captions[i]);
            else svg_text(b, px + L->panel / 2, cy, "middle", "font-size=\"11\" fill=\"#222222\"", txt);
            if (in->notes)
                svg_text(b, px + L->panel / 2, py - 6, "middle", "font-size=\"10\" fill=\"#444444\"", in->notes[i]);
            heatmap_cells(b, L, m, T, px, py, runs);
            qkv__strbuf_printf(b, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"none\" "
                                 "stroke=\"#888888\" stroke-width=\"0.8\"/>\n", px, py, L->panel, L->panel);
            if (in->mark) heatmap_marks(b, L, in->mark, T, px, py);
            if (in->roles) heatmap_roles(b, L, in->roles, T, px, py);
            if (!in->no_ticks) heatmap_ticks(b, L, in->labels, T, px, py);
        }
    }
    double grid_w = heads * L->block_w;
    if (in->roles || in->mark) heatmap_legend(b, in, L->W, L->mt - HM_LEGEND + 2);
    double y = L->H - L->mb + 20;
    svg_text(b, HM_ML + grid_w / 2, y, "middle", "font-size=\"12\" fill=\"#222222\"", WORD(in, x_title));
    for (int i = 0; i < 2; i++)
        if (in->foot[i] && *in->foot[i])
            svg_text(b, L->W / 2, y += 16, "middle", "font-size=\"11\" fill=\"#333333\"", in->foot[i]);
    svg_text_up(b, 14, 0, L->mt + layers * L->block_h / 2, "text-anchor=\"middle\" font-size=\"12\" fill=\"#222222\"",
                WORD(in, y_title));
    heatmap_colour_bar(b, L, grid_w, WORD(in, bar));
    qkv__strbuf_puts(b, "</svg>\n");
}

/* in drawn; NULL when out of memory or bad sizes */
static char *heatmap_svg(const heat_input *in) {
    const int layers = in->layers, heads = in->heads, T = in->T;
    if (!in->w || layers < 1 || heads < 1 || T < 1 || layers > 4096 || heads > 4096 || T > 65536) return NULL;
    cell_run *runs = malloc((size_t)T * (size_t)T * sizeof *runs);
    if (!runs) return NULL;
    int maxlab = 1;
    char buf[12];
    for (int i = 0; i < T; i++) {
        int n = utf8_len(tick_label(in->labels, i, buf));
        if (n > maxlab) maxlab = n;
    }
    const heat_layout L = heatmap_layout(in, maxlab);
    qkv_strbuf b;
    qkv__strbuf_init(&b);
    heatmap_draw(&b, &L, in, runs);
    free(runs);
    return qkv__strbuf_take(&b);
}

char *qkv__svg_heatmap(const char *title, const char *subtitle, int layers, int heads, int T,
                      const float *w, const char *const *labels) {
    const heat_input in = {title, subtitle, {NULL, NULL}, layers, heads, T, w, NULL, NULL, labels, NULL, NULL, NULL,
                           false};
    return heatmap_svg(&in);
}

char *qkv__svg_heatmap_grid(const qkv_svg_panels *p) {
    if (!p->captions) return NULL;
    const heat_input in = {p->title, p->subtitle, {p->foot[0], p->foot[1]}, p->rows, p->cols, p->T, p->w,
                           p->captions, p->notes, p->labels, p->mark, p->roles, p->words, p->no_ticks};
    return heatmap_svg(&in);
}
