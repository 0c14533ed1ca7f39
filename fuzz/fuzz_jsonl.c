/* libFuzzer target: the JSON Lines reader of the file task (qkv__task_parse_jsonl).
 *
 * For accepted text: every sequence has 1 to 65536 tokens, inputs in [0, vocab), targets in
 * [0, vocab) or -100, seq_len is the longest sequence; fitting a smaller model.vocab reports
 * one line naming a line of the file. For rejected text: one non-empty line. */
#include "tasks/task.h"
#include "tasks/task_data.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(cond, ...) do { if (!(cond)) { fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); abort(); } } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    qkv_task t;
    memset(&t, 0, sizeof t);
    t.cfg.kind = QKV_TASK_FILE;
    t.variable_length = true;
    snprintf(t.cfg.path, sizeof t.cfg.path, "fuzz.jsonl");
    qkv_err e;
    if (qkv__task_parse_jsonl(&t, (const char *)data, size, "fuzz.jsonl", &e)) {
        CHECK(e.msg[0] && !strchr(e.msg, '\n'), "not a one-line error: [%s]", e.msg);
        qkv_task_close(&t);
        return 0;
    }
    int longest = 0;
    for (int i = 0; i < t.n_seqs; i++) {
        const qkv_seq *s = &t.seqs[i];
        CHECK(s->len >= 1 && s->len <= 65536 && s->line >= 1, "sequence %d: length %d, line %d", i, s->len, s->line);
        if (s->len > longest) longest = s->len;
        for (int j = 0; j < s->len; j++) {
            CHECK(s->tokens[j] >= 0 && s->tokens[j] < t.vocab, "token %d out of [0, %d)", s->tokens[j], t.vocab);
            CHECK(s->targets[j] == QKV_IGNORE || (s->targets[j] >= 0 && s->targets[j] < t.vocab), "target %d",
                  s->targets[j]);
        }
    }
    CHECK(t.seq_len == longest, "seq_len %d, longest %d", t.seq_len, longest);
    t.n_train = t.n_seqs;
    qkv_model_config mc = qkv_model_config_default();
    mc.vocab = t.vocab > 2 ? t.vocab - 1 : 0;
    int rc = qkv_task_fit_model(&t, &mc, &e);
    CHECK(t.vocab <= 2 || (rc == -1 && e.msg[0] && !strchr(e.msg, '\n') && strstr(e.msg, "fuzz.jsonl:")),
          "vocab %d: %s", t.vocab, e.msg);
    qkv_task_close(&t);
    return 0;
}
