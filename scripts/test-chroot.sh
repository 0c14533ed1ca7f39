#!/bin/sh
# make test in a fresh Debian 12 (bookworm) root, as a new user's machine would run it: a
# debootstrap minbase system with only gcc, make, libc6-dev, git and ca-certificates, the tree
# copied in, `make test` as root with a clean environment. It proves that the build installs
# what it needs and that no test assumes the host (docs/reliability.md, "Where the tests run").
#   scripts/test-chroot.sh               in a chroot (proc, dev, dev/pts and sys mounted)
#   scripts/test-chroot.sh --container   the same with a container's privileges: the bounding
#                                        set of Docker's default capabilities (no CAP_SYS_ADMIN,
#                                        so no mount or pid namespaces), as `docker run` gives
#   --keep                               leave the root in place afterwards (its path is printed)
#   QKV_CHROOT_CACHE=DIR   where the debootstrap tarball is kept between runs
#                          (default /var/cache/qkv-chroot; built fresh when missing)
#   QKV_MIRROR=URL         the Debian archive (default http://deb.debian.org/debian)
# Needs root (debootstrap, chroot, mount). Exits with make test's status.
set -eu
cd "$(dirname "$0")/.."
src=$(pwd)

container=0
keep=0
for arg in "$@"; do
    case $arg in
    --container) container=1 ;;
    --keep) keep=1 ;;
    *) echo "qkv: test-chroot: unknown option '$arg' (expected --container or --keep)" >&2; exit 2 ;;
    esac
done
if [ "$(id -u)" != 0 ]; then
    echo "qkv: test-chroot: needs root (debootstrap, chroot and mount)" >&2
    exit 2
fi

cache=${QKV_CHROOT_CACHE:-/var/cache/qkv-chroot}
mirror=${QKV_MIRROR:-http://deb.debian.org/debian}
include=gcc,make,libc6-dev,git,ca-certificates
tarball="$cache/bookworm-minbase.tar.gz"

if ! command -v debootstrap >/dev/null 2>&1; then
    echo "== installing debootstrap"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
fi

start=$(date +%s)
mkdir -p "$cache"
if [ ! -s "$tarball" ]; then
    echo "== debootstrap bookworm (minbase, $include) into $tarball"
    # the installed root itself is cached: each run unpacks a copy, untouched by the last run
    work="$cache/work.$$"
    rm -rf "$work" "$tarball.tmp.$$"
    debootstrap --variant=minbase --include="$include" bookworm "$work" "$mirror" >"$cache/debootstrap.log" 2>&1 || {
        echo "qkv: test-chroot: debootstrap failed (see $cache/debootstrap.log)" >&2
        rm -rf "$work"
        exit 1
    }
    rm -rf "$work/var/cache/apt/archives/"*.deb
    tar -C "$work" --numeric-owner -czf "$tarball.tmp.$$" . && mv "$tarball.tmp.$$" "$tarball"
    rm -rf "$work"
fi

root=$(mktemp -d /var/tmp/qkv-chroot.XXXXXX)
mounted=""
cleanup() {
    for m in $mounted; do umount "$root/$m" 2>/dev/null || umount -l "$root/$m" 2>/dev/null || true; done
    if [ $keep -eq 1 ]; then
        echo "== kept $root"
    elif grep -q " $root/" /proc/mounts; then
        echo "qkv: test-chroot: $root still has mounts; left in place" >&2
    else
        rm -rf "$root"
    fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "== a fresh root in $root"
tar -C "$root" --numeric-owner -xzf "$tarball"
cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true

# the tree as a clone would hold it: tracked files and new ones not ignored, no build output
mkdir -p "$root/root/qkv"
git ls-files -z --cached --others --exclude-standard | tar -C "$src" --null -T - -cf - | tar -C "$root/root/qkv" -xf -

# mount in the order unmounted in reverse by cleanup (dev/pts after dev)
mount -t proc proc "$root/proc" && mounted="proc $mounted"
mount --bind /dev "$root/dev" && mounted="dev $mounted"
mount --bind /dev/pts "$root/dev/pts" && mounted="dev/pts $mounted"
mount -t sysfs sysfs "$root/sys" && mounted="sys $mounted"

# Docker's default capabilities (moby's oci/caps/defaults.go): no CAP_SYS_ADMIN, no CAP_SYS_PTRACE
caps=-all,+chown,+dac_override,+fowner,+fsetid,+kill,+setgid,+setuid,+setpcap,+net_bind_service,+net_raw
caps=$caps,+sys_chroot,+mknod,+audit_write,+setfcap
wrap=""
what="a chroot"
if [ $container -eq 1 ]; then
    wrap="setpriv --bounding-set=$caps --inh-caps=-all --"
    what="a chroot with a container's capabilities"
fi

echo "== make test in $what (fresh Debian 12, only gcc, make, libc6-dev, git, ca-certificates)"
log="$root/root/make-test.log"
set +e
# shellcheck disable=SC2086 # wrap is a command prefix, split on purpose
$wrap chroot "$root" /usr/bin/env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    TERM=dumb LANG=C.UTF-8 /bin/sh -c 'cd /root/qkv && make test' >"$log" 2>&1
rc=$?
set -e
end=$(date +%s)
tail -n 40 "$log"
echo "== $what: make test exited $rc after $((end - start)) s (setup included)"
# Check's line, and the skipped checks by name (the indented lines after "Skipped:")
awk '/^[0-9]+%: Checks:/ {print} /^Skipped/ {s = 1; print; next} s && /^  / {print; next} {s = 0}' "$log"
if [ $rc -ne 0 ]; then
    keep=1
    echo "qkv: test-chroot: make test failed in $what; the log is $log" >&2
fi
exit $rc
