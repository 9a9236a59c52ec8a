// Does a later backward (or a caller, through a return) need the contents of a holder?
// (rules.md §2.11, with preflight's corrections.) Names flow into the names they are
// assigned to (and a holder from what is appended to it); the reachable set is what backward
// arguments (`.backward()`, `torch.autograd.grad`) and differentiable returns transitively
// read. An attribute path is read from its object (`out.loss` from `out`). Within a class,
// `self.m(args)` flows the arguments into m's parameters and m's returns into `self.m`.
//
// Keys: `self.x...` is keyed file-wide (instance state is written in one method and read in
// another); any other name is keyed to its innermost function.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "analysis/module_model.h"
#include "analysis/provenance.h"
#include "analysis/walker.h"

namespace preflight::analysis {

class Reachability {
 public:
  // Two phases, so the engine can feed the collector from the same traversal as the rules:
  // walk with `collector()`, then `finalize()` before any query.
  Reachability(const ModuleModel& model, const Provenance& prov);
  ~Reachability();
  Visitor& collector();
  void finalize();

  std::string key(std::string_view dotted, int scope) const;
  // Keys read by an expression: identifiers, maximal dotted paths, subscripted containers.
  std::vector<std::string> reads(TSNode expr, int scope) const;

  // Load-bearing: reachable from a backward, a differentiable return, or a bare return of
  // something that is not a container holder. `container_holders` are keys of holders filled
  // by append/subscript stores (their bare return is not evidence of a deferred backward,
  // TG001-P02); a returned `+=` accumulator is (TG001-P15).
  // With `via_returns` false only backward seeds count: a graph already consumed in the
  // same iteration cannot be backwarded again by a caller.
  bool load_bearing(const std::string& holder,
                    const std::unordered_set<std::string>& container_holders,
                    bool via_returns) const;

  // The first backward (in source order) whose inputs flow from `key`, in any unit; null if
  // none. What makes a module-level holder load-bearing from another function.
  TSNode backward_reaching(const std::string& key) const;

  // A backward call inside [region) of function scope `scope` whose inputs flow from any of
  // `keys`; returns that call (null node if none).
  TSNode backward_needing(ByteRange region, int scope, const std::vector<std::string>& keys) const;

 private:
  struct Backward {
    TSNode call;
    int function_scope;
    std::unordered_set<std::string> closure;
  };
  struct Builder;
  // The names a function, lambda or comprehension scope binds itself, and those it declares
  // `global` (computed once per scope, on first use by `key`).
  struct LocalNames {
    std::unordered_set<std::string> bound;
    std::unordered_set<std::string> global;
  };
  bool bound_in_functions(const std::string& name, int scope) const;
  const LocalNames& local_names(int scope) const;
  mutable std::unordered_map<int, LocalNames> local_names_;
  static std::string owner_key(const std::string& key);
  void close_over(std::unordered_set<std::string>& set, std::vector<std::string> frontier) const;
  int unit_of(int scope) const;

  const ModuleModel& model_;
  const Provenance& prov_;
  std::unordered_map<std::string, std::vector<std::string>> flows_from_;  // target -> sources
  std::vector<std::string> backward_seeds_, return_seeds_;
  // Bare `return name`; `from_module` when returned by a method of an nn.Module subclass,
  // whose outputs (intermediate features, dicts of heads) feed the caller's loss.
  struct BareReturn {
    std::string key;
    bool from_module;
  };
  std::vector<BareReturn> bare_returns_;
  std::unordered_set<std::string> reachable_backward_, reachable_return_;
  std::vector<Backward> backwards_;
  std::unique_ptr<Builder> builder_;  // last: it reads the members above when constructed
};

}  // namespace preflight::analysis
