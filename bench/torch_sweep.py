#!/usr/bin/python3
"""`qkv bench --sweep` in PyTorch: the same sweep of tiny training runs, the same work.

  /usr/bin/python3 bench/torch_sweep.py [--runs-steps N] [--jobs J] [--config FILE] [--json] [--autocast]

The sweep (the lists of src/cli/bench_sweep.c): configs/recall.json x the attention variants
full, shared, qk_tied, kv_tied x the seeds 0, 1, 2, N steps each (default 300, as qkv's), J runs
at once (default: one per core). Each of the J worker processes has torch.set_num_threads(1)
and OPENBLAS_NUM_THREADS=1 / OMP_NUM_THREADS=1 in its environment, imports PyTorch once and
then trains whole runs, one after another, as the workers of a sweep would: the clock starts
when every worker has imported PyTorch (the import is reported as startup_seconds, not timed)
and stops when the last run ends. qkv instead starts a process per run, inside its clock.

Each run does what a `qkv train --threads 1` run of the config does (src/train/train.c):
- the model: scripts/torch_fixtures.py's Model, the one the parity tests check against qkv's
  (and bench/torch_bench.py times), with the config's sizes and the run's attention variant;
- the data: the recall task of src/tasks/task.c (gen_recall): P pairs k1 v1 ... kP vP of
  distinct keys from [0, K) and values from [K, K + V), then the P keys again in a random
  order, the loss only at those query positions; eval_examples evaluation examples and as
  many validation examples held out (validation avoids evaluation examples), and training
  examples drawn again if they are held out. Other random streams than qkv's: the same work,
  not the same numbers;
- a step: the whole batch in one forward and backward, the mean loss over the step's targets,
  as PyTorch's users train (qkv splits the same step into train.shards micro-batches, 8 of 4
  for the shipped config, each loss weighted by its share of the targets: the same objective
  and gradient; --micro-batches makes PyTorch do the same, as earlier versions of this
  benchmark did, which costs PyTorch eight small passes); gradient clipping to optim.clip;
  Adam (optim.lr, betas, eps, weight decay);
- every train.eval_every steps and at the last: loss and accuracy on the evaluation and the
  validation examples, in batches of train.batch (the last one padded with rows that carry no
  loss, as qkv's are), then a checkpoint (weights, Adam state, step; written to a temporary
  file, fsync'd and renamed, as qkv's are); a metrics line every train.log_every steps and
  at every evaluation; at the end the weights and a summary.
--autocast runs every forward and loss (training and evaluation) under torch.autocast("cpu",
dtype=torch.bfloat16), PyTorch's counterpart of `qkv bench --sweep --precision bf16`.
The matrix-product FLOPs of a run are counted with PyTorch's profiler (aten::mm, addmm, bmm)
on one step and one evaluation batch of each variant, before the sweep.

Prints a table, or with --json one line with the keys qkv bench --sweep --json prints.
"""
import argparse
import json
import math
import multiprocessing as mp
import os
import resource
import shutil
import statistics
import sys
import tempfile
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
VARIANTS = ["full", "shared", "qk_tied", "kv_tied"]
SEEDS = [0, 1, 2]
IGNORE = -100  # qkv's QKV_IGNORE
THREAD_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")

# qkv's defaults (docs/config.md) for the keys a run uses
DEFAULTS = {
    "model": {"vocab": 0, "seq_len": 0, "d_model": 64, "heads": 4, "layers": 2, "d_ff": 256, "activation": "gelu",
              "attention": {"qkv": "full", "scale": "head_dim", "causal": True, "rel_pos_bias": False,
                            "rel_pos_max": 32, "gate": "none", "self_mask": False}},
    "task": {"name": "recall", "pairs": 8, "keys": 32, "values": 32, "queries": 0},
    "train": {"steps": 3000, "batch": 32, "shards": 0, "seed": 0, "eval_every": 250, "eval_examples": 1000,
              "val_examples": 0, "log_every": 50, "checkpoint_every": 0},
    "optim": {"name": "adam", "lr": 1e-3, "beta1": 0.9, "beta2": 0.999, "eps": 1e-8, "weight_decay": 0.0,
              "clip": 0.0, "schedule": "constant", "warmup": 0},
}


def merge(base, over):
    out = dict(base)
    for k, v in over.items():
        out[k] = merge(base[k], v) if isinstance(v, dict) and isinstance(base.get(k), dict) else v
    return out


def load_config(path, steps):
    with open(path) as f:
        c = merge(DEFAULTS, json.load(f))
    t, o, tr = c["task"], c["optim"], c["train"]
    if t["name"] != "recall":
        sys.exit(f"torch_sweep.py: {path}: task {t['name']}: only the recall task is written here")
    if o["name"] != "adam" or o["schedule"] != "constant" or o["warmup"]:
        sys.exit(f"torch_sweep.py: {path}: only Adam with the constant schedule and no warmup is written here")
    tr["steps"] = steps
    if tr["shards"] == 0:  # qkv_train_shards: 8, 4, 2 or 1, whichever divides the batch
        tr["shards"] = next(s for s in (8, 4, 2, 1) if tr["batch"] % s == 0)
    t["queries"] = t["queries"] or t["pairs"]
    c["seq_len"] = 2 * t["pairs"] + t["queries"]
    c["vocab"] = t["keys"] + t["values"]
    tr["val_examples"] = tr["val_examples"] or tr["eval_examples"]
    return c


def model_config(c, variant):
    from torch_fixtures import BASE  # noqa: E402
    m, a = c["model"], c["model"]["attention"]
    return dict(BASE, vocab=m["vocab"] or c["vocab"], seq_len=m["seq_len"] or c["seq_len"], d_model=m["d_model"],
                heads=m["heads"], layers=m["layers"], d_ff=m["d_ff"], activation=m["activation"], qkv=variant,
                scale=a["scale"], causal=a["causal"], rel_pos_bias=a["rel_pos_bias"], rel_pos_max=a["rel_pos_max"],
                gate=a["gate"], self_mask=a["self_mask"], pad=False)


def evaluations(steps, every):
    return steps // every + (steps % every != 0) if every > 0 else 1


# ---- the recall task ------------------------------------------------------------------------
class Recall:
    """gen_recall's examples, a batch at a time; held-out examples are never trained on."""

    def __init__(self, c, seed):
        import torch
        t = c["task"]
        self.P, self.Q, self.K, self.V, self.T = t["pairs"], t["queries"], t["keys"], t["values"], c["seq_len"]
        self.g = torch.Generator().manual_seed(seed * 1000003 + 101)
        self.eval = self.draw_avoiding(c["train"]["eval_examples"], set(), torch.Generator().manual_seed(seed * 1000003 + 202))
        held = {r.numpy().tobytes() for r in self.eval[0]}
        self.val = self.draw_avoiding(c["train"]["val_examples"], held, torch.Generator().manual_seed(seed * 1000003 + 303))
        self.held = held | {r.numpy().tobytes() for r in self.val[0]}

    def draw(self, n, g):
        import torch
        P, Q, K = self.P, self.Q, self.K
        keys = torch.rand(n, K, generator=g).argsort(1)[:, :P]  # P distinct keys
        vals = torch.randint(K, K + self.V, (n, P), generator=g)
        order = torch.rand(n, P, generator=g).argsort(1)[:, :Q]  # the pairs asked about, in a random order
        tok = torch.empty(n, self.T, dtype=torch.long)
        tok[:, 0:2 * P:2], tok[:, 1:2 * P:2] = keys, vals
        tok[:, 2 * P:] = keys.gather(1, order)
        tgt = torch.full((n, self.T), IGNORE, dtype=torch.long)
        tgt[:, 2 * P:] = vals.gather(1, order)
        return tok, tgt

    def draw_avoiding(self, n, avoid, g):
        tok, tgt = self.draw(n, g)
        if avoid:  # the tokens determine the targets: an example is its tokens
            for i, row in enumerate(tok.numpy()):
                while row.tobytes() in avoid:
                    t1, g1 = self.draw(1, g)
                    tok[i], tgt[i] = t1[0], g1[0]
                    row = tok[i].numpy()
        return tok, tgt

    def train_batch(self, n):
        return self.draw_avoiding(n, self.held, self.g)


def batches(split, batch):
    """a held-out split in batches of `batch` rows, the last padded with rows that carry no loss"""
    import torch
    tok, tgt = split
    out = []
    for first in range(0, tok.shape[0], batch):
        t, y = tok[first:first + batch], tgt[first:first + batch]
        if t.shape[0] < batch:
            pad = batch - t.shape[0]
            t = torch.cat([t, torch.zeros(pad, t.shape[1], dtype=t.dtype)])
            y = torch.cat([y, torch.full((pad, y.shape[1]), IGNORE, dtype=y.dtype)])
        out.append((t, y))
    return out


# ---- files -----------------------------------------------------------------------------------
def write_atomic(path, save):
    """save(f) into path.tmp.PID, fsync, rename over path, fsync the directory (as qkv does)"""
    tmp = f"{path}.tmp.{os.getpid()}"
    with open(tmp, "wb") as f:
        save(f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    d = os.open(os.path.dirname(path), os.O_RDONLY)
    try:
        os.fsync(d)
    finally:
        os.close(d)


# ---- one run ---------------------------------------------------------------------------------
def train_run(c, variant, seed, out):
    import torch
    import torch.nn.functional as F
    from torch_fixtures import Model

    tr, o = c["train"], c["optim"]
    os.makedirs(out)
    write_atomic(os.path.join(out, "config.json"), lambda f: f.write(json.dumps(c, indent=1).encode()))
    torch.manual_seed(seed)
    mc = model_config(c, variant)
    V = mc["vocab"]
    m = Model(mc)
    params = list(m.parameters())
    opt = torch.optim.Adam(params, lr=o["lr"], betas=(o["beta1"], o["beta2"]), eps=o["eps"],
                           weight_decay=o["weight_decay"])
    task = Recall(c, seed)
    eval_b, val_b = batches(task.eval, tr["batch"]), batches(task.val, tr["batch"])
    S, rows = tr["passes"], tr["batch"] // tr["passes"]
    metrics = open(os.path.join(out, "metrics.jsonl"), "w")

    def amp():  # CPU autocast to bf16 with --autocast (the products in bf16, the rest float32)
        return torch.autocast("cpu", dtype=torch.bfloat16, enabled=c.get("autocast", False))

    def evaluate(bs):
        loss, correct, count = 0.0, 0, 0
        with torch.no_grad(), amp():
            for tok, tgt in bs:
                logits = m(tok, None).reshape(-1, V)
                y = tgt.reshape(-1)
                keep = y != IGNORE
                loss += float(F.cross_entropy(logits, y, ignore_index=IGNORE, reduction="sum"))
                correct += int((logits.argmax(-1)[keep] == y[keep]).sum())
                count += int(keep.sum())
        return {"loss": loss / max(count, 1), "accuracy": correct / max(count, 1)}

    loss_sum, loss_n, ev, va = 0.0, 0, None, None
    t0 = time.perf_counter()
    for step in range(1, tr["steps"] + 1):
        tok, tgt = task.train_batch(tr["batch"])
        counts = (tgt != IGNORE).reshape(S, rows * tgt.shape[1]).sum(1).tolist()
        total = sum(counts)
        opt.zero_grad(set_to_none=False)
        step_loss = 0.0
        if S == 1:  # the whole batch in one pass: the mean over its targets
            with amp():
                lk = F.cross_entropy(m(tok, None).reshape(-1, V), tgt.reshape(-1), ignore_index=IGNORE)
            if total:
                lk.backward()
            counts, step_loss = [], lk.detach()
        for k in range(len(counts)):  # with --micro-batches: each alone, its gradient accumulated
            t, y = tok[k * rows:(k + 1) * rows], tgt[k * rows:(k + 1) * rows]
            with amp():
                lk = F.cross_entropy(m(t, None).reshape(-1, V), y.reshape(-1), ignore_index=IGNORE)
            if counts[k]:
                (lk * (counts[k] / total)).backward()
            step_loss = step_loss + lk.detach() * (counts[k] / total)
        gnorm = float(torch.nn.utils.clip_grad_norm_(params, o["clip"])) if o["clip"] > 0 else 0.0
        lv = float(step_loss)
        if not (math.isfinite(lv) and math.isfinite(gnorm)):
            raise RuntimeError(f"step {step}: non-finite loss or gradient")
        opt.step()
        loss_sum, loss_n = loss_sum + lv, loss_n + 1
        last = step == tr["steps"]
        do_eval = last or (tr["eval_every"] > 0 and step % tr["eval_every"] == 0)
        if do_eval:
            ev, va = evaluate(eval_b), evaluate(val_b)
        if do_eval or step % tr["log_every"] == 0:
            line = {"step": step, "loss": loss_sum / loss_n, "lr": o["lr"], "grad_norm": gnorm}
            if do_eval:
                line.update(eval_loss=ev["loss"], eval_accuracy=ev["accuracy"], val_loss=va["loss"],
                            val_accuracy=va["accuracy"])
            line.update(elapsed=time.perf_counter() - t0)
            metrics.write(json.dumps(line) + "\n")
            metrics.flush()
            loss_sum, loss_n = 0.0, 0
        every = tr["checkpoint_every"]
        if last or (every > 0 and step % every == 0) or (every == 0 and do_eval):
            state = {"model": m.state_dict(), "optim": opt.state_dict(), "step": step}
            write_atomic(os.path.join(out, "checkpoint.pt"), lambda f: torch.save(state, f))
    metrics.close()
    write_atomic(os.path.join(out, "model.pt"), lambda f: torch.save(m.state_dict(), f))
    summary = {"eval_accuracy": ev["accuracy"], "eval_loss": ev["loss"], "val_accuracy": va["accuracy"],
               "steps": tr["steps"], "seconds": time.perf_counter() - t0}
    write_atomic(os.path.join(out, "summary.json"), lambda f: f.write(json.dumps(summary).encode()))
    return summary


def worker(c, out, tasks, results, ready):
    import torch
    torch.set_num_threads(1)
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    ready.wait()
    while True:
        item = tasks.get()
        if item is None:
            return
        variant, seed = item
        t = time.perf_counter()
        try:
            s = train_run(c, variant, seed, os.path.join(out, f"{variant}-s{seed}"))
        except Exception as e:  # noqa: BLE001  (said by the parent, which stops)
            results.put({"variant": variant, "seed": seed, "error": repr(e)})
            return
        s.update(variant=variant, seed=seed, run_seconds=time.perf_counter() - t,
                 rss_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
        results.put(s)


# ---- before the sweep: the ceiling and the FLOPs of a run, in the parent ---------------------
def sgemm_ceiling(n=1024, reps=10):
    import torch
    a, b = torch.rand(n, n), torch.rand(n, n)
    best = 0.0
    for r in range(reps + 1):
        t = time.perf_counter()
        torch.mm(a, b)
        g = 2.0 * n ** 3 / (time.perf_counter() - t) / 1e9
        if r > 0:
            best = max(best, g)
    return best


def run_flops(c, variant):
    """matrix-product FLOPs of one run of the variant: one step and one evaluation batch profiled"""
    import torch
    import torch.nn.functional as F
    from torch_fixtures import Model
    tr = c["train"]
    mc = model_config(c, variant)
    m = Model(mc)
    task = Recall(c, 0)
    tok, tgt = task.train_batch(tr["batch"])
    S, rows = tr["passes"], tr["batch"] // tr["passes"]

    def flops(prof):
        return sum(e.flops for e in prof.key_averages() if e.key in ("aten::mm", "aten::addmm", "aten::bmm",
                                                                        "aten::baddbmm"))
    with torch.profiler.profile(with_flops=True) as p:
        for k in range(S):
            t, y = tok[k * rows:(k + 1) * rows], tgt[k * rows:(k + 1) * rows]
            F.cross_entropy(m(t, None).reshape(-1, mc["vocab"]), y.reshape(-1), ignore_index=IGNORE).backward()
    step = flops(p)
    with torch.no_grad(), torch.profiler.profile(with_flops=True) as p:
        m(tok, None)
    batch = flops(p)
    n_eval = -(-tr["eval_examples"] // tr["batch"]) + -(-tr["val_examples"] // tr["batch"])
    return tr["steps"] * step + evaluations(tr["steps"], tr["eval_every"]) * n_eval * batch


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs-steps", type=int, default=300, help="steps per run (default 300, as qkv's)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count(), help="runs at once (default: one per core)")
    ap.add_argument("--config", default=os.path.join(ROOT, "configs", "recall.json"))
    ap.add_argument("--json", action="store_true", help="one JSON line")
    ap.add_argument("--micro-batches", action="store_true",
                    help="split each step into qkv's train.shards passes (default: the whole batch in one pass)")
    ap.add_argument("--autocast", action="store_true", help="forwards and losses under CPU autocast to bf16")
    a = ap.parse_args()
    for v in THREAD_VARS:  # before PyTorch is imported, here and in every worker
        os.environ[v] = "1"
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    import torch
    torch.set_num_threads(1)
    c = load_config(a.config, a.runs_steps)
    tr = c["train"]
    tr["passes"] = tr["shards"] if a.micro_batches else 1  # forward/backward passes per step
    c["autocast"] = a.autocast
    runs = [(v, s) for v in VARIANTS for s in SEEDS]
    jobs = max(1, min(a.jobs, len(runs)))
    ceiling = sgemm_ceiling()
    flops = sum(run_flops(c, v) for v in VARIANTS) * len(SEEDS)

    out = tempfile.mkdtemp(prefix="torch-sweep-")
    if not a.json:
        print(f"torch_sweep.py: sweep of {len(runs)} runs ({len(VARIANTS)} variants x {len(SEEDS)} seeds) of "
              f"{tr['steps']} steps, {jobs} at a time, in {out}", file=sys.stderr)
    ctx = mp.get_context("spawn")
    tasks, results, ready = ctx.Queue(), ctx.Queue(), ctx.Barrier(jobs + 1)
    for r in runs:
        tasks.put(r)
    for _ in range(jobs):
        tasks.put(None)
    t_start = time.perf_counter()
    procs = [ctx.Process(target=worker, args=(c, out, tasks, results, ready)) for _ in range(jobs)]
    for p in procs:
        p.start()
    ready.wait()
    t0 = time.perf_counter()
    done = []
    try:
        while len(done) < len(runs):
            r = results.get()
            if "error" in r:
                sys.exit(f"torch_sweep.py: run {r['variant']} seed {r['seed']} failed: {r['error']}")
            done.append(r)
        seconds = time.perf_counter() - t0
    finally:
        for p in procs:
            if len(done) < len(runs):
                p.terminate()
            p.join()
        shutil.rmtree(out, ignore_errors=True)

    tokens = len(runs) * tr["steps"] * tr["batch"] * c["seq_len"]
    gflops = flops / seconds / 1e9
    res = {"program": "torch", "sweep": "recall", "config": os.path.relpath(a.config, ROOT), "variants": VARIANTS,
           "seeds": SEEDS, "runs": len(runs), "steps": tr["steps"], "jobs": jobs, "batch": tr["batch"],
           "micro_batches": tr["shards"], "torch_passes": tr["passes"], "seq_len": c["seq_len"], "eval_every": tr["eval_every"],
           "eval_examples": tr["eval_examples"], "val_examples": tr["val_examples"],
           "evaluations_per_run": evaluations(tr["steps"], tr["eval_every"]), "seconds": round(seconds, 3),
           "runs_per_min": round(len(runs) / seconds * 60, 3), "tokens": tokens,
           "tokens_per_s_per_core": round(tokens / seconds / jobs), "gemm_flops": flops, "gflops": round(gflops, 3),
           "ceiling_gflops_per_core": round(ceiling, 2), "ceiling_gflops": round(ceiling * jobs, 2),
           "ceiling_share": round(gflops / (ceiling * jobs), 4) if ceiling else 0,
           "run_seconds_median": round(statistics.median(r["run_seconds"] for r in done), 3),
           "run_seconds_max": round(max(r["run_seconds"] for r in done), 3),
           "peak_rss_mb": round(max(r["rss_mb"] for r in done), 1),
           "eval_accuracy_mean": round(statistics.mean(r["eval_accuracy"] for r in done), 4),
           "startup_seconds": round(t0 - t_start, 3), "torch": torch.__version__,
           "precision": "bf16" if a.autocast else "f32"}
    if a.json:
        print(json.dumps(res), flush=True)
        return
    print(f"sweep: {res['config']}, variants {' '.join(VARIANTS)} x seeds {' '.join(map(str, SEEDS))} = "
          f"{len(runs)} runs of {tr['steps']} steps, {jobs} at a time, PyTorch {torch.__version__} workers of one "
          f"thread each;\na step: {tr['batch']} examples of {c['seq_len']} tokens in {tr['passes']} forward/backward pass(es); "
          f"evaluation every {tr['eval_every']} steps ({tr['eval_examples']} + {tr['val_examples']} examples), "
          f"{res['evaluations_per_run']} per run; startup (importing PyTorch, not timed) {t0 - t_start:.2f} s")
    print(f"{'runs':>5} {'steps':>6} {'jobs':>5} {'seconds':>8} {'runs/min':>9} {'tokens/s/core':>14} {'GFLOP':>9} "
          f"{'GFLOP/s':>8} {'ceiling':>8} {'share':>7} {'run s':>8} {'RSS MB':>7} {'eval acc':>9}")
    print(f"{len(runs):5} {tr['steps']:6} {jobs:5} {seconds:8.2f} {res['runs_per_min']:9.2f} "
          f"{res['tokens_per_s_per_core']:14.0f} {flops / 1e9:9.1f} {gflops:8.2f} {ceiling * jobs:8.1f} "
          f"{100 * res['ceiling_share']:6.1f}% {res['run_seconds_median']:8.2f} {res['peak_rss_mb']:7.1f} "
          f"{res['eval_accuracy_mean']:9.3f}")


if __name__ == "__main__":
    main()
