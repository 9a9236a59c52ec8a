#include "server/cli/report_terminal.h"

#include <algorithm>
#include <set>
#include <vector>

#include "server/cli/fix_apply.h"
#include "server/cli/positions.h"
#include "server/cli/rule_catalogue.h"
#include "server/cli/text_width.h"

namespace preflight::server {

using analysis::Category;
using analysis::ColumnUnit;
using analysis::Finding;
using analysis::Fix;
using analysis::LineIndex;
using analysis::Severity;

namespace {

constexpr std::string_view kReset = "\x1b[0m";
constexpr std::string_view kBold = "\x1b[1m";
constexpr std::string_view kRed = "\x1b[1;31m";
constexpr std::string_view kGreen = "\x1b[1;32m";
constexpr std::string_view kYellow = "\x1b[1;33m";
constexpr std::string_view kPlainYellow = "\x1b[33m";
constexpr std::string_view kBlue = "\x1b[1;34m";
constexpr std::string_view kMagenta = "\x1b[35m";
constexpr std::string_view kCyan = "\x1b[36m";
constexpr std::string_view kBoldCyan = "\x1b[1;36m";

// Wraps text in an ANSI style when colour is on.
class Painter {
 public:
  explicit Painter(bool color) : color_(color) {}
  std::string operator()(std::string_view style, std::string_view text) const {
    if (!color_) return std::string(text);
    return std::string(style) + std::string(text) + std::string(kReset);
  }

 private:
  bool color_;
};

std::string_view severity_style(Severity s) {
  switch (s) {
    case Severity::Error: return kRed;
    case Severity::Warning: return kYellow;
    case Severity::Note: return kBoldCyan;
  }
  return kRed;
}

std::string_view category_style(Category c) {
  switch (c) {
    case Category::CriticalOom: return kMagenta;
    case Category::ConvergenceBug: return kPlainYellow;
    case Category::PerformanceWarn: return kCyan;
  }
  return kMagenta;
}

std::string count_noun(std::size_t n, std::string_view noun) {
  return std::to_string(n) + " " + std::string(noun) + (n == 1 ? "" : "s");
}

std::string position(const LineIndex& index, uint32_t offset) {
  Span s = span_of(index, {offset, offset});
  return std::to_string(s.line) + ":" + std::to_string(s.column);
}

std::string header_line(const FileFindings& file, const LineIndex& index, const Finding& f,
                        const Painter& paint) {
  std::string where = file.path + ":" + position(index, f.range.begin) + ":";
  return paint(kBold, where) + " " +
         paint(severity_style(f.severity), analysis::severity_name(f.severity)) + " " +
         paint(kBold, f.code) + " " +
         paint(category_style(f.category),
               "(" + std::string(category_label(f)) + ")") +
         " " + f.message + "\n";
}

// The span's first line, and carets under the part of the span on that line. Widths come
// from the displayed text, so wide and combining characters before the span keep the carets
// aligned; a multi-line span is underlined to the end of its first line.
std::string snippet(const LineIndex& index, const Finding& f, const Painter& paint) {
  analysis::LineColumn start = index.to_line_column(f.range.begin, ColumnUnit::Utf8Bytes);
  analysis::LineColumn end = index.to_line_column(f.range.end, ColumnUnit::Utf8Bytes);
  std::string_view line = index.line_text(start.line);
  std::size_t begin_col = std::min<std::size_t>(start.column, line.size());
  std::size_t end_col = end.line == start.line ? std::min<std::size_t>(end.column, line.size())
                                               : line.size();
  end_col = std::max(end_col, begin_col);
  uint32_t pad = display_width(line.substr(0, begin_col));
  uint32_t carets =
      std::max<uint32_t>(1, display_width(line.substr(begin_col, end_col - begin_col)));

  std::string number = std::to_string(start.line + 1);
  std::string gutter = paint(kBlue, "  " + number + " |");
  std::string blank = paint(kBlue, "  " + std::string(number.size(), ' ') + " |");
  return gutter + " " + expand_tabs(line) + "\n" + blank + " " + std::string(pad, ' ') +
         paint(severity_style(f.severity), std::string(carets, '^')) + "\n";
}

std::string fix_lines(const Finding& f, const Painter& paint) {
  std::string out;
  const Fix* applied = f.safe_fix();
  // Without a safe fix, the one --unsafe-fixes would apply says so.
  const Fix* on_request = applied ? nullptr : planned_fix(f, FixScope::SafeAndUnsafe);
  for (const Fix& fix : f.fixes) {
    std::string note = &fix == applied      ? "(safe, run with --fix)"
                       : &fix == on_request ? "(unsafe, applied by --fix --unsafe-fixes)"
                                            : "(" + std::string(analysis::fix_safety_name(fix.safety)) +
                                                  ", not applied by --fix)";
    out += "  " + paint(kCyan, "fix:") + " " + fix.description + " " + note + "\n";
  }
  return out;
}

std::size_t count_failed_files(const std::vector<FileFailure>& failures) {
  std::set<std::string_view> paths;
  for (const FileFailure& failure : failures) paths.insert(failure.path);
  return paths.size();
}

}  // namespace

std::string render_finding(const FileFindings& file, const LineIndex& index, const Finding& f,
                           const TerminalOptions& options) {
  Painter paint(options.color);
  std::string out = header_line(file, index, f, paint);
  if (!options.quiet) out += snippet(index, f, paint);
  for (const analysis::EvidenceStep& step : f.evidence)
    out += "  " + paint(kBlue, "= evidence:") + " " + position(index, step.range.begin) + " " +
           step.message + "\n";
  if (!f.hint.empty()) out += "  " + paint(kGreen, "help:") + " " + f.hint + "\n";
  return out + fix_lines(f, paint);
}

std::string render_silence(const FileFindings& file, const LineIndex& index,
                           const analysis::Silence& s, const TerminalOptions& options) {
  Painter paint(options.color);
  std::string out = paint(kBold, file.path + ":" + position(index, s.range.begin) + ":") + " " +
                    paint(kBoldCyan, "silent") + " " + paint(kBold, s.code) + ": " + s.reason + "\n";
  for (const analysis::EvidenceStep& step : s.evidence)
    out += "  " + paint(kBlue, "= evidence:") + " " + position(index, step.range.begin) + " " +
           step.message + "\n";
  return out;
}

std::string render_summary(const ReportTotals& totals, const TerminalOptions& options) {
  Painter paint(options.color);
  std::string out;
  for (const FileFailure& failure : totals.failures)
    out += paint(kBold, failure.path + ":") + " " + paint(kRed, failure.error) + "\n";
  if (std::size_t failed = count_failed_files(totals.failures))
    out += paint(kRed, count_noun(failed, "file") + " could not be checked completely.") + "\n";

  const SeverityCounts& counts = totals.counts;
  std::string files = count_noun(totals.files_checked, "file");
  if (counts.total() == 0) {
    std::string mark = options.color ? paint(kGreen, "\u2713") + " " : "";
    out += mark + "No issues found in " + files + ".\n";
  } else {
    std::vector<std::string> parts;
    if (counts.errors) parts.push_back(count_noun(counts.errors, "error"));
    if (counts.warnings) parts.push_back(count_noun(counts.warnings, "warning"));
    if (counts.notes) parts.push_back(count_noun(counts.notes, "note"));
    std::string joined;
    for (const std::string& p : parts) joined += (joined.empty() ? "" : ", ") + p;
    out += paint(kBold, "Found " + joined + " in " + files + ".") + "\n";
  }
  if (totals.fixable)
    out += count_noun(totals.fixable, "issue") + " can be fixed automatically with --fix.\n";
  if (options.fix_mode && totals.fixed > 0)
    out += paint(kGreen, "Fixed " + count_noun(totals.fixed, "issue") + ".") + "\n";
  if (totals.explain_silence)
    out += count_noun(totals.silences, "deliberate silence") + " explained.\n";
  return out;
}

std::string render_summary(const CheckReport& report, const TerminalOptions& options) {
  return render_summary(totals_of(report), options);
}

namespace {

// Each file's findings are written as it arrives; the failures and the summary last.
class TerminalReportWriter final : public ReportWriter {
 public:
  TerminalReportWriter(const TerminalOptions& options, std::ostream& out)
      : options_(options), out_(out) {}

  void file(const FileFindings& file) override {
    if (file.findings.empty() && file.silences.empty()) return;
    LineIndex index(file.text);
    for (const Finding& f : file.findings) out_ << render_finding(file, index, f, options_) << "\n";
    for (const analysis::Silence& s : file.silences)
      out_ << render_silence(file, index, s, options_) << "\n";
  }

  void finish(const ReportTotals& totals) override { out_ << render_summary(totals, options_); }

 private:
  TerminalOptions options_;
  std::ostream& out_;
};

}  // namespace

std::unique_ptr<ReportWriter> make_terminal_writer(const TerminalOptions& options, std::ostream& out) {
  return std::make_unique<TerminalReportWriter>(options, out);
}

void write_terminal_report(const CheckReport& report, const TerminalOptions& options,
                           std::ostream& out) {
  TerminalReportWriter writer(options, out);
  write_report(report, writer);
}

}  // namespace preflight::server
