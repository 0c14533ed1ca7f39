/* qkv, the application layer the qkv command is built from: JSON configs, the toy tasks and
 * data files, training runs (the loop, evaluation, checkpoints, verdicts) and ablations. It
 * is built on qkv.h into build/libqkv-app.a (declarations QKV_APP_API), which the qkv command
 * and the tests link: it is not part of libqkv.so and is not installed, since it changes with
 * every feature of the command. */
#ifndef QKV_APP_H
#define QKV_APP_H

#include "qkv.h"
#include "tasks/task.h"         /* copy, reverse, sort, recall, induction, MAD tasks, text, JSON Lines */
#include "config/run_config.h"   /* a run's whole configuration and its defaults */
#include "config/config.h"      /* JSON config files and --set overrides */
#include "train/train.h"        /* training runs, evaluation */
#include "train/stop.h"         /* the stop flag SIGINT and SIGTERM set */
#include "train/sample.h"       /* generating tokens from a trained model */
#include "train/run_dir.h"      /* the files of a run directory */
#include "train/checkpoint.h"   /* resumable checkpoints */
#include "train/vocabulary.h"   /* a token run's vocabulary, bound to its model */
#include "train/verdict.h"      /* solved within the budget? still improving? */
#include "train/memory.h"       /* will a run fit in memory? */
#include "train/bench.h"        /* the training-step benchmark */
#include "ablate/ablate.h"      /* variants x seeds, run and reported */
#include "ablate/stats.h"       /* bootstrap intervals, permutation tests, Holm */

#endif
