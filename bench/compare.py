#!/usr/bin/python3
"""qkv against PyTorch, side by side: `make bench-torch`.

For every size, runs qkv bench and bench/torch_bench.py at 1 and 2 threads, alternating
between the two for several rounds (so both see the same machine state), each size in its own
process, and prints the median ms/step of each of the four, and qkv's speed-up: qkv with both
cores against PyTorch at its fastest thread setting. QKV_BENCH_MICRO=S times qkv's step in S
micro-batches (`qkv bench --micro-batches S`: as `qkv train` takes it with train.shards S, whole
micro-batches on each thread); PyTorch always does the whole batch in one pass. Last, qkv's
two-thread share of the threads' time in matrix products (qkv bench's "products") and the bound
it sets: PyTorch's best over qkv's time in products alone, the speed-up were everything else free.
"""
import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
QKV = os.path.join(ROOT, "build", "qkv")
TORCH = ["/usr/bin/python3", os.path.join(ROOT, "bench", "torch_bench.py")]
ROUNDS = int(os.environ.get("QKV_BENCH_ROUNDS", "3"))
MICRO = os.environ.get("QKV_BENCH_MICRO", "1")


def run(cmd):
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.strip().splitlines()
    return json.loads(out[-1])


def main():
    sizes = sys.argv[1:] or ["tiny", "small", "medium"]
    rows = []
    for size in sizes:
        res = {k: [] for k in ("qkv1", "qkv2", "torch1", "torch2", "share2", "ceiling2", "prod2", "msprod2")}
        mem = {}
        for _ in range(ROUNDS):
            for th in (1, 2):
                q = run([QKV, "bench", "--size", size, "--threads", str(th), "--json", "--micro-batches", MICRO])
                t = run(TORCH + ["--size", size, "--threads", str(th)])
                res[f"qkv{th}"].append(q["ms_per_step"])
                res[f"torch{th}"].append(t["ms_per_step"])
                mem[f"qkv{th}"], mem[f"torch{th}"] = q["peak_rss_mb"], t["peak_rss_mb"]
                if th == 2:  # this run's two-thread sgemm ceiling and the step's share of it
                    res.setdefault("share2", []).append(q["ceiling_share"])
                    res.setdefault("ceiling2", []).append(q["ceiling_gflops"])
                    res["prod2"].append(q["products_share"])
                    res["msprod2"].append(q["ms_products"])
        med = {k: statistics.median(v) for k, v in res.items()}
        best_torch = min(med["torch1"], med["torch2"])
        rows.append((size, med, mem, best_torch / med["qkv2"], best_torch / med["msprod2"]))
    if MICRO != "1":
        print(f"qkv: the step in {MICRO} micro-batches, whole micro-batches on each thread (qkv bench --micro-batches "
              f"{MICRO}); PyTorch: the whole batch in one pass")
    print(f"{'size':7} {'qkv 1t':>9} {'qkv 2t':>9} {'torch 1t':>9} {'torch 2t':>9} {'speed-up':>9} "
          f"{'qkv RSS':>8} {'torch RSS':>9} {'2t ceiling':>10} {'2t share':>8} {'2t products':>11} {'bound':>7}   "
          f"(ms/step, median of {ROUNDS} rounds; RSS in MB; ceiling GFLOP/s)")
    for size, med, mem, sp, bound in rows:
        print(f"{size:7} {med['qkv1']:9.2f} {med['qkv2']:9.2f} {med['torch1']:9.2f} {med['torch2']:9.2f} "
              f"{sp:8.2f}x {mem['qkv2']:8.1f} {mem['torch2']:9.1f} {med['ceiling2']:10.1f} {100 * med['share2']:7.1f}% "
              f"{100 * med['prod2']:10.1f}% {bound:6.2f}x")
    print("speed-up = PyTorch at its fastest thread setting / qkv with 2 threads; 2t share: qkv's matrix-product "
          "GFLOP/s at 2 threads over the two-thread sgemm ceiling `qkv bench` measured in the same run; 2t products: "
          "the share of qkv's two threads' time in matrix products; bound: PyTorch's best over qkv's time in the "
          "products alone (the speed-up were everything else free)")


if __name__ == "__main__":
    main()
