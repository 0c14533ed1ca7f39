#!/bin/sh
# Install into a scratch DESTDIR and build a program against the installed qkv.pc.
set -eu
dest=$(mktemp -d)
trap 'rm -rf "$dest"' EXIT
make -s install DESTDIR="$dest" PREFIX=/opt/qkv >/dev/null
pc="$dest/opt/qkv/lib/pkgconfig"
cat > "$dest/use.c" <<'C'
#include <qkv/qkv.h>
#include <stdio.h>
int main(void) { /* d/dx sum(x*x) = 2x */
    int64_t s[1] = {3};
    qkv_tensor *x = qkv_tensor_full(QKV_F32, 1, s, 1.5);
    qkv_ctx *ctx = qkv_ctx_new();
    qkv_tensor_require_grad(x);
    int bad = qkv_backward(ctx, qkv_sum_all(ctx, qkv_mul(ctx, x, x))) || qkv_tensor_grad_get(x, 2) != 3.0;
    qkv_ctx_free(ctx);
    qkv_tensor_free(x);
    return bad;
}
C
# the .pc names the final prefix; point the flags at the staged copy
flags=$(PKG_CONFIG_PATH="$pc" pkg-config --cflags --libs --static qkv | sed "s|/opt/qkv|$dest/opt/qkv|g")
# shellcheck disable=SC2086
gcc -std=c11 "$dest/use.c" -o "$dest/use" $flags -Wl,-rpath,"$dest/opt/qkv/lib"
"$dest/use"
test -x "$dest/opt/qkv/bin/qkv" && test -f "$dest/opt/qkv/lib/libqkv.so.0"
echo "install check: ok (headers, libqkv.a/.so, qkv.pc, bin/qkv under DESTDIR/PREFIX)"
