// Every code the CLI can report, as the CLI presents it: the engine's registered rules, in
// registry order, followed by the CLI's own pseudo-rule PF100 (a suppression comment that
// silences nothing, reported with --report-unused-ignores). `rules`, `explain`, SARIF's
// tool.driver.rules and docs/rules.md all read this list, so they cannot disagree.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "analysis/findings.h"
#include "rules/registry.h"

namespace preflight::server {

inline constexpr std::string_view kUnusedSuppressionCode = "PF100";
inline constexpr std::string_view kSuppressionCategory = "SUPPRESSION";

struct RuleInfo {
  std::string_view code;
  std::string_view slug;
  analysis::Severity default_severity;
  std::string_view category;  // "CRITICAL_OOM", ..., or "SUPPRESSION" for PF100
  std::string_view summary;
  std::string_view explanation;
  rules::FixPolicy fix;
};

std::span<const RuleInfo> rule_catalogue();
// Lookups by exact (upper-case) code, in the catalogue or in another list of rules (the
// report writers take the list as a parameter so tests can pin it).
const RuleInfo* find_rule_info(std::string_view code,
                               std::span<const RuleInfo> rules = rule_catalogue());
// Position in `rules`, or rules.size() when absent.
std::size_t rule_index(std::string_view code, std::span<const RuleInfo> rules = rule_catalogue());

// The category a finding is shown with: PF100 findings are not about training code.
std::string_view category_label(const analysis::Finding& finding);

// Stable documentation address of a rule: a section of docs/rules.md in the repository.
// The project has no public home yet, so no remote link is invented: the base URL of the
// published rule documentation is a build option (`-DPREFLIGHT_PUBLIC_URL=...`), empty by
// default, and with it empty nothing links anywhere (the documentation travels with the
// tool: `preflight explain`, docs/rules.md).
#ifndef PREFLIGHT_PUBLIC_URL
#define PREFLIGHT_PUBLIC_URL ""
#endif
inline constexpr std::string_view kInformationUri = PREFLIGHT_PUBLIC_URL;
// `<base>/docs/rules.md#tg001`, or empty when no public base URL was configured.
std::string rule_help_uri(std::string_view code);

}  // namespace preflight::server
