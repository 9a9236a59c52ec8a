// Fuzz target: the analysis core on arbitrary bytes as Python source. check_source must
// never crash, must be deterministic, and its result must keep the documented invariants
// (sorted findings, ranges inside the text, non-overlapping fix edits).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "check_result.h"
#include "rules/engine.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace preflight;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  rules::CheckResult result = rules::check_source(text, {});
  fuzz::check_result_invariants(text, result);
  // Determinism: a second run over the same bytes renders identically.
  std::string first = fuzz::render(result);
  std::string second = fuzz::render(rules::check_source(text, {}));
  fuzz::require(first == second, "check_source is not deterministic", first + "\n--- second run ---\n" + second);
  return 0;
}
