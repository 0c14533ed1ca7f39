/* qkv eval: loss and accuracy of a checkpoint on the task's evaluation set or a data file. */
#include "cli/cli.h"
#include "train/memory.h"
#include "train/train.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char USAGE[] =
    "usage: qkv eval CONFIG --checkpoint FILE [--data FILE.jsonl] [--set KEY=VALUE]...\n"
    "                [--examples N] [--threads N]\n"
    "\n"
    "Evaluate the model.safetensors (or checkpoint.safetensors) of a run. The model is built\n"
    "from CONFIG (use the run's config.json). Prints {\"loss\", \"accuracy\", \"examples\",\n"
    "\"positions\"} as JSON.\n"
    "\n"
    "options:\n"
    "  --checkpoint FILE  parameters to load (required)\n"
    "  --data FILE.jsonl  evaluate these sequences ({\"input\": [...], \"target\": [...]} per line)\n"
    "                     instead of the task's evaluation set\n"
    "  --examples N       evaluation examples (default: train.eval_examples)\n"
    "  --set KEY=VALUE    override a config key (repeatable)\n"
    "  --threads N        threads for the forward passes (default: one per core)\n"
    "  -h, --help         show this help\n";

int qkv_cmd_eval(int argc, char **argv) {
    const char *cfg_path = NULL, *ckpt = NULL, *data = NULL, *v;
    const char **sets = calloc((size_t)argc, sizeof *sets);
    int nsets = 0, rc = QKV_EXIT_USAGE;
    long long threads = 0, examples = 0;
    bool missing = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) { fputs(USAGE, stdout); free(sets); return 0; }
        if (qkv_cli_opt(argc, argv, &i, "--set", &v, &missing)) { if (!missing) sets[nsets++] = v; }
        else if (qkv_cli_opt(argc, argv, &i, "--checkpoint", &v, &missing)) ckpt = v;
        else if (qkv_cli_opt(argc, argv, &i, "--data", &v, &missing)) data = v;
        else if (qkv_cli_opt(argc, argv, &i, "--threads", &v, &missing)) {
            if (!missing && !qkv_cli_int("eval", "--threads", v, 1, 256, &threads)) goto done;
        } else if (qkv_cli_opt(argc, argv, &i, "--examples", &v, &missing)) {
            if (!missing && !qkv_cli_int("eval", "--examples", v, 1, 100000000, &examples)) goto done;
        } else if (a[0] == '-' && a[1]) { qkv_cli_error("eval", "unknown option '%s' (try 'qkv eval --help')", a); goto done; }
        else if (!cfg_path) cfg_path = a;
        else { qkv_cli_error("eval", "unexpected argument '%s'", a); goto done; }
        if (missing) { qkv_cli_error("eval", "%s needs a value", a); goto done; }
    }
    if (!cfg_path || !ckpt) { qkv_cli_error("eval", "needs CONFIG and --checkpoint FILE (try 'qkv eval --help')"); goto done; }
    qkv_config cfg;
    if (qkv_cli_load_config("eval", cfg_path, sets, nsets, &cfg)) goto done;
    qkv_cli_set_threads((int)threads);
    rc = QKV_EXIT_FAIL;
    char err[1024];
    qkv_task task, data_task; /* closed on every path: a failed open may hold sequences */
    memset(&data_task, 0, sizeof data_task);
    qkv_model *m = NULL;
    qkv_ctx *ctx = NULL;
    bool have_data = false;
    if (qkv_task_open(&task, &cfg.task, (uint64_t)cfg.train.seed, err, sizeof err)) {
        qkv_cli_error("eval", "%s", err);
        goto cleanup;
    }
    qkv_model_config mc = cfg.model;
    if (qkv_task_fit_model(&task, &mc, err, sizeof err) ||
        (data && (have_data = !qkv_task_open_eval_file(&data_task, data, 0, err, sizeof err), !have_data)) ||
        (have_data && qkv_task_fit_model(&data_task, &mc, err, sizeof err))) {
        qkv_cli_error("eval", "%s", err);
        goto cleanup;
    }
    /* parameters and their gradient buffers, and a batch's activations (a bound: no backward) */
    if (qkv_check_memory(&mc, cfg.train.batch, 8 * qkv_model_param_count(&mc) +
                               qkv_model_activation_bytes(&mc, cfg.train.batch, mc.seq_len),
                               "parameters and activations", err, sizeof err)) {
        qkv_cli_error("eval", "%s", err);
        rc = QKV_EXIT_USAGE;
        goto cleanup;
    }
    if (!(m = qkv_model_new(&mc, QKV_F32, 0, err, sizeof err)) || qkv_load_model(m, ckpt, err, sizeof err)) {
        qkv_cli_error("eval", "%s", err);
        goto cleanup;
    }
    ctx = qkv_ctx_new();
    qkv_task *t = have_data ? &data_task : &task;
    if (have_data) data_task.seq_len = mc.seq_len; /* batches as long as the longest sequence */
    qkv_eval_result r;
    if (qkv_evaluate(ctx, m, t, examples ? examples : cfg.train.eval_examples, cfg.train.batch, &r, err, sizeof err)) {
        qkv_cli_error("eval", "%s", err);
        goto cleanup;
    }
    char loss[64]; /* JSON has no NaN or Inf: null */
    if (isfinite(r.loss)) snprintf(loss, sizeof loss, "%.6f", r.loss);
    else snprintf(loss, sizeof loss, "null");
    printf("{\"loss\":%s,\"accuracy\":%.6f,\"examples\":%lld,\"positions\":%lld}\n", loss, r.accuracy,
           (long long)r.examples, (long long)r.positions);
    rc = QKV_EXIT_OK;
cleanup:
    qkv_ctx_free(ctx);
    qkv_model_free(m);
    qkv_task_close(&task);
    qkv_task_close(&data_task);
done:
    free(sets);
    return rc;
}
