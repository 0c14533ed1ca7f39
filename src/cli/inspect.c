/* qkv inspect: what a trained run's heads do, from its directory: the shape of every layer's and
 * head's score matrix (symmetric or directional) and where its queries look. */
#include "cli/cli.h"
#include "cli/options.h"
#include "io/strbuf.h"
#include "train/observe.h"
#include "train/run_dir.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct {
    const char *dir;
} inspect_args;

static const qkv_cli_option OPTIONS[] = {
    QKV_HELP,
    QKV_OPTIONS_END,
};

static const qkv_cli_command COMMAND = {
    "inspect", "RUN_DIR [OPTION]...",
    "Print, for the trained model in RUN_DIR (its config.json and model.safetensors), every\n"
    "layer's and head's score matrix M = W_q W_k^T described (docs/ablate.md, \"Attention\n"
    "diagnostics\"): its symmetry score (1 symmetric, -1 antisymmetric, 0 neither), the negative\n"
    "share of its symmetric part's eigenvalue mass (0 for a tied Q = K), and the mean weight its\n"
    "queries put on their own position and on the one just before it (a previous-token head's\n"
    "mark) over the run's first 256 evaluation examples. Nothing is written.",
    "RUN_DIR", OPTIONS,
};

/* x with 3 decimals, or "-" when it is not a number */
static void show(double x) {
    if (isfinite(x)) printf("  %8.3f", x);
    else printf("  %8s", "-");
}

int qkv__cmd_inspect(int argc, char **argv) {
    inspect_args a = {0};
    int rc = qkv__cli_parse(&COMMAND, argc, argv, &a, &a.dir);
    if (rc >= 0) return rc;
    if (!a.dir) {
        qkv__cli_error("inspect", "missing RUN_DIR (try 'qkv inspect --help')");
        return QKV_EXIT_USAGE;
    }
    char err[1024], *path = qkv__pathf("%s/" QKV_RUN_CONFIG, a.dir);
    if (!path) {
        qkv__cli_error("inspect", "out of memory");
        return QKV_EXIT_FAIL;
    }
    qkv_config cfg;
    int bad = qkv__cli_load_config("inspect", path, NULL, 0, &cfg);
    char *model = bad ? NULL : qkv__pathf("%s/" QKV_RUN_MODEL, a.dir);
    qkv_err e;
    if (!bad && !model) qkv_err_set(&e, QKV_ERR_FAIL, "out of memory");
    else if (!bad) qkv_config_check_model_file(model, &cfg, path, &e); /* config.json edited since? */
    free(path);
    free(model);
    if (bad) return QKV_EXIT_USAGE;
    if (e.code != QKV_ERR_OK) return qkv__cli_exit("inspect", &e);
    qkv__cli_set_threads(1); /* as the run that recorded them: one BLAS thread, the same bits */
    qkv_observed o;
    if (qkv__run_observation(&cfg, a.dir, 0, 0, &o, err, sizeof err)) {
        qkv__cli_error("inspect", "%s", err);
        return QKV_EXIT_FAIL;
    }
    printf("%s: qkv %s%s%s, %d layers x %d heads\n", a.dir, QKV_ATTN_QKV_NAMES[cfg.model.attn.qkv],
           cfg.model.attn.diff ? ", diff (its first map)" : "", cfg.model.attn.talking_heads ? ", talking_heads" : "",
           o.layers, o.heads);
    printf("layer  head  symmetry  negative  diagonal  previous\n");
    double sum[4] = {0};
    int cnt[4] = {0};
    for (int l = 0; l < o.layers; l++)
        for (int h = 0; h < o.heads; h++) {
            size_t i = (size_t)l * o.heads + h;
            double v[4] = {o.symmetry[i], o.negative_mass[i], o.diag_share[i], o.prev_share[i]};
            printf("%5d  %4d", l, h);
            for (int k = 0; k < 4; k++) {
                show(v[k]);
                if (isfinite(v[k])) sum[k] += v[k], cnt[k]++;
            }
            printf("\n");
        }
    printf("mean       ");
    for (int k = 0; k < 4; k++) show(cnt[k] ? sum[k] / cnt[k] : NAN);
    printf("\nsymmetry: (|M_s|^2 - |M_a|^2) / |M|^2 of M = W_q W_k^T; negative: the negative share of M_s's "
           "eigenvalue mass; diagonal: the mean weight a query puts on its own position; previous: on the position "
           "just before it (a previous-token head's mark)\n");
    qkv__observed_free(&o);
    return QKV_EXIT_OK;
}
