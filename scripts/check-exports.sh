#!/bin/sh
# libqkv.so is the library alone and exports exactly its documented API: the functions and
# variables declared QKV_API in the library's headers (scripts/public-headers.sh lib). Fails,
# naming them, when
#   - an internal name is exported, or a documented one is missing;
#   - anything of the application layer (libqkv-app.a: configs, tasks, runs, ablations,
#     reports) is in libqkv.so;
#   - a library header declares anything QKV_INTERNAL or QKV_APP_API, or an application header
#     (what qkv_app.h adds) declares anything QKV_API or QKV_INTERNAL.
#   usage: scripts/check-exports.sh [BUILD_DIR]
set -eu
cd "$(dirname "$0")/.."
build=${1:-build}
lib=$build/libqkv.so app=$build/libqkv-app.a
for f in "$lib" "$app"; do
    [ -f "$f" ] || { echo "check-exports: $f is missing (build it first: make)" >&2; exit 1; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
lib_headers=$(scripts/public-headers.sh lib)
app_headers=$(scripts/public-headers.sh app)
# the name declared on each QKV_API line: the identifier before the first '(' or '['
# shellcheck disable=SC2086
sed -n 's/^QKV_API [^([]*[^A-Za-z0-9_([]\([A-Za-z_][A-Za-z0-9_]*\) *[([].*/\1/p' $lib_headers | sort -u > "$tmp/declared"
# AddressSanitizer adds one '__odr_asan.NAME' indicator beside each exported variable (its
# one-definition-rule check): the sanitizer's names, not ours, so they are left out here
nm -D --defined-only "$lib" | awk '$2 ~ /^[TDRBV]$/ && $3 !~ /^__odr_asan[.]/ {print $3}' \
    | sort -u > "$tmp/exported"
nm --defined-only "$app" | awk '$2 ~ /^[TDRBV]$/ {print $3}' | sort -u > "$tmp/app"
status=0
# shellcheck disable=SC2086
if grep -n '^QKV_INTERNAL\|^QKV_APP_API' $lib_headers; then
    echo "check-exports: the library's headers above declare internal or application functions" >&2; status=1
fi
# shellcheck disable=SC2086
if [ -n "$app_headers" ] && grep -n '^QKV_API\|^QKV_INTERNAL' $app_headers; then
    echo "check-exports: the application's headers above declare library (QKV_API) or internal functions" >&2
    status=1
fi
# the naming rule (src/qkv_api.h): internal names qkv__NAME, the others qkv_NAME
# shellcheck disable=SC2046
bad_names=$(grep -n '^QKV_INTERNAL' $(find src -name '*.h') | grep -v 'QKV_K(' \
    | grep -v '^[^:]*:[0-9]*:QKV_INTERNAL [^(\[]*[^A-Za-z0-9_]qkv__[A-Za-z0-9_]* *[(\[;]' || true)
bad_public=$(grep -n '^QKV_API\|^QKV_APP_API' $(find src -name '*.h') | grep '[^A-Za-z0-9_]qkv__[A-Za-z0-9_]* *[(\[]' || true)
if [ -n "$bad_names" ] || [ -n "$bad_public" ]; then
    echo "check-exports: internal declarations are named qkv__NAME, the others qkv_NAME (src/qkv_api.h):" >&2
    printf '%s\n%s\n' "$bad_names" "$bad_public" | sed '/^$/d; s/^/  /' >&2; status=1
fi
# KANN's style: every declaration of the library's interface has its one-line math or contract
# comment, just above it (consecutive declarations may share one) or on its line
# shellcheck disable=SC2086
undocumented=$(for h in $lib_headers; do
    awk -v f="$h" '/^QKV_API/ { if (prev !~ /\*\/[ \t]*$/ && prev !~ /^QKV_API/ && $0 !~ /\/\*/) print f ": " $0 }
                   { if ($0 !~ /^[ \t]*$/) prev = $0 }' "$h"; done)
if [ -n "$undocumented" ]; then
    echo "check-exports: declarations of the library without their comment:" >&2
    echo "$undocumented" | sed 's/^/  /' >&2; status=1
fi
in_both=$(comm -12 "$tmp/app" "$tmp/exported")
if [ -n "$in_both" ]; then
    echo "check-exports: $lib exports names of the application layer ($app):" >&2
    echo "$in_both" | sed 's/^/  /' >&2; status=1
fi
extra=$(comm -13 "$tmp/declared" "$tmp/exported")
missing=$(comm -23 "$tmp/declared" "$tmp/exported")
if [ -n "$extra" ]; then
    echo "check-exports: $lib exports names no library header declares QKV_API:" >&2
    echo "$extra" | sed 's/^/  /' >&2; status=1
fi
if [ -n "$missing" ]; then
    echo "check-exports: declared QKV_API but not exported by $lib:" >&2
    echo "$missing" | sed 's/^/  /' >&2; status=1
fi
[ $status -eq 0 ] && echo "check-exports: $lib exports the $(wc -l < "$tmp/exported") documented functions and variables of the library, nothing else (none of $app's $(wc -l < "$tmp/app"))"
exit $status
