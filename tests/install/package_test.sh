#!/bin/bash
# package_test.sh BUILD_DIR VERSION: `cpack -G "TGZ;DEB"` into a scratch directory; the tarball
# and the .deb hold the binary and the man page, and the .deb's control fields carry the
# project's version and a computed Depends. Skipped (77) without dpkg-deb.
set -u
build=$1 version=$2
. "$(dirname "$0")/lib.sh"
command -v dpkg-deb >/dev/null || { echo "SKIP: dpkg-deb is not installed"; exit 77; }

out=$(mktemp -d "${TMPDIR:-/tmp}/pf-package-test.XXXXXX")
trap 'rm -rf "$out"' EXIT
cpack -G "TGZ;DEB" --config "$build/CPackConfig.cmake" -B "$out" >"$out/cpack.log" 2>&1 \
  || { cat "$out/cpack.log" >&2; echo "FAIL: cpack" >&2; exit 1; }

deb=$(ls "$out"/preflight_"$version"_*.deb 2>/dev/null | head -1)
tgz=$(ls "$out"/preflight-"$version"-*.tar.gz 2>/dev/null | head -1)
[ -n "$deb" ] || { ls "$out" >&2; fail "no preflight_${version}_ARCH.deb"; exit 1; }
[ -n "$tgz" ] || fail "no preflight-${version}-*.tar.gz"

contents=$(dpkg-deb -c "$deb" | awk '{print $NF}')
for f in ./usr/bin/preflight ./usr/share/man/man1/preflight.1 \
         ./usr/share/bash-completion/completions/preflight ./usr/share/doc/preflight/LICENSE; do
  grep -qxF "$f" <<<"$contents" || fail "$(basename "$deb") lacks $f"
done
[ "$(dpkg-deb -f "$deb" Package)" = preflight ] || fail "Package: $(dpkg-deb -f "$deb" Package)"
[ "$(dpkg-deb -f "$deb" Version)" = "$version" ] || fail "Version: $(dpkg-deb -f "$deb" Version)"
[ -n "$(dpkg-deb -f "$deb" Maintainer)" ] || fail "no Maintainer"
grep -q libc6 <<<"$(dpkg-deb -f "$deb" Depends)" || fail "Depends without libc6: $(dpkg-deb -f "$deb" Depends)"

if [ -n "$tgz" ]; then
  listing=$(tar -tzf "$tgz")
  grep -qE '^[^/]+/bin/preflight$' <<<"$listing" || fail "$(basename "$tgz") lacks bin/preflight"
  grep -qE '^[^/]+/share/man/man1/preflight\.1$' <<<"$listing" || fail "$(basename "$tgz") lacks the man page"
fi

[ "$failures" -eq 0 ] || exit 1
echo "$(basename "$deb"): Depends: $(dpkg-deb -f "$deb" Depends)"
echo "$(basename "$tgz"): $(wc -l <<<"$listing") entries"
