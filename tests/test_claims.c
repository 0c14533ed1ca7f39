/* The answer's words as checkable as its numbers (docs/qkv-answer.md and docs/qkv-answer.zh.md):
 *   - a claim that no longer holds fails: a copy of the committed results with one verdict
 *     flipped (and the counts it feeds, as a new aggregation would make them), the documents'
 *     numbers rewritten from it (--update-doc), and the claim that rests on it fails by name;
 *   - words of universal or comparative force stand on the first screen and in the claims table
 *     only inside a claim marker (quotations of the answer the learner was given excepted);
 *   - the first screen is a screen: each of its three answers in at most 120 words (250 Chinese
 *     characters) with at most three numbers, the picture after them;
 *   - a first-screen finding or number from another edition than the sixth names that edition in its
 *     sentence (the sixth's protocol is the one the screen states). */
#define _GNU_SOURCE
#include <check.h>
#include <cjson/cJSON.h>
#include <ctype.h>
#include <regex.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "suites.h"
#include "testutil.h"

#define ROOT ".." /* the tests run from tests/ */

static const char *const ANSWERS[] = {"docs/qkv-answer.md", "docs/qkv-answer.zh.md"};

/* the section of text under the heading that starts with `heading` ("## ..."), up to the next "## "
 * heading; malloc'd, NULL when there is none */
static char *section(const char *text, const char *heading) {
    const char *a = strstr(text, heading);
    if (!a) return NULL;
    const char *b = strstr(a + strlen(heading), "\n## ");
    return strndup(a, b ? (size_t)(b - a) : strlen(a));
}

/* text with what is not stated by us blanked: claims (their markers and their text), HTML
 * comments (the value markers' words), quotations of the seed's answer in 「」 and in “”, and
 * code spans */
static void blank_unowned(char *s) {
    static const struct { const char *open, *close; } SPANS[] = {
        {"<!-- qkv claim: ", "<!-- /claim -->"}, {"<!--", "-->"}, {"\xe3\x80\x8c", "\xe3\x80\x8d"}, /* 「 」 */
        {"\xe2\x80\x9c", "\xe2\x80\x9d"}, /* “ ” */ {"`", "`"},
    };
    for (size_t k = 0; k < sizeof SPANS / sizeof SPANS[0]; k++)
        for (char *p = strstr(s, SPANS[k].open); p; p = strstr(p, SPANS[k].open)) {
            char *e = strstr(p + strlen(SPANS[k].open), SPANS[k].close);
            char *end = e ? e + strlen(SPANS[k].close) : p + strlen(p);
            memset(p, ' ', (size_t)(end - p));
            p = end;
        }
}

/* the words of universal or comparative force found in s (blanked first) into report; their count */
static int forceful_words(const char *doc, const char *part, char *s, char *report, size_t n) {
    static const char *const EN = "\\<(every|all|never|always|fails|wherever|most|much)\\>";
    static const char *const ZH[] = {"\xe9\x83\xbd", "\xe5\x87\xa1\xe6\x98\xaf", "\xe6\x89\x80\xe6\x9c\x89",
                                     "\xe4\xbb\x8e\xe4\xb8\x8d", "\xe6\x80\xbb\xe6\x98\xaf",
                                     "\xe5\xa4\xa7\xe9\x83\xa8\xe5\x88\x86", "\xe5\xa4\x9a\xe6\x95\xb0"};
    /* 都 凡是 所有 从不 总是 大部分 多数 */
    blank_unowned(s);
    int found = 0;
    regex_t re;
    ck_assert_int_eq(regcomp(&re, EN, REG_EXTENDED | REG_ICASE), 0);
    regmatch_t m;
    for (const char *p = s; !regexec(&re, p, 1, &m, p == s ? 0 : REG_NOTBOL); p += m.rm_eo) {
        size_t at = strlen(report);
        snprintf(report + at, n - at, "\n  %s, %s: \"%.*s\" in \"...%.60s\"", doc, part, (int)(m.rm_eo - m.rm_so),
                 p + m.rm_so, p + (m.rm_so > 30 ? m.rm_so - 30 : 0));
        found++;
    }
    regfree(&re);
    for (size_t k = 0; k < sizeof ZH / sizeof ZH[0]; k++)
        for (const char *p = strstr(s, ZH[k]); p; p = strstr(p + 1, ZH[k])) {
            size_t at = strlen(report);
            snprintf(report + at, n - at, "\n  %s, %s: \"%s\"", doc, part, ZH[k]);
            found++;
        }
    return found;
}

/* the first screen and the claims table, by their headings in each language */
static const char *const FIRST[] = {"## The answer in one screen", "## \xe4\xb8\x80\xe5\xb1\x8f\xe7\xad\x94\xe6\xa1\x88"};
static const char *const TABLE[] = {"## The answer you were given, claim by claim",
                                    "## \xe4\xbd\xa0\xe5\xbe\x97\xe5\x88\xb0\xe7\x9a\x84\xe5\x9b\x9e\xe7\xad\x94"};

START_TEST(test_forceful_words_only_in_claims) {
    static char report[3000]; /* Check's message has a limit */
    report[0] = 0;
    int found = 0;
    for (int d = 0; d < 2; d++) {
        char *text = qkv_test_get(ROOT, ANSWERS[d]);
        const char *heads[2] = {FIRST[d], TABLE[d]};
        for (int k = 0; k < 2; k++) {
            char *s = section(text, heads[k]);
            ck_assert_msg(s, "%s: no section \"%s\"", ANSWERS[d], heads[k]);
            found += forceful_words(ANSWERS[d], k ? "the claims table" : "the first screen", s, report, sizeof report);
            free(s);
        }
        free(text);
    }
    ck_assert_msg(found == 0, "%d words of universal or comparative force outside a claim marker "
                  "(<!-- qkv claim: PRED -->...<!-- /claim -->, docs/ablate.md):%s", found, report);
}
END_TEST

/* the rule itself: it finds such a word outside a claim, not inside one nor in a quotation */
START_TEST(test_forceful_rule_catches_and_allows) {
    char report[1024] = "";
    char a[] = "It fails wherever a token must find another.";
    ck_assert_int_eq(forceful_words("d", "p", a, report, sizeof report), 2);
    char b[] = "<!-- qkv claim: a x solved = 0 -->It fails in every seed.<!-- /claim --> "
               "\xe2\x80\x9c" "much worse" "\xe2\x80\x9d" " `all` smallest";
    ck_assert_int_eq(forceful_words("d", "p", b, report, sizeof report), 0);
    char c[] = "\xe5\xae\x83\xe9\x83\xbd\xe5\xad\xa6\xe4\xb8\x8d\xe4\xbc\x9a"; /* 它都学不会 */
    ck_assert_int_eq(forceful_words("d", "p", c, report, sizeof report), 1);
}
END_TEST

/* t with each HTML comment (an unclosed one to the end) overwritten by spaces, in place, so
 * offsets into t are offsets into the original; returns t */
static char *blank_comments(char *t) {
    for (char *p = strstr(t, "<!--"); p; p = strstr(p, "<!--")) {
        char *e = strstr(p, "-->");
        char *end = e ? e + 3 : p + strlen(p);
        memset(p, ' ', (size_t)(end - p));
        p = end;
    }
    return t;
}

/* the words of paragraph s (outside comments) */
static int words(const char *s) {
    char *t = blank_comments(strdup(s)); /* the markers' words are not read; a claim's text is */
    int n = 0;
    bool in = false;
    for (const unsigned char *p = (const unsigned char *)t; *p; p++) {
        bool w = !isspace(*p);
        n += w && !in;
        in = w;
    }
    free(t);
    return n;
}

/* the CJK characters (U+3000 and above, punctuation too) of s outside comments */
static int cjk_chars(const char *s) {
    int n = 0;
    bool comment = false;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (!strncmp((const char *)p, "<!--", 4)) comment = true;
        if (comment && !strncmp((const char *)p, "-->", 3)) comment = false;
        if (!comment && *p >= 0xE3 && *p < 0xF0) n++; /* the lead byte of a 3-byte character from U+3000 */
    }
    return n;
}

/* the numbers a reader of s is given to weigh: value markers other than a seed count, a budget, the
 * baseline's own number (`full`) or a test's p (which belong to a number) */
static int numbers(const char *s) {
    int n = 0;
    for (const char *p = strstr(s, "<!-- qkv value: "); p; p = strstr(p + 1, "<!-- qkv value: ")) {
        char dir[512], variant[128], field[128];
        if (sscanf(p + strlen("<!-- qkv value: "), "%511s %127s %127s", dir, variant, field) != 3) continue;
        if (!strcmp(variant, "full") || !strcmp(field, "seeds") || !strcmp(field, "budget") ||
            !strncmp(field, "fisher:", 7))
            continue;
        n++;
    }
    return n;
}

START_TEST(test_first_screen_is_a_screen) {
    static const char *const ASK[2][3] = {
        {"**Why three kinds?**", "**Can I use only one kind?**", "**Can I add more?**"},
        {"**\xe4\xb8\xba\xe4\xbb\x80\xe4\xb9\x88\xe8\xa6\x81\xe4\xb8\x89\xe7\xa7\x8d\xef\xbc\x9f**",     /* 为什么要三种？ */
         "**\xe5\x8f\xaa\xe7\x94\xa8\xe4\xb8\x80\xe7\xa7\x8d\xe8\xa1\x8c\xe4\xb8\x8d\xe8\xa1\x8c\xef\xbc\x9f**", /* 只用一种行不行？ */
         "**\xe8\x83\xbd\xe5\x86\x8d\xe5\x8a\xa0\xe5\x8f\x82\xe6\x95\xb0\xe5\x90\x97\xef\xbc\x9f**"}};  /* 能再加参数吗？ */
    for (int d = 0; d < 2; d++) {
        char *text = qkv_test_get(ROOT, ANSWERS[d]);
        char *s = section(text, FIRST[d]);
        ck_assert_msg(s, "%s: no first screen (\"%s\")", ANSWERS[d], FIRST[d]);
        const char *last = s;
        for (int q = 0; q < 3; q++) {
            const char *a = strstr(s, ASK[d][q]);
            ck_assert_msg(a, "%s: the first screen has no answer starting \"%s\"", ANSWERS[d], ASK[d][q]);
            ck_assert_msg(a >= last, "%s: the answers are not in the order of the questions", ANSWERS[d]);
            const char *e = strstr(a, "\n\n");
            char *p = strndup(a, e ? (size_t)(e - a) : strlen(a));
            int size = d == 0 ? words(p) : cjk_chars(p), most = d == 0 ? 120 : 250, nums = numbers(p);
            ck_assert_msg(size <= most, "%s: the answer \"%s\" runs to %d %s (a screen holds %d)", ANSWERS[d],
                          ASK[d][q], size, d == 0 ? "words" : "Chinese characters", most);
            ck_assert_msg(nums <= 3, "%s: the answer \"%s\" gives %d numbers (at most 3, each with its baseline)",
                          ANSWERS[d], ASK[d][q], nums);
            free(p);
            last = a;
        }
        const char *pic = strstr(s, "![");
        ck_assert_msg(pic && pic > last, "%s: the picture does not follow the three answers", ANSWERS[d]);
        free(s);
        free(text);
    }
}
END_TEST

/* ---- a first-screen finding from another edition says so ---- */

/* the words that name the edition a result directory comes from, in English and in Chinese; NULL
 * for the sixth edition, whose protocol the first screen states (nothing to name) */
static const char *edition_of(const char *dir, int zh) {
    static const struct { const char *prefix, *en, *zh; } ED[] = {
        {"docs/results/study-sixth", NULL, NULL},
        {"docs/results/study-fourth", "fourth edition", "\xe7\xac\xac\xe5\x9b\x9b\xe7\x89\x88"}, /* 第四版 */
        {"docs/results/study-third", "third edition", "\xe7\xac\xac\xe4\xb8\x89\xe7\x89\x88"},   /* 第三版 */
        {"docs/results/study-quick", "second edition", "\xe7\xac\xac\xe4\xba\x8c\xe7\x89\x88"},  /* 第二版 */
        {"docs/results/study-extra", "second edition", "\xe7\xac\xac\xe4\xba\x8c\xe7\x89\x88"},
        {"docs/results/study-bf16", "bf16 edition", "bf16"},
        {"docs/results/", "shipped ablations", "\xe5\x86\x85\xe7\xbd\xae\xe6\xb6\x88\xe8\x9e\x8d"}, /* 内置消融 */
    };
    for (size_t k = 0; k < sizeof ED / sizeof ED[0]; k++)
        if (!strncmp(dir, ED[k].prefix, strlen(ED[k].prefix))) return zh ? ED[k].zh : ED[k].en;
    return "an edition";
}

/* does s[a, b) hold `needle`, ignoring ASCII case? */
static bool holds(const char *s, size_t a, size_t b, const char *needle) {
    size_t n = strlen(needle);
    for (size_t i = a; i + n <= b; i++)
        if (!strncasecmp(s + i, needle, n)) return true;
    return false;
}

/* is s[i] the end of a sentence (". ", "? ", "! ", a blank line, 。？！)? */
static bool sentence_end(const char *s, size_t i) {
    if (strchr(".?!", s[i]) && (s[i + 1] == ' ' || s[i + 1] == '\n')) return true;
    if (s[i] == '\n' && s[i + 1] == '\n') return true;
    return !strncmp(s + i, "\xe3\x80\x82", 3) || !strncmp(s + i, "\xef\xbc\x9f", 3) || !strncmp(s + i, "\xef\xbc\x81", 3);
}

/* the findings (claims) and numbers (values) of the first screen in `screen` whose result directory
 * is not the sixth edition's and whose sentence does not name the edition they come from, into
 * report; their count */
static int unnamed_editions(const char *doc, const char *screen, int zh, char *report, size_t n) {
    char *plain = blank_comments(strdup(screen)); /* the reader's text, the offsets kept */
    int bad = 0;
    static const char *const MARK[] = {"<!-- qkv claim: ", "<!-- qkv value: "};
    for (int m = 0; m < 2; m++)
        for (const char *p = strstr(screen, MARK[m]); p; p = strstr(p + 1, MARK[m])) {
            const char *stop = strstr(p, m == 0 ? "<!-- /claim -->" : "<!-- end -->");
            if (!stop) continue;
            size_t a = (size_t)(p - screen), b = (size_t)(stop - screen);
            while (a > 0 && !sentence_end(plain, a - 1)) a--;
            while (plain[b] && !sentence_end(plain, b)) b++;
            const char *e = strstr(p, "-->"); /* the marker's directories: every word starting docs/results/ */
            for (const char *w = strstr(p, "docs/results/"); w && w < e; w = strstr(w + 1, "docs/results/")) {
                char dir[512];
                if (sscanf(w, "%511s", dir) != 1) continue;
                const char *name = edition_of(dir, zh);
                if (!name || holds(plain, a, b, name)) continue;
                char line[700];
                snprintf(line, sizeof line, "\n%s: %s from %s does not name the %s in its sentence", doc,
                         m == 0 ? "a claim" : "a number", dir, name);
                if (strlen(report) + strlen(line) < n) strcat(report, line);
                bad++;
                break;
            }
        }
    free(plain);
    return bad;
}

/* every number and finding on the first screen comes from the sixth edition's protocol, or its
 * sentence names the edition it comes from */
START_TEST(test_first_screen_names_its_editions) {
    static char report[3000];
    report[0] = 0;
    int bad = 0;
    for (int d = 0; d < 2; d++) {
        char *text = qkv_test_get(ROOT, ANSWERS[d]);
        char *s = section(text, FIRST[d]);
        ck_assert_msg(s, "%s: no first screen", ANSWERS[d]);
        bad += unnamed_editions(ANSWERS[d], s, d, report, sizeof report);
        free(s);
        free(text);
    }
    ck_assert_msg(bad == 0, "%d first-screen findings or numbers from another edition without its name:%s", bad, report);
}
END_TEST

/* the rule itself: a fourth-edition claim needs "fourth edition" in its sentence, a sixth-edition one nothing */
START_TEST(test_edition_rule_catches_and_allows) {
    char report[2000] = "";
    const char *unnamed = "Tied solved <!-- qkv claim: docs/results/study-fourth/recall qk_tied solved < full solved -->1 of 9"
                          "<!-- /claim -->. The fourth edition says more.";
    ck_assert_int_eq(unnamed_editions("d", unnamed, 0, report, sizeof report), 1);
    const char *named = "In the fourth edition tied solved <!-- qkv claim: docs/results/study-fourth/recall qk_tied solved "
                        "< full solved -->1 of 9<!-- /claim -->.";
    ck_assert_int_eq(unnamed_editions("d", named, 0, report, sizeof report), 0);
    const char *sixth = "Tied cost <!-- qkv value: docs/results/study-sixth/text-d64-why qk_tied delta -->+0.084<!-- end -->.";
    ck_assert_int_eq(unnamed_editions("d", sixth, 0, report, sizeof report), 0);
    const char *shipped = "\xe6\x8e\x92\xe5\xba\x8f <!-- qkv value: docs/results/sort shared solved_pct -->100<!-- end -->%"
                          "\xe3\x80\x82\xe5\x86\x85\xe7\xbd\xae\xe6\xb6\x88\xe8\x9e\x8d"; /* 排序 ...%。内置消融: another sentence */
    ck_assert_int_eq(unnamed_editions("d", shipped, 1, report, sizeof report), 1);
}
END_TEST

/* ---- a claim that no longer holds fails ---- */

static char TMP[4096];
static void setup(void) { qkv_test_mkdtemp(TMP, sizeof TMP, "claims"); }
static void teardown(void) { qkv_test_rmtree(TMP); }

/* in TMP's copy of DIR/results.json, variant's run of seed index `seed` turned unsolved (its step and
 * the variant's counts as an aggregation of the runs would make them) */
static void unsolve(const char *dir, const char *variant, int seed) {
    char rel[512];
    snprintf(rel, sizeof rel, "%s/results.json", dir);
    char *t = qkv_test_get(TMP, rel);
    cJSON *root = cJSON_Parse(t);
    free(t);
    ck_assert_ptr_nonnull(root);
    cJSON *v = NULL, *vars = cJSON_GetObjectItemCaseSensitive(root, "variants");
    cJSON_ArrayForEach(v, vars) if (!strcmp(cJSON_GetObjectItemCaseSensitive(v, "name")->valuestring, variant)) break;
    ck_assert_msg(v, "%s: no variant %s", rel, variant);
    cJSON *run = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(v, "runs"), seed);
    ck_assert_ptr_nonnull(run);
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(run, "verdict")->valuestring, "solved");
    cJSON_ReplaceItemInObjectCaseSensitive(run, "verdict", cJSON_CreateString("unsolved"));
    cJSON_ReplaceItemInObjectCaseSensitive(run, "steps_to_threshold", cJSON_CreateNull());
    int solved = cJSON_GetObjectItemCaseSensitive(v, "solved")->valueint;
    int unsolved = cJSON_GetObjectItemCaseSensitive(v, "unsolved")->valueint;
    cJSON_ReplaceItemInObjectCaseSensitive(v, "solved", cJSON_CreateNumber(solved - 1));
    cJSON_ReplaceItemInObjectCaseSensitive(v, "unsolved", cJSON_CreateNumber(unsolved + 1));
    char *out = cJSON_Print(root);
    qkv_test_put(TMP, rel, out);
    free(out);
    cJSON_Delete(root);
}

START_TEST(test_flipped_verdict_fails_its_claim) {
    /* the answers and every committed results.json and table they quote, copied */
    ck_assert_int_eq(qkv_test_sh(NULL, 0, true, "cd %s && find docs/results -name results.json -o -name '*.md' | tar cf - -T - "
                                 "docs/qkv-answer.md docs/qkv-answer.zh.md | tar xf - -C '%s'", ROOT, TMP), 0);
    char out[8192];
    for (int d = 0; d < 2; d++) {
        int rc = qkv_test_sh(out, sizeof out, true, "cd '%s' && '%s' summarize --check-doc %s", TMP, qkv_test_bin(),
                             ANSWERS[d]);
        ck_assert_msg(rc == 0 && strstr(out, "claims hold"), "the copy of %s should check as the original: %s",
                      ANSWERS[d], out);
    }
    /* `shared` learned sort in every seed: one seed's verdict flipped */
    unsolve("docs/results/sort", "shared", 3);
    for (int d = 0; d < 2; d++) {
        int rc = qkv_test_sh(out, sizeof out, true, "cd '%s' && '%s' summarize --update-doc %s", TMP, qkv_test_bin(),
                             ANSWERS[d]);
        ck_assert_msg(rc == 1, "%s: the numbers rewritten, a claim of 10 of 10 should fail (exit %d): %s", ANSWERS[d],
                      rc, out);
        ck_assert_msg(strstr(out, "no longer holds") && strstr(out, "docs/results/sort shared"),
                      "%s: the message should name the claim and its predicate: %s", ANSWERS[d], out);
    }
}
END_TEST

Suite *claims_suite(void) {
    Suite *s = suite_create("claims");
    TCase *tc = tcase_create("answers");
    tcase_add_test(tc, test_forceful_rule_catches_and_allows);
    tcase_add_test(tc, test_forceful_words_only_in_claims);
    tcase_add_test(tc, test_first_screen_is_a_screen);
    tcase_add_test(tc, test_edition_rule_catches_and_allows);
    tcase_add_test(tc, test_first_screen_names_its_editions);
    suite_add_tcase(s, tc);
    TCase *m = tcase_create("mutation");
    tcase_add_checked_fixture(m, setup, teardown);
    tcase_set_timeout(m, 120);
    tcase_add_test(m, test_flipped_verdict_fails_its_claim);
    suite_add_tcase(s, m);
    return s;
}
