// The calls of the functions of this file, read once per check, and the context facts a
// finding read through a routine's callers rests on.
//
// A rule that follows a parameter to every call of its routine (`criterion` in `def
// train(model, criterion, ...)`, TG005; a loss helper's `recon_x`, TG006) reads the callers'
// units, which read the routine, not the other way round: an incremental check that re-analyses
// the routine without them must see the difference. Every call read is therefore recorded as a
// context fact (rules/incremental.h; ARCHITECTURE.md, invariants), once per routine.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "analysis/findings.h"
#include "analysis/module_model.h"

namespace preflight::rules {

class LocalCallers {
 public:
  // `rule`: the code the facts are labelled with ("TG005").
  LocalCallers(const analysis::ModuleModel& model, std::string rule) : model_(model), rule_(std::move(rule)) {}

  // The calls that resolve to function `f` alone (analysis::local_callees), in source order;
  // the first read of each function records its calls as context facts.
  const std::vector<TSNode>& of(int f);

  // The facts recorded so far, appended to `facts` (from RuleCheck::context).
  void add_facts(std::vector<analysis::ContextFact>& facts) const;

 private:
  const analysis::ModuleModel& model_;
  std::string rule_;
  std::optional<std::unordered_map<int, std::vector<TSNode>>> by_function_;
  std::set<int> noted_;
  std::vector<analysis::ContextFact> facts_;
};

}  // namespace preflight::rules
