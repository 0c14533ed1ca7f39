/* Programmer errors, as Lua's api_check: a precondition that a caller inside qkv broke (a kernel
 * given a dtype or shape its op should have refused, the thread pool driven from two threads).
 * User input never reaches one: configs, files, options and the library's public ops check what
 * they are given and return an error. QKV_ASSERT follows C's assert convention: compiled in
 * unless NDEBUG is defined, so the default build (which the tests run), the asan build and the
 * fuzz build check; a -DNDEBUG build does not. The checks stand at op and kernel entries, never
 * in an inner loop (their cost: docs/reliability.md). A failed check prints the condition, why it
 * must hold and where, then aborts. */
#ifndef QKV_CHECK_H
#define QKV_CHECK_H

#include "qkv_api.h"

/* "qkv: programmer error at FILE:LINE: COND (WHY)" on stderr, then abort() */
QKV_INTERNAL _Noreturn void qkv__assert_fail(const char *cond, const char *why, const char *file, int line);

#ifdef NDEBUG
#define QKV_ASSERT(cond, why) ((void)0)
#else
#define QKV_ASSERT(cond, why) ((cond) ? (void)0 : qkv__assert_fail(#cond, why, __FILE__, __LINE__))
#endif

#endif
