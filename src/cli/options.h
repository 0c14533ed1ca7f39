/* Internal to the qkv command: one option table per subcommand, which drives both the parsing
 * of its arguments and its --help text. */
#ifndef QKV_CLI_OPTIONS_H
#define QKV_CLI_OPTIONS_H

#include "qkv_api.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include "tensor/error.h"

typedef enum {
    QKV_ARG_FLAG,   /* no value: sets a bool */
    QKV_ARG_STRING, /* a value: a const char * (the last one given wins) */
    QKV_ARG_LIST,   /* a value, repeatable: appended to a qkv_cli_list (e.g. --set) */
    QKV_ARG_INT,    /* a value: a whole number in [lo, hi], into a long long */
    QKV_ARG_NUM,    /* a value: a finite number in [lo, hi], into a double */
    QKV_ARG_HELP,   /* no value: print the command's help on stdout and stop (exit status 0) */
} qkv_arg_kind;

/* a repeatable option's values in order; they point into argv, v is the caller's to free */
typedef struct qkv_cli_list {
    const char **v;
    int n;
} qkv_cli_list;

typedef struct qkv_cli_option {
    const char *name;  /* "--out"; "--out VALUE" and "--out=VALUE" both work */
    const char *alias; /* another name without a value ("-h"), or NULL */
    qkv_arg_kind kind;
    const char *value; /* the value's name in the help ("DIR"); NULL without a value */
    size_t offset;     /* where the value goes in the command's argument struct */
    long long lo, hi;  /* QKV_ARG_INT, QKV_ARG_NUM: the accepted range */
    const char *help;  /* what it does; each '\n' starts an indented continuation line; NULL: an
                          internal option, accepted but not listed in --help */
} qkv_cli_option;

/* offsetof(type, field), and a compile error unless the field is a T */
#define QKV_ARG_AT(type, field, T) (offsetof(type, field) + 0 * sizeof(_Generic(((type *)0)->field, T: 1)))

/* the table's rows: name, the value's name, the argument struct and its field, [range,] help */
#define QKV_FLAG(name, type, field, help) \
    {name, NULL, QKV_ARG_FLAG, NULL, QKV_ARG_AT(type, field, bool), 0, 0, help}
/* a flag for qkv's own use (one command running another), not listed in --help */
#define QKV_HIDDEN_FLAG(name, type, field) QKV_FLAG(name, type, field, NULL)
#define QKV_STRING(name, value, type, field, help) \
    {name, NULL, QKV_ARG_STRING, value, QKV_ARG_AT(type, field, const char *), 0, 0, help}
#define QKV_LIST(name, value, type, field, help) \
    {name, NULL, QKV_ARG_LIST, value, QKV_ARG_AT(type, field, qkv_cli_list), 0, 0, help}
#define QKV_INT(name, value, type, field, lo, hi, help) \
    {name, NULL, QKV_ARG_INT, value, QKV_ARG_AT(type, field, long long), lo, hi, help}
#define QKV_NUM(name, value, type, field, lo, hi, help) \
    {name, NULL, QKV_ARG_NUM, value, QKV_ARG_AT(type, field, double), lo, hi, help}
#define QKV_HELP {"--help", "-h", QKV_ARG_HELP, NULL, 0, 0, 0, "show this help"}
#define QKV_OPTIONS_END {NULL, NULL, QKV_ARG_FLAG, NULL, 0, 0, 0, NULL}

/* a number in a string literal: "at most " QKV_STR(QKV_MAX_THREADS) */
#define QKV_STR(x) QKV_STR_(x)
#define QKV_STR_(x) #x

typedef struct qkv_cli_command {
    const char *name;     /* "train" */
    const char *synopsis; /* what follows "usage: qkv train "; each '\n' starts another form */
    const char *about;    /* what the command does (lines of text, no trailing newline) */
    const char *operand;  /* the positional argument's name ("CONFIG", "DIR..."), or NULL for none */
    const qkv_cli_option *options; /* ends with QKV_OPTIONS_END */
} qkv_cli_command;

/* Parse argv[1..argc) in order into *args (options not given keep their values) and the
 * positional argument into *operand (NULL when the command takes none). 0: the command runs;
 * otherwise it stops, and then no list is left allocated: 1 after --help (its text on stdout, e
 * cleared), -1 with e after a usage error (QKV_ERR_USAGE; QKV_ERR_FAIL when out of memory). */
QKV_INTERNAL int qkv__cli_parse(const qkv_cli_command *cmd, int argc, char **argv, void *args, const char **operand,
                               qkv_err *e);
/* qkv__cli_parse for a command of any number of positional arguments (its operand names them,
 * "DIR..."): they go to *operands in order (v is the caller's to free, as a list option's) */
QKV_INTERNAL int qkv__cli_parse_operands(const qkv_cli_command *cmd, int argc, char **argv, void *args,
                                        qkv_cli_list *operands, qkv_err *e);
/* s as a whole number in [lo, hi]: the whole string is decimal digits after an optional sign (no
 * space around it), with no overflow; 0, or -1 with e (QKV_ERR_USAGE, "NAME: expected an integer
 * in [lo, hi], got 'S'"). For options and for integers read from the environment alike */
QKV_INTERNAL int qkv__cli_parse_int(const char *name, const char *s, long long lo, long long hi, long long *out,
                                   qkv_err *e);
/* the usage text made from the command's table */
QKV_INTERNAL void qkv__cli_help(const qkv_cli_command *cmd, FILE *f);

#endif
