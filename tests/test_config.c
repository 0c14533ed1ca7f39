/* Tests for src/config/config.c: the example config, defaults, every kind of rejected input
 * (each with the message fragment a user would see), --set of every type and its errors,
 * cross-key validation, the to_json round trip and docs/config.md listing every key. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/config.h"
#include "testutil.h"

static qkv_err qe; /* the last call's error */

/* ---------------------------------------------------------------- helpers */

/* the message is one line, starts with the label, and holds `frag` */
#define ASSERT_MSG(label, frag)                                                                \
    do {                                                                                       \
        ck_assert_msg(strstr(qe.msg, (frag)) != NULL, "message \"%s\" lacks \"%s\"", qe.msg, (frag)); \
        ck_assert_msg(strncmp(qe.msg, (label), strlen(label)) == 0, "message \"%s\" lacks label", \
                      qe.msg);                                                                    \
        ck_assert_msg(strchr(qe.msg, '\n') == NULL, "message \"%s\" is not one line", qe.msg);       \
    } while (0)

static qkv_config parse_ok(const char *json) {
    qkv_config c;
    qe.msg[0] = '\0';
    int rc = qkv_config_parse(&c, json, "x.json", &qe);
    ck_assert_msg(rc == 0, "parse failed: %s", qe.msg);
    return c;
}

/* a file in the tests' scratch directory with the given bytes; the caller unlinks and frees the name */
static char *temp_file(const char *bytes, size_t n) {
    char *name = malloc(600);
    ck_assert_ptr_nonnull(name);
    snprintf(name, 600, "%s/qkv_test_config_XXXXXX", qkv_test_tmpdir());
    int fd = mkstemp(name);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq((int)write(fd, bytes, n), (int)n);
    close(fd);
    return name;
}

static const char *EXAMPLE =
    "{\"model\": {\"d_model\": 64, \"heads\": 4, \"layers\": 2, \"d_ff\": 256, \"activation\": "
    "\"gelu\",\n"
    "           \"attention\": {\"qkv\": \"full\", \"scale\": \"head_dim\", \"causal\": true,\n"
    "                         \"rel_pos_bias\": false, \"gate\": \"none\", \"self_mask\": "
    "false}},\n"
    " \"task\":  {\"name\": \"recall\", \"pairs\": 8, \"keys\": 32, \"values\": 32},\n"
    " \"train\": {\"steps\": 3000, \"batch\": 32, \"seed\": 0, \"eval_every\": 250, "
    "\"eval_examples\": 1000},\n"
    " \"optim\": {\"name\": \"adam\", \"lr\": 0.001, \"weight_decay\": 0, \"clip\": 0,\n"
    "           \"schedule\": \"constant\", \"warmup\": 0}}\n";

/* ---------------------------------------------------------------- good input */

START_TEST(test_defaults) {
    qkv_config c;
    memset(&c, 0xab, sizeof c);
    qkv_config_defaults(&c);
    qkv_model_config m = qkv_model_config_default();
    ck_assert_int_eq(c.model.vocab, m.vocab);
    ck_assert_int_eq(c.model.seq_len, m.seq_len);
    ck_assert_int_eq(c.model.d_model, m.d_model);
    ck_assert_int_eq(c.model.heads, m.heads);
    ck_assert_int_eq(c.model.layers, m.layers);
    ck_assert_int_eq(c.model.d_ff, m.d_ff);
    ck_assert_int_eq(c.model.activation, m.activation);
    ck_assert_int_eq(c.model.attn.qkv, m.attn.qkv);
    ck_assert_int_eq(c.model.attn.scale, m.attn.scale);
    ck_assert(c.model.attn.causal == m.attn.causal);
    ck_assert(c.model.attn.rel_pos_bias == m.attn.rel_pos_bias);
    ck_assert_int_eq(c.model.attn.rel_pos_max, m.attn.rel_pos_max);
    ck_assert_int_eq(c.model.attn.gate, m.attn.gate);
    ck_assert(c.model.attn.self_mask == m.attn.self_mask);

    ck_assert_int_eq(c.model.d_model, 64);
    ck_assert_int_eq(c.model.heads, 4);
    ck_assert(c.model.attn.causal);
    ck_assert_int_eq(c.task.kind, QKV_TASK_RECALL);
    ck_assert_int_eq(c.task.length, 8);
    ck_assert_int_eq(c.task.symbols, 16);
    ck_assert_int_eq(c.task.pairs, 8);
    ck_assert_int_eq(c.task.keys, 32);
    ck_assert_int_eq(c.task.values, 32);
    ck_assert_int_eq(c.task.queries, 0);
    ck_assert_int_eq(c.task.key_len, 2);
    ck_assert_int_eq(c.task.value_len, 2);
    ck_assert_int_eq(c.task.noise, 16);
    ck_assert_int_eq(c.task.noise_symbols, 16);
    ck_assert_int_eq(c.task.copy_tokens, 4);
    ck_assert_str_eq(c.task.path, "");
    ck_assert_str_eq(c.task.eval_path, "");
    ck_assert(c.task.eval_fraction == 0.1);
    ck_assert_int_eq(c.task.seq_len, 64);
    ck_assert_int_eq(c.train.steps, 3000);
    ck_assert_int_eq(c.train.batch, 32);
    ck_assert(c.train.seed == 0);
    ck_assert_int_eq(c.train.eval_every, 250);
    ck_assert_int_eq(c.train.eval_examples, 1000);
    ck_assert_int_eq(c.train.log_every, 50);
    ck_assert_int_eq(c.train.checkpoint_every, 0);
    ck_assert(!c.train.skip_nonfinite);
    ck_assert_int_eq(c.optim.kind, QKV_OPT_ADAM);
    ck_assert(c.optim.lr == 0.001);
    ck_assert(c.optim.momentum == 0);
    ck_assert(c.optim.beta1 == 0.9);
    ck_assert(c.optim.beta2 == 0.999);
    ck_assert(c.optim.eps == 1e-8);
    ck_assert(c.optim.weight_decay == 0);
    ck_assert(c.optim.clip == 0);
    ck_assert_int_eq(c.optim.schedule, QKV_SCHED_CONSTANT);
    ck_assert_int_eq(c.optim.warmup, 0);
    ck_assert(c.optim.min_lr == 0);

    /* empty object = defaults; the defaults pass validation */
    qkv_config p = parse_ok("{}");
    ck_assert_int_eq(memcmp(&p, &c, sizeof c), 0);
    p = parse_ok(" {\"model\": {\"attention\": {}}, \"task\": {}, \"train\": {}, \"optim\": {}} ");
    ck_assert_int_eq(memcmp(&p, &c, sizeof c), 0);
    ck_assert_int_eq(qkv_config_validate(&c, &qe), 0);
}
END_TEST

START_TEST(test_example) {
    qkv_config c = parse_ok(EXAMPLE);
    ck_assert_int_eq(c.model.d_model, 64);
    ck_assert_int_eq(c.model.heads, 4);
    ck_assert_int_eq(c.model.layers, 2);
    ck_assert_int_eq(c.model.d_ff, 256);
    ck_assert_int_eq(c.model.activation, QKV_ACT_GELU);
    ck_assert_int_eq(c.model.attn.qkv, QKV_ATTN_FULL);
    ck_assert_int_eq(c.model.attn.scale, QKV_SCALE_HEAD_DIM);
    ck_assert(c.model.attn.causal);
    ck_assert(!c.model.attn.rel_pos_bias);
    ck_assert_int_eq(c.model.attn.gate, QKV_GATE_NONE);
    ck_assert(!c.model.attn.self_mask);
    ck_assert_int_eq(c.task.kind, QKV_TASK_RECALL);
    ck_assert_int_eq(c.task.pairs, 8);
    ck_assert_int_eq(c.task.keys, 32);
    ck_assert_int_eq(c.task.values, 32);
    ck_assert_int_eq(c.train.steps, 3000);
    ck_assert_int_eq(c.train.batch, 32);
    ck_assert(c.train.seed == 0);
    ck_assert_int_eq(c.train.eval_every, 250);
    ck_assert_int_eq(c.train.eval_examples, 1000);
    ck_assert_int_eq(c.optim.kind, QKV_OPT_ADAM);
    ck_assert(c.optim.lr == 0.001);
    ck_assert(c.optim.weight_decay == 0);
    ck_assert(c.optim.clip == 0);
    ck_assert_int_eq(c.optim.schedule, QKV_SCHED_CONSTANT);
    ck_assert_int_eq(c.optim.warmup, 0);
    ck_assert_int_eq(qkv_config_validate(&c, &qe), 0);

    /* every other value of the example's kinds */
    c = parse_ok("{\"model\": {\"vocab\": 100, \"seq_len\": 128, \"activation\": \"relu\","
                 " \"attention\": {\"qkv\": \"head_shared\", \"scale\": \"embed\", \"causal\": false,"
                 " \"rel_pos_bias\": true, \"rel_pos_max\": 7, \"gate\": \"value\", \"self_mask\": true}},"
                 " \"task\": {\"name\": \"induction\", \"length\": 12, \"symbols\": 2,"
                 " \"eval_fraction\": 0.25, \"path\": \"d\\u00e9j\\u00e0 \\\"q\\\".txt\"},"
                 " \"train\": {\"seed\": 9007199254740991, \"skip_nonfinite\": true, \"batch\": 1e3},"
                 " \"optim\": {\"name\": \"adamw\", \"lr\": 10, \"beta1\": 0, \"eps\": 1,"
                 " \"schedule\": \"cosine\", \"min_lr\": 1e-5, \"clip\": 1e6, \"momentum\": -0.0}}");
    ck_assert_int_eq(c.model.vocab, 100);
    ck_assert_int_eq(c.model.seq_len, 128);
    ck_assert_int_eq(c.model.activation, QKV_ACT_RELU);
    ck_assert_int_eq(c.model.attn.qkv, QKV_ATTN_HEAD_SHARED);
    ck_assert_int_eq(c.model.attn.scale, QKV_SCALE_EMBED);
    ck_assert(!c.model.attn.causal);
    ck_assert(c.model.attn.rel_pos_bias);
    ck_assert_int_eq(c.model.attn.rel_pos_max, 7);
    ck_assert_int_eq(c.model.attn.gate, QKV_GATE_VALUE);
    ck_assert(c.model.attn.self_mask);
    ck_assert_int_eq(c.task.kind, QKV_TASK_INDUCTION);
    ck_assert_int_eq(c.task.length, 12);
    ck_assert_int_eq(c.task.symbols, 2);
    ck_assert(c.task.eval_fraction == 0.25);
    ck_assert_str_eq(c.task.path, "d\xc3\xa9j\xc3\xa0 \"q\".txt");
    ck_assert(c.train.seed == 9007199254740991LL);
    ck_assert(c.train.skip_nonfinite);
    ck_assert_int_eq(c.train.batch, 1000);
    ck_assert_int_eq(c.optim.kind, QKV_OPT_ADAMW);
    ck_assert(c.optim.lr == 10);
    ck_assert(c.optim.beta1 == 0);
    ck_assert(c.optim.eps == 1);
    ck_assert_int_eq(c.optim.schedule, QKV_SCHED_COSINE);
    ck_assert(c.optim.min_lr == 1e-5);
    ck_assert(c.optim.clip == 1e6);
    ck_assert(c.optim.momentum == 0);
}
END_TEST

START_TEST(test_task_names) {
    static const char *const want[] = {"copy", "reverse", "sort", "recall", "induction", "fuzzy_recall",
                                       "noisy_recall", "selective_copy", "text", "file"};
    for (int i = 0; i < QKV_TASK_COUNT; i++) ck_assert_str_eq(QKV_TASK_NAMES[i], want[i]);
}
END_TEST

START_TEST(test_keys) {
    const char *const *k = qkv_config_keys();
    int n = 0;
    for (; k[n]; n++) {
        for (int j = 0; j < n; j++) ck_assert_str_ne(k[j], k[n]);
        ck_assert(!strncmp(k[n], "model.", 6) || !strncmp(k[n], "task.", 5) ||
                  !strncmp(k[n], "train.", 6) || !strncmp(k[n], "optim.", 6));
    }
    /* the attention's keys are its options' rows (nn/attn_options.h), between model.activation and
     * model.position; the other sections' 55 keys end with task.tokenizer, task.pieces,
     * task.tokenizer_path, train.precision, task.heldout_seed */
    int attn = 0;
    for (int i = 0; i < n; i++) attn += !strncmp(k[i], "model.attention.", 16);
    ck_assert_int_eq(attn, QKV_ATTN_OPTION_COUNT);
    ck_assert_int_eq(n, 55 + QKV_ATTN_OPTION_COUNT);
    ck_assert_str_eq(k[7 + QKV_ATTN_OPTION_COUNT], "model.position");
    ck_assert_str_eq(k[0], "model.vocab");
    ck_assert_str_eq(k[7], "model.attention.qkv");
    ck_assert_str_eq(k[n - 1], "optim.min_lr");
}
END_TEST

/* ---------------------------------------------------------------- bad files */

typedef struct bad_case {
    const char *json, *frag;
} bad_case;

static const bad_case BAD[] = {
    /* syntax, with line:column */
    {"", "x.json:1:1: JSON syntax error"},
    {"  \n ", "x.json:2:2: JSON syntax error: empty input"},
    {"{\n  \"model\": {\n    \"d_model\" 64\n  }\n}", "x.json:3:15: JSON syntax error"},
    {"{\n  \"model\": {\n    \"d_model\": 64,\n  }\n}",
     "x.json:3:18: JSON syntax error: trailing comma before '}'"},
    {"{\n\"task\": {\"path\": \"abc\n}}", "x.json:2:18: JSON syntax error: unterminated string"},
    {"{\"model\": {\"heads\": 4 \"layers\": 2}}", "x.json:1:23: JSON syntax error: missing ','"},
    {"{\"model\": {}} x", "x.json:1:15: JSON syntax error: unexpected text after the JSON value"},
    {"{\"model\": {}}{}", "x.json:1:14: JSON syntax error"},
    {"{\"model\": {\"attention\": {\"qkv\": shared}}}", "x.json:1:33: JSON syntax error: unquoted"},
    {"{\"train\": {\"skip_nonfinite\": True}}", "x.json:1:30: JSON syntax error: invalid literal"},
    {"{'model': {}}", "x.json:1:2: JSON syntax error: strings need double quotes"},
    {"{\"model\": {} // the model\n}", "x.json:1:14: JSON syntax error: comments"},
    {"{\"optim\": {\"lr\": .5}}", "x.json:1:18: JSON syntax error: invalid number"},
    {"{\"optim\": {\"lr\": 01}}", "x.json:1:18: JSON syntax error: invalid number"},
    {"{\"task\": {\"path\": \"a\\u0000b\"}}", "x.json:1:21: JSON syntax error: \\u0000"},
    {"{\"task\": {\"path\": \"a\\qb\"}}", "x.json:1:21: JSON syntax error: invalid escape"},
    {"{\"model\": {", "x.json:1:12: JSON syntax error: unexpected end of input"},
    /* JSON text is UTF-8: a string or key that is not well formed is refused where it breaks */
    {"{\"task\": {\"path\": \"a\xff\"}}", "x.json:1:21: JSON syntax error: invalid UTF-8 in a string (code point above"},
    {"{\"task\": {\"pa\xc0\xafth\": 1}}", "x.json:1:14: JSON syntax error: invalid UTF-8 in a string (overlong encoding)"},
    {"{\"task\": {\"path\": \"\xed\xa0\x80\"}}", "x.json:1:20: JSON syntax error: invalid UTF-8 in a string (UTF-16 surrogate)"},
    {"{\"task\": {\"path\": \"ab\xe4\xb8\"}}", "x.json:1:22: JSON syntax error: invalid UTF-8 in a string (truncated"},
    /* shape */
    {"[1, 2]", "x.json: expected a JSON object at the top level"},
    {"null", "x.json: expected a JSON object at the top level"},
    {"{\"model\": 1}", "x.json: model: expected an object"},
    {"{\"optim\": [\"adam\"]}", "x.json: optim: expected an object"},
    {"{\"model\": {\"attention\": \"full\"}}", "x.json: model.attention: expected an object"},
    /* unknown keys */
    {"{\"model\": {\"attention\": {\"qvk\": \"full\"}}}",
     "x.json: model.attention.qvk: unknown key (did you mean model.attention.qkv?)"},
    {"{\"modle\": {}}", "x.json: modle: unknown key (did you mean model?)"},
    {"{\"data\": {}}", "x.json: data: unknown key (valid keys at the top level: model, task, "
                       "train, optim)"},
    {"{\"task\": {\"nmae\": \"copy\"}}", "x.json: task.nmae: unknown key (did you mean task.name?)"},
    {"{\"model\": {\"lr\": 0.1}}", "x.json: model.lr: unknown key (did you mean optim.lr?)"},
    {"{\"model.d_model\": 64}", "x.json: \"model.d_model\": unknown key (names are not dotted"},
    {"{\"optim\": {\"xyzzy\": 1}}", "x.json: optim.xyzzy: unknown key (valid keys of optim: name, lr,"},
    /* duplicates */
    {"{\"optim\": {\"lr\": 0.1, \"lr\": 0.2}}", "x.json: optim.lr: duplicate key"},
    {"{\"model\": {\"attention\": {\"causal\": true, \"gate\": \"none\", \"causal\": true}}}",
     "x.json: model.attention.causal: duplicate key"},
    {"{\"optim\": {}, \"model\": {}, \"optim\": {}}", "x.json: optim: duplicate key"},
    /* integers */
    {"{\"model\": {\"d_model\": \"64\"}}",
     "x.json: model.d_model: expected an integer in [1, 8192], got \"64\""},
    {"{\"model\": {\"d_model\": 64.5}}",
     "x.json: model.d_model: expected an integer in [1, 8192], got 64.5"},
    {"{\"model\": {\"d_model\": 1e300}}",
     "x.json: model.d_model: expected an integer in [1, 8192], got 1e+300"},
    {"{\"model\": {\"layers\": -2}}", "x.json: model.layers: expected an integer in [1, 64], got -2"},
    {"{\"model\": {\"d_model\": 0}}", "x.json: model.d_model: expected an integer in [1, 8192], got 0"},
    {"{\"task\": {\"pairs\": -1}}", "x.json: task.pairs: expected an integer in [1, 4096], got -1"},
    {"{\"model\": {\"heads\": true}}", "x.json: model.heads: expected an integer in [1, 256], got true"},
    {"{\"train\": {\"seed\": 9007199254740992}}",
     "x.json: train.seed: expected an integer in [0, 9007199254740991], got 9007199254740992"},
    {"{\"train\": {\"steps\": 1e10}}",
     "x.json: train.steps: expected an integer in [1, 1000000000], got 10000000000"},
    {"{\"model\": {\"d_ff\": [256]}}", "x.json: model.d_ff: expected an integer in [1, 65536], got [256]"},
    /* numbers */
    {"{\"optim\": {\"lr\": 0}}", "x.json: optim.lr: expected a number in (0, 10], got 0"},
    {"{\"optim\": {\"lr\": -0.001}}", "x.json: optim.lr: expected a number in (0, 10], got -0.001"},
    {"{\"optim\": {\"lr\": \"1e-3\"}}", "x.json: optim.lr: expected a number in (0, 10], got \"1e-3\""},
    {"{\"optim\": {\"lr\": 1e999}}", "x.json: optim.lr: expected a number in (0, 10], got inf"},
    {"{\"optim\": {\"beta1\": 1}}", "x.json: optim.beta1: expected a number in [0, 1), got 1"},
    {"{\"optim\": {\"eps\": 0}}", "x.json: optim.eps: expected a number in (0, 1], got 0"},
    {"{\"optim\": {\"clip\": 1000001}}", "x.json: optim.clip: expected a number in [0, 1000000], got 1000001"},
    {"{\"task\": {\"eval_fraction\": 1}}", "x.json: task.eval_fraction: expected a number in (0, 1), got 1"},
    /* booleans */
    {"{\"model\": {\"attention\": {\"causal\": 1}}}",
     "x.json: model.attention.causal: expected true or false, got 1"},
    {"{\"model\": {\"attention\": {\"causal\": \"true\"}}}",
     "x.json: model.attention.causal: expected true or false, got \"true\""},
    {"{\"train\": {\"skip_nonfinite\": null}}",
     "x.json: train.skip_nonfinite: expected true or false, got null"},
    /* enums */
    {"{\"model\": {\"attention\": {\"qkv\": \"ful\"}}}",
     "x.json: model.attention.qkv: expected one of full, shared, identity, qk_tied, kv_tied, "
     "head_shared, got \"ful\" (did you mean full?)"},
    {"{\"optim\": {\"name\": \"Adam\"}}",
     "x.json: optim.name: expected one of sgd, adam, adamw, got \"Adam\" (did you mean adam?)"},
    {"{\"task\": {\"name\": \"lm\"}}",
     "x.json: task.name: expected one of copy, reverse, sort, recall, induction, fuzzy_recall, noisy_recall, "
     "selective_copy, text, file, got \"lm\""},
    {"{\"model\": {\"attention\": {\"gate\": 1}}}",
     "x.json: model.attention.gate: expected one of none, output, value, headwise, got 1"},
    /* strings */
    {"{\"task\": {\"path\": 5}}", "x.json: task.path: expected a string of at most 1023 bytes, got 5"},
    {"{\"task\": {\"eval_path\": null}}", "x.json: task.eval_path: expected a string"},
};
enum { NBAD = (int)(sizeof BAD / sizeof BAD[0]) };

START_TEST(test_bad_input) {
    const bad_case *b = &BAD[_i];
    qkv_config c, before;
    qkv_config_defaults(&c);
    c.model.d_model = 96; /* a failed parse leaves the config as it was */
    before = c;
    memset(qe.msg, 0, sizeof qe.msg);
    ck_assert_msg(qkv_config_parse(&c, b->json, "x.json", &qe) == -1,
                  "accepted: %s", b->json);
    ASSERT_MSG("x.json", b->frag);
    ck_assert_int_eq(memcmp(&c, &before, sizeof c), 0);
}
END_TEST

START_TEST(test_bad_long_values) {
    /* a string longer than the field */
    size_t n = 1024;
    char *json = malloc(n + 64);
    ck_assert_ptr_nonnull(json);
    int o = snprintf(json, 64, "{\"task\": {\"path\": \"");
    memset(json + o, 'a', n);
    strcpy(json + o + n, "\"}}");
    qkv_config c;
    ck_assert_int_eq(qkv_config_parse(&c, json, "x.json", &qe), -1);
    ASSERT_MSG("x.json", "x.json: task.path: expected a string of at most 1023 bytes, got 1024 bytes");
    /* 1023 bytes fit */
    strcpy(json + o + n - 1, "\"}}");
    c = parse_ok(json);
    ck_assert_uint_eq(strlen(c.task.path), 1023);
    free(json);

    /* a long wrong value is shown truncated */
    ck_assert_int_eq(qkv_config_parse(&c,
                                      "{\"task\": {\"name\": \"abcdefghijklmnopqrstuvwxyz"
                                      "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz\"}}",
                                      "x.json", &qe),
                     -1);
    ASSERT_MSG("x.json", "got \"abcdefghijklmnopqrstuvwxyzabcdefghijklm...");
    ck_assert_uint_lt(strlen(qe.msg), 200);

    /* a key with a line break in it is shown escaped: the message stays one line */
    ck_assert_int_eq(qkv_config_parse(&c, "{\"mo\\ndel\": {}}", "x.json", &qe), -1);
    ASSERT_MSG("x.json", "x.json: mo\\x0adel: unknown key");

    /* a duplicate in a large object (the sorted path) */
    char big[4096];
    o = snprintf(big, sizeof big, "{\"optim\": {");
    for (int i = 0; i < 40; i++) o += snprintf(big + o, sizeof big - (size_t)o, "\"k%d\": 1, ", i);
    snprintf(big + o, sizeof big - (size_t)o, "\"k7\": 2, \"k3\": 2}}");
    ck_assert_int_eq(qkv_config_parse(&c, big, "x.json", &qe), -1);
    ASSERT_MSG("x.json", "x.json: optim.k7: duplicate key");
}
END_TEST

START_TEST(test_error_buffer) {
    /* every error of a config is the user's: QKV_ERR_USAGE, with its one line */
    qkv_config c;
    ck_assert_int_eq(qkv_config_parse(&c, "{\"optim\": {\"lr\": 0}}", "x.json", &qe), -1);
    ck_assert_int_eq(qe.code, QKV_ERR_USAGE);
    ASSERT_MSG("x.json", "x.json: optim.lr:");
    ck_assert_int_eq(qkv_config_set(&c, "x", &qe), -1);
    ck_assert_int_eq(qe.code, QKV_ERR_USAGE);
    ck_assert_int_eq(qkv_config_load(&c, "/nonexistent/qkv.json", &qe), -1);
    ck_assert_int_eq(qe.code, QKV_ERR_USAGE);
    ck_assert_int_eq(qkv_config_parse(&c, NULL, "x.json", &qe), -1);
    ck_assert_int_eq(qkv_config_parse(&c, "{\"optim\": {\"lr\": 0}}", NULL, &qe), -1);
    ASSERT_MSG("config", "config: optim.lr:");
    qkv_config_defaults(&c);
    c.model.heads = 5;
    ck_assert_int_eq(qkv_config_validate(&c, &qe), -1);
    ck_assert_int_eq(qe.code, QKV_ERR_USAGE);
    /* a message longer than the error's room is cut, inside it, and ends in "..." */
    static char longkey[2 * QKV_ERR_MSG];
    memset(longkey, 'k', sizeof longkey - 1);
    longkey[sizeof longkey - 1] = 0;
    ck_assert_int_eq(qkv_err_set(&qe, QKV_ERR_FAIL, "x.json: %s: bad", longkey), -1);
    ck_assert_int_eq(qe.code, QKV_ERR_FAIL);
    ck_assert_uint_eq(strlen(qe.msg), QKV_ERR_MSG - 1);
    ck_assert_str_eq(qe.msg + QKV_ERR_MSG - 4, "...");
    ck_assert(!strncmp(qe.msg, "x.json: kkk", 11));
    qkv_err_clear(&qe);
    ck_assert(qe.code == QKV_ERR_OK && !qe.msg[0]);
}
END_TEST

/* ---------------------------------------------------------------- --set */

START_TEST(test_set_every_type) {
    qkv_config c;
    qkv_config_defaults(&c);
#define SET(a) ck_assert_msg(qkv_config_set(&c, (a), &qe) == 0, "%s: %s", (a), qe.msg)
    SET("model.d_model=96");
    ck_assert_int_eq(c.model.d_model, 96);
    SET("model.heads=1e1");
    ck_assert_int_eq(c.model.heads, 10);
    SET("train.seed=9007199254740991");
    ck_assert(c.train.seed == 9007199254740991LL);
    SET("optim.lr=3e-4");
    ck_assert(c.optim.lr == 3e-4);
    SET("optim.eps=0.00000001");
    ck_assert(c.optim.eps == 1e-8);
    SET("model.attention.causal=false");
    ck_assert(!c.model.attn.causal);
    SET("train.skip_nonfinite=true");
    ck_assert(c.train.skip_nonfinite);
    SET("model.attention.qkv=shared");
    ck_assert_int_eq(c.model.attn.qkv, QKV_ATTN_SHARED);
    SET("model.attention.qkv=\"qk_tied\"");
    ck_assert_int_eq(c.model.attn.qkv, QKV_ATTN_QK_TIED);
    SET("optim.schedule=linear");
    ck_assert_int_eq(c.optim.schedule, QKV_SCHED_LINEAR);
    SET("task.name=text");
    ck_assert_int_eq(c.task.kind, QKV_TASK_TEXT);
    SET("task.path=data/tiny shakespeare.txt");
    ck_assert_str_eq(c.task.path, "data/tiny shakespeare.txt");
    SET("task.path=\"quoted=\\\"x\\\"\"");
    ck_assert_str_eq(c.task.path, "quoted=\"x\"");
    SET("task.path=123");
    ck_assert_str_eq(c.task.path, "123");
    SET("task.eval_path=a=b");
    ck_assert_str_eq(c.task.eval_path, "a=b");
    SET("task.eval_path=");
    ck_assert_str_eq(c.task.eval_path, "");
    SET("task.eval_fraction= 0.05 ");
    ck_assert(c.task.eval_fraction == 0.05);
#undef SET
}
END_TEST

static const bad_case BAD_SET[] = {
    {"model.d_model", "--set: expected path.to.key=value, got \"model.d_model\""},
    {"=5", "--set: expected path.to.key=value, got \"=5\""},
    {"", "--set: expected path.to.key=value"},
    {"model.attention.qvk=full",
     "--set: model.attention.qvk: unknown key (did you mean model.attention.qkv?)"},
    {"modle.d_model=3", "--set: modle.d_model: unknown key (did you mean model.d_model?)"},
    {"optim.learning_rate=0.1", "--set: optim.learning_rate: unknown key (valid keys of optim:"},
    {"model.d_model.x=1", "--set: model.d_model.x: unknown key (model.d_model is a key, not a section)"},
    {"model.d_model=abc", "--set: model.d_model: expected an integer in [1, 8192], got \"abc\""},
    {"model.d_model=64.5", "--set: model.d_model: expected an integer in [1, 8192], got 64.5"},
    {"model.d_model=", "--set: model.d_model: expected an integer in [1, 8192], got \"\""},
    {"train.seed=-1", "--set: train.seed: expected an integer in [0, 9007199254740991], got -1"},
    {"optim.lr=0", "--set: optim.lr: expected a number in (0, 10], got 0"},
    {"optim.lr=fast", "--set: optim.lr: expected a number in (0, 10], got \"fast\""},
    {"model.attention.causal=yes", "--set: model.attention.causal: expected true or false, got \"yes\""},
    {"model.attention.causal=1", "--set: model.attention.causal: expected true or false, got 1"},
    {"model.attention.qkv=ful", "got \"ful\" (did you mean full?)"},
    {"optim.name=1", "--set: optim.name: expected one of sgd, adam, adamw, got 1"},
    {"model=1", "--set: model: is a section, not a key"},
    {"model.attention={\"qkv\": \"shared\"}", "--set: model.attention: is a section, not a key"},
};
enum { NBAD_SET = (int)(sizeof BAD_SET / sizeof BAD_SET[0]) };

START_TEST(test_bad_set) {
    const bad_case *b = &BAD_SET[_i];
    qkv_config c, before;
    qkv_config_defaults(&c);
    before = c;
    memset(qe.msg, 0, sizeof qe.msg);
    ck_assert_msg(qkv_config_set(&c, b->json, &qe) == -1, "accepted: %s", b->json);
    ASSERT_MSG("--set", b->frag);
    ck_assert_int_eq(memcmp(&c, &before, sizeof c), 0);
}
END_TEST

/* ---------------------------------------------------------------- validation */

START_TEST(test_validate) {
    qkv_config c;
    char *file = temp_file("hello\n", 6);
#define VALID(...)                                                                             \
    do {                                                                                       \
        qkv_config_defaults(&c);                                                               \
        __VA_ARGS__;                                                                           \
        ck_assert_msg(qkv_config_validate(&c, &qe) == 0, "rejected: %s", qe.msg);     \
    } while (0)
#define INVALID(frag, ...)                                                                     \
    do {                                                                                       \
        qkv_config_defaults(&c);                                                               \
        __VA_ARGS__;                                                                           \
        ck_assert_int_eq(qkv_config_validate(&c, &qe), -1);                        \
        ck_assert_msg(strstr(qe.msg, frag) != NULL, "message \"%s\" lacks \"%s\"", qe.msg, frag);    \
        ck_assert_ptr_null(strchr(qe.msg, '\n'));                                                 \
    } while (0)

    VALID((void)0);
    VALID(c.model.heads = 8);
    INVALID("model.heads: 3 does not divide model.d_model 64", c.model.heads = 3);
    INVALID("model.heads: 5 does not divide model.d_model 96", c.model.heads = 5,
            c.model.d_model = 96);
    INVALID("task.path: task \"text\" needs a path", c.task.kind = QKV_TASK_TEXT);
    INVALID("task.path: task \"file\" needs a path", c.task.kind = QKV_TASK_FILE);
    INVALID("task.path: cannot open \"/nonexistent/qkv/data.jsonl\": No such file or directory",
            c.task.kind = QKV_TASK_FILE, strcpy(c.task.path, "/nonexistent/qkv/data.jsonl"));
    INVALID("task.path: cannot read \"/tmp\": Is a directory", c.task.kind = QKV_TASK_TEXT,
            strcpy(c.task.path, "/tmp"));
    VALID(c.task.kind = QKV_TASK_TEXT, strcpy(c.task.path, file));
    /* the fortunes corpus: task.path is a directory (any readable one here; its fortunes are
     * read when the task opens) */
    VALID(c.task.kind = QKV_TASK_TEXT, c.task.corpus = QKV_CORPUS_FORTUNES, strcpy(c.task.path, "/tmp"));
    INVALID("task.path: cannot open the fortunes directory \"/nonexistent/qkv\": No such file or directory "
            "(Debian's fortunes package installs /usr/share/games/fortunes: apt-get install fortunes",
            c.task.kind = QKV_TASK_TEXT, c.task.corpus = QKV_CORPUS_FORTUNES, strcpy(c.task.path, "/nonexistent/qkv"));
    INVALID("task.corpus: fortunes is a corpus of the text task, not of task \"recall\"",
            c.task.corpus = QKV_CORPUS_FORTUNES);
    INVALID("task.eval_path: cannot open \"/nonexistent/eval.jsonl\"", c.task.kind = QKV_TASK_FILE,
            strcpy(c.task.path, file), strcpy(c.task.eval_path, "/nonexistent/eval.jsonl"));
    VALID(c.task.kind = QKV_TASK_FILE, strcpy(c.task.path, file), strcpy(c.task.eval_path, file));
    VALID(c.task.queries = 8);
    INVALID("task.queries: 9 is more than task.pairs 8", c.task.queries = 9);
    INVALID("task.keys: 4 is less than task.pairs 8", c.task.keys = 4);
    VALID(c.task.kind = QKV_TASK_COPY, c.task.keys = 4); /* only the recalls use keys */
    INVALID("task.length: induction needs at least 3 positions, got 2", c.task.kind = QKV_TASK_INDUCTION,
            c.task.length = 2);
    INVALID("task.queries: 9 is more than task.pairs 8", c.task.kind = QKV_TASK_FUZZY_RECALL, c.task.queries = 9);
    VALID(c.task.kind = QKV_TASK_FUZZY_RECALL, c.task.keys = 3); /* 9 keys of 2 tokens */
    INVALID("task.keys: 2 keys make only 4 distinct keys of task.key_len 2 tokens, fewer than task.pairs 8",
            c.task.kind = QKV_TASK_FUZZY_RECALL, c.task.keys = 2);
    INVALID("task.pairs: fuzzy_recall examples of 65551 positions are longer than a model takes",
            c.task.kind = QKV_TASK_FUZZY_RECALL, c.task.pairs = 4096, c.task.keys = 4096, c.task.key_len = 8,
            c.task.value_len = 8, c.task.queries = 1);
    INVALID("task.keys: 4 is less than task.pairs 8", c.task.kind = QKV_TASK_NOISY_RECALL, c.task.keys = 4);
    INVALID("task.queries: 9 is more than task.pairs 8", c.task.kind = QKV_TASK_NOISY_RECALL, c.task.queries = 9);
    INVALID("task.noise: noisy_recall examples of 65537 positions", c.task.kind = QKV_TASK_NOISY_RECALL,
            c.task.noise = 65536 - 23);
    VALID(c.task.kind = QKV_TASK_SELECTIVE_COPY, c.task.copy_tokens = 8);
    INVALID("task.copy_tokens: 9 is more than task.length 8", c.task.kind = QKV_TASK_SELECTIVE_COPY,
            c.task.copy_tokens = 9);
    VALID(c.task.copy_tokens = 9, c.task.noise = 65536); /* only their own tasks use them */
    VALID(c.optim.warmup = 3000);
    INVALID("optim.warmup: 3001 is more than train.steps 3000", c.optim.warmup = 3001);
    INVALID("optim.min_lr: 0.01 is more than optim.lr 0.001", c.optim.schedule = QKV_SCHED_COSINE,
            c.optim.min_lr = 0.01);
    /* a struct filled in by code gets the table's range checks too */
    INVALID("model.d_model: expected an integer in [1, 8192], got 0", c.model.d_model = 0);
    INVALID("optim.lr: expected a number in (0, 10], got 0", c.optim.lr = 0);
    INVALID("model.attention.qkv: expected one of full,", c.model.attn.qkv = QKV_ATTN_QKV_COUNT);
#undef VALID
#undef INVALID
    unlink(file);
    free(file);
}
END_TEST

/* ---------------------------------------------------------------- files */

START_TEST(test_load) {
    qkv_config c;
    char *ok = temp_file(EXAMPLE, strlen(EXAMPLE));
    ck_assert_msg(qkv_config_load(&c, ok, &qe) == 0, "%s", qe.msg);
    ck_assert_int_eq(c.task.keys, 32);

    static const char bad[] = "{\"model\": {\n  \"d_model\": 64,\n  \"heads\": 4,,\n}}\n";
    char *syn = temp_file(bad, sizeof bad - 1);
    ck_assert_int_eq(qkv_config_load(&c, syn, &qe), -1);
    char want[256];
    snprintf(want, sizeof want, "%s:3:14: JSON syntax error", syn);
    ASSERT_MSG(syn, want);

    static const char nul[] = "{\"model\": {}}\n\0{}";
    char *withnul = temp_file(nul, sizeof nul - 1);
    ck_assert_int_eq(qkv_config_load(&c, withnul, &qe), -1);
    snprintf(want, sizeof want, "%s:2:1: JSON syntax error", withnul);
    ASSERT_MSG(withnul, want);

    static const char bom[] = "\xEF\xBB\xBF{\"model\": {\"layers\": 3}}";
    char *withbom = temp_file(bom, sizeof bom - 1);
    ck_assert_msg(qkv_config_load(&c, withbom, &qe) == 0, "%s", qe.msg);
    ck_assert_int_eq(c.model.layers, 3);

    ck_assert_int_eq(qkv_config_load(&c, "/nonexistent/qkv.json", &qe), -1);
    ASSERT_MSG("/nonexistent/qkv.json", "/nonexistent/qkv.json: cannot open: No such file");

    char *names[] = {ok, syn, withnul, withbom};
    for (int i = 0; i < 4; i++) {
        unlink(names[i]);
        free(names[i]);
    }
}
END_TEST

/* ---------------------------------------------------------------- to_json */

START_TEST(test_to_json_round_trip) {
    qkv_config a, b;
    qkv_config_defaults(&a);
    char *j = qkv_config_to_json(&a);
    ck_assert_ptr_nonnull(j);
    b = parse_ok(j);
    ck_assert_int_eq(memcmp(&a, &b, sizeof a), 0);
    ck_assert_ptr_nonnull(strstr(j, "\"qkv\":\t\"full\""));
    ck_assert_ptr_nonnull(strstr(j, "\"name\":\t\"recall\""));
    free(j);

    /* every key away from its default, with awkward doubles */
    static const char *const sets[] = {
        "model.vocab=1048576", "model.seq_len=65536", "model.d_model=8192", "model.heads=256",
        "model.layers=64", "model.d_ff=1", "model.activation=gelu_tanh",
        "model.attention.qkv=head_shared", "model.attention.scale=embed",
        "model.attention.causal=false", "model.attention.rel_pos_bias=true",
        "model.attention.rel_pos_max=4096", "model.attention.gate=output",
        "model.attention.self_mask=true", "task.name=file", "task.length=4096",
        "task.symbols=65536", "task.pairs=1", "task.keys=65536", "task.values=1",
        "task.queries=4096", "task.key_len=64", "task.value_len=1", "task.noise=65536",
        "task.noise_symbols=65536", "task.copy_tokens=4096", "task.path=\"tab\\there \\\"quoted\\\" \\u00e9\"",
        "task.eval_path=/tmp/e v.jsonl", "task.eval_fraction=0.30000000000000004",
        "task.seq_len=2", "train.steps=1000000000", "train.batch=65536",
        "train.seed=9007199254740991", "train.eval_every=0", "train.eval_examples=10000000",
        "train.log_every=1", "train.checkpoint_every=7", "train.skip_nonfinite=true", "train.precision=bf16",
        "optim.name=sgd", "optim.lr=0.001", "optim.momentum=0.9999999999999999",
        "optim.beta1=0.1", "optim.beta2=0.95", "optim.eps=1e-8", "optim.weight_decay=1e-300",
        "optim.clip=123456.789", "optim.schedule=linear", "optim.warmup=1000000000",
        "optim.min_lr=2.2250738585072014e-308",
    };
    qkv_config_defaults(&a);
    for (size_t i = 0; i < sizeof sets / sizeof sets[0]; i++)
        ck_assert_msg(qkv_config_set(&a, sets[i], &qe) == 0, "%s: %s", sets[i], qe.msg);
    ck_assert_int_eq(sizeof sets / sizeof sets[0], 50); /* one per key */
    j = qkv_config_to_json(&a);
    ck_assert_ptr_nonnull(j);
    b = parse_ok(j);
    ck_assert_int_eq(memcmp(&a, &b, sizeof a), 0);
    ck_assert(b.optim.lr == 0.001);
    ck_assert(b.optim.eps == 1e-8);
    ck_assert(b.task.eval_fraction == 0.1 + 0.2);
    ck_assert(b.optim.momentum == 0.9999999999999999);
    ck_assert(b.optim.min_lr == 2.2250738585072014e-308);
    ck_assert(b.train.seed == 9007199254740991LL);
    ck_assert_int_eq(b.train.precision, QKV_PRECISION_BF16);
    ck_assert_ptr_nonnull(strstr(j, "\"precision\":\t\"bf16\""));
    ck_assert_str_eq(b.task.path, "tab\there \"quoted\" \xc3\xa9");
    /* printed compactly where possible */
    ck_assert_ptr_nonnull(strstr(j, "\"lr\":\t0.001,"));
    ck_assert_ptr_nonnull(strstr(j, "\"seed\":\t9007199254740991,"));
    /* the same text again from the parsed copy */
    char *j2 = qkv_config_to_json(&b);
    ck_assert_str_eq(j, j2);
    free(j2);

    /* every key, in table order, sections nested */
    const char *const *keys = qkv_config_keys();
    const char *at = j;
    for (int i = 0; keys[i]; i++) {
        const char *name = strrchr(keys[i], '.') + 1;
        char quoted[80];
        snprintf(quoted, sizeof quoted, "\"%s\":", name);
        const char *p = strstr(at, quoted);
        ck_assert_msg(p != NULL, "%s missing or out of order", keys[i]);
        at = p;
    }
    ck_assert_ptr_nonnull(strstr(j, "\"model\":\t{"));
    ck_assert_ptr_nonnull(strstr(j, "\"attention\":\t{"));
    ck_assert(strstr(j, "\"activation\"") < strstr(j, "\"attention\""));
    ck_assert(strstr(j, "\"attention\"") < strstr(j, "\"task\""));
    ck_assert(strstr(j, "\"task\"") < strstr(j, "\"train\""));
    ck_assert(strstr(j, "\"train\"") < strstr(j, "\"optim\""));
    free(j);
}
END_TEST

/* ---------------------------------------------------------------- docs */

static char *read_all(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + n, 1, cap - 1 - n, f)) > 0) {
        n += got;
        if (n + 1 == cap) {
            char *nb = realloc(buf, cap *= 2);
            if (!nb) free(buf);
            buf = nb;
        }
    }
    fclose(f);
    if (buf) buf[n] = '\0';
    return buf;
}

START_TEST(test_docs_list_every_key) {
    char *doc = read_all("../docs/config.md");
    ck_assert_msg(doc != NULL, "cannot read ../docs/config.md (run the tests from tests/)");
    const char *const *keys = qkv_config_keys();
    for (int i = 0; keys[i]; i++) {
        char want[96];
        snprintf(want, sizeof want, "| `%s` |", keys[i]);
        ck_assert_msg(strstr(doc, want) != NULL, "docs/config.md does not list `%s`", keys[i]);
    }
    /* and every key in a table row is a real key */
    int rows = 0;
    for (const char *p = strstr(doc, "\n| `"); p; p = strstr(p + 1, "\n| `")) {
        const char *s = p + 4, *e = strchr(s, '`');
        ck_assert_ptr_nonnull(e);
        bool found = false;
        for (int i = 0; keys[i] && !found; i++)
            found = strlen(keys[i]) == (size_t)(e - s) && !strncmp(keys[i], s, (size_t)(e - s));
        ck_assert_msg(found, "docs/config.md lists unknown key %.*s", (int)(e - s), s);
        rows++;
    }
    ck_assert_int_eq(rows, 55 + QKV_ATTN_OPTION_COUNT);
    ck_assert_ptr_nonnull(strstr(doc, "## Shipped configs"));
    free(doc);
}
END_TEST

Suite *config_suite(void) {
    Suite *s = suite_create("config");
    TCase *tc = tcase_create("config");
    tcase_add_test(tc, test_defaults);
    tcase_add_test(tc, test_example);
    tcase_add_test(tc, test_task_names);
    tcase_add_test(tc, test_keys);
    tcase_add_loop_test(tc, test_bad_input, 0, NBAD);
    tcase_add_test(tc, test_bad_long_values);
    tcase_add_test(tc, test_error_buffer);
    tcase_add_test(tc, test_set_every_type);
    tcase_add_loop_test(tc, test_bad_set, 0, NBAD_SET);
    tcase_add_test(tc, test_validate);
    tcase_add_test(tc, test_load);
    tcase_add_test(tc, test_to_json_round_trip);
    tcase_add_test(tc, test_docs_list_every_key);
    suite_add_tcase(s, tc);
    return s;
}
