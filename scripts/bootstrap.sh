#!/usr/bin/env bash
# Installs what a fresh Debian 12 machine lacks to build preflight. Idempotent: packages that
# are already installed are left alone, and nothing is downloaded when all are present.
set -euo pipefail

packages=(cmake ninja-build g++ git ca-certificates
          nlohmann-json3-dev libasio-dev libspdlog-dev libgtest-dev libgmock-dev
          libtomlplusplus-dev libcli11-dev libmimalloc-dev)
command -v npm >/dev/null 2>&1 || packages+=(npm)  # `npm pack` fetches the parser tarballs
# The editor end-to-end tests (tests/editors) drive these headless; CI fails without them.
packages+=(neovim emacs-nox elpa-eglot)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "bootstrap: installing ${missing[*]}"
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
