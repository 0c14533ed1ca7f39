/* The fortunes corpora: fortune files as one text. task.corpus fortunes is the fortune files of
 * Debian's English fortunes package (with fortunes-min, which it depends on), fortunes-zh those of
 * its Chinese fortunes-zh; each reads its package's own files by name (FORTUNES_EN, FORTUNES_ZH),
 * so another fortunes-* package installed beside it does not change it. Given task.path, a
 * corpus is every fortune file of that directory.
 *
 * A fortune file (strfile(1)'s input) is plain text whose fortunes are separated by lines
 * holding only "%" (or "%" and a carriage return). The directory also holds strfile's .dat indexes (binary) and, in Debian,
 * NAME.u8 symlinks to the same files; only regular files whose names end in neither count,
 * read in byte order of their names. The corpus is every fortune once (an exact duplicate of
 * an earlier one is dropped, so no held-out fortune is also a training one) in one fixed
 * shuffled order, each followed by the line "%": "fortune\n%\nfortune\n%\n...". The shuffle
 * keeps any one file (a topic: zippy, tao, work...) from filling the held-out tail, so the
 * training, validation and evaluation slices are samples of the same text; it is seeded by a
 * constant, so every run and seed sees the same corpus. fortunes-zh's files colour their titles
 * for a terminal (ESC [ 32m ... ESC [m); those codes are not text and are left out. */
#include "tasks/task_data.h"
#include "io/fileio.h"
#include "io/strbuf.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* the shuffle's seed: any constant ("fortunes" in ASCII); changing it changes the corpus */
#define SHUFFLE_SEED 0x666f7274756e6573ull

/* the fortune files of Debian 12's packages, in byte order of their names */
static const char *const FORTUNES_EN[] = {
    "art", "ascii-art", "computers", "cookie", "debian", "definitions", "disclaimer", "drugs", "education",
    "ethnic", "food", "fortunes", "goedel", "humorists", "kids", "knghtbrd", "law", "linux", "linuxcookie",
    "literature", "love", "magic", "medicine", "men-women", "miscellaneous", "news", "paradoxum", "people", "perl",
    "pets", "platitudes", "politics", "pratchett", "riddles", "science", "songs-poems", "sports", "startrek", "tao",
    "translate-me", "wisdom", "work", "zippy", NULL};
static const char *const FORTUNES_ZH[] = {"chinese", "song100", "tang300", NULL};
static const qkv__fortunes_package PACKAGES[] = {
    {"fortunes", QKV_FORTUNES_INSTALL, FORTUNES_EN, false},
    {"fortunes-zh", QKV_FORTUNES_ZH_INSTALL, FORTUNES_ZH, true},
};

const qkv__fortunes_package *qkv__fortunes_package_of(qkv_text_corpus corpus) {
    switch (corpus) {
    case QKV_CORPUS_FORTUNES: return &PACKAGES[0];
    case QKV_CORPUS_FORTUNES_ZH: return &PACKAGES[1];
    default: return NULL;
    }
}

typedef struct fortune {
    int64_t off, len; /* in the pool */
    uint64_t hash;
    int64_t index;    /* in reading order */
} fortune;

typedef struct pool {
    uint8_t *b;
    int64_t len, cap;
    fortune *f;
    int64_t n, fcap;
} pool;

static int pool_put(pool *p, const uint8_t *s, int64_t n) {
    if (n == 0) return 0; /* nothing to copy (s may be NULL, and so may the empty pool's buffer) */
    if (p->len + n > p->cap) {
        int64_t cap = p->cap ? p->cap : 1 << 16;
        while (cap < p->len + n) cap *= 2;
        uint8_t *b = realloc(p->b, (size_t)cap);
        if (!b) return -1;
        p->b = b;
        p->cap = cap;
    }
    memcpy(p->b + p->len, s, (size_t)n);
    p->len += n;
    return 0;
}

/* close the fortune that started at pool offset `start`; one of only whitespace is dropped */
static int end_fortune(pool *p, int64_t start) {
    bool blank = true;
    for (int64_t i = start; i < p->len && blank; i++) blank = strchr(" \t\r\n\f\v", p->b[i]) != NULL;
    if (blank) {
        p->len = start;
        return 0;
    }
    if (p->n == p->fcap) {
        int64_t cap = p->fcap ? 2 * p->fcap : 1024;
        fortune *f = realloc(p->f, (size_t)cap * sizeof *f);
        if (!f) return -1;
        p->f = f;
        p->fcap = cap;
    }
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
    for (int64_t i = start; i < p->len; i++) h = (h ^ p->b[i]) * 0x100000001b3ull;
    p->f[p->n] = (fortune){start, p->len - start, h, p->n};
    p->n++;
    return 0;
}

/* a line into the pool; with colour, without its terminal colour codes: ESC [, the digits and
 * semicolons after it and the "m" that ends them */
static int put_line(pool *p, const uint8_t *s, int64_t n, bool colour) {
    if (!colour || !memchr(s, 0x1b, (size_t)n)) return pool_put(p, s, n);
    for (int64_t i = 0, from = 0; i <= n; i++) {
        if (i < n && !(s[i] == 0x1b && i + 1 < n && s[i + 1] == '[')) continue;
        if (pool_put(p, s + from, i - from)) return -1;
        if (i == n) break;
        i += 2;
        while (i < n && ((s[i] >= '0' && s[i] <= '9') || s[i] == ';')) i++;
        if (i < n && s[i] == 'm') i++;
        from = i--;
    }
    return 0;
}

/* one file's fortunes into the pool: lines up to a "%" line (a last line without its newline
 * gets one); colour: without terminal colour codes */
static int split_file(pool *p, const uint8_t *s, int64_t n, bool colour) {
    int64_t start = p->len;
    for (int64_t i = 0; i < n;) {
        const uint8_t *nl = memchr(s + i, '\n', (size_t)(n - i));
        int64_t e = nl ? nl - s : n; /* the line is [i, e) */
        bool sep = s[i] == '%' && (e - i == 1 || (e - i == 2 && s[i + 1] == '\r')); /* "%", or "%" CR LF */
        if (sep) {
            if (end_fortune(p, start)) return -1;
            start = p->len;
        } else if (put_line(p, s + i, e - i, colour) || pool_put(p, (const uint8_t *)"\n", 1)) {
            return -1;
        }
        i = e + 1;
    }
    return end_fortune(p, start);
}

static int cmp_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static const uint8_t *cmp_base; /* qsort has no context argument */
/* by content (hash, length, bytes), then reading order: equal fortunes end up adjacent, the
 * earliest first */
static int cmp_fortune(const void *a, const void *b) {
    const fortune *x = a, *y = b;
    if (x->hash != y->hash) return x->hash < y->hash ? -1 : 1;
    if (x->len != y->len) return x->len < y->len ? -1 : 1;
    int c = memcmp(cmp_base + x->off, cmp_base + y->off, (size_t)x->len);
    if (c) return c;
    return (x->index > y->index) - (x->index < y->index);
}

static int cmp_index(const void *a, const void *b) {
    const fortune *x = a, *y = b;
    return (x->index > y->index) - (x->index < y->index);
}

/* whether dir/name is one of the fortune files: a regular file (not a symlink: the .u8 names
 * are links to the same text), not hidden, not strfile's .dat index, not a .u8 name */
static bool fortune_file(const char *dir, const char *name) {
    size_t n = strlen(name);
    if (name[0] == '.' || (n >= 4 && !strcmp(name + n - 4, ".dat")) || (n >= 3 && !strcmp(name + n - 3, ".u8")))
        return false;
    char *path = qkv__pathf("%s/%s", dir, name);
    struct stat st;
    bool file = path && lstat(path, &st) == 0 && S_ISREG(st.st_mode);
    free(path);
    return file;
}

/* the directory's fortune file names, sorted; NULL with e (an empty list is not an error) */
static char **list_files(const char *dir, const char *key, int *count, qkv_err *e) {
    DIR *d = opendir(dir);
    if (!d) {
        qkv_err_set(e, QKV_ERR_FAIL, "%s: cannot open the fortunes directory %s: %s; Debian's fortunes package "
                    "installs %s: %s", key, qkv__shown(dir).s, strerror(errno), QKV_FORTUNES_DIR, QKV_FORTUNES_INSTALL);
        return NULL;
    }
    char **names = NULL;
    int n = 0, cap = 0;
    for (struct dirent *de; (de = readdir(d));) {
        if (!fortune_file(dir, de->d_name)) continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            char **nn = realloc(names, (size_t)cap * sizeof *nn);
            if (!nn) goto oom;
            names = nn;
        }
        if (!(names[n] = strdup(de->d_name))) goto oom;
        n++;
    }
    closedir(d);
    if (n) qsort(names, (size_t)n, sizeof *names, cmp_name);
    *count = n;
    return names ? names : calloc(1, sizeof *names);
oom:
    closedir(d);
    for (int i = 0; i < n; i++) free(names[i]);
    free(names);
    qkv_err_set(e, QKV_ERR_FAIL, "%s: out of memory", key);
    return NULL;
}

/* a package's fortune files in dir, each checked to be one; NULL with e when one is not (the
 * package is not installed, or not all of it) */
static char **package_files(const char *dir, const qkv__fortunes_package *pkg, const char *key, int *count,
                            qkv_err *e) {
    int n = 0;
    while (pkg->files[n]) n++;
    char **names = calloc((size_t)n + 1, sizeof *names);
    for (int i = 0; names && i < n; i++) {
        if (!fortune_file(dir, pkg->files[i])) {
            qkv_err_set(e, QKV_ERR_FAIL, "%s: %s reads the %d fortune files of Debian's %s package, and %s/%s is not "
                        "one (not installed?); install it with %s", key, pkg->name, n, pkg->name, qkv__shown(dir).s,
                        pkg->files[i], pkg->install);
            for (int j = 0; j < i; j++) free(names[j]);
            free(names);
            return NULL;
        }
        if (!(names[i] = strdup(pkg->files[i]))) {
            for (int j = 0; j < i; j++) free(names[j]);
            free(names);
            names = NULL;
        }
    }
    if (!names) {
        qkv_err_set(e, QKV_ERR_FAIL, "%s: out of memory", key);
        return NULL;
    }
    qsort(names, (size_t)n, sizeof *names, cmp_name);
    *count = n;
    return names;
}

int qkv__task_read_fortunes(const char *dir, const qkv__fortunes_package *pkg, bool colour, const char *key,
                            uint8_t **out, int64_t *out_len, int *n_files, int64_t *n_fortunes, qkv_err *e) {
    int nf = 0, rc = -1;
    char **names = pkg ? package_files(dir, pkg, key, &nf, e) : list_files(dir, key, &nf, e);
    if (!names) return -1;
    pool p = {0};
    uint8_t *text = NULL;
    for (int i = 0; i < nf; i++) {
        size_t len;
        char *path = qkv__pathf("%s/%s", dir, names[i]);
        if (!path) goto oom;
        char *buf = qkv__read_regular_file(path, &len, e);
        free(path);
        if (!buf) {
            qkv_err_prefix(e, "%s: ", key);
            goto done;
        }
        int bad = split_file(&p, (const uint8_t *)buf, (int64_t)len, colour);
        free(buf);
        if (bad) goto oom;
    }
    if (p.n == 0) {
        qkv_err_set(e, QKV_ERR_FAIL, "%s: %s holds no fortunes (expected plain-text fortune files: fortunes "
                    "separated by lines holding only %%); Debian's fortunes package installs %s: %s", key,
                    qkv__shown(dir).s, QKV_FORTUNES_DIR, QKV_FORTUNES_INSTALL);
        goto done;
    }
    /* drop exact duplicates, keeping the first in reading order */
    cmp_base = p.b;
    qsort(p.f, (size_t)p.n, sizeof *p.f, cmp_fortune);
    int64_t kept = 0;
    for (int64_t i = 0; i < p.n; i++) {
        const fortune *a = &p.f[i], *prev = kept ? &p.f[kept - 1] : NULL;
        bool dup = prev && prev->hash == a->hash && prev->len == a->len &&
                   !memcmp(p.b + prev->off, p.b + a->off, (size_t)a->len);
        if (!dup) p.f[kept++] = *a;
    }
    qsort(p.f, (size_t)kept, sizeof *p.f, cmp_index);
    /* a fixed order: Fisher-Yates with qkv's generator, the same on every machine */
    qkv_rng r;
    qkv_rng_seed(&r, SHUFFLE_SEED);
    for (int64_t i = kept - 1; i > 0; i--) {
        int64_t j = (int64_t)qkv_rng_below(&r, (uint64_t)i + 1);
        fortune x = p.f[i];
        p.f[i] = p.f[j];
        p.f[j] = x;
    }
    int64_t total = 0;
    for (int64_t i = 0; i < kept; i++) total += p.f[i].len + 2;
    if (!(text = malloc((size_t)total))) goto oom;
    int64_t o = 0;
    for (int64_t i = 0; i < kept; i++) {
        memcpy(text + o, p.b + p.f[i].off, (size_t)p.f[i].len);
        o += p.f[i].len;
        text[o++] = '%';
        text[o++] = '\n';
    }
    *out = text;
    *out_len = total;
    if (n_files) *n_files = nf;
    if (n_fortunes) *n_fortunes = kept;
    text = NULL;
    rc = 0;
    goto done;
oom:
    qkv_err_set(e, QKV_ERR_FAIL, "%s: out of memory reading the fortunes in %s", key, qkv__shown(dir).s);
done:
    for (int i = 0; i < nf; i++) free(names[i]);
    free(names);
    free(p.b);
    free(p.f);
    free(text);
    return rc;
}

int64_t qkv__task_fortune_start(const uint8_t *text, int64_t len, int64_t pos) {
    if (pos <= 0) return 0;
    /* a fortune starts after a "%" line; the corpus has no other line holding only "%" */
    for (int64_t p = pos; p < len; p++)
        if (p >= 2 && text[p - 1] == '\n' && text[p - 2] == '%' && (p == 2 || text[p - 3] == '\n')) return p;
    return len;
}
