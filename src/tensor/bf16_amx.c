/* The bf16 product kernel on AMX tiles (tensor/bf16_amx.h).
 *
 * C is computed in blocks of up to 32 x 32: four float tiles of 16 x 16 (fewer at the edges),
 * two tiles of A's rows and two of B's columns, each step of k (32, the last step what is left)
 * four TDPBF16PS. Tile registers: 0-3 C (C00, C01, C10, C11), 4-5 A (rows 0-15, 16-31), 6-7 B
 * (columns 0-15, 16-31). A block's shapes are loaded into the tile configuration (LDTILECFG),
 * which zeroes every tile: a block whose last step of k is shorter stores its sums into C,
 * loads the new shapes and reads them back (floats moved, none rounded). */
#define _GNU_SOURCE /* syscall */
#include "tensor/bf16_amx.h"
#include "tensor/check.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#include <cpuid.h>
#include <immintrin.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define ARCH_GET_XCOMP_PERM 0x1022
#define ARCH_REQ_XCOMP_PERM 0x1023
#define XFEATURE_XTILEDATA 18

/* /proc/cpuinfo's flags contain amx_bf16 and amx_tile; -1 when it has no flags line */
static int cpuinfo_has_amx(void) {
    char line[4096];
    int flags = 0, bf16 = 0, tile = 0;
    FILE *f = fopen("/proc/cpuinfo", "r");
    while (f && !flags && fgets(line, sizeof line, f)) {
        if (strncmp(line, "flags", 5) || !strchr(line, ':')) continue;
        flags = 1;
        for (char *t = strtok(strchr(line, ':') + 1, " \t\n"); t; t = strtok(NULL, " \t\n"))
            bf16 |= !strcmp(t, "amx_bf16"), tile |= !strcmp(t, "amx_tile");
    }
    if (f) fclose(f);
    return flags ? bf16 && tile : -1;
}

/* CPUID leaf 7: EDX bit 22 AMX-BF16, bit 24 AMX-TILE (a CPU emulator such as valgrind says no) */
static int cpuid_has_amx(void) {
    unsigned a, b, c, d;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return 0;
    return (d >> 22 & 1) && (d >> 24 & 1);
}

static int ready;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static void find(void) {
    unsigned long perm = 0;
    ready = cpuid_has_amx() && cpuinfo_has_amx() != 0 &&
            syscall(SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) == 0 &&
            syscall(SYS_arch_prctl, ARCH_GET_XCOMP_PERM, &perm) == 0 && (perm >> XFEATURE_XTILEDATA & 1);
}

int qkv__amx_ready(void) {
    pthread_once(&once, find);
    return ready;
}

/* LDTILECFG's 64 bytes (palette 1: 8 tiles of up to 16 rows of 64 bytes) */
typedef struct {
    uint8_t palette, start_row, reserved[14];
    uint16_t colsb[16];
    uint8_t rows[16];
} __attribute__((packed, aligned(64))) tilecfg;

/* the shapes in the tiles on this thread, as one number (shape_key), 0 before any: comparing it
 * is all a block costs when the shapes stay (building and comparing the 64 bytes per block took
 * as long as a block's products) */
static _Thread_local uint32_t loaded;

/* the shapes of a block: mr[r] rows in A's tile r, nc[c] columns in B's tile c, kk of k */
typedef struct {
    int mt, nt, mr[2], nc[2];
} block_shape;

static uint32_t shape_key(const block_shape *s, int kk) {
    return 1u | (uint32_t)s->mt << 1 | (uint32_t)s->nt << 3 | (uint32_t)s->mr[0] << 5 | (uint32_t)(s->mr[1] & 31) << 10 |
           (uint32_t)s->nc[0] << 15 | (uint32_t)(s->nc[1] & 31) << 20 | (uint32_t)kk << 25;
}

__attribute__((target("amx-tile"))) static void configure(const block_shape *s, int kk) {
    uint32_t key = shape_key(s, kk);
    if (key == loaded) return;
    tilecfg t;
    memset(&t, 0, sizeof t);
    t.palette = 1;
    for (int r = 0; r < s->mt; r++) {
        for (int c = 0; c < s->nt; c++) t.rows[2 * r + c] = (uint8_t)s->mr[r], t.colsb[2 * r + c] = (uint16_t)(4 * s->nc[c]);
        t.rows[4 + r] = (uint8_t)s->mr[r], t.colsb[4 + r] = (uint16_t)(2 * kk);
    }
    for (int c = 0; c < s->nt; c++) t.rows[6 + c] = (uint8_t)(kk / 2), t.colsb[6 + c] = (uint16_t)(4 * s->nc[c]);
    _tile_loadconfig(&t);
    loaded = key;
}

/* the C tiles of the block from C (rows ldc apart), or into it */
#define QKV_AMX_C_TILES(X, s, C, ldc)                                                                                  \
    do {                                                                                                               \
        X(0, (C), (ldc));                                                                                              \
        if ((s)->nt > 1) X(1, (C) + 16, (ldc));                                                                        \
        if ((s)->mt > 1) X(2, (C) + 16 * (ldc), (ldc));                                                                \
        if ((s)->mt > 1 && (s)->nt > 1) X(3, (C) + 16 * (ldc) + 16, (ldc));                                            \
    } while (0)
#define QKV_AMX_LOAD(t, p, ld) _tile_loadd(t, p, (ld) * 4)
#define QKV_AMX_STORE(t, p, ld) _tile_stored(t, p, (ld) * 4)
#define QKV_AMX_ZERO(t, p, ld) _tile_zero(t)

/* one step of k: A's columns k.. and B's pair rows k/2.. into the C tiles */
__attribute__((target("amx-tile,amx-bf16"))) static void step(const block_shape *s, const uint16_t *A, int64_t lda,
                                                               const uint16_t *B, int64_t ldb) {
    _tile_loadd(4, A, lda * 2);
    _tile_loadd(6, B, ldb * 4);
    _tile_dpbf16ps(0, 4, 6);
    if (s->nt > 1) {
        _tile_loadd(7, B + 32, ldb * 4);
        _tile_dpbf16ps(1, 4, 7);
    }
    if (s->mt > 1) {
        _tile_loadd(5, A + 16 * lda, lda * 2);
        _tile_dpbf16ps(2, 5, 6);
        if (s->nt > 1) _tile_dpbf16ps(3, 5, 7);
    }
}

/* the block of C at (0, 0) of A's and B's pointers */
__attribute__((target("amx-tile,amx-bf16"))) static void block(const block_shape *s, int64_t kp, const uint16_t *A,
                                                                int64_t lda, const uint16_t *B, int64_t ldb, float *C,
                                                                int64_t ldc, bool beta0) {
    int64_t full = kp / 32 * 32, rest = kp - full;
    configure(s, full ? 32 : (int)rest);
    if (beta0) QKV_AMX_C_TILES(QKV_AMX_ZERO, s, C, ldc);
    else QKV_AMX_C_TILES(QKV_AMX_LOAD, s, C, ldc);
    for (int64_t k = 0; k < full; k += 32) step(s, A + k, lda, B + k * ldb, ldb);
    if (rest && full) { /* the last, shorter step: its shapes (which zero the tiles) */
        QKV_AMX_C_TILES(QKV_AMX_STORE, s, C, ldc);
        configure(s, (int)rest);
        QKV_AMX_C_TILES(QKV_AMX_LOAD, s, C, ldc);
    }
    if (rest) step(s, A + full, lda, B + full * ldb, ldb);
    QKV_AMX_C_TILES(QKV_AMX_STORE, s, C, ldc);
}

static int min16(int64_t n) { return n < 16 ? (int)n : 16; }

void qkv__amx_gemm(int64_t m, int64_t n, int64_t kp, const uint16_t *A, int64_t lda, const uint16_t *B, int64_t ldb,
                   float *C, int64_t ldc, bool beta0) {
    for (int64_t i = 0; i < m; i += 32)
        for (int64_t j = 0; j < n; j += 32) {
            block_shape s = {m - i > 16 ? 2 : 1, n - j > 16 ? 2 : 1, {min16(m - i), min16(m - i - 16)},
                             {min16(n - j), min16(n - j - 16)}};
            block(&s, kp, A + i * lda, lda, B + 2 * j, ldb, C + i * ldc + j, ldc, beta0);
        }
}

#else /* not x86-64 with GCC: no AMX */
int qkv__amx_ready(void) { return 0; }
void qkv__amx_gemm(int64_t m, int64_t n, int64_t kp, const uint16_t *A, int64_t lda, const uint16_t *B, int64_t ldb,
                   float *C, int64_t ldc, bool beta0) {
    (void)m, (void)n, (void)kp, (void)A, (void)lda, (void)B, (void)ldb, (void)C, (void)ldc, (void)beta0;
    QKV_ASSERT(0, "bf16 amx: called where qkv__amx_ready says 0");
}
#endif
