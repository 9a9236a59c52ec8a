// The analysis targets' view of a CheckResult: its canonical rendering (tests/check_result_text.h)
// and the invariants any result keeps.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.h"
#include "tests/check_result_text.h"
#include "rules/engine.h"

namespace preflight::fuzz {

using testing::render;

inline bool inside(const analysis::ByteRange& r, std::size_t text_size) {
  return r.begin <= r.end && r.end <= text_size;
}

// The invariants ARCHITECTURE.md promises for any text: findings sorted by (offset, code),
// every range inside the text, each fix's edits sorted and non-overlapping.
inline void check_result_invariants(std::string_view text, const rules::CheckResult& result) {
  const auto& findings = result.findings;
  for (std::size_t i = 0; i < findings.size(); ++i) {
    const analysis::Finding& f = findings[i];
    require(inside(f.range, text.size()), "finding range outside the text", render(result));
    if (i > 0) {
      const analysis::Finding& prev = findings[i - 1];
      bool ordered = prev.range.begin < f.range.begin || (prev.range.begin == f.range.begin && prev.code <= f.code);
      require(ordered, "findings not sorted by (start, code)", render(result));
    }
    for (const auto& e : f.evidence) require(inside(e.range, text.size()), "evidence range outside the text", render(result));
    for (const auto& fix : f.fixes)
      for (std::size_t k = 0; k < fix.edits.size(); ++k) {
        require(inside(fix.edits[k].range, text.size()), "fix edit outside the text", render(result));
        if (k > 0) require(fix.edits[k - 1].range.end <= fix.edits[k].range.begin, "fix edits overlap or are unsorted",
                           render(result));
      }
  }
  for (const auto& e : result.syntax_errors) require(inside(e.range, text.size()), "syntax error range outside the text");
  for (const auto& u : result.unused_suppressions) require(inside(u.comment, text.size()), "suppression range outside the text");
  for (const auto& s : result.silences) require(inside(s.range, text.size()), "silence range outside the text", render(result));
  if (result.status != rules::FileStatus::Analyzed)
    require(findings.empty(), "findings reported for a file that was not analysed", render(result));
}

}  // namespace preflight::fuzz
