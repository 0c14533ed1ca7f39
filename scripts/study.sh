#!/bin/sh
# The study of docs/qkv-answer.md: every ablation of configs/study/VERSION/, then the summary.
#
#   scripts/study.sh [sixth|sixth-pilot|fourth|fourth-extra|fourth-pilot|bf16|third|third-extra|third-pilot|quick|extra|full] [NAME...]
#
# sixth-pilot and sixth are the sixth edition (make study-sixth runs both, with
# scripts/study-configs.py between them, which writes configs/study/sixth/ from the pilot's
# committed choices; the predictions were committed before either:
# docs/results/study-sixth/predictions.md). NAME... runs only those ablations of the version
# (configs/study/VERSION/NAME.json), their wall times added to times.txt rather than replacing it.
# Each ablation reuses the finished runs of the version's other sweeps that are the same runs
# (qkv ablate --reuse: the same name and input config; docs/ablate.md), so a shared baseline is
# trained once and its time counted in the first ablation that trained it.
#
# fourth (the default; make study) is the fourth edition of docs/qkv-answer.md; fourth-pilot
# (make study-pilot) its learning-rate pilot, whose choices configs/study/fourth/*.json hold
# (scripts/study-configs.py writes them in from its committed results; the predictions were
# committed before either: docs/results/study-fourth/predictions.md); fourth-extra (make study-extra)
# what does not fit in its 90 minutes (noisy recall with the values, rotary positions on noisy
# recall and induction, text at three widths for 4000 steps); bf16 (make study-bf16) the demo and
# fourth's recall with bf16 products, and the demo in float32 (docs/performance.md). third (make study-third)
# is the third edition, within 90 minutes on 2 cores; third-extra (make study-third-extra) what was
# cut from it to fit; third-pilot the learning-rate pilot whose choices
# configs/study/third/text-d64.json holds. quick and extra are the
# second edition (within an hour; fuzzy recall), kept to reproduce its committed results; full
# is the study as designed (docs/qkv-answer.md gives its compute). Runs go to runs/study-VERSION/NAME (not
# committed; a second call reuses finished runs and resumes the rest); the reports are copied
# to docs/results/study-VERSION/NAME (results.md, .csv, .json, report.md, plots/) and
# `qkv summarize` writes docs/results/study-VERSION/summary/. Wall times go to
# docs/results/study-VERSION/times.txt, after three comment lines: the date, cores and jobs; the
# qkv version and its GEMM build, and the load average; and "# machine: " with the JSON object
# `qkv --version` prints and every run's summary.json holds as "machine" (the CPU, GEMM build,
# vector ISA, OpenBLAS core, libxsmm target). JOBS (default: the number of cores) runs at once.
set -eu
cd "$(dirname "$0")/.."
version=${1:-fourth}
case "$version" in sixth|sixth-pilot|fourth|fourth-extra|fourth-pilot|bf16|third|third-extra|third-pilot|quick|extra|full) ;;
*) echo "usage: scripts/study.sh [sixth|sixth-pilot|fourth|fourth-extra|fourth-pilot|bf16|third|third-extra|third-pilot|quick|extra|full] [NAME...]" >&2; exit 2 ;; esac
[ $# -eq 0 ] || shift
names="$*"
cfgs=
if [ -z "$names" ]; then
    cfgs=$(ls configs/study/"$version"/*.json 2>/dev/null || true)
else
    for n in $names; do
        [ -f "configs/study/$version/$n.json" ] || { echo "study: configs/study/$version/$n.json: no such ablation" >&2; exit 2; }
        cfgs="$cfgs configs/study/$version/$n.json"
    done
fi
qkv=${QKV:-build/qkv}
jobs=${JOBS:-$(getconf _NPROCESSORS_ONLN)}
runs=runs/study-$version
results=docs/results/study-$version
[ -x "$qkv" ] || { echo "study: $qkv is missing: run make first" >&2; exit 1; }
[ "$version" != third ] || [ -f configs/study/third/text-d64.json ] || {
    echo "study: configs/study/third/text-d64.json is missing: run make study-pilot, then scripts/study-configs.py" >&2
    exit 1; }
case "$version" in fourth|fourth-extra|sixth) [ -n "$cfgs" ] || {
    echo "study: configs/study/$version/ is missing: run its pilot, then scripts/study-configs.py" >&2
    exit 1; } ;; esac
# the corpora the ablations read (fortunes, fortunes-zh: installs them when run as root, else says how)
# shellcheck disable=SC2086
scripts/install-deps.sh $cfgs
mkdir -p "$runs" "$results"
times=$results/times.txt.tmp
{
    echo "# scripts/study.sh $version: $(date -u +%Y-%m-%dT%H:%MZ), $(getconf _NPROCESSORS_ONLN) cores, --jobs $jobs,"
    echo "# $($qkv --version 2>/dev/null | head -n 1), load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "# machine: $($qkv --version 2>/dev/null | sed -n 's/^machine: //p')"
    echo "# nice $(nice), lscpu: $(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -n 1), $(getconf _NPROCESSORS_ONLN) CPUs"
} > "$times"
total0=$(date +%s)
dirs=
for cfg in $cfgs; do
    name=$(basename "$cfg" .json)
    t0=$(date +%s)
    set -- # the version's other sweeps: their finished runs that are this one's are copied, not trained
    for d in "$runs"/*; do
        [ "$d" = "$runs/$name" ] || [ ! -d "$d/configs" ] || set -- "$@" --reuse "$d"
    done
    "$qkv" ablate "$cfg" --out "$runs/$name" --jobs "$jobs" "$@"
    t1=$(date +%s)
    echo "$name $((t1 - t0)) s (load average at its end: $(cut -d' ' -f1-3 /proc/loadavg))" >> "$times"
    mkdir -p "$results/$name"
    for f in results.md results.csv results.json report.md; do
        [ ! -f "$runs/$name/$f" ] || cp "$runs/$name/$f" "$results/$name/$f"
    done
    rm -rf "$results/$name/plots"
    [ ! -d "$runs/$name/plots" ] || cp -r "$runs/$name/plots" "$results/$name/plots"
    dirs="$dirs $results/$name"
done
echo "total $(( $(date +%s) - total0 )) s" >> "$times"
if [ -n "$names" ] && [ -f "$results/times.txt" ]; then # a subset: its times join the earlier ones
    cat "$times" >> "$results/times.txt" && rm -f "$times"
else
    mv "$times" "$results/times.txt"
fi
# shellcheck disable=SC2086
"$qkv" summarize $dirs --out "$results/summary"
echo "study: reports in $results/, the summary in $results/summary/summary.md"
