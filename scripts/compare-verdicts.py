#!/usr/bin/python3
"""Compare two results.json of one ablation: per variant and seed, the verdict and the solve step.

  /usr/bin/python3 scripts/compare-verdicts.py COMMITTED/results.json RERUN/results.json [INTERVAL]

A variant has the same verdicts when every seed has the same verdict (solved, not within the budget,
...) and its solve step is within INTERVAL steps (default 100: one evaluation interval) of the
committed one. Prints one line per variant and exits 1 when any differs (issue 23: bits differ between
machines and builds, verdicts must not).
"""
import json, sys
old, new = (json.load(open(p)) for p in sys.argv[1:3])
interval = int(sys.argv[3]) if len(sys.argv) > 3 else 100
ov = {v["name"]: v for v in old["variants"]}
bad = 0
print(f"{'variant':24} {'committed':32} {'re-run':32} same?")
for v in new["variants"]:
    o = ov[v["name"]]
    same = o["solved"] == v["solved"] and o["unsolved"] == v["unsolved"]
    orun = {r["seed"]: r for r in o["runs"]}
    for r in v["runs"]:
        q = orun[r["seed"]]
        if q["verdict"] != r["verdict"]:
            same = False
        a, b = q["steps_to_threshold"], r["steps_to_threshold"]
        if (a is None) != (b is None) or (a is not None and abs(a - b) > interval):
            same = False
    bad += not same
    print(f"{v['name']:24} {o['verdicts']:32} {v['verdicts']:32} {'yes' if same else 'NO'}")
print(f"{len(new['variants']) - bad} of {len(new['variants'])} variants with the same verdicts "
      f"(every seed's verdict, solve steps within {interval}); wall {old['wall_seconds']:.0f} s committed, "
      f"{new['wall_seconds']:.0f} s re-run")
sys.exit(1 if bad else 0)
