/* A small persistent thread pool (see parallel.h). Workers spin briefly after each job
 * (jobs come in quick succession during a step), then sleep on a condition variable. A job's
 * parts are claimed, not assigned: whichever thread is free takes the next one, so a worker that
 * wakes late leaves its part to the caller instead of making it wait. The parts' ranges depend
 * on n, the grain and the pool's size alone, never on which thread runs them. */
#include "tensor/parallel.h"
#include "tensor/check.h"

#include <cblas.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>

#define SPIN 2000 /* polls before a worker sleeps: long spins steal the core from BLAS's threads */

static int nthreads = 1, started = 0;
/* set on a thread that computes a whole micro-batch by itself (qkv__serial): its kernels run
 * inline on it, exactly as with one thread, whatever the pool's size */
static _Thread_local int serial = 0;
static pthread_t workers[QKV_MAX_THREADS];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER;

/* the current job */
static void (*job_fn)(void *, int64_t, int64_t);
static void *job_arg;
static int64_t job_n, job_chunk;
/* generation << 16 | parts claimed << 8 | parts, in one word: a part is claimed by one
 * compare-and-swap that also checks the generation, so a thread that wakes after its job ended
 * can never take a part of the next one, and a job cannot change while a claimed part runs */
static _Atomic uint64_t job_word;
static atomic_int job_left;     /* parts not yet finished */
static atomic_int driving;      /* 1 while a thread drives a job (checked: one driver at a time) */

#define GEN(w) ((w) >> 16)
#define CLAIMED(w) (((w) >> 8) & 0xff)
#define PARTS(w) ((w)&0xff)

static void run_part(int64_t part) {
    int64_t b = part * job_chunk, e = b + job_chunk < job_n ? b + job_chunk : job_n;
    if (b < e) job_fn(job_arg, b, e);
}

/* runs parts of generation gen until none is left to claim */
static void claim_parts(uint64_t gen) {
    uint64_t w = atomic_load_explicit(&job_word, memory_order_acquire);
    while (GEN(w) == gen && CLAIMED(w) < PARTS(w)) {
        if (!atomic_compare_exchange_weak_explicit(&job_word, &w, w + (1u << 8), memory_order_acquire,
                                                   memory_order_acquire))
            continue; /* w now holds the word as it is */
        run_part((int64_t)CLAIMED(w));
        atomic_fetch_sub_explicit(&job_left, 1, memory_order_release);
        w = atomic_load_explicit(&job_word, memory_order_acquire);
    }
}

/* a worker has no identity: it claims whichever part is next (the argument is unused) */
static void *worker(void *unused) {
    (void)unused;
    uint64_t seen = 0;
    for (;;) {
        uint64_t w;
        int spins = 0;
        while (GEN(w = atomic_load_explicit(&job_word, memory_order_acquire)) == GEN(seen) && spins < SPIN) {
            spins++;
            if ((spins & 255) == 0) sched_yield(); /* let the caller run */
        }
        if (GEN(w) == GEN(seen)) {
            pthread_mutex_lock(&lock);
            while (GEN(w = atomic_load_explicit(&job_word, memory_order_acquire)) == GEN(seen))
                pthread_cond_wait(&wake, &lock);
            pthread_mutex_unlock(&lock);
        }
        seen = w;
        claim_parts(GEN(w));
    }
    return NULL;
}

int qkv_set_threads(int n) {
    if (n < 1) n = 1;
    if (n > QKV_MAX_THREADS) n = QKV_MAX_THREADS;
    while (started < n - 1) { /* threads are started once and kept */
        if (pthread_create(&workers[started], NULL, worker, NULL)) {
            nthreads = started + 1;
            return -1;
        }
        pthread_detach(workers[started]);
        started++;
    }
    nthreads = n;
#ifdef OPENBLAS_VERSION
    /* the pool splits matrix products into single-threaded BLAS calls: BLAS's own threads
     * would compete for the same cores (and OpenBLAS's threaded path allocates per call) */
    openblas_set_num_threads(1);
#endif
    return 0;
}

int qkv_get_threads(void) { return serial ? 1 : nthreads; }

int qkv__serial(int on) {
    int prev = serial;
    serial = on;
    return prev;
}

#define ZERO_PIECE 65536 /* bytes */
static void zero_range(void *p, int64_t b, int64_t e) {
    memset((char *)p + b * ZERO_PIECE, 0, (size_t)(e - b) * ZERO_PIECE);
}

void qkv__zero(void *p, size_t bytes) {
    size_t whole = bytes / ZERO_PIECE;
    qkv__parallel_for((int64_t)whole, 4, zero_range, p);
    memset((char *)p + whole * ZERO_PIECE, 0, bytes - whole * ZERO_PIECE);
}

void qkv__parallel_for(int64_t n, int64_t grain, void (*fn)(void *arg, int64_t begin, int64_t end), void *arg) {
    if (n <= 0) return;
    if (grain < 1) grain = 1;
    int parts = serial ? 1 : nthreads;
    if (n / grain < parts) parts = (int)(n / grain);
    if (parts <= 1) {
        fn(arg, 0, n);
        return;
    }
    /* the pool has one driver at a time: a second thread (or a job's own function, unless it
     * went serial) publishing a job now would overwrite the one in flight */
    QKV_ASSERT(!atomic_exchange_explicit(&driving, 1, memory_order_acquire),
               "the thread pool is driven from one thread at a time");
    job_fn = fn;
    job_arg = arg;
    job_n = n;
    job_chunk = (n + parts - 1) / parts;
    atomic_store_explicit(&job_left, parts, memory_order_relaxed);
    pthread_mutex_lock(&lock); /* publish under the lock: no sleeping worker misses it */
    uint64_t gen = GEN(atomic_load_explicit(&job_word, memory_order_relaxed)) + 1;
    atomic_store_explicit(&job_word, gen << 16 | (uint64_t)parts, memory_order_release);
    pthread_cond_broadcast(&wake);
    pthread_mutex_unlock(&lock);
    claim_parts(gen);
    int spins = 0;
    while (atomic_load_explicit(&job_left, memory_order_acquire) > 0)
        if ((++spins & 255) == 0) sched_yield();
    atomic_store_explicit(&driving, 0, memory_order_release);
}
