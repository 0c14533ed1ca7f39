/* qkv eval: loss and accuracy of a checkpoint on the task's evaluation set or a data file. */
#include "cli/cli.h"
#include "cli/options.h"
#include "tensor/parallel.h"
#include "train/memory.h"
#include "train/train.h"
#include "train/vocabulary.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *config, *checkpoint, *data;
    qkv_cli_list sets;
    long long examples, threads;
} eval_args;

static const qkv_cli_option OPTIONS[] = {
    QKV_STRING("--checkpoint", "FILE", eval_args, checkpoint, "parameters to load (required)"),
    QKV_STRING("--data", "FILE.jsonl", eval_args, data,
               "evaluate these sequences ({\"input\": [...], \"target\": [...]} per line)\n"
               "instead of the task's evaluation set"),
    QKV_INT("--examples", "N", eval_args, examples, 1, 100000000,
            "evaluation examples (default: train.eval_examples)"),
    QKV_LIST("--set", "KEY=VALUE", eval_args, sets, "override a config key (repeatable)"),
    QKV_INT("--threads", "N", eval_args, threads, 1, QKV_MAX_THREADS,
            "threads for the forward passes, at most " QKV_STR(QKV_MAX_THREADS) " (default: one per core)"),
    QKV_HELP,
    QKV_OPTIONS_END,
};

static const qkv_cli_command COMMAND = {
    "eval", "CONFIG --checkpoint FILE [OPTION]...",
    "Evaluate the model.safetensors (or checkpoint.safetensors) of a run. The model is built\n"
    "from CONFIG (use the run's config.json). Prints {\"loss\", \"accuracy\", \"examples\",\n"
    "\"positions\"} as JSON, and for the text task \"bpb\": bits per byte, loss / ln 2.",
    "CONFIG", OPTIONS,
};

/* the parsed command run: the model of a->config loaded from a->checkpoint, evaluated; 0, or -1
 * with e */
static int eval_run(const eval_args *a, qkv_err *e) {
    if (!a->config || !a->checkpoint)
        return qkv_err_set(e, QKV_ERR_USAGE, "needs CONFIG and --checkpoint FILE (try 'qkv eval --help')");
    qkv_config cfg;
    if (qkv__cli_load_run_config(a->config, a->sets.v, a->sets.n, a->checkpoint, false, &cfg, e)) return -1;
    qkv__cli_set_threads((int)a->threads);
    if (qkv_precision_usable(&cfg.train, e)) return -1;
    int rc = -1;
    qkv_task task, data_task; /* closed on every path: a failed open may hold sequences */
    memset(&data_task, 0, sizeof data_task);
    qkv_model *m = NULL;
    qkv_ctx *ctx = NULL;
    bool have_data = false;
    qkv_use_run_tokenizer(&cfg.task, a->checkpoint, false); /* the vocabulary kept beside the run */
    if (qkv_task_open(&task, &cfg.task, (uint64_t)cfg.train.seed, e)) goto cleanup;
    qkv_model_config mc = cfg.model;
    if (qkv_task_fit_model(&task, &mc, e) ||
        (a->data && (have_data = !qkv_task_open_eval_file(&data_task, a->data, 0, e), !have_data)) ||
        (have_data && qkv_task_fit_model(&data_task, &mc, e)))
        goto cleanup;
    /* parameters and their gradient buffers, and a batch's activations (a bound: no backward) */
    if (qkv_check_memory(&mc, cfg.train.batch, 8 * qkv_model_param_count(&mc) +
                               qkv_model_activation_bytes(&mc, cfg.train.batch, mc.seq_len),
                               "parameters and activations", e))
        goto cleanup;
    if (!(m = qkv_model_new(&mc, QKV_F32, 0, e)) || qkv_load_model(m, a->checkpoint, e))
        goto cleanup;
    qkv_config eff = cfg; /* the effective config: vocab and seq_len filled in, as the file's */
    eff.model = mc;
    if (qkv__cli_check_trained_with("eval", a->checkpoint, a->config, &eff, e) ||
        qkv_check_vocabulary(a->checkpoint, &task, e))
        goto cleanup;
    /* in the products' precision the run trained and evaluated with */
    if (!(ctx = qkv_ctx_new()) || qkv_ctx_set_bf16(ctx, cfg.train.precision == QKV_PRECISION_BF16)) {
        qkv_err_set(e, QKV_ERR_FAIL, "%s", ctx ? qkv_ctx_error(ctx) : "out of memory");
        goto cleanup;
    }
    qkv_task *t = have_data ? &data_task : &task;
    if (have_data) data_task.seq_len = mc.seq_len; /* batches as long as the longest sequence */
    qkv_eval_result r;
    if (qkv_evaluate(ctx, m, t, a->examples ? a->examples : cfg.train.eval_examples, cfg.train.batch, &r, e))
        goto cleanup;
    /* %.9g, as summary.json and metrics.jsonl write them: the numbers read back are the ones
     * those files hold (a fixed count of decimals would cut a small loss's digits) */
    char loss[64]; /* JSON has no NaN or Inf: null */
    if (isfinite(r.loss)) snprintf(loss, sizeof loss, "%.9g", r.loss);
    else snprintf(loss, sizeof loss, "null");
    char bpb[48] = ""; /* the text task's bytes: bits per byte, loss / ln 2 */
    if (!have_data && task.cfg.kind == QKV_TASK_TEXT && isfinite(r.loss))
        snprintf(bpb, sizeof bpb, ",\"bpb\":%.9g", r.bpb);
    printf("{\"loss\":%s,\"accuracy\":%.9g,\"examples\":%lld,\"positions\":%lld%s}\n", loss, r.accuracy,
           (long long)r.examples, (long long)r.positions, bpb);
    rc = 0;
cleanup:
    qkv_ctx_free(ctx);
    qkv_model_free(m);
    qkv_task_close(&task);
    qkv_task_close(&data_task);
    return rc;
}

int qkv__cmd_eval(int argc, char **argv) {
    eval_args a = {0};
    qkv_err e;
    if (!qkv__cli_parse(&COMMAND, argc, argv, &a, &a.config, &e) && !eval_run(&a, &e)) qkv_err_clear(&e);
    free(a.sets.v);
    return qkv__cli_exit("eval", &e);
}
