/* Internal: a text sample of a finished run, for the ablation report. */
#ifndef QKV_ABLATE_SAMPLES_H
#define QKV_ABLATE_SAMPLES_H

#include "qkv_api.h"

#include <stddef.h>
#include <stdint.h>

/* what every report sample is: this prompt, then 200 bytes drawn at temperature 0.8 from all
 * 256 (no top-k) with seed 0 */
#define QKV_ABLATE_SAMPLE_PROMPT "The "
#define QKV_ABLATE_SAMPLE_BYTES 200
#define QKV_ABLATE_SAMPLE_TEMPERATURE 0.8
#define QKV_ABLATE_SAMPLE_SEED 0

/* The sample of the run in run_dir (its config.json and model.safetensors), the prompt and the
 * bytes after it, as display text (qkv__ablate_display_text) into a malloc'd *out; *out is NULL
 * when the run's task is not the text task (its tokens are not bytes). 0, or -1 with one line in
 * err. */
QKV_INTERNAL int qkv__ablate_sample(const char *run_dir, char **out, char *err, int errlen);

/* bytes as text that any Markdown or HTML page shows as it is: valid UTF-8 is kept (with
 * newlines and tabs), and every byte that is not (invalid UTF-8, NUL and the other control
 * characters, C1 controls) becomes U+FFFD, the replacement character. malloc'd, NULL when out of
 * memory */
QKV_INTERNAL char *qkv__ablate_display_text(const uint8_t *b, size_t n);

#endif
