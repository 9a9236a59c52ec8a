// What a callee is bound to, read from the module model: shared by the rules that judge a
// call by the constructor or function a name holds (TG005, TG006) rather than by its name.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "analysis/module_model.h"

namespace preflight::rules {

struct ResolvedCallable {
  bool bound = false;  // some binding was found
  std::string leaf;    // the callable it holds (`CrossEntropyLoss`, `cross_entropy`), or empty
  TSNode site{};       // the value that says so
};

class CallableBinding {
 public:
  explicit CallableBinding(const analysis::ModuleModel& model) : model_(model) {}

  // Assignments of `dotted` seen from `scope` (ModuleModel::bindings_of, copied so a caller
  // may fall back to class_attribute_bindings); `self.x` is bound in any method of the class
  // (TG005-N07, TG006-N06).
  std::vector<analysis::BindingSite> bindings_of(std::string_view dotted, int scope) const;

  // `obj.attr` on something other than self: the `self.attr = ...` bindings of the file's
  // classes, when the receiver's own class cannot be seen (`head.act(h)`, TG005-N08).
  std::vector<analysis::BindingSite> class_attribute_bindings(std::string_view attr) const;

  // The callable a value holds: `nn.CrossEntropyLoss().to(dev)` -> CrossEntropyLoss,
  // `F.cross_entropy` -> cross_entropy; follows a name to its own binding.
  std::string callable_leaf(TSNode value, int scope, int depth) const;

  // What a callee is bound to. Several bindings must agree, or the result is "bound to
  // something unknown" (empty leaf).
  ResolvedCallable resolve(TSNode callee, int scope, int depth = 0) const;

  // The callable a loss-like call applies: the functional's own name when the callee is one
  // of `functionals` (unless a function of this file shadows it), the class of an inline
  // constructor `nn.XLoss()(...)`, or what the callee is bound to; empty when none is seen.
  // `site` receives the binding that says so (null for the functional). A constructor call
  // itself (`nn.CrossEntropyLoss(w)`) is not matched: its positional argument is a weight.
  std::string applied_callable(TSNode call, int scope,
                               std::initializer_list<std::string_view> functionals,
                               TSNode* site) const;

 private:
  struct ResolveKey {
    std::string dotted;
    int scope;
    int depth;
    bool operator==(const ResolveKey&) const = default;
  };
  struct ResolveKeyHash {
    size_t operator()(const ResolveKey& k) const {
      return std::hash<std::string>()(k.dotted) ^ (std::hash<int>()(k.scope) * 31 + std::hash<int>()(k.depth));
    }
  };

  ResolvedCallable resolve_uncached(TSNode callee, const std::string& dotted, int scope, int depth) const;

  const analysis::ModuleModel& model_;
  // resolve() memo: bounded by the file's distinct (callee text, scope) pairs.
  mutable std::unordered_map<ResolveKey, ResolvedCallable, ResolveKeyHash> resolved_;
};

}  // namespace preflight::rules
