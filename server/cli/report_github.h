// GitHub Actions workflow commands (rules.md §9.7), one line per finding:
//   ::error file=<path>,line=<l>,endLine=<el>,col=<c>,endColumn=<ec>,title=<CODE> <summary>::
//   <message>%0A%0Ahelp: <hint>
// warning -> ::warning, note -> ::notice. Positions as in the JSON report (1-based, columns in
// code points, end column exclusive). Escaping follows what the runner unescapes: in the
// message only `%`, CR and LF; in properties also `:` and `,`. Files that could not be
// checked get an `::error file=<path>,title=preflight::<reason>` line, so a failing run
// always shows why.
#pragma once

#include <memory>
#include <ostream>
#include <span>
#include <string>
#include <string_view>

#include "server/cli/check_report.h"
#include "server/cli/rule_catalogue.h"

namespace preflight::server {

std::string github_escape_data(std::string_view text);      // % CR LF
std::string github_escape_property(std::string_view text);  // % CR LF : ,

// `rules` supplies the titles' summaries: the catalogue, except in tests. Streams: a file's
// lines are written as it arrives.
std::unique_ptr<ReportWriter> make_github_writer(std::ostream& out,
                                                 std::span<const RuleInfo> rules = rule_catalogue());
void write_github_report(const CheckReport& report, std::ostream& out,
                         std::span<const RuleInfo> rules = rule_catalogue());

}  // namespace preflight::server
