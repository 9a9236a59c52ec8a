// Data-driven rule tests. A fixture is a Python file under tests/fixtures/ whose comments say
// what preflight must report on it:
//
//   # case: TG001-P01 Loss kept in a history list after its backward
//   # check: TG001                         <- rules whose findings the file asserts
//   def fit(net, batches, loss_fn, opt):
//       ...
//       history.append(err)  # expect: TG001 warning @24-27
//
// A line where a finding starts carries `# expect: CODE SEVERITY [@START-END]` (1-based
// code-point columns, END exclusive; several entries separated by `;`). Every other line must
// have no finding of the checked rules. Likewise a line where a checked rule deliberately
// stays silent (a framework does the work, rules::CheckResult::silences) carries
// `# silent: CODE [@START-END] [words of the reason]`, and no other line may have a silence
// of the checked rules: a fixture asserts both what is reported and what is explained away. A sibling `<name>.fixed.py` holds the file's exact
// bytes after `--fix` (first safe fix of every finding); without one, no finding may offer a
// safe fix.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/findings.h"

namespace preflight::tests {

struct ExpectedFinding {
  uint32_t line = 0;  // 1-based
  std::string code;
  std::string severity;                // "error" | "warning" | "note"
  std::optional<uint32_t> column;      // 1-based, in code points
  std::optional<uint32_t> end_column;  // exclusive, on the same line
};

// A `# silent:` entry: the rule, where it stayed quiet, and words its reason must contain.
struct ExpectedSilence {
  uint32_t line = 0;  // 1-based
  std::string code;
  std::optional<uint32_t> column;
  std::optional<uint32_t> end_column;
  std::string reason_part;  // empty: any reason
};

struct FixtureSpec {
  std::string case_title;                // text after `# case:`
  std::set<std::string> checks;          // codes listed by `# check:`
  std::string target_gpu;                // `# target-gpu: rtx4090` (TG010's hardware)
  std::vector<ExpectedFinding> expected;
  std::vector<ExpectedSilence> silences;
  std::vector<std::string> problems;     // malformed header or expect comments
};

// Reads the header and every `# expect:` comment of a fixture's text.
FixtureSpec parse_fixture(std::string_view text);

// A finding in the terms a fixture uses: 1-based lines and code-point columns.
struct ReportedFinding {
  uint32_t line = 0;
  uint32_t column = 0;
  uint32_t end_line = 0;
  uint32_t end_column = 0;
  std::string code;
  std::string severity;
  std::string message;
  bool has_safe_fix = false;
};

std::vector<ReportedFinding> describe_findings(std::string_view text,
                                               const std::vector<analysis::Finding>& findings);

// A silence in the same terms.
struct ReportedSilence {
  uint32_t line = 0;
  uint32_t column = 0;
  uint32_t end_line = 0;
  uint32_t end_column = 0;
  std::string code;
  std::string reason;
};

std::vector<ReportedSilence> describe_silences(std::string_view text,
                                               const std::vector<analysis::Silence>& silences);

// Empty when every expected silence is reported and nothing else is, else a readable report.
std::string compare_silences(const std::vector<ExpectedSilence>& expected,
                             const std::vector<ReportedSilence>& reported);

// "line 8: TG001 warning @24-27"
std::string format_expected(const ExpectedFinding& e);
std::string format_reported(const ReportedFinding& r);

// What `--fix` would write: the first safe fix of every finding, taken in report order; a fix
// with an edit overlapping an already accepted edit is skipped whole.
struct FixOutcome {
  std::string text;
  std::vector<size_t> fixed_findings;          // indices into the findings passed in
  std::vector<analysis::TextEdit> applied;     // sorted by range.begin
  std::vector<std::string> problems;           // edits outside the text, reversed ranges
};

FixOutcome apply_safe_fixes(std::string_view text, const std::vector<analysis::Finding>& findings);

// Where byte `offset` of the original text ends up once `applied` (sorted) is spliced in.
uint32_t map_offset(uint32_t offset, const std::vector<analysis::TextEdit>& applied);

// Runs one fixture end to end. Empty when it passes, else a readable report.
std::string run_fixture(const std::filesystem::path& path);

// Every fixture under `root`, recursively: `*.py` but not `*.fixed.py`, as sorted paths
// relative to `root` with `/` separators. Empty when `root` cannot be read.
std::vector<std::string> list_fixtures(const std::filesystem::path& root);

// A gtest-safe name for a fixture path: "tg001/p01_x.py" -> "tg001_p01_x".
std::string test_name_for(std::string_view relative_path);

// The file's bytes, or nothing when it cannot be read.
std::optional<std::string> read_text(const std::filesystem::path& path);

}  // namespace preflight::tests
