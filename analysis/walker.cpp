#include "analysis/walker.h"

#include "analysis/names.h"

namespace preflight::analysis {
namespace {

struct Walk {
  const ModuleModel& model;
  std::span<Visitor* const> visitors;
  const Interrupt* interrupt;
  const Kinds& k = kinds();
  std::string_view src = model.source();
  WalkState state;

  void bind_targets(TSNode target) {
    if (state.loops.empty()) return;
    TSSymbol s = sym(target);
    if (s == k.pattern_list || s == k.tuple_pattern || s == k.list_pattern || s == k.tuple ||
        s == k.list) {
      uint32_t n = ts_node_named_child_count(target);
      for (uint32_t i = 0; i < n; ++i) bind_targets(ts_node_named_child(target, i));
      return;
    }
    if (s == k.list_splat_pattern) return bind_targets(ts_node_named_child(target, 0));
    if (auto d = dotted_name(target, src)) state.loops.back().bound.insert(*d);
  }

  void visit(TSNode n) {
    TSSymbol s = sym(n);
    int saved_scope = state.scope;
    std::vector<LoopFrame> saved_loops;
    int opened = -1;
    if (s == k.function_definition || s == k.class_definition || s == k.lambda ||
        s == k.list_comprehension || s == k.set_comprehension ||
        s == k.dictionary_comprehension || s == k.generator_expression)
      opened = model.scope_opened_by(n);
    bool is_def = s == k.function_definition || s == k.class_definition;
    if (opened >= 0) state.scope = opened;
    if (is_def && interrupt) interrupt->poll();
    if (is_def) saved_loops.swap(state.loops);  // a function body is not part of the loop
    if (s == k.for_statement || s == k.while_statement) {
      LoopFrame f;
      f.node = n;
      if (s == k.for_statement) {
        f.iterable = field(n, k.f_right);
        state.loops.push_back(std::move(f));
        bind_targets(field(n, k.f_left));
      } else {
        state.loops.push_back(std::move(f));
      }
    }
    if (s == k.assignment) {
      for (TSNode a = n; is(a, k.assignment); a = field(a, k.f_right)) bind_targets(field(a, k.f_left));
    } else if (s == k.named_expression) {
      bind_targets(field(n, k.f_name));
    }
    for (Visitor* v : visitors) v->enter(n, state);
    for_each_named_child(n, [&](TSNode c) { visit(c); });
    for (Visitor* v : visitors) v->leave(n, state);
    if (s == k.for_statement || s == k.while_statement) state.loops.pop_back();
    if (is_def) saved_loops.swap(state.loops);
    state.scope = saved_scope;
  }
};

}  // namespace

void walk(const ModuleModel& model, std::span<Visitor* const> visitors, const Interrupt* interrupt) {
  Walk w{model, visitors, interrupt, kinds(), model.source(), WalkState{}};
  w.state.scope = 0;
  for_each_named_child(model.root(), [&](TSNode c) {
    if (interrupt) interrupt->poll();
    w.visit(c);
  });
}

std::vector<TSNode> unwrap_iterables(TSNode it, std::string_view src) {
  const Kinds& k = kinds();
  it = unparenthesize(it);
  if (is(it, k.call) && names::is_iterable_wrapper(callee_leaf(it, src))) {
    std::vector<TSNode> out;
    TSNode args = field(it, k.f_arguments);
    uint32_t n = is_null(args) ? 0 : ts_node_named_child_count(args);
    for (uint32_t i = 0; i < n; ++i) {
      TSNode a = ts_node_named_child(args, i);
      if (is(a, k.keyword_argument) || is(a, k.comment)) continue;
      if (is(a, k.integer)) continue;  // enumerate(x, 1), islice(x, 10)
      for (TSNode inner : unwrap_iterables(a, src)) out.push_back(inner);
    }
    return out;
  }
  return {it};
}

bool contains_call(TSNode n, std::string_view leaf, std::string_view src) {
  const Kinds& k = kinds();
  if (is(n, k.call) && callee_leaf(n, src) == leaf) return true;
  bool found = false;
  for_each_named_child(n, [&](TSNode c) { found = found || contains_call(c, leaf, src); });
  return found;
}

}  // namespace preflight::analysis
