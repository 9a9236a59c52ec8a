// The human-readable report (rules.md §9.5, extended): for each finding a
// `path:line:col: severity CODE (CATEGORY) message` line, the source line with a caret
// underline placed by display width, the evidence chain, the hint and the fixes; then the
// failures and the summary. ANSI colour only when asked for.
#pragma once

#include <memory>
#include <ostream>
#include <string>

#include "analysis/line_index.h"
#include "server/cli/check_report.h"

namespace preflight::server {

struct TerminalOptions {
  bool color = false;
  bool quiet = false;      // omit source snippets
  bool fix_mode = false;   // `--fix` ran: print "Fixed K issues."
};

std::string render_finding(const FileFindings& file, const analysis::LineIndex& index,
                           const analysis::Finding& finding, const TerminalOptions& options);
// `path:line:col: silent CODE: reason` and the evidence that kept the rule quiet.
std::string render_silence(const FileFindings& file, const analysis::LineIndex& index,
                           const analysis::Silence& silence, const TerminalOptions& options);
std::string render_summary(const ReportTotals& totals, const TerminalOptions& options);
std::string render_summary(const CheckReport& report, const TerminalOptions& options);
// Streams: a file's findings are written as it arrives.
std::unique_ptr<ReportWriter> make_terminal_writer(const TerminalOptions& options, std::ostream& out);
void write_terminal_report(const CheckReport& report, const TerminalOptions& options,
                           std::ostream& out);

}  // namespace preflight::server
