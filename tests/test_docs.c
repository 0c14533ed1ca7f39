/* Documents of the present: README.md and docs/NAME.md describe what qkv is and does now. What
 * they said before, and dated logs of work, live in docs/history/ (not checked here, but for its
 * links), and generated results in docs/results/ are data (not checked).
 *
 * The diary rule, line by line, outside fenced code blocks (they hold commands and what the
 * commands print). A line is flagged when it holds
 *   - an issue or pull-request number: "issue 12", "issue #12", "issues 3 and 4", "PR 7",
 *     "pull request 7", "(#12)";
 *   - an ISO date (2026-12-02) in a heading, or as a dated entry: a paragraph, list item,
 *     numbered item, table row or bold text that begins with the date. A date inside a sentence
 *     that says when and where something was measured ("measured 2026-11-30 with --jobs 2 on 2
 *     vCPUs of an AMD EPYC") is allowed, even where the sentence's wrapping puts it first on a
 *     line: a figure needs its machine and its date;
 *   - work-session narration: "this session", "last session", "previous session", "the tenth
 *     session" (an ordinal before "session"), "this time", "last time";
 *   - an ordinal of a pass, round, session, edition, attempt or iteration in a heading ("Second
 *     pass: ...", "Hostile input, round two", "The third edition: ..."), or "round two",
 *     "second round" (a round counted in words) anywhere.
 * Each offence is reported as FILE:LINE: what matched, and the line.
 *
 * Besides: docs/performance.md is a reference of at most 400 lines; docs/qkv-answer.md holds one
 * edition (no heading names an edition); the README's documentation list names docs/history/;
 * every relative link in README.md, docs/NAME.md and docs/history/NAME.md reaches a file, and its
 * #anchor a heading of that file (GitHub's slugs); every citation of a section by name
 * (`docs/<name>.md, "<heading>"`, on one line) in the sources, tests, scripts, benchmarks, build
 * files and documents names the beginning of a heading of that document. */
#define _GNU_SOURCE
#include <check.h>
#include <ctype.h>
#include <dirent.h>
#include <ftw.h>
#include <regex.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "suites.h"
#include "testutil.h"

#define ROOT ".." /* the tests run from tests/ */

/* ---- the diary rule ---- */

#define DATE "[12][0-9]{3}-[01][0-9]-[0-3][0-9]"
#define ORDINAL "(first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|[0-9]+(st|nd|rd|th))"
#define COUNT_WORD "(one|two|three|four|five|six|seven|eight|nine|ten)"

typedef struct {
    const char *what;  /* said in the report */
    const char *regex; /* POSIX extended, case-insensitive */
    bool heading_only; /* applies to heading lines only */
    bool para_only;    /* applies to the first line of a paragraph only (a wrapped line may begin with
                        * a date inside a sentence) */
} diary_pattern;

static const diary_pattern PATTERNS[] = {
    {"an issue or pull-request number", "\\<(issues?|pr|pull requests?)[[:space:]]+#?[0-9]+", false, false},
    {"an issue or pull-request number", "\\(#[0-9]+\\)", false, false},
    {"a date in a heading", DATE, true, false},
    {"a dated entry",
     "^[[:space:]]*([-*+][[:space:]]+|[0-9]+[.)][[:space:]]+|\\|[[:space:]]*)(\\*\\*|__|\\*|_)?\\(?" DATE, false,
     false},
    {"a dated entry", "^[[:space:]]*(\\*\\*|__|\\*|_)\\(?" DATE, false, false},
    {"a dated entry", "^[[:space:]]*\\(?" DATE, false, true},
    {"work-session narration", "\\<(this|last|previous|earlier|later|next|" ORDINAL ")[[:space:]]+sessions?\\>", false,
     false},
    {"work-session narration", "\\<(this|last)[[:space:]]+time\\>", false, false},
    {"an ordinal of a pass or round in a heading",
     "\\<" ORDINAL "[[:space:]]+(pass|round|session|edition|attempt|iteration)s?\\>", true, false},
    {"an ordinal of a pass or round in a heading",
     "\\<(pass|round|session|edition|attempt|iteration)[[:space:]]+(" COUNT_WORD "|[0-9]+)\\>", true, false},
    {"a round counted in words", "\\<(round[[:space:]]+" COUNT_WORD "|" ORDINAL "[[:space:]]+round)\\>", false, false},
};
#define NPATTERNS (sizeof PATTERNS / sizeof PATTERNS[0])

static regex_t RE[NPATTERNS];

static void compile_patterns(void) {
    for (size_t i = 0; i < NPATTERNS; i++) {
        int rc = regcomp(&RE[i], PATTERNS[i].regex, REG_EXTENDED | REG_ICASE | REG_NOSUB);
        ck_assert_msg(rc == 0, "pattern %zu does not compile: %s", i, PATTERNS[i].regex);
    }
}

static void free_patterns(void) {
    for (size_t i = 0; i < NPATTERNS; i++) regfree(&RE[i]);
}

static bool is_fence(const char *line) {
    while (*line == ' ') line++;
    return !strncmp(line, "```", 3) || !strncmp(line, "~~~", 3);
}

/* the diary rule over text (name is what the report calls it): the number of lines flagged,
 * each appended to *report as "name:LINE: what: the line" */
static int scan_diary(const char *name, const char *text, char **report) {
    int found = 0, lineno = 0;
    bool fenced = false, para_start = true;
    for (const char *p = text; *p;) {
        const char *e = strchr(p, '\n');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        char *line = strndup(p, n);
        ck_assert_ptr_nonnull(line);
        lineno++;
        if (is_fence(line)) fenced = !fenced;
        else if (!fenced) {
            bool heading = line[0] == '#';
            for (size_t i = 0; i < NPATTERNS; i++) {
                if (PATTERNS[i].heading_only && !heading) continue;
                if (PATTERNS[i].para_only && !para_start) continue;
                if (regexec(&RE[i], line, 0, NULL, 0) != 0) continue;
                char *was = *report;
                ck_assert_int_ge(asprintf(report, "%s\n  %s:%d: %s: %.160s", was ? was : "", name, lineno,
                                          PATTERNS[i].what, line),
                                 0);
                free(was);
                found++;
                break;
            }
        }
        para_start = line[strspn(line, " \t")] == 0;
        free(line);
        p += n + (e != NULL);
    }
    return found;
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* README.md and docs/NAME.md, sorted, as paths relative to the root (malloc'd, NULL-ended) */
static char **present_documents(void) {
    size_t n = 0, cap = 16;
    char **v = malloc(cap * sizeof *v);
    ck_assert_ptr_nonnull(v);
    v[n++] = strdup("README.md");
    DIR *d = opendir(ROOT "/docs");
    ck_assert_msg(d != NULL, "cannot open " ROOT "/docs (the tests run from tests/)");
    for (struct dirent *de; (de = readdir(d));) {
        size_t len = strlen(de->d_name);
        if (len < 4 || strcmp(de->d_name + len - 3, ".md")) continue;
        if (n + 2 > cap) {
            cap *= 2;
            v = realloc(v, cap * sizeof *v);
            ck_assert_ptr_nonnull(v);
        }
        ck_assert_int_ge(asprintf(&v[n++], "docs/%s", de->d_name), 0);
    }
    closedir(d);
    qsort(v + 1, n - 1, sizeof *v, by_name);
    v[n] = NULL;
    return v;
}

static void free_list(char **v) {
    for (size_t i = 0; v[i]; i++) free(v[i]);
    free(v);
}

static int count_lines(const char *text) {
    int n = 0;
    for (const char *p = text; *p; p++) n += *p == '\n';
    return n;
}

/* ---- headings and their slugs ---- */

/* GitHub's anchor of a heading's text: lower case; letters, digits, '-', '_' and non-ASCII bytes
 * kept, spaces made '-', everything else dropped */
static char *slug_of(const char *heading) {
    char *s = malloc(strlen(heading) + 1), *o = s;
    ck_assert_ptr_nonnull(s);
    for (const unsigned char *p = (const unsigned char *)heading; *p; p++) {
        if (isalnum(*p) || *p == '-' || *p == '_' || *p >= 0x80) *o++ = (char)tolower(*p);
        else if (*p == ' ') *o++ = '-';
    }
    *o = 0;
    return s;
}

/* the headings of a Markdown text outside fences, each without its #s (malloc'd, NULL-ended) */
static char **headings_of(const char *text) {
    size_t n = 0, cap = 32;
    char **v = malloc(cap * sizeof *v);
    ck_assert_ptr_nonnull(v);
    bool fenced = false;
    for (const char *p = text; *p;) {
        const char *e = strchr(p, '\n');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (is_fence(p)) fenced = !fenced;
        else if (!fenced && *p == '#') {
            const char *h = p;
            while (*h == '#') h++;
            if (*h == ' ') {
                while (*h == ' ') h++;
                size_t k = len - (size_t)(h - p);
                while (k && (h[k - 1] == ' ' || h[k - 1] == '#')) k--;
                if (n + 2 > cap) {
                    cap *= 2;
                    v = realloc(v, cap * sizeof *v);
                    ck_assert_ptr_nonnull(v);
                }
                v[n++] = strndup(h, k);
            }
        }
        p += len + (e != NULL);
    }
    v[n] = NULL;
    return v;
}

/* does a heading of text have this anchor (duplicates get -1, -2, ... as on GitHub)? */
static bool has_anchor(const char *text, const char *anchor) {
    char **h = headings_of(text);
    bool found = false;
    size_t n = 0;
    while (h[n]) n++;
    char **slugs = calloc(n + 1, sizeof *slugs);
    ck_assert_ptr_nonnull(slugs);
    for (size_t i = 0; i < n && !found; i++) {
        slugs[i] = slug_of(h[i]);
        int dup = 0;
        for (size_t j = 0; j < i; j++) dup += !strcmp(slugs[j], slugs[i]);
        char *s = NULL;
        if (dup) ck_assert_int_ge(asprintf(&s, "%s-%d", slugs[i], dup), 0);
        found = !strcmp(s ? s : slugs[i], anchor);
        free(s);
    }
    for (size_t i = 0; i < n; i++) free(slugs[i]);
    free(slugs);
    free_list(h);
    return found;
}

/* ---- the tests ---- */

/* the rule catches what it is for and passes what it allows: so a clean scan means something */
START_TEST(test_diary_rule_catches_and_allows) {
    compile_patterns();
    static const char *const DIARY[] = {
        "## Issue 23 on an AMD Zen 4 with AVX-512",
        "The fix for issue #12 made it refuse.",
        "Both issues 3 and 4 are closed.",
        "Merged in PR 7.",
        "Grouping was removed (#41).",
        "## Results (2026-12-02)",
        "2026-12-02: the sweep got faster.",
        "- 2026-11-30: re-measured",
        "| 2026-11-29 | config | 20 | none |",
        "**2026-12-01** the pool spins.",
        "Tried this session, not committed.",
        "As the previous session measured,",
        "the tenth session found nothing",
        "This time the sweep ran alone; last time it did not.",
        "## Second pass: every command, every file",
        "## Hostile input, round two",
        "### The third edition: what was run",
        "The commands were tried again in round two.",
        "A second round of fixes followed.",
    };
    static const char *const PRESENT[] = {
        "Measured 2026-11-30 with `--jobs 2` on 2 vCPUs of an AMD EPYC with AVX-512.",
        "| configs/recall.json | 3 min 25 s (`time make demo`, 2026-12-02, AMD EPYC Zen 3) |",
        "Each run resumes its session from the checkpoint; one line per session.",
        "The issue's example of 2 ulp is not met.",
        "A row with none is zero; each head is computed in one pass.",
        "## The study: what was run",
        "make study-second  # the second edition (configs/study/quick/)",
        "round 1/3: qkv     36.31 runs/min (19.8 s)",
        "3 rounds alternating the options, medians",
        "<!-- qkv table: docs/results/search-previous-token/heads.md#1 cols=ablation -->",
        "the time: 4.21 s, 2,849 lines",
        "The commands ran at commit 24c3777, on\n2026-12-02 between 16:38Z and 16:50Z.",
    };
    for (size_t i = 0; i < sizeof DIARY / sizeof DIARY[0]; i++) {
        char *report = NULL;
        ck_assert_msg(scan_diary("t.md", DIARY[i], &report) == 1, "not flagged: %s", DIARY[i]);
        free(report);
    }
    for (size_t i = 0; i < sizeof PRESENT / sizeof PRESENT[0]; i++) {
        char *report = NULL;
        ck_assert_msg(scan_diary("t.md", PRESENT[i], &report) == 0, "flagged:%s", report ? report : "");
        free(report);
    }
    /* fenced blocks are commands and their output, not prose */
    char *report = NULL;
    ck_assert_int_eq(scan_diary("t.md", "```\n## Issue 23 (2026-12-02)\n```\nissue 4\n", &report), 1);
    ck_assert_ptr_nonnull(strstr(report, "t.md:4: an issue or pull-request number: issue 4"));
    free(report);
    free_patterns();
}
END_TEST

/* README.md and docs/NAME.md carry no diary: each offence named FILE:LINE */
START_TEST(test_documents_carry_no_diary) {
    compile_patterns();
    char **docs = present_documents();
    char *report = NULL;
    int found = 0;
    for (size_t i = 0; docs[i]; i++) {
        char *text = qkv_test_get(ROOT, docs[i]);
        found += scan_diary(docs[i], text, &report);
        free(text);
    }
    ck_assert_msg(found == 0,
                  "%d lines read as a work log (issue numbers, dated entries, sessions, rounds; "
                  "tests/test_docs.c says the rule): rewrite them in the present, or move them to "
                  "docs/history/:%s",
                  found, report ? report : "");
    free(report);
    free_list(docs);
    free_patterns();
}
END_TEST

START_TEST(test_performance_is_a_reference) {
    char *text = qkv_test_get(ROOT, "docs/performance.md");
    int n = count_lines(text);
    ck_assert_msg(n <= 400, "docs/performance.md has %d lines: a reference of at most 400 (dated "
                  "measurements go to docs/history/performance-log.md)", n);
    free(text);
}
END_TEST

/* the answer holds one edition: no heading of it names an edition */
START_TEST(test_answer_holds_one_edition) {
    char *text = qkv_test_get(ROOT, "docs/qkv-answer.md");
    char **h = headings_of(text);
    ck_assert_ptr_nonnull(h[0]);
    for (size_t i = 0; h[i]; i++) {
        char *lower = slug_of(h[i]);
        ck_assert_msg(!strstr(lower, "edition"),
                      "docs/qkv-answer.md has a heading for an edition (\"%s\"): earlier editions go to "
                      "docs/history/qkv-answer-editions.md", h[i]);
        free(lower);
    }
    free_list(h);
    free(text);
}
END_TEST

START_TEST(test_readme_lists_history) {
    char *text = qkv_test_get(ROOT, "README.md");
    const char *list = strstr(text, "\n## Documentation\n");
    ck_assert_msg(list != NULL, "README.md has no \"## Documentation\" section");
    const char *end = strstr(list + 1, "\n## ");
    char *section = strndup(list, end ? (size_t)(end - list) : strlen(list));
    ck_assert_msg(strstr(section, "](docs/history/)") != NULL,
                  "README.md's documentation list does not name docs/history/");
    free(section);
    free(text);
}
END_TEST

/* one document's relative links: the file exists, and an #anchor of a .md file is a heading */
static int check_links(const char *doc, char **report) {
    char *text = qkv_test_get(ROOT, doc);
    char *dir = strdup(doc);
    char *slash = strrchr(dir, '/');
    if (slash) slash[1] = 0;
    else dir[0] = 0;
    int bad = 0, lineno = 0;
    bool fenced = false;
    for (const char *p = text; *p;) {
        const char *e = strchr(p, '\n');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        lineno++;
        if (is_fence(p)) fenced = !fenced;
        for (const char *q = p; !fenced && (q = strstr(q, "](")) && q < p + len; q += 2) {
            const char *t = q + 2, *close = memchr(t, ')', (size_t)(p + len - t));
            if (!close) break;
            char *target = strndup(t, (size_t)(close - t));
            if (!strstr(target, "://") && strncmp(target, "mailto:", 7)) {
                char *hash = strchr(target, '#');
                char *anchor = hash ? hash + 1 : NULL;
                if (hash) *hash = 0;
                char *path = NULL;
                ck_assert_int_ge(asprintf(&path, "%s/%s%s", ROOT, dir, target[0] ? target : doc + strlen(dir)), 0);
                const char *problem = NULL;
                if (access(path, F_OK) != 0) problem = "no such file";
                else if (anchor && anchor[0] && strlen(path) > 3 && !strcmp(path + strlen(path) - 3, ".md")) {
                    char *linked = qkv_test_get(ROOT, path + strlen(ROOT) + 1);
                    if (!has_anchor(linked, anchor)) problem = "no heading with this anchor";
                    free(linked);
                }
                if (problem) {
                    char *was = *report;
                    ck_assert_int_ge(asprintf(report, "%s\n  %s:%d: (%.*s): %s", was ? was : "", doc, lineno,
                                              (int)(close - t), t, problem),
                                     0);
                    free(was);
                    bad++;
                }
                free(path);
            }
            free(target);
        }
        p += len + (e != NULL);
    }
    free(dir);
    free(text);
    return bad;
}

START_TEST(test_links_reach_files_and_headings) {
    char **docs = present_documents();
    char *report = NULL;
    int bad = 0;
    for (size_t i = 0; docs[i]; i++) bad += check_links(docs[i], &report);
    DIR *d = opendir(ROOT "/docs/history");
    ck_assert_msg(d != NULL, "no docs/history/");
    for (struct dirent *de; (de = readdir(d));) {
        size_t len = strlen(de->d_name);
        if (len < 4 || strcmp(de->d_name + len - 3, ".md")) continue;
        char *doc = NULL;
        ck_assert_int_ge(asprintf(&doc, "docs/history/%s", de->d_name), 0);
        bad += check_links(doc, &report);
        free(doc);
    }
    closedir(d);
    ck_assert_msg(bad == 0, "%d links lead nowhere:%s", bad, report ? report : "");
    free(report);
    free_list(docs);
}
END_TEST

/* ---- citations of a section by name: docs/<name>.md, "<heading>" ---- */

static regex_t CITE;
static char *CITE_REPORT;
static int CITE_BAD, CITE_SEEN;

static void check_citations(const char *rel) {
    char *text = qkv_test_get(ROOT, rel);
    int lineno = 1;
    const char *line = text;
    regmatch_t m[3];
    for (const char *p = text; regexec(&CITE, p, 3, m, p == text ? 0 : REG_NOTBOL) == 0; p += m[0].rm_eo) {
        for (; line < p + m[0].rm_so; line++) lineno += *line == '\n';
        char *doc = NULL, *title = strndup(p + m[2].rm_so, (size_t)(m[2].rm_eo - m[2].rm_so));
        ck_assert_int_ge(asprintf(&doc, "docs/%.*s.md", (int)(m[1].rm_eo - m[1].rm_so), p + m[1].rm_so), 0);
        char *path = NULL;
        ck_assert_int_ge(asprintf(&path, "%s/%s", ROOT, doc), 0);
        bool found = false;
        if (access(path, F_OK) == 0) {
            char *target = qkv_test_get(ROOT, doc);
            char **h = headings_of(target);
            for (size_t i = 0; h[i] && !found; i++) found = !strncmp(h[i], title, strlen(title));
            free_list(h);
            free(target);
        }
        CITE_SEEN++;
        if (!found) {
            char *was = CITE_REPORT;
            ck_assert_int_ge(asprintf(&CITE_REPORT, "%s\n  %s:%d: %s, \"%s\": no such heading", was ? was : "", rel,
                                      lineno, doc, title),
                             0);
            free(was);
            CITE_BAD++;
        }
        free(path);
        free(doc);
        free(title);
    }
    free(text);
}

static const char *const SOURCE_EXT[] = {".c", ".h", ".md", ".sh", ".py", ".mk", NULL};

static int visit(const char *path, const struct stat *st, int type, struct FTW *ftw) {
    (void)st;
    (void)ftw;
    if (type != FTW_F) return 0;
    size_t len = strlen(path);
    for (size_t i = 0; SOURCE_EXT[i]; i++) {
        size_t k = strlen(SOURCE_EXT[i]);
        if (len > k && !strcmp(path + len - k, SOURCE_EXT[i])) {
            check_citations(path + strlen(ROOT) + 1);
            break;
        }
    }
    return 0;
}

START_TEST(test_cited_sections_exist) {
    int rc = regcomp(&CITE, "docs/([A-Za-z0-9_-]+)\\.md, \\\\?\"([^\"\\\\]+)\\\\?\"", REG_EXTENDED | REG_NEWLINE);
    ck_assert_int_eq(rc, 0);
    CITE_REPORT = NULL;
    CITE_BAD = CITE_SEEN = 0;
    static const char *const TREES[] = {"src", "tests", "scripts", "bench", "mk"};
    for (size_t i = 0; i < sizeof TREES / sizeof TREES[0]; i++) {
        char *dir = NULL;
        ck_assert_int_ge(asprintf(&dir, "%s/%s", ROOT, TREES[i]), 0);
        if (access(dir, F_OK) == 0) ck_assert_int_eq(nftw(dir, visit, 16, FTW_PHYS), 0);
        free(dir);
    }
    check_citations("Makefile");
    char **docs = present_documents();
    for (size_t i = 0; docs[i]; i++) check_citations(docs[i]);
    free_list(docs);
    regfree(&CITE);
    ck_assert_msg(CITE_SEEN > 0, "no citation found: the pattern no longer matches how sections are cited");
    ck_assert_msg(CITE_BAD == 0, "%d citations name a section that does not exist:%s", CITE_BAD,
                  CITE_REPORT ? CITE_REPORT : "");
    free(CITE_REPORT);
}
END_TEST

Suite *docs_suite(void) {
    Suite *s = suite_create("docs");
    TCase *tc = tcase_create("present");
    tcase_add_test(tc, test_diary_rule_catches_and_allows);
    tcase_add_test(tc, test_documents_carry_no_diary);
    tcase_add_test(tc, test_performance_is_a_reference);
    tcase_add_test(tc, test_answer_holds_one_edition);
    tcase_add_test(tc, test_readme_lists_history);
    tcase_add_test(tc, test_links_reach_files_and_headings);
    tcase_add_test(tc, test_cited_sections_exist);
    suite_add_tcase(s, tc);
    return s;
}
