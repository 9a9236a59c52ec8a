// A syntactic walk in source order that keeps the scope and loop stacks rules ask about
// (rules.md §2.3). Children are visited after their parent's `enter` and before its `leave`.
#pragma once

#include <span>
#include <string>
#include <unordered_set>
#include <vector>

#include "analysis/budget.h"
#include "analysis/module_model.h"

namespace preflight::analysis {

struct LoopFrame {
  TSNode node{};             // for_statement / while_statement
  TSNode iterable{};         // the `for` iterable, looking through enumerate/tqdm/zip/...
  std::unordered_set<std::string> bound;  // names bound in this loop so far (source order)
};

struct WalkState {
  int scope = 0;                 // innermost scope
  std::vector<LoopFrame> loops;  // loops of the current function, outermost first
  const LoopFrame* innermost_loop() const { return loops.empty() ? nullptr : &loops.back(); }
};

class Visitor {
 public:
  virtual ~Visitor() = default;
  virtual void enter(TSNode /*n*/, const WalkState& /*state*/) {}
  virtual void leave(TSNode /*n*/, const WalkState& /*state*/) {}
};

// One traversal feeding every visitor, in order, at each node.
// `interrupt`, when given, is polled before each top-level statement and each def.
void walk(const ModuleModel& model, std::span<Visitor* const> visitors,
          const Interrupt* interrupt = nullptr);
inline void walk(const ModuleModel& model, Visitor& visitor) {
  Visitor* one[] = {&visitor};
  walk(model, one);
}

// The iterables a `for` really iterates, looking through wrappers: `enumerate(tqdm(val_dl))`
// -> [val_dl]; `zip(a, b)` -> [a, b].
std::vector<TSNode> unwrap_iterables(TSNode iterable, std::string_view src);

// Does the subtree contain a call whose leaf is `leaf`? Nested functions included.
bool contains_call(TSNode n, std::string_view leaf, std::string_view src);

}  // namespace preflight::analysis
