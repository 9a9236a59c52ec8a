// What a rule's check reads. Every fact is computed once per file before any rule runs.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "analysis/findings.h"
#include "analysis/module_model.h"
#include "analysis/provenance.h"
#include "analysis/reachability.h"
#include "analysis/syntax.h"
#include "analysis/walker.h"
#include "rules/registry.h"

namespace preflight::rules {

struct RuleContext {
  std::string_view source;
  TSNode root;
  const analysis::ModuleModel& model;
  const analysis::Provenance& provenance;
  const analysis::Reachability& reachability;
};

// Rule check entry points, one per rule file (registered in registry.cpp).
void check_tg001(const RuleContext& ctx, std::vector<analysis::Finding>& out);
void check_tg002(const RuleContext& ctx, std::vector<analysis::Finding>& out);
void check_tg003(const RuleContext& ctx, std::vector<analysis::Finding>& out);

// `x` in backticks, shortened to one line for messages.
std::string quote_code(std::string_view text, size_t max = 60);

}  // namespace preflight::rules
