/* The run directory: the files one training run owns, and what each holds. Every writer and
 * reader of a run (qkv train, qkv eval, qkv ablate, its diagnostics) names them from here.
 *
 *   config.json             the effective config: every key, vocab and seq_len filled in from
 *                           the task (qkv train --resume and qkv eval read it back)
 *   metrics.jsonl           one JSON object per logged step: step, loss, lr, grad_norm,
 *                           eval_loss and eval_accuracy at evaluations, skipped_steps,
 *                           tokens_per_s, elapsed; appended as the run goes (a resumed run
 *                           first drops the lines after its checkpoint)
 *   model.safetensors       the parameters, PyTorch-loadable (metadata: format pt, qkv_step,
 *                           qkv_config = the effective config, qkv_crc32 = the data's CRC-32;
 *                           a token run's vocabulary: train/vocabulary.h)
 *   checkpoint.safetensors  what --resume needs: the parameters, the optimizer's state
 *                           (optim.m, optim.v), the loop's state (state.scalars, checkpoint.c)
 *                           and the training data stream (state.rng); metadata as the model
 *                           file's, and qkv_optim_step
 *   summary.json            written once, when the run finished: final evaluation, train
 *                           loss, steps, seconds, parameter counts, and "machine", what it
 *                           was computed with (tensor/buildinfo.h; summaries of older runs
 *                           lack it, and readers need none of it) (its presence = done)
 *   train.log               the run's stderr when qkv ablate started it
 *   observed.safetensors    what reports show of the final model (train/observe.h)
 *   observed-start.safetensors  the same of the model at step 0, written as a fresh run starts
 *   tokenizer.model         the text task's sentencepiece vocabulary (task.tokenizer bpe or
 *                           unigram), as trained on the training part or read from
 *                           task.tokenizer_path; eval, sample, inspect and --resume use it
 *                           (never task.tokenizer_path again), checked against the SHA-256
 *                           the model files record (train/vocabulary.h)
 *
 * Every file but the two logs is replaced atomically (src/io/fileio.h), so a reader sees a
 * whole old file or a whole new one. */
#ifndef QKV_RUN_DIR_H
#define QKV_RUN_DIR_H

#define QKV_RUN_CONFIG "config.json"
#define QKV_RUN_METRICS "metrics.jsonl"
#define QKV_RUN_MODEL "model.safetensors"
#define QKV_RUN_CHECKPOINT "checkpoint.safetensors"
#define QKV_RUN_SUMMARY "summary.json"
#define QKV_RUN_LOG "train.log"
#define QKV_RUN_OBSERVED "observed.safetensors"
#define QKV_RUN_OBSERVED_START "observed-start.safetensors"
#define QKV_RUN_TOKENIZER "tokenizer.model"

#endif
