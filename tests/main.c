/* The test runner: every suite, one Check summary line, non-zero exit on any failure. */
#include <check.h>
#include <stdlib.h>

#include "suites.h"

int main(void) {
    SRunner *sr = srunner_create(tensor_suite());
    srunner_add_suite(sr, tape_suite());
    srunner_add_suite(sr, grad_ops_suite());
    srunner_add_suite(sr, safetensors_suite());
    srunner_add_suite(sr, nn_suite());
    srunner_add_suite(sr, parity_suite());
    srunner_add_suite(sr, optim_suite());
    srunner_add_suite(sr, config_suite());
    srunner_add_suite(sr, fastmath_suite());
    srunner_add_suite(sr, report_suite());
    srunner_add_suite(sr, e2e_suite());
    srunner_add_suite(sr, badinput_suite());
    srunner_add_suite(sr, faults_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
