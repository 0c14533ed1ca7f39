/* The thread pool (tensor/parallel.h): every item of a job runs exactly once, in ranges that
 * depend on n, the grain and the pool's size alone; a part is claimed by whichever thread is
 * free, so a worker that cannot run leaves its part to the caller instead of stopping the job. */
#include <check.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "tensor/parallel.h"
#include "suites.h"

#define ITEMS 4096

typedef struct {
    atomic_int runs[ITEMS];     /* how often each item ran */
    int64_t starts[ITEMS];      /* starts[b] = e for each range [b, e) that ran */
    pthread_t threads[ITEMS];   /* the thread that ran the range starting at b */
} record;

static void count(void *arg, int64_t b, int64_t e) {
    record *r = arg;
    for (int64_t i = b; i < e; i++) atomic_fetch_add(&r->runs[i], 1);
    r->starts[b] = e;
    r->threads[b] = pthread_self();
}

/* the ranges parallel.h promises: up to `threads` contiguous ranges of ceil(n / parts) items */
static void expect_ranges(const record *r, int64_t n, int64_t grain, int threads) {
    int64_t parts = n / grain < threads ? n / grain : threads;
    if (parts < 1) parts = 1;
    int64_t chunk = (n + parts - 1) / parts;
    for (int64_t i = 0; i < n; i++) ck_assert_int_eq(atomic_load(&r->runs[i]), 1);
    for (int64_t b = 0; b < n; b += chunk) ck_assert_int_eq(r->starts[b], b + chunk < n ? b + chunk : n);
}

/* many jobs in quick succession (workers spinning, sleeping and waking between them): each item
 * once, in the promised ranges, at 2 and 3 threads */
START_TEST(test_pool_runs_each_item_once) {
    static record r;
    for (int threads = 2; threads <= 3; threads++) {
        ck_assert_int_eq(qkv_set_threads(threads), 0);
        for (int job = 0; job < 3000; job++) {
            int64_t n = 1 + (job * 7919) % ITEMS, grain = 1 + job % 5;
            memset(&r, 0, sizeof r);
            qkv__parallel_for(n, grain, count, &r);
            expect_ranges(&r, n, grain, threads);
        }
    }
    qkv_set_threads(1);
}
END_TEST

/* a worker held in a signal handler until the test releases it */
static atomic_int held, release;
static void hold(int sig) {
    (void)sig;
    atomic_store(&held, 1);
    struct timespec ms = {0, 1000000};
    while (!atomic_load(&release)) nanosleep(&ms, NULL);
}

/* a job of two parts in which each part waits until the other has started: the thread that runs
 * one cannot claim the other, so two threads must take part; it finds the worker without depending
 * on how fast it wakes */
static atomic_int met;
static void meet(void *arg, int64_t b, int64_t e) {
    count(arg, b, e);
    atomic_fetch_add(&met, 1);
    while (atomic_load(&met) < 2) sched_yield();
}

/* with the only worker unable to run, a job of two parts still ends, both parts on the caller;
 * a pool that gave each thread a fixed part would wait for the worker here forever */
START_TEST(test_pool_caller_takes_a_stalled_workers_part) {
    static record r;
    ck_assert_int_eq(qkv_set_threads(2), 0);
    pthread_t self = pthread_self(), worker = self;
    memset(&r, 0, sizeof r);
    qkv__parallel_for(2, 1, meet, &r);
    expect_ranges(&r, 2, 1, 2);
    for (int b = 0; b < 2; b++)
        if (!pthread_equal(r.threads[b], self)) worker = r.threads[b];
    ck_assert_msg(!pthread_equal(worker, self), "the job ran on one thread");
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = hold;
    ck_assert_int_eq(sigaction(SIGUSR1, &sa, NULL), 0);
    /* idle this long, the worker has stopped spinning and sleeps in its condition wait, the
     * pool's lock released, so the handler cannot hold the lock the caller publishes under */
    struct timespec idle = {0, 200000000}, ms = {0, 1000000};
    nanosleep(&idle, NULL);
    ck_assert_int_eq(pthread_kill(worker, SIGUSR1), 0);
    while (!atomic_load(&held)) nanosleep(&ms, NULL);
    for (int job = 0; job < 100; job++) {
        memset(&r, 0, sizeof r);
        qkv__parallel_for(2, 1, count, &r);
        expect_ranges(&r, 2, 1, 2);
        ck_assert(pthread_equal(r.threads[0], self) && pthread_equal(r.threads[1], self));
    }
    atomic_store(&release, 1);
    for (int job = 0; job < 100; job++) { /* and the released worker joins in again */
        memset(&r, 0, sizeof r);
        qkv__parallel_for(ITEMS, 1, count, &r);
        expect_ranges(&r, ITEMS, 1, 2);
    }
    qkv_set_threads(1);
}
END_TEST

Suite *pool_suite(void) {
    Suite *s = suite_create("pool");
    TCase *tc = tcase_create("pool");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_pool_runs_each_item_once);
    tcase_add_test(tc, test_pool_caller_takes_a_stalled_workers_part);
    suite_add_tcase(s, tc);
    return s;
}
