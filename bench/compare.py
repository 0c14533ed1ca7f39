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

Where qkv has bf16 products (a CPU with AVX512_BF16: `qkv bench --precision bf16` runs), each
round also times qkv with train.precision "bf16" and PyTorch under CPU autocast to bf16
(bench/torch_bench.py --autocast), both at 1 and 2 threads, and a second table sets them beside
float32: qkv's best with both cores against PyTorch's best of float32 and autocast bf16 at either
thread setting. QKV_BENCH_BF16=0 leaves them out.
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


def qkv_has_bf16():
    if os.environ.get("QKV_BENCH_BF16", "1") == "0":
        return False
    return subprocess.run([QKV, "bench", "--size", "tiny", "--steps", "1", "--precision", "bf16", "--json"],
                          capture_output=True).returncode == 0


def main():
    sizes = sys.argv[1:] or ["tiny", "small", "medium"]
    bf16 = qkv_has_bf16()
    rows = []
    for size in sizes:
        res = {k: [] for k in ("qkv1", "qkv2", "torch1", "torch2", "share2", "ceiling2", "prod2", "msprod2",
                               "qkvb1", "qkvb2", "torchb1", "torchb2")}
        mem = {}
        for _ in range(ROUNDS):
            for th in (1, 2):
                q = run([QKV, "bench", "--size", size, "--threads", str(th), "--json", "--micro-batches", MICRO])
                t = run(TORCH + ["--size", size, "--threads", str(th)])
                if bf16:  # the same pair in bf16, right after: qkv's bf16 products, PyTorch's autocast
                    res[f"qkvb{th}"].append(run([QKV, "bench", "--size", size, "--threads", str(th), "--json",
                                                 "--micro-batches", MICRO, "--precision", "bf16"])["ms_per_step"])
                    res[f"torchb{th}"].append(run(TORCH + ["--size", size, "--threads", str(th),
                                                           "--autocast"])["ms_per_step"])
                res[f"qkv{th}"].append(q["ms_per_step"])
                res[f"torch{th}"].append(t["ms_per_step"])
                mem[f"qkv{th}"], mem[f"torch{th}"] = q["peak_rss_mb"], t["peak_rss_mb"]
                if th == 2:  # this run's two-thread sgemm ceiling and the step's share of it
                    res.setdefault("share2", []).append(q["ceiling_share"])
                    res.setdefault("ceiling2", []).append(q["ceiling_gflops"])
                    res["prod2"].append(q["products_share"])
                    res["msprod2"].append(q["ms_products"])
        med = {k: statistics.median(v) for k, v in res.items() if v}
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
    if not bf16:
        print("bf16: not timed (qkv bench --precision bf16 is refused here, or QKV_BENCH_BF16=0)")
        return
    print()
    print(f"{'size':7} {'qkv f32':>8} {'qkv bf16':>8} {'qkv bf16':>8} {'torch f32':>9} {'torch bf16':>10} "
          f"{'torch bf16':>10} {'qkv bf16':>9} {'speed-up':>9}   (ms/step, median of {ROUNDS} rounds)")
    print(f"{'':7} {'2t':>8} {'1t':>8} {'2t':>8} {'best':>9} {'1t':>10} {'2t':>10} {'/f32':>9}")
    for size, med, mem, sp, bound in rows:
        qbest = min(med["qkv2"], med["qkvb2"])
        tbest = min(med["torch1"], med["torch2"], med["torchb1"], med["torchb2"])
        print(f"{size:7} {med['qkv2']:8.2f} {med['qkvb1']:8.2f} {med['qkvb2']:8.2f} "
              f"{min(med['torch1'], med['torch2']):9.2f} {med['torchb1']:10.2f} {med['torchb2']:10.2f} "
              f"{med['qkv2'] / med['qkvb2']:8.2f}x {tbest / qbest:8.2f}x")
    print("qkv bf16/f32: qkv's 2-thread f32 ms/step over its bf16; speed-up = PyTorch's best of float32 and "
          "autocast bf16 at either thread setting / qkv's best of f32 and bf16 with 2 threads")


if __name__ == "__main__":
    main()
