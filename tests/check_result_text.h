// A canonical rendering of every field of a CheckResult: two results compare equal exactly
// when they are the same. Shared by the differential test and the fuzz targets.
#pragma once

#include <sstream>
#include <string>
#include <vector>

#include "rules/engine.h"

namespace preflight::testing {

inline std::string range_text(const analysis::ByteRange& r) {
  return "@" + std::to_string(r.begin) + "-" + std::to_string(r.end);
}

inline void render_evidence(std::ostringstream& out, const std::vector<analysis::EvidenceStep>& steps) {
  for (const auto& e : steps) out << "    evidence " << range_text(e.range) << " " << e.message << "\n";
}

inline std::string render(const rules::CheckResult& r) {
  std::ostringstream out;
  out << "status " << static_cast<int>(r.status) << " " << r.status_reason << "\n";
  for (const auto& f : r.findings) {
    out << "finding " << f.code << " " << static_cast<int>(f.severity) << " " << static_cast<int>(f.category) << " "
        << range_text(f.range) << " " << f.message << " | " << f.hint << "\n";
    render_evidence(out, f.evidence);
    for (const auto& fix : f.fixes) {
      out << "    fix " << static_cast<int>(fix.safety) << " " << fix.description << "\n";
      for (const auto& e : fix.edits) out << "      edit " << range_text(e.range) << " " << e.replacement << "\n";
    }
  }
  for (const auto& e : r.syntax_errors) out << "syntax " << range_text(e.range) << " " << e.message << "\n";
  for (const auto& g : r.grammar_gaps) out << "gap " << range_text(g) << "\n";
  for (const auto& u : r.unused_suppressions) out << "unused " << range_text(u.comment) << " " << u.code << "\n";
  for (const auto& s : r.silences) {
    out << "silence " << s.code << " " << range_text(s.range) << " " << s.reason << "\n";
    render_evidence(out, s.evidence);
  }
  return out.str();
}

}  // namespace preflight::testing
