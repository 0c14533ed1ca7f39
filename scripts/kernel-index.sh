#!/bin/sh
# The kernels, read from their definitions: src/tensor/k_*.c define each kernel once as K(name),
# compiled twice into qkv__k_<name>_f32 and qkv__k_<name>_f64 (src/tensor/kernel_prelude.h). A
# definition is a line that starts with its return type and names K(name)(, its parameters running
# on to the line that ends with the { opening its body. From them come
#   - src/tensor/KERNELS, the index: the full names appear nowhere in the source, so this tags file
#     (ctags format, sorted) names both functions of every definition with its file (beside it) and
#     its first line's text; an editor that reads tags files (vim :set tags+=src/tensor/KERNELS,
#     emacs etags' ctags mode) jumps to it, and `grep qkv__k_NAME_f32 src/tensor/KERNELS` says
#     where it is;
#   - the kernels' declarations, which the build writes (tensor/kernels_decl.h in the build's gen/
#     directory, included twice by src/tensor/kernels.h): a kernel is declared by being defined.
#   scripts/kernel-index.sh               write src/tensor/KERNELS
#   scripts/kernel-index.sh --check       fail (naming the difference) when it is not what the source makes
#   scripts/kernel-index.sh --decls FILE  write the declarations to FILE, leaving it untouched when they
#                                         are what it holds (so what includes it is not rebuilt)
set -eu
case "${1:-}" in --decls) decls_out=$(cd "$(dirname "$2")" && pwd)/$(basename "$2") ;; esac
cd "$(dirname "$0")/.."
out=src/tensor/KERNELS
# FILE's definitions: each one's lines up to its body's {, and a line holding only a form feed after it
definitions() {
    awk '/^[a-z].*(^|[^A-Za-z0-9_])K\([a-z0-9_]+\)\(/ {
            sig = $0
            while (sig !~ /\{[ \t]*$/ && (getline more) > 0) sig = sig "\n" more
            print sig; print "\f"
         }' "$1"
}
make_index() {
    printf '!_TAG_FILE_FORMAT\t2\t/extended format/\n'
    printf '!_TAG_FILE_SORTED\t1\t/0=unsorted, 1=sorted, 2=foldcase/\n'
    for f in src/tensor/k_*.c; do
        # a definition's first line
        definitions "$f" | awk 'BEGIN { first = 1 } /^\f$/ { first = 1; next } first { print; first = 0 }' |
        while IFS= read -r line; do
            name=$(printf '%s\n' "$line" | sed -E 's/.*\bK\(([a-z0-9_]+)\)\(.*/\1/')
            # a tag's search pattern is read without magic: only \ and / are escaped
            pat=$(printf '%s\n' "$line" | sed -e 's/[\\/]/\\&/g')
            for t in f32 f64; do
                printf 'qkv__k_%s_%s\t%s\t/^%s$/;"\tf\n' "$name" "$t" "${f#src/tensor/}" "$pat"
            done
        done
    done | LC_ALL=C sort
}
# the prototypes for one scalar type: QKV_KREAL for real, QKV_K(name) for K(name) (src/tensor/kernels.h)
make_decls() {
    printf '/* Written by scripts/kernel-index.sh --decls from the definitions in src/tensor/k_*.c: do not edit.\n'
    printf ' * The kernels'"'"' prototypes for one scalar type, included twice by tensor/kernels.h (no include\n'
    printf ' * guard): QKV_KREAL is the scalar type, QKV_K(name) the suffixed function name. Each kernel'"'"'s\n'
    printf ' * contract is the comment above its definition. */\n'
    for f in src/tensor/k_*.c; do
        printf '\n/* %s */\n' "$f"
        definitions "$f" | sed -E -e '/^\f$/d' -e 's/[ \t]*\{[ \t]*$/;/' -e 's/\breal\b/QKV_KREAL/g' \
            -e 's/(^|[^A-Za-z0-9_])K\(/\1QKV_K(/g' -e 's/^[a-z]/QKV_INTERNAL &/'
    done
}
case "${1:-}" in
--check)
    if ! make_index | cmp -s - "$out"; then
        make_index | diff "$out" - >&2 || true
        echo "kernel-index: $out is not what src/tensor/k_*.c define: run scripts/kernel-index.sh" >&2
        exit 1
    fi
    echo "kernel-index: $out names the $(grep -c '^qkv__k_' "$out") kernel functions of src/tensor/k_*.c" ;;
--decls)
    tmp=$decls_out.tmp.$$
    make_decls > "$tmp"
    if cmp -s "$tmp" "$decls_out"; then rm -f "$tmp"; else mv "$tmp" "$decls_out"; fi ;;
*)
    make_index > "$out" ;;
esac
