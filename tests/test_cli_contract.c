/* The command-line contract: every command, given each input it reads made bad in each way, must
 * answer as docs/reliability.md promises. One table, by subject:
 *   tests/test_cli_config.c   what a configuration says (the config's JSON, keys, types, values,
 *                             relations; --set; ablation configs)
 *   tests/test_cli_files.c    the files a command reads and writes (configs as files, data,
 *                             corpora, checkpoints, run directories, results, documents)
 *   tests/test_cli_options.c  the command line (commands, options, their values) and the
 *                             environment
 * Each row (qkv_cli_row, testutil.h, which states the contract every row keeps) names the
 * command, the input it reads and the kind of bad input, the directory it starts in, the command
 * line, and what must happen: the exit status (2 usage error, 1 runtime error, 0 done), a
 * substring of the one line on stderr, the files that may change, must not exist or must.
 *
 * Rows that start from the fixture (a finished run, a finished ablation, a document embedding its
 * table: FROM_RUN) also make a record: a Markdown table of what each did, which must equal the
 * one committed between the markers in docs/reliability.md; QKV_CLI_RECORD_UPDATE=1 rewrites that
 * block instead (the command is in the document). So the record is what the binary does now, not
 * what was typed. Each row runs as a test of its own and leaves its line of the record in the
 * fixture's directory, which the last test reads. */
#define _GNU_SOURCE
#include <check.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_contract.h"
#include "suites.h"

static char TMP[256], FIXTURE[300];

/* ---- the rows, all subjects in order ------------------------------------------------------ */

static int nrows(void) { return CLI_CONFIG_NROWS + CLI_FILES_NROWS + CLI_OPTIONS_NROWS; }

static const qkv_cli_row *row_at(int i) {
    if (i < CLI_CONFIG_NROWS) return &CLI_CONFIG_ROWS[i];
    i -= CLI_CONFIG_NROWS;
    if (i < CLI_FILES_NROWS) return &CLI_FILES_ROWS[i];
    return &CLI_OPTIONS_ROWS[i - CLI_FILES_NROWS];
}

/* ---- the fixture ---------------------------------------------------------------------------- */

#define NET "\"model\": {\"d_model\": 16, \"heads\": 2, \"layers\": 1, \"d_ff\": 32}"
#define STEPS "\"train\": {\"steps\": 2, \"batch\": 4, \"eval_every\": 0, \"eval_examples\": 8}"
/* its files */
static const char *const FIXTURE_FILES[][2] = {
    {"cfg.json", "{" NET ",\n \"task\": {\"name\": \"recall\", \"pairs\": 3, \"keys\": 8, \"values\": 8},\n " STEPS "}\n"},
    {"file.json", "{" NET ", \"task\": {\"name\": \"file\", \"path\": \"d.jsonl\", \"eval_path\": \"e.jsonl\"}, " STEPS
                  "}\n"},
    {"text.json", "{" NET ", \"task\": {\"name\": \"text\", \"path\": \"corpus.txt\", \"seq_len\": 16}, " STEPS "}\n"},
    {"fort.json", "{" NET ", \"task\": {\"name\": \"text\", \"corpus\": \"fortunes\", \"path\": \"fdir\", \"seq_len\": "
                  "8}, " STEPS "}\n"},
    {"d.jsonl", "{\"input\": [1, 2, 3], \"target\": [2, 3, 4]}\n{\"input\": [4, 5], \"target\": [5, 6]}\n"
                "{\"input\": [1, 1], \"target\": [1, 1]}\n{\"input\": [7], \"target\": [-100]}\n"},
    {"e.jsonl", "{\"input\": [1, 2], \"target\": [2, 3]}\n{\"input\": [3], \"target\": [4]}\n"},
    {"abl.json", "{\"base\": \"cfg.json\", \"threshold\": 0.5, \"variants\": [{\"name\": \"full\"}], \"seeds\": [0]}\n"},
    /* an ablation whose base config is x.json, the file a row damages */
    {"ablx.json", "{\"base\": \"x.json\", \"threshold\": 0.5, \"variants\": [{\"name\": \"full\"}], \"seeds\": [0]}\n"},
    {"doc.md", "# A document\n\n<!-- qkv summarize: ab -->\n<!-- end -->\n"},
};

/* the commands that finish it: a corpus, fortunes, a run, an ablation, the document's table (so
 * --check-doc of it passes) */
static const char FIXTURE_SH[] =
    "mkdir sub fdir && "
    "i=0; while [ $i -lt 40 ]; do echo \"line $i of the corpus, some text to train on\"; i=$((i+1)); done > corpus.txt && "
    "i=0; while [ $i -lt 20 ]; do printf 'fortune number %s, a short one\\n%%\\n' $i; i=$((i+1)); done > fdir/f && "
    "\"$QKV\" train cfg.json --out r --quiet > /dev/null && "
    "\"$QKV\" ablate abl.json --out ab --quiet --jobs 1 && "
    "\"$QKV\" summarize --update-doc doc.md --quiet";

/* once for all rows (an unchecked fixture): the temporary directory, the fixture, the record's
 * directory */
static void setup(void) {
    qkv_test_mkdtemp(TMP, sizeof TMP, "cli");
    snprintf(FIXTURE, sizeof FIXTURE, "%s/fixture", TMP);
    ck_assert_int_eq(mkdir(FIXTURE, 0755), 0);
    for (size_t i = 0; i < sizeof FIXTURE_FILES / sizeof FIXTURE_FILES[0]; i++) qkv_test_put(FIXTURE, FIXTURE_FILES[i][0], FIXTURE_FILES[i][1]);
    setenv("QKV", qkv_test_bin(), 1);
    char out[4096];
    ck_assert_msg(qkv_test_sh(out, sizeof out, true, "cd '%s' && %s && mkdir ../record", FIXTURE, FIXTURE_SH) == 0,
                  "fixture: %s", out);
}

static void teardown(void) { qkv_test_rmtree(TMP); }

/* ---- the record ----------------------------------------------------------------------------- */

/* s appended to b as Markdown table text: | escaped, < as &lt; (a <!-- ... --> in a message is not
 * a comment or a marker here), a newline as a space, the binary as qkv */
static void cell(FILE *b, const char *s) {
    for (const char *p = s; *p; p++) {
        if (!strncmp(p, "\"$QKV\"", 6)) {
            fputs("qkv", b);
            p += 5;
        } else if (*p == '|') fputs("\\|", b);
        else if (*p == '<') fputs("&lt;", b);
        else if (*p == '\n') fputc(' ', b);
        else fputc(*p, b);
    }
}

/* the row's line of the record, without its number: "| cmd | input | kind | `run` | exit | stderr |"
 * (stderr: its first line, and how many more; usually nothing for a success) */
static void record_line(FILE *b, const qkv_cli_row *r, const qkv_cli_outcome *o) {
    fputs(" ", b);
    cell(b, r->cmd);
    fputs(" | ", b);
    cell(b, r->input);
    fputs(" | ", b);
    cell(b, r->kind);
    fputs(" | `", b);
    cell(b, r->run);
    fputs("` | ", b);
    char status[32], line[sizeof o->err + 64];
    if (o->hung) snprintf(status, sizeof status, "hang");
    else if (o->sig) snprintf(status, sizeof status, "signal %d", o->sig);
    else snprintf(status, sizeof status, "%d", o->status);
    cell(b, status);
    fputs(" | ", b);
    snprintf(line, sizeof line, "%s", o->err);
    int more = -1;
    for (const char *p = o->err; *p; p++) more += *p == '\n';
    line[strcspn(line, "\n")] = 0;
    if (more > 0) snprintf(line + strlen(line), sizeof line - strlen(line), " (and %d more lines)", more);
    cell(b, line[0] ? line : "-");
    fputs(" |\n", b);
}

static void record_path(char *p, size_t n, int i) { snprintf(p, n, "%s/record/%04d", TMP, i); }

/* ---- the rows ------------------------------------------------------------------------------- */

START_TEST(test_row) {
    const qkv_cli_row *r = row_at(_i);
    static qkv_cli_outcome o;
    qkv_cli_run(r, _i, TMP, FIXTURE, &o);
    if (o.skipped) return; /* named in make test's summary */
    if (r->start.fixture) { /* its line of the record, "!" first when it broke the contract */
        char p[400];
        record_path(p, sizeof p, _i);
        FILE *f = fopen(p, "w");
        ck_assert_ptr_nonnull(f);
        fputs(o.problem[0] ? "!" : " ", f);
        record_line(f, r, &o);
        ck_assert_int_eq(fclose(f), 0);
    }
    ck_assert_msg(!o.problem[0], "row %d (%s, %s, %s): %s; stderr: %.300s", _i, r->cmd, r->input, r->kind, o.problem,
                  o.err);
}
END_TEST

#define DOC "../docs/reliability.md"
#define BEGIN_MARK "<!-- cli_contract record: generated by tests/test_cli_contract.c, do not edit -->\n"
#define END_MARK "<!-- cli_contract record ends -->\n"

/* the record is the block between the markers in the document (or, with QKV_CLI_RECORD_UPDATE=1,
 * replaces it: a temporary file renamed over the document) */
START_TEST(test_record) {
    char *table = NULL;
    size_t tlen = 0;
    FILE *b = open_memstream(&table, &tlen);
    ck_assert_ptr_nonnull(b);
    fputs("| # | command | input | made into | run | exit | stderr |\n|---|---|---|---|---|---|---|\n", b);
    char missing[4096] = "";
    for (int i = 0, k = 0; i < nrows(); i++) {
        if (!row_at(i)->start.fixture) continue;
        char p[400], line[16384];
        record_path(p, sizeof p, i);
        FILE *f = fopen(p, "r");
        size_t n = f ? fread(line, 1, sizeof line - 1, f) : 0;
        line[n] = 0;
        if (f) fclose(f);
        if (!f || line[0] != ' ')
            snprintf(missing + strlen(missing), sizeof missing - strlen(missing), " %d", i);
        fprintf(b, "| %d |%s", ++k, line[0] ? line + 1 : "\n");
    }
    ck_assert_int_eq(fclose(b), 0);
    ck_assert_msg(!missing[0], "rows without a clean outcome (see their own tests):%s", missing);
    FILE *f = fopen(DOC, "rb");
    ck_assert_msg(f != NULL, "cannot read %s (the tests run from tests/)", DOC);
    static char doc[1 << 20];
    size_t n = fread(doc, 1, sizeof doc - 1, f);
    doc[n] = 0;
    fclose(f);
    char *beg = strstr(doc, BEGIN_MARK), *end = beg ? strstr(beg, END_MARK) : NULL;
    ck_assert_msg(beg && end, "%s has no block between \"%.40s\" and \"%.30s\"", DOC, BEGIN_MARK, END_MARK);
    beg += strlen(BEGIN_MARK);
    const char *up = getenv("QKV_CLI_RECORD_UPDATE");
    if (up && !strcmp(up, "1")) {
        char tmp[64];
        snprintf(tmp, sizeof tmp, "%s.tmp.%ld", DOC, (long)getpid());
        FILE *w = fopen(tmp, "wb");
        ck_assert_ptr_nonnull(w);
        fwrite(doc, 1, (size_t)(beg - doc), w);
        fputs(table, w);
        fputs(end, w);
        ck_assert_int_eq(fclose(w), 0);
        ck_assert_int_eq(rename(tmp, DOC), 0);
    } else {
        size_t k = 0, line = 1;
        for (; table[k] && beg + k < end && table[k] == beg[k]; k++) line += table[k] == '\n';
        ck_assert_msg(!table[k] && beg + k == end,
                      "%s: the record differs from what the binary does now, at line %zu of the block: regenerate it "
                      "with `cd tests && QKV_CLI_RECORD_UPDATE=1 CK_RUN_SUITE=cli_contract OPENBLAS_NUM_THREADS=1 "
                      "QKV_BIN=$PWD/../build/qkv ../build/run_tests`",
                      DOC, line);
    }
    free(table);
}
END_TEST

/* ---- the table covers every command, every input it reads, every kind -------------------------- */

/* what each command reads: every row's (command, input) is one of these, and each has a row */
static const char *const READS[][2] = {
    {"qkv", "COMMAND"},
    {"train", "CONFIG"}, {"train", "--set"}, {"train", "options"}, {"train", "--out"}, {"train", "--threads"},
    {"train", "task.path (JSON Lines)"}, {"train", "task.eval_path (JSON Lines)"}, {"train", "task.path (text corpus)"},
    {"train", "task.path (fortunes dir)"}, {"train", "--out DIR"}, {"train", "OPENBLAS_NUM_THREADS"},
    {"train", "QKV_ARENA_POISON"},
    {"train --resume", "CONFIG"}, {"train --resume", "DIR"}, {"train --resume", "config.json"},
    {"train --resume", "checkpoint.safetensors"}, {"train --resume", "metrics.jsonl"},
    {"eval", "CONFIG"}, {"eval", "--set"}, {"eval", "options"}, {"eval", "--threads"}, {"eval", "--checkpoint"},
    {"eval", "--data"},
    {"sample", "CONFIG"}, {"sample", "--checkpoint"}, {"sample", "--prompt"}, {"sample", "--tokens"},
    {"sample", "--temperature"}, {"sample", "--top-k"}, {"sample", "options"}, {"sample", "--set"},
    {"params", "CONFIG"}, {"params", "--set"}, {"params", "options"},
    {"gradcheck", "CONFIG"}, {"gradcheck", "options"},
    {"ablate", "CONFIG"}, {"ablate", "base config"}, {"ablate", "options"}, {"ablate", "--jobs"}, {"ablate", "--out DIR"},
    {"ablate", "runs/*/claim"}, {"ablate", "configs/*.json"}, {"ablate", "runs/*/checkpoint.safetensors"},
    {"ablate --status", "runs/*/claim"}, {"ablate --status", "runs/*/summary.json"},
    {"ablate --report", "runs/*/metrics.jsonl"}, {"ablate --report", "results.json"},
    {"ablate --shard", "I/N"}, {"ablate --shard", "--status"},
    {"ablate --shard auto", "SLURM_ARRAY_TASK_ID"}, {"ablate --shard auto", "SLURM_ARRAY_TASK_COUNT"},
    {"ablate --shard auto", "SLURM_ARRAY_TASK_MIN"},
    {"ablate --slurm", "--sbatch"}, {"ablate --slurm", "--out DIR"}, {"ablate --slurm", "--tasks"},
    {"ablate --slurm", "--dry-run"},
    {"summarize", "DIR"}, {"summarize", "results.json"}, {"summarize", "--out"}, {"summarize", "--out OUTDIR"},
    {"summarize", "options"}, {"summarize", "--check-doc"},
    {"summarize --check-doc", "FILE"}, {"summarize --check-doc", "a marker's results.json"},
    {"summarize --check-doc", "a marker's DIR"},
    {"summarize --update-doc", "FILE"}, {"summarize --update-doc", "a marker's results.json"},
    {"inspect", "RUN_DIR"}, {"inspect", "options"}, {"inspect --figure", "RUN_DIR"}, {"inspect --figure", "--label"},
    {"inspect --figure", "--lang"},
    {"ablate --refresh", "runs/*/config.json"},
    {"bench", "--set"}, {"ablate", "--stale-after"}, {"ablate", "--reuse"},
    {"bench", "options"}, {"bench", "--size"}, {"bench", "--steps"}, {"bench", "--threads"}, {"bench", "--jobs"},
    {"bench", "--time-products"}, {"bench", "--micro-batches"}, {"bench", "--runs-steps"},
    {"bench --sweep", "--size"}, {"bench --sweep", "--config"}, {"bench --sweep", "TMPDIR"},
    {"bench", "--precision"}, {"bench", "--rounds"}, {"bench --sweep", "--set"}, {"bench --sweep", "--precision"},
};

START_TEST(test_table_coverage) {
    int n = nrows(), nreads = (int)(sizeof READS / sizeof READS[0]), fixture = 0, by_status[3] = {0};
    for (int i = 0; i < n; i++) {
        const qkv_cli_row *r = row_at(i);
        bool known = false;
        for (int k = 0; k < nreads && !known; k++) known = !strcmp(r->cmd, READS[k][0]) && !strcmp(r->input, READS[k][1]);
        ck_assert_msg(known, "row %d (%s, %s, %s): add what it reads to READS", i, r->cmd, r->input, r->kind);
        ck_assert_msg(r->status >= 0 && r->status <= 2, "row %d: exit status %d", i, r->status);
        by_status[r->status]++;
        fixture += r->start.fixture;
        /* the record (docs/reliability.md) holds every fixture row's line, on every machine */
        ck_assert_msg(!(r->needs && r->start.fixture), "row %d: a row that may be skipped does not start from the "
                      "fixture", i);
    }
    for (int k = 0; k < nreads; k++) {
        bool seen = false;
        for (int i = 0; i < n && !seen; i++) seen = !strcmp(row_at(i)->cmd, READS[k][0]) && !strcmp(row_at(i)->input, READS[k][1]);
        ck_assert_msg(seen, "no row for qkv %s, %s", READS[k][0], READS[k][1]);
    }
    /* every command is run by some row */
    const char *cmds[] = {"train", "eval", "sample", "params", "gradcheck", "ablate", "bench", "summarize", "inspect"};
    for (size_t k = 0; k < sizeof cmds / sizeof cmds[0]; k++) {
        char word[64];
        snprintf(word, sizeof word, Q "%s ", cmds[k]);
        bool seen = false;
        for (int i = 0; i < n && !seen; i++) seen = strstr(row_at(i)->run, word) != NULL;
        ck_assert_msg(seen, "no row runs qkv %s", cmds[k]);
    }
    /* every kind of hostile file, twice at least */
    const char *kinds[] = {K_EMPTY, K_HUGE, K_TRUNC, K_WRONG, K_FIFO, K_DIR, K_DANGLING, K_DIRLINK, K_NL, K_QUOTE};
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        int seen = 0;
        for (int i = 0; i < n; i++) seen += !strncmp(row_at(i)->kind, kinds[k], strlen(kinds[k]));
        ck_assert_msg(seen >= 2, "fewer than 2 rows of kind \"%s\"", kinds[k]);
    }
    ck_assert_int_ge(n, 400);
    ck_assert_int_ge(fixture, 100);
    ck_assert_int_ge(by_status[1], 10);
    ck_assert_int_ge(by_status[2], 30);
}
END_TEST

Suite *cli_contract_suite(void) {
    Suite *s = suite_create("cli_contract");
    TCase *tc = tcase_create("rows");
    tcase_add_unchecked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_table_coverage);
    tcase_add_loop_test(tc, test_row, 0, nrows());
    tcase_add_test(tc, test_record);
    suite_add_tcase(s, tc);
    return s;
}
