#include "analysis/frameworks.h"

#include "analysis/names.h"

namespace preflight::analysis {
namespace {

bool in_package(std::string_view qualified, std::string_view package) {
  return qualified.starts_with(package) &&
         (qualified.size() == package.size() || qualified[package.size()] == '.');
}

std::string quoted(std::string_view text) { return quote_code(text, 60); }

// Substrings of a lower-cased receiver, most specific first.
struct NamedFramework {
  std::string_view part;
  Framework framework;
};
constexpr NamedFramework kReceiverNames[] = {
    {"dist_autograd", Framework::DistributedAutograd}, {"lightning", Framework::Lightning},
    {"fabric", Framework::Fabric},                     {"accelerat", Framework::Accelerate},
    {"deepspeed", Framework::DeepSpeed},               {"trainer", Framework::HfTrainer},
};

// The last segment of a backward-wrapper receiver (names.h) that is not a grad scaler.
std::optional<Framework> wrapper_framework(std::string_view last) {
  if (!names::is_backward_wrapper_receiver(last)) return std::nullopt;
  std::string low = names::lower(last);
  if (names::contains(low, "scaler")) return std::nullopt;  // AMP's scaler scales nothing for us
  if (names::contains(low, "engine")) return Framework::DeepSpeed;
  if (names::contains(low, "strategy")) return Framework::Lightning;
  if (names::contains(low, "fabric")) return Framework::Fabric;
  return Framework::Accelerate;
}

// `engine, opt, _, _ = deepspeed.initialize(...)`, `acc = Accelerator()`: the value of the
// nearest binding of `name` comes from a framework's package.
std::optional<FrameworkOwner> bound_owner(const ModuleModel& model, const std::string& name, int scope) {
  const Kinds& k = kinds();
  for (int s = scope; s >= 0; s = model.scopes()[s].parent) {
    auto it = model.scopes()[s].bindings.find(name);
    if (it == model.scopes()[s].bindings.end()) continue;
    for (const BindingSite& b : it->second) {
      TSNode v = unparenthesize(b.value);
      if (!is(v, k.call)) continue;
      auto q = model.qualified_callee(v);
      if (auto f = q ? framework_of_package(*q) : std::nullopt) return FrameworkOwner{*f, OwnedBy::Binding, v};
    }
    return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace

std::string_view framework_name(Framework f) {
  switch (f) {
    case Framework::Lightning: return "PyTorch Lightning";
    case Framework::Fabric: return "Lightning Fabric";
    case Framework::Accelerate: return "Hugging Face Accelerate";
    case Framework::DeepSpeed: return "DeepSpeed";
    case Framework::HfTrainer: return "the Hugging Face Trainer";
    case Framework::DistributedAutograd: return "distributed autograd";
  }
  return "a framework";
}

std::optional<Framework> framework_of_package(std::string_view q) {
  if (in_package(q, "lightning.fabric") || in_package(q, "lightning_fabric")) return Framework::Fabric;
  if (in_package(q, "lightning") || in_package(q, "pytorch_lightning")) return Framework::Lightning;
  if (in_package(q, "accelerate")) return Framework::Accelerate;
  if (in_package(q, "deepspeed")) return Framework::DeepSpeed;
  if (in_package(q, "transformers") || in_package(q, "trl")) return Framework::HfTrainer;
  if (in_package(q, "torch.distributed.autograd")) return Framework::DistributedAutograd;
  return std::nullopt;
}

std::optional<FrameworkOwner> class_owner(const ModuleModel& model, int scope) {
  int cls = model.enclosing_class(scope);
  if (cls < 0) return std::nullopt;
  const ClassInfo& c = model.classes()[cls];
  TSNode bases = field(c.node, kinds().f_superclasses);
  if (c.is_lightning) return FrameworkOwner{Framework::Lightning, OwnedBy::ClassBase, bases};
  for (const std::string& base : c.bases)
    if (base.ends_with("Trainer"))
      if (auto f = framework_of_package(base)) return FrameworkOwner{*f, OwnedBy::ClassBase, bases};
  return std::nullopt;
}

std::optional<FrameworkOwner> backward_owner(const ModuleModel& model, TSNode receiver, int scope) {
  auto d = dotted_name(receiver, model.source());
  if (!d) return std::nullopt;
  std::string base = d->substr(0, d->find('.'));
  if (model.import_of(base))
    if (auto q = model.qualified_name(receiver); q && framework_of_package(*q))
      return FrameworkOwner{*framework_of_package(*q), OwnedBy::Import, receiver};
  if (auto bound = bound_owner(model, base, scope)) return bound;
  std::string low = names::lower(*d);
  for (const NamedFramework& n : kReceiverNames)
    if (names::contains(low, n.part)) return FrameworkOwner{n.framework, OwnedBy::ReceiverName, receiver};
  if (auto f = wrapper_framework(names::last_segment(*d)))
    return FrameworkOwner{*f, OwnedBy::ReceiverName, receiver};
  return std::nullopt;
}

TSNode distributed_autograd_context(const ModuleModel& model, TSNode backward_call) {
  const Kinds& k = kinds();
  auto arg = dotted_name(positional_arg(backward_call, 0), model.source());
  if (!arg) return TSNode{};
  for (TSNode p = model.parent(backward_call); !ts_node_is_null(p) && !is(p, k.function_definition);
       p = model.parent(p)) {
    if (!is(p, k.with_statement)) continue;
    TSNode found{}, clause{};
    for_each_named_child(p, [&](TSNode c) {
      if (is(c, k.with_clause)) clause = c;
    });
    if (ts_node_is_null(clause)) continue;
    for_each_named_child(clause, [&](TSNode item) {
      TSNode value = is(item, k.with_item) ? field(item, k.f_value) : TSNode{};
      if (!ts_node_is_null(found) || ts_node_is_null(value) || !is(value, k.as_pattern)) return;
      TSNode call = ts_node_named_child(value, 0);
      TSNode alias = ts_node_named_child(field(value, k.f_alias), 0);
      auto q = is(call, k.call) ? model.qualified_callee(call) : std::nullopt;
      if (q && q->ends_with("autograd.context") && text_of(alias, model.source()) == *arg) found = call;
    });
    if (!ts_node_is_null(found)) return found;
  }
  return TSNode{};
}

std::string describe_owner(const FrameworkOwner& owner, std::string_view src) {
  std::string name(framework_name(owner.framework));
  switch (owner.by) {
    case OwnedBy::ClassBase:
      return "the class derives from " + quoted(text_of(owner.site, src)) + ": its methods run under " + name;
    case OwnedBy::Import:
      return quoted(text_of(owner.site, src)) + " is a module of " + name;
    case OwnedBy::Binding:
      return "bound to " + quoted(text_of(owner.site, src)) + ", an object of " + name;
    case OwnedBy::ReceiverName:
      return quoted(text_of(owner.site, src)) + " is named like an object of " + name +
             " (its binding is not visible here)";
  }
  return name;
}

}  // namespace preflight::analysis
