#include "server/cli/check_report.h"

#include <algorithm>
#include <tuple>

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

int severity_rank(Severity s) {
  switch (s) {
    case Severity::Note: return 0;
    case Severity::Warning: return 1;
    case Severity::Error: return 2;
  }
  return 2;
}

bool gate_fails(const CheckReport& report, Severity fail_on) {
  if (!report.failures.empty()) return true;
  for (const FileFindings& file : report.files)
    for (const Finding& f : file.findings)
      if (severity_rank(f.severity) >= severity_rank(fail_on)) return true;
  return false;
}

void sort_findings(std::vector<Finding>& findings) {
  std::stable_sort(findings.begin(), findings.end(), [](const Finding& a, const Finding& b) {
    return std::tie(a.range.begin, a.code, a.range.end) <
           std::tie(b.range.begin, b.code, b.range.end);
  });
}

}  // namespace preflight::server
