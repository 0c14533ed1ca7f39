/* A claim: a sentence of a document that states a finding, wrapped with the predicates it makes
 * over the committed results, so that qkv summarize --check-doc fails when it no longer holds:
 *
 *   <!-- qkv claim: PRED[; PRED]... -->TEXT<!-- /claim -->
 *
 *   PRED     [each] TERM OP OPERAND
 *   TERM     DIR VARIANT FIELD              a value marker's words (doc_values.c: its fields, fisher:OTHER)
 *   OPERAND  NUMBER | VARIANT FIELD (of the same DIR) | DIR VARIANT FIELD
 *   OP       =  !=  <  <=  >  >=
 *
 * Every predicate must hold. `each` expands "in every seed": the comparison is made seed by seed
 * (paired by the seed's index where the operand is a term) on the fields a seed has: solved (1 or
 * 0), median (the seed's solve step; unsolved: later than any), delta (its paired difference from
 * the baseline), acc and bpb (its final evaluation). Two predicates carry the test their wording
 * implies, and that test joins the document's family (Holm's correction over every claim of the
 * document, at 0.05): TERM solved > (or <) a `solved` term, Fisher's exact test of the two
 * variants' solved and unsolved seeds; TERM delta > (or <) 0, the variant's paired sign-flip test
 * against the baseline (its p_value in results.json); the same predicate twice is one test. A
 * claim states its numbers with value
 * markers, which its predicates do not replace. */
#include "report/summary.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ablate/stats.h"
#include "io/strbuf.h"

typedef enum { OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE, N_OPS } op;
static const char *const OPS[N_OPS] = {"=", "!=", "<", "<=", ">", ">="};

/* one side of a comparison: a number, or a field of a variant of DIR's results */
typedef struct term {
    const char *dir, *variant, *field;  /* NULL dir: a number */
    double number;
} term;

/* the results of one directory, read once per predicate */
typedef struct loaded {
    qkv_ablate_results r;
    qkv_ablate_config c;
    bool ok;
} loaded;

static bool compare(double a, op o, double b) {
    switch (o) {
    case OP_EQ: return a == b;
    case OP_NE: return a != b;
    case OP_LT: return a < b;
    case OP_LE: return a <= b;
    case OP_GT: return a > b;
    case OP_GE: return a >= b;
    default: return false;
    }
}

static int load_dir(loaded *l, const char *dir, qkv_err *e) {
    if (qkv__ablate_results_read(&l->r, &l->c, dir, e)) return -1;
    l->ok = true;
    return 0;
}

static void unload_dir(loaded *l) {
    if (!l->ok) return;
    qkv__ablate_results_free(&l->r);
    qkv_ablate_config_free(&l->c);
    l->ok = false;
}

/* the index of variant `name` in l, or -1 with e */
static int variant_of(const loaded *l, const char *dir, const char *name, qkv_err *e) {
    for (int v = 0; v < l->c.n_variants; v++)
        if (!strcmp(l->r.v[v].name, name)) return v;
    qkv_err_set(e, QKV_ERR_FAIL, "%s/results.json has no variant '%s'", dir, name);
    return -1;
}

/* seed s's value of field f of variant v (each): 0, 1 when the seed has no such number (why), -1 with
 * e when the field has no value per seed */
static int seed_value(const qkv_ablate_results *r, int v, int s, const char *f, double *x, char *why, size_t n,
                      qkv_err *e) {
    int ns = r->cfg->n_seeds, b = r->cfg->baseline;
    const qkv_run_result *u = &r->runs[(size_t)v * ns + s], *base = &r->runs[(size_t)b * ns + s];
    bool bits = r->cfg->metric == QKV_METRIC_BPB;
    if (strcmp(f, QKV_RK(SOLVED)) && strcmp(f, "median") && strcmp(f, "delta") && strcmp(f, "acc") && strcmp(f, "bpb"))
        return qkv_err_set(e, QKV_ERR_FAIL, "each: field '%s' has no value per seed (solved, median, delta, acc "
                           "and bpb have)", f);
    if (!u->ok || (!strcmp(f, "delta") && !base->ok)) {
        snprintf(why, n, "seed %lld has no finished run", u->seed);
        return 1;
    }
    if (!strcmp(f, QKV_RK(SOLVED))) *x = u->solved;
    else if (!strcmp(f, "median")) *x = u->solved ? (double)u->steps_to_threshold : INFINITY;
    else if (!strcmp(f, "acc")) *x = u->final_acc;
    else if (!strcmp(f, "bpb")) *x = u->final_loss / log(2.0);
    else *x = bits ? (u->final_loss - base->final_loss) / log(2.0) : u->final_acc - base->final_acc;
    return 0;
}

/* a number as a message prints it */
static void show(double x, char *out, size_t n) {
    if (isinf(x)) snprintf(out, n, "unsolved");
    else if (isnan(x)) snprintf(out, n, "not recorded");
    else snprintf(out, n, "%.6g", x);
}

/* the words of a predicate into terms: 0, or -1 with e */
static int parse(char *words, bool *each, term *a, op *o, term *b, qkv_err *e) {
    char *w[8], *save = NULL;
    int n = 0;
    for (char *t = strtok_r(words, " \t\n", &save); t; t = strtok_r(NULL, " \t\n", &save))
        if (n < 8) w[n++] = t;
        else return qkv_err_set(e, QKV_ERR_FAIL, "too many words");
    int i = 0;
    *each = n > 0 && !strcmp(w[0], "each");
    i += *each;
    *o = N_OPS;
    if (n - i >= 5)
        for (int k = 0; k < N_OPS; k++)
            if (!strcmp(w[i + 3], OPS[k])) *o = (op)k;
    int rest = n - i - 4;
    if (*o == N_OPS || rest < 1 || rest > 3)
        return qkv_err_set(e, QKV_ERR_FAIL, "expected [each] DIR VARIANT FIELD OP (NUMBER | VARIANT FIELD | DIR "
                           "VARIANT FIELD), OP one of = != < <= > >=");
    *a = (term){w[i], w[i + 1], w[i + 2], 0};
    char **r = &w[i + 4];
    if (rest == 1) {
        char *end;
        *b = (term){NULL, NULL, NULL, strtod(r[0], &end)};
        /* strtod also reads nan, inf and hexadecimal, which no result is compared with */
        if (end == r[0] || *end || !isfinite(b->number) || strspn(r[0], "0123456789+-.eE") != strlen(r[0]))
            return qkv_err_set(e, QKV_ERR_FAIL, "'%s' is not a number (expected a finite decimal number)", r[0]);
    } else if (rest == 2) *b = (term){a->dir, r[0], r[1], 0};
    else *b = (term){r[0], r[1], r[2], 0};
    return 0;
}

/* adds the test p of predicate `key` (what it is: "...") to the document's family, once */
static int add_test(qkv_doc_tests *t, double p, int line, const char *key, const char *what) {
    for (int i = 0; i < t->n; i++)
        if (!strcmp(t->t[i].key, key)) return 0;
    if (t->n == t->cap) {
        int cap = t->cap ? 2 * t->cap : 16;
        qkv_doc_test *m = realloc(t->t, (size_t)cap * sizeof *m);
        if (!m) return -1;
        t->t = m;
        t->cap = cap;
    }
    qkv_doc_test *x = &t->t[t->n++];
    x->p = p;
    x->line = line;
    snprintf(x->key, sizeof x->key, "%s", key);
    snprintf(x->what, sizeof x->what, "%s", what);
    return 0;
}

/* one predicate: 0 holds, 1 does not (why), -1 error (e) */
static int predicate(char *words, qkv_doc_tests *tests, int line, char *why, size_t n, qkv_err *e) {
    char text[400];
    snprintf(text, sizeof text, "%s", words + strspn(words, " \t\n"));
    text[strcspn(text, "\n")] = 0;
    for (size_t k = strlen(text); k > 0 && text[k - 1] == ' '; k--) text[k - 1] = 0;
    bool each = false;
    term a = {0}, b = {0};
    op o = OP_EQ;
    if (parse(words, &each, &a, &o, &b, e)) return -1;
    loaded la = {0}, lb = {0};
    const loaded *pb = &la;
    int rc = -1, va, vb = -1;
    if (load_dir(&la, a.dir, e) || (va = variant_of(&la, a.dir, a.variant, e)) < 0) goto done;
    if (b.dir && strcmp(b.dir, a.dir)) {
        if (load_dir(&lb, b.dir, e)) goto done;
        pb = &lb;
    }
    if (b.dir && (vb = variant_of(pb, b.dir, b.variant, e)) < 0) goto done;
    char sx[32], sy[32];
    if (each) {
        int ns = la.c.n_seeds;
        if (b.dir && pb->c.n_seeds != ns) {
            qkv_err_set(e, QKV_ERR_FAIL, "each: %s has %d seeds, %s %d", a.dir, ns, b.dir, pb->c.n_seeds);
            goto done;
        }
        /* paired by seed, not by place: two ablations of other seeds have no pairs */
        for (int s = 0; b.dir && s < ns; s++)
            if (la.c.seeds[s] != pb->c.seeds[s]) {
                qkv_err_set(e, QKV_ERR_FAIL, "each: seed %lld of %s would pair with seed %lld of %s (expected the "
                            "same seeds in the same order)", la.c.seeds[s], a.dir, pb->c.seeds[s], b.dir);
                goto done;
            }
        for (int s = 0; s < ns; s++) {
            double x, y = b.number;
            int k = seed_value(&la.r, va, s, a.field, &x, why, n, e);
            if (!k && b.dir) k = seed_value(&pb->r, vb, s, b.field, &y, why, n, e);
            if (k) {
                rc = k;
                goto done;
            }
            if (!compare(x, o, y)) {
                show(x, sx, sizeof sx);
                show(y, sy, sizeof sy);
                snprintf(why, n, "%s: at seed %lld, %s is not %s %s", text, la.r.runs[(size_t)va * ns + s].seed, sx,
                         OPS[o], sy);
                rc = 1;
                goto done;
            }
        }
        rc = 0;
        goto done;
    }
    double x, y = b.number;
    qkv_err inner;
    if (qkv__doc_number(&la.r, va, a.field, &x, &inner) || (b.dir && qkv__doc_number(&pb->r, vb, b.field, &y, &inner))) {
        qkv_err_set(e, QKV_ERR_FAIL, "%s", inner.msg);
        goto done;
    }
    if (!compare(x, o, y) || isnan(x) || isnan(y)) {
        show(x, sx, sizeof sx);
        show(y, sy, sizeof sy);
        snprintf(why, n, "%s: %s is not %s %s", text, sx, OPS[o], sy);
        rc = 1;
        goto done;
    }
    rc = 0;
    /* the test the wording implies */
    bool strict = o == OP_LT || o == OP_GT;
    char what[640];
    if (strict && b.dir && !strcmp(a.field, QKV_RK(SOLVED)) && !strcmp(b.field, QKV_RK(SOLVED))) {
        const qkv_variant_result *u = &la.r.v[va], *w = &pb->r.v[vb];
        snprintf(what, sizeof what, "%s: Fisher's exact test of %d/%d against %d/%d solved", text, u->solved,
                 u->solved + u->unsolved, w->solved, w->solved + w->unsolved);
        if (add_test(tests, qkv_stats_fisher_p(u->solved, u->unsolved, w->solved, w->unsolved), line, text, what)) rc = -1;
    } else if (strict && !b.dir && b.number == 0 && !strcmp(a.field, "delta")) {
        snprintf(what, sizeof what, "%s: the paired sign-flip test against %s", text, la.r.v[la.c.baseline].name);
        if (add_test(tests, la.r.v[va].p_value, line, text, what)) rc = -1;
    }
    if (rc < 0) qkv_err_set(e, QKV_ERR_FAIL, "out of memory");
done:
    unload_dir(&la);
    unload_dir(&lb);
    return rc;
}

int qkv__doc_claim(const char *words, qkv_doc_tests *tests, int line, char *why, size_t n, qkv_err *e) {
    char *all = strdup(words), *save = NULL;
    if (!all) return qkv_err_set(e, QKV_ERR_FAIL, "out of memory");
    int rc = 0;
    if (!all[strspn(all, " \t\n")]) rc = qkv_err_set(e, QKV_ERR_FAIL, "qkv claim: no predicate (PRED[; PRED]...)");
    /* every ';' separates two predicates: an empty one (";;", a trailing ';') is a typo, not nothing */
    for (char *p = all; p && !rc; p = save) {
        save = strchr(p, ';');
        if (save) *save++ = 0;
        qkv_err inner;
        if (!p[strspn(p, " \t\n")])
            rc = qkv_err_set(e, QKV_ERR_FAIL, "qkv claim: an empty predicate (expected PRED[; PRED]..., a predicate "
                             "on each side of every ';')");
        else if ((rc = predicate(p, tests, line, why, n, &inner)) < 0)
            qkv_err_set(e, QKV_ERR_FAIL, "qkv claim: %s", inner.msg);
    }
    free(all);
    return rc;
}

int qkv__doc_tests_holm(const qkv_doc_tests *t, double *adjusted) {
    if (t->n == 0) return -1;
    double *p = malloc((size_t)t->n * sizeof *p);
    bool *rej = malloc((size_t)t->n * sizeof *rej);
    int bad = -2;
    if (p && rej) {
        for (int i = 0; i < t->n; i++) p[i] = isnan(t->t[i].p) ? 1.0 : t->t[i].p;
        bad = -1;
        if (qkv_stats_holm(p, t->n, QKV_ABLATE_ALPHA, adjusted, rej) < 0) bad = -2;
        for (int i = 0; i < t->n && bad == -1; i++)
            if (!rej[i]) bad = i;
    }
    free(p);
    free(rej);
    return bad;
}

void qkv__doc_tests_free(qkv_doc_tests *t) {
    free(t->t);
    memset(t, 0, sizeof *t);
}
