#!/bin/sh
# Five reference trainings of 200 steps (the recall config with full, head_shared and qk_tied,
# each with rel_pos_bias, at one thread; the recall config at two threads; the sort config at
# one thread), and the SHA-256 of each run's weights (model.safetensors' data buffer).
#
#   scripts/check-weights.sh                  compare with tests/fixtures/weights-200.txt
#   scripts/check-weights.sh --against REF    build git revision REF in a scratch worktree and
#                                             compare the two builds' weights on this machine
#   scripts/check-weights.sh --print          print this build's hashes, after one line naming the machine and build
#
# A restructuring that must not change results (same config, seed and thread count give the
# same bits) is checked with --against. The fixture was recorded on the machine named in its
# first line: OpenBLAS picks its kernels by CPU (and libxsmm writes its kernels for it), so
# another CPU may give other (equally valid) bits; --against needs no fixture.
#
# The GEMM build changes the last bits of every product, so weights are only compared between
# builds of one GEMM path. The fixture's is named in its first line ("GEMM=libxsmm" or
# "GEMM=openblas"; a fixture that names none was recorded before libxsmm builds existed, with
# OpenBLAS alone), and the fixture is compared with that build (build/ for libxsmm,
# build-openblas/ for OpenBLAS alone; GEMM=... naming the other is refused). --against and
# --print use the default build, or GEMM's (GEMM=openblas scripts/check-weights.sh --print);
# --against refuses a REF whose build has another GEMM path. --print's first line names this
# machine and build as the fixture's first line does: --print > tests/fixtures/weights-200.txt
# records a new fixture.
set -eu
cd "$(dirname "$0")/.."
mode=fixture ref=
fixture=tests/fixtures/weights-200.txt
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

# the GEMM path of a qkv binary, from its --version ("GEMM libxsmm+openblas" now; older builds
# said "GEMM=libxsmm" for libxsmm and nothing for OpenBLAS alone)
gemm_of() { if "$1" --version | head -n 1 | grep -q libxsmm; then echo libxsmm; else echo openblas; fi; }
# the build directory of `make GEMM=$1` (the Makefile's)
dir_of() { if [ "$1" = openblas ]; then echo build-openblas; else echo build; fi; }

if [ "$mode" = fixture ]; then
    want=$(sed -n '1s/.*GEMM=\([a-z]*\).*/\1/p' "$fixture")
    want=${want:-openblas}
    if [ -n "${GEMM:-}" ] && [ "$GEMM" != "$want" ]; then
        echo "check-weights: $fixture was recorded with GEMM=$want, so GEMM=$GEMM cannot be compared with it" \
             "(use --against REF or --print)" >&2
        exit 2
    fi
    make -s GEMM="$want" >/dev/null
    bin=$PWD/$(dir_of "$want")/qkv
else
    make -s >/dev/null # GEMM, when set, is make's too
    bin=$PWD/$(if [ -n "${GEMM:-}" ]; then dir_of "$GEMM"; else echo build; fi)/qkv
fi
gemm=$(gemm_of "$bin")
hashes "$bin" "$scratch/new" > "$scratch/new.txt"
case $mode in
print)
    echo "# recorded on $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1 | sed 's/^$/an unknown CPU/')," \
         "GEMM=$gemm, OpenBLAS $(dpkg-query -W -f='${Version}' libopenblas0 2>/dev/null || echo '?')," \
         "build of $(git rev-parse --short HEAD), $("$bin" --version | sed -n 's/^machine: /machine /p')"
    cat "$scratch/new.txt"; exit 0 ;;
fixture) grep -v '^#' "$fixture" > "$scratch/old.txt"; what="$fixture ($(head -n 1 "$fixture" | sed 's/^# //'))" ;;
against)
    git worktree add -q --detach "$scratch/ref" "$ref"
    # its own build directory: the REF's Makefile may name its builds otherwise
    make -s -C "$scratch/ref" BUILD=build-check-weights GEMM="$gemm" >/dev/null
    refbin=$scratch/ref/build-check-weights/qkv
    if [ "$(gemm_of "$refbin")" != "$gemm" ]; then
        echo "check-weights: a build of $ref is GEMM=$(gemm_of "$refbin"), this one GEMM=$gemm: their weights" \
             "differ in the last bits whatever changed (GEMM=openblas scripts/check-weights.sh --against $ref" \
             "compares the OpenBLAS-only builds)" >&2
        exit 1
    fi
    hashes "$refbin" "$scratch/old" > "$scratch/old.txt"
    what="a build of $ref (GEMM=$gemm)" ;;
esac
if diff "$scratch/old.txt" "$scratch/new.txt"; then
    echo "check-weights: the five trainings give weights identical to $what"
else
    echo "check-weights: weights differ from $what (lines above: < expected, > this build)" >&2
    exit 1
fi
