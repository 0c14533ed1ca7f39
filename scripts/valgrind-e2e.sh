#!/bin/sh
# The end-to-end commands under valgrind memcheck: zero errors, no definite or indirect
# leaks (error paths included). Small sizes: memcheck is ~50x slower than native.
#   scripts/valgrind-e2e.sh [BUILD_DIR]
set -eu
build=${1:-build}
qkv="$(cd "$build" && pwd)/qkv"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
vg="valgrind --quiet --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect
    --show-leak-kinds=definite,indirect --trace-children=yes --child-silent-after-fork=yes"
fails=0
# run EXPECTED_STATUS CMD...: the command's own status must be EXPECTED (99 = valgrind found errors)
check() {
    want=$1; shift
    set +e
    # shellcheck disable=SC2086
    $vg "$@" >"$tmp/out" 2>"$tmp/err"
    got=$?
    set -e
    if [ "$got" != "$want" ]; then
        # the first lines: valgrind's first error is the one that explains the others
        echo "valgrind-e2e: FAIL (exit $got, expected $want): $*"; head -n 60 "$tmp/err"; fails=$((fails + 1))
    else
        echo "valgrind-e2e: ok   $*"
    fi
}
cat > "$tmp/cfg.json" <<'J'
{"model": {"d_model": 16, "heads": 2, "layers": 2, "d_ff": 32},
 "task": {"name": "recall", "pairs": 3, "keys": 8, "values": 8},
 "train": {"steps": 20, "batch": 8, "eval_every": 10, "eval_examples": 16, "log_every": 5}}
J
cat > "$tmp/abl.json" <<'J'
{"base": "cfg.json", "variants": [{"name": "full", "set": []},
 {"name": "qk_tied", "set": ["model.attention.qkv=qk_tied", "model.attention.self_mask=true"]}],
 "seeds": [0], "threshold": 0.5}
J
cat > "$tmp/text.json" <<'J'
{"model": {"d_model": 16, "heads": 2, "layers": 1, "d_ff": 32},
 "task": {"name": "text", "path": "/usr/share/common-licenses/GPL-3", "seq_len": 16},
 "train": {"steps": 5, "batch": 8, "eval_examples": 16}}
J
printf '{"input": [1, 2, 3], "target": [2, 3, 4]}\n{"input": [4, 5], "target": [5, -100], "mask": [1, 0]}\n' > "$tmp/d.jsonl"
check 0 "$qkv" --help
check 0 "$qkv" params "$tmp/cfg.json" --set model.attention.qkv=head_shared
check 0 "$qkv" gradcheck "$tmp/cfg.json" --set model.attention.rel_pos_bias=true --sample 4 --seq 4
check 0 "$qkv" train "$tmp/cfg.json" --out "$tmp/run" --threads 2 --quiet
check 1 "$qkv" train "$tmp/cfg.json" --out "$tmp/part" --threads 1 --quiet --stop-after 7
check 0 "$qkv" train --resume "$tmp/part" --threads 1 --quiet
check 0 "$qkv" eval "$tmp/run/config.json" --checkpoint "$tmp/run/model.safetensors"
check 0 "$qkv" eval "$tmp/run/config.json" --checkpoint "$tmp/run/model.safetensors" --data "$tmp/d.jsonl"
check 0 "$qkv" ablate "$tmp/abl.json" --out "$tmp/abl" --jobs 2 --quiet
check 0 "$qkv" sample "$tmp/run/config.json" --checkpoint "$tmp/run/model.safetensors" --prompt "1 9 2" --tokens 4
check 0 "$qkv" train "$tmp/text.json" --out "$tmp/text" --threads 1 --quiet
check 0 "$qkv" sample "$tmp/text/config.json" --checkpoint "$tmp/text/model.safetensors" --tokens 20 --top-k 5
# error paths must not leak either
check 2 "$qkv" train "$tmp/cfg.json" --set model.heads=3
check 2 "$qkv" train "$tmp/cfg.json" --set model.attention.qvk=full
head -c 100 "$tmp/run/model.safetensors" > "$tmp/trunc.safetensors"
check 1 "$qkv" eval "$tmp/run/config.json" --checkpoint "$tmp/trunc.safetensors"
check 1 "$qkv" eval "$tmp/cfg.json" --checkpoint "$tmp/run/model.safetensors" --set model.d_model=32
check 2 "$qkv" train "$tmp/nope.json"
check 2 "$qkv" sample "$tmp/run/config.json" --checkpoint "$tmp/run/model.safetensors" --prompt "1 99"
check 1 "$qkv" sample "$tmp/run/config.json" --checkpoint "$tmp/run/model.safetensors" --prompt 1 --set model.attention.causal=false
if [ "$fails" -ne 0 ]; then echo "valgrind-e2e: $fails failed"; exit 1; fi
echo "valgrind-e2e: all passed (memcheck: 0 errors, no definite or indirect leaks)"
