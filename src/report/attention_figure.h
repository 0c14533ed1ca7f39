/* Internal: one example's attention in several runs side by side (qkv inspect --figure), drawn
 * from what the runs recorded (ablate/results.h's qkv_heatmap, read by qkv__run_heatmap). */
#ifndef QKV_REPORT_ATTENTION_FIGURE_H
#define QKV_REPORT_ATTENTION_FIGURE_H

#include "qkv_api.h"

#include "ablate/results.h"
#include "report/svg.h"

/* What a panel shows of a run: one layer's weights averaged over its heads, (T, T)
 * [query][key]; as the study's diagnostics count them (train/observe.h) but on this one example,
 * the mean weight a row puts on its own position and on the one before it; and over the rows that
 * have a target, the mean weight on the earlier positions holding the token they must predict. */
typedef struct qkv_attention_panel {
    float *w;
    double own, prev, answer;       /* NaN: no row to average */
    int rows;                       /* the rows with a target */
} qkv_attention_panel;

/* the languages of a figure's words (qkv inspect --figure --lang) */
enum { QKV_FIGURE_EN, QKV_FIGURE_ZH, QKV_FIGURE_LANGS };

/* where each query row of map finds its answer, into mark (T, T): the earlier position holding the
 * row's target right after a copy of the row's key (its own token, or with a blank the query token
 * before it), the value a recall query asks for and not other copies of that token; a row whose
 * key is nowhere before it gets every earlier copy of its target. roles (T, or NULL): each
 * position as QKV_ROLE_KEY, _VALUE or _QUERY (report/svg.h) as the rows whose key was found
 * show them, else QKV_ROLE_NONE */
QKV_INTERNAL void qkv__answer_cells(const qkv_heatmap *map, unsigned char *mark, unsigned char *roles);

/* layer `layer` of map as a panel into *p (p->w malloc'd); -1 when out of memory, map is empty or
 * has no such layer */
QKV_INTERNAL int qkv__attention_panel(const qkv_heatmap *map, int layer, qkv_attention_panel *p);

/* maps[0..n) (1 <= n <= 16) of one example (evaluation example `example`: the same tokens,
 * targets and number of layers in each, else a usage error naming the first that differs, with
 * names[i] naming map i): layer l of map i as the panel at row l, column i, captioned "names[i],
 * layer l+1" with its shares, the answer's cells outlined, the positions' roles banded beside the
 * axes, in language lang (QKV_FIGURE_*); the SVG malloc'd into *svg: 0, or -1 with e */
QKV_INTERNAL int qkv__attention_figure(const qkv_heatmap *maps, const char *const *names, int n, int example,
                                       int lang, char **svg, qkv_err *e);

#endif
