#!/bin/sh
# Install qkv's build dependencies from Debian when any is missing.
# Run by `make deps` (mk/deps.mk), which every make target that builds runs first; safe to run
# by hand. Exits 0 when all are present.
#   scripts/install-deps.sh [--list] [PACKAGE | CONFIG.json]...
#       also checks/installs these Debian packages, and what a config's data needs: a config
#       (or an ablation config, or its "base" config) with task.corpus "fortunes" needs the
#       fortunes package (/usr/share/games/fortunes), "fortunes-zh" the fortunes-zh package,
#       e.g. scripts/install-deps.sh fortunes;
#       --list prints the packages the arguments need, one per line, and installs nothing
#   QKV_EXTRA_PKGS="clang valgrind" scripts/install-deps.sh   also checks/installs those
#   QKV_OPTIONAL_PKGS="fortunes"   installed when missing and root; otherwise only a note
#       (make test: the tests that need them say they were skipped)
#   QKV_TRY_PKGS="libxsmm-dev"     installed when missing and root, and nothing said when they
#       cannot be (the caller checks what it got and says what that means: the default build
#       on x86-64 uses OpenBLAS alone without libxsmm, with one note)
#   QKV_LOCK_WAIT=S   how long to wait for the package lock another install holds (default 300)
# (mk/deps.mk asks for more this way: libxsmm-dev with GEMM=libxsmm (tried for the default
# build on x86-64), BLIS and libxsmm for make bench-gemm, OpenMPI with MPI=1, clang for make
# fuzz, valgrind for make valgrind)
set -eu

# pkg-config module -> Debian package that provides it
PC_MODULES="openblas:libopenblas-dev libcjson:libcjson-dev liblzma:liblzma-dev check:check sentencepiece:libsentencepiece-dev nettle:nettle-dev expat:libexpat1-dev"
# command -> Debian package that provides it (the text task's tokenizer is C++: sentencepiece)
COMMANDS="g++:g++"
missing=""

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }

# The package lock: on a fresh machine's first boot another install often holds it
# (unattended-upgrades, cloud-init), and apt-get fails at once with "Could not get lock". The
# holder is a process with one of the lock files open (QKV_APT_LOCKS replaces the list, for the
# tests); its pid and command line, or nothing
LOCKS=${QKV_APT_LOCKS:-/var/lib/dpkg/lock-frontend /var/lib/dpkg/lock /var/lib/apt/lists/lock /var/cache/apt/archives/lock}
lock_holder() {
    set -- # find's expression: -lname LOCK -o -lname LOCK ...
    for lock in $LOCKS; do set -- "$@" ${1:+-o} -lname "$lock"; done
    fd=$(find /proc/[0-9]*/fd -maxdepth 1 \( "$@" \) 2>/dev/null | head -n 1)
    [ -n "$fd" ] || return 1
    pid=${fd#/proc/}; pid=${pid%%/*}
    echo "'$(tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | cut -c1-100 | sed 's/ *$//')' (pid $pid)"
}
# wait for the lock, saying so, at most QKV_LOCK_WAIT seconds; then one line naming its holder
# and what to do
wait_for_lock() {
    limit=${QKV_LOCK_WAIT:-300}
    # at most 9 digits: test(1) refuses a number beyond its integers, which would never time out
    case $limit in '' | *[!0-9]* | ??????????*)
        echo "qkv: install-deps: QKV_LOCK_WAIT=$limit: expected whole seconds (at most 9 digits)" >&2; exit 2 ;;
    esac
    holder=$(lock_holder) || return 0
    echo "qkv: another package install holds the package lock: $holder; waiting for it, at most $limit s" \
         "(QKV_LOCK_WAIT=S to change)" >&2
    waited=0
    while holder=$(lock_holder); do
        if [ "$waited" -ge "$limit" ]; then
            echo "qkv: the package lock is still held after $waited s, by $holder; let that install finish (or" \
                 "stop it), then run this again (make deps, or scripts/install-deps.sh)" >&2
            exit 1
        fi
        sleep 1
        waited=$((waited + 1))
    done
    echo "qkv: the package lock is free (after $waited s); installing" >&2
}

# whether a config file asks for the corpus $2 (fortunes, fortunes-zh: each the Debian package of
# that name): "corpus": "$2" in it (a run config, an ablation config's inline base) or a
# --set-style "task.corpus=$2" (an ablation's overrides), or the same in the base config an
# ablation config names
needs_corpus() {
    grep -Eq "\"corpus\"[[:space:]]*:[[:space:]]*\"$2\"|task\\.corpus=(\"|\\\\\")?$2([\"\\\\,]|\$)" "$1" && return 0
    base=$(sed -n 's/.*"base"[[:space:]]*:[[:space:]]*"\([^"]*\)".*/\1/p' "$1" | head -n 1)
    [ -n "$base" ] || return 1
    case $base in /*) ;; *) base="$(dirname "$1")/$base" ;; esac
    [ -f "$base" ] && grep -Eq "\"corpus\"[[:space:]]*:[[:space:]]*\"$2\"" "$base"
}

wanted="${QKV_EXTRA_PKGS:-}"
list=0
for arg in "$@"; do
    case $arg in
    --list) list=1 ;;
    *.json)
        if [ ! -f "$arg" ]; then echo "qkv: install-deps: $arg: no such config file" >&2; exit 2; fi
        for corpus in fortunes fortunes-zh; do
            if needs_corpus "$arg" "$corpus"; then wanted="$wanted $corpus"; fi
        done ;;
    -*) echo "qkv: install-deps: unknown option '$arg' (expected Debian package names or config files)" >&2
        exit 2 ;;
    *) wanted="$wanted $arg" ;;
    esac
done

if [ $list -eq 1 ]; then
    for pkg in $wanted; do echo "$pkg"; done | awk '!seen[$0]++'
    exit 0
fi

if ! command -v pkg-config >/dev/null 2>&1; then
    missing="pkg-config"
fi
for pair in $PC_MODULES; do
    mod=${pair%%:*}; pkg=${pair#*:}
    if ! command -v pkg-config >/dev/null 2>&1 || ! pkg-config --exists "$mod" 2>/dev/null; then
        missing="$missing $pkg"
    fi
done
for pair in $COMMANDS; do
    command -v "${pair%%:*}" >/dev/null 2>&1 || missing="$missing ${pair#*:}"
done
for pkg in $wanted; do
    installed "$pkg" || missing="$missing $pkg"
done
optional=""
for pkg in ${QKV_OPTIONAL_PKGS:-}; do
    installed "$pkg" || optional="$optional $pkg"
done
try=""
for pkg in ${QKV_TRY_PKGS:-}; do
    installed "$pkg" || try="$try $pkg"
done
[ "$(id -u)" -eq 0 ] || try="" # not root: nothing to try, and nothing to say

[ -z "$missing$optional$try" ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
    if [ -n "$optional" ]; then
        echo "qkv: optional packages not installed:$optional (the tests that need them are skipped);" \
             "install them with: sudo apt-get install$optional" >&2
    fi
    [ -z "$missing" ] && exit 0
    echo "qkv: missing build dependencies:$missing" >&2
    echo "qkv: install them with: sudo apt-get update && sudo apt-get install -y --no-install-recommends$missing" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
wait_for_lock
# apt-get itself waits for the lock as long, should another install take it after that check
apt_get() { apt-get -o DPkg::Lock::Timeout="${QKV_LOCK_WAIT:-300}" "$@"; }
if [ -n "$missing" ]; then
    echo "qkv: installing missing packages:$missing" >&2
    apt_get update -qq >&2
    # shellcheck disable=SC2086
    apt_get install -y -qq --no-install-recommends $missing >&2
fi
if [ -n "$optional" ]; then # never fatal: offline, the tests that need them are skipped
    echo "qkv: installing optional packages:$optional" >&2
    # shellcheck disable=SC2086
    { [ -n "$missing" ] || apt_get update -qq; } >&2 && apt_get install -y -qq --no-install-recommends $optional >&2 ||
        echo "qkv: could not install the optional packages$optional (the tests that need them are skipped)" >&2
fi
if [ -n "$try" ]; then # never fatal, and silent when it fails: the caller says what it means
    echo "qkv: installing$try (when it cannot be installed, the build goes on without it)" >&2
    # shellcheck disable=SC2086
    { { [ -n "$missing$optional" ] || apt_get update -qq; } && apt_get install -y -qq --no-install-recommends $try; } \
        >/dev/null 2>&1 || true
fi
exit 0
