#include "analysis/reaching.h"

namespace preflight::analysis {
namespace {

TSNode enclosing_block(const ModuleModel& model, TSNode n) {
  const Kinds& k = kinds();
  for (TSNode p = model.parent(n); !is_null(p); n = p, p = model.parent(p))
    if (is(p, k.block) || is(p, k.module)) return p;
  return n;
}

void find_last_assignment(std::string_view name, TSNode n, uint32_t before, std::string_view src,
                          TSNode& found) {
  const Kinds& k = kinds();
  if (ts_node_start_byte(n) >= before) return;
  TSSymbol s = sym(n);
  if (s == k.function_definition || s == k.class_definition || s == k.lambda) return;
  if (s == k.assignment && !is_null(field(n, k.f_right))) {
    auto d = dotted_name(field(n, k.f_left), src);
    if (d && *d == name) found = n;
  }
  for_each_named_child(n, [&](TSNode c) { find_last_assignment(name, c, before, src, found); });
}

}  // namespace

bool encloses(TSNode outer, TSNode inner) {
  return ts_node_start_byte(outer) <= ts_node_start_byte(inner) &&
         ts_node_end_byte(inner) <= ts_node_end_byte(outer);
}

namespace {

// The binding sites that can reach `use`; with `unpacking` false, none at all when a tuple
// unpacking binds the name anywhere (the historical contract of reaching_values).
std::vector<BindingSite> reaching(const ModuleModel& model, std::string_view dotted, TSNode use,
                                  int scope, bool unpacking) {
  const std::vector<BindingSite>* sites = model.bindings_of(dotted, scope);
  if (!sites) return {};
  const auto& own = model.scopes()[scope].bindings;
  bool local = !dotted.starts_with("self.") && own.count(std::string(dotted));
  std::vector<BindingSite> found;
  for (const BindingSite& b : *sites) {
    if (b.arity > 1 && !unpacking) return {};  // unpacked tuples are not followed
    // No value, so no assignment to follow: `x: int` only declares, and a right side the
    // parser could not read (`x =else: f()`) assigns nothing we can see.
    if (is_null(b.value)) continue;
    if (local && ts_node_start_byte(b.value) >= ts_node_start_byte(use)) continue;
    // An assignment in a block around the use replaces every earlier one.
    if (local && encloses(enclosing_block(model, b.value), use)) found.clear();
    found.push_back(b);
  }
  return found;
}

}  // namespace

std::vector<TSNode> reaching_values(const ModuleModel& model, std::string_view dotted,
                                    TSNode use, int scope) {
  std::vector<TSNode> values;
  for (const BindingSite& b : reaching(model, dotted, use, scope, false)) values.push_back(b.value);
  return values;
}

std::vector<BindingSite> reaching_sites(const ModuleModel& model, std::string_view dotted,
                                        TSNode use, int scope) {
  return reaching(model, dotted, use, scope, true);
}

TSNode last_assignment(std::string_view name, TSNode body, uint32_t before, std::string_view src) {
  TSNode found{};
  find_last_assignment(name, body, before, src, found);
  return found;
}

}  // namespace preflight::analysis
