#include "server/cli/rule_catalogue.h"

#include <algorithm>
#include <cctype>
#include <vector>

#include "rules/registry.h"

namespace preflight::server {
namespace {

constexpr std::string_view kUnusedSummary = "suppression comment that silences nothing";

constexpr std::string_view kUnusedExplanation =
    "A `# noqa: TG003`, `# preflight: ignore[TG003]` or `# torch-preflight: ignore[TG003]`\n"
    "comment that no longer matches a finding on its lines. Suppressions outlive the code\n"
    "they were written for: once the bug is fixed or the code moves, the stale comment keeps\n"
    "silencing whatever the rule would find there next, so a real leak can land unseen.\n"
    "\n"
    "Reported only with `preflight check --report-unused-ignores`, at warning level (gate on\n"
    "it with `--fail-on warning`; re-level it with `[severity] PF100 = \"error\"`). One\n"
    "finding per unused code, so `# noqa: TG001, TG003` where only TG001 fires reports TG003.\n"
    "\n"
    "Fix: delete the comment, or the unused code from its list.\n"
    "\n"
    "Not reported: a bare `# noqa` (it may serve flake8 or ruff as well), codes that are not\n"
    "preflight's (`# noqa: E501`), and codes of rules that did not run (`--select`, `ignore`).\n"
    "A blanket `# preflight: ignore` that silences nothing is reported with an empty code.\n";

std::vector<RuleInfo> build_catalogue() {
  std::vector<RuleInfo> out;
  for (const rules::RuleMeta& r : rules::all_rules())
    out.push_back({r.code, r.slug, r.default_severity, analysis::category_name(r.category),
                   r.summary, r.explanation, r.fix});
  out.push_back({kUnusedSuppressionCode, "unused-suppression", analysis::Severity::Warning,
                 kSuppressionCategory, kUnusedSummary, kUnusedExplanation,
                 rules::FixPolicy::None});
  return out;
}

}  // namespace

std::span<const RuleInfo> rule_catalogue() {
  static const std::vector<RuleInfo> catalogue = build_catalogue();
  return catalogue;
}

std::size_t rule_index(std::string_view code, std::span<const RuleInfo> rules) {
  auto it =
      std::find_if(rules.begin(), rules.end(), [&](const RuleInfo& r) { return r.code == code; });
  return static_cast<std::size_t>(it - rules.begin());
}

const RuleInfo* find_rule_info(std::string_view code, std::span<const RuleInfo> rules) {
  std::size_t i = rule_index(code, rules);
  return i < rules.size() ? &rules[i] : nullptr;
}

std::string_view category_label(const analysis::Finding& finding) {
  if (finding.code == kUnusedSuppressionCode) return kSuppressionCategory;
  return analysis::category_name(finding.category);
}

std::string rule_help_uri(std::string_view code) {
  if (kInformationUri.empty()) return {};
  std::string anchor(code);
  for (char& c : anchor) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::string base(kInformationUri);
  if (base.ends_with('/')) base.pop_back();
  return base + "/docs/rules.md#" + anchor;
}

}  // namespace preflight::server
