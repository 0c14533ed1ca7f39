/* The qkv command: dispatches to subcommands. */
#include "qkv.h"

#include <stdio.h>
#include <string.h>

static void usage(FILE *f) {
    fprintf(f,
            "usage: qkv [--help] [--version] COMMAND [ARGS]\n"
            "\n"
            "qkv trains tiny transformers on a CPU to measure how attention's query, key and\n"
            "value projections matter.\n"
            "\n"
            "options:\n"
            "  -h, --help     show this help and exit\n"
            "  -V, --version  print the version and exit\n");
}

int main(int argc, char **argv) {
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(cmd, "--version") || !strcmp(cmd, "-V")) {
        printf("qkv %s\n", QKV_VERSION);
        return 0;
    }
    fprintf(stderr, "qkv: unknown command or option '%s' (try 'qkv --help')\n", cmd);
    return 2;
}
