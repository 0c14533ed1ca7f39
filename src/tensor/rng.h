/* qkv's own seeded generator: same seed, same numbers on every machine and libc.
 *
 * xoshiro256** seeded through splitmix64. Uniforms come from integer bits only;
 * normals use the polar method with qkv's own logarithm (only +,-,*,/ and the
 * correctly rounded sqrt), so no libm result can differ between platforms. */
#ifndef QKV_RNG_H
#define QKV_RNG_H

#include "qkv_api.h"

#include <stdint.h>
#include "tensor/tensor.h"

typedef struct { uint64_t s[4]; int has_spare; double spare; } qkv_rng;

/* state from a 64-bit seed */
QKV_API void qkv_rng_seed(qkv_rng *r, uint64_t seed);
/* next 64 random bits */
QKV_API uint64_t qkv_rng_u64(qkv_rng *r);
/* uniform double in [0, 1) with 53 random bits */
QKV_API double qkv_rng_uniform(qkv_rng *r);
/* uniform integer in [0, n), n >= 1, without modulo bias */
QKV_API uint64_t qkv_rng_below(qkv_rng *r, uint64_t n);
/* standard normal N(0, 1) */
QKV_API double qkv_rng_normal(qkv_rng *r);
/* independent stream derived from a seed and a stream id (e.g. train vs eval data) */
QKV_API void qkv_rng_seed_stream(qkv_rng *r, uint64_t seed, uint64_t stream);
/* natural logarithm computed without libm (x > 0); exported for tests */
QKV_API double qkv_rng_log(double x);

/* t[i] ~ U(lo, hi) for every element (float dtypes); values drawn in double then rounded */
QKV_API void qkv_tensor_fill_uniform(qkv_tensor *t, qkv_rng *r, double lo, double hi);
/* t[i] ~ N(mean, std^2) */
QKV_API void qkv_tensor_fill_normal(qkv_tensor *t, qkv_rng *r, double mean, double std);

#endif
