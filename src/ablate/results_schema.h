/* Internal: results.json's format, the one place its keys are named. Every key of every object
 * of the file, once, with its JSON type, its range and the objects it appears in; the writer
 * (src/report/report_json.c and report_fields.c), the reader (results_read.c), qkv summarize and
 * the documents' markers name a key by its id (QKV_RK_TITLE, ...) and take its spelling, type and
 * range from here, so the file cannot be written one way and read another.
 *
 * The file is one object (TOP) holding the sweep's settings, "text" (TEXT: how the text task's
 * text was read), "rate_choice" (RATE: how the rates were chosen) and "variants", an array of
 * VARIANT objects; each holds "runs", an array of RUN objects, each with a "curve" (CURVE) whose
 * keys are series: an array of the key's type, one element per evaluated step. */
#ifndef QKV_ABLATE_RESULTS_SCHEMA_H
#define QKV_ABLATE_RESULTS_SCHEMA_H

#include "qkv_api.h"

#include <float.h>
#include <math.h>
#include <stdbool.h>

#include "io/json.h"

/* the objects a key is in (a key in two is one row: the same type and range in both) */
enum { QKV_RO_TOP = 1, QKV_RO_TEXT = 2, QKV_RO_RATE = 4, QKV_RO_VARIANT = 8, QKV_RO_RUN = 16, QKV_RO_CURVE = 32 };

/* a key's value (every one may also be null or absent, read as "not recorded", unless required) */
typedef enum qkv_results_type {
    QKV_RT_NUM,         /* a finite number in [lo, hi] */
    QKV_RT_COUNT,       /* a whole number in [0, 2^53] */
    QKV_RT_STR,         /* a string */
    QKV_RT_BOOL,        /* true or false */
    QKV_RT_OBJECT,      /* an object */
    QKV_RT_NUMS,        /* an array of numbers in [lo, hi] */
    QKV_RT_COUNTS,      /* an array of whole numbers >= 0 */
    QKV_RT_OBJECTS,     /* an array of objects */
} qkv_results_type;

#define QKV_RESULTS_RATE DBL_TRUE_MIN /* a learning rate's least value: every positive double is one */

/* X(ID, "key", type, lo, hi, required, objects), in the order the writer writes them; lo and hi
 * bound a number (an array's elements, a series' points) and are 0 for the other types */
#define QKV_RESULTS_KEYS(X)                                                                              \
    X(TITLE, "title", QKV_RT_STR, 0, 0, true, QKV_RO_TOP)                                                \
    X(THRESHOLD, "threshold", QKV_RT_NUM, 0, INFINITY, false, QKV_RO_TOP)                                \
    X(BASELINE, "baseline", QKV_RT_STR, 0, 0, true, QKV_RO_TOP)     /* a variant's name */               \
    X(METRIC, "metric", QKV_RT_STR, 0, 0, false, QKV_RO_TOP)        /* QKV_METRIC_NAMES */               \
    X(TASK, "task", QKV_RT_STR, 0, 0, false, QKV_RO_TOP)                                                 \
    X(CHANCE, "chance", QKV_RT_NUM, 0, 1, false, QKV_RO_TOP)                                             \
    X(NO_RETRIEVAL, "no_retrieval", QKV_RT_NUM, 0, 1, false, QKV_RO_TOP)                                 \
    X(D_MODEL, "d_model", QKV_RT_COUNT, 0, 0, false, QKV_RO_TOP)                                         \
    X(LAYERS, "layers", QKV_RT_COUNT, 0, 0, false, QKV_RO_TOP)                                           \
    X(HEADS, "heads", QKV_RT_COUNT, 0, 0, false, QKV_RO_TOP)                                             \
    X(LRS, "lrs", QKV_RT_NUMS, QKV_RESULTS_RATE, INFINITY, false, QKV_RO_TOP)                            \
    X(RATE_CHOICE, "rate_choice", QKV_RT_OBJECT, 0, 0, false, QKV_RO_TOP)                                \
    /* the reader keeps the numbers of grid and pilot_seeds and skips anything else */                   \
    X(GRID, "grid", QKV_RT_NUMS, QKV_RESULTS_RATE, INFINITY, false, QKV_RO_RATE)                         \
    X(RULE, "rule", QKV_RT_STR, 0, 0, false, QKV_RO_RATE)                                                \
    X(PILOT, "pilot", QKV_RT_STR, 0, 0, false, QKV_RO_RATE)                                              \
    X(PILOT_SEEDS, "pilot_seeds", QKV_RT_COUNTS, 0, 0, false, QKV_RO_RATE)                               \
    X(TEXT, "text", QKV_RT_OBJECT, 0, 0, false, QKV_RO_TOP)                                              \
    X(TOKENIZER, "tokenizer", QKV_RT_STR, 0, 0, true, QKV_RO_TEXT)                                       \
    X(PIECES, "pieces", QKV_RT_COUNT, 0, 0, false, QKV_RO_TEXT)                                          \
    X(BYTES_PER_TOKEN, "bytes_per_token", QKV_RT_NUM, 0, INFINITY, false, QKV_RO_TEXT)                   \
    X(MAX_SOLVED_AT, "max_solved_at", QKV_RT_COUNT, 0, 0, false, QKV_RO_TOP)                             \
    X(SEEDS, "seeds", QKV_RT_COUNTS, 0, 0, false, QKV_RO_TOP)                                            \
    X(VERSION, "version", QKV_RT_STR, 0, 0, false, QKV_RO_TOP)                                           \
    X(WALL_SECONDS, "wall_seconds", QKV_RT_NUM, 0, INFINITY, false, QKV_RO_TOP)                          \
    X(JOBS, "jobs", QKV_RT_COUNT, 0, 0, false, QKV_RO_TOP)                                               \
    X(RUNS_PLANNED, "runs_planned", QKV_RT_COUNT, 0, 0, false, QKV_RO_TOP)                               \
    X(MISSING_RUNS, "missing_runs", QKV_RT_COUNT, 0, 0, false, QKV_RO_TOP)                               \
    X(RUNS_TO_EXTEND, "runs_to_extend", QKV_RT_COUNT, 0, 0, false, QKV_RO_TOP)                           \
    X(VARIANTS, "variants", QKV_RT_OBJECTS, 0, 0, true, QKV_RO_TOP)                                      \
    X(NAME, "name", QKV_RT_STR, 0, 0, true, QKV_RO_VARIANT)                                              \
    X(SETS, "sets", QKV_RT_STR, 0, 0, false, QKV_RO_VARIANT)                                             \
    X(ATTN_PARAMS, "attn_params", QKV_RT_COUNT, 0, 0, false, QKV_RO_VARIANT)                             \
    X(PARAMS, "params", QKV_RT_COUNT, 0, 0, false, QKV_RO_VARIANT)                                       \
    X(RUNS_OK, "runs_ok", QKV_RT_COUNT, 0, 0, false, QKV_RO_VARIANT)                                     \
    X(ACC_MEAN, "acc_mean", QKV_RT_NUM, 0, 1, false, QKV_RO_VARIANT)                                     \
    X(ACC_STD, "acc_std", QKV_RT_NUM, 0, 1, false, QKV_RO_VARIANT)                                       \
    X(ACC_MIN, "acc_min", QKV_RT_NUM, 0, 1, false, QKV_RO_VARIANT)                                       \
    X(LOSS_MEAN, "loss_mean", QKV_RT_NUM, 0, INFINITY, false, QKV_RO_VARIANT)                            \
    X(LOSS_STD, "loss_std", QKV_RT_NUM, 0, INFINITY, false, QKV_RO_VARIANT)                              \
    X(STEPS_TO_THRESHOLD, "steps_to_threshold", QKV_RT_COUNT, 0, 0, false, QKV_RO_VARIANT | QKV_RO_RUN)  \
    X(REACHED, "reached", QKV_RT_COUNT, 0, 0, false, QKV_RO_VARIANT)                                     \
    X(SECONDS, "seconds", QKV_RT_NUM, 0, INFINITY, false, QKV_RO_VARIANT | QKV_RO_RUN)                   \
    X(DIAG_SHARE, "diag_share", QKV_RT_NUM, 0, 1, false, QKV_RO_VARIANT)                                 \
    X(FIRST_SHARE, "first_share", QKV_RT_NUM, 0, 1, false, QKV_RO_VARIANT)                               \
    X(ENTROPY, "entropy", QKV_RT_NUM, 0, INFINITY, false, QKV_RO_VARIANT)                                \
    X(ENTROPY_UNIFORM, "entropy_uniform", QKV_RT_NUM, 0, INFINITY, false, QKV_RO_VARIANT)                \
    X(VERDICTS, "verdicts", QKV_RT_STR, 0, 0, false, QKV_RO_VARIANT)                                     \
    X(BUDGET, "budget", QKV_RT_COUNT, 0, 0, false, QKV_RO_VARIANT | QKV_RO_RUN)                          \
    X(LR, "lr", QKV_RT_NUM, 0, INFINITY, false, QKV_RO_VARIANT | QKV_RO_RUN)                             \
    X(ACC_CI_LOW, "acc_ci_low", QKV_RT_NUM, 0, 1, false, QKV_RO_VARIANT)                                 \
    X(ACC_CI_HIGH, "acc_ci_high", QKV_RT_NUM, 0, 1, false, QKV_RO_VARIANT)                               \
    X(LOSS_CI_LOW, "loss_ci_low", QKV_RT_NUM, 0, INFINITY, false, QKV_RO_VARIANT)                        \
    X(LOSS_CI_HIGH, "loss_ci_high", QKV_RT_NUM, 0, INFINITY, false, QKV_RO_VARIANT)                      \
    X(DELTA_VS_BASELINE, "delta_vs_baseline", QKV_RT_NUM, -INFINITY, INFINITY, false, QKV_RO_VARIANT)    \
    X(DELTA_CI_LOW, "delta_ci_low", QKV_RT_NUM, -INFINITY, INFINITY, false, QKV_RO_VARIANT)              \
    X(DELTA_CI_HIGH, "delta_ci_high", QKV_RT_NUM, -INFINITY, INFINITY, false, QKV_RO_VARIANT)            \
    X(P_VALUE, "p_value", QKV_RT_NUM, 0, 1, false, QKV_RO_VARIANT)                                       \
    X(P_HOLM, "p_holm", QKV_RT_NUM, 0, 1, false, QKV_RO_VARIANT)                                         \
    X(SIGNIFICANT, "significant", QKV_RT_BOOL, 0, 0, false, QKV_RO_VARIANT)                              \
    X(SOLVED, "solved", QKV_RT_COUNT, 0, 0, false, QKV_RO_VARIANT)                                       \
    X(UNSOLVED, "unsolved", QKV_RT_COUNT, 0, 0, false, QKV_RO_VARIANT)                                   \
    X(MATCHED_D_FF, "matched_d_ff", QKV_RT_COUNT, 0, 0, false, QKV_RO_VARIANT)                           \
    X(BASELINE_PARAMS, "baseline_params", QKV_RT_COUNT, 0, 0, false, QKV_RO_VARIANT)                     \
    X(SCORE_SYMMETRY, "score_symmetry", QKV_RT_NUM, -1, 1, false, QKV_RO_VARIANT)                        \
    X(SCORE_NEGATIVE_SHARE, "score_negative_share", QKV_RT_NUM, 0, 1, false, QKV_RO_VARIANT)             \
    X(PREV_SHARE, "prev_share", QKV_RT_NUM, 0, 1, false, QKV_RO_VARIANT)                                 \
    /* the same at step 0, before the first update (train/observe.h) */                                  \
    X(START_DIAG_SHARE, "start_diag_share", QKV_RT_NUM, 0, 1, false, QKV_RO_VARIANT)                     \
    X(START_PREV_SHARE, "start_prev_share", QKV_RT_NUM, 0, 1, false, QKV_RO_VARIANT)                     \
    X(START_SCORE_SYMMETRY, "start_score_symmetry", QKV_RT_NUM, -1, 1, false, QKV_RO_VARIANT)            \
    X(START_SCORE_NEGATIVE_SHARE, "start_score_negative_share", QKV_RT_NUM, 0, 1, false, QKV_RO_VARIANT) \
    X(RUNS_NOT_STARTED, "runs_not_started", QKV_RT_COUNT, 0, 0, false, QKV_RO_VARIANT)                   \
    X(RUNS, "runs", QKV_RT_OBJECTS, 0, 0, false, QKV_RO_VARIANT)                                         \
    X(SEED, "seed", QKV_RT_COUNT, 0, 0, false, QKV_RO_RUN)                                               \
    X(CHOSEN, "chosen", QKV_RT_BOOL, 0, 0, false, QKV_RO_RUN)                                            \
    X(OK, "ok", QKV_RT_BOOL, 0, 0, false, QKV_RO_RUN)                                                    \
    X(FINAL_ACC, "final_acc", QKV_RT_NUM, 0, 1, false, QKV_RO_RUN)                                       \
    X(FINAL_LOSS, "final_loss", QKV_RT_NUM, 0, INFINITY, false, QKV_RO_RUN)                              \
    X(VAL_ACC, "val_acc", QKV_RT_NUM, 0, 1, false, QKV_RO_RUN | QKV_RO_CURVE)                            \
    X(VAL_LOSS, "val_loss", QKV_RT_NUM, 0, INFINITY, false, QKV_RO_RUN | QKV_RO_CURVE)                   \
    X(VERDICT, "verdict", QKV_RT_STR, 0, 0, false, QKV_RO_RUN)      /* QKV_RESULTS_SOLVED or _UNSOLVED */ \
    X(TREND, "trend", QKV_RT_STR, 0, 0, false, QKV_RO_RUN)          /* QKV_RESULTS_IMPROVING or _FLAT */  \
    X(FLAT_SINCE, "flat_since", QKV_RT_COUNT, 0, 0, false, QKV_RO_RUN)                                   \
    X(CURVE, "curve", QKV_RT_OBJECT, 0, 0, false, QKV_RO_RUN)                                            \
    /* read, never written: bits per byte a run of another program may record */                         \
    X(EVAL_BPB, "eval_bpb", QKV_RT_NUM, 0, INFINITY, false, QKV_RO_RUN)                                  \
    X(STEP, "step", QKV_RT_COUNT, 0, 0, false, QKV_RO_CURVE)                                             \
    X(EVAL_ACC, "eval_acc", QKV_RT_NUM, 0, 1, false, QKV_RO_CURVE)                                       \
    X(EVAL_LOSS, "eval_loss", QKV_RT_NUM, 0, INFINITY, false, QKV_RO_CURVE)

#define QKV_RK_ENUM_(id, key, type, lo, hi, required, in) QKV_RK_##id,
typedef enum qkv_results_key { QKV_RESULTS_KEYS(QKV_RK_ENUM_) QKV_RK_COUNT } qkv_results_key;
#undef QKV_RK_ENUM_

/* the values of a run's verdict and trend */
#define QKV_RESULTS_SOLVED "solved"
#define QKV_RESULTS_UNSOLVED "unsolved"
#define QKV_RESULTS_IMPROVING "improving"
#define QKV_RESULTS_FLAT "flat"

typedef struct qkv_results_key_def {
    const char *key;
    qkv_results_type type;
    double lo, hi;
    bool required;      /* absent or null is an error */
    unsigned in;        /* QKV_RO_* */
} qkv_results_key_def;

/* the rows of QKV_RESULTS_KEYS, indexed by qkv_results_key */
QKV_INTERNAL extern const qkv_results_key_def qkv__results_keys[QKV_RK_COUNT];
/* key ID's spelling: QKV_RK(TITLE) is "title" */
#define QKV_RK(id) (qkv__results_keys[QKV_RK_##id].key)

/* ---- reading: io/json.h's typed getters with the key's type, range and whether it is required
 * taken from its row (each key must be of the getter's type: a programmer's error otherwise) ---- */

/* o's item k (NULL: absent, or o NULL), for a message */
QKV_INTERNAL const struct cJSON *qkv__results_item(const struct cJSON *o, qkv_results_key k);
/* NUM: a finite number in the key's range; NaN when absent or null */
QKV_INTERNAL double qkv__results_num(qkv_json_reader *r, const struct cJSON *o, const char *where, qkv_results_key k);
/* COUNT: a whole number; -1 when absent or null */
QKV_INTERNAL long long qkv__results_count(qkv_json_reader *r, const struct cJSON *o, const char *where,
                                          qkv_results_key k);
/* STR: a string (borrowed); NULL when absent or null, which is wrong when the key is required */
QKV_INTERNAL const char *qkv__results_str(qkv_json_reader *r, const struct cJSON *o, const char *where,
                                          qkv_results_key k);
/* BOOL: true or false; dflt when absent or null */
QKV_INTERNAL bool qkv__results_bool(qkv_json_reader *r, const struct cJSON *o, const char *where, qkv_results_key k,
                                    bool dflt);
/* NUMS, COUNTS, OBJECTS: an array (its elements unchecked); NULL when absent, which is wrong when the
 * key is required */
QKV_INTERNAL const struct cJSON *qkv__results_array(qkv_json_reader *r, const struct cJSON *o, const char *where,
                                                    qkv_results_key k);
/* a CURVE key's series: an array (its elements unchecked); NULL when absent */
QKV_INTERNAL const struct cJSON *qkv__results_series(qkv_json_reader *r, const struct cJSON *o, const char *where,
                                                     qkv_results_key k);
/* OBJECT: an object; NULL when absent or null */
QKV_INTERNAL const struct cJSON *qkv__results_object(qkv_json_reader *r, const struct cJSON *o, const char *where,
                                                     qkv_results_key k);

#endif
