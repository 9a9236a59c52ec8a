// How the callers of a function in this file run it with respect to autograd: every call
// under no_grad / inference_mode (directly or through its own callers, up to four deep), some
// call provably with autograd on, or unknown (no caller here, the function passed on as a
// value, a method called on an object of unseen class). Whether a routine that never
// backwards runs with autograd on is a fact about its callers, so TG002 (evaluation without
// no_grad) and TG001 (graphs kept in a container) both rest their severity on this verdict.
// What a verdict reads outside the routine's own unit is reported as context facts.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "rules/rule.h"

namespace preflight::rules {

enum class CallerGrad {
  NoGrad,   // every call runs under no_grad / inference_mode (directly or through its caller)
  Grad,     // some call provably runs with autograd on
  Unknown,  // no caller here, the function escapes as a value, or a caller's own callers
            // cannot be seen
};

struct CallerVerdict {
  CallerGrad grad = CallerGrad::Unknown;
  TSNode witness{};    // Grad: the call with autograd on; Unknown: the unresolved step
  std::string why;     // Unknown: what cannot be seen
  std::vector<TSNode> no_grad_calls;  // the calls that run under no_grad
  // The other files of the project (analysis/project_index.h), read only when this file has
  // no call of the routine: NoGrad by their calls ("path:line"), or no call there either.
  std::vector<std::string> project_no_grad;
  bool uncalled_in_project = false;  // Unknown: no file of the project calls it

  static CallerVerdict of(CallerGrad grad, TSNode witness, std::string why = {}) {
    CallerVerdict v;
    v.grad = grad;
    v.witness = witness;
    v.why = std::move(why);
    return v;
  }
};

class CallerGradAnalysis {
 public:
  // `label` prefixes the context facts ("TG002 caller of f(): ...").
  CallerGradAnalysis(const RuleContext& ctx, std::string label);

  CallerVerdict verdict(int function);
  // Autograd is off where `n` runs: the provenance says so, or `n` sits in a lambda written
  // inside a no_grad / inference_mode block, whose body runs where it is called.
  bool no_grad_at(TSNode n) const;
  // The call provably runs `function`: a call by its name in this file, or `obj.f(...)` on an
  // object bound to an instance of f's class (`self.policy = ActorCritic(...).to(device)`).
  bool runs(TSNode call, int function) const;
  // For a NoGrad verdict: who runs it under no_grad (the callers in this file, or the calls
  // in the project's other files, matched by name), and the evidence, one step per call.
  std::string no_grad_callers(const CallerVerdict& v) const;
  std::vector<analysis::EvidenceStep> no_grad_evidence(int function, const CallerVerdict& v) const;
  // The context facts the verdicts so far read, sorted and without duplicates.
  void report(std::vector<analysis::ContextFact>& out) const;

 private:
  CallerVerdict verdict(int function, std::vector<int>& visiting);
  CallerVerdict read_callers(int function, std::vector<int>& visiting);
  CallerVerdict read_project(const analysis::FunctionInfo& fn, const std::string& about);
  bool instance_of(TSNode recv, int cls, TSNode at) const;
  TSNode escaping_reference(const analysis::FunctionInfo& fn) const;
  void note(std::string what, TSNode at);

  const RuleContext& ctx;
  const analysis::Kinds& k = analysis::kinds();
  std::string label_;
  std::unordered_map<int, CallerVerdict> verdicts_;
  std::vector<analysis::ContextFact> facts_;
};

}  // namespace preflight::rules
