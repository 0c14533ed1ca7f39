/* Text samples for the ablation report: the same prompt, length, temperature and seed for
 * every variant's run, made when the report is, so a report is the same every time it is made
 * from the same runs. */
#include "ablate/samples.h"
#include "ablate/strbuf.h"
#include "config/config.h"
#include "train/run_dir.h"
#include "train/sample.h"
#include "train/train.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* the length of the valid UTF-8 sequence at b (n bytes left) that is not a control character,
 * or 0 */
static size_t utf8_char(const uint8_t *b, size_t n) {
    uint8_t c = b[0];
    if (c < 0x80) return c >= 0x20 && c != 0x7f ? 1 : 0;
    size_t len = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    if (!len || len > n) return 0;
    for (size_t i = 1; i < len; i++)
        if ((b[i] & 0xc0) != 0x80) return 0;
    /* no overlong forms, no surrogates, nothing past U+10FFFF, no C1 controls (U+0080-U+009F) */
    if ((c == 0xe0 && b[1] < 0xa0) || (c == 0xed && b[1] > 0x9f) || (c == 0xf0 && b[1] < 0x90) ||
        (c == 0xf4 && b[1] > 0x8f) || (c == 0xc2 && b[1] < 0xa0))
        return 0;
    return len;
}

char *qkv__ablate_display_text(const uint8_t *b, size_t n) {
    qkv_strbuf s;
    qkv_strbuf_init(&s);
    qkv_strbuf_puts(&s, ""); /* an empty text is "", not NULL */
    for (size_t i = 0; i < n;) {
        size_t k = b[i] == '\n' || b[i] == '\t' ? 1 : utf8_char(b + i, n - i);
        if (k) qkv_strbuf_putn(&s, (const char *)b + i, k);
        else qkv_strbuf_puts(&s, "\xef\xbf\xbd"); /* U+FFFD */
        i += k ? k : 1;
    }
    return qkv_strbuf_take(&s);
}

int qkv__ablate_sample(const char *run_dir, char **out, char *err, int errlen) {
    *out = NULL;
    char path[1400];
    qkv_config cfg;
    qkv_config_defaults(&cfg);
    snprintf(path, sizeof path, "%s/" QKV_RUN_CONFIG, run_dir);
    if (qkv_config_load(&cfg, path, err, errlen)) return -1;
    if (cfg.task.kind != QKV_TASK_TEXT) return 0;
    /* the model's shape is in the effective config (vocab and seq_len filled in): no need to
     * read the run's text again */
    qkv_model *m = qkv_model_new(&cfg.model, QKV_F32, 0, err, errlen);
    snprintf(path, sizeof path, "%s/" QKV_RUN_MODEL, run_dir);
    if (!m || qkv_load_model(m, path, err, errlen)) {
        qkv_model_free(m);
        return -1;
    }
    const char *prompt = QKV_ABLATE_SAMPLE_PROMPT;
    int np = (int)strlen(prompt), total = np + QKV_ABLATE_SAMPLE_BYTES;
    int32_t tok[sizeof QKV_ABLATE_SAMPLE_PROMPT - 1 + QKV_ABLATE_SAMPLE_BYTES];
    uint8_t bytes[sizeof tok / sizeof tok[0]];
    for (int i = 0; i < np; i++) tok[i] = (unsigned char)prompt[i];
    qkv_sample_opts o = {QKV_ABLATE_SAMPLE_BYTES, QKV_ABLATE_SAMPLE_TEMPERATURE, 0, QKV_ABLATE_SAMPLE_SEED};
    int rc = qkv_sample(m, tok, np, &o, tok + np, err, errlen);
    qkv_model_free(m);
    if (rc) return -1;
    for (int i = 0; i < total; i++) /* a token past the bytes (model.vocab > 256) shows as U+FFFD, as NUL does */
        bytes[i] = tok[i] < 256 ? (uint8_t)tok[i] : 0;
    if (!(*out = qkv__ablate_display_text(bytes, (size_t)total))) {
        snprintf(err, (size_t)errlen, "out of memory");
        return -1;
    }
    return 0;
}
