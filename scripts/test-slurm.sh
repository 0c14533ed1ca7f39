#!/bin/sh
# qkv ablate --slurm on a real one-node Slurm (scripts/slurm-local.sh), run by .ci/run:
#   1. a small sweep submitted with --slurm (two array tasks and the report job) gives the results
#      of the same sweep run with --jobs 2;
#   2. an array task requeued in the middle of a run (scontrol requeue: SIGTERM, as preemption)
#      checkpoints, is run again, resumes its run from the checkpoint, and the results still match.
# Slurm is started here if it is not running (root installs it) and stopped again at the end.
set -eu
cd "$(dirname "$0")/.."
make -s >/dev/null
started=no
if ! scripts/slurm-local.sh status >/dev/null 2>&1; then
    scripts/slurm-local.sh start
    started=yes
fi
eval "$(scripts/slurm-local.sh env)"
tmp=$(mktemp -d /tmp/qkv-slurm-test.XXXXXX)
cleanup() { [ $started = no ] || scripts/slurm-local.sh stop >/dev/null 2>&1 || true; rm -rf "$tmp"; }
trap cleanup EXIT
qkv=$PWD/build/qkv
fail() { echo "test-slurm: $*" >&2; for f in "$tmp"/*/slurm/*.log; do [ -f "$f" ] && { echo "== $f"; tail -n 20 "$f"; }; done >&2; exit 1; }

# wait until Slurm has no job of these ids left (at most $1 seconds)
wait_jobs() {
    limit=$1; shift
    i=0
    while [ -n "$(squeue -h -j "$(echo "$@" | tr ' ' ',')" 2>/dev/null)" ]; do
        i=$((i + 1)); [ $i -le "$limit" ] || fail "jobs $* still queued after $limit s"; sleep 1
    done
}
# the results CSV without the wall-time column
csv() { awk -F, -v OFS=, '{ $10 = ""; print }' "$1/results.csv"; }
# submit DIR: the two job ids, as "ARRAY REPORT"
submit() {
    "$qkv" ablate "$tmp/abl.json" --out "$tmp/$1" --slurm --tasks 2 --parallel 2 > "$tmp/$1.submit" ||
        fail "qkv ablate --slurm failed"
    sed -n 's/.*array job \([0-9]*\) .* report job \([0-9]*\) .*/\1 \2/p' "$tmp/$1.submit"
}

cat > "$tmp/base.json" <<'JSON'
{"model": {"d_model": 32, "heads": 2, "layers": 2, "d_ff": 64},
 "task": {"name": "recall", "pairs": 4, "keys": 16, "values": 16},
 "train": {"steps": 200, "batch": 32, "eval_every": 50, "eval_examples": 64},
 "optim": {"lr": 0.003, "clip": 1}}
JSON
cat > "$tmp/abl.json" <<'JSON'
{"base": "base.json", "threshold": 0.9, "max_steps": 800,
 "variants": [{"name": "full"}, {"name": "identity", "set": ["model.attention.qkv=identity"]}],
 "seeds": [0, 1]}
JSON

# 1. the same sweep, locally and on Slurm
"$qkv" ablate "$tmp/abl.json" --out "$tmp/local" --jobs 2 --quiet > /dev/null
set -- $(submit slurm)
[ $# -eq 2 ] || fail "no job ids in: $(cat "$tmp/slurm.submit")"
wait_jobs 600 "$1" "$2"
[ -f "$tmp/slurm/results.csv" ] || fail "the report job wrote no results"
[ "$(csv "$tmp/local")" = "$(csv "$tmp/slurm")" ] || fail "Slurm's results differ from --jobs 2's"
echo "test-slurm: array job $1 (2 tasks) and report job $2 give the results of --jobs 2"

# 2. a task requeued in the middle of a run resumes it
sed 's/"steps": 200/"steps": 3000/; s/"eval_every": 50/"eval_every": 500/' "$tmp/base.json" > "$tmp/b2" && mv "$tmp/b2" "$tmp/base.json"
sed 's/"max_steps": 800/"max_steps": 3000/' "$tmp/abl.json" > "$tmp/a2" && mv "$tmp/a2" "$tmp/abl.json"
"$qkv" ablate "$tmp/abl.json" --out "$tmp/local2" --jobs 2 --quiet > /dev/null
set -- $(submit slurm2)
[ $# -eq 2 ] || fail "no job ids in: $(cat "$tmp/slurm2.submit")"
i=0  # wait until task 0's first run has a checkpoint, then requeue the task
until ls "$tmp"/slurm2/runs/*/seed0/checkpoint.safetensors >/dev/null 2>&1; do
    i=$((i + 1)); [ $i -le 300 ] || fail "no checkpoint after 300 s"; sleep 1
done
scontrol requeue "$1_0"
wait_jobs 900 "$1" "$2"
log=$(ls "$tmp"/slurm2/slurm/task-"$1"_0.log)
grep -q "attempt 2" "$log" || fail "task 0 did not run again after the requeue ($log)"
grep -q "resuming" "$log" || fail "task 0 did not resume its run from the checkpoint ($log)"
[ "$(csv "$tmp/local2")" = "$(csv "$tmp/slurm2")" ] || fail "after the requeue, Slurm's results differ from --jobs 2's"
echo "test-slurm: task $1_0, requeued mid-run, resumed from its checkpoint; the results still equal --jobs 2's"
