#!/bin/sh
# This build's speed beside a build of another git revision, on this machine, in one run:
#
#   scripts/bench-against.sh REF [ROUNDS]
#
# builds REF in a scratch worktree (its own build directory, this build's GEMM path), then, for
# ROUNDS rounds (default 5), alternating the two builds within each round (the order swapped every
# other round, so that a drift of the machine weighs on both):
#   - `qkv train configs/recall.json --threads 1 --set train.steps=400 --time-products`: its wall
#     seconds and the share of them in matrix products;
#   - `qkv bench --sweep --json`: runs per minute of the sweep of one-thread recall runs
#     (docs/performance.md); BENCH_AGAINST_SWEEP=0 leaves it out.
# BENCH_AGAINST_WORKTREE=DIR uses a worktree of REF made before (git worktree add DIR REF), and
# its build-bench-against/ build, instead of a scratch one built on every call.
# Prints each round's figures, then the medians and the ratios (REF / this build for seconds,
# this build / REF for runs per minute), with the load average before and after. On a shared
# machine, read the ratio within one run: the absolute figures move between runs.
set -eu
cd "$(dirname "$0")/.."
ref=${1:?usage: scripts/bench-against.sh REF [ROUNDS]}
rounds=${2:-5}
sweep=${BENCH_AGAINST_SWEEP:-1}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"; git worktree remove --force "$scratch/ref" 2>/dev/null || true' EXIT

make -s >/dev/null
new=$PWD/build/qkv
# BENCH_AGAINST_WORKTREE=DIR: a worktree of REF made before (its build kept between calls)
refdir=${BENCH_AGAINST_WORKTREE:-$scratch/ref}
if [ -n "${BENCH_AGAINST_WORKTREE:-}" ]; then
    [ "$(git -C "$refdir" rev-parse HEAD)" = "$(git rev-parse "$ref^{commit}")" ] || {
        echo "bench-against: $refdir is not a worktree of $ref" >&2; exit 1; }
else
    git worktree add -q --detach "$refdir" "$ref"
fi
make -s -C "$refdir" BUILD=build-bench-against >/dev/null
old=$refdir/build-bench-against/qkv
if [ "$("$old" --version | head -n 1)" != "$("$new" --version | head -n 1)" ]; then
    echo "bench-against: the two builds' GEMM paths differ:" >&2
    "$old" --version | head -n 1 >&2
    "$new" --version | head -n 1 >&2
    exit 1
fi
export OPENBLAS_NUM_THREADS="${OPENBLAS_NUM_THREADS:-1}"

# a JSON number field of a summary line: field NAME < line
field() { sed -n "s/.*\"$1\":\([-0-9.e+]*\).*/\1/p"; }
median() { sort -g | awk '{v[NR] = $1} END {print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

# one measurement of build $1 (old or new) into $scratch/$1.{wall,share,rpm}
measure() {
    bin=$old
    [ "$1" = new ] && bin=$new
    line=$("$bin" train configs/recall.json --threads 1 --set train.steps=400 --time-products --quiet \
           --out "$scratch/run-$1" 2>/dev/null | tail -n 1)
    rm -rf "$scratch/run-$1"
    wall=$(echo "$line" | field wall_seconds) share=$(echo "$line" | field products_share)
    echo "$wall" >> "$scratch/$1.wall"
    echo "$share" >> "$scratch/$1.share"
    rpm=-
    if [ "$sweep" != 0 ]; then
        rpm=$("$bin" bench --sweep --json 2>/dev/null | tail -n 1 | field runs_per_min)
        echo "$rpm" >> "$scratch/$1.rpm"
    fi
    printf '%-4s %-5s  recall 400 steps: %6s s wall, %s in products;  sweep: %s runs/min\n' "$r" "$1" "$wall" \
        "$share" "$rpm"
}

echo "bench-against: $ref ($(git rev-parse --short "$ref")) against this build ($(git rev-parse --short HEAD)$(git diff --quiet HEAD || echo ', modified')), $rounds rounds"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
r=1
while [ "$r" -le "$rounds" ]; do
    if [ $((r % 2)) = 1 ]; then measure old; measure new; else measure new; measure old; fi
    r=$((r + 1))
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
for b in old new; do
    w=$(median < "$scratch/$b.wall") s=$(median < "$scratch/$b.share")
    eval "w_$b=$w s_$b=$s"
    rpm=-
    [ "$sweep" = 0 ] || rpm=$(median < "$scratch/$b.rpm")
    eval "rpm_$b=$rpm"
    printf 'median %-3s  recall 400 steps: %s s wall, %s in products (%s outside);  sweep: %s runs/min\n' "$b" "$w" "$s" \
        "$(awk -v s="$s" 'BEGIN {printf "%.1f%%", 100 * (1 - s)}')" "$rpm"
done
awk -v a="$w_old" -v b="$w_new" 'BEGIN {printf "recall run: %.2fx the speed of the build of REF (its median wall / this build'"'"'s)\n", a / b}'
[ "$sweep" = 0 ] || awk -v a="$rpm_old" -v b="$rpm_new" 'BEGIN {printf "sweep: %.2fx the runs per minute of the build of REF\n", b / a}'
