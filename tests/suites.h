/* Every Check suite, one per tests/test_*.c file. */
#ifndef QKV_TEST_SUITES_H
#define QKV_TEST_SUITES_H
#include <check.h>
Suite *tensor_suite(void);
Suite *tape_suite(void);
Suite *grad_ops_suite(void);
Suite *safetensors_suite(void);
Suite *nn_suite(void);
Suite *parity_suite(void);
Suite *optim_suite(void);
Suite *config_suite(void);
Suite *tasks_suite(void);
Suite *fastmath_suite(void);
Suite *e2e_suite(void);
Suite *report_suite(void);
Suite *badinput_suite(void);
Suite *faults_suite(void);
Suite *stats_suite(void);
Suite *verdict_suite(void);
Suite *ablate_suite(void);
Suite *text_suite(void);
Suite *summary_suite(void);
Suite *group_suite(void);
Suite *hostile_suite(void);
Suite *ckcheck_suite(void);
Suite *pass2_suite(void);
#endif
