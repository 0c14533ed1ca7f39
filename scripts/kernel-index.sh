#!/bin/sh
# The kernels' index: src/tensor/k_*.c define each kernel once as K(name), compiled twice into
# qkv__k_<name>_f32 and qkv__k_<name>_f64 (src/tensor/kernel_prelude.h), so their full names
# appear nowhere in the source. src/tensor/KERNELS is a tags file (ctags format, sorted) naming
# both functions of every K(name) definition with its file (beside it) and its line's text; an editor that
# reads tags files (vim :set tags+=src/tensor/KERNELS, emacs etags' ctags mode) jumps to it, and
# `grep qkv__k_NAME_f32 src/tensor/KERNELS` says where it is.
#   scripts/kernel-index.sh          write src/tensor/KERNELS
#   scripts/kernel-index.sh --check  fail (naming the difference) when it is not what the source makes
set -eu
cd "$(dirname "$0")/.."
out=src/tensor/KERNELS
make_index() {
    printf '!_TAG_FILE_FORMAT\t2\t/extended format/\n'
    printf '!_TAG_FILE_SORTED\t1\t/0=unsorted, 1=sorted, 2=foldcase/\n'
    for f in src/tensor/k_*.c; do
        # a definition: a line that starts with its return type and names K(name)(
        grep -E '^[a-z].*\bK\([a-z0-9_]+\)\(' "$f" | while IFS= read -r line; do
            name=$(printf '%s\n' "$line" | sed -E 's/.*\bK\(([a-z0-9_]+)\)\(.*/\1/')
            # a tag's search pattern is read without magic: only \ and / are escaped
            pat=$(printf '%s\n' "$line" | sed -e 's/[\\/]/\\&/g')
            for t in f32 f64; do
                printf 'qkv__k_%s_%s\t%s\t/^%s$/;"\tf\n' "$name" "$t" "${f#src/tensor/}" "$pat"
            done
        done
    done | LC_ALL=C sort
}
if [ "${1:-}" = --check ]; then
    if ! make_index | cmp -s - "$out"; then
        make_index | diff "$out" - >&2 || true
        echo "kernel-index: $out is not what src/tensor/k_*.c define: run scripts/kernel-index.sh" >&2
        exit 1
    fi
    echo "kernel-index: $out names the $(grep -c '^qkv__k_' "$out") kernel functions of src/tensor/k_*.c"
else
    make_index > "$out"
fi
