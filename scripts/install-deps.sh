#!/bin/sh
# Install qkv's build dependencies from Debian when any is missing.
# Called by `make` and `make test`; safe to run by hand. Exits 0 when all are present.
#   QKV_EXTRA_PKGS="clang valgrind" scripts/install-deps.sh   also checks/installs those
# (the Makefile asks for more this way: libxsmm-dev with GEMM=libxsmm, BLIS and libxsmm for
# make bench-gemm, OpenMPI with MPI=1, clang for make fuzz)
set -eu

# pkg-config module -> Debian package that provides it
PC_MODULES="openblas:libopenblas-dev libcjson:libcjson-dev check:check"
missing=""

if ! command -v pkg-config >/dev/null 2>&1; then
    missing="pkg-config"
fi
for pair in $PC_MODULES; do
    mod=${pair%%:*}; pkg=${pair#*:}
    if ! command -v pkg-config >/dev/null 2>&1 || ! pkg-config --exists "$mod" 2>/dev/null; then
        missing="$missing $pkg"
    fi
done
for pkg in ${QKV_EXTRA_PKGS:-}; do
    if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
        missing="$missing $pkg"
    fi
done

[ -z "$missing" ] && exit 0

cmd="apt-get install -y --no-install-recommends$missing"
if [ "$(id -u)" -ne 0 ]; then
    echo "qkv: missing build dependencies:$missing" >&2
    echo "qkv: install them with: sudo apt-get update && sudo $cmd" >&2
    exit 1
fi
echo "qkv: installing missing build dependencies:$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >&2
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >&2
