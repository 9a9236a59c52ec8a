#include "rules/local_callers.h"

#include "analysis/local_calls.h"

namespace preflight::rules {

const std::vector<TSNode>& LocalCallers::of(int f) {
  static const std::vector<TSNode> kNone;
  if (!by_function_) {
    by_function_.emplace();
    model_.for_each_call_in(model_.root(), [&](TSNode call) {
      const std::vector<int>* fs = analysis::local_callees(model_, call);
      if (fs && fs->size() == 1) (*by_function_)[fs->front()].push_back(call);
    });
  }
  auto it = by_function_->find(f);
  const std::vector<TSNode>& calls = it == by_function_->end() ? kNone : it->second;
  if (noted_.insert(f).second)
    for (TSNode call : calls)
      facts_.push_back({rule_ + " caller of " + model_.functions()[f].name + "()", analysis::range_of(call)});
  return calls;
}

void LocalCallers::add_facts(std::vector<analysis::ContextFact>& facts) const {
  facts.insert(facts.end(), facts_.begin(), facts_.end());
}

}  // namespace preflight::rules
