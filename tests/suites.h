/* Every Check suite, one per tests/test_*.c file (cli_contract's table is in three:
 * tests/test_cli_contract.c runs the rows of test_cli_config.c, test_cli_files.c and
 * test_cli_options.c). */
#ifndef QKV_TEST_SUITES_H
#define QKV_TEST_SUITES_H
#include <check.h>
Suite *tensor_suite(void);
Suite *tape_suite(void);
Suite *grad_ops_suite(void);
Suite *bf16_suite(void);
Suite *safetensors_suite(void);
Suite *nn_suite(void);
Suite *parity_suite(void);
Suite *optim_suite(void);
Suite *config_suite(void);
Suite *tasks_suite(void);
Suite *fastmath_suite(void);
Suite *e2e_suite(void);
Suite *report_suite(void);
Suite *cli_contract_suite(void);
Suite *memory_suite(void);
Suite *fuzz_corpus_suite(void);
Suite *faults_suite(void);
Suite *stats_suite(void);
Suite *verdict_suite(void);
Suite *ablate_suite(void);
Suite *text_suite(void);
Suite *tokens_suite(void);
Suite *summary_suite(void);
Suite *steady_suite(void);
Suite *observe_suite(void);
Suite *score_suite(void);
Suite *ckcheck_suite(void);
Suite *logs_suite(void);
Suite *buildinfo_suite(void);
Suite *lanes_suite(void);
Suite *checks_suite(void);
Suite *pool_suite(void);
Suite *docs_suite(void);
Suite *claims_suite(void);
Suite *readme_suite(void);
Suite *long_paths_suite(void);
Suite *allocs_suite(void);
Suite *attention_figure_suite(void);
Suite *params_snapshot_suite(void);
Suite *errors_suite(void);
#endif
