/* qkv gradcheck: the whole model's gradient against finite differences, per tensor. */
#include "cli/cli.h"
#include "train/memory.h"
#include "nn/model_check.h"
#include "tasks/task.h"

#include <stdlib.h>
#include <string.h>

static const char USAGE[] =
    "usage: qkv gradcheck CONFIG [--set KEY=VALUE]... [--batch N] [--seq N] [--sample N]\n"
    "                     [--small N] [--seed N] [--pad]\n"
    "\n"
    "Check d loss / d parameter for every parameter tensor of CONFIG's model against central\n"
    "finite differences, in double precision (eps 1e-6; an element passes when\n"
    "|analytic - numeric| <= 1e-5 + 1e-3 |numeric|). Prints the worst error per tensor and\n"
    "PASS or FAIL; exit status 0 when all pass, 1 otherwise.\n"
    "\n"
    "options:\n"
    "  --batch N   sequences in the checked batch (default 2)\n"
    "  --seq N     positions per sequence (default: the model's seq_len, at most 16)\n"
    "  --sample N  elements checked in each large tensor, a seeded sample (default 24)\n"
    "  --small N   tensors with fewer than N elements are checked whole (default 256)\n"
    "  --seed N    model initialisation, batch and sample (default: train.seed)\n"
    "  --pad       also pass a padding mask that hides some keys\n";

int qkv_cmd_gradcheck(int argc, char **argv) {
    const char *cfg_path = NULL, *v;
    const char **sets = calloc((size_t)argc, sizeof *sets);
    int nsets = 0, rc = QKV_EXIT_USAGE;
    long long batch = 2, seq = 0, sample = 24, small = 256, seed = -1;
    bool missing = false, pad = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) { fputs(USAGE, stdout); free(sets); return 0; }
        if (qkv_cli_opt(argc, argv, &i, "--set", &v, &missing)) { if (!missing) sets[nsets++] = v; }
        else if (qkv_cli_opt(argc, argv, &i, "--batch", &v, &missing)) { if (!missing && !qkv_cli_int("gradcheck", "--batch", v, 1, 64, &batch)) goto done; }
        else if (qkv_cli_opt(argc, argv, &i, "--seq", &v, &missing)) { if (!missing && !qkv_cli_int("gradcheck", "--seq", v, 1, 4096, &seq)) goto done; }
        else if (qkv_cli_opt(argc, argv, &i, "--sample", &v, &missing)) { if (!missing && !qkv_cli_int("gradcheck", "--sample", v, 1, 1000000, &sample)) goto done; }
        else if (qkv_cli_opt(argc, argv, &i, "--small", &v, &missing)) { if (!missing && !qkv_cli_int("gradcheck", "--small", v, 0, 100000000, &small)) goto done; }
        else if (qkv_cli_opt(argc, argv, &i, "--seed", &v, &missing)) { if (!missing && !qkv_cli_int("gradcheck", "--seed", v, 0, (1LL << 53), &seed)) goto done; }
        else if (!strcmp(a, "--pad")) pad = true;
        else if (a[0] == '-' && a[1]) { qkv_cli_error("gradcheck", "unknown option '%s' (try 'qkv gradcheck --help')", a); goto done; }
        else if (!cfg_path) cfg_path = a;
        else { qkv_cli_error("gradcheck", "unexpected argument '%s'", a); goto done; }
        if (missing) { qkv_cli_error("gradcheck", "%s needs a value", a); goto done; }
    }
    if (!cfg_path) { qkv_cli_error("gradcheck", "missing CONFIG (try 'qkv gradcheck --help')"); goto done; }
    qkv_config cfg;
    if (qkv_cli_load_config("gradcheck", cfg_path, sets, nsets, &cfg)) goto done;
    rc = QKV_EXIT_FAIL;
    char err[1024];
    qkv_task task;
    qkv_model_config mc = cfg.model;
    if (qkv_task_open(&task, &cfg.task, 0, err, sizeof err) || qkv_task_fit_model(&task, &mc, err, sizeof err)) {
        qkv_task_close(&task);
        qkv_cli_error("gradcheck", "%s", err);
        goto done;
    }
    qkv_task_close(&task);
    qkv_model_check opt = {.batch = (int)batch, .seq_len = (int)(seq ? seq : (mc.seq_len < 16 ? mc.seq_len : 16)),
                           .sample = sample, .small = small,
                           .seed = (uint64_t)(seed >= 0 ? seed : cfg.train.seed), .pad = pad};
    /* double precision: parameters and gradients at 8 bytes, activations at twice the float estimate */
    if (qkv_check_memory(&mc, opt.batch, 16 * qkv_model_param_count(&mc) +
                               2 * qkv_model_activation_bytes(&mc, opt.batch, opt.seq_len),
                               "double-precision parameters and activations", err, sizeof err)) {
        qkv_cli_error("gradcheck", "%s", err);
        rc = QKV_EXIT_USAGE;
        goto done;
    }
    qkv_model *m;
    qkv_gradcheck_stat *st;
    int r = qkv_model_gradcheck(&mc, &opt, &m, &st, err, sizeof err);
    if (r < 0) { qkv_cli_error("gradcheck", "%s", err); goto done; }
    printf("gradcheck: qkv %s, %d layers, d_model %d, batch %d x %d positions, double precision\n",
           QKV_ATTN_QKV_NAMES[mc.attn.qkv], mc.layers, mc.d_model, opt.batch, opt.seq_len);
    printf("%-34s %15s %14s %12s  %s\n", "parameter", "checked", "max|a-n|", "max excess", "result");
    int64_t checked = 0, failed = 0;
    double worst = 0;
    for (int i = 0; i < m->params.n; i++) {
        char ck[40];
        snprintf(ck, sizeof ck, "%lld/%lld", (long long)st[i].checked, (long long)m->params.items[i]->t.numel);
        printf("%-34s %15s %14.3g %12.3g  %s\n", m->params.items[i]->name, ck, st[i].max_abs_err,
               st[i].max_excess, st[i].failed ? "FAIL" : "PASS");
        checked += st[i].checked;
        failed += st[i].failed;
        if (st[i].max_abs_err > worst) worst = st[i].max_abs_err;
    }
    printf("%s: %lld elements in %d tensors checked, %lld failed, largest |analytic - numeric| %.3g\n",
           failed ? "FAIL" : "PASS", (long long)checked, m->params.n, (long long)failed, worst);
    rc = failed ? QKV_EXIT_FAIL : QKV_EXIT_OK;
    free(st);
    qkv_model_free(m);
done:
    free(sets);
    return rc;
}
