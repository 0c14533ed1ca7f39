/* Hostile input, round two (docs/reliability.md, "Hostile input, round two"): the commands added
 * since the first bad-input table (Slurm sweeps, shards, summarize, sample, the text
 * corpus) given what a hostile or careless user would give them. One test per defect found, each
 * named for what it guards; each failed before its fix. Every refusal is one line on stderr,
 * exit 1 or 2, and nothing written. The commands run through /bin/sh (qkv_test_sh), so values
 * with newlines are made with printf. */
#define _GNU_SOURCE
#include <check.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "suites.h"
#include "testutil.h"

static char TMP[256];

static void setup(void) { qkv_test_mkdtemp(TMP, sizeof TMP, "hostile"); }
static void teardown(void) { qkv_test_rmtree(TMP); }

/* `cd TMP && CMD` with stdout and stderr into out; the exit status */
static int run(char *out, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int run(char *out, size_t n, const char *fmt, ...) {
    char cmd[6000];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    return qkv_test_sh(out, n, true, "cd '%s' && { %s ; }", TMP, cmd);
}

static int lines(const char *s) {
    int k = 0;
    for (; *s; s++) k += *s == '\n';
    return k;
}

/* out is exactly one line holding want */
static void one_line(const char *out, const char *want) {
    ck_assert_msg(lines(out) == 1 && strchr(out, '\n')[1] == 0, "expected one line, got:\n%s", out);
    ck_assert_msg(strstr(out, want), "no '%s' in: %s", want, out);
}

static bool exists(const char *rel) {
    char p[600];
    snprintf(p, sizeof p, "%s/%s", TMP, rel);
    struct stat st;
    return lstat(p, &st) == 0;
}

static void put(const char *rel, const char *text) { qkv_test_put(TMP, rel, text); }
static char *get(const char *rel) { return qkv_test_get(TMP, rel); }

#define Q qkv_test_bin()
/* a tiny recall model and a sweep of 2 variants x 2 seeds over it */
#define BASE                                                                                             \
    "{\"model\": {\"d_model\": 16, \"heads\": 2, \"layers\": 1, \"d_ff\": 32},\n"                        \
    " \"task\": {\"name\": \"recall\", \"pairs\": 3, \"keys\": 8, \"values\": 8},\n"                     \
    " \"train\": {\"steps\": 20, \"batch\": 8, \"eval_every\": 10, \"eval_examples\": 16}}\n"
#define SWEEP(seeds)                                                                                     \
    "{\"base\": \"base.json\", \"threshold\": 0.6,\n"                                                   \
    " \"variants\": [{\"name\": \"full\"}, {\"name\": \"identity\", \"set\": [\"model.attention.qkv=identity\"]}],\n" \
    " \"seeds\": " seeds "}\n"

static void sweep_files(void) {
    put("base.json", BASE);
    put("abl.json", SWEEP("[0, 1]"));
}

/* 1. Nothing from the command line reaches a job script as a line of its own: an --sbatch value
 * with a newline is refused (before anything is written); paths with spaces, quotes and
 * newlines stay single shell words or arguments of sbatch itself */
START_TEST(test_slurm_script_injection_refused) {
    sweep_files();
    char out[32768];
    ck_assert_int_eq(run(out, sizeof out, "%s ablate abl.json --out sl --slurm --dry-run --sbatch \"$(printf "
                         "'%%s\\n%%s' --comment=x 'touch %s/pwned')\"", Q, TMP), 2);
    one_line(out, "qkv ablate: --sbatch: value 1 holds a control character (byte 0x0a at 11)");
    ck_assert(!exists("sl") && !exists("pwned"));
    /* the same without --dry-run: refused before the plan is written or sbatch is looked for */
    ck_assert_int_eq(run(out, sizeof out, "%s ablate abl.json --out sl --slurm --sbatch \"$(printf "
                         "'%%s\\r%%s' --comment=x 'touch pwned')\"", Q), 2);
    one_line(out, "byte 0x0d");
    ck_assert(!exists("sl"));
    ck_assert_int_eq(run(out, sizeof out, "%s ablate abl.json --out sl --slurm --dry-run --sbatch partition=cpu", Q), 2);
    one_line(out, "--sbatch: expected an sbatch option (such as --partition=cpu), got 'partition=cpu'");
    /* an output directory whose name holds a newline: refused, it would be part of a script */
    ck_assert_int_eq(run(out, sizeof out, "%s ablate abl.json --out \"$(printf 'a\\ntouch pwned')\" --slurm --dry-run",
                         Q), 2);
    one_line(out, "--out holds a control character");
    /* a space and a quote: one word everywhere; the scripts parse as sh and run nothing else */
    ck_assert_int_eq(run(out, sizeof out, "%s ablate abl.json --out \"it's here\" --slurm --dry-run "
                         "--sbatch '--comment=a b;c' > dry.txt", Q), 0);
    char *dry = get("dry.txt");
    ck_assert_msg(strstr(dry, " --out '"), "%s", dry);
    ck_assert_msg(strstr(dry, "/it'\\''s here' --shard auto --jobs 1 &\n"), "%s", dry);
    ck_assert_msg(strstr(dry, "# sbatch --parsable '--output="), "%s", dry);
    ck_assert_msg(strstr(dry, "#SBATCH --comment=a b;c\n"), "%s", dry);
    ck_assert_ptr_null(strstr(dry, "#SBATCH --output")); /* a space would end it there: given to sbatch instead */
    /* every line is a comment, or one of the lines qkv writes itself */
    const char *ok[] = {"#", "echo \"qkv ablate --slurm: task ", "'/", "pid=$!", "trap '", "wait $pid", "exec '", ""};
    for (char *l = dry, *e; *l; l = e + 1) {
        e = strchr(l, '\n');
        ck_assert_ptr_nonnull(e);
        bool known = false;
        for (size_t i = 0; i < sizeof ok / sizeof ok[0] && !known; i++)
            known = ok[i][0] ? !strncmp(l, ok[i], strlen(ok[i])) : l == e;
        ck_assert_msg(known, "a line qkv does not write: %.*s", (int)(e - l), l);
    }
    free(dry);
    ck_assert(!exists("it's here"));
    /* sbatch expands %A, %a, %j in --output: a % of the directory's own is doubled */
    ck_assert_int_eq(run(out, sizeof out, "%s ablate abl.json --out '50%%a' --slurm --dry-run", Q), 0);
    ck_assert_msg(strstr(out, "/50%%a/slurm/task-%A_%a.log' '"), "%s", out);
}
END_TEST

/* 2. --shard auto parses Slurm's variables whole: garbage is an error naming the variable, not
 * task 0 */
START_TEST(test_shard_auto_env_parsed_strictly) {
    sweep_files();
    char out[4096];
    const char *bad[][3] = {
        {"x", "2", "SLURM_ARRAY_TASK_ID: expected an integer in [0, 100000000], got 'x'"},
        {"1x", "2", "SLURM_ARRAY_TASK_ID: expected an integer in [0, 100000000], got '1x'"},
        {"", "2", "SLURM_ARRAY_TASK_ID: expected an integer in [0, 100000000], got ''"},
        {" 1", "2", "got ' 1'"},
        {"99999999999999999999", "2", "got '99999999999999999999'"},
        {"0", "two", "SLURM_ARRAY_TASK_COUNT: expected an integer in [1, 1000000], got 'two'"},
        {"0", "0", "SLURM_ARRAY_TASK_COUNT: expected an integer in [1, 1000000], got '0'"},
        {"5", "2", "task 5 of 2 is not a share"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ck_assert_int_eq(run(out, sizeof out, "SLURM_ARRAY_TASK_ID='%s' SLURM_ARRAY_TASK_COUNT='%s' %s ablate abl.json "
                             "--out sh --shard auto", bad[i][0], bad[i][1], Q), 2);
        one_line(out, bad[i][2]);
        ck_assert(!exists("sh"));
    }
    ck_assert_int_eq(run(out, sizeof out, "SLURM_ARRAY_TASK_ID=3 SLURM_ARRAY_TASK_COUNT=2 SLURM_ARRAY_TASK_MIN=-1 %s "
                         "ablate abl.json --out sh --shard auto", Q), 2);
    one_line(out, "SLURM_ARRAY_TASK_MIN: expected an integer in [0, 100000000], got '-1'");
    /* I/N is as strict: no space or sign after the slash; and a share goes with training only */
    ck_assert_int_eq(run(out, sizeof out, "%s ablate abl.json --out sh --shard '0/ 3'", Q), 2);
    one_line(out, "--shard: expected I/N with 0 <= I < N (or auto), got '0/ 3'");
    ck_assert_int_eq(run(out, sizeof out, "%s ablate abl.json --out sh --shard 0/+3", Q), 2);
    ck_assert_int_eq(run(out, sizeof out, "%s ablate abl.json --out sh --shard 0/2 --status", Q), 2);
    one_line(out, "--shard trains a share of the sweep: not with --status, --report, --refresh or --slurm");
    /* the option parser is as strict: no space before the number */
    ck_assert_int_eq(run(out, sizeof out, "%s ablate abl.json --out sh --jobs ' 2'", Q), 2);
    one_line(out, "--jobs: expected an integer in [1, 256], got ' 2'");
}
END_TEST

/* 3. --slurm --dry-run writes nothing anywhere: no --out, no configs; so a real sweep of the
 * edited config is not refused later */
START_TEST(test_slurm_dry_run_writes_nothing) {
    sweep_files();
    char out[32768];
    ck_assert_int_eq(run(out, sizeof out, "%s ablate abl.json --out sl --slurm --dry-run", Q), 0);
    ck_assert_msg(!exists("sl"), "a dry run created its --out");
    put("abl.json", SWEEP("[0, 1, 2]")); /* edited */
    ck_assert_int_eq(run(out, sizeof out, "%s ablate abl.json --out sl --slurm --dry-run > /dev/null", Q), 0);
    ck_assert_msg(!exists("sl"), "a dry run created its --out");
    /* a real (local) sweep of the edited config into the same directory runs */
    ck_assert_int_eq(run(out, sizeof out, "%s ablate abl.json --out sl --jobs 2 --quiet", Q), 0);
    ck_assert(exists("sl/results.json"));
    /* a dry run of another config over it is still refused, as a real one is */
    put("abl.json", "{\"base\": \"base.json\", \"threshold\": 0.6, \"set\": [\"optim.lr=0.002\"], "
                    "\"variants\": [{\"name\": \"full\"}], \"seeds\": [0]}\n");
    ck_assert_int_eq(run(out, sizeof out, "%s ablate abl.json --out sl --slurm --dry-run", Q), 1);
    one_line(out, "made from another config");
}
END_TEST

/* 4. A corpus that is not a regular file (a pipe, a FIFO, a device) is refused at once, without
 * blocking and without reading from it; the same bytes on a descriptor that is a file train;
 * configs from a pipe are read once, up to their cap */
START_TEST(test_corpus_not_regular_refused) {
    char out[8192];
    char corpus[40000];
    for (size_t i = 0; i < sizeof corpus - 1; i++) corpus[i] = "the quick brown fox jumps over the lazy dog\n"[i % 44];
    corpus[sizeof corpus - 1] = 0;
    put("corpus.txt", corpus);
#define TEXT(path)                                                                                              \
    "{\"model\": {\"d_model\": 16, \"heads\": 2, \"layers\": 1, \"d_ff\": 32}, \"task\": {\"name\": \"text\", " \
    "\"path\": \"" path "\", \"seq_len\": 16}, \"train\": {\"steps\": 2, \"batch\": 2, \"eval_every\": 0, "     \
    "\"eval_examples\": 4}}\n"
    put("zero.json", TEXT("/dev/zero"));
    time_t t0 = time(NULL);
    ck_assert_int_eq(run(out, sizeof out, "%s train zero.json --out o", Q), 2);
    one_line(out, "task.path: \"/dev/zero\" is a character device, not a regular file");
    /* a FIFO with one writer: refused at once; the writer is left waiting, and killed */
    ck_assert_int_eq(mkfifo(strcat(strcpy(out, TMP), "/fifo"), 0644), 0);
    put("fifo.json", TEXT("fifo"));
    ck_assert_int_eq(run(out, sizeof out, "{ cat corpus.txt > fifo & } >/dev/null 2>&1; w=$!; %s train fifo.json --out o; "
                         "rc=$?; kill $w 2>/dev/null; exit $rc", Q), 2);
    one_line(out, "task.path: \"fifo\" is a pipe (FIFO), not a regular file");
    /* a pipe on a descriptor (as <(zcat ...) gives): refused, not trained on less its first 4 KiB */
    put("fd.json", TEXT("/dev/fd/3"));
    ck_assert_int_eq(run(out, sizeof out, "cat corpus.txt | %s train fd.json --out o 3<&0", Q), 2);
    one_line(out, "task.path: \"/dev/fd/3\" is a pipe (FIFO), not a regular file");
    ck_assert_msg(time(NULL) - t0 < 20, "the refusals took %ld s", (long)(time(NULL) - t0));
    ck_assert(!exists("o"));
    /* the same descriptor on the file itself trains */
    ck_assert_int_eq(run(out, sizeof out, "%s train fd.json --out o --quiet 3< corpus.txt", Q), 0);
    ck_assert(exists("o/model.safetensors"));
    /* a config from a pipe is read once (params prints its table); /dev/zero as a config is
     * refused at its cap, not read until memory runs out */
    put("cfg.json", BASE);
    ck_assert_int_eq(run(out, sizeof out, "cat cfg.json | %s params /dev/stdin > /dev/null", Q), 0);
    ck_assert_int_eq(run(out, sizeof out, "%s train /dev/zero --out o2", Q), 2);
    one_line(out, "/dev/zero: file too large for a config (over 16 MiB)");
    /* a checkpoint that is a device */
    ck_assert_int_eq(run(out, sizeof out, "%s eval cfg.json --checkpoint /dev/zero", Q), 1);
    one_line(out, "/dev/zero: is a character device, not a regular file");
#undef TEXT
}
END_TEST

/* 8. One cap for every config: an ablation config over 16 MiB is refused as a training config is */
START_TEST(test_ablation_config_size_capped) {
    sweep_files();
    char out[4096];
    ck_assert_int_eq(run(out, sizeof out, "{ printf '{\"title\": \"'; head -c 17000000 /dev/zero | tr '\\0' a; "
                         "printf '\"}'; } > big.json && %s ablate big.json --out o --status", Q), 2);
    one_line(out, "big.json: file too large for a config (over 16 MiB)");
}
END_TEST

#define RESULTS(variants) "{\"title\": \"t\", \"baseline\": \"full\", \"variants\": [" variants "]}\n"

/* 5. --update-doc writes through a symbolic link to its target (the link stays), keeps the
 * document's mode, and refuses a read-only document, even as root */
START_TEST(test_update_doc_link_mode_readonly) {
    char out[4096];
    ck_assert_int_eq(mkdir(strcat(strcpy(out, TMP), "/a"), 0755), 0);
    put("a/results.json", RESULTS("{\"name\": \"full\"}"));
    const char *doc = "# d\n<!-- qkv summarize: a -->\n<!-- end -->\n";
    put("target.md", doc);
    ck_assert_int_eq(run(out, sizeof out, "chmod 0640 target.md && ln -s target.md link.md && "
                         "%s summarize --update-doc link.md", Q), 0);
    struct stat st;
    char p[600];
    snprintf(p, sizeof p, "%s/link.md", TMP);
    ck_assert_int_eq(lstat(p, &st), 0);
    ck_assert_msg(S_ISLNK(st.st_mode), "the link was replaced by a file");
    snprintf(p, sizeof p, "%s/target.md", TMP);
    ck_assert_int_eq(stat(p, &st), 0);
    ck_assert_int_eq(st.st_mode & 07777, 0640);
    char *now = get("target.md");
    ck_assert_msg(strcmp(now, doc) && strstr(now, "| variant"), "the target was not updated:\n%s", now);
    free(now);
    ck_assert_int_eq(run(out, sizeof out, "%s summarize --check-doc link.md", Q), 0);
    /* read-only: refused, the file as it was, its mode too */
    put("ro.md", doc);
    ck_assert_int_eq(run(out, sizeof out, "chmod 0444 ro.md && %s summarize --update-doc ro.md", Q), 1);
    one_line(out, "ro.md: is read-only (mode 0444): not rewritten; make it writable first");
    snprintf(p, sizeof p, "%s/ro.md", TMP);
    ck_assert_int_eq(stat(p, &st), 0);
    ck_assert_int_eq(st.st_mode & 07777, 0444);
    now = get("ro.md");
    ck_assert_str_eq(now, doc);
    free(now);
}
END_TEST

/* 8. A stray end marker fails --check-doc naming its line; results.json values outside their
 * range are refused by summarize, naming the key */
START_TEST(test_stray_end_marker_and_results_ranges) {
    char out[4096];
    ck_assert_int_eq(mkdir(strcat(strcpy(out, TMP), "/a"), 0755), 0);
    put("a/results.json", RESULTS("{\"name\": \"full\"}"));
    put("d.md", "# d\n\ntext\n<!-- end -->\n");
    ck_assert_int_eq(run(out, sizeof out, "%s summarize --check-doc d.md", Q), 1);
    one_line(out, "d.md:4: <!-- end --> without a marker (<!-- qkv ...-->) before it");
    put("d.md", "<!-- qkv summarize: a -->\n<!-- end -->\n<!-- end -->\n");
    ck_assert_int_eq(run(out, sizeof out, "%s summarize --update-doc d.md", Q), 1);
    one_line(out, "d.md:3: <!-- end --> without a marker");
    put("d.md", "```\n<!-- end -->\n```\n"); /* in a fence: an example, not a marker */
    ck_assert_int_eq(run(out, sizeof out, "%s summarize --check-doc d.md", Q), 0);
    const char *bad[][2] = {
        {RESULTS("{\"name\": \"full\", \"acc_mean\": 7.5}"), "variants[0].acc_mean: expected a number in [0, 1] or null, got 7.5"},
        {RESULTS("{\"name\": \"full\", \"acc_ci_low\": -0.1}"), "variants[0].acc_ci_low: expected a number in [0, 1]"},
        {RESULTS("{\"name\": \"full\", \"p_value\": 2}"), "variants[0].p_value: expected a number in [0, 1]"},
        {RESULTS("{\"name\": \"full\", \"loss_mean\": -1}"), "variants[0].loss_mean: expected a number >= 0 or null"},
        {RESULTS("{\"name\": \"full\", \"runs\": [{\"seed\": 0, \"ok\": true, \"final_loss\": -3}]}"),
         "variants[0].runs[0].final_loss: expected a number >= 0"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        put("a/results.json", bad[i][0]);
        ck_assert_int_eq(run(out, sizeof out, "%s summarize a --out s", Q), 1);
        one_line(out, bad[i][1]);
        ck_assert(!exists("s"));
    }
}
END_TEST

/* 8. sample's --prompt: an empty token (two commas, a comma first or last) is an error, not a
 * token dropped */
START_TEST(test_prompt_empty_token_refused) {
    char out[8192];
    put("cfg.json", BASE);
    ck_assert_int_eq(run(out, sizeof out, "%s train cfg.json --out r --quiet > /dev/null", Q), 0);
    const char *bad[][2] = {{"1,,2", "--prompt: token 2 is empty (two commas in a row)"},
                            {",1", "--prompt: token 1 is empty (a comma before the first token)"},
                            {"1,2,", "--prompt: token 3 is empty (a comma after the last token)"},
                            {"1, ,2", "--prompt: token 2 is empty (two commas in a row)"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ck_assert_int_eq(run(out, sizeof out, "%s sample r/config.json --checkpoint r/model.safetensors --prompt '%s' "
                             "--tokens 2", Q, bad[i][0]), 2);
        one_line(out, bad[i][1]);
    }
    ck_assert_int_eq(run(out, sizeof out, "%s sample r/config.json --checkpoint r/model.safetensors --prompt '1, 2 3' "
                         "--tokens 2 > /dev/null", Q), 0);
}
END_TEST

/* 8. --slurm --tasks beyond the sweep's runs: capped at the runs, and said */
START_TEST(test_slurm_tasks_capped_at_runs) {
    sweep_files();
    char out[32768];
    ck_assert_int_eq(run(out, sizeof out, "%s ablate abl.json --out sl --slurm --dry-run --tasks 100 --parallel 50", Q),
                     0);
    ck_assert_msg(strstr(out, "qkv ablate: --tasks 100 is more than the sweep's 4 runs: submitting 4 tasks\n"), "%s",
                  out);
    ck_assert_msg(strstr(out, "#SBATCH --array=0-3%4\n"), "%s", out);
}
END_TEST

Suite *hostile_suite(void) {
    Suite *s = suite_create("hostile");
    TCase *tc = tcase_create("round2");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_slurm_script_injection_refused);
    tcase_add_test(tc, test_shard_auto_env_parsed_strictly);
    tcase_add_test(tc, test_slurm_dry_run_writes_nothing);
    tcase_add_test(tc, test_corpus_not_regular_refused);
    tcase_add_test(tc, test_ablation_config_size_capped);
    tcase_add_test(tc, test_update_doc_link_mode_readonly);
    tcase_add_test(tc, test_stray_end_marker_and_results_ranges);
    tcase_add_test(tc, test_prompt_empty_token_refused);
    tcase_add_test(tc, test_slurm_tasks_capped_at_runs);
    suite_add_tcase(s, tc);
    return s;
}
