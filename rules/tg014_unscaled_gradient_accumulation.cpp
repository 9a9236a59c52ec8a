// TG014 unscaled-gradient-accumulation: a loop backwards every iteration but steps the
// optimizer only every N-th one (`if (i + 1) % N == 0: opt.step()`), and nothing divides the
// loss by N, so each step applies the sum of N gradients: an N-fold learning rate.
//
// Evidence chain: the `R.backward()` call in a loop -> an `if` in that loop whose test has a
// `% N` (N a name, attribute or integer other than 1) and whose body steps an optimizer (by
// binding, or by name as a last resort) -> gradients really accumulate (no unconditional
// zero_grad in the loop) -> R's definition chain (reassignments, in-place ops, local helpers'
// returns) shows no scaling of the backwarded value.
// A framework backward (`accelerator.backward(v)`) is judged by its argument `v`; an
// Accelerate `Accelerator(...)` built (on every visible binding) without
// `gradient_accumulation_steps` divides by 1, so the rule reports through it.
// Exempt: any visible scaling of the backwarded value (`/ N`, `/ float(N)`, `.div(N)`,
// `* (1 / N)`, `* inv` with `inv = 1 / N`, or a division by anything the rule cannot relate to
// N, such as a `loss_scale` variable: it does not guess); gradients rescaled before the step
// (`scale_grads_` or an alias of it, `p.grad /= N`, `p.grad.div_(N)`); backwards owned by a
// framework that scales for the user (Accelerate / Fabric / DeepSpeed engines and Lightning
// strategies, read from the receiver's name or its binding, LightningModule methods, and
// subclasses of the Hugging Face Trainer), recorded as a silence naming the framework.
// Framework detection reads code, never comments.
// Severity reads the optimizer the guard steps: an error when every binding of it is plain
// SGD (the sum is an N-fold learning rate); a note when every binding is an optimizer that
// normalises its update by the gradient's own magnitude (Adam, AdamW, RMSprop, Adagrad, Lion,
// ...: the sum changes the step only through eps and weight decay), a warning when
// such a loop also clips gradients (the threshold sees the sum); a warning when the class is
// not visible (a parameter, a table lookup, both kinds on different paths) and the evidence
// says so.
// The same for a counted loop of micro-steps, `for micro_step in range(N): ... backward()`,
// with the step after it in the same block (nanoGPT's shape; TG014-PX14): at most a warning,
// since N backwards may also be terms meant to add up.
// Also exempt: a learning rate divided by N in the optimizer's constructor (the sum is what
// the step was tuned for; TG014-NX20).
// Also exempt: a zero_grad before the backward under the same test as the step (each step
// applies only its own iteration's gradient; the earlier backwards are wasted, not summed).
// Fix (unsafe: it changes the effective learning rate): `R.backward()` -> `(R / N).backward()`.
#include <algorithm>
#include <cstdlib>
#include <array>
#include <set>

#include "analysis/frameworks.h"
#include "analysis/local_calls.h"
#include "analysis/names.h"
#include "analysis/reaching.h"
#include "rules/rule.h"

namespace preflight::rules {
namespace {

using namespace preflight::analysis;

// How the value that reaches backward is scaled: not at all, by the accumulation divisor, or
// by something the rule cannot relate to it.
enum class Scale { None, Divisor, Other };

// How an optimizer's update responds to a gradient N times larger, read from its class.
enum class StepResponse { Proportional, Normalised, Unknown };

// Classes whose update divides by a running magnitude of the gradient (or takes its sign), so
// a constant factor on every gradient cancels but for eps and coupled weight decay.
constexpr std::array<std::string_view, 20> kNormalisingOptimizers = {
    "Adam",     "AdamW",      "Adamax",    "NAdam",          "RAdam",     "SparseAdam", "Adagrad",
    "Adadelta", "RMSprop",    "Rprop",     "Lion",           "Adafactor", "LAMB",       "Lamb",
    "FusedAdam", "AdamW8bit", "Adam8bit",  "PagedAdamW",     "PagedAdamW8bit", "DeepSpeedCPUAdam"};
constexpr std::array<std::string_view, 2> kProportionalOptimizers = {"SGD", "ASGD"};

Scale combine_sum(Scale a, Scale b) {
  if (a == Scale::Divisor && b == Scale::Divisor) return Scale::Divisor;
  return a == Scale::None && b == Scale::None ? Scale::None : Scale::Other;
}
Scale strongest(Scale a, Scale b) {
  if (a == Scale::Divisor || b == Scale::Divisor) return Scale::Divisor;
  return a == Scale::Other || b == Scale::Other ? Scale::Other : Scale::None;
}

constexpr int kMaxDepth = 8;

struct Guard {
  TSNode if_node;     // if_statement or elif_clause
  TSNode test;
  TSNode body;
  TSNode step;        // the optimizer step in its body
  std::string divisor;
  // `for micro_step in range(N):` holding the backward, the step after it (if_node is the
  // loop, test its `range(N)`, body its body).
  bool counted_loop = false;
};

struct Checker final : RuleCheck {
  const RuleContext& ctx;
  const Kinds& k = kinds();
  std::vector<Finding> out;
  mutable std::optional<std::set<std::string>> rescaler_aliases;
  mutable std::vector<TSNode> alias_sites;  // the assignments that define them
  explicit Checker(const RuleContext& c) : ctx(c) {}

  void finish(std::vector<Finding>& sink) override {
    for (Finding& f : out) sink.push_back(std::move(f));
  }

  void enter(TSNode n, const WalkState& st) override {
    if (!is(n, k.call) || ctx.model.callee_leaf(n) != "backward") return;
    TSNode callee = field(n, k.f_function);
    const LoopFrame* loop = st.innermost_loop();
    if (!is(callee, k.attribute) || !loop) return;
    TSNode receiver = field(callee, k.f_object);
    std::vector<Guard> guards = accumulation_guards(loop->node, st.scope);
    std::erase_if(guards, [&](const Guard& g) { return inside(n, g.body); });
    if (guards.empty())
      if (auto micro = micro_step_loop(loop->node, st.scope)) guards.push_back(*micro);
    if (guards.empty()) return;
    if (clears_every_iteration(field(loop->node, k.f_body), loop->node, n) || rescales_gradients(loop->node)) return;
    if (guards.front().counted_loop && rescales_before_step(loop->node, guards.front().step)) return;
    std::erase_if(guards, [&](const Guard& g) {
      if (!cleared_under_same_test(loop->node, n, g)) return false;
      stay_silent("TG014", receiver,
                  "the gradients are cleared under the step's own test before this backward, so each "
                  "step applies one iteration's gradient: the other backwards are wasted, not summed",
                  {{range_of(g.test), quote_code(text_of(g.test, ctx.source)) + " guards both the zero_grad and the step"}});
      return true;
    });
    if (guards.empty()) return;
    std::set<std::string> keys;
    for (const Guard& g : guards) keys.insert(g.divisor);
    Body body{function_body(st.scope), keys};
    std::optional<FrameworkOwner> wrapper = backward_owner(ctx.model, receiver, st.scope);
    // `accelerator.backward(loss / n)`: a framework's backward takes the value as its argument.
    // `optimizer.backward(loss)` (apex's FP16_Optimizer, round 24: ERNIE) takes it the same way.
    auto receiver_name = dotted_name(receiver, ctx.source);
    bool optimizer_backward = receiver_name && ctx.model.is_optimizer(*receiver_name, st.scope);
    // `model.backward(loss)` on a model (a DeepSpeed engine behind a flag, round 40:
    // TencentPretrain's trainer): a module has no backward of its own; an engine wrapping it
    // takes the loss as its argument.
    // (`is_model`: by binding, or by name for a parameter whose binding is not seen.)
    bool engine_backward = receiver_name && ctx.model.is_model(*receiver_name, st.scope);
    TSNode value = (wrapper || optimizer_backward || engine_backward) && !is_null(positional_arg(n, 0))
                       ? positional_arg(n, 0)
                       : receiver;
    if (scale_of(value, body, ts_node_start_byte(n), 0) != Scale::None) return;
    std::optional<FrameworkOwner> owner = framework_owner(receiver, st.scope);
    if (owner && !accelerator_without_accumulation(*owner, receiver, st.scope))
      return stay_silent("TG014", value, reason_for(*owner),
                         {{range_of(owner->site), describe_owner(*owner, ctx.source)},
                          {range_of(guards.front().test), quote_code(text_of(guards.front().test, ctx.source)) +
                                                              " steps the optimizer every `" + *keys.begin() +
                                                              "` iterations"}});
    if (TSNode lr = learning_rate_divided(guards.front().step, body, st.scope); !is_null(lr))
      return stay_silent("TG014", value,
                         "the learning rate is divided by the accumulation count, so summing the gradients "
                         "is what the step was tuned for",
                         {{range_of(lr), quote_code(text_of(lr, ctx.source)) + " divides the learning rate by `" +
                                             *keys.begin() + "`"}});
    Finding f = make_finding(n, value, guards, *keys.begin(), loop->node, st.scope);
    if (owner)
      f.evidence.insert(f.evidence.begin() + 1,
                        {range_of(owner->site), quote_code(text_of(owner->site, ctx.source)) +
                                                    " sets no `gradient_accumulation_steps`, so "
                                                    "`accelerator.backward` divides by 1"});
    out.push_back(std::move(f));
  }

  // `accelerator = Accelerator(mixed_precision=...)`: Accelerate divides in `backward` only by
  // the `gradient_accumulation_steps` it was built with (1 by default). Every visible binding
  // must be such a constructor without it (and without a plugin or a splat that may carry it).
  bool accelerator_without_accumulation(const FrameworkOwner& owner, TSNode receiver, int scope) const {
    if (owner.framework != Framework::Accelerate || owner.by != OwnedBy::Binding) return false;
    auto d = dotted_name(receiver, ctx.source);
    const std::vector<BindingSite>* sites = d ? ctx.model.bindings_of(d->substr(0, d->find('.')), scope) : nullptr;
    if (!sites) return false;
    for (const BindingSite& b : *sites) {
      TSNode ctor = unparenthesize(b.value);
      auto q = is(ctor, k.call) ? ctx.model.qualified_name(field(ctor, k.f_function)) : std::nullopt;
      if (!q || *q != "accelerate.Accelerator" || b.arity > 1) return false;
      bool may_set = false;
      for_each_named_child(field(ctor, k.f_arguments), [&](TSNode a) {
        may_set = may_set || is(a, k.dictionary_splat) || is(a, k.list_splat);
      });
      if (may_set || !is_null(keyword_arg(ctor, "gradient_accumulation_steps", ctx.source)) ||
          !is_null(keyword_arg(ctor, "gradient_accumulation_plugin", ctx.source)))
        return false;
    }
    return true;
  }

  // A class the framework runs (LightningModule, a Trainer subclass), or a backward owned by
  // a framework's object (Accelerate, Fabric, a DeepSpeed engine, a Lightning strategy).
  std::optional<FrameworkOwner> framework_owner(TSNode receiver, int scope) const {
    if (auto owner = class_owner(ctx.model, scope)) return owner;
    return backward_owner(ctx.model, receiver, scope);
  }

  static std::string reason_for(const FrameworkOwner& owner) {
    if (owner.by == OwnedBy::ClassBase && owner.framework == Framework::Lightning)
      return "methods of a LightningModule run under the Lightning Trainer, which divides the "
             "loss by `accumulate_grad_batches` itself (automatic optimization)";
    switch (owner.framework) {
      case Framework::Accelerate:
        return "Accelerate divides the loss by `gradient_accumulation_steps` inside "
               "`accelerator.backward`, so the loss is not divided here" +
               std::string(owner.by == OwnedBy::Binding ? ""
                                                        : " (how the Accelerator was built is not visible here)");
      case Framework::DeepSpeed:
        return "the DeepSpeed engine scales the loss by its `gradient_accumulation_steps` inside "
               "`engine.backward`, so the loss is not divided here";
      case Framework::HfTrainer:
        return "the Hugging Face Trainer divides the loss by `gradient_accumulation_steps` itself";
      case Framework::Fabric:
        return "Lightning Fabric owns this backward; how its strategy accumulates is not "
               "visible here, so the rule does not guess";
      default:
        return std::string(framework_name(owner.framework)) +
               " runs the backward and scales the loss for gradient accumulation itself";
    }
  }

  // --- the accumulation guard ------------------------------------------------------------

  std::vector<Guard> accumulation_guards(TSNode loop, int scope) const {
    std::vector<Guard> guards;
    collect_guards(field(loop, k.f_body), scope, guards);
    return guards;
  }

  void collect_guards(TSNode n, int scope, std::vector<Guard>& guards) const {
    TSSymbol s = sym(n);
    if (s == k.function_definition || s == k.class_definition || s == k.lambda) return;
    if (s == k.if_statement || s == k.elif_clause) {
      TSNode test = field(n, k.f_condition);
      TSNode body = field(n, k.f_consequence);
      TSNode mod = first_modulo(test, ctx.source);
      if (is_null(mod)) mod = modulo_behind_name(test, n);
      TSNode step = is_null(body) ? TSNode{} : optimizer_step(body, scope);
      if (!is_null(mod) && !is_null(step))
        if (auto key = divisor_key(field(mod, k.f_right)); key && *key != "1")
          guards.push_back({n, test, body, step, *key});
    }
    for_each_named_child(n, [&](TSNode c) { collect_guards(c, scope, guards); });
  }

  // `for micro_step in range(N): ... loss.backward()` followed, in the same block, by the
  // optimizer step (nanoGPT's shape): N backwards feed each step. N must be a name, an
  // attribute or an integer above 1 (`range(len(tasks))` says nothing about accumulation), and
  // the loop itself must not step (a GAN's critic loop updates every pass).
  std::optional<Guard> micro_step_loop(TSNode loop, int scope) const {
    if (!is(loop, k.for_statement)) return std::nullopt;
    TSNode iter = unparenthesize(field(loop, k.f_right));
    if (!is(iter, k.call) || !is(field(iter, k.f_function), k.identifier) ||
        text_of(field(iter, k.f_function), ctx.source) != "range" ||
        ts_node_named_child_count(field(iter, k.f_arguments)) != 1)
      return std::nullopt;
    TSNode count = unparenthesize(positional_arg(iter, 0));
    auto key = divisor_key(count);
    if (!key || (is(count, k.integer) && std::atoll(key->c_str()) < 2)) return std::nullopt;
    if (!is_null(optimizer_step(field(loop, k.f_body), scope))) return std::nullopt;
    TSNode step{};
    for (TSNode next = ts_node_next_named_sibling(loop); !is_null(next) && is_null(step);
         next = ts_node_next_named_sibling(next))
      if (!is(next, k.function_definition) && !is(next, k.class_definition)) step = optimizer_step(next, scope);
    if (is_null(step)) return std::nullopt;
    return Guard{loop, iter, field(loop, k.f_body), step, *key, true};
  }

  // Gradients rescaled between the counted loop and its step (`for p in params: p.grad /= N`).
  bool rescales_before_step(TSNode loop, TSNode step) const {
    for (TSNode next = ts_node_next_named_sibling(loop); !is_null(next); next = ts_node_next_named_sibling(next)) {
      if (ts_node_start_byte(next) > ts_node_start_byte(step)) break;
      if (rescales_gradients(next)) return true;
    }
    return false;
  }

  // `need_update = (i + 1) % accum == 0` ... `if need_update:` (timm shape): the modulo in
  // the last assignment of a bare-name test, in the same function before the `if`.
  TSNode modulo_behind_name(TSNode test, TSNode if_node) const {
    test = unparenthesize(test);
    if (!is(test, k.identifier)) return TSNode{};
    TSNode body = if_node;
    while (!is_null(body) && !is(body, k.function_definition) && !is(body, k.module))
      body = ctx.model.parent(body);
    if (is_null(body)) return TSNode{};
    if (is(body, k.function_definition)) body = field(body, k.f_body);
    TSNode def = last_assignment(text_of(test, ctx.source), body, ts_node_start_byte(if_node), ctx.source);
    return is_null(def) ? TSNode{} : first_modulo(field(def, k.f_right), ctx.source);
  }

  std::optional<std::string> divisor_key(TSNode e) const {
    e = unparenthesize(e);
    if (is(e, k.integer)) return std::string(text_of(e, ctx.source));
    return dotted_name(e, ctx.source);
  }

  TSNode optimizer_step(TSNode n, int scope) const {
    if (is(n, k.call) && ctx.model.callee_leaf(n) == "step") {
      TSNode callee = field(n, k.f_function);
      if (is(callee, k.attribute)) {
        auto recv = dotted_name(field(callee, k.f_object), ctx.source);
        if (recv && ctx.model.is_optimizer(*recv, scope)) return n;
      }
    }
    TSNode found{};
    for_each_named_child(n, [&](TSNode c) {
      if (is_null(found)) found = optimizer_step(c, scope);
    });
    return found;
  }

  static bool inside(TSNode n, TSNode region) { return !is_null(region) && encloses(region, n); }

  // `if cond: opt.zero_grad()` ... `loss.backward()` ... `if cond: opt.step()` (DLRM's MLPerf
  // loop): the gradients the step applies are this iteration's only.
  bool cleared_under_same_test(TSNode loop, TSNode backward, const Guard& g) const {
    std::string want = squashed(text_of(g.test, ctx.source));
    bool cleared = false;
    ctx.model.for_each_call_in(field(loop, k.f_body), [&](TSNode c) {
      if (cleared || ts_node_start_byte(c) >= ts_node_start_byte(backward) ||
          ctx.model.callee_leaf(c) != "zero_grad")
        return;
      for (TSNode a = ctx.model.parent(c); !is_null(a) && !ts_node_eq(a, loop); a = ctx.model.parent(a))
        if (is(a, k.if_statement) && encloses(field(a, k.f_consequence), c)) {
          cleared = squashed(text_of(field(a, k.f_condition), ctx.source)) == want;
          break;
        }
    });
    return cleared;
  }

  static std::string squashed(std::string_view text) {
    std::string out;
    for (char ch : text)
      if (ch != ' ' && ch != '\t' && ch != '\n' && ch != '\r' && ch != '\\') out += ch;
    return out;
  }

  // --- the optimizer the guard steps ---------------------------------------------------------

  struct OptimizerRead {
    StepResponse response = StepResponse::Unknown;
    TSNode site{};       // the constructor call (Proportional / Normalised)
    std::string cls;     // its class
    std::string why;     // Unknown: what hides the class
  };

  // The name of what `step` steps: `optimizer.step()`, or `scaler.step(optimizer)`'s argument.
  std::optional<std::string> stepped_optimizer(TSNode step) const {
    TSNode arg = positional_arg(step, 0);
    return dotted_name(is_null(arg) ? field(field(step, k.f_function), k.f_object) : arg, ctx.source);
  }

  OptimizerRead optimizer_read(TSNode step, int scope) const {
    OptimizerRead r;
    auto recv = stepped_optimizer(step);
    const std::vector<BindingSite>* sites = recv ? ctx.model.bindings_of(*recv, scope) : nullptr;
    if (!recv || !sites || sites->empty()) {
      r.why = !recv ? "the stepped object is not a plain name"
              : ctx.model.parameter(*recv, scope) ? "`" + *recv + "` is a parameter, its callers choose the class"
                                                  : "nothing in this file binds `" + *recv + "`";
      return r;
    }
    std::optional<StepResponse> seen;
    for (const BindingSite& b : *sites) {
      TSNode ctor = unparenthesize(b.value);
      auto q = is(ctor, k.call) ? ctx.model.qualified_callee(ctor) : std::nullopt;
      std::string_view leaf = q ? names::last_segment(*q) : std::string_view{};
      StepResponse here = std::find(kNormalisingOptimizers.begin(), kNormalisingOptimizers.end(), leaf) !=
                                  kNormalisingOptimizers.end()
                              ? StepResponse::Normalised
                          : std::find(kProportionalOptimizers.begin(), kProportionalOptimizers.end(), leaf) !=
                                  kProportionalOptimizers.end()
                              ? StepResponse::Proportional
                              : StepResponse::Unknown;
      if (here == StepResponse::Unknown || b.arity > 1) {
        r.why = "`" + *recv + " = " + std::string(text_of(b.value, ctx.source)).substr(0, 60) +
                "` does not show the optimizer's class";
        return r;
      }
      if (seen && *seen != here) {
        r.why = "`" + *recv + "` is `" + r.cls + "` on one path and `" + std::string(leaf) + "` on another";
        return r;
      }
      seen = here;
      r.site = ctor;
      r.cls = std::string(leaf);
    }
    r.response = *seen;
    return r;
  }

  // `clip_grad_norm_` / `clip_grad_value_` in the loop: the threshold sees the summed gradient.
  TSNode clipping_in(TSNode loop) const {
    TSNode found{};
    ctx.model.for_each_call_in(field(loop, k.f_body), [&](TSNode c) {
      std::string_view leaf = ctx.model.callee_leaf(c);
      if (is_null(found) && (leaf == "clip_grad_norm_" || leaf == "clip_grad_value_" || leaf == "clip_grad_norm"))
        found = c;
    });
    return found;
  }

  // A zero_grad that runs in every iteration the backward runs in clears what it added:
  // nothing accumulates. It may sit behind the same `if` as the backward (a warm-up guard
  // around the whole update), but not in a branch the backward is outside of.
  bool clears_every_iteration(TSNode n, TSNode loop, TSNode backward) const {
    TSSymbol s = sym(n);
    if (s == k.function_definition || s == k.class_definition || s == k.lambda) return false;
    if (s == k.call && ctx.model.callee_leaf(n) == "zero_grad" && runs_with(n, loop, backward)) return true;
    bool found = false;
    for_each_named_child(n, [&](TSNode c) { found = found || clears_every_iteration(c, loop, backward); });
    return found;
  }

  // True when every branch between `n` and `loop` (an `if` / `elif` / `else` / `except` arm or
  // a nested loop's body) also holds `backward`: `n` runs whenever `backward` does.
  bool runs_with(TSNode n, TSNode loop, TSNode backward) const {
    for (TSNode a = ctx.model.parent(n); !is_null(a) && !ts_node_eq(a, loop); a = ctx.model.parent(a)) {
      TSSymbol s = sym(a);
      bool branch = s == k.elif_clause || s == k.else_clause || s == k.except_clause ||
                    ((s == k.block) && is_branch_body(a));
      if (branch && !encloses(a, backward)) return false;
    }
    return true;
  }

  bool is_branch_body(TSNode block) const {
    TSNode p = ctx.model.parent(block);
    TSSymbol s = sym(p);
    return s == k.if_statement || s == k.for_statement || s == k.while_statement;
  }

  // --- gradient rescaling before the step --------------------------------------------------

  bool rescales_gradients(TSNode n) const {
    TSSymbol s = sym(n);
    if (s == k.call) {
      std::string_view leaf = ctx.model.callee_leaf(n);
      if (names::contains(leaf, "scale_grad")) return true;
      auto callee = dotted_name(field(n, k.f_function), ctx.source);
      if (callee && aliases().count(*callee)) return true;
      TSNode fn = field(n, k.f_function);
      if ((leaf == "div_" || leaf == "mul_") && is(fn, k.attribute) && is_grad(field(fn, k.f_object)))
        return true;
    } else if (s == k.augmented_assignment) {
      std::string_view op = text_of(field(n, k.f_operator), ctx.source);
      if ((op == "/=" || op == "*=") && is_grad(field(n, k.f_left))) return true;
    }
    bool found = false;
    for_each_named_child(n, [&](TSNode c) { found = found || rescales_gradients(c); });
    return found;
  }

  // `p.grad`, `p.grad.data`.
  bool is_grad(TSNode e) const {
    e = unparenthesize(e);
    if (!is(e, k.attribute)) return false;
    std::string_view attr = text_of(field(e, k.f_attribute), ctx.source);
    if (attr == "data") return is_grad(field(e, k.f_object));
    return attr == "grad";
  }

  // Dotted targets of plain assignments whose value mentions an identifier containing
  // `scale_grad` (`self._rescale = utils.scale_grads_`), computed once per file on demand.
  const std::set<std::string>& aliases() const {
    if (!rescaler_aliases) {
      rescaler_aliases.emplace();
      collect_aliases(ctx.root);
    }
    return *rescaler_aliases;
  }

  void context(std::vector<ContextFact>& facts) const override {
    aliases();
    for (TSNode site : alias_sites) note_context(facts, "TG014 rescaler alias", site);
  }

  void collect_aliases(TSNode n) const {
    if (is(n, k.assignment) && mentions_scale_grad(field(n, k.f_right)))
      if (auto d = dotted_name(field(n, k.f_left), ctx.source)) {
        rescaler_aliases->insert(*d);
        alias_sites.push_back(n);
      }
    for_each_named_child(n, [&](TSNode c) { collect_aliases(c); });
  }

  bool mentions_scale_grad(TSNode n) const {
    if (is_null(n)) return false;
    if (is(n, k.identifier)) return names::contains(text_of(n, ctx.source), "scale_grad");
    bool found = false;
    for_each_named_child(n, [&](TSNode c) { found = found || mentions_scale_grad(c); });
    return found;
  }

  // --- the backwarded value's definition chain --------------------------------------------

  struct Body {
    TSNode node;                      // the function body (or module) holding the chain
    const std::set<std::string>& keys;
  };

  TSNode function_body(int scope) const {
    int f = ctx.model.enclosing_function(scope);
    return f >= 0 ? field(ctx.model.functions()[f].node, k.f_body) : ctx.root;
  }

  bool is_number(TSNode e) const {
    e = unparenthesize(e);
    return is(e, k.integer) || is(e, k.float_);
  }

  // `N`, `float(N)`, `int(N)`, or a local name bound to one of those.
  bool divisor_like(TSNode e, const Body& b, uint32_t before, int depth) const {
    e = unparenthesize(e);
    if (is_null(e) || depth > kMaxDepth) return false;
    if (auto key = divisor_key(e); key && b.keys.count(*key)) return true;
    if (is(e, k.call)) {
      std::string_view leaf = ctx.model.callee_leaf(e);
      if ((leaf == "float" || leaf == "int") && is(field(e, k.f_function), k.identifier))
        return divisor_like(positional_arg(e, 0), b, before, depth + 1);
      return false;
    }
    if (!is(e, k.identifier)) return false;
    TSNode def = last_assignment(text_of(e, ctx.source), b.node, before, ctx.source);
    return !is_null(def) && divisor_like(field(def, k.f_right), b, ts_node_start_byte(def), depth + 1);
  }

  // `1 / N`, `1.0 / float(N)`, or a local name bound to one (`inv = 1 / N`).
  bool reciprocal_like(TSNode e, const Body& b, uint32_t before, int depth) const {
    e = unparenthesize(e);
    if (is_null(e) || depth > kMaxDepth) return false;
    if (is(e, k.binary_operator) && text_of(field(e, k.f_operator), ctx.source) == "/")
      return is_number(field(e, k.f_left)) && divisor_like(field(e, k.f_right), b, before, depth + 1);
    if (!is(e, k.identifier)) return false;
    TSNode def = last_assignment(text_of(e, ctx.source), b.node, before, ctx.source);
    return !is_null(def) && reciprocal_like(field(def, k.f_right), b, ts_node_start_byte(def), depth + 1);
  }

  Scale scale_of(TSNode e, const Body& b, uint32_t before, int depth) const {
    e = unparenthesize(e);
    if (is_null(e) || depth > kMaxDepth) return Scale::None;
    TSSymbol s = sym(e);
    if (s == k.binary_operator) return scale_of_binary(e, b, before, depth);
    if (s == k.call) return scale_of_call(e, b, before, depth);
    if (s == k.identifier || s == k.attribute) {
      auto d = dotted_name(e, ctx.source);
      if (d) return scale_of_name(*d, b, before, depth);
      if (s == k.attribute) return scale_of(field(e, k.f_object), b, before, depth + 1);
    }
    if (s == k.subscript) return scale_of(field(e, k.f_value), b, before, depth + 1);
    return Scale::None;
  }

  Scale scale_of_binary(TSNode e, const Body& b, uint32_t before, int depth) const {
    std::string_view op = text_of(field(e, k.f_operator), ctx.source);
    TSNode l = field(e, k.f_left), r = field(e, k.f_right);
    if (op == "/" || op == "//")
      return divisor_like(r, b, before, depth + 1) ? Scale::Divisor : Scale::Other;
    if (op == "*") {
      if (reciprocal_like(l, b, before, depth + 1) || reciprocal_like(r, b, before, depth + 1))
        return Scale::Divisor;
      if (is_number(l) || is_number(r)) return Scale::Other;  // `loss * 0.25`
      return strongest(scale_of(l, b, before, depth + 1), scale_of(r, b, before, depth + 1));
    }
    if (op == "+" || op == "-")
      return combine_sum(scale_of(l, b, before, depth + 1), scale_of(r, b, before, depth + 1));
    return Scale::None;
  }

  Scale scale_of_call(TSNode call, const Body& b, uint32_t before, int depth) const {
    TSNode callee = field(call, k.f_function);
    std::string_view leaf = ctx.model.callee_leaf(call);
    if (is(callee, k.attribute)) {
      TSNode recv = field(callee, k.f_object);
      TSNode arg = positional_arg(call, 0);
      if (leaf == "div" || leaf == "div_" || leaf == "true_divide" || leaf == "divide")
        return divisor_like(arg, b, before, depth + 1) ? Scale::Divisor : Scale::Other;
      if (leaf == "mul" || leaf == "mul_" || leaf == "multiply")
        return reciprocal_like(arg, b, before, depth + 1) ? Scale::Divisor : Scale::Other;
      // AMP multiplies by its own factor: `scaler.scale(loss)`, apex `amp.scale_loss(loss, opt)`.
      if (leaf == "scale" || leaf == "scale_loss") return scale_of(arg, b, before, depth + 1);
      static constexpr std::string_view kPreserving[] = {"mean", "sum", "float", "half", "double",
                                                         "bfloat16", "to", "squeeze", "contiguous",
                                                         "clone", "cuda"};
      if (std::find(std::begin(kPreserving), std::end(kPreserving), leaf) != std::end(kPreserving))
        return scale_of(recv, b, before, depth + 1);
    }
    return scale_of_helper(call, b, depth);
  }

  // A local helper's returns, read in the helper's own body (`return loss / self.accum`). With
  // `element` >= 0, element `element` of each return, which must then be a tuple of at least
  // that width (`loss, n = helper(...)`, round 24: DPR's `_do_biencoder_fwd_pass` divides by
  // the accumulation steps before `return loss, is_correct`); None when one is not.
  // A method several classes of the file define (`self.forward_propagation(batch, model)` in a
  // base trainer whose subclasses each override it, round 40: TencentPretrain) may run any of
  // them: every definition that returns a value must scale alike (an abstract one that only
  // raises returns nothing and is skipped).
  Scale scale_of_helper(TSNode call, const Body& b, int depth, int element = -1) const {
    call = unparenthesize(call);
    const std::vector<int>* callees = is(call, k.call) ? local_callees(ctx.model, call) : nullptr;
    if (!callees || callees->empty() || depth > kMaxDepth) return Scale::None;
    std::optional<Scale> all;
    for (int f : *callees) {
      Scale s = scale_of_definition(ctx.model.functions()[f], b, depth, element);
      if (s == Scale::None && ctx.model.functions()[f].returns.empty() && callees->size() > 1) continue;
      if (s == Scale::None) return Scale::None;  // one override that does not scale: a path unscaled
      all = !all ? s : (*all == s ? s : Scale::Other);
    }
    return all.value_or(Scale::None);
  }

  // What one definition's returns scale by (each return must agree), read in its own body.
  Scale scale_of_definition(const FunctionInfo& fn, const Body& b, int depth, int element) const {
    Body helper{field(fn.node, k.f_body), b.keys};
    std::optional<Scale> all;
    for (TSNode ret : fn.returns) {
      if (ts_node_named_child_count(ret) == 0) continue;
      TSNode value = ts_node_named_child(ret, 0);
      if (element >= 0) {
        value = unparenthesize(value);
        if (!(is(value, k.expression_list) || is(value, k.tuple)) ||
            static_cast<int>(ts_node_named_child_count(value)) <= element)
          return Scale::None;
        value = ts_node_named_child(value, static_cast<uint32_t>(element));
      }
      Scale s = scale_of(value, helper, ts_node_start_byte(ret), depth + 1);
      all = !all ? s : (*all == s ? s : Scale::Other);
    }
    return all.value_or(Scale::None);
  }

  // The position of plain name `name` in an unpacking pattern, or -1.
  int element_index(TSNode pattern, const std::string& name) const {
    uint32_t n = ts_node_named_child_count(pattern);
    for (uint32_t i = 0; i < n; ++i) {
      TSNode c = ts_node_named_child(pattern, i);
      if (is(c, k.identifier) && text_of(c, ctx.source) == name) return static_cast<int>(i);
    }
    return -1;
  }

  // Statements that write `name` before `before`, in source order: plain and augmented
  // assignments, `with ... as name`, and in-place `name.div_(x)` / `name.mul_(x)` calls.
  std::vector<TSNode> writes_to(std::string_view name, TSNode body, uint32_t before) const {
    std::vector<TSNode> found;
    collect_writes(name, body, before, found);
    return found;
  }

  void collect_writes(std::string_view name, TSNode n, uint32_t before, std::vector<TSNode>& found) const {
    if (ts_node_start_byte(n) >= before) return;
    TSSymbol s = sym(n);
    if (s == k.function_definition || s == k.class_definition || s == k.lambda) return;
    if (s == k.assignment || s == k.augmented_assignment) {
      TSNode left = field(n, k.f_left);
      if (auto d = dotted_name(left, ctx.source); d && *d == name && !is_null(field(n, k.f_right)))
        found.push_back(n);
      else if (s == k.assignment && (is(left, k.pattern_list) || is(left, k.tuple_pattern)) &&
               element_index(left, std::string(name)) >= 0)
        found.push_back(n);  // `loss, n = helper(...)`
    } else if (s == k.as_pattern && is(ctx.model.parent(n), k.with_item)) {
      TSNode target = ts_node_named_child(n, ts_node_named_child_count(n) - 1);
      if (is(target, k.as_pattern_target) && text_of(target, ctx.source) == name) found.push_back(n);
    } else if (s == k.call && is(ctx.model.parent(n), k.expression_statement)) {
      TSNode callee = field(n, k.f_function);
      std::string_view leaf = ctx.model.callee_leaf(n);
      if ((leaf == "div_" || leaf == "mul_") && is(callee, k.attribute) &&
          dotted_name(field(callee, k.f_object), ctx.source) == std::optional<std::string>(name))
        found.push_back(n);
    }
    for_each_named_child(n, [&](TSNode c) { collect_writes(name, c, before, found); });
  }

  // The value of `name` at `before`: its last plain assignment, then every in-place
  // operation after it.
  Scale scale_of_name(const std::string& name, const Body& b, uint32_t before, int depth) const {
    Scale result = Scale::None;
    for (TSNode w : writes_to(name, b.node, before)) {
      uint32_t at = ts_node_start_byte(w);
      if (is(w, k.assignment)) {
        TSNode left = field(w, k.f_left);
        int index = (is(left, k.pattern_list) || is(left, k.tuple_pattern)) ? element_index(left, name) : -1;
        result = index >= 0 ? scale_of_helper(field(w, k.f_right), b, depth + 1, index)
                            : scale_of(field(w, k.f_right), b, at, depth + 1);
      } else if (is(w, k.as_pattern)) {  // `with amp.scale_loss(loss, opt) as scaled:`
        result = scale_of(ts_node_named_child(w, 0), b, at, depth + 1);
      } else if (is(w, k.call)) {
        result = strongest(result, scale_of_call(w, b, at, depth + 1));
      } else {
        result = augmented_scale(w, result, b, depth);
      }
    }
    return result;
  }

  Scale augmented_scale(TSNode w, Scale so_far, const Body& b, int depth) const {
    std::string_view op = text_of(field(w, k.f_operator), ctx.source);
    TSNode r = field(w, k.f_right);
    uint32_t at = ts_node_start_byte(w);
    if (op == "/=" || op == "//=")
      return strongest(so_far, divisor_like(r, b, at, depth + 1) ? Scale::Divisor : Scale::Other);
    if (op == "*=") {
      if (reciprocal_like(r, b, at, depth + 1)) return Scale::Divisor;
      return strongest(so_far, is_number(r) ? Scale::Other : scale_of(r, b, at, depth + 1));
    }
    if (op == "+=" || op == "-=") return combine_sum(so_far, scale_of(r, b, at, depth + 1));
    return so_far;
  }

  // The `lr` of every binding of the stepped optimizer when each divides by the accumulation
  // count (`base_lr = cfg.LR / batch_size / subdivision` ... `optim.SGD(params, lr=base_lr)`,
  // round 54: DeNA's YOLOv3): the sum is what the step expects. Null when one does not or a
  // binding is not a visible constructor.
  TSNode learning_rate_divided(TSNode step, const Body& b, int scope) const {
    auto recv = stepped_optimizer(step);
    const std::vector<BindingSite>* sites = recv ? ctx.model.bindings_of(*recv, scope) : nullptr;
    if (!sites || sites->empty()) return TSNode{};
    TSNode last{};
    for (const BindingSite& b_site : *sites) {
      TSNode ctor = unparenthesize(b_site.value);
      if (!is(ctor, k.call) || b_site.arity > 1) return TSNode{};
      TSNode lr = keyword_arg(ctor, "lr", ctx.source);
      if (is_null(lr)) lr = positional_arg(ctor, 1);
      if (is_null(lr) || scale_of(lr, b, ts_node_start_byte(ctor), 0) != Scale::Divisor) return TSNode{};
      last = lr;
    }
    return last;
  }

  // --- the finding -------------------------------------------------------------------------

  Finding make_finding(TSNode backward, TSNode receiver, const std::vector<Guard>& guards,
                       const std::string& n, TSNode loop, int scope) const {
    std::string r(text_of(receiver, ctx.source));
    const Guard& g = guards.front();
    OptimizerRead opt = optimizer_read(g.step, scope);
    TSNode clip = clipping_in(loop);
    Finding f;
    f.code = "TG014";
    f.category = Category::ConvergenceBug;
    f.range = range_of(receiver);
    std::string head = "`" + n + "` backward passes feed each optimizer step, but nothing divides " +
                       quote_code(r) + " by `" + n + "`: each step applies the sum of `" + n +
                       "` gradients instead of their average";
    switch (opt.response) {
      case StepResponse::Proportional:
        // A counted loop's backwards may be terms meant to add up (tasks, augmentations) as
        // well as slices of one batch: the sum is proven, the intent is not.
        f.severity = g.counted_loop ? Severity::Warning : Severity::Error;
        f.message = head + ", a learning rate `" + n + "` times too high in disguise.";
        break;
      case StepResponse::Normalised:
        f.severity = is_null(clip) ? Severity::Note : Severity::Warning;
        f.message = head + ". `" + opt.cls + "` divides its update by the gradient's own magnitude, so " +
                    (is_null(clip) ? std::string("the sum changes the step only through eps and weight decay.")
                                   : std::string("the sum matters through the clipping threshold, eps and weight "
                                                 "decay."));
        break;
      case StepResponse::Unknown:
        f.severity = Severity::Warning;
        f.message = head + ": with SGD a learning rate `" + n + "` times too high; an Adam-family "
                    "optimizer divides most of the factor away.";
        break;
    }
    bool argument = !ts_node_eq(receiver, field(field(backward, k.f_function), k.f_object));
    f.hint = argument ? "Divide what the backward receives: `" +
                            std::string(text_of(field(backward, k.f_function), ctx.source)) + "(" + r +
                            " / " + n + ")` (this assumes the loss uses the default mean reduction)."
                      : "Scale before backward: `(" + r + " / " + n +
                            ").backward()` (this assumes the loss uses the default mean reduction).";
    f.evidence.push_back({range_of(backward), quote_code(text_of(backward, ctx.source)) +
                                                  " adds this iteration's gradients into `.grad`"});
    if (g.counted_loop)
      f.evidence.push_back({range_of(g.test), quote_code(text_of(g.test, ctx.source)) + " runs the backward `" + n +
                                                  "` times, and nothing in the loop steps the optimizer"});
    else
      f.evidence.push_back({range_of(g.test), quote_code(text_of(g.test, ctx.source)) +
                                                  " steps the optimizer only once every `" + n + "` iterations"});
    f.evidence.push_back({range_of(g.step), quote_code(text_of(g.step, ctx.source)) +
                                                " applies the summed gradients"});
    f.evidence.push_back({range_of(receiver), "no division of " + quote_code(r) + " by `" + n +
                                                  "` (or any other scaling) on its way to backward"});
    if (g.counted_loop && opt.response == StepResponse::Proportional)
      f.evidence.push_back({range_of(g.test), "whether the `" + n + "` backwards are slices of one batch (accumulation) "
                                              "or terms meant to add up is intent the loop does not show (a "
                                              "warning, not an error)"});
    if (opt.response == StepResponse::Unknown)
      f.evidence.push_back({range_of(g.step), "which optimizer steps is not proven: " + opt.why +
                                                  " (a warning, not an error: Adam-family updates barely change)"});
    else
      f.evidence.push_back({range_of(opt.site), quote_code(text_of(opt.site, ctx.source)) + " builds an optimizer of class `" +
                                                    opt.cls + "`" +
                                                    (opt.response == StepResponse::Proportional
                                                         ? ", whose step is proportional to the gradient"
                                                         : ", whose step does not scale with the gradient")});
    if (!is_null(clip) && opt.response == StepResponse::Normalised)
      f.evidence.push_back({range_of(clip), quote_code(text_of(clip, ctx.source)) + " clips the summed gradient"});
    std::string replacement = "(" + r + " / " + n + ")";
    // Unsafe: it changes the effective learning rate a tuned run may depend on, and is wrong
    // for a loss with `reduction="sum"`.
    f.fixes.push_back({"divide the loss by " + n, FixSafety::Unsafe, {{range_of(receiver), replacement}}});
    return f;
  }
};

}  // namespace

std::unique_ptr<RuleCheck> make_tg014(const RuleContext& ctx) { return std::make_unique<Checker>(ctx); }

}  // namespace preflight::rules
