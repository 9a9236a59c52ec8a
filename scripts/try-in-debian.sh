#!/usr/bin/env bash
# Runs the portable tarball (scripts/portable.sh) in a clean Debian root made by debootstrap
# from the Debian mirror: nothing of this machine's libraries is visible there, so the run
# shows what a user of that release gets. Needs root and the debootstrap package; the root is
# kept for later runs (delete it to start over). Opt-in: CI does not run it (network, root).
#   scripts/try-in-debian.sh TARBALL [SUITE] [ROOT]   (default bullseye, /tmp/preflight-SUITE)
set -euo pipefail
cd "$(dirname "$0")/.."
tarball=$(realpath "$1")
suite=${2:-bullseye}
root=${3:-/tmp/preflight-$suite}
mirror=${PREFLIGHT_DEBIAN_MIRROR:-https://deb.debian.org/debian}

if [ ! -x "$root/bin/sh" ]; then
  debootstrap --variant=minbase "$suite" "$root" "$mirror"
fi
rm -rf "$root/opt/preflight" "$root/opt/examples"
mkdir -p "$root/opt/preflight"
tar xzf "$tarball" -C "$root/opt/preflight" --strip-components=1
cp -r examples "$root/opt/examples"
cp tests/portable/check_binary.sh "$root/opt/check_binary.sh"

echo "== $(chroot "$root" sh -c '. /etc/os-release; echo "$PRETTY_NAME"'), glibc $(chroot "$root" getconf GNU_LIBC_VERSION | cut -d' ' -f2)"
chroot "$root" /opt/preflight/bin/preflight --version
# The root has no binutils: the library checks run here, the behaviour checks there too.
tests/portable/check_binary.sh "$root/opt/preflight/bin/preflight" examples  # libraries, here
chroot "$root" /opt/preflight/bin/preflight check /opt/examples | tail -2 || true
chroot "$root" sh /opt/check_binary.sh /opt/preflight/bin/preflight /opt/examples --behaviour-only

# The .deb beside the tarball, if any: dpkg installs it there (it declares no dependencies).
deb=$(ls "$(dirname "$tarball")"/preflight_*.deb 2>/dev/null | head -1 || true)
if [ -n "$deb" ]; then
  cp "$deb" "$root/tmp/preflight.deb"
  chroot "$root" dpkg -i /tmp/preflight.deb >/dev/null
  chroot "$root" sh -c 'preflight --version && ls /usr/share/man/man1/preflight.1 /usr/share/bash-completion/completions/preflight'
  chroot "$root" dpkg -r preflight >/dev/null
fi
echo "try-in-debian: ok in $suite"
