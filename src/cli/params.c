/* qkv params: the parameter count of a config's model, per module and in total. */
#include "cli/cli.h"
#include "cli/options.h"
#include "train/memory.h"
#include "nn/model.h"
#include "tasks/task.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *config;
    qkv_cli_list sets;
    bool all;
} params_args;

static const qkv_cli_option OPTIONS[] = {
    QKV_LIST("--set", "KEY=VALUE", params_args, sets, "override a config key (repeatable)"),
    QKV_FLAG("--all", params_args, all, "one row per parameter tensor (with its shape) instead of per module"),
    QKV_HELP,
    QKV_OPTIONS_END,
};

static const qkv_cli_command COMMAND = {
    "params", "CONFIG [OPTION]...",
    "Print the parameters of CONFIG's model: one row per module (one per tensor with --all),\n"
    "the total, and the attention's share, so the claim \"Q, K and V cost 3 x d_model^2\"\n"
    "can be checked for every variant.",
    "CONFIG", OPTIONS,
};

/* out += ", " (unless first) and the formatted text, truncated to n bytes */
static void add_option(char *out, size_t n, const char *fmt, ...) {
    size_t k = strlen(out);
    if (k && k + 2 < n) strcpy(out + k, ", "), k += 2;
    va_list ap;
    va_start(ap, fmt);
    if (k < n) vsnprintf(out + k, n - k, fmt, ap);
    va_end(ap);
}

/* the attention options that differ from their defaults, into out ("" if none): each row's label
 * of nn/attn_options.h, in the order of their ranks */
#define SHOW_LABEL(shown, ...) \
    if (shown) add_option(out, n, __VA_ARGS__);
#define LABEL_ROW(kind, ctype, name, def, lo, hi, names, doc, label_rank, label, rule) \
    if (rank == (label_rank)) SHOW_LABEL label
static void options_of(const qkv_attn_config *a, int heads, char *out, size_t n) {
    out[0] = 0;
    for (int rank = 1; rank <= QKV_ATTN_LABEL_RANKS; rank++) {
        QKV_ATTN_OPTIONS(LABEL_ROW)
    }
}

/* the module a parameter belongs to: its name without the last component */
static void module_of(const char *name, char *out, size_t n) {
    snprintf(out, n, "%s", name);
    char *dot = strrchr(out, '.');
    if (dot) *dot = 0;
}

/* the parsed command run: the table on stdout; 0, or -1 with e */
static int params_run(const params_args *a, qkv_err *e) {
    bool all = a->all;
    if (!a->config) return qkv_err_set(e, QKV_ERR_USAGE, "missing CONFIG (try 'qkv params --help')");
    qkv_config cfg;
    if (qkv__cli_load_config(a->config, a->sets.v, a->sets.n, &cfg, e)) return -1;
    qkv_task task;
    qkv_model_config mc = cfg.model;
    qkv_model *m = NULL;
    int bad = qkv_task_open(&task, &cfg.task, 0, e) || qkv_task_fit_model(&task, &mc, e) ||
              qkv_check_memory(&mc, cfg.train.batch, 8 * qkv_model_param_count(&mc), "parameters and their gradients",
                               e);
    if (!bad && !(m = qkv_model_new(&mc, QKV_F32, 0, e))) bad = -1;
    qkv_task_close(&task);
    if (bad) return -1;
    int d = mc.d_model, hd = mc.d_model / mc.heads;
    printf("model: d_model %d, heads %d (head_dim %d), layers %d, d_ff %d, vocab %d, seq_len %d\n",
           d, mc.heads, hd, mc.layers, mc.d_ff, mc.vocab, mc.seq_len);
    printf("attention: qkv %s, scale %s, gate %s, rel_pos_bias %s\n", QKV_ATTN_QKV_NAMES[mc.attn.qkv],
           QKV_ATTN_SCALE_NAMES[mc.attn.scale], QKV_ATTN_GATE_NAMES[mc.attn.gate],
           mc.attn.rel_pos_bias ? "on" : "off");
    char opts[512];
    options_of(&mc.attn, mc.heads, opts, sizeof opts);
    if (opts[0]) printf("options: %s\n", opts);
    printf("\n");
    printf("%-34s %12s  %s\n", all ? "parameter" : "module", "parameters", all ? "shape" : "tensors");
    int64_t total = m->params.numel, qkv_proj = 0;
    for (int i = 0; i < m->params.n;) {
        const qkv_param *p = m->params.items[i];
        char mod[96], other[96], shape[64];
        module_of(p->name, mod, sizeof mod);
        const char *leaf = strrchr(mod, '.') ? strrchr(mod, '.') + 1 : mod;
        bool proj = strstr(p->name, ".attn.") && strcmp(leaf, "wo") && strcmp(leaf, "fc_out") &&
                    strcmp(leaf, "wg") && strcmp(leaf, "rel_pos");
        if (all) {
            printf("%-34s %12lld  %s\n", p->name, (long long)p->t.numel,
                   qkv_shape_str(p->t.ndim, p->t.shape, shape, sizeof shape));
            if (proj) qkv_proj += p->t.numel;
            i++;
            continue;
        }
        int64_t n = 0;
        int k = 0;
        for (; i < m->params.n; i++, k++) {
            module_of(m->params.items[i]->name, other, sizeof other);
            if (strcmp(other, mod)) break;
            n += m->params.items[i]->t.numel;
        }
        if (proj) qkv_proj += n;
        printf("%-34s %12lld  %d\n", mod, (long long)n, k);
    }
    int64_t attn = qkv_model_attention_params(m);
    printf("%-34s %12lld\n\n", "total", (long long)total);
    printf("attention modules (all layers): %lld (%.1f%% of the model)\n", (long long)attn,
           100.0 * (double)attn / (double)total);
    printf("Q/K/V projections per layer:    %lld = %.3g x d_model^2 (the answer's claim: 3 x d_model^2 = %lld)\n",
           (long long)(qkv_proj / mc.layers), (double)(qkv_proj / mc.layers) / ((double)d * d), 3LL * d * d);
    printf("Q/K/V projections, all layers:  %lld (%.1f%% of the model)\n", (long long)qkv_proj,
           100.0 * (double)qkv_proj / (double)total);
    qkv_model_free(m);
    return 0;
}

int qkv__cmd_params(int argc, char **argv) {
    params_args a = {0};
    qkv_err e;
    if (!qkv__cli_parse(&COMMAND, argc, argv, &a, &a.config, &e) && !params_run(&a, &e)) qkv_err_clear(&e);
    free(a.sets.v);
    return qkv__cli_exit("params", &e);
}
