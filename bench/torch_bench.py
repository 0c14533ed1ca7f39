#!/usr/bin/python3
"""The qkv benchmark step in PyTorch: the identical model (scripts/torch_fixtures.py's Model,
full causal attention), Adam, cross-entropy at every position, random tokens.

  /usr/bin/python3 bench/torch_bench.py --size tiny --threads 2 [--steps K] [--autocast]

Prints one JSON line per size, with the fields qkv bench --json prints. --autocast runs the
forward and the loss under torch.autocast("cpu", dtype=torch.bfloat16), as PyTorch's CPU users
get bf16 products (the backward follows the forward's dtypes; the parameters and Adam stay
float32): PyTorch's counterpart of qkv's train.precision "bf16".
"""
import argparse
import json
import os
import resource
import statistics
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
from torch_fixtures import BASE, Model  # noqa: E402  (the same model the parity fixtures use)

SIZES = {  # vocab, seq, d_model, heads, layers, d_ff, batch (docs/performance.md)
    "tiny": (64, 32, 64, 4, 2, 256, 32),
    "small": (256, 128, 128, 4, 4, 512, 16),
    "medium": (512, 256, 256, 8, 4, 1024, 8),
}
STEPS = {"tiny": 50, "small": 20, "medium": 10}


def bench(size, threads, steps, autocast=False):
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    V, T, d, H, L, dff, B = SIZES[size]
    c = dict(BASE, vocab=V, seq_len=T, d_model=d, heads=H, layers=L, d_ff=dff)
    m = Model(c)
    opt = torch.optim.Adam(m.parameters(), lr=1e-3)
    tok = torch.randint(0, V, (B, T))
    tgt = torch.randint(0, V, (B, T))
    times = []
    for i in range(3 + steps):
        t = time.perf_counter()
        opt.zero_grad(set_to_none=False)
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
            loss = F.cross_entropy(m(tok, None).reshape(-1, V), tgt.reshape(-1))
        loss.backward()
        opt.step()
        if i >= 3:
            times.append(1e3 * (time.perf_counter() - t))
    ms = statistics.median(times)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"size": size, "threads": threads, "ms_per_step": round(ms, 3), "ms_min": round(min(times), 3),
            "ms_max": round(max(times), 3), "tokens_per_s": round(B * T / (ms / 1e3)), "peak_rss_mb": round(rss, 1),
            "params": sum(p.numel() for p in m.parameters()), "torch": torch.__version__, "steps": steps,
            "precision": "bf16" if autocast else "f32"}


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", choices=list(SIZES), action="append")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--steps", type=int, default=0)
    ap.add_argument("--autocast", action="store_true", help="the forward and loss under CPU autocast to bf16")
    a = ap.parse_args()
    for s in a.size or list(SIZES):
        print(json.dumps(bench(s, a.threads, a.steps or STEPS[s], a.autocast)), flush=True)
