#!/bin/sh
# libqkv.so exports exactly the documented API: the functions and variables declared QKV_API in
# the installed headers (scripts/public-headers.sh). Fails, naming the symbols, when an internal
# name is exported or a documented one is missing, or when an installed header declares
# anything QKV_INTERNAL.   usage: scripts/check-exports.sh [BUILD_DIR]
set -eu
cd "$(dirname "$0")/.."
lib=${1:-build}/libqkv.so
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
headers=$(scripts/public-headers.sh)
# the name declared on each QKV_API line: the identifier before the first '(' or '['
# shellcheck disable=SC2086
sed -n 's/^QKV_API [^([]*[^A-Za-z0-9_([]\([A-Za-z_][A-Za-z0-9_]*\) *[([].*/\1/p' $headers | sort -u > "$tmp/declared"
# AddressSanitizer adds one '__odr_asan.NAME' indicator beside each exported variable (its
# one-definition-rule check): the sanitizer's names, not ours, so they are left out here
nm -D --defined-only "$lib" | awk '$2 ~ /^[TDRBV]$/ && $3 !~ /^__odr_asan[.]/ {print $3}' \
    | sort -u > "$tmp/exported"
status=0
# shellcheck disable=SC2086
if grep -n '^QKV_INTERNAL' $headers; then
    echo "check-exports: the installed headers above declare internal functions" >&2; status=1
fi
extra=$(comm -13 "$tmp/declared" "$tmp/exported")
missing=$(comm -23 "$tmp/declared" "$tmp/exported")
if [ -n "$extra" ]; then
    echo "check-exports: $lib exports names no installed header declares QKV_API:" >&2
    echo "$extra" | sed 's/^/  /' >&2; status=1
fi
if [ -n "$missing" ]; then
    echo "check-exports: declared QKV_API but not exported by $lib:" >&2
    echo "$missing" | sed 's/^/  /' >&2; status=1
fi
[ $status -eq 0 ] && echo "check-exports: $lib exports the $(wc -l < "$tmp/exported") documented functions and variables, nothing else"
exit $status
