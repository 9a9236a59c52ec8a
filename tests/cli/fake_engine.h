// A fake engine for the CLI tests, so they pin the front end only. See fake_engine below.
#pragma once

#include <string_view>
#include <vector>

#include "rules/engine.h"
#include "test_support.h"

namespace preflight::server::testing {

using analysis::Finding;
using analysis::FixSafety;
using analysis::Severity;

inline bool fake_rule_runs(std::string_view code, const rules::CheckOptions& options) {
  std::string c(code);
  return (options.select.empty() || options.select.count(c)) && !options.ignore.count(c);
}

// Every "# noqa: TG003" is unused when TG003 runs; every "# preflight: ignore" is an unused
// blanket suppression.
inline void add_unused_suppressions(std::string_view text, const rules::CheckOptions& options,
                                    std::vector<rules::UnusedSuppression>& out) {
  for (std::string_view marker : {"# noqa: TG003", "# preflight: ignore"}) {
    std::string code = marker == "# noqa: TG003" ? "TG003" : "";
    if (!code.empty() && !fake_rule_runs(code, options)) continue;
    for (std::size_t pos = text.find(marker); pos != std::string_view::npos;
         pos = text.find(marker, pos + 1))
      out.push_back({{static_cast<uint32_t>(pos), static_cast<uint32_t>(pos + marker.size())},
                     code});
  }
}

// Findings for every occurrence of a word:
//   "leak"    TG001 error, safe fix appending ".detach()" (not once already detached)
//   "slow"    TG004 note, no fix
//   "breakme" TG005 error whose safe fix writes "SYNTAXERR" (a broken fix)
//   "risky"   TG014 warning whose only fix, unsafe, writes "tamed"
// "SYNTAXERR" is a syntax error, a leading "DEEP" too deep a nesting, "# skip-file" skips,
// a NUL byte makes the file NotText; unused suppressions as add_unused_suppressions says.
inline void add_word_findings(std::string_view text, std::string_view word, const char* code,
                              Severity severity, const rules::CheckOptions& options,
                              std::vector<Finding>& out) {
  if (!fake_rule_runs(code, options)) return;
  for (std::size_t pos = text.find(word); pos != std::string_view::npos;
       pos = text.find(word, pos + 1)) {
    if (text.substr(pos + word.size()).starts_with(".detach()")) continue;
    Finding f = make_finding(code, static_cast<uint32_t>(pos),
                             static_cast<uint32_t>(pos + word.size()), {}, severity);
    uint32_t end = f.range.end;
    if (word == "leak")
      f.fixes = {make_fix("add .detach()", FixSafety::Safe, {{{end, end}, ".detach()"}})};
    if (word == "risky")
      f.fixes = {make_fix("tame it", FixSafety::Unsafe, {{f.range, "tamed"}})};
    if (word == "breakme")
      f.fixes = {make_fix("break it", FixSafety::Safe, {{f.range, "SYNTAXERR"}})};
    out.push_back(f);
  }
}

inline rules::CheckResult fake_engine(std::string_view text, const rules::CheckOptions& options) {
  rules::CheckResult r;
  if (text.find('\0') != std::string_view::npos) {
    r.status = rules::FileStatus::NotText;
    r.status_reason = "contains NUL bytes";
    return r;
  }
  if (text.find("# skip-file") != std::string_view::npos) {
    r.status = rules::FileStatus::SkippedFile;
    return r;
  }
  for (std::size_t pos = text.find("SYNTAXERR"); pos != std::string_view::npos;
       pos = text.find("SYNTAXERR", pos + 1))
    r.syntax_errors.push_back({{static_cast<uint32_t>(pos), static_cast<uint32_t>(pos + 9)}, ""});
  if (text.starts_with("DEEP")) r.syntax_errors.push_back({{0, 4}, "too deeply nested to analyze"});
  add_word_findings(text, "leak", "TG001", Severity::Error, options, r.findings);
  add_word_findings(text, "slow", "TG004", Severity::Note, options, r.findings);
  add_word_findings(text, "breakme", "TG005", Severity::Error, options, r.findings);
  add_word_findings(text, "risky", "TG014", Severity::Warning, options, r.findings);
  add_unused_suppressions(text, options, r.unused_suppressions);
  return r;
}

}  // namespace preflight::server::testing
