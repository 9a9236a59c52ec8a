// How the callers of a function in this file run it with respect to autograd (see
// caller_grad.h). Moved from TG002, which first needed it; TG001 reads the same verdicts.
#include "rules/caller_grad.h"

#include <algorithm>
#include <cctype>
#include <tuple>

#include "analysis/local_calls.h"

namespace preflight::rules {

using namespace preflight::analysis;

CallerGradAnalysis::CallerGradAnalysis(const RuleContext& context, std::string label)
    : ctx(context), label_(std::move(label)) {}

void CallerGradAnalysis::note(std::string what, TSNode at) {
  if (!is_null(at)) facts_.push_back({std::move(what), range_of(at)});
}

void CallerGradAnalysis::report(std::vector<ContextFact>& out) const {
  std::vector<ContextFact> mine = facts_;
  std::sort(mine.begin(), mine.end(), [](const ContextFact& a, const ContextFact& b) {
    return std::tie(a.range.begin, a.range.end, a.what) < std::tie(b.range.begin, b.range.end, b.what);
  });
  mine.erase(std::unique(mine.begin(), mine.end()), mine.end());
  out.insert(out.end(), mine.begin(), mine.end());
}

// Autograd is off where `n` runs: the provenance says so, or `n` sits in a lambda written
// inside a no_grad / inference_mode block (`with torch.inference_mode(): f = lambda: m(x)`),
// which the interpreter never enters: its body runs when it is called there.
bool CallerGradAnalysis::no_grad_at(TSNode n) const {
  if (ctx.provenance.in_no_grad(n)) return true;
  bool in_lambda = false;
  for (TSNode p = ctx.model.parent(n); !is_null(p); p = ctx.model.parent(p)) {
    TSSymbol s = sym(p);
    if (s == k.function_definition || s == k.class_definition) return false;
    if (s == k.lambda) in_lambda = true;
    else if (in_lambda && ctx.provenance.in_no_grad(p)) return true;
  }
  return false;
}

CallerVerdict CallerGradAnalysis::verdict(int function) {
  std::vector<int> visiting;
  return verdict(function, visiting);
}

CallerVerdict CallerGradAnalysis::verdict(int function, std::vector<int>& visiting) {
  if (auto it = verdicts_.find(function); it != verdicts_.end()) return it->second;
  visiting.push_back(function);
  CallerVerdict v = read_callers(function, visiting);
  visiting.pop_back();
  if (visiting.empty() || v.grad != CallerGrad::Unknown) verdicts_[function] = v;
  return v;
}

namespace {
// Methods every nn.Module has, which a call on a module attribute means.
bool is_module_method_name(std::string_view name) {
  static constexpr std::string_view kNames[] = {"eval", "train", "to", "cuda", "cpu", "half", "float", "double",
                                                "bfloat16", "parameters", "named_parameters", "modules",
                                                "children", "state_dict", "load_state_dict", "zero_grad",
                                                "requires_grad_", "apply", "register_buffer"};
  return std::find(std::begin(kNames), std::end(kNames), name) != std::end(kNames);
}
}  // namespace

CallerVerdict CallerGradAnalysis::read_callers(int function, std::vector<int>& visiting) {
  const FunctionInfo& fn = ctx.model.functions()[function];
  bool method = fn.class_index >= 0;
  std::string about = label_ + " caller of " + fn.name + "(): ";
  note( about + "the routine", field(fn.node, k.f_name));
  CallerVerdict v;
  v.grad = CallerGrad::NoGrad;
  auto unknown = [&](TSNode at, std::string why) {
    if (v.grad == CallerGrad::NoGrad) v = CallerVerdict::of(CallerGrad::Unknown, at, std::move(why));
  };
  if (TSNode ref = escaping_reference(fn); !is_null(ref)) {
    note( about + "passed as a value", ref);
    return CallerVerdict::of(CallerGrad::Unknown, ref,
                             "`" + fn.name + "` is passed on as a value here, so not every caller can be seen");
  }
  size_t calls = 0;
  ctx.model.for_each_call_in(ctx.model.root(), [&](TSNode call) {
    if (v.grad == CallerGrad::Grad || ctx.model.callee_leaf(call) != fn.name) return;
    TSNode callee = ctx.model.callee_of(call);
    const std::vector<int>* local = local_callees(ctx.model, call);
    bool proven = (local && std::find(local->begin(), local->end(), function) != local->end()) ||
                  (method && is(callee, k.attribute) && instance_of(field(callee, k.f_object), fn.class_index, call));
    // `obj.infer(x)`: a method of this name, on an object whose class is not shown. Not when
    // the name is one of nn.Module's own methods and this class is no module: then
    // `self.embedder.eval()` is the module's mode switch (round 17: XLM's evaluators' `eval`).
    bool maybe = !proven && method && is(callee, k.attribute) &&
                 !(is_module_method_name(fn.name) && !ctx.model.classes()[fn.class_index].is_module);
    if (!proven && !maybe) return;
    if (misses_a_required_argument(fn, call, ctx.source)) {  // raises TypeError: runs nothing
      note(about + "cannot bind the signature", call);
      return;
    }
    ++calls;
    note( about + (no_grad_at(call) ? "no_grad" : "autograd on"), call);
    if (no_grad_at(call)) {
      v.no_grad_calls.push_back(call);
      return;
    }
    int outer = ctx.model.enclosing_function(ctx.model.scope_enclosing(call));
    if (outer == function) {
      // Recursion runs as its first call does, and is no caller. A call inside the routine
      // on another object (`self.encoder.inference(x)` in `Tacotron2.inference`, round 14)
      // is not recursion: it may be another class's method of the same name.
      --calls;
      if (!proven) unknown(call, quote_code(text_of(call, ctx.source)) + " may call another class's `" + fn.name + "()`");
      return;
    }
    CallerGrad via = CallerGrad::Grad;
    std::string why;
    if (outer >= 0) {
      if (std::find(visiting.begin(), visiting.end(), outer) != visiting.end() || visiting.size() >= 4) {
        via = CallerGrad::Unknown;
        why = "whether the callers of `" + ctx.model.functions()[outer].name + "()` disable autograd is not followed further";
      } else {
        CallerVerdict up = verdict(outer, visiting);
        via = up.grad;
        if (via == CallerGrad::NoGrad) {
          v.no_grad_calls.push_back(call);
          return;
        }
        if (via == CallerGrad::Unknown) {
          unknown(up.witness, up.why);
          return;
        }
      }
    }
    if (via == CallerGrad::Grad && !proven) {
      via = CallerGrad::Unknown;
      why = quote_code(text_of(call, ctx.source)) + " may call another class's `" + fn.name + "()`";
    }
    if (via == CallerGrad::Grad) v = CallerVerdict::of(CallerGrad::Grad, call);
    else unknown(call, why.empty() ? "a caller's own callers cannot be seen" : why);
  });
  if (calls == 0) {
    if (ctx.project) return read_project(fn, about);
    return CallerVerdict::of(CallerGrad::Unknown, field(fn.node, k.f_name),
                             "no call of `" + fn.name + "()` in this file: whether its callers disable autograd is a guess");
  }
  return v;
}

// No call here: the project's other files decide, their calls matched by name (a naming
// step, so they may only quiet the finding: silence when every one runs under no_grad, a note
// when there is none).
CallerVerdict CallerGradAnalysis::read_project(const FunctionInfo& fn, const std::string& about) {
  TSNode name = field(fn.node, k.f_name);
  ProjectCallers p = ctx.project->callers(fn.name, ctx.project_path);
  CallerVerdict v = CallerVerdict::of(CallerGrad::Unknown, name);
  switch (p.kind) {
    case ProjectCallers::Kind::NoGrad:
      note(about + "project: every call under no_grad", name);
      v.grad = CallerGrad::NoGrad;
      v.project_no_grad = std::move(p.no_grad_calls);
      break;
    case ProjectCallers::Kind::NoCall:
      note(about + "project: no call", name);
      v.why = "no call of `" + fn.name + "()` in this file or any other file of the project: dead code, or called "
              "from outside it";
      v.uncalled_in_project = true;
      break;
    case ProjectCallers::Kind::Other:
      note(about + "project: " + p.why, name);
      v.why = "no call of `" + fn.name + "()` in this file, and in the project's other files " + p.why +
              ": whether its callers disable autograd is a guess";
      break;
  }
  return v;
}

std::string CallerGradAnalysis::no_grad_callers(const CallerVerdict& v) const {
  if (!v.project_no_grad.empty())
    return "every call of a routine of this name in the project's other files (matched by name)";
  return "every caller in this file";
}

std::vector<EvidenceStep> CallerGradAnalysis::no_grad_evidence(int function, const CallerVerdict& v) const {
  std::vector<EvidenceStep> ev;
  for (TSNode call : v.no_grad_calls)
    ev.push_back({range_of(call), quote_code(text_of(call, ctx.source)) + " runs under no_grad"});
  TSNode name = field(ctx.model.functions()[function].node, k.f_name);
  for (const std::string& at : v.project_no_grad)
    ev.push_back({range_of(name), "the call at " + at + " runs under no_grad (matched by name: a naming step)"});
  return ev;
}

// `Predictor(m).infer(x)` / `p.infer(x)` with `p = Predictor(m)`: the receiver is an
// instance of the method's own class.
bool CallerGradAnalysis::runs(TSNode call, int function) const {
  const FunctionInfo& fn = ctx.model.functions()[function];
  if (ctx.model.callee_leaf(call) != fn.name) return false;
  const std::vector<int>* local = local_callees(ctx.model, call);
  if (local && std::find(local->begin(), local->end(), function) != local->end()) return true;
  TSNode callee = ctx.model.callee_of(call);
  return fn.class_index >= 0 && is(callee, k.attribute) &&
         instance_of(field(callee, k.f_object), fn.class_index, call);
}

bool CallerGradAnalysis::instance_of(TSNode recv, int cls, TSNode at) const {
  recv = unparenthesize(recv);
  auto constructs = [&](TSNode v) {
    // `ActorCritic(...).to(device)`: methods that hand the module back keep its class.
    v = ctx.model.module_chain_base(v);
    return is(v, k.call) && is(ctx.model.callee_of(v), k.identifier) &&
           ctx.model.class_named(text_of(ctx.model.callee_of(v), ctx.source)) == cls;
  };
  if (constructs(recv)) return true;
  auto d = dotted_name(recv, ctx.source);
  const std::vector<BindingSite>* sites = d ? ctx.model.bindings_of(*d, ctx.model.scope_enclosing(at)) : nullptr;
  if (!sites || sites->empty()) return false;
  for (const BindingSite& b : *sites)
    if (b.position >= 0 || !constructs(b.value)) return false;
  return true;
}

// A reference to the function that is not a call (`map(infer, xs)`, `fn = self.infer`):
// the function escapes and may be called anywhere.
TSNode CallerGradAnalysis::escaping_reference(const FunctionInfo& fn) const {
  const std::string& name = fn.name;
  bool method = fn.class_index >= 0;
  auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (size_t at = ctx.source.find(name); at != std::string_view::npos; at = ctx.source.find(name, at + 1)) {
    size_t end = at + name.size();
    if ((at > 0 && word(ctx.source[at - 1])) || (end < ctx.source.size() && word(ctx.source[end]))) continue;
    TSNode id = ts_node_named_descendant_for_byte_range(ctx.root, static_cast<uint32_t>(at), static_cast<uint32_t>(end));
    if (!is(id, k.identifier) || text_of(id, ctx.source) != name) continue;
    TSNode parent = ctx.model.parent(id);
    TSNode ref = id;
    if (is(parent, k.attribute)) {
      if (!ts_node_eq(field(parent, k.f_attribute), id)) continue;
      std::string_view recv = text_of(field(parent, k.f_object), ctx.source);
      if (!method || (recv != "self" && recv != "cls")) continue;  // `args.evaluate`: a flag
      ref = parent;
      parent = ctx.model.parent(parent);
    } else if (method) {
      continue;  // a bare name is not the method
    }
    if (is(parent, k.call) && ts_node_eq(field(parent, k.f_function), ref)) continue;
    TSSymbol s = sym(parent);
    bool passed = s == k.argument_list || s == k.list || s == k.tuple || s == k.set ||
                  s == k.expression_list || s == k.return_statement ||
                  (s == k.keyword_argument && ts_node_eq(field(parent, k.f_value), ref)) ||
                  (s == k.assignment && ts_node_eq(field(parent, k.f_right), ref)) ||
                  (s == k.pair && ts_node_eq(field(parent, k.f_value), ref));
    if (passed) return ref;
  }
  return TSNode{};
}


}  // namespace preflight::rules
