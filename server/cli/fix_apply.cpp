#include "server/cli/fix_apply.h"

#include <algorithm>

namespace preflight::server {

using analysis::ByteRange;
using analysis::Finding;
using analysis::Fix;
using analysis::TextEdit;

namespace {

bool fix_is_well_formed(const Fix& fix, std::size_t text_size) {
  for (std::size_t i = 0; i < fix.edits.size(); ++i) {
    const ByteRange& r = fix.edits[i].range;
    if (r.begin > r.end || r.end > text_size) return false;
    for (std::size_t j = 0; j < i; ++j)
      if (edits_conflict(r, fix.edits[j].range)) return false;
  }
  return !fix.edits.empty();
}

bool conflicts_with_any(const Fix& fix, const std::vector<TextEdit>& accepted) {
  for (const TextEdit& edit : fix.edits)
    for (const TextEdit& other : accepted)
      if (edits_conflict(edit.range, other.range)) return true;
  return false;
}

}  // namespace

bool edits_conflict(ByteRange a, ByteRange b) {
  bool a_empty = a.begin == a.end;
  bool b_empty = b.begin == b.end;
  if (a_empty || b_empty) return a.begin <= b.end && b.begin <= a.end;
  return a.begin < b.end && b.begin < a.end;
}

std::string apply_edits(std::string_view text, std::vector<TextEdit> edits) {
  std::sort(edits.begin(), edits.end(), [](const TextEdit& a, const TextEdit& b) {
    return a.range.begin < b.range.begin;
  });
  std::string out;
  out.reserve(text.size());
  std::size_t cursor = 0;
  for (const TextEdit& edit : edits) {
    out.append(text.substr(cursor, edit.range.begin - cursor));
    out.append(edit.replacement);
    cursor = edit.range.end;
  }
  out.append(text.substr(cursor));
  return out;
}

const Fix* planned_fix(const Finding& finding, FixScope scope) {
  if (const Fix* safe = finding.safe_fix()) return safe;
  if (scope == FixScope::SafeOnly) return nullptr;
  for (const Fix& fix : finding.fixes)
    if (fix.safety == analysis::FixSafety::Unsafe) return &fix;
  return nullptr;
}

FixPlan plan_safe_fixes(std::string_view text, std::span<const Finding> findings, FixScope scope) {
  FixPlan plan;
  std::vector<TextEdit> accepted;
  for (std::size_t i = 0; i < findings.size(); ++i) {
    const Fix* fix = planned_fix(findings[i], scope);
    if (!fix || !fix_is_well_formed(*fix, text.size()) || conflicts_with_any(*fix, accepted))
      continue;
    accepted.insert(accepted.end(), fix->edits.begin(), fix->edits.end());
    plan.applied.push_back(i);
  }
  plan.text = apply_edits(text, std::move(accepted));
  return plan;
}

}  // namespace preflight::server
