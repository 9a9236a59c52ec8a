// TG002 missing-no-grad: an evaluation routine runs the model with autograd enabled, so the
// graph and every activation behind it are kept alive for a backward that never comes.
//
// Evidence chain: why the code is evaluating (an evaluation name, `model.eval()` on the same
// model earlier in the routine, or a loop over an evaluation loader) -> the forward pass and why the callee
// is a model (its binding, or its name as a last resort) -> no no_grad region encloses it ->
// the routine never backwards (or the loop is an evaluation loop inside a training routine)
// -> how the routine is called: a routine that never backwards is an error only when a
// caller in this file is seen running it with autograd on (followed up to four callers
// deep); with no caller here, a caller on an object of unknown class, or the function
// passed on as a value, that step is a guess and the finding a warning that says so.
// A forward of `Variable(x, volatile=True)` (code for PyTorch before 0.4, where that disabled
// autograd) is a note without a fix (TG002-NX26).
// Exempt: forward passes under no_grad / inference_mode / set_grad_enabled(False) (with,
// decorator or statement form), including lambdas written inside such a block;
// a module's own `forward` method (its callers decide, TG002-NX49);
// evaluation-looking loops (and routines) that themselves backward (FGSM) or differentiate
// with `autograd.grad` (influence scores, TG002-NX24), also through a helper of this file
// (Jacobians taken by a method the routine calls, TG002-NX52); a routine that makes the forward's
// input require gradients before it (`x.requires_grad_(True)`, TG002-NX46); Lightning's
// validation/test/predict hooks inside a LightningModule. Silent, with the reason recorded:
// a routine every caller of which runs it under no_grad; a forward whose result is
// discarded (`model(x)` as a statement: warm-up, profiling) or detached where it is made
// (`model(s).detach()`, TG002-NX55), whose graph is freed at once; a
// forward of a model whose every parameter the routine froze before it (`requires_grad =
// False` over its parameters, `requires_grad_(False)`), on inputs not shown to carry a graph
// (TG002-NX35), or that every call of the routine in this file passes frozen, with inputs shown
// graph-free (TG002-NX50); a routine that samples with `rsample()`, the reparameterisation
// trick, whose only purpose is a graph through the sample (TG002-NX51); a method some call in this file provably runs and whose result that caller
// backwards through (`self.policy.evaluate(...)` in PPO's update, TG002-NX41). A call handed
// a graph-carrying value and an optimizer (`loss_scaler(loss, optimizer, ...)`, the AMP
// scaler idiom) trains like a backward (TG002-NX42). An input made by a call handed
// `volatile=True` (PyTorch before 0.4) makes the finding a note without a fix (TG002-NX43;
// also through methods on it, `Variable(x, volatile=True).cuda()` in the forward's own
// arguments, NX60);
// so does an input made by a helper this file does not define, in a file that calls or
// imports torch's `Variable` (the helper may make it volatile, TG002-NX48). A module of this
// file whose `forward` asks for gradients itself (a leaf made with `requires_grad=True`, a
// backward or `autograd.grad` there: an energy model descending its energy) caps the finding
// at a warning with the decorator unsafe: the evaluated model may be that module (TG002-NX53).
// Silent, with the reason recorded: a statement-level `set_grad_enabled(False)` at the module's
// top level or in the `__init__` of the routine's class, with nothing in the file turning
// autograd back on (TG002-NX54).
// Silent, with the reason recorded: a forward under a context chosen by a condition between
// no_grad / inference_mode and another one (`with (torch.inference_mode() if c else nullcontext()):`,
// or a name bound to that choice, TG002-NX57): the routine decides when it keeps a graph.
// At most a warning: a model built by a callee this file does not define, handed a keyword that
// asks for an inference model (`build_model(..., trainable=False)`, TG002-NX56; a naming
// heuristic that only lowers the severity): its forward may turn autograd off itself.
// The decorator fix is safe only when no graph can leave the routine (its return value is
// shown graph-free and it stores nothing on an object), every call in it is seen not to need
// autograd (an attack's `attack.perturb(x, y)` backwards inside; TG002-PX58), the file is not a test module (a
// test may exercise autograd on purpose, TG002-NX29) and does not call or import torch's `Variable`
// (code for PyTorch before 0.4, where the decorator may not exist, TG002-NX38); otherwise
// it is offered as unsafe.
#include <algorithm>
#include <optional>
#include <unordered_set>
#include <cctype>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "analysis/local_calls.h"
#include "analysis/names.h"
#include "analysis/reaching.h"
#include "rules/caller_grad.h"
#include "rules/fix_builder.h"
#include "analysis/torch_facts.h"
#include "rules/rule.h"

namespace preflight::rules {
namespace {

using namespace preflight::analysis;

struct Candidate {
  TSNode call;
  std::string model_name;
  TSNode eval_loop_iterable;  // non-null when the pass sits in an evaluation loop
  TSNode eval_mode_call;      // non-null when `<this model>.eval()` came earlier
  bool discarded = false;     // `model(x)` as a statement: nothing keeps its output
  bool in_loop = false;       // inside a loop of its unit
};

// `m.eval()` seen so far in a unit, per receiver (a later `m.train()` clears it).
struct EvalMode {
  std::string receiver;
  TSNode call;
};

struct Unit {
  int function = -1;  // -1: the module's top level
  std::vector<EvalMode> eval_modes;
  std::vector<Candidate> candidates;
};

// `model.eval()` says `model`, its wrapper's `model.module` or its part `model.encoder` is
// evaluating; a frozen teacher's `self.teacher.eval()` says nothing about the student `model`.
bool same_model(const std::string& a, const std::string& b) {
  const std::string& shorter = a.size() <= b.size() ? a : b;
  const std::string& longer = a.size() <= b.size() ? b : a;
  return longer.starts_with(shorter) && (longer.size() == shorter.size() || longer[shorter.size()] == '.');
}

constexpr std::string_view kLightningHooks[] = {"validation_step", "test_step", "predict_step"};

struct Checker final : RuleCheck {
  const RuleContext& ctx;
  const Kinds& k = kinds();
  std::vector<Unit> stack;  // units being walked (nested functions push)
  std::vector<Finding> out;
  // For each finding of `out`: the routine (and forward) it was made for when it never
  // backwards, judged again once reachability is complete (it is built during this walk).
  std::vector<std::pair<int, TSNode>> routine_of;
  mutable std::unordered_map<const void*, bool> loop_backwards_;
  // How each routine's callers run it; what the verdicts read outside their own unit is
  // reported as context (so an edit of a caller re-checks the routine, rules/incremental.h).
  CallerGradAnalysis callers_{ctx, "TG002"};
  std::vector<ContextFact> frozen_callers_;  // read by frozen_by_every_caller (TG002-NX50)
  // The bindings built_for_inference read (TG002-NX56): an edit there may change a severity.
  mutable std::vector<ContextFact> inference_reads_;
  // Whether the file puts anything on an accelerator: a script's one forward on the host is
  // not an out-of-memory risk (round 33: a point-cloud viewer classifying one sample).
  CudaTargetScan cuda{ctx.model};

  // Whether the file is a test module decides the decorator fix's safety anywhere in it: the
  // first test function is a file-wide fact (a slice holds its unit).
  void context(std::vector<ContextFact>& facts) const override {
    callers_.report(facts);
    facts.insert(facts.end(), frozen_callers_.begin(), frozen_callers_.end());
    facts.insert(facts.end(), inference_reads_.begin(), inference_reads_.end());
    if (int t = first_test_function(); t >= 0)
      note_context(facts, "TG002 test module", field(ctx.model.functions()[t].node, k.f_name));
    note_context(facts, "TG002 Variable API", variable_api_site());
    note_grad_switches(facts);
    note_context(facts, "TG002 targets CUDA: " + std::string(cuda.reason()), cuda.evidence());
  }

  bool no_grad_at(TSNode n) const { return callers_.no_grad_at(n); }

  explicit Checker(const RuleContext& c) : ctx(c) { stack.push_back({}); }

  void finish(std::vector<Finding>& sink) override {
    finish(stack.front());  // the module's top level
    for (size_t i = 0; i < out.size(); ++i) {
      auto [function, call] = routine_of[i];
      if (function >= 0 && feeds_a_callers_loss(function, call)) continue;
      sink.push_back(std::move(out[i]));
    }
  }

  void enter(TSNode n, const WalkState& st) override {
    cuda.enter(n, st);
    if (is(n, k.function_definition)) {
      Unit u;
      u.function = ctx.model.function_of(n);
      stack.push_back(u);
      return;
    }
    if (is(n, k.call)) on_call(n, st);
  }

  void leave(TSNode n, const WalkState&) override {
    if (is(n, k.function_definition)) {
      finish(stack.back());
      stack.pop_back();
    }
  }


  // The callee of a forward pass: a model called directly, `m.forward(...)`, or a model
  // attribute such as `self.model(...)` (TG002-N11).
  std::optional<std::string> forward_target(TSNode call, int scope) const {
    TSNode callee = field(call, k.f_function);
    auto dotted = dotted_name(callee, ctx.source);
    if (!dotted) return std::nullopt;
    std::string first = dotted->substr(0, dotted->find('.'));
    if (ctx.model.import_of(first) || ctx.model.class_named(first) >= 0) return std::nullopt;
    if (is(callee, k.identifier) && ctx.model.functions_named(*dotted)) return std::nullopt;
    if (is(callee, k.attribute) && text_of(field(callee, k.f_attribute), ctx.source) == "forward") {
      auto recv = dotted_name(field(callee, k.f_object), ctx.source);
      if (recv && ctx.model.is_model(*recv, scope)) return recv;
      return std::nullopt;
    }
    if (ctx.model.is_model(*dotted, scope)) return dotted;
    return std::nullopt;
  }

  void on_call(TSNode call, const WalkState& st) {
    Unit& unit = stack.back();
    std::string_view leaf = ctx.model.callee_leaf(call);
    TSNode callee = field(call, k.f_function);
    if ((leaf == "eval" || leaf == "train") && is(callee, k.attribute)) {
      auto recv = dotted_name(field(callee, k.f_object), ctx.source);
      if (recv && ctx.model.is_model(*recv, st.scope)) {
        bool to_eval = leaf == "eval" || is(positional_arg(call, 0), k.false_);
        std::erase_if(unit.eval_modes, [&](const EvalMode& m) { return m.receiver == *recv; });
        if (to_eval) unit.eval_modes.push_back({*recv, call});
      }
      return;
    }
    auto model_name = forward_target(call, st.scope);
    if (!model_name || no_grad_at(call)) return;
    TSNode loop_iterable = eval_loop_iterable(st);
    bool eval_named = unit.function >= 0 &&
                      names::is_evaluation_function_name(ctx.model.functions()[unit.function].name);
    TSNode eval_call = eval_mode_of(unit, *model_name, call);
    if (!eval_named && is_null(eval_call) && is_null(loop_iterable)) return;
    if (records_no_graph(call)) {
      if (TSNode freeze = ctx.provenance.freezing_of(call); !is_null(freeze))
        stay_silent("TG002", call,
                    "every parameter of `" + *model_name + "` is frozen before the forward and its inputs "
                    "carry no graph, so autograd records nothing",
                    {{range_of(freeze), quote_code(text_of(freeze, ctx.source)) + " freezes the parameters"}});
      return;
    }
    unit.candidates.push_back({call, *model_name, loop_iterable, eval_call, discarded(call), !st.loops.empty()});
  }

  // The forward of a frozen module (`G.eval().requires_grad_(False)`, a loop over its
  // parameters setting `requires_grad = False`): a graph only through inputs that carry one,
  // which provenance does not show, so nothing is shown for no_grad to save. (Every other
  // forward the interpreter reached has a graph.)
  bool records_no_graph(TSNode call) const {
    const Value* v = ctx.provenance.value_of(call);
    return v && !v->has_graph();
  }

  // `model(x)` whose value nothing binds (a warm-up or profiling pass): the graph is freed
  // as soon as the call returns, so nothing is held for a backward.
  bool discarded(TSNode call) const {
    TSNode p = ctx.model.parent(call);
    while (!is_null(p) && (is(p, k.parenthesized_expression) || is(p, k.await_))) p = ctx.model.parent(p);
    return !is_null(p) && (is(p, k.expression_statement) || detaches(p));
  }

  // `model(s).detach()`: the forward's value is detached in the expression that made it (round
  // 53: a PPO agent's `evaluate` acting on one state), so no name ever holds its graph, which is
  // freed as soon as the call returns, as for a discarded forward (TG002-NX55).
  bool detaches(TSNode attribute) const {
    if (!is(attribute, k.attribute) || text_of(field(attribute, k.f_attribute), ctx.source) != "detach") return false;
    TSNode call = ctx.model.parent(attribute);
    return is(call, k.call) && ts_node_eq(field(call, k.f_function), attribute);
  }

  // The `m.eval()` that may be in force at `forward`. A switch inside a branch the forward is
  // not in, and that branch ends by leaving (`if args.test: model.eval(); ...; quit()` before
  // the training loop, round 20: PlaNet), never reaches the forward.
  TSNode eval_mode_of(const Unit& unit, const std::string& model_name, TSNode forward) const {
    for (const EvalMode& m : unit.eval_modes) {
      if (!same_model(m.receiver, model_name)) continue;
      TSNode block = enclosing_block(m.call);
      bool encloses = !is_null(block) && ts_node_start_byte(forward) >= ts_node_start_byte(block) &&
                      ts_node_end_byte(forward) <= ts_node_end_byte(block);
      if (!encloses && ends_by_leaving(block)) continue;
      return m.call;
    }
    return TSNode{};
  }

  // The block's last statement returns, raises, breaks, continues or exits the process.
  bool ends_by_leaving(TSNode block) const {
    if (is_null(block) || !is(block, k.block)) return false;
    uint32_t n = ts_node_named_child_count(block);
    if (n == 0) return false;
    TSNode last = ts_node_named_child(block, n - 1);
    std::string_view type = ts_node_type(last);
    if (is(last, k.return_statement) || type == "raise_statement" || type == "break_statement" ||
        type == "continue_statement")
      return true;
    if (!is(last, k.expression_statement)) return false;
    TSNode e = ts_node_named_child(last, 0);
    if (!is(e, k.call)) return false;
    std::string_view leaf = ctx.model.callee_leaf(e);
    return leaf == "quit" || leaf == "exit" || leaf == "_exit";
  }

  // The dotted iterable of an enclosing loop that looks like an evaluation loader, seen
  // through enumerate/tqdm/zip (TG002-N10). A loop that itself backwards is an attack or a
  // fine-tune, not an evaluation (TG002-N05).
  TSNode eval_loop_iterable(const WalkState& st) const {
    for (const LoopFrame& loop : st.loops) {
      if (is_null(loop.iterable)) continue;
      for (TSNode it : unwrap_iterables(loop.iterable, ctx.source)) {
        auto d = dotted_name(it, ctx.source);
        if (!d || !names::is_eval_loader_iterable(names::lower(*d))) continue;
        if (loop_backwards(loop.node)) return TSNode{};
        return it;
      }
    }
    return TSNode{};
  }

  // Memoised: every forward pass inside a loop asks about the same loop.
  bool loop_backwards(TSNode loop) const {
    auto [it, fresh] = loop_backwards_.try_emplace(node_id(loop), false);
    // `autograd.grad(loss, params)` differentiates as a backward does (round 12: allennlp's
    // influence scores over test instances).
    if (fresh)
      it->second = contains_call(loop, "backward", ctx.source) || contains_call(loop, "grad", ctx.source) ||
                   !is_null(loss_and_optimizer_call(loop));
    return it->second;
  }

  // A call handed a graph-carrying value and an optimizer (`loss_scaler(loss, optimizer,
  // parameters=...)`, round 30: timm's NativeScaler in an image-restoration script): the AMP
  // scaler idiom, which runs the backward and the step itself. Returns that call, or null.
  TSNode loss_and_optimizer_call(TSNode region) const {
    TSNode found{};
    ctx.model.for_each_call_in(region, [&](TSNode c) {
      if (!is_null(found)) return;
      TSNode args = field(c, k.f_arguments);
      if (is_null(args) || !is(args, k.argument_list)) return;
      bool graph = false, optimizer = false;
      int scope = ctx.model.scope_enclosing(c);
      for_each_named_child(args, [&](TSNode a) {
        if (is(a, k.keyword_argument)) a = field(a, k.f_value);
        if (const Value* v = ctx.provenance.value_of(a); v && v->has_graph()) graph = true;
        if (auto d = dotted_name(a, ctx.source); d && ctx.model.is_optimizer(*d, scope)) optimizer = true;
      });
      if (graph && optimizer) found = c;
    });
    return found;
  }

  // At module level: the loop around the forward runs a backward (a script's training loop,
  // round 20: PlaNet); a module's other forwards are judged as before.
  bool trains_around(TSNode forward) const {
    for (TSNode p = ctx.model.parent(forward); !is_null(p); p = ctx.model.parent(p))
      if (is(p, k.for_statement) || is(p, k.while_statement)) return loop_backwards(p);
    return false;
  }

  bool unit_backwards(const Unit& u) const {
    if (u.function < 0) return false;
    const FunctionInfo& f = ctx.model.functions()[u.function];
    if (f.calls_backward || f.calls_autograd_grad) return true;
    if (differentiates_through_helper(f, 2)) return true;
    if (!is_null(loss_and_optimizer_call(field(f.node, k.f_body)))) return true;
    if (f.class_index >= 0 && ctx.model.classes()[f.class_index].is_lightning)
      for (auto hook : kLightningHooks)
        if (f.name == hook) return true;  // Lightning runs these under no_grad itself
    return false;
  }

  // A call of a function of this file (`self.cac_grad(loss, lc)`, up to `depth` calls deep)
  // that backwards or calls `torch.autograd.grad` (round 44: a continual-learning optimizer's
  // `init_context` and `update_fisher`, which take Jacobians of the model's outputs through
  // helpers): the routine differentiates its forward, so the graph is wanted (TG002-NX52).
  bool differentiates_through_helper(const FunctionInfo& f, int depth) const {
    if (depth == 0) return false;
    bool found = false;
    ctx.model.for_each_call_in(field(f.node, k.f_body), [&](TSNode call) {
      if (found) return;
      const FunctionInfo* callee = analysis::local_callee(ctx.model, call);
      if (!callee || callee->node.id == f.node.id) return;
      found = callee->calls_backward || callee->calls_autograd_grad || differentiates_through_helper(*callee, depth - 1);
    });
    return found;
  }

  // Test functions (`test_*`, unittest.TestCase methods) check outputs on tiny inputs; their
  // memory does not matter (the reference documents this exemption, TG002-P08). Methods of a
  // LightningModule run under the trainer, which disables autograd for evaluation.
  // A module's own `forward` (round 40: a classifier over a SigLIP backbone that it freezes
  // behind a flag) is what training and evaluation both call: whether autograd is on is its
  // callers' business, as for any layer (TG002-NX49).
  bool exempt(const Unit& u) const {
    if (u.function < 0) return false;
    if (ctx.model.is_test_function(u.function)) return true;
    const FunctionInfo& f = ctx.model.functions()[u.function];
    if (f.class_index < 0) return false;
    const ClassInfo& cls = ctx.model.classes()[f.class_index];
    return cls.is_lightning || (cls.is_module && f.name == "forward");
  }

  void finish(const Unit& u) {
    if (exempt(u)) return;
    bool backwards = unit_backwards(u);
    const Candidate* kept = nullptr;
    const Candidate* warm_up = nullptr;
    for (const Candidate& c : u.candidates) {
      if ((backwards || (u.function < 0 && trains_around(c.call))) && is_null(c.eval_loop_iterable)) continue;
      if (c.discarded) {
        if (!warm_up) warm_up = &c;
        continue;
      }
      kept = &c;
      break;  // once per unit
    }
    if (!kept) {
      if (warm_up)
        stay_silent("TG002", warm_up->call,
                    "the forward's result is discarded (a warm-up or profiling pass) or detached where it is "
                    "made: nothing keeps its graph, so autograd's memory is released as soon as the call returns",
                    {{range_of(warm_up->call), quote_code(text_of(warm_up->call, ctx.source)) +
                                                   " is a statement whose value is never bound, or is detached at once"}});
      return;
    }
    if (TSNode mode_switch = no_grad_by_mode(kept->call, u.function >= 0 ? ctx.model.functions()[u.function].scope : 0);
        !is_null(mode_switch)) {
      stay_silent("TG002", kept->call,
                  "autograd is switched by mode: the forward runs under a context chosen from a table that "
                  "maps evaluation to no_grad / inference_mode, or by a condition between no_grad and another context",
                  {{range_of(mode_switch), quote_code(text_of(mode_switch, ctx.source)) + " selects the context"}});
      return;
    }
    if (TSNode input = literal_shaped_input(kept->call, u); !is_null(input)) {
      stay_silent("TG002", kept->call,
                  "a shape smoke test: the forward's only input is a tensor of a literal shape made in the "
                  "routine, so the graph it keeps is a few activations of that one input",
                  {{range_of(input), quote_code(text_of(input, ctx.source)) + " is made here with a literal shape"}});
      return;
    }
    if (u.function >= 0)
      if (TSNode read = graph_inspected(u.function, kept->call); !is_null(read)) {
        stay_silent("TG002", kept->call,
                    "the routine inspects the graph: " + quote_code(text_of(read, ctx.source)) +
                        " reads what autograd recorded, which no_grad would leave empty",
                    {{range_of(read), "reads the forward's graph"}});
        return;
      }
    if (TSNode draw = reparameterized_draw(u); !is_null(draw)) {
      stay_silent("TG002", kept->call,
                  "the routine samples with the reparameterisation trick: " + quote_code(text_of(draw, ctx.source)) +
                      " exists to let gradients flow through the sample, so the routine is a training forward "
                      "(a policy's or a VAE's `sample`) whose graph its callers want",
                  {{range_of(draw), "a reparameterised (differentiable) draw"}});
      return;
    }
    if (TSNode wanted = input_made_differentiable(kept->call, u); !is_null(wanted)) {
      stay_silent("TG002", kept->call,
                  "the routine asks for gradients with respect to the forward's input: " +
                      quote_code(text_of(wanted, ctx.source)) +
                      " before the forward, so the graph is wanted (input gradients, a gradient penalty, saliency)",
                  {{range_of(wanted), "makes the input require gradients"}});
      return;
    }
    if (TSNode off = disabled_process_wide(u); !is_null(off)) {
      stay_silent("TG002", kept->call,
                  quote_code(text_of(off, ctx.source)) +
                      " turns autograd off for the whole process before any method of the instance runs, "
                      "and nothing in the file turns it back on",
                  {{range_of(off), "a statement-level switch in `__init__` or at the module's top level"}});
      return;
    }
    // A routine that backwards runs with autograd on whoever calls it; one that never does
    // may be called under no_grad, which only its callers show.
    CallerVerdict callers;
    if (u.function >= 0 && !backwards) {
      callers = callers_.verdict(u.function);
      if (callers.grad == CallerGrad::NoGrad) {
        stay_silent("TG002", kept->call,
                    callers_.no_grad_callers(callers) + " runs " + unit_label(u) +
                        " under no_grad / inference_mode, so autograd is already off here",
                    callers_.no_grad_evidence(u.function, callers));
        return;
      }
    }
    if (u.function >= 0 && callers.grad == CallerGrad::Grad)  // every caller seen, none escapes
      if (std::vector<TSNode> freezes = frozen_by_every_caller(u.function, *kept); !freezes.empty()) {
        std::vector<EvidenceStep> ev;
        for (TSNode f : freezes) ev.push_back({range_of(f), quote_code(text_of(f, ctx.source)) + " freezes it before the call"});
        stay_silent("TG002", kept->call,
                    "every call of " + unit_label(u) + " in this file passes `" + kept->model_name +
                        "` with every parameter frozen, and the forward's inputs carry no graph, so autograd "
                        "records nothing",
                    std::move(ev));
        return;
      }
    if (u.function >= 0)
      if (TSNode cls = plain_object_from_every_caller(u.function, *kept); !is_null(cls)) {
        stay_silent("TG002", kept->call,
                    "every call of " + unit_label(u) + " in this file passes `" + kept->model_name +
                        "` as an instance of `" + std::string(text_of(field(cls, k.f_name), ctx.source)) +
                        "`, a class of this file that is no torch module: calling it runs its own `__call__`",
                    {{range_of(field(cls, k.f_name)), "the class of what every caller passes"}});
        return;
      }
    out.push_back(make_finding(u, *kept, backwards, callers));
    routine_of.push_back({u.function >= 0 && !backwards ? u.function : -1, kept->call});
  }

  // `predict(model, file, args)` whose every call in this file (at least one) passes a
  // `model = LatexOCR(args)`, a class of this file that subclasses no module (round 73:
  // LaTeX-OCR's command line wraps its networks in a plain object whose `__call__` runs them
  // under no_grad): the parameter is known only by its name, and its binding at every call
  // says it is no model. Returns that class's node, or null.
  TSNode plain_object_from_every_caller(int function, const Candidate& c) {
    const FunctionInfo& fn = ctx.model.functions()[function];
    auto param = std::find_if(fn.params.begin(), fn.params.end(),
                              [&](const Parameter& p) { return p.name == c.model_name; });
    if (param == fn.params.end()) return TSNode{};
    size_t index = static_cast<size_t>(param - fn.params.begin());
    int cls = -1;
    bool all = true, any = false;
    for_each_call_of(function, [&](TSNode call) {
      if (!all) return;
      note_context(frozen_callers_, "TG002 plain-object caller of " + fn.name + "()", call);
      TSNode arg = unparenthesize(analysis::argument_for(fn, call, index, ctx.source));
      int made = is_null(arg) ? -1 : plain_class_bound_to(arg, ctx.model.scope_enclosing(call));
      if (made < 0 || (cls >= 0 && made != cls)) {
        all = false;
        return;
      }
      cls = made;
      any = true;
    });
    return all && any ? ctx.model.classes()[cls].node : TSNode{};
  }

  // The class of this file, no module, that every binding of the name `arg` constructs; -1
  // when any binding is something else.
  int plain_class_bound_to(TSNode arg, int scope) const {
    if (!is(arg, k.identifier)) return -1;
    const std::vector<BindingSite>* sites = ctx.model.bindings_of(text_of(arg, ctx.source), scope);
    if (!sites || sites->empty()) return -1;
    int cls = -1;
    for (const BindingSite& b : *sites) {
      TSNode v = unparenthesize(b.value);
      int c = is(v, k.call) && is(field(v, k.f_function), k.identifier) ? ctx.model.class_named(ctx.model.callee_leaf(v)) : -1;
      if (c < 0 || ctx.model.classes()[c].is_module || (cls >= 0 && c != cls)) return -1;
      cls = c;
    }
    return cls;
  }

  // Every call in this file that may run `function` (the call table, by name), in order.
  template <typename Visit>
  void for_each_call_of(int function, Visit&& visit) const {
    ctx.model.for_each_call_in(ctx.model.root(), [&](TSNode call) {
      const std::vector<int>* local = analysis::local_callees(ctx.model, call);
      if (local && std::find(local->begin(), local->end(), function) != local->end()) visit(call);
    });
  }

  // `evaluate_coco(..., model)` after `model.requires_grad_(False)` (round 42: an EfficientDet
  // evaluation script freezes the detector at module level and passes it in, with images read
  // by NumPy): the model is a parameter the routine never rebinds nor thaws, every call of the
  // routine in this file (at least one; none may escape as a value, which the caller verdict
  // already rules out) passes a module frozen by a statement whose block holds the call, and
  // every input of the forward is shown graph-free. The freezing statements, or none.
  std::vector<TSNode> frozen_by_every_caller(int function, const Candidate& c) {
    const FunctionInfo& fn = ctx.model.functions()[function];
    auto param = std::find_if(fn.params.begin(), fn.params.end(),
                              [&](const Parameter& p) { return p.name == c.model_name; });
    if (param == fn.params.end() || text_of(fn.node, ctx.source).find("requires_grad") != std::string_view::npos)
      return {};
    TSNode body = field(fn.node, k.f_body);
    if (const std::vector<BindingSite>* sites = ctx.model.bindings_of(c.model_name, fn.scope))
      for (const BindingSite& b : *sites)  // rebound in the body (`model = model.train()`)
        if (!is_null(b.value) && ts_node_start_byte(b.value) >= ts_node_start_byte(body) &&
            ts_node_end_byte(b.value) <= ts_node_end_byte(body))
          return {};
    if (!inputs_carry_no_graph(c.call)) return {};
    size_t index = static_cast<size_t>(param - fn.params.begin());
    std::vector<TSNode> freezes;
    bool all = true;
    for_each_call_of(function, [&](TSNode call) {
      if (!all) return;
      if (ctx.model.enclosing_function(ctx.model.scope_enclosing(call)) == function) return;  // recursion
      TSNode arg = analysis::argument_for(fn, call, index, ctx.source);
      TSNode freeze = is_null(arg) ? TSNode{} : ctx.provenance.freezing_of_argument(unparenthesize(arg));
      // What the verdict read outside the routine's unit: the calls and their freezes.
      note_context(frozen_callers_, "TG002 frozen-model caller of " + fn.name + "()", call);
      note_context(frozen_callers_, "TG002 freezes the model passed to " + fn.name + "()", freeze);
      if (is_null(freeze) || !block_holds(freeze, call)) {
        all = false;
        return;
      }
      freezes.push_back(freeze);
    });
    if (!all) return {};
    return freezes;
  }

  bool inputs_carry_no_graph(TSNode call) const {
    TSNode args = field(call, k.f_arguments);
    if (is_null(args) || !is(args, k.argument_list) || ts_node_named_child_count(args) == 0) return false;
    bool none = true;
    for_each_named_child(args, [&](TSNode a) {
      if (is(a, k.comment)) return;
      TSNode e = is(a, k.keyword_argument) ? field(a, k.f_value) : a;
      const Value* v = ctx.provenance.value_of(e);
      if (!v || v->graph != Graph::Free) none = false;
    });
    return none;
  }

  // The nearest block (or the module) around `n`.
  TSNode enclosing_block(TSNode n) const {
    const analysis::Kinds& kk = analysis::kinds();
    TSNode block = ctx.model.parent(n);
    while (!is_null(block) && !is(block, kk.block) && !is(block, kk.module)) block = ctx.model.parent(block);
    return block;
  }

  // The block (or module) around `stmt` also holds `at`: the statement runs whenever `at`
  // does, short of an early exit between them.
  bool block_holds(TSNode stmt, TSNode at) const {
    TSNode block = enclosing_block(stmt);
    return !is_null(block) && ts_node_start_byte(at) >= ts_node_start_byte(block) &&
           ts_node_end_byte(at) <= ts_node_end_byte(block) && ts_node_start_byte(at) > ts_node_end_byte(stmt);
  }

  // `model(data, mode='inference')` on a model whose class this file does not define (round
  // 17: SPADE's Pix2PixModel runs that branch under no_grad in its own forward): a keyword
  // whose string value names inference, evaluation, testing, prediction, generation or
  // sampling. Returns the keyword argument, or null.
  TSNode inference_mode_argument(TSNode call) const {
    TSNode callee = field(call, k.f_function);
    auto name = dotted_name(callee, ctx.source);
    if (!name) return TSNode{};
    const std::vector<BindingSite>* sites = ctx.model.bindings_of(*name, ctx.model.scope_enclosing(call));
    if (sites)
      for (const BindingSite& b : *sites)
        if (TSNode v = unparenthesize(b.value); is(v, k.call) && ctx.model.class_named(ctx.model.callee_leaf(v)) >= 0)
          return TSNode{};  // its forward is here to read
    TSNode args = field(call, k.f_arguments);
    TSNode found{};
    if (!is_null(args))
      for_each_named_child(args, [&](TSNode a) {
        if (!is_null(found) || !is(a, k.keyword_argument)) return;
        TSNode v = unparenthesize(field(a, k.f_value));
        if (!is(v, k.string)) return;
        std::string lowered = names::lower(text_of(v, ctx.source));
        for (auto w : {"infer", "eval", "test", "predict", "generat", "sampl"})
          if (lowered.find(w) != std::string::npos) found = a;
      });
    return found;
  }

  // `y = net(Variable(torch.randn(1, 3, 32, 32)))`, or `x = torch.rand(2, 10)` then `net(x)`
  // (round 16: mixup-cifar10's `test()` beside each model class): every argument of the
  // forward is a torch factory whose sizes are integer literals, made in this routine. Returns
  // the first such factory, or null.
  TSNode literal_shaped_input(TSNode call, const Unit& u) const {
    TSNode args = field(call, k.f_arguments);
    if (is_null(args) || !is(args, k.argument_list) || ts_node_named_child_count(args) == 0) return TSNode{};
    int scope = u.function >= 0 ? ctx.model.functions()[u.function].scope : 0;
    TSNode first{};
    bool all = true;
    for_each_named_child(args, [&](TSNode a) {
      if (!all || is(a, k.comment)) return;
      TSNode f = literal_factory(a, scope, 0);
      if (is_null(f)) all = false;
      else if (is_null(first)) first = f;
    });
    return all ? first : TSNode{};
  }

  TSNode literal_factory(TSNode e, int scope, int depth) const {
    e = unparenthesize(e);
    if (depth > 2) return TSNode{};
    if (is(e, k.identifier)) {
      const std::vector<BindingSite>* sites = ctx.model.bindings_of(text_of(e, ctx.source), scope);
      if (!sites || sites->size() != 1 || sites->front().arity > 1) return TSNode{};
      return literal_factory(sites->front().value, scope, depth + 1);
    }
    if (!is(e, k.call)) return TSNode{};
    std::string_view leaf = ctx.model.callee_leaf(e);
    auto q = ctx.model.qualified_callee(e);
    TSNode args = field(e, k.f_arguments);
    if (is_null(args) || !is(args, k.argument_list)) return TSNode{};
    if (leaf == "Variable") {
      TSNode inner = positional_arg(e, 0);
      return is_null(inner) ? TSNode{} : literal_factory(inner, scope, depth + 1);
    }
    // `torch.rand(16, 20000, 6).cuda()` (round 24: votenet's backbone shape check): a device or
    // dtype copy of a literal-shaped factory is one too.
    if (TSNode callee = field(e, k.f_function);
        is(callee, k.attribute) && (leaf == "cuda" || leaf == "to" || leaf == "float" || leaf == "half"))
      return literal_factory(field(callee, k.f_object), scope, depth + 1);
    // `torch.arange(3, 23).view(5, 4)` (round 92: a transformer module's shape check): a view or
    // reshape to literal sizes, none -1, has that literal shape whatever it views.
    if (TSNode callee = field(e, k.f_function); is(callee, k.attribute) && (leaf == "view" || leaf == "reshape"))
      return all_integer_arguments(args) ? e : TSNode{};
    static constexpr std::string_view kFactories[] = {"randn", "rand", "zeros", "ones", "randint", "empty", "arange"};
    if (!q || !q->starts_with("torch.") || std::find(std::begin(kFactories), std::end(kFactories), leaf) == std::end(kFactories))
      return TSNode{};
    return all_integer_arguments(args) ? e : TSNode{};
  }

  // At least one positional argument, every one an integer literal (keywords are not sizes).
  bool all_integer_arguments(TSNode args) const {
    bool literal = true, any = false;
    for_each_named_child(args, [&](TSNode a) {
      if (is(a, k.keyword_argument) || is(a, k.comment)) return;
      any = true;
      literal = literal && is(unparenthesize(a), k.integer);
    });
    return literal && any;
  }

  // A routine whose result a caller in this file carries into a backward or a differentiable
  // return (`outputs = self.predict(x)` ... `return loss_fn(outputs.logits, y)` in `forward`;
  // `logprobs, values, entropy = self.policy.evaluate(s, a)` ... `loss.mean().backward()` in
  // PPO's update, round 27): a training forward named like an evaluation, whose graph is
  // needed. Silent, with why.
  bool feeds_a_callers_loss(int function, TSNode call) {
    const FunctionInfo& fn = ctx.model.functions()[function];
    const Reachability& reach = ctx.reachability;
    TSNode witness{}, backward{};
    if (fn.class_index >= 0 && reach.load_bearing(reach.key("self." + fn.name, fn.scope), {}, true))
      witness = field(fn.node, k.f_name);
    else
      std::tie(witness, backward) = caller_backwarding_result(function);
    if (is_null(witness)) return false;
    std::vector<EvidenceStep> ev;
    if (is_null(backward)) {
      ev.push_back({range_of(witness), "`self." + fn.name + "(...)`'s result reaches a loss"});
    } else {
      ev.push_back({range_of(witness), quote_code(text_of(witness, ctx.source)) + " runs " + unit_label_of(function)});
      ev.push_back({range_of(backward), quote_code(text_of(backward, ctx.source)) + " backwards through its result"});
    }
    stay_silent("TG002", call,
                "a caller in this file carries what `" + fn.name +
                    "()` returns into a backward or a returned loss: a training forward named like an "
                    "evaluation, whose graph is needed",
                std::move(ev));
    return true;
  }

  // A call that provably runs `function`, bound by an assignment whose targets a backward in
  // the calling routine reads; {call, backward}, or nulls.
  std::pair<TSNode, TSNode> caller_backwarding_result(int function) {
    TSNode found{}, backward{};
    ctx.model.for_each_call_in(ctx.root, [&](TSNode c) {
      if (!is_null(found) || !callers_.runs(c, function)) return;
      TSNode stmt = ctx.model.parent(c);
      if (!is(stmt, k.assignment) || !ts_node_eq(unparenthesize(field(stmt, k.f_right)), c)) return;
      int scope = ctx.model.scope_enclosing(c);
      int outer = ctx.model.enclosing_function(scope);
      if (outer < 0 || outer == function) return;
      const Reachability& reach = ctx.reachability;
      TSNode b = reach.backward_needing(range_of(ctx.model.functions()[outer].node), scope,
                                        reach.reads(field(stmt, k.f_left), scope));
      if (!is_null(b)) found = c, backward = b;
    });
    return {found, backward};
  }

  std::string unit_label_of(int function) const { return "`" + ctx.model.functions()[function].name + "()`"; }

  std::string unit_label(const Unit& u) const { return u.function < 0 ? "this module" : unit_label_of(u.function); }

  Finding make_finding(const Unit& u, const Candidate& c, bool backwards, const CallerVerdict& callers) const {
    Finding f;
    f.code = "TG002";
    // Proven only when the routine trains (it runs with autograd on) or a caller is seen
    // running it with autograd on; otherwise whether callers disable autograd is a guess.
    bool guess = u.function >= 0 && !backwards && callers.grad != CallerGrad::Grad;
    f.severity = guess ? Severity::Warning : Severity::Error;
    // Evaluation known only by the routine's name, and the forward's result handed back to
    // callers nobody sees: both steps are guesses, and a training forward named like one
    // (`evaluate_actions` of a policy-gradient loss) looks the same: a note.
    // `model.eval()` does not settle it when the routine returns the forward itself
    // (`return model(x)`): a score function some caller may differentiate (round 13:
    // score_sde's `model_fn` under `autograd.grad`, tianshou's target-network wrapper).
    bool hands_out = guess && is_null(c.eval_loop_iterable) &&
                     (is_null(c.eval_mode_call) || returned_directly(c.call)) &&
                     ctx.provenance.return_value(u.function).graph != Graph::Free;
    if (hands_out) f.severity = Severity::Note;
    // No file of the project calls the routine: it costs no GPU memory here (TG002-NX58).
    if (guess && callers.uncalled_in_project) f.severity = Severity::Note;
    TSNode volatile_input = volatile_variable_input(u, c.call);
    if (!is_null(volatile_input)) f.severity = Severity::Note;
    TSNode unseen_maker = is_null(volatile_input) ? input_from_unseen_helper(u, c.call) : TSNode{};
    if (!is_null(unseen_maker)) f.severity = Severity::Note;
    TSNode mode_argument = inference_mode_argument(c.call);
    if (!is_null(mode_argument) && f.severity == Severity::Error) f.severity = Severity::Warning;
    // The model's class is chosen at run time (`utils.get_class(conf.get_string(...))(...)`,
    // round 36: a neural renderer whose forward differentiates for surface normals): what its
    // forward needs is unknown, so "kept for nothing" is a guess.
    // Any forward of the routine counts: the fix (no_grad over the routine) covers them all.
    TSNode dynamic{};
    std::string dynamic_model;
    for (const Candidate& o : u.candidates)
      if (is_null(dynamic)) dynamic = dynamically_built(o.model_name, o.call), dynamic_model = o.model_name;
    if (!is_null(dynamic) && f.severity == Severity::Error) f.severity = Severity::Warning;
    TSNode differentiating = differentiating_forward();
    if (!is_null(differentiating) && f.severity == Severity::Error) f.severity = Severity::Warning;
    TSNode inference_flag = f.severity == Severity::Error ? built_for_inference(u, c, callers) : TSNode{};
    if (!is_null(inference_flag)) f.severity = Severity::Warning;
    // A script that runs its forward once (no loop at the top level holds one) keeps one
    // forward's activations, not one set per batch: a warning; on the host only, a note.
    bool runs_once = u.function < 0 && std::none_of(u.candidates.begin(), u.candidates.end(),
                                                    [](const Candidate& o) { return o.in_loop; });
    if (runs_once) {
      if (f.severity == Severity::Error) f.severity = Severity::Warning;
      if (!cuda.targets_cuda()) f.severity = Severity::Note;
    }
    f.category = Category::CriticalOom;
    f.range = range_of(c.call);
    std::string call = quote_code(text_of(c.call, ctx.source));
    // A script that trains at its top level and then evaluates (round 33: "this module never
    // calls backward" was false there): the evaluation loop is what lacks no_grad.
    if (backwards || (u.function < 0 && !ctx.model.module_backward_calls().empty())) {
      f.message = "This evaluation loop runs " + call +
                  " with autograd on: the graph and every activation behind it are kept for a "
                  "backward that never comes, typically doubling or tripling evaluation memory.";
      f.hint = "Wrap the evaluation loop in `with torch.no_grad():` (the routine also trains, so "
               "do not decorate it).";
    } else {
      f.message = unit_label(u) + " runs " + call +
                  " with autograd on and never calls backward: the graph and every activation "
                  "behind it are kept for nothing, typically doubling or tripling evaluation memory.";
      f.hint = "Run the evaluation inside `with torch.no_grad():`, or mark the routine with "
               "`@torch.inference_mode()`.";
    }
    add_evidence(f, u, c, backwards);
    if (u.function >= 0 && !backwards) {
      if (callers.grad == CallerGrad::Grad)
        f.evidence.push_back({range_of(callers.witness), quote_code(text_of(callers.witness, ctx.source)) +
                                                             " runs " + unit_label(u) + " with autograd on"});
      else if (!is_null(callers.witness))
        f.evidence.push_back({range_of(callers.witness),
                              callers.why + (hands_out ? " (weak step)"
                                             : callers.uncalled_in_project ? " (weak step: reported as a note)"
                                                                           : " (weak step: reported as a warning)")});
      if (hands_out)
        f.evidence.push_back({range_of(field(ctx.model.functions()[u.function].node, k.f_name)),
                              "what it returns may carry the forward's graph to those callers, which may "
                              "backward through it (a training forward named like an evaluation): reported "
                              "as a note"});
    }
    if (!is_null(dynamic))
      f.evidence.push_back({range_of(dynamic), "`" + dynamic_model + "` is built from a class chosen at run time (" +
                                                   quote_code(text_of(dynamic, ctx.source)) +
                                                   "): whether its forward needs the graph is not seen (at most a warning)"});
    if (!is_null(inference_flag))
      f.evidence.push_back({range_of(inference_flag),
                            "the model comes from " + quote_code(text_of(ctx.model.parent(ctx.model.parent(inference_flag)), ctx.source)) +
                                ", a builder this file does not define, told " +
                                quote_code(text_of(inference_flag, ctx.source)) +
                                ": its forward may turn autograd off itself (weak step: at most a warning)"});
    if (!is_null(differentiating))
      f.evidence.push_back({range_of(differentiating),
                            quote_code(text_of(differentiating, ctx.source)) +
                                " needs autograd inside a module's own `forward` in this file: if `" + c.model_name +
                                "` is that module, its evaluation needs autograd too (weak step: which module it is; "
                                "at most a warning, no safe fix)"});
    if (runs_once)
      f.evidence.push_back({range_of(c.call),
                            cuda.targets_cuda()
                                ? "the script runs this forward once, outside every loop: one forward's activations "
                                  "are held, not one set per batch (at most a warning)"
                                : "the script runs this forward once, outside every loop, and nothing in the file "
                                  "targets an accelerator: one forward's activations in host memory (a note)"});
    if (!is_null(mode_argument))
      f.evidence.push_back({range_of(mode_argument),
                            quote_code(text_of(mode_argument, ctx.source)) +
                                " asks the model for an inference pass, which its forward (not in this file) may run "
                                "under no_grad itself (weak step: at most a warning)"});
    if (!is_null(unseen_maker)) {
      f.evidence.push_back({range_of(variable_api_site()),
                            quote_code(text_of(variable_api_site(), ctx.source)) +
                                ": this file is written for PyTorch's `Variable` API (before 0.4), where an input "
                                "made `volatile` ran the forward without autograd"});
      f.evidence.push_back({range_of(unseen_maker),
                            quote_code(text_of(unseen_maker, ctx.source)) +
                                " makes the forward's input in code outside this file, which may make it volatile "
                                "(weak step: reported as a note)"});
      return f;
    }
    if (!is_null(volatile_input)) {
      // torch.no_grad does not exist before 0.4: no fix for code written for those versions.
      f.evidence.push_back({range_of(volatile_input),
                            quote_code(text_of(volatile_input, ctx.source)) +
                                " is how PyTorch before 0.4 ran without autograd; since 0.4 `volatile` has no "
                                "effect (weak step: which version this code targets; reported as a note)"});
      return f;
    }
    if (auto fix = decorator_fix(u, backwards)) f.fixes.push_back(std::move(*fix));
    return f;
  }

  // `with contexts[mode]():` around the forward, `contexts` bound to a dict or list literal one
  // of whose values is `torch.no_grad` / `inference_mode` (TG002-NX28, round 14: AlgoPerf's
  // `model_fn`): autograd is off in the mode that evaluates. Returns the with item's value.
  TSNode no_grad_by_mode(TSNode call, int scope) const {
    for (TSNode p = ctx.model.parent(call); !is_null(p) && !is(p, k.function_definition); p = ctx.model.parent(p)) {
      if (!is(p, k.with_statement)) continue;
      TSNode found{};
      for_each_named_child(p, [&](TSNode clause) {
        if (!is(clause, k.with_clause)) return;
        for_each_named_child(clause, [&](TSNode item) {
          TSNode value = unparenthesize(field(item, k.f_value));
          if (!is_null(found)) return;
          if (is(value, k.as_pattern)) value = unparenthesize(ts_node_named_child(value, 0));
          if (chooses_no_grad(value, scope)) found = value;
          if (!is(value, k.call) || !is(field(value, k.f_function), k.subscript)) return;
          TSNode table = field(field(value, k.f_function), k.f_value);
          if (table_holds_no_grad(table, scope)) found = value;
        });
      });
      if (!is_null(found)) return found;
    }
    return TSNode{};
  }

  // `with (torch.no_grad() if evaluating else nullcontext()):`, or a name bound to such a
  // choice (round 58: TabPFN's `inference_mode_call = torch.inference_mode() if inference_mode
  // and no_grad else NOP()`, off unless the caller asks for input gradients): the routine
  // switches autograd off on a condition it is given, so whether it keeps a graph is chosen.
  bool chooses_no_grad(TSNode value, int scope) const {
    if (is(value, k.conditional_expression)) {
      bool any = false;
      uint32_t n = ts_node_named_child_count(value);
      for (uint32_t i = 0; i < n; i += 2) {  // the two outcomes; the condition sits between them
        TSNode branch = unparenthesize(ts_node_named_child(value, i));
        std::string_view leaf = is(branch, k.call) ? ctx.model.callee_leaf(branch) : std::string_view{};
        any = any || leaf == "no_grad" || leaf == "inference_mode" ||
              (leaf == "set_grad_enabled" && !is(positional_arg(branch, 0), k.true_));
      }
      return any;
    }
    if (!is(value, k.identifier)) return false;
    const std::vector<BindingSite>* sites = ctx.model.bindings_of(std::string(text_of(value, ctx.source)), scope);
    if (!sites) return false;
    for (const BindingSite& b : *sites)
      if (TSNode v = unparenthesize(b.value); !is_null(v) && is(v, k.conditional_expression) && chooses_no_grad(v, scope))
        return true;
    return false;
  }

  bool table_holds_no_grad(TSNode table, int scope) const {
    auto name = dotted_name(table, ctx.source);
    const std::vector<BindingSite>* sites = name ? ctx.model.bindings_of(*name, scope) : nullptr;
    if (!sites) return false;
    for (const BindingSite& b : *sites) {
      TSNode v = unparenthesize(b.value);
      if (is_null(v) || !(is(v, k.dictionary) || is(v, k.list) || is(v, k.tuple))) continue;
      std::string_view text = text_of(v, ctx.source);
      if (text.find("no_grad") != std::string_view::npos || text.find("inference_mode") != std::string_view::npos)
        return true;
    }
    return false;
  }

  // `out.grad_fn` / `out.requires_grad` read in the routine, `out` bound to the forward's value
  // (TG002-NX28, round 14: fairscale's test walks `eval_output.grad_fn` to check which nodes
  // eval mode recorded): the routine wants the graph.
  TSNode graph_inspected(int function, TSNode forward) const {
    TSNode stmt = ctx.model.parent(forward);
    while (!is_null(stmt) && is(stmt, k.parenthesized_expression)) stmt = ctx.model.parent(stmt);
    if (is_null(stmt) || !is(stmt, k.assignment)) return TSNode{};
    auto bound = dotted_name(field(stmt, k.f_left), ctx.source);
    if (!bound) return TSNode{};
    return attribute_read(field(ctx.model.functions()[function].node, k.f_body), *bound);
  }

  // `dist.rsample()` in the routine, outside nested functions (round 42: an offline-RL Gaussian
  // policy whose `sample(state, reparameterize=False)` draws with `rsample()` when asked, for
  // the actor's loss): rsample differs from sample only by keeping the graph (TG002-NX51).
  TSNode reparameterized_draw(const Unit& u) const {
    if (u.function < 0) return TSNode{};
    const FunctionInfo& fn = ctx.model.functions()[u.function];
    TSNode found{};
    ctx.model.for_each_call_in(field(fn.node, k.f_body), [&](TSNode c) {
      if (is_null(found) && ctx.model.callee_leaf(c) == "rsample" && is(field(c, k.f_function), k.attribute) &&
          ctx.model.enclosing_function(ctx.model.scope_enclosing(c)) == u.function)
        found = c;
    });
    return found;
  }

  // `torch.autograd.set_grad_enabled(False)` as a statement of the module's top level, or of the
  // `__init__` of the routine's class (no method of an instance runs before it): autograd is off
  // process-wide from there on (round 52: ABSA's `Inferer`, TG002-NX54). Null when any call in
  // the file may turn it back on (`set_grad_enabled(<anything but False>)`, `enable_grad`).
  TSNode disabled_process_wide(const Unit& u) const {
    TSNode off = switch_off_in(ctx.root);
    if (is_null(off) && u.function >= 0) {
      int cls = ctx.model.functions()[u.function].class_index;
      for (const FunctionInfo& fn : ctx.model.functions())
        if (is_null(off) && cls >= 0 && fn.class_index == cls && fn.name == "__init__")
          off = switch_off_in(field(fn.node, k.f_body));
    }
    // The file-wide search for a call turning autograd back on only once a switch was found.
    return !is_null(off) && is_null(first_turn_on()) ? off : TSNode{};
  }

  // The first statement of `block` that is `*.set_grad_enabled(False)`, or null.
  TSNode switch_off_in(TSNode block) const {
    TSNode found{};
    for_each_named_child(block, [&](TSNode stmt) {
      if (!is_null(found) || !is(stmt, k.expression_statement)) return;
      TSNode call = unparenthesize(ts_node_named_child(stmt, 0));
      if (is(call, k.call) && ctx.model.callee_leaf(call) == "set_grad_enabled" && is(positional_arg(call, 0), k.false_))
        found = call;
    });
    return found;
  }

  // The first call in the file that may turn autograd on (`enable_grad`, `set_grad_enabled` of
  // anything but False), or null.
  TSNode first_turn_on() const {
    TSNode found{};
    ctx.model.for_each_call_in(ctx.root, [&](TSNode c) {
      std::string_view leaf = ctx.model.callee_leaf(c);
      if (is_null(found) &&
          (leaf == "enable_grad" || (leaf == "set_grad_enabled" && !is(positional_arg(c, 0), k.false_))))
        found = c;
    });
    return found;
  }

  // The process-wide switches NX54 reads outside the routine's own unit: every off switch at the
  // top level or in an `__init__`, and the first call that may turn autograd on.
  void note_grad_switches(std::vector<ContextFact>& facts) const {
    note_context(facts, "TG002 process-wide no_grad", switch_off_in(ctx.root));
    for (const FunctionInfo& fn : ctx.model.functions())
      if (fn.class_index >= 0 && fn.name == "__init__")
        note_context(facts, "TG002 process-wide no_grad", switch_off_in(field(fn.node, k.f_body)));
    note_context(facts, "TG002 autograd turned on", first_turn_on());
  }

  // A module's `forward` in this file that differentiates (round 50: higher's energy model
  // makes a leaf with `requires_grad=True` and descends its energy with a differentiable
  // optimizer; also a backward or `autograd.grad` there, directly or through a helper): a model
  // of that class needs autograd even when evaluated, and no_grad would break it (TG002-NX53).
  // The first such call, or null.
  TSNode differentiating_forward() const {
    if (differentiating_forward_) return *differentiating_forward_;
    TSNode found{};
    for (const FunctionInfo& fn : ctx.model.functions()) {
      if (!is_null(found)) break;
      if (fn.name != "forward" || fn.class_index < 0) continue;
      bool differentiates = fn.calls_backward || fn.calls_autograd_grad || differentiates_through_helper(fn, 2);
      ctx.model.for_each_call_in(field(fn.node, k.f_body), [&](TSNode c) {
        if (!is_null(found) || ctx.model.enclosing_function(ctx.model.scope_enclosing(c)) != ctx.model.function_of(fn.node))
          return;
        std::string_view leaf = ctx.model.callee_leaf(c);
        TSNode wanted = keyword_arg(c, "requires_grad", ctx.source);
        bool asks = (is(wanted, k.true_)) || (leaf == "requires_grad_" && is(field(c, k.f_function), k.attribute) &&
                                              !is(positional_arg(c, 0), k.false_));
        bool grads = leaf == "backward" || (leaf == "grad" && ctx.model.qualified_callee(c) &&
                                             *ctx.model.qualified_callee(c) == "torch.autograd.grad");
        if (asks || (differentiates && grads)) found = c;
      });
      if (is_null(found) && differentiates) found = field(fn.node, k.f_name);  // through a helper
    }
    differentiating_forward_ = found;
    return found;
  }
  mutable std::optional<TSNode> differentiating_forward_;

  // Every binding of `model` visible at `call` calls a callee that is itself computed (a call
  // or a subscript: `get_class(name)(...)`, `MODELS[name](...)`). Returns the first binding's
  // value, or null.
  // `model = build_model(args, cfg, trainable=False)` ... `test(net=model)` (round 56: a YOLO
  // family whose `forward` dispatches to an `@torch.no_grad()` inference path when built with
  // `trainable=False`): the evaluated model comes from a builder this file does not define,
  // handed a keyword that asks for an inference model. Whether that model's forward keeps a
  // graph is then the builder's business. Followed from the routine's own bindings, or, for a
  // parameter, from the argument the caller with autograd on passes. Returns the keyword
  // argument, or null.
  TSNode built_for_inference(const Unit& u, const Candidate& c, const CallerVerdict& callers) const {
    if (u.function < 0) return TSNode{};
    const FunctionInfo& fn = ctx.model.functions()[u.function];
    std::string root = c.model_name.substr(0, c.model_name.find('.'));
    for (size_t i = 0; i < fn.params.size(); ++i) {
      if (fn.params[i].name != root || root != c.model_name) continue;
      if (callers.grad != CallerGrad::Grad || is_null(callers.witness)) return TSNode{};
      TSNode arg = argument_for(fn, callers.witness, i, ctx.source);
      auto d = is_null(arg) ? std::nullopt : dotted_name(unparenthesize(arg), ctx.source);
      if (!d) return TSNode{};
      return inference_keyword_of(*d, arg, ctx.model.scope_enclosing(callers.witness), 0);
    }
    return inference_keyword_of(c.model_name, c.call, fn.scope, 0);
  }

  // The inference keyword of the unseen builder call every reaching binding of `name` at
  // `use` comes from (through `.to(device)` / `.eval()` chains and rebinding of the same
  // name), or null.
  TSNode inference_keyword_of(const std::string& name, TSNode use, int scope, int depth) const {
    if (depth > 3) return TSNode{};
    std::vector<TSNode> values = reaching_values(ctx.model, name, use, scope);
    if (values.empty()) return TSNode{};
    TSNode found{};
    for (TSNode v : values) {
      ContextFact read{"TG002 binding of the evaluated model " + name, range_of(v)};
      if (std::find(inference_reads_.begin(), inference_reads_.end(), read) == inference_reads_.end())
        inference_reads_.push_back(std::move(read));
      TSNode base = ctx.model.module_chain_base(v);
      TSNode kw{};
      if (is(base, k.identifier) && text_of(base, ctx.source) == name) kw = inference_keyword_of(name, v, scope, depth + 1);
      else if (is(base, k.call)) kw = inference_keyword(base);
      if (is_null(kw)) return TSNode{};
      if (is_null(found)) found = kw;
    }
    return found;
  }

  // `trainable=False`, `is_train=False`, `training=False`, `inference=True`, `eval=True`,
  // `deploy=True` handed to a callee this file does not define (a local class or function is
  // read instead). A naming heuristic: it only lowers an error to a warning.
  TSNode inference_keyword(TSNode call) const {
    std::string_view leaf = ctx.model.callee_leaf(call);
    if (ctx.model.class_named(leaf) >= 0 || ctx.model.functions_named(leaf)) return TSNode{};
    TSNode found{};
    for_each_named_child(field(call, k.f_arguments), [&](TSNode a) {
      if (!is_null(found) || !is(a, k.keyword_argument)) return;
      std::string key = names::lower(text_of(field(a, k.f_name), ctx.source));
      TSNode v = unparenthesize(field(a, k.f_value));
      bool off = is(v, k.false_) && (key == "trainable" || key == "training" || key == "is_train" ||
                                     key == "is_training" || key == "train");
      bool on = is(v, k.true_) && (key == "inference" || key == "eval" || key == "is_eval" || key == "deploy" ||
                                   key == "eval_mode" || key == "inference_mode");
      if (off || on) found = a;
    });
    return found;
  }

  TSNode dynamically_built(const std::string& model, TSNode call) const {
    const std::vector<BindingSite>* sites = ctx.model.bindings_of(model, ctx.model.scope_enclosing(call));
    if (!sites || sites->empty()) return TSNode{};
    TSNode first{};
    for (const BindingSite& b : *sites) {
      // `model = model.cuda()`: the same object.
      TSNode v = ctx.model.module_chain_base(b.value);
      if (is(v, k.identifier) && text_of(v, ctx.source) == model) continue;
      if (!is(v, k.call)) return TSNode{};
      TSNode callee = unparenthesize(field(v, k.f_function));
      if (!is(callee, k.call) && !is(callee, k.subscript)) return TSNode{};
      if (is_null(first)) first = b.value;
    }
    return first;
  }

  // `x.requires_grad_(True)` (or `x.requires_grad = True`) in the routine, before the forward
  // that receives `x` (round 36: an uncertainty model's `eval_step` whose gradient-penalty
  // metric differentiates the output with respect to the input): autograd is asked for on
  // purpose. Returns that statement's call or assignment, or null.
  TSNode input_made_differentiable(TSNode forward, const Unit& u) const {
    std::unordered_set<std::string> inputs;
    for_each_named_child(field(forward, k.f_arguments), [&](TSNode a) {
      if (is(a, k.keyword_argument)) a = field(a, k.f_value);
      if (auto d = dotted_name(unparenthesize(a), ctx.source)) inputs.insert(*d);
    });
    if (inputs.empty()) return TSNode{};
    TSNode body = u.function >= 0 ? field(ctx.model.functions()[u.function].node, k.f_body) : ctx.root;
    TSNode found{};
    auto visit = [&](auto&& self, TSNode n) -> void {
      if (!is_null(found) || ts_node_start_byte(n) >= ts_node_start_byte(forward)) return;
      if (is(n, k.function_definition) || is(n, k.class_definition) || is(n, k.lambda)) return;
      if (is(n, k.call) && ctx.model.callee_leaf(n) == "requires_grad_" && is(field(n, k.f_function), k.attribute)) {
        TSNode arg = positional_arg(n, 0);
        auto d = dotted_name(field(field(n, k.f_function), k.f_object), ctx.source);
        if (d && inputs.count(*d) && (is_null(arg) || is(arg, k.true_))) found = n;
      } else if (is(n, k.assignment) && is(field(n, k.f_right), k.true_) && is(field(n, k.f_left), k.attribute) &&
                 text_of(field(field(n, k.f_left), k.f_attribute), ctx.source) == "requires_grad") {
        auto d = dotted_name(field(field(n, k.f_left), k.f_object), ctx.source);
        if (d && inputs.count(*d)) found = n;
      }
      for_each_named_child(n, [&](TSNode c) { self(self, c); });
    };
    visit(visit, body);
    return found;
  }

  TSNode attribute_read(TSNode n, const std::string& base) const {
    if (is(n, k.attribute)) {
      std::string_view attr = text_of(field(n, k.f_attribute), ctx.source);
      auto obj = dotted_name(field(n, k.f_object), ctx.source);
      if ((attr == "grad_fn" || attr == "requires_grad") && obj && *obj == base) return n;
    }
    TSNode found{};
    for_each_named_child(n, [&](TSNode c) {
      if (is_null(found)) found = attribute_read(c, base);
    });
    return found;
  }

  // The forward is (part of) a return statement's value: `return model(x)`.
  bool returned_directly(TSNode call) const {
    for (TSNode p = ctx.model.parent(call); !is_null(p); p = ctx.model.parent(p)) {
      if (is(p, k.return_statement)) return true;
      if (is(p, k.block) || is(p, k.lambda) || is(p, k.function_definition)) return false;
    }
    return false;
  }

  // `Variable(x, volatile=True)` as an argument of the forward, bound to a name that is one
  // (round 11: bearpaw's classifiers, round 13: pytorch-beginner), or made anywhere in the
  // routine before the forward: code written for PyTorch before 0.4, where that was the
  // no-grad mechanism (TG002-NX26).
  TSNode volatile_variable_input(const Unit& u, TSNode forward) const {
    int scope = u.function >= 0 ? ctx.model.functions()[u.function].scope : 0;
    // `Variable(x, volatile=True)`, or a helper handed `volatile=True` that makes the input
    // (round 30: `ptan.agent.default_states_preprocessor([obs], cuda=cuda, volatile=True)` in
    // code written for PyTorch 0.3): the pre-0.4 way to switch autograd off.
    auto is_volatile = [&](TSNode v) {
      // Through a chain of methods on the Variable: `Variable(x, volatile=True).cuda()`.
      for (v = unparenthesize(v); is(v, k.call); v = unparenthesize(field(field(v, k.f_function), k.f_object))) {
        if (has_literal_true_keyword(v, "volatile", ctx.source)) return true;
        if (!is(field(v, k.f_function), k.attribute)) return false;
      }
      return false;
    };
    TSNode found{};
    for_each_named_child(field(forward, k.f_arguments), [&](TSNode a) {
      if (!is_null(found)) return;
      if (is_volatile(a)) found = a;
      else if (auto name = dotted_name(a, ctx.source))
        if (const std::vector<BindingSite>* sites = ctx.model.bindings_of(*name, scope))
          for (const BindingSite& b : *sites)
            if (!is_null(b.value) && b.position < 0 && is_volatile(b.value)) found = b.value;
    });
    // `inputs = Variable(inputs, volatile=True).cuda()`, `forward(input_var, model)` (round 20:
    // a segmentation repository's validate(), deepcluster's eval_linear): any volatile Variable
    // the routine makes before the forward shows it was written for that mechanism, and so does
    // one made in the forward's own arguments (`net(Variable(x, volatile=True).cuda())`, round
    // 75: OCNet's sliding-window evaluation).
    if (is_null(found) && u.function >= 0)
      ctx.model.for_each_call_in(ctx.model.functions()[u.function].node, [&](TSNode v) {
        if (is_null(found) && ts_node_start_byte(v) < ts_node_end_byte(forward) && !ts_node_eq(v, forward) &&
            is_volatile(v))
          found = v;
      });
    return found;
  }

  // In code written for the `Variable` API, an input made by a helper this file does not
  // define (`data, targets = get_batch(source, i, args, evaluation=True)` imported from
  // another module) may be a volatile Variable: whether the forward builds a graph is that
  // helper's business (round 38: darts' rnn `evaluate()`, whose `get_batch` makes
  // `Variable(..., volatile=evaluation)`, TG002-NX48). Returns the helper's call.
  TSNode input_from_unseen_helper(const Unit& u, TSNode forward) const {
    if (is_null(variable_api_site())) return TSNode{};
    int scope = u.function >= 0 ? ctx.model.functions()[u.function].scope : 0;
    // A function imported from a module other than torch's or NumPy's (`get_batch(...)`,
    // `utils.get_batch(...)`), not a method of a local value (`x.type(...)`) or a builtin.
    auto unseen_call = [&](TSNode v) {
      v = unparenthesize(v);
      if (!is(v, k.call)) return false;
      TSNode callee = field(v, k.f_function);
      TSNode root = callee;
      while (is(root, k.attribute)) root = field(root, k.f_object);
      if (!is(root, k.identifier)) return false;
      const ImportBinding* imported = ctx.model.import_of(text_of(root, ctx.source));
      if (!imported) return false;
      const std::string& q = imported->qualified;
      return !(q == "torch" || q.starts_with("torch.") || q == "numpy" || q.starts_with("numpy."));
    };
    // A name counts when every assignment that can reach the forward is such a call (pyGAT's
    // `features = Variable(features)` after `load_data()` keeps its error).
    TSNode found{};
    for_each_named_child(field(forward, k.f_arguments), [&](TSNode a) {
      if (!is_null(found)) return;
      if (unseen_call(a)) {
        found = a;
        return;
      }
      auto name = dotted_name(a, ctx.source);
      if (!name) return;
      std::vector<BindingSite> sites = reaching_sites(ctx.model, *name, forward, scope);
      if (!sites.empty() && std::all_of(sites.begin(), sites.end(), [&](const BindingSite& b) { return unseen_call(b.value); }))
        found = unparenthesize(sites.front().value);
    });
    return found;
  }

  void add_evidence(Finding& f, const Unit& u, const Candidate& c, bool backwards) const {
    if (!is_null(c.eval_loop_iterable)) {
      f.evidence.push_back({range_of(c.eval_loop_iterable),
                            quote_code(text_of(c.eval_loop_iterable, ctx.source)) +
                                " looks like an evaluation loader, and its loop never backwards"});
    } else if (!is_null(c.eval_mode_call)) {
      f.evidence.push_back({range_of(c.eval_mode_call),
                            quote_code(text_of(c.eval_mode_call, ctx.source)) + " switches to evaluation"});
    } else if (u.function >= 0) {
      const FunctionInfo& fn = ctx.model.functions()[u.function];
      f.evidence.push_back({range_of(field(fn.node, k.f_name)),
                            "`" + fn.name + "` is named like an evaluation routine"});
    }
    f.evidence.push_back({range_of(c.call), quote_code(text_of(c.call, ctx.source)) +
                                                " is a forward pass of `" + c.model_name +
                                                "`, outside any no_grad region"});
    if (!backwards && u.function >= 0) {
      const FunctionInfo& fn = ctx.model.functions()[u.function];
      f.evidence.push_back({range_of(field(fn.node, k.f_name)),
                            "`" + fn.name + "` never calls `.backward()`"});
    }
  }

  uint32_t top_level_start(TSNode node) const {
    for (TSNode parent = ctx.model.parent(node); !ts_node_is_null(parent) && !is(parent, kinds().module);
         parent = ctx.model.parent(parent))
      node = parent;
    return ts_node_start_byte(node);
  }

  // The decorator changes nothing a caller computes only when no graph can leave the
  // routine: what it returns is shown to carry none (`.item()`, counts, nothing at all) and
  // it stores nothing on an object (`self.last = out`). Otherwise a caller might backward
  // through the result, which the decorator would break: offered, not applied.
  FixSafety decorator_safety(int function) const {
    const FunctionInfo& fn = ctx.model.functions()[function];
    if (ctx.provenance.return_value(function).graph != Graph::Free) return FixSafety::Unsafe;
    // A helper of a test module may run the forward with autograd on because that is what
    // the test exercises (round 14: fairscale's `_eval` runs five forwards with autograd on,
    // then five under no_grad): the decorator would change what the test covers.
    if (in_test_module()) return FixSafety::Unsafe;
    // Code written against PyTorch's `Variable` API (before 0.4) may run where
    // `torch.no_grad` does not exist or is no decorator (before 0.4.1): the edit is offered
    // for the reader to judge (rounds 20 and 23: deepcluster, torchMoji).
    if (uses_variable_api()) return FixSafety::Unsafe;
    // A model built from a class chosen at run time may differentiate in its own forward
    // (TG002-NX47): no_grad could break it.
    bool dynamic = false;
    ctx.model.for_each_call_in(field(fn.node, k.f_body), [&](TSNode c) {
      if (auto target = dynamic ? std::nullopt : forward_target(c, ctx.model.scope_enclosing(c)))
        dynamic = !is_null(dynamically_built(*target, c));
    });
    if (dynamic) return FixSafety::Unsafe;
    if (!is_null(differentiating_forward())) return FixSafety::Unsafe;
    if (!is_null(unseen_callee(function, 0))) return FixSafety::Unsafe;
    bool stores = false;
    std::vector<TSNode> todo{field(fn.node, k.f_body)};
    while (!todo.empty() && !stores) {
      TSNode n = todo.back();
      todo.pop_back();
      if (is(n, k.function_definition) || is(n, k.class_definition) || is(n, k.lambda)) continue;
      if (is(n, k.assignment) || is(n, k.augmented_assignment)) {
        TSNode left = field(n, k.f_left);
        stores = is(left, k.attribute) || is(left, k.subscript);
      }
      for_each_named_child(n, [&](TSNode c) { todo.push_back(c); });
    }
    return stores ? FixSafety::Unsafe : FixSafety::Safe;
  }

  // The first call in the routine that may need autograd for all this file shows: one of an
  // object's methods this file does not know (`attack.perturb(x, y)`, round 71: a PGD attack's
  // own backward would raise under the decorator), a function of another module but torch's
  // and the standard library's, torch's own differentiation (`torch.autograd.grad`), or a
  // local function that backwards or calls such a thing (two levels). Null when every call is
  // a forward of a model or criterion, a builtin, torch, the standard library, or a method no
  // routine differentiates in (a tensor's, a container's, a module's mode switch).
  TSNode unseen_callee(int function, int depth) const {
    TSNode found{};
    const FunctionInfo& fn = ctx.model.functions()[function];
    ctx.model.for_each_call_in(field(fn.node, k.f_body), [&](TSNode c) {
      if (is_null(found) && !seen_not_to_differentiate(c, depth)) found = c;
    });
    return found;
  }

  bool seen_not_to_differentiate(TSNode call, int depth) const {
    static constexpr std::string_view kBuiltins[] = {
        "print", "len", "range", "enumerate", "zip", "sum", "min", "max", "float", "int", "str", "bool", "list",
        "dict", "tuple", "set", "sorted", "reversed", "round", "abs", "isinstance", "hasattr", "getattr", "format",
        "iter", "next", "map", "filter", "any", "all", "open", "repr", "type", "divmod", "pow"};
    // The standard library and host-side libraries that never call into autograd.
    static constexpr std::string_view kHostModules[] = {
        "math", "time", "os", "sys", "json", "logging", "random", "itertools", "functools", "collections", "copy",
        "pickle", "re", "datetime", "csv", "shutil", "glob", "warnings", "contextlib", "pathlib", "argparse",
        "statistics", "numpy", "scipy", "pandas", "sklearn", "PIL", "cv2", "tqdm"};
    static constexpr std::string_view kPlainMethods[] = {
        "item", "cpu", "cuda", "to", "numpy", "tolist", "detach", "clone", "float", "long", "int", "half", "double",
        "size", "dim", "view", "reshape", "squeeze", "unsqueeze", "permute", "transpose", "contiguous", "flatten",
        "argmax", "argmin", "max", "min", "sum", "mean", "std", "var", "eq", "ne", "gt", "lt", "ge", "le", "topk",
        "sort", "softmax", "log_softmax", "sigmoid", "exp", "log", "abs", "sqrt", "pow", "norm", "type_as", "expand",
        "repeat", "split", "chunk", "narrow", "index_select", "gather", "masked_fill", "clamp", "round", "all",
        "any", "nonzero", "numel", "append", "extend", "insert", "pop", "update", "items", "keys", "values", "get",
        "join", "format", "write", "flush", "close", "strip", "startswith", "endswith", "eval", "train",
        "zero_", "fill_", "copy_", "add_", "mul_", "div_", "sub_", "set_description", "set_postfix", "info",
        "debug", "warning", "add_scalar", "reset", "load_state_dict", "state_dict", "parameters",
        "named_parameters", "modules", "children", "requires_grad_"};
    auto in = [](const auto& list, std::string_view s) { return std::find(std::begin(list), std::end(list), s) != std::end(list); };
    TSNode callee = field(call, k.f_function);
    int scope = ctx.model.scope_enclosing(call);
    if (forward_target(call, scope)) return true;
    auto dotted = dotted_name(callee, ctx.source);
    if (dotted && ctx.model.is_criterion(*dotted, scope)) return true;
    // A name an import binds: torch (but its differentiation) and the host modules are seen.
    if (dotted && ctx.model.import_of(dotted->substr(0, dotted->find('.')))) {
      auto q = ctx.model.qualified_callee(call);
      if (!q || *q == "torch.autograd.grad" || *q == "torch.autograd.backward" ||
          q->starts_with("torch.autograd.functional."))
        return false;
      std::string_view root = q->substr(0, q->find('.'));
      if (root == "torch" || in(kHostModules, root)) return true;
      return !hands_a_tensor_or_model(call);
    }
    if (const std::vector<int>* fs = local_callees(ctx.model, call)) {  // `helper(x)`, `self.step(x)`
      if (depth >= 2) return false;
      for (int f : *fs)
        if (ctx.model.functions()[f].calls_backward || !is_null(unseen_callee(f, depth + 1))) return false;
      return true;
    }
    if (is(callee, k.identifier) &&  // a builtin, or a class of this file being built
        (in(kBuiltins, text_of(callee, ctx.source)) || ctx.model.class_named(text_of(callee, ctx.source)) >= 0))
      return true;
    if (is(callee, k.attribute)) {
      std::string_view method = text_of(field(callee, k.f_attribute), ctx.source);
      if (method == "backward") return false;
      if (in(kPlainMethods, method)) return true;
    }
    // Anything else differentiates only what it is handed: seen when handed no model and no
    // value the provenance shows to be a tensor (`envs.step(q.argmax(1).numpy())`).
    return !hands_a_tensor_or_model(call);
  }

  // Some argument may be a tensor or is a model: anything but a literal, an index or count
  // (`logits.argmax(-1)`, `.tolist()`: no gradient), or a value the provenance shows to be a
  // Python number or a NumPy array. A batch straight from a loader is unknown, so it counts.
  bool hands_a_tensor_or_model(TSNode call) const {
    static constexpr std::string_view kIntegerResults[] = {"argmax", "argmin", "argsort", "long", "int", "bool",
                                                           "tolist", "item", "numpy", "nonzero", "size"};
    bool found = false;
    for_each_named_child(field(call, k.f_arguments), [&](TSNode a) {
      if (found) return;
      TSNode v = is(a, k.keyword_argument) ? field(a, k.f_value) : a;
      if (is(v, k.list_splat) || is(v, k.dictionary_splat)) v = ts_node_named_child(v, 0);
      v = unparenthesize(v);
      if (is_null(v) || is(v, k.string) || is(v, k.integer) || is(v, k.float_) || is(v, k.true_) ||
          is(v, k.false_) || is(v, k.none) || is(v, k.comment))
        return;
      if (is(v, k.call) && std::find(std::begin(kIntegerResults), std::end(kIntegerResults),
                                     ctx.model.callee_leaf(v)) != std::end(kIntegerResults))
        return;
      const Value* held = ctx.provenance.value_of(v);
      if (held && (held->type == Type::Number || held->type == Type::Array)) return;
      found = true;
    });
    return found;
  }

  // `Variable` bound through torch's imports (`from torch.autograd import Variable`,
  // `torch.autograd.Variable(...)`) anywhere in the file, called or only imported (round 38:
  // darts' rnn scripts import it and leave the calls to a helper module).
  bool uses_variable_api() const { return !is_null(variable_api_site()); }

  // The first call of torch's `Variable`, else the import that binds it; null when neither.
  // Found once: the context, every candidate and the decorator's safety read it.
  TSNode variable_api_site() const {
    if (!variable_api_site_) variable_api_site_ = find_variable_api_site();
    return *variable_api_site_;
  }
  mutable std::optional<TSNode> variable_api_site_;

  TSNode find_variable_api_site() const {
    if (TSNode call = first_variable_call(); !is_null(call)) return call;
    const ImportBinding* imported = ctx.model.import_of("Variable");
    if (!imported || !imported->qualified.starts_with("torch.")) return TSNode{};
    TSNode found{};
    std::vector<TSNode> todo{ctx.root};
    while (!todo.empty() && is_null(found)) {
      TSNode n = todo.back();
      todo.pop_back();
      if (is(n, k.import_from_statement)) {
        for_each_named_child(n, [&](TSNode name) {
          if (is_null(found) && !is_null(name) && text_of(name, ctx.source) == "Variable") found = name;
        });
        continue;
      }
      if (is(n, k.call) || is(n, k.expression_statement)) continue;
      for_each_named_child(n, [&](TSNode c) { todo.push_back(c); });
    }
    return found;
  }

  TSNode first_variable_call() const {
    TSNode found{};
    ctx.model.for_each_call_in(ctx.root, [&](TSNode c) {
      if (!is_null(found) || ctx.model.callee_leaf(c) != "Variable") return;
      auto q = ctx.model.qualified_callee(c);
      if (q && q->starts_with("torch.")) found = c;
    });
    return found;
  }

  // Some function of the file is a test (pytest's `test_*`, a unittest TestCase method).
  bool in_test_module() const { return first_test_function() >= 0; }

  int first_test_function() const {
    for (size_t f = 0; f < ctx.model.functions().size(); ++f)
      if (ctx.model.is_test_function(static_cast<int>(f))) return static_cast<int>(f);
    return -1;
  }

  // `@torch.no_grad()` above an evaluation-named routine that never backwards (decorating a
  // routine that trains would break its backward, TG002-P10). Uses the alias torch is bound
  // to; when only `from torch... import` exists, also adds `import torch` (TG002-P09).
  std::optional<Fix> decorator_fix(const Unit& u, bool backwards) const {
    if (u.function < 0 || backwards || !ctx.model.has_torch_import()) return std::nullopt;
    const FunctionInfo& fn = ctx.model.functions()[u.function];
    if (!names::is_evaluation_function_name(fn.name) || fn.calls_backward) return std::nullopt;
    std::string alias = ctx.model.torch_alias();
    Fix fix{"add @torch.no_grad()", decorator_safety(u.function), {}};
    if (alias.empty()) {
      alias = "torch";
      // The decorator runs when the def runs: an import placed after it (the file's imports
      // follow the function) would come too late, so it goes above the enclosing top-level
      // statement instead. That also keeps the edits sorted.
      uint32_t at = std::min(ctx.model.import_insertion_offset(), top_level_start(fn.outer));
      // At the start of that line: a statement error recovery left indented (`    def f`) would
      // otherwise get the import after the decorator's line start, unsorted.
      while (at > 0 && ctx.source[at - 1] != '\n') --at;
      fix.edits.push_back({{at, at}, "import torch\n"});
      fix.description = "add @torch.no_grad() (and import torch)";
    }
    TextEdit decorator = insert_line_before(ts_node_start_byte(fn.outer), "@" + alias + ".no_grad()", ctx.source);
    if (!fix.edits.empty() && fix.edits.back().range == decorator.range) {
      fix.edits.back().replacement += decorator.replacement;  // the def directly follows the imports
      return fix;
    }
    fix.edits.push_back(std::move(decorator));
    return fix;
  }
};

}  // namespace

std::unique_ptr<RuleCheck> make_tg002(const RuleContext& ctx) { return std::make_unique<Checker>(ctx); }

}  // namespace preflight::rules
