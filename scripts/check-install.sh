#!/bin/sh
# Install into a scratch DESTDIR, then build every program in examples/ against the installed
# headers and qkv.pc only (no -Isrc), linked once against the shared library (which must export
# everything they use) and once statically, and run them. Also checks that exactly the library's
# headers were installed (the application layer, qkv_app.h and libqkv-app.a, is not) and that
# libqkv.so is the library alone and exports only its documented API.
# It checks the default build (build/: on x86-64, libxsmm for the small products and OpenBLAS);
# GEMM=openblas scripts/check-install.sh checks the OpenBLAS-only build (build-openblas/) instead.
set -eu
cd "$(dirname "$0")/.."
dest=$(mktemp -d)
trap 'rm -rf "$dest"' EXIT
make -s install DESTDIR="$dest" PREFIX=/opt/qkv >/dev/null
root="$dest/opt/qkv"
pc="$root/lib/pkgconfig"
# the .pc names the final prefix; point the flags at the staged copy
flags() { PKG_CONFIG_PATH="$pc" pkg-config "$@" qkv | sed "s|/opt/qkv|$root|g"; }
test -x "$root/bin/qkv" && test -f "$root/lib/libqkv.so.0" && test -f "$root/lib/libqkv.a"
if [ -e "$root/lib/libqkv-app.a" ] || [ -e "$root/include/qkv/qkv_app.h" ]; then
    echo "check-install: the application layer (libqkv-app.a, qkv_app.h) was installed" >&2; exit 1
fi
# the installed headers are exactly the public ones
(cd "$root/include/qkv" && find . -name '*.h' | sed 's|^\./|src/|' | sort) > "$dest/installed"
scripts/public-headers.sh lib > "$dest/public"
if ! cmp -s "$dest/installed" "$dest/public"; then
    echo "check-install: installed headers differ from scripts/public-headers.sh:" >&2
    diff "$dest/public" "$dest/installed" >&2 || true
    exit 1
fi
scripts/check-exports.sh "build$([ "${GEMM:-}" = openblas ] && echo -openblas)"
for src in examples/*.c; do
    name=$(basename "$src" .c)
    # shellcheck disable=SC2046
    gcc -std=c11 -D_POSIX_C_SOURCE=200809L "$src" -o "$dest/$name" $(flags --cflags --libs) -lm \
        -Wl,-rpath,"$root/lib"
    # shellcheck disable=SC2046
    gcc -std=c11 -D_POSIX_C_SOURCE=200809L "$src" -o "$dest/$name-static" $(flags --cflags) \
        "$root/lib/libqkv.a" $(flags --libs --static | sed 's/-lqkv//') -lm
    OPENBLAS_NUM_THREADS=1 "$dest/$name" >/dev/null
    OPENBLAS_NUM_THREADS=1 "$dest/$name-static" >/dev/null
done
ldd "$dest/xor_mlp" | grep -q "$root/lib/libqkv.so" || { echo "check-install: xor_mlp is not linked to the installed libqkv.so" >&2; exit 1; }
echo "install check: ok (the library's headers only, libqkv.a/.so, qkv.pc, bin/qkv; examples/ built against the installed headers, shared and static, and run)"
