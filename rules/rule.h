// What a rule's check reads. Every fact is computed once per file before any rule runs.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/findings.h"
#include "analysis/module_model.h"
#include "analysis/project_index.h"
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
  std::string_view target_gpu;  // CheckOptions::target_gpu (TG010); empty: none
  // CheckOptions::project, when it holds files other than this one (project_path); else null.
  const analysis::ProjectIndex* project = nullptr;
  std::string_view project_path;
};

// A rule sees every node of the shared traversal (enter/leave, with scope and loop state),
// then reports. `finish` runs after the traversal, when reachability is complete.
class RuleCheck : public analysis::Visitor {
 public:
  virtual void finish(std::vector<analysis::Finding>& out) = 0;

  // Where the rule saw its pattern and stayed quiet on purpose (a framework does the work,
  // or the deciding part cannot be seen); collected by the engine after `finish`.
  std::vector<analysis::Silence> silences;

  // The file-wide facts this rule's findings rest on beyond what names connect (a unit's
  // findings are re-used after an edit only while these stay the same). A rule whose
  // findings read only their own unit and what it names reports none.
  virtual void context(std::vector<analysis::ContextFact>& /*out*/) const {}

 protected:
  static void note_context(std::vector<analysis::ContextFact>& out, std::string what, TSNode at) {
    if (!analysis::is_null(at)) out.push_back({std::move(what), analysis::range_of(at)});
  }

  void stay_silent(std::string_view code, TSNode anchor, std::string reason,
                   std::vector<analysis::EvidenceStep> evidence = {}) {
    silences.push_back({std::string(code), analysis::range_of(anchor), std::move(reason),
                        std::move(evidence)});
  }
};

// Rule factories, one per rule file (registered in registry.cpp).
std::unique_ptr<RuleCheck> make_tg001(const RuleContext& ctx);
std::unique_ptr<RuleCheck> make_tg002(const RuleContext& ctx);
std::unique_ptr<RuleCheck> make_tg003(const RuleContext& ctx);
std::unique_ptr<RuleCheck> make_tg004(const RuleContext& ctx);
std::unique_ptr<RuleCheck> make_tg012(const RuleContext& ctx);
std::unique_ptr<RuleCheck> make_tg005(const RuleContext& ctx);
std::unique_ptr<RuleCheck> make_tg006(const RuleContext& ctx);
std::unique_ptr<RuleCheck> make_tg007(const RuleContext& ctx);
std::unique_ptr<RuleCheck> make_tg008(const RuleContext& ctx);
std::unique_ptr<RuleCheck> make_tg010(const RuleContext& ctx);
std::unique_ptr<RuleCheck> make_tg013(const RuleContext& ctx);
std::unique_ptr<RuleCheck> make_tg011(const RuleContext& ctx);
std::unique_ptr<RuleCheck> make_tg014(const RuleContext& ctx);

// `x` in backticks, shortened to one line for messages.
std::string quote_code(std::string_view text, size_t max = 60);

}  // namespace preflight::rules
