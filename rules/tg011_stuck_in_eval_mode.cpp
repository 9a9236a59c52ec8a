// TG011 stuck-in-eval-mode: an epoch loop switches the model to evaluation mode for its
// validation pass and nothing in the loop switches it back, so from the second epoch on the
// model trains with dropout off and batch norm frozen on stale running statistics.
//
// Evidence chain: the `R.eval()` (or `R.train(False)`) call, directly in the epoch loop or
// inside a local helper the loop calls (`evaluate(model, val_loader)`, its parameter mapped
// back to the argument) -> the epoch loop trains (a backward in it, or in a local helper it
// calls) -> the loop validates (a `for` over an evaluation-looking iterable, seen through
// enumerate/tqdm/zip, or a call handed one) -> no `X.train()` in the loop, directly or in a
// local helper, where X is R or a parent of R (`train(False)` does not restore).
// Without a validation pass that names show (`with torch.no_grad(): acc = score(net(x_val))`),
// the code itself can show the intent: `R.train()` (or a parent's) before the loop in the same
// function, and the eval() after the loop's backward in source order, so the next iteration
// reaches the backward in evaluation mode with no train() on the way.
// Exempt: a training helper that itself switches the model to eval before its own backward
// and runs no validation pass (a linear probe on frozen features trains in eval mode on
// purpose, TG011-NX22, recorded as a silence); a model whose parameters the loop freezes
// (`requires_grad = False` over its parameters, `requires_grad_(False)`: no backward trains it,
// TG011-NX24, recorded as a silence); methods of a LightningModule (the trainer switches modes; recorded as a silence
// with the class that shows it); freezing a strict
// submodule (`model.backbone.eval()`) when the loop never puts the whole model in eval mode
// (TG011-P05); receivers bound to something that is not a module (an optimizer, a loss, a
// literal). What the analysis cannot see (an imported training helper) it does not guess
// about: a backward or a train() hidden in another module leaves the loop unproven, and the
// rule stays silent.
// Severity follows proof: an error only when the receiver is proven a model by its binding
// (`net = Net()`, `self.model = Classifier()`, a from_pretrained / DDP result); a receiver
// known only by its name, or whose binding cannot be seen (a parameter), caps the finding at
// a warning whose evidence names that step.
#include <unordered_map>
#include <unordered_set>

#include "analysis/frameworks.h"
#include "analysis/local_calls.h"
#include "analysis/names.h"
#include "analysis/reaching.h"
#include "rules/rule.h"

namespace preflight::rules {
namespace {

using namespace preflight::analysis;

constexpr int kMaxHelperDepth = 3;

// A switch to evaluation mode, as seen from the epoch loop.
struct EvalSwitch {
  TSNode anchor;                    // the call inside the loop (eval() or the helper call)
  TSNode eval_call;                 // the eval() itself (inside the helper when indirect)
  std::optional<std::string> receiver;  // dotted receiver as seen from the loop
};

// A restoring `train()` found from the loop, with its receiver mapped to the loop's names.
struct TrainCall {
  TSNode call;
  std::optional<std::string> receiver;  // nullopt: cannot be named (treated as restoring)
};

bool is_eval_hint(std::string_view lowered) {
  if (names::contains(lowered, "train") || names::contains(lowered, "interval")) return false;
  for (auto w : {"val", "eval", "test"})
    if (names::contains(lowered, w)) return true;
  // `dev` as a word (`dev_loader`, `devset`), never inside `device`.
  for (size_t at = lowered.find("dev"); at != std::string_view::npos; at = lowered.find("dev", at + 1)) {
    bool starts_word = at == 0 || lowered[at - 1] == '_' || lowered[at - 1] == '.';
    if (starts_word && !lowered.substr(at).starts_with("devic")) return true;
  }
  return false;
}

struct Checker final : RuleCheck {
  const RuleContext& ctx;
  const Kinds& k = kinds();
  std::vector<Finding> out;
  mutable std::unordered_map<const void*, TSNode> helper_eval_;  // helper node -> helper_eval_call
  explicit Checker(const RuleContext& c) : ctx(c) {}

  void finish(std::vector<Finding>& sink) override {
    for (Finding& f : out) sink.push_back(std::move(f));
  }

  void enter(TSNode n, const WalkState& st) override {
    if (!is(n, k.call) || st.loops.empty()) return;
    std::optional<EvalSwitch> sw = eval_switch_at(n, st.scope);
    if (!sw) return;
    TSNode epoch = st.loops.front().node;
    check(*sw, epoch, st.scope);
  }

  // --- recognising calls -----------------------------------------------------------------

  // `R.eval()` or `R.train(False)` / `R.train(mode=False)`.
  bool is_eval_call(TSNode call) const {
    TSNode callee = field(call, k.f_function);
    if (!is(callee, k.attribute)) return false;
    std::string_view leaf = ctx.model.callee_leaf(call);
    if (leaf == "eval") return is_null(positional_arg(call, 0));
    return leaf == "train" && train_arg_is_false(call);
  }

  bool train_arg_is_false(TSNode call) const {
    TSNode arg = positional_arg(call, 0);
    if (is_null(arg)) arg = keyword_arg(call, "mode", ctx.source);
    return is(unparenthesize(arg), k.false_);
  }

  std::optional<std::string> receiver_of(TSNode call) const {
    return dotted_name(field(field(call, k.f_function), k.f_object), ctx.source);
  }

  // A receiver bound to an optimizer, a loss or a literal is not a module in eval mode.
  bool receiver_may_be_module(const std::optional<std::string>& r, int scope) const {
    if (!r) return true;
    ValueKind kind = ctx.model.kind_of(*r, scope);
    return kind != ValueKind::Optimizer && kind != ValueKind::Criterion &&
           kind != ValueKind::Scheduler && kind != ValueKind::Literal;
  }

  const FunctionInfo* local_callee(TSNode call) const { return analysis::local_callee(ctx.model, call); }

  // A receiver written inside `fn` as seen at `call` (an unnamed one stays unnamed).
  std::optional<std::string> map_receiver(const FunctionInfo& fn, TSNode call,
                                          const std::optional<std::string>& r) const {
    return r ? name_at_call_site(ctx.model, fn, call, *r) : r;
  }

  // The eval switch this call performs: directly, or through a local helper that does.
  std::optional<EvalSwitch> eval_switch_at(TSNode call, int scope) const {
    if (is_eval_call(call)) {
      auto r = receiver_of(call);
      if (!receiver_may_be_module(r, scope)) return std::nullopt;
      return EvalSwitch{call, call, r};
    }
    const FunctionInfo* fn = local_callee(call);
    if (!fn) return std::nullopt;
    TSNode inner = helper_eval_call(*fn);
    if (is_null(inner)) return std::nullopt;
    return EvalSwitch{call, inner, map_receiver(*fn, call, receiver_of(inner))};
  }

  // The first eval() call of a local helper whose receiver may be a module, or null. Only the
  // helper's own calls (starting at the depth limit stops any descent): deeper receivers
  // would need a second mapping. It does not depend on the call site, so it is computed once
  // per helper: every call in every loop asks.
  TSNode helper_eval_call(const FunctionInfo& fn) const {
    auto [it, fresh] = helper_eval_.try_emplace(node_id(fn.node));
    if (!fresh) return it->second;
    TSNode found{};
    visit_calls(field(fn.node, k.f_body), kMaxHelperDepth, [&](TSNode inner, int) {
      if (!is_null(found) || !is_eval_call(inner)) return;
      if (receiver_may_be_module(receiver_of(inner), fn.scope)) found = inner;
    });
    return it->second = found;
  }

  // Calls in the subtree (nested defs excluded), then those of local helpers it calls, up to
  // kMaxHelperDepth levels. `f(call, depth)`.
  template <typename F>
  void visit_calls(TSNode n, int depth, F&& f) const {
    std::unordered_set<const void*> seen;
    visit_calls_rec(n, depth, f, seen);
  }

  template <typename F>
  void visit_calls_rec(TSNode n, int depth, F& f, std::unordered_set<const void*>& seen) const {
    TSSymbol s = sym(n);
    if (s == k.function_definition || s == k.class_definition || s == k.lambda) return;
    if (s == k.call) {
      f(n, depth);
      if (depth < kMaxHelperDepth)
        if (const FunctionInfo* fn = local_callee(n); fn && seen.insert(node_id(fn->node)).second)
          visit_calls_rec(field(fn->node, k.f_body), depth + 1, f, seen);
    }
    for_each_named_child(n, [&](TSNode c) { visit_calls_rec(c, depth, f, seen); });
  }

  // --- the epoch loop --------------------------------------------------------------------

  TSNode backward_in(TSNode loop) const {
    TSNode found{};
    visit_calls(loop, 0, [&](TSNode c, int) {
      if (is_null(found) && ctx.model.callee_leaf(c) == "backward") found = c;
    });
    return found;
  }

  // A validation pass: a `for` over an evaluation-looking iterable, or a call handed an
  // evaluation loader (`evaluate(model, val_loader)`, the helper may live in another module).
  // A loop or a local helper that runs the backward is the training pass whatever its names
  // say (`for i in range(val_iteration): ... loss.backward()`): only a validation pass inside
  // the helper counts then, not the names it is handed.
  TSNode validation_evidence(TSNode n, int depth = 0) const {
    TSSymbol s = sym(n);
    if (s == k.function_definition || s == k.class_definition || s == k.lambda) return TSNode{};
    if (s == k.for_statement) {
      if (!is_null(backward_in(n))) return validation_evidence(field(n, k.f_body), depth);
      for (TSNode it : unwrap_iterables(field(n, k.f_right), ctx.source))
        if (eval_hinted(it)) return it;
    }
    if (const FunctionInfo* fn = s == k.call ? local_callee(n) : nullptr; fn && !is_null(backward_in(n))) {
      if (depth >= kMaxHelperDepth) return TSNode{};
      return validation_evidence(field(fn->node, k.f_body), depth + 1);
    }
    if (s == k.call) {
      TSNode args = field(n, k.f_arguments);
      TSNode hit{};
      if (!is_null(args))
        for_each_named_child(args, [&](TSNode a) {
          if (is(a, k.keyword_argument)) a = field(a, k.f_value);
          if (is_null(hit) && eval_hinted(a) && is_loader_like(a)) hit = a;
        });
      if (!is_null(hit)) return hit;
    }
    TSNode found{};
    for_each_named_child(n, [&](TSNode c) {
      if (is_null(found)) found = validation_evidence(c, depth);
    });
    return found;
  }

  // `val_loader`, `test_dl`, `dev_set`: a loader, not `val_loss` or `val_acc`.
  bool is_loader_like(TSNode e) const {
    std::string l = names::lower(text_of(e, ctx.source));
    for (auto w : {"loader", "data", "_dl", "dl_", "set", "iter", "batch", "split"})
      if (names::contains(l, w)) return true;
    return l.ends_with("dl");
  }

  bool eval_hinted(TSNode e) const {
    auto d = dotted_name(e, ctx.source);
    return d && is_eval_hint(names::lower(*d));
  }

  // `X.train()` restores R when X is R or a parent module of R; an unnamed side restores.
  static bool restores(const std::optional<std::string>& x, const std::optional<std::string>& r) {
    if (!x || !r) return true;
    return *x == *r || (r->starts_with(*x) && (*r)[x->size()] == '.');
  }

  // Restoring train() calls reachable from `n`, receivers mapped to the caller's names.
  std::vector<TrainCall> train_calls(TSNode n) const {
    std::vector<TrainCall> calls;
    collect_train_calls(n, 0, calls);
    return calls;
  }

  void collect_train_calls(TSNode n, int depth, std::vector<TrainCall>& calls) const {
    TSSymbol s = sym(n);
    if (s == k.function_definition || s == k.class_definition || s == k.lambda) return;
    if (s == k.call) {
      if (ctx.model.callee_leaf(n) == "train" && is(field(n, k.f_function), k.attribute) &&
          !train_arg_is_false(n))
        calls.push_back({n, receiver_of(n)});
      const FunctionInfo* fn = depth < kMaxHelperDepth ? local_callee(n) : nullptr;
      if (fn) {
        std::vector<TrainCall> inner;
        collect_train_calls(field(fn->node, k.f_body), depth + 1, inner);
        for (TrainCall& t : inner) calls.push_back({n, map_receiver(*fn, n, t.receiver)});
      }
    }
    for_each_named_child(n, [&](TSNode c) { collect_train_calls(c, depth, calls); });
  }

  // The statement that froze `model` (every parameter's `requires_grad` turned off, read by
  // the provenance: `for p in model.parameters(): p.requires_grad = False`,
  // `model.requires_grad_(False)`) when a call in `body` runs it or hands it on frozen (round 84:
  // MOON freezes its global model every round, right after `global_model.eval()`, and passes
  // it to the local training; TG011-NX24). The freeze must be in `body` itself: one before the
  // loop may be undone for a part (`for p in model.get_classifier().parameters(): p.requires_grad
  // = True`, Accelerate's cv_example fine-tunes its head), which the provenance does not track.
  // Null when there is none.
  TSNode frozen_in(TSNode body, const std::string& model) const {
    TSNode found{};
    auto take = [&](TSNode freeze) {
      if (!is_null(freeze) && encloses(body, freeze)) found = freeze;
    };
    ctx.model.for_each_call_in(body, [&](TSNode call) {
      if (!is_null(found)) return;
      if (dotted_name(field(call, k.f_function), ctx.source) == std::optional<std::string>(model))
        return take(ctx.provenance.freezing_of(call));
      for_each_named_child(field(call, k.f_arguments), [&](TSNode a) {
        TSNode value = is(a, k.keyword_argument) ? field(a, k.f_value) : a;
        if (is_null(found) && is(value, k.identifier) && text_of(value, ctx.source) == model)
          take(ctx.provenance.freezing_of_argument(value));
      });
    });
    return found;
  }

  // `model.backbone.eval()` with no eval() on `model` itself in the loop is a deliberate
  // freeze (TG011-P05). `.module` is the model inside a DDP/DataParallel wrapper, not a part.
  bool is_freeze(const EvalSwitch& sw, TSNode epoch, int scope) const {
    if (!sw.receiver) return false;
    const std::string& r = *sw.receiver;
    size_t dot = r.rfind('.');
    if (dot == std::string::npos || r.substr(dot + 1) == "module") return false;
    bool parent_is_model = false;
    for (size_t at = r.find('.'); at != std::string::npos; at = r.find('.', at + 1))
      parent_is_model = parent_is_model || ctx.model.is_model(r.substr(0, at), scope);
    if (!parent_is_model) return false;
    bool parent_switched = false;
    visit_calls(epoch, 0, [&](TSNode c, int depth) {
      if (parent_switched || depth != 0) return;
      std::optional<EvalSwitch> other = eval_switch_at(c, scope);
      if (other && other->receiver && *other->receiver != r && restores(other->receiver, sw.receiver))
        parent_switched = true;
    });
    return !parent_switched;
  }

  void check(const EvalSwitch& sw, TSNode epoch, int scope) {
    TSNode backward = backward_in(epoch);
    if (is_null(backward)) return;  // an evaluation-only sweep (TG011-N03)
    TSNode validation = validation_evidence(epoch);
    // eval() without a validation pass is not this pattern (TG011-N04), unless the author
    // switched to training mode before the loop and the eval() follows the backward.
    if (is_null(validation) &&
        (is_null(train_before(epoch, sw.receiver, scope)) || !follows_backward(sw.anchor, epoch)))
      return;
    for (const TrainCall& t : train_calls(epoch))
      if (restores(t.receiver, sw.receiver)) return;
    if (is_freeze(sw, epoch, scope)) return;
    if (sw.receiver)
      if (TSNode freeze = frozen_in(field(epoch, k.f_body), *sw.receiver); !is_null(freeze))
        return stay_silent("TG011", sw.anchor,
                           "the loop freezes `" + *sw.receiver + "`'s parameters: no backward can train it, so its "
                           "evaluation mode is intended (a frozen global or teacher model)",
                           {{range_of(freeze), quote_code(text_of(freeze, ctx.source)) + " turns its gradients off"}});
    if (sw.receiver) {
      if (TSNode fwd = grad_forward_of(epoch, *sw.receiver, scope, 0); is_null(fwd))
        return stay_silent("TG011", sw.anchor,
                           "`" + *sw.receiver + "` never runs a forward pass with autograd on in this loop: it is "
                           "not the model the backward trains (a frozen backbone, an EMA copy), so eval mode is intended",
                           {{range_of(backward), quote_code(text_of(backward, ctx.source)) + " trains another model"}});
    }
    if (auto on_purpose = trains_in_eval_mode(epoch, sw, scope))
      return stay_silent("TG011", sw.anchor,
                         "the training pass itself switches `" + *sw.receiver + "` to evaluation mode before its "
                         "backward, every epoch: the model is trained in eval mode on purpose (a linear probe on "
                         "frozen features keeps batch-norm statistics fixed), so no switch leaves it stuck",
                         {{range_of(on_purpose->anchor), quote_code(text_of(on_purpose->anchor, ctx.source)) +
                                                            " runs the backward"},
                          {range_of(on_purpose->eval_call), quote_code(text_of(on_purpose->eval_call, ctx.source)) +
                                                               " comes before it in that routine"}});
    if (auto owner = class_owner(ctx.model, scope); owner && owner->framework == Framework::Lightning)
      return stay_silent("TG011", sw.anchor,
                         "the Lightning Trainer switches the model back to training mode after "
                         "every validation pass, so this loop is not reported",
                         {{range_of(owner->site), describe_owner(*owner, ctx.source)}});
    out.push_back(make_finding(sw, epoch, backward, validation, scope));
  }

  // The local helper the epoch loop calls for its backward (`train(loader, model, ...)`) puts
  // R (or a parent of R) in evaluation mode before its own backward: the author trains in eval
  // mode (round 27: MoCo v3's linear probe). A helper that also validates may have switched
  // for its validation pass, so it does not count. Returns that switch, as seen from the loop.
  std::optional<EvalSwitch> trains_in_eval_mode(TSNode epoch, const EvalSwitch& sw, int scope) const {
    TSNode site = backward_site(epoch);
    if (is_null(site) || !sw.receiver) return std::nullopt;
    const FunctionInfo* fn = local_callee(site);
    std::optional<EvalSwitch> inner = fn ? eval_switch_at(site, scope) : std::nullopt;
    if (!inner || !inner->receiver || !restores(inner->receiver, sw.receiver)) return std::nullopt;
    TSNode body = field(fn->node, k.f_body);
    TSNode own_backward = backward_site(body);
    if (is_null(own_backward) || !is_null(validation_evidence(body, 1)) || ts_node_start_byte(inner->eval_call) >= ts_node_start_byte(own_backward))
      return std::nullopt;
    return inner;
  }

  // A forward pass of `model` (or of a part of it, `model.encoder(x)`) with autograd on inside
  // `region`, following the model into local helpers it is passed to (`train(model, ...)` ->
  // the helper's parameter); null when there is none. A model whose every forward in the loop
  // runs under no_grad, or that only has methods called on it (`ema.update(model)`), is not
  // the one the loop trains.
  TSNode grad_forward_of(TSNode region, const std::string& model, int scope, int depth) const {
    TSNode found{};
    ctx.model.for_each_call_in(region, [&](TSNode c) {
      if (!is_null(found)) return;
      TSNode callee = ctx.model.callee_of(c);
      if (auto d = dotted_name(callee, ctx.source)) {
        bool part = d->starts_with(model + ".") && !names::is_module_bookkeeping(names::last_segment(*d)) &&
                    !is_method_of_model(*d, model, scope);
        // A part's call whose result is discarded (`tgn.memory.__init_memory__()`, round 36: a
        // temporal graph network's memory reset each epoch) feeds no loss: not a training forward.
        if (part && is(ctx.model.parent(c), k.expression_statement)) part = false;
        if ((*d == model || part) && !ctx.provenance.in_no_grad(c)) {
          found = c;
          return;
        }
      }
      if (depth >= 3) return;
      const FunctionInfo* fn = analysis::local_callee(ctx.model, c);
      if (!fn) return;
      for (size_t i = 0; i < fn->params.size() && is_null(found); ++i) {
        TSNode arg = argument_for(*fn, c, i, ctx.source);
        auto a = is_null(arg) ? std::nullopt : dotted_name(unparenthesize(arg), ctx.source);
        if (a && *a == model)
          found = grad_forward_of(field(fn->node, k.f_body), fn->params[i].name, fn->scope, depth + 1);
      }
    });
    return found;
  }

  // `model.update(...)`, `model.state_dict()`: a method of the model object, not a forward of
  // one of its parts. A part is an attribute path called directly (`model.encoder(x)`).
  bool is_method_of_model(const std::string& dotted, const std::string& model, int scope) const {
    if (dotted == model || dotted.ends_with(".forward")) return false;
    return dotted.size() > model.size() && dotted.find('.', model.size() + 1) == std::string::npos &&
           !ctx.model.is_model(dotted, scope);
  }

  // The last `X.train()` restoring R before the loop, in the loop's function; null if none.
  TSNode train_before(TSNode epoch, const std::optional<std::string>& r, int scope) const {
    if (!r) return TSNode{};
    int f = ctx.model.enclosing_function(scope);
    TSNode body = f >= 0 ? field(ctx.model.functions()[f].node, k.f_body) : ctx.root;
    TSNode last{};
    for (const TrainCall& t : train_calls(body))
      if (ts_node_end_byte(t.call) <= ts_node_start_byte(epoch) && t.receiver && restores(t.receiver, r))
        last = t.call;
    return last;
  }

  // The call in the loop (itself, or the local helper call leading to it) that reaches the
  // loop's first backward; null when none.
  TSNode backward_site(TSNode loop) const {
    TSNode top{}, site{};
    visit_calls(loop, 0, [&](TSNode c, int depth) {
      if (depth == 0) top = c;
      if (!is_null(site) || ctx.model.callee_leaf(c) != "backward") return;
      site = depth == 0 ? c : top;
    });
    return site;
  }

  // The switch comes after the loop's backward in source order: the next iteration reaches
  // the backward with the model still in evaluation mode.
  bool follows_backward(TSNode anchor, TSNode epoch) const {
    TSNode site = backward_site(epoch);
    return !is_null(site) && ts_node_start_byte(anchor) >= ts_node_end_byte(site);
  }

  // A train() that restores R but sits outside the epoch loop runs only once (TG011-P02).
  TSNode train_outside(TSNode epoch, const std::optional<std::string>& r, int scope) const {
    int f = ctx.model.enclosing_function(scope);
    TSNode body = f >= 0 ? field(ctx.model.functions()[f].node, k.f_body) : ctx.root;
    for (const TrainCall& t : train_calls(body)) {
      bool inside = ts_node_start_byte(t.call) >= ts_node_start_byte(epoch) &&
                    ts_node_end_byte(t.call) <= ts_node_end_byte(epoch);
      if (!inside && t.receiver && restores(t.receiver, r)) return t.call;
    }
    return TSNode{};
  }

  // Error when the binding shows the receiver is a model; otherwise a warning, with the
  // weak step in the evidence.
  Severity receiver_proof(const EvalSwitch& sw, int scope, std::vector<EvidenceStep>& evidence) const {
    if (!sw.receiver) {
      evidence.push_back({range_of(sw.eval_call), "the receiver of " + quote_code(text_of(sw.eval_call, ctx.source)) +
                                                      " has no name to read a binding from: that it is "
                                                      "the trained model is assumed"});
      return Severity::Warning;
    }
    std::string r = *sw.receiver;
    // `model.module` of a DDP / DataParallel wrapper is the wrapped model itself.
    while (r.ends_with(".module") && ctx.model.kind_of(r, scope) != ValueKind::Model)
      r.resize(r.size() - std::string_view(".module").size());
    if (ctx.model.kind_of(r, scope) == ValueKind::Model) {
      if (const std::vector<BindingSite>* sites = ctx.model.bindings_of(r, scope))
        for (const BindingSite& b : *sites)
          if (ctx.model.classify_value(b.value, scope, b.arity > 1 ? b.position : -1) == ValueKind::Model) {
            evidence.push_back({range_of(b.value), quote_code(r) + " is bound to " +
                                                       quote_code(text_of(b.value, ctx.source)) + ", a model"});
            break;
          }
      return Severity::Error;
    }
    std::string_view last = names::last_segment(r);
    evidence.push_back({range_of(sw.eval_call),
                        names::is_model_name(last)
                            ? quote_code(r) + " is named like a model (naming heuristic); its binding does "
                                              "not show one"
                            : quote_code(r) + "'s binding does not show a model: that it is one is "
                                              "assumed from its " + quote_code("eval()") + " call"});
    return Severity::Warning;
  }

  Finding make_finding(const EvalSwitch& sw, TSNode epoch, TSNode backward, TSNode validation,
                       int scope) const {
    std::string who = sw.receiver ? "`" + *sw.receiver + "`" : "the model";
    std::string train = sw.receiver ? "`" + *sw.receiver + ".train()`" : "`model.train()`";
    Finding f;
    f.code = "TG011";
    f.category = Category::ConvergenceBug;
    f.range = range_of(sw.anchor);
    std::vector<EvidenceStep> proof;
    f.severity = receiver_proof(sw, scope, proof);
    f.message = quote_code(text_of(sw.anchor, ctx.source)) + " switches " + who +
                " to evaluation mode in this epoch loop and nothing in the loop switches it "
                "back: from the second epoch on it trains with dropout off and batch norm "
                "frozen on running statistics it no longer updates.";
    f.hint = "Call " + train + " at the start of every epoch (inside the loop), not once before it.";
    if (sw.eval_call.id != sw.anchor.id)
      f.evidence.push_back({range_of(sw.eval_call), quote_code(text_of(sw.eval_call, ctx.source)) +
                                                        " inside the helper switches to evaluation mode"});
    else
      f.evidence.push_back({range_of(sw.eval_call), quote_code(text_of(sw.eval_call, ctx.source)) +
                                                        " switches to evaluation mode"});
    for (EvidenceStep& step : proof) f.evidence.push_back(std::move(step));
    if (!is_null(validation)) {
      f.evidence.push_back({range_of(validation), quote_code(text_of(validation, ctx.source)) +
                                                      " feeds the validation pass of this loop"});
      f.evidence.push_back({range_of(backward), quote_code(text_of(backward, ctx.source)) +
                                                    " trains in the same loop, every epoch"});
    } else {
      f.evidence.push_back({range_of(backward), "the loop's next iteration reaches " +
                                                    quote_code(text_of(backward, ctx.source)) +
                                                    " still in evaluation mode"});
    }
    if (TSNode once = train_outside(epoch, sw.receiver, scope); !is_null(once))
      f.evidence.push_back({range_of(once), quote_code(text_of(once, ctx.source)) +
                                                " is outside the loop and runs only once"});
    TSNode header = is(epoch, k.for_statement) ? field(epoch, k.f_right) : field(epoch, k.f_condition);
    f.evidence.push_back({range_of(is_null(header) ? epoch : header),
                          "no " + train + " (or a parent's) anywhere in this loop"});
    return f;
  }
};

}  // namespace

std::unique_ptr<RuleCheck> make_tg011(const RuleContext& ctx) { return std::make_unique<Checker>(ctx); }

}  // namespace preflight::rules
