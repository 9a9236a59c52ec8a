#include "rules/callable_binding.h"

#include <algorithm>
#include <iterator>

namespace preflight::rules {

using namespace preflight::analysis;

namespace {
std::string base_of(std::string_view dotted) { return std::string(dotted.substr(0, dotted.find('.'))); }
}  // namespace

std::vector<BindingSite> CallableBinding::bindings_of(std::string_view dotted, int scope) const {
  const std::vector<BindingSite>* sites = model_.bindings_of(dotted, scope);
  return sites ? *sites : std::vector<BindingSite>{};
}

std::vector<BindingSite> CallableBinding::class_attribute_bindings(std::string_view attr) const {
  std::vector<BindingSite> all;
  for (const ClassInfo& c : model_.classes()) {
    auto it = c.self_bindings.find(std::string(attr));
    if (it != c.self_bindings.end()) all.insert(all.end(), it->second.begin(), it->second.end());
  }
  return all;
}

std::string CallableBinding::callable_leaf(TSNode value, int scope, int depth) const {
  value = unparenthesize(value);
  while (is(value, kinds().call)) {
    TSNode callee = model_.callee_of(value);
    std::string_view leaf = model_.callee_leaf(value);
    static constexpr std::string_view kChain[] = {"to", "cuda", "cpu", "half", "float", "double",
                                                  "bfloat16", "train", "eval"};
    bool chain = is(callee, kinds().attribute) && std::find(std::begin(kChain), std::end(kChain), leaf) != std::end(kChain);
    if (!chain) return std::string(leaf);
    value = unparenthesize(field(callee, kinds().f_object));
  }
  auto dotted = dotted_name(value, model_.source());
  if (!dotted) return {};
  if (depth < 4) {
    ResolvedCallable r = resolve(value, scope, depth + 1);
    if (r.bound) return r.leaf;
  }
  return dotted->substr(dotted->rfind('.') == std::string::npos ? 0 : dotted->rfind('.') + 1);
}

ResolvedCallable CallableBinding::resolve(TSNode callee, int scope, int depth) const {
  auto dotted = dotted_name(callee, model_.source());
  if (!dotted) return {};
  // The answer depends on the callee only through its dotted text (a dotted name is an
  // identifier or an attribute chain), so every call of `self.fc`, `criterion`, ... in a
  // scope shares one resolution.
  auto [it, fresh] = resolved_.try_emplace(ResolveKey{*dotted, scope, depth});
  ResolvedCallable& slot = it->second;  // a reference survives the rehash a nested resolve may cause
  if (fresh) slot = resolve_uncached(callee, *dotted, scope, depth);
  return slot;
}

ResolvedCallable CallableBinding::resolve_uncached(TSNode callee, const std::string& dotted, int scope,
                                                   int depth) const {
  ResolvedCallable r;
  const std::vector<BindingSite>* own = model_.bindings_of(dotted, scope);
  std::vector<BindingSite> by_class;
  if ((!own || own->empty()) && is(callee, kinds().attribute) &&
      text_of(field(callee, kinds().f_object), model_.source()) != "self" && !model_.import_of(base_of(dotted)))
    by_class = class_attribute_bindings(text_of(field(callee, kinds().f_attribute), model_.source()));
  const std::vector<BindingSite>& sites = by_class.empty() && own ? *own : by_class;
  for (const BindingSite& b : sites) {
    if (is(unparenthesize(b.value), kinds().none)) continue;
    std::string leaf = b.arity > 1 ? std::string() : callable_leaf(b.value, scope, depth);
    if (r.bound && leaf != r.leaf) return {true, {}, {}};
    r = {true, leaf, b.value};
  }
  return r;
}

std::string CallableBinding::applied_callable(TSNode call, int scope,
                                              std::initializer_list<std::string_view> functionals,
                                              TSNode* site) const {
  const Kinds& k = kinds();
  std::string_view src = model_.source();
  TSNode callee = model_.callee_of(call);
  std::string_view leaf = model_.callee_leaf(call);
  if (std::find(functionals.begin(), functionals.end(), leaf) != functionals.end()) {
    bool local_form = is(callee, k.identifier) ||
                      (is(callee, k.attribute) && text_of(field(callee, k.f_object), src) == "self");
    return local_form && model_.functions_named(leaf) ? std::string() : std::string(leaf);
  }
  if (is(callee, k.call)) {  // nn.CrossEntropyLoss()(logits, y)
    std::string_view inner = model_.callee_leaf(callee);
    *site = callee;
    return inner.ends_with("Loss") ? std::string(inner) : std::string();
  }
  ResolvedCallable r = resolve(callee, scope);
  *site = r.site;
  return r.bound ? r.leaf : std::string();
}

}  // namespace preflight::rules
