#include "analysis/provenance.h"

#include "analysis/grad_switch.h"

#include <algorithm>
#include <optional>

#include "analysis/frameworks.h"
#include "analysis/local_calls.h"
#include "analysis/names.h"
#include "analysis/torch_facts.h"

namespace preflight::analysis {

std::string_view type_name(Type t) {
  switch (t) {
    case Type::Unknown: return "unknown";
    case Type::Tensor: return "a tensor";
    case Type::Tensors: return "a container of tensors";
    case Type::Number: return "a Python number";
    case Type::Array: return "a NumPy array";
    case Type::Object: return "an object";
  }
  return "unknown";
}

namespace {

bool tensor_like(Type t) { return t == Type::Tensor || t == Type::Tensors; }

// Two paths meet. An Unknown type is an unbound or unseen path and keeps the other side's
// type; a tensor on one path and a number on the other is neither.
Type join_types(Type a, Type b) {
  if (a == b || b == Type::Unknown) return a;
  if (a == Type::Unknown) return b;
  if (tensor_like(a) && tensor_like(b)) return Type::Tensors;
  return Type::Unknown;
}

// Proven beats weak beats naming-only: a graph shown by a binding on one path is shown.
int strength(const Value& v) { return v.naming_only ? 0 : v.weak ? 1 : 2; }

}  // namespace

namespace {

// Elementwise join of two tuples' parts; null unless both have parts of one length.
std::shared_ptr<const std::vector<Value>> join_parts(const Value& a, const Value& b) {
  if (!a.parts || !b.parts || a.parts->size() != b.parts->size()) return nullptr;
  if (a.parts == b.parts) return a.parts;
  std::vector<Value> out;
  for (size_t i = 0; i < a.parts->size(); ++i) out.push_back(join((*a.parts)[i], (*b.parts)[i]));
  return std::make_shared<const std::vector<Value>>(std::move(out));
}

}  // namespace

Value join(const Value& a, const Value& b) {
  if (a.graph == Graph::Yes && b.graph == Graph::Yes) {
    Value v = strength(b) > strength(a) ? b : a;
    v.type = join_types(a.type, b.type);
    v.consumed = a.consumed && b.consumed ? a.consumed : nullptr;  // fresh graph on some path
    v.parts = join_parts(a, b);
    v.leaf = a.leaf && b.leaf;
    return v;
  }
  if (a.graph == Graph::Yes || b.graph == Graph::Yes) {
    Value v = a.graph == Graph::Yes ? a : b;
    const Value& other = a.graph == Graph::Yes ? b : a;
    if (other.graph == Graph::Free) v.type = join_types(v.type, other.type);
    return v;
  }
  // Both sides agree on what the value is (a constructed wrapper on every path): keep it.
  if (a.graph == Graph::Unknown || b.graph == Graph::Unknown) return Value::unknown(a.type == b.type ? a.type : Type::Unknown);
  return Value::free(a.type == b.type ? a.type : Type::Unknown);
}

std::vector<EvidenceStep> evidence_steps(const EvidencePtr& chain, size_t limit) {
  std::vector<EvidenceStep> out;
  for (const EvidenceNode* n = chain.get(); n && out.size() < limit; n = n->prev.get()) {
    if (!out.empty() && out.back().range == n->range) continue;
    out.push_back({n->range, n->message});
  }
  std::reverse(out.begin(), out.end());
  return out;
}

namespace {

// A container's entry under a constant string key, `d['loss']`, is tracked as the name
// `d['loss']` beside `d` itself, so storing an int under one key does not make it read as the
// graph stored under another (round 45: `best['epoch'] = epoch` beside `best['loss'] = avg_loss`).
bool is_keyed_name(std::string_view name) { return name.find('[') != std::string_view::npos; }

std::string keyed_name(std::string_view container, std::string_view key) {
  return std::string(container) + "['" + std::string(key) + "']";
}

// The names bound in a unit and their values, sorted by name in one vector. The interpreter
// copies the environment at every branch and loop and joins the copies afterwards: a copy is
// one allocation (names are short enough to live inline), where a hash map allocated a node
// per name, and a join is one merge of two sorted runs.
// An entry that may have been overwritten by `v`: the join of both, whose type is the old one
// only when `v` is known to have it too (join_types reads Unknown as "nothing known on that
// path" and keeps the other side's type; here Unknown is a value that may be anything).
Value overwritten_maybe(const Value& old, const Value& v) {
  Value joined = join(old, v);
  if (v.type != old.type) joined.type = old.type == Type::Tensor && v.type == Type::Tensors ? Type::Tensors : Type::Unknown;
  return joined;
}

class Env {
 public:
  using Entry = std::pair<std::string, Value>;
  using iterator = std::vector<Entry>::iterator;
  using const_iterator = std::vector<Entry>::const_iterator;

  iterator begin() { return entries_.begin(); }
  iterator end() { return entries_.end(); }
  const_iterator begin() const { return entries_.begin(); }
  const_iterator end() const { return entries_.end(); }
  std::size_t size() const { return entries_.size(); }

  iterator find(std::string_view name) {
    iterator it = lower_bound(name);
    return it != entries_.end() && it->first == name ? it : entries_.end();
  }

  Value& operator[](std::string_view name) {
    iterator it = lower_bound(name);
    if (it == entries_.end() || it->first != name) it = entries_.insert(it, {std::string(name), Value::unknown()});
    return it->second;
  }

  // `d[key] = v` with a key not known here may overwrite any entry: each keyed entry of `d`
  // (names starting with `prefix`, "d['") now holds its old value or `v` (round 58: a trainer
  // turns every loss of its dict into a number with `for key, value in loss_dict.items():
  // loss_dict[key] = value.item()`, and a `.detach()` offered as safe on `loss_dict['loss']`
  // raised AttributeError).
  void join_prefixed(std::string_view prefix, const Value& v) {
    for (iterator it = lower_bound(prefix);
         it != entries_.end() && std::string_view(it->first).substr(0, prefix.size()) == prefix; ++it)
      it->second = overwritten_maybe(it->second, v);
  }

  // Forgets every entry whose name starts with `prefix` (a container's keyed entries).
  void erase_prefixed(std::string_view prefix) {
    iterator first = lower_bound(prefix);
    iterator last = first;
    while (last != entries_.end() && std::string_view(last->first).substr(0, prefix.size()) == prefix) ++last;
    entries_.erase(first, last);
  }

  // The state after two paths meet: every name of either side once, its values joined; a
  // name bound on one side only is joined with Unknown (unbound on the other path). A keyed
  // entry (`d['k']`) on one side only is dropped: on the other path the key reads whatever
  // the container holds. `a` by value: callers whose left side is dead afterwards move it in.
  friend Env join_envs(Env a, const Env& b) {
    Env out;
    out.entries_.reserve(a.size() + b.size());
    auto i = a.entries_.begin();
    auto j = b.entries_.begin();
    while (i != a.entries_.end() || j != b.entries_.end()) {
      if (j == b.entries_.end() || (i != a.entries_.end() && i->first < j->first)) {
        if (!is_keyed_name(i->first)) out.entries_.push_back({std::move(i->first), join(i->second, Value::unknown())});
        ++i;
      } else if (i == a.entries_.end() || j->first < i->first) {
        if (!is_keyed_name(j->first)) out.entries_.push_back({j->first, join(Value::unknown(), j->second)});
        ++j;
      } else {
        out.entries_.push_back({std::move(i->first), join(i->second, j->second)});
        ++i;
        ++j;
      }
    }
    return out;
  }

 private:
  iterator lower_bound(std::string_view name) {
    return std::lower_bound(entries_.begin(), entries_.end(), name,
                            [](const Entry& e, std::string_view n) { return e.first < n; });
  }

  std::vector<Entry> entries_;
};

bool same_states(const Env& a, const Env& b) {
  if (a.size() != b.size()) return false;
  return std::equal(a.begin(), a.end(), b.begin(), [](const Env::Entry& x, const Env::Entry& y) {
    return x.first == y.first && x.second.graph == y.second.graph;
  });
}

using names::last_segment;

std::string code(std::string_view text) { return quote_code(text, 48); }

}  // namespace

// Interprets one unit (a function body or the module's top level).
struct Provenance::Interpreter {
  Provenance& p;
  const ModuleModel& m;
  const Kinds& k = kinds();
  std::string_view src;
  int scope;
  Summary& summary;
  Env env;
  bool grad_enabled = true;
  std::unordered_map<std::string, TSNode> backwarded;  // names `.backward()`ed in this unit
  // Modules frozen in this unit (`G.eval().requires_grad_(False)`, `G = copy(G).requires_grad_(False)`):
  // their forward records a graph only through its inputs. Kept in statement order; a
  // rebinding to anything not built from the module itself thaws the name.
  std::unordered_map<std::string, TSNode> frozen;

  // A dry run re-reads a helper for one call site (its parameters bound to what that call
  // passes) and records nothing: the values rules read stay those of the helper's own run.
  bool dry = false;
  int dry_depth = 0;
  std::unordered_map<std::string, Value> passed;  // parameter -> the call site's value (dry runs)

  Interpreter(Provenance& prov, int unit_scope, Summary& s)
      : p(prov), m(prov.model_), src(m.source()), scope(unit_scope), summary(s) {}

  // ---- entry -------------------------------------------------------------------------
  void run() {
    const Scope& sc = m.scopes()[scope];
    if (sc.kind == ScopeKind::Module) {
      for (TSNode call : m.module_backward_calls()) note_backward(call);
      walk_block(sc.node);
      return;
    }
    const FunctionInfo& f = m.functions()[sc.function];
    grad_enabled = !decorated_no_grad(f) && !lightning_evaluation_hook(f);
    for (TSNode call : f.backward_calls) note_backward(call);
    seed_parameters(f);
    walk_block(field(f.node, k.f_body));
  }

  // Lightning's Trainer runs a LightningModule's validation, test and predict steps with
  // autograd off (round 45's re-measurement: solo-learn's validation_step stores metrics
  // computed by a shared step that also serves training_step).
  bool lightning_evaluation_hook(const FunctionInfo& f) const {
    static constexpr std::string_view kHooks[] = {"validation_step", "test_step", "predict_step"};
    if (f.class_index < 0 || !m.classes()[f.class_index].is_lightning) return false;
    return std::find(std::begin(kHooks), std::end(kHooks), f.name) != std::end(kHooks);
  }

  bool decorated_no_grad(const FunctionInfo& f) {
    if (!is(f.outer, k.decorated_definition)) return false;
    bool disabled = false;
    uint32_t n = ts_node_named_child_count(f.outer);
    for (uint32_t i = 0; i < n; ++i) {
      TSNode d = ts_node_named_child(f.outer, i);
      if (!is(d, k.decorator)) continue;
      int sw = grad_switch(ts_node_named_child(d, 0), /*bare_ok=*/true);
      if (sw != 0) disabled = sw < 0;
    }
    return disabled;
  }

  // -1: disables autograd, +1: enables it, 0: neither. `bare_ok` accepts the decorator form
  // without a call (`@torch.no_grad`).
  int grad_switch(TSNode e, bool bare_ok) {
    return analysis::grad_switch(e, src, bare_ok, [this](std::string_view leaf) { return no_grad_wrapper(leaf); });
  }

  // `@smart_inference_mode()`: a wrapper defined in this file is read from its body (it calls
  // torch.no_grad / inference_mode); one defined elsewhere only by its name (names.cpp).
  bool no_grad_wrapper(std::string_view leaf) const {
    if (!names::names_a_no_grad_wrapper(leaf)) return false;
    const std::vector<int>* fs = m.functions_named(leaf);
    if (!fs) return true;
    bool wraps = false;
    for (int f : *fs)
      m.for_each_call_in(m.functions()[f].node, [&](TSNode c) {
        std::string_view l = m.callee_leaf(c);
        wraps = wraps || l == "no_grad" || l == "inference_mode";
      });
    return wraps;
  }

  // Only loss names that say "loss" outright seed a graph: `total`, `l` and `cost` name
  // integers and strings too often (`l = line.strip()`, TG001-P10).
  static bool is_strong_loss_name(std::string_view name) {
    return names::is_loss_name(name) && name.find("loss") != std::string_view::npos;
  }

  void seed_parameters(const FunctionInfo& f) {
    for (const Parameter& prm : f.params) {
      Value v = Value::unknown();
      if (is_strong_loss_name(prm.name) && m.may_be_torch_code())
        v = Value::graph_of(node(prm.node, "`" + prm.name + "` is a parameter named like a loss (naming heuristic)"),
                            Type::Tensor, /*naming_only=*/true);
      if (auto it = passed.find(prm.name); it != passed.end()) v = it->second;
      env[prm.name] = v;
    }
  }

  // Names whose `.backward()` this unit calls: proof that they carry a graph.
  void note_backward(TSNode call) {
    TSNode callee = field(call, k.f_function);
    if (!is(callee, k.attribute)) return;
    auto recv = dotted_name(field(callee, k.f_object), src);
    TSNode target{};
    if (recv && backward_wrapper(*recv))
      target = positional_arg(call, 0);
    else if (recv && *recv != "torch.autograd" && *recv != "autograd")
      target = field(callee, k.f_object);
    else
      target = positional_arg(call, 0);  // torch.autograd.backward(loss)
    if (auto d = dotted_name(unparenthesize(target), src)) backwarded.emplace(*d, call);
  }

  // `accelerator.backward(loss)`, `model_engine.backward(loss)` (DeepSpeed): the receiver
  // runs the backward of its first argument and is not itself a tensor.
  bool backward_wrapper(const std::string& recv) const {
    return names::is_backward_wrapper_receiver(last_segment(recv)) || m.is_model(recv, scope);
  }

  EvidencePtr node(TSNode at, std::string msg, EvidencePtr prev = nullptr) {
    return std::make_shared<const EvidenceNode>(EvidenceNode{range_of(at), std::move(msg), std::move(prev)});
  }

  // ---- statements --------------------------------------------------------------------
  void walk_block(TSNode block) {
    for_each_named_child(block, [&](TSNode s) { walk_stmt(s); });
  }

  void mark(TSNode n) {
    if (!grad_enabled && !dry) p.no_grad_.insert(node_id(n));
  }

  void walk_stmt(TSNode s) {
    mark(s);
    TSSymbol t = sym(s);
    if (t == k.expression_statement) return walk_expression_statement(s);
    if (t == k.if_statement) return walk_if(s);
    if (t == k.for_statement) return walk_for(s);
    if (t == k.while_statement) return walk_while(s);
    if (t == k.with_statement) return walk_with(s);
    if (t == k.try_statement) return walk_try(s);
    if (t == k.return_statement) return walk_return(s);
    if (t == k.match_statement) return walk_match(s);
    if (t == k.function_definition || t == k.class_definition || t == k.decorated_definition)
      return;  // separate units
    if (t == k.block) return walk_block(s);
    // raise, assert, del, print, ...: evaluate what they contain, for the record.
    for_each_named_child(s, [&](TSNode c) {
      if (!is(c, k.comment) && !is(c, k.block)) eval(c);
    });
  }

  void walk_expression_statement(TSNode s) {
    for_each_named_child(s, [&](TSNode e) {
      mark(e);
      TSSymbol t = sym(e);
      if (t == k.assignment) do_assign(e);
      else if (t == k.augmented_assignment) do_augmented(e);
      else if (t != k.comment) do_expression(e);
    });
  }

  // The `.requires_grad_(False)` link of a method chain (`G.eval().requires_grad_(False).to(d)`).
  TSNode freezing_link(TSNode call) const {
    for (TSNode c = unparenthesize(call); is(c, k.call);) {
      TSNode callee = field(c, k.f_function);
      if (!is(callee, k.attribute)) return TSNode{};
      if (text_of(field(callee, k.f_attribute), src) == "requires_grad_" && is(positional_arg(c, 0), k.false_))
        return c;
      // `nn.Embedding.from_pretrained(w)` freezes its weight unless `freeze=False` (round 24:
      // ERNIE's entity embeddings fed integer indices).
      if (text_of(field(callee, k.f_attribute), src) == "from_pretrained") {
        auto q = m.qualified_name(field(callee, k.f_object));
        TSNode freeze = keyword_arg(c, "freeze", src);
        if (q && (*q == "torch.nn.Embedding" || *q == "torch.nn.EmbeddingBag") &&
            (is_null(freeze) || is(unparenthesize(freeze), k.true_)))
          return c;
      }
      c = unparenthesize(field(callee, k.f_object));
    }
    return TSNode{};
  }

  // The name a method chain starts from (`G` in `G.eval().to(d)`), through calls that hand
  // the module back (`copy.deepcopy(G)` too).
  std::optional<std::string> chain_root(TSNode e) const {
    e = unparenthesize(e);
    while (is(e, k.call)) {
      TSNode callee = field(e, k.f_function);
      if (is(callee, k.attribute) && is(unparenthesize(field(callee, k.f_object)), k.call)) {
        e = unparenthesize(field(callee, k.f_object));
        continue;
      }
      if (is(callee, k.attribute) && !names::keeps_module(text_of(field(callee, k.f_attribute), src)) &&
          text_of(field(callee, k.f_attribute), src) != "requires_grad_") {
        std::string_view leaf = text_of(field(callee, k.f_attribute), src);
        if (leaf != "deepcopy") return std::nullopt;
        e = unparenthesize(positional_arg(e, 0));  // copy.deepcopy(G)
        continue;
      }
      if (is(callee, k.attribute)) {
        e = unparenthesize(field(callee, k.f_object));
        continue;
      }
      return std::nullopt;
    }
    return dotted_name(e, src);
  }

  void do_expression(TSNode e) {
    eval(e);
    TSNode call = unparenthesize(e);
    if (!is(call, k.call)) return;
    int sw = grad_switch(call, false);
    if (sw != 0 && callee_leaf(call, src) == "set_grad_enabled") grad_enabled = sw > 0;
    std::string_view leaf = callee_leaf(call, src);
    TSNode callee = field(call, k.f_function);
    if (leaf == "requires_grad_" && is(callee, k.attribute) &&
        !is(positional_arg(call, 0), k.false_)) {
      if (auto d = dotted_name(field(callee, k.f_object), src)) {
        frozen.erase(*d);  // `model.requires_grad_(True)` thaws it again
        auto before = env.find(*d);
        if (before == env.end() || !before->second.has_graph())  // else it stays a non-leaf
          env[*d] = leaf_from(call, code(text_of(call, src)) + " makes it a leaf tensor that requires gradients");
      }
    }
    if (leaf == "backward") mark_consumed(call);
    if (TSNode freeze = freezing_link(call); !is_null(freeze))
      if (auto root = chain_root(call)) frozen[*root] = freeze;
    if (is(callee, k.attribute) && is_store_method(leaf)) {
      // `c.append(v)`: the container now holds whatever v holds.
      if (auto d = dotted_name(field(callee, k.f_object), src)) {
        const Value* v = p.value_of(positional_arg(call, leaf == "insert" ? 1 : 0));
        if (v && v->has_graph()) env[*d] = container(join(lookup(*d, callee), *v));
      }
    }
  }

  static bool is_store_method(std::string_view m) {
    return m == "append" || m == "extend" || m == "insert" || m == "add" || m == "put" ||
           m == "push" || m == "appendleft";
  }

  // After `loss.backward()` (or `accelerator.backward(loss)`, `scaler.scale(loss).backward()`,
  // `(loss / k).backward()`), the graph of every name it read is consumed.
  void mark_consumed(TSNode call) {
    TSNode callee = field(call, k.f_function);
    TSNode target{};
    if (is(callee, k.attribute)) {
      TSNode recv = unparenthesize(field(callee, k.f_object));
      auto recv_name = dotted_name(recv, src);
      if (recv_name && backward_wrapper(*recv_name))
        target = positional_arg(call, 0);
      else if (recv_name && (*recv_name == "torch.autograd" || *recv_name == "autograd"))
        target = positional_arg(call, 0);
      else
        target = recv;
    } else {
      target = positional_arg(call, 0);
    }
    if (is_null(target)) return;
    EvidencePtr step = node(call, code(text_of(call, src)) + " consumes this graph");
    std::vector<const EvidenceNode*> sources;
    consume_names(target, step, sources);
    consume_shared(sources, step);
  }

  // Values derived from the same graph-producing operation as the backwarded value (its
  // chain shares a node) lost their graph too: `loss.backward()` frees the forward pass
  // that `out` holds.
  void consume_shared(const std::vector<const EvidenceNode*>& sources, const EvidencePtr& step) {
    if (sources.empty()) return;
    for (auto& [name, v] : env) {
      if (!v.has_graph() || v.consumed) continue;
      int budget = 64;
      for (const EvidenceNode* n = v.why.get(); n && budget-- > 0; n = n->prev.get()) {
        if (std::find(sources.begin(), sources.end(), n) != sources.end()) {
          v.consumed = step;
          break;
        }
      }
    }
  }

  void consume_names(TSNode e, const EvidencePtr& step, std::vector<const EvidenceNode*>& sources) {
    e = unparenthesize(e);
    if (auto d = dotted_name(e, src)) {
      auto it = env.find(*d);
      Value v = it != env.end() ? it->second : lookup(*d, e);
      if (v.has_graph()) {
        int budget = 64;
        for (const EvidenceNode* n = v.why.get(); n && budget-- > 0; n = n->prev.get())
          sources.push_back(n);
        v.consumed = step;
        v.type = Type::Tensor;  // a backward ran over it: it is a tensor with a graph,
        v.naming_only = false;  // whatever name or guess first suggested one
        v.weak = nullptr;
        env[*d] = v;
      }
      return;
    }
    if (is(e, k.call)) {
      // scaler.scale(loss): the scaled value is the loss.
      TSNode callee = field(e, k.f_function);
      if (is(callee, k.attribute)) consume_names(field(callee, k.f_object), step, sources);
      TSNode args = field(e, k.f_arguments);
      uint32_t n = is_null(args) ? 0 : ts_node_named_child_count(args);
      for (uint32_t i = 0; i < n; ++i) consume_names(ts_node_named_child(args, i), step, sources);
      return;
    }
    uint32_t n = ts_node_named_child_count(e);
    for (uint32_t i = 0; i < n; ++i) consume_names(ts_node_named_child(e, i), step, sources);
  }

  void do_assign(TSNode a) {
    TSNode right = field(a, k.f_right);
    if (is(right, k.assignment)) {
      do_assign(right);  // a = b = v: the inner assignment binds b first
      right = field(right, k.f_right);
      while (is(right, k.assignment)) right = field(right, k.f_right);
    }
    Value v = is(field(a, k.f_right), k.assignment) ? value_or_unknown(right) : eval(right);
    TSNode left = field(a, k.f_left);
    if (is_requires_grad_flag(left, right)) return;
    bind_pattern(left, right, v, a);
  }

  Value value_or_unknown(TSNode e) {
    const Value* v = p.value_of(e);
    return v ? *v : Value::unknown();
  }

  // `x.requires_grad = True` makes `x` a leaf that records a graph.
  bool is_requires_grad_flag(TSNode left, TSNode right) {
    if (!is(left, k.attribute) || text_of(field(left, k.f_attribute), src) != "requires_grad")
      return false;
    if (auto d = dotted_name(field(left, k.f_object), src); d && is(right, k.true_)) {
      auto before = env.find(*d);
      bool was_graph = before != env.end() && before->second.has_graph();
      if (!was_graph) env[*d] = leaf_from(left, "`" + *d + ".requires_grad = True` makes it a leaf that records a graph");
    }
    return true;
  }

  void bind_pattern(TSNode left, TSNode right, const Value& v, TSNode stmt) {
    TSSymbol t = sym(left);
    if (t == k.pattern_list || t == k.tuple_pattern || t == k.list_pattern) {
      uint32_t n = ts_node_named_child_count(left);
      std::vector<Value> parts = element_values(right, v, n);
      for (uint32_t i = 0; i < n; ++i) bind_pattern(ts_node_named_child(left, i), TSNode{}, parts[i], stmt);
      return;
    }
    if (t == k.list_splat_pattern) return bind_pattern(ts_node_named_child(left, 0), TSNode{}, v, stmt);
    if (t == k.subscript) {
      // `c[k] = v`: the container now holds whatever v holds; `c['k']` holds v itself.
      if (auto d = dotted_name(field(left, k.f_value), src)) {
        env[*d] = join(lookup(*d, left), v);
        if (auto key = constant_key(field(left, k.f_subscript))) env[keyed_name(*d, *key)] = grad_enabled ? v : Value::free(v.type);
        else env.join_prefixed(*d + "['", grad_enabled ? v : Value::free(v.type));
      }
      eval(field(left, k.f_subscript));
      return;
    }
    auto d = dotted_name(left, src);
    if (!d) return;
    bind_name(*d, left, right, v);
  }

  // Values of the parts of an unpacked right-hand side.
  std::vector<Value> element_values(TSNode right, const Value& whole, uint32_t n) {
    std::vector<Value> out(n, whole);
    if (whole.parts && whole.parts->size() == n) return *whole.parts;
    right = unparenthesize(right);
    if (is(right, k.expression_list) || is(right, k.tuple) || is(right, k.list)) {
      if (ts_node_named_child_count(right) == n)
        for (uint32_t i = 0; i < n; ++i) out[i] = value_or_unknown(ts_node_named_child(right, i));
      return out;
    }
    if (is(right, k.call) && returns_arguments_in_order(right, n)) {
      for (uint32_t i = 0; i < n; ++i) out[i] = value_or_unknown(positional_arg(right, i));
      return out;
    }
    if (is(right, k.call)) {
      int f = local_function(right);
      if (f >= 0) {
        Summary& s = p.analyze_unit(m.functions()[f].scope);
        if (s.done && s.tuple_arity == static_cast<int>(n))
          for (uint32_t i = 0; i < n; ++i)
            out[i] = s.elements[i].has_graph()
                         ? with_step(s.elements[i], right, code(text_of(right, src)) + " returns a graph-carrying value")
                         : s.elements[i];
        return out;
      }
      // `loss, dual_loss, align_loss, n = model(ids)` with a forward this analysis cannot read
      // (round 24: CodeBERT's CodeExecutor returns `0` and `.item()` floats among its losses):
      // that every element carries the output's graph is assumed, not shown.
      if (whole.has_graph() && n > 1)
        for (uint32_t i = 0; i < n; ++i) {
          out[i].weak = node(right, std::string(Value::kGuessedElement) + code(text_of(right, src)) +
                                        " is taken to carry its graph, but what the forward returns in each "
                                        "place is not shown here (weak step)");
        }
    }
    return out;
  }

  // `model, opt, loader = accelerator.prepare(model, opt, loader)` (and Fabric's `setup` /
  // `setup_dataloaders`) hands back its arguments, wrapped, in order: each target is what
  // its own argument was, so a prepared loader does not inherit the model's graph. The
  // receiver must be bound to (or, failing a visible binding, named like) the framework.
  bool returns_arguments_in_order(TSNode call, uint32_t n) const {
    TSNode callee = field(call, k.f_function);
    if (!is(callee, k.attribute)) return false;
    std::string_view leaf = text_of(field(callee, k.f_attribute), src);
    auto owner = backward_owner(m, field(callee, k.f_object), scope);
    if (!owner) return false;
    bool wraps = (owner->framework == Framework::Accelerate && leaf == "prepare") ||
                 (owner->framework == Framework::Fabric && (leaf == "setup" || leaf == "setup_dataloaders"));
    if (!wraps) return false;
    TSNode args = field(call, k.f_arguments);
    uint32_t positional = 0;
    bool plain = true;
    for_each_named_child(args, [&](TSNode a) {
      if (is(a, k.comment)) return;
      if (is_splat_or_keyword(a)) plain = false;
      ++positional;
    });
    return plain && positional == n;
  }

  bool is_splat_or_keyword(TSNode a) const {
    return is(a, k.list_splat) || is(a, k.dictionary_splat) || is(a, k.keyword_argument);
  }

  void bind_name(const std::string& name, TSNode target, TSNode right, Value v) {
    if (!is_null(right)) {
      if (TSNode freeze = freezing_link(right); !is_null(freeze)) frozen[name] = freeze;
      else if (frozen.count(name) && !mentions(right, name)) frozen.erase(name);
    }
    if (!grad_enabled) v = Value::free();
    bool from_call = is(unparenthesize(right), k.call);
    if (v.graph == Graph::Unknown) {
      auto bw = backwarded.find(name);
      if (bw != backwarded.end()) {
        v = Value::graph_of(node(bw->second, code(text_of(bw->second, src)) + " shows `" + name + "` carries a graph"), Type::Tensor);
      } else if (from_call && grad_enabled && m.may_be_torch_code() &&
                 is_strong_loss_name(last_segment(name)) && opaque_call(unparenthesize(right))) {
        v = Value::graph_of(node(target, "`" + name + "` is named like a loss and holds a call result (naming heuristic)"),
                            Type::Tensor, /*naming_only=*/true);
      }
    }
    if (v.has_graph() && !is_null(target))
      v.why = node(target, "`" + name + "` holds this graph-carrying value", v.why);
    env[name] = v;
    env.erase_prefixed(name + "['");
    if (!is_null(right)) bind_literal_keys(name, unparenthesize(right));
    auto [slot, fresh] = summary.bound.try_emplace(name, v);
    if (!fresh) slot->second = join(slot->second, v);
  }

  // `d = {'loss': 0, 'epoch': 0}`: each constant key starts with its own value.
  void bind_literal_keys(const std::string& name, TSNode right) {
    if (!is(right, k.dictionary)) return;
    for (TSNode pair : named_children(right)) {
      if (!is(pair, k.pair)) continue;
      auto key = constant_key(ts_node_named_child(pair, 0));
      if (!key) continue;
      Value v = value_or_unknown(field(pair, k.f_value));
      env[keyed_name(name, *key)] = grad_enabled ? v : Value::free(v.type);
    }
  }

  // The content of a plain string literal used as a key ('loss', "loss"); none for prefixed
  // strings (f-strings, bytes, raw), keys with quotes, brackets or escapes, and anything that
  // is not a string literal.
  std::optional<std::string_view> constant_key(TSNode key) const {
    key = unparenthesize(key);
    if (is_null(key) || !is(key, k.string)) return std::nullopt;
    std::string_view t = text_of(key, src);
    if (t.empty() || (t.front() != '\'' && t.front() != '"')) return std::nullopt;
    std::string_view content = string_content(key, src);
    if (content.empty() || content.find_first_of("'\"[]\\") != std::string_view::npos) return std::nullopt;
    return content;
  }

  // The value stored under `c['k']` on this path, when the container is a name and the key a
  // constant that was stored or written in a literal.
  std::optional<Value> keyed_entry(TSNode subscript) {
    auto d = dotted_name(field(subscript, k.f_value), src);
    if (!d) return std::nullopt;
    auto key = constant_key(field(subscript, k.f_subscript));
    if (!key) return std::nullopt;
    auto it = env.find(keyed_name(*d, *key));
    if (it == env.end()) return std::nullopt;
    return it->second;
  }

  // `sampler = torch.jit.trace(sampler, ...)`: the right side is built from `name` itself.
  bool mentions(TSNode n, std::string_view name) const {
    if (is(n, k.identifier) || is(n, k.attribute)) {
      auto d = dotted_name(n, src);
      if (d && *d == name) return true;
    }
    bool found = false;
    for_each_named_child(n, [&](TSNode c) { found = found || mentions(c, name); });
    return found;
  }

  // A call whose result the analysis cannot derive from what it sees: a function or method
  // of another file, a local helper (its summary may rest on its parameters). A torch
  // function or a tensor method of unknown inputs is not one: its graph is its inputs', so
  // a loss-like name says nothing more about it.
  bool opaque_call(TSNode call) {
    TSNode callee = field(call, k.f_function);
    std::string_view leaf = callee_leaf(call, src);
    if (names::is_detaching_method(leaf) || names::is_non_differentiable(leaf) ||
        names::is_tensor_only_method(leaf) || returns_several(leaf))
      return !is(callee, k.attribute) ? true : is_import_receiver(callee);
    if (auto q = m.qualified_callee(call); q && (is(callee, k.identifier) ? m.import_of(text_of(callee, src)) != nullptr
                                                                          : is_import_receiver(callee)))
      return !names::is_tensor_function(*q) && !names::is_numpy_module(*q) && !names::is_number_module(*q);
    return true;
  }

  bool is_import_receiver(TSNode attribute_callee) {
    auto recv = dotted_name(field(attribute_callee, k.f_object), src);
    return recv && m.import_of(recv->substr(0, recv->find('.')));
  }

  void do_augmented(TSNode a) {
    TSNode left = field(a, k.f_left);
    Value rhs = eval(field(a, k.f_right));
    auto d = dotted_name(left, src);
    if (!d) {
      eval(left);
      return;
    }
    Value cur = eval(left);
    Value v = join(cur.graph == Graph::Unknown ? Value::free() : cur, rhs);
    if (cur.graph == Graph::Unknown && !rhs.has_graph()) v = Value::unknown();
    if (!grad_enabled) v = cur.has_graph() ? cur : Value::free();
    if (v.has_graph() && rhs.has_graph())
      v.why = node(left, "`" + *d + "` accumulates it", rhs.why);
    env[*d] = v;
    auto [slot, fresh] = summary.bound.try_emplace(*d, v);
    if (!fresh) slot->second = join(slot->second, v);
  }

  // `isinstance(x, (list, tuple))` (alone or in an `and`): inside the branch `x` is a
  // container, whatever its binding made it (round 12: SlowFast's `loss, extra = loss` under
  // that test unpacks a tuple of losses, not a tensor).
  void narrow_containers(TSNode cond) {
    cond = unparenthesize(cond);
    if (is(cond, k.boolean_operator) && text_of(field(cond, k.f_operator), src) == "and") {
      narrow_containers(field(cond, k.f_left));
      narrow_containers(field(cond, k.f_right));
      return;
    }
    if (!is(cond, k.call) || callee_leaf(cond, src) != "isinstance") return;
    auto name = dotted_name(positional_arg(cond, 0), src);
    TSNode classes = unparenthesize(positional_arg(cond, 1));
    if (!name || is_null(classes)) return;
    static constexpr std::string_view kContainers[] = {"list", "tuple", "dict", "Sequence", "Mapping", "abc.Sequence",
                                                       "abc.Mapping", "collections.abc.Sequence", "collections.abc.Mapping"};
    auto is_container = [&](TSNode c) {
      std::string_view t = text_of(c, src);
      for (auto n : kContainers)
        if (t == n) return true;
      return false;
    };
    bool all_containers = true;
    if (is(classes, k.tuple)) {
      for (TSNode c : named_children(classes)) all_containers = all_containers && is_container(c);
    } else {
      all_containers = is_container(classes);
    }
    auto it = env.find(*name);
    if (all_containers && it != env.end() && it->second.type == Type::Tensor)
      it->second.type = it->second.has_graph() ? Type::Tensors : Type::Object;
  }

  void walk_if(TSNode s) {
    eval(field(s, k.f_condition));
    Env before = env;
    bool grad_before = grad_enabled;
    narrow_containers(field(s, k.f_condition));
    walk_block(field(s, k.f_consequence));
    Env merged = std::move(env);  // every path below assigns env before reading it
    // Autograd is off after the `if` only when every path turned it off.
    bool any_enabled = grad_enabled;
    bool has_else = false;
    for (TSNode c : named_children(s)) {
      if (is(c, k.elif_clause)) {
        env = before;
        grad_enabled = grad_before;
        eval(field(c, k.f_condition));
        walk_block(field(c, k.f_consequence));
        merged = join_envs(std::move(merged), env);
        any_enabled = any_enabled || grad_enabled;
      } else if (is(c, k.else_clause)) {
        has_else = true;
        env = before;
        grad_enabled = grad_before;
        walk_block(field(c, k.f_body));
        merged = join_envs(std::move(merged), env);
        any_enabled = any_enabled || grad_enabled;
      }
    }
    env = has_else ? std::move(merged) : join_envs(std::move(merged), before);
    grad_enabled = any_enabled || (!has_else && grad_before);
  }

  template <typename Body>
  void fixpoint(Body&& body) {
    Env entry = env;
    for (int pass = 0; pass < 4; ++pass) {
      body();
      Env next = join_envs(entry, env);
      if (same_states(next, entry)) break;
      entry = next;
      env = next;
    }
    env = join_envs(std::move(entry), env);
  }

  void walk_for(TSNode s) {
    Value it = eval(field(s, k.f_right));
    TSNode left = field(s, k.f_left);
    freeze_by_parameter_loop(s);
    fixpoint([&] {
      bind_loop_target(left, it);
      walk_block(field(s, k.f_body));
    });
    if (TSNode alt = field(s, k.f_alternative); !is_null(alt)) walk_block(field(alt, k.f_body));
  }

  // `for p in G.parameters(): p.requires_grad = False` (or `p.requires_grad_(False)`, or
  // `for n, p in G.named_parameters()`), the freezing an unconditional statement of the loop's
  // body: every parameter of `G` is frozen (round 20: KAIR's test scripts).
  void freeze_by_parameter_loop(TSNode s) {
    TSNode iter = unparenthesize(field(s, k.f_right));
    TSNode left = field(s, k.f_left);
    if (!is(iter, k.call)) return;
    TSNode callee = field(iter, k.f_function);
    std::string_view leaf = is(callee, k.attribute) ? text_of(field(callee, k.f_attribute), src) : "";
    if (leaf != "parameters" && leaf != "named_parameters") return;
    if (leaf == "named_parameters" && (is(left, k.pattern_list) || is(left, k.tuple_pattern)))
      left = ts_node_named_child(left, ts_node_named_child_count(left) - 1);
    auto owner = dotted_name(field(callee, k.f_object), src);
    TSNode body = field(s, k.f_body);
    if (!owner || is_null(body) || !is(left, k.identifier)) return;
    std::string param(text_of(left, src));
    for_each_named_child(body, [&](TSNode stmt) {
      if (is(stmt, k.expression_statement) && freezes_parameter(ts_node_named_child(stmt, 0), param))
        frozen[*owner] = stmt;
    });
  }

  // `p.requires_grad = False` or `p.requires_grad_(False)`.
  bool freezes_parameter(TSNode e, const std::string& param) const {
    if (is(e, k.assignment)) {
      TSNode l = field(e, k.f_left);
      return is(l, k.attribute) && text_of(l, src) == param + ".requires_grad" && is(field(e, k.f_right), k.false_);
    }
    return is(e, k.call) && text_of(field(e, k.f_function), src) == param + ".requires_grad_" &&
           is(positional_arg(e, 0), k.false_);
  }

  void bind_loop_target(TSNode left, const Value& it) {
    TSSymbol t = sym(left);
    if (t == k.pattern_list || t == k.tuple_pattern || t == k.list_pattern) {
      uint32_t n = ts_node_named_child_count(left);
      for (uint32_t i = 0; i < n; ++i) bind_loop_target(ts_node_named_child(left, i), it);
      return;
    }
    if (auto d = dotted_name(left, src)) {
      Value v = it.has_graph() ? with_step(it, left, "`" + *d + "` iterates over it")
                               : (it.graph == Graph::Free ? Value::free() : Value::unknown());
      env[*d] = v;
    }
  }

  void walk_while(TSNode s) {
    fixpoint([&] {
      eval(field(s, k.f_condition));
      walk_block(field(s, k.f_body));
    });
    if (TSNode alt = field(s, k.f_alternative); !is_null(alt)) walk_block(field(alt, k.f_body));
  }

  void walk_with(TSNode s) {
    bool saved = grad_enabled;
    uint32_t n = ts_node_named_child_count(s);
    for (uint32_t i = 0; i < n; ++i) {
      TSNode clause = ts_node_named_child(s, i);
      if (!is(clause, k.with_clause)) continue;
      uint32_t items = ts_node_named_child_count(clause);
      for (uint32_t j = 0; j < items; ++j) walk_with_item(ts_node_named_child(clause, j));
    }
    walk_block(field(s, k.f_body));
    grad_enabled = saved;
  }

  void walk_with_item(TSNode item) {
    TSNode value = field(item, k.f_value);
    TSNode target{};
    if (is(value, k.as_pattern)) {
      target = field(value, k.f_alias);
      value = ts_node_named_child(value, 0);
    }
    Value v = eval(value);
    int sw = grad_switch(value, false);
    if (sw != 0) grad_enabled = sw > 0;
    if (!is_null(target)) {
      TSNode t = ts_node_named_child(target, 0);
      if (auto d = dotted_name(t, src)) env[*d] = v.has_graph() ? v : Value::unknown();
    }
  }

  void walk_try(TSNode s) {
    Env before = env;
    walk_block(field(s, k.f_body));
    Env merged = env;
    uint32_t n = ts_node_named_child_count(s);
    TSNode finally{};
    for (uint32_t i = 0; i < n; ++i) {
      TSNode c = ts_node_named_child(s, i);
      if (is(c, k.except_clause)) {
        env = join_envs(before, merged);
        uint32_t cn = ts_node_named_child_count(c);
        for (uint32_t j = 0; j < cn; ++j)
          if (is(ts_node_named_child(c, j), k.block)) walk_block(ts_node_named_child(c, j));
        merged = join_envs(std::move(merged), env);
      } else if (is(c, k.else_clause)) {
        walk_block(field(c, k.f_body));
        merged = join_envs(std::move(merged), env);
      } else if (is(c, k.finally_clause)) {
        finally = c;
      }
    }
    env = std::move(merged);
    if (!is_null(finally)) {
      uint32_t cn = ts_node_named_child_count(finally);
      for (uint32_t j = 0; j < cn; ++j)
        if (is(ts_node_named_child(finally, j), k.block)) walk_block(ts_node_named_child(finally, j));
    }
  }

  void walk_match(TSNode s) {
    Env before = env, merged = env;
    TSNode body = field(s, k.f_body);
    uint32_t n = is_null(body) ? 0 : ts_node_named_child_count(body);
    for (uint32_t i = 0; i < n; ++i) {
      TSNode c = ts_node_named_child(body, i);
      if (!is(c, k.case_clause)) continue;
      env = before;
      TSNode cb = field(c, k.f_consequence);
      if (!is_null(cb)) walk_block(cb);
      merged = join_envs(std::move(merged), env);
    }
    env = std::move(merged);
  }

  void walk_return(TSNode s) {
    TSNode e = ts_node_named_child(s, 0);
    if (is_null(e) || is(e, k.comment)) {
      record_return(Value::free(), TSNode{});
      return;
    }
    record_return(eval(e), unparenthesize(e));
  }

  void record_return(const Value& v, TSNode e) {
    summary.joined = summary.has_return ? join(summary.joined, v) : v;
    summary.has_return = true;
    // `return None` (or a bare return) says nothing of the tuple's shape: a caller that
    // unpacks the result does so on the other paths (`if result is None: continue`).
    if (is_null(e) || is(e, k.none)) return;
    int arity = -1;
    if (is(e, k.expression_list) || is(e, k.tuple)) arity = static_cast<int>(ts_node_named_child_count(e));
    if (!summary.shaped) {
      summary.shaped = true;
      summary.tuple_arity = arity;
      for (int i = 0; i < arity; ++i) summary.elements.push_back(value_or_unknown(ts_node_named_child(e, i)));
    } else if (arity != summary.tuple_arity) {
      summary.tuple_arity = -1;
      summary.elements.clear();
    } else {
      for (int i = 0; i < arity; ++i)
        summary.elements[i] = join(summary.elements[i], value_or_unknown(ts_node_named_child(e, i)));
    }
  }

  // ---- expressions -------------------------------------------------------------------
  Value eval(TSNode e) {
    if (is_null(e)) return Value::unknown();
    Value v = eval_uncached(e);
    if (v.leaf && !keeps_leaf(e, v)) v.leaf = false;
    if (!dry) p.values_[node_id(e)] = v;
    mark(e);
    return v;
  }

  // A leaf stays one through a name, a container literal, an element of a container of
  // leaves, the call that made it and a device or dtype copy of it; any other expression is an
  // operation on it.
  bool keeps_leaf(TSNode e, const Value& v) const {
    TSSymbol t = sym(e);
    if (t == k.identifier || t == k.parenthesized_expression || t == k.tuple || t == k.list || t == k.set ||
        t == k.expression_list || t == k.dictionary)
      return true;
    if (t == k.subscript) return v.type != Type::Tensor;
    if (t == k.attribute) return !is_tensor_attribute(text_of(field(e, k.f_attribute), src));
    if (t != k.call) return false;
    if (v.why && v.why->range == range_of(e)) return true;
    // A copy of a leaf to a device or a dtype (`leaf.cuda()`, `leaf.to(dev)`, `leaf.float()`)
    // records one copy node that saves no activation: it keeps nothing but the leaf (round 13:
    // Transformer Engine's `x.detach().clone().requires_grad_(flag).cuda()`).
    TSNode callee = field(e, k.f_function);
    if (!is(callee, k.attribute)) return false;
    static constexpr std::string_view kCopies[] = {"to", "cuda", "cpu", "float", "half", "double", "bfloat16"};
    std::string_view method = text_of(field(callee, k.f_attribute), src);
    if (std::find(std::begin(kCopies), std::end(kCopies), method) == std::end(kCopies)) return false;
    const Value* recv = p.value_of(field(callee, k.f_object));
    return recv && recv->leaf;
  }

  Value leaf_from(TSNode at, std::string msg) {
    Value v = graph_from(at, std::move(msg));
    v.leaf = true;
    return v;
  }

  Value lookup(const std::string& name, TSNode at) {
    auto it = env.find(name);
    if (it != env.end()) return it->second;
    auto bw = backwarded.find(name);
    if (bw != backwarded.end())
      return Value::graph_of(node(bw->second, code(text_of(bw->second, src)) + " shows `" + name + "` carries a graph"), Type::Tensor);
    (void)at;
    // A name bound elsewhere in this unit but not yet here, or a free name: read what the
    // enclosing units bound it to.
    if (m.scopes()[scope].bindings.count(name)) return Value::unknown();
    for (int s = m.scopes()[scope].parent; s >= 0; s = m.scopes()[s].parent) {
      if (m.scopes()[s].kind == ScopeKind::Class) continue;
      if (!m.scopes()[s].bindings.count(name)) continue;
      const Summary& sum = p.summaries_[s];
      auto b = sum.bound.find(name);
      return b == sum.bound.end() ? Value::unknown() : b->second;
    }
    if (m.import_of(name) || m.functions_named(name) || m.class_named(name) >= 0) return Value::free();
    return Value::unknown();
  }

  Value eval_uncached(TSNode e) {
    TSSymbol t = sym(e);
    if (t == k.identifier) return lookup(std::string(text_of(e, src)), e);
    if (t == k.attribute) return eval_attribute(e);
    if (t == k.call) return eval_call(e);
    if (t == k.parenthesized_expression) {
      TSNode inner = unparenthesize(e);
      return ts_node_eq(inner, e) ? Value::unknown() : eval(inner);
    }
    if (t == k.subscript) {
      Value base = eval(field(e, k.f_value));
      eval_children_except(e, field(e, k.f_value));
      if (std::optional<Value> entry = keyed_entry(e)) return grad_enabled ? *entry : Value::free(entry->type);
      // An element of a tensor is a tensor; of anything else, not proven one. A string key
      // (`out['loss']`) shows the container is a mapping, whatever its name suggested: a
      // tensor takes no string index (round 58: a criterion's dict of losses).
      bool string_key = is(unparenthesize(field(e, k.f_subscript)), k.string);
      if (base.type != Type::Tensor || string_key) base.type = base.has_graph() ? Type::Tensors : Type::Unknown;
      return grad_enabled ? base : Value::free(base.type);
    }
    if (t == k.binary_operator) {
      Value l = eval(field(e, k.f_left)), r = eval(field(e, k.f_right));
      Value v = join(l, r);
      v.type = arithmetic_type(l.type, r.type, v.has_graph());
      if (l.has_graph() && r.has_graph()) v.consumed = l.consumed && r.consumed ? l.consumed : nullptr;
      return grad_enabled ? v : Value::free();
    }
    if (t == k.unary_operator || t == k.await_) {
      Value v = eval(ts_node_named_child(e, 0));
      return grad_enabled ? v : Value::free();
    }
    if (t == k.not_operator || t == k.comparison_operator || t == k.boolean_operator) {
      eval_children_except(e, TSNode{});
      return Value::free();
    }
    if (t == k.tuple || t == k.list || t == k.set || t == k.expression_list) return container(join_children(e));
    if (t == k.dictionary) return container(eval_dictionary(e));
    if (t == k.conditional_expression) return eval_conditional(e);
    if (t == k.named_expression) {
      Value v = eval(field(e, k.f_value));
      if (auto d = dotted_name(field(e, k.f_name), src)) bind_name(*d, field(e, k.f_name), field(e, k.f_value), v);
      return v;
    }
    if (t == k.list_comprehension || t == k.set_comprehension || t == k.generator_expression ||
        t == k.dictionary_comprehension)
      return eval_comprehension(e);
    if (t == k.string || t == k.concatenated_string) {
      eval_interpolations(e);  // `f"{model(x)=}"` runs the forward
      return Value::free();
    }
    if (t == k.integer || t == k.float_ || t == k.true_ || t == k.false_ || t == k.none || t == k.lambda ||
        t == k.ellipsis)
      return Value::free();
    if (t == k.list_splat || t == k.dictionary_splat) return eval(ts_node_named_child(e, 0));
    if (t == k.keyword_argument) return eval(field(e, k.f_value));
    return Value::unknown();
  }

  // The expressions an f-string interpolates are evaluated where the string is.
  void eval_interpolations(TSNode str) {
    for_each_named_child(str, [&](TSNode c) {
      std::string_view type = ts_node_type(c);
      if (type == "interpolation") eval(ts_node_named_child(c, 0));
      else if (type == "string") eval_interpolations(c);
    });
  }

  void eval_children_except(TSNode e, TSNode skip) {
    for_each_named_child(e, [&](TSNode c) {
      if (!ts_node_eq(c, skip) && !is(c, k.comment)) eval(c);
    });
  }

  Value join_children(TSNode e) {
    Value v = Value::free();
    for_each_named_child(e, [&](TSNode c) {
      if (!is(c, k.comment)) v = join(v, eval(c));
    });
    return v;
  }

  Value eval_dictionary(TSNode e) {
    Value v = Value::free();
    uint32_t n = ts_node_named_child_count(e);
    for (uint32_t i = 0; i < n; ++i) {
      TSNode c = ts_node_named_child(e, i);
      if (is(c, k.pair)) {
        eval(field(c, kinds().f_name));  // keys have no field name in this grammar; harmless
        v = join(v, eval(field(c, k.f_value)));
      } else if (!is(c, k.comment)) {
        v = join(v, eval(c));
      }
    }
    return v;
  }

  Value eval_conditional(TSNode e) {
    // a if cond else b: children are [a, cond, b].
    Value a = eval(ts_node_named_child(e, 0));
    eval(ts_node_named_child(e, 1));
    Value b = eval(ts_node_named_child(e, 2));
    return join(a, b);
  }

  Value eval_comprehension(TSNode e) {
    Env saved = env;
    TSNode body = field(e, k.f_body);
    uint32_t n = ts_node_named_child_count(e);
    for (uint32_t i = 0; i < n; ++i) {
      TSNode c = ts_node_named_child(e, i);
      if (is(c, k.for_in_clause)) {
        Value it = eval(field(c, k.f_right));
        bind_loop_target(field(c, k.f_left), it);
      } else if (is(c, k.if_clause)) {
        eval(ts_node_named_child(c, 0));
      }
    }
    Value v = Value::unknown();
    if (is(body, k.pair)) v = eval(field(body, k.f_value));
    else v = eval(body);
    env = std::move(saved);
    return container(v);
  }

  // A tuple, list, dict or set: it holds tensors when it holds a graph, and it is never one.
  static Value container(Value v) {
    v.type = v.has_graph() ? Type::Tensors : Type::Object;
    return v;
  }

  // `a op b`: a tensor operand makes a tensor (`3.0 * loss`); two numbers make a number;
  // anything else holding a graph is not proven a tensor (`t1 + t2` of tuples concatenates).
  static Type arithmetic_type(Type l, Type r, bool graph) {
    if (l == Type::Tensor || r == Type::Tensor) return Type::Tensor;
    if (l == Type::Number && r == Type::Number) return Type::Number;
    if (l == Type::Array || r == Type::Array) return graph ? Type::Unknown : Type::Array;
    return graph ? Type::Tensors : Type::Unknown;
  }

  Value with_step(Value v, TSNode at, std::string msg) {
    v.why = node(at, std::move(msg), v.why);
    return v;
  }

  Value eval_attribute(TSNode e) {
    auto d = dotted_name(e, src);
    if (d) {
      auto it = env.find(*d);
      if (it != env.end()) {
        eval(field(e, k.f_object));
        return it->second;
      }
      if (backwarded.count(*d)) return lookup(*d, e);
    }
    TSNode obj = field(e, k.f_object);
    Value base = eval(obj);
    std::string_view attr = text_of(field(e, k.f_attribute), src);
    if (names::is_detached_attribute(attr)) return Value::free(attr == "grad" || attr == "data" ? Type::Tensor : Type::Unknown);
    if (attr == "indices" && is(unparenthesize(obj), k.call) &&
        names::is_integer_reduction(callee_leaf(unparenthesize(obj), src)))
      return Value::free();  // integer positions of max/min/topk/sort (TG001-P12)
    if (d && d->find('.') != std::string::npos && m.import_of(d->substr(0, d->find('.'))))
      return Value::free();  // a module attribute: torch.float32, np.pi
    // `x.T` of a tensor is a tensor; `out.loss`, `out.logits` of a model's output are not
    // proven ones (a ModelOutput field may be a tuple of hidden states).
    if (base.type != Type::Tensor || !is_tensor_attribute(attr))
      base.type = base.has_graph() ? Type::Tensors : Type::Unknown;
    return base;
  }

  // Which local function a call resolves to: a bare name defined once in this file, or
  // `self.method(...)` defined once on the enclosing class.
  int local_function(TSNode call) {
    TSNode callee = field(call, k.f_function);
    std::string_view name;
    if (is(callee, k.identifier)) {
      name = text_of(callee, src);
      if (m.scopes()[scope].bindings.count(std::string(name))) return -1;  // rebound locally
    } else if (is(callee, k.attribute) && text_of(field(callee, k.f_object), src) == "self") {
      name = text_of(field(callee, k.f_attribute), src);
    } else {
      return -1;
    }
    const std::vector<int>* fs = m.functions_named(name);
    if (!fs || fs->size() != 1) return -1;
    return (*fs)[0];
  }

  // `agent.learn(batch)` with every binding of `agent` visible here constructing one class of
  // this file that defines `learn` (round 34: a DQN agent whose `learn` returns `loss.item()`):
  // that method, read like a helper. -1 otherwise.
  int instance_method(const std::string& recv, std::string_view method) const {
    if (recv.find('.') != std::string::npos || recv == "self") return -1;
    const std::vector<BindingSite>* sites = m.bindings_of(recv, scope);
    if (!sites || sites->empty()) return -1;
    int cls = -1;
    for (const BindingSite& b : *sites) {
      TSNode v = unparenthesize(b.value);
      if (b.position >= 0 || !is(v, k.call) || !is(field(v, k.f_function), k.identifier)) return -1;
      int c = m.class_named(text_of(field(v, k.f_function), src));
      if (c < 0 || (cls >= 0 && c != cls)) return -1;
      cls = c;
    }
    const std::vector<int>* fs = m.functions_named(method);
    int found = -1;
    if (fs)
      for (int f : *fs)
        if (m.functions()[f].class_index == cls) {
          if (found >= 0) return -1;
          found = f;
        }
    return found;
  }

  Value eval_args(TSNode call) {
    Value v = Value::free();
    TSNode args = field(call, k.f_arguments);
    if (is(args, k.generator_expression)) return eval(args);
    if (is_null(args)) return v;
    for_each_named_child(args, [&](TSNode a) {
      if (is(a, k.comment)) return;
      v = join(v, eval(a));
      note_frozen_argument(is(a, k.keyword_argument) ? field(a, k.f_value) : a);
    });
    return v;
  }

  void note_frozen_argument(TSNode a) {
    if (dry || is_null(a) || !is(a, k.identifier)) return;
    if (auto it = frozen.find(std::string(text_of(a, src))); it != frozen.end())
      p.frozen_arguments_[node_id(a)] = it->second;
  }

  Value graph_from(TSNode at, std::string msg, EvidencePtr prev = nullptr, Type type = Type::Tensor) {
    return Value::graph_of(node(at, std::move(msg), std::move(prev)), type);
  }

  static bool is_tensor_attribute(std::string_view attr) {
    return attr == "T" || attr == "mT" || attr == "H" || attr == "mH" || attr == "real" || attr == "imag";
  }

  Value eval_call(TSNode call) {
    TSNode callee = field(call, k.f_function);
    Value args = eval_args(call);
    forget_keys_of_mutated(callee, args);
    Value v = is(callee, k.attribute) ? eval_method_call(call, callee, args)
                                      : eval_function_call(call, callee, args);
    if (!grad_enabled) return Value::free();
    return v;
  }

  // `d.update(...)`, `d.pop(k)`, ...: what a key holds is no longer known; reads of `d[k]`
  // fall back to what the container holds, which now holds what `update` / `setdefault` put in.
  void forget_keys_of_mutated(TSNode callee, const Value& args) {
    if (!is(callee, k.attribute)) return;
    static constexpr std::string_view kMutators[] = {"update", "setdefault", "pop", "popitem", "clear", "__setitem__"};
    std::string_view method = text_of(field(callee, k.f_attribute), src);
    if (std::find(std::begin(kMutators), std::end(kMutators), method) == std::end(kMutators)) return;
    auto d = dotted_name(field(callee, k.f_object), src);
    if (!d) return;
    env.erase_prefixed(*d + "['");
    bool stores = method == "update" || method == "setdefault" || method == "__setitem__";
    if (stores && grad_enabled && args.has_graph()) env[*d] = join(lookup(*d, callee), args);
  }

  // `weak`: why the callee is a loss only by a heuristic (empty when its binding shows it).
  Value loss_call(TSNode call, const Value& args, std::string weak = {}) {
    if (args.graph == Graph::Free && ts_node_named_child_count(field(call, k.f_arguments)) > 0)
      return Value::free(Type::Tensor);  // a loss of values that carry no graph has none either
    // A criterion (known by its binding) differentiates through its prediction: with the
    // prediction shown graph-free and no other argument shown to carry a graph (a target read
    // from data is unknown, not a graph), the loss has none (round 20: a perplexity loop whose
    // logits come from a forward under no_grad).
    if (weak.empty() && !args.has_graph()) {
      TSNode prediction = positional_arg(call, 0);
      if (is_null(prediction)) prediction = keyword_arg(call, "input", src);
      if (!is_null(prediction) && eval(prediction).graph == Graph::Free) return Value::free(Type::Tensor);
    }
    Value v = graph_from(call, code(text_of(call, src)) + " computes a loss" + weak,
                         args.has_graph() ? args.why : nullptr);
    if (!weak.empty()) v.weak = v.why;
    else if (args.has_graph() && !args.proven()) v.weak = args.weak ? args.weak : args.why;
    return v;
  }

  std::string criterion_weakness(std::string_view dotted) {
    if (m.kind_of(dotted, scope) == ValueKind::Criterion) return {};
    return ": `" + std::string(dotted) + "` is named like a loss function (naming heuristic)";
  }

  Value forward_pass(TSNode call, std::string_view model_name, const Value& args) {
    // `norm_layer(nn.Conv2d(...))`, `spectral_norm(conv)`: a module handed a module wraps it
    // (round 17: SPADE's discriminator built in `__init__`); a forward takes tensors.
    if (TSNode first = positional_arg(call, 0); !is_null(first) && is_module_value(unparenthesize(first)))
      return Value::free(Type::Object);
    if (auto it = frozen.find(std::string(model_name)); it != frozen.end()) {
      // No parameter requires gradients: only graph-carrying inputs give the output a graph.
      if (!dry) p.frozen_forwards_[node_id(call)] = it->second;
      if (args.graph == Graph::Free) return Value::free(Type::Tensors);
      if (!args.has_graph()) return Value::unknown();
      return with_step(args, call, code(text_of(call, src)) + " runs a frozen module (" +
                                       code(text_of(it->second, src)) + ") on graph-carrying inputs");
    }
    bool bound = m.kind_of(model_name, scope) == ValueKind::Model;
    // A class from a `models` package is a model by its import path only, and what its forward
    // returns is not seen (round 39: facenet's MTCNN returns face crops of the raw image,
    // detected under no_grad): a weak step.
    bool by_path = bound && m.model_only_by_import_path(model_name, scope);
    std::string reason = by_path ? "`" + std::string(model_name) +
                                       "` is built by a class imported from a `models` package (naming heuristic on the "
                                       "import path; its forward is not in this file)"
                         : bound ? "`" + std::string(model_name) + "` is bound to a model"
                                 : "`" + std::string(model_name) + "` is named like a model (naming heuristic)";
    // A model's output may be a tensor, a tuple or a ModelOutput: a tensor only when the
    // binding shows a layer or a local module whose forward returns one.
    Type out = bound ? model_output_type(model_name, 0) : Type::Tensors;
    Value v = graph_from(call, code(text_of(call, src)) + " is a forward pass with autograd on: " + reason,
                         nullptr, out);
    if (!bound || by_path) v.weak = v.why;
    return v;
  }

  // A constructor call that builds a module, or a name every binding of which does (never a
  // name read by its spelling: `decoder(encoder_out)` is a forward).
  bool is_module_value(TSNode e) const {
    if (is(e, k.call)) return m.classify_value(e, scope) == ValueKind::Model;
    auto d = dotted_name(e, src);
    const std::vector<BindingSite>* sites = d ? m.bindings_of(*d, scope) : nullptr;
    if (!sites || sites->empty()) return false;
    for (const BindingSite& b : *sites)
      if (b.arity > 1 || !is(unparenthesize(b.value), k.call) ||
          m.classify_value(unparenthesize(b.value), scope) != ValueKind::Model)
        return false;
    return true;
  }

  // Tensor when every binding of `model` is a torch layer with one tensor output, a local
  // module class whose `forward` returns a tensor, or one of those moved / cast / switched
  // (`net.to(device)`, `net.eval()`); Tensors otherwise.
  Type model_output_type(std::string_view model, int depth) {
    const std::vector<BindingSite>* sites = m.bindings_of(model, scope);
    if (!sites || sites->empty() || depth > 4) return Type::Tensors;
    for (const BindingSite& b : *sites) {
      TSNode v = unparenthesize(b.value);
      if (b.arity > 1 || !is(v, k.call)) return Type::Tensors;
      TSNode callee = field(v, k.f_function);
      std::string_view leaf = callee_leaf(v, src);
      if (is(callee, k.attribute) && names::keeps_module(leaf)) {
        auto recv = dotted_name(field(callee, k.f_object), src);
        if (!recv || *recv == model) continue;  // `net = net.to(device)`: the same module
        if (model_output_type(*recv, depth + 1) != Type::Tensor) return Type::Tensors;
        continue;
      }
      if (auto q = m.qualified_callee(v); q && names::is_single_tensor_layer(*q)) continue;
      int cls = is(callee, k.identifier) ? m.class_named(leaf) : -1;
      if (cls < 0 || local_forward_type(cls) != Type::Tensor) return Type::Tensors;
    }
    return Type::Tensor;
  }

  Type local_forward_type(int cls) {
    const std::vector<int>* fs = m.functions_named("forward");
    if (!fs) return Type::Unknown;
    for (int f : *fs) {
      if (m.functions()[f].class_index != cls) continue;
      Summary& sum = p.analyze_unit(m.functions()[f].scope);
      return sum.done && sum.has_return ? sum.joined.type : Type::Unknown;
    }
    return Type::Unknown;
  }

  Value factory(TSNode call) {
    if (has_literal_true_keyword(call, "requires_grad", src))
      return leaf_from(call, code(text_of(call, src)) + " creates a leaf tensor with requires_grad=True");
    return Value::free(Type::Tensor);
  }

  // What a library function gives, read from its qualified name. Only torch's tensor
  // functions (and einops') are known to return tensors; NumPy gives arrays, the standard
  // library's clocks and maths give numbers; a capitalised callee constructs an object.
  // Anything else is a function the analysis cannot see: its result is Unknown.
  Value library_call(TSNode call, std::string_view qualified, const Value& args) {
    std::string_view leaf = qualified.substr(qualified.rfind('.') + 1);
    if (has_literal_true_keyword(call, "requires_grad", src))
      return leaf_from(call, code(text_of(call, src)) + " creates a leaf tensor with requires_grad=True");
    if (!leaf.empty() && std::isupper(static_cast<unsigned char>(leaf[0]))) return construct(call, qualified, args);
    if (names::is_numpy_module(qualified)) return Value::free(Type::Array);
    if (names::is_number_module(qualified)) return Value::free(Type::Number);
    if (names::is_tensor_function(qualified)) {
      if (names::is_tensor_factory(leaf)) return factory(call);
      if (names::is_functional_loss(leaf)) return loss_call(call, args);
      Value v = args;  // torch.stack(terms), F.relu(x): the arguments decide
      bool several = returns_several(leaf);
      v.type = v.has_graph() ? (several ? Type::Tensors : Type::Tensor) : (several ? Type::Object : Type::Tensor);
      return v;
    }
    if (args.has_graph()) return Value::unknown();  // an unseen function of a graph
    return args.graph == Graph::Free ? Value::free() : Value::unknown();
  }

  // A class constructed from outside this file. torch's own classes (optimizers, timers,
  // layers, datasets) keep no graph of their arguments; another class given graph-carrying
  // arguments is assumed to keep them (a stats namedtuple), which is a guess: weak.
  Value construct(TSNode call, std::string_view qualified, const Value& args) {
    if (qualified.starts_with("torch.") || args.graph == Graph::Free) return Value::free(Type::Object);
    if (!args.has_graph()) return Value::unknown(Type::Object);
    Value v = with_step(args, call, code(text_of(call, src)) + " is assumed to keep its arguments (a class not defined here)");
    v.type = Type::Tensors;
    v.weak = v.why;
    return v;
  }

  Value eval_method_call(TSNode call, TSNode callee, const Value& args) {
    TSNode obj = field(callee, k.f_object);
    std::string_view m_name = text_of(field(callee, k.f_attribute), src);
    auto recv_dotted = dotted_name(obj, src);
    auto full = dotted_name(callee, src);
    Value recv = eval(obj);
    if (m_name == "backward") return Value::free();
    if (names::is_detaching_method(m_name)) return Value::free(detached_type(m_name));
    if (m_name == "grad") {
      if (has_literal_true_keyword(call, "create_graph", src))  // a tuple of tensors
        return container(graph_from(call, code(text_of(call, src)) + " builds a differentiable gradient (create_graph=True)"));
      return Value::free(Type::Tensors);
    }
    if (names::is_non_differentiable(m_name)) return Value::free();
    if (m_name == "requires_grad_" && !is(positional_arg(call, 0), k.false_)) {
      if (recv.has_graph()) return recv;  // already records a graph: stays a non-leaf
      return leaf_from(call, code(text_of(call, src)) + " makes a leaf tensor that requires gradients");
    }
    bool library = recv_dotted && m.import_of(recv_dotted->substr(0, recv_dotted->find('.')));
    if (library && full) {
      if (auto q = m.qualified_callee(call)) return library_call(call, *q, args);
    }
    if (names::is_functional_loss(m_name)) return loss_call(call, args);
    if (m_name.ends_with("_loss"))
      return loss_call(call, args, ": `." + std::string(m_name) + "` is named like a loss (naming heuristic)");
    if (names::is_module_bookkeeping(m_name)) return Value::free();
    if (recv_dotted && m.is_model(*recv_dotted, scope)) {
      if (m_name == "forward" || m_name == "__call__") return forward_pass(call, *recv_dotted, args);
      if (m_name == "generate") return Value::free();  // decoding runs under no_grad
    }
    if (full && m.is_model(*full, scope)) return forward_pass(call, *full, args);  // self.model(x), self.encoder(h)
    if (full && m.is_criterion(*full, scope)) return loss_call(call, args, criterion_weakness(*full));
    if (int f = local_function(call); f >= 0 && recv_dotted && *recv_dotted == "self")
      return helper_result(call, f, args);
    if (int f = recv_dotted ? instance_method(*recv_dotted, m_name) : -1; f >= 0) return helper_result(call, f, args);
    if (recv.has_graph()) return tensor_method(recv, m_name, args);
    if (args.has_graph() && gathers_its_argument(callee, m_name)) return args;
    if (args.has_graph()) return Value::unknown();  // an unseen object's method of a graph
    Value v = join(recv, args);
    // `x.relu()` runs only on a tensor, whatever `x` was bound to.
    v.type = names::is_tensor_only_method(m_name) ? Type::Tensor : Type::Unknown;
    return v;
  }

  // `accelerator.gather(x)`, `gather_for_metrics`, `reduce`, `pad_across_processes`: an
  // Accelerator (by its binding, or failing one its name) hands back its argument's tensors,
  // gathered across processes, with their graph.
  bool gathers_its_argument(TSNode callee, std::string_view method) {
    if (method != "gather" && method != "gather_for_metrics" && method != "reduce" &&
        method != "pad_across_processes")
      return false;
    auto owner = backward_owner(m, field(callee, k.f_object), scope);
    return owner && owner->framework == Framework::Accelerate;
  }

  static Type detached_type(std::string_view method) {
    if (method == "item") return Type::Number;
    if (method == "numpy") return Type::Array;
    if (method == "tolist") return Type::Object;
    return Type::Tensor;  // detach, detach_
  }

  // A method of a graph-carrying value: `x.mean()`, `out.float()`. On a proven tensor the
  // result is a tensor unless the method hands back several (`chunk`, `split`); so is the
  // result of a method only tensors have (`out.mean()`: a tuple has no `mean`); on anything
  // else holding tensors (a tuple, a ModelOutput) it is not proven one.
  static Value tensor_method(const Value& recv, std::string_view method, const Value& args) {
    Value v = join(recv, args);
    if (returns_several(method)) v.type = Type::Tensors;
    else if (recv.type == Type::Tensor || names::is_tensor_only_method(method)) v.type = Type::Tensor;
    else v.type = Type::Tensors;
    if (!recv.proven() && recv.has_graph()) {
      v.naming_only = recv.naming_only;
      v.weak = recv.weak ? recv.weak : recv.why;
      v.why = recv.why;
    }
    return v;
  }

  static bool returns_several(std::string_view method) {
    return method == "chunk" || method == "split" || method == "unbind" || method == "tensor_split" ||
           method == "values" || method == "items" || method == "keys";
  }

  Value helper_result(TSNode call, int f, const Value& args) {
    Summary& s = p.analyze_unit(m.functions()[f].scope);
    if (!s.done) return Value::unknown();  // recursion
    // A graph the helper shows only by a parameter's name depends on what this call passes.
    if (s.joined.has_graph() && s.joined.naming_only) {
      if (args.graph == Graph::Free) return Value::free();
      if (!args.has_graph()) return Value::unknown();
      Value v = with_step(args, call, code(text_of(call, src)) + " returns what it is passed");
      v.type = s.joined.type == Type::Tensor ? Type::Tensors : s.joined.type;
      return v;
    }
    if (s.joined.has_graph() && !args.has_graph()) {
      // No argument of this call carries a graph: read the helper again with its parameters
      // bound to what this call passes (round 21: a distillation script's `kl_divergence`
      // helper, whose criterion makes a graph only from its parameters, called on outputs
      // computed under no_grad). A graph it still makes is its own (a global model's forward).
      if (std::optional<Summary> here = at_call_site(call, f); here && !here->joined.has_graph())
        return here->joined.graph == Graph::Free ? Value::free(here->joined.type) : Value::unknown(here->joined.type);
    }
    if (s.joined.has_graph()) {
      std::string step = code(text_of(call, src)) + " returns a graph-carrying value";
      Value v = with_step(s.joined, call, step);
      if (s.tuple_arity >= 0 && s.elements.size() == static_cast<size_t>(s.tuple_arity)) {
        std::vector<Value> parts;
        for (const Value& e : s.elements) parts.push_back(e.has_graph() ? with_step(e, call, step) : e);
        v.parts = std::make_shared<const std::vector<Value>>(std::move(parts));
      }
      return v;
    }
    if (s.joined.graph == Graph::Free) return s.joined;
    return Value::unknown();
  }

  // The helper `f` read for this call: its parameters bound to the values of the arguments
  // this call passes (unknown when the call leaves one to its default or a splat), recording
  // nothing. Two levels of such reads at most.
  std::optional<Summary> at_call_site(TSNode call, int f) {
    if (dry_depth >= 2) return std::nullopt;
    const FunctionInfo& fn = m.functions()[f];
    Summary here;
    Interpreter again(p, fn.scope, here);
    again.dry = true;
    again.dry_depth = dry_depth + 1;
    for (size_t i = 0; i < fn.params.size(); ++i) {
      TSNode arg = argument_for(fn, call, i, src);
      const Value* v = is_null(arg) ? nullptr : p.value_of(arg);
      again.passed[fn.params[i].name] = v ? *v : Value::unknown();
    }
    again.run();
    return here;
  }

  Value eval_function_call(TSNode call, TSNode callee, const Value& args) {
    if (!is(callee, k.identifier)) {
      eval(callee);
      return Value::unknown();  // fs[0](x), nn.Sigmoid()(x): not a callee the analysis sees
    }
    std::string name(text_of(callee, src));
    if (names::is_detaching_builtin(name)) return Value::free(Type::Number);
    if (names::is_non_differentiable(name)) return Value::free();
    if (m.is_model(name, scope) && !m.functions_named(name) && m.class_named(name) < 0)
      return forward_pass(call, name, args);
    if (m.is_criterion(name, scope)) return loss_call(call, args, criterion_weakness(name));
    if (names::is_functional_loss(name) && !m.import_of(name))
      return loss_call(call, args, ": `" + name + "` is named like a loss function (naming heuristic)");
    // Constructing a class of this file: an object. Given graph-carrying (or unknown)
    // arguments it may keep them (a dataclass of logits), so its graph is not known to be free.
    if (m.class_named(name) >= 0)
      return args.graph == Graph::Free ? Value::free(Type::Object) : Value::unknown(Type::Object);
    if (int f = local_function(call); f >= 0) return helper_result(call, f, args);
    if (names::is_propagating_builtin(name)) {
      Value v = args;  // sum(losses) holds tensors; list(x), zip(a, b) are containers
      v.type = v.has_graph() ? (name == "abs" && args.type == Type::Tensor ? Type::Tensor : Type::Tensors) : Type::Unknown;
      return v;
    }
    if (const ImportBinding* imp = m.import_of(name)) return library_call(call, imp->qualified, args);
    return Value::unknown();  // a function the analysis cannot see: `f()` may return anything
  }
};

Provenance::Provenance(const ModuleModel& model, const Interrupt* interrupt)
    : model_(model), interrupt_(interrupt) {
  summaries_.resize(model.scopes().size());
  for (size_t s = 0; s < model.scopes().size(); ++s) {
    ScopeKind kind = model.scopes()[s].kind;
    if (kind == ScopeKind::Module || kind == ScopeKind::Function) analyze_unit(static_cast<int>(s));
  }
}

Provenance::~Provenance() = default;

Provenance::Summary& Provenance::analyze_unit(int scope) {
  Summary& s = summaries_[scope];
  if (s.done || s.in_progress) return s;  // recursion sees a partial summary
  if (interrupt_) interrupt_->poll();
  s.in_progress = true;
  Interpreter interp(*this, scope, s);
  interp.run();
  s.in_progress = false;
  s.done = true;
  return s;
}

const Value* Provenance::value_of(TSNode expr) const {
  auto it = values_.find(node_id(expr));
  return it == values_.end() ? nullptr : &it->second;
}

bool Provenance::in_no_grad(TSNode n) const { return no_grad_.count(node_id(n)) > 0; }

TSNode Provenance::freezing_of(TSNode forward) const {
  auto it = frozen_forwards_.find(node_id(forward));
  return it == frozen_forwards_.end() ? TSNode{} : it->second;
}

TSNode Provenance::freezing_of_argument(TSNode argument) const {
  auto it = frozen_arguments_.find(node_id(argument));
  return it == frozen_arguments_.end() ? TSNode{} : it->second;
}

Value Provenance::return_value(int function) const {
  const Summary& s = summaries_[model_.functions()[function].scope];
  return s.joined;
}

}  // namespace preflight::analysis
