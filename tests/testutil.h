/* Helpers shared by the suites that run the qkv command or write files (e2e, faults,
 * badinput, report). */
#ifndef QKV_TESTUTIL_H
#define QKV_TESTUTIL_H
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "nn/model_config.h"

/* the qkv binary, as an absolute path: $QKV_BIN (set by the Makefile) or ../build/qkv */
const char *qkv_test_bin(void);
/* dir = a new directory /tmp/qkv-<tag>-XXXXXX (fails the test if it cannot be made) */
void qkv_test_mkdtemp(char *dir, size_t n, const char *tag);
/* rm -r dir (files and directories of files) */
void qkv_test_rmtree(const char *dir);
/* fork and exec bin (argv) in dir with stdin and stdout on /dev/null and stderr into errpath;
 * a child that hangs is killed by SIGALRM after 60 s; returns its pid */
pid_t qkv_test_spawn(const char *dir, const char *errpath, const char *bin, char *const argv[]);
/* in a forked child: stdin and stdout on /dev/null, stderr into errpath, working directory dir
 * (_exit(127) when any of that fails) */
void qkv_test_child_stdio(const char *dir, const char *errpath);
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
/* the same without the lines that hold times (a results.json's wall times differ every call) */
char *qkv_test_get_untimed(const char *dir, const char *rel);
/* the model of the tests' small recall configs: vocab 16, 9 positions, d_model 16, 2 heads, one
 * layer, d_ff 32 (the rest the library's defaults) */
qkv_model_config qkv_test_small_model(void);

#endif
