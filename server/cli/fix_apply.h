// Applying fixes to one file's text (rules.md §9.9). Pure: text in, text out; the caller
// re-checks the result and decides whether to write it.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/findings.h"

namespace preflight::server {

struct FixPlan {
  std::string text;                 // the text with every accepted edit applied
  std::vector<std::size_t> applied;  // indices into the findings whose fix was applied
};

// Which fixes a plan may take. Unsafe fixes change types or semantics the author must
// confirm; they are applied only on request (`--fix --unsafe-fixes`).
enum class FixScope { SafeOnly, SafeAndUnsafe };

// The fix a plan takes for one finding: its first Safe fix; with SafeAndUnsafe and no Safe
// fix, its first Unsafe fix (fixes are listed preferred first). Never a DisplayOnly fix.
const analysis::Fix* planned_fix(const analysis::Finding& finding, FixScope scope);

// Takes, for each finding in order, its planned_fix, and accepts it only if none of its
// edits conflicts with an edit already accepted (the first fix in report order wins; the
// other finding stays reported). Fixes with malformed edits (out of the text, reversed, or
// overlapping each other) are never applied. Bytes outside accepted edits are unchanged.
FixPlan plan_safe_fixes(std::string_view text, std::span<const analysis::Finding> findings,
                        FixScope scope = FixScope::SafeOnly);

// Two edits conflict when their ranges overlap, or when one is an insertion at or inside the
// other's range: the order of text inserted where another edit starts or ends is ambiguous.
bool edits_conflict(analysis::ByteRange a, analysis::ByteRange b);

// Applies edits that do not conflict with each other; `edits` need not be sorted.
std::string apply_edits(std::string_view text, std::vector<analysis::TextEdit> edits);

}  // namespace preflight::server
