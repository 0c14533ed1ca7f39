/* What results record of their machine and build (tensor/buildinfo.h): the facts themselves
 * (the CPU, the GEMM build, the vector kernels' clone, OpenBLAS's and libxsmm's targets), a
 * run's summary.json "machine" and `qkv --version` saying them, and summaries written before
 * they were recorded still aggregating. */
#define _GNU_SOURCE
#include <cJSON.h>
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "suites.h"
#include "tensor/buildinfo.h"
#include "tensor/kernel_prelude.h" /* QKV_VECTOR_CLONES, as the kernels are compiled with it */
#include "testutil.h"

static char TMP[256];

static void setup(void) { qkv_test_mkdtemp(TMP, sizeof TMP, "buildinfo"); }
static void teardown(void) { qkv_test_rmtree(TMP); }

static void put(const char *rel, const char *text) { qkv_test_put(TMP, rel, text); }
static char *get(const char *rel) { return qkv_test_get(TMP, rel); }

static char *untimed(const char *rel) { return qkv_test_get_untimed(TMP, rel); }

#define STR_(x) #x
#define STR(x) STR_(x)

/* a string member of a JSON object, non-empty (fails the test otherwise) */
static const char *member(const cJSON *o, const char *key) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    ck_assert_msg(cJSON_IsString(v) && v->valuestring[0], "\"%s\" is not a non-empty string", key);
    return v->valuestring;
}

/* a "machine" object says exactly what qkv_buildinfo_get does, and (a run's, precision not
 * NULL) the products' precision the run asked for */
static void check_machine(const cJSON *m, const qkv_buildinfo *b, const char *precision) {
    ck_assert_msg(cJSON_IsObject(m), "no machine object");
    ck_assert_int_eq(cJSON_GetArraySize(m), precision ? 6 : 5);
    if (precision) ck_assert_str_eq(member(m, "precision"), precision);
    ck_assert_str_eq(member(m, "cpu"), b->cpu);
    ck_assert_str_eq(member(m, "gemm"), b->gemm);
    ck_assert_str_eq(member(m, "isa"), b->isa);
    ck_assert_str_eq(member(m, "blas_core"), b->blas_core);
    ck_assert_str_eq(member(m, "xsmm_arch"), b->xsmm_arch);
}

START_TEST(test_buildinfo_facts) {
    const qkv_buildinfo *b = qkv_buildinfo_get();
    ck_assert_ptr_eq(b, qkv_buildinfo_get());
    ck_assert(b->cpu[0] && b->gemm[0] && b->isa[0] && b->blas_core[0] && b->xsmm_arch[0]);
#if QKV_GEMM_LIBXSMM
    ck_assert_str_eq(b->gemm, "libxsmm+openblas");
    ck_assert_str_ne(b->xsmm_arch, "none");
#else
    ck_assert_str_eq(b->gemm, "openblas");
    ck_assert_str_eq(b->xsmm_arch, "none");
#endif
    /* the CPU: /proc/cpuinfo's first "model name", as the shell reads it */
    char want[256];
    ck_assert_int_eq(qkv_test_sh(want, sizeof want, false,
                                 "sed -n 's/^model name[[:space:]]*: *//p' /proc/cpuinfo 2>/dev/null | head -n 1 | "
                                 "sed 's/ *$//' | tr -d '\\n'"), 0);
    ck_assert_str_eq(b->cpu, want[0] ? want : "unknown");
    /* the JSON object: the same five strings; a buffer too small is refused, not cut */
    char json[1024];
    int n = qkv_buildinfo_json(json, sizeof json);
    ck_assert_int_eq(n, (int)strlen(json));
    cJSON *j = cJSON_Parse(json);
    check_machine(j, b, NULL);
    cJSON_Delete(j);
    char small[1024];
    ck_assert_int_eq(qkv_buildinfo_json(small, (size_t)n + 1), n);
    ck_assert_str_eq(small, json);
    ck_assert_int_eq(qkv_buildinfo_json(small, (size_t)n), -1);
    ck_assert_str_eq(small, "");
    ck_assert_int_eq(qkv_buildinfo_json(NULL, 0), -1);
}
END_TEST

/* the ISA reported is the clone of QKV_VECTOR_CLONES that GCC's resolver runs on this CPU: the
 * best one it supports (the list is written best first). A clone this test does not know means
 * the kernels' list changed: src/tensor/buildinfo.c's vector_isa and the table here follow it. */
START_TEST(test_isa_is_the_kernels_clone) {
    const char *text = STR(QKV_VECTOR_CLONES), *isa = qkv_buildinfo_get()->isa;
    char want[64] = "default", name[64];
    bool found = false;
    for (const char *p = strchr(text, '"'); p && !found; p = strchr(p, '"')) {
        const char *end = strchr(p + 1, '"');
        ck_assert_ptr_nonnull(end);
        snprintf(name, sizeof name, "%.*s", (int)(end - p - 1), p + 1);
        p = end + 1;
        const char *n = !strncmp(name, "arch=", 5) ? name + 5 : name;
        int supported = -1;
#if defined(__x86_64__) && defined(__GNUC__)
        __builtin_cpu_init();
        if (!strcmp(n, "avx512f")) supported = __builtin_cpu_supports("avx512f");
        else if (!strcmp(n, "avx2")) supported = __builtin_cpu_supports("avx2");
        else if (!strcmp(n, "x86-64-v4")) supported = __builtin_cpu_supports("x86-64-v4");
        else if (!strcmp(n, "x86-64-v3")) supported = __builtin_cpu_supports("x86-64-v3");
        else if (!strcmp(n, "x86-64-v2")) supported = __builtin_cpu_supports("x86-64-v2");
#endif
        if (!strcmp(n, "default")) supported = 1;
        ck_assert_msg(supported >= 0, "QKV_VECTOR_CLONES (%s) has a clone '%s' that src/tensor/buildinfo.c's "
                      "vector_isa and this test do not know", text, name);
        if (supported) {
            snprintf(want, sizeof want, "%s", n);
            found = true;
        }
    }
    ck_assert_msg(!strcmp(isa, want), "qkv_buildinfo_get says the kernels run '%s'; QKV_VECTOR_CLONES (%s) runs '%s' "
                  "on this CPU", isa, text[0] ? text : "empty: no clones", want);
}
END_TEST

#define BASE                                                                                             \
    "{\"model\": {\"d_model\": 16, \"heads\": 2, \"layers\": 1, \"d_ff\": 32},\n"                        \
    " \"task\": {\"name\": \"recall\", \"pairs\": 3, \"keys\": 8, \"values\": 8},\n"                     \
    " \"train\": {\"steps\": 20, \"batch\": 8, \"eval_every\": 10, \"eval_examples\": 32}}\n"
#define SWEEP                                                                                            \
    "{\"base\": \"base.json\", \"threshold\": 0.9,\n"                                                  \
    " \"variants\": [{\"name\": \"full\"}, {\"name\": \"shared\", \"set\": [\"model.attention.qkv=shared\"]}],\n" \
    " \"seeds\": [0]}\n"

/* a trained run's summary.json says what it was computed with, and `qkv --version` says the same
 * (a run's adds its products' precision) */
START_TEST(test_summary_records_machine) {
    put("base.json", BASE);
    char out[4096];
    const char *q = qkv_test_bin();
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, true, "cd %s && %s train base.json --out run --threads 1 --quiet", TMP, q),
                     0);
    char *text = get("run/summary.json");
    cJSON *s = cJSON_Parse(text);
    ck_assert_msg(s != NULL, "summary.json is not JSON: %s", text);
    check_machine(cJSON_GetObjectItemCaseSensitive(s, "machine"), qkv_buildinfo_get(), "f32");
    ck_assert(cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(s, "steps"))); /* beside the rest, as before */
    /* qkv --version: the version and GEMM build, then "machine: " and the same object */
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, false, "%s --version", q), 0);
    const qkv_buildinfo *b = qkv_buildinfo_get();
    char first[256];
    snprintf(first, sizeof first, "qkv %s, GEMM %s (", QKV_VERSION, b->gemm);
    ck_assert_msg(!strncmp(out, first, strlen(first)), "%s", out);
    const char *line = strstr(out, "\nmachine: ");
    ck_assert_msg(line != NULL, "%s", out);
    cJSON *v = cJSON_Parse(line + 10);
    check_machine(v, b, NULL);
    cJSON *run = cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(s, "machine"), true); /* but the run's precision */
    cJSON_DeleteItemFromObjectCaseSensitive(run, "precision");
    ck_assert(cJSON_Compare(v, run, true));
    cJSON_Delete(run);
    cJSON_Delete(v);
    cJSON_Delete(s);
    free(text);
}
END_TEST

/* runs whose summary.json has no "machine" (written before it was recorded) are finished runs
 * still: a sweep of them aggregates to the same results, and its status counts them done */
START_TEST(test_old_summaries_aggregate) {
    put("base.json", BASE);
    put("abl.json", SWEEP);
    char out[16384];
    const char *q = qkv_test_bin();
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, true, "cd %s && %s ablate abl.json --out s --jobs 2 --quiet", TMP, q),
                     0);
    char *before = untimed("s/results.json");
    ck_assert_ptr_nonnull(strstr(before, "\"name\":\t\"shared\""));
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, true,
                                 "cd %s && for f in s/runs/*/seed0/summary.json; do grep -q '\"machine\":{' \"$f\" && "
                                 "sed -i 's/,\"machine\":{[^}]*}//' \"$f\" && ! grep -q machine \"$f\" || exit 1; done",
                                 TMP), 0);
    ck_assert_int_eq(qkv_test_sh(NULL, 0, true, "cd %s && %s ablate abl.json --out s --report", TMP, q), 0);
    char *after = untimed("s/results.json");
    ck_assert_msg(!strcmp(after, before), "results.json of the summaries without \"machine\" differs");
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, true, "cd %s && %s ablate abl.json --out s --status", TMP, q), 0);
    ck_assert_msg(strstr(out, "2 runs: 2 done, 0 running, 0 failed"), "%s", out);
    free(after);
    free(before);
}
END_TEST

Suite *buildinfo_suite(void) {
    Suite *s = suite_create("buildinfo");
    TCase *tc = tcase_create("machine");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_buildinfo_facts);
    tcase_add_test(tc, test_isa_is_the_kernels_clone);
    tcase_add_test(tc, test_summary_records_machine);
    tcase_add_test(tc, test_old_summaries_aggregate);
    suite_add_tcase(s, tc);
    return s;
}
