#!/bin/sh
# Each layer of src/ uses only itself and the layers before it in this order (the README's
# layout); a file's #include "dir/..." naming a later layer fails, with the file and line.
set -eu
cd "$(dirname "$0")/../src"
ORDER="tensor io autograd nn optim tasks train config ablate cli"
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
[ $status -eq 0 ] && echo "check-layers: every layer uses only the ones below it ($ORDER)"
exit $status
