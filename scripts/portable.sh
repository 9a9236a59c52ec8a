#!/usr/bin/env bash
# The portable release: a fully static preflight (-DPREFLIGHT_PORTABLE=ON), checked by
# tests/portable/check_binary.sh (no shared library but glibc <= 2.31 and the loader; `check`
# and `lsp` work), then packaged: build-portable/preflight-VERSION-linux-x86_64-static.tar.gz
# and .deb. scripts/try-in-debian.sh runs the tarball in a clean Debian 11 root.
#   scripts/portable.sh [BUILD_DIR]   (default build-portable)
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build-portable}
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DPREFLIGHT_PORTABLE=ON \
      -DPREFLIGHT_BUILD_TESTS=OFF -DPREFLIGHT_BUILD_BENCH=OFF >/dev/null
cmake --build "$dir" -j "$(nproc)"   # the binary, then its man page and completions
ctest --test-dir "$dir" -L portable --output-on-failure
(cd "$dir" && cpack -G "TGZ;DEB" >/dev/null && ls -l preflight*.tar.gz preflight*.deb)
