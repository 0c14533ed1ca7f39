#!/bin/sh
# The headers of each floor (paths under src/, one per line), every header they include,
# transitively. `lib`: the library's, qkv.h and what it includes (what `make install` installs);
# `app`: what qkv_app.h adds to them (the application layer, not installed); neither: both.
# A public header that included an internal one would drag it in; scripts/check-exports.sh fails
# if any library header declares a QKV_INTERNAL function.
#   usage: scripts/public-headers.sh [lib|app]
set -eu
cd "$(dirname "$0")/../src"
closure() {
    todo="$*" seen=""
    while [ -n "$todo" ]; do
        set -- $todo; h=$1; shift; todo="$*"
        case " $seen " in *" $h "*) continue ;; esac
        seen="$seen $h"
        for inc in $(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$h"); do todo="$todo $inc"; done
    done
    for h in $seen; do echo "src/$h"; done | sort
}
case "${1:-all}" in
lib) closure qkv.h ;;
app) t=$(mktemp); trap 'rm -f "$t"' EXIT
     closure qkv.h > "$t"; closure qkv_app.h | comm -13 "$t" - ;;
*) closure qkv.h qkv_app.h ;;
esac
