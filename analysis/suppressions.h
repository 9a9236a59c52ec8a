// Suppression comments, read from the syntax tree's comment nodes (so a `# noqa` inside a
// string literal suppresses nothing). Spellings (case-insensitive):
//   # noqa                     # noqa: TG001, TG013
//   # preflight: ignore        # preflight: ignore[TG001,TG007]
//   # torch-preflight: ignore[TG001]
//   # preflight: skip-file     # torch-preflight: skip_file
// A code list that names none of ours (`# noqa: E501`) suppresses nothing of ours; `# noqa
// TG003` (no colon) is blanket, as in the reference.
#pragma once

#include <cstddef>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "analysis/findings.h"
#include "analysis/line_index.h"
#include "analysis/syntax.h"

namespace preflight::analysis {

struct LineSuppression {
  bool all = false;
  std::set<std::string> codes;
  ByteRange comment;
  std::set<std::string> used;  // codes of the findings it suppressed
  bool own_blanket = false;     // `# preflight: ignore` without codes (a bare `# noqa` may
                                // serve flake8 or ruff, so it is never reported unused)
};

struct Suppressions {
  bool skip_file = false;
  uint32_t max_depth = 0;   // deepest node level seen by the scan (the engine's depth guard)
  size_t node_count = 0;    // every node, named or not (the engine's size guard)
  std::unordered_map<uint32_t, LineSuppression> by_line;  // 0-based line -> suppression

  // Suppressed when any line of the finding's span carries a matching suppression. Records
  // which suppression was used, for unused-suppression reports.
  bool suppresses(const Finding& f, const LineIndex& lines);

  // Suppressions that silenced nothing: `code` empty for a blanket one, else one entry per
  // listed code of ours (`is_ours`) that matched no finding.
  struct Unused {
    ByteRange comment;
    std::string code;
  };
  template <typename IsOurs>
  std::vector<Unused> unused(IsOurs&& is_ours) const {
    std::vector<Unused> out;
    for (const auto& [line, s] : by_line) {
      if (s.all && s.own_blanket && s.used.empty()) out.push_back({s.comment, {}});
      if (s.all) continue;
      for (const std::string& c : s.codes)
        if (is_ours(c) && !s.used.count(c)) out.push_back({s.comment, c});
    }
    return out;
  }
};

Suppressions scan_suppressions(TSNode root, std::string_view src, const LineIndex& lines);

// Parse one comment's text; exposed for tests.
struct CommentDirective {
  bool skip_file = false;
  bool suppression = false;
  bool all = false;
  bool own_blanket = false;  // the blanket form came from `preflight: ignore`
  std::set<std::string> codes;
};
CommentDirective parse_comment(std::string_view comment);

}  // namespace preflight::analysis
