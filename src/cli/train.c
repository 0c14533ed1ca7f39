/* qkv train: train a model from a config, or resume a run. */
#include "cli/cli.h"
#include "io/fileio.h"
#include "train/train.h"

#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char USAGE[] =
    "usage: qkv train CONFIG [--set KEY=VALUE]... [--out DIR] [--threads N] [--quiet]\n"
    "       qkv train --resume DIR [--threads N] [--quiet]\n"
    "\n"
    "Train a transformer on the config's task. Writes DIR/config.json (the effective config),\n"
    "metrics.jsonl, model.safetensors, checkpoint.safetensors and summary.json, and prints the\n"
    "summary as JSON on stdout. Ctrl-C saves a checkpoint; --resume DIR continues it, with the\n"
    "same results as an uninterrupted run.\n"
    "\n"
    "options:\n"
    "  --set KEY=VALUE  override a config key, e.g. --set model.attention.qkv=shared (repeatable)\n"
    "  --out DIR        run directory (default: runs/<config name>-<date>-<time>)\n"
    "  --resume DIR     continue the run in DIR from its last checkpoint\n"
    "  --threads N      threads for the step (default: one per core); the same N gives the\n"
    "                   same bits, different N agree to float precision\n"
    "  --quiet          no progress on stderr\n"
    "  --stop-after N   stop (as Ctrl-C does) after N more steps; for testing resume\n"
    "  -h, --help       show this help\n";

static const char *json_num(double x, char *buf, size_t n) {
    if (isfinite(x)) snprintf(buf, n, "%.6f", x);
    else snprintf(buf, n, "null");
    return buf;
}

static void on_signal(int sig) {
    (void)sig;
    qkv_stop_requested = 1;
}

int qkv_cmd_train(int argc, char **argv) {
    const char *cfg_path = NULL, *out = NULL, *resume = NULL, *v;
    const char **sets = calloc((size_t)argc, sizeof *sets);
    int nsets = 0, rc = QKV_EXIT_USAGE;
    long long threads = 0, stop_after = 0;
    bool quiet = false, missing = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) { fputs(USAGE, stdout); free(sets); return 0; }
        if (qkv_cli_opt(argc, argv, &i, "--set", &v, &missing)) { if (!missing) sets[nsets++] = v; }
        else if (qkv_cli_opt(argc, argv, &i, "--out", &v, &missing)) out = v;
        else if (qkv_cli_opt(argc, argv, &i, "--resume", &v, &missing)) resume = v;
        else if (qkv_cli_opt(argc, argv, &i, "--threads", &v, &missing)) {
            if (!missing && !qkv_cli_int("train", "--threads", v, 1, 256, &threads)) goto done;
        } else if (qkv_cli_opt(argc, argv, &i, "--stop-after", &v, &missing)) {
            if (!missing && !qkv_cli_int("train", "--stop-after", v, 1, 1000000000, &stop_after)) goto done;
        } else if (!strcmp(a, "--quiet")) quiet = true;
        else if (a[0] == '-' && a[1]) { qkv_cli_error("train", "unknown option '%s' (try 'qkv train --help')", a); goto done; }
        else if (!cfg_path) cfg_path = a;
        else { qkv_cli_error("train", "unexpected argument '%s' (one CONFIG only)", a); goto done; }
        if (missing) { qkv_cli_error("train", "%s needs a value", a); goto done; }
    }
    char resume_cfg[4096];
    if (resume) {
        if (cfg_path || nsets || out) {
            qkv_cli_error("train", "--resume DIR takes its config from DIR/config.json; drop CONFIG, --set and --out");
            goto done;
        }
        snprintf(resume_cfg, sizeof resume_cfg, "%s/config.json", resume);
        cfg_path = resume_cfg;
        out = resume;
    }
    if (!cfg_path) { qkv_cli_error("train", "missing CONFIG (try 'qkv train --help')"); goto done; }
    qkv_config cfg;
    if (qkv_cli_load_config("train", cfg_path, sets, nsets, &cfg)) goto done;
    char out_buf[4096];
    if (!out) {
        const char *base = strrchr(cfg_path, '/') ? strrchr(cfg_path, '/') + 1 : cfg_path;
        size_t n = strcspn(base, ".");
        time_t now = time(NULL);
        struct tm tm;
        localtime_r(&now, &tm);
        char stamp[32];
        strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
        snprintf(out_buf, sizeof out_buf, "runs/%.*s-%s", (int)n, base, stamp);
        out = out_buf;
    }
    qkv_cli_set_threads((int)threads);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);

    qkv_run_opts opt = {.out_dir = out, .quiet = quiet, .resume = resume != NULL,
                        .stop_after = stop_after, .config_json = qkv_config_to_json};
    qkv_run_summary s;
    char err[1024];
    int r = qkv_train(&cfg, &opt, &s, err, sizeof err);
    if (r < 0) {
        qkv_cli_error("train", "%s", err);
        rc = r == -2 ? QKV_EXIT_USAGE : QKV_EXIT_FAIL; /* -2: the config does not fit in memory */
        goto done;
    }
    if (r == 1) {
        fprintf(stderr, "qkv train: stopped at step %lld of %d; checkpoint saved. Resume with:\n"
                "  qkv train --resume %s\n", s.steps, cfg.train.steps, out);
        rc = QKV_EXIT_FAIL;
        goto done;
    }
    char acc[64], el[64], tl[64]; /* JSON has no NaN or Inf: null */
    printf("{\"eval_accuracy\":%s,\"eval_loss\":%s,\"train_loss\":%s,\"steps\":%lld,"
           "\"skipped_steps\":%lld,\"seconds\":%.2f,\"params\":%lld,\"attn_params\":%lld,\"run\":\"%s\"}\n",
           json_num(s.eval.accuracy, acc, sizeof acc), json_num(s.eval.loss, el, sizeof el),
           json_num(s.train_loss, tl, sizeof tl), s.steps, s.skipped_steps, s.seconds,
           (long long)s.params, (long long)s.attn_params, out);
    if (!quiet) fprintf(stderr, "qkv train: run directory %s\n", out);
    rc = QKV_EXIT_OK;
done:
    free(sets);
    return rc;
}
