#include "server/cli/file_check.h"

#include <exception>

#include "analysis/line_index.h"
#include "server/cli/check_report.h"
#include "server/cli/file_io.h"
#include "server/cli/fix_apply.h"
#include "server/cli/positions.h"

namespace preflight::server {
namespace {

// "syntax error: line 3:5"; the engine's message names other parse failures
// ("too deeply nested to analyze: line 1:1").
std::string syntax_failure(std::string_view text, const rules::SyntaxError& error) {
  analysis::LineIndex index(text);
  Span s = span_of(index, error.range);
  std::string what = error.message.empty() ? "syntax error" : error.message;
  return what + ": line " + std::to_string(s.line) + ":" + std::to_string(s.column);
}

// Fills `state.findings` / `state.failures` from one engine result on `state.text`.
void record_result(FileState& state, rules::CheckResult result) {
  if (result.status == rules::FileStatus::NotText) {
    state.failures.push_back("could not read: " + result.status_reason);
    return;
  }
  if (result.status == rules::FileStatus::TooComplex) {
    state.failures.push_back("not analysed: " + result.status_reason);
    return;
  }
  // Only the first syntax error is named; the parts that parsed still report findings.
  if (!result.syntax_errors.empty())
    state.failures.push_back(syntax_failure(state.text, result.syntax_errors.front()));
  state.findings = std::move(result.findings);
  state.unused = std::move(result.unused_suppressions);
  state.silences = std::move(result.silences);
  sort_findings(state.findings);
}

// Applies the safe fixes and re-checks the result; refuses text that parses worse.
void plan_fixes_for(FileOutcome& outcome, std::size_t original_syntax_errors,
                    const rules::CheckOptions& options, const SourceChecker& checker,
                    FixScope scope) {
  FixPlan plan = plan_safe_fixes(outcome.original.text, outcome.original.findings, scope);
  if (plan.applied.empty() || plan.text == outcome.original.text) return;
  rules::CheckResult recheck = checker(plan.text, options);
  if (recheck.status != rules::FileStatus::Analyzed ||
      recheck.syntax_errors.size() > original_syntax_errors) {
    outcome.original.failures.push_back(
        "fixes not applied: the fixed text would not parse (this is a preflight bug)");
    return;
  }
  FileState fixed;
  fixed.text = std::move(plan.text);
  record_result(fixed, std::move(recheck));
  outcome.fixed = std::move(fixed);
  outcome.fixed_count = plan.applied.size();
}

void check_text(FileOutcome& outcome, const rules::CheckOptions& options, bool plan_fixes,
                const SourceChecker& checker, FixScope scope) {
  rules::CheckResult result = checker(outcome.original.text, options);
  if (result.status == rules::FileStatus::SkippedFile) {
    outcome.skipped = true;
    return;
  }
  bool analysed = result.status == rules::FileStatus::Analyzed;
  std::size_t syntax_errors = result.syntax_errors.size();
  record_result(outcome.original, std::move(result));
  if (plan_fixes && analysed) plan_fixes_for(outcome, syntax_errors, options, checker, scope);
}

}  // namespace

FileOutcome check_file(const SourceFile& file, const rules::CheckOptions& options,
                       bool plan_fixes, bool keep_silences, const SourceChecker& checker,
                       FixScope fix_scope) {
  FileOutcome outcome;
  outcome.file = file;
  ReadResult read = read_source_file(file.location);
  if (!read.text) {
    outcome.original.failures.push_back(read.error);
    return outcome;
  }
  outcome.original.text = std::move(*read.text);
  outcome.stamp = read.stamp;
  // One catch per file: a bug on one input is reported for it and the run goes on.
  try {
    check_text(outcome, options, plan_fixes, checker, fix_scope);
  } catch (const std::exception& e) {
    outcome.original.findings.clear();
    outcome.fixed.reset();
    outcome.fixed_count = 0;
    outcome.original.failures.push_back(std::string("internal error: ") + e.what());
  }
  if (!keep_silences) std::vector<analysis::Silence>().swap(outcome.original.silences);
  // Nothing will quote or diff this text: do not hold every clean file in memory at once.
  if (outcome.original.findings.empty() && outcome.original.unused.empty() &&
      outcome.original.silences.empty() && !outcome.fixed)
    std::string().swap(outcome.original.text);
  return outcome;
}

}  // namespace preflight::server
