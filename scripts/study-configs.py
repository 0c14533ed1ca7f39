#!/usr/bin/env python3
"""Write configs/study/: the study's ablations, from the one list of variants below.

    python3 scripts/study-configs.py        (re)write configs/study/*.json

The JSON files are committed; this script is their source (edit here, run, commit both).
Two versions of every ablation:
  configs/study/full/   the study as designed: every variant that matters for the task,
                        three learning rates, 10 seeds, d_model 64, 128 and 256 for recall
                        and text, longer budgets (docs/qkv-answer.md gives its compute)
  configs/study/quick/  what `make study` runs within an hour on 2 cores: one learning
                        rate (1e-3, the configs' default, fixed before any run), fewer
                        variants, 8-10 seeds, d_model 64 and 128, shorter budgets
  configs/study/extra/  the quick version's fuzzy recall, cut from `make study` to fit its
                        hour (`make study-extra`, about 12 minutes)
Seeds: with n paired seeds the sign-flip test's smallest p is 2/2^n, and Holm's first
threshold is 0.05/m for m comparisons, so every ablation has 2^n >= 40 m.
"""
import json, os

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "configs", "study")

def A(**kv):
    return ["model.attention.%s=%s" % (k, str(v).lower() if isinstance(v, bool) else v) for k, v in kv.items()]

# name -> (overrides, match_params); "{r}" is the latent width d_model / 4
VARIANTS = {
    "full": ([], False),
    "qk_tied": (A(qkv="qk_tied"), False),
    "kv_tied": (A(qkv="kv_tied"), False),
    "shared": (A(qkv="shared"), False),
    "identity": (A(qkv="identity"), False),
    "qk_tied+reformer": (A(qkv="qk_tied", key_norm=True, self_mask=True, self_mask_rule="reformer"), False),
    "shared+role_scale": (A(qkv="shared", role_scale=True), False),
    "gqa2": (A(kv_heads=2), False),
    "mqa": (A(kv_heads=1), False),
    "kv_tied+mqa": (A(qkv="kv_tied", kv_heads=1), False),
    "no_v_o": (A(value_proj=False, out_proj=False), False),
    "kv_latent": (A(kv_latent="{r}"), False),
    "alibi": (A(alibi=True), False),
    "rel_pos_bias": (A(rel_pos_bias=True), False),
    "gate": (A(gate="output"), False),
    "gate_headwise": (A(gate="headwise"), False),
    "mimetic": (A(init="mimetic"), False),
    "qk_tied+init_identity": (A(qkv="qk_tied", init="identity"), False),
    "kv_tied+init_identity": (A(qkv="kv_tied", init="identity"), False),
    "shared+init_identity": (A(qkv="shared", init="identity"), False),
    "qk_tied+matched": (A(qkv="qk_tied"), True),
    "kv_tied+matched": (A(qkv="kv_tied"), True),
    "shared+matched": (A(qkv="shared"), True),
    "mqa+matched": (A(kv_heads=1), True),
    "no_v_o+matched": (A(value_proj=False, out_proj=False), True),
}
CORE = ["full", "qk_tied", "kv_tied", "shared", "mqa"]
TIED_INIT = ["qk_tied+init_identity", "kv_tied+init_identity", "shared+init_identity"]
MATCHED = ["qk_tied+matched", "kv_tied+matched", "shared+matched", "mqa+matched", "no_v_o+matched"]
ALL = list(VARIANTS)
FULL_RECALL = ALL
FULL_MAD = CORE + ["identity", "qk_tied+reformer", "shared+role_scale", "gqa2", "kv_tied+mqa", "no_v_o",
                   "kv_latent"] + TIED_INIT + MATCHED
FULL_TEXT = [v for v in ALL if v not in ("identity",)]
QUICK_RECALL = ["full", "qk_tied", "kv_tied", "shared", "identity", "qk_tied+reformer", "shared+role_scale",
                "mqa"] + TIED_INIT + ["shared+matched"]
QUICK_TEXT = ["full", "qk_tied", "kv_tied", "shared", "qk_tied+reformer", "shared+role_scale", "gqa2", "mqa",
              "kv_tied+mqa", "no_v_o", "kv_latent", "gate", "mimetic", "shared+matched"]

# task -> (base config, per-task settings: steps, max_steps (None: no extension), threshold, metric)
def ablation(title, base, d, names, seeds, lrs, steps, max_steps, metric="accuracy", extra=()):
    sets = ["model.d_model=%d" % d, "model.d_ff=%d" % (4 * d), "train.steps=%d" % steps] + list(extra)
    vs = []
    for n in names:
        over, matched = VARIANTS[n]
        v = {"name": n, "set": [o.replace("{r}", str(d // 4)) for o in over]}
        if matched:
            v["match_params"] = "baseline"
        vs.append(v)
    m = len(names) - 1
    assert 2.0 / 2 ** len(seeds) <= 0.05 / m, (title, len(seeds), m)  # a difference can be significant
    a = {"title": title, "base": "../base/%s.json" % base, "set": sets, "variants": vs,
         "seeds": list(range(len(seeds))) if seeds is None else seeds, "baseline": "full"}
    if lrs:
        a["lrs"] = lrs
    if metric != "accuracy":
        a["metric"] = metric
    elif max_steps:
        a["max_steps"] = max_steps
    return a

FULL_LRS = [0.0003, 0.001, 0.003]
S10, S8 = list(range(10)), list(range(8))
STUDY = {
    "full": {
        "recall-d64": ablation("Recall (MQAR), d_model 64", "recall", 64, FULL_RECALL, S10, FULL_LRS, 1000, 8000),
        "recall-d128": ablation("Recall (MQAR), d_model 128", "recall", 128, FULL_RECALL, S10, FULL_LRS, 1000, 8000),
        "recall-d256": ablation("Recall (MQAR), d_model 256", "recall", 256, FULL_RECALL, S10, FULL_LRS, 1000, 8000),
        "fuzzy_recall": ablation("Fuzzy recall (MAD), d_model 64", "fuzzy_recall", 64, FULL_MAD, S10, FULL_LRS, 2000, 16000),
        "noisy_recall": ablation("Noisy recall (MAD), d_model 64", "noisy_recall", 64, FULL_MAD, S10, FULL_LRS, 2000, 16000),
        "selective_copy": ablation("Selective copy (MAD), d_model 64", "selective_copy", 64, FULL_MAD, S10, FULL_LRS, 2000, 16000),
        "text-d64": ablation("English text (fortunes), d_model 64", "text", 64, FULL_TEXT, S10, FULL_LRS, 4000, None, "bpb"),
        "text-d128": ablation("English text (fortunes), d_model 128", "text", 128, FULL_TEXT, S10, FULL_LRS, 4000, None, "bpb"),
        "text-d256": ablation("English text (fortunes), d_model 256", "text", 256, FULL_TEXT, S10, FULL_LRS, 4000, None, "bpb"),
    },
    "quick": {
        "recall-d64": ablation("Recall (MQAR), d_model 64", "recall", 64, QUICK_RECALL, S10, None, 400, 1600),
        "recall-d128": ablation("Recall (MQAR), d_model 128", "recall", 128, CORE, S8, None, 400, 1600),
        "noisy_recall": ablation("Noisy recall (MAD), d_model 64", "noisy_recall", 64, CORE, S8, None, 1000, 2000),
        "selective_copy": ablation("Selective copy (MAD), d_model 64", "selective_copy", 64, CORE, S8, None, 1000, 2000),
        "text-d64": ablation("English text (fortunes), d_model 64", "text", 64, QUICK_TEXT, S10, None, 500, None, "bpb"),
        "text-d128": ablation("English text (fortunes), d_model 128", "text", 128, CORE, S8, None, 500, None, "bpb"),
    },
    # cut from quick to fit its hour: no variant solves fuzzy recall within 600 steps
    "extra": {
        "fuzzy_recall": ablation("Fuzzy recall (MAD), d_model 64", "fuzzy_recall", 64, CORE, S8, None, 600, 600),
    },
}

MODEL = {"d_model": 64, "heads": 4, "layers": 2, "d_ff": 256, "activation": "gelu",
         "attention": {"qkv": "full", "scale": "head_dim", "causal": True}}
TRAIN = {"steps": 1000, "batch": 32, "seed": 0, "eval_every": 100, "eval_examples": 500, "log_every": 100}
OPTIM = {"name": "adam", "lr": 0.001, "weight_decay": 0, "clip": 1.0, "schedule": "constant", "warmup": 0}
BASES = {
    "recall": {"name": "recall", "pairs": 8, "keys": 32, "values": 32},
    "fuzzy_recall": {"name": "fuzzy_recall", "pairs": 8, "keys": 8, "values": 16, "key_len": 2, "value_len": 2},
    "noisy_recall": {"name": "noisy_recall", "pairs": 8, "keys": 32, "values": 32, "noise": 16, "noise_symbols": 16},
    "selective_copy": {"name": "selective_copy", "length": 32, "copy_tokens": 8, "symbols": 16},
    "text": {"name": "text", "corpus": "fortunes", "seq_len": 32, "eval_fraction": 0.1, "val_fraction": 0.1},
}

def write(path, obj):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(obj, f, indent=2)
        f.write("\n")

for name, task in BASES.items():
    write(os.path.join(HERE, "base", name + ".json"), {"model": MODEL, "task": task, "train": TRAIN, "optim": OPTIM})
for version, abls in STUDY.items():
    for name, a in abls.items():
        write(os.path.join(HERE, version, name + ".json"), a)
