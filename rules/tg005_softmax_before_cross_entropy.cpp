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
// Exempt: log_softmax into NLL; a negated NLL (a gather of the target's input, TG005-NX09);
// softmax used for reporting only; Softmax layers that are not
// the last layer of a Sequential (attention); criteria and activations whose binding cannot be
// seen (parameters, other files); a same-named variable in another function (TG005-P09).
// log_softmax into cross-entropy is numerically the same loss: a warning about redundant work.
// Model path: the loss's input is `model(x)` (or a name bound to it, or rows of it), `model`
// holds a module class of this file (its binding, through `.to(device)`; or, for a parameter,
// what every call of the routine in this file passes), and every return of that class's
// `forward` is softmax / log_softmax -> one finding per forward, on the training loss
// (TG005-PX21). A criterion parameter is read the same way. Read through callers, the
// finding is a warning that names that step (another module may call the routine).
// Exempt: callers that pass different classes or losses, classes not in this file (NX21).
#include <algorithm>
#include <cctype>
#include <optional>

#include "analysis/local_calls.h"
#include "analysis/names.h"
#include "analysis/reaching.h"
#include "rules/callable_binding.h"
#include "rules/local_callers.h"
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

// What one call of a routine of this file passes for one of its parameters: the argument
// (null when the call leaves it to its default) and the caller's scope.
struct PassedArgument {
  TSNode call{};
  TSNode argument{};
  int scope = -1;
};

struct LossCall {
  TSNode call{};
  LossKind kind = LossKind::None;
  TSNode criterion{};  // the binding's value (`nn.CrossEntropyLoss()`), null for F.cross_entropy
  TSNode caller_call{};  // the criterion is a parameter: a call of its routine that passes it
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

  // A loss fed the output of a local module class whose `forward` normalises: reported once
  // per activation, at the activation in `forward`, with the first such loss.
  struct ForwardFeed {
    LossCall loss;
    TSNode model_call{};   // `model(data)`
    TSNode input{};        // the loss's input (`output`, `output[mask]`, or the call itself)
    TSNode activation{};   // the softmax / log_softmax call `forward` returns
    Act act = Act::None;
    int cls = -1;
    TSNode model_site{};   // the constructor the model name is bound to
    TSNode caller_call{};  // a call of the loss's routine that passes the model (when read through callers)
  };
  std::vector<ForwardFeed> forward_feeds;
  // Calls of each function of this file, read once, and the callers a finding read, as
  // context facts (rules/local_callers.h).
  mutable LocalCallers callers{ctx.model, "TG005"};

  explicit Checker(const RuleContext& c) : ctx(c) {}

  std::string_view text(TSNode n) const { return text_of(n, ctx.source); }

  void enter(TSNode n, const WalkState& st) override {
    if (!is(n, k.call)) return;
    note_loss_mention(n);
    note_sequential_head(n);
    note_log_or_skorch(n);
    LossCall loss{n};
    loss.kind = loss_kind(n, st.scope, &loss.criterion);
    if (loss.kind == LossKind::None) loss.kind = parameter_criterion(n, st.scope, loss);
    if (loss.kind == LossKind::None) return;
    if (loss.kind == LossKind::Nll && negated(n)) {
      // NLL negated hands back the input at the target (`-F.nll_loss(probs, y)` is `probs[i, y_i]`):
      // a gather, not an objective (round 49: CSI's margin of the target's probability).
      stay_silent("TG005", n, "NLL is negated: it reads the input at each target (a gather), not a loss on it",
                  {{range_of(n), quote_code(text(n)) + " is negated"}});
      return;
    }
    TSNode input = positional_arg(n, 0);
    if (is_null(input)) input = keyword_arg(n, "input", ctx.source);
    if (is_null(input)) return;
    check_input(loss, unparenthesize(input), st.scope);
  }

  // `-call`, through parentheses: the operand of a unary minus.
  bool negated(TSNode call) const {
    TSNode p = ctx.model.parent(call);
    while (is(p, k.parenthesized_expression)) p = ctx.model.parent(p);
    return is(p, k.unary_operator) && text(field(p, k.f_operator)) == "-";
  }

  // A softmax layer is judged against the first loss of the file, wherever it is.
  void context(std::vector<ContextFact>& facts) const override {
    note_context(facts, "TG005 cross-entropy", ce_use);
    note_context(facts, "TG005 NLL", nll_use);
    note_context(facts, "TG005 log", log_use);
    note_context(facts, "TG005 skorch", skorch_classifier);
    callers.add_facts(facts);
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
    // One finding per activation, on the training loss when there is one (an evaluation
    // loss under no_grad reads the same output).
    std::vector<const void*> reported;
    for (int pass = 0; pass < 2; ++pass)
      for (const ForwardFeed& feed : forward_feeds) {
        if (pass == 0 && ctx.provenance.in_no_grad(feed.loss.call)) continue;
        if (std::find(reported.begin(), reported.end(), node_id(feed.activation)) != reported.end()) continue;
        reported.push_back(node_id(feed.activation));
        out.push_back(forward_finding(feed));
      }
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

  // What each call of `function` in this file passes for its parameter `param`.
  std::vector<PassedArgument> passed_to(int function, std::string_view param) const {
    std::vector<PassedArgument> passed;
    const FunctionInfo& fn = ctx.model.functions()[function];
    std::optional<size_t> index = parameter_index(fn, param);
    if (!index) return passed;
    for (TSNode call : callers.of(function))
      passed.push_back({call, argument_for(fn, call, *index, ctx.source), ctx.model.scope_enclosing(call)});
    return passed;
  }

  // `criterion(output, y)` where `criterion` is a parameter of the routine and every call of
  // the routine in this file passes the same kind of loss (`nn.NLLLoss()`, or a name bound to
  // one): that loss, read through the callers (a weak step: another module may pass another).
  LossKind parameter_criterion(TSNode call, int scope, LossCall& loss) const {
    TSNode callee = ctx.model.callee_of(call);
    int f = ctx.model.enclosing_function(scope);
    if (!is(callee, k.identifier) || f < 0 || !ctx.model.parameter(text(callee), scope)) return LossKind::None;
    std::vector<PassedArgument> passed = passed_to(f, text(callee));
    LossKind kind = LossKind::None;
    for (const PassedArgument& a : passed) {
      if (is_null(a.argument)) return LossKind::None;
      TSNode site{};
      LossKind k2 = LossKind::None;
      TSNode arg = unparenthesize(a.argument);
      if (is(arg, k.call)) {
        k2 = kind_of_loss(ctx.model.callee_leaf(arg));
        site = arg;
      } else {
        ResolvedCallable r = binding.resolve(arg, a.scope);
        k2 = kind_of_loss(r.leaf);
        site = r.site;
      }
      if (k2 == LossKind::None || (kind != LossKind::None && k2 != kind)) return LossKind::None;
      kind = k2;
      if (is_null(loss.criterion)) loss.criterion = site;
    }
    if (kind != LossKind::None) loss.caller_call = passed.front().call;
    return kind;
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
    TSNode written = input;
    // `output[mask]`: a selection of the rows keeps what they are.
    while (is(input, k.subscript)) input = unparenthesize(field(input, k.f_value));
    if (is(input, k.call)) {
      Activation a = activation_of(input, scope);
      if (mismatch(loss.kind, a.kind)) out.push_back(inline_finding(loss, input, a));
      else if (a.kind == Act::None) check_forward(loss, input, written, scope);
      return;
    }
    auto dotted = dotted_name(input, ctx.source);
    if (!dotted) return;
    std::vector<TSNode> values = reaching_values(*dotted, input, scope);
    if (values.size() == 1 && is(unparenthesize(values.front()), k.call) &&
        activation_of(unparenthesize(values.front()), scope).kind == Act::None)
      return check_forward(loss, unparenthesize(values.front()), written, scope);  // `output = model(x)`
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

  // --- a model whose forward normalises -------------------------------------------------

  // `model(x)` where `model` is bound to a module class of this file (directly, or as the
  // parameter every call of the routine passes one to) whose `forward` returns softmax /
  // log_softmax on every return (the seeded `output = F.softmax(x, dim=1); return output` of a
  // classifier trained with `F.nll_loss`).
  void check_forward(const LossCall& loss, TSNode call, TSNode written, int scope) {
    ForwardFeed feed{loss, call, written};
    feed.cls = module_class_of(field(call, k.f_function), scope, 0, feed);
    if (feed.cls < 0) return;
    feed.act = forward_activation(feed.cls, feed.activation);
    if (mismatch(loss.kind, feed.act)) forward_feeds.push_back(feed);
  }

  // The module class of this file a value holds: a constructor call (through `.to(device)`,
  // `.cuda()`, ...), a name every binding of which holds the same one (`model = model.to(d)`
  // keeps it), or a parameter every call of its function in this file passes one for. -1
  // when not shown.
  int module_class_of(TSNode v, int scope, int depth, ForwardFeed& feed) const {
    if (depth > 3 || is_null(v)) return -1;
    v = ctx.model.module_chain_base(v);
    if (is(v, k.call)) {
      TSNode callee = ctx.model.callee_of(v);
      int cls = is(callee, k.identifier) ? ctx.model.class_named(text(callee)) : -1;
      if (cls < 0 || !ctx.model.classes()[static_cast<size_t>(cls)].is_module) return -1;
      if (is_null(feed.model_site)) feed.model_site = v;
      return cls;
    }
    auto dotted = dotted_name(v, ctx.source);
    if (!dotted) return -1;
    std::vector<BindingSite> sites = binding.bindings_of(*dotted, scope);
    if (!sites.empty()) {
      int cls = -1;
      for (const BindingSite& b : sites) {
        if (b.arity > 1 || is_null(b.value)) return -1;
        if (rebinds_itself(b.value, *dotted)) continue;  // `model = model.to(device)`
        int c = module_class_of(b.value, scope, depth + 1, feed);
        if (c < 0 || (cls >= 0 && c != cls)) return -1;
        cls = c;
      }
      return cls;
    }
    int f = ctx.model.enclosing_function(scope);
    if (f < 0 || dotted->find('.') != std::string::npos || !ctx.model.parameter(*dotted, scope)) return -1;
    std::vector<PassedArgument> passed = passed_to(f, *dotted);
    if (passed.empty()) return -1;
    int cls = -1;
    for (const PassedArgument& a : passed) {
      int c = is_null(a.argument) ? -1 : module_class_of(a.argument, a.scope, depth + 1, feed);
      if (c < 0 || (cls >= 0 && c != cls)) return -1;
      cls = c;
    }
    if (is_null(feed.caller_call)) feed.caller_call = passed.front().call;
    return cls;
  }

  bool rebinds_itself(TSNode value, const std::string& dotted) const {
    auto d = dotted_name(ctx.model.module_chain_base(value), ctx.source);
    return d && *d == dotted;
  }

  // What the class's `forward` returns on every return statement: softmax or log_softmax
  // (inline, or a name every reaching assignment of which is one), else None. `where`
  // receives the activation call of the last return read.
  Act forward_activation(int cls, TSNode& where) const {
    const std::vector<int>* fs = ctx.model.functions_named("forward");
    if (!fs) return Act::None;
    for (int f : *fs) {
      const FunctionInfo& fn = ctx.model.functions()[f];
      if (fn.class_index != cls) continue;
      if (fn.returns.empty()) return Act::None;
      Act kind = Act::None;
      for (TSNode ret : fn.returns) {
        TSNode v = unparenthesize(ts_node_named_child(ret, 0));
        TSNode act_call{};
        if (is(v, k.call)) act_call = v;
        else if (is(v, k.identifier)) {
          std::vector<BindingSite> sites = reaching_sites(ctx.model, text(v), ret, fn.scope);
          if (sites.size() != 1 || sites.front().arity != 1) return Act::None;
          act_call = unparenthesize(sites.front().value);
        }
        Act a = is(act_call, k.call) ? activation_of(act_call, fn.scope).kind : Act::None;
        if (a == Act::None || (kind != Act::None && a != kind)) return Act::None;
        kind = a;
        where = act_call;
      }
      return kind;
    }
    return Act::None;
  }

  Finding forward_finding(const ForwardFeed& feed) const {
    Finding f = base_finding(feed.loss, feed.input, feed.act);
    const std::string& cls = ctx.model.classes()[static_cast<size_t>(feed.cls)].name;
    describe(f, feed.loss, quote_code(text(feed.model_call)) + ", whose `" + cls + ".forward` returns " + quote_code(text(feed.activation)) + ",", feed.act);
    f.hint = feed.loss.kind == LossKind::Nll
                 ? "Return `log_softmax` from `forward` (or return the scores and use cross-entropy)."
                 : "Return the scores from `forward` and apply softmax only where probabilities are reported.";
    f.evidence.push_back({range_of(feed.model_call), quote_code(text(feed.model_call)) + " is the loss's input"});
    if (!is_null(feed.model_site))
      f.evidence.push_back({range_of(feed.model_site), quote_code(text(feed.model_site)) + " is the model (" + quote_code(cls) + ", defined in this file)"});
    if (!is_null(feed.caller_call)) {
      f.evidence.push_back({range_of(feed.caller_call),
                            "the model is a parameter: every call in this file (" + quote_code(text(feed.caller_call)) +
                                " and the others) passes a " + quote_code(cls) +
                                ", but a caller elsewhere may pass another model (weak step: a warning)"});
      f.severity = Severity::Warning;
    }
    f.evidence.push_back({range_of(feed.activation), quote_code(text(feed.activation)) + " computes " +
                                                         act_name(feed.act) + " and is what `forward` returns"});
    return f;
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
    if (!is_null(loss.caller_call)) {
      f.evidence.push_back({range_of(loss.caller_call),
                            "the criterion is a parameter: every call in this file (" +
                                quote_code(text(loss.caller_call)) +
                                " and the others) passes this loss, but a caller elsewhere may pass another "
                                "(weak step: a warning)"});
      f.severity = Severity::Warning;
    }
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
