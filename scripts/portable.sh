#!/usr/bin/env bash
# The portable release: a fully static preflight (-DPREFLIGHT_PORTABLE=ON), checked by
# tests/portable/check_binary.sh (no shared library but glibc <= 2.31 and the loader; `check`
# and `lsp` work), then packaged: build-portable/preflight-VERSION-linux-x86_64-static.tar.gz
# and .deb, and (where npm is present) the VS Code extension with this server inside,
# preflight-VERSION-linux-x64.vsix. scripts/try-in-debian.sh runs the tarball in a clean
# Debian 11 root.
#   scripts/portable.sh [BUILD_DIR]   (default build-portable)
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build-portable}
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DPREFLIGHT_PORTABLE=ON \
      -DPREFLIGHT_BUILD_TESTS=OFF -DPREFLIGHT_BUILD_BENCH=OFF >/dev/null
cmake --build "$dir" -j "$(nproc)"   # the binary, then its man page and completions
ctest --test-dir "$dir" -L portable --output-on-failure
(cd "$dir" && cpack -G "TGZ;DEB" >/dev/null && ls -l preflight*.tar.gz preflight*.deb)

# The VS Code extension's linux-x64 package ships this static server (editors/vscode/README.md).
if command -v npm >/dev/null; then
  version=$("$dir/server/preflight" --version | awk '{print $2}')
  ext="$dir/vscode"
  rm -rf "$ext" && mkdir -p "$ext/server"
  tar -C editors/vscode --exclude=node_modules --exclude=out --exclude=dist --exclude=server --exclude='*.vsix' -cf - . |
    tar -C "$ext" -xf -
  cp "$dir/server/preflight" "$ext/server/preflight"
  (cd "$ext" && npm ci --no-audit --no-fund --loglevel=error && npm run package:linux-x64 >/dev/null)
  mv "$ext/preflight-linux-x64.vsix" "$dir/preflight-$version-linux-x64.vsix"
  ls -l "$dir/preflight-$version-linux-x64.vsix"
else
  echo "portable: npm not found; the VS Code package was not built"
fi
