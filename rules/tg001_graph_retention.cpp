// TG001 graph-retention: a tensor that still carries its autograd graph is stored in
// something that outlives the iteration (a list, a dict, a running total).
//
// Evidence chain: where the value got its graph (forward pass, loss, requires_grad, a name
// that is `.backward()`ed) -> the store and why its holder persists -> whether a backward in
// the same iteration already consumed the graph (warning: host-side bookkeeping leaks) or
// none ever does (error: every activation stays on the device).
// Exempt: stores under no_grad; holders that a later backward or a differentiable return
// reads (stacked RL objectives, chunked losses, pipeline getters), decided by reachability.
#include <algorithm>
#include <array>
#include <unordered_set>

#include "analysis/names.h"
#include "rules/fix_builder.h"
#include "rules/rule.h"

namespace preflight::rules {
namespace {

using namespace preflight::analysis;

enum class StoreKind { Append, Augmented, Subscript };

struct Candidate {
  StoreKind kind;
  std::string holder;  // dotted name as written
  std::string method;  // append / add / ... for Append
  TSNode stored;       // the stored expression (the anchor)
  TSNode store;        // the whole store (call or assignment)
  TSNode holder_node;
  int scope;
  ByteRange region;    // innermost loop, or the function, where a backward counts as "same step"
  bool in_loop;
};

constexpr std::array<std::string_view, 6> kAppendFamily = {"append", "add", "extend",
                                                           "insert", "put", "push"};

Finding make_finding(const RuleContext& ctx, const Candidate& c, TSNode backward);

class Check final : public RuleCheck {
 public:
  explicit Check(const RuleContext& c) : ctx(c) {}
  void finish(std::vector<Finding>& out) override;

 private:
  const RuleContext& ctx;
  const Kinds& k = kinds();
  std::vector<Candidate> found;

  // Does the holder outlive the iteration? Inside a loop: not rebound in the innermost loop
  // so far. Outside any loop: only instance state (`self.x`) outlives the call.
  bool persists(const std::string& holder, const WalkState& st) const {
    if (const LoopFrame* loop = st.innermost_loop()) return !loop->bound.count(holder);
    return holder.starts_with("self.");
  }

  ByteRange region_of(const WalkState& st) const {
    if (const LoopFrame* loop = st.innermost_loop()) return range_of(loop->node);
    int f = ctx.model.enclosing_function(st.scope);
    return f >= 0 ? range_of(ctx.model.functions()[f].node) : range_of(ctx.root);
  }

  // `buf[i] = v` into a preallocated tensor is an in-place copy inside one graph, not a
  // container that keeps one graph per iteration (`out = torch.zeros(...)`).
  bool is_tensor_holder(const std::string& holder, int scope) const {
    if (const std::vector<BindingSite>* sites = ctx.model.bindings_of(holder, scope))
      for (const BindingSite& b : *sites) {
        TSNode v = unparenthesize(b.value);
        if (!is(v, k.call)) continue;
        std::string_view leaf = ctx.model.callee_leaf(v);
        if (names::is_tensor_factory(leaf) || leaf.starts_with("new_") || leaf == "clone" ||
            leaf == "empty_strided")
          return true;
      }
    return false;
  }

  bool carries_graph(TSNode e) const {
    const Value* v = ctx.provenance.value_of(e);
    return v && v->has_graph();
  }

  void add(StoreKind kind, std::string holder, std::string method, TSNode stored, TSNode store,
           TSNode holder_node, const WalkState& st) {
    if (ctx.provenance.in_no_grad(store) || !carries_graph(stored)) return;
    int f = ctx.model.enclosing_function(st.scope);
    if (f >= 0 && ctx.model.is_test_function(f)) return;  // tests: retention costs nothing
    found.push_back({kind, std::move(holder), std::move(method), stored, store, holder_node,
                     st.scope, region_of(st), !st.loops.empty()});
  }

  void enter(TSNode n, const WalkState& st) override {
    TSSymbol s = sym(n);
    if (s == k.call) return on_call(n, st);
    if (s == k.augmented_assignment) return on_augmented(n, st);
    if (s == k.assignment) return on_assignment(n, st);
  }

  void on_call(TSNode call, const WalkState& st) {
    TSNode callee = field(call, k.f_function);
    if (!is(callee, k.attribute)) return;
    std::string_view method = text_of(field(callee, k.f_attribute), ctx.source);
    if (std::find(kAppendFamily.begin(), kAppendFamily.end(), method) == kAppendFamily.end()) return;
    // A store discards the call's result; `y = x.add(z)` is tensor arithmetic.
    if (!is(ts_node_parent(call), k.expression_statement)) return;
    TSNode holder_node = field(callee, k.f_object);
    auto holder = dotted_name(holder_node, ctx.source);
    if (!holder || !persists(*holder, st) || is_tensor_holder(*holder, st.scope)) return;
    TSNode stored = positional_arg(call, method == "insert" ? 1 : 0);
    if (is_null(stored)) return;
    add(StoreKind::Append, *holder, std::string(method), stored, call, holder_node, st);
  }

  void on_augmented(TSNode a, const WalkState& st) {
    std::string_view op = text_of(field(a, k.f_operator), ctx.source);
    if ((op != "+=" && op != "-=") || st.loops.empty()) return;
    TSNode left = field(a, k.f_left);
    auto holder = dotted_name(left, ctx.source);
    if (!holder || !persists(*holder, st)) return;
    add(StoreKind::Augmented, *holder, {}, field(a, k.f_right), a, left, st);
  }

  void on_assignment(TSNode a, const WalkState& st) {
    for (TSNode t = a; is(t, k.assignment); t = field(t, k.f_right)) {
      TSNode left = field(t, k.f_left);
      if (!is(left, k.subscript)) continue;
      TSNode holder_node = field(left, k.f_value);
      auto holder = dotted_name(holder_node, ctx.source);
      if (!holder || !persists(*holder, st) || is_tensor_holder(*holder, st.scope)) continue;
      TSNode value = field(a, k.f_right);
      while (is(value, k.assignment)) value = field(value, k.f_right);
      add(StoreKind::Subscript, *holder, {}, value, a, holder_node, st);
      return;  // the first qualifying target
    }
  }
};

std::string store_text(const Candidate& c) {
  switch (c.kind) {
    case StoreKind::Append: return "`" + c.holder + "." + c.method + "(...)`";
    case StoreKind::Augmented: return "`" + c.holder + " += ...`";
    case StoreKind::Subscript: return "`" + c.holder + "[...] = ...`";
  }
  return {};
}

std::string hint_for(const Candidate& c, std::string_view stored, bool tensor) {
  std::string s(stored);
  if (!tensor)
    return "Store plain numbers (`.item()`) or detached tensors (`.detach()`) taken from " +
           quote_code(s) + ", not the value itself: it holds tensors that still carry a graph.";
  if (c.kind == StoreKind::Augmented)
    return "Accumulate a Python number instead: `" + c.holder + " += " + s + ".item()`.";
  return "Store `" + s + ".item()` if only the number matters, or `" + s +
         ".detach()` if a tensor is needed.";
}

// `.detach()` on the stored value; inside a tuple/list/dict literal, on each element that
// carries a graph (a container has no `.detach()`, TG001-P14).
std::optional<Fix> detach_fix(const RuleContext& ctx, TSNode stored) {
  const Kinds& k = kinds();
  TSNode e = unparenthesize(stored);
  Fix fix{"add .detach()", FixSafety::Safe, {}};
  TSSymbol s = sym(e);
  if (s == k.tuple || s == k.list || s == k.dictionary || s == k.set) {
    uint32_t n = ts_node_named_child_count(e);
    for (uint32_t i = 0; i < n; ++i) {
      TSNode el = ts_node_named_child(e, i);
      if (is(el, k.pair)) el = field(el, k.f_value);
      const Value* v = ctx.provenance.value_of(el);
      if (!v || !v->has_graph()) continue;
      if (!v->tensor) return std::nullopt;  // a nested container or an unknown object
      fix.edits.push_back(append_method(el, ".detach()", ctx.source));
    }
    if (fix.edits.empty()) return std::nullopt;
    fix.description = "add .detach() to the stored tensor";
    return fix;
  }
  const Value* v = ctx.provenance.value_of(stored);
  if (!v || !v->tensor) return std::nullopt;  // `.detach()` exists only on tensors
  fix.edits.push_back(append_method(stored, ".detach()", ctx.source));
  return fix;
}

std::optional<Fix> item_fix(const RuleContext& ctx, TSNode stored) {
  const Kinds& k = kinds();
  TSSymbol s = sym(unparenthesize(stored));
  const Value* v = ctx.provenance.value_of(stored);
  if (s == k.tuple || s == k.list || s == k.dictionary || s == k.set || !v || !v->tensor)
    return std::nullopt;
  // Unsafe: `.item()` turns a tensor into a Python number on the host (type and device
  // change), and fails on a tensor with more than one element.
  return Fix{"store a Python number with .item()", FixSafety::Unsafe,
             {append_method(stored, ".item()", ctx.source)}};
}

// The anchor of a parenthesised tuple is its elements: `(step, loss)` -> `step, loss`.
ByteRange anchor_range(TSNode stored, std::string_view src) {
  ByteRange r = range_of(stored);
  if (is(stored, kinds().tuple) && r.end - r.begin >= 2 && src[r.begin] == '(' && src[r.end - 1] == ')')
    return {r.begin + 1, r.end - 1};
  return r;
}

Finding make_finding(const RuleContext& ctx, const Candidate& c, TSNode backward) {
  const Value* v = ctx.provenance.value_of(c.stored);
  bool consumed = !is_null(backward) || (v && v->consumed);
  Finding f;
  f.code = "TG001";
  f.range = anchor_range(c.stored, ctx.source);
  std::string stored = std::string(text_of(c.stored, ctx.source));
  std::string shown = quote_code(stored);
  if (consumed) {
    f.severity = Severity::Warning;
    f.category = Category::PerformanceWarn;
    f.message = store_text(c) + " keeps " + shown +
                " after a backward has consumed its graph: the activations are freed, but every "
                "stored tensor still pins its graph's bookkeeping and stays differentiable, so "
                "memory grows with every iteration.";
  } else {
    f.severity = v && v->naming_only ? Severity::Warning : Severity::Error;
    f.category = Category::CriticalOom;
    f.message = store_text(c) + " keeps " + shown +
                " with its autograd graph attached, and no backward ever consumes it: every "
                "intermediate activation behind it stays on the device, and one more graph "
                "accumulates per " + std::string(c.in_loop ? "iteration" : "call") +
                " until memory runs out.";
  }
  f.hint = hint_for(c, stored.size() <= 40 ? stored : "value", v && v->tensor);
  if (v) f.evidence = evidence_steps(v->why, 5);
  std::string why_persist = c.in_loop
                                ? "`" + c.holder + "` is not rebound inside the loop, so it outlives every iteration"
                                : "`" + c.holder + "` is instance state, so it outlives this call";
  f.evidence.push_back({range_of(c.holder_node), why_persist});
  if (!is_null(backward))
    f.evidence.push_back({range_of(backward), quote_code(text_of(backward, ctx.source)) +
                                                  " consumes this graph in the same iteration"});
  else if (consumed)
    f.evidence.push_back({v->consumed->range, v->consumed->message + " before it is stored"});
  else
    f.evidence.push_back({range_of(c.store), "no `.backward()` and no differentiable return reads `" +
                                                 c.holder + "`"});
  if (v && v->naming_only)
    f.evidence.push_back({range_of(c.stored), "the graph is inferred from a name alone (naming heuristic)"});
  if (auto fix = detach_fix(ctx, c.stored)) f.fixes.push_back(std::move(*fix));
  if (auto fix = item_fix(ctx, c.stored)) f.fixes.push_back(std::move(*fix));
  return f;
}

void Check::finish(std::vector<Finding>& out) {
  const Reachability& reach = ctx.reachability;
  std::unordered_set<std::string> container_holders;
  for (const Candidate& c : found)
    if (c.kind != StoreKind::Augmented) container_holders.insert(reach.key(c.holder, c.scope));
  for (const Candidate& c : found) {
    TSNode backward = reach.backward_needing(c.region, c.scope, reach.reads(c.stored, c.scope));
    const Value* v = ctx.provenance.value_of(c.stored);
    bool consumed = !is_null(backward) || (v && v->consumed);
    if (reach.load_bearing(reach.key(c.holder, c.scope), container_holders, !consumed)) continue;
    out.push_back(make_finding(ctx, c, backward));
  }
}

}  // namespace

std::unique_ptr<RuleCheck> make_tg001(const RuleContext& ctx) { return std::make_unique<Check>(ctx); }

}  // namespace preflight::rules
