#!/bin/sh
# The portable build's promise (docs/install.md): the binary needs no shared library but glibc
# (symbol versions no newer than 2.31, Debian 11's) and the loader, and it works: `check` finds
# the bundled examples' defects and the language server answers `initialize`.
#   check_binary.sh PREFLIGHT EXAMPLES_DIR [--behaviour-only]
# --behaviour-only skips the library checks (for a bare root without binutils:
# scripts/try-in-debian.sh, which runs them on the build machine).
set -u
bin=$1
examples=$2
mode=${3:-all}
fail=0
say() { echo "check_binary: $*"; }

libraries_ok() {

# Shared libraries: only glibc's own may be needed (a fully static binary needs none).
for lib in $(readelf -d "$bin" 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
  case $lib in
    libc.so.6|libm.so.6|libpthread.so.0|libdl.so.2|librt.so.1|ld-linux-x86-64.so.2) ;;
    *) say "needs $lib, which is not part of glibc"; fail=1 ;;
  esac
done
interp=$(readelf -l "$bin" | sed -n 's/.*Requesting program interpreter: \(.*\)\]/\1/p')
if [ -n "$interp" ] && [ "$interp" != /lib64/ld-linux-x86-64.so.2 ]; then
  say "asks for the loader $interp"; fail=1
fi

# glibc symbol versions: none newer than 2.31.
newest=$(readelf -V "$bin" 2>/dev/null | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -V | tail -1)
if [ -n "$newest" ] && [ "$(printf '%s\n2.31\n' "$newest" | sort -V | tail -1)" != 2.31 ]; then
  say "needs glibc $newest (newest allowed: 2.31)"; fail=1
fi
say "shared libraries: $(readelf -d "$bin" 2>/dev/null | grep -c NEEDED) needed; newest glibc version: ${newest:-none}; loader: ${interp:-none}"
}
[ "$mode" = --behaviour-only ] || libraries_ok

# It runs: the examples hold defects, so `check` exits 1 with findings in its JSON report.
out=$("$bin" check --format json "$examples" 2>&1)
rc=$?
if [ $rc -ne 1 ] || ! printf '%s' "$out" | grep -q '"code": *"TG0'; then
  say "check on $examples: exit $rc, no findings: $out" | head -c 2000; fail=1
fi

# The language server answers initialize and exits cleanly on shutdown + exit.
frame() { printf 'Content-Length: %d\r\n\r\n%s' "$(printf '%s' "$1" | wc -c)" "$1"; }
reply=$( { frame '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":null,"rootUri":null,"capabilities":{}}}'
           frame '{"jsonrpc":"2.0","method":"initialized","params":{}}'
           frame '{"jsonrpc":"2.0","id":2,"method":"shutdown"}'
           frame '{"jsonrpc":"2.0","method":"exit"}'; } | timeout 30 "$bin" lsp 2>/dev/null)
rc=$?
if [ $rc -ne 0 ] || ! printf '%s' "$reply" | grep -q '"capabilities"'; then
  say "lsp: exit $rc, reply: $reply" | head -c 2000; fail=1
fi

[ $fail -eq 0 ] && say "ok: $bin"
exit $fail
