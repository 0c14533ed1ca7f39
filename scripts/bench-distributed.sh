#!/bin/sh
# The measurements of docs/distributed.md, printed as its tables:
#   - a sweep (recall, 4 variants x 2 seeds, 300 steps) with --jobs 2 against two --shard workers
#     as a Slurm array on the local one-node Slurm (scripts/slurm-local.sh): runs per minute;
#   - one training run (configs/recall.json, 400 steps): steps per second without MPI (1 and 2
#     threads) and with 1 and 2 OpenMPI processes of one thread each.
set -eu
cd "$(dirname "$0")/.."
make -s >/dev/null
make -s MPI=1 >/dev/null
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
started=no
if ! scripts/slurm-local.sh status >/dev/null 2>&1; then scripts/slurm-local.sh start >/dev/null; started=yes; fi
eval "$(scripts/slurm-local.sh env)"
tmp=$(mktemp -d /tmp/qkv-bench-dist.XXXXXX)
trap '[ $started = no ] || scripts/slurm-local.sh stop >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
now() { date +%s.%N; }
cat > "$tmp/abl.json" <<JSON
{"base": "$PWD/configs/recall.json", "set": ["train.steps=300", "train.eval_every=100", "train.eval_examples=300"],
 "max_steps": 300,
 "variants": [{"name": "full"}, {"name": "shared", "set": ["model.attention.qkv=shared"]},
              {"name": "kv_tied", "set": ["model.attention.qkv=kv_tied"]},
              {"name": "head_shared", "set": ["model.attention.qkv=head_shared"]}],
 "seeds": [0, 1]}
JSON
echo "| sweep: 8 runs of 300 steps | wall time | runs per minute |"
echo "|---|---:|---:|"
t=$(now); build/qkv ablate "$tmp/abl.json" --out "$tmp/jobs" --jobs 2 --quiet >/dev/null; w=$(awk -v a="$(now)" -v b="$t" 'BEGIN { print a - b }')
printf '| `qkv ablate --jobs 2` | %.1f s | %.1f |\n' "$w" "$(awk -v w="$w" 'BEGIN { print 8 * 60 / w }')"
t=$(now)
ids=$(build/qkv ablate "$tmp/abl.json" --out "$tmp/slurm" --slurm --tasks 2 --parallel 2 |
      sed -n 's/.*array job \([0-9]*\) .* report job \([0-9]*\) .*/\1,\2/p')
while [ -n "$(squeue -h -j "$ids")" ]; do sleep 0.2; done
w=$(awk -v a="$(now)" -v b="$t" 'BEGIN { print a - b }')
printf '| `qkv ablate --slurm --tasks 2` (two --shard workers and the report job, local Slurm) | %.1f s | %.1f |\n' \
    "$w" "$(awk -v w="$w" 'BEGIN { print 8 * 60 / w }')"
echo
echo "| training: configs/recall.json, 400 steps (8 micro-batches) | seconds | steps per second |"
echo "|---|---:|---:|"
one() {
    label=$1; shift
    "$@" --set train.steps=400 --set train.eval_every=0 --set train.eval_examples=32 --set train.val_examples=32 \
        --quiet > "$tmp/out.json"
    s=$(sed 's/.*"seconds":\([0-9.]*\).*/\1/' "$tmp/out.json")
    printf '| %s | %.2f | %.1f |\n' "$label" "$s" "$(awk -v s="$s" 'BEGIN { print 400 / s }')"
}
one "without MPI, 1 thread" build/qkv train configs/recall.json --out "$tmp/t1" --threads 1
one "without MPI, 2 threads" build/qkv train configs/recall.json --out "$tmp/t2" --threads 2
one "mpirun -np 1, 1 thread" mpirun -np 1 build-mpi/qkv train configs/recall.json --out "$tmp/p1" --threads 1
one "mpirun -np 2, 1 thread each" mpirun -np 2 build-mpi/qkv train configs/recall.json --out "$tmp/p2" --threads 1
for d in t2 p1 p2; do cmp -s "$tmp/t1/model.safetensors" "$tmp/$d/model.safetensors" || echo "(weights of $d differ!)"; done
echo
echo "(all four trainings ended with identical weights; $(date -u +%Y-%m-%d), $(nproc) cores)"
