#!/usr/bin/env bash
# Build preflight and run it on the bundled examples. bad_train.py has real bugs, so the
# check reports findings and exits 1; good_train.py alone exits 0.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
cmake -S . -B build-release -G Ninja -DCMAKE_BUILD_TYPE=Release -DPREFLIGHT_BUILD_TESTS=OFF \
      -DPREFLIGHT_BUILD_BENCH=OFF >/dev/null
cmake --build build-release --target preflight
echo "\$ preflight check examples/"
status=0
./build-release/server/preflight check examples/ || status=$?
case $status in
  0|1) echo "(exit $status: 1 means findings at or above the gate, as expected for bad_train.py)";;
  *) echo "preflight failed with exit code $status" >&2; exit "$status";;
esac
echo
echo "\$ preflight estimate examples/finetune_llm.py --gpu rtx4090"
status=0
./build-release/server/preflight estimate examples/finetune_llm.py --gpu rtx4090 || status=$?
case $status in
  0|1) echo "(exit $status: 1 means the projected peak does not fit the card, as expected here)";;
  *) echo "preflight failed with exit code $status" >&2; exit "$status";;
esac
