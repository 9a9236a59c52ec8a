#!/usr/bin/env bash
# Installs what a fresh Debian 12 machine lacks. Idempotent: packages that are already
# installed are left alone, and nothing is downloaded when all are present.
#   scripts/bootstrap.sh            what the build needs (the GitHub Action and the
#                                   pre-commit hook need no more)
#   scripts/bootstrap.sh --editors  also the editors the end-to-end tests drive headless
#   scripts/bootstrap.sh --tests    everything the test suite uses: the editors, pre-commit
#                                   and PyYAML (tests/ci); scripts/test.sh passes this
set -euo pipefail

editors=false
tests=false
for arg in "$@"; do
  case $arg in
    --editors) editors=true ;;
    --tests) editors=true; tests=true ;;
    -h|--help) sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bootstrap: unknown option $arg (try --help)" >&2; exit 2 ;;
  esac
done

packages=(cmake ninja-build g++ git ca-certificates
          nlohmann-json3-dev libasio-dev libspdlog-dev libgtest-dev libgmock-dev
          libmimalloc-dev)
# toml++ and CLI11 are header-only for the build: where apt does not carry them (Ubuntu 22.04
# has no libtomlplusplus-dev), configure downloads the headers of Debian 12's own packages,
# pinned by SHA-256 (cmake/HeaderDeps.cmake), so they are asked for only where they exist.
for p in libtomlplusplus-dev libcli11-dev; do
  if dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
     apt-cache show "$p" >/dev/null 2>&1; then
    packages+=("$p")
  else
    echo "bootstrap: $p is not in this system's apt; the build fetches its headers (cmake/HeaderDeps.cmake)"
  fi
done
command -v npm >/dev/null 2>&1 || packages+=(npm)  # `npm pack` fetches the parser tarballs
# tests/editors drives these headless; CI fails without them (about 130 MB, so not by default).
if $editors; then packages+=(neovim emacs-nox elpa-eglot); fi
# tests/ci: the action runner parses action.yml with PyYAML; the pre-commit test runs pre-commit.
if $tests; then packages+=(python3 python3-yaml pre-commit); fi

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
