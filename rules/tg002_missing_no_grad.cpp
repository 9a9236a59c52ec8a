// TG002 missing-no-grad: an evaluation routine runs the model with autograd enabled, so the
// graph and every activation behind it are kept alive for a backward that never comes.
//
// Evidence chain: why the code is evaluating (an evaluation name, `model.eval()` on the same
// model earlier in the routine, or a loop over an evaluation loader) -> the forward pass and why the callee
// is a model (its binding, or its name as a last resort) -> no no_grad region encloses it ->
// the routine never backwards (or the loop is an evaluation loop inside a training routine).
// Exempt: forward passes under no_grad / inference_mode / set_grad_enabled(False) (with,
// decorator or statement form); evaluation-looking loops that themselves backward (FGSM);
// Lightning's validation/test/predict hooks inside a LightningModule.
#include <algorithm>
#include <string>
#include <unordered_map>
#include <vector>

#include "analysis/names.h"
#include "rules/fix_builder.h"
#include "rules/rule.h"

namespace preflight::rules {
namespace {

using namespace preflight::analysis;

struct Candidate {
  TSNode call;
  std::string model_name;
  TSNode eval_loop_iterable;  // non-null when the pass sits in an evaluation loop
  TSNode eval_mode_call;      // non-null when `<this model>.eval()` came earlier
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
  mutable std::unordered_map<const void*, bool> loop_backwards_;

  explicit Checker(const RuleContext& c) : ctx(c) { stack.push_back({}); }

  void finish(std::vector<Finding>& sink) override {
    finish(stack.front());  // the module's top level
    for (Finding& f : out) sink.push_back(std::move(f));
  }

  void enter(TSNode n, const WalkState& st) override {
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
    if (!model_name || ctx.provenance.in_no_grad(call)) return;
    TSNode loop_iterable = eval_loop_iterable(st);
    bool eval_named = unit.function >= 0 &&
                      names::is_evaluation_function_name(ctx.model.functions()[unit.function].name);
    TSNode eval_call = eval_mode_of(unit, *model_name);
    if (eval_named || !is_null(eval_call) || !is_null(loop_iterable))
      unit.candidates.push_back({call, *model_name, loop_iterable, eval_call});
  }

  static TSNode eval_mode_of(const Unit& unit, const std::string& model_name) {
    for (const EvalMode& m : unit.eval_modes)
      if (same_model(m.receiver, model_name)) return m.call;
    return TSNode{};
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
    if (fresh) it->second = contains_call(loop, "backward", ctx.source);
    return it->second;
  }

  bool unit_backwards(const Unit& u) const {
    if (u.function < 0) return false;
    const FunctionInfo& f = ctx.model.functions()[u.function];
    if (f.calls_backward) return true;
    if (f.class_index >= 0 && ctx.model.classes()[f.class_index].is_lightning)
      for (auto hook : kLightningHooks)
        if (f.name == hook) return true;  // Lightning runs these under no_grad itself
    return false;
  }

  // Test functions (`test_*`, unittest.TestCase methods) check outputs on tiny inputs; their
  // memory does not matter (the reference documents this exemption, TG002-P08). Methods of a
  // LightningModule run under the trainer, which disables autograd for evaluation.
  bool exempt(const Unit& u) const {
    if (u.function < 0) return false;
    if (ctx.model.is_test_function(u.function)) return true;
    const FunctionInfo& f = ctx.model.functions()[u.function];
    return f.class_index >= 0 && ctx.model.classes()[f.class_index].is_lightning;
  }

  void finish(const Unit& u) {
    if (exempt(u)) return;
    bool backwards = unit_backwards(u);
    for (const Candidate& c : u.candidates) {
      if (backwards && is_null(c.eval_loop_iterable)) continue;
      out.push_back(make_finding(u, c, backwards));
      return;  // once per unit
    }
  }

  std::string unit_label(const Unit& u) const {
    return u.function < 0 ? "this module" : "`" + ctx.model.functions()[u.function].name + "()`";
  }

  Finding make_finding(const Unit& u, const Candidate& c, bool backwards) const {
    Finding f;
    f.code = "TG002";
    f.severity = Severity::Error;
    f.category = Category::CriticalOom;
    f.range = range_of(c.call);
    std::string call = quote_code(text_of(c.call, ctx.source));
    if (backwards) {
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
    if (auto fix = decorator_fix(u, backwards)) f.fixes.push_back(std::move(*fix));
    return f;
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

  static uint32_t top_level_start(TSNode node) {
    for (TSNode parent = ts_node_parent(node); !ts_node_is_null(parent) && !is(parent, kinds().module);
         parent = ts_node_parent(parent))
      node = parent;
    return ts_node_start_byte(node);
  }

  // `@torch.no_grad()` above an evaluation-named routine that never backwards (decorating a
  // routine that trains would break its backward, TG002-P10). Uses the alias torch is bound
  // to; when only `from torch... import` exists, also adds `import torch` (TG002-P09).
  std::optional<Fix> decorator_fix(const Unit& u, bool backwards) const {
    if (u.function < 0 || backwards || !ctx.model.has_torch_import()) return std::nullopt;
    const FunctionInfo& fn = ctx.model.functions()[u.function];
    if (!names::is_evaluation_function_name(fn.name) || fn.calls_backward) return std::nullopt;
    std::string alias = ctx.model.torch_alias();
    Fix fix{"add @torch.no_grad()", FixSafety::Safe, {}};
    if (alias.empty()) {
      alias = "torch";
      // The decorator runs when the def runs: an import placed after it (the file's imports
      // follow the function) would come too late, so it goes above the enclosing top-level
      // statement instead. That also keeps the edits sorted.
      uint32_t at = std::min(ctx.model.import_insertion_offset(), top_level_start(fn.outer));
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
