#!/usr/bin/env python3
"""Write configs/study/: the study's ablations, from the one list of variants below.

    python3 scripts/study-configs.py        (re)write configs/study/*.json

The JSON files are committed; this script is their source (edit here, run, commit both).
  configs/study/third/        the third edition, what `make study` runs within 90 minutes on 2
                              cores: the score's symmetry isolated (qk_tied against Q = X and
                              K = X), the additions (diff, talking heads, gate, rel_pos_bias),
                              bidirectional recall with ALiBi, text with 64 bytes of context for
                              1500 steps at the rates the pilot chose
  configs/study/third-pilot/  the learning-rate pilot of the text ablation (`make study-pilot`):
                              one seed the study does not report, two rates; third/text-d64.json
                              is written only once its results are committed (docs/results/)
  configs/study/third-extra/  what was cut from the third edition to fit (`make study-extra`)
  configs/study/quick/, extra/  the second edition (`make study-second`): within an hour,
                              one learning rate (1e-3), 8-10 seeds, d_model 64 and 128
  configs/study/full/         the study as designed: about 25 variants, three learning rates,
                              10 seeds, d_model 64, 128 and 256, longer budgets
Seeds: with n paired seeds the sign-flip test's smallest p is 2/2^n, and Holm's first
threshold is 0.05/m for m comparisons, so an ablation has 2^n >= 40 m, except those marked
few_seeds (the third edition's text and pilot), whose reports say what their seeds can show.
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
    "no_q_proj": (A(query_proj=False), False),
    "no_k_proj": (A(key_proj=False), False),
    "diff": (A(diff=True), False),
    "talking_heads": (A(talking_heads=True), False),
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
THIRD_ONLY = ["no_q_proj", "no_k_proj", "diff", "talking_heads"]  # added with the third edition
ALL = [v for v in VARIANTS if v not in THIRD_ONLY]  # the full study as designed before it
FULL_RECALL = ALL
FULL_MAD = CORE + ["identity", "qk_tied+reformer", "shared+role_scale", "gqa2", "kv_tied+mqa", "no_v_o",
                   "kv_latent"] + TIED_INIT + MATCHED
FULL_TEXT = [v for v in ALL if v not in ("identity",)]
QUICK_RECALL = ["full", "qk_tied", "kv_tied", "shared", "identity", "qk_tied+reformer", "shared+role_scale",
                "mqa"] + TIED_INIT + ["shared+matched"]
QUICK_TEXT = ["full", "qk_tied", "kv_tied", "shared", "qk_tied+reformer", "shared+role_scale", "gqa2", "mqa",
              "kv_tied+mqa", "no_v_o", "kv_latent", "gate", "mimetic", "shared+matched"]

# the third edition (docs/qkv-answer.md): the score's symmetry isolated (qk_tied against Q = X and
# K = X: one matrix in the score either way, symmetric or general), the additions people mean
# (differential attention, talking heads) beside gate and rel_pos_bias, bidirectional recall, and
# text at a budget where the models beat xz -9
SYMMETRY = ["full", "qk_tied", "no_q_proj", "no_k_proj", "kv_tied", "shared", "identity"]
MORE = ["full", "mqa", "gate", "rel_pos_bias", "diff", "talking_heads"]
THIRD_TEXT = ["full", "qk_tied", "no_q_proj", "no_k_proj", "kv_tied", "shared", "mqa", "gate", "diff",
              "talking_heads"]  # the pilot's; the study's text ablation leaves out no_k_proj to fit 90 minutes
THIRD_TEXT_MAIN = [v for v in THIRD_TEXT if v != "no_k_proj"]

# task -> (base config, per-task settings: steps, max_steps (None: no extension), threshold, metric)
def ablation(title, base, d, names, seeds, lrs, steps, max_steps, metric="accuracy", extra=(), few_seeds=False,
             lr_of=None, baseline="full"):
    sets = ["model.d_model=%d" % d, "model.d_ff=%d" % (4 * d), "train.steps=%d" % steps] + list(extra)
    vs = []
    for n in names:
        over, matched = VARIANTS[n]
        v = {"name": n, "set": [o.replace("{r}", str(d // 4)) for o in over]}
        if lr_of:  # the rate the pilot chose for it (third edition's text)
            v["set"].append("optim.lr=%g" % lr_of[n])
        if matched:
            v["match_params"] = "baseline"
        vs.append(v)
    m = len(names) - 1
    if not few_seeds:  # a difference can be significant (few_seeds: the report says what they can show)
        assert 2.0 / 2 ** len(seeds) <= 0.05 / m, (title, len(seeds), m)
    a = {"title": title, "base": "../base/%s.json" % base, "set": sets, "variants": vs,
         "seeds": list(range(len(seeds))) if seeds is None else seeds, "baseline": baseline}
    if lrs:
        a["lrs"] = lrs
    if metric != "accuracy":
        a["metric"] = metric
    elif max_steps:
        a["max_steps"] = max_steps
    return a

TEXT64 = ["train.eval_every=250"]
# bidirectional recall: every position sees every other, with ALiBi's distance bias (the search of
# configs/search/, docs/results/search-bidirectional/: without a positional bias full did not solve
# it within 6000 steps; with ALiBi in 2 of 2 seeds, at 1300 and 5100; 6 variants so that 8 seeds
# allow significance, the budget being the cost: an unsolved run takes its 6000 steps). The causal
# references (full and qk_tied with the mask, ALiBi kept) say whether a difference is the mask's.
BIDIR = ["model.attention.causal=false", "model.attention.alibi=true"]
BIDIR_STEPS, BIDIR_MAX = 1500, 6000
VARIANTS["causal"] = (A(causal=True), False)  # the same model with the causal mask, for reference
VARIANTS["qk_tied+causal"] = (A(qkv="qk_tied", causal=True), False)  # is it the mask, or ALiBi?
# the bidirectional arms: the symmetry comparison without the mask, beside causal references that keep
# ALiBi (full and qk_tied with the mask), so that each comparison changes one thing
BIDIR_VARIANTS = ["causal", "full", "qk_tied", "no_q_proj", "shared", "qk_tied+causal"]

def pilot_lrs(name, pilot="study-third-pilot", names=THIRD_TEXT):
    """each variant's rate as the committed pilot chose it (docs/results/PILOT/NAME)"""
    path = os.path.join(HERE, "..", "..", "docs", "results", pilot, name, "results.json")
    try:
        with open(path) as f:
            lrs = {v["name"]: v["lr"] for v in json.load(f)["variants"]}
    except FileNotFoundError:
        return None  # before the pilot: no rates (write the pilot's config, run it, then this again)
    missing = [n for n in names if lrs.get(n) is None]
    assert not missing, ("the pilot chose no rate for", missing, path)
    return lrs

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
    # the third edition's learning-rate pilot for text: one seed that the study does not report
    # (100), two rates, half the budget; its choice per variant (on validation) goes into
    # third/text-d64.json (make study-pilot; docs/qkv-answer.md says so)
    "third-pilot": {
        "text-d64": ablation("English text (fortunes), 64 bytes of context: learning-rate pilot", "text64", 64,
                             THIRD_TEXT, [100], [0.001, 0.003], 750, None, "bpb", TEXT64, few_seeds=True),
    },
}
# the third edition (make study): 8 seeds where 7 variants are compared (2/2^8 <= 0.05/6), 5 for
# text (the report says what 5 can show)
S5 = list(range(5))
STUDY["third"] = {
    "recall-d64": ablation("Recall (MQAR), d_model 64: the score's symmetry isolated", "recall", 64, SYMMETRY, S8,
                           None, 400, 1600),
    "recall-more": ablation("Recall (MQAR), d_model 64: more in attention", "recall", 64, MORE, S8, None, 400, 1600),
    "noisy_recall": ablation("Noisy recall (MAD), d_model 64: the score's symmetry isolated", "noisy_recall", 64,
                             SYMMETRY[:-1], S8, None, 1000, 2000),
    "recall-bidir": ablation("Recall (MQAR), d_model 64, bidirectional (ALiBi): the score's symmetry isolated",
                             "recall", 64, BIDIR_VARIANTS,
                             S8, None,
                             BIDIR_STEPS, BIDIR_MAX,
                             extra=BIDIR, baseline="full"),
    "text-d64": pilot_lrs("text-d64") and ablation(
        "English text (fortunes), 64 bytes of context, 1500 steps", "text64", 64, THIRD_TEXT_MAIN, S5, None, 1500, None,
        "bpb", TEXT64, few_seeds=True, lr_of=pilot_lrs("text-d64")),
}
STUDY["third-extra"] = {
    "recall-d128": ablation("Recall (MQAR), d_model 128: the score's symmetry isolated", "recall", 128, SYMMETRY,
                            S8, None, 400, 1600),
    "induction": ablation("Induction, d_model 64: the score's symmetry isolated", "induction", 64, SYMMETRY, S8,
                          None, 600, 2400),
    "noisy_recall-more": ablation("Noisy recall (MAD), d_model 64: more in attention", "noisy_recall", 64, MORE,
                                  S8, None, 1000, 2000),
    # the other two tasks that can be trained without the causal mask (configs refuse the rest)
    "noisy_recall-bidir": ablation("Noisy recall (MAD), d_model 64, bidirectional (ALiBi): the score's symmetry "
                                   "isolated", "noisy_recall", 64, BIDIR_VARIANTS,
                                   S8, None, 2000, 8000, extra=BIDIR),
    "induction-bidir": ablation("Induction, d_model 64, bidirectional (ALiBi): the score's symmetry isolated",
                                "induction", 64, BIDIR_VARIANTS, S8, None,
                                1500, 6000, extra=BIDIR),
}

# the fourth edition (docs/results/study-fourth/predictions.md, written before its runs): symmetry
# or positive semi-definiteness (a tied score with a signed diagonal between the roles, from a
# signed and from a positive start), the values (V = X beside K = V), rotary positions; three
# rates with a warmup, each variant's rate chosen by a pilot on a seed the study does not report
VARIANTS["qk_diag_alt"] = (A(qkv="qk_tied", qk_diag="alternating"), False)
VARIANTS["qk_diag_pos"] = (A(qkv="qk_tied", qk_diag="positive"), False)
VARIANTS["qk_tied+self_mask"] = (A(qkv="qk_tied", self_mask=True), False)
VARIANTS["qk_tied+exclusive"] = (A(qkv="qk_tied", exclusive=True), False)
VARIANTS["no_v_proj"] = (A(value_proj=False), False)
FOURTH_RECALL = ["full", "qk_tied", "qk_diag_alt", "qk_diag_pos", "identity", "no_q_proj", "qk_tied+self_mask",
                 "qk_tied+exclusive"]
FOURTH_NOISY = FOURTH_RECALL + ["no_v_proj", "kv_tied"]
FOURTH_ROPE = ["full", "qk_tied", "qk_diag_alt", "no_q_proj", "kv_tied", "qk_tied+self_mask"]
WARMUP = ["optim.warmup=100"]
ROPE = ["model.position=rope"]
S9 = list(range(9))  # 8 and 10 variants: 2/2^9 <= 0.05/9
STUDY["fourth-pilot"] = {
    "recall": ablation("Recall (MQAR), d_model 64: learning-rate pilot", "recall", 64, FOURTH_RECALL, [100],
                       FULL_LRS, 500, 2000, extra=WARMUP, few_seeds=True),
    "noisy_recall": ablation("Noisy recall (MAD), d_model 64: learning-rate pilot", "noisy_recall", 64, FOURTH_NOISY,
                             [100], FULL_LRS, 1000, 2000, extra=WARMUP, few_seeds=True),
    "recall-rope": ablation("Recall (MQAR), d_model 64, rotary positions: learning-rate pilot", "recall", 64,
                            FOURTH_ROPE, [100], FULL_LRS, 500, 2000, extra=WARMUP + ROPE, few_seeds=True),
    # for make study-extra: rotary positions on the other two retrieval tasks, and text with the
    # standard recipe at three widths (a quarter of the study's 4000 steps, its schedule fitted to them)
    "noisy_recall-rope": ablation("Noisy recall (MAD), d_model 64, rotary positions: learning-rate pilot",
                                  "noisy_recall", 64, FOURTH_ROPE, [100], FULL_LRS, 1000, 2000, extra=WARMUP + ROPE,
                                  few_seeds=True),
    "induction-rope": ablation("Induction, d_model 64, rotary positions: learning-rate pilot", "induction", 64,
                               FOURTH_ROPE, [100], FULL_LRS, 600, 2400, extra=WARMUP + ROPE, few_seeds=True),
}
# text with the standard recipe: linear warmup, cosine decay to zero, AdamW with decoupled weight
# decay 0.1; 64 bytes of context; the curves' points every 250 steps
RECIPE = ["optim.name=adamw", "optim.weight_decay=0.1", "optim.schedule=cosine", "optim.warmup=200"]
FOURTH_TEXT = ["full", "qk_tied", "no_q_proj", "kv_tied", "shared", "mqa", "qk_diag_alt"]
# d_model 128 costs about 2.8 times d_model 64's step: its seven variants x 8 seeds take about 2.2 hours
for d in (32, 64, 128):
    STUDY["fourth-pilot"]["text-d%d" % d] = ablation(
        "English text (fortunes), d_model %d, the standard recipe: learning-rate pilot" % d, "text64", d,
        FOURTH_TEXT, [100], FULL_LRS, 1000, None, "bpb", TEXT64 + RECIPE, few_seeds=True)
# rotary positions on text, at the cheapest width: the score's three arms
FOURTH_TEXT_ROPE = ["full", "qk_tied", "no_q_proj"]
STUDY["fourth-pilot"]["text-d32-rope"] = ablation(
    "English text (fortunes), d_model 32, rotary positions, the standard recipe: learning-rate pilot", "text64", 32,
    FOURTH_TEXT_ROPE, [100], FULL_LRS, 1000, None, "bpb", TEXT64 + RECIPE + ROPE, few_seeds=True)
def fourth(name, title, base, names, seeds, steps, extra):
    lrs = pilot_lrs(name, "study-fourth-pilot", names)
    return lrs and ablation(title, base, 64, names, seeds, None, steps, 4000, extra=extra, lr_of=lrs)
STUDY["fourth"] = {
    "recall": fourth("recall", "Recall (MQAR), d_model 64: symmetry or positive semi-definiteness", "recall",
                     FOURTH_RECALL, S9, 500, WARMUP),
    "recall-rope": fourth("recall-rope", "Recall (MQAR), d_model 64, rotary positions", "recall", FOURTH_ROPE, S8,
                          500, WARMUP + ROPE),
}
# what does not fit in make study's 90 minutes (make study-extra): noisy recall (symmetry, positive
# semi-definiteness and the values: 10 variants x 9 seeds, most of them to 4000 steps, about an
# hour on its own), rotary positions on noisy recall and induction, and the text gaps as curves
# over 4000 steps at three widths
STUDY["fourth-extra"] = {
    "noisy_recall": fourth("noisy_recall", "Noisy recall (MAD), d_model 64: symmetry, positive semi-definiteness "
                           "and the values", "noisy_recall", FOURTH_NOISY, S9, 1000, WARMUP),
    "noisy_recall-rope": fourth("noisy_recall-rope", "Noisy recall (MAD), d_model 64, rotary positions",
                                "noisy_recall", FOURTH_ROPE, S8, 1000, WARMUP + ROPE),
    "induction-rope": fourth("induction-rope", "Induction, d_model 64, rotary positions", "induction", FOURTH_ROPE,
                             S8, 600, WARMUP + ROPE),
}
for d in (32, 64, 128):
    lrs = pilot_lrs("text-d%d" % d, "study-fourth-pilot", FOURTH_TEXT)
    STUDY["fourth-extra"]["text-d%d" % d] = lrs and ablation(
        "English text (fortunes), d_model %d, the standard recipe, 4000 steps" % d, "text64", d, FOURTH_TEXT, S8,
        None, 4000, None, "bpb", TEXT64 + RECIPE, lr_of=lrs)

lrs = pilot_lrs("text-d32-rope", "study-fourth-pilot", FOURTH_TEXT_ROPE)
STUDY["fourth-extra"]["text-d32-rope"] = lrs and ablation(
    "English text (fortunes), d_model 32, rotary positions, the standard recipe, 4000 steps", "text64", 32,
    FOURTH_TEXT_ROPE, S8, None, 4000, None, "bpb", TEXT64 + RECIPE + ROPE, lr_of=lrs)

# text in subword tokens (docs/results/study-fourth-extra/predictions-tokens.md, written before
# its runs): is the tied score's cost on text a byte-level effect? The same recipe, model and 64
# positions, the text as sentencepiece BPE pieces trained on the training part (512 and 2048
# pieces, 256 of them bytes), the loss in bits per byte of the same held-out text; the variants
# that answer the learner (one kind: shared and identity; the three single ties; the signed tied
# score) beside full
TOKENS_TEXT = ["full", "shared", "identity", "qk_tied", "no_q_proj", "kv_tied", "qk_diag_alt"]
TOKENS = [(32, 512), (32, 2048), (64, 2048)]
def tokens(pieces):
    return ["task.tokenizer=bpe", "task.pieces=%d" % pieces]
for d, p in TOKENS:
    name = "text-tokens%d-d%d" % (p, d)
    STUDY["fourth-pilot"][name] = ablation(
        "English text (fortunes) in %d BPE pieces, d_model %d, the standard recipe: learning-rate pilot" % (p, d),
        "text64", d, TOKENS_TEXT, [100], FULL_LRS, 1000, None, "bpb", TEXT64 + RECIPE + tokens(p), few_seeds=True)
    lrs = pilot_lrs(name, "study-fourth-pilot", TOKENS_TEXT)
    STUDY["fourth-extra"][name] = lrs and ablation(
        "English text (fortunes) in %d BPE pieces, d_model %d, the standard recipe, 4000 steps" % (p, d), "text64", d,
        TOKENS_TEXT, S8, None, 4000, None, "bpb", TEXT64 + RECIPE + tokens(p), lr_of=lrs)

# Q = K = V = X (identity) on bytes, which the byte arm lacks, at its cheapest width, beside full
# (full's runs repeat text-d32's bit for bit: same config, seeds and rate)
TEXT_IDENTITY = ["full", "identity"]
STUDY["fourth-pilot"]["text-d32-identity"] = ablation(
    "English text (fortunes), d_model 32, Q = K = V = X, the standard recipe: learning-rate pilot", "text64", 32,
    TEXT_IDENTITY, [100], FULL_LRS, 1000, None, "bpb", TEXT64 + RECIPE, few_seeds=True)
lrs = pilot_lrs("text-d32-identity", "study-fourth-pilot", TEXT_IDENTITY)
STUDY["fourth-extra"]["text-d32-identity"] = lrs and ablation(
    "English text (fortunes), d_model 32, Q = K = V = X, the standard recipe, 4000 steps", "text64", 32,
    TEXT_IDENTITY, S8, None, 4000, None, "bpb", TEXT64 + RECIPE, lr_of=lrs)

# bf16 products (docs/performance.md, "Do the verdicts survive bf16?"): the demo's four variants and
# make study's recall ablation exactly as they are, with train.precision=bf16 added (their rates
# are the float32 pilot's; nothing is chosen on bf16 numbers), and the demo in float32 again
# beside them (the same build and machine: study-fourth/recall is the float32 reference of
# recall); scripts/compare-verdicts.py sets each seed's verdict and solve step beside float32's
def bf16(src, base):
    with open(src) as f:
        a = json.load(f)
    a = dict(a, title=a["title"] + ", bf16 products", base=base, set=a["set"] + ["train.precision=bf16"])
    return a
_CONFIGS = os.path.join(HERE, "..")
STUDY["bf16"] = {
    "demo-f32": dict(bf16(os.path.join(_CONFIGS, "ablate-qkv-recall-demo.json"), "../../recall.json"),
                     title="Why Q, K and V? Multi-query associative recall (demo size), float32 products",
                     set=json.load(open(os.path.join(_CONFIGS, "ablate-qkv-recall-demo.json")))["set"]),
    "demo": bf16(os.path.join(_CONFIGS, "ablate-qkv-recall-demo.json"), "../../recall.json"),
    "recall": STUDY["fourth"]["recall"] and dict(STUDY["fourth"]["recall"],
        title=STUDY["fourth"]["recall"]["title"] + ", bf16 products",
        set=STUDY["fourth"]["recall"]["set"] + ["train.precision=bf16"]),
}

# the sixth edition (docs/results/study-sixth/predictions.md, written before its runs): one
# protocol for every arm. Each variant's rate chosen by a pilot on two seeds the study does not
# report (100, 101), on validation, from a grid extended until every chosen rate is interior,
# ties toward the baseline's rate (sixth_rates); recall runs not solved extended to 16,000 steps;
# text evaluated on the same held-out windows for every seed and variant (task.heldout_seed),
# 4000 of them. Every ablation sized to finish within 90 minutes on 2 cores (from the fourth
# edition's times.txt: recall about 110 s per unsolved 4000-step run, text at d_model 64 about
# 71 s of wall time per run on bytes and 160 s with 2048 pieces, two runs at once).
VARIANTS["qk_tied+mimetic"] = (A(qkv="qk_tied", init="mimetic"), False)
VARIANTS["qk_tied+key_norm"] = (A(qkv="qk_tied", key_norm=True), False)
VARIANTS["full+self_mask"] = (A(self_mask=True), False)
VARIANTS["gate_value"] = (A(gate="value"), False)
VARIANTS["full+exclusive"] = (A(exclusive=True), False)
VARIANTS["no_q_proj+matched"] = (A(query_proj=False), True)
SIXTH_PILOT_SEEDS = [100, 101]
EDGES = []  # the pilots whose grids must be extended (their ablations are not written)
PENDING = []  # the pilots to run again on their extended grids (their ablations are not written)
SIXTH_GRID = {"accuracy": [0.0001, 0.0003, 0.001, 0.003], "bpb": [0.0003, 0.001, 0.003, 0.006, 0.01]}
# the rates a pilot's grid gained because a chosen rate was at its end (name -> added rates);
# sixth_rates says which to add, and the pilot is run again (its finished runs kept)
SIXTH_EXTENDED = {"text-d64-why": [0.02, 0.04], "text-d64-masked": [0.02, 0.04], "text-tokens2048-d64-why": [0.02, 0.04],
                  "text-tokens2048-d64-masked": [0.02, 0.04], "text-d64-matched": [0.02, 0.04], "text-zh-d64": [0.02, 0.04],
                  "text-tokens2048-d64-values": [0.02, 0.04], "text-tokens2048-d64-more": [0.02, 0.04],
                  "text-zh-tokens2048-d64": [0.02, 0.04], "text-tokens2048-d64-matched": [0.02, 0.04]}
# each pilot chose its grid's top: the next rate beyond (x2)
SIXTH_TIE = {"accuracy": 0.005, "bpb": 0.005}  # mean validation accuracy (0.5 points); bits per byte
SIXTH_RULE = ("each variant's rate chosen by the pilot (2 seeds, not reported) on mean validation over its seeds: "
              "the baseline the best (accuracy, then loss; text: bits per byte); any other variant the best, "
              "tied rates counting as equal and a tie going to the baseline's rate, else to the tied rate nearest "
              "it (tied: recall, as many pilot seeds solved and accuracy within 0.5 points, every rate when none "
              "solved; text, within 0.005 bits per byte); the grid extended until every chosen rate is interior")
# text: the same held-out windows for every seed and variant, 4000 evaluation and 1000 validation
# windows (the pilot evaluates 500 and validates on the 1000), evaluated every 500 steps
HELDOUT = ["task.heldout_seed=1000", "train.val_examples=1000"]
SIXTH_TEXT = RECIPE + HELDOUT + ["train.eval_every=500", "train.eval_examples=4000"]
SIXTH_TEXT_PILOT = RECIPE + HELDOUT + ["train.eval_every=250", "train.eval_examples=500"]
ZH = ["task.corpus=fortunes-zh"]
RECALL_SIXTH = WARMUP
STUDY["sixth-pilot"], STUDY["sixth"] = {}, {}

def sixth_grid(name, metric):
    return sorted(SIXTH_GRID[metric] + SIXTH_EXTENDED.get(name, []))

def sixth_rates(name, names, baseline, metric):
    """each variant's rate by the sixth edition's rule from the committed pilot
    (docs/results/study-sixth-pilot/NAME/results.json), or None before it; stops, naming the
    rates to add, when a chosen rate is at an end of the grid"""
    path = os.path.join(HERE, "..", "..", "docs", "results", "study-sixth-pilot", name, "results.json")
    try:
        with open(path) as f:
            res = json.load(f)
    except FileNotFoundError:
        return None
    grid = sixth_grid(name, metric)
    score = {}  # variant -> rate -> (mean validation accuracy, mean validation loss, seeds solved)
    for v in res["variants"]:
        by = {}
        for r in v["runs"]:
            assert r["ok"], ("a failed pilot run", name, v["name"], r["seed"], r["lr"])
            by.setdefault(r["lr"], []).append(r)
        for lr, rs in by.items():
            assert sorted(x["seed"] for x in rs) == SIXTH_PILOT_SEEDS, (name, v["name"], lr)
        score[v["name"]] = {lr: (sum(x["val_acc"] for x in rs) / len(rs), sum(x["val_loss"] for x in rs) / len(rs),
                                 sum(x["verdict"] == "solved" for x in rs)) for lr, rs in by.items()}
        if set(score[v["name"]]) < set(grid):  # the grid extended since: the pilot is to run again
            PENDING.append("sixth-pilot/%s: its committed pilot lacks the rates %s of its extended grid: run it "
                           "again (scripts/study.sh sixth-pilot %s), commit it and run this again"
                           % (name, sorted(set(grid) - set(score[v["name"]])), name))
            return None
        assert sorted(score[v["name"]]) == grid, ("the pilot's rates are not the grid", name, v["name"])
    def key(a):  # lower is better
        return (-a[0], a[1]) if metric == "accuracy" else (a[1],)
    import math
    def tied(a, best, none_solved):
        if metric == "accuracy":
            return none_solved or (a[2] == best[2] and best[0] - a[0] <= SIXTH_TIE["accuracy"])
        return (a[1] - best[1]) / math.log(2) <= SIXTH_TIE["bpb"]  # val_loss: nats per byte, pieces too
    chosen = {baseline: min(grid, key=lambda lr: key(score[baseline][lr]))}
    for n in names:
        if n == baseline:
            continue
        best = min(score[n].values(), key=key)
        none_solved = not any(a[2] for a in score[n].values())
        ties = [lr for lr in grid if tied(score[n][lr], best, none_solved)]
        b = chosen[baseline]
        chosen[n] = b if b in ties else min(ties, key=lambda lr: (abs(math.log(lr / b)), lr))
    # at an end of the grid: extend it (at most two rates beyond each end of the base grid)
    base = SIXTH_GRID[metric]
    below, above = len([x for x in grid if x < base[0]]), len([x for x in grid if x > base[-1]])
    edge = {n: lr for n, lr in chosen.items() if (lr == grid[0] and below < 2) or (lr == grid[-1] and above < 2)}
    if edge:  # its config is not written until the pilot has run on the extended grid
        EDGES.append("sixth-pilot/%s: the chosen rates %s are at an end of the grid %s: add the next rate beyond "
                     "each to SIXTH_EXTENDED[%r], run the pilot again, commit it and run this again"
                     % (name, edge, grid, name))
        return None
    return chosen

def sixth(name, title, base, d, names, seeds, steps, max_steps, metric, extra, baseline="full", few_seeds=False):
    grid = sixth_grid(name, metric)
    pilot_steps, pilot_max = (1000, None) if metric == "bpb" else (steps, 4000)
    pilot_extra = extra if metric != "bpb" else [o for o in extra if o not in SIXTH_TEXT] + SIXTH_TEXT_PILOT
    STUDY["sixth-pilot"][name] = ablation(title + ": learning-rate pilot", base, d, names, SIXTH_PILOT_SEEDS, grid,
                                          pilot_steps, pilot_max, metric, pilot_extra, few_seeds=True,
                                          baseline=baseline)
    lrs = sixth_rates(name, names, baseline, metric)
    a = lrs and ablation(title, base, d, names, seeds, None, 4000 if metric == "bpb" else steps, max_steps, metric,
                         extra, few_seeds=few_seeds, lr_of=lrs, baseline=baseline)
    if a:
        a["pilot"] = "docs/results/study-sixth-pilot/%s" % name
        a["rate_choice"] = {"rule": SIXTH_RULE, "grid": grid, "pilot_seeds": SIXTH_PILOT_SEEDS}
        if metric == "accuracy":
            a["extend_to_max_steps"] = True
    STUDY["sixth"][name] = a

# ask 2 "slow or stuck?": recall to 16,000 steps (the tied scores, then the two starts of the tie)
sixth("recall-tied", "Recall (MQAR), d_model 64, to 16,000 steps: the tied scores", "recall", 64,
      ["full", "qk_tied", "shared"], S9, 500, 16000, "accuracy", RECALL_SIXTH)
sixth("recall-init", "Recall (MQAR), d_model 64, to 16,000 steps: the tie's start and normalised keys", "recall", 64,
      ["full", "qk_tied+mimetic", "qk_tied+key_norm"], S9, 500, 16000, "accuracy", RECALL_SIXTH)
# the seed's "more" on noisy recall (the fourth edition's budget)
sixth("noisy_recall-more", "Noisy recall (MAD), d_model 64: a value gate and exclusive attention", "noisy_recall", 64,
      ["full", "gate_value", "full+exclusive"], S9, 1000, 4000, "accuracy", RECALL_SIXTH)
# text at d_model 64, bytes and 2048 pieces: the "why" (self-mask), V = X, the matched controls, the "more"
for reading, tok, title in (("d64", [], "English text (fortunes), d_model 64"),
                            ("tokens2048-d64", tokens(2048), "English text (fortunes) in 2048 BPE pieces, d_model 64")):
    sixth("text-%s-why" % reading, title + ": the tied score, Q = K = V = X and V = X", "text64", 64,
          ["full", "qk_tied", "identity"] + (["no_v_proj"] if reading == "d64" else []), S8, None, None, "bpb",
          tok + SIXTH_TEXT)
    sixth("text-%s-masked" % reading, title + ": the tied score with the self-mask, and its control", "text64", 64,
          ["full+self_mask", "qk_tied+self_mask"], S8, None, None, "bpb", tok + SIXTH_TEXT, baseline="full+self_mask")
    sixth("text-%s-matched" % reading, title + ": one map fewer, the parameters given back (match_params)", "text64",
          64, ["full", "no_q_proj+matched", "kv_tied+matched", "qk_tied+matched"] if reading == "d64" else
          ["full", "no_q_proj+matched", "qk_tied+matched"], S8, None, None, "bpb", tok + SIXTH_TEXT)
# with 2048 pieces a run costs about twice a byte run's: V = X and K = V matched beside full, and the "more"
sixth("text-tokens2048-d64-values", "English text (fortunes) in 2048 BPE pieces, d_model 64: V = X, and K = V "
      "matched", "text64", 64, ["full", "no_v_proj", "kv_tied+matched"], S8, None, None, "bpb",
      tokens(2048) + SIXTH_TEXT)
sixth("text-tokens2048-d64-more", "English text (fortunes) in 2048 BPE pieces, d_model 64: a value gate and "
      "exclusive attention", "text64", 64, ["full", "gate_value", "full+exclusive"], S8, None, None, "bpb",
      tokens(2048) + SIXTH_TEXT)
# the learner's language: Debian's Chinese fortunes, bytes and 2048 pieces, 5 seeds
for reading, tok, title in (("d64", [], "Chinese text (fortunes-zh), d_model 64"),
                            ("tokens2048-d64", tokens(2048), "Chinese text (fortunes-zh) in 2048 BPE pieces, d_model 64")):
    sixth("text-zh-%s" % reading, title + ": one kind or two", "text64", 64, ["full", "qk_tied", "shared", "identity"],
          S5, None, None, "bpb", ZH + tok + SIXTH_TEXT, few_seeds=True)

# where the rates that variants set came from: the committed pilot that chose them (results.json
# records it as rate_choice.pilot)
PILOTS = {"third": "study-third-pilot", "fourth": "study-fourth-pilot", "fourth-extra": "study-fourth-pilot"}
for version, pilot in PILOTS.items():
    for name, a in STUDY[version].items():
        chose = os.path.join(HERE, "..", "..", "docs", "results", pilot, name, "results.json")
        if a and os.path.exists(chose) and any(o.startswith("optim.lr=") for v in a["variants"] for o in v["set"]):
            a["pilot"] = "docs/results/%s/%s" % (pilot, name)

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
    "text64": {"name": "text", "corpus": "fortunes", "seq_len": 64, "eval_fraction": 0.1, "val_fraction": 0.1},
    "induction": {"name": "induction", "length": 32, "symbols": 16},
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
        if a is None:
            continue
        write(os.path.join(HERE, version, name + ".json"), a)
if EDGES or PENDING:
    import sys
    print("\n".join(EDGES + PENDING), file=sys.stderr)
    sys.exit(3)
