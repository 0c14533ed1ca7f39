#!/bin/sh
# Reading the Makefile installs nothing: `make -n` of the targets that build (and of those that
# need more packages: fuzz, bench-gemm, valgrind, MPI=1, GEMM=libxsmm), `make help` and
# `make -n clean` run no package manager. They run on a machine made to look bare and root:
# apt-get, apt, aptitude, dpkg, dpkg-query and sudo are stubs that record each call, pkg-config
# finds nothing, and `id -u` says 0 (so a Makefile that installed would try). Any recorded call
# fails the check, with the goal and the call. Run by make test.
#   scripts/check-make-dry.sh [DIR]   the Makefile of DIR (default: this tree)
set -eu
dir=$(cd "${1:-$(dirname "$0")/..}" && pwd)
stubs=$(mktemp -d)
trap 'rm -rf "$stubs"' EXIT
log=$stubs/calls
: >"$log"
for tool in apt-get apt aptitude dpkg dpkg-query sudo; do
    printf '#!/bin/sh\necho "%s $*" >>"%s"\nexit 1\n' "$tool" "$log" >"$stubs/$tool"
done
printf '#!/bin/sh\nexit 1\n' >"$stubs/pkg-config"
printf '#!/bin/sh\nif [ "$*" = -u ]; then echo 0; else exec /usr/bin/id "$@"; fi\n' >"$stubs/id"
chmod +x "$stubs"/*
fails=0
# check ARGS...: make ARGS in DIR, with the stubs first on PATH and no make state of the caller
# (make test runs this under make: its MAKEFLAGS would pass -j, -s and its variables on)
check() {
    : >"$log"
    set +e
    env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u MAKEOVERRIDES -u DEPS_DONE PATH="$stubs:$PATH" \
        make -C "$dir" "$@" >"$stubs/out" 2>&1
    rc=$?
    set -e
    if [ -s "$log" ]; then
        echo "check-make-dry: make $* ran a package manager:"; sed 's/^/    /' "$log"
        fails=$((fails + 1))
    elif [ $rc -ne 0 ]; then
        echo "check-make-dry: make $* failed (exit $rc):"; tail -n 20 "$stubs/out" | sed 's/^/    /'
        fails=$((fails + 1))
    fi
}
# the stubs are what an install would call: `make deps` itself must reach them
: >"$log"
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u MAKEOVERRIDES -u DEPS_DONE PATH="$stubs:$PATH" \
    make -C "$dir" deps >/dev/null 2>&1 || true
[ -s "$log" ] || { echo "check-make-dry: make deps called none of the stubs: this check would see nothing"; exit 1; }
check -n
check help
check -n clean
for goal in test demo asan examples install valgrind bench bench-gemm fuzz study; do
    check -n "$goal"
done
check -n MPI=1
check -n GEMM=libxsmm
check -n GEMM=openblas test
[ $fails -eq 0 ] || { echo "check-make-dry: $fails of the make runs above ran a package manager or failed"; exit 1; }
echo "check-make-dry: make -n (the default goal, test, demo, asan, examples, install, valgrind, bench, bench-gemm, fuzz, study, MPI=1, GEMM=libxsmm and openblas), make help and make -n clean ran no package manager"
