// Rule metadata and the registry: THE table of rules, one entry per rule, ordered by code.
#pragma once

#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "analysis/findings.h"

namespace preflight::rules {

struct RuleContext;  // defined in rule.h; what a rule's check reads
class RuleCheck;     // defined in rule.h; a rule's visitor over the shared traversal

// Creates the rule's visitor for one file. All rules' visitors share one traversal.
using CheckFn = std::unique_ptr<RuleCheck> (*)(const RuleContext&);

// What a rule's fixes are, and so what `preflight check --fix` does with them (`explain`,
// docs/rules.md and `rules --format json` state it; a test over the fixtures holds each rule
// to its policy).
enum class FixPolicy {
  None,            // no fix is offered
  Safe,            // every fix offered is safe, so --fix applies it
  SafeWhenProven,  // safe (and applied by --fix) where proven safe at the site; elsewhere,
                   // and for alternatives, offered as unsafe in the editor only
  UnsafeOnly,      // offered as unsafe in the editor; --fix never applies it
};

struct RuleMeta {
  std::string_view code;      // "TG001"
  std::string_view slug;      // "graph-retention"
  analysis::Severity default_severity;
  analysis::Category category;
  std::string_view summary;      // one line
  std::string_view explanation;  // why it costs money, an example, the fix, the exemptions
  FixPolicy fix;
  CheckFn check;
};

std::span<const RuleMeta> all_rules();
const RuleMeta* find_rule(std::string_view code);

}  // namespace preflight::rules
