#!/bin/sh
# Five reference trainings of 200 steps (the recall config with full, head_shared and qk_tied,
# each with rel_pos_bias, at one thread; the recall config at two threads; the sort config at
# one thread), and the SHA-256 of each run's weights (model.safetensors' data buffer).
#
#   scripts/check-weights.sh                  compare with tests/fixtures/weights-200.txt
#   scripts/check-weights.sh --against REF    build git revision REF in a scratch worktree and
#                                             compare the two builds' weights on this machine
#   scripts/check-weights.sh --print          print this build's hashes only
#
# A restructuring that must not change results (same config, seed and thread count give the
# same bits) is checked with --against. The fixture was recorded on the machine named in its
# first line: OpenBLAS picks its kernels by CPU, so another CPU may give other (equally valid)
# bits; --against needs no fixture.
set -eu
cd "$(dirname "$0")/.."
mode=fixture ref=
case "${1:-}" in
    --against) mode=against; ref=${2:?--against needs a git revision} ;;
    --print) mode=print ;;
    "") ;;
    *) echo "usage: scripts/check-weights.sh [--against REF | --print]" >&2; exit 2 ;;
esac
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"; [ -z "$ref" ] || git worktree remove --force "$scratch/ref" 2>/dev/null || true' EXIT

# sha256 of a safetensors file's data buffer (after the 8-byte length and the header)
tensor_sha() {
    n=$(od -An -t u8 -N 8 "$1" | tr -d ' ')
    tail -c +$((9 + n)) "$1" | sha256sum | cut -c1-64
}

# hashes BIN DIR: train the five runs with BIN (configs from the current directory)
hashes() {
    bin=$1 out=$2
    one() {
        name=$1; shift
        "$bin" train "$@" --set train.steps=200 --out "$out/$name" --quiet >/dev/null
        echo "$name $(tensor_sha "$out/$name/model.safetensors")"
    }
    one recall-full-rel configs/recall.json --set model.attention.rel_pos_bias=true --threads 1
    one recall-head_shared-rel configs/recall.json --set model.attention.qkv=head_shared \
        --set model.attention.rel_pos_bias=true --threads 1
    one recall-qk_tied-rel configs/recall.json --set model.attention.qkv=qk_tied \
        --set model.attention.rel_pos_bias=true --threads 1
    one recall-2threads configs/recall.json --threads 2
    one sort configs/sort.json --threads 1
}

make -s >/dev/null
hashes "$PWD/build/qkv" "$scratch/new" > "$scratch/new.txt"
case $mode in
print) cat "$scratch/new.txt"; exit 0 ;;
fixture) grep -v '^#' tests/fixtures/weights-200.txt > "$scratch/old.txt"; what="tests/fixtures/weights-200.txt ($(head -n 1 tests/fixtures/weights-200.txt | sed 's/^# //'))" ;;
against)
    git worktree add -q --detach "$scratch/ref" "$ref"
    make -s -C "$scratch/ref" >/dev/null
    hashes "$scratch/ref/build/qkv" "$scratch/old" > "$scratch/old.txt"
    what="a build of $ref" ;;
esac
if diff "$scratch/old.txt" "$scratch/new.txt"; then
    echo "check-weights: the five trainings give weights identical to $what"
else
    echo "check-weights: weights differ from $what (lines above: < expected, > this build)" >&2
    exit 1
fi
