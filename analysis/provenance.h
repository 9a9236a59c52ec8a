// Graph provenance (rules.md §2.5, made flow-sensitive): which expressions carry a live
// autograd graph at the point where they are evaluated, and why.
//
// Every function (and the module's top level) is interpreted once as a unit, statement by
// statement in source order, with branches joined and loops iterated to a fixpoint. A value
// is Free (provably no graph: `.item()`, `len(...)`, a literal, anything computed under
// no_grad), Yes (a graph is shown: a forward pass, a loss, `requires_grad=True`, a name that
// is `.backward()`ed, or — flagged as naming-only — a loss-like name), or Unknown (nothing is
// shown either way; never reported). A later rebinding never changes what an earlier
// expression was (TG001-N14), and a grad-enabled rebinding after a no_grad one restores the
// graph (TG001-N18).
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "analysis/budget.h"
#include "analysis/findings.h"
#include "analysis/module_model.h"

namespace preflight::analysis {

enum class Graph : uint8_t { Free, Unknown, Yes };

// What a value is, as far as its bindings prove it. A graph is a property of tensors (and of
// containers of them) only, so `.detach()` is offered as a safe fix on `Tensor` alone.
enum class Type : uint8_t {
  Unknown,  // nothing proven: an unseen callee's result, a parameter
  Tensor,   // proven a tensor: a torch function or tensor method, a loss, a factory
  Tensors,  // holds tensors but is not proven one: a container literal, a model's output
            // (a tensor, a tuple or a ModelOutput), an attribute or element of one
  Number,   // a Python number, bool or string: `.item()`, `float()`, `len()`, `time.*`
  Array,    // a NumPy array: `.numpy()`, `np.*`
  Object,   // a constructed object: a module, an optimizer, a timer
};
std::string_view type_name(Type t);

// An immutable linked chain of evidence: cheap to share between values.
struct EvidenceNode {
  ByteRange range;
  std::string message;
  std::shared_ptr<const EvidenceNode> prev;
};
using EvidencePtr = std::shared_ptr<const EvidenceNode>;

struct Value {
  Graph graph = Graph::Unknown;
  bool naming_only = false;  // graph-ness rests on a naming heuristic alone
  EvidencePtr why;           // for Yes: how the graph got here (most recent step first)
  Type type = Type::Unknown;
  EvidencePtr consumed;      // set when a backward already ran over this graph
  // For Yes: the step of `why` that rests on a heuristic rather than a binding (a model
  // known only by its name, a criterion named like one); null when every step is proven.
  // Severity follows it: a finding built on a weak step is at most a warning.
  EvidencePtr weak;
  // The weak step's message when it is the guess that every element of an unseen callee's
  // tuple carries its graph (`loss, score = criterion(out, y)`): rules read it to tell that
  // guess from the others.
  static constexpr std::string_view kGuessedElement = "each element of ";
  bool weak_is_guessed_element() const { return weak && weak->message.starts_with(kGuessedElement); }
  // A tuple of known length returned by a function of this file (`return loss, n, state`):
  // its elements, so that `a, b, c = result` later gives each target its own value, not the
  // whole tuple's graph. Null when the shape is not known.
  std::shared_ptr<const std::vector<Value>> parts;
  // For Yes: the value is a leaf tensor itself (`t.detach().requires_grad_()`,
  // `torch.zeros(n, requires_grad=True)`), or a container of nothing but leaves. A leaf
  // records operations done with it later but holds no graph of its own, so keeping it
  // retains nothing (TG001-NX41, round 12: torchrec's pipelined embeddings). Any operation on
  // it makes a non-leaf: only names, containers, the creating call and a device or dtype copy
  // (one copy node, no saved activation) keep the flag.
  bool leaf = false;

  static Value free(Type t = Type::Unknown) { return {Graph::Free, false, nullptr, t, nullptr, nullptr, nullptr}; }
  static Value unknown(Type t = Type::Unknown) { return {Graph::Unknown, false, nullptr, t, nullptr, nullptr, nullptr}; }
  static Value graph_of(EvidencePtr why, Type type, bool naming_only = false) {
    EvidencePtr weak = naming_only ? why : nullptr;
    return {Graph::Yes, naming_only, std::move(why), type, nullptr, std::move(weak), nullptr};
  }
  bool has_graph() const { return graph == Graph::Yes; }
  bool tensor() const { return type == Type::Tensor; }
  // Every step that made this value graph-carrying is read from bindings.
  bool proven() const { return has_graph() && !naming_only && !weak; }
};

Value join(const Value& a, const Value& b);

// Oldest step first, at most `limit` steps (the most recent ones).
std::vector<EvidenceStep> evidence_steps(const EvidencePtr& chain, size_t limit = 6);

class Provenance {
 public:
  // `interrupt`, when given, is polled before each function or module body is interpreted.
  explicit Provenance(const ModuleModel& model, const Interrupt* interrupt = nullptr);
  ~Provenance();
  Provenance(const Provenance&) = delete;
  Provenance& operator=(const Provenance&) = delete;

  // Value of an expression as evaluated at its position (null if never evaluated, e.g.
  // inside a lambda body).
  const Value* value_of(TSNode expr) const;
  // True when the statement or expression was evaluated with autograd disabled: inside
  // `with torch.no_grad()` / `inference_mode()` / `set_grad_enabled(False)`, a decorated
  // function, or after a statement-level `torch.set_grad_enabled(False)`.
  bool in_no_grad(TSNode n) const;
  // Join of what a local function returns (Free when it returns nothing).
  Value return_value(int function) const;
  // For a forward call on a module whose parameters were all frozen earlier in the unit
  // (`G.requires_grad_(False)`, a loop setting `p.requires_grad = False` over
  // `G.parameters()` / `G.named_parameters()`): the freezing statement; null otherwise.
  TSNode freezing_of(TSNode forward) const;
  // For an argument of a call that is a bare name of a module frozen earlier in the unit
  // (as above; `evaluate(loader, model)` after `model.requires_grad_(False)`): the freezing
  // statement; null otherwise. Lets a routine's callers show its model frozen (TG002-NX50).
  TSNode freezing_of_argument(TSNode argument) const;

 private:
  struct Interpreter;
  friend struct Interpreter;
  struct Summary {
    bool done = false;
    bool in_progress = false;
    bool has_return = false;
    Value joined = Value::free();
    int tuple_arity = -1;  // >= 0 when every return but `None` is a tuple literal of this length
    bool shaped = false;   // a return other than `None` has set tuple_arity
    std::vector<Value> elements;
    std::unordered_map<std::string, Value> bound;  // join of everything bound in the unit
  };
  Summary& analyze_unit(int scope);

  const ModuleModel& model_;
  const Interrupt* interrupt_;
  std::unordered_map<const void*, Value> values_;
  std::unordered_set<const void*> no_grad_;
  std::unordered_map<const void*, TSNode> frozen_forwards_;
  std::unordered_map<const void*, TSNode> frozen_arguments_;
  std::vector<Summary> summaries_;  // by scope index
};

}  // namespace preflight::analysis
