/* The failure of a programmer-error check (check.h). */
#include "tensor/check.h"

#include <stdio.h>
#include <stdlib.h>

void qkv__assert_fail(const char *cond, const char *why, const char *file, int line) {
    fprintf(stderr, "qkv: programmer error at %s:%d: %s (%s)\n", file, line, cond, why);
    fflush(stderr);
    abort();
}
