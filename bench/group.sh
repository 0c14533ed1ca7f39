#!/bin/sh
# Several runs trained as one model (qkv train --group) against the same runs trained alone, one
# after another, on one thread: CPU seconds (user + sys) of each, and a check that every run's
# weights are the same bits either way.   usage: bench/group.sh [STEPS] [RUNS] [CONFIG]
# (defaults: 300 steps, 8 runs of configs/recall.json, seeds 0..RUNS-1; docs/performance.md)
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
qkv=${QKV:-$root/build/qkv}
steps=${1:-300}
runs=${2:-8}
config=${3:-$root/configs/recall.json}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
cpu() { # CPU seconds of a command
    /usr/bin/time -f "%U %S" -o t.txt "$@" > /dev/null 2> err.txt || { cat err.txt >&2; exit 1; }
    awk '{printf "%.2f", $1 + $2}' t.txt
}
seeds=$(seq -s " " 0 $((runs - 1)))
for s in $seeds; do # each run's input config, as qkv ablate writes it (config.json in its directory)
    "$qkv" train "$config" --set train.steps="$steps" --set train.seed="$s" --out "c$s" --threads 1 --quiet \
        --stop-after 1 > /dev/null 2>&1 || true
    cp "c$s/config.json" "cfg$s.json"
    rm -rf "c$s"
done
alone=$(cpu sh -c "for s in $seeds; do '$qkv' train cfg\$s.json --out a\$s --threads 1 --quiet; done")
groups=
for size in 2 4 8; do
    [ "$size" -le "$runs" ] || continue
    rm -rf g*
    cmd=true
    group=
    for s in $seeds; do
        mkdir "g$s"
        cp "cfg$s.json" "g$s/config.json"
        group="$group --group g$s"
        if [ $(((s + 1) % size)) -eq 0 ] || [ "$s" -eq $((runs - 1)) ]; then
            cmd="$cmd; '$qkv' train$group --threads 1 --quiet"
            group=
        fi
    done
    t=$(cpu sh -c "$cmd")
    for s in $seeds; do
        cmp -s "a$s/model.safetensors" "g$s/model.safetensors" || { echo "group.sh: run $s differs in groups of $size" >&2; exit 1; }
    done
    groups="$groups
groups of $size: $t s CPU ($(awk -v a="$alone" -v t="$t" 'BEGIN {printf "%.2fx", a / t}') the speed of alone)"
done
echo "$runs runs of $(basename "$config"), $steps steps each, one thread: alone, one after another: $alone s CPU$groups"
echo "every run's weights identical, alone or in a group"
