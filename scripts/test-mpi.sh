#!/bin/sh
# Data-parallel training on OpenMPI, tested for real (run by .ci/run; docs/distributed.md):
#   - `make MPI=1` builds (installing Debian's OpenMPI when missing, as root);
#   - the weights after training are bit-identical for 1, 2 and 4 processes (4 oversubscribed
#     on this machine) and for the build without MPI, and every process holds the same
#     weights (the parameter checksum each reports);
#   - an --out that holds a run, and a train.shards the process count does not divide, are
#     refused with exit 2 (a usage error, as with one process) and the first process's line;
#   - a run interrupted by SIGTERM to one process stops on every process at the same step,
#     with one checkpoint, and resumes with another process count to the same weights.
# Both builds are the default's (build/ and build-mpi/: on x86-64, libxsmm and OpenBLAS);
# GEMM=openblas scripts/test-mpi.sh tests the OpenBLAS-only ones (build-openblas/, build-mpi-openblas/).
set -eu
cd "$(dirname "$0")/.."
make -s >/dev/null
make -s MPI=1 >/dev/null
# root and container settings OpenMPI needs here (facts: as root, more ranks than cores, no
# cross-memory attach in containers)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
gemm=$(if [ "${GEMM:-}" = openblas ]; then echo -openblas; fi)
serial=$PWD/build$gemm/qkv mpi=$PWD/build-mpi$gemm/qkv
cat > "$tmp/r.json" <<'JSON'
{"model": {"d_model": 32, "heads": 2, "layers": 2, "d_ff": 64},
 "task": {"name": "recall", "pairs": 4, "keys": 16, "values": 16},
 "train": {"steps": 120, "batch": 32, "shards": 8, "eval_every": 40, "eval_examples": 64},
 "optim": {"lr": 0.003, "clip": 1}}
JSON
fail() { echo "test-mpi: $*" >&2; exit 1; }
same() { cmp -s "$1" "$2" || fail "$1 and $2 differ"; }

"$serial" train "$tmp/r.json" --out "$tmp/serial" --threads 1 --quiet >/dev/null
for p in 1 2 4; do
    mpirun -np $p "$mpi" train "$tmp/r.json" --out "$tmp/p$p" --threads 1 --quiet > "$tmp/p$p.out"
    same "$tmp/serial/model.safetensors" "$tmp/p$p/model.safetensors"
done
for p in 2 4; do
    grep -q "\"processes\":$p,\"param_checksum\":\"" "$tmp/p$p.out" || fail "no checksum line from $p processes"
done
c2=$(sed 's/.*"param_checksum":"\([0-9a-f]*\)".*/\1/' "$tmp/p2.out")
c4=$(sed 's/.*"param_checksum":"\([0-9a-f]*\)".*/\1/' "$tmp/p4.out")
[ "$c2" = "$c4" ] || fail "checksums differ: $c2 (2 processes) and $c4 (4)"
echo "test-mpi: 1, 2 and 4 processes and the build without MPI train identical weights (checksum $c2)"

# refused before training with exit 2 (a usage error, as with one process) and one line, the
# first process's: an --out that holds a run, a train.shards that the process count does not divide
rc=0
mpirun -np 2 "$mpi" train "$tmp/r.json" --out "$tmp/p2" --threads 1 --quiet >/dev/null 2>"$tmp/held.err" || rc=$?
[ $rc -eq 2 ] || fail "a second run into $tmp/p2 on 2 processes exited $rc, not 2"
[ "$(grep -c "p2 already holds a run" "$tmp/held.err")" -eq 1 ] || fail "not one 'already holds a run' line from 2 processes"
! grep -q "another process" "$tmp/held.err" || fail "a second line beside the first process's"
rc=0
mpirun -np 3 "$mpi" train "$tmp/r.json" --out "$tmp/p3" --threads 1 --quiet >/dev/null 2>"$tmp/shards.err" || rc=$?
[ $rc -eq 2 ] || fail "train.shards 8 on 3 processes exited $rc, not 2"
[ "$(grep -c "cannot be shared by 3 processes" "$tmp/shards.err")" -eq 1 ] || fail "not one 'cannot be shared' line from 3 processes"
[ ! -e "$tmp/p3" ] || fail "the refused run on 3 processes made its --out"
echo "test-mpi: an --out that holds a run, and train.shards 8 on 3 processes, are refused with exit 2"

# SIGTERM to one process of two: every process stops at one step, one checkpoint; then resume
# with four processes, and with one
sed 's/"steps": 120/"steps": 4000/' "$tmp/r.json" > "$tmp/long.json"
"$serial" train "$tmp/long.json" --out "$tmp/whole" --threads 1 --quiet >/dev/null
mpirun -np 2 "$mpi" train "$tmp/long.json" --out "$tmp/cut" --threads 1 --quiet > "$tmp/cut.out" 2> "$tmp/cut.err" &
runner=$!
i=0
while [ ! -s "$tmp/cut/metrics.jsonl" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
sleep 1
victim=$(pgrep -f "^$mpi train" | tail -n 1)
[ -n "$victim" ] || fail "no process to signal"
kill -TERM "$victim"
if wait $runner; then fail "the interrupted run exited 0"; fi
[ -f "$tmp/cut/checkpoint.safetensors" ] && [ ! -f "$tmp/cut/summary.json" ] || fail "no checkpoint, or a summary, after SIGTERM"
grep -q "stopped at step" "$tmp/cut.err" || fail "no 'stopped at step' message"
step=$(sed -n 's/.*stopped at step \([0-9]*\) .*/\1/p' "$tmp/cut.err")
[ "$(grep -c 'stopped at step' "$tmp/cut.err")" -eq 1 ] || fail "more than one process reported stopping"
mpirun -np 4 "$mpi" train --resume "$tmp/cut" --threads 1 --quiet >/dev/null
same "$tmp/whole/model.safetensors" "$tmp/cut/model.safetensors"
echo "test-mpi: SIGTERM to one of 2 processes stopped both at step $step with one checkpoint; resumed with 4 processes to the same weights"
