#!/bin/sh
# The installed headers: qkv.h, qkv_app.h and every header they include, transitively (paths
# under src/, one per line). A public header that included an internal one would drag it in;
# scripts/check-exports.sh fails if any of these declares a QKV_INTERNAL function.
set -eu
cd "$(dirname "$0")/../src"
todo="qkv.h qkv_app.h" seen=""
while [ -n "$todo" ]; do
    set -- $todo; h=$1; shift; todo="$*"
    case " $seen " in *" $h "*) continue ;; esac
    seen="$seen $h"
    for inc in $(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$h"); do todo="$todo $inc"; done
done
for h in $seen; do echo "src/$h"; done | sort
