#!/usr/bin/env bash
# Build and run the whole test suite twice: a normal build, and an AddressSanitizer +
# UndefinedBehaviorSanitizer build. Fails on the first failing test.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh --tests  # the build, the editors and tools the tests drive
jobs=$(nproc)

run_suite() {  # build-dir, extra cmake args...
  local dir=$1; shift
  cmake -S . -B "$dir" -G Ninja "$@" >/dev/null
  cmake --build "$dir" -j "$jobs"
  ctest --test-dir "$dir" -j "$jobs" --output-on-failure
}

echo "== plain build =="
run_suite build -DCMAKE_BUILD_TYPE=RelWithDebInfo
echo "== ASan + UBSan build =="
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  run_suite build-asan -DCMAKE_BUILD_TYPE=Debug -DPREFLIGHT_SANITIZE=ON -DPREFLIGHT_BUILD_BENCH=OFF
