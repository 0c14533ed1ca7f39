/* One example's attention in several runs side by side: a panel per run and layer, the layer's
 * heads averaged (a rule that picks no head or layer by how it looks), with the two shares that
 * tell a query drawn to itself from one that finds its answer. */
#include "report/attention_figure.h"

#include "io/strbuf.h"
#include "report/svg.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PANELS 16
#define NO_TARGET (-100) /* a position without a loss (qkv_heatmap's targets) */

/* whether earlier position k holds the token query row q must predict (the answer's place) */
static bool answer_at(const qkv_heatmap *m, int q, int k) {
    return k < q && m->targets[q] != NO_TARGET && m->tokens[k] == m->targets[q];
}

int qkv__attention_panel(const qkv_heatmap *m, int layer, qkv_attention_panel *p) {
    memset(p, 0, sizeof *p);
    const int T = m->T, H = m->heads;
    if (!m->w || layer < 0 || layer >= m->layers || H < 1 || T < 1) return -1;
    const size_t TT = (size_t)T * (size_t)T;
    if (!(p->w = calloc(TT, sizeof *p->w))) return -1;
    /* w: (layers, heads, T, T); the layer's heads, averaged in double */
    const float *wl = m->w + (size_t)layer * (size_t)H * TT;
    for (size_t i = 0; i < TT; i++) {
        double s = 0;
        for (int h = 0; h < H; h++) s += wl[(size_t)h * TT + i];
        p->w[i] = (float)(s / H);
    }
    /* own and previous as the study's diagnostics count them (train/observe.c), on this example */
    double own = 0, prev = 0, answer = 0;
    int rows = 0, prev_rows = 0;
    for (int q = 0; q < T; q++) {
        const float *row = p->w + (size_t)q * T;
        double sum = 0;
        for (int k = 0; k < T; k++) sum += row[k];
        if (sum >= 0.5) { /* a fully masked row attends nowhere */
            own += row[q];
            rows++;
            if (q > 0) prev += row[q - 1], prev_rows++;
        }
        if (m->targets[q] == NO_TARGET) continue;
        p->rows++;
        for (int k = 0; k < q; k++)
            if (answer_at(m, q, k)) answer += row[k];
    }
    p->own = rows ? own / rows : NAN;
    p->prev = prev_rows ? prev / prev_rows : NAN;
    p->answer = p->rows ? answer / p->rows : NAN;
    return 0;
}

/* maps[i] is of the same example as maps[0]: 0, or -1 with e naming both */
static int same_example(const qkv_heatmap *maps, const char *const *names, int i, qkv_err *e) {
    const qkv_heatmap *a = &maps[0], *b = &maps[i];
    if (a->layers != b->layers)
        return qkv_err_set(e, QKV_ERR_USAGE, "%s has %d layers, %s %d: a figure sets layer beside layer",
                           qkv__shown(names[0]).s, a->layers, qkv__shown(names[i]).s, b->layers);
    bool same = a->T == b->T && !memcmp(a->tokens, b->tokens, (size_t)a->T * sizeof *a->tokens) &&
                !memcmp(a->targets, b->targets, (size_t)a->T * sizeof *a->targets);
    if (!same)
        return qkv_err_set(e, QKV_ERR_USAGE, "%s and %s recorded different examples (%d and %d tokens%s): a figure "
                           "sets one example side by side", qkv__shown(names[0]).s, qkv__shown(names[i]).s, a->T,
                           b->T, a->T == b->T ? ", others" : "");
    return 0;
}

int qkv__attention_figure(const qkv_heatmap *maps, const char *const *names, int n, int example, char **svg,
                          qkv_err *e) {
    *svg = NULL;
    if (n < 1 || n > MAX_PANELS)
        return qkv_err_set(e, QKV_ERR_USAGE, "a figure has 1 to %d runs, not %d", MAX_PANELS, n);
    for (int i = 0; i < n; i++) {
        if (!maps[i].w || maps[i].layers < 1 || maps[i].heads < 1 || maps[i].T < 1)
            return qkv_err_set(e, QKV_ERR_USAGE, "%s: no attention weights recorded", qkv__shown(names[i]).s);
        if (i && same_example(maps, names, i, e)) return -1;
    }
    const qkv_heatmap *m0 = &maps[0];
    const int T = m0->T, L = m0->layers, np = L * n;
    const size_t TT = (size_t)T * (size_t)T;
    float *w = malloc((size_t)np * TT * sizeof *w);
    unsigned char *mark = calloc(TT, 1);
    char(*text)[2][QKV_ABLATE_NAME + 96] = calloc((size_t)np, sizeof *text);
    char(*labels)[16] = calloc((size_t)T, sizeof *labels);
    const char **caps = calloc((size_t)np, sizeof *caps), **notes = calloc((size_t)np, sizeof *notes);
    const char **label_p = calloc((size_t)T, sizeof *label_p);
    int rc = -1, heads = m0->heads;
    bool same_heads = true;
    if (!w || !mark || !text || !labels || !caps || !notes || !label_p) goto oom;
    for (int l = 0; l < L; l++)
        for (int i = 0; i < n; i++) { /* layer l of run i at row l, column i */
            const int k = l * n + i;
            qkv_attention_panel p;
            if (qkv__attention_panel(&maps[i], l, &p)) goto oom;
            memcpy(w + (size_t)k * TT, p.w, TT * sizeof *w);
            free(p.w);
            snprintf(text[k][0], sizeof text[k][0], "%s, layer %d", names[i], l + 1);
            snprintf(text[k][1], sizeof text[k][1], "own %.2f \xc2\xb7 previous %.2f \xc2\xb7 answer %.2f", p.own, p.prev,
                     p.answer);
            caps[k] = text[k][0];
            notes[k] = text[k][1];
            same_heads &= maps[i].heads == heads;
        }
    for (int q = 0; q < T; q++)
        for (int k = 0; k < T; k++) mark[(size_t)q * T + k] = answer_at(m0, q, k);
    for (int t = 0; t < T; t++) {
        snprintf(labels[t], sizeof labels[t], "%d", (int)m0->tokens[t]);
        label_p[t] = labels[t];
    }
    char title[96], sub[320], hs[32] = "";
    snprintf(title, sizeof title, "Where each query looks: evaluation example #%d", example);
    if (same_heads) snprintf(hs, sizeof hs, "%d ", heads);
    snprintf(sub, sizeof sub, "each layer, mean over its %sheads; row: query, column: key; tick labels: input tokens",
             hs);
    const char *foot = "own, previous: mean weight on a row's own, previous position; answer: on the outlined "
                       "cells (earlier positions holding the token to predict)";
    const qkv_svg_panels sp = {title, sub, foot, L, n, T, w, caps, notes, label_p, mark};
    if (!(*svg = qkv__svg_heatmap_grid(&sp))) goto oom;
    rc = 0;
    goto done;
oom:
    qkv_err_set(e, QKV_ERR_FAIL, "out of memory");
done:
    free(w);
    free(mark);
    free(text);
    free(labels);
    free(caps);
    free(notes);
    free(label_p);
    return rc;
}
