// What DocumentAnalysis::check must return after each check of a document, computed from
// check_source and a fresh parse alone (rules/incremental.h states the rule):
//   - the text parses, or no earlier check of the document parsed (with the same options, no
//     TG010 target, at least one unit, a tree without errors): check_source(text);
//   - otherwise: check_source's status and syntax errors (their places aside:
//     place_syntax_errors_as), no grammar gaps, and the findings, silences and unused suppressions of the
//     last check that parsed, except those whose unit (analysis/units.h: a top-level
//     statement, or a method of a split class, in a fresh parse of that text) has a line the
//     edits since touched and those a range
//     of which the edits overlap, moved by the edits. A text check_source would not analyse
//     (skip-file, too deep, too large) is checked as check_source checks it.
// Shared by the differential test and the incremental fuzz target.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/units.h"
#include "rules/engine.h"

namespace preflight::testing {

class IncrementalOracle {
 public:
  // The result a check of `text` must give, the document having checked every text passed
  // here before (a cancelled check changes nothing). `kept` tells whether the last good
  // check's findings were kept.
  rules::CheckResult check(const std::string& text, const rules::CheckOptions& options, bool* kept = nullptr) {
    rules::CheckResult scratch = rules::check_source(text, options);
    last_syntax_errors_ = scratch.syntax_errors;
    bool keep = keeps_last_good(scratch, options);
    if (kept) *kept = keep;
    if (keep) return kept_items(text, scratch);  // the last good check stays
    good_.reset();
    if (scratch.status != rules::FileStatus::Analyzed || !scratch.syntax_errors.empty()) return scratch;
    // A tree can carry an error cost without an ERROR or MISSING node (check_source then
    // reports no syntax error): such a text is not a good check to keep findings from.
    analysis::SyntaxTree tree = analysis::SyntaxTree::parse(rules::parse_view(text));
    std::vector<analysis::UnitSpan> units = analysis::unit_spans(tree.root());
    if (units.empty() || ts_node_has_error(tree.root())) return scratch;
    good_ = Good{text, options, scratch, {}};
    for (const analysis::UnitSpan& u : units) good_->units.push_back(u.range);
    return scratch;
  }

  // The syntax errors of the last text passed to check().
  const std::vector<rules::SyntaxError>& last_syntax_errors() const { return last_syntax_errors_; }

  // While the last good findings are kept, the document reads its syntax error from the tree
  // reparsed against the edits, whose first error may sit elsewhere than a fresh parse's: the
  // same number of errors with the same messages is required, and then their places are
  // taken from check_source's so that the rest of the result can be compared exactly.
  static void place_syntax_errors_as(const std::vector<rules::SyntaxError>& from_scratch, rules::CheckResult& result) {
    if (result.syntax_errors.size() != from_scratch.size()) return;  // the comparison then fails
    for (size_t i = 0; i < from_scratch.size(); ++i)
      if (result.syntax_errors[i].message == from_scratch[i].message) result.syntax_errors[i].range = from_scratch[i].range;
  }

 private:
  struct Good {
    std::string text;
    rules::CheckOptions options;
    rules::CheckResult result;
    std::vector<analysis::ByteRange> units;
  };
  std::optional<Good> good_;
  std::vector<rules::SyntaxError> last_syntax_errors_;

  // A skip-file marker, the depth guard or the size guard leaves nothing analysed: such a text
  // is checked as check_source checks it, and the last good check is forgotten.
  bool keeps_last_good(const rules::CheckResult& scratch, const rules::CheckOptions& options) const {
    bool too_deep = std::any_of(scratch.syntax_errors.begin(), scratch.syntax_errors.end(),
                                [](const rules::SyntaxError& e) { return e.message != "syntax error"; });
    return good_ && good_->options == options && options.target_gpu.empty() && !scratch.syntax_errors.empty() &&
           scratch.status == rules::FileStatus::Analyzed && !too_deep;
  }

  static size_t line_start(std::string_view s, size_t offset) {
    size_t nl = offset == 0 ? std::string_view::npos : s.rfind('\n', offset - 1);
    return nl == std::string_view::npos ? 0 : nl + 1;
  }
  static size_t next_line_start(std::string_view s, size_t offset) {
    size_t nl = s.find('\n', offset);
    return nl == std::string_view::npos ? s.size() : nl + 1;
  }

  rules::CheckResult kept_items(const std::string& text, const rules::CheckResult& scratch) const {
    rules::CheckResult out;
    out.status = scratch.status;
    out.status_reason = scratch.status_reason;
    out.syntax_errors = scratch.syntax_errors;
    // No grammar gaps: they say how a text that parses only through them was read, and a
    // text kept while broken is not read (rules/incremental.h).
    const std::string& before = good_->text;
    size_t limit = std::min(before.size(), text.size());
    size_t prefix = 0;
    while (prefix < limit && before[prefix] == text[prefix]) ++prefix;
    size_t suffix = 0;
    while (suffix < limit - prefix && before[before.size() - 1 - suffix] == text[text.size() - 1 - suffix]) ++suffix;
    size_t old_suffix = before.size() - suffix;
    int64_t delta = static_cast<int64_t>(text.size()) - static_cast<int64_t>(before.size());
    auto move = [&](analysis::ByteRange& r) {
      if (r.end <= prefix) return true;
      if (r.begin < old_suffix) return false;
      r = {static_cast<uint32_t>(r.begin + delta), static_cast<uint32_t>(r.end + delta)};
      return true;
    };
    auto touched = [&](uint32_t offset) {  // the unit holding `offset` has a line the edits touched
      const std::vector<analysis::ByteRange>& units = good_->units;
      auto it = std::upper_bound(units.begin(), units.end(), offset,
                                 [](uint32_t o, const analysis::ByteRange& u) { return o < u.begin; });
      if (it == units.begin() || offset > std::prev(it)->end) return true;  // in no unit: not kept
      --it;
      return prefix < next_line_start(before, it->end) && old_suffix >= line_start(before, it->begin);
    };
    auto move_steps = [&](std::vector<analysis::EvidenceStep>& steps) {
      return std::all_of(steps.begin(), steps.end(), [&](analysis::EvidenceStep& s) { return move(s.range); });
    };
    for (analysis::Finding f : good_->result.findings) {
      if (touched(f.range.begin)) continue;
      bool ok = move(f.range) && move_steps(f.evidence);
      for (analysis::Fix& fix : f.fixes)
        for (analysis::TextEdit& e : fix.edits) ok = ok && move(e.range);
      if (ok) out.findings.push_back(std::move(f));
    }
    for (analysis::Silence s : good_->result.silences)
      if (!touched(s.range.begin) && move(s.range) && move_steps(s.evidence)) out.silences.push_back(std::move(s));
    for (rules::UnusedSuppression u : good_->result.unused_suppressions)
      if (!touched(u.comment.begin) && move(u.comment)) out.unused_suppressions.push_back(std::move(u));
    rules::sort_result(out);
    return out;
  }
};

}  // namespace preflight::testing
