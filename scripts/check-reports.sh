#!/bin/sh
# The documents qkv renders from results, made again by this build and by another, compared
# byte for byte but for the wall times they state.
#
#   scripts/check-reports.sh --against REF   build git revision REF in a scratch worktree
#   scripts/check-reports.sh --old BIN       compare with an existing qkv binary
#
# What both builds render, each into its own directory:
#   - qkv summarize of every committed results.json (docs/results/), one at a time, of each
#     committed summary's ablations (in its summary.csv's order), and of all of them with one
#     baseline at once;
#   - every Markdown document under docs/ and the README, copied and rewritten by
#     --update-doc (their generated blocks), and --check-doc's verdict on the originals;
#   - the reports of small sweeps trained here, since a report is made from a sweep's run
#     directories and the committed results keep none: accuracy with a learning-rate grid and a
#     parameter-matched control, significant differences, loss, bits per byte on text (compared
#     on bits, and on accuracy at another width), and a partial sweep (one share of
#     two). The old build trains them once; each build then writes the report of the same runs
#     (qkv ablate CONFIG --out DIR --report), and its files are kept.
# Wall times (results.json's wall_seconds, report.md's "took ... of wall time") are replaced by T
# on both sides before the comparison.
set -eu
cd "$(dirname "$0")/.."
root=$PWD
old= ref=
case "${1:-}" in
    --against) ref=${2:?--against needs a git revision} ;;
    --old) old=${2:?--old needs a qkv binary} ;;
    *) echo "usage: scripts/check-reports.sh --against REF | --old BIN" >&2; exit 2 ;;
esac
scratch=$(mktemp -d)
[ -z "${KEEP:-}" ] || echo "check-reports: keeping $scratch" >&2
trap '[ -n "${KEEP:-}" ] || rm -rf "$scratch"; [ -z "$ref" ] || git worktree remove --force "$scratch/ref" 2>/dev/null || true' EXIT
make -s build/qkv >/dev/null
new=$root/build/qkv
if [ -n "$ref" ]; then
    git worktree add -q --detach "$scratch/ref" "$ref"
    make -s -C "$scratch/ref" BUILD=build-check-reports build-check-reports/qkv >/dev/null
    old=$scratch/ref/build-check-reports/qkv
fi
old=$(cd "$(dirname "$old")" && pwd)/$(basename "$old")

# ---- sweeps: trained once, by the old build -------------------------------------------------
sw=$scratch/sweeps
mkdir -p "$sw"
for i in $(seq 0 399); do echo "the quick brown fox $((i * 7919 % 1000)) jumps over the lazy dog."; done > "$sw/corpus.txt"
cat > "$sw/recall.json" <<'EOF'
{"model": {"d_model": 16, "heads": 2, "layers": 1, "d_ff": 32},
 "task": {"name": "recall", "pairs": 3, "keys": 8, "values": 8},
 "train": {"steps": 40, "batch": 16, "eval_every": 10, "eval_examples": 64},
 "optim": {"lr": 0.01, "clip": 1}}
EOF
cat > "$sw/text.json" <<'EOF'
{"model": {"d_model": 16, "heads": 2, "layers": 1, "d_ff": 32},
 "task": {"name": "text", "path": "corpus.txt", "seq_len": 16},
 "train": {"steps": 30, "batch": 8, "eval_every": 10, "eval_examples": 32},
 "optim": {"lr": 0.01, "clip": 1}}
EOF
cat > "$sw/acc.json" <<'EOF'
{"title": "Accuracy, a grid & a <matched> control", "base": "recall.json", "lrs": [0.003, 0.03],
 "variants": [{"name": "full"}, {"name": "shared", "set": ["model.attention.qkv=shared"]},
              {"name": "qk_tied", "set": ["model.attention.qkv=qk_tied"], "match_params": "baseline"}],
 "seeds": [0, 1, 2], "max_steps": 160, "threshold": 0.38, "example": 1}
EOF
cat > "$sw/loss.json" <<'EOF'
{"base": "recall.json", "metric": "loss", "set": ["train.steps=30"],
 "variants": [{"name": "full"}, {"name": "kv_tied", "set": ["model.attention.qkv=kv_tied"]}],
 "seeds": [3, 4]}
EOF
cat > "$sw/bpb.json" <<'EOF'
{"title": "Bits per byte", "base": "text.json", "metric": "bpb",
 "variants": [{"name": "full"}, {"name": "shared", "set": ["model.attention.qkv=shared"]}],
 "seeds": [0, 1, 2]}
EOF
cat > "$sw/sig.json" <<'EOF'
{"base": "recall.json", "max_steps": 80, "threshold": 0.3,
 "variants": [{"name": "full"}, {"name": "slow", "set": ["optim.lr=0.0003"]}, {"name": "fast", "set": ["optim.lr=0.02"]}],
 "seeds": [0, 1, 2, 3, 4, 5, 6]}
EOF
cat > "$sw/textacc.json" <<'EOF'
{"base": "text.json", "set": ["model.d_model=32"], "threshold": 0.6,
 "variants": [{"name": "full"}, {"name": "shared", "set": ["model.attention.qkv=shared"]}], "seeds": [0, 1, 2]}
EOF
cp "$sw/acc.json" "$sw/partial.json"
sweeps="acc sig loss bpb textacc partial"
(
    cd "$sw"
    for s in acc sig loss bpb textacc; do "$old" ablate $s.json --out $s --jobs 2 --quiet >/dev/null; done
    "$old" ablate partial.json --out partial --jobs 2 --shard 0/2 --quiet >/dev/null
)

# ---- rendering: RENDER BIN OUT ----------------------------------------------------------------
render() {
    bin=$1 out=$2
    mkdir -p "$out/sweeps" "$out/single" "$out/groups" "$out/docs"
    # the sweeps' reports, from the same run directories (the command in report.md names them)
    for s in $sweeps; do
        (cd "$sw" && "$bin" ablate $s.json --out $s --report --jobs 2 --quiet >/dev/null)
        mkdir -p "$out/sweeps/$s"
        (cd "$sw/$s" && cp -r results.md results.csv results.json report.md report.html plots "$out/sweeps/$s/")
    done
    (cd "$sw" && "$bin" summarize acc sig loss bpb textacc partial --out "$out/sweeps/summary" --quiet)
    # every committed results.json alone, each committed summary's ablations, all of them
    find docs/results -name results.json | sort | while read -r f; do
        d=$(dirname "$f")
        "$bin" summarize "$d" --out "$out/single/$(echo "$d" | tr / _)" --quiet
    done
    for csv in $(find docs/results -path '*/summary/summary.csv' | sort); do
        dirs=$(tail -n +2 "$csv" | cut -d, -f2 | awk '!seen[$0]++')
        "$bin" summarize $dirs --out "$out/groups/$(dirname "$csv" | tr / _)" --quiet
    done
    for base in $(find docs/results -name results.json | xargs sed -n 's/^\t"baseline":\t"\(.*\)",$/\1/p' | sort -u); do
        "$bin" summarize $(find docs/results -name results.json | sort | xargs grep -l "^	\"baseline\":	\"$base\"," |
            xargs -n1 dirname) --out "$out/groups/all-$base" --title "Every committed ablation against $base" --quiet
    done
    # the documents' generated blocks: rewritten in copies, and checked in place
    for doc in README.md $(find docs -name '*.md' | sort); do
        copy=$out/docs/$(echo "$doc" | tr / _)
        cp "$doc" "$copy"
        "$bin" summarize --update-doc "$copy" 2>&1 | sed "s|$out/|OUT/|g" > "$copy.update" || true
        "$bin" summarize --check-doc "$doc" > "$copy.check" 2>&1 || echo "exit $?" >> "$copy.check"
    done
    # the times a run of the report took are not its results
    find "$out" -type f \( -name results.json -o -name 'report.*' \) | while read -r f; do
        sed -E -i 's/"wall_seconds":[^,]*,/"wall_seconds": T,/; s/took [0-9.]+ (s|min|h)( \([0-9]+ s\))? of wall time/took T of wall time/' "$f"
    done
}

render "$old" "$scratch/old"
render "$new" "$scratch/new"
files=$(cd "$scratch/new" && find . -type f | wc -l)
if diff -r "$scratch/old" "$scratch/new" > "$scratch/diff.txt"; then
    echo "check-reports: $files files rendered alike by both builds (sweeps: $sweeps; $(find docs/results -name results.json | wc -l) committed results.json; the documents)"
else
    head -n 60 "$scratch/diff.txt" >&2
    echo "check-reports: the builds differ in $(grep -c '^diff\|^Only' "$scratch/diff.txt") files (above: < the other build, > this one)" >&2
    exit 1
fi
