/* Memory estimates of a training run (see memory.h). */
#include "train/memory.h"
#include "nn/model.h"
#include "optim/optim.h"

#include <stdio.h>
#include <unistd.h>

static int64_t saturate(double x) { return x >= 9.2e18 ? INT64_MAX : x <= 0 ? 0 : (int64_t)x; }

int64_t qkv_train_estimate_bytes(const qkv_model_config *m, const qkv_optim_config *o, int batch) {
    double per_param = 4.0 * (2 + qkv_optim_state_floats(o)); /* value, gradient, optimizer state */
    double p = per_param * (double)qkv_model_param_count(m);
    return saturate(p + (double)qkv_model_activation_bytes(m, batch, m->seq_len));
}

int64_t qkv_machine_memory_bytes(void) {
    long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
    return pages > 0 && size > 0 ? saturate((double)pages * (double)size) : 0;
}

int qkv_check_memory(const qkv_model_config *c, int batch, int64_t need, const char *what, qkv_err *e) {
    int64_t have = qkv_machine_memory_bytes();
    if (!have || need <= have) return 0;
    const double gib = 1024.0 * 1024.0 * 1024.0;
    char needs[32];
    if (need == INT64_MAX) snprintf(needs, sizeof needs, "over 8 EiB");
    else snprintf(needs, sizeof needs, "about %.1f GiB", (double)need / gib);
    return qkv_err_set(e, QKV_ERR_MEMORY,
                       "model.d_model %d x model.layers %d (d_ff %d, vocab %d, seq_len %d, %lld parameters) with "
                       "batch %d needs %s (%s), more than this machine's %.1f GiB",
                       c->d_model, c->layers, c->d_ff, c->vocab, c->seq_len, (long long)qkv_model_param_count(c),
                       batch, needs, what, (double)have / gib);
}
