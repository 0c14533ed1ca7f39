#!/bin/sh
# Do the trained models have a previous-token head (the first half of the two-layer circuit that
# recall and induction need)? Reads every run of each ablation directory with `qkv inspect`, whose
# "previous" column is the mean weight a head's queries put on the position just before their own
# over 256 evaluation examples, and writes one table of all of them (docs/qkv-answer.md quotes it
# with `qkv table`).
#
#   scripts/previous-token-heads.sh OUT_DIR ABLATION_DIR...
#
# e.g. after `build/qkv ablate configs/search/previous-token-heads.json --out
# runs/search/previous-token-heads --jobs 2` and `make study-extra`:
#   scripts/previous-token-heads.sh docs/results/search-previous-token \
#       runs/search/previous-token-heads runs/study-third-extra/induction
# OUT_DIR gets heads.md (the table) and inspect/ABLATION/VARIANT-seedS.txt (what qkv inspect printed);
# QKV is the qkv binary (default build/qkv).
set -eu
cd "$(dirname "$0")/.."
qkv=${QKV:-build/qkv}
[ $# -ge 2 ] || { echo "usage: scripts/previous-token-heads.sh OUT_DIR ABLATION_DIR..." >&2; exit 2; }
[ -x "$qkv" ] || { echo "previous-token-heads: $qkv is missing: run make first" >&2; exit 1; }
out=$1
shift
mkdir -p "$out"
rows=$out/heads.tsv.tmp
: > "$rows"
for dir in "$@"; do
    name=${dir%/}
    name=${name##*/}
    [ -f "$dir/results.csv" ] || { echo "previous-token-heads: $dir/results.csv is missing: not a finished ablation" >&2; exit 1; }
    mkdir -p "$out/inspect/$name"
    # the variants in the report's order (the config's), then each seed: one line per run
    for variant in $(awk -F, 'NR > 1 { print $1 }' "$dir/results.csv"); do
        for run in "$dir/runs/$variant"/seed*; do
            seed=${run##*/seed}
            "$qkv" inspect "$run" > "$out/inspect/$name/$variant-seed$seed.txt"
            solved=$(sed -n 's/.*"solved_at":[[:space:]]*\([0-9]*\).*/\1/p' "$run/summary.json")
            awk -v name="$name" -v variant="$variant" -v solved="$solved" '
                $1 ~ /^[0-9]+$/ && $2 ~ /^[0-9]+$/ {
                    diag += $5; n++
                    if ($1 == 0 && (best == "" || $6 + 0 > best + 0)) best = $6
                    if ($1 == 1) { l1 += $6; n1++ }
                }
                END { printf "%s\t%s\t%d\t%s\t%s\t%s\n", name, variant, solved != "", best, n1 ? l1 / n1 : 0, n ? diag / n : 0 }' \
                "$out/inspect/$name/$variant-seed$seed.txt" >> "$rows"
        done
    done
done
# one row per ablation and variant, in the order met: the mean over seeds and the range
awk -F '\t' -v sources="$*" '
    BEGIN {
        print "# Previous-token heads: each variant'"'"'s heads read by qkv inspect"
        print ""
        print "Written by scripts/previous-token-heads.sh from the runs of " sources " (one `qkv inspect`"
        print "output per run in inspect/). previous: the mean weight a head'"'"'s queries put on the position just"
        print "before their own, over 256 evaluation examples (under uniform causal attention a query with one"
        print "earlier position puts 1/2 there, one with 23 puts 1/24). Per run: layer 0'"'"'s largest over its"
        print "heads, layer 1'"'"'s mean over its heads, and the diagonal share (the weight on the own position)"
        print "over all heads; then the mean over the seeds, with the smallest and largest in brackets."
        print ""
        print "| ablation | variant | solved | layer 0: largest previous share | layer 1: mean previous share | diagonal share |"
        print "|---|---|---:|---:|---:|---:|"
    }
    {
        k = $1 "\t" $2
        if (!(k in n)) { order[++m] = k; lo[k] = hi[k] = $4 }
        n[k]++; solved[k] += $3; s4[k] += $4; s5[k] += $5; s6[k] += $6
        if ($4 + 0 < lo[k] + 0) lo[k] = $4
        if ($4 + 0 > hi[k] + 0) hi[k] = $4
    }
    END {
        for (i = 1; i <= m; i++) {
            k = order[i]
            split(k, f, "\t")
            printf "| %s | %s | %d/%d | %.3f [%.3f, %.3f] | %.3f | %.3f |\n", f[1], f[2], solved[k], n[k],
                s4[k] / n[k], lo[k], hi[k], s5[k] / n[k], s6[k] / n[k]
        }
    }' "$rows" > "$out/heads.md.tmp"
rm -f "$rows"
mv "$out/heads.md.tmp" "$out/heads.md"
echo "previous-token-heads: $out/heads.md"
