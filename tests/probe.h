/* What a test needs of the machine, probed before the test relies on it, and the counted skip
 * where it is missing (docs/reliability.md, "Where the tests run"). A test that needs a
 * privilege or a kernel feature asks here first; where the answer is no it calls qkv_test_skip
 * and returns, and make test's summary names it. */
#ifndef QKV_TEST_PROBE_H
#define QKV_TEST_PROBE_H
#include <stdbool.h>

/* whether a mount namespace with a read-only bind mount can be made here (root: unshare --mount;
 * otherwise, or where that fails, a user namespace: unshare --user --map-root-user --mount); on
 * yes, $QKV_MOUNT_NS is set to the unshare command line that made it */
bool qkv_probe_mount_ns(void);
/* the unshare(2) flags that give a new pid namespace here (CLONE_NEWPID, or with CLONE_NEWUSER
 * where only a user namespace allows it), or 0 when neither does */
int qkv_probe_pid_ns(void);
/* whether /dev/full is there and refuses writes with ENOSPC */
bool qkv_probe_dev_full(void);
/* whether the command name is on $PATH */
bool qkv_probe_command(const char *name);

/* a check skipped for the machine's sake: "skipped: WHAT: WHY" on stderr, and a line in the file
 * make test's summary counts ($QKV_TEST_SKIPS); with QKV_TEST_NO_SKIPS=1 in the environment it
 * fails the test instead (for a machine that must run everything, such as CI's) */
void qkv_test_skip(const char *what, const char *why);
/* the runner's part: begin sets up the file before the suites run; end prints the summary line
 * (and each skip by name) after Check's, given the number of checks Check ran */
void qkv_test_skips_begin(void);
void qkv_test_skips_end(int checks);

#endif
