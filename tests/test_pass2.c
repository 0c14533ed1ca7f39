/* Hostile input, the second pass (docs/reliability.md, "Second pass: every command, every file,
 * hostile inputs"): every command, given each file it reads as an empty file, a huge (sparse)
 * one, a truncated one, the wrong JSON type, a FIFO, a directory, a dangling symbolic link, a link
 * to a directory, a name with a newline or a quote and a space, and the environment variables it
 * reads set to garbage.
 *
 * One table, ROWS: each row copies a fixture directory (configs, data, a corpus, a fortunes
 * directory, a finished run, a finished ablation, a document embedding its table), runs its setup
 * there with /bin/sh, then its command, and requires the contract of docs/reliability.md:
 *   - exit 0, 1 or 2 (no signal), within 30 s (x CK_TIMEOUT_MULTIPLIER): a longer row is a hang;
 *   - on failure, stderr exactly one line starting "qkv " (no sanitizer report), holding the
 *     row's text;
 *   - the row's expected exit status;
 *   - no "*.tmp.*" file; on failure nothing new anywhere in the directory; files that existed
 *     before unchanged (type, size, inode, mtime, bytes) unless under a path the row's command
 *     is meant to write.
 * The observed outcomes make a Markdown table, which must equal the one committed between the
 * markers in docs/reliability.md; QKV_PASS2_UPDATE=1 rewrites that block instead (the command
 * is in the document). So the record is what the binary does now, not what was typed.
 *
 * All rows run in one test: the table needs every row's outcome (Check forks each test). */
#define _GNU_SOURCE
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "suites.h"
#include "testutil.h"

static char TMP[256];

/* ---- the fixture --------------------------------------------------------------------------- */

#define NET "\"model\": {\"d_model\": 16, \"heads\": 2, \"layers\": 1, \"d_ff\": 32}"
#define STEPS "\"train\": {\"steps\": 2, \"batch\": 4, \"eval_every\": 0, \"eval_examples\": 8}"
/* the fixture's files */
static const char *const FIXTURE[][2] = {
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

/* the commands that finish the fixture: a corpus, fortunes, a run, an ablation, the document's
 * table (so --check-doc of it passes) */
static const char FIXTURE_SH[] =
    "mkdir sub fdir && "
    "i=0; while [ $i -lt 40 ]; do echo \"line $i of the corpus, some text to train on\"; i=$((i+1)); done > corpus.txt && "
    "i=0; while [ $i -lt 20 ]; do printf 'fortune number %s, a short one\\n%%\\n' $i; i=$((i+1)); done > fdir/f && "
    "\"$QKV\" train cfg.json --out r --quiet > /dev/null && "
    "\"$QKV\" ablate abl.json --out ab --quiet --jobs 1 && "
    "\"$QKV\" summarize --update-doc doc.md --quiet";

/* ---- the rows ------------------------------------------------------------------------------ */

typedef struct row {
    const char *cmd;    /* the command, as the table groups it */
    const char *file;   /* the input the row makes hostile */
    const char *kind;   /* what it is made into */
    const char *setup;  /* sh, in the row's directory, before the command ("" for none) */
    const char *run;    /* sh: the command ($QKV is the binary; shown as qkv) */
    int status;         /* expected exit status */
    const char *expect; /* a substring of the one-line message (failures), or NULL */
    const char *writes; /* comma-separated paths the command may change (else all stay as they were) */
} row;

#define NL(a, b) "\"$(printf '" a "\\n" b "')\"" /* a shell word holding a newline */
#define Q "\"$QKV\" "
/* kinds of input, as setup commands on a path */
#define EMPTY(f) "rm -rf " f " && : > " f
#define HUGE(f, size) "rm -rf " f " && truncate -s " size " " f
#define TRUNC(f, n) "head -c " #n " " f " > t.part && rm -rf " f " && mv t.part " f
#define WRONG(f, text) "rm -rf " f " && printf '%s\\n' '" text "' > " f
#define FIFO(f) "rm -rf " f " && mkfifo " f
#define DIR(f) "rm -rf " f " && mkdir " f
#define DANGLING(f) "rm -rf " f " && ln -s nowhere " f
#define DIRLINK(f) "rm -rf " f " && ln -s sub " f
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
#define NOPE_NL NL("no", "pe.json") /* a name with a newline that does not exist */
#define RESUME4 Q "train --resume r --steps 4 --quiet"
#define EVAL(args) Q "eval r/config.json --checkpoint r/model.safetensors " args

static const row ROWS[] = {
    /* ---- the command line itself */
    {"qkv", "COMMAND", "missing", "", "\"$QKV\"", 2, "qkv: missing COMMAND", ""},
    {"qkv", "COMMAND", K_NL, "", Q NL("tr", "ain"), 2, "qkv: unknown command or option 'tr\\x0aain'", ""},
    /* ---- train CONFIG */
    {"train", "CONFIG", K_EMPTY, EMPTY("x.json"), Q "train x.json --out o --quiet", 2,
     "x.json:1:1: JSON syntax error: empty input", ""},
    {"train", "CONFIG", K_HUGE, HUGE("x.json", "17M"), Q "train x.json --out o --quiet", 2,
     "x.json: file too large for a config (over 16 MiB)", ""},
    {"train", "CONFIG", K_TRUNC, "head -c 40 cfg.json > x.json", Q "train x.json --out o --quiet", 2,
     "x.json:1:39: JSON syntax error: unterminated string", ""},
    {"train", "CONFIG", K_WRONG, WRONG("x.json", "[1, 2]"), Q "train x.json --out o --quiet", 2,
     "x.json: expected a JSON object at the top level", ""},
    {"train", "CONFIG", K_FIFO, FIFO("x.json"), Q "train x.json --out o --quiet", 2,
     "x.json: is a pipe (FIFO) that gave nothing to read", ""},
    {"train", "CONFIG", "pipe with a writer", "", "cat cfg.json | " Q "train /dev/stdin --out o --quiet > /dev/null", 0,
     NULL, "o"},
    {"train", "CONFIG", K_DIR, DIR("x.json"), Q "train x.json --out o --quiet", 2, "x.json: cannot read: Is a directory",
     ""},
    {"train", "CONFIG", K_DANGLING, DANGLING("x.json"), Q "train x.json --out o --quiet", 2,
     "x.json: cannot open: No such file or directory", ""},
    {"train", "CONFIG", K_DIRLINK, DIRLINK("x.json"), Q "train x.json --out o --quiet", 2,
     "x.json: cannot read: Is a directory", ""},
    {"train", "CONFIG", K_NL, "cp cfg.json " NL("a", "b.json"), Q "train " NL("a", "b.json") " --out o --quiet > /dev/null",
     0, NULL, "o"},
    {"train", "CONFIG", K_NL " (missing)", "", Q "train " NOPE_NL " --out o --quiet", 2,
     "no\\x0ape.json: cannot open: No such file or directory", ""},
    {"train", "CONFIG", K_QUOTE, "cp cfg.json \"it's a.json\"", Q "train \"it's a.json\" --out o --quiet > /dev/null", 0,
     NULL, "o"},
    {"train", "--set", "value with a newline", "", Q "train cfg.json --set " NL("model.d_model=1", "6") " --out o", 2,
     "--set: model.d_model: expected an integer in [1, 8192], got \"1\\n6\"", ""},
    /* ---- train: JSON Lines data (task.path, task.eval_path) */
    {"train", "task.path (JSON Lines)", K_EMPTY, EMPTY("d.jsonl"), Q "train file.json --out o --quiet", 1,
     "task.path: d.jsonl is empty", ""},
    {"train", "task.path (JSON Lines)", K_HUGE, HUGE("d.jsonl", "1025M"), Q "train file.json --out o --quiet", 2,
     "task.path: \"d.jsonl\" is larger than 1 GiB", ""},
    {"train", "task.path (JSON Lines)", K_TRUNC, TRUNC("d.jsonl", 60), Q "train file.json --out o --quiet", 1,
     "d.jsonl:2:", ""},
    {"train", "task.path (JSON Lines)", K_WRONG, WRONG("d.jsonl", "[1, 2]"), Q "train file.json --out o --quiet", 1,
     "d.jsonl:1:1: expected a JSON object", ""},
    {"train", "task.path (JSON Lines)", K_FIFO, FIFO("d.jsonl"), Q "train file.json --out o --quiet", 2,
     "task.path: \"d.jsonl\" is a pipe (FIFO), not a regular file", ""},
    {"train", "task.path (JSON Lines)", K_DIR, DIR("d.jsonl"), Q "train file.json --out o --quiet", 2,
     "task.path: cannot read \"d.jsonl\": Is a directory", ""},
    {"train", "task.path (JSON Lines)", K_DANGLING, DANGLING("d.jsonl"), Q "train file.json --out o --quiet", 2,
     "task.path: cannot open \"d.jsonl\": No such file or directory", ""},
    {"train", "task.path (JSON Lines)", K_DIRLINK, DIRLINK("d.jsonl"), Q "train file.json --out o --quiet", 2,
     "task.path: cannot read \"d.jsonl\": Is a directory", ""},
    {"train", "task.path (JSON Lines)", K_NL, "mv d.jsonl " NL("d", ".jsonl") " && sed 's/\"d.jsonl\"/\"d\\\\n.jsonl\"/' "
     "file.json > x.json", Q "train x.json --out o --quiet > /dev/null", 0, NULL, "o"},
    {"train", "task.eval_path (JSON Lines)", K_EMPTY, EMPTY("e.jsonl"), Q "train file.json --out o --quiet", 1,
     "task.eval_path: e.jsonl is empty", ""},
    {"train", "task.eval_path (JSON Lines)", K_HUGE, HUGE("e.jsonl", "1025M"), Q "train file.json --out o --quiet", 2,
     "task.eval_path: \"e.jsonl\" is larger than 1 GiB", ""},
    {"train", "task.eval_path (JSON Lines)", K_FIFO, FIFO("e.jsonl"), Q "train file.json --out o --quiet", 2,
     "task.eval_path: \"e.jsonl\" is a pipe (FIFO)", ""},
    {"train", "task.eval_path (JSON Lines)", K_DIRLINK, DIRLINK("e.jsonl"), Q "train file.json --out o --quiet", 2,
     "task.eval_path: cannot read \"e.jsonl\": Is a directory", ""},
    /* ---- train: the text corpus */
    {"train", "task.path (text corpus)", K_EMPTY, EMPTY("corpus.txt"), Q "train text.json --out o --quiet", 1,
     "task.path: corpus.txt is empty", ""},
    {"train", "task.path (text corpus)", K_HUGE, HUGE("corpus.txt", "1025M"), Q "train text.json --out o --quiet", 2,
     "task.path: \"corpus.txt\" is larger than 1 GiB", ""},
    {"train", "task.path (text corpus)", K_TRUNC " (10 bytes)", TRUNC("corpus.txt", 10), Q "train text.json --out o --quiet",
     1, "task.path: corpus.txt has 10 bytes", ""},
    {"train", "task.path (text corpus)", K_FIFO, FIFO("corpus.txt"), Q "train text.json --out o --quiet", 2,
     "task.path: \"corpus.txt\" is a pipe (FIFO), not a regular file", ""},
    {"train", "task.path (text corpus)", K_DIR, DIR("corpus.txt"), Q "train text.json --out o --quiet", 2,
     "task.path: cannot read \"corpus.txt\": Is a directory", ""},
    {"train", "task.path (text corpus)", K_DANGLING, DANGLING("corpus.txt"), Q "train text.json --out o --quiet", 2,
     "task.path: cannot open \"corpus.txt\"", ""},
    {"train", "task.path (text corpus)", "a character device", "sed 's|corpus.txt|/dev/urandom|' text.json > x.json",
     Q "train x.json --out o --quiet", 2, "task.path: \"/dev/urandom\" is a character device", ""},
    /* ---- train: the fortunes directory */
    {"train", "task.path (fortunes dir)", "empty directory", "rm fdir/f", Q "train fort.json --out o --quiet", 1,
     "task.path: fdir holds no fortunes", ""},
    {"train", "task.path (fortunes dir)", "a regular file", EMPTY("fdir"), Q "train fort.json --out o --quiet", 2,
     "task.path: cannot open the fortunes directory \"fdir\": Not a directory", ""},
    {"train", "task.path (fortunes dir)", K_FIFO, FIFO("fdir"), Q "train fort.json --out o --quiet", 2,
     "the fortunes directory \"fdir\": Not a directory", ""},
    {"train", "task.path (fortunes dir)", K_DANGLING, DANGLING("fdir"), Q "train fort.json --out o --quiet", 2,
     "the fortunes directory \"fdir\": No such file or directory", ""},
    {"train", "task.path (fortunes dir)", "holding only a FIFO", "rm fdir/f && mkfifo fdir/f",
     Q "train fort.json --out o --quiet", 1, "task.path: fdir holds no fortunes", ""},
    {"train", "task.path (fortunes dir)", "holding a huge file", "truncate -s 1025M fdir/g",
     Q "train fort.json --out o --quiet", 1, "task.path: fdir/g: larger than 1 GiB", ""},
    {"train", "task.path (fortunes dir)", "holding a dangling symlink", "ln -s nowhere fdir/g",
     Q "train fort.json --out o --quiet > /dev/null", 0, NULL, "o"},
    /* ---- train --out (the run directory it writes) */
    {"train", "--out DIR", "a regular file", "echo mine > x", Q "train cfg.json --out x --quiet", 1, "x: not a directory",
     ""},
    {"train", "--out DIR", K_DANGLING, DANGLING("x"), Q "train cfg.json --out x --quiet", 1, "x: not a directory", ""},
    {"train", "--out DIR", "holding only model.safetensors", "mkdir x && echo mine > x/model.safetensors",
     Q "train cfg.json --out x --quiet", 2, "x already holds a run; continue it with --resume x", ""},
    {"train", "--out DIR", "holding only metrics.jsonl", "mkdir x && echo mine > x/metrics.jsonl",
     Q "train cfg.json --out x --quiet", 2, "x already holds a run", ""},
    {"train", "--out DIR", "holding the user's other files", "mkdir x && echo mine > x/notes.txt",
     Q "train cfg.json --out x --quiet > /dev/null", 0, NULL, ""},
    {"train", "--out DIR", K_NL, "", Q "train cfg.json --out " NL("o", "ut") " --quiet > /dev/null", 0, NULL, ""},
    {"train", "--out DIR", K_QUOTE, "", Q "train cfg.json --out \"it's out\" --quiet > /dev/null", 0, NULL, ""},
    /* ---- train --resume DIR: the directory, its config.json, checkpoint and metrics */
    {"train --resume", "DIR", "a regular file", "echo mine > x", Q "train --resume x --quiet", 2,
     "x/config.json: cannot open: Not a directory", ""},
    {"train --resume", "DIR", K_FIFO, FIFO("x"), Q "train --resume x --quiet", 2, "x/config.json: cannot open", ""},
    {"train --resume", "DIR", K_DANGLING, DANGLING("x"), Q "train --resume x --quiet", 2,
     "x/config.json: cannot open: No such file or directory", ""},
    {"train --resume", "DIR", K_NL " (missing)", "", Q "train --resume " NL("r", "x") " --quiet", 2,
     "r\\x0ax/config.json: cannot open", ""},
    {"train --resume", "DIR", "without a checkpoint", "mkdir x && cp cfg.json x/config.json", Q "train --resume x --quiet",
     1, "x/checkpoint.safetensors: no checkpoint to resume from", ""},
    {"train --resume", "DIR", K_QUOTE, "cp -r r \"it's r\"", Q "train --resume \"it's r\" --steps 4 --quiet > /dev/null", 0,
     NULL, "it's r"},
    {"train --resume", "config.json", K_EMPTY, EMPTY("r/config.json"), RESUME4, 2, "r/config.json:1:1: JSON syntax error",
     ""},
    {"train --resume", "config.json", K_HUGE, HUGE("r/config.json", "17M"), RESUME4, 2,
     "r/config.json: file too large for a config", ""},
    {"train --resume", "config.json", K_TRUNC, TRUNC("r/config.json", 30), RESUME4, 2,
     "r/config.json:4:2: JSON syntax error: unexpected end of input", ""},
    {"train --resume", "config.json", K_WRONG, WRONG("r/config.json", "\"a string\""), RESUME4, 2,
     "r/config.json: expected a JSON object at the top level", ""},
    {"train --resume", "config.json", K_FIFO, FIFO("r/config.json"), RESUME4, 2,
     "r/config.json: is a pipe (FIFO) that gave nothing to read", ""},
    {"train --resume", "config.json", K_DIR, DIR("r/config.json"), RESUME4, 2, "r/config.json: cannot read: Is a directory",
     ""},
    {"train --resume", "checkpoint.safetensors", K_EMPTY, EMPTY("r/checkpoint.safetensors"), RESUME4, 1,
     "r/checkpoint.safetensors: file is empty, expected a safetensors header", ""},
    {"train --resume", "checkpoint.safetensors", K_HUGE, HUGE("r/checkpoint.safetensors", "17G"), RESUME4, 1,
     "r/checkpoint.safetensors: larger than 16 GiB", ""},
    {"train --resume", "checkpoint.safetensors", K_TRUNC, TRUNC("r/checkpoint.safetensors", 100), RESUME4, 1,
     "r/checkpoint.safetensors: header length", ""},
    {"train --resume", "checkpoint.safetensors", K_TRUNC " (data)", "truncate -s -8 r/checkpoint.safetensors", RESUME4, 1,
     "r/checkpoint.safetensors:", ""},
    {"train --resume", "checkpoint.safetensors", K_FIFO, FIFO("r/checkpoint.safetensors"), RESUME4, 1,
     "r/checkpoint.safetensors: is a pipe (FIFO), not a regular file", ""},
    {"train --resume", "checkpoint.safetensors", K_DIR, DIR("r/checkpoint.safetensors"), RESUME4, 1,
     "r/checkpoint.safetensors: cannot read: Is a directory", ""},
    {"train --resume", "checkpoint.safetensors", K_DANGLING, DANGLING("r/checkpoint.safetensors"), RESUME4, 1,
     "r/checkpoint.safetensors: no checkpoint to resume from", ""},
    {"train --resume", "metrics.jsonl", K_EMPTY, EMPTY("r/metrics.jsonl"), RESUME4 " > /dev/null", 0, NULL, "r"},
    {"train --resume", "metrics.jsonl", K_TRUNC, TRUNC("r/metrics.jsonl", 20), RESUME4 " > /dev/null", 0, NULL, "r"},
    {"train --resume", "metrics.jsonl", K_HUGE, HUGE("r/metrics.jsonl", "1025M"), RESUME4, 1,
     "r/metrics.jsonl: larger than 1 GiB", "r/config.json"},
    {"train --resume", "metrics.jsonl", K_FIFO, FIFO("r/metrics.jsonl"), RESUME4, 1,
     "r/metrics.jsonl: is a pipe (FIFO) that gave nothing to read", "r/config.json"},
    {"train --resume", "metrics.jsonl", K_DIR, DIR("r/metrics.jsonl"), RESUME4, 1,
     "r/metrics.jsonl: cannot read: Is a directory", "r/config.json"},
    /* ---- train --group DIR */
    {"train --group", "DIR", "a regular file", "echo mine > x", Q "train --group x --group r --quiet", 2, "x/config.json",
     ""},
    {"train --group", "DIR", K_NL " (missing)", "", Q "train --group " NL("g", "1") " --group r --quiet", 2,
     "g\\x0a1/config.json", ""},
    {"train --group", "DIR/config.json", K_FIFO, "mkdir g && mkfifo g/config.json", Q "train --group g --group r --quiet",
     2, "g/config.json: is a pipe (FIFO) that gave nothing to read", ""},
    {"train --group", "DIR/config.json", K_EMPTY, "mkdir g && : > g/config.json", Q "train --group g --group r --quiet", 2,
     "g/config.json:1:1: JSON syntax error: empty input", ""},
    /* ---- eval: CONFIG, --checkpoint, --data */
    {"eval", "CONFIG", K_FIFO, FIFO("x.json"), Q "eval x.json --checkpoint r/model.safetensors", 2,
     "x.json: is a pipe (FIFO) that gave nothing to read", ""},
    {"eval", "CONFIG", K_NL " (missing)", "", Q "eval " NOPE_NL " --checkpoint r/model.safetensors", 2,
     "no\\x0ape.json: cannot open", ""},
    {"eval", "--checkpoint", K_EMPTY, EMPTY("x.st"), Q "eval r/config.json --checkpoint x.st", 1,
     "x.st: file is empty, expected a safetensors header", ""},
    {"eval", "--checkpoint", K_HUGE, HUGE("x.st", "17G"), Q "eval r/config.json --checkpoint x.st", 1,
     "x.st: larger than 16 GiB, the most qkv reads of a safetensors file", ""},
    {"eval", "--checkpoint", K_TRUNC, "head -c 100 r/model.safetensors > x.st", Q "eval r/config.json --checkpoint x.st", 1,
     "x.st: header length", ""},
    {"eval", "--checkpoint", "a JSON file", "cp cfg.json x.st", Q "eval r/config.json --checkpoint x.st", 1, "x.st: ", ""},
    {"eval", "--checkpoint", K_FIFO, FIFO("x.st"), Q "eval r/config.json --checkpoint x.st", 1,
     "x.st: is a pipe (FIFO), not a regular file", ""},
    {"eval", "--checkpoint", K_DIR, DIR("x.st"), Q "eval r/config.json --checkpoint x.st", 1,
     "x.st: cannot read: Is a directory", ""},
    {"eval", "--checkpoint", K_DANGLING, DANGLING("x.st"), Q "eval r/config.json --checkpoint x.st", 1,
     "x.st: cannot open: No such file or directory", ""},
    {"eval", "--checkpoint", K_DIRLINK, DIRLINK("x.st"), Q "eval r/config.json --checkpoint x.st", 1,
     "x.st: cannot read: Is a directory", ""},
    {"eval", "--checkpoint", K_NL, "cp r/model.safetensors " NL("m", ".st"),
     Q "eval r/config.json --checkpoint " NL("m", ".st") " > /dev/null", 0, NULL, ""},
    {"eval", "--checkpoint", K_NL " (missing)", "", Q "eval r/config.json --checkpoint " NL("m", ".st"), 1,
     "m\\x0a.st: cannot open", ""},
    {"eval", "--data", K_EMPTY, EMPTY("x.jsonl"), EVAL("--data x.jsonl"), 1, "--data: x.jsonl is empty", ""},
    {"eval", "--data", K_HUGE, HUGE("x.jsonl", "1025M"), EVAL("--data x.jsonl"), 1, "--data: x.jsonl: larger than 1 GiB",
     ""},
    {"eval", "--data", K_TRUNC, "head -c 60 d.jsonl > x.jsonl", EVAL("--data x.jsonl"), 1, "x.jsonl:2:", ""},
    {"eval", "--data", K_WRONG, WRONG("x.jsonl", "{\"input\": \"1 2\", \"target\": [2]}"), EVAL("--data x.jsonl"), 1,
     "x.jsonl:1:", ""},
    {"eval", "--data", K_FIFO, FIFO("x.jsonl"), EVAL("--data x.jsonl"), 1, "--data: x.jsonl: is a pipe (FIFO)", ""},
    {"eval", "--data", K_DIR, DIR("x.jsonl"), EVAL("--data x.jsonl"), 1, "--data: x.jsonl: cannot read: Is a directory",
     ""},
    {"eval", "--data", K_DANGLING, DANGLING("x.jsonl"), EVAL("--data x.jsonl"), 1,
     "--data: x.jsonl: cannot read: No such file or directory", ""},
    {"eval", "--data", K_NL " (missing)", "", EVAL("--data " NL("x", ".jsonl")), 1, "--data: x\\x0a.jsonl: cannot read", ""},
    /* ---- sample */
    {"sample", "CONFIG", K_DIR, DIR("x.json"), Q "sample x.json --checkpoint r/model.safetensors --prompt 1", 2,
     "x.json: cannot read: Is a directory", ""},
    {"sample", "--checkpoint", K_FIFO, FIFO("x.st"), Q "sample r/config.json --checkpoint x.st --prompt 1", 1,
     "x.st: is a pipe (FIFO), not a regular file", ""},
    {"sample", "--checkpoint", K_TRUNC, "head -c 300 r/model.safetensors > x.st",
     Q "sample r/config.json --checkpoint x.st --prompt 1", 1, "x.st: header length", ""},
    {"sample", "--checkpoint", K_HUGE, HUGE("x.st", "17G"), Q "sample r/config.json --checkpoint x.st --prompt 1", 1,
     "x.st: larger than 16 GiB", ""},
    {"sample", "--prompt", "a newline between tokens", "",
     Q "sample r/config.json --checkpoint r/model.safetensors --tokens 2 --prompt " NL("1", "2") " > /dev/null", 0, NULL,
     ""},
    {"sample", "--prompt", "a token outside the vocabulary", "",
     Q "sample r/config.json --checkpoint r/model.safetensors --prompt 99", 2, "--prompt", ""},
    /* ---- params, gradcheck */
    {"params", "CONFIG", K_EMPTY, EMPTY("x.json"), Q "params x.json", 2, "x.json:1:1: JSON syntax error: empty input", ""},
    {"params", "CONFIG", K_FIFO, FIFO("x.json"), Q "params x.json", 2, "x.json: is a pipe (FIFO) that gave nothing to read",
     ""},
    {"params", "CONFIG", K_NL " (missing)", "", Q "params " NOPE_NL, 2, "no\\x0ape.json: cannot open", ""},
    {"gradcheck", "CONFIG", K_HUGE, HUGE("x.json", "17M"), Q "gradcheck x.json", 2, "x.json: file too large for a config",
     ""},
    {"gradcheck", "CONFIG", K_FIFO, FIFO("x.json"), Q "gradcheck x.json", 2, "x.json: is a pipe (FIFO)", ""},
    {"gradcheck", "CONFIG", K_DIRLINK, DIRLINK("x.json"), Q "gradcheck x.json", 2, "x.json: cannot read: Is a directory",
     ""},
    /* ---- ablate: the ablation config and its base */
    {"ablate", "CONFIG", K_EMPTY, EMPTY("x.json"), Q "ablate x.json --out o --quiet", 2, "x.json:1:1: JSON syntax error", ""},
    {"ablate", "CONFIG", K_HUGE, HUGE("x.json", "17M"), Q "ablate x.json --out o --quiet", 2,
     "x.json: file too large for a config (over 16 MiB)", ""},
    {"ablate", "CONFIG", K_WRONG, WRONG("x.json", "[]"), Q "ablate x.json --out o --quiet", 2, "x.json: ", ""},
    {"ablate", "CONFIG", K_FIFO, FIFO("x.json"), Q "ablate x.json --out o --quiet", 2,
     "x.json: is a pipe (FIFO) that gave nothing to read", ""},
    {"ablate", "CONFIG", K_DIR, DIR("x.json"), Q "ablate x.json --out o --quiet", 2, "x.json: cannot read: Is a directory",
     ""},
    {"ablate", "CONFIG", K_NL " (missing)", "", Q "ablate " NOPE_NL " --out o --quiet", 2, "no\\x0ape.json", ""},
    {"ablate", "base config", K_EMPTY, EMPTY("x.json"), Q "ablate ablx.json --out o --quiet", 2,
     "ablx.json: variant full: x.json:1:1: JSON syntax error: empty input", ""},
    {"ablate", "base config", K_HUGE, HUGE("x.json", "17M"), Q "ablate ablx.json --out o --quiet", 2,
     "x.json: file too large for a config", ""},
    {"ablate", "base config", K_TRUNC, "head -c 40 cfg.json > x.json", Q "ablate ablx.json --out o --quiet", 2,
     "ablx.json: variant full: x.json:1:39: JSON syntax error", ""},
    {"ablate", "base config", K_FIFO, FIFO("x.json"), Q "ablate ablx.json --out o --quiet", 2,
     "x.json: is a pipe (FIFO) that gave nothing to read", ""},
    {"ablate", "base config", K_DANGLING, DANGLING("x.json"), Q "ablate ablx.json --out o --quiet", 2,
     "x.json: cannot open: No such file or directory", ""},
    {"ablate", "base config", K_DIRLINK, DIRLINK("x.json"), Q "ablate ablx.json --out o --quiet", 2,
     "x.json: cannot read: Is a directory", ""},
    /* ---- ablate: --out and the state in it (each run's files, the configs, the claims) */
    {"ablate", "--out DIR", "a regular file", "echo mine > x", Q "ablate abl.json --out x --quiet", 1,
     "x/configs: cannot create directory: Not a directory", ""},
    {"ablate", "--out DIR", K_NL, "", Q "ablate abl.json --out " NL("a", "b") " --quiet --jobs 1", 0, NULL, ""},
    {"ablate", "--out DIR", K_NL " (--slurm)", "", Q "ablate abl.json --out " NL("a", "b") " --slurm --dry-run", 2,
     "--out holds a control character", ""},
    {"ablate --status", "runs/*/claim", K_FIFO, "rm ab/runs/full/seed0/summary.json && mkfifo ab/runs/full/seed0/claim",
     Q "ablate abl.json --out ab --status > /dev/null", 0, NULL, ""},
    {"ablate", "runs/*/claim", K_FIFO " (stale)", "rm ab/runs/full/seed0/summary.json && mkfifo ab/runs/full/seed0/claim",
     Q "ablate abl.json --out ab --quiet --jobs 1 --stale-after 1", 0, NULL, "ab"},
    {"ablate --status", "runs/*/summary.json", K_FIFO, FIFO("ab/runs/full/seed0/summary.json"),
     Q "ablate abl.json --out ab --status > /dev/null", 0, NULL, ""},
    {"ablate --status", "runs/*/summary.json", K_WRONG, WRONG("ab/runs/full/seed0/summary.json", "[1]"),
     Q "ablate abl.json --out ab --status > /dev/null", 0, NULL, ""},
    {"ablate --report", "runs/*/metrics.jsonl", K_HUGE, HUGE("ab/runs/full/seed0/metrics.jsonl", "1025M"),
     Q "ablate abl.json --out ab --report --quiet", 0, NULL, "ab"},
    {"ablate --report", "runs/*/metrics.jsonl", K_FIFO, FIFO("ab/runs/full/seed0/metrics.jsonl"),
     Q "ablate abl.json --out ab --report --quiet", 0, NULL, "ab"},
    {"ablate --report", "results.json", K_DIR, DIR("ab/results.json"), Q "ablate abl.json --out ab --report --quiet", 1,
     "ab/results.json: cannot write: Is a directory", "ab"},
    {"ablate", "configs/*.json", K_EMPTY, EMPTY("ab/configs/full-seed0.json"), Q "ablate abl.json --out ab --quiet", 1,
     "ab holds 1 run made from another config (full/seed0)", ""},
    {"ablate", "configs/*.json", K_FIFO, FIFO("ab/configs/full-seed0.json"), Q "ablate abl.json --out ab --quiet --jobs 1",
     0, NULL, "ab"},
    {"ablate", "runs/*/checkpoint.safetensors", K_TRUNC,
     "rm ab/runs/full/seed0/summary.json && head -c 100 ab/runs/full/seed0/checkpoint.safetensors > t.part && "
     "mv t.part ab/runs/full/seed0/checkpoint.safetensors", Q "ablate abl.json --out ab --quiet --jobs 1", 0,
     NULL, "ab"},
    /* ---- ablate: the environment */
    {"ablate --shard auto", "SLURM_ARRAY_TASK_ID", "garbage", "",
     "SLURM_ARRAY_TASK_ID=1x SLURM_ARRAY_TASK_COUNT=2 " Q "ablate abl.json --out o --shard auto", 2,
     "SLURM_ARRAY_TASK_ID: expected an integer in [0, 100000000], got '1x'", ""},
    {"ablate --shard auto", "SLURM_ARRAY_TASK_ID", "a newline", "",
     "SLURM_ARRAY_TASK_ID=" NL("0", "1") " SLURM_ARRAY_TASK_COUNT=2 " Q "ablate abl.json --out o --shard auto", 2,
     "SLURM_ARRAY_TASK_ID: expected an integer", ""},
    {"ablate --shard", "I/N", "garbage", "", Q "ablate abl.json --out o --shard 1/x", 2, "--shard: expected I/N", ""},
    /* ---- summarize: results.json, --out, documents */
    {"summarize", "results.json", K_EMPTY, EMPTY("ab/results.json"), Q "summarize ab --out s --quiet", 1,
     "ab/results.json:1:1: JSON syntax error: empty input", ""},
    {"summarize", "results.json", K_HUGE, HUGE("ab/results.json", "1025M"), Q "summarize ab --out s --quiet", 1,
     "ab/results.json: larger than 1 GiB", ""},
    {"summarize", "results.json", K_TRUNC, TRUNC("ab/results.json", 100), Q "summarize ab --out s --quiet", 1,
     "ab/results.json:", ""},
    {"summarize", "results.json", K_WRONG, WRONG("ab/results.json", "[1]"), Q "summarize ab --out s --quiet", 1,
     "ab/results.json: expected a JSON object", ""},
    {"summarize", "results.json", K_FIFO, FIFO("ab/results.json"), Q "summarize ab --out s --quiet", 1,
     "ab/results.json: is a pipe (FIFO) that gave nothing to read", ""},
    {"summarize", "results.json", K_DIR, DIR("ab/results.json"), Q "summarize ab --out s --quiet", 1,
     "ab/results.json: cannot read: Is a directory", ""},
    {"summarize", "results.json", K_DANGLING, DANGLING("ab/results.json"), Q "summarize ab --out s --quiet", 1,
     "ab: no results.json", ""},
    {"summarize", "DIR", K_NL " (missing)", "", Q "summarize " NL("a", "b") " --out s --quiet", 1, "a\\x0ab: no such directory",
     ""},
    {"summarize", "--out OUTDIR", "a regular file", "echo mine > x", Q "summarize ab --out x --quiet", 1,
     "x: not a directory", ""},
    {"summarize", "--out OUTDIR", K_QUOTE, "", Q "summarize ab --out \"it's s\" --quiet", 0, NULL, ""},
    {"summarize --check-doc", "FILE", K_EMPTY, EMPTY("x.md"), Q "summarize --check-doc x.md > /dev/null", 0, NULL, ""},
    {"summarize --check-doc", "FILE", K_HUGE, HUGE("x.md", "1025M"), Q "summarize --check-doc x.md", 1,
     "x.md: larger than 1 GiB", ""},
    {"summarize --check-doc", "FILE", K_TRUNC " (no end marker)", TRUNC("doc.md", 40), Q "summarize --check-doc doc.md", 1,
     "doc.md:3: no <!-- end --> after this marker", ""},
    {"summarize --check-doc", "FILE", K_FIFO, FIFO("x.md"), Q "summarize --check-doc x.md", 1,
     "x.md: is a pipe (FIFO) that gave nothing to read", ""},
    {"summarize --check-doc", "FILE", K_DIR, DIR("x.md"), Q "summarize --check-doc x.md", 1,
     "x.md: cannot read: Is a directory", ""},
    {"summarize --check-doc", "FILE", K_DANGLING, DANGLING("x.md"), Q "summarize --check-doc x.md", 1,
     "x.md: cannot read: No such file or directory", ""},
    {"summarize --check-doc", "FILE", K_NL, "cp doc.md " NL("d", ".md"), Q "summarize --check-doc " NL("d", ".md") " > /dev/null",
     0, NULL, ""},
    {"summarize --check-doc", "a marker's results.json", K_FIFO, FIFO("ab/results.json"),
     Q "summarize --check-doc doc.md", 1, "doc.md:3: ab/results.json: is a pipe (FIFO)", ""},
    {"summarize --check-doc", "a marker's DIR", K_NL, "printf '<!-- qkv summarize: a\\nb -->\\n<!-- end -->\\n' > x.md",
     Q "summarize --check-doc x.md", 1, "x.md:1: ", ""},
    {"summarize --update-doc", "FILE", K_FIFO, FIFO("x.md"), Q "summarize --update-doc x.md", 1,
     "x.md: is a pipe (FIFO) that gave nothing to read", ""},
    {"summarize --update-doc", "FILE", K_DIRLINK, DIRLINK("x.md"), Q "summarize --update-doc x.md", 1,
     "x.md: cannot read: Is a directory", ""},
    {"summarize --update-doc", "FILE", K_DANGLING, DANGLING("x.md"), Q "summarize --update-doc x.md", 1,
     "x.md: cannot read: No such file or directory", ""},
    {"summarize --update-doc", "FILE", "stale table", "sed -i 's/full/FULL/' doc.md", Q "summarize --update-doc doc.md --quiet",
     0, NULL, "doc.md"},
    {"summarize --update-doc", "a marker's results.json", K_EMPTY, "sed -i 's/full/FULL/' doc.md && " EMPTY("ab/results.json"),
     Q "summarize --update-doc doc.md", 1, "doc.md:3: ab/results.json:1:1: JSON syntax error", ""},
    /* ---- bench */
    {"bench", "--size", "unknown", "", Q "bench --size huge", 2, "--size: expected tiny, small or medium, got 'huge'", ""},
    {"bench", "--steps", "not a number", "", Q "bench --steps x", 2, "--steps: expected an integer in [1, 100000]", ""},
    {"bench", "--threads", "0", "", Q "bench --threads 0", 2, "--threads: expected an integer in [1, 64], got '0'", ""},
    {"bench", "--jobs", "without --sweep", "", Q "bench --jobs 1", 2,
     "--runs-steps, --jobs, --config and --time-products go with --sweep", ""},
    {"bench", "--time-products", "without --sweep", "", Q "bench --size tiny --time-products", 2,
     "--runs-steps, --jobs, --config and --time-products go with --sweep", ""},
    {"bench", "--micro-batches", "not dividing the batch", "", Q "bench --size tiny --micro-batches 3", 2,
     "--micro-batches 3: does not divide tiny's batch of 32", ""},
    {"bench", "--micro-batches", "with --sweep", "", Q "bench --sweep --micro-batches 2", 2,
     "--micro-batches time one step", ""},
    {"bench --sweep", "--config", K_FIFO, FIFO("x.json"), Q "bench --sweep --config x.json --runs-steps 1", 2,
     "x.json: is a pipe (FIFO) that gave nothing to read", ""},
    {"bench --sweep", "--config", K_EMPTY, EMPTY("x.json"), Q "bench --sweep --config x.json --runs-steps 1", 2,
     "x.json:1:1: JSON syntax error", ""},
    {"bench --sweep", "TMPDIR", "missing", "", "TMPDIR=nowhere " Q "bench --sweep --config cfg.json --runs-steps 1", 1,
     "--sweep: cannot make a directory in nowhere (TMPDIR): No such file or directory", ""},
    {"bench --sweep", "TMPDIR", "a regular file", "echo mine > x",
     "TMPDIR=x " Q "bench --sweep --config cfg.json --runs-steps 1", 1, "in x (TMPDIR): Not a directory", ""},
    {"bench --sweep", "TMPDIR", K_NL " (missing)", "", "TMPDIR=" NL("a", "b") " " Q "bench --sweep --config cfg.json "
     "--runs-steps 1", 1, "in a\\x0ab (TMPDIR): No such file or directory", ""},
    /* ---- the environment of every command */
    {"train", "OPENBLAS_NUM_THREADS", "garbage", "", "OPENBLAS_NUM_THREADS=x " Q "train cfg.json --out o --quiet > /dev/null",
     0, NULL, ""},
    {"train", "OPENBLAS_NUM_THREADS", "-1", "", "OPENBLAS_NUM_THREADS=-1 " Q "train cfg.json --out o --quiet > /dev/null", 0,
     NULL, ""},
    {"train", "QKV_ARENA_POISON", "garbage", "", "QKV_ARENA_POISON=x " Q "train cfg.json --out o --quiet > /dev/null", 0,
     NULL, ""},
};
enum { NROWS = (int)(sizeof ROWS / sizeof ROWS[0]) };

/* ---- running a row ------------------------------------------------------------------------- */

/* one directory entry as it was: what "unchanged" compares */
typedef struct entry {
    char path[600];
    unsigned mode;
    long long size, ino, mtime_ns;
    uint64_t hash; /* FNV-1a of a regular file's bytes up to 4 MiB (0: bigger, or not a file) */
} entry;

typedef struct snapshot { entry *e; int n, cap; } snapshot;

static uint64_t file_hash(const char *path, long long size) {
    if (size > (4 << 20)) return 0;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return 0;
    uint64_t h = 1469598103934665603ull;
    unsigned char b[65536];
    for (ssize_t r; (r = read(fd, b, sizeof b)) > 0;)
        for (ssize_t i = 0; i < r; i++) h = (h ^ b[i]) * 1099511628211ull;
    close(fd);
    return h;
}

/* every entry below dir (rel: its path from the row's directory), by lstat: links and FIFOs are
 * never opened */
static void snap(snapshot *s, const char *dir, const char *rel) {
    DIR *d = opendir(dir);
    if (!d) return;
    for (struct dirent *de; (de = readdir(d));) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
        char p[1024], r[600];
        snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
        snprintf(r, sizeof r, "%s%s%s", rel, rel[0] ? "/" : "", de->d_name);
        struct stat st;
        if (lstat(p, &st)) continue;
        if (s->n == s->cap) {
            s->cap = s->cap ? 2 * s->cap : 64;
            s->e = realloc(s->e, (size_t)s->cap * sizeof *s->e);
            ck_assert_ptr_nonnull(s->e);
        }
        entry *e = &s->e[s->n++];
        snprintf(e->path, sizeof e->path, "%s", r);
        e->mode = (unsigned)st.st_mode;
        e->size = S_ISDIR(st.st_mode) ? 0 : (long long)st.st_size;
        e->ino = (long long)st.st_ino;
        e->mtime_ns = S_ISDIR(st.st_mode) ? 0 : (long long)st.st_mtim.tv_sec * 1000000000ll + st.st_mtim.tv_nsec;
        e->hash = S_ISREG(st.st_mode) ? file_hash(p, e->size) : 0;
        if (S_ISDIR(st.st_mode)) snap(s, p, r);
    }
    closedir(d);
}

static const entry *find_entry(const snapshot *s, const char *path) {
    for (int i = 0; i < s->n; i++)
        if (!strcmp(s->e[i].path, path)) return &s->e[i];
    return NULL;
}

/* path is one of writes' comma-separated paths or below one */
static bool may_write(const char *writes, const char *path) {
    char w[512];
    snprintf(w, sizeof w, "%s", writes);
    for (char *save, *t = strtok_r(w, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        size_t n = strlen(t);
        if (!strncmp(path, t, n) && (path[n] == 0 || path[n] == '/')) return true;
    }
    return false;
}

/* the outcome of a row */
typedef struct outcome {
    int status;        /* exit status; -1 when killed */
    int sig;           /* the signal that killed it, or 0 */
    bool hung;         /* killed by the row's time limit */
    char err[4096];    /* stderr */
    char problem[800]; /* the first broken promise, or "" */
} outcome;

static int row_timeout(void) {
    const char *m = getenv("CK_TIMEOUT_MULTIPLIER");
    int k = m ? atoi(m) : 1;
    return 30 * (k > 0 ? k : 1);
}

/* sh -c script in dir (its own process group, stdin /dev/null, stdout to /dev/null unless the
 * script redirects, stderr into errpath), killed with its group after the row's time limit */
static void sh_run(const char *dir, const char *script, const char *errpath, outcome *o) {
    fflush(NULL);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        setpgid(0, 0);
        qkv_test_child_stdio(dir, errpath);
        execl("/bin/sh", "sh", "-c", script, (char *)NULL);
        _exit(127);
    }
    setpgid(pid, pid);
    struct timespec t0, now, nap = {0, 5000000};
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int st = 0;
    for (;;) {
        pid_t w = waitpid(pid, &st, WNOHANG);
        if (w == pid) break;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec - t0.tv_sec >= row_timeout()) {
            kill(-pid, SIGKILL);
            waitpid(pid, &st, 0);
            o->hung = true;
            break;
        }
        nanosleep(&nap, NULL);
    }
    kill(-pid, SIGKILL); /* whatever the script left behind (a writer blocked on a FIFO) */
    o->status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    o->sig = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
    FILE *f = fopen(errpath, "r");
    size_t n = f ? fread(o->err, 1, sizeof o->err - 1, f) : 0;
    o->err[n] = 0;
    if (f) fclose(f);
}

/* true if a name below dir holds ".tmp."; its path in found */
static bool temp_left(const snapshot *s, char *found, size_t n) {
    for (int i = 0; i < s->n; i++)
        if (strstr(s->e[i].path, ".tmp.")) {
            snprintf(found, n, "%s", s->e[i].path);
            return true;
        }
    return false;
}

#define PROBLEM(...) (o->problem[0] ? 0 : snprintf(o->problem, sizeof o->problem, __VA_ARGS__))

static void run_row(int i, const char *base, outcome *o) {
    const row *r = &ROWS[i];
    memset(o, 0, sizeof *o);
    char dir[400], errpath[450], script[4096];
    snprintf(dir, sizeof dir, "%s/row%03d", TMP, i);
    snprintf(errpath, sizeof errpath, "%s/stderr-%03d", TMP, i);
    ck_assert_int_eq(qkv_test_sh(NULL, 0, false, "cp -a '%s' '%s'", base, dir), 0);
    if (r->setup[0]) {
        outcome so;
        memset(&so, 0, sizeof so);
        sh_run(dir, r->setup, errpath, &so);
        ck_assert_msg(so.status == 0, "row %d (%s %s %s): setup failed: %s", i, r->cmd, r->file, r->kind, so.err);
    }
    snapshot before = {0}, after = {0};
    snap(&before, dir, "");
    snprintf(script, sizeof script, "%s", r->run);
    sh_run(dir, script, errpath, o);
    snap(&after, dir, "");
    /* the contract */
    size_t len = strlen(o->err);
    int lines = 0;
    for (const char *p = o->err; *p; p++) lines += *p == '\n';
    char found[600];
    if (o->hung) PROBLEM("no answer within %d s (a hang)", row_timeout());
    if (o->sig) PROBLEM("killed by signal %d", o->sig);
    if (o->status < 0 || o->status > 2) PROBLEM("exit status %d, not 0, 1 or 2", o->status);
    if (o->status != 0 && (lines != 1 || o->err[len - 1] != '\n'))
        PROBLEM("stderr is not exactly one line (%d lines)", lines);
    if (o->status != 0 && strncmp(o->err, "qkv", 3)) PROBLEM("the message does not start with qkv");
    if (strstr(o->err, "Sanitizer") || strstr(o->err, "runtime error:")) PROBLEM("sanitizer report");
    if (o->status != r->status) PROBLEM("exit %d, expected %d", o->status, r->status);
    if (o->status != 0 && r->expect && !strstr(o->err, r->expect)) PROBLEM("the message lacks [%s]", r->expect);
    if (temp_left(&after, found, sizeof found)) PROBLEM("temporary file left: %s", found);
    for (int k = 0; k < before.n; k++) {
        const entry *b = &before.e[k], *a = find_entry(&after, b->path);
        if (may_write(r->writes, b->path)) continue;
        if (!a) PROBLEM("%s was removed", b->path);
        else if (a->mode != b->mode || a->size != b->size || a->ino != b->ino || a->mtime_ns != b->mtime_ns ||
                 a->hash != b->hash)
            PROBLEM("%s was changed", b->path);
    }
    for (int k = 0; k < after.n && o->status != 0; k++)
        if (!find_entry(&before, after.e[k].path) && !may_write(r->writes, after.e[k].path))
            PROBLEM("%s was created by a failed command", after.e[k].path);
    free(before.e);
    free(after.e);
    qkv_test_rmtree(dir);
}

/* ---- the table ----------------------------------------------------------------------------- */

/* s into b as Markdown table text: | escaped, < as &lt; (a <!-- ... --> in a message is not a
 * comment or a marker here), the binary's path as qkv */
static void cell_as(char **b, size_t *n, size_t *cap, const char *s, bool raw) {
    for (const char *p = s; *p; p++) {
        char tmp[8];
        const char *put = tmp;
        if (raw) { tmp[0] = *p; tmp[1] = 0; }
        else if (!strncmp(p, "\"$QKV\"", 6)) {
            put = "qkv";
            p += 5;
        } else if (*p == '|') put = "\\|";
        else if (*p == '<') put = "&lt;";
        else if (*p == '\n') put = " ";
        else { tmp[0] = *p; tmp[1] = 0; }
        size_t k = strlen(put);
        if (*n + k + 1 > *cap) {
            *cap = 2 * (*cap + k + 64);
            *b = realloc(*b, *cap);
            ck_assert_ptr_nonnull(*b);
        }
        memcpy(*b + *n, put, k + 1);
        *n += k;
    }
}

static void cell(char **b, size_t *n, size_t *cap, const char *s) { cell_as(b, n, cap, s, false); }
/* the table's own separators */
static void sep(char **b, size_t *n, size_t *cap, const char *s) { cell_as(b, n, cap, s, true); }

static char *make_table(const outcome *out) {
    char *b = NULL;
    size_t n = 0, cap = 0;
    static const char HEAD[] = "| # | command | input | made into | run | exit | stderr |\n|---|---|---|---|---|---|---|\n";
    cap = sizeof HEAD + 4096;
    b = malloc(cap);
    ck_assert_ptr_nonnull(b);
    memcpy(b, HEAD, sizeof HEAD);
    n = sizeof HEAD - 1;
    for (int i = 0; i < NROWS; i++) {
        char num[32], status[32];
        snprintf(num, sizeof num, "| %d | ", i + 1);
        sep(&b, &n, &cap, num);
        cell(&b, &n, &cap, ROWS[i].cmd);
        sep(&b, &n, &cap, " | ");
        cell(&b, &n, &cap, ROWS[i].file);
        sep(&b, &n, &cap, " | ");
        cell(&b, &n, &cap, ROWS[i].kind);
        sep(&b, &n, &cap, " | `");
        cell(&b, &n, &cap, ROWS[i].run);
        if (out[i].hung) snprintf(status, sizeof status, "hang");
        else if (out[i].sig) snprintf(status, sizeof status, "signal %d", out[i].sig);
        else snprintf(status, sizeof status, "%d", out[i].status);
        sep(&b, &n, &cap, "` | ");
        cell(&b, &n, &cap, status);
        sep(&b, &n, &cap, " | ");
        /* the first line (the rows keep progress, which has timings, off stderr with --quiet) */
        char line[4200];
        snprintf(line, sizeof line, "%s", out[i].err);
        int more = -1;
        for (const char *p = out[i].err; *p; p++) more += *p == '\n';
        line[strcspn(line, "\n")] = 0;
        if (more > 0) snprintf(line + strlen(line), sizeof line - strlen(line), " (and %d more lines)", more);
        cell(&b, &n, &cap, line[0] ? line : "-");
        sep(&b, &n, &cap, " |\n");
    }
    return b;
}

#define DOC "../docs/reliability.md"
#define BEGIN_MARK "<!-- pass2 table: generated by tests/test_pass2.c, do not edit -->\n"
#define END_MARK "<!-- pass2 table ends -->\n"

/* the document's block between the markers is table: compared, or with QKV_PASS2_UPDATE=1
 * rewritten (a temporary file renamed over the document) */
static void check_or_update_doc(const char *table) {
    FILE *f = fopen(DOC, "rb");
    ck_assert_msg(f != NULL, "cannot read %s (the tests run from tests/)", DOC);
    static char doc[1 << 20];
    size_t n = fread(doc, 1, sizeof doc - 1, f);
    doc[n] = 0;
    fclose(f);
    char *b = strstr(doc, BEGIN_MARK), *e = b ? strstr(b, END_MARK) : NULL;
    ck_assert_msg(b && e, "%s has no block between \"%.40s\" and \"%.25s\"", DOC, BEGIN_MARK, END_MARK);
    b += strlen(BEGIN_MARK);
    const char *up = getenv("QKV_PASS2_UPDATE");
    if (up && !strcmp(up, "1")) {
        char tmp[64];
        snprintf(tmp, sizeof tmp, "%s.tmp.%ld", DOC, (long)getpid());
        FILE *w = fopen(tmp, "wb");
        ck_assert_ptr_nonnull(w);
        fwrite(doc, 1, (size_t)(b - doc), w);
        fputs(table, w);
        fputs(e, w);
        ck_assert_int_eq(fclose(w), 0);
        ck_assert_int_eq(rename(tmp, DOC), 0);
        return;
    }
    size_t k = 0, line = 1;
    for (; table[k] && b + k < e && table[k] == b[k]; k++) line += table[k] == '\n';
    bool same = !table[k] && b + k == e;
    ck_assert_msg(same, "%s: the table of the second pass differs from what the binary does now, at line %zu of the "
                  "block: regenerate it with `cd tests && QKV_PASS2_UPDATE=1 CK_RUN_SUITE=pass2 QKV_BIN=$PWD/../build/qkv "
                  "../build/run_tests`", DOC, line);
}

START_TEST(test_every_command_every_file) {
    char base[400];
    snprintf(base, sizeof base, "%s/base", TMP);
    ck_assert_int_eq(mkdir(base, 0755), 0);
    for (size_t i = 0; i < sizeof FIXTURE / sizeof FIXTURE[0]; i++) {
        char p[600];
        snprintf(p, sizeof p, "%s/%s", base, FIXTURE[i][0]);
        qkv_test_write_file(p, FIXTURE[i][1]);
    }
    setenv("QKV", qkv_test_bin(), 1);
    char out[4096];
    ck_assert_msg(qkv_test_sh(out, sizeof out, true, "cd '%s' && %s", base, FIXTURE_SH) == 0, "fixture: %s", out);
    static outcome res[NROWS];
    char failed[8192] = "";
    int nfailed = 0;
    for (int i = 0; i < NROWS; i++) {
        run_row(i, base, &res[i]);
        if (res[i].problem[0]) {
            nfailed++;
            size_t at = strlen(failed);
            snprintf(failed + at, sizeof failed - at, "\n  row %d (%s, %s, %s): %s; stderr: %.300s", i + 1, ROWS[i].cmd,
                     ROWS[i].file, ROWS[i].kind, res[i].problem, res[i].err);
        }
    }
    char *table = make_table(res);
    if (getenv("QKV_TEST_VERBOSE")) fputs(table, stderr);
    ck_assert_msg(nfailed == 0, "%d of %d rows broke the contract:%s", nfailed, NROWS, failed);
    check_or_update_doc(table);
    free(table);
}
END_TEST

/* the table covers every command and every kind of input the issue names */
START_TEST(test_rows_cover_commands_and_kinds) {
    const char *cmds[] = {"train", "train --resume", "train --group", "eval", "sample", "params", "gradcheck", "ablate",
                          "ablate --status", "ablate --report", "ablate --shard", "summarize", "summarize --check-doc",
                          "summarize --update-doc", "bench"};
    const char *kinds[] = {K_EMPTY, K_HUGE, K_TRUNC, K_WRONG, K_FIFO, K_DIR, K_DANGLING, K_DIRLINK, K_NL, K_QUOTE};
    for (size_t k = 0; k < sizeof cmds / sizeof cmds[0]; k++) {
        bool seen = false;
        for (int i = 0; i < NROWS && !seen; i++) seen = !strncmp(ROWS[i].cmd, cmds[k], strlen(cmds[k]));
        ck_assert_msg(seen, "no row for qkv %s", cmds[k]);
    }
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        int seen = 0;
        for (int i = 0; i < NROWS; i++) seen += !strncmp(ROWS[i].kind, kinds[k], strlen(kinds[k]));
        ck_assert_msg(seen >= 2, "fewer than 2 rows of kind \"%s\"", kinds[k]);
    }
    ck_assert_int_ge(NROWS, 100);
}
END_TEST

static void setup(void) { qkv_test_mkdtemp(TMP, sizeof TMP, "pass2"); }
static void teardown(void) { qkv_test_rmtree(TMP); }

Suite *pass2_suite(void) {
    Suite *s = suite_create("pass2");
    TCase *tc = tcase_create("rows");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_rows_cover_commands_and_kinds);
    tcase_add_test(tc, test_every_command_every_file);
    suite_add_tcase(s, tc);
    return s;
}
