/* qkv gradcheck: the whole model's gradient against finite differences, per tensor. */
#include "cli/cli.h"
#include "cli/options.h"
#include "train/memory.h"
#include "nn/model_check.h"
#include "tasks/task.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *config;
    qkv_cli_list sets;
    long long batch, seq, sample, small, seed;
    bool pad;
} gradcheck_args;

static const qkv_cli_option OPTIONS[] = {
    QKV_LIST("--set", "KEY=VALUE", gradcheck_args, sets, "override a config key (repeatable)"),
    QKV_INT("--batch", "N", gradcheck_args, batch, 1, 64, "sequences in the checked batch (default 2)"),
    QKV_INT("--seq", "N", gradcheck_args, seq, 1, 4096,
            "positions per sequence (default: the model's seq_len, at most 16)"),
    QKV_INT("--sample", "N", gradcheck_args, sample, 1, 1000000,
            "elements checked in each large tensor, a seeded sample (default 24)"),
    QKV_INT("--small", "N", gradcheck_args, small, 0, 100000000,
            "tensors with fewer than N elements are checked whole (default 256)"),
    QKV_INT("--seed", "N", gradcheck_args, seed, 0, 1LL << 53,
            "model initialisation, batch and sample (default: train.seed)"),
    QKV_FLAG("--pad", gradcheck_args, pad, "also pass a padding mask that hides some keys"),
    QKV_HELP,
    QKV_OPTIONS_END,
};

/* the largest excess over the n tensors' statistics */
static double worst_excess(const qkv_gradcheck_stat *st, int n) {
    double w = 0;
    for (int i = 0; i < n; i++)
        if (st[i].max_excess > w) w = st[i].max_excess;
    return w;
}

static const qkv_cli_command COMMAND = {
    "gradcheck", "CONFIG [OPTION]...",
    "Check d loss / d parameter for every parameter tensor of CONFIG's model against central\n"
    "finite differences, in double precision (eps 1e-6; an element passes when\n"
    "|analytic - numeric| <= 1e-5 + 1e-3 |numeric|). Prints the worst error per tensor and\n"
    "PASS or FAIL; exit status 0 when all pass, 1 otherwise.",
    "CONFIG", OPTIONS,
};

/* the parsed command run: the check's table on stdout, *failed its failed elements; 0, or -1 with e */
static int gradcheck_run(const gradcheck_args *a, int64_t *failed, qkv_err *e) {
    if (!a->config) return qkv_err_set(e, QKV_ERR_USAGE, "missing CONFIG (try 'qkv gradcheck --help')");
    qkv_config cfg;
    if (qkv__cli_load_config(a->config, a->sets.v, a->sets.n, &cfg, e)) return -1;
    qkv_task task;
    qkv_model_config mc = cfg.model;
    int bad = qkv_task_open(&task, &cfg.task, 0, e) || qkv_task_fit_model(&task, &mc, e);
    qkv_task_close(&task);
    if (bad) return -1;
    qkv_model_check opt = {.batch = (int)a->batch,
                           .seq_len = (int)(a->seq ? a->seq : (mc.seq_len < 16 ? mc.seq_len : 16)),
                           .sample = a->sample, .small = a->small,
                           .seed = (uint64_t)(a->seed >= 0 ? a->seed : cfg.train.seed), .pad = a->pad};
    /* double precision: parameters and gradients at 8 bytes, activations at twice the float estimate */
    if (qkv_check_memory(&mc, opt.batch, 16 * qkv_model_param_count(&mc) +
                               2 * qkv_model_activation_bytes(&mc, opt.batch, opt.seq_len),
                               "double-precision parameters and activations", e))
        return -1;
    qkv_model *m;
    qkv_gradcheck_stat *st;
    if (qkv_model_gradcheck(&mc, &opt, &m, &st, e) < 0) return -1;
    printf("gradcheck: qkv %s, %d layers, d_model %d, batch %d x %d positions, double precision\n",
           QKV_ATTN_QKV_NAMES[mc.attn.qkv], mc.layers, mc.d_model, opt.batch, opt.seq_len);
    printf("%-34s %15s %14s %12s  %s\n", "parameter", "checked", "max|a-n|", "max excess", "result");
    int64_t checked = 0;
    double worst = 0;
    *failed = 0;
    for (int i = 0; i < m->params.n; i++) {
        char ck[40];
        snprintf(ck, sizeof ck, "%lld/%lld", (long long)st[i].checked, (long long)m->params.items[i]->t.numel);
        printf("%-34s %15s %14.3g %12.3g  %s\n", m->params.items[i]->name, ck, st[i].max_abs_err,
               st[i].max_excess, st[i].failed ? "FAIL" : "PASS");
        checked += st[i].checked;
        *failed += st[i].failed;
        if (st[i].max_abs_err > worst) worst = st[i].max_abs_err;
    }
    printf("%s: %lld elements in %d tensors checked, %lld failed, largest |analytic - numeric| %.3g\n",
           *failed ? "FAIL" : "PASS", (long long)checked, m->params.n, (long long)*failed, worst);
    printf("how to read it: checked, the elements compared (a sample of a large tensor); max|a-n|, the largest "
           "difference between the analytic and the finite-difference gradient; max excess, that difference over "
           "its allowance 1e-5 + 1e-3 |numeric|: an element passes at 1 or below, so %.3g is %.2g times inside\n",
           worst_excess(st, m->params.n), worst_excess(st, m->params.n) > 0 ? 1 / worst_excess(st, m->params.n) : 0);
    free(st);
    qkv_model_free(m);
    return 0;
}

int qkv__cmd_gradcheck(int argc, char **argv) {
    gradcheck_args a = {.batch = 2, .sample = 24, .small = 256, .seed = -1};
    qkv_err e;
    int64_t failed = 0;
    if (!qkv__cli_parse(&COMMAND, argc, argv, &a, &a.config, &e) && !gradcheck_run(&a, &failed, &e))
        qkv_err_clear(&e);
    free(a.sets.v);
    if (failed) return qkv__cli_exit_status(QKV_ERR_FAIL); /* the table's last line said so */
    return qkv__cli_exit("gradcheck", &e);
}
