#include "server/cli/check_report.h"

#include <algorithm>
#include <tuple>

#include "server/cli/rule_catalogue.h"

namespace preflight::server {

using analysis::Finding;
using analysis::Severity;

void count_file(ReportTotals& totals, const FileFindings& file) {
  for (const Finding& f : file.findings) {
    switch (f.severity) {
      case Severity::Error: ++totals.counts.errors; break;
      case Severity::Warning: ++totals.counts.warnings; break;
      case Severity::Note: ++totals.counts.notes; break;
    }
    if (f.safe_fix()) ++totals.fixable;
    if (severity_rank(f.severity) >= severity_rank(file.fail_on)) totals.finding_at_fail_on = true;
  }
  totals.silences += file.silences.size();
}

ReportTotals totals_of(const CheckReport& report) {
  ReportTotals totals;
  totals.failures = report.failures;
  totals.files_checked = report.files_checked;
  totals.fixed = report.fixed;
  totals.explain_silence = report.explain_silence;
  for (const FileFindings& file : report.files) count_file(totals, file);
  return totals;
}

void write_report(const CheckReport& report, ReportWriter& writer) {
  for (const FileFindings& file : report.files) writer.file(file);
  writer.finish(totals_of(report));
}

int severity_rank(Severity s) {
  switch (s) {
    case Severity::Note: return 0;
    case Severity::Warning: return 1;
    case Severity::Error: return 2;
  }
  return 2;
}

bool gate_fails(const ReportTotals& totals) {
  return !totals.failures.empty() || totals.finding_at_fail_on;
}

bool gate_fails(const CheckReport& report) { return gate_fails(totals_of(report)); }

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
