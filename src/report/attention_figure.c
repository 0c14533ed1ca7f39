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

/* the earlier positions k (>= 1) holding target t right after a copy of token key */
static int follows(const qkv_heatmap *m, int q, int32_t key, int32_t t, unsigned char *row) {
    int n = 0;
    for (int k = 1; k < q; k++)
        if (m->tokens[k] == t && m->tokens[k - 1] == key) row[k] = 1, n++;
    return n;
}

void qkv__answer_cells(const qkv_heatmap *m, unsigned char *mark, unsigned char *roles) {
    const int T = m->T;
    memset(mark, 0, (size_t)T * (size_t)T);
    if (roles) memset(roles, QKV_ROLE_NONE, (size_t)T);
    for (int q = 0; q < T; q++) {
        const int32_t t = m->targets[q];
        if (t == NO_TARGET) continue;
        unsigned char *row = mark + (size_t)q * T;
        /* the value stored right after the row's key: the row's token, or a blank's query before it */
        int asked = q;
        if (!follows(m, q, m->tokens[q], t, row) && q > 0 && follows(m, q, m->tokens[q - 1], t, row)) asked = q - 1;
        bool paired = false;
        for (int k = 0; k < q; k++) paired |= row[k];
        if (!paired) /* no key before it: every earlier copy of the token to predict */
            for (int k = 0; k < q; k++) row[k] = m->tokens[k] == t;
        if (!roles || !paired) continue;
        for (int r = asked; r <= q; r++) roles[r] = QKV_ROLE_QUERY;
        for (int k = 1; k < q; k++)
            if (row[k]) roles[k] = QKV_ROLE_VALUE, roles[k - 1] = QKV_ROLE_KEY;
    }
}

int qkv__attention_panel(const qkv_heatmap *m, int layer, qkv_attention_panel *p) {
    memset(p, 0, sizeof *p);
    const int T = m->T, H = m->heads;
    if (!m->w || layer < 0 || layer >= m->layers || H < 1 || T < 1) return -1;
    const size_t TT = (size_t)T * (size_t)T;
    unsigned char *mark = malloc(TT);
    if (!mark || !(p->w = calloc(TT, sizeof *p->w))) return free(mark), -1;
    qkv__answer_cells(m, mark, NULL);
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
            if (mark[(size_t)q * T + k]) answer += row[k];
    }
    free(mark);
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

/* the words of a figure in one language */
typedef struct figure_words {
    const char *title, *subtitle, *subtitle_heads; /* title: %d the example; subtitle_heads: %d heads */
    const char *caption, *note;                     /* caption: %s the run, %d the layer; note: %.2f x 3 */
    const char *foot[2];
    qkv_svg_heat_words heat;
} figure_words;

static const figure_words WORDS[QKV_FIGURE_LANGS] = {
    {"Where each position looks: evaluation example #%d",
     "each layer, mean over its heads; tick labels: input tokens",
     "each layer, mean over its %d heads; tick labels: input tokens",
     "%s, layer %d",
     "own %.2f \xc2\xb7 previous %.2f \xc2\xb7 answer %.2f",
     {"Read the query rows: a model that retrieves puts its weight (dark) on the outlined cell, the value "
      "stored right after the query's key.",
      "Under each panel, the mean weight the query rows put on that cell (answer), on their own position (own) "
      "and on the one before (previous)."},
     {"\xe2\x86\x90 attending position (row)", "attended position (column) \xe2\x86\x92", "weight",
      "position roles:", {"", "key", "value", "query"}, "answer: the value of the query's key"}},
    {"每个位置看向哪里：评估样例 #%d",
     "每层：其各头的平均；刻度：输入的词元编号",
     "每层：其 %d 个头的平均；刻度：输入的词元编号",
     "%s，第 %d 层",
     "自身 %.2f \xc2\xb7 前一位 %.2f \xc2\xb7 答案 %.2f",
     {"看查询的那几行：会检索的模型把权重（深色）放在红框格上，即该查询的键后面紧跟着存的值。",
      "每个面板下的数：查询行放在红框格上的平均权重（答案）、放在自身位置（自身）和前一位置（前一位）上的。"},
     {"\xe2\x86\x90 关注者：发出注意力的位置（行）", "被关注者：被注意的位置（列） \xe2\x86\x92", "权重",
      "位置的角色：", {"", "键", "值", "查询"}, "答案：查询的键所对应的值"}},
};

int qkv__attention_figure(const qkv_heatmap *maps, const char *const *names, int n, int example, int lang, char **svg,
                          qkv_err *e) {
    *svg = NULL;
    if (lang < 0 || lang >= QKV_FIGURE_LANGS) return qkv_err_set(e, QKV_ERR_USAGE, "no such language: %d", lang);
    const figure_words *W = &WORDS[lang];
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
    unsigned char *mark = calloc(TT, 1), *roles = calloc((size_t)T, 1);
    char(*text)[2][QKV_ABLATE_NAME + 96] = calloc((size_t)np, sizeof *text);
    char(*labels)[16] = calloc((size_t)T, sizeof *labels);
    const char **caps = calloc((size_t)np, sizeof *caps), **notes = calloc((size_t)np, sizeof *notes);
    const char **label_p = calloc((size_t)T, sizeof *label_p);
    int rc = -1, heads = m0->heads;
    bool same_heads = true;
    if (!w || !mark || !roles || !text || !labels || !caps || !notes || !label_p) goto oom;
    for (int l = 0; l < L; l++)
        for (int i = 0; i < n; i++) { /* layer l of run i at row l, column i */
            const int k = l * n + i;
            qkv_attention_panel p;
            if (qkv__attention_panel(&maps[i], l, &p)) goto oom;
            memcpy(w + (size_t)k * TT, p.w, TT * sizeof *w);
            free(p.w);
            snprintf(text[k][0], sizeof text[k][0], W->caption, names[i], l + 1);
            snprintf(text[k][1], sizeof text[k][1], W->note, p.own, p.prev, p.answer);
            caps[k] = text[k][0];
            notes[k] = text[k][1];
            same_heads &= maps[i].heads == heads;
        }
    qkv__answer_cells(m0, mark, roles);
    bool any_role = false;
    for (int t = 0; t < T; t++) {
        snprintf(labels[t], sizeof labels[t], "%d", (int)m0->tokens[t]);
        label_p[t] = labels[t];
        any_role |= roles[t] != QKV_ROLE_NONE;
    }
    char title[160], sub[320];
    snprintf(title, sizeof title, W->title, example);
    if (same_heads) snprintf(sub, sizeof sub, W->subtitle_heads, heads);
    else snprintf(sub, sizeof sub, "%s", W->subtitle);
    const qkv_svg_panels sp = {title, sub, {W->foot[0], W->foot[1]}, L, n, T, w, caps, notes, label_p, mark,
                               any_role ? roles : NULL, &W->heat, false};
    if (!(*svg = qkv__svg_heatmap_grid(&sp))) goto oom;
    rc = 0;
    goto done;
oom:
    qkv_err_set(e, QKV_ERR_FAIL, "out of memory");
done:
    free(w);
    free(mark);
    free(roles);
    free(text);
    free(labels);
    free(caps);
    free(notes);
    free(label_p);
    return rc;
}
