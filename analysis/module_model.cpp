#include "analysis/module_model.h"

#include <algorithm>
#include <cctype>

#include "analysis/names.h"

namespace preflight::analysis {

using names::contains;
using names::lower;

// One recursive pass over the tree. Depth is bounded by the engine (deeply nested files are
// refused before any analysis), so plain recursion is safe here.
struct ModuleModel::Builder {
  ModuleModel& m;
  const Kinds& k = kinds();
  bool importing_in_function_ = false;  // the import statement being read sits in a function

  int open_scope(ScopeKind kind, std::string name, TSNode node, int parent) {
    Scope s;
    s.kind = kind;
    s.name = std::move(name);
    s.node = node;
    s.parent = parent;
    m.scopes_.push_back(std::move(s));
    int idx = static_cast<int>(m.scopes_.size()) - 1;
    m.scope_by_node_[node_id(node)] = idx;
    return idx;
  }

  std::string text(TSNode n) const { return std::string(text_of(n, m.src_)); }

  void walk(TSNode n, int scope) {
    TSSymbol s = sym(n);
    if (s == k.function_definition) return on_function(n, scope);
    if (s == k.class_definition) return on_class(n, scope);
    if (s == k.lambda) return walk_children(n, open_scope(ScopeKind::Lambda, "<lambda>", n, scope));
    if (s == k.list_comprehension || s == k.set_comprehension ||
        s == k.dictionary_comprehension || s == k.generator_expression)
      return walk_children(n, open_scope(ScopeKind::Comprehension, "<comp>", n, scope));
    if (s == k.assignment) on_assignment(n, scope);
    else if (s == k.named_expression) bind(field(n, k.f_name), field(n, k.f_value), scope, -1, 1);
    else if (s == k.import_statement || s == k.import_from_statement) on_import(n, scope);
    else if (s == k.call) on_call(n, scope);
    else if (s == k.return_statement) on_return(n, scope);
    walk_children(n, scope);
  }

  void walk_children(TSNode n, int scope) {
    for_each_named_child(n, [&](TSNode c) { walk(c, scope); });
  }

  void on_function(TSNode n, int scope) {
    FunctionInfo f;
    f.name = text(field(n, k.f_name));
    f.node = n;
    TSNode parent = m.parent(n);
    f.outer = is(parent, k.decorated_definition) ? parent : n;
    int own = open_scope(ScopeKind::Function, f.name, n, scope);
    f.scope = own;
    if (m.scopes_[scope].kind == ScopeKind::Class) f.class_index = m.scopes_[scope].class_index;
    collect_params(field(n, k.f_parameters), f.params);
    int idx = static_cast<int>(m.functions_.size());
    m.scopes_[own].function = idx;
    m.function_by_node_[node_id(n)] = idx;
    m.functions_by_name_[f.name].push_back(idx);
    m.functions_.push_back(std::move(f));
    // Every child is walked, so every call of the file is met (the call table relies on it):
    // parameters (default values) and body in the function's scope, the rest (return
    // annotation, type parameters) in the enclosing one.
    TSNode params = field(n, k.f_parameters), body = field(n, k.f_body);
    for_each_named_child(n, [&](TSNode c) {
      if (ts_node_eq(c, params)) walk_children(c, own);
      else walk(c, ts_node_eq(c, body) ? own : scope);
    });
  }

  void collect_params(TSNode params, std::vector<Parameter>& out) {
    uint32_t count = ts_node_named_child_count(params);
    for (uint32_t i = 0; i < count; ++i) {
      TSNode p = ts_node_named_child(params, i);
      Parameter param;
      TSSymbol s = sym(p);
      if (s == k.identifier) {
        param.node = p;
      } else if (s == k.default_parameter || s == k.typed_default_parameter) {
        param.node = field(p, k.f_name);
        param.annotation = field(p, k.f_type);
      } else if (s == k.typed_parameter) {
        param.node = ts_node_named_child(p, 0);
        param.annotation = field(p, k.f_type);
      } else {
        continue;  // *args, **kwargs, separators
      }
      if (!is(param.node, k.identifier)) continue;
      param.name = text(param.node);
      out.push_back(std::move(param));
    }
  }

  void on_class(TSNode n, int scope) {
    ClassInfo c;
    c.name = text(field(n, k.f_name));
    c.node = n;
    TSNode supers = field(n, k.f_superclasses);
    uint32_t count = is_null(supers) ? 0 : ts_node_named_child_count(supers);
    for (uint32_t i = 0; i < count; ++i) {
      TSNode b = ts_node_named_child(supers, i);
      if (auto q = m.qualified_name(b)) c.bases.push_back(*q);
    }
    int idx = static_cast<int>(m.classes_.size());
    m.class_by_name_[c.name] = idx;
    m.classes_.push_back(std::move(c));
    int own = open_scope(ScopeKind::Class, m.classes_[idx].name, n, scope);
    m.scopes_[own].class_index = idx;
    // Superclasses (`class A(make_base()):`) are evaluated in the enclosing scope.
    TSNode body = field(n, k.f_body);
    for_each_named_child(n, [&](TSNode child) { walk(child, ts_node_eq(child, body) ? own : scope); });
  }

  void on_assignment(TSNode n, int scope) {
    TSNode value = field(n, k.f_right);
    while (is(value, k.assignment)) value = field(value, k.f_right);  // a = b = v
    for (TSNode a = n; is(a, k.assignment); a = field(a, k.f_right))
      bind_targets(field(a, k.f_left), value, scope);
  }

  void bind_targets(TSNode target, TSNode value, int scope) {
    TSSymbol s = sym(target);
    if (s == k.pattern_list || s == k.tuple_pattern || s == k.list_pattern || s == k.tuple ||
        s == k.list) {
      uint32_t count = ts_node_named_child_count(target);
      for (uint32_t i = 0; i < count; ++i)
        bind(ts_node_named_child(target, i), value, scope, static_cast<int>(i),
             static_cast<int>(count));
      return;
    }
    bind(target, value, scope, -1, 1);
  }

  void bind(TSNode target, TSNode value, int scope, int position, int arity) {
    auto name = dotted_name(target, m.src_);
    if (!name) return;
    BindingSite site{value, position, arity};
    m.scopes_[scope].bindings[*name].push_back(site);
    if (name->starts_with("self.") && name->find('.', 5) == std::string::npos) {
      int cls = m.enclosing_class(scope);
      if (cls >= 0) m.classes_[cls].self_bindings[name->substr(5)].push_back(site);
    }
  }

  void on_import(TSNode n, int scope) {
    bool top_level = m.scopes_[scope].kind == ScopeKind::Module &&
                     is(m.parent(n), k.module);
    if (top_level) m.import_insert_at_ = line_end_after(ts_node_end_byte(n));
    importing_in_function_ = m.enclosing_function(scope) >= 0;
    if (sym(n) == k.import_statement) return on_plain_import(n);
    TSNode module = field(n, k.f_module_name);
    std::string mod = text(module);
    note_module(mod);
    uint32_t count = ts_node_named_child_count(n);
    for (uint32_t i = 0; i < count; ++i) {
      TSNode c = ts_node_named_child(n, i);
      if (ts_node_eq(c, module)) continue;
      if (is(c, k.dotted_name)) {
        std::string nm = text(c);
        m.imports_[nm] = {mod + "." + nm, false};
      } else if (is(c, k.aliased_import)) {
        std::string nm = text(field(c, k.f_name));
        m.imports_[text(field(c, k.f_alias))] = {mod + "." + nm, false};
      } else if (is(c, k.wildcard_import)) {
        m.star_imports_.push_back(mod);
      }
    }
  }

  void on_plain_import(TSNode n) {
    uint32_t count = ts_node_named_child_count(n);
    for (uint32_t i = 0; i < count; ++i) {
      TSNode c = ts_node_named_child(n, i);
      if (is(c, k.dotted_name)) {
        std::string mod = text(c);
        note_module(mod);
        std::string first = mod.substr(0, mod.find('.'));
        m.imports_[first] = {first, true};  // `import torch.nn` binds `torch`
        if (first == "torch") m.torch_alias_ = "torch";
      } else if (is(c, k.aliased_import)) {
        std::string mod = text(field(c, k.f_name));
        std::string alias = text(field(c, k.f_alias));
        note_module(mod);
        m.imports_[alias] = {mod, true};
        if (mod == "torch" && m.torch_alias_.empty()) m.torch_alias_ = alias;
      }
    }
  }

  void note_module(std::string_view mod) {
    m.has_imports_ = true;
    if (mod == "torch" || mod.starts_with("torch.")) {
      m.has_torch_import_ = true;
      if (!importing_in_function_) m.torch_import_outside_functions_ = true;
      m.touches_torch_ = true;
    }
    static constexpr std::string_view kEcosystem[] = {
        "transformers", "lightning", "pytorch_lightning", "accelerate", "timm", "deepspeed",
        "diffusers", "peft", "torchvision", "torchaudio", "torchtext", "torchtune", "trl",
        "fairscale", "apex", "bitsandbytes", "torchmetrics", "sentence_transformers", "fairseq",
        "mmcv", "mmengine", "detectron2", "megatron", "einops", "functorch", "torchrl"};
    std::string_view first = mod.substr(0, mod.find('.'));
    for (auto e : kEcosystem)
      if (first == e) m.ecosystem_import_ = true;
    // A JAX / Flax program imports transformers too (its Flax models), and runs no torch.
    if (first == "jax" || first == "flax" || first == "optax") m.jax_import_ = true;
    static constexpr std::string_view kOtherFrameworks[] = {
        "mxnet", "tensorflow", "keras", "paddle", "mindspore", "oneflow", "jittor", "chainer", "mlx"};
    for (auto f : kOtherFrameworks)
      if (first == f) m.other_framework_import_ = true;
  }

  uint32_t line_end_after(uint32_t offset) const {
    while (offset < m.src_.size() && m.src_[offset] != '\n') ++offset;
    return offset < m.src_.size() ? offset + 1 : offset;
  }

  void on_call(TSNode n, int scope) {
    CallSite site;
    site.node = n;
    site.start = ts_node_start_byte(n);
    site.callee = field(n, k.f_function);
    site.leaf = analysis::callee_leaf(n, m.src_);
    m.calls_.push_back(site);
    if (site.leaf == "grad" && is_autograd_grad(site.callee)) {
      if (int f = m.enclosing_function(scope); f >= 0) m.functions_[f].calls_autograd_grad = true;
    }
    if (site.leaf != "backward") return;
    m.touches_torch_ = true;
    int f = m.enclosing_function(scope);
    // Nested functions are separate units: only the innermost function is marked.
    if (f >= 0) {
      m.functions_[f].calls_backward = true;
      m.functions_[f].backward_calls.push_back(n);
    } else {
      m.module_backward_calls_.push_back(n);
    }
  }

  // `autograd.grad` / `torch.autograd.grad`, or `grad` imported from `torch.autograd`. Imports
  // after the call are not seen yet: the spelling with `autograd` covers them.
  bool is_autograd_grad(TSNode callee) const {
    if (is(callee, k.attribute)) {
      std::string_view obj = text_of(field(callee, k.f_object), m.src_);
      return obj == "autograd" || obj.ends_with(".autograd");
    }
    const ImportBinding* b = m.import_of(text_of(callee, m.src_));
    return b && b->qualified == "torch.autograd.grad";
  }

  void on_return(TSNode n, int scope) {
    int f = m.enclosing_function(scope);
    if (f >= 0) m.functions_[f].returns.push_back(n);
  }

  void finish_classes() {
    // Resolve module-ness through local base classes: iterate to a fixpoint.
    for (bool changed = true; changed;) {
      changed = false;
      for (ClassInfo& c : m.classes_) {
        for (const std::string& b : c.bases) {
          std::string leaf = b.substr(b.rfind('.') + 1);
          bool module = leaf.ends_with("Module") || leaf.starts_with("Module") ||
                        leaf == "Sequential" || contains(leaf, "PreTrainedModel");
          bool lightning = contains(b, "LightningModule");
          auto it = m.class_by_name_.find(leaf);
          if (it != m.class_by_name_.end() && &m.classes_[it->second] != &c) {
            module = module || m.classes_[it->second].is_module;
            lightning = lightning || m.classes_[it->second].is_lightning;
          }
          if (module && !c.is_module) c.is_module = changed = true;
          if (lightning && !c.is_lightning) c.is_lightning = changed = true;
        }
      }
    }
    for (const ClassInfo& c : m.classes_)
      if (c.is_module) m.touches_torch_ = true;
  }
};

ModuleModel::ModuleModel(TSNode root, std::string_view source) : root_(root), src_(source), parents_(root) {
  Builder b{*this};
  int module = b.open_scope(ScopeKind::Module, "<module>", root, -1);
  b.walk_children(root, module);
  b.finish_classes();
  index_call_names();
}

// After the walk, so that an import below its first use still names the call.
void ModuleModel::index_call_names() {
  // The walk is in preorder, so this is a check; the lookup's binary search needs the order.
  auto by_start = [](const CallSite& a, const CallSite& b) { return a.start < b.start; };
  if (!std::is_sorted(calls_.begin(), calls_.end(), by_start)) std::stable_sort(calls_.begin(), calls_.end(), by_start);
  for (CallSite& c : calls_) {
    auto q = qualified_name(c.callee);
    if (!q) continue;
    std::string_view written = text_of(c.callee, src_);
    if (*q == written) {
      c.name = CallSite::Name::InSource;
      c.name_at = ts_node_start_byte(c.callee);
    } else {
      c.name = CallSite::Name::InNames;
      c.name_at = static_cast<uint32_t>(call_names_.size());
      call_names_ += *q;
    }
    c.name_size = static_cast<uint32_t>(q->size());
  }
}

const ModuleModel::CallSite* ModuleModel::call_site(TSNode call) const {
  if (is_null(call)) return nullptr;
  uint32_t start = ts_node_start_byte(call);
  auto it = std::lower_bound(calls_.begin(), calls_.end(), start,
                             [](const CallSite& c, uint32_t at) { return c.start < at; });
  for (; it != calls_.end() && it->start == start; ++it)
    if (it->node.id == call.id) return &*it;
  return nullptr;
}

TSNode ModuleModel::callee_of(TSNode call) const {
  const CallSite* c = call_site(call);
  return c ? c->callee : field(call, kinds().f_function);
}

TSNode ModuleModel::module_chain_base(TSNode v) const {
  const Kinds& k = kinds();
  v = unparenthesize(v);
  while (is(v, k.call) && is(callee_of(v), k.attribute) &&
         names::keeps_module(text_of(field(callee_of(v), k.f_attribute), src_)))
    v = unparenthesize(field(callee_of(v), k.f_object));
  return v;
}

std::string_view ModuleModel::callee_leaf(TSNode call) const {
  const CallSite* c = call_site(call);
  return c ? c->leaf : analysis::callee_leaf(call, src_);
}

std::optional<std::string_view> ModuleModel::qualified_callee(TSNode call) const {
  const CallSite* c = call_site(call);
  if (!c) {
    // Not a call of this tree (the builder meets every one): only a name read as written
    // can be answered with a view, and for anything but a call there is none.
    TSNode callee = field(call, kinds().f_function);
    auto q = qualified_name(callee);
    if (q && *q == text_of(callee, src_)) return text_of(callee, src_);
    return std::nullopt;
  }
  switch (c->name) {
    case CallSite::Name::None: return std::nullopt;
    case CallSite::Name::InSource: return src_.substr(c->name_at, c->name_size);
    case CallSite::Name::InNames: return std::string_view(call_names_).substr(c->name_at, c->name_size);
  }
  return std::nullopt;
}

int ModuleModel::scope_opened_by(TSNode n) const {
  auto it = scope_by_node_.find(node_id(n));
  return it == scope_by_node_.end() ? -1 : it->second;
}

int ModuleModel::scope_enclosing(TSNode n) const {
  for (TSNode p = is_null(n) ? TSNode{} : parent(n); !is_null(p); p = parent(p))
    if (int s = scope_opened_by(p); s >= 0) return s;
  return 0;
}

int ModuleModel::function_of(TSNode def) const {
  auto it = function_by_node_.find(node_id(def));
  return it == function_by_node_.end() ? -1 : it->second;
}

const std::vector<int>* ModuleModel::functions_named(std::string_view name) const {
  auto it = functions_by_name_.find(std::string(name));
  return it == functions_by_name_.end() ? nullptr : &it->second;
}

int ModuleModel::class_named(std::string_view name) const {
  auto it = class_by_name_.find(std::string(name));
  return it == class_by_name_.end() ? -1 : it->second;
}

int ModuleModel::enclosing_class(int scope) const {
  for (int s = scope; s >= 0; s = scopes_[s].parent) {
    if (scopes_[s].kind == ScopeKind::Class) return scopes_[s].class_index;
    if (scopes_[s].kind == ScopeKind::Function && s != scope) {
      // A method's class is its direct parent; a function nested in a method still sees
      // `self` of the method.
      continue;
    }
  }
  return -1;
}

int ModuleModel::enclosing_function(int scope) const {
  // Lambdas and comprehensions belong to the function that contains them.
  for (int s = scope; s >= 0; s = scopes_[s].parent)
    if (scopes_[s].kind == ScopeKind::Function) return scopes_[s].function;
  return -1;
}

const ImportBinding* ModuleModel::import_of(std::string_view local) const {
  auto it = imports_.find(std::string(local));
  return it == imports_.end() ? nullptr : &it->second;
}

std::optional<std::string> ModuleModel::qualified_name(TSNode expr) const {
  auto dotted = dotted_name(expr, src_);
  if (!dotted) return std::nullopt;
  size_t dot = dotted->find('.');
  std::string first = dotted->substr(0, dot);
  const ImportBinding* imp = import_of(first);
  if (!imp) return dotted;
  return dot == std::string::npos ? imp->qualified : imp->qualified + dotted->substr(dot);
}

const std::vector<BindingSite>* ModuleModel::lookup(std::string_view dotted, int scope,
                                                    int* found_in) const {
  std::string key(dotted);
  for (int s = scope; s >= 0; s = scopes_[s].parent) {
    if (scopes_[s].kind == ScopeKind::Class && s != scope) continue;  // class bodies don't nest
    auto it = scopes_[s].bindings.find(key);
    if (it != scopes_[s].bindings.end()) {
      if (found_in) *found_in = s;
      return &it->second;
    }
  }
  return nullptr;
}

const std::vector<BindingSite>* ModuleModel::bindings_of(std::string_view dotted, int scope,
                                                         int* found_in) const {
  if (dotted.starts_with("self.") && dotted.find('.', 5) == std::string_view::npos) {
    int cls = enclosing_class(scope);
    if (cls < 0) return nullptr;
    auto it = classes_[cls].self_bindings.find(std::string(dotted.substr(5)));
    if (it == classes_[cls].self_bindings.end()) return nullptr;
    if (found_in) *found_in = scope_opened_by(classes_[cls].node);
    return &it->second;
  }
  return lookup(dotted, scope, found_in);
}

const Parameter* ModuleModel::parameter(std::string_view name, int scope) const {
  for (int s = scope; s >= 0; s = scopes_[s].parent) {
    if (scopes_[s].bindings.count(std::string(name))) return nullptr;  // shadowed
    int f = scopes_[s].kind == ScopeKind::Function ? scopes_[s].function : -1;
    if (f < 0) continue;
    for (const Parameter& p : functions_[f].params)
      if (p.name == name) return &p;
  }
  return nullptr;
}

bool ModuleModel::is_test_function(int function) const {
  const FunctionInfo& f = functions_[function];
  if (f.name.starts_with("test_")) return true;
  // `def _test_run_detectors(self, cfgs)`: a helper a TestCase mixes in (round 18:
  // maskrcnn-benchmark), seen by its unittest assertions on `self`.
  if (f.name.starts_with("_test")) {
    bool asserts = false;
    for_each_call_in(f.node, [&](TSNode call) {
      auto callee = dotted_name(field(call, kinds().f_function), src_);
      asserts = asserts || (callee && (callee->starts_with("self.assert") || *callee == "self.subTest"));
    });
    if (asserts) return true;
  }
  return f.class_index >= 0 && is_test_case(f.class_index);
}

bool ModuleModel::is_test_case(int cls) const {
  // Follow local base classes: `class T(Base)` with `class Base(unittest.TestCase)`.
  for (int hops = 0; cls >= 0 && hops < 16; ++hops) {
    int next = -1;
    for (const std::string& base : classes_[cls].bases) {
      if (base.ends_with("TestCase")) return true;
      int local = class_named(base.substr(base.rfind('.') + 1));
      if (local >= 0 && local != cls) next = local;
    }
    cls = next;
  }
  return false;
}

bool ModuleModel::is_module_class(std::string_view name) const {
  int c = class_named(name);
  return c >= 0 && classes_[c].is_module;
}

ValueKind ModuleModel::kind_of(std::string_view dotted, int scope) const {
  return kind_of_uncached(dotted, scope, 0);
}

ValueKind ModuleModel::kind_of_uncached(std::string_view dotted, int scope, int depth) const {
  if (depth > 8) return ValueKind::Unknown;
  // Several bindings: a definite kind (model, loss, optimizer, scheduler) wins, then an
  // unrecognised value (which leaves the naming fallback open), then a known non-model;
  // a `None` placeholder says nothing.
  auto rank = [](ValueKind v) {
    switch (v) {
      case ValueKind::Model: return 5;
      case ValueKind::Criterion: case ValueKind::Optimizer: case ValueKind::Scheduler: return 4;
      case ValueKind::Unknown: return 3;
      case ValueKind::Other: return 2;
      case ValueKind::Literal: return 1;
    }
    return 0;
  };
  ValueKind best = ValueKind::Unknown;
  bool seen = false;
  auto consider = [&](const std::vector<BindingSite>& sites, int in_scope) {
    for (const BindingSite& b : sites) {
      if (is(unparenthesize(b.value), kinds().none)) continue;
      ValueKind v = classify_value(b.value, in_scope, b.arity > 1 ? b.position : -1, depth + 1);
      if (!seen || rank(v) > rank(best)) best = v;
      seen = true;
      if (best == ValueKind::Model) return;
    }
  };
  int found = -1;
  if (const auto* sites = lookup(dotted, scope, &found)) consider(*sites, found);
  if (best == ValueKind::Unknown && dotted.starts_with("self.") &&
      dotted.find('.', 5) == std::string_view::npos) {
    int cls = enclosing_class(scope);
    if (cls >= 0) {
      auto it = classes_[cls].self_bindings.find(std::string(dotted.substr(5)));
      if (it != classes_[cls].self_bindings.end()) {
        int cls_scope = scope_opened_by(classes_[cls].node);
        consider(it->second, cls_scope);
      }
    }
  }
  if (best == ValueKind::Unknown && dotted.find('.') == std::string_view::npos) {
    // `def run(m: nn.Module): m = m.to(device)`: the annotation still tells what `m` is.
    int f = enclosing_function(scope);
    if (f >= 0)
      for (const Parameter& p : functions_[f].params)
        if (p.name == dotted && !is_null(p.annotation)) best = kind_from_annotation(p.annotation);
    // `Model: nn.Module` with `model = Model(envs)`: a CapWords parameter (PEP 8's class
    // style) annotated as a module is a class the code calls to build one; the annotation
    // left out `type[...]`. Read as an instance, construction would pass for a forward pass.
    // (A naming heuristic, and one that only ever withholds a finding.)
    if (best == ValueKind::Model && is_class_style_name(dotted)) best = ValueKind::Other;
  }
  return best;
}

bool ModuleModel::is_class_style_name(std::string_view name) {
  bool lower = std::any_of(name.begin(), name.end(), [](char c) { return c >= 'a' && c <= 'z'; });
  return !name.empty() && name.front() >= 'A' && name.front() <= 'Z' && lower;
}

ValueKind ModuleModel::kind_from_annotation(TSNode annotation) const {
  std::string_view t = text_of(annotation, src_);
  // `Type[nn.Module]`, `Callable[..., nn.Module]`: a factory, not an instance.
  if (contains(t, "Type[") || contains(t, "type[") || contains(t, "Callable")) return ValueKind::Other;
  // `Union[str, nn.Module]`, `str | nn.Module`: a module on some calls only, not a proof.
  if (contains(t, "Union[") || contains(t, "|")) {
    std::string_view inner = t;
    if (auto open = inner.find("Union["); open != std::string_view::npos) inner = inner.substr(open + 6);
    size_t start = 0;
    while (start <= inner.size()) {
      size_t end = inner.find_first_of(",|]", start);
      std::string_view member = inner.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
      while (!member.empty() && member.front() == ' ') member.remove_prefix(1);
      while (!member.empty() && member.back() == ' ') member.remove_suffix(1);
      if (!member.empty() && member != "None" && !contains(member, "Module") && !contains(member, "PreTrainedModel"))
        return ValueKind::Unknown;
      if (end == std::string_view::npos) break;
      start = end + 1;
    }
  }
  if (contains(t, "Module") || contains(t, "PreTrainedModel")) return ValueKind::Model;
  if (contains(t, "Optimizer")) return ValueKind::Optimizer;
  std::string leaf(t.substr(t.rfind('.') == std::string_view::npos ? 0 : t.rfind('.') + 1));
  if (is_module_class(leaf)) return ValueKind::Model;
  return ValueKind::Unknown;
}

ValueKind ModuleModel::classify_value(TSNode value, int scope, int position, int depth) const {
  const Kinds& k = kinds();
  value = unparenthesize(value);
  if (is_null(value) || depth > 8) return ValueKind::Unknown;
  TSSymbol s = sym(value);
  if (s == k.call) return classify_call(value, scope, position, depth);
  if (s == k.string || s == k.integer || s == k.float_ || s == k.true_ || s == k.false_ ||
      s == k.none || s == k.concatenated_string)
    return ValueKind::Literal;
  if ((s == k.tuple || s == k.list || s == k.expression_list) && position >= 0) {
    if (position < static_cast<int>(ts_node_named_child_count(value)))
      return classify_value(ts_node_named_child(value, position), scope, -1, depth + 1);
    return ValueKind::Unknown;
  }
  if (s == k.identifier || s == k.attribute) {
    auto q = qualified_name(value);
    if (q) {
      std::string_view leaf = std::string_view(*q).substr(q->rfind('.') + 1);
      if (names::is_functional_loss(leaf)) return ValueKind::Criterion;  // loss_fn = F.mse_loss
      if (auto d = dotted_name(value, src_)) return kind_of_uncached(*d, scope, depth + 1);
    }
  }
  if (s == k.lambda || s == k.list || s == k.dictionary || s == k.set || s == k.tuple ||
      s == k.list_comprehension || s == k.dictionary_comprehension || s == k.binary_operator)
    return ValueKind::Other;  // functions, containers and arithmetic are not model instances
  return ValueKind::Unknown;
}

// `torchvision.models.resnet50`, `models.detection.fasterrcnn_resnet50_fpn`,
// `transformers.models.llama.modeling_llama.LlamaForCausalLM`: what a `models` package exports
// at most two levels down, or from a `modeling*` module, builds a model (a naming heuristic on
// the import path). Deeper helpers of such packages are other things (round 21:
// `transformers.models.whisper.english_normalizer.EnglishTextNormalizer`; round 14:
// `pl_bolts.models.rl.common.agents.PolicyAgent`).
static bool from_a_models_package(std::string_view qual) {
  size_t at = qual.starts_with("models.") ? 0 : qual.find(".models.");
  if (at == std::string_view::npos) return false;
  std::string_view rest = qual.substr(at == 0 ? 7 : at + 8);
  size_t dots = static_cast<size_t>(std::count(rest.begin(), rest.end(), '.'));
  if (dots <= 1) return true;
  std::string_view module = rest.substr(0, rest.rfind('.'));
  module = module.substr(module.rfind('.') == std::string_view::npos ? 0 : module.rfind('.') + 1);
  return module.starts_with("modeling");
}

// Method chains that return their receiver: `Net().to(device)`, `model.cuda().eval()`.
static bool returns_its_receiver(std::string_view leaf) {
  static constexpr std::string_view kChain[] = {"to",    "cuda",     "cpu",    "half",  "float",
                                                "bfloat16", "double", "train", "eval", "requires_grad_"};
  return std::find(std::begin(kChain), std::end(kChain), leaf) != std::end(kChain);
}

ValueKind ModuleModel::classify_call(TSNode call, int scope, int position, int depth) const {
  const Kinds& k = kinds();
  TSNode callee = callee_of(call);
  std::string_view leaf = callee_leaf(call);
  std::string_view qual = qualified_callee(call).value_or(std::string_view());
  std::string low = lower(qual);
  if (leaf.empty()) return ValueKind::Unknown;
  if (is(callee, k.attribute) && returns_its_receiver(leaf))
    return classify_value(field(callee, k.f_object), scope, -1, depth + 1);
  if (low.find("scheduler") != std::string::npos || leaf.ends_with("LR") ||
      contains(low, "lr_scheduler") || contains(lower(leaf), "schedule"))
    return ValueKind::Scheduler;
  if (names::is_not_a_model_callee(low)) return ValueKind::Other;
  if (leaf.ends_with("Loss")) return ValueKind::Criterion;
  if (names::is_optimizer_class(leaf) || leaf == "create_optimizer" ||
      leaf == "build_optimizer" || leaf == "get_optimizer" ||
      (contains(qual, "optim.") && !leaf.empty() && std::isupper(static_cast<unsigned char>(leaf[0]))))
    return ValueKind::Optimizer;
  TSNode receiver = is(callee, k.attribute) ? field(callee, k.f_object) : TSNode{};
  std::string recv_low = lower(text_of(receiver, src_));
  if ((leaf == "prepare" || leaf == "prepare_model") &&
      (contains(recv_low, "accel") || contains(recv_low, "fabric"))) {
    // Each target gets the kind of the argument in its position; a single wrapped object
    // whose kind cannot be seen is taken to be the model (TG002-P06).
    TSNode arg = positional_arg(call, position >= 0 ? static_cast<unsigned>(position) : 0);
    if (is_null(arg)) return ValueKind::Unknown;
    ValueKind kind = classify_value(arg, scope, -1, depth + 1);
    if (kind != ValueKind::Unknown && kind != ValueKind::Other) return kind;
    if (auto d = dotted_name(arg, src_)) {
      std::string_view last = std::string_view(*d).substr(d->rfind('.') + 1);
      if (names::is_model_name(last)) return ValueKind::Model;
      if (names::is_optimizer_receiver_name(lower(last))) return ValueKind::Optimizer;
    }
    return position < 0 ? ValueKind::Model : kind;
  }
  if (leaf == "initialize" && contains(low, "deepspeed"))
    return position <= 0 ? ValueKind::Model : position == 1 ? ValueKind::Optimizer : ValueKind::Other;
  if (leaf == "deepcopy") return classify_value(positional_arg(call, 0), scope, -1, depth + 1);
  if (leaf == "compile") {
    // `torch.compile(fn)` compiles a function just as readily as a module: what comes back
    // is what went in. A name defined by a `def` in this file is a function, not a model.
    TSNode arg = positional_arg(call, 0);
    if (is(arg, k.identifier) && functions_named(text_of(arg, src_))) return ValueKind::Other;
    ValueKind kind = is_null(arg) ? ValueKind::Unknown : classify_value(arg, scope, -1, depth + 1);
    return kind == ValueKind::Unknown ? ValueKind::Model : kind;
  }
  // `model, tokenizer = X.from_pretrained(...)`, `model, processors, _ =
  // lavis.models.load_model_and_preprocess(...)`: the first target is the model by
  // convention; what the others are is not shown (a tokenizer, a preprocessing transform, a
  // config, loading info).
  if ((leaf == "from_pretrained" || contains(qual, "models.")) && position >= 1) return ValueKind::Unknown;
  if (names::is_model_wrapper(leaf) || is_module_class(leaf)) return ValueKind::Model;
  bool torch_nn = low.starts_with("torch.nn.") || low.starts_with("nn.");
  if (leaf.starts_with("Parameter") || leaf == "Buffer") return ValueKind::Other;  // tensors
  if (torch_nn && !names::is_functional_loss(leaf) &&
      std::isupper(static_cast<unsigned char>(leaf[0])))
    return ValueKind::Model;
  // `DIFFUSION, NETWORK = get_models_class(...)` (round 80: ddae): a callee named for a class
  // lookup hands back classes; calling one builds a model, it is no forward pass. A naming
  // step, only for callees this file does not define (a local function's body is its binding).
  // (`Classifier(...)`, `BertForSequenceClassification(...)` build models: "classif" is not a
  // lookup.)
  if (std::string l = lower(leaf); contains(l, "class") && !contains(l, "classif") && !functions_named(leaf))
    return ValueKind::Other;
  if (from_a_models_package(qual) || qual.ends_with(".from_pretrained")) return ValueKind::Model;
  // `partial(...)` builds a factory and a lambda is a function: neither is a model instance.
  if (leaf == "partial") return ValueKind::Other;
  return ValueKind::Unknown;  // an unrecognised call may still build a model: names decide
}

using names::last_segment;

bool ModuleModel::model_only_by_import_path(std::string_view dotted, int scope) const {
  int found = -1;
  const std::vector<BindingSite>* sites = lookup(dotted, scope, &found);
  if (!sites) return false;
  bool any = false;
  for (const BindingSite& b : *sites) {
    TSNode v = unparenthesize(b.value);
    if (is_null(v) || classify_value(v, found, b.arity > 1 ? b.position : -1) != ValueKind::Model) continue;
    while (is(v, kinds().call) && is(callee_of(v), kinds().attribute) && returns_its_receiver(callee_leaf(v)))
      v = unparenthesize(field(callee_of(v), kinds().f_object));  // `MTCNN(...).to(device)`
    if (!is(v, kinds().call)) return false;
    // The project's own `models` package (`from models.mtcnn import MTCNN`); a library's
    // (`torchvision.models.resnet18`, `transformers.models...`) builds known modules.
    std::string_view leaf = callee_leaf(v);
    std::string_view qual = qualified_callee(v).value_or(std::string_view());
    if (!qual.starts_with("models.") || !from_a_models_package(qual) || names::is_model_wrapper(leaf) ||
        is_module_class(leaf) || qual.ends_with(".from_pretrained"))
      return false;
    any = true;
  }
  return any;
}

bool ModuleModel::is_model(std::string_view dotted, int scope) const {
  ValueKind k = kind_of(dotted, scope);
  if (k == ValueKind::Model) return true;
  if (k != ValueKind::Unknown) return false;  // the binding says what it is
  return may_be_torch_code() && names::is_model_name(last_segment(dotted));  // naming fallback
}

bool ModuleModel::is_criterion(std::string_view dotted, int scope) const {
  ValueKind k = kind_of(dotted, scope);
  if (k == ValueKind::Criterion) return true;
  if (k == ValueKind::Model || k == ValueKind::Optimizer || k == ValueKind::Literal) return false;
  return may_be_torch_code() && names::is_criterion_name(last_segment(dotted));
}

bool ModuleModel::is_optimizer(std::string_view dotted, int scope) const {
  ValueKind k = kind_of(dotted, scope);
  if (k == ValueKind::Optimizer) return true;
  if (k == ValueKind::Scheduler || k == ValueKind::Model || k == ValueKind::Criterion) return false;
  return may_be_torch_code() && names::is_optimizer_receiver_name(lower(last_segment(dotted)));
}

}  // namespace preflight::analysis
