// What one `check` run found, in the shape every output format reads: per file the text the
// findings point into, and the files that could not be (fully) analysed. Plain data, built
// once after all files are checked, so every format and the exit code agree.
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

std::size_t count_silences(const CheckReport& report);

struct SeverityCounts {
  std::size_t errors = 0;
  std::size_t warnings = 0;
  std::size_t notes = 0;
  std::size_t total() const { return errors + warnings + notes; }
};

SeverityCounts count_severities(const CheckReport& report);
// Findings that carry a Safe fix, i.e. what `--fix` would change.
std::size_t count_fixable(const CheckReport& report);

// Rank order for gating: note < warning < error.
int severity_rank(analysis::Severity s);
// True when the run must exit 1 (§5.3): a failure, or a finding at or above its file's
// `fail_on`.
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
