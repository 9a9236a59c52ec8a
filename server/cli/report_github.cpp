#include "server/cli/report_github.h"

#include "analysis/line_index.h"
#include "server/cli/positions.h"
#include "server/cli/rule_catalogue.h"

namespace preflight::server {

using analysis::Finding;
using analysis::Severity;

namespace {

std::string escape(std::string_view text, bool property) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '%': out += "%25"; break;
      case '\r': out += "%0D"; break;
      case '\n': out += "%0A"; break;
      case ':': out += property ? "%3A" : ":"; break;
      case ',': out += property ? "%2C" : ","; break;
      default: out += c;
    }
  }
  return out;
}

std::string_view command_for(Severity s) {
  switch (s) {
    case Severity::Error: return "error";
    case Severity::Warning: return "warning";
    case Severity::Note: return "notice";
  }
  return "error";
}

std::string title_for(const Finding& f, std::span<const RuleInfo> rules) {
  const RuleInfo* rule = find_rule_info(f.code, rules);
  return rule ? f.code + " " + std::string(rule->summary) : f.code;
}

std::string annotation(const FileFindings& file, const analysis::LineIndex& index,
                       const Finding& f, std::span<const RuleInfo> rules) {
  Span s = span_of(index, f.range);
  std::string message = github_escape_data(f.message);
  if (!f.hint.empty()) message += "%0A%0Ahelp: " + github_escape_data(f.hint);
  return "::" + std::string(command_for(f.severity)) +
         " file=" + github_escape_property(file.path) + ",line=" + std::to_string(s.line) +
         ",endLine=" + std::to_string(s.end_line) + ",col=" + std::to_string(s.column) +
         ",endColumn=" + std::to_string(s.end_column) +
         ",title=" + github_escape_property(title_for(f, rules)) + "::" + message + "\n";
}

}  // namespace

std::string github_escape_data(std::string_view text) { return escape(text, false); }
std::string github_escape_property(std::string_view text) { return escape(text, true); }

namespace {

// One line per finding as its file arrives; the failures last.
class GithubReportWriter final : public ReportWriter {
 public:
  GithubReportWriter(std::ostream& out, std::span<const RuleInfo> rules) : out_(out), rules_(rules) {}

  void file(const FileFindings& file) override {
    if (file.findings.empty()) return;
    analysis::LineIndex index(file.text);
    for (const Finding& f : file.findings) out_ << annotation(file, index, f, rules_);
  }

  void finish(const ReportTotals& totals) override {
    for (const FileFailure& failure : totals.failures)
      out_ << "::error file=" << github_escape_property(failure.path)
           << ",title=preflight::" << github_escape_data(failure.error) << "\n";
  }

 private:
  std::ostream& out_;
  std::span<const RuleInfo> rules_;
};

}  // namespace

std::unique_ptr<ReportWriter> make_github_writer(std::ostream& out, std::span<const RuleInfo> rules) {
  return std::make_unique<GithubReportWriter>(out, rules);
}

void write_github_report(const CheckReport& report, std::ostream& out,
                         std::span<const RuleInfo> rules) {
  GithubReportWriter writer(out, rules);
  write_report(report, writer);
}

}  // namespace preflight::server
