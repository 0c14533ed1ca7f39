/* The command-line contract, the command line and the environment: commands, options and their
 * values, sample's prompts, the Slurm options of qkv ablate (nothing from the command line
 * reaches a job script as a line of its own), and the environment variables a command reads.
 * Each row is a command, the option (or variable) it reads and the kind of bad value; the
 * contract every row must keep is qkv_cli_row's (testutil.h), the suite is
 * tests/test_cli_contract.c. A bad command line is a usage error: exit 2, one line naming the
 * option, nothing written.
 *
 * FROM_RUN rows start from the fixture (a finished run r/, a finished ablation ab/ of abl.json;
 * their outcomes are the record in docs/reliability.md). */
#define _GNU_SOURCE
#include <check.h>
#include <stdbool.h>
#include <string.h>

#include "cli_contract.h"

/* a run of the 20-step recall model, r/ */
#define TRAINED FILES_SH(Q "train cfg.json --out r --quiet > /dev/null", {"cfg.json", SWEEP_BASE})
#define SHARD_AUTO(id, count) \
    "SLURM_ARRAY_TASK_ID=" id " SLURM_ARRAY_TASK_COUNT=" count " " Q "ablate abl.json --out sh --shard auto"

/* the scripts of a dry run (on stdout) quote every path as one word, give --output to sbatch's
 * command line (a space would end an #SBATCH line there) and hold only comments and the lines qkv
 * writes itself */
static void slurm_script_words(const char *dir, const char *dry) {
    (void)dir;
    ck_assert_msg(strstr(dry, " --out '"), "%s", dry);
    ck_assert_msg(strstr(dry, "/it'\\''s here' --shard auto --jobs 1 &\n"), "%s", dry);
    ck_assert_msg(strstr(dry, "# sbatch --parsable '--output="), "%s", dry);
    ck_assert_msg(strstr(dry, "#SBATCH --comment=a b;c\n"), "%s", dry);
    ck_assert_ptr_null(strstr(dry, "#SBATCH --output"));
    const char *ok[] = {"#", "echo \"qkv ablate --slurm: task ", "'/", "pid=$!", "trap '", "wait $pid", "exec '", ""};
    for (const char *l = dry, *e; *l; l = e + 1) {
        e = strchr(l, '\n');
        ck_assert_ptr_nonnull(e);
        bool known = false;
        for (size_t i = 0; i < sizeof ok / sizeof ok[0] && !known; i++)
            known = ok[i][0] ? !strncmp(l, ok[i], strlen(ok[i])) : l == e;
        ck_assert_msg(known, "a line qkv does not write: %.*s", (int)(e - l), l);
    }
}

const qkv_cli_row CLI_OPTIONS_ROWS[] = {
    /* ---- qkv COMMAND */
    {"qkv", "COMMAND", "missing", FROM_RUN(NULL), "\"$QKV\"", 2, "qkv: missing COMMAND"},
    {"qkv", "COMMAND", K_NL, FROM_RUN(NULL), Q NL("tr", "ain"), 2, "qkv: unknown command or option 'tr\\x0aain'"},
    {"qkv", "COMMAND", "unknown (a typo)", EMPTY_DIR, Q "trian cfg.json", 2, "qkv: unknown command or option 'trian'"},
    /* ---- train */
    {"train", "CONFIG", "not given", EMPTY_DIR, Q "train --out out", 2, "qkv train: missing CONFIG"},
    {"train", "options", "unknown option", CFG(BASE), Q "train cfg.json --bogus --out out", 2,
     "qkv train: unknown option '--bogus' (try 'qkv train --help')"},
    {"train", "--out", "without its value", CFG(BASE), Q "train cfg.json --out", 2, "qkv train: --out needs a value"},
    {"train", "--threads", "0", CFG(BASE), Q "train cfg.json --threads 0 --out out", 2, THREADS_RANGE "'0'"},
    {"train", "--threads", "above the thread pool's limit", CFG(BASE),
     Q "train cfg.json --threads " STR(OVER_MAX_THREADS) " --out out", 2,
     "qkv train: " THREADS_RANGE "'" STR(OVER_MAX_THREADS) "'"},
    {"train", "--threads", "at the limit (parses; the missing config fails)", EMPTY_DIR,
     Q "train --threads " STR(QKV_MAX_THREADS) " --out out nope.json", 2, "qkv train: nope.json: cannot open"},
    {"train --resume", "CONFIG", "given too", CFG(BASE), Q "train cfg.json --resume out", 2,
     "drop CONFIG, --set and --out"},
    /* ---- eval */
    {"eval", "--checkpoint", "not given", CFG(BASE), Q "eval cfg.json", 2, "needs CONFIG and --checkpoint FILE"},
    {"eval", "options", "unknown option", BASE_CK(TEST_CK_GOOD), Q "eval cfg.json --checkpoint ck.safetensors --bogus",
     2, "qkv eval: unknown option '--bogus'"},
    {"eval", "--threads", "above the thread pool's limit", BASE_CK(TEST_CK_GOOD),
     Q "eval cfg.json --checkpoint ck.safetensors --threads " STR(OVER_MAX_THREADS), 2,
     "qkv eval: " THREADS_RANGE "'" STR(OVER_MAX_THREADS) "'"},
    {"eval", "--threads", "at the limit (parses; the missing --checkpoint fails)", CFG(BASE),
     Q "eval cfg.json --threads " STR(QKV_MAX_THREADS), 2, "qkv eval: needs CONFIG and --checkpoint FILE"},
    /* ---- sample: --checkpoint, --prompt, --tokens, --temperature, --top-k */
    {"sample", "--checkpoint", "not given", CFG(BASE), Q "sample cfg.json --prompt 1", 2,
     "qkv sample: needs CONFIG and --checkpoint FILE"},
    {"sample", "--prompt", "a token outside the vocabulary", BASE_CK(TEST_CK_GOOD),
     Q "sample cfg.json --checkpoint ck.safetensors --prompt '1 99'", 2,
     "qkv sample: --prompt: token 99 (token 2) is outside the model's vocabulary [0, 16)"},
    {"sample", "--prompt", "not token ids", BASE_CK(TEST_CK_GOOD),
     Q "sample cfg.json --checkpoint ck.safetensors --prompt 1,x", 2,
     "qkv sample: --prompt: expected token ids separated by spaces or commas, got 'x' (token 2)"},
    {"sample", "--prompt", "not given, for a task of token ids", BASE_CK(TEST_CK_GOOD),
     Q "sample cfg.json --checkpoint ck.safetensors", 2, "qkv sample: --prompt: task \"recall\" needs one"},
    {"sample", "--prompt", "empty", BASE_CK(TEST_CK_GOOD),
     Q "sample cfg.json --checkpoint ck.safetensors --prompt ' , '", 2,
     "qkv sample: --prompt: empty; give at least one token id"},
    {"sample", "--prompt", "a newline between tokens", FROM_RUN(NULL),
     Q "sample r/config.json --checkpoint r/model.safetensors --tokens 2 --prompt " NL("1", "2") " > /dev/null", 0},
    {"sample", "--prompt", "a token outside the vocabulary", FROM_RUN(NULL),
     Q "sample r/config.json --checkpoint r/model.safetensors --prompt 99", 2, "--prompt"},
    {"sample", "--prompt", "an empty token (two commas in a row)", TRAINED,
     Q "sample r/config.json --checkpoint r/model.safetensors --prompt '1,,2' --tokens 2", 2,
     "--prompt: token 2 is empty (two commas in a row)"},
    {"sample", "--prompt", "an empty token (a comma first)", TRAINED,
     Q "sample r/config.json --checkpoint r/model.safetensors --prompt ',1' --tokens 2", 2,
     "--prompt: token 1 is empty (a comma before the first token)"},
    {"sample", "--prompt", "an empty token (a comma last)", TRAINED,
     Q "sample r/config.json --checkpoint r/model.safetensors --prompt '1,2,' --tokens 2", 2,
     "--prompt: token 3 is empty (a comma after the last token)"},
    {"sample", "--prompt", "an empty token (a space between two commas)", TRAINED,
     Q "sample r/config.json --checkpoint r/model.safetensors --prompt '1, ,2' --tokens 2", 2,
     "--prompt: token 2 is empty (two commas in a row)"},
    {"sample", "--prompt", "commas and spaces between tokens (valid)", TRAINED,
     Q "sample r/config.json --checkpoint r/model.safetensors --prompt '1, 2 3' --tokens 2 > /dev/null", 0},
    {"sample", "--tokens", "0", BASE_CK(TEST_CK_GOOD),
     Q "sample cfg.json --checkpoint ck.safetensors --prompt 1 --tokens 0", 2,
     "qkv sample: --tokens: expected an integer in [1, 1000000], got '0'"},
    {"sample", "--temperature", "negative", BASE_CK(TEST_CK_GOOD),
     Q "sample cfg.json --checkpoint ck.safetensors --prompt 1 --temperature -1", 2,
     "qkv sample: --temperature: expected a number in [0, 1000], got '-1'"},
    {"sample", "--temperature", "not a number", BASE_CK(TEST_CK_GOOD),
     Q "sample cfg.json --checkpoint ck.safetensors --prompt 1 --temperature nan", 2,
     "qkv sample: --temperature: expected a number in [0, 1000], got 'nan'"},
    {"sample", "--top-k", "negative", BASE_CK(TEST_CK_GOOD),
     Q "sample cfg.json --checkpoint ck.safetensors --prompt 1 --top-k -1", 2,
     "qkv sample: --top-k: expected an integer in [0, 1048576], got '-1'"},
    {"sample", "options", "unknown option", BASE_CK(TEST_CK_GOOD),
     Q "sample cfg.json --checkpoint ck.safetensors --prompt 1 --bogus", 2, "qkv sample: unknown option '--bogus'"},
    /* ---- params, gradcheck */
    {"params", "options", "unknown option", CFG(BASE), Q "params cfg.json --bogus", 2,
     "qkv params: unknown option '--bogus'"},
    {"gradcheck", "options", "unknown option", CFG(BASE), Q "gradcheck cfg.json --bogus", 2,
     "qkv gradcheck: unknown option '--bogus'"},
    /* ---- ablate: options */
    {"ablate", "options", "unknown option",
     FILES({"abl.json", ABL("\"variants\": [{\"name\": \"a\"}], \"seeds\": [0]")}),
     Q "ablate abl.json --bogus --out out", 2, "qkv ablate: unknown option '--bogus'"},
    {"ablate", "--jobs", "a leading space", FILES(SWEEP_FILES), Q "ablate abl.json --out sh --jobs ' 2'", 2,
     "--jobs: expected an integer in [1, 256], got ' 2'"},
    /* ---- ablate --shard I/N: no space or sign after the slash; a share goes with training only */
    {"ablate --shard", "I/N", "garbage", FROM_RUN(NULL), Q "ablate abl.json --out o --shard 1/x", 2,
     "--shard: expected I/N"},
    {"ablate --shard", "I/N", "a space after the slash", FILES(SWEEP_FILES), Q "ablate abl.json --out sh --shard '0/ 3'", 2,
     "--shard: expected I/N with 0 <= I < N (or auto), got '0/ 3'"},
    {"ablate --shard", "I/N", "a sign after the slash", FILES(SWEEP_FILES), Q "ablate abl.json --out sh --shard 0/+3", 2,
     "--shard: expected I/N with 0 <= I < N (or auto), got '0/+3'"},
    {"ablate --shard", "--status", "given too", FILES(SWEEP_FILES), Q "ablate abl.json --out sh --shard 0/2 --status", 2,
     "--shard trains a share of the sweep: not with --status, --report, --refresh or --slurm"},
    /* ---- ablate --slurm: nothing from the command line reaches a job script as a line of its own
     * (refused before anything is written); a dry run writes nothing anywhere */
    {"ablate --slurm", "--sbatch", "a value with a newline and a command", FILES(SWEEP_FILES),
     Q "ablate abl.json --out sl --slurm --dry-run --sbatch \"$(printf '%s\\n%s' --comment=x \"touch $PWD/pwned\")\"", 2,
     "qkv ablate: --sbatch: value 1 holds a control character (byte 0x0a at 11)", .absent = "sl,pwned"},
    {"ablate --slurm", "--sbatch", "a value with a carriage return (no --dry-run)", FILES(SWEEP_FILES),
     Q "ablate abl.json --out sl --slurm --sbatch \"$(printf '%s\\r%s' --comment=x 'touch pwned')\"", 2, "byte 0x0d",
     .absent = "sl,pwned"},
    {"ablate --slurm", "--sbatch", "not an sbatch option", FILES(SWEEP_FILES),
     Q "ablate abl.json --out sl --slurm --dry-run --sbatch partition=cpu", 2,
     "--sbatch: expected an sbatch option (such as --partition=cpu), got 'partition=cpu'"},
    {"ablate --slurm", "--out DIR", "a name with a newline and a command", FILES(SWEEP_FILES),
     Q "ablate abl.json --out " NL("a", "touch pwned") " --slurm --dry-run", 2, "--out holds a control character",
     .absent = "pwned"},
    {"ablate --slurm", "--out DIR", "a name with a quote and a space; --sbatch with a space and a ;", FILES(SWEEP_FILES),
     Q "ablate abl.json --out \"it's here\" --slurm --dry-run --sbatch '--comment=a b;c'", 0, .absent = "it's here",
     .then = slurm_script_words},
    {"ablate --slurm", "--out DIR", "a name with a % (sbatch's pattern character)", FILES(SWEEP_FILES),
     Q "ablate abl.json --out '50%a' --slurm --dry-run", 0, .absent = "50%a", .out = "/50%%a/slurm/task-%A_%a.log' '"},
    {"ablate --slurm", "--tasks", "more than the sweep's runs", FILES(SWEEP_FILES),
     Q "ablate abl.json --out sl --slurm --dry-run --tasks 100 --parallel 50", 0,
     "qkv ablate: --tasks 100 is more than the sweep's 4 runs: submitting 4 tasks\n", .out = "#SBATCH --array=0-3%4\n"},
    {"ablate --slurm", "--dry-run", "writes nothing", FILES(SWEEP_FILES), Q "ablate abl.json --out sl --slurm --dry-run", 0,
     .absent = "sl"},
    {"ablate --slurm", "--dry-run", "after a dry run of an earlier config",
     FILES_SH(Q "ablate abl.json --out sl --slurm --dry-run > /dev/null && mv edited.json abl.json", SWEEP_FILES,
              {"edited.json", SWEEP("[0, 1, 2]")}),
     Q "ablate abl.json --out sl --slurm --dry-run > /dev/null", 0, .absent = "sl"},
    {"ablate", "--out DIR", "after dry runs of an earlier config",
     FILES_SH(Q "ablate abl.json --out sl --slurm --dry-run > /dev/null && mv edited.json abl.json && "
              Q "ablate abl.json --out sl --slurm --dry-run > /dev/null", SWEEP_FILES, {"edited.json", SWEEP("[0, 1, 2]")}),
     Q "ablate abl.json --out sl --jobs 2 --quiet", 0, .writes = "sl", .made = "sl/results.json"},
    {"ablate --slurm", "--dry-run", "over runs of another config",
     FILES_SH(Q "ablate abl.json --out sl --slurm --dry-run > /dev/null && mv edited.json abl.json && "
              Q "ablate abl.json --out sl --slurm --dry-run > /dev/null && " Q "ablate abl.json --out sl --jobs 2 --quiet && "
              "mv other.json abl.json", SWEEP_FILES, {"edited.json", SWEEP("[0, 1, 2]")},
              {"other.json", "{\"base\": \"base.json\", \"threshold\": 0.6, \"set\": [\"optim.lr=0.002\"], "
                             "\"variants\": [{\"name\": \"full\"}], \"seeds\": [0]}\n"}),
     Q "ablate abl.json --out sl --slurm --dry-run", 1, "made from another config"},
    /* ---- summarize */
    {"summarize", "DIR", "not given", EMPTY_DIR, Q "summarize --out out", 2, "qkv summarize: missing DIR"},
    {"summarize", "--out", "not given", FILES(RES_A(RESULTS("full", "{\"name\": \"full\"}"))), Q "summarize a", 2,
     "qkv summarize: --out OUTDIR: where to write the summary"},
    {"summarize", "options", "unknown option", EMPTY_DIR, Q "summarize a --out out --bogus", 2,
     "qkv summarize: unknown option '--bogus'"},
    {"summarize", "--check-doc", "with --update-doc", EMPTY_DIR, Q "summarize --check-doc d.md --update-doc d.md", 2,
     "--check-doc and --update-doc are separate actions"},
    {"summarize", "--out", "with --check-doc only", EMPTY_DIR, Q "summarize --check-doc d.md --out out", 2,
     "--out and --title go with DIRs"},
    {"sample", "--temperature", "a number that underflows", FROM_RUN(NULL),
     Q "sample r/config.json --checkpoint r/model.safetensors --temperature 1e-320", 2,
     "qkv sample: --temperature: '1e-320' is too close to 0 for a double (it underflows)"},
    {"ablate", "--stale-after", "below two heartbeats", ABLATION("\"variants\": [{\"name\": \"a\"}], \"seeds\": [0]"),
     Q "ablate abl.json --out out --stale-after 59", 2, "qkv ablate: --stale-after: expected an integer in [60, "},
    {"ablate", "--reuse", "a directory that is not a sweep's", ABLATION("\"variants\": [{\"name\": \"a\"}], \"seeds\": [0]"),
     Q "ablate abl.json --out out --reuse .", 2, "qkv ablate: --reuse .: not a sweep's directory (it has no configs/)"},
    {"ablate", "--reuse", "with --status", ABLATION("\"variants\": [{\"name\": \"a\"}], \"seeds\": [0]"),
     Q "ablate abl.json --out out --reuse out --status", 2,
     "qkv ablate: --reuse copies finished runs in before training: not with --status, --report, --refresh or "},
    /* ---- inspect */
    {"inspect", "options", "unknown option", EMPTY_DIR, Q "inspect run --bogus", 2,
     "qkv inspect: unknown option '--bogus'"},
    {"inspect", "RUN_DIR", "given twice", EMPTY_DIR, Q "inspect a b", 2,
     "qkv inspect: unexpected argument 'b' (one RUN_DIR only)"},
    {"inspect --figure", "--label", "fewer than the RUN_DIRs", EMPTY_DIR, Q "inspect a b --figure f.svg --label x", 2,
     "qkv inspect: --label: 1 given for 2 RUN_DIRs (one per RUN_DIR, in order)", .absent = "f.svg"},
    {"inspect --figure", "--label", "without --figure", EMPTY_DIR, Q "inspect a --label x", 2,
     "qkv inspect: --label goes with --figure"},
    {"inspect --figure", "--lang", "not a language of the figure", EMPTY_DIR, Q "inspect a --figure f.svg --lang fr", 2,
     "qkv inspect: --lang: 'fr' is not a language of the figure (en or zh)", .absent = "f.svg"},
    {"inspect --figure", "--lang", "without --figure", EMPTY_DIR, Q "inspect a --lang zh", 2,
     "qkv inspect: --lang goes with --figure"},
    /* ---- bench */
    {"bench", "options", "unknown option", EMPTY_DIR, Q "bench --bogus", 2, "qkv bench: unknown option '--bogus'"},
    /* an attention no size's model takes: refused before the table's header is printed */
    {"bench", "--set", "a value a size's model refuses", EMPTY_DIR, Q "bench --set model.attention.kv_heads=3", 2,
     "qkv bench: --set: size tiny: model.attention.kv_heads: 3 does not divide heads 4"},
    {"bench", "--set", "an unknown key (named once)", EMPTY_DIR, Q "bench --set model.attention.foo=1", 2,
     "qkv bench: --set: model.attention.foo: unknown key"},
    {"bench", "--size", "unknown", FROM_RUN(NULL), Q "bench --size huge", 2,
     "--size: expected tiny, small or medium, got 'huge'"},
    {"bench", "--threads", "above the thread pool's limit", EMPTY_DIR, Q "bench --threads " STR(OVER_MAX_THREADS), 2,
     "qkv bench: " THREADS_RANGE "'" STR(OVER_MAX_THREADS) "'"},
    {"bench", "--threads", "at the limit (parses; the bad --size fails)", EMPTY_DIR,
     Q "bench --threads " STR(QKV_MAX_THREADS) " --size huge", 2, "qkv bench: --size: expected tiny, small or medium"},
    {"bench", "--steps", "not a number", FROM_RUN(NULL), Q "bench --steps x", 2,
     "--steps: expected an integer in [1, 100000]"},
    {"bench", "--threads", "0", FROM_RUN(NULL), Q "bench --threads 0", 2,
     "--threads: expected an integer in [1, 64], got '0'"},
    {"bench", "--jobs", "without --sweep", FROM_RUN(NULL), Q "bench --jobs 1", 2,
     "--runs-steps, --jobs, --config and --time-products go with --sweep"},
    {"bench", "--time-products", "without --sweep", FROM_RUN(NULL), Q "bench --size tiny --time-products", 2,
     "--runs-steps, --jobs, --config and --time-products go with --sweep"},
    {"bench", "--micro-batches", "not dividing the batch", FROM_RUN(NULL), Q "bench --size tiny --micro-batches 3", 2,
     "--micro-batches 3: does not divide tiny's batch of 32"},
    {"bench", "--micro-batches", "with --sweep", FROM_RUN(NULL), Q "bench --sweep --micro-batches 2", 2,
     "--micro-batches time one step"},
    {"bench --sweep", "--size", "a step option", EMPTY_DIR, Q "bench --sweep --size tiny", 2,
     "qkv bench: --sweep times whole runs, each on one thread: --size, --steps, --threads and --micro-batches time one step"},
    {"bench", "--runs-steps", "without --sweep", EMPTY_DIR, Q "bench --runs-steps 5", 2,
     "qkv bench: --runs-steps, --jobs, --config and --time-products go with --sweep"},
    {"bench", "--precision", "unknown", EMPTY_DIR, Q "bench --precision fp16", 2,
     "qkv bench: --precision: expected f32, bf16 or both, got 'fp16'"},
    {"bench", "--precision", "beside --set train.precision", EMPTY_DIR,
     Q "bench --precision both --set train.precision=f32", 2,
     "qkv bench: --precision and --set train.precision: give one of them"},
    /* bf16 on a CPU without AVX512_BF16 (the cpuinfo shim, as train's row): refused before the
     * table's header, naming the key and the missing feature */
    {"bench", "--precision", "bf16 on a CPU without avx512_bf16",
     FILES_SH("printf 'processor\\t: 0\\nflags\\t\\t: fpu sse2 avx2 avx512f avx512bw\\n' > cpuinfo"),
     "QKV_CPUINFO=cpuinfo LD_PRELOAD=\"$QKV_CPUINFO_SHIM\" \"$QKV\" bench --size tiny --precision both", 2,
     "qkv bench: --precision both: train.precision \"bf16\" is refused: this CPU has no avx512_bf16 (AVX512_BF16 "
     "instructions) (use \"f32\")"},
    {"bench", "--rounds", "without --precision both", EMPTY_DIR, Q "bench --precision f32 --rounds 3", 2,
     "qkv bench: --rounds goes with --precision both"},
    {"bench", "--rounds", "0", EMPTY_DIR, Q "bench --rounds 0", 2, "--rounds: expected an integer in [1, 1000], got '0'"},
    {"bench --sweep", "--set", "the sweep's runs are its config's", EMPTY_DIR,
     Q "bench --sweep --set train.precision=bf16", 2,
     "qkv bench: --set: the sweep's runs are its config's (--config); --precision sets their products' precision"},
    {"bench --sweep", "--precision", "unknown", EMPTY_DIR, Q "bench --sweep --precision half", 2,
     "qkv bench: --precision: expected f32, bf16 or both, got 'half'"},
    /* ---- the environment: ablate --shard auto parses Slurm's variables whole (garbage is an error
     * naming the variable, not task 0); the rest is read or ignored without harm */
    {"ablate --shard auto", "SLURM_ARRAY_TASK_ID", "garbage", FROM_RUN(NULL),
     "SLURM_ARRAY_TASK_ID=1x SLURM_ARRAY_TASK_COUNT=2 " Q "ablate abl.json --out o --shard auto", 2,
     "SLURM_ARRAY_TASK_ID: expected an integer in [0, 100000000], got '1x'"},
    {"ablate --shard auto", "SLURM_ARRAY_TASK_ID", "a newline", FROM_RUN(NULL),
     "SLURM_ARRAY_TASK_ID=" NL("0", "1") " SLURM_ARRAY_TASK_COUNT=2 " Q "ablate abl.json --out o --shard auto", 2,
     "SLURM_ARRAY_TASK_ID: expected an integer"},
    {"ablate --shard auto", "SLURM_ARRAY_TASK_ID", "not a number", FILES(SWEEP_FILES), SHARD_AUTO("'x'", "'2'"), 2,
     "SLURM_ARRAY_TASK_ID: expected an integer in [0, 100000000], got 'x'", .absent = "sh"},
    {"ablate --shard auto", "SLURM_ARRAY_TASK_ID", "a number, then a letter", FILES(SWEEP_FILES), SHARD_AUTO("'1x'", "'2'"),
     2, "SLURM_ARRAY_TASK_ID: expected an integer in [0, 100000000], got '1x'", .absent = "sh"},
    {"ablate --shard auto", "SLURM_ARRAY_TASK_ID", "empty", FILES(SWEEP_FILES), SHARD_AUTO("''", "'2'"), 2,
     "SLURM_ARRAY_TASK_ID: expected an integer in [0, 100000000], got ''", .absent = "sh"},
    {"ablate --shard auto", "SLURM_ARRAY_TASK_ID", "a leading space", FILES(SWEEP_FILES), SHARD_AUTO("' 1'", "'2'"), 2,
     "got ' 1'", .absent = "sh"},
    {"ablate --shard auto", "SLURM_ARRAY_TASK_ID", "beyond 64 bits", FILES(SWEEP_FILES),
     SHARD_AUTO("'99999999999999999999'", "'2'"), 2, "got '99999999999999999999'", .absent = "sh"},
    {"ablate --shard auto", "SLURM_ARRAY_TASK_COUNT", "not a number", FILES(SWEEP_FILES), SHARD_AUTO("'0'", "'two'"), 2,
     "SLURM_ARRAY_TASK_COUNT: expected an integer in [1, 1000000], got 'two'", .absent = "sh"},
    {"ablate --shard auto", "SLURM_ARRAY_TASK_COUNT", "0", FILES(SWEEP_FILES), SHARD_AUTO("'0'", "'0'"), 2,
     "SLURM_ARRAY_TASK_COUNT: expected an integer in [1, 1000000], got '0'", .absent = "sh"},
    {"ablate --shard auto", "SLURM_ARRAY_TASK_ID", "beyond SLURM_ARRAY_TASK_COUNT", FILES(SWEEP_FILES),
     SHARD_AUTO("'5'", "'2'"), 2, "task 5 of 2 is not a share", .absent = "sh"},
    {"ablate --shard auto", "SLURM_ARRAY_TASK_MIN", "negative", FILES(SWEEP_FILES),
     "SLURM_ARRAY_TASK_MIN=-1 " SHARD_AUTO("3", "2"), 2,
     "SLURM_ARRAY_TASK_MIN: expected an integer in [0, 100000000], got '-1'"},
    {"bench --sweep", "TMPDIR", "missing", FROM_RUN(NULL),
     "TMPDIR=nowhere " Q "bench --sweep --config cfg.json --runs-steps 1", 1,
     "--sweep: cannot make a directory in nowhere (TMPDIR): No such file or directory"},
    {"bench --sweep", "TMPDIR", "a regular file", FROM_RUN("echo mine > x"),
     "TMPDIR=x " Q "bench --sweep --config cfg.json --runs-steps 1", 1, "in x (TMPDIR): Not a directory"},
    {"bench --sweep", "TMPDIR", K_NL " (missing)", FROM_RUN(NULL),
     "TMPDIR=" NL("a", "b") " " Q "bench --sweep --config cfg.json " "--runs-steps 1", 1,
     "in a\\x0ab (TMPDIR): No such file or directory"},
    {"train", "OPENBLAS_NUM_THREADS", "garbage", FROM_RUN(NULL),
     "OPENBLAS_NUM_THREADS=x " Q "train cfg.json --out o --quiet > /dev/null", 0},
    {"train", "OPENBLAS_NUM_THREADS", "-1", FROM_RUN(NULL),
     "OPENBLAS_NUM_THREADS=-1 " Q "train cfg.json --out o --quiet > /dev/null", 0},
    {"train", "QKV_ARENA_POISON", "garbage", FROM_RUN(NULL),
     "QKV_ARENA_POISON=x " Q "train cfg.json --out o --quiet > /dev/null", 0},
    /* ---- grouped runs, removed: their keys and option are refused by name */
    {"ablate", "CONFIG", "batch_runs (removed)",
     ABLATION("\"variants\": [{\"name\": \"a\"}], \"seeds\": [0], \"batch_runs\": true"), Q "ablate abl.json --out out", 2,
     "abl.json: batch_runs: removed (each run trains in a process of its own); drop the key"},
    {"train", "options", "--group (removed)", CFG(BASE), Q "train cfg.json --group run", 2,
     "qkv train: unknown option '--group'"},
    /* a bf16 run is evaluated, sampled and inspected in bf16: there too */
    {"eval", "--set", "bf16 products on a CPU without avx512_bf16",
     FROM_RUN("printf 'processor\\t: 0\\nflags\\t\\t: fpu sse2 avx2 avx512f avx512bw\\n' > cpuinfo"),
     "QKV_CPUINFO=cpuinfo LD_PRELOAD=\"$QKV_CPUINFO_SHIM\" \"$QKV\" eval r/config.json --checkpoint r/model.safetensors "
     "--set train.precision=bf16", 2,
     "qkv eval: train.precision: \"bf16\" is refused: this CPU has no avx512_bf16 (AVX512_BF16 instructions)"},
    {"sample", "--set", "bf16 products on a CPU without avx512_bf16",
     FROM_RUN("printf 'processor\\t: 0\\nflags\\t\\t: fpu sse2 avx2 avx512f avx512bw\\n' > cpuinfo"),
     "QKV_CPUINFO=cpuinfo LD_PRELOAD=\"$QKV_CPUINFO_SHIM\" \"$QKV\" sample r/config.json --checkpoint r/model.safetensors "
     "--prompt 1 --set train.precision=bf16", 2,
     "qkv sample: train.precision: \"bf16\" is refused: this CPU has no avx512_bf16 (AVX512_BF16 instructions)"},
    {"inspect", "RUN_DIR", "a bf16 run on a CPU without avx512_bf16",
     FROM_RUN("printf 'processor\\t: 0\\nflags\\t\\t: fpu sse2 avx2 avx512f avx512bw\\n' > cpuinfo && cp -r r rb && "
              "sed -i 's/\"precision\":\\t\"f32\"/\"precision\":\\t\"bf16\"/' rb/config.json && grep -q bf16 rb/config.json"),
     "QKV_CPUINFO=cpuinfo LD_PRELOAD=\"$QKV_CPUINFO_SHIM\" \"$QKV\" inspect rb", 2,
     "qkv inspect: train.precision: \"bf16\" is refused: this CPU has no avx512_bf16 (AVX512_BF16 instructions)"},
};
const int CLI_OPTIONS_NROWS = (int)(sizeof CLI_OPTIONS_ROWS / sizeof CLI_OPTIONS_ROWS[0]);
