#!/usr/bin/env bash
# Entry of the pre-commit hooks in .pre-commit-hooks.yaml (`language: script`): pre-commit runs
# it from the user's repository with the hook's arguments and the staged Python files, e.g.
#   scripts/pre-commit-hook.sh check --fix train.py
# The first run builds the `preflight` target once into .pre-commit-build/ inside this
# repository's clone (pre-commit keeps one clone per `rev`, so the build is never stale);
# later runs reuse it. PREFLIGHT_HOOK_EXE=/path/to/preflight skips the build and runs that
# binary instead (CI and tests that already built it). Building needs what
# scripts/bootstrap.sh installs; the hook never installs packages itself.
set -euo pipefail

hook_repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir="$hook_repo/.pre-commit-build"
exe="$build_dir/server/preflight"
built_stamp="$build_dir/.built"  # written after a complete build; an interrupted one retries

build_once() {
  # pre-commit may run several hook processes at once; one builds, the others wait for it.
  mkdir -p "$build_dir"
  if command -v flock >/dev/null 2>&1; then
    exec 9>"$build_dir/.lock"
    flock 9
  fi
  [ -e "$built_stamp" ] && return 0
  local generator=()
  command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)
  echo "preflight hook: building preflight once into $build_dir (a few minutes)" >&2
  if ! cmake -S "$hook_repo" -B "$build_dir" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
         -DPREFLIGHT_BUILD_TESTS=OFF -DPREFLIGHT_BUILD_BENCH=OFF >"$build_dir/configure.log" 2>&1 ||
     ! cmake --build "$build_dir" --target preflight >"$build_dir/build.log" 2>&1; then
    echo "preflight hook: the build failed; see $build_dir/configure.log and build.log" >&2
    echo "  (the build needs what $hook_repo/scripts/bootstrap.sh installs)" >&2
    return 1
  fi
  touch "$built_stamp"
}

if [ -n "${PREFLIGHT_HOOK_EXE:-}" ]; then
  exe=$PREFLIGHT_HOOK_EXE
else
  [ -e "$built_stamp" ] || build_once
  exec 9>&-  # the build lock, if taken, is not held while checking
fi
exec "$exe" "$@"
