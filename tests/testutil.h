/* Helpers shared by the suites: running the qkv command, files and directories, the command-line
 * contract's rows and their runner (tests/test_cli_*.c), random test data and closeness. */
#ifndef QKV_TESTUTIL_H
#define QKV_TESTUTIL_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "nn/model_config.h"
#include "tensor/rng.h"

/* the qkv binary, as an absolute path: $QKV_BIN (set by the Makefile) or ../build/qkv */
const char *qkv_test_bin(void);
/* the directory for the tests' scratch files: $TMPDIR when it is an absolute path, else /tmp */
const char *qkv_test_tmpdir(void);
/* dir = a new directory TMPDIR/qkv-<tag>-XXXXXX (fails the test if it cannot be made) */
void qkv_test_mkdtemp(char *dir, size_t n, const char *tag);
/* rm -r dir (files and directories of files) */
void qkv_test_rmtree(const char *dir);
/* fork and exec bin (argv) in dir with stdin and stdout on /dev/null and stderr into errpath;
 * a child that hangs is killed by SIGALRM after 60 s; returns its pid */
pid_t qkv_test_spawn(const char *dir, const char *errpath, const char *bin, char *const argv[]);
/* in a forked child: stdin on /dev/null, stdout into outpath (NULL: /dev/null), stderr into
 * errpath, working directory dir (_exit(127) when any of that fails) */
void qkv_test_child_stdio(const char *dir, const char *outpath, const char *errpath);
/* the number after "key": in a JSON text (fails the test if the key is missing) */
double qkv_test_json_num(const char *text, const char *key);
/* true if a file below dir (recursively) has ".tmp." in its name; its path in found */
bool qkv_test_find_temp(const char *dir, char *found, size_t n);
/* run a shell command (printf-formatted); its stdout, and its stderr too when merge, into out
 * (cut to outlen - 1 bytes; out may be NULL); returns the exit status (-1: killed) */
int qkv_test_sh(char *out, size_t outlen, bool merge, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* the tests' heap-allocation counter (tests/shim/alloc_count.c), a shared object to preload:
 * $QKV_ALLOC_SHIM (set by make test; the test fails without it); NULL in a sanitizer's build,
 * whose own malloc leaves nothing to count */
const char *qkv_test_alloc_shim(void);
/* the heap allocations of a command's process, from its start to its exit: the command
 * (printf-formatted; one simple command, the qkv binary first) runs with the counter preloaded
 * and must exit 0; -1 in a sanitizer's build */
long long qkv_test_allocs(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* write text to path (fails the test if it cannot) */
void qkv_test_write_file(const char *path, const char *text);
/* text into dir/rel (fails the test if it cannot) */
void qkv_test_put(const char *dir, const char *rel, const char *text);
/* dir/rel's first MiB, NUL-terminated, malloc'd (fails the test if it cannot be read) */
char *qkv_test_get(const char *dir, const char *rel);
/* whether text is a well-formed XML document, as expat parses it (UTF-8, every element closed,
 * every & an entity); when not, expat's reason and line into why */
bool qkv_test_xml_ok(const char *text, char *why, size_t n);
/* the same without the lines that hold times (a results.json's wall times differ every call) */
char *qkv_test_get_untimed(const char *dir, const char *rel);
/* the model of the tests' small recall configs: vocab 16, 9 positions, d_model 16, 2 heads, one
 * layer, d_ff 32 (the rest the library's defaults) */
qkv_model_config qkv_test_small_model(void);

/* ---- random test data: the library's own generator (tensor/rng.h), one stream ---------------- */

/* restart the stream at seed (until the first call, it runs from seed 0) */
void qkv_test_seed(uint64_t seed);
/* the stream's next uniform draw in [lo, hi) */
double qkv_test_uniform(double lo, double hi);
/* n standard normal draws from a stream of its own started at seed */
void qkv_test_normals(double *x, int64_t n, uint64_t seed);
/* a new heap float32 tensor of the given shape, of standard normal draws from r (through
 * qkv_tensor_fill_normal), requiring a gradient if grad */
qkv_tensor *qkv_test_randn(qkv_rng *r, int nd, const int64_t *shape, bool grad);

/* ---- closeness: every tolerance a test states goes through one of these ----------------------- */

/* |got - want| <= tol * (1 + |want|): absolute near 0, relative for large values */
bool qkv_test_near(double got, double want, double tol);
/* the same in float arithmetic (a float result against a float reference) */
bool qkv_test_nearf(float got, float want, float tol);
/* |got - want| <= max(abs, rel * |want|) (abs = rel = tol: tol * max(1, |want|)) */
bool qkv_test_close(double got, double want, double abs, double rel);

/* ---- the command-line contract: a row, and its runner (tests/test_cli_*.c) ------------------- */

/* ck.safetensors for a row: none, the small model's file (qkv_test_small_model; TEST_CK_META:
 * with the effective config of the tests' small recall config as its metadata, as qkv train
 * writes it), or that file damaged */
typedef enum {
    TEST_CK_NONE, TEST_CK_GOOD, TEST_CK_META, TEST_CK_EMPTY, TEST_CK_TRUNCATED, TEST_CK_SHORT_DATA,
    TEST_CK_HUGE_HEADER, TEST_CK_HEADER_PAST_END, TEST_CK_NOT_OBJECT, TEST_CK_BAD_DTYPE, TEST_CK_NAN, TEST_CK_TEXT
} qkv_test_ck;
/* that kind of model file at path (scratch: a path for the undamaged file, outside the row's
 * directory) */
void qkv_test_checkpoint(qkv_test_ck kind, const char *path, const char *scratch);

/* a qkv_cli_start file whose text is this: a directory */
#define QKV_TEST_DIR ((const char *)1)

/* the directory a row's command runs in, made in this order */
typedef struct qkv_cli_start {
    bool fixture;            /* a copy of the fixture (a finished run, ablation and document), else empty */
    const char *files[5][2]; /* files written: {path, text} (text QKV_TEST_DIR: a directory) */
    qkv_test_ck ck;          /* ck.safetensors */
    const char *sh;          /* sh run there (must exit 0), or NULL */
} qkv_cli_start;

/* what a row needs of the machine besides a shell and the qkv command: probed before it runs;
 * where it is missing the row is skipped by name (tests/probe.h) */
typedef enum {
    QKV_NEED_NOTHING,
    QKV_NEED_MOUNT_NS, /* a mount namespace for a read-only bind mount: the row's command line
                        * starts with $QKV_MOUNT_NS (the unshare command the probe found) */
} qkv_cli_need;

/* One row of the contract: a command given one bad input, and what it must do. Besides the
 * row's own expectations, every row must: answer within its time (no hang), exit 0, 1 or 2 (no
 * signal), leave no "*.tmp.*" file and no sanitizer report, and change no file that existed
 * unless under writes; a failure must also print exactly one line on stderr, starting "qkv",
 * nothing on stdout, and create nothing (but under writes). */
typedef struct qkv_cli_row {
    const char *cmd;     /* the command, as the table groups it: "train", "train --resume", ... */
    const char *input;   /* the input made bad: "CONFIG", "--set", "task.path (JSON Lines)", ... */
    const char *kind;    /* what it is made into: "trailing comma", "FIFO, no writer", ... */
    qkv_cli_start start; /* the directory the command runs in */
    const char *run;     /* the command line, for sh ("$QKV" is the binary) */
    int status;          /* its exit status */
    const char *err;     /* a substring of stderr (of the one line, on failure), or NULL */
    const char *writes;  /* comma-separated paths it may change or create ("" or NULL: none) */
    const char *absent;  /* comma-separated paths that must not exist afterwards, or NULL */
    const char *made;    /* comma-separated paths that must exist afterwards, or NULL */
    const char *out;     /* a substring of stdout, or NULL */
    int within;          /* seconds it must answer in (0: the row limit, 30 x CK_TIMEOUT_MULTIPLIER) */
    void (*then)(const char *dir, const char *out); /* more checks (Check assertions) in its
                                                     * directory afterwards, given its stdout */
    qkv_cli_need needs;  /* what it needs of the machine (QKV_NEED_NOTHING: runs anywhere) */
} qkv_cli_row;

/* what a row did */
typedef struct qkv_cli_outcome {
    int status;        /* exit status; -1 when killed */
    int sig;           /* the signal that killed it, or 0 */
    bool hung;         /* killed by the row's time limit */
    bool skipped;      /* not run: the machine lacks what the row needs (a counted skip) */
    char err[16384];   /* stderr */
    char out[65536];   /* stdout */
    char problem[800]; /* the first broken promise, or "" */
} qkv_cli_outcome;

/* the row limit in seconds: 30 x CK_TIMEOUT_MULTIPLIER */
int qkv_cli_row_limit(void);
/* run row number id in tmp/rowNNN (copying fixture, a directory, when the row starts from it)
 * with $QKV set to the binary (and $QKV_EROFS_SHIM, from make test, the read-only file system
 * shim), or skip it when the machine lacks what it needs, check the contract, run the row's then (when the rest holds), and
 * remove the directory */
void qkv_cli_run(const qkv_cli_row *row, int id, const char *tmp, const char *fixture, qkv_cli_outcome *o);

#endif
