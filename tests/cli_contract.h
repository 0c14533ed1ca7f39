/* The words the command-line contract's tables are written in (tests/test_cli_config.c,
 * test_cli_files.c, test_cli_options.c; the rows are qkv_cli_row, testutil.h), and the tables. */
#ifndef QKV_CLI_CONTRACT_H
#define QKV_CLI_CONTRACT_H
#include "tensor/parallel.h"
#include "testutil.h"

/* a row names what it needs; the fields after are zero (no expectation) */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

/* ---- the command line: "$QKV" is the binary; a shell word holding a newline */
#define Q "\"$QKV\" "
#define NL(a, b) "\"$(printf '" a "\\n" b "')\""

/* ---- the directory a row starts in (qkv_cli_start) */
#define DIRECTORY QKV_TEST_DIR /* a file whose text is this: a directory */
#define EMPTY_DIR {0}
#define FILES(...) {.files = {__VA_ARGS__}}
#define CFG(text) FILES({"cfg.json", text})
/* files, then ck.safetensors of a kind */
#define WITH_CK(ck_, ...) {.files = {__VA_ARGS__}, .ck = ck_}
#define BASE_CK(ck_) WITH_CK(ck_, {"cfg.json", BASE})
/* abl.json holding ABL(body), over cfg.json holding BASE */
#define ABLATION(body) FILES({"abl.json", ABL(body)}, {"cfg.json", BASE})
/* files, then a shell script */
#define FILES_SH(sh_, ...) {.files = {__VA_ARGS__}, .sh = sh_}
/* a copy of the fixture (tests/test_cli_contract.c), then a shell script (or NULL) */
#define FROM_RUN(sh_) {.fixture = true, .sh = sh_}

/* ---- kinds of input, as shell commands that make a path into them */
#define AS_EMPTY(f) "rm -rf " f " && : > " f
#define AS_HUGE(f, size) "rm -rf " f " && truncate -s " size " " f
#define AS_TRUNC(f, n) "head -c " #n " " f " > t.part && rm -rf " f " && mv t.part " f
#define AS_WRONG(f, text) "rm -rf " f " && printf '%s\\n' '" text "' > " f
#define AS_FIFO(f) "rm -rf " f " && mkfifo " f
#define AS_DIR(f) "rm -rf " f " && mkdir " f
#define AS_DANGLING(f) "rm -rf " f " && ln -s nowhere " f
#define AS_DIRLINK(f) "rm -rf " f " && ln -s sub " f
/* ... and their names in the tables (the coverage test counts them) */
#define K_EMPTY "empty file"
#define K_HUGE "huge (sparse, over the cap)"
#define K_TRUNC "truncated"
#define K_WRONG "wrong JSON type"
#define K_FIFO "FIFO, no writer"
#define K_DIR "directory"
#define K_DANGLING "dangling symlink"
#define K_DIRLINK "symlink to a directory"
#define K_NL "name with a newline"
#define K_QUOTE "name with a quote and a space"

/* ---- configs */
/* recall with 3 pairs over 8 keys and 8 values (vocab 16, 9 positions), 4 steps */
#define MODEL "\"model\": {\"d_model\": 16, \"heads\": 2, \"layers\": 1, \"d_ff\": 32}"
#define TASK "\"task\": {\"name\": \"recall\", \"pairs\": 3, \"keys\": 8, \"values\": 8}"
#define TRAIN "\"train\": {\"steps\": 4, \"batch\": 4, \"eval_every\": 0, \"eval_examples\": 8}"
#define BASE "{" MODEL ",\n " TASK ",\n " TRAIN "}\n"
/* a file task over d.jsonl (vocab from the data unless given) */
#define FILE_TASK(extra) "{" MODEL ", \"task\": {\"name\": \"file\", \"path\": \"d.jsonl\"" extra "}, " TRAIN "}\n"
#define FILE_TASK_VOCAB(v, extra)                                                                   \
    "{\"model\": {\"vocab\": " #v ", \"d_model\": 16, \"heads\": 2, \"layers\": 1, \"d_ff\": 32}, "     \
    "\"task\": {\"name\": \"file\", \"path\": \"d.jsonl\"" extra "}, " TRAIN "}\n"
#define LINES4 "{\"input\": [1, 2, 3], \"target\": [2, 3, 4]}\n{\"input\": [4, 5], \"target\": [5, 6]}\n" \
               "{\"input\": [1, 1], \"target\": [1, 1]}\n{\"input\": [7], \"target\": [-100]}\n"
/* a text task over path, 2 steps */
#define TEXT_CONFIG(path)                                                                                       \
    "{\"model\": {\"d_model\": 16, \"heads\": 2, \"layers\": 1, \"d_ff\": 32}, \"task\": {\"name\": \"text\", " \
    "\"path\": \"" path "\", \"seq_len\": 16}, \"train\": {\"steps\": 2, \"batch\": 2, \"eval_every\": 0, "     \
    "\"eval_examples\": 4}}\n"
/* an ablation over cfg.json */
#define ABL(body) "{\"base\": \"cfg.json\", " body "}\n"
/* the recall model trained 20 steps, and a sweep of 2 variants over it (base.json) */
#define SWEEP_BASE                                                                                       \
    "{\"model\": {\"d_model\": 16, \"heads\": 2, \"layers\": 1, \"d_ff\": 32},\n"                        \
    " \"task\": {\"name\": \"recall\", \"pairs\": 3, \"keys\": 8, \"values\": 8},\n"                     \
    " \"train\": {\"steps\": 20, \"batch\": 8, \"eval_every\": 10, \"eval_examples\": 16}}\n"
#define SWEEP(seeds)                                                                                     \
    "{\"base\": \"base.json\", \"threshold\": 0.6,\n"                                                   \
    " \"variants\": [{\"name\": \"full\"}, {\"name\": \"identity\", \"set\": [\"model.attention.qkv=identity\"]}],\n" \
    " \"seeds\": " seeds "}\n"
#define SWEEP_FILES {"base.json", SWEEP_BASE}, {"abl.json", SWEEP("[0, 1]")}
/* an ablation's results.json (as qkv summarize reads it), its baseline and variants given; in a/ */
#define RESULTS(baseline, variants) "{\"title\": \"t\", \"baseline\": \"" baseline "\", \"variants\": [" variants "]}\n"
#define RES_A(text) {"a", DIRECTORY}, {"a/results.json", text}

/* ---- --threads accepts what the thread pool runs: 1 to QKV_MAX_THREADS */
#define STR_(x) #x
#define STR(x) STR_(x)
#define OVER_MAX_THREADS 65
_Static_assert(OVER_MAX_THREADS == QKV_MAX_THREADS + 1, "OVER_MAX_THREADS is one more than the pool runs");
#define THREADS_RANGE "--threads: expected an integer in [1, " STR(QKV_MAX_THREADS) "], got "

/* ---- the tables, by subject */
extern const qkv_cli_row CLI_CONFIG_ROWS[];   /* what a configuration says (test_cli_config.c) */
extern const int CLI_CONFIG_NROWS;
extern const qkv_cli_row CLI_FILES_ROWS[];    /* the files a command reads and writes (test_cli_files.c) */
extern const int CLI_FILES_NROWS;
extern const qkv_cli_row CLI_OPTIONS_ROWS[];  /* the command line and the environment (test_cli_options.c) */
extern const int CLI_OPTIONS_NROWS;

#endif
