#!/bin/sh
# Each layer of src/ uses only itself and the layers before it in this order (the README's
# layout); a file's #include "dir/..." naming a later layer fails, with the file and line.
set -eu
cd "$(dirname "$0")/../src"
ORDER="tensor io autograd nn optim app tasks train config ablate report cli"
rank() { i=0; for l in $ORDER; do [ "$l" = "$1" ] && { echo $i; return; }; i=$((i + 1)); done; echo 99; }
status=0
for dir in $ORDER; do
    r=$(rank "$dir")
    for f in "$dir"/*.c "$dir"/*.h; do
        [ -e "$f" ] || continue
        grep -n '^#include "[a-z]*/' "$f" | while IFS= read -r line; do
            used=$(echo "$line" | sed 's/^[0-9]*:#include "\([a-z]*\)\/.*/\1/')
            if [ "$(rank "$used")" -gt "$r" ]; then
                echo "check-layers: src/$f:${line%%:*}: $dir uses $used, a layer above it ($ORDER)" >&2
                exit 1
            fi
        done || status=1
    done
done
# The report renders what runs recorded and the study aggregated: it never builds a model or
# trains, so nothing it includes, directly or through other headers, is from these layers
REPORT_NEVER="nn autograd tasks train"
includes() { sed -n 's/^#include "\([^"]*\)".*/\1/p' "$1"; } # dir/x.h or a top-level qkv*.h, under src/
closure() { # the headers a file includes, transitively (paths under src/)
    seen="" todo=$(includes "$1")
    while [ -n "$(echo $todo)" ]; do
        next=""
        for h in $todo; do
            case " $seen " in *" $h "*) continue ;; esac
            seen="$seen $h"
            if [ -e "$h" ]; then next="$next $(includes "$h")"; fi
        done
        todo=$next
    done
    echo $seen
}
for f in report/*.c report/*.h; do
    [ -e "$f" ] || continue
    for h in $(closure "$f"); do
        case " $REPORT_NEVER " in *" ${h%%/*} "*)
            echo "check-layers: src/$f includes $h (directly or through a header): the report uses no $REPORT_NEVER" >&2
            status=1 ;;
        esac
    done
done
[ $status -eq 0 ] && echo "check-layers: every layer uses only the ones below it ($ORDER); the report none of $REPORT_NEVER"
exit $status
