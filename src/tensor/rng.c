/* Seeded random numbers that are identical on every platform (see rng.h). */
#include "tensor/rng.h"

#include <math.h>

static uint64_t splitmix64(uint64_t *x) {
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

void qkv_rng_seed(qkv_rng *r, uint64_t seed) {
    uint64_t x = seed;
    for (int i = 0; i < 4; i++) r->s[i] = splitmix64(&x);
    r->has_spare = 0;
    r->spare = 0;
}

void qkv_rng_seed_stream(qkv_rng *r, uint64_t seed, uint64_t stream) {
    uint64_t x = stream * 0xD1B54A32D192ED03ull;
    qkv_rng_seed(r, seed ^ splitmix64(&x));
}

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t qkv_rng_u64(qkv_rng *r) { /* xoshiro256** */
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

double qkv_rng_uniform(qkv_rng *r) { return (double)(qkv_rng_u64(r) >> 11) * 0x1.0p-53; }

uint64_t qkv_rng_below(qkv_rng *r, uint64_t n) {
    uint64_t limit = UINT64_MAX - UINT64_MAX % n; /* reject the biased tail */
    uint64_t x;
    do x = qkv_rng_u64(r); while (x >= limit);
    return x % n;
}

/* ln x = 2 atanh((m-1)/(m+1)) + e ln 2 with m in [sqrt(1/2), sqrt(2)):
 * the series in z = (m-1)/(m+1), |z| < 0.172, reaches double precision in 12 terms.
 * Only basic arithmetic, so every IEEE platform returns the same bits. */
double qkv_rng_log(double x) {
    int e;
    double m = frexp(x, &e); /* exact: m in [0.5, 1) */
    if (m < 0.70710678118654752440) { m *= 2; e -= 1; }
    double z = (m - 1) / (m + 1), z2 = z * z, term = z, sum = 0;
    for (int k = 1; k <= 29; k += 2) { sum += term / k; term *= z2; }
    return 2 * sum + e * QKV_LN2;
}

double qkv_rng_normal(qkv_rng *r) { /* Marsaglia's polar method */
    if (r->has_spare) { r->has_spare = 0; return r->spare; }
    double u, v, s;
    do {
        u = 2 * qkv_rng_uniform(r) - 1;
        v = 2 * qkv_rng_uniform(r) - 1;
        s = u * u + v * v;
    } while (s >= 1 || s == 0);
    double f = sqrt(-2 * qkv_rng_log(s) / s);
    r->spare = v * f;
    r->has_spare = 1;
    return u * f;
}

void qkv_tensor_fill_uniform(qkv_tensor *t, qkv_rng *r, double lo, double hi) {
    for (int64_t i = 0; i < t->numel; i++) qkv_tensor_set(t, i, lo + (hi - lo) * qkv_rng_uniform(r));
}

void qkv_tensor_fill_normal(qkv_tensor *t, qkv_rng *r, double mean, double std) {
    for (int64_t i = 0; i < t->numel; i++) qkv_tensor_set(t, i, mean + std * qkv_rng_normal(r));
}
