/* Bad input, table-driven: every row writes a config, data files and a safetensors blob into an
 * empty directory, runs the qkv command there, and requires
 *   - the documented exit status (2 usage error, 1 runtime error) and no signal,
 *   - exactly one line on stderr that contains the row's substring (it names the file, key or
 *     position and what was expected), with no sanitizer report,
 *   - nothing half-written: no run directory ("out", "runs"), no "*.tmp.*" file.
 * Plus the memory estimate behind the up-front refusal, checked against real arena peaks.
 *
 * The processes are started with fork + execv (not popen), so that a signal is seen as a signal.
 * Unreadable files: the tests run as root, for whom chmod 000 does not block reads, so an
 * unreadable file is a directory given where a file is expected (open succeeds, read fails
 * with EISDIR) or a path that does not exist. */
#define _GNU_SOURCE
#include <check.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "autograd/ctx.h"
#include "config/config.h"
#include "io/safetensors.h"
#include "nn/model.h"
#include "tasks/task_data.h"
#include "tensor/parallel.h"
#include "train/train.h"
#include "train/memory.h"
#include "suites.h"
#include "testutil.h"

static char TMP[256], WORK[300];

/* ---- running the command ------------------------------------------------------------------- */

typedef struct proc_result {
    bool exited, signaled;
    int status, sig;
    char err[16384]; /* stderr */
} proc_result;

/* split args at spaces; '...' quotes a token (no escapes); returns argc */
static int split_args(char *buf, char **argv, int max) {
    int n = 0;
    char *p = buf;
    while (*p && n < max - 1) {
        while (*p == ' ') p++;
        if (!*p) break;
        char *out = p;
        argv[n++] = out;
        while (*p && *p != ' ') {
            if (*p == '\'') {
                p++;
                while (*p && *p != '\'') *out++ = *p++;
                if (*p) p++;
            } else {
                *out++ = *p++;
            }
        }
        if (*p) p++;
        *out = 0;
    }
    argv[n] = NULL;
    return n;
}

/* run `qkv ARGS` in dir (stdout discarded, stderr captured); a child that hangs is killed by
 * SIGALRM after 60 s and reported as signaled */
static void run_qkv(const char *dir, const char *args, proc_result *r) {
    char buf[4096], *argv[64], errpath[400];
    snprintf(buf, sizeof buf, "qkv %s", args);
    split_args(buf, argv, 64);
    const char *bin = qkv_test_bin();
    snprintf(errpath, sizeof errpath, "%s/stderr.txt", TMP);
    memset(r, 0, sizeof *r);
    pid_t pid = qkv_test_spawn(dir, errpath, bin, argv);
    int st;
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    r->exited = WIFEXITED(st);
    r->status = r->exited ? WEXITSTATUS(st) : -1;
    r->signaled = WIFSIGNALED(st);
    r->sig = r->signaled ? WTERMSIG(st) : 0;
    FILE *f = fopen(errpath, "r");
    ck_assert_ptr_nonnull(f);
    size_t n = fread(r->err, 1, sizeof r->err - 1, f);
    r->err[n] = 0;
    fclose(f);
}

/* ---- files ------------------------------------------------------------------------------------ */

static void write_bytes(const char *path, const void *data, size_t n) {
    FILE *f = fopen(path, "wb");
    ck_assert_msg(f != NULL, "cannot write %s", path);
    if (n) ck_assert_int_eq(fwrite(data, 1, n, f), n);
    ck_assert_int_eq(fclose(f), 0);
}

static uint8_t *read_bytes(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot read %s", path);
    uint8_t *buf = malloc(1 << 20);
    *n = fread(buf, 1, 1 << 20, f);
    fclose(f);
    return buf;
}

static void setup(void) {
    qkv_test_mkdtemp(TMP, sizeof TMP, "badinput");
    snprintf(WORK, sizeof WORK, "%s/w", TMP);
    ck_assert_int_eq(mkdir(WORK, 0755), 0);
}

static void teardown(void) { qkv_test_rmtree(TMP); }

/* ---- the table -------------------------------------------------------------------------------- */

/* the base config: recall with 3 pairs over 8 keys and 8 values (vocab 16, 9 positions) */
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
#define ABL(body) "{\"base\": \"cfg.json\", " body "}\n"
/* an ablation's results.json (as qkv summarize reads it), its baseline and variants given */
#define RESULTS(baseline, variants) "{\"title\": \"t\", \"baseline\": \"" baseline "\", \"variants\": [" variants "]}\n"
#define RES_A(text) {{"a", DIRECTORY}, {"a/results.json", text}}
/* --threads accepts what the thread pool runs: 1 to QKV_MAX_THREADS */
#define STR_(x) #x
#define STR(x) STR_(x)
#define OVER_MAX_THREADS 65
_Static_assert(OVER_MAX_THREADS == QKV_MAX_THREADS + 1, "OVER_MAX_THREADS is one more than the pool runs");
#define THREADS_RANGE "--threads: expected an integer in [1, " STR(QKV_MAX_THREADS) "], got "

/* ck.safetensors: made from a valid model file of the base config (CK_META: with the base
 * config's effective config as its metadata, as qkv train writes it) */
#define BASE_EFFECTIVE "{\"model\": {\"vocab\": 16, \"seq_len\": 9, \"d_model\": 16, \"heads\": 2, \"layers\": 1, " \
                       "\"d_ff\": 32}, \"task\": {\"name\": \"recall\", \"pairs\": 3, \"keys\": 8, \"values\": 8}}"
typedef enum {
    CK_NONE, CK_GOOD, CK_META, CK_EMPTY, CK_TRUNCATED, CK_SHORT_DATA, CK_HUGE_HEADER, CK_HEADER_PAST_END,
    CK_NOT_OBJECT, CK_BAD_DTYPE, CK_NAN, CK_TEXT
} ck_kind;

#define DIRECTORY ((const char *)1) /* a file entry whose "text" is this: make a directory */

typedef struct bad_case {
    const char *desc;
    const char *config;      /* cfg.json, or NULL */
    const char *files[4][2]; /* more files: {name, text} (text DIRECTORY: a directory) */
    ck_kind ck;              /* ck.safetensors */
    const char *args;        /* after "qkv", run in the case's directory */
    int status;              /* expected exit status */
    const char *expect;      /* a substring of the one-line message */
} bad_case;

static const bad_case CASES[] = {
    /* ---- config JSON syntax: file:line:column and what was wrong */
    {"trailing comma", "{\"model\": {\"d_model\": 16,}}\n", {{0}}, CK_NONE, "train cfg.json --out out", 2,
     "cfg.json:1:25: JSON syntax error: trailing comma before '}'"},
    {"missing comma between sections", "{\n  \"model\": {\"d_model\": 16}\n  \"task\": {}\n}\n", {{0}}, CK_NONE,
     "train cfg.json --out out", 2, "cfg.json:3:3: JSON syntax error: missing ','"},
    {"single quotes", "{'model': {}}\n", {{0}}, CK_NONE, "params cfg.json", 2,
     "cfg.json:1:2: JSON syntax error: strings need double quotes"},
    {"a comment", "{\"model\": {} // the model\n}\n", {{0}}, CK_NONE, "train cfg.json --out out", 2,
     "cfg.json:1:14: JSON syntax error: comments are not allowed"},
    {"truncated config", "{\"model\": {\"d_model\": 16", {{0}}, CK_NONE, "train cfg.json --out out", 2,
     "cfg.json:1:25: JSON syntax error: unexpected end of input (missing '}')"},
    {"empty config", "", {{0}}, CK_NONE, "train cfg.json --out out", 2,
     "cfg.json:1:1: JSON syntax error: empty input"},
    {"top level not an object", "[1, 2]\n", {{0}}, CK_NONE, "train cfg.json --out out", 2,
     "cfg.json: expected a JSON object at the top level"},
    /* ---- types */
    {"string for an integer", "{\"model\": {\"d_model\": \"64\"}}", {{0}}, CK_NONE, "train cfg.json --out out", 2,
     "cfg.json: model.d_model: expected an integer in [1, 8192], got \"64\""},
    {"fraction for an integer", "{\"model\": {\"d_model\": 64.5}}", {{0}}, CK_NONE, "train cfg.json --out out", 2,
     "model.d_model: expected an integer in [1, 8192], got 64.5"},
    {"1 for a boolean", "{\"model\": {\"attention\": {\"causal\": 1}}}", {{0}}, CK_NONE, "train cfg.json --out out",
     2, "model.attention.causal: expected true or false, got 1"},
    {"number for a section", "{\"model\": 5}", {{0}}, CK_NONE, "train cfg.json --out out", 2,
     "cfg.json: model: expected an object"},
    /* ---- keys */
    {"unknown key: closest key", "{\"model\": {\"attention\": {\"qvk\": \"full\"}}}", {{0}}, CK_NONE,
     "train cfg.json --out out", 2, "model.attention.qvk: unknown key (did you mean model.attention.qkv?)"},
    {"unknown section: closest section", "{\"optm\": {\"lr\": 0.1}}", {{0}}, CK_NONE,
     "train cfg.json --out out", 2, "cfg.json: optm: unknown key (did you mean optim?)"},
    {"unknown section: the valid ones", "{\"optimizer\": {\"lr\": 0.1}}", {{0}}, CK_NONE,
     "train cfg.json --out out", 2, "optimizer: unknown key (valid keys at the top level: model, task, train, optim)"},
    {"dotted key", "{\"model.d_model\": 16}", {{0}}, CK_NONE, "train cfg.json --out out", 2,
     "names are not dotted paths"},
    {"duplicate key", "{\"optim\": {\"lr\": 0.1, \"lr\": 0.2}}", {{0}}, CK_NONE, "train cfg.json --out out", 2,
     "cfg.json: optim.lr: duplicate key"},
    /* ---- values and relations */
    {"heads do not divide d_model", "{\"model\": {\"d_model\": 16, \"heads\": 3}}", {{0}}, CK_NONE,
     "train cfg.json --out out", 2, "cfg.json: model.heads: 3 does not divide model.d_model 16"},
    {"zero d_model", "{\"model\": {\"d_model\": 0}}", {{0}}, CK_NONE, "train cfg.json --out out", 2,
     "model.d_model: expected an integer in [1, 8192], got 0"},
    {"negative layers", "{\"model\": {\"layers\": -1}}", {{0}}, CK_NONE, "train cfg.json --out out", 2,
     "model.layers: expected an integer in [1, 64], got -1"},
    {"zero batch", "{\"train\": {\"batch\": 0}}", {{0}}, CK_NONE, "train cfg.json --out out", 2,
     "train.batch: expected an integer in [1, 65536], got 0"},
    {"zero learning rate", "{\"optim\": {\"lr\": 0}}", {{0}}, CK_NONE, "train cfg.json --out out", 2,
     "optim.lr: expected a number in (0, 10], got 0"},
    {"negative learning rate (--set)", BASE, {{0}}, CK_NONE, "train cfg.json --set optim.lr=-0.001 --out out", 2,
     "--set: optim.lr: expected a number in (0, 10], got -0.001"},
    {"unknown task", "{\"task\": {\"name\": \"cpy\"}}", {{0}}, CK_NONE, "train cfg.json --out out", 2,
     "task.name: expected one of copy, reverse, sort, recall, induction, fuzzy_recall, noisy_recall, selective_copy, "
     "text, file, got \"cpy\" (did you mean copy?)"},
    {"unknown attention variant", "{\"model\": {\"attention\": {\"qkv\": \"ful\"}}}", {{0}}, CK_NONE,
     "train cfg.json --out out", 2, "got \"ful\" (did you mean full?)"},
    {"unknown optimizer", "{\"optim\": {\"name\": \"adma\"}}", {{0}}, CK_NONE, "train cfg.json --out out", 2,
     "optim.name: expected one of sgd, adam, adamw, got \"adma\" (did you mean adam?)"},
    {"unknown gate", "{\"model\": {\"attention\": {\"gate\": \"input\"}}}", {{0}}, CK_NONE,
     "train cfg.json --out out", 2, "model.attention.gate: expected one of none, output, value, headwise, got \"input\""},
    {"more queries than pairs", "{\"task\": {\"pairs\": 2, \"queries\": 3}}", {{0}}, CK_NONE,
     "train cfg.json --out out", 2, "task.queries: 3 is more than task.pairs 2"},
    {"fuzzy_recall: too few keys for distinct pairs", "{\"task\": {\"name\": \"fuzzy_recall\", \"keys\": 2}}", {{0}},
     CK_NONE, "train cfg.json --out out", 2,
     "cfg.json: task.keys: 2 keys make only 4 distinct keys of task.key_len 2 tokens, fewer than task.pairs 8"},
    {"fuzzy_recall: key_len 0", "{\"task\": {\"name\": \"fuzzy_recall\", \"key_len\": 0}}", {{0}}, CK_NONE,
     "train cfg.json --out out", 2, "cfg.json: task.key_len: expected an integer in [1, 64], got 0"},
    {"fuzzy_recall: value_len too long", BASE, {{0}}, CK_NONE,
     "train cfg.json --set task.name=fuzzy_recall --set task.value_len=65 --out out", 2,
     "--set: task.value_len: expected an integer in [1, 64], got 65"},
    {"fuzzy_recall: examples too long", "{\"task\": {\"name\": \"fuzzy_recall\", \"pairs\": 4096, \"keys\": 64, "
     "\"key_len\": 8, \"value_len\": 8}}", {{0}}, CK_NONE, "train cfg.json --out out", 2,
     "cfg.json: task.pairs: fuzzy_recall examples of 126976 positions are longer than a model takes"},
    {"noisy_recall: negative noise", "{\"task\": {\"name\": \"noisy_recall\", \"noise\": -1}}", {{0}}, CK_NONE,
     "train cfg.json --out out", 2, "cfg.json: task.noise: expected an integer in [0, 65536], got -1"},
    {"noisy_recall: empty noise alphabet", "{\"task\": {\"name\": \"noisy_recall\", \"noise_symbols\": 0}}", {{0}},
     CK_NONE, "train cfg.json --out out", 2, "cfg.json: task.noise_symbols: expected an integer in [1, 65536], got 0"},
    {"noisy_recall: more queries than pairs", "{\"task\": {\"name\": \"noisy_recall\", \"pairs\": 2, \"queries\": 3}}",
     {{0}}, CK_NONE, "train cfg.json --out out", 2, "cfg.json: task.queries: 3 is more than task.pairs 2"},
    {"noisy_recall: examples too long", "{\"task\": {\"name\": \"noisy_recall\", \"noise\": 65536}}", {{0}}, CK_NONE,
     "train cfg.json --out out", 2, "cfg.json: task.noise: noisy_recall examples of 65560 positions are longer"},
    {"selective_copy: more to copy than places", "{\"task\": {\"name\": \"selective_copy\", \"length\": 6, "
     "\"copy_tokens\": 7}}", {{0}}, CK_NONE, "train cfg.json --out out", 2,
     "cfg.json: task.copy_tokens: 7 is more than task.length 6"},
    {"selective_copy: copy_tokens 0", "{\"task\": {\"name\": \"selective_copy\", \"copy_tokens\": 0}}", {{0}},
     CK_NONE, "train cfg.json --out out", 2, "cfg.json: task.copy_tokens: expected an integer in [1, 4096], got 0"},
    {"warmup longer than the run", "{\"train\": {\"steps\": 4}, \"optim\": {\"warmup\": 10}}", {{0}}, CK_NONE,
     "train cfg.json --out out", 2, "optim.warmup: 10 is more than train.steps 4"},
    {"min_lr above lr", "{\"optim\": {\"lr\": 0.001, \"min_lr\": 0.01, \"schedule\": \"cosine\"}}", {{0}}, CK_NONE,
     "train cfg.json --out out", 2, "optim.min_lr: 0.01 is more than optim.lr 0.001"},
    /* ---- attention options that make no sense together (model_config.c), each naming its key */
#define ATTN_BAD(desc, sets, expect) {desc, BASE, {{0}}, CK_NONE, "train cfg.json " sets " --out out", 2, expect}
#define CFG "cfg.json: model.attention."
#define SET "--set: model.attention."
#define ATT "model.attention."
    ATTN_BAD("kv_heads not dividing heads", "--set " ATT "kv_heads=3",
             CFG "kv_heads: 3 does not divide heads 2 (each key/value head serves heads/kv_heads query heads)"),
    ATTN_BAD("kv_heads above heads", "--set " ATT "kv_heads=4", CFG "kv_heads: 4 does not divide heads 2"),
    ATTN_BAD("kv_heads with qkv shared", "--set " ATT "kv_heads=1 --set " ATT "qkv=shared",
             CFG "kv_heads: grouped keys and values need their own key projection: qkv full or kv_tied, not shared"),
    ATTN_BAD("kv_heads with qkv qk_tied", "--set " ATT "kv_heads=1 --set " ATT "qkv=qk_tied",
             CFG "kv_heads: grouped keys and values need their own key projection: qkv full or kv_tied, not qk_tied"),
    ATTN_BAD("kv_heads with qkv identity", "--set " ATT "kv_heads=1 --set " ATT "qkv=identity",
             CFG "kv_heads: grouped keys and values need their own key projection: qkv full or kv_tied, not identity"),
    ATTN_BAD("kv_heads with qkv head_shared", "--set " ATT "kv_heads=1 --set " ATT "qkv=head_shared",
             CFG "kv_heads: grouped keys and values need their own key projection: qkv full or kv_tied, not head_shared"),
    ATTN_BAD("kv_heads with value_proj false", "--set " ATT "kv_heads=1 --set " ATT "value_proj=false",
             CFG "kv_heads: with value_proj false the values are X itself, all 2 heads of it"),
    ATTN_BAD("kv_heads out of range", "--set " ATT "kv_heads=257", SET "kv_heads: expected an integer in [0, 256], got 257"),
    ATTN_BAD("role_scale with qkv full", "--set " ATT "role_scale=true",
             CFG "role_scale: tells Q, K and V apart inside one shared matrix: needs qkv shared, not full"),
    ATTN_BAD("role_scale with qkv head_shared", "--set " ATT "role_scale=true --set " ATT "qkv=head_shared",
             CFG "role_scale: tells Q, K and V apart inside one shared matrix: needs qkv shared, not head_shared"),
    ATTN_BAD("value_proj false with qkv kv_tied", "--set " ATT "value_proj=false --set " ATT "qkv=kv_tied",
             CFG "value_proj: false removes a value projection of its own: qkv full or qk_tied have one, kv_tied has none"),
    ATTN_BAD("value_proj false with qkv shared", "--set " ATT "value_proj=false --set " ATT "qkv=shared",
             CFG "value_proj: false removes a value projection of its own: qkv full or qk_tied have one, shared has none"),
    ATTN_BAD("value_proj false with qkv identity", "--set " ATT "value_proj=false --set " ATT "qkv=identity",
             CFG "value_proj: false removes a value projection of its own: qkv full or qk_tied have one, identity has none"),
    ATTN_BAD("value_proj false with gate value", "--set " ATT "gate=value --set " ATT "value_proj=false",
             CFG "gate: value gates the value projection, which value_proj false removes"),
    ATTN_BAD("kv_latent with qkv qk_tied", "--set " ATT "kv_latent=4 --set " ATT "qkv=qk_tied",
             CFG "kv_latent: a latent for keys and values needs their own projections: qkv full, not qk_tied"),
    ATTN_BAD("kv_latent with qkv kv_tied", "--set " ATT "kv_latent=4 --set " ATT "qkv=kv_tied",
             CFG "kv_latent: a latent for keys and values needs their own projections: qkv full, not kv_tied"),
    ATTN_BAD("kv_latent with value_proj false", "--set " ATT "kv_latent=4 --set " ATT "value_proj=false",
             CFG "kv_latent: value_proj false leaves no value projection to factor"),
    ATTN_BAD("kv_latent as wide as d_model", "--set " ATT "kv_latent=16",
             CFG "kv_latent: 16 is not below 16 (d_model, or 2 x kv_heads x head_dim if smaller): a latent that wide "
             "constrains nothing"),
    ATTN_BAD("kv_latent as wide as the grouped keys and values", "--set model.heads=4 --set " ATT "kv_heads=1 --set "
             ATT "kv_latent=8", CFG "kv_latent: 8 is not below 8 (d_model, or 2 x kv_heads x head_dim if smaller)"),
    ATTN_BAD("kv_latent negative", "--set " ATT "kv_latent=-1", SET "kv_latent: expected an integer in [0, 65536], got -1"),
    ATTN_BAD("alibi with rel_pos_bias", "--set " ATT "alibi=true --set " ATT "rel_pos_bias=true",
             CFG "alibi: rel_pos_bias is on too: both are positional biases on the scores, pick one"),
    ATTN_BAD("self_mask_rule without self_mask", "--set " ATT "self_mask_rule=reformer",
             CFG "self_mask_rule: reformer applies to self_mask, which is off"),
    ATTN_BAD("unknown self_mask_rule", "--set " ATT "self_mask_rule=refomer",
             SET "self_mask_rule: expected one of strict, reformer, got \"refomer\" (did you mean reformer?)"),
    ATTN_BAD("headwise gate with qkv head_shared", "--set " ATT "gate=headwise --set " ATT "qkv=head_shared",
             CFG "gate: headwise is not for head_shared, whose heads share one map per role"),
    ATTN_BAD("identity init with qkv identity", "--set " ATT "init=identity --set " ATT "qkv=identity",
             CFG "init: identity starts the Q/K/V projections, and qkv identity has none"),
    ATTN_BAD("mimetic init with qkv identity", "--set " ATT "init=mimetic --set " ATT "qkv=identity",
             CFG "init: mimetic starts the Q/K/V projections, and qkv identity has none"),
    ATTN_BAD("unknown init", "--set " ATT "init=mimic",
             SET "init: expected one of default, identity, mimetic, got \"mimic\" (did you mean mimetic?)"),
    /* issue 22: a projection removed, differential and talking-heads attention */
    ATTN_BAD("query_proj false with qkv shared", "--set " ATT "query_proj=false --set " ATT "qkv=shared",
             CFG "query_proj: false removes a query projection of its own: qkv full or kv_tied have one, shared has none"),
    ATTN_BAD("query_proj false with qkv qk_tied", "--set " ATT "query_proj=false --set " ATT "qkv=qk_tied",
             CFG "query_proj: false removes a query projection of its own: qkv full or kv_tied have one, qk_tied has none"),
    ATTN_BAD("query_proj false with qkv identity", "--set " ATT "query_proj=false --set " ATT "qkv=identity",
             CFG "query_proj: false removes a query projection of its own: qkv full or kv_tied have one, identity has none"),
    ATTN_BAD("query_proj false with qkv head_shared", "--set " ATT "query_proj=false --set " ATT "qkv=head_shared",
             CFG "query_proj: false removes a query projection of its own: qkv full or kv_tied have one, head_shared has "
             "none"),
    ATTN_BAD("key_proj false with qkv kv_tied", "--set " ATT "key_proj=false --set " ATT "qkv=kv_tied",
             CFG "key_proj: false removes a key projection of its own: qkv full has one, kv_tied has none (kv_tied's Wkv "
             "is the values' too)"),
    ATTN_BAD("key_proj false with qkv shared", "--set " ATT "key_proj=false --set " ATT "qkv=shared",
             CFG "key_proj: false removes a key projection of its own: qkv full has one, shared has none"),
    ATTN_BAD("key_proj false with qkv qk_tied", "--set " ATT "key_proj=false --set " ATT "qkv=qk_tied",
             CFG "key_proj: false removes a key projection of its own: qkv full has one, qk_tied has none"),
    ATTN_BAD("key_proj false with qkv identity", "--set " ATT "key_proj=false --set " ATT "qkv=identity",
             CFG "key_proj: false removes a key projection of its own: qkv full has one, identity has none"),
    ATTN_BAD("key_proj false with qkv head_shared", "--set " ATT "key_proj=false --set " ATT "qkv=head_shared",
             CFG "key_proj: false removes a key projection of its own: qkv full has one, head_shared has none"),
    ATTN_BAD("key_proj false with kv_heads", "--set " ATT "key_proj=false --set " ATT "kv_heads=1",
             CFG "key_proj: with key_proj false the keys are X itself, all 2 heads of it (kv_heads 1)"),
    ATTN_BAD("key_proj false with kv_latent", "--set " ATT "key_proj=false --set " ATT "kv_latent=4",
             CFG "key_proj: kv_latent factors the key projection, which key_proj false removes"),
    ATTN_BAD("query, key and value projections all off", "--set " ATT "query_proj=false --set " ATT "key_proj=false "
             "--set " ATT "value_proj=false",
             CFG "query_proj: query_proj, key_proj and value_proj all false is qkv identity: use that"),
    ATTN_BAD("diff with qkv head_shared", "--set " ATT "diff=true --set " ATT "qkv=head_shared",
             CFG "diff: not with qkv head_shared (differential attention rewrites the scores itself)"),
    ATTN_BAD("diff with talking_heads", "--set " ATT "diff=true --set " ATT "talking_heads=true",
             CFG "diff: not with talking_heads (differential attention rewrites the scores itself)"),
    ATTN_BAD("diff with rel_pos_bias", "--set " ATT "diff=true --set " ATT "rel_pos_bias=true",
             CFG "diff: not with rel_pos_bias"),
    ATTN_BAD("diff with alibi", "--set " ATT "diff=true --set " ATT "alibi=true", CFG "diff: not with alibi"),
    ATTN_BAD("diff with key_norm", "--set " ATT "diff=true --set " ATT "key_norm=true",
             CFG "diff: not with key_norm (it would normalise whole heads, not each half)"),
    ATTN_BAD("diff with an odd head_dim", "--set " ATT "diff=true --set model.heads=16",
             CFG "diff: head_dim 1 (d_model / heads) is odd: each head splits into two query/key halves"),
    ATTN_BAD("diff with kv_heads", "--set " ATT "diff=true --set " ATT "kv_heads=1",
             CFG "diff: not with kv_heads 1 (the published code repeats 2 kv_heads half-width keys"),
    ATTN_BAD("diff with scale embed", "--set " ATT "diff=true --set " ATT "scale=embed",
             CFG "diff: scales by 1/sqrt(head_dim / 2), the width of each half, as published: scale embed does not apply"),
    ATTN_BAD("talking_heads with qkv head_shared", "--set " ATT "talking_heads=true --set " ATT "qkv=head_shared",
             CFG "talking_heads: not with qkv head_shared, whose heads share one map per role"),
    ATTN_BAD("talking_heads with rel_pos_bias", "--set " ATT "talking_heads=true --set " ATT "rel_pos_bias=true",
             CFG "talking_heads: not with rel_pos_bias (a bias between the scores and their mixing: pick one)"),
    ATTN_BAD("talking_heads with alibi", "--set " ATT "talking_heads=true --set " ATT "alibi=true",
             CFG "talking_heads: not with alibi (its slopes are in the fused kernel, which talking heads do not use)"),
    ATTN_BAD("diff not a boolean", "--set " ATT "diff=1", SET "diff: expected true or false"),
    {"kv_heads not dividing heads (in the file)", "{\"model\": {\"heads\": 4, \"attention\": {\"kv_heads\": 3}}}", {{0}},
     CK_NONE, "train cfg.json --out out", 2, "cfg.json: model.attention.kv_heads: 3 does not divide heads 4"},
#undef ATT
#undef CFG
#undef SET
#undef ATTN_BAD
    /* ---- bidirectional attention where the targets are the next input tokens */
    {"train: causal false on copy", BASE, {{0}}, CK_NONE,
     "train cfg.json --set task.name=copy --set model.attention.causal=false --out out", 1,
     "model.attention.causal: false, but task \"copy\" shows its targets as the next input tokens"},
    {"ablation: causal false on copy, named by variant",
     ABL("\"variants\": [{\"name\": \"a\"}, {\"name\": \"bi\", \"set\": [\"model.attention.causal=false\"]}], "
         "\"set\": [\"task.name=copy\"], \"seeds\": [0]"),
     {{"cfg.json", BASE}}, CK_NONE, "ablate abl.json --out out", 2,
     "abl.json: variant bi: model.attention.causal: false, but task \"copy\" shows its targets"},
    {"train: query_blank on copy", BASE, {{0}}, CK_NONE,
     "train cfg.json --set task.name=copy --set task.query_blank=true --out out", 2,
     "task.query_blank: only recall and noisy_recall have queries to blank, not task \"copy\""},
    /* ---- memory: refused up front with an estimate */
    {"train: model larger than memory", BASE, {{0}}, CK_NONE,
     "train cfg.json --set model.d_model=8192 --set model.layers=64 --set model.d_ff=65536 --out out", 2,
     "model.d_model 8192 x model.layers 64"},
    {"train: activations larger than memory", BASE, {{0}}, CK_NONE,
     "train cfg.json --set model.seq_len=65536 --set train.batch=4096 --set model.heads=16 --out out", 2,
     "(parameters, Adam state and activations), more than this machine's"},
    {"eval: model larger than memory", BASE, {{0}}, CK_GOOD,
     "eval cfg.json --checkpoint ck.safetensors --set model.d_model=8192 --set model.layers=64 --set model.d_ff=65536",
     2, "(parameters and activations), more than this machine's"},
    {"params: model larger than memory", BASE, {{0}}, CK_NONE,
     "params cfg.json --set model.d_model=8192 --set model.layers=64 --set model.d_ff=65536", 2, "needs about"},
    /* ---- config and data files */
    {"missing config file", NULL, {{0}}, CK_NONE, "train nope.json --out out", 2,
     "nope.json: cannot open: No such file or directory"},
    {"config is a directory", NULL, {{"conf", DIRECTORY}}, CK_NONE, "train conf --out out", 2,
     "conf: cannot read: Is a directory"},
    {"missing data file", FILE_TASK(""), {{0}}, CK_NONE, "train cfg.json --out out", 2,
     "task.path: cannot open \"d.jsonl\": No such file or directory"},
    {"data path is a directory (unreadable)", FILE_TASK(""), {{"d.jsonl", DIRECTORY}}, CK_NONE,
     "train cfg.json --out out", 2, "task.path: cannot read \"d.jsonl\": Is a directory"},
    {"empty data file", FILE_TASK(""), {{"d.jsonl", ""}}, CK_NONE, "train cfg.json --out out", 1,
     "task.path: d.jsonl is empty"},
    {"data file of blank lines", FILE_TASK(""), {{"d.jsonl", "\n  \n\n"}}, CK_NONE, "train cfg.json --out out", 1,
     "task.path: d.jsonl holds no sequences"},
    {"token outside model.vocab", FILE_TASK_VOCAB(10, ", \"eval_fraction\": 0.5"),
     {{"d.jsonl", "{\"input\": [1, 2, 3], \"target\": [2, 3, 4]}\n{\"input\": [1, 2, 30], \"target\": [2, 3, 4]}\n"
                  "{\"input\": [1], \"target\": [2]}\n"}},
     CK_NONE, "train cfg.json --out out", 1, "d.jsonl:2: \"input\"[2] is 30, outside model.vocab 10"},
    {"target outside model.vocab in eval_path", FILE_TASK_VOCAB(10, ", \"eval_path\": \"e.jsonl\""),
     {{"d.jsonl", LINES4}, {"e.jsonl", "\n{\"input\": [1, 2], \"target\": [2, 12]}\n"}}, CK_NONE,
     "train cfg.json --out out", 1, "e.jsonl:2: \"target\"[1] is 12, outside model.vocab 10"},
    {"ragged input and target", FILE_TASK(""), {{"d.jsonl", "{\"input\": [1, 2, 3], \"target\": [2, 3]}\n"}},
     CK_NONE, "train cfg.json --out out", 1, "d.jsonl:1: \"target\" has 2 entries but \"input\" has 3"},
    {"truncated JSON Lines", FILE_TASK(""), {{"d.jsonl", "{\"input\": [1], \"target\": [2]}\n{\"input\": [1, 2"}},
     CK_NONE, "train cfg.json --out out", 1, "d.jsonl:2:16: expected a JSON object {\"input\": [...], \"target\": [...]}"},
    {"unknown key in JSON Lines", FILE_TASK(""), {{"d.jsonl", "{\"inputs\": [1], \"target\": [2]}\n"}}, CK_NONE,
     "train cfg.json --out out", 1, "d.jsonl:1: unknown key \"inputs\" (expected input, target, mask)"},
    {"huge number in JSON Lines (fuzz finding)", FILE_TASK(""),
     {{"d.jsonl", "{\"input\": [1, 2], \"target\": [2, 3], \"mask\": [0, 4444444444444444444444444444444444]}\n"}},
     CK_NONE, "train cfg.json --out out", 1, "d.jsonl:1: \"mask\"[1] must be an integer in [0, 1]"},
    {"line break in a JSON Lines key (fuzz finding)", FILE_TASK(""),
     {{"d.jsonl", "{\"input\": [1], \"target\": [2]}\n{\"in\\nput\": [1], \"target\": [2]}\n"}}, CK_NONE,
     "train cfg.json --out out", 1, "d.jsonl:2: unknown key \"in\\x0aput\" (expected input, target, mask)"},
    {"negative token", FILE_TASK(""), {{"d.jsonl", "{\"input\": [1, -2], \"target\": [2, 3]}\n"}}, CK_NONE,
     "train cfg.json --out out", 1, "d.jsonl:1: \"input\"[1] must be an integer in [0, 1048576]"},
    {"text file shorter than a window", "{\"task\": {\"name\": \"text\", \"path\": \"t.txt\", \"seq_len\": 64}}",
     {{"t.txt", "too short\n"}}, CK_NONE, "train cfg.json --out out", 1, "task.path: t.txt has 10 bytes"},
    {"unknown text corpus", "{\"task\": {\"name\": \"text\", \"corpus\": \"fortune\"}}", {{0}}, CK_NONE,
     "train cfg.json --out out", 2, "task.corpus: expected one of file, fortunes, got \"fortune\" (did you mean fortunes?)"},
    {"a corpus for a task that is not text", BASE, {{0}}, CK_NONE, "train cfg.json --set task.corpus=fortunes --out out",
     2, "task.corpus: fortunes is a corpus of the text task, not of task \"recall\""},
    {"fortunes directory missing", "{\"task\": {\"name\": \"text\", \"corpus\": \"fortunes\", \"path\": \"fdir\"}}",
     {{0}}, CK_NONE, "train cfg.json --out out", 2,
     "task.path: cannot open the fortunes directory \"fdir\": No such file or directory (Debian's fortunes package "
     "installs /usr/share/games/fortunes: apt-get install fortunes (or scripts/install-deps.sh fortunes))"},
    {"fortunes directory without fortunes", "{\"task\": {\"name\": \"text\", \"corpus\": \"fortunes\", \"path\": \"fdir\"}}",
     {{"fdir", DIRECTORY}, {"fdir/blank", "%\n  \n%\n"}}, CK_NONE, "train cfg.json --out out", 1,
     "task.path: fdir holds no fortunes (expected plain-text fortune files"},
    {"eval --data missing", BASE, {{0}}, CK_GOOD, "eval cfg.json --checkpoint ck.safetensors --data nope.jsonl", 1,
     "--data: nope.jsonl: cannot read: No such file or directory"},
    {"eval --data ragged", BASE, {{"r.jsonl", "{\"input\": [1, 2], \"target\": [1, 2]}\n{\"input\": [1], \"target\": [1, 2]}\n"}},
     CK_GOOD, "eval cfg.json --checkpoint ck.safetensors --data r.jsonl", 1,
     "r.jsonl:2: \"target\" has 2 entries but \"input\" has 1"},
    {"eval --data token outside model.vocab", BASE, {{"v.jsonl", "{\"input\": [1, 2], \"target\": [1, 99]}\n"}},
     CK_GOOD, "eval cfg.json --checkpoint ck.safetensors --data v.jsonl --set model.vocab=16", 1,
     "v.jsonl:1: \"target\"[1] is 99, outside model.vocab 16"},
    /* ---- checkpoints for qkv eval --checkpoint */
    {"checkpoint missing", BASE, {{0}}, CK_NONE, "eval cfg.json --checkpoint ck.safetensors", 1,
     "ck.safetensors: cannot open: No such file or directory"},
    {"checkpoint is a directory", BASE, {{"ck.safetensors", DIRECTORY}}, CK_NONE,
     "eval cfg.json --checkpoint ck.safetensors", 1, "ck.safetensors: cannot read: Is a directory"},
    {"checkpoint empty", BASE, {{0}}, CK_EMPTY, "eval cfg.json --checkpoint ck.safetensors", 1,
     "ck.safetensors: file is empty, expected a safetensors header"},
    {"checkpoint truncated in the header", BASE, {{0}}, CK_TRUNCATED, "eval cfg.json --checkpoint ck.safetensors", 1,
     "runs past the end of the file"},
    {"checkpoint truncated in the data", BASE, {{0}}, CK_SHORT_DATA, "eval cfg.json --checkpoint ck.safetensors", 1,
     "ck.safetensors: tensor \"lm_head.bias\": data_offsets end at"},
    {"checkpoint with an oversized header", BASE, {{0}}, CK_HUGE_HEADER, "eval cfg.json --checkpoint ck.safetensors",
     1, "header length 9223372036854775807 exceeds the limit of 100000000 bytes"},
    {"checkpoint header length past the end", BASE, {{0}}, CK_HEADER_PAST_END,
     "eval cfg.json --checkpoint ck.safetensors", 1, "runs past the end of the file"},
    {"checkpoint header not an object", BASE, {{0}}, CK_NOT_OBJECT, "eval cfg.json --checkpoint ck.safetensors", 1,
     "ck.safetensors: header starts with '[', expected a JSON object starting with '{'"},
    {"checkpoint with an unknown dtype", BASE, {{0}}, CK_BAD_DTYPE, "eval cfg.json --checkpoint ck.safetensors", 1,
     "ck.safetensors: tensor \"tok_emb.weight\": unknown dtype \"Q32\" (qkv reads F32, F64, I32)"},
    {"checkpoint holding NaN", BASE, {{0}}, CK_NAN, "eval cfg.json --checkpoint ck.safetensors", 1,
     "ck.safetensors: tensor \"lm_head.bias\" holds NaN"},
    {"checkpoint is a text file", BASE, {{0}}, CK_TEXT, "eval cfg.json --checkpoint ck.safetensors", 1,
     "exceeds the limit"},
    {"checkpoint of another width", BASE, {{0}}, CK_GOOD,
     "eval cfg.json --checkpoint ck.safetensors --set model.d_model=32", 1,
     "tensor \"tok_emb.weight\": shape (16,16) in the file, expected (16,32)"},
    {"checkpoint of another variant", BASE, {{0}}, CK_GOOD,
     "eval cfg.json --checkpoint ck.safetensors --set model.attention.qkv=shared", 1,
     "no tensor \"blocks.0.attn.w.weight\": the checkpoint is from a model of another shape or variant"},
    {"checkpoint with fewer layers", BASE, {{0}}, CK_GOOD,
     "eval cfg.json --checkpoint ck.safetensors --set model.layers=2", 1, "no tensor \"blocks.1.ln1.weight\""},
    /* ---- qkv sample */
    {"sample without --checkpoint", BASE, {{0}}, CK_NONE, "sample cfg.json --prompt 1", 2,
     "qkv sample: needs CONFIG and --checkpoint FILE"},
    {"sample: checkpoint missing", BASE, {{0}}, CK_NONE, "sample cfg.json --checkpoint ck.safetensors --prompt 1", 1,
     "qkv sample: ck.safetensors: cannot open: No such file or directory"},
    {"sample: checkpoint of another width", BASE, {{0}}, CK_GOOD,
     "sample cfg.json --checkpoint ck.safetensors --prompt 1 --set model.d_model=32", 1,
     "tensor \"tok_emb.weight\": shape (16,16) in the file, expected (16,32)"},
    {"sample: checkpoint of another model config, same shapes", BASE, {{0}}, CK_META,
     "sample cfg.json --checkpoint ck.safetensors --prompt 1 --set model.attention.causal=false", 1,
     "qkv sample: ck.safetensors was trained with model.attention.causal true, but cfg.json has false"},
    {"sample: checkpoint of another task, same shapes", BASE, {{0}}, CK_META,
     "sample cfg.json --checkpoint ck.safetensors --prompt 1 --set task.name=copy --set task.symbols=15 "
     "--set task.length=4 --set model.seq_len=9", 1,
     "ck.safetensors was trained with task.name \"recall\", but cfg.json has \"copy\""},
    {"sample: prompt token outside the vocabulary", BASE, {{0}}, CK_GOOD,
     "sample cfg.json --checkpoint ck.safetensors --prompt '1 99'", 2,
     "qkv sample: --prompt: token 99 (token 2) is outside the model's vocabulary [0, 16)"},
    {"sample: prompt that is not token ids", BASE, {{0}}, CK_GOOD, "sample cfg.json --checkpoint ck.safetensors --prompt 1,x",
     2, "qkv sample: --prompt: expected token ids separated by spaces or commas, got 'x' (token 2)"},
    {"sample: no prompt for a task of token ids", BASE, {{0}}, CK_GOOD, "sample cfg.json --checkpoint ck.safetensors", 2,
     "qkv sample: --prompt: task \"recall\" needs one"},
    {"sample: an empty prompt", BASE, {{0}}, CK_GOOD, "sample cfg.json --checkpoint ck.safetensors --prompt ' , '", 2,
     "qkv sample: --prompt: empty; give at least one token id"},
    {"sample: no tokens to generate", BASE, {{0}}, CK_GOOD,
     "sample cfg.json --checkpoint ck.safetensors --prompt 1 --tokens 0", 2,
     "qkv sample: --tokens: expected an integer in [1, 1000000], got '0'"},
    {"sample: negative temperature", BASE, {{0}}, CK_GOOD,
     "sample cfg.json --checkpoint ck.safetensors --prompt 1 --temperature -1", 2,
     "qkv sample: --temperature: expected a number in [0, 1000], got '-1'"},
    {"sample: temperature not a number", BASE, {{0}}, CK_GOOD,
     "sample cfg.json --checkpoint ck.safetensors --prompt 1 --temperature nan", 2,
     "qkv sample: --temperature: expected a number in [0, 1000], got 'nan'"},
    {"sample: negative top-k", BASE, {{0}}, CK_GOOD, "sample cfg.json --checkpoint ck.safetensors --prompt 1 --top-k -1",
     2, "qkv sample: --top-k: expected an integer in [0, 1048576], got '-1'"},
    {"sample: unknown option", BASE, {{0}}, CK_GOOD, "sample cfg.json --checkpoint ck.safetensors --prompt 1 --bogus", 2,
     "qkv sample: unknown option '--bogus'"},
    /* ---- command lines */
    {"train: unknown option", BASE, {{0}}, CK_NONE, "train cfg.json --bogus --out out", 2,
     "qkv train: unknown option '--bogus' (try 'qkv train --help')"},
    {"eval: unknown option", BASE, {{0}}, CK_GOOD, "eval cfg.json --checkpoint ck.safetensors --bogus", 2,
     "qkv eval: unknown option '--bogus'"},
    {"params: unknown option", BASE, {{0}}, CK_NONE, "params cfg.json --bogus", 2, "qkv params: unknown option '--bogus'"},
    {"gradcheck: unknown option", BASE, {{0}}, CK_NONE, "gradcheck cfg.json --bogus", 2,
     "qkv gradcheck: unknown option '--bogus'"},
    {"ablate: unknown option", ABL("\"variants\": [{\"name\": \"a\"}], \"seeds\": [0]"), {{0}}, CK_NONE,
     "ablate abl.json --bogus --out out", 2, "qkv ablate: unknown option '--bogus'"},
    {"bench: unknown option", NULL, {{0}}, CK_NONE, "bench --bogus", 2, "qkv bench: unknown option '--bogus'"},
    {"unknown command", NULL, {{0}}, CK_NONE, "trian cfg.json", 2, "qkv: unknown command or option 'trian'"},
    {"option without its value", BASE, {{0}}, CK_NONE, "train cfg.json --out", 2, "qkv train: --out needs a value"},
    {"bad --threads", BASE, {{0}}, CK_NONE, "train cfg.json --threads 0 --out out", 2, THREADS_RANGE "'0'"},
    {"train: --threads above the thread pool's limit", BASE, {{0}}, CK_NONE,
     "train cfg.json --threads " STR(OVER_MAX_THREADS) " --out out", 2,
     "qkv train: " THREADS_RANGE "'" STR(OVER_MAX_THREADS) "'"},
    {"train: --threads at the limit parses (the missing config fails)", NULL, {{0}}, CK_NONE,
     "train --threads " STR(QKV_MAX_THREADS) " --out out nope.json", 2, "qkv train: nope.json: cannot open"},
    {"eval: --threads above the thread pool's limit", BASE, {{0}}, CK_GOOD,
     "eval cfg.json --checkpoint ck.safetensors --threads " STR(OVER_MAX_THREADS), 2,
     "qkv eval: " THREADS_RANGE "'" STR(OVER_MAX_THREADS) "'"},
    {"eval: --threads at the limit parses (the missing --checkpoint fails)", BASE, {{0}}, CK_NONE,
     "eval cfg.json --threads " STR(QKV_MAX_THREADS), 2, "qkv eval: needs CONFIG and --checkpoint FILE"},
    {"bench: --threads above the thread pool's limit", NULL, {{0}}, CK_NONE,
     "bench --threads " STR(OVER_MAX_THREADS), 2, "qkv bench: " THREADS_RANGE "'" STR(OVER_MAX_THREADS) "'"},
    {"bench: --threads at the limit parses (the bad --size fails)", NULL, {{0}}, CK_NONE,
     "bench --threads " STR(QKV_MAX_THREADS) " --size huge", 2, "qkv bench: --size: expected tiny, small or medium"},
    {"bad --size", NULL, {{0}}, CK_NONE, "bench --size huge", 2, "--size: expected tiny, small or medium, got 'huge'"},
    {"bench: --sweep with a step option", NULL, {{0}}, CK_NONE, "bench --sweep --size tiny", 2,
     "qkv bench: --sweep times whole runs, each on one thread: --size, --steps, --threads and --micro-batches time one step"},
    {"bench: a sweep option without --sweep", NULL, {{0}}, CK_NONE, "bench --runs-steps 5", 2,
     "qkv bench: --runs-steps, --jobs, --config and --time-products go with --sweep"},
    {"bench: --sweep with a missing config", NULL, {{0}}, CK_NONE, "bench --sweep --config nope.json", 2,
     "qkv bench: nope.json: cannot open"},
    {"--set on an unknown path", BASE, {{0}}, CK_NONE, "train cfg.json --set model.foo=1 --out out", 2,
     "--set: model.foo: unknown key (valid keys of model:"},
    {"--set with a bad value", BASE, {{0}}, CK_NONE, "train cfg.json --set model.d_model=abc --out out", 2,
     "--set: model.d_model: expected an integer in [1, 8192], got \"abc\""},
    {"--set on a section", BASE, {{0}}, CK_NONE, "train cfg.json --set model=1 --out out", 2,
     "--set: model: is a section, not a key"},
    {"--set without '='", BASE, {{0}}, CK_NONE, "train cfg.json --set optim.lr --out out", 2,
     "--set: expected path.to.key=value, got \"optim.lr\""},
    {"train without a config", NULL, {{0}}, CK_NONE, "train --out out", 2, "qkv train: missing CONFIG"},
    {"eval without --checkpoint", BASE, {{0}}, CK_NONE, "eval cfg.json", 2, "needs CONFIG and --checkpoint FILE"},
    {"--resume with a config", BASE, {{0}}, CK_NONE, "train cfg.json --resume out", 2, "drop CONFIG, --set and --out"},
    {"--resume of a directory with no checkpoint", BASE, {{"run", DIRECTORY}, {"run/config.json", BASE}}, CK_NONE,
     "train --resume run", 1, "run/checkpoint.safetensors: no checkpoint to resume from"},
    {"--resume of a directory with no run", NULL, {{"run", DIRECTORY}}, CK_NONE, "train --resume run", 2,
     "run/config.json: cannot open: No such file or directory"},
    /* ---- ablation configs */
    {"ablation: unknown key", ABL("\"variant\": [{\"name\": \"a\"}], \"seeds\": [0]"), {{"cfg.json", BASE}},
     CK_NONE, "ablate abl.json --out out", 2, "abl.json: variant: unknown key (expected one of title, base, set, variants"},
    {"ablation: no variants", ABL("\"variants\": [], \"seeds\": [0]"), {{"cfg.json", BASE}}, CK_NONE,
     "ablate abl.json --out out", 2, "abl.json: variants: expected a non-empty array"},
    {"ablation: duplicate variant names", ABL("\"variants\": [{\"name\": \"a\"}, {\"name\": \"a\"}], \"seeds\": [0]"),
     {{"cfg.json", BASE}}, CK_NONE, "ablate abl.json --out out", 2, "abl.json: variants[1].name: \"a\" is used twice"},
    {"ablation: bad override in a variant",
     ABL("\"variants\": [{\"name\": \"a\"}, {\"name\": \"b\", \"set\": [\"model.attention.qkv=bogus\"]}], \"seeds\": [0]"),
     {{"cfg.json", BASE}}, CK_NONE, "ablate abl.json --out out", 2,
     "abl.json: variant b: --set: model.attention.qkv: expected one of full"},
    {"ablation: override that breaks a relation",
     ABL("\"variants\": [{\"name\": \"a\", \"set\": [\"model.heads=3\"]}], \"seeds\": [0]"), {{"cfg.json", BASE}},
     CK_NONE, "ablate abl.json --out out", 2, "abl.json: variant a: model.heads: 3 does not divide model.d_model 16"},
    {"ablation: override without '='", ABL("\"variants\": [{\"name\": \"a\", \"set\": [\"model.heads\"]}], \"seeds\": [0]"),
     {{"cfg.json", BASE}}, CK_NONE, "ablate abl.json --out out", 2,
     "abl.json: variants[0].set[0]: expected a \"path.to.key=value\" string"},
    {"ablation: JSON syntax", ABL("\"variants\": [{\"name\": \"a\"},], \"seeds\": [0]"), {{"cfg.json", BASE}},
     CK_NONE, "ablate abl.json --out out", 2, "abl.json:1:48: JSON syntax error: trailing comma before ']'"},
    {"ablation: seed listed twice", ABL("\"variants\": [{\"name\": \"a\"}], \"seeds\": [1, 1]"), {{"cfg.json", BASE}},
     CK_NONE, "ablate abl.json --out out", 2, "abl.json: seeds[1]: 1 is listed twice"},
    {"ablation: missing base config", "{\"base\": \"nope.json\", \"variants\": [{\"name\": \"a\"}], \"seeds\": [0]}",
     {{0}}, CK_NONE, "ablate cfg.json --out out", 2, "cfg.json: variant a: nope.json: cannot open"},
    {"ablation: empty lrs", ABL("\"variants\": [{\"name\": \"a\"}], \"seeds\": [0], \"lrs\": []"), {{"cfg.json", BASE}},
     CK_NONE, "ablate abl.json --out out", 2, "abl.json: lrs: expected a non-empty array of learning rates in (0, 10]"},
    {"ablation: a learning rate out of range", ABL("\"variants\": [{\"name\": \"a\"}], \"seeds\": [0], \"lrs\": [0.01, 0]"),
     {{"cfg.json", BASE}}, CK_NONE, "ablate abl.json --out out", 2, "abl.json: lrs[1]: expected a learning rate in (0, 10]"},
    {"ablation: a learning rate twice", ABL("\"variants\": [{\"name\": \"a\"}], \"seeds\": [0], \"lrs\": [0.01, 0.01]"),
     {{"cfg.json", BASE}}, CK_NONE, "ablate abl.json --out out", 2, "abl.json: lrs[1]: 0.01 is listed twice"},
    {"ablation: unknown baseline", ABL("\"variants\": [{\"name\": \"a\"}], \"seeds\": [0], \"baseline\": \"b\""),
     {{"cfg.json", BASE}}, CK_NONE, "ablate abl.json --out out", 2, "abl.json: baseline: \"b\" is not one of the variants"},
    {"ablation: the baseline matched to itself",
     ABL("\"variants\": [{\"name\": \"a\", \"match_params\": \"baseline\"}], \"seeds\": [0]"), {{"cfg.json", BASE}},
     CK_NONE, "ablate abl.json --out out", 2, "abl.json: variants[0].match_params: a is the baseline itself"},
    {"ablation: match_params to something else",
     ABL("\"variants\": [{\"name\": \"a\"}, {\"name\": \"b\", \"match_params\": \"a\"}], \"seeds\": [0]"),
     {{"cfg.json", BASE}}, CK_NONE, "ablate abl.json --out out", 2, "abl.json: variants[1].match_params: expected \"baseline\""},
    {"ablation: max_steps below train.steps",
     ABL("\"variants\": [{\"name\": \"a\", \"set\": [\"train.steps=100\"]}], \"seeds\": [0], \"max_steps\": 50"),
     {{"cfg.json", BASE}}, CK_NONE, "ablate abl.json --out out", 2, "abl.json: max_steps 50 is below variant a's train.steps 100"},
    {"ablation: extension with a decaying schedule",
     ABL("\"variants\": [{\"name\": \"a\", \"set\": [\"optim.schedule=cosine\"]}], \"seeds\": [0], \"max_steps\": 100000"),
     {{"cfg.json", BASE}}, CK_NONE, "ablate abl.json --out out", 2,
     "abl.json: max_steps: variant a's optim.schedule cosine decays over train.steps"},
    {"ablation: unknown metric", ABL("\"variants\": [{\"name\": \"a\"}], \"seeds\": [0], \"metric\": \"perplexity\""),
     {{"cfg.json", BASE}}, CK_NONE, "ablate abl.json --out out", 2,
     "abl.json: metric: expected \"accuracy\", \"loss\" or \"bpb\""},
    {"ablation: extension when comparing losses",
     ABL("\"variants\": [{\"name\": \"a\"}], \"seeds\": [0], \"metric\": \"bpb\", \"max_steps\": 1000"),
     {{"cfg.json", BASE}}, CK_NONE, "ablate abl.json --out out", 2,
     "abl.json: max_steps: a sweep on metric \"bpb\" is not extended"},
    /* ---- qkv summarize: the results it reads, its options, the documents it checks */
    {"summarize: a directory without results.json", NULL, {{"a", DIRECTORY}}, CK_NONE, "summarize a --out out", 1,
     "qkv summarize: a: no results.json (not the output directory of qkv ablate"},
    {"summarize: no such directory", NULL, {{0}}, CK_NONE, "summarize nope --out out", 1,
     "qkv summarize: nope: no such directory"},
    {"summarize: results.json is not JSON", NULL, RES_A("{\"title\": \"t\",}"), CK_NONE, "summarize a --out out", 1,
     "a/results.json:1:14: JSON syntax error: trailing comma before '}'"},
    {"summarize: results.json is not an object", NULL, RES_A("[]"), CK_NONE, "summarize a --out out", 1,
     "a/results.json: expected a JSON object (the results qkv ablate writes)"},
    {"summarize: a number that is text", NULL, RES_A(RESULTS("full", "{\"name\": \"full\", \"acc_mean\": \"high\"}")),
     CK_NONE, "summarize a --out out", 1,
     "a/results.json: variants[0].acc_mean: expected a number or null, got \"high\""},
    {"summarize: an unknown metric", NULL,
     RES_A("{\"title\": \"t\", \"baseline\": \"full\", \"metric\": \"perplexity\", \"variants\": [{\"name\": \"full\"}]}"),
     CK_NONE, "summarize a --out out", 1,
     "a/results.json: metric: expected \"accuracy\", \"loss\", \"bpb\" or null, got \"perplexity\""},
    {"summarize: no baseline", NULL, RES_A("{\"title\": \"t\", \"variants\": [{\"name\": \"full\"}]}"), CK_NONE,
     "summarize a --out out", 1, "a/results.json: baseline: expected a string, missing"},
    {"summarize: a baseline not among the variants", NULL, RES_A(RESULTS("x", "{\"name\": \"full\"}")), CK_NONE,
     "summarize a --out out", 1, "a/results.json: baseline: \"x\" is not one of the variants"},
    {"summarize: variants not an array", NULL, RES_A("{\"title\": \"t\", \"baseline\": \"full\", \"variants\": {}}"),
     CK_NONE, "summarize a --out out", 1, "a/results.json: variants: expected an array, got an object"},
    {"summarize: a variant twice", NULL, RES_A(RESULTS("full", "{\"name\": \"full\"}, {\"name\": \"full\"}")), CK_NONE,
     "summarize a --out out", 1, "a/results.json: variants[1].name: \"full\" is also variants[0]'s"},
    {"summarize: a run's ok is text", NULL,
     RES_A(RESULTS("full", "{\"name\": \"full\", \"runs\": [{\"seed\": 0, \"ok\": \"yes\"}]}")), CK_NONE,
     "summarize a --out out", 1, "a/results.json: variants[0].runs[0].ok: expected true, false or null, got \"yes\""},
    {"summarize: two baselines", NULL,
     {{"a", DIRECTORY}, {"a/results.json", RESULTS("full", "{\"name\": \"full\"}")}, {"b", DIRECTORY},
      {"b/results.json", RESULTS("shared", "{\"name\": \"shared\"}")}},
     CK_NONE, "summarize a b --out out", 1,
     "b/results.json: baseline: \"shared\" differs from a/results.json's \"full\" (every column is compared with one"},
    {"summarize without DIR", NULL, {{0}}, CK_NONE, "summarize --out out", 2, "qkv summarize: missing DIR"},
    {"summarize without --out", NULL, RES_A(RESULTS("full", "{\"name\": \"full\"}")), CK_NONE, "summarize a", 2,
     "qkv summarize: --out OUTDIR: where to write the summary"},
    {"summarize: unknown option", NULL, {{0}}, CK_NONE, "summarize a --out out --bogus", 2,
     "qkv summarize: unknown option '--bogus'"},
    {"summarize: --check-doc and --update-doc", NULL, {{0}}, CK_NONE, "summarize --check-doc d.md --update-doc d.md", 2,
     "--check-doc and --update-doc are separate actions"},
    {"summarize: --out with --check-doc only", NULL, {{0}}, CK_NONE, "summarize --check-doc d.md --out out", 2,
     "--out and --title go with DIRs"},
    {"summarize: --check-doc of a missing file", NULL, {{0}}, CK_NONE, "summarize --check-doc d.md", 1,
     "qkv summarize: d.md: cannot read: No such file or directory"},
    {"summarize: a marker without its end", NULL, {{"d.md", "x\n<!-- qkv summarize: a -->\n"}}, CK_NONE,
     "summarize --check-doc d.md", 1, "qkv summarize: d.md:2: no <!-- end --> after this marker"},
    {"summarize: a stale block", NULL,
     {{"a", DIRECTORY}, {"a/results.json", RESULTS("full", "{\"name\": \"full\"}")},
      {"d.md", "<!-- qkv summarize: a -->\n| old |\n<!-- end -->\n"}},
     CK_NONE, "summarize --check-doc d.md", 1,
     "qkv summarize: d.md:2:1: differs from what the marker on line 1 generates: expected \"\", found \"| old |\""},
    {"summarize: a marker's results are bad", NULL,
     {{"a", DIRECTORY}, {"a/results.json", RESULTS("x", "{\"name\": \"full\"}")},
      {"d.md", "<!-- qkv summarize: a -->\n<!-- end -->\n"}},
     CK_NONE, "summarize --update-doc d.md", 1, "qkv summarize: d.md:1: a/results.json: baseline: \"x\" is not one"},
    /* ---- qkv inspect RUN_DIR */
    {"inspect: no run directory", NULL, {{0}}, CK_NONE, "inspect nope", 2,
     "qkv inspect: nope/config.json: cannot open: No such file or directory"},
    {"inspect: a run without its model", NULL, {{"run", DIRECTORY}, {"run/config.json", BASE}}, CK_NONE, "inspect run",
     1, "qkv inspect: run/model.safetensors: cannot open: No such file or directory"},
    {"inspect: an unknown option", NULL, {{0}}, CK_NONE, "inspect run --bogus", 2, "qkv inspect: unknown option '--bogus'"},
    {"inspect: two run directories", NULL, {{0}}, CK_NONE, "inspect a b", 2,
     "qkv inspect: unexpected argument 'b' (one RUN_DIR only)"},
};
enum { NCASES = (int)(sizeof CASES / sizeof CASES[0]) };

/* the valid model file of the base config, and the damaged versions of it */
static void make_checkpoint(ck_kind kind, const char *dir) {
    char good[512], path[512];
    snprintf(good, sizeof good, "%s/good.safetensors", TMP);
    snprintf(path, sizeof path, "%s/ck.safetensors", dir);
    qkv_model_config mc = qkv_test_small_model();
    char err[512];
    qkv_model *m = qkv_model_new(&mc, QKV_F32, 1, err, sizeof err);
    ck_assert_msg(m != NULL, "%s", err);
    ck_assert_msg(qkv_save_model(m, good, kind == CK_META ? BASE_EFFECTIVE : "{}", 0, err, sizeof err) == 0, "%s", err);
    qkv_model_free(m);
    size_t n;
    uint8_t *b = read_bytes(good, &n);
    ck_assert_int_gt(n, 200);
    uint64_t hlen = 0;
    for (int i = 7; i >= 0; i--) hlen = hlen << 8 | b[i];
    switch (kind) {
    case CK_NONE: break;
    case CK_GOOD: case CK_META: write_bytes(path, b, n); break;
    case CK_EMPTY: write_bytes(path, b, 0); break;
    case CK_TRUNCATED: write_bytes(path, b, 100); break;
    case CK_SHORT_DATA: write_bytes(path, b, n - 4); break;
    case CK_HUGE_HEADER: {
        uint8_t h[10] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, '{', '}'};
        write_bytes(path, h, sizeof h);
        break;
    }
    case CK_HEADER_PAST_END: b[0] = (uint8_t)(b[0] + 0x40); b[1] = 0x40; write_bytes(path, b, n); break;
    case CK_NOT_OBJECT: b[8] = '['; write_bytes(path, b, n); break;
    case CK_BAD_DTYPE: {
        char *f = memmem(b + 8, (size_t)hlen, "\"F32\"", 5);
        ck_assert_ptr_nonnull(f);
        memcpy(f, "\"Q32\"", 5);
        write_bytes(path, b, n);
        break;
    }
    case CK_NAN: { /* the last bias element, in a file without a checksum (as PyTorch writes one): the
                    * finiteness check is what refuses it (with qkv's checksum the CRC would first) */
        char *k = memmem(b + 8, (size_t)hlen, "\"" QKV_ST_CRC32_KEY "\"", strlen(QKV_ST_CRC32_KEY) + 2);
        ck_assert_ptr_nonnull(k);
        k[1] = 'x'; /* another key of the same length: "xkv_crc32" */
        memset(b + n - 4, 0xff, 4);
        write_bytes(path, b, n);
        break;
    }
    case CK_TEXT: write_bytes(path, "hello, world\n", 13); break;
    }
    free(b);
}

static void check_case(const bad_case *c) {
    char path[512];
    if (c->config) {
        snprintf(path, sizeof path, "%s/%s", WORK, strstr(c->args, "abl.json") ? "abl.json" : "cfg.json");
        write_bytes(path, c->config, strlen(c->config));
    }
    for (int i = 0; i < 4 && c->files[i][0]; i++) {
        snprintf(path, sizeof path, "%s/%s", WORK, c->files[i][0]);
        if (c->files[i][1] == DIRECTORY) ck_assert_int_eq(mkdir(path, 0755), 0);
        else write_bytes(path, c->files[i][1], strlen(c->files[i][1]));
    }
    make_checkpoint(c->ck, WORK);
    proc_result r;
    run_qkv(WORK, c->args, &r);
    const char *e = r.err;
    ck_assert_msg(!r.signaled, "%s: killed by signal %d; stderr: %s", c->desc, r.sig, e);
    ck_assert_msg(r.exited && r.status == c->status, "%s: exit %d, expected %d; stderr: %s", c->desc, r.status,
                  c->status, e);
    size_t len = strlen(e);
    ck_assert_msg(len > 1 && e[len - 1] == '\n' && strchr(e, '\n') == e + len - 1,
                  "%s: stderr is not exactly one line: [%s]", c->desc, e);
    ck_assert_msg(!strncmp(e, "qkv", 3), "%s: the message does not start with \"qkv\": %s", c->desc, e);
    ck_assert_msg(strstr(e, c->expect) != NULL, "%s: the message lacks [%s]: %s", c->desc, c->expect, e);
    ck_assert_msg(!strstr(e, "Sanitizer") && !strstr(e, "runtime error"), "%s: sanitizer report: %s", c->desc, e);
    /* nothing half-written */
    const char *dirs[] = {"out", "runs"};
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s/%s", WORK, dirs[i]);
        ck_assert_msg(access(path, F_OK) != 0, "%s: %s was created", c->desc, dirs[i]);
    }
    char found[1024];
    ck_assert_msg(!qkv_test_find_temp(TMP, found, sizeof found), "%s: temporary file left: %s", c->desc, found);
}

START_TEST(test_bad_input) { check_case(&CASES[_i]); }
END_TEST

/* the table covers at least the 45 cases, every command and both exit statuses */
START_TEST(test_table_coverage) {
    ck_assert_int_ge(NCASES, 45);
    const char *cmds[] = {"train ", "eval ", "sample ", "params ", "gradcheck ", "ablate ", "bench ", "summarize "};
    for (int k = 0; k < 8; k++) {
        bool seen = false;
        for (int i = 0; i < NCASES && !seen; i++) seen = !strncmp(CASES[i].args, cmds[k], strlen(cmds[k]));
        ck_assert_msg(seen, "no bad-input case for qkv %s", cmds[k]);
    }
    int by_status[3] = {0};
    for (int i = 0; i < NCASES; i++) by_status[CASES[i].status]++;
    ck_assert_int_ge(by_status[1], 10);
    ck_assert_int_ge(by_status[2], 30);
}
END_TEST

/* ---- the memory estimate ---------------------------------------------------------------------- */

typedef struct est_case { int B, T, d, H, L, F, V, qkv, gate, rel, causal, pad; } est_case;

static const est_case EST[] = {
    {4, 64, 64, 4, 2, 256, 64, 0, 0, 0, 1, 0},  {4, 64, 64, 4, 2, 256, 64, 2, 0, 0, 1, 0},
    {4, 64, 64, 4, 2, 256, 64, 5, 0, 0, 1, 0},  {4, 64, 64, 4, 2, 256, 64, 0, 2, 1, 0, 1},
    {2, 128, 32, 8, 1, 64, 16, 0, 0, 1, 1, 0},  {16, 16, 128, 2, 1, 512, 16, 3, 1, 0, 1, 0},
    {1, 1, 1, 1, 1, 1, 2, 0, 0, 0, 1, 0},       {2, 3, 4, 2, 1, 3, 5, 4, 1, 1, 0, 1},
    {32, 16, 16, 2, 1, 32, 40, 2, 0, 0, 1, 0},  {4, 32, 64, 16, 2, 256, 1024, 1, 0, 0, 1, 0},
    {1, 256, 8, 8, 2, 8, 2, 0, 0, 1, 1, 0},     {64, 8, 8, 1, 3, 8, 300, 0, 2, 0, 1, 1},
    /* for the attention options: up to 256 heads of one dimension (keys and values repeated to
     * every head), and tiny models, where the options' per-op overheads dominate */
    {8, 32, 16, 4, 1, 16, 8, 4, 2, 1, 0, 1},    {2, 8, 8, 8, 1, 8, 4, 4, 2, 1, 0, 1},
    {1, 16, 32, 16, 1, 16, 4, 4, 2, 1, 1, 0},   {4, 4, 64, 64, 1, 4, 4, 4, 2, 1, 0, 1},
    {2, 2, 256, 256, 1, 1, 2, 4, 1, 1, 0, 0},   {2, 40, 128, 128, 1, 4, 4, 4, 2, 1, 0, 1},
    {16, 24, 8, 8, 1, 2, 2, 4, 2, 1, 0, 1},     {1, 2, 2, 2, 1, 1, 2, 4, 1, 1, 0, 1},
    {2, 3, 4, 2, 2, 3, 5, 4, 1, 1, 0, 1},       {1, 3, 4, 2, 1, 3, 5, 4, 1, 1, 0, 1},
    {1, 1, 2, 2, 1, 1, 2, 4, 1, 1, 0, 0},       {1, 4, 4, 4, 1, 1, 2, 4, 1, 1, 0, 1},
    {3, 3, 4, 2, 1, 3, 5, 4, 1, 1, 0, 1},       {2, 3, 4, 2, 1, 3, 5, 4, 0, 1, 0, 1},
    {2, 3, 4, 2, 1, 3, 5, 1, 0, 1, 0, 1},       {2, 3, 4, 2, 1, 3, 5, 4, 2, 1, 0, 1},
};

/* the attention options on top of a case (0: none), made valid for it */
static void est_option(int k, qkv_model_config *mc) {
    qkv_attn_config *a = &mc->attn;
    bool own_kv = a->qkv == QKV_ATTN_FULL || a->qkv == QKV_ATTN_KV_TIED;
    switch (k) {
    case 1: a->kv_heads = 1; if (!own_kv) a->qkv = QKV_ATTN_FULL; break;
    case 2: a->qkv = QKV_ATTN_KV_TIED; a->kv_heads = 1; a->key_norm = true; break;
    case 3: a->qkv = QKV_ATTN_SHARED; a->role_scale = true; a->key_norm = true; break;
    case 4: a->qkv = QKV_ATTN_FULL; a->kv_latent = mc->d_model / 4; break;
    case 5: a->gate = QKV_GATE_HEADWISE; if (a->qkv == QKV_ATTN_HEAD_SHARED) a->qkv = QKV_ATTN_FULL; break;
    case 6: a->alibi = true; a->rel_pos_bias = false; a->kv_heads = 1; if (!own_kv) a->qkv = QKV_ATTN_FULL; break;
    case 7: a->qkv = QKV_ATTN_FULL; a->value_proj = false; a->out_proj = false;
        if (a->gate == QKV_GATE_VALUE) a->gate = QKV_GATE_NONE;
        break;
    case 8: a->self_mask = true; a->self_mask_rule = QKV_SELF_REFORMER; break;
    case 9: /* differential attention: its own scale, no positional bias, heads of even width */
        a->diff = true; a->rel_pos_bias = false; a->scale = QKV_SCALE_HEAD_DIM; a->qkv = QKV_ATTN_FULL;
        if (mc->d_model % 2) a->diff = false;
        else if (mc->d_model / mc->heads % 2) mc->heads = 1;
        break;
    case 10: a->talking_heads = true; a->rel_pos_bias = false; if (a->qkv == QKV_ATTN_HEAD_SHARED) a->qkv = QKV_ATTN_FULL; break;
    case 11: a->query_proj = false; a->key_proj = false; a->qkv = QKV_ATTN_FULL; break;
    default: break;
    }
}
#define NEST_OPTIONS 12

/* the estimate is at least the real arena peak of a training step and at most twice it; the
 * parameter count is exact. Every case plain and with each attention option. */
START_TEST(test_memory_estimate) {
    const est_case *e = &EST[_i / NEST_OPTIONS];
    qkv_model_config mc = qkv_model_config_default();
    qkv_optim_config oc = qkv_optim_config_default(); /* Adam: two moments per parameter */
    mc.vocab = e->V;
    mc.seq_len = e->T;
    mc.d_model = e->d;
    mc.heads = e->H;
    mc.layers = e->L;
    mc.d_ff = e->F;
    mc.attn.qkv = (qkv_attn_qkv)e->qkv;
    mc.attn.gate = (qkv_attn_gate)e->gate;
    mc.attn.rel_pos_bias = e->rel;
    mc.attn.causal = e->causal;
    est_option(_i % NEST_OPTIONS, &mc);
    char err[256];
    qkv_model *m = qkv_model_new(&mc, QKV_F32, 0, err, sizeof err);
    ck_assert_msg(m != NULL, "case %d option %d: %s", _i / NEST_OPTIONS, _i % NEST_OPTIONS, err);
    ck_assert_int_eq(qkv_model_param_count(&mc), m->params.numel);
    int64_t s[2] = {e->B, e->T};
    qkv_tensor *tok = qkv_tensor_zeros(QKV_I32, 2, s), *tgt = qkv_tensor_zeros(QKV_I32, 2, s),
               *pad = qkv_tensor_zeros(QKV_I32, 2, s);
    for (int64_t i = 0; i < tok->numel; i++) {
        ((int32_t *)tok->data)[i] = (int32_t)(i % e->V);
        ((int32_t *)tgt->data)[i] = (int32_t)(i * 7 % e->V);
        ((int32_t *)pad->data)[i] = 1;
    }
    qkv_ctx *ctx = qkv_ctx_new();
    qkv_tensor *loss = qkv_model_loss(ctx, m, tok, tgt, e->pad ? pad : NULL);
    ck_assert_msg(loss && !qkv_backward(ctx, loss), "%s", qkv_ctx_error(ctx));
    double peak = (double)qkv_ctx_arena_peak(ctx), est = (double)qkv_model_activation_bytes(&mc, e->B, e->T);
    if (getenv("QKV_TEST_VERBOSE"))
        fprintf(stderr, "estimate case %d option %d: %.3f x the real peak\n", _i / NEST_OPTIONS, _i % NEST_OPTIONS,
                est / peak);
    ck_assert_msg(est >= peak && est <= 2 * peak, "case %d option %d: estimate %.0f, real peak %.0f (ratio %.2f)",
                  _i / NEST_OPTIONS, _i % NEST_OPTIONS, est, peak, est / peak);
    ck_assert_int_eq(qkv_train_estimate_bytes(&mc, &oc, e->B), 16 * m->params.numel + (int64_t)est);
    qkv_ctx_free(ctx);
    qkv_tensor_free(tok);
    qkv_tensor_free(tgt);
    qkv_tensor_free(pad);
    qkv_model_free(m);
}
END_TEST

/* the refusal: huge sizes saturate instead of overflowing, small ones pass */
START_TEST(test_memory_check) {
    qkv_model_config mc = qkv_model_config_default();
    qkv_optim_config oc = qkv_optim_config_default(); /* Adam: two moments per parameter */
    mc.vocab = 1048576;
    mc.seq_len = 65536;
    mc.d_model = 8192;
    mc.heads = 256;
    mc.layers = 64;
    mc.d_ff = 65536;
    ck_assert(qkv_train_estimate_bytes(&mc, &oc, 65536) == INT64_MAX);
    char err[512] = "";
    ck_assert_int_eq(qkv_check_memory(&mc, 65536, qkv_train_estimate_bytes(&mc, &oc, 65536), "everything", err,
                                            sizeof err), -1);
    ck_assert_msg(strstr(err, "needs over 8 EiB (everything), more than this machine's"), "%s", err);
    ck_assert_ptr_null(strchr(err, '\n'));
    mc = qkv_model_config_default();
    mc.vocab = 16;
    mc.seq_len = 16;
    ck_assert_int_gt(qkv_machine_memory_bytes(), 0);
    ck_assert_int_eq(qkv_check_memory(&mc, 32, qkv_train_estimate_bytes(&mc, &oc, 32), "x", err, sizeof err), 0);
}
END_TEST

/* ---- the fuzzers' seed corpora (with every crash they found), replayed ------------------------ */

static const char *const FUZZ_TARGETS[] = {"config", "safetensors", "jsonl"};

static void one_line_error(const char *file, const char *err) {
    ck_assert_msg(err[0] && !strchr(err, '\n'), "%s: not a one-line error: [%s]", file, err);
}

/* each file of fuzz/corpus/NAME/ through the reader its fuzzer drives (fuzz/fuzz_NAME.c): no
 * crash (under `make asan`: no sanitizer report), errors are one line */
START_TEST(test_fuzz_corpus_replay) {
    char dir[256];
    snprintf(dir, sizeof dir, "../fuzz/corpus/%s", FUZZ_TARGETS[_i]);
    DIR *d = opendir(dir);
    ck_assert_msg(d != NULL, "no %s (tests run from tests/)", dir);
    int files = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        char path[600], err[2048] = "";
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        size_t n;
        uint8_t *b = read_bytes(path, &n);
        files++;
        if (_i == 0) { /* JSON, then NUL and --set lines */
            char *text = malloc(n + 2);
            memcpy(text, b, n);
            text[n] = text[n + 1] = 0;
            qkv_config c;
            qkv_config_defaults(&c);
            if (qkv_config_parse(&c, text, path, err, sizeof err)) {
                one_line_error(path, err);
            } else {
                for (char *line = memchr(text, 0, n) ? text + strlen(text) + 1 : NULL; line && *line;) {
                    char *nl = strchr(line, '\n');
                    if (nl) *nl = 0;
                    if (qkv_config_set(&c, line, err, sizeof err)) one_line_error(path, err);
                    line = nl ? nl + 1 : NULL;
                }
            }
            free(text);
        } else if (_i == 1) {
            qkv_safetensors *st = NULL;
            if (qkv_st_parse(b, n, path, &st, err, sizeof err)) one_line_error(path, err);
            qkv_st_free(st);
        } else {
            qkv_task t;
            memset(&t, 0, sizeof t);
            t.cfg.kind = QKV_TASK_FILE;
            if (qkv__task_parse_jsonl(&t, (const char *)b, n, path, err, sizeof err)) one_line_error(path, err);
            qkv_task_close(&t);
        }
        free(b);
    }
    closedir(d);
    ck_assert_int_ge(files, 4);
}
END_TEST

Suite *badinput_suite(void) {
    Suite *s = suite_create("badinput");
    TCase *tc = tcase_create("cli");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_table_coverage);
    tcase_add_loop_test(tc, test_bad_input, 0, NCASES);
    suite_add_tcase(s, tc);
    TCase *te = tcase_create("estimate");
    tcase_set_timeout(te, 60);
    tcase_add_loop_test(te, test_memory_estimate, 0, (int)(sizeof EST / sizeof EST[0]) * NEST_OPTIONS);
    tcase_add_test(te, test_memory_check);
    suite_add_tcase(s, te);
    TCase *tf = tcase_create("fuzz_corpus");
    tcase_set_timeout(tf, 60);
    tcase_add_loop_test(tf, test_fuzz_corpus_replay, 0, 3);
    suite_add_tcase(s, tf);
    return s;
}
