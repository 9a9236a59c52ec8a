// The module model: what one Python file binds and calls, read from its syntax tree.
// Scopes, functions, classes (with their `self.x` bindings), imports with aliases and the
// qualified names they give to calls, and the classification of a binding's value (is this
// name a model, a loss, an optimizer?). Built in one pass; immutable afterwards.
#pragma once

#include <tree_sitter/api.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "analysis/syntax.h"

namespace preflight::analysis {

enum class ScopeKind { Module, Class, Function, Lambda, Comprehension };

// What a binding's value is, as far as the right-hand side shows.
enum class ValueKind { Unknown, Model, Criterion, Optimizer, Scheduler, Literal, Other };

// One assignment to a name in a scope: `value` is the right-hand side; for tuple unpacking
// `position` is the target's index and `arity` the number of targets (else -1 / 1).
struct BindingSite {
  TSNode value{};
  int position = -1;
  int arity = 1;
};

struct Parameter {
  std::string name;
  TSNode node{};        // the identifier
  TSNode annotation{};  // `type` node, or null
};

struct FunctionInfo {
  std::string name;
  TSNode node{};        // function_definition
  TSNode outer{};       // decorated_definition when decorated, else the definition itself
  int scope = -1;       // the function's own scope
  int class_index = -1; // enclosing class when this is a method
  std::vector<Parameter> params;
  std::vector<TSNode> returns;  // return statements of this function (not of nested ones)
  bool calls_backward = false;  // a call whose leaf is `backward`, outside nested functions
  std::vector<TSNode> backward_calls;  // those calls, in source order
  // Differentiates without `.backward()`: `torch.autograd.grad(loss, params)`, outside nested
  // functions. Its forward needs autograd on, as a backward's does.
  bool calls_autograd_grad = false;
};

struct ClassInfo {
  std::string name;
  TSNode node{};
  std::vector<std::string> bases;  // qualified where imports make them known
  bool is_module = false;          // nn.Module / LightningModule / Sequential subclass
  bool is_lightning = false;       // LightningModule subclass (directly or via a local base)
  // `self.<attr> = value` anywhere in the class's methods.
  std::unordered_map<std::string, std::vector<BindingSite>> self_bindings;
};

struct Scope {
  ScopeKind kind = ScopeKind::Module;
  std::string name;
  TSNode node{};
  int parent = -1;
  int function = -1;     // index into functions() for Function/Lambda scopes
  int class_index = -1;  // for Class scopes
  std::unordered_map<std::string, std::vector<BindingSite>> bindings;
};

struct ImportBinding {
  std::string qualified;  // `nn` -> "torch.nn", `F` -> "torch.nn.functional"
  bool is_module = true;  // `import x` / `from a import b` (b may be a module or a name)
};

class ModuleModel {
 public:
  ModuleModel(TSNode root, std::string_view source);

  std::string_view source() const { return src_; }
  TSNode root() const { return root_; }
  // ts_node_parent(n), read from an index of the tree built with the model (syntax.h's
  // ParentIndex): rules walk up from calls many times per file.
  TSNode parent(TSNode n) const { return parents_.parent(n); }

  const std::vector<Scope>& scopes() const { return scopes_; }
  const std::vector<FunctionInfo>& functions() const { return functions_; }
  const std::vector<ClassInfo>& classes() const { return classes_; }

  // Scope index that `n` (a function/class/lambda/comprehension node) opens, or -1.
  int scope_opened_by(TSNode n) const;
  // The innermost scope whose body contains `n` (0, the module, at the top level).
  int scope_enclosing(TSNode n) const;
  // Function index for a function_definition node, or -1.
  int function_of(TSNode def) const;
  // Functions defined in this file under `name` (any nesting).
  const std::vector<int>* functions_named(std::string_view name) const;
  int class_named(std::string_view name) const;
  // The class whose method encloses scope `scope` (-1 if none).
  int enclosing_class(int scope) const;
  int enclosing_function(int scope) const;

  // Imports: the module alias table, keyed by local name.
  const ImportBinding* import_of(std::string_view local) const;
  bool has_torch_import() const { return has_torch_import_; }
  // The modules of `from M import *` statements, in source order: any name no other binding
  // explains may come from one of them.
  const std::vector<std::string>& star_imports() const { return star_imports_; }
  // The local name bound to the `torch` module itself (`torch`, or `th` for `import torch
  // as th`), or empty when no import binds it.
  const std::string& torch_alias() const { return torch_alias_; }
  // Some statement of the file imports torch, calls `.backward()`, or subclasses a torch
  // module: the file is torch code, so a loss-like name may be trusted as a last resort.
  bool touches_torch() const { return touches_torch_; }
  // Naming heuristics (a callee named `model`, a value named `loss`) are trusted only here:
  // the file touches torch, imports a torch-ecosystem package, or imports nothing at all
  // (a fragment). A file whose imports are all unrelated (sympy, botocore) is not torch code.
  // A file that imports JAX / Flax and nothing of torch is not torch code, whatever else it
  // imports (transformers ships Flax models).
  bool may_be_torch_code() const {
    return touches_torch_ || !has_imports_ || (ecosystem_import_ && !jax_import_ && !other_framework_import_);
  }
  // Another framework's program, which no rule is about: imports JAX / Flax and touches no
  // torch, or imports MXNet, TensorFlow, Keras, Paddle, MindSpore, OneFlow or Jittor and no
  // torch module outside a function (their `loss.backward()` and `autograd` are not torch's;
  // round 100: a Jittor test script imports torch only inside its checkpoint converter).
  bool is_other_framework_program() const {
    return (jax_import_ && !touches_torch_) || (other_framework_import_ && !torch_import_outside_functions_);
  }
  // `.backward()` calls of the module's top level (outside every function).
  const std::vector<TSNode>& module_backward_calls() const { return module_backward_calls_; }
  // Byte offset where a new top-level `import` line can go (after the last one).
  uint32_t import_insertion_offset() const { return import_insert_at_; }

  // `F.cross_entropy` -> "torch.nn.functional.cross_entropy"; names whose base is not an
  // import are returned as written; nullopt for non-dotted expressions.
  std::optional<std::string> qualified_name(TSNode expr) const;

  // What the rules ask of nearly every call, read once when the model is built: the callee
  // (`function` child), callee_leaf(call) and qualified_name(callee). `call` is a call node of
  // this model's tree; for any other node these answer as the free functions would.
  TSNode callee_of(TSNode call) const;
  std::string_view callee_leaf(TSNode call) const;
  // A view into the model (or its source), valid as long as the model is.
  std::optional<std::string_view> qualified_callee(TSNode call) const;
  // The value a chain of module-keeping methods starts from: `Net(...).to(device).eval()` ->
  // `Net(...)` (names::keeps_module); `v` itself (unparenthesized) when it is no such chain.
  TSNode module_chain_base(TSNode v) const;

  // Every call node inside `node` (itself included when it is a call), in preorder, read from
  // the call table: the calls of a subtree without walking it.
  template <typename Visit>
  void for_each_call_in(TSNode node, Visit&& visit) const {
    uint32_t begin = ts_node_start_byte(node), end = ts_node_end_byte(node);
    auto it = std::lower_bound(calls_.begin(), calls_.end(), begin,
                               [](const CallSite& c, uint32_t at) { return c.start < at; });
    for (; it != calls_.end() && it->start < end; ++it)
      if (ts_node_end_byte(it->node) <= end) visit(it->node);  // not `f(x)(y)` around `f(x)`
  }

  // Classification of a dotted name as seen from `scope`, reading its binding first.
  ValueKind kind_of(std::string_view dotted, int scope) const;
  ValueKind classify_value(TSNode value, int scope, int position = -1, int depth = 0) const;
  bool is_model(std::string_view dotted, int scope) const;
  // Every binding of `dotted` that makes it a model is a call of a class imported from the
  // project's own top-level `models` package (`from models.mtcnn import MTCNN`), which only
  // the import path names a model: a naming heuristic, and what its forward returns is not
  // seen. A library's `models` package (torchvision's, transformers') is not this.
  bool model_only_by_import_path(std::string_view dotted, int scope) const;
  bool is_criterion(std::string_view dotted, int scope) const;
  bool is_optimizer(std::string_view dotted, int scope) const;
  bool is_module_class(std::string_view name) const;
  // A pytest `test_*` function or a unittest.TestCase method: checks on tiny inputs, whose
  // memory and speed do not matter.
  bool is_test_function(int function) const;
  // A unittest.TestCase subclass, through local base classes.
  bool is_test_case(int cls) const;

  // Parameter declared in scope `scope`'s function, or null.
  const Parameter* parameter(std::string_view name, int scope) const;

  // The assignments of `dotted` visible from `scope`: those of the nearest scope that binds
  // it (class bodies do not enclose their methods); `self.x` is instance state, bound in any
  // method of the class. Null when nothing visible binds it. `found_in` receives the scope
  // whose bindings they are (the class's scope for instance state).
  const std::vector<BindingSite>* bindings_of(std::string_view dotted, int scope,
                                              int* found_in = nullptr) const;

 private:
  struct Builder;
  const std::vector<BindingSite>* lookup(std::string_view dotted, int scope, int* found_in) const;
  ValueKind kind_of_uncached(std::string_view dotted, int scope, int depth) const;
  ValueKind classify_call(TSNode call, int scope, int position, int depth) const;
  // CapWords with a lower-case letter: how PEP 8 names classes (`Model`, not `MAX` or `model`).
  static bool is_class_style_name(std::string_view name);
  ValueKind kind_from_annotation(TSNode annotation) const;

  // One row per call node, in preorder (so sorted by start byte; calls sharing a start, as in
  // `f(x)(y)`, are told apart by id). The qualified name lies in the source when it reads as
  // written there, else in `call_names_`.
  struct CallSite {
    TSNode node{};
    uint32_t start = 0;
    enum class Name : uint8_t { None, InSource, InNames } name = Name::None;
    uint32_t name_at = 0, name_size = 0;
    TSNode callee{};
    std::string_view leaf;
  };
  const CallSite* call_site(TSNode call) const;
  void index_call_names();

  TSNode root_;
  std::string_view src_;
  ParentIndex parents_;
  std::vector<CallSite> calls_;
  std::string call_names_;
  std::vector<Scope> scopes_;
  std::vector<FunctionInfo> functions_;
  std::vector<ClassInfo> classes_;
  std::unordered_map<const void*, int> scope_by_node_;
  std::unordered_map<const void*, int> function_by_node_;
  std::unordered_map<std::string, std::vector<int>> functions_by_name_;
  std::unordered_map<std::string, int> class_by_name_;
  std::unordered_map<std::string, ImportBinding> imports_;
  std::string torch_alias_;
  bool has_torch_import_ = false;
  std::vector<std::string> star_imports_;
  bool touches_torch_ = false;
  bool has_imports_ = false;
  std::vector<TSNode> module_backward_calls_;
  bool ecosystem_import_ = false;  // transformers, lightning, accelerate, timm, ...
  bool jax_import_ = false;        // jax, flax, optax
  bool torch_import_outside_functions_ = false;  // at module level or in a class body
  bool other_framework_import_ = false;  // mxnet, tensorflow, keras, paddle, mlx, ...
  uint32_t import_insert_at_ = 0;
};

}  // namespace preflight::analysis
