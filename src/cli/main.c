/* The qkv command: dispatches to subcommands. */
#include "qkv.h"
#include "cli/cli.h"

#include <stdlib.h>
#include <string.h>

static const char USAGE[] =
    "usage: qkv [--help] [--version] COMMAND [ARGS]\n"
    "\n"
    "qkv trains tiny transformers on a CPU to measure how attention's query, key and value\n"
    "projections matter.\n"
    "\n"
    "commands:\n"
    "  train      train a model from a JSON config (or resume a run)\n"
    "  eval       evaluate a checkpoint on the task or on a JSON Lines file\n"
    "  sample     generate text (or tokens) from a checkpoint\n"
    "  params     count a config's parameters per module\n"
    "  gradcheck  check the model's gradients against finite differences\n"
    "  ablate     train and compare variants (the Q/K/V ablation) and write a report\n"
    "  summarize  ablations' results side by side; the tables a document embeds, checked\n"
    "  bench      time the training step of the standard sizes\n"
    "  inspect    a trained run's heads: the shape of each score matrix, where queries look\n"
    "\n"
    "'qkv COMMAND --help' describes each command's options.\n"
    "\n"
    "options:\n"
    "  -h, --help     show this help and exit\n"
    "  -V, --version  print the version and the matrix-product build, then the machine as a\n"
    "                 JSON line (summary.json's \"machine\": CPU, GEMM, ISA, OpenBLAS core, libxsmm\n"
    "                 target), and exit\n";

typedef struct { const char *name; int (*run)(int, char **); } command;

static const command COMMANDS[] = {
    {"train", qkv__cmd_train}, {"eval", qkv__cmd_eval}, {"sample", qkv__cmd_sample}, {"params", qkv__cmd_params},
    {"gradcheck", qkv__cmd_gradcheck}, {"ablate", qkv__cmd_ablate},
    {"summarize", qkv__cmd_summarize}, {"bench", qkv__cmd_bench}, {"inspect", qkv__cmd_inspect},
};

int main(int argc, char **argv) {
    qkv_err e;
    if (argc < 2) { /* a usage error, so one line like every other; --help prints the usage */
        qkv_err_set(&e, QKV_ERR_USAGE, "missing COMMAND: train, eval, sample, params, gradcheck, ablate, summarize, "
                    "bench or inspect (try 'qkv --help')");
        return qkv__cli_exit(NULL, &e);
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
        fputs(USAGE, stdout);
        return 0;
    }
    if (!strcmp(cmd, "--version") || !strcmp(cmd, "-V")) {
#if QKV_GEMM_LIBXSMM
        printf("qkv %s, GEMM libxsmm+openblas (small float products through libxsmm's JIT kernels, the rest "
               "through OpenBLAS)\n", QKV_VERSION);
#else
        printf("qkv %s, GEMM openblas (every product through OpenBLAS)\n", QKV_VERSION);
#endif
        char machine[640];
        if (qkv_buildinfo_json(machine, sizeof machine) >= 0) printf("machine: %s\n", machine);
        printf("bf16 products: %s\n", qkv_bf16_kernel());
        return 0;
    }
    for (size_t i = 0; i < sizeof COMMANDS / sizeof COMMANDS[0]; i++)
        if (!strcmp(cmd, COMMANDS[i].name)) return COMMANDS[i].run(argc - 1, argv + 1);
    qkv_err_set(&e, QKV_ERR_USAGE, "unknown command or option '%s' (try 'qkv --help')", cmd);
    return qkv__cli_exit(NULL, &e);
}
