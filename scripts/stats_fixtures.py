#!/usr/bin/python3
"""Write scipy/numpy reference values for qkv's statistics (tests/test_stats.c, src/ablate/stats.c).

Run by hand with Debian's python3-scipy:  /usr/bin/python3 scripts/stats_fixtures.py
CI never runs this; the file it writes, tests/fixtures/stats.json, is committed.
(Written with scipy 1.10.1 and numpy 1.24.2, whose versions go into the file.)

Each data set is a pair of per-seed results a, b (variant and baseline, paired by seed) and
d = a - b. For d the file holds:
  mean, sd           numpy.mean(d), numpy.std(d, ddof=1)
  p                  scipy.stats.permutation_test((a, b), mean(x - y), permutation_type='samples',
                     alternative='two-sided') with n_resamples = 2^n, i.e. the exact test over
                     all 2^n sign flips (the n = 21 set is there for qkv's Monte Carlo branch,
                     which starts above n = 20, to be compared with this exact value)
  p_less, p_greater  the same with alternative 'less' and 'greater' (for diagnosis; n <= 20)
  ci_lo, ci_hi       scipy.stats.bootstrap((d,), mean, method='percentile',
                     confidence_level=0.95, n_resamples=100000, random_state=BOOT_SEED)
Also numpy.percentile cases (default method 'linear') and Holm-adjusted p-values computed
below from the definition (no statsmodels), with the rejections at alpha = 0.05.
JSON has no NaN: a NaN p-value is written as null.
"""
import json
import math
import os

import numpy as np
import scipy
import scipy.stats as st

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures", "stats.json")
BOOT_RESAMPLES = 100000
BOOT_SEED = 20240613
LEVEL = 0.95

# (name, a, b): eval accuracies (or losses) of a variant and a baseline, one pair per seed
DATA = [
    ("n3", [0.91, 0.87, 0.95], [0.85, 0.88, 0.80]),
    ("n5", [0.62, 0.71, 0.58, 0.66, 0.69], [0.55, 0.60, 0.61, 0.52, 0.57]),
    ("n8", [1.02, 0.97, 1.10, 0.99, 1.05, 0.93, 1.08, 1.00],
           [1.00, 1.01, 1.03, 0.98, 0.99, 0.97, 1.02, 1.01]),
    ("n10", [0.812, 0.745, 0.903, 0.688, 0.777, 0.851, 0.730, 0.799, 0.820, 0.764],
            [0.790, 0.760, 0.850, 0.700, 0.720, 0.830, 0.745, 0.770, 0.801, 0.768]),
    ("n12", [3.1, 2.7, 3.5, 2.9, 3.3, 2.8, 3.0, 3.6, 2.6, 3.2, 3.4, 2.95],
            [3.0, 2.9, 3.1, 3.0, 3.0, 2.7, 3.1, 3.2, 2.8, 3.0, 3.1, 3.05]),
    # ties: d = 0.1, 0.2, -0.3, 0.3, -0.05, 0.1 up to rounding; flipping e.g. 0.1, 0.2, -0.3 gives a
    # null mean equal to the observed one in exact arithmetic but not in floating point, so
    # scipy's tie tolerance decides: p = 0.5625 with it, 0.46875 with exact comparisons
    ("ties", [0.7, 0.9, 0.2, 0.8, 0.45, 0.6], [0.6, 0.7, 0.5, 0.5, 0.5, 0.5]),
    # one seed with no difference (a_i == b_i), one negative
    ("zero", [0.75, 0.80, 0.70, 0.85, 0.90, 0.65, 0.78], [0.70, 0.80, 0.60, 0.80, 0.82, 0.70, 0.71]),
    # no difference at all: every null mean is 0, p = 1
    ("allzero", [0.5, 0.25, 0.75, 1.0], [0.5, 0.25, 0.75, 1.0]),
    # n = 21: above qkv's exact limit; scipy still computes the exact p (2^21 patterns)
    ("n21", [0.50 + 0.01 * ((7 * i) % 13) for i in range(21)],
            [0.52 + 0.01 * ((5 * i) % 11) for i in range(21)]),
]

PERCENTILE_Q = [0.0, 0.01, 0.025, 0.1, 0.25, 0.5, 0.6, 0.75, 0.9, 0.975, 0.99, 1.0]
PERCENTILE_X = [
    [3.0, 1.0, 2.0],
    [0.3, -1.2, 5.5, 2.25, 0.3, 7.0, -0.5],
    [math.sin(1.7 * i) * 10 + i * 0.1 for i in range(40)],
]

HOLM_ALPHA = 0.05
HOLM_EXTRA = [
    [0.01, 0.04, 0.03, 0.005],
    [0.02, None, 0.5, 0.02, 0.001, 0.04],     # a NaN (None) and a tie
    [0.3, 0.6, 0.9],
]


def holm(ps):
    """adjusted_(i) = max_{j <= i} min(1, (m - j + 1) p_(j)), the m non-NaN p ascending."""
    idx = [i for i, p in enumerate(ps) if p is not None and not math.isnan(p)]
    idx.sort(key=lambda i: ps[i])
    m = len(idx)
    adj = [None] * len(ps)
    run = 0.0
    for j, i in enumerate(idx):  # j from 0: factor m - j
        run = max(run, min(1.0, (m - j) * ps[i]))
        adj[i] = run
    return adj


def mean_diff(x, y, axis):
    return np.mean(x - y, axis=axis)


def one(name, a, b):
    a = np.array(a, dtype=np.float64)
    b = np.array(b, dtype=np.float64)
    d = a - b
    n = len(d)
    res = {"name": name, "a": a.tolist(), "b": b.tolist(), "d": d.tolist(),
           "mean": float(np.mean(d)), "sd": float(np.std(d, ddof=1))}
    alts = (("two-sided", "p"),) + ((("less", "p_less"), ("greater", "p_greater")) if n <= 20 else ())
    for alt, key in alts:
        r = st.permutation_test((a, b), mean_diff, permutation_type="samples", vectorized=True,
                                n_resamples=2 ** n, batch=2 ** 16, alternative=alt)
        assert len(r.null_distribution) == 2 ** n  # the exact test
        res[key] = float(r.pvalue)
    bt = st.bootstrap((d,), np.mean, vectorized=True, method="percentile", confidence_level=LEVEL,
                      n_resamples=BOOT_RESAMPLES, random_state=BOOT_SEED)
    res["ci_lo"] = float(bt.confidence_interval.low)
    res["ci_hi"] = float(bt.confidence_interval.high)
    return res


def main():
    sets = [one(*x) for x in DATA]
    percentiles = [{"x": x, "q": PERCENTILE_Q,
                    "value": [float(np.percentile(np.array(x), 100 * q)) for q in PERCENTILE_Q]}
                   for x in PERCENTILE_X]
    holms = []
    for ps in [[s["p"] for s in sets if s["name"] != "n21"]] + HOLM_EXTRA:
        adj = holm(ps)
        holms.append({"p": ps, "alpha": HOLM_ALPHA, "adjusted": adj,
                      "rejected": [a is not None and a <= HOLM_ALPHA for a in adj]})
    out = {"generator": "scripts/stats_fixtures.py", "scipy": scipy.__version__, "numpy": np.__version__,
           "bootstrap_resamples": BOOT_RESAMPLES, "level": LEVEL, "sets": sets,
           "percentiles": percentiles, "holm": holms}
    with open(OUT, "w") as f:
        json.dump(out, f, indent=1, allow_nan=False)
        f.write("\n")
    for s in sets:
        print(f"{s['name']:8s} n={len(s['d']):2d} mean={s['mean']:+.6f} sd={s['sd']:.6f} p={s['p']:.6f} "
              f"ci=[{s['ci_lo']:+.6f}, {s['ci_hi']:+.6f}]")


if __name__ == "__main__":
    main()
