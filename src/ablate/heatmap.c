/* A run's recorded attention of its fixed evaluation example (train/observe.h) as a heatmap, for
 * the figures that set several runs side by side (qkv inspect --figure): read, never computed. */
#include "ablate/results.h"

#include "io/strbuf.h"
#include "train/observe.h"
#include "train/run_dir.h"

#include <stdlib.h>
#include <string.h>

int qkv__run_heatmap(const char *dir, qkv_heatmap *h, int *example, qkv_err *e) {
    memset(h, 0, sizeof *h);
    qkv_observed o;
    int got = qkv__run_observed(dir, &o, e);
    if (got > 0)
        return qkv_err_set(e, QKV_ERR_USAGE, "%s/%s: missing: the run recorded no attention (a run of a qkv before "
                           "it: qkv ablate CONFIG --out DIR --refresh records it)", qkv__shown(dir).s, QKV_RUN_OBSERVED);
    if (got) return -1;
    *h = (qkv_heatmap){o.layers, o.heads, o.T, o.w, o.tokens, o.targets};
    *example = o.example;
    o.w = NULL;
    o.tokens = o.targets = NULL;
    qkv__observed_free(&o);
    return 0;
}

void qkv__heatmap_free(qkv_heatmap *h) {
    free(h->w);
    free(h->tokens);
    free(h->targets);
    memset(h, 0, sizeof *h);
}
