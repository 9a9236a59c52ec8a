#include "analysis/reachability.h"

#include "analysis/walker.h"

namespace preflight::analysis {

int Reachability::unit_of(int scope) const {
  int f = model_.enclosing_function(scope);
  return f >= 0 ? model_.functions()[f].scope : 0;
}

// A name is keyed by the unit that binds it: a function's own names (parameters, assignment,
// loop, `with`/`except` and augmented targets) by the function, as before; a name the function
// only reads or mutates that the module binds (`critic_net.saved_values.append(v)` in `train()`,
// read by `update()`'s backward, round 34) by the module, so every function naming that object
// shares one key. Names no scope binds (imports, builtins) stay keyed by the function.
std::string Reachability::key(std::string_view dotted, int scope) const {
  if (dotted.starts_with("self.")) return std::string(dotted);
  int unit = unit_of(scope);
  if (unit != 0) {
    std::string root(dotted.substr(0, dotted.find('.')));
    if (model_.scopes()[0].bindings.count(root) && !bound_in_functions(root, scope)) unit = 0;
  }
  return std::to_string(unit) + ":" + std::string(dotted);
}

// True when a function, lambda or comprehension scope around `scope` binds `name` (and does
// not declare it `global`).
bool Reachability::bound_in_functions(const std::string& name, int scope) const {
  const std::vector<Scope>& scopes = model_.scopes();
  for (int s = scope; s > 0; s = scopes[s].parent) {
    if (scopes[s].kind == ScopeKind::Class) continue;
    const LocalNames& names = local_names(s);
    if (names.global.count(name)) return false;
    if (names.bound.count(name)) return true;
  }
  return false;
}

const Reachability::LocalNames& Reachability::local_names(int scope) const {
  auto [it, fresh] = local_names_.try_emplace(scope);
  if (!fresh) return it->second;
  LocalNames& out = it->second;
  const Kinds& k = kinds();
  const Scope& sc = model_.scopes()[scope];
  std::string_view src = model_.source();
  for (const auto& [bound, sites] : sc.bindings) out.bound.insert(bound.substr(0, bound.find('.')));
  if (sc.function >= 0)
    for (const Parameter& p : model_.functions()[sc.function].params) out.bound.insert(p.name);
  auto add_identifiers = [&](auto&& self, TSNode n) -> void {
    if (is_null(n)) return;
    if (is(n, k.identifier)) {
      out.bound.insert(std::string(text_of(n, src)));
      return;
    }
    if (is(n, k.attribute) || is(n, k.subscript)) return;  // stores through an object bind nothing
    for_each_named_child(n, [&](TSNode c) { self(self, c); });
  };
  auto walk = [&](auto&& self, TSNode n) -> void {
    TSSymbol s = sym(n);
    if (!ts_node_eq(n, sc.node) &&
        (s == k.function_definition || s == k.class_definition || s == k.lambda || s == k.list_comprehension ||
         s == k.set_comprehension || s == k.dictionary_comprehension || s == k.generator_expression))
      return;
    if (s == k.for_statement || s == k.for_in_clause) add_identifiers(add_identifiers, field(n, k.f_left));
    else if (s == k.augmented_assignment) add_identifiers(add_identifiers, field(n, k.f_left));
    else if (s == k.as_pattern_target) add_identifiers(add_identifiers, n);
    else if (s == k.global_statement || s == k.nonlocal_statement)
      for_each_named_child(n, [&](TSNode c) {
        if (is(c, k.identifier)) (s == k.global_statement ? out.global : out.bound).insert(std::string(text_of(c, src)));
      });
    for_each_named_child(n, [&](TSNode c) { self(self, c); });
  };
  if (!is_null(sc.node)) walk(walk, sc.node);
  for (const std::string& g : out.global) out.bound.erase(g);
  return out;
}

std::vector<std::string> Reachability::reads(TSNode expr, int scope) const {
  const Kinds& k = kinds();
  std::vector<std::string> out;
  std::string_view src = model_.source();
  auto visit = [&](auto&& self, TSNode n) -> void {
    if (is_null(n)) return;
    TSSymbol s = sym(n);
    if (s == k.identifier || s == k.attribute) {
      if (auto d = dotted_name(n, src)) {
        out.push_back(key(*d, scope));
        return;
      }
    }
    if (s == k.subscript) {
      if (auto d = dotted_name(field(n, k.f_value), src)) out.push_back(key(*d, scope));
    }
    if (s == k.keyword_argument) return self(self, field(n, k.f_value));
    if (s == k.string || s == k.integer || s == k.float_ || s == k.comment) return;
    if (s == k.call && is(field(n, k.f_function), k.attribute)) {
      // `x.flatten(1)` reads `x` as well as the method path.
      TSNode callee = field(n, k.f_function);
      if (auto d = dotted_name(callee, src)) out.push_back(key(*d, scope));
      self(self, field(callee, k.f_object));
      return self(self, field(n, k.f_arguments));
    }
    for_each_named_child(n, [&](TSNode c) { self(self, c); });
  };
  visit(visit, expr);
  return out;
}

struct Reachability::Builder : Visitor {
  Reachability& r;
  const Kinds& k = kinds();
  std::string_view src;
  explicit Builder(Reachability& reach) : r(reach), src(reach.model_.source()) {}

  void flow(TSNode target, TSNode value, int scope) {
    TSSymbol s = sym(target);
    if (s == k.pattern_list || s == k.tuple_pattern || s == k.list_pattern || s == k.tuple ||
        s == k.list) {
      uint32_t n = ts_node_named_child_count(target);
      for (uint32_t i = 0; i < n; ++i) flow(ts_node_named_child(target, i), value, scope);
      return;
    }
    if (s == k.subscript) target = field(target, k.f_value);  // c[k] = v flows into c
    auto d = dotted_name(target, src);
    if (!d) return;
    auto& sources = r.flows_from_[r.key(*d, scope)];
    for (auto& key : r.reads(value, scope)) sources.push_back(std::move(key));
  }

  void enter(TSNode n, const WalkState& st) override {
    TSSymbol s = sym(n);
    if (s == k.assignment) {
      TSNode value = field(n, k.f_right);
      while (is(value, k.assignment)) value = field(value, k.f_right);
      flow(field(n, k.f_left), value, st.scope);
    } else if (s == k.augmented_assignment) {
      flow(field(n, k.f_left), field(n, k.f_right), st.scope);
    } else if (s == k.for_statement) {
      flow(field(n, k.f_left), field(n, k.f_right), st.scope);
    } else if (s == k.call) {
      on_call(n, st.scope);
    } else if (s == k.return_statement) {
      on_method_return(ts_node_named_child(n, 0), st.scope);
      on_return(ts_node_named_child(n, 0), st.scope);
    }
  }

  // `holder.append(v)` (and its family) puts `v` into `holder` as surely as `holder[i] = v`:
  // a return that reads the holder reads what was appended (tiles concatenated and returned).
  void on_store_call(TSNode call, int scope) {
    TSNode callee = field(call, k.f_function);
    if (!is(callee, k.attribute)) return;
    std::string_view method = text_of(field(callee, k.f_attribute), src);
    if (method != "append" && method != "extend" && method != "insert" && method != "add") return;
    if (!is(r.model_.parent(call), k.expression_statement)) return;
    flow(field(callee, k.f_object), field(call, k.f_arguments), scope);
  }

  // `self.helper(a, b)`: the arguments flow into the helper's parameters, so a backward on a
  // parameter inside the helper reaches what the caller passed (a latent update step).
  void on_method_call(TSNode call, int scope) {
    TSNode callee = field(call, k.f_function);
    if (!is(callee, k.attribute) || text_of(field(callee, k.f_object), src) != "self") return;
    int caller_class = r.model_.enclosing_class(scope);
    const std::vector<int>* named = r.model_.functions_named(text_of(field(callee, k.f_attribute), src));
    if (caller_class < 0 || !named) return;
    for (int f : *named) {
      const FunctionInfo& fn = r.model_.functions()[f];
      if (fn.class_index != caller_class) continue;
      size_t skip = !fn.params.empty() && (fn.params[0].name == "self" || fn.params[0].name == "cls");
      TSNode args = field(call, k.f_arguments);
      uint32_t n = ts_node_named_child_count(args);
      for (uint32_t i = 0, position = 0; i < n; ++i) {
        TSNode a = ts_node_named_child(args, i);
        const Parameter* p = nullptr;
        if (is(a, k.keyword_argument)) {
          std::string_view name = text_of(field(a, k.f_name), src);
          for (const Parameter& q : fn.params)
            if (q.name == name) p = &q;
        } else if (skip + position < fn.params.size()) {
          p = &fn.params[skip + position++];
        }
        if (!p) continue;
        auto& sources = r.flows_from_[r.key(p->name, fn.scope)];
        for (auto& key : r.reads(a, scope)) sources.push_back(std::move(key));
      }
    }
  }

  // `torch.autograd.grad(outputs, inputs)` differentiates `outputs` like `outputs.backward()`.
  bool is_autograd_grad(TSNode call) const {
    auto dotted = dotted_name(field(call, k.f_function), src);
    return dotted && (*dotted == "autograd.grad" || dotted->ends_with(".autograd.grad"));
  }

  void on_call(TSNode call, int scope) {
    on_store_call(call, scope);
    on_method_call(call, scope);
    std::vector<std::string> seeds;
    if (is_autograd_grad(call)) {
      TSNode outputs = keyword_arg(call, "outputs", src);
      for (auto& key : r.reads(is_null(outputs) ? positional_arg(call, 0) : outputs, scope)) seeds.push_back(key);
    } else {
      if (callee_leaf(call, src).find("backward") == std::string_view::npos) return;
      TSNode callee = field(call, k.f_function);
      if (is(callee, k.attribute))
        for (auto& key : r.reads(field(callee, k.f_object), scope)) seeds.push_back(key);
      for (auto& key : r.reads(field(call, k.f_arguments), scope)) seeds.push_back(key);
    }
    r.backward_seeds_.insert(r.backward_seeds_.end(), seeds.begin(), seeds.end());
    Backward b{call, r.unit_of(scope), {}};
    r.backwards_.push_back(std::move(b));
    pending_.push_back(std::move(seeds));
  }

  // What a method returns flows into `self.<method>`, the key its callers' `self.m(...)`
  // reads: a caller that backwards the result reaches the method's holders.
  void on_method_return(TSNode e, int scope) {
    int f = r.model_.enclosing_function(scope);
    if (f < 0 || r.model_.functions()[f].class_index < 0 || is_null(e) || is(e, k.comment)) return;
    auto& sources = r.flows_from_["self." + r.model_.functions()[f].name];
    for (auto& key : r.reads(e, scope)) sources.push_back(std::move(key));
  }

  void on_return(TSNode e, int scope) {
    e = unparenthesize(e);
    if (is_null(e) || is(e, k.comment)) return;
    if (is(e, k.expression_list) || is(e, k.tuple) || is(e, k.list)) {
      uint32_t n = ts_node_named_child_count(e);
      for (uint32_t i = 0; i < n; ++i) on_return(ts_node_named_child(e, i), scope);
      return;
    }
    if (auto d = dotted_name(e, src)) {
      int f = r.model_.enclosing_function(scope);
      int cls = f >= 0 ? r.model_.functions()[f].class_index : -1;
      bool from_module = cls >= 0 && r.model_.classes()[cls].is_module;
      r.bare_returns_.push_back({r.key(*d, scope), from_module});
      return;
    }
    // Only a value that can still be differentiated is evidence of a caller's backward:
    // `return len(feats)` or `return acc.item()` is not (TG001-N19).
    const Value* v = r.prov_.value_of(e);
    if (v && v->graph == Graph::Free) return;
    for (auto& key : r.reads(e, scope)) r.return_seeds_.push_back(std::move(key));
  }

  std::vector<std::vector<std::string>> pending_;
};

Reachability::Reachability(const ModuleModel& model, const Provenance& prov)
    : model_(model), prov_(prov), builder_(std::make_unique<Builder>(*this)) {}

Reachability::~Reachability() = default;

Visitor& Reachability::collector() { return *builder_; }

void Reachability::finalize() {
  for (size_t i = 0; i < backwards_.size(); ++i)
    close_over(backwards_[i].closure, std::move(builder_->pending_[i]));
  close_over(reachable_backward_, backward_seeds_);
  close_over(reachable_return_, return_seeds_);
  builder_.reset();
}

// `out.loss` is read from `out`: the key of the object an attribute path hangs off ("" for
// `self.x` and plain names, whose object is the instance or nothing).
std::string Reachability::owner_key(const std::string& key) {
  size_t dot = key.rfind('.');
  if (dot == std::string::npos) return {};
  std::string owner = key.substr(0, dot);
  if (owner == "self" || owner.ends_with(":self")) return {};
  return owner;
}

void Reachability::close_over(std::unordered_set<std::string>& set,
                              std::vector<std::string> frontier) const {
  while (!frontier.empty()) {
    std::string key = std::move(frontier.back());
    frontier.pop_back();
    if (!set.insert(key).second) continue;
    // A backward of `out.loss` consumes the graph behind `out`, so `out.logits` shares it.
    if (std::string owner = owner_key(key); !owner.empty() && !set.count(owner))
      frontier.push_back(std::move(owner));
    auto it = flows_from_.find(key);
    if (it == flows_from_.end()) continue;
    for (const std::string& src : it->second)
      if (!set.count(src)) frontier.push_back(src);
  }
}

bool Reachability::load_bearing(const std::string& holder,
                                const std::unordered_set<std::string>& container_holders,
                                bool via_returns) const {
  if (reachable_backward_.count(holder)) return true;
  if (!via_returns) return false;
  if (reachable_return_.count(holder)) return true;
  std::vector<std::string> extra;
  for (const BareReturn& bare : bare_returns_)
    if (bare.from_module || !container_holders.count(bare.key)) extra.push_back(bare.key);
  if (extra.empty()) return false;
  std::unordered_set<std::string> reach;
  close_over(reach, std::move(extra));
  return reach.count(holder) > 0;
}

TSNode Reachability::backward_reaching(const std::string& key) const {
  for (const Backward& b : backwards_)
    if (b.closure.count(key)) return b.call;
  return TSNode{};
}

TSNode Reachability::backward_needing(ByteRange region, int scope,
                                      const std::vector<std::string>& keys) const {
  int unit = unit_of(scope);
  for (const Backward& b : backwards_) {
    ByteRange r = range_of(b.call);
    if (b.function_scope != unit || r.begin < region.begin || r.end > region.end) continue;
    for (std::string key : keys)
      for (; !key.empty(); key = owner_key(key))
        if (b.closure.count(key)) return b.call;
  }
  return TSNode{};
}

}  // namespace preflight::analysis
