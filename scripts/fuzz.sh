#!/usr/bin/env bash
# Builds the libFuzzer targets (clang-14, ASan + UBSan) in build-fuzz/ and runs each for
# SECONDS, one after another (2-core CI machines): scripts/fuzz.sh [SECONDS] [TARGET...].
# Corpus (seeds + what the fuzzer found) in build-fuzz/corpus/<target>, crash / timeout / OOM
# inputs in build-fuzz/artifacts/<target>/, logs in build-fuzz/logs/. Prints executions per
# target; exits non-zero when any target found a problem. docs/fuzzing.md has the details.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-60}
shift || true
targets=("$@")
((${#targets[@]})) || targets=(framing dispatcher analysis incremental)
build=build-fuzz
fuzz_dir=tests/fuzz

ensure_clang() {
  command -v clang++-14 >/dev/null && [ -n "$(compgen -G '/usr/lib/llvm-14/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a')" ] && return
  echo "fuzz: installing clang-14 and libclang-rt-14-dev"
  local sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends clang-14 libclang-rt-14-dev
}

configure_and_build() {
  # The parser tarballs the test build already fetched (and checked) are reused, not fetched again.
  if [ -d build/_npm ] && [ ! -d "$build/_npm" ]; then
    mkdir -p "$build" && cp -r build/_npm "$build/_npm"
  fi
  CC=clang-14 CXX=clang++-14 cmake -S . -B "$build" -G Ninja -DPREFLIGHT_FUZZ=ON -DPREFLIGHT_BUILD_TESTS=OFF \
    -DPREFLIGHT_BUILD_BENCH=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  local names=()
  for t in "${targets[@]}"; do names+=("fuzz_$t"); done
  cmake --build "$build" -j "$(nproc)" --target "${names[@]}"
}

# The starting inputs of a target: committed seeds and regressions, plus every fixture and
# example as Python source for the analysis target.
seed_dirs() {
  local t=$1
  for d in "$fuzz_dir/seeds/$t" "$fuzz_dir/regressions/$t"; do [ -d "$d" ] && echo "$d"; done
  if [ "$t" = analysis ]; then echo tests/fixtures; echo examples; fi
  return 0
}

dictionary() {
  case $1 in framing|dispatcher) echo "$fuzz_dir/jsonrpc.dict" ;; *) echo "$fuzz_dir/python.dict" ;; esac
}

# What a CI log needs to reproduce a failure without the machine's files: the random seed,
# the log's last lines without libFuzzer's progress lines (the sanitizer's report, an uncaught
# exception's message or the invariant that failed, and the stack), and every artifact of
# up to 4 KiB as base64 (`base64 -d > crash` and replay it, "Reproduce a crash" in docs/fuzzing.md).
report_failure() {
  local log=$1 artifacts=$2
  grep -m1 -E '^INFO: Seed:' "$log" || true
  grep -vE '^#[0-9]+\s' "$log" | tail -n 60 | sed 's/^/  | /'
  local f
  for f in "$artifacts"/*; do
    [ -f "$f" ] || continue
    if [ "$(stat -c %s "$f")" -le 4096 ]; then
      printf '  artifact %s (base64):\n' "$(basename "$f")"
      base64 -w 100 "$f" | sed 's/^/    /'
    else
      printf '  artifact %s: %s bytes, too large to print\n' "$(basename "$f")" "$(stat -c %s "$f")"
    fi
  done
}

# The protocol targets take inputs up to 1 MiB from the start (-len_control=0): their typed
# mutators (tests/fuzz/json_mutator.h) wrap values in up to 300,000 levels of nesting and
# put 100 KB strings in, which libFuzzer's slowly growing length limit would cut off.
# The Python targets keep 16 KiB: longer sources only slow them down.
length_flags() {
  case $1 in framing|dispatcher) echo "-max_len=1048576 -len_control=0" ;; *) echo "-max_len=16384" ;; esac
}

run_target() {  # target -> 0 when nothing was found
  local t=$1 corpus=$build/corpus/$1 artifacts=$build/artifacts/$1 log=$build/logs/$1.log
  mkdir -p "$corpus" "$artifacts" "$(dirname "$log")"
  local status=0
  # -rss_limit_mb also bounds one input's allocation; leaks are checked (ASan) per input.
  ASAN_OPTIONS=abort_on_error=1:detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    "$build/tests/fuzz/fuzz_$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 $(length_flags "$t") \
    -print_final_stats=1 -dict="$(dictionary "$t")" -artifact_prefix="$artifacts/" \
    "$corpus" $(seed_dirs "$t") >"$log" 2>&1 || status=$?
  local execs
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | tail -1 | grep -o '[0-9]*$' || true)
  printf 'fuzz: %-12s %8s executions in %ss, corpus %s inputs' "$t" "${execs:-?}" "$seconds" \
    "$(find "$corpus" -type f | wc -l)"
  if [ "$status" -ne 0 ]; then
    printf ' -- FAILED (exit %s), see %s and %s\n' "$status" "$log" "$artifacts"
    report_failure "$log" "$artifacts"
    return 1
  fi
  printf '\n'
}

ensure_clang
configure_and_build
failed=0
for t in "${targets[@]}"; do run_target "$t" || failed=1; done
exit "$failed"
