/* A tiny SVG writer for the ablation report (see svg.h). */
#include "report/svg.h"
#include "io/strbuf.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FONT "system-ui,-apple-system,'Segoe UI',Roboto,Helvetica,Arial,sans-serif"

/* ---- axes -------------------------------------------------------------------------------- */

double qkv_svg_nice_step(double span, int target) {
    if (!(span > 0) || !isfinite(span)) return 1;
    if (target < 1) target = 1;
    double raw = span / target;
    double e = pow(10, floor(log10(raw)));
    double f = raw / e;
    double nice = f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10;
    return nice * e;
}

int qkv_svg_ticks(double lo, double hi, double step, double *out, int max) {
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

int qkv_svg_log_ticks(double lo, double hi, double *out, int max) {
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

void qkv_svg_format_tick(char *dst, size_t n, double v) {
    if (fabs(v) < 1e15 && fabs(v - round(v)) < 1e-9 * fmax(1, fabs(v)))
        snprintf(dst, n, "%.0f", round(v) == 0 ? 0.0 : round(v));
    else
        snprintf(dst, n, "%.4g", v);
}

static const char *const PALETTE[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                      "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
#define N_PALETTE ((int)(sizeof PALETTE / sizeof PALETTE[0]))

const char *qkv_svg_color(int i) { return PALETTE[(i < 0 ? -i : i) % N_PALETTE]; }

const char *qkv_svg_dash(int i) {
    static const char *const dashes[] = {"", "7 3", "2 2", "7 2 2 2"};
    return dashes[((i < 0 ? -i : i) / N_PALETTE) % 4];
}

/* ---- shared helpers ---------------------------------------------------------------------- */

/* characters (not bytes) of UTF-8 text */
static int utf8_len(const char *s) {
    int n = 0;
    for (; s && *s; s++)
        if (((unsigned char)*s & 0xC0) != 0x80) n++;
    return n;
}

/* a rough width of text in a sans-serif font of size fs */
static double text_width(const char *s, double fs) { return utf8_len(s) * fs * 0.6; }

static void svg_open(qkv_strbuf *b, double w, double h) {
    qkv_strbuf_printf(b,
                      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
                      "viewBox=\"0 0 %.0f %.0f\" font-family=\"%s\" font-size=\"11\">\n",
                      w, h, w, h, FONT);
    qkv_strbuf_printf(b, "<rect width=\"%.0f\" height=\"%.0f\" fill=\"#ffffff\"/>\n", w, h);
}

static void svg_text(qkv_strbuf *b, double x, double y, const char *anchor, const char *extra,
                     const char *text) {
    qkv_strbuf_printf(b, "<text x=\"%.2f\" y=\"%.2f\"", x, y);
    if (anchor && *anchor) qkv_strbuf_printf(b, " text-anchor=\"%s\"", anchor);
    if (extra && *extra) qkv_strbuf_printf(b, " %s", extra);
    qkv_strbuf_puts(b, ">");
    qkv_strbuf_escape_xml(b, text);
    qkv_strbuf_puts(b, "</text>\n");
}

/* ---- line plots -------------------------------------------------------------------------- */

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

char *qkv_svg_curves(const qkv_svg_plot *p, const qkv_svg_series *s, int n_series) {
    if (!p || n_series < 0 || (n_series > 0 && !s)) return NULL;
    const bool lg = p->log_y, lx = p->log_x;

    /* data ranges */
    double xmin = INFINITY, xmax = -INFINITY, ymin = INFINITY, ymax = -INFINITY;
    for (int i = 0; i < n_series; i++) {
        for (int j = 0; j < s[i].n; j++) {
            if (!s[i].x || !usable(s[i].x[j], lx)) continue;
            const double vals[3] = {s[i].y ? s[i].y[j] : NAN, s[i].lo ? s[i].lo[j] : NAN,
                                    s[i].hi ? s[i].hi[j] : NAN};
            bool any = false;
            for (int k = 0; k < 3; k++) {
                if (!usable(vals[k], lg)) continue;
                any = true;
                ymin = fmin(ymin, vals[k]);
                ymax = fmax(ymax, vals[k]);
            }
            if (any) {
                xmin = fmin(xmin, s[i].x[j]);
                xmax = fmax(xmax, s[i].x[j]);
            }
        }
    }
    bool have_data = xmin <= xmax;

    /* x axis (linear: from 0 when the data starts close to it, as steps do; log: decades) */
    double xticks[MAX_TICKS];
    axis ax;
    int nxt;
    if (lx) {
        double l0 = have_data ? log10(xmin) : -1, l1 = have_data ? log10(xmax) : 1;
        double pad = l1 - l0 < 1e-9 ? 0.25 : (l1 - l0) * 0.06;
        ax = (axis){l0 - pad, l1 + pad, true};
        nxt = qkv_svg_log_ticks(pow(10, ax.lo), pow(10, ax.hi), xticks, MAX_TICKS);
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
        double xstep = qkv_svg_nice_step(xmax - xmin, 6);
        ax = (axis){floor(xmin / xstep) * xstep, ceil(xmax / xstep) * xstep, false};
        if (!(ax.hi > ax.lo)) ax.hi = ax.lo + xstep;
        nxt = qkv_svg_ticks(ax.lo, ax.hi, xstep, xticks, MAX_TICKS);
    }

    /* the caller's x ticks instead, those on the axis */
    if (p->x_ticks && p->n_x_ticks > 0) {
        nxt = 0;
        for (int i = 0; i < p->n_x_ticks && nxt < MAX_TICKS; i++) {
            double v = p->x_ticks[i];
            if (!usable(v, lx)) continue;
            double t = lx ? log10(v) : v;
            if (t >= ax.lo - 1e-9 * fabs(ax.lo) && t <= ax.hi + 1e-9 * fabs(ax.hi)) xticks[nxt++] = v;
        }
    }

    /* y axis */
    double yticks[MAX_TICKS];
    int nyt = 0;
    axis ay = {0, 1, lg};
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
        ay.lo = l0;
        ay.hi = l1;
        nyt = qkv_svg_log_ticks(pow(10, l0), pow(10, l1), yticks, MAX_TICKS);
        if (nyt < 3) {  /* a very short range: plain nice steps */
            double a = pow(10, l0), c = pow(10, l1);
            nyt = qkv_svg_ticks(a, c, qkv_svg_nice_step(c - a, 7), yticks, MAX_TICKS);
        }
    } else {
        if (ymax - ymin < 1e-12 * fmax(1, fabs(ymax))) {
            double pad = fmax(0.5, fabs(ymax) * 0.1);
            ymin -= pad;
            ymax += pad;
        }
        double ystep = qkv_svg_nice_step(ymax - ymin, 5);
        if (!p->fixed_y) {
            ymin = floor(ymin / ystep) * ystep;
            ymax = ceil(ymax / ystep) * ystep;
        }
        ay.lo = ymin;
        ay.hi = ymax;
        nyt = qkv_svg_ticks(ymin, ymax, ystep, yticks, MAX_TICKS);
    }

    /* layout */
    const double fs_leg = 12, row_h = 18, swatch = 26;
    double W = p->width > 0 ? p->width : 720;
    const double ML = 72, MR = 24, MT = 44, PH = 300;
    double item_w = 0;
    for (int i = 0; i < n_series; i++)
        item_w = fmax(item_w, swatch + 8 + text_width(s[i].name, fs_leg) + 18);
    if (ML + item_w + MR > W) W = ML + item_w + MR;
    const double PW = W - ML - MR;
    int ncol = item_w > 0 ? (int)(PW / item_w) : 1;
    if (ncol < 1) ncol = 1;
    if (ncol > n_series && n_series > 0) ncol = n_series;
    int nrow = n_series > 0 ? (n_series + ncol - 1) / ncol : 0;
    const double leg_y = MT + PH + 60;
    double H = leg_y + nrow * row_h + 10;

#define XP(v) (ML + axis_t(&ax, (v)) * PW)
#define YP(v) (MT + PH - axis_t(&ay, (v)) * PH)

    qkv_strbuf b;
    qkv_strbuf_init(&b);
    svg_open(&b, W, H);
    if (p->title) svg_text(&b, W / 2, 26, "middle", "font-size=\"16\" font-weight=\"bold\"", p->title);

    /* grid and ticks */
    char lab[64];
    qkv_strbuf_puts(&b, "<g stroke=\"#e3e3e3\" stroke-width=\"1\">\n");
    for (int i = 0; i < nyt; i++)
        qkv_strbuf_printf(&b, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\"/>\n", ML,
                          YP(yticks[i]), ML + PW, YP(yticks[i]));
    for (int i = 0; i < nxt; i++)
        qkv_strbuf_printf(&b, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\"/>\n", XP(xticks[i]),
                          MT, XP(xticks[i]), MT + PH);
    qkv_strbuf_puts(&b, "</g>\n<g stroke=\"#333333\" stroke-width=\"1\">\n");
    qkv_strbuf_printf(&b, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\"/>\n", ML, MT, ML, MT + PH);
    qkv_strbuf_printf(&b, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\"/>\n", ML, MT + PH,
                      ML + PW, MT + PH);
    for (int i = 0; i < nyt; i++)
        qkv_strbuf_printf(&b, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\"/>\n", ML - 5,
                          YP(yticks[i]), ML, YP(yticks[i]));
    for (int i = 0; i < nxt; i++)
        qkv_strbuf_printf(&b, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\"/>\n", XP(xticks[i]),
                          MT + PH, XP(xticks[i]), MT + PH + 5);
    qkv_strbuf_puts(&b, "</g>\n<g fill=\"#333333\">\n");
    for (int i = 0; i < nyt; i++) {
        qkv_svg_format_tick(lab, sizeof lab - 2, p->percent_y ? yticks[i] * 100 : yticks[i]);
        if (p->percent_y) strcat(lab, "%");
        svg_text(&b, ML - 8, YP(yticks[i]), "end", "dy=\".35em\"", lab);
    }
    for (int i = 0; i < nxt; i++) {
        qkv_svg_format_tick(lab, sizeof lab, xticks[i]);
        svg_text(&b, XP(xticks[i]), MT + PH + 18, "middle", NULL, lab);
    }
    if (p->xlabel) svg_text(&b, ML + PW / 2, MT + PH + 38, "middle", "font-size=\"12\"", p->xlabel);
    if (p->ylabel) {
        qkv_strbuf_printf(&b, "<text transform=\"translate(16,%.2f) rotate(-90)\" text-anchor=\"middle\" "
                              "font-size=\"12\">", MT + PH / 2);
        qkv_strbuf_escape_xml(&b, p->ylabel);
        qkv_strbuf_puts(&b, "</text>\n");
    }
    qkv_strbuf_puts(&b, "</g>\n");
    if (!have_data) svg_text(&b, ML + PW / 2, MT + PH / 2, "middle", "fill=\"#777777\" font-size=\"14\"",
                             "no data");

    /* error bars: series i drawn dx[i] pixels aside (at most 5 apart, 30 in all) */
    const double dodge = n_series > 1 ? fmin(5, 30.0 / (n_series - 1)) : 0;
#define DX(i) (p->error_bars ? ((i) - (n_series - 1) / 2.0) * dodge : 0)

    /* bands (or bars) first, then the reference line, then lines on top */
    for (int i = 0; p->error_bars && i < n_series; i++) {
        if (!s[i].lo || !s[i].hi || !s[i].x) continue;
        qkv_strbuf_printf(&b, "<g stroke=\"%s\" stroke-width=\"1.5\">", qkv_svg_color(i));
        for (int j = 0; j < s[i].n; j++) {
            if (!usable(s[i].x[j], lx) || !usable(s[i].lo[j], lg) || !usable(s[i].hi[j], lg)) continue;
            double x = XP(s[i].x[j]) + DX(i), y0 = YP(s[i].lo[j]), y1 = YP(s[i].hi[j]);
            qkv_strbuf_printf(&b, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\"/>", x, y0, x, y1);
            for (int k = 0; k < 2; k++)
                qkv_strbuf_printf(&b, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\"/>", x - 3,
                                  k ? y1 : y0, x + 3, k ? y1 : y0);
        }
        qkv_strbuf_puts(&b, "</g>\n");
    }
    for (int i = 0; !p->error_bars && i < n_series; i++) {
        if (!s[i].lo || !s[i].hi || !s[i].x) continue;
        int cnt = 0, last = -1;
        for (int j = 0; j < s[i].n; j++)
            if (usable(s[i].x[j], lx) && usable(s[i].lo[j], lg) && usable(s[i].hi[j], lg)) {
                cnt++;
                last = j;
            }
        if (cnt == 0) continue;
        const char *c = qkv_svg_color(i);
        if (cnt == 1) {
            qkv_strbuf_printf(&b, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"%s\" "
                                  "stroke-width=\"7\" stroke-opacity=\"0.25\"/>\n",
                              XP(s[i].x[last]), YP(s[i].lo[last]), XP(s[i].x[last]), YP(s[i].hi[last]), c);
            continue;
        }
        qkv_strbuf_printf(&b, "<polygon fill=\"%s\" fill-opacity=\"0.18\" stroke=\"none\" points=\"", c);
        for (int j = 0; j < s[i].n; j++)
            if (usable(s[i].x[j], lx) && usable(s[i].lo[j], lg) && usable(s[i].hi[j], lg))
                qkv_strbuf_printf(&b, "%.2f,%.2f ", XP(s[i].x[j]), YP(s[i].hi[j]));
        for (int j = s[i].n - 1; j >= 0; j--)
            if (usable(s[i].x[j], lx) && usable(s[i].lo[j], lg) && usable(s[i].hi[j], lg))
                qkv_strbuf_printf(&b, "%.2f,%.2f ", XP(s[i].x[j]), YP(s[i].lo[j]));
        qkv_strbuf_puts(&b, "\"/>\n");
    }
    if (p->hline && usable(p->hline_y, lg)) {
        double y = YP(p->hline_y);
        qkv_strbuf_printf(&b, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#444444\" "
                              "stroke-width=\"1.2\" stroke-dasharray=\"6 4\"/>\n", ML, y, ML + PW, y);
        /* at the left end, where training curves start low: below the line in the upper half */
        if (p->hline_label)
            svg_text(&b, ML + 6, y < MT + PH / 2 ? y + 14 : y - 6, NULL,
                     "fill=\"#444444\" font-size=\"11\" stroke=\"#ffffff\" stroke-width=\"3\" "
                     "paint-order=\"stroke\"", p->hline_label);
    }
    for (int i = 0; i < n_series; i++) {
        if (!s[i].y || !s[i].x) continue;
        const char *c = qkv_svg_color(i), *dash = qkv_svg_dash(i);
        int cnt = 0;
        for (int j = 0; j < s[i].n; j++)
            if (usable(s[i].x[j], lx) && usable(s[i].y[j], lg)) cnt++;
        if (cnt == 0) continue;
        if (cnt > 1) {
            qkv_strbuf_printf(&b, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" "
                                  "stroke-linejoin=\"round\"", c);
            if (*dash) qkv_strbuf_printf(&b, " stroke-dasharray=\"%s\"", dash);
            qkv_strbuf_puts(&b, " points=\"");
            for (int j = 0; j < s[i].n; j++)
                if (usable(s[i].x[j], lx) && usable(s[i].y[j], lg))
                    qkv_strbuf_printf(&b, "%.2f,%.2f ", XP(s[i].x[j]) + DX(i), YP(s[i].y[j]));
            qkv_strbuf_puts(&b, "\"/>\n");
        }
        if (cnt <= 30) {
            qkv_strbuf_printf(&b, "<g fill=\"%s\">", c);
            for (int j = 0; j < s[i].n; j++)
                if (usable(s[i].x[j], lx) && usable(s[i].y[j], lg))
                    qkv_strbuf_printf(&b, "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"%s\"/>", XP(s[i].x[j]) + DX(i),
                                      YP(s[i].y[j]), cnt == 1 || p->error_bars ? "3.5" : "2.5");
            qkv_strbuf_puts(&b, "</g>\n");
        }
    }

    /* legend: a grid below the plot */
    for (int i = 0; i < n_series; i++) {
        int row = i / ncol, col = i % ncol;
        double x = ML + col * item_w, y = leg_y + row * row_h;
        const char *c = qkv_svg_color(i), *dash = qkv_svg_dash(i);
        qkv_strbuf_printf(&b, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"10\" fill=\"%s\" "
                              "fill-opacity=\"0.18\"/>\n", x, y - 5, swatch, c);
        qkv_strbuf_printf(&b, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"%s\" "
                              "stroke-width=\"2.5\"", x, y, x + swatch, y, c);
        if (*dash) qkv_strbuf_printf(&b, " stroke-dasharray=\"%s\"", dash);
        qkv_strbuf_puts(&b, "/>\n");
        svg_text(&b, x + swatch + 6, y, NULL, "dy=\".35em\" font-size=\"12\" fill=\"#222222\"", s[i].name);
    }
#undef DX
#undef XP
#undef YP
    qkv_strbuf_puts(&b, "</svg>\n");
    return qkv_strbuf_take(&b);
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

char *qkv_svg_heatmap(const char *title, const char *subtitle, int layers, int heads, int T,
                      const float *w, const char *const *labels) {
    if (!w || layers < 1 || heads < 1 || T < 1 || layers > 4096 || heads > 4096 || T > 65536) return NULL;
    cell_run *runs = malloc((size_t)T * (size_t)T * sizeof *runs);
    if (!runs) return NULL;

    /* tick labels (positions when none are given) */
    char **own = NULL;
    const char *const *lab = labels;
    if (!lab) {
        own = calloc((size_t)T, sizeof *own);
        if (!own) {
            free(runs);
            return NULL;
        }
        for (int i = 0; i < T; i++) {
            own[i] = malloc(12);
            if (!own[i]) {
                for (int j = 0; j < i; j++) free(own[j]);
                free(own);
                free(runs);
                return NULL;
            }
            snprintf(own[i], 12, "%d", i);
        }
        lab = (const char *const *)own;
    }
    int maxlab = 1;
    for (int i = 0; i < T; i++) {
        int n = utf8_len(lab[i]);
        if (n > maxlab) maxlab = n;
    }

    /* layout: panels sized so the page is about 960 px wide */
    const double ML = 30, MR_BAR = 84, GAPX = 18, GAPY = 14, CAP = 18;
    double fs = 9, panel = 0, cell = 0;
    for (int pass = 0; pass < 2; pass++) {
        double ylab = maxlab * fs * 0.6 + 6;
        panel = (960 - ML - MR_BAR) / heads - ylab - GAPX;
        if (panel > 300) panel = 300;
        if (panel > T * 28.0) panel = T * 28.0;
        if (panel < 96) panel = 96;
        cell = panel / T;
        fs = cell * 0.85;
        if (fs > 9) fs = 9;
        if (fs < 5) fs = 5;
    }
    int k = 1;
    while (k * cell < fs * 1.15) k++;
    if (T > 32 && k < (T + 31) / 32) k = (T + 31) / 32;
    const double labw = maxlab * fs * 0.6;
    const double ylab = labw + 6;
    const bool rotate_x = labw > k * cell * 0.9;
    const double xlab = rotate_x ? labw + 8 : fs + 8;
    const double block_w = ylab + panel + GAPX, block_h = CAP + panel + xlab + GAPY;
    const double MT = subtitle && *subtitle ? 62 : 44, MB = 30;
    double W = ML + heads * block_w + MR_BAR;
    double tw = title ? text_width(title, 16) + 40 : 0, sw = subtitle ? text_width(subtitle, 12) + 40 : 0;
    if (W < tw) W = tw;
    if (W < sw) W = sw;
    const double H = MT + layers * block_h + MB;

    qkv_strbuf b;
    qkv_strbuf_init(&b);
    svg_open(&b, W, H);
    if (title) svg_text(&b, W / 2, 26, "middle", "font-size=\"16\" font-weight=\"bold\"", title);
    if (subtitle && *subtitle) svg_text(&b, W / 2, 46, "middle", "font-size=\"12\" fill=\"#444444\"", subtitle);

    const size_t TT = (size_t)T * (size_t)T;
    char col[8], txt[64];
    for (int l = 0; l < layers; l++) {
        for (int h = 0; h < heads; h++) {
            const float *m = w + ((size_t)l * (size_t)heads + (size_t)h) * TT;
            double px = ML + h * block_w + ylab, py = MT + l * block_h + CAP;
            snprintf(txt, sizeof txt, "layer %d, head %d", l, h);
            svg_text(&b, px + panel / 2, py - 6, "middle", "font-size=\"11\" fill=\"#222222\"", txt);
            /* cells: runs of equal colour along a row merged, white (0) left to the background,
             * then one path per colour (compact: about 30 bytes per run) */
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
            qkv_strbuf_puts(&b, "<g shape-rendering=\"crispEdges\">\n");
            for (int i = 0; i < nr; i++) {
                if (i == 0 || runs[i].level != runs[i - 1].level) {
                    if (runs[i].level < 0) snprintf(col, sizeof col, "#bbbbbb");
                    else ramp(runs[i].level / 255.0, col);
                    qkv_strbuf_printf(&b, "<path fill=\"%s\" d=\"", col);
                }
                double rw = (runs[i].k1 - runs[i].k0) * cell;
                qkv_strbuf_printf(&b, "M%.2f %.2fh%.2fv%.2fh%.2fz", px + runs[i].k0 * cell, py + runs[i].q * cell,
                                  rw, cell, -rw);
                if (i == nr - 1 || runs[i + 1].level != runs[i].level) qkv_strbuf_puts(&b, "\"/>\n");
            }
            qkv_strbuf_puts(&b, "</g>\n");
            qkv_strbuf_printf(&b, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"none\" "
                                  "stroke=\"#888888\" stroke-width=\"0.8\"/>\n", px, py, panel, panel);
            /* tick labels: query tokens on the left, key tokens below */
            qkv_strbuf_printf(&b, "<g font-size=\"%.1f\" fill=\"#333333\">\n", fs);
            for (int i = 0; i < T; i += k)
                svg_text(&b, px - 3, py + (i + 0.5) * cell, "end", "dy=\".35em\"", lab[i]);
            for (int i = 0; i < T; i += k) {
                double x = px + (i + 0.5) * cell;
                if (rotate_x) {
                    qkv_strbuf_printf(&b, "<text transform=\"translate(%.2f,%.2f) rotate(-90)\" "
                                          "text-anchor=\"end\" dy=\".35em\">", x, py + panel + 3);
                    qkv_strbuf_escape_xml(&b, lab[i]);
                    qkv_strbuf_puts(&b, "</text>\n");
                } else {
                    svg_text(&b, x, py + panel + fs + 2, "middle", NULL, lab[i]);
                }
            }
            qkv_strbuf_puts(&b, "</g>\n");
        }
    }

    /* axis titles */
    double grid_w = heads * block_w;
    svg_text(&b, ML + grid_w / 2, H - 10, "middle", "font-size=\"12\" fill=\"#222222\"",
             "key (attended position) \xe2\x86\x92");
    qkv_strbuf_printf(&b, "<text transform=\"translate(14,%.2f) rotate(-90)\" text-anchor=\"middle\" "
                          "font-size=\"12\" fill=\"#222222\">", MT + layers * block_h / 2);
    qkv_strbuf_escape_xml(&b, "\xe2\x86\x90 query (attending position)");
    qkv_strbuf_puts(&b, "</text>\n");

    /* colour bar: 0 at the bottom, 1 at the top */
    const int nbar = 50;
    double bx = ML + grid_w + 8, by = MT + CAP, bh = panel < 120 ? 120 : panel > 220 ? 220 : panel;
    qkv_strbuf_puts(&b, "<g shape-rendering=\"crispEdges\">\n");
    for (int i = 0; i < nbar; i++) {
        ramp((i + 0.5) / nbar, col);
        qkv_strbuf_printf(&b, "<rect x=\"%.2f\" y=\"%.2f\" width=\"14\" height=\"%.2f\" fill=\"%s\"/>\n", bx,
                          by + bh - (i + 1) * bh / nbar, bh / nbar + 0.05, col);
    }
    qkv_strbuf_puts(&b, "</g>\n");
    qkv_strbuf_printf(&b, "<rect x=\"%.2f\" y=\"%.2f\" width=\"14\" height=\"%.2f\" fill=\"none\" "
                          "stroke=\"#888888\" stroke-width=\"0.8\"/>\n", bx, by, bh);
    qkv_strbuf_puts(&b, "<g font-size=\"10\" fill=\"#333333\">\n");
    for (int i = 0; i <= 4; i++) {
        double y = by + bh - i * bh / 4;
        qkv_strbuf_printf(&b, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#333333\"/>\n",
                          bx + 14, y, bx + 18, y);
        snprintf(txt, sizeof txt, "%.2f", i / 4.0);
        svg_text(&b, bx + 21, y, NULL, "dy=\".35em\"", txt);
    }
    qkv_strbuf_puts(&b, "</g>\n");
    svg_text(&b, bx, by - 12, NULL, "font-size=\"11\" fill=\"#222222\"", "weight");

    qkv_strbuf_puts(&b, "</svg>\n");
    free(runs);
    if (own) {
        for (int i = 0; i < T; i++) free(own[i]);
        free(own);
    }
    return qkv_strbuf_take(&b);
}
