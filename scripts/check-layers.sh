#!/bin/sh
# Each layer of src/ uses only itself and the layers before it in this order (the README's
# layout); a file's #include "dir/..." naming a later layer fails, with the file and line. And
# the layering of errors: the qkv command's exit statuses come from cli/common.c alone.
set -eu
cd "$(dirname "$0")/../src"
ORDER="tensor io autograd nn optim app tasks config train ablate report cli"
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
# The qkv command's exit status follows from an error's code in one place: cli/common.c maps
# the code (qkv__cli_exit_status, qkv__cli_exit). No other file of cli names an exit status
# (QKV_EXIT_...) or ends the process itself (exit, _exit, abort)
for f in cli/*.c cli/*.h; do
    [ "$f" = cli/common.c ] && continue
    grep -n 'QKV_EXIT_\|\(^\|[^a-z_.]\)\(_\?exit\|_Exit\|abort\) *(' "$f" | while IFS= read -r line; do
        echo "check-layers: src/$f:${line%%:*}: an exit status chosen outside cli/common.c (return qkv__cli_exit(CMD, &e))" >&2
        exit 1
    done || status=1
done
[ $status -eq 0 ] && echo "check-layers: every layer uses only the ones below it ($ORDER); the report none of $REPORT_NEVER; the command's exit statuses come from cli/common.c"
exit $status
