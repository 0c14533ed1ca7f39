/* The subcommands' option tables (options.h): parsing and the --help text. */
#include "cli/options.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static bool takes_value(const qkv_cli_option *o) {
    return o->kind != QKV_ARG_FLAG && o->kind != QKV_ARG_HELP;
}

/* whether argument a is option o: its name or alias exactly, or "--name=VALUE" (*val set) */
static bool matches(const qkv_cli_option *o, const char *a, const char **val) {
    size_t n = strlen(o->name);
    if (o->alias && !strcmp(a, o->alias)) return true;
    if (strncmp(a, o->name, n)) return false;
    if (!a[n]) return true;
    if (a[n] != '=' || !takes_value(o)) return false;
    *val = a + n + 1;
    return true;
}

int qkv__cli_parse_int(const char *name, const char *s, long long lo, long long hi, long long *out, qkv_err *e) {
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    bool digits = (s[0] >= '0' && s[0] <= '9') || ((s[0] == '-' || s[0] == '+') && s[1] >= '0' && s[1] <= '9');
    if (!digits || errno || end == s || *end || v < lo || v > hi)
        return qkv_err_set(e, QKV_ERR_USAGE, "%s: expected an integer in [%lld, %lld], got '%s'", name, lo, hi, s);
    *out = v;
    return 0;
}

/* a finite number in [lo, hi]; 0, or -1 with e (QKV_ERR_USAGE) */
static int parse_num(const char *name, const char *s, long long lo, long long hi, double *out, qkv_err *e) {
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno == ERANGE && end != s && !*end && fabs(v) <= DBL_MIN) /* in range, but no double holds it */
        return qkv_err_set(e, QKV_ERR_USAGE, "%s: '%s' is too close to 0 for a double (it underflows); expected a "
                           "number in [%lld, %lld]", name, s, lo, hi);
    if (errno || end == s || *end || !isfinite(v) || v < (double)lo || v > (double)hi)
        return qkv_err_set(e, QKV_ERR_USAGE, "%s: expected a number in [%lld, %lld], got '%s'", name, lo, hi, s);
    *out = v;
    return 0;
}

/* v appended to l (room for every argument); 0, or -1 with e when out of memory */
static int append(qkv_cli_list *l, int argc, const char *v, qkv_err *e) {
    if (!l->v && !(l->v = calloc((size_t)argc, sizeof *l->v))) return qkv_err_set(e, QKV_ERR_FAIL, "out of memory");
    l->v[l->n++] = v;
    return 0;
}

/* one argument, argv[*i] (and its value, which advances *i); 0 to go on, 1 after --help, -1 with
 * e. A positional argument goes to *operand, or with operands (not NULL) to that list */
static int parse_arg(const qkv_cli_command *c, int argc, char **argv, int *i, void *args, const char **operand,
                     qkv_cli_list *operands, qkv_err *e) {
    const char *a = argv[*i], *val = NULL;
    const qkv_cli_option *o = c->options;
    while (o->name && !matches(o, a, &val)) o++;
    if (!o->name) {
        if (a[0] == '-' && a[1])
            return qkv_err_set(e, QKV_ERR_USAGE, "unknown option '%s' (try 'qkv %s --help')", a, c->name);
        if (operands) return append(operands, argc, a, e);
        if (!operand) return qkv_err_set(e, QKV_ERR_USAGE, "unexpected argument '%s'", a);
        if (*operand) return qkv_err_set(e, QKV_ERR_USAGE, "unexpected argument '%s' (one %s only)", a, c->operand);
        *operand = a;
        return 0;
    }
    void *field = (char *)args + o->offset;
    if (o->kind == QKV_ARG_HELP) {
        qkv__cli_help(c, stdout);
        qkv_err_clear(e);
        return 1;
    }
    if (o->kind == QKV_ARG_FLAG) {
        *(bool *)field = true;
        return 0;
    }
    if (!val && *i + 1 >= argc) return qkv_err_set(e, QKV_ERR_USAGE, "%s needs a value", a);
    if (!val) val = argv[++*i];
    if (o->kind == QKV_ARG_STRING) *(const char **)field = val;
    if (o->kind == QKV_ARG_INT) return qkv__cli_parse_int(o->name, val, o->lo, o->hi, field, e);
    if (o->kind == QKV_ARG_NUM) return parse_num(o->name, val, o->lo, o->hi, field, e);
    if (o->kind == QKV_ARG_LIST) return append(field, argc, val, e);
    return 0;
}

/* both parsers: one positional argument into *operand, or any number into *operands */
static int parse(const qkv_cli_command *c, int argc, char **argv, void *args, const char **operand,
                 qkv_cli_list *operands, qkv_err *e) {
    int rc = 0;
    for (int i = 1; i < argc && !rc; i++) rc = parse_arg(c, argc, argv, &i, args, operand, operands, e);
    if (rc) { /* the command will not run: nothing for it to free */
        for (const qkv_cli_option *o = c->options; o->name; o++)
            if (o->kind == QKV_ARG_LIST) {
                qkv_cli_list *l = (qkv_cli_list *)((char *)args + o->offset);
                free(l->v);
                *l = (qkv_cli_list){0};
            }
        if (operands) {
            free(operands->v);
            *operands = (qkv_cli_list){0};
        }
    }
    return rc;
}

int qkv__cli_parse(const qkv_cli_command *c, int argc, char **argv, void *args, const char **operand, qkv_err *e) {
    return parse(c, argc, argv, args, operand, NULL, e);
}

int qkv__cli_parse_operands(const qkv_cli_command *c, int argc, char **argv, void *args, qkv_cli_list *operands,
                            qkv_err *e) {
    *operands = (qkv_cli_list){0};
    return parse(c, argc, argv, args, NULL, operands, e);
}

/* "-h, --help" or "--out DIR" */
static int label(const qkv_cli_option *o, char *buf, size_t n) {
    return snprintf(buf, n, "%s%s%s%s%s", o->alias ? o->alias : "", o->alias ? ", " : "", o->name,
                    o->value ? " " : "", o->value ? o->value : "");
}

void qkv__cli_help(const qkv_cli_command *c, FILE *f) {
    const char *s = c->synopsis;
    size_t n;
    fputs("usage: ", f);
    for (; s[n = strcspn(s, "\n")]; s += n + 1) fprintf(f, "qkv %s %.*s\n       ", c->name, (int)n, s);
    fprintf(f, "qkv %s %s\n\n%s\n\noptions:\n", c->name, s, c->about);
    char buf[128];
    int w = 0;
    for (const qkv_cli_option *o = c->options; o->name; o++) {
        if (!o->help) continue; /* internal */
        int len = label(o, buf, sizeof buf);
        if (len > w) w = len;
    }
    for (const qkv_cli_option *o = c->options; o->name; o++) {
        if (!o->help) continue;
        label(o, buf, sizeof buf);
        fprintf(f, "  %-*s  ", w, buf);
        const char *h = o->help; /* continuation lines start at the first line's column */
        for (; h[n = strcspn(h, "\n")]; h += n + 1) fprintf(f, "%.*s\n  %-*s  ", (int)n, h, w, "");
        fprintf(f, "%s\n", h);
    }
}
