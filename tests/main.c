/* The test runner: every suite, one Check summary line, the skipped checks counted and named (tests/probe.h),
 * non-zero exit on any failure. */
#include <check.h>
#include <stdlib.h>

#include "probe.h"
#include "suites.h"

int main(void) {
    /* every arena block starts as NaN bytes, so an op that relies on memory it did not write
     * (or a new gradient it did not zero) fails the checks instead of passing by luck */
    setenv("QKV_ARENA_POISON", "1", 1);
    /* a test's time limit is there to end a hang, not to time it (speed is qkv bench's): Check's
     * own default, 4 s, failed threaded tests on a host whose 2 cores ran 5 busy processes, so
     * a test that sets no limit of its own gets 60 s (CK_DEFAULT_TIMEOUT still overrides it) */
    setenv("CK_DEFAULT_TIMEOUT", "60", 0);
    SRunner *sr = srunner_create(tensor_suite());
    srunner_add_suite(sr, tape_suite());
    srunner_add_suite(sr, grad_ops_suite());
    srunner_add_suite(sr, bf16_suite());
    srunner_add_suite(sr, safetensors_suite());
    srunner_add_suite(sr, nn_suite());
    srunner_add_suite(sr, parity_suite());
    srunner_add_suite(sr, optim_suite());
    srunner_add_suite(sr, config_suite());
    srunner_add_suite(sr, tasks_suite());
    srunner_add_suite(sr, fastmath_suite());
    srunner_add_suite(sr, report_suite());
    srunner_add_suite(sr, e2e_suite());
    srunner_add_suite(sr, cli_contract_suite());
    srunner_add_suite(sr, memory_suite());
    srunner_add_suite(sr, fuzz_corpus_suite());
    srunner_add_suite(sr, faults_suite());
    srunner_add_suite(sr, stats_suite());
    srunner_add_suite(sr, verdict_suite());
    srunner_add_suite(sr, ablate_suite());
    srunner_add_suite(sr, text_suite());
    srunner_add_suite(sr, tokens_suite());
    srunner_add_suite(sr, summary_suite());
    srunner_add_suite(sr, steady_suite());
    srunner_add_suite(sr, observe_suite());
    srunner_add_suite(sr, score_suite());
    srunner_add_suite(sr, ckcheck_suite());
    srunner_add_suite(sr, logs_suite());
    srunner_add_suite(sr, buildinfo_suite());
    srunner_add_suite(sr, lanes_suite());
    srunner_add_suite(sr, checks_suite());
    srunner_add_suite(sr, pool_suite());
    srunner_add_suite(sr, docs_suite());
    srunner_add_suite(sr, claims_suite());
    srunner_add_suite(sr, readme_suite());
    srunner_add_suite(sr, long_paths_suite());
    srunner_add_suite(sr, allocs_suite());
    srunner_add_suite(sr, attention_figure_suite());
    srunner_add_suite(sr, params_snapshot_suite());
    srunner_add_suite(sr, errors_suite());
    qkv_test_skips_begin(); /* the checks skipped for the machine's sake, counted and named after Check's line */
    srunner_run_all(sr, CK_NORMAL);
    qkv_test_skips_end(srunner_ntests_run(sr));
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
