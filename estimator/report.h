// One estimate as every surface shows it: the estimate, its remediation plan, the
// reference tool's figure and the differences between the two. `build_report` is the call
// the CLI and the language server share; `hover_markdown` and `code_lens_title` render it
// for the editor, `report_json` for `--format json`. All pure.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "estimator/compat.h"
#include "estimator/estimate.h"
#include "estimator/remediation.h"

namespace preflight::estimator {

/// Where a report's job came from when it was read from a script.
struct ScriptOrigin {
  std::string path;
  std::string entry_point;  // empty: the script has no entry point (flags and defaults only)
  uint32_t line = 0;        // 1-based line of the entry point
  std::size_t job = 0, jobs = 0;  // this job's index among the script's jobs, and their count
  struct FieldLine {
    std::string name;
    uint32_t line = 0;  // 1-based
    std::string detail;  // what the script says (`batch_size=args.batch_size (argparse ...)`)
    bool unknown = false;
  };
  std::vector<FieldLine> fields;  // every field read from (or blocked in) the script
};

struct EstimateReport {
  JobSpec job;
  bool compat_mode = false;  // numbers are the reference's (Part I), not preflight's
  Estimate estimate;
  RemediationPlan plan;
  CompatEstimate reference;
  std::vector<CompatDifference> differences;
  std::optional<ScriptOrigin> script;  // the job was read from a script
};

EstimateReport build_report(const JobSpec& job, const std::optional<Target>& target, bool compat_mode,
                            const RemediationOptions& options = {}, const Catalog& catalog = builtin_catalog());

/// `x.xx GiB` at or above 1 GiB, `N MiB` at or above 1 MiB, else `N KiB` / `N B` (§0).
std::string format_bytes(int64_t bytes);

/// The numbers a surface shows, from whichever model the report is in.
int64_t report_total(const EstimateReport& r);
int64_t report_low(const EstimateReport& r);
int64_t report_high(const EstimateReport& r);
Band report_band(const EstimateReport& r);

/// `peak 23.40 GiB (21.10 GiB–25.70 GiB)`: the projection alone, without target or verdict.
std::string peak_text(const EstimateReport& r);
/// `peak 23.40 GiB (21.10 GiB–25.70 GiB) on NVIDIA A100 80GB ✓ fits` (estimator.md §4).
std::string code_lens_title(const EstimateReport& r);
/// Breakdown table, sources, notes and the top remediations, as Markdown for a hover.
std::string hover_markdown(const EstimateReport& r, std::size_t remediation_limit = 3);
/// `--format json`: the reference tool's keys plus preflight's additions (README).
nlohmann::ordered_json report_json(const EstimateReport& r);

/// Every field of the job with its value and source, for "Read from" lines and JSON.
struct FieldView {
  std::string name;
  std::string value;
  Source source;
};
std::vector<FieldView> job_fields(const JobSpec& job);
std::string describe_source(const Source& s);

}  // namespace preflight::estimator
