// THE rule table: one entry per rule, ordered by code. Adding a rule means adding its file
// and one line here; nothing registers itself.
#include "rules/registry.h"

#include <array>

#include "rules/explanations.h"
#include "rules/rule.h"

namespace preflight::rules {
namespace {

using analysis::Category;
using analysis::Severity;

constexpr std::array<RuleMeta, 3> kRules = {{
    {"TG001", "graph-retention", Severity::Error, Category::CriticalOom,
     "tensor kept with its autograd graph attached", kExplainTG001, true, &make_tg001},
    {"TG002", "missing-no-grad", Severity::Error, Category::CriticalOom,
     "evaluation runs the model with autograd on", kExplainTG002, true, &make_tg002},
    {"TG003", "missing-zero-grad", Severity::Error, Category::ConvergenceBug,
     "backward in a loop without zero_grad", kExplainTG003, false, &make_tg003},
}};

}  // namespace

std::span<const RuleMeta> all_rules() { return kRules; }

const RuleMeta* find_rule(std::string_view code) {
  for (const RuleMeta& r : kRules)
    if (r.code == code) return &r;
  return nullptr;
}

}  // namespace preflight::rules
