// TG003 missing-zero-grad: a loop backwards and steps an optimizer but never clears the
// gradients, so `.grad` sums across iterations and every update applies all of them.
//
// Evidence chain: the `.backward()` call -> the optimizer step in the innermost loop around
// it that steps one (a micro-batch loop's step is in the loop around it; the optimizer is
// known by its binding, or by its name as a last resort; `scaler.step(optimizer)` counts)
// -> nothing in that
// loop clears gradients (`zero_grad()`, `p.grad = None`, `p.grad.zero_()`, or a local helper
// that does either). With as many optimizer steps as backwards in the loop (two models
// trained side by side), the i-th backward's evidence names the i-th step.
// Warning, not error: a DeepSpeed engine's backward, whose optimizer may clear gradients in
// `step()` depending on a config this file does not show (ZeRO's do); a loop calling a `self`
// method this file does not define, in a class whose base comes from another module (a note
// when the backwarded loss comes from that method, TG003-NX31).
// Exempt: loops without an optimizer step (micro-batch loops, saliency maps; a `.step(loss)`
// handed a tensor is no torch optimizer step, TG003-NX30). Silent, with
// the reason recorded: backward receivers managed by Lightning / Fabric / distributed
// autograd (also an RRef's `loss.backward(context_id)` inside `dist_autograd.context()`);
// methods of a LightningModule (the trainer clears gradients); a loop over a literal tuple of
// distinct models with a fresh optimizer per pass (TG003-NX08); a benchmark, a `range`
// loop on inputs fixed before it between two clock reads (TG003-NX10) or two reads of the CUDA
// allocator's statistics (a memory benchmark, TG003-NX12). `.main_grad` zeroed counts as
// clearing (fused weight-gradient accumulation, TG003-NX07).
#include <algorithm>
#include <optional>
#include <cctype>

#include "analysis/frameworks.h"
#include "analysis/local_calls.h"
#include "analysis/names.h"
#include "rules/rule.h"
#include "rules/timing.h"

namespace preflight::rules {
namespace {

using namespace preflight::analysis;

struct Checker final : RuleCheck {
  const RuleContext& ctx;
  const Kinds& k = kinds();
  std::vector<Finding> out;
  mutable std::vector<std::string_view> resolving_;  // names fixed_input is following
  explicit Checker(const RuleContext& c) : ctx(c) {}

  void finish(std::vector<Finding>& sink) override {
    for (Finding& f : out) sink.push_back(std::move(f));
  }

  void enter(TSNode n, const WalkState& st) override {
    if (!is(n, k.call) || ctx.model.callee_leaf(n) != "backward") return;
    TSNode callee = field(n, k.f_function);
    if (!is(callee, k.attribute)) return;  // bare backward(loss): not a gradient step
    if (st.loops.empty()) return;
    // The step may sit in an enclosing loop (nanoGPT: micro-batch backwards inside, one
    // `scaler.step(optimizer)` per outer iteration): the innermost loop around this backward
    // that steps an optimizer is the training step; a clear anywhere in it is enough.
    const LoopFrame* loop = nullptr;
    TSNode step{};
    for (auto it = st.loops.rbegin(); it != st.loops.rend(); ++it) {
      if (clears_gradients(it->node, 0)) return;
      step = optimizer_step(it->node, st.scope);
      if (!is_null(step)) {
        loop = &*it;
        break;
      }
    }
    if (!loop) return;
    if (TSNode fresh = fresh_optimizer_per_model(*loop, step); !is_null(fresh))
      return stay_silent("TG003", n,
                         "one pass per model: the loop walks a literal list of distinct models and builds a fresh "
                         "optimizer for each, so no parameter receives a second backward",
                         {{range_of(fresh), quote_code(text_of(fresh, ctx.source)) + " is built on every pass"}});
    if (auto fresh = fresh_model_per_pass(*loop, step, n); fresh)
      return stay_silent("TG003", n,
                         "one pass per model: the loop builds a new model and a new optimizer over its parameters "
                         "on every pass, so no parameter receives a second backward",
                         {{range_of(fresh->first), quote_code(text_of(fresh->first, ctx.source)) + " builds the model on every pass"},
                          {range_of(fresh->second), quote_code(text_of(fresh->second, ctx.source)) + " builds the optimizer on every pass"}});
    if (auto timed = timed_fixed_input_benchmark(*loop, n, st.scope); timed)
      return stay_silent("TG003", n,
                         std::string(is_clock_read(ctx.model, timed->first) ? "a timed benchmark" : "a memory benchmark") +
                             ": the loop runs a fixed number of steps on the same inputs between clock or "
                             "memory-statistics reads, so only the time (or memory) it takes is reported, which "
                             "the summed gradients do not change",
                         {{range_of(timed->first), quote_code(text_of(timed->first, ctx.source)) + " measures before the loop"},
                          {range_of(timed->second), quote_code(text_of(timed->second, ctx.source)) + " measures again after"}});
    if (TSNode context = distributed_autograd_context(ctx.model, n); !is_null(context))
      return stay_silent("TG003", n, reason_for(FrameworkOwner{Framework::DistributedAutograd, OwnedBy::Binding, context}),
                         {{range_of(context), quote_code(text_of(context, ctx.source)) +
                                                  " opens the distributed-autograd context this backward runs in"}});
    if (auto owner = gradient_owner(field(callee, k.f_object), st.scope))
      return stay_silent("TG003", n, reason_for(*owner), {{range_of(owner->site), describe_owner(*owner, ctx.source)}});
    step = paired_step(n, loop->node, st.scope, step);
    Finding f = make_finding(n, step, loop->node);
    // A DeepSpeed engine's backward: whether the optimizer clears gradients in `step()` (ZeRO's
    // do) depends on the engine's configuration, which this file does not show.
    if (auto owner = backward_owner(ctx.model, field(callee, k.f_object), st.scope);
        owner && owner->framework == Framework::DeepSpeed) {
      f.severity = Severity::Warning;
      f.evidence.push_back({range_of(owner->site),
                            describe_owner(*owner, ctx.source) +
                                ": whether its optimizer clears gradients in `step()` (ZeRO's optimizers "
                                "do) depends on a configuration not visible here (weak step: reported as a "
                                "warning)"});
    }
    note_inherited_call(f, loop->node, st.scope, field(callee, k.f_object));
    out.push_back(std::move(f));
  }

  // `loss, metrics = self.standard_loss(x, y)` in a trainer whose base class comes from another
  // module (round 71: adversarial_robustness_pytorch's weight-averaging trainer inherits its
  // loss methods, which call `self.optimizer.zero_grad()` first): a method this file does not
  // define may clear the gradients. That step is unseen: a warning, and a note when the loss
  // being backwarded comes from such a method (TG003-NX31).
  void note_inherited_call(Finding& f, TSNode loop, int scope, TSNode loss) const {
    int c = ctx.model.enclosing_class(scope);
    if (c < 0) return;
    std::string base = external_base(c, 0);
    if (base.empty()) return;
    TSNode unseen{};
    bool makes_the_loss = false;
    std::optional<std::string> loss_name = dotted_name(unparenthesize(loss), ctx.source);
    ctx.model.for_each_call_in(field(loop, k.f_body), [&](TSNode call) {
      TSNode callee = field(call, k.f_function);
      if (!is(callee, k.attribute) || text_of(field(callee, k.f_object), ctx.source) != "self") return;
      std::string name(text_of(field(callee, k.f_attribute), ctx.source));
      if (local_callees(ctx.model, call) || ctx.model.classes()[c].self_bindings.count(name)) return;
      bool feeds = loss_name && assigns_from(call, *loss_name);
      if (is_null(unseen) || (feeds && !makes_the_loss)) unseen = call, makes_the_loss = feeds;
    });
    if (is_null(unseen)) return;
    f.severity = makes_the_loss ? Severity::Note : Severity::Warning;
    f.evidence.push_back({range_of(unseen), quote_code(text_of(unseen, ctx.source)) +
                                                " runs a method this file does not define (`" +
                                                ctx.model.classes()[c].name + "` inherits from `" + base +
                                                "`): it may clear gradients (weak step: an unseen callee)"});
  }

  // A base class of class `c` (through the file's own classes) that this file does not define
  // and that is no torch class or `object`; empty when none.
  std::string external_base(int c, int depth) const {
    if (depth > 4) return {};
    for (const std::string& b : ctx.model.classes()[c].bases) {
      if (int local = ctx.model.class_named(b); local >= 0 && local != c) {
        if (std::string found = external_base(local, depth + 1); !found.empty()) return found;
        continue;
      }
      if (b == "object" || b.starts_with("torch.") || b.starts_with("nn."))
        continue;
      return b;
    }
    return {};
  }

  // The statement around `call` assigns its result to `name` (`loss = ...`, `loss, m = ...`).
  bool assigns_from(TSNode call, const std::string& name) const {
    TSNode a = ctx.model.parent(call);
    if (!is(a, k.assignment) || !ts_node_eq(unparenthesize(field(a, k.f_right)), call)) return false;
    bool found = false;
    auto visit = [&](auto&& self, TSNode t) -> void {
      if (auto d = dotted_name(t, ctx.source); d && *d == name) found = true;
      if (is(t, k.pattern_list) || is(t, k.tuple_pattern) || is(t, k.list_pattern) || is(t, k.tuple) || is(t, k.list))
        for_each_named_child(t, [&](TSNode e) { self(self, e); });
    };
    visit(visit, field(a, k.f_left));
    return found;
  }

  // Two models trained side by side (`a.backward(); b.backward(); opt_a.step(); opt_b.step()`):
  // with as many steps as backwards in the loop, the i-th backward goes with the i-th step.
  TSNode paired_step(TSNode backward, TSNode loop, int scope, TSNode first) const {
    std::vector<TSNode> backwards, steps;
    collect_calls(field(loop, k.f_body), scope, backwards, steps);
    if (backwards.size() != steps.size()) return first;
    for (size_t i = 0; i < backwards.size(); ++i)
      if (ts_node_eq(backwards[i], backward)) return steps[i];
    return first;
  }

  bool is_step_call(TSNode n, int scope) const {
    if (!is(n, k.call) || ctx.model.callee_leaf(n) != "step") return false;
    TSNode callee = field(n, k.f_function);
    if (!is(callee, k.attribute)) return false;
    if (steps_on_a_tensor(n)) return false;
    auto recv = dotted_name(field(callee, k.f_object), ctx.source);
    if (recv && ctx.model.is_optimizer(*recv, scope)) return true;
    auto arg = dotted_name(positional_arg(n, 0), ctx.source);
    return arg && ctx.model.kind_of(*arg, scope) == ValueKind::Optimizer;
  }

  // `diffopt.step(loss)`: torch's `Optimizer.step` takes at most a closure, never a tensor; a
  // step handed a tensor the bindings prove one (higher's differentiable optimizers) takes its
  // gradients from that loss itself and never reads `.grad` (round 50: MAML over higher's
  // `innerloop_ctx`, TG003-NX30).
  bool steps_on_a_tensor(TSNode call) const {
    TSNode arg = positional_arg(call, 0);
    if (is_null(arg)) arg = keyword_arg(call, "loss", ctx.source);
    if (is_null(arg)) return false;
    const Value* v = ctx.provenance.value_of(unparenthesize(arg));
    return v && v->tensor();
  }

  void collect_calls(TSNode n, int scope, std::vector<TSNode>& backwards, std::vector<TSNode>& steps) const {
    if (is(n, k.function_definition) || is(n, k.class_definition) || is(n, k.lambda)) return;
    if (is(n, k.call)) {
      std::string_view leaf = ctx.model.callee_leaf(n);
      TSNode callee = field(n, k.f_function);
      if (leaf == "backward" && is(callee, k.attribute)) backwards.push_back(n);
      if (is_step_call(n, scope)) steps.push_back(n);
    }
    for_each_named_child(n, [&](TSNode c) { collect_calls(c, scope, backwards, steps); });
  }

  // `for model in (m_ref, m_cpt): optim = SGD(model.parameters()); ...; optim.step()`: a loop
  // over a literal tuple or list of distinct names whose stepped optimizer is built in the
  // loop body from the loop variable (TG003-NX08, round 14: fairscale's checkpoint test
  // trains a reference and a checkpointed model once each). Returns the optimizer's binding.
  TSNode fresh_optimizer_per_model(const LoopFrame& loop, TSNode step) const {
    if (!is(loop.node, k.for_statement) || is_null(step)) return TSNode{};
    TSNode items = unparenthesize(field(loop.node, k.f_right));
    TSNode target = field(loop.node, k.f_left);
    if (!(is(items, k.tuple) || is(items, k.list)) || !is(target, k.identifier)) return TSNode{};
    std::vector<std::string_view> names;
    for (TSNode el : named_children(items)) {
      if (!is(el, k.identifier)) return TSNode{};
      std::string_view name = text_of(el, ctx.source);
      if (std::find(names.begin(), names.end(), name) != names.end()) return TSNode{};
      names.push_back(name);
    }
    auto opt_name = stepped_optimizer(step);
    if (!opt_name) return TSNode{};
    std::string_view loop_var = text_of(target, ctx.source);
    return optimizer_built_from(field(loop.node, k.f_body), *opt_name, loop_var);
  }

  // `for case in cases: emb = Embeddings(**case); ...; loss.backward(); opt = SGD(params_of_emb);
  // opt.step()` (round 16: OpenNMT's parameter-update tests): the stepped optimizer is built
  // in the loop body over parameters of an object constructed (a capitalised callee) in the
  // same body before the backward, directly or through one local name (`trainable =
  // {n: p for n, p in emb.named_parameters()}`). Returns the two assignments.
  std::optional<std::pair<TSNode, TSNode>> fresh_model_per_pass(const LoopFrame& loop, TSNode step,
                                                                TSNode backward) const {
    if (is_null(step)) return std::nullopt;
    auto opt_name = stepped_optimizer(step);
    TSNode body = field(loop.node, k.f_body);
    if (!opt_name || is_null(body)) return std::nullopt;
    std::vector<TSNode> assignments;
    collect_assignments(body, assignments);
    TSNode opt_def{};
    for (TSNode a : assignments)
      if (auto left = dotted_name(field(a, k.f_left), ctx.source); left && *left == *opt_name) opt_def = a;
    if (is_null(opt_def) || !is(unparenthesize(field(opt_def, k.f_right)), k.call)) return std::nullopt;
    for (TSNode model_def : assignments) {
      TSNode ctor = unparenthesize(field(model_def, k.f_right));
      TSNode target = field(model_def, k.f_left);
      if (!is(ctor, k.call) || !is(target, k.identifier) ||
          ts_node_start_byte(model_def) >= ts_node_start_byte(backward))
        continue;
      std::string_view leaf = ctx.model.callee_leaf(ctor);
      if (leaf.empty() || !std::isupper(static_cast<unsigned char>(leaf[0]))) continue;
      std::string_view model = text_of(target, ctx.source);
      if (mentions_name(field(opt_def, k.f_right), model)) return std::make_pair(model_def, opt_def);
      for (TSNode via : assignments) {
        TSNode via_target = field(via, k.f_left);
        if (is(via_target, k.identifier) && mentions_name(field(via, k.f_right), model) &&
            mentions_name(field(opt_def, k.f_right), text_of(via_target, ctx.source)))
          return std::make_pair(model_def, opt_def);
      }
    }
    return std::nullopt;
  }

  // `start = time.time(); for i in range(1000): out = layer(x); loss = ((gt - out) ** 2).mean();
  // loss.backward(); opt.step()` then `time.time() - start` (round 19: Pyraformer's attention
  // benchmarks): a `for` over `range(...)` whose loss is computed, through assignments in the
  // loop, only from names bound before the loop, literals, operators, tensor methods and calls
  // of models bound outside it (no data source, no loop variable), with a clock read in the
  // same function before the loop and another after it. An overfit-one-batch demo without the
  // clocks stays an error. Returns the two clock reads.
  std::optional<std::pair<TSNode, TSNode>> timed_fixed_input_benchmark(const LoopFrame& loop, TSNode backward,
                                                                       int scope) const {
    if (!is(loop.node, k.for_statement)) return std::nullopt;
    TSNode it = unparenthesize(field(loop.node, k.f_right));
    if (!is(it, k.call) || ctx.model.callee_leaf(it) != "range") return std::nullopt;
    int f = ctx.model.enclosing_function(scope);
    if (f < 0) return std::nullopt;
    TSNode before{}, after{};
    ctx.model.for_each_call_in(field(ctx.model.functions()[f].node, k.f_body), [&](TSNode c) {
      if (!is_clock_read(ctx.model, c) && !is_memory_stat_read(ctx.model, c)) return;
      if (ts_node_end_byte(c) <= ts_node_start_byte(loop.node)) before = c;  // the last one before
      else if (ts_node_start_byte(c) >= ts_node_end_byte(loop.node) && is_null(after)) after = c;
    });
    if (is_null(before) || is_null(after)) return std::nullopt;
    std::vector<TSNode> assignments;
    collect_assignments(field(loop.node, k.f_body), assignments);
    TSNode loss = field(field(backward, k.f_function), k.f_object);
    if (!fixed_input(loss, loop, assignments, scope, 0)) return std::nullopt;
    return std::make_pair(before, after);
  }

  bool fixed_input(TSNode e, const LoopFrame& loop, const std::vector<TSNode>& assignments, int scope,
                   int depth) const {
    e = unparenthesize(e);
    if (is_null(e) || depth > 8) return false;
    TSSymbol s = sym(e);
    if (s == k.integer || s == k.float_ || s == k.string || s == k.true_ || s == k.false_ || s == k.none) return true;
    if (s == k.identifier) {
      std::string_view name = text_of(e, ctx.source);
      if (mentions_name(field(loop.node, k.f_left), name)) return false;  // the loop variable
      // `output = cast(Tensor, output)`: a rebinding from itself is as fixed as its other bindings.
      if (std::find(resolving_.begin(), resolving_.end(), name) != resolving_.end()) return true;
      resolving_.push_back(name);
      bool bound_here = false, fixed = true;
      for (TSNode a : assignments) {
        TSNode left = field(a, k.f_left);
        if (!mentions_name(left, name)) continue;
        if (!is(left, k.identifier) && !unpacks_name(left, name)) {  // stored through: not followed
          fixed = false;
          break;
        }
        bound_here = true;
        fixed = fixed && fixed_input(field(a, k.f_right), loop, assignments, scope, depth + 1);
      }
      resolving_.pop_back();
      return bound_here ? fixed : true;  // bound before the loop: the same on every pass
    }
    if (s == k.binary_operator || s == k.unary_operator) {
      bool all = true;
      for_each_named_child(e, [&](TSNode c) { all = all && fixed_input(c, loop, assignments, scope, depth + 1); });
      return all;
    }
    if (s != k.call) return false;
    TSNode callee = field(e, k.f_function);
    TSNode args = field(e, k.f_arguments);
    bool all = true;
    if (!is_null(args))
      for_each_named_child(args, [&](TSNode a) {
        if (is(a, k.keyword_argument)) a = field(a, k.f_value);
        if (!is(a, k.comment)) all = all && fixed_input(a, loop, assignments, scope, depth + 1);
      });
    if (!all) return false;
    if (auto q = ctx.model.qualified_callee(e); q && *q == "typing.cast") return true;  // its argument, unchanged
    if (is(callee, k.identifier)) {  // a model bound outside the loop
      std::string_view name = text_of(callee, ctx.source);
      for (TSNode a : assignments)
        if (mentions_name(field(a, k.f_left), name)) return false;
      return ctx.model.is_model(name, scope);
    }
    if (is(callee, k.attribute)) {  // a tensor method of a fixed value (`.mean()`, `.sum()`)
      TSNode recv = field(callee, k.f_object);
      if (auto q = ctx.model.qualified_callee(e); q && q->starts_with("torch."))
        return true;  // `torch.mean(...)`, `F.mse_loss(...)` over fixed arguments (imports resolved)
      return fixed_input(recv, loop, assignments, scope, depth + 1);
    }
    return false;
  }

  // Assignments in `n`, outside nested functions, classes and loops.
  void collect_assignments(TSNode n, std::vector<TSNode>& found) const {
    TSSymbol s = sym(n);
    if (s == k.function_definition || s == k.class_definition || s == k.lambda || s == k.for_statement ||
        s == k.while_statement)
      return;
    if (s == k.assignment) found.push_back(n);
    for_each_named_child(n, [&](TSNode c) { collect_assignments(c, found); });
  }

  // The stepped optimizer's name: `opt.step()` or `scaler.step(opt)`.
  std::optional<std::string> stepped_optimizer(TSNode step) const {
    TSNode opt = ctx.model.callee_leaf(step) == "step" && !is_null(positional_arg(step, 0))
                     ? positional_arg(step, 0)
                     : field(field(step, k.f_function), k.f_object);
    return dotted_name(opt, ctx.source);
  }

  // An assignment `name = ...loop_var...` in `n` (not in nested functions).
  TSNode optimizer_built_from(TSNode n, const std::string& name, std::string_view loop_var) const {
    if (is(n, k.function_definition) || is(n, k.lambda)) return TSNode{};
    if (is(n, k.assignment)) {
      auto left = dotted_name(field(n, k.f_left), ctx.source);
      if (left && *left == name && mentions_name(field(n, k.f_right), loop_var)) return n;
    }
    TSNode found{};
    for_each_named_child(n, [&](TSNode c) {
      if (is_null(found)) found = optimizer_built_from(c, name, loop_var);
    });
    return found;
  }

  // `result, _ = ...`: `name` is one of the plain names the pattern unpacks into.
  bool unpacks_name(TSNode left, std::string_view name) const {
    if (!is(left, k.pattern_list) && !is(left, k.tuple_pattern)) return false;
    bool found = false;
    for_each_named_child(left, [&](TSNode c) { found = found || (is(c, k.identifier) && text_of(c, ctx.source) == name); });
    return found;
  }

  bool mentions_name(TSNode n, std::string_view name) const {
    if (is(n, k.identifier)) return text_of(n, ctx.source) == name;
    bool found = false;
    for_each_named_child(n, [&](TSNode c) { found = found || mentions_name(c, name); });
    return found;
  }

  // Who clears gradients instead of this loop: a Lightning / Fabric / distributed-autograd
  // backward receiver, or the Lightning Trainer that runs a LightningModule's methods.
  // Accelerate is not one: it does not clear gradients.
  std::optional<FrameworkOwner> gradient_owner(TSNode receiver, int scope) const {
    std::optional<FrameworkOwner> owner = backward_owner(ctx.model, receiver, scope);
    if (owner &&
        (owner->framework == Framework::Lightning || owner->framework == Framework::Fabric ||
         owner->framework == Framework::DistributedAutograd))
      return owner;
    owner = class_owner(ctx.model, scope);
    if (owner && owner->framework == Framework::Lightning) return owner;
    return std::nullopt;
  }

  static std::string reason_for(const FrameworkOwner& owner) {
    if (owner.framework == Framework::DistributedAutograd)
      return "distributed autograd accumulates gradients in a per-iteration context, not in "
             "`.grad`, so nothing needs clearing";
    if (owner.by == OwnedBy::ClassBase)
      return "methods of a LightningModule run under the Lightning Trainer, which clears "
             "gradients between optimizer steps";
    return std::string(framework_name(owner.framework)) +
           " owns this backward and clears gradients between optimizer steps";
  }

  // zero_grad anywhere in the subtree (any receiver, any condition), `X.grad = None`,
  // `X.grad.zero_()` / `.detach_()` / `.requires_grad_(False)` (or of `X.main_grad`), or a call to a local function
  // that does one of those (TG003-P06).
  bool clears_gradients(TSNode n, int depth) const {
    if (depth > 3) return false;
    TSSymbol s = sym(n);
    if (s == k.call) {
      std::string_view leaf = ctx.model.callee_leaf(n);
      if (leaf == "zero_grad") return true;
      TSNode callee = field(n, k.f_function);
      if ((leaf == "zero_" || leaf == "detach_") && is(callee, k.attribute) &&
          ends_with_grad(field(callee, k.f_object)))
        return true;
      if (calls_clearing_helper(n, depth)) return true;
    } else if (s == k.assignment) {
      TSNode left = field(n, k.f_left);
      if (ends_with_grad(left) && is(field(n, k.f_right), k.none)) return true;
    }
    bool found = false;
    for_each_named_child(n, [&](TSNode c) { found = found || clears_gradients(c, depth); });
    return found;
  }

  // `.grad`, or `.main_grad`: the fp32 buffer that fused weight-gradient accumulation
  // (Megatron, Transformer Engine's `fuse_wgrad_accumulation`) writes and its optimizers read
  // instead of `.grad` (TG003-NX07, round 13).
  bool ends_with_grad(TSNode e) const {
    if (!is(e, k.attribute)) return false;
    std::string_view attr = text_of(field(e, k.f_attribute), ctx.source);
    // `direction.grad.data.zero_()` (round 22: stylegan-xl's StyleMC): `.data` is the same storage.
    if (attr == "data") return ends_with_grad(field(e, k.f_object));
    return attr == "grad" || attr == "main_grad";
  }

  bool calls_clearing_helper(TSNode call, int depth) const {
    const std::vector<int>* fs = local_callees(ctx.model, call);
    if (!fs) return false;
    for (int f : *fs)
      if (clears_gradients(field(ctx.model.functions()[f].node, k.f_body), depth + 1)) return true;
    return false;
  }

  // `R.step(...)` where R is an optimizer (by binding, else by name; never a scheduler), or
  // `scaler.step(optimizer)`: a step handed its optimizer (torch.amp's GradScaler).
  TSNode optimizer_step(TSNode n, int scope) const {
    if (is_step_call(n, scope)) return n;
    TSNode found{};
    for_each_named_child(n, [&](TSNode c) {
      if (is_null(found)) found = optimizer_step(c, scope);
    });
    return found;
  }

  Finding make_finding(TSNode backward, TSNode step, TSNode loop) const {
    Finding f;
    f.code = "TG003";
    f.severity = Severity::Error;
    f.category = Category::ConvergenceBug;
    f.range = range_of(backward);
    f.message = "This loop calls " + quote_code(text_of(backward, ctx.source)) +
                " and steps the optimizer but never clears gradients: `.grad` keeps summing "
                "across iterations, so each update applies the total of every gradient so far.";
    f.hint = "Clear once per step: call `optimizer.zero_grad(set_to_none=True)` at the start of "
             "the iteration or right after `optimizer.step()`.";
    f.evidence.push_back({range_of(backward), quote_code(text_of(backward, ctx.source)) +
                                                  " adds this batch's gradients into `.grad`"});
    f.evidence.push_back({range_of(step), quote_code(text_of(step, ctx.source)) +
                                              " applies whatever `.grad` holds"});
    TSNode header = is(loop, k.for_statement) ? field(loop, k.f_right) : field(loop, k.f_condition);
    f.evidence.push_back({range_of(is_null(header) ? loop : header),
                          "nothing in this loop calls `zero_grad()` or resets `.grad`"});
    return f;
  }
};

}  // namespace

std::unique_ptr<RuleCheck> make_tg003(const RuleContext& ctx) { return std::make_unique<Checker>(ctx); }

}  // namespace preflight::rules
