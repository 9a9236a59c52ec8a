#include "server/cli/check_report.h"

#include <algorithm>
#include <tuple>

#include "server/cli/rule_catalogue.h"

namespace preflight::server {

using analysis::Finding;
using analysis::Severity;

SeverityCounts count_severities(const CheckReport& report) {
  SeverityCounts counts;
  for (const FileFindings& file : report.files) {
    for (const Finding& f : file.findings) {
      switch (f.severity) {
        case Severity::Error: ++counts.errors; break;
        case Severity::Warning: ++counts.warnings; break;
        case Severity::Note: ++counts.notes; break;
      }
    }
  }
  return counts;
}

std::size_t count_fixable(const CheckReport& report) {
  std::size_t n = 0;
  for (const FileFindings& file : report.files)
    n += static_cast<std::size_t>(std::count_if(file.findings.begin(), file.findings.end(),
                                                [](const Finding& f) { return f.safe_fix(); }));
  return n;
}

std::size_t count_silences(const CheckReport& report) {
  std::size_t n = 0;
  for (const FileFindings& file : report.files) n += file.silences.size();
  return n;
}

int severity_rank(Severity s) {
  switch (s) {
    case Severity::Note: return 0;
    case Severity::Warning: return 1;
    case Severity::Error: return 2;
  }
  return 2;
}

bool gate_fails(const CheckReport& report) {
  if (!report.failures.empty()) return true;
  for (const FileFindings& file : report.files)
    for (const Finding& f : file.findings)
      if (severity_rank(f.severity) >= severity_rank(file.fail_on)) return true;
  return false;
}

void sort_findings(std::vector<Finding>& findings) {
  std::stable_sort(findings.begin(), findings.end(), [](const Finding& a, const Finding& b) {
    return std::tie(a.range.begin, a.code, a.range.end) <
           std::tie(b.range.begin, b.code, b.range.end);
  });
}

Finding unused_suppression_finding(std::string_view text, const rules::UnusedSuppression& unused) {
  std::size_t begin = std::min<std::size_t>(unused.comment.begin, text.size());
  std::size_t end = std::clamp<std::size_t>(unused.comment.end, begin, text.size());
  std::string_view comment = text.substr(begin, end - begin);
  while (!comment.empty() && (comment.back() == ' ' || comment.back() == '\t' ||
                              comment.back() == '\r'))
    comment.remove_suffix(1);
  Finding f;
  f.code = std::string(kUnusedSuppressionCode);
  f.severity = Severity::Warning;
  f.category = analysis::Category::PerformanceWarn;  // shown as SUPPRESSION (category_label)
  f.range = unused.comment;
  std::string quoted = "`" + std::string(comment) + "`";
  if (unused.code.empty()) {
    f.message = "unused suppression: " + quoted + " silences nothing";
    f.hint = "Delete the comment: no finding on its lines needs it.";
  } else {
    f.message = "unused suppression: " + quoted + " silences no " + unused.code + " finding";
    f.hint = "Delete " + unused.code + " from the comment (or the whole comment if it lists "
             "nothing else).";
  }
  return f;
}

void apply_severity_overrides(std::vector<Finding>& findings,
                              const std::map<std::string, Severity>& overrides) {
  if (overrides.empty()) return;
  for (Finding& f : findings)
    if (auto it = overrides.find(f.code); it != overrides.end()) f.severity = it->second;
}

}  // namespace preflight::server
