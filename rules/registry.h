// Rule metadata and the registry: THE table of rules, one entry per rule, ordered by code.
#pragma once

#include <span>
#include <string_view>
#include <vector>

#include "analysis/findings.h"

namespace preflight::rules {

struct RuleContext;  // defined in rule.h; what a rule's check reads

using CheckFn = void (*)(const RuleContext&, std::vector<analysis::Finding>&);

struct RuleMeta {
  std::string_view code;      // "TG001"
  std::string_view slug;      // "graph-retention"
  analysis::Severity default_severity;
  analysis::Category category;
  std::string_view summary;      // one line
  std::string_view explanation;  // why it costs money, an example, the fix, the exemptions
  bool has_fix;
  CheckFn check;
};

std::span<const RuleMeta> all_rules();
const RuleMeta* find_rule(std::string_view code);

}  // namespace preflight::rules
