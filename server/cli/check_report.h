// What one `check` run found, in the shape every output format reads: per file the text the
// findings point into, and the files that could not be (fully) analysed. A run hands the
// files to a ReportWriter one at a time, in path order, as they are checked, and then the
// totals: no format needs every file's text at once, so a run's memory does not grow with
// the text of the tree. A CheckReport is the same data held whole (tests, small callers).
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/findings.h"
#include "rules/engine.h"

namespace preflight::server {

struct FileFailure {
  std::string path;
  std::string error;  // "syntax error: line 3:5", "could not read: ..."
};

// Findings of one file. Their byte ranges index `text`, which after `--fix` is the fixed text.
struct FileFindings {
  std::string path;  // as discovered
  std::string text;
  std::vector<analysis::Finding> findings;  // sorted by position, then code
  // The gate for this file's findings: files under different configuration files may gate
  // differently (fail_on is per configuration, §6).
  analysis::Severity fail_on = analysis::Severity::Error;
  // With --explain-silence: where rules stayed quiet on purpose (never gated), by position.
  std::vector<analysis::Silence> silences{};
};

struct CheckReport {
  std::vector<FileFindings> files;    // sorted by path
  std::vector<FileFailure> failures;  // sorted by path
  std::size_t files_checked = 0;      // files that did not fail
  std::size_t fixed = 0;              // findings fixed by `--fix`
  bool explain_silence = false;       // --explain-silence: formats list the silences
};

struct SeverityCounts {
  std::size_t errors = 0;
  std::size_t warnings = 0;
  std::size_t notes = 0;
  std::size_t total() const { return errors + warnings + notes; }
};

// What the end of a report says: counted file by file as the files go by.
struct ReportTotals {
  std::vector<FileFailure> failures;  // sorted by path
  std::size_t files_checked = 0;
  std::size_t fixed = 0;
  SeverityCounts counts;
  std::size_t fixable = 0;   // findings that carry a Safe fix, i.e. what `--fix` would change
  std::size_t silences = 0;
  bool explain_silence = false;
  bool finding_at_fail_on = false;  // some finding is at or above its file's fail_on
};

// Adds one file's findings and silences to the counts (not files_checked, fixed, failures).
void count_file(ReportTotals& totals, const FileFindings& file);
ReportTotals totals_of(const CheckReport& report);

// Receives a report piece by piece: every file with something to show, in path order (its
// text only lives for the call), then the totals once. Formats that must put the totals
// first (JSON, SARIF) keep their rendered entries, never the files' texts.
class ReportWriter {
 public:
  virtual ~ReportWriter() = default;
  virtual void file(const FileFindings& file) = 0;
  virtual void finish(const ReportTotals& totals) = 0;
};

// Feeds a whole report to a writer.
void write_report(const CheckReport& report, ReportWriter& writer);

// Rank order for gating: note < warning < error.
int severity_rank(analysis::Severity s);
// True when the run must exit 1 (§5.3): a failure, or a finding at or above its file's
// `fail_on`.
bool gate_fails(const ReportTotals& totals);
bool gate_fails(const CheckReport& report);

// Report order within a file: by position, then code (the spec's (line, column, code)).
void sort_findings(std::vector<analysis::Finding>& findings);

// The PF100 finding for a suppression that silenced nothing (--report-unused-ignores),
// anchored on the comment in `text`; a warning, so it gates with fail_on = "warning".
analysis::Finding unused_suppression_finding(std::string_view text,
                                             const rules::UnusedSuppression& unused);

// [severity] re-levelling: every finding of a configured code gets the configured level.
void apply_severity_overrides(std::vector<analysis::Finding>& findings,
                              const std::map<std::string, analysis::Severity>& overrides);

}  // namespace preflight::server
