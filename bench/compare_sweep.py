#!/usr/bin/python3
"""qkv against PyTorch on a sweep of tiny runs, side by side: `make bench-sweep-torch`.

Runs `qkv bench --sweep --json` and bench/torch_sweep.py --json (the same sweep, the same
work, in PyTorch) alternately, QKV_BENCH_ROUNDS times each (default 3: qkv, torch, qkv, torch,
qkv, torch), so both see the same machine state, and prints the median of each quantity over
the rounds for both, each round's runs per minute, and the ratio of the median runs per
minute (qkv / PyTorch). Extra arguments (--runs-steps N, --jobs J) go to both. PyTorch does each
step's whole batch in one pass, as its users do (QKV_TORCH_MICRO_BATCHES=1: qkv's micro-batches).
Last, one more qkv sweep with every product timed (`qkv bench --sweep --time-products`, not in
the medians): the share of its runs' time in matrix products, and the bound it sets on the
ratio, the ratio over that share (what it would be were everything else free).

Where qkv has bf16 products (`qkv bench --precision bf16` runs here), each round also runs
qkv's sweep with --precision bf16 and PyTorch's with --autocast (CPU autocast to bf16), and the
table gets their rows: bf16's runs per minute over float32's in each program, and qkv's best
over PyTorch's best of float32 and autocast bf16. QKV_BENCH_BF16=0 leaves them out.
"""
import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
QKV = [os.path.join(ROOT, "build", "qkv"), "bench", "--sweep", "--json"]
TORCH = ["/usr/bin/python3", os.path.join(ROOT, "bench", "torch_sweep.py"), "--json"] + \
    (["--micro-batches"] if os.environ.get("QKV_TORCH_MICRO_BATCHES") == "1" else [])
ROUNDS = int(os.environ.get("QKV_BENCH_ROUNDS", "3"))
KEYS = ("runs_per_min", "tokens_per_s_per_core", "gflops", "ceiling_gflops", "ceiling_share", "run_seconds_median",
        "peak_rss_mb", "eval_accuracy_mean", "seconds")


def run(cmd):
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, cwd=ROOT).stdout.strip().splitlines()
    return json.loads(out[-1])


def qkv_has_bf16():
    if os.environ.get("QKV_BENCH_BF16", "1") == "0":
        return False
    return subprocess.run([QKV[0], "bench", "--size", "tiny", "--steps", "1", "--precision", "bf16", "--json"],
                          capture_output=True).returncode == 0


def main():
    extra = sys.argv[1:]
    programs = [("qkv", QKV), ("torch", TORCH)]
    if qkv_has_bf16():
        programs += [("qkv-bf16", QKV + ["--precision", "bf16"]), ("torch-bf16", TORCH + ["--autocast"])]
    res = {name: [] for name, _ in programs}
    for i in range(ROUNDS):
        for name, cmd in programs:
            r = run(cmd + extra)
            res[name].append(r)
            print(f"round {i + 1}/{ROUNDS}: {name:10} {r['runs_per_min']:7.2f} runs/min ({r['seconds']:.1f} s)",
                  file=sys.stderr, flush=True)
    q0 = res["qkv"][0]
    med = {n: {k: statistics.median(r[k] for r in rs) for k in KEYS} for n, rs in res.items()}
    print(f"sweep: {q0['config']}, variants {' '.join(q0['variants'])} x seeds {' '.join(map(str, q0['seeds']))} = "
          f"{q0['runs']} runs of {q0['steps']} steps, {q0['jobs']} at a time (one thread each); a step: "
          f"{q0['batch']} examples of {q0['seq_len']} tokens (qkv: {q0['micro_batches']} micro-batches; PyTorch: "
          f"{res['torch'][0].get('torch_passes', q0['micro_batches'])} pass(es)); evaluation every "
          f"{q0['eval_every']} steps ({q0['eval_examples']} + {q0['val_examples']} examples), "
          f"{q0['evaluations_per_run']} per run")
    print(f"matrix-product work of the sweep: qkv counted {q0['gemm_flops'] / 1e9:.1f} GFLOP, PyTorch's profiler "
          f"{res['torch'][0]['gemm_flops'] / 1e9:.1f} GFLOP")
    print(f"{'program':16} {'runs/min':>9} {'tokens/s/core':>14} {'GFLOP/s':>8} {'ceiling':>8} {'share':>7} "
          f"{'run s':>7} {'RSS MB':>7} {'eval acc':>9}   runs/min of each round  (median of {ROUNDS} rounds)")
    labels = {"qkv": "qkv", "torch": "PyTorch", "qkv-bf16": "qkv bf16", "torch-bf16": "PyTorch autocast"}
    for name, _ in programs:
        label = labels[name]
        m = med[name]
        rounds = " ".join(f"{r['runs_per_min']:.2f}" for r in res[name])
        print(f"{label:16} {m['runs_per_min']:9.2f} {m['tokens_per_s_per_core']:14.0f} {m['gflops']:8.2f} "
              f"{m['ceiling_gflops']:8.1f} {100 * m['ceiling_share']:6.1f}% {m['run_seconds_median']:7.2f} "
              f"{m['peak_rss_mb']:7.1f} {m['eval_accuracy_mean']:9.3f}   {rounds}")
    print(f"ratio: {med['qkv']['runs_per_min'] / med['torch']['runs_per_min']:.2f}x "
          f"(median runs per minute, qkv / PyTorch; PyTorch {res['torch'][0]['torch']}, its import not timed: "
          f"{statistics.median(r['startup_seconds'] for r in res['torch']):.1f} s per sweep)")
    if "qkv-bf16" in med:
        rpm = {n: med[n]["runs_per_min"] for n in med}
        print(f"bf16: qkv {rpm['qkv-bf16'] / rpm['qkv']:.2f}x its float32 runs per minute, PyTorch's autocast "
              f"{rpm['torch-bf16'] / rpm['torch']:.2f}x its float32; qkv's best / PyTorch's best of float32 and "
              f"autocast bf16: {max(rpm['qkv'], rpm['qkv-bf16']) / max(rpm['torch'], rpm['torch-bf16']):.2f}x")
    timed = run(QKV + ["--time-products"] + extra)
    ratio = med['qkv']['runs_per_min'] / med['torch']['runs_per_min']
    print(f"qkv's runs in matrix products: {100 * timed['products_share']:.1f}% of their time (one more sweep, "
          f"each product timed); bound: {ratio / timed['products_share']:.2f}x (the ratio were everything else free)")


if __name__ == "__main__":
    main()
