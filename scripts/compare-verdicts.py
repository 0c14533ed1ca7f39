#!/usr/bin/python3
"""Compare two results.json of one ablation: per variant and seed, the verdict and the solve step.

  /usr/bin/python3 scripts/compare-verdicts.py COMMITTED/results.json RERUN/results.json [INTERVAL]
      [--labels A,B]  (the two columns' names: default committed,re-run; e.g. f32,bf16)

A variant has the same verdicts when every seed has the same verdict (solved, not within the budget,
...) and its solve step is within INTERVAL steps (default 100: one evaluation interval) of the
committed one. Prints one line per variant and exits 1 when any differs (issue 23: bits differ between
machines and builds, verdicts must not).
"""
import json, sys
args, labels = sys.argv[1:], ["committed", "re-run"]
if "--labels" in args:
    i = args.index("--labels")
    labels = args[i + 1].split(",")
    del args[i:i + 2]
old, new = (json.load(open(p)) for p in args[0:2])
interval = int(args[2]) if len(args) > 2 else 100
ov = {v["name"]: v for v in old["variants"]}
bad = 0
print(f"{'variant':24} {labels[0]:32} {labels[1]:32} same?")
for v in new["variants"]:
    o = ov[v["name"]]
    same = o["solved"] == v["solved"] and o["unsolved"] == v["unsolved"]
    orun = {r["seed"]: r for r in o["runs"]}
    differ = []  # the seeds that make a variant differ, each as both sides saw it
    for r in v["runs"]:
        q = orun[r["seed"]]
        a, b = q["steps_to_threshold"], r["steps_to_threshold"]
        if q["verdict"] != r["verdict"] or (a is None) != (b is None) or (a is not None and abs(a - b) > interval):
            same = False
            differ.append(f"    seed {r['seed']}: {q['verdict']} {a or ''} / {r['verdict']} {b or ''}")
    bad += not same
    print(f"{v['name']:24} {o['verdicts']:32} {v['verdicts']:32} {'yes' if same else 'NO'}")
    for line in differ:
        print(line)
print(f"{len(new['variants']) - bad} of {len(new['variants'])} variants with the same verdicts "
      f"(every seed's verdict, solve steps within {interval}); wall {old['wall_seconds']:.0f} s {labels[0]}, "
      f"{new['wall_seconds']:.0f} s {labels[1]}")
sys.exit(1 if bad else 0)
