#include "analysis/local_calls.h"

namespace preflight::analysis {

std::string_view local_callee_name(TSNode call, std::string_view src) {
  const Kinds& k = kinds();
  TSNode callee = field(call, k.f_function);
  if (is(callee, k.identifier)) return text_of(callee, src);
  if (is(callee, k.attribute) && text_of(field(callee, k.f_object), src) == "self")
    return text_of(field(callee, k.f_attribute), src);
  return {};
}

const std::vector<int>* local_callees(const ModuleModel& model, TSNode call) {
  std::string_view name = local_callee_name(call, model.source());
  return name.empty() ? nullptr : model.functions_named(name);
}

const FunctionInfo* local_callee(const ModuleModel& model, TSNode call) {
  const std::vector<int>* fs = local_callees(model, call);
  if (!fs || fs->size() != 1) return nullptr;
  return &model.functions()[fs->front()];
}

namespace {
bool called_as_method(TSNode call) { return is(field(call, kinds().f_function), kinds().attribute); }
}  // namespace

std::optional<size_t> parameter_index(const FunctionInfo& fn, std::string_view name) {
  for (size_t i = 0; i < fn.params.size(); ++i)
    if (fn.params[i].name == name) return i;
  return std::nullopt;
}

TSNode argument_for(const FunctionInfo& fn, TSNode call, size_t index, std::string_view src) {
  if (index >= fn.params.size()) return TSNode{};
  bool method = called_as_method(call);
  if (method && index == 0) return TSNode{};  // `self` is the receiver, not an argument
  TSNode arg = keyword_arg(call, fn.params[index].name, src);
  if (!is_null(arg)) return arg;
  return positional_arg(call, static_cast<unsigned>(method ? index - 1 : index));
}

bool misses_a_required_argument(const FunctionInfo& fn, TSNode call, std::string_view src) {
  const Kinds& k = kinds();
  // A decorator may hand back another signature (`@hydra.main(...) def main(cfg)` is called
  // as `main()`): only an undecorated definition is read.
  if (!ts_node_eq(fn.outer, fn.node)) return false;
  TSNode args = field(call, k.f_arguments);
  if (is_null(args) || !is(args, k.argument_list)) return false;
  bool splat = false;
  for_each_named_child(args, [&](TSNode a) { splat = splat || is(a, k.list_splat) || is(a, k.dictionary_splat); });
  if (splat) return false;
  for (size_t i = called_as_method(call) ? 1 : 0; i < fn.params.size(); ++i) {
    TSNode holder = ts_node_parent(fn.params[i].node);
    if (is(holder, k.default_parameter) || is(holder, k.typed_default_parameter)) continue;
    if (is_null(argument_for(fn, call, i, src))) return true;
  }
  return false;
}

std::optional<std::string> name_at_call_site(const ModuleModel& model, const FunctionInfo& fn,
                                             TSNode call, std::string_view dotted) {
  std::string_view base = dotted.substr(0, dotted.find('.'));
  std::string_view rest = dotted.substr(base.size());
  // A helper's own local (`m = task.get_trainable_module()`) has no name at the call site.
  if (model.scopes()[fn.scope].bindings.count(std::string(base))) return std::nullopt;
  for (size_t i = 0; i < fn.params.size(); ++i) {
    if (fn.params[i].name != base) continue;
    if (called_as_method(call) && i == 0) return std::string(dotted);  // the same object
    TSNode arg = argument_for(fn, call, i, model.source());
    auto d = is_null(arg) ? std::nullopt : dotted_name(arg, model.source());
    if (!d) return std::nullopt;
    return *d + std::string(rest);
  }
  return std::string(dotted);
}

bool runs_backward(const ModuleModel& model, TSNode node) {
  bool found = false;
  model.for_each_call_in(node, [&](TSNode call) {
    if (found) return;
    if (model.callee_leaf(call) == "backward") found = true;
    else if (const FunctionInfo* fn = local_callee(model, call)) found = fn->calls_backward;
  });
  return found;
}

}  // namespace preflight::analysis
