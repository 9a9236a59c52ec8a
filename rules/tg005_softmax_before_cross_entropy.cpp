// TG005 softmax-before-cross-entropy: probabilities reach a loss that normalises (or expects
// log-probabilities) itself, so training optimises a squashed or wrong objective.
//
// Evidence chain: the loss call and why it is cross-entropy / NLL (its leaf, or the binding of
// the criterion: `ce = nn.CrossEntropyLoss()`, `self.loss_fn = ...` in any method of the
// class) -> its input and why it is softmax / log-softmax output (an inline activation call,
// judged by the binding of its callee: `self.softmax = nn.LogSoftmax(...)` is log-softmax; or
// a variable whose reaching assignment in the same function is such a call) -> the pairing
// that mismatches. Model layer: an `nn.Sequential` whose last layer is Softmax / LogSoftmax in
// a file whose loss normalises again.
// Exempt: log_softmax into NLL; softmax used for reporting only; Softmax layers that are not
// the last layer of a Sequential (attention); criteria and activations whose binding cannot be
// seen (parameters, other files); a same-named variable in another function (TG005-P09).
// log_softmax into cross-entropy is numerically the same loss: a warning about redundant work.
#include <algorithm>
#include <cctype>

#include "analysis/names.h"
#include "analysis/reaching.h"
#include "rules/callable_binding.h"
#include "rules/rule.h"

namespace preflight::rules {
namespace {

using namespace preflight::analysis;

enum class LossKind { None, CrossEntropy, Nll };
enum class Act { None, Softmax, LogSoftmax };

// How an activation call is written, which decides what removing it leaves behind.
enum class Form { Function, Layer, TensorMethod, Unknown };

struct Activation {
  Act kind = Act::None;
  Form form = Form::Unknown;
  TSNode binding{};  // the layer's constructor (`nn.LogSoftmax(dim=1)`), when one was read
};

struct LossCall {
  TSNode call{};
  LossKind kind = LossKind::None;
  TSNode criterion{};  // the binding's value (`nn.CrossEntropyLoss()`), null for F.cross_entropy
};

struct Checker final : RuleCheck {
  const RuleContext& ctx;
  CallableBinding binding{ctx.model};  // what callees are bound to
  const Kinds& k = kinds();
  std::vector<Finding> out;
  std::vector<TSNode> layer_heads;  // Softmax/LogSoftmax ending an nn.Sequential
  TSNode ce_use{}, nll_use{};       // first cross-entropy / NLL mention, for case C
  TSNode log_use{};                 // first `torch.log(...)` / `x.log()`: probabilities made log-probabilities
  TSNode skorch_classifier{};       // first mention of skorch's NeuralNetClassifier

  explicit Checker(const RuleContext& c) : ctx(c) {}

  std::string_view text(TSNode n) const { return text_of(n, ctx.source); }

  void enter(TSNode n, const WalkState& st) override {
    if (!is(n, k.call)) return;
    note_loss_mention(n);
    note_sequential_head(n);
    note_log_or_skorch(n);
    LossCall loss{n};
    loss.kind = loss_kind(n, st.scope, &loss.criterion);
    if (loss.kind == LossKind::None) return;
    TSNode input = positional_arg(n, 0);
    if (is_null(input)) input = keyword_arg(n, "input", ctx.source);
    if (is_null(input)) return;
    check_input(loss, unparenthesize(input), st.scope);
  }

  // A softmax layer is judged against the first loss of the file, wherever it is.
  void context(std::vector<ContextFact>& facts) const override {
    note_context(facts, "TG005 cross-entropy", ce_use);
    note_context(facts, "TG005 NLL", nll_use);
    note_context(facts, "TG005 log", log_use);
    note_context(facts, "TG005 skorch", skorch_classifier);
  }

  // `torch.log(y_pred)` / `y_pred.log()` somewhere in the file, and skorch's
  // NeuralNetClassifier, whose `get_loss` takes the log of the module's probabilities when the
  // criterion is NLLLoss: either way a Softmax head may feed an NLL loss correctly.
  void note_log_or_skorch(TSNode call) {
    std::string_view leaf = ctx.model.callee_leaf(call);
    auto q = ctx.model.qualified_callee(call);
    if (is_null(log_use) && (leaf == "log" || leaf == "log_")) {
      // `y.log()` takes no argument; `self.log("loss", v)` (Lightning) and `logger.log(...)` do.
      bool method = is(ctx.model.callee_of(call), k.attribute) && is_null(positional_arg(call, 0)) &&
                    !(q && (q->starts_with("math.") || q->starts_with("numpy.")));
      if (method || (q && q->starts_with("torch."))) log_use = call;
    }
    if (is_null(skorch_classifier) && q && q->starts_with("skorch.") && leaf == "NeuralNetClassifier")
      skorch_classifier = call;
  }

  void finish(std::vector<Finding>& sink) override {
    for (TSNode head : layer_heads) report_layer(head);
    for (Finding& f : out) sink.push_back(std::move(f));
  }

  // --- bindings --------------------------------------------------------------------------

  static std::string base_of(std::string_view dotted) {
    return std::string(dotted.substr(0, dotted.find('.')));
  }

  // --- the loss --------------------------------------------------------------------------

  static LossKind kind_of_loss(std::string_view leaf) {
    if (leaf == "cross_entropy" || leaf == "CrossEntropyLoss") return LossKind::CrossEntropy;
    if (leaf == "nll_loss" || leaf == "NLLLoss") return LossKind::Nll;
    return LossKind::None;
  }

  // A call that applies cross-entropy / NLL, and the binding that says so (null for the
  // functional). A constructor (`nn.CrossEntropyLoss(w)`) is not one: its positional argument
  // is a class weight. A function defined in this file under the functional's name is the
  // author's own loss, not torch's.
  LossKind loss_kind(TSNode call, int scope, TSNode* site) const {
    return kind_of_loss(binding.applied_callable(call, scope, {"cross_entropy", "nll_loss"}, site));
  }

  // --- the activation --------------------------------------------------------------------

  static Act act_of(std::string_view leaf) {
    if (leaf == "softmax" || leaf == "Softmax") return Act::Softmax;
    if (leaf == "log_softmax" || leaf == "LogSoftmax") return Act::LogSoftmax;
    return Act::None;
  }

  // `z.softmax(1)`, `z.softmax(dim=-1)`: a tensor method takes at most a dim, never a tensor.
  bool looks_like_tensor_method(TSNode call) const {
    TSNode first = unparenthesize(positional_arg(call, 0));
    if (is_null(first)) return true;
    if (is(first, k.unary_operator)) first = ts_node_named_child(first, 0);  // dim=-1
    return is(first, k.integer);
  }

  // What an inline call computes, reading the binding of its callee before its name
  // (TG005-P10: `self.softmax = nn.LogSoftmax(dim=1)` is log-softmax).
  Activation activation_of(TSNode call, int scope) const {
    Activation a;
    TSNode callee = field(call, k.f_function);
    if (is(callee, k.call)) {  // nn.Softmax(dim=1)(x)
      a = {act_of(ctx.model.callee_leaf(callee)), Form::Layer, callee};
      return a;
    }
    std::string_view leaf = ctx.model.callee_leaf(call);
    auto dotted = dotted_name(callee, ctx.source);
    bool module_fn = is(callee, k.identifier) || (dotted && ctx.model.import_of(base_of(*dotted)));
    if (!module_fn && (leaf == "softmax" || leaf == "log_softmax") && looks_like_tensor_method(call))
      return {act_of(leaf), Form::TensorMethod, {}};  // z.softmax(1), net(x).softmax(dim=1)
    if (!dotted) return a;
    ResolvedCallable r = binding.resolve(callee, scope);
    if (r.bound) return {act_of(r.leaf), Form::Layer, r.site};
    if (leaf != "softmax" && leaf != "log_softmax") return a;
    return {act_of(leaf), module_fn ? Form::Function : Form::Unknown, {}};
  }

  // --- variables -------------------------------------------------------------------------

  std::vector<TSNode> reaching_values(std::string_view dotted, TSNode use, int scope) const {
    return analysis::reaching_values(ctx.model, dotted, use, scope);
  }

  // --- verdicts --------------------------------------------------------------------------

  static bool mismatch(LossKind loss, Act act) {
    if (loss == LossKind::CrossEntropy) return act != Act::None;
    return loss == LossKind::Nll && act == Act::Softmax;
  }

  void check_input(const LossCall& loss, TSNode input, int scope) {
    if (is(input, k.call)) {
      Activation a = activation_of(input, scope);
      if (mismatch(loss.kind, a.kind)) out.push_back(inline_finding(loss, input, a));
      return;
    }
    auto dotted = dotted_name(input, ctx.source);
    if (!dotted) return;
    std::vector<TSNode> values = reaching_values(*dotted, input, scope);
    Act kind = Act::None;
    for (TSNode v : values) {
      v = unparenthesize(v);
      Act a = is(v, k.call) ? activation_of(v, scope).kind : Act::None;
      if (a == Act::None || (kind != Act::None && a != kind)) return;  // not every path normalises
      kind = a;
    }
    if (!values.empty() && mismatch(loss.kind, kind))
      out.push_back(variable_finding(loss, input, values.back(), kind));
  }

  static std::string act_name(Act a) { return a == Act::Softmax ? "softmax" : "log_softmax"; }

  Finding base_finding(const LossCall& loss, TSNode input, Act act) const {
    Finding f;
    f.code = "TG005";
    bool redundant = loss.kind == LossKind::CrossEntropy && act == Act::LogSoftmax;
    f.severity = redundant ? Severity::Warning : Severity::Error;
    f.category = redundant ? Category::PerformanceWarn : Category::ConvergenceBug;
    f.range = range_of(input);
    f.evidence.push_back({range_of(loss.call), loss_evidence(loss)});
    if (!is_null(loss.criterion))
      f.evidence.push_back({range_of(loss.criterion), quote_code(text(loss.criterion)) +
                                                          " is the criterion this call applies"});
    return f;
  }

  std::string loss_evidence(const LossCall& loss) const {
    std::string call = quote_code(text(field(loss.call, k.f_function)));
    return loss.kind == LossKind::CrossEntropy
               ? call + " is cross-entropy: it applies log-softmax to its input itself"
               : call + " is NLL: it expects log-probabilities";
  }

  void describe(Finding& f, const LossCall& loss, const std::string& subject, Act act) const {
    if (loss.kind == LossKind::Nll) {
      f.message = subject + " gives probabilities to NLL, which expects log-probabilities: it "
                  "optimises the negated probability of the target instead of its log, so "
                  "training learns slowly and the reported loss is meaningless.";
      f.hint = "Use `log_softmax` instead of `softmax` (or hand the raw scores to `cross_entropy`).";
    } else if (act == Act::LogSoftmax) {
      f.message = subject + " reaches cross-entropy, which applies log-softmax itself. "
                  "log_softmax is idempotent, so the loss is unchanged, but the normalisation "
                  "is computed (and backpropagated) twice.";
      f.hint = "Hand cross-entropy the raw scores; the result is the same.";
    } else {
      f.message = subject + " reaches cross-entropy, which normalises with log-softmax itself: "
                  "normalising first squashes the scores toward uniform and weakens the "
                  "gradient, so training slows or plateaus.";
      f.hint = "Hand the loss the un-normalised scores (logits); keep softmax for reporting.";
    }
  }

  Finding inline_finding(const LossCall& loss, TSNode act_call, const Activation& a) const {
    Finding f = base_finding(loss, act_call, a.kind);
    describe(f, loss, quote_code(text(act_call)), a.kind);
    std::string why = quote_code(text(act_call)) + " computes " + act_name(a.kind);
    if (!is_null(a.binding))
      f.evidence.push_back({range_of(a.binding), quote_code(text(field(act_call, k.f_function))) +
                                                     " is bound to " + quote_code(text(a.binding))});
    f.evidence.push_back({range_of(act_call), why + " and is the loss's input"});
    if (auto fix = inline_fix(loss, act_call, a)) f.fixes.push_back(std::move(*fix));
    return f;
  }

  Finding variable_finding(const LossCall& loss, TSNode input, TSNode value, Act act) const {
    Finding f = base_finding(loss, input, act);
    std::string name = quote_code(text(input));
    describe(f, loss, name + ", produced by " + act_name(act) + ",", act);
    if (loss.kind == LossKind::CrossEntropy)
      f.hint = "Hand the loss the scores " + name + " was computed from, not " + name + " itself.";
    f.evidence.push_back({range_of(value), name + " is assigned " + quote_code(text(value)) +
                                               " (" + act_name(act) + " output) on every path here"});
    return f;
  }

  // Cross-entropy: the activation call becomes its input (the receiver of `z.softmax(1)`,
  // never its dim, TG005-P08). NLL: `softmax` becomes `log_softmax`, which is what NLL wants.
  std::optional<Fix> inline_fix(const LossCall& loss, TSNode call, const Activation& a) const {
    TSNode callee = field(call, k.f_function);
    if (loss.kind == LossKind::Nll) {
      bool torch_fn = a.form == Form::Function && is(callee, k.attribute) &&
                      ctx.model.qualified_name(callee).value_or("").starts_with("torch.");
      if (!(torch_fn || a.form == Form::TensorMethod)) return std::nullopt;
      TSNode attr = field(callee, k.f_attribute);
      return Fix{"use log_softmax", FixSafety::Safe, {{range_of(attr), "log_softmax"}}};
    }
    TSNode keep{};
    if (a.form == Form::TensorMethod) keep = field(callee, k.f_object);
    else if (a.form == Form::Function || a.form == Form::Layer) {
      keep = positional_arg(call, 0);
      if (is_null(keep)) keep = keyword_arg(call, "input", ctx.source);
    }
    if (is_null(keep)) return std::nullopt;
    return Fix{"remove redundant " + act_name(a.kind), FixSafety::Safe,
               {{range_of(call), std::string(text(keep))}}};
  }

  // --- model layer (case C) --------------------------------------------------------------

  void note_loss_mention(TSNode call) {
    LossKind kind = kind_of_loss(ctx.model.callee_leaf(call));
    TSNode& slot = kind == LossKind::CrossEntropy ? ce_use : nll_use;
    if (kind != LossKind::None && is_null(slot)) slot = call;
  }

  void note_sequential_head(TSNode call) {
    auto q = ctx.model.qualified_callee(call);
    if (!q || (*q != "torch.nn.Sequential" && *q != "nn.Sequential" && *q != "Sequential")) return;
    TSNode last{};
    for (unsigned i = 0; !is_null(positional_arg(call, i)); ++i) last = positional_arg(call, i);
    last = unparenthesize(last);
    if (is(last, k.call) && act_of(ctx.model.callee_leaf(last)) != Act::None &&
        std::isupper(static_cast<unsigned char>(ctx.model.callee_leaf(last)[0])))
      layer_heads.push_back(last);
  }

  void report_layer(TSNode head) {
    Act act = act_of(ctx.model.callee_leaf(head));
    LossKind loss = LossKind::None;
    if (!is_null(ce_use) && (act == Act::Softmax || is_null(nll_use))) loss = LossKind::CrossEntropy;
    else if (!is_null(nll_use) && act == Act::Softmax) loss = LossKind::Nll;
    if (loss == LossKind::None) return;
    if (loss == LossKind::Nll && (!is_null(log_use) || !is_null(skorch_classifier))) {
      TSNode why = !is_null(log_use) ? log_use : skorch_classifier;
      stay_silent("TG005", head,
                  !is_null(log_use)
                      ? "the file takes " + quote_code(text(log_use)) + ": the probabilities may become log-probabilities before the NLL loss"
                      : "skorch's NeuralNetClassifier takes the log of the module's probabilities before an NLLLoss criterion",
                  {{range_of(why), quote_code(text(why))}});
      return;
    }
    TSNode use = loss == LossKind::CrossEntropy ? ce_use : nll_use;
    Finding f;
    f.code = "TG005";
    f.severity = Severity::Warning;
    f.category = act == Act::LogSoftmax ? Category::PerformanceWarn : Category::ConvergenceBug;
    f.range = range_of(head);
    std::string layer = quote_code(text(head));
    f.message = loss == LossKind::CrossEntropy
                    ? "The model's last layer " + layer + " already normalises, and the loss in this "
                      "file is cross-entropy, which applies log-softmax again" +
                      (act == Act::Softmax ? ": scores are squashed toward uniform and the gradient weakens."
                                           : ": the same loss, with the normalisation computed twice.")
                    : "The model's last layer " + layer + " outputs probabilities, and the loss in this "
                      "file is NLL, which expects log-probabilities: it optimises the wrong quantity.";
    f.hint = loss == LossKind::CrossEntropy
                 ? "Remove the final activation so `forward` returns logits; apply softmax only for reporting."
                 : "End the model with `nn.LogSoftmax(dim=...)` instead, or return logits and use cross-entropy.";
    f.evidence.push_back({range_of(head), layer + " is the last layer of this `nn.Sequential`"});
    f.evidence.push_back({range_of(use), quote_code(text(use)) + " is the loss used in this file"});
    out.push_back(std::move(f));
  }
};

}  // namespace

std::unique_ptr<RuleCheck> make_tg005(const RuleContext& ctx) { return std::make_unique<Checker>(ctx); }

}  // namespace preflight::rules
