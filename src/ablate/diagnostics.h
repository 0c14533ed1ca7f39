/* Internal: attention diagnostics of a finished run, read back from its directory. */
#ifndef QKV_ABLATE_DIAGNOSTICS_H
#define QKV_ABLATE_DIAGNOSTICS_H

#include "qkv_api.h"

#include "ablate/results.h"

/* running sums over query rows that attend somewhere */
typedef struct qkv_diag_sums { double diag, first, entropy, entropy_uniform; int64_t rows; } qkv_diag_sums;

/* Rebuild the run's model from run_dir/config.json and model.safetensors, run it on `n`
 * evaluation examples and add every layer's and head's rows to *sums; when heat is
 * non-NULL, also fill it with the attention of evaluation example `example`. */
QKV_INTERNAL int qkv_ablate_diagnose(const char *run_dir, int n, int example, qkv_diag_sums *sums, qkv_heatmap *heat,
                        char *err, int errlen);

#endif
