// TG006 bce-activation-mismatch: binary cross-entropy paired with the wrong activation. The
// with-logits loss squashes its input itself, so a sigmoid before it confines predictions to a
// narrow band; plain BCE needs probabilities, so raw scores make it fail (and a sigmoid before
// it is correct but numerically fragile).
//
// Evidence chain: the loss call and its kind (with-logits or plain: its leaf, or the binding of
// the criterion, `self.crit = ...` in any method of the class) -> its input and the sigmoid
// behind it (an inline call, judged by the binding of its callee, or a variable whose reaching
// assignments in the same function all apply one) -> for raw scores into plain BCE: the value
// carries a graph, and nothing on its definition chain (the assignments reaching it, local
// helpers it calls, the local model class it comes from) squashes it into [0, 1].
// Tuple outputs: a variable unpacked from a model call (`x_rec, mu, log_var = model(x)`) is
// followed to element i of the model's `forward` when `model` is bound (through wrappers such
// as `.to(device)` / DDP) to a module class of this file and every `return` of that forward is
// a tuple literal of the unpacking's length; element i is then judged like any value, in the
// forward's scope. Each step is read from bindings, so the verdict keeps its usual severity;
// anything unresolved (a parameter model, an imported class, a forward returning a name) keeps
// the rule quiet, as before. Through a loss helper: BCE's input is a parameter of a function
// whose every call in this file passes such an unpacked output (`loss_function(recon_batch,
// ...)`): a warning, since another module may call the helper (TG006-PX18). A single output
// into the with-logits loss from a local model class whose forward returns a sigmoid on every
// path: an error, a warning when the model is a parameter read through its callers (PX19).
// Model layer: an `nn.Sequential` ending in `nn.Sigmoid()` in a file that uses the
// with-logits loss. When the Sequential is built in a module class of this file that another
// module class of this file holds as a part (`self.cond = AttentionLayer(...)`) and the loss is
// not in that class, its output is an intermediate whose way to the loss was not followed
// (attention weights, a gate): a note that names the holder.
// A sigmoid into plain BCE inside the module's `if __name__ == "__main__":` block, when
// nothing there runs a backward: a demo computing one loss, a note (TG006-NX17).
// Exempt: criteria whose binding cannot be seen; inputs squashed by sigmoid, softmax or a
// clamp anywhere on their chain; models defined in this file whose body applies one;
// parameters (their values cannot be seen); constructors (`nn.BCELoss(weight)`); a Sequential
// bound to `self.X` whose every call feeds another computation as an operand or a non-loss
// argument (a gate handed to `lerp`, a factor in a product), never returned (TG006-NX15,
// recorded as a silence).
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

enum class LossKind { None, WithLogits, Plain };

// How a sigmoid call is written, which decides what removing it leaves behind.
enum class Form { Function, Layer, TensorMethod, Unknown };

struct Sigmoid {
  bool found = false;
  Form form = Form::Unknown;
  TSNode binding{};  // the layer's constructor (`nn.Sigmoid()`), when one was read
};

struct LossCall {
  TSNode call{};
  LossKind kind = LossKind::None;
  TSNode criterion{};  // the binding's value (`nn.BCELoss()`), null for the functional
};

// Calls whose result lies in [0, 1] (or is clamped there): evidence the input is not raw.
bool squashing_leaf(std::string_view leaf) {
  static constexpr std::string_view kLeaves[] = {"sigmoid", "Sigmoid", "sigmoid_", "softmax",
                                                 "Softmax", "hardsigmoid", "Hardsigmoid",
                                                 "clamp", "clamp_", "clip", "expit"};
  return std::find(std::begin(kLeaves), std::end(kLeaves), leaf) != std::end(kLeaves);
}

struct Checker final : RuleCheck {
  const RuleContext& ctx;
  CallableBinding binding{ctx.model};  // what callees are bound to
  const Kinds& k = kinds();
  std::vector<Finding> out;
  struct LayerHead {
    TSNode head{};        // nn.Sigmoid() ending an nn.Sequential
    int class_index = -1;  // the class whose method builds it
  };
  std::vector<LayerHead> layer_heads;
  TSNode logits_use{};              // first with-logits loss mention, for the layer case
  LocalCallers callers{ctx.model, "TG006"};  // calls of the file's functions, and the facts read

  explicit Checker(const RuleContext& c) : ctx(c) {}

  std::string_view text(TSNode n) const { return text_of(n, ctx.source); }

  void enter(TSNode n, const WalkState& st) override {
    if (!is(n, k.call)) return;
    note_layer_case(n, st.scope);
    LossCall loss{n};
    loss.kind = loss_kind(n, st.scope, &loss.criterion);
    if (loss.kind == LossKind::None) return;
    TSNode input = positional_arg(n, 0);
    if (is_null(input)) input = keyword_arg(n, "input", ctx.source);
    if (is_null(input)) return;
    check_input(loss, unparenthesize(input), st.scope);
  }

  void context(std::vector<ContextFact>& facts) const override {
    note_context(facts, "TG006 with-logits loss", logits_use);
    callers.add_facts(facts);
    if (TSNode module = squashing_module(); !is_null(module))
      note_context(facts, "TG006 squashing module", field(module, k.f_name));
    // A layer finding reads the class that holds its Sequential's class as a part, which names
    // it, not the other way round: both sites stay in every slice while they decide a finding.
    if (is_null(logits_use)) return;
    for (const LayerHead& h : layer_heads) {
      note_context(facts, "TG006 sigmoid layer", h.head);
      note_context(facts, "TG006 sigmoid layer's holder", part_holder(h.class_index));
    }
  }

  void finish(std::vector<Finding>& sink) override {
    if (!is_null(logits_use))
      for (const LayerHead& h : layer_heads) {
        if (TSNode use = intermediate_use(h); !is_null(use)) {
          stay_silent("TG006", h.head,
                      "the Sequential's output is an intermediate: every call of it in its class is used "
                      "inside the method (a gate, a mixing weight), never returned, so it is not what the "
                      "with-logits loss receives",
                      {{range_of(use), quote_code(text(use)) + " is consumed here, not returned"}});
          continue;
        }
        out.push_back(layer_finding(h));
      }
    for (Finding& f : out) sink.push_back(std::move(f));
  }

  // --- bindings --------------------------------------------------------------------------

  static std::string base_of(std::string_view dotted) {
    return std::string(dotted.substr(0, dotted.find('.')));
  }

  // --- the loss --------------------------------------------------------------------------

  static LossKind kind_of_loss(std::string_view leaf) {
    if (leaf == "binary_cross_entropy_with_logits" || leaf == "BCEWithLogitsLoss")
      return LossKind::WithLogits;
    if (leaf == "binary_cross_entropy" || leaf == "BCELoss") return LossKind::Plain;
    return LossKind::None;
  }

  // A call that applies BCE, and the binding that says so (null for the functional). A
  // constructor (`nn.BCELoss(weight)`) is not one: its positional argument is a weight. A
  // function defined in this file under the functional's name is the author's own loss.
  LossKind loss_kind(TSNode call, int scope, TSNode* site) const {
    return kind_of_loss(binding.applied_callable(
        call, scope, {"binary_cross_entropy", "binary_cross_entropy_with_logits"}, site));
  }

  // --- the sigmoid -----------------------------------------------------------------------

  // What an inline call computes, reading the binding of its callee before its name.
  Sigmoid sigmoid_of(TSNode call, int scope) const {
    TSNode callee = field(call, k.f_function);
    if (is(callee, k.call))  // nn.Sigmoid()(x)
      return {ctx.model.callee_leaf(callee) == "Sigmoid", Form::Layer, callee};
    std::string_view leaf = ctx.model.callee_leaf(call);
    auto dotted = dotted_name(callee, ctx.source);
    bool module_fn = is(callee, k.identifier) || (dotted && ctx.model.import_of(base_of(*dotted)));
    if (!module_fn && leaf == "sigmoid" && is_null(positional_arg(call, 0)))
      return {true, Form::TensorMethod, {}};  // z.sigmoid(), net(x).sigmoid()
    if (!dotted) return {};
    ResolvedCallable r = binding.resolve(callee, scope);
    if (r.bound) return {r.leaf == "Sigmoid" || r.leaf == "sigmoid", Form::Layer, r.site};
    if (leaf != "sigmoid") return {};
    return {true, module_fn ? Form::Function : Form::Unknown, {}};
  }

  // Plain BCE after a sigmoid whose argument is a sum or difference of a few bounded values
  // (outputs of sigmoid / tanh / softmax, directly, through names or a local helper's returns,
  // and number literals): `torch.sigmoid(pos_score - neg_score)` of two sigmoid scores (round
  // 48: a sequential recommender's pretraining losses) lies in (σ(-2), σ(2)), far from where
  // BCE's log loses precision. Recorded as a silence (TG006-NX16).
  bool cannot_saturate(const LossCall& loss, TSNode input, const std::vector<TSNode>& sigmoids, int scope) {
    if (loss.kind != LossKind::Plain) return false;
    for (TSNode call : sigmoids) {
      call = unparenthesize(call);
      TSNode callee = field(call, k.f_function);
      TSNode arg = positional_arg(call, 0);
      if (is_null(arg) && is(callee, k.attribute)) arg = field(callee, k.f_object);  // z.sigmoid()
      int terms = 0;
      if (is_null(arg) || !bounded(unparenthesize(arg), scope, 0, terms) || terms > kBoundedTerms) return false;
    }
    stay_silent("TG006", input,
                "the sigmoid's argument is a sum or difference of at most " + std::to_string(kBoundedTerms) +
                    " values that are themselves bounded (sigmoid, tanh or softmax outputs, or numbers), so the "
                    "sigmoid stays far from 0 and 1 and plain BCE loses no precision",
                {{range_of(sigmoids.back()), quote_code(text(sigmoids.back())) + " squashes a bounded argument"}});
    return true;
  }
  static constexpr int kBoundedTerms = 4;

  bool bounded(TSNode e, int scope, int depth, int& terms) const {
    e = unparenthesize(e);
    if (is_null(e) || depth > 2) return false;
    if (is(e, k.integer) || is(e, k.float_)) return ++terms, true;
    if (is(e, k.unary_operator)) return bounded(ts_node_named_child(e, 0), scope, depth, terms);
    if (is(e, k.binary_operator)) {
      std::string_view op = text(field(e, k.f_operator));
      if (op != "+" && op != "-") return false;
      return bounded(field(e, k.f_left), scope, depth, terms) && bounded(field(e, k.f_right), scope, depth, terms);
    }
    if (is(e, k.identifier)) {
      std::vector<TSNode> values = reaching_values(text(e), e, scope);
      if (values.empty()) return false;
      int most = 0;
      for (TSNode v : values) {
        int t = 0;
        if (!bounded(v, scope, depth + 1, t)) return false;
        most = std::max(most, t);
      }
      return terms += most, true;
    }
    if (!is(e, k.call)) return false;
    if (bounded_activation(e, scope)) return ++terms, true;
    const FunctionInfo* fn = local_callee(ctx.model, e);
    if (!fn || fn->returns.empty()) return false;
    int most = 0;
    for (TSNode ret : fn->returns) {
      int t = 0;
      if (!bounded(ts_node_named_child(ret, 0), fn->scope, depth + 1, t)) return false;
      most = std::max(most, t);
    }
    return terms += most, true;
  }

  // sigmoid / tanh / softmax, as a function of torch (or `F`) or a tensor method.
  bool bounded_activation(TSNode call, int scope) const {
    if (sigmoid_of(call, scope).found) return true;
    std::string_view leaf = ctx.model.callee_leaf(call);
    if (leaf != "tanh" && leaf != "softmax") return false;
    auto q = ctx.model.qualified_callee(call);
    return (q && q->starts_with("torch.")) || is(field(call, k.f_function), k.attribute);  // x.tanh(), p.softmax(-1)
  }

  // --- variables -------------------------------------------------------------------------

  std::vector<TSNode> reaching_values(std::string_view dotted, TSNode use, int scope) const {
    return analysis::reaching_values(ctx.model, dotted, use, scope);
  }

  // Does anything on the definition chain of `e` put it into [0, 1]? Follows names to their
  // reaching assignments (at most `hops` deep), local helpers to their bodies, and local
  // models to their construction and class.
  bool squashed(TSNode e, int scope, int hops) const {
    if (is_null(e)) return false;
    if (is(e, k.call) && call_squashes(e, scope)) return true;
    if ((is(e, k.identifier) || is(e, k.attribute)) && hops < 4) {
      auto d = dotted_name(e, ctx.source);
      if (d && (d->find('.') == std::string::npos || d->starts_with("self.")))
        for (TSNode v : reaching_values(*d, e, scope))
          if (squashed(v, scope, hops + 1)) return true;
    }
    bool found = false;
    for_each_named_child(e, [&](TSNode c) { found = found || squashed(c, scope, hops); });
    return found;
  }

  bool call_squashes(TSNode call, int scope) const {
    TSNode callee = field(call, k.f_function);
    if (squashing_leaf(ctx.model.callee_leaf(call))) return true;
    if (is(callee, k.call) && squashing_leaf(ctx.model.callee_leaf(callee))) return true;
    if (sigmoid_of(call, scope).found) return true;
    if (int body = local_body(call, scope); body >= 0)
      return subtree_squashes(ctx.model.functions()[body].node);
    auto dotted = dotted_name(callee, ctx.source);
    if (!dotted || ctx.model.import_of(base_of(*dotted))) return false;  // a library function
    std::vector<TSNode> held = held_values(*dotted, callee, scope);
    // A model whose binding cannot be seen (a parameter) may be any module class of this file.
    if (held.empty()) return file_module_squashes();
    for (TSNode v : held) {
      if (subtree_squashes(v)) return true;  // nn.Sequential(..., nn.Sigmoid())
      if (built_by_unseen_code(v)) return true;  // its forward is in another file: not guessed
      int cls = is(v, k.call) ? ctx.model.class_named(ctx.model.callee_leaf(v)) : -1;
      if (cls >= 0 && subtree_squashes(ctx.model.classes()[cls].node)) return true;
    }
    return false;
  }

  // Every value a callee may hold, looking through wrappers that hand back their argument
  // (`fabric.setup(d, opt)`, `DDP(m)`, `accelerator.prepare(...)`, `.to(device)`).
  std::vector<TSNode> held_values(const std::string& dotted, TSNode callee, int scope) const {
    static constexpr std::string_view kWrappers[] = {
        "setup", "setup_module", "prepare", "prepare_model", "initialize", "DistributedDataParallel",
        "DataParallel", "DDP", "FSDP", "FullyShardedDataParallel", "compile", "to", "cuda", "float",
        "half", "train", "eval"};
    std::vector<BindingSite> sites = binding.bindings_of(dotted, scope);
    if (sites.empty() && is(callee, k.attribute) && text(field(callee, k.f_object)) != "self")
      sites = binding.class_attribute_bindings(text(field(callee, k.f_attribute)));
    std::vector<TSNode> held;
    for (const BindingSite& b : sites) {
      TSNode v = unparenthesize(b.value);
      int pos = b.arity > 1 ? b.position : 0;
      for (int hops = 0; hops < 4 && is(v, k.call); ++hops) {
        std::string_view leaf = ctx.model.callee_leaf(v);
        if (std::find(std::begin(kWrappers), std::end(kWrappers), leaf) == std::end(kWrappers)) break;
        TSNode callee_v = field(v, k.f_function);
        bool method_chain = leaf == "to" || leaf == "cuda" || leaf == "float" || leaf == "half" ||
                            leaf == "train" || leaf == "eval";
        TSNode next = method_chain && is(callee_v, k.attribute) ? field(callee_v, k.f_object)
                      : leaf == "initialize" ? keyword_arg(v, "model", ctx.source)
                                             : positional_arg(v, static_cast<unsigned>(pos));
        if (is_null(next)) next = positional_arg(v, 0);
        if (is_null(next)) break;
        v = unparenthesize(next);
        pos = 0;
      }
      held.push_back(v);
    }
    return held;
  }

  // `Discriminator(...)` imported from the project's own module: its final activation is in a
  // file this check cannot see. Library models (torch, torchvision, timm, transformers) return
  // raw scores.
  bool built_by_unseen_code(TSNode v) const {
    if (!is(v, k.call)) return false;
    auto q = ctx.model.qualified_name(field(v, k.f_function));
    auto d = dotted_name(field(v, k.f_function), ctx.source);
    if (!q || !d || !ctx.model.import_of(base_of(*d))) return false;
    for (std::string_view lib : {"torch", "torchvision", "timm", "transformers"})
      if (*q == lib || q->starts_with(std::string(lib) + ".")) return false;
    return true;
  }

  bool file_module_squashes() const { return !is_null(squashing_module()); }

  // The first nn.Module subclass of the file whose forward squashes its output, if any.
  TSNode squashing_module() const {
    for (const ClassInfo& c : ctx.model.classes())
      if (c.is_module && subtree_squashes(c.node)) return c.node;
    return TSNode{};
  }

  // A helper defined once in this file (`helper(x)`, `self.predict(x)`), or -1.
  int local_body(TSNode call, int scope) const {
    const FunctionInfo* f = local_callee(ctx.model, call);
    if (!f) return -1;
    // `self.predict(x)` must be a method of this class, not a same-named one elsewhere.
    bool method_of_this_class = f->class_index == ctx.model.enclosing_class(scope);
    if (!is(field(call, k.f_function), k.identifier) && !method_of_this_class) return -1;
    return ctx.model.function_of(f->node);
  }

  bool subtree_squashes(TSNode n) const {
    if (is(n, k.call)) {
      TSNode callee = field(n, k.f_function);
      if (squashing_leaf(ctx.model.callee_leaf(n))) return true;
      if (is(callee, k.call) && squashing_leaf(ctx.model.callee_leaf(callee))) return true;
    }
    bool found = false;
    for_each_named_child(n, [&](TSNode c) { found = found || subtree_squashes(c); });
    return found;
  }

  // --- verdicts --------------------------------------------------------------------------

  // --- tuple outputs of a model of this file ---------------------------------------------

  // Element `position` of what a local model's forward returns, reached from one unpacking.
  struct Element {
    TSNode expr{};     // the element in the return's tuple
    int scope = -1;    // the forward's scope
    std::vector<EvidenceStep> chain;  // unpacking -> model binding -> the forward's return
  };

  // The forward elements a variable unpacked from a model call may hold; empty when any step
  // cannot be read from bindings.
  std::vector<Element> unpacked_elements(const std::string& dotted, TSNode use, int scope) const {
    std::vector<BindingSite> sites = reaching_sites(ctx.model, dotted, use, scope);
    std::vector<Element> out_elements;
    for (const BindingSite& site : sites) {
      TSNode call = unparenthesize(site.value);
      if (site.arity < 2 || site.position < 0 || !is(call, k.call)) return {};
      TSNode callee = field(call, k.f_function);
      auto model_name = dotted_name(callee, ctx.source);
      if (!model_name || ctx.model.import_of(base_of(*model_name))) return {};
      std::vector<TSNode> held = held_values(*model_name, callee, scope);
      if (held.empty()) return {};
      for (TSNode v : held) {
        int cls = local_model_class(v);
        if (cls < 0) return {};
        const FunctionInfo* forward = forward_of(cls);
        if (!forward || forward->returns.empty()) return {};
        for (TSNode ret : forward->returns) {
          TSNode e = tuple_element(ret, site.position, site.arity);
          if (is_null(e)) return {};
          Element el{e, forward->scope, {}};
          el.chain.push_back({range_of(call), quote_code(dotted) + " is element " +
                                                  std::to_string(site.position) + " of what " +
                                                  quote_code(text(call)) + " returns"});
          el.chain.push_back({range_of(v), quote_code(*model_name) + " is bound to " + quote_code(text(v)) +
                                               ", a module class of this file"});
          el.chain.push_back({range_of(ret), quote_code(ctx.model.classes()[cls].name + ".forward") +
                                                 " returns " + quote_code(text(ts_node_named_child(ret, 0))) +
                                                 ": element " +
                                                 std::to_string(site.position) + " is " + quote_code(text(e))});
          out_elements.push_back(std::move(el));
        }
      }
    }
    return out_elements;
  }

  // `VAE(...)` where `VAE` is an nn.Module subclass defined in this file, else -1.
  int local_model_class(TSNode v) const {
    if (!is(v, k.call) || !is(field(v, k.f_function), k.identifier)) return -1;
    int cls = ctx.model.class_named(text(field(v, k.f_function)));
    return cls >= 0 && ctx.model.classes()[cls].is_module ? cls : -1;
  }

  const FunctionInfo* forward_of(int cls) const {
    const std::vector<int>* fs = ctx.model.functions_named("forward");
    if (!fs) return nullptr;
    const FunctionInfo* found = nullptr;
    for (int f : *fs)
      if (ctx.model.functions()[f].class_index == cls) {
        if (found) return nullptr;  // redefined: which one runs is not read
        found = &ctx.model.functions()[f];
      }
    return found;
  }

  // Element `position` of `return a, b, c` (or `return (a, b, c)`) when the tuple has `arity`
  // elements and no splat; null otherwise.
  TSNode tuple_element(TSNode ret, int position, int arity) const {
    TSNode value = ts_node_named_child_count(ret) > 0 ? unparenthesize(ts_node_named_child(ret, 0)) : TSNode{};
    if (!is(value, k.expression_list) && !is(value, k.tuple)) return TSNode{};
    if (static_cast<int>(ts_node_named_child_count(value)) != arity) return TSNode{};
    TSNode e{};
    for (int i = 0; i < arity; ++i) {
      TSNode c = ts_node_named_child(value, static_cast<uint32_t>(i));
      if (is(c, k.list_splat) || is(c, k.comment)) return TSNode{};
      if (i == position) e = unparenthesize(c);
    }
    return e;
  }

  // Does this element apply a sigmoid: inline, or a local name whose reaching assignments in
  // the forward all do? Returns the sigmoid call, or null.
  TSNode element_sigmoid(TSNode e, int scope) const {
    if (is(e, k.call)) return sigmoid_of(e, scope).found ? e : TSNode{};
    auto d = dotted_name(e, ctx.source);
    if (!d) return TSNode{};
    std::vector<TSNode> values = reaching_values(*d, e, scope);
    for (TSNode v : values)
      if (!is(unparenthesize(v), k.call) || !sigmoid_of(unparenthesize(v), scope).found) return TSNode{};
    return values.empty() ? TSNode{} : unparenthesize(values.back());
  }

  void check_unpacked(const LossCall& loss, TSNode input, const std::string& dotted, int scope) {
    std::vector<Element> elements = unpacked_elements(dotted, input, scope);
    if (elements.empty()) return;
    bool all_sigmoid = true;
    TSNode sigmoid{};
    for (const Element& el : elements) {
      TSNode s = element_sigmoid(el.expr, el.scope);
      all_sigmoid = all_sigmoid && !is_null(s);
      if (!is_null(s)) sigmoid = s;
    }
    // A model whose forward ends in a sigmoid feeding plain BCE is the usual pairing (a VAE
    // decoder, a DCGAN discriminator): only the with-logits loss makes it a mismatch.
    if (all_sigmoid && loss.kind == LossKind::WithLogits) {
      Finding f = sigmoid_finding(loss, input, Sigmoid{true}, TSNode{}, false);
      for (const EvidenceStep& step : elements.front().chain) f.evidence.push_back(step);
      f.evidence.push_back({range_of(sigmoid), quote_code(text(sigmoid)) + " applies a sigmoid"});
      out.push_back(std::move(f));
      return;
    }
    if (all_sigmoid || loss.kind != LossKind::Plain) return;
    const Value* v = ctx.provenance.value_of(input);
    if (!v || !v->has_graph() || v->naming_only) return;
    for (const Element& el : elements)
      if (squashed(el.expr, el.scope, 0)) return;
    Finding f = base_finding(loss, input, Severity::Error);
    std::string name = quote_code(text(input));
    f.message = name + " reaches plain BCE, which needs probabilities in [0, 1], but the model's "
                "forward returns it without a sigmoid: raw scores make the run fail with an "
                "input-range error (or, on older PyTorch, produce nan) as soon as one is outside [0, 1].";
    f.hint = "Use `BCEWithLogitsLoss` / `binary_cross_entropy_with_logits` on the raw scores, or "
             "end that output of `forward` with a sigmoid.";
    for (const EvidenceStep& step : elements.front().chain) f.evidence.push_back(step);
    f.evidence.push_back({range_of(elements.front().expr),
                          quote_code(text(elements.front().expr)) + ": no sigmoid, softmax or clamp "
                          "on its chain in the forward, nor in a layer or helper of this file it comes from"});
    out.push_back(std::move(f));
  }

  // `def loss_function(recon_x, x, mu, logvar): F.binary_cross_entropy(recon_x, ...)` whose
  // every call in this file passes, for `recon_x`, a variable unpacked from a local model's
  // call (`recon_batch, mu, logvar = model(data)`) that the forward returns without a sigmoid
  // (pytorch/examples' VAE with its decoder's sigmoid dropped; issue 23's recall regression).
  // The callers are a weak step, since another module may call the helper with
  // probabilities: a warning. Quiet when any call passes something else.
  void check_through_callers(const LossCall& loss, TSNode input, const std::string& param, int scope) {
    int f = ctx.model.enclosing_function(scope);
    if (f < 0) return;
    const FunctionInfo& fn = ctx.model.functions()[f];
    std::optional<size_t> index = parameter_index(fn, param);
    if (!index) return;
    const std::vector<TSNode>& calls = callers.of(f);
    if (calls.empty()) return;
    std::vector<Element> first;
    TSNode first_argument{};
    bool any_graph = false;
    for (TSNode call : calls) {
      TSNode arg = unparenthesize(argument_for(fn, call, *index, ctx.source));
      if (!is(arg, k.identifier)) return;
      int at = ctx.model.scope_enclosing(call);
      // An evaluation call under no_grad passes the same raw tensor without a graph; one call
      // with a graph shows the values are the model's tensors.
      const Value* v = ctx.provenance.value_of(arg);
      if (!v || v->naming_only) return;
      any_graph = any_graph || v->has_graph();
      std::vector<Element> elements = unpacked_elements(std::string(text(arg)), arg, at);
      if (elements.empty()) return;
      for (const Element& el : elements)
        if (!is_null(element_sigmoid(el.expr, el.scope)) || squashed(el.expr, el.scope, 0)) return;
      if (first.empty()) {
        first = std::move(elements);
        first_argument = arg;
      }
    }
    if (!any_graph) return;
    Finding finding = base_finding(loss, input, Severity::Warning);
    finding.message = quote_code(text(input)) + " reaches plain BCE, which needs probabilities in [0, 1], but "
                      "every call of `" + fn.name + "` in this file passes an output the model's forward "
                      "returns without a sigmoid: raw scores make the run fail with an input-range error (or, "
                      "on older PyTorch, produce nan) as soon as one is outside [0, 1].";
    finding.hint = "Use `BCEWithLogitsLoss` / `binary_cross_entropy_with_logits` on the raw scores, or end "
                   "that output of `forward` with a sigmoid.";
    finding.evidence.push_back({range_of(first_argument),
                                quote_code(text(ctx.model.parent(ctx.model.parent(first_argument)))) + " passes " +
                                    quote_code(text(first_argument)) + " as `" + param + "`"});
    for (const EvidenceStep& step : first.front().chain) finding.evidence.push_back(step);
    finding.evidence.push_back({range_of(first.front().expr),
                                quote_code(text(first.front().expr)) + ": no sigmoid, softmax or clamp on its "
                                "chain in the forward, nor in a layer or helper of this file it comes from"});
    finding.evidence.push_back({range_of(field(fn.node, k.f_name)),
                                "`" + param + "` is a parameter: every call of `" + fn.name + "` in this file ("
                                + std::to_string(calls.size()) + ") passes such an output, but a caller elsewhere "
                                "may pass probabilities (weak step: a warning)"});
    out.push_back(std::move(finding));
  }

  // `outputs = model(x1, x2).squeeze()` into the with-logits loss, where `model` holds a
  // module class of this file whose `forward` returns a sigmoid on every path (pytorch/
  // examples' Siamese network ends in `self.sigmoid(output)`). `model` bound in this routine:
  // an error; a parameter whose every call in this file passes such a model: a warning (a
  // caller elsewhere may pass another model). Shape-keeping methods between the call and the
  // loss (`.squeeze()`, `.view(-1)`) are looked through.
  void check_forward_sigmoid(const LossCall& loss, TSNode input, TSNode value, int scope) {
    TSNode call = unparenthesize(value);
    static constexpr std::string_view kShapeKeeping[] = {"squeeze", "unsqueeze", "view", "reshape", "flatten",
                                                         "float", "contiguous", "double"};
    while (is(call, k.call) && is(field(call, k.f_function), k.attribute) &&
           std::find(std::begin(kShapeKeeping), std::end(kShapeKeeping), ctx.model.callee_leaf(call)) !=
               std::end(kShapeKeeping))
      call = unparenthesize(field(field(call, k.f_function), k.f_object));
    if (!is(call, k.call) || !is(field(call, k.f_function), k.identifier)) return;
    std::string model_name(text(field(call, k.f_function)));
    if (ctx.model.import_of(model_name) || ctx.model.class_named(model_name) >= 0 ||
        ctx.model.functions_named(model_name))
      return;
    std::vector<TSNode> held;
    bool through_callers = false;  // `model` is a parameter, read through every call
    int f = ctx.model.enclosing_function(scope);
    if (ctx.model.parameter(model_name, scope)) {
      if (f < 0) return;
      const FunctionInfo& fn = ctx.model.functions()[f];
      std::optional<size_t> index = parameter_index(fn, model_name);
      through_callers = true;
      if (!index || callers.of(f).empty()) return;
      for (TSNode c : callers.of(f)) {
        TSNode arg = unparenthesize(argument_for(fn, c, *index, ctx.source));
        auto d = is(arg, k.identifier) ? dotted_name(arg, ctx.source) : std::nullopt;
        if (!d) return;
        std::vector<TSNode> h = held_values(*d, arg, ctx.model.scope_enclosing(c));
        if (h.empty()) return;
        held.insert(held.end(), h.begin(), h.end());
      }
    } else {
      held = held_values(model_name, field(call, k.f_function), scope);
    }
    if (held.empty()) return;
    TSNode sigmoid{};
    const FunctionInfo* forward = nullptr;
    int cls = -1;
    for (TSNode v : held) {
      int c = local_model_class(v);
      const FunctionInfo* fw = c < 0 ? nullptr : forward_of(c);
      if (!fw || fw->returns.empty() || (forward && fw != forward)) return;
      for (TSNode ret : fw->returns) {
        if (ts_node_named_child_count(ret) == 0) return;
        TSNode s2 = element_sigmoid(unparenthesize(ts_node_named_child(ret, 0)), fw->scope);
        if (is_null(s2)) return;
        sigmoid = s2;
      }
      forward = fw;
      cls = c;
    }
    Finding finding = sigmoid_finding(loss, input, Sigmoid{true}, TSNode{}, false);
    finding.evidence.push_back({range_of(value), quote_code(text(input)) + " is assigned " + quote_code(text(value))});
    finding.evidence.push_back({range_of(held.front()), "`" + model_name + "` holds " + quote_code(text(held.front())) +
                                                            ", a module class of this file"});
    finding.evidence.push_back({range_of(sigmoid), quote_code(ctx.model.classes()[cls].name + ".forward") +
                                                       " ends in " + quote_code(text(sigmoid)) + ", a sigmoid, on every path"});
    if (through_callers) {
      finding.severity = Severity::Warning;
      finding.evidence.push_back({range_of(field(ctx.model.functions()[f].node, k.f_name)),
                                  "`" + model_name + "` is a parameter: every call of `" +
                                      ctx.model.functions()[f].name + "` in this file passes this model, but a "
                                      "caller elsewhere may pass another (weak step: a warning)"});
    }
    out.push_back(std::move(finding));
  }

  void check_input(const LossCall& loss, TSNode input, int scope) {
    if (is(input, k.call)) {
      Sigmoid s = sigmoid_of(input, scope);
      if (s.found && !cannot_saturate(loss, input, {input}, scope)) out.push_back(sigmoid_finding(loss, input, s, TSNode{}));
      return;
    }
    auto dotted = dotted_name(input, ctx.source);
    if (!dotted) return;
    std::vector<TSNode> values = reaching_values(*dotted, input, scope);
    if (values.empty() && loss.kind == LossKind::Plain && is(input, k.identifier) &&
        ctx.model.parameter(*dotted, scope))
      return check_through_callers(loss, input, *dotted, scope);
    if (values.empty()) return check_unpacked(loss, input, *dotted, scope);
    bool all_sigmoid = !values.empty();
    for (TSNode v : values) {
      v = unparenthesize(v);
      all_sigmoid = all_sigmoid && is(v, k.call) && sigmoid_of(v, scope).found;
    }
    if (all_sigmoid && cannot_saturate(loss, input, values, scope)) return;
    if (all_sigmoid) return out.push_back(sigmoid_finding(loss, input, Sigmoid{true}, values.back()));
    if (loss.kind == LossKind::WithLogits && values.size() == 1) return check_forward_sigmoid(loss, input, values.front(), scope);
    if (loss.kind == LossKind::Plain && !values.empty()) check_raw_scores(loss, input, values, scope);
  }

  // Plain BCE on a graph-carrying value nothing squashes (TG006-P04; scoped to the value's own
  // chain, not the file, TG006-N05).
  void check_raw_scores(const LossCall& loss, TSNode input, const std::vector<TSNode>& values, int scope) {
    const Value* v = ctx.provenance.value_of(input);
    if (!v || !v->has_graph() || v->naming_only) return;
    for (TSNode value : values)
      if (squashed(value, scope, 0)) return;
    out.push_back(raw_scores_finding(loss, input, values.back(), *v));
  }

  // --- findings --------------------------------------------------------------------------

  Finding base_finding(const LossCall& loss, TSNode input, Severity severity) const {
    Finding f;
    f.code = "TG006";
    f.severity = severity;
    f.category = Category::ConvergenceBug;
    f.range = range_of(input);
    std::string call = quote_code(text(field(loss.call, k.f_function)));
    f.evidence.push_back({range_of(loss.call), loss.kind == LossKind::WithLogits
                                                   ? call + " is the with-logits BCE: it applies a sigmoid itself"
                                                   : call + " is plain BCE: it needs probabilities in [0, 1]"});
    if (!is_null(loss.criterion))
      f.evidence.push_back({range_of(loss.criterion), quote_code(text(loss.criterion)) +
                                                          " is the criterion this call applies"});
    return f;
  }

  // `value` is the reaching assignment for a variable input, null for an inline sigmoid (or,
  // with `inline_call` false, a sigmoid inside a model's forward, whose chain the caller adds).
  Finding sigmoid_finding(const LossCall& loss, TSNode input, const Sigmoid& s, TSNode value,
                          bool inline_call = true) const {
    bool logits = loss.kind == LossKind::WithLogits;
    Finding f = base_finding(loss, input, logits ? Severity::Error : Severity::Warning);
    std::string subject = quote_code(text(input));
    if (!is_null(value) || !inline_call) subject += ", produced by a sigmoid,";
    if (logits) {
      f.message = subject + " reaches the with-logits loss, which applies a sigmoid itself: the "
                  "second sigmoid confines predictions to a narrow band around 0.5 and weakens "
                  "the gradient, so training stalls.";
      f.hint = "Hand the loss the raw scores the sigmoid was applied to.";
    } else {
      f.message = subject + " reaches plain BCE: mathematically right, but the log of a sigmoid "
                  "loses precision and hits -inf (clamped to -100) on confident outputs, which "
                  "distorts the gradient exactly where the model is most wrong.";
      f.hint = "Drop the sigmoid and use `BCEWithLogitsLoss` / `binary_cross_entropy_with_logits` "
               "on the raw scores, which is computed stably.";
    }
    if (!is_null(s.binding))
      f.evidence.push_back({range_of(s.binding), quote_code(text(field(input, k.f_function))) +
                                                     " is bound to " + quote_code(text(s.binding))});
    if (!is_null(value))
      f.evidence.push_back({range_of(value), quote_code(text(input)) + " is assigned " +
                                                 quote_code(text(value)) + " on every path here"});
    else if (inline_call)
      f.evidence.push_back({range_of(input), quote_code(text(input)) + " applies a sigmoid"});
    if (logits && is_null(value) && inline_call)
      if (auto fix = unwrap_fix(input, s)) f.fixes.push_back(std::move(*fix));
    if (TSNode demo = logits ? TSNode{} : demo_without_backward(loss.call); !is_null(demo)) {
      f.severity = Severity::Note;
      f.evidence.push_back({range_of(demo), quote_code(text(demo)) + " guards a demo that runs no backward: the "
                                            "loss is only computed, and no gradient is distorted (a note)"});
    }
    return f;
  }

  // The module's `if __name__ == "__main__":` block holding `n`, when nothing in it runs a
  // backward (directly or through a local helper): a layer file's demo printing one loss of
  // constant inputs, where plain BCE's lost precision distorts no gradient (round 68:
  // Pytorch-NLU's layer files; TG006-NX17). Its condition, or null.
  TSNode demo_without_backward(TSNode n) const {
    for (TSNode p = ctx.model.parent(n); !is_null(p); p = ctx.model.parent(p)) {
      if (is(p, k.function_definition) || is(p, k.class_definition) || is(p, k.lambda)) return TSNode{};
      if (!is(p, k.if_statement) || !is(ctx.model.parent(p), k.module)) continue;
      TSNode cond = field(p, k.f_condition);
      std::string_view t = text(cond);
      if (t.find("__name__") == std::string_view::npos || t.find("__main__") == std::string_view::npos) return TSNode{};
      return runs_backward(ctx.model, p) ? TSNode{} : cond;
    }
    return TSNode{};
  }

  Finding raw_scores_finding(const LossCall& loss, TSNode input, TSNode value, const Value& v) const {
    Finding f = base_finding(loss, input, Severity::Error);
    std::string name = quote_code(text(input));
    f.message = name + " reaches plain BCE, which needs probabilities in [0, 1], but nothing on "
                "its way here applies a sigmoid: raw scores make the run fail with an input-range "
                "error (or, on older PyTorch, produce nan) as soon as one is outside [0, 1].";
    f.hint = "Use `BCEWithLogitsLoss` / `binary_cross_entropy_with_logits` on the raw scores.";
    for (const EvidenceStep& step : evidence_steps(v.why, 3)) f.evidence.push_back(step);
    f.evidence.push_back({range_of(value), name + " is assigned " + quote_code(text(value)) +
                                               "; no sigmoid, softmax or clamp on its chain, "
                                               "nor in a model or helper of this file it comes from"});
    // A model known only by its name is defined elsewhere: whether its forward ends in a
    // sigmoid is not seen (round 14: lightning-bolts' DCGAN discriminator ends in nn.Sigmoid()
    // in another file). The claim rests on that unseen definition: a warning.
    if (v.weak) {
      f.severity = Severity::Warning;
      f.evidence.push_back({v.weak->range, "a step rests on a heuristic, not a binding: " + v.weak->message +
                                               "; its definition, and whether it ends in a sigmoid, is not seen here "
                                               "(weak step: reported as a warning)"});
    }
    return f;
  }

  // The sigmoid call becomes its input: the first positional argument, the receiver of
  // `z.sigmoid()`, or the `input=` keyword. Unknown forms (`obj.sigmoid(v)`) get no fix.
  std::optional<Fix> unwrap_fix(TSNode call, const Sigmoid& s) const {
    TSNode keep{};
    if (s.form == Form::TensorMethod) keep = field(field(call, k.f_function), k.f_object);
    else if (s.form == Form::Function || s.form == Form::Layer) {
      keep = positional_arg(call, 0);
      if (is_null(keep)) keep = keyword_arg(call, "input", ctx.source);
    }
    if (is_null(keep)) return std::nullopt;
    return Fix{"remove redundant sigmoid", FixSafety::Safe, {{range_of(call), std::string(text(keep))}}};
  }

  // --- model layer -----------------------------------------------------------------------

  void note_layer_case(TSNode call, int scope) {
    if (kind_of_loss(ctx.model.callee_leaf(call)) == LossKind::WithLogits && is_null(logits_use))
      logits_use = call;
    auto q = ctx.model.qualified_callee(call);
    if (!q || (*q != "torch.nn.Sequential" && *q != "nn.Sequential" && *q != "Sequential")) return;
    TSNode last{};
    for (unsigned i = 0; !is_null(positional_arg(call, i)); ++i) last = positional_arg(call, i);
    last = unparenthesize(last);
    if (is(last, k.call) && ctx.model.callee_leaf(last) == "Sigmoid")
      layer_heads.push_back({last, ctx.model.enclosing_class(scope)});
  }

  // The value of a `self.<attr> = ...` in another module class of this file that calls class
  // `class_index` (directly or inside it: `nn.ModuleList([Part() for _ in ...])`), or null.
  TSNode part_holder(int class_index) const {
    if (class_index < 0) return TSNode{};
    const auto& classes = ctx.model.classes();
    const ClassInfo& part = classes[static_cast<size_t>(class_index)];
    if (!part.is_module) return TSNode{};
    TSNode first{};
    for (size_t c = 0; c < classes.size(); ++c) {
      if (static_cast<int>(c) == class_index || !classes[c].is_module) continue;
      for (const auto& attr_sites : classes[c].self_bindings)
        for (const BindingSite& site : attr_sites.second) {
          if (is_null(site.value)) continue;
          bool calls_part = false;
          ctx.model.for_each_call_in(site.value, [&](TSNode call) {
            if (ctx.model.callee_leaf(call) == part.name && is(ctx.model.callee_of(call), k.identifier)) calls_part = true;
          });
          if (calls_part && (is_null(first) || ts_node_start_byte(site.value) < ts_node_start_byte(first)))
            first = site.value;
        }
    }
    return first;
  }

  // The Sequential ending in `h.head` is bound to `self.X` (`self.mix = nn.Sequential(...,
  // nn.Sigmoid()) if flag else None`), and every call `self.X(...)` in the class feeds another
  // computation as an operand or an argument (directly, or through a name read only that
  // way), never returned itself (round 28: soundstorm's value-residual mix, a sigmoid gate
  // handed to `lerp`). Returns the first such call; null when a call's result may be the
  // output, or when none is seen.
  TSNode intermediate_use(const LayerHead& h) const {
    if (h.class_index < 0) return TSNode{};
    TSNode seq = ctx.model.parent(ctx.model.parent(h.head));  // argument_list -> Sequential call
    TSNode up = ctx.model.parent(seq);
    while (!is_null(up) && (is(up, k.conditional_expression) || is(up, k.parenthesized_expression)))
      up = ctx.model.parent(up);
    if (!is(up, k.assignment)) return TSNode{};
    auto attr = dotted_name(field(up, k.f_left), ctx.source);
    if (!attr || !attr->starts_with("self.")) return TSNode{};
    TSNode cls = ctx.model.classes()[static_cast<size_t>(h.class_index)].node;
    TSNode first{};
    bool returned = false;
    ctx.model.for_each_call_in(cls, [&](TSNode c) {
      if (returned || text(ctx.model.callee_of(c)) != *attr) return;
      if (result_returned(c)) returned = true;
      else if (is_null(first)) first = c;
    });
    return returned ? TSNode{} : first;
  }

  // The call's value may be the output: returned directly (or in a returned tuple), handed
  // to a BCE loss, or bound to a name read anywhere later other than as an operand or a
  // non-loss argument (`return p`, `p.view(...)` reshapes the output itself).
  bool result_returned(TSNode call) const {
    TSNode p = ctx.model.parent(call);
    while (!is_null(p) && (is(p, k.parenthesized_expression) || is(p, k.expression_list) || is(p, k.tuple)))
      p = ctx.model.parent(p);
    if (is_null(p) || is(p, k.return_statement)) return true;
    if (is(p, k.argument_list)) return feeds_a_loss(p);  // `v.lerp(r, self.mix(x))` is a gate
    if (is(p, k.binary_operator)) return false;
    if (!is(p, k.assignment) || !ts_node_eq(unparenthesize(field(p, k.f_right)), call)) return true;
    TSNode target = field(p, k.f_left);
    if (!is(target, k.identifier)) return true;  // unpacked or stored: not followed
    int f = ctx.model.enclosing_function(ctx.model.scope_enclosing(call));
    if (f < 0) return true;
    std::string_view name = text(target);
    bool leaves = false;
    for_each_identifier(field(ctx.model.functions()[f].node, k.f_body), [&](TSNode id) {
      if (leaves || text(id) != name || ts_node_start_byte(id) <= ts_node_end_byte(p)) return;
      TSNode up = ctx.model.parent(id);
      leaves = is(up, k.argument_list) ? feeds_a_loss(up) : !is(up, k.binary_operator);
    });
    return leaves;
  }

  // The arguments belong to a BCE loss call (`self.crit(self.layers(x), y)`): the output
  // reaches the loss.
  bool feeds_a_loss(TSNode arguments) const {
    TSNode call = ctx.model.parent(arguments);
    TSNode site{};
    return is(call, k.call) && loss_kind(call, ctx.model.scope_enclosing(call), &site) != LossKind::None;
  }

  template <typename F>
  void for_each_identifier(TSNode n, F&& f) const {
    if (is(n, k.identifier)) return f(n);
    for_each_named_child(n, [&](TSNode c) { for_each_identifier(c, f); });
  }

  Finding layer_finding(const LayerHead& h) const {
    Finding f;
    f.code = "TG006";
    f.severity = Severity::Warning;
    f.category = Category::ConvergenceBug;
    f.range = range_of(h.head);
    f.message = "The model's last layer " + quote_code(text(h.head)) + " squashes its output, and "
                "this file trains with the with-logits loss, which applies a sigmoid again: "
                "predictions are confined to a narrow band and the gradient weakens.";
    f.hint = "Remove the final `nn.Sigmoid()` so `forward` returns raw scores; apply the sigmoid "
             "only for reporting.";
    f.evidence.push_back({range_of(h.head), quote_code(text(h.head)) + " is the last layer of this `nn.Sequential`"});
    f.evidence.push_back({range_of(logits_use), quote_code(text(logits_use)) +
                                                    " is the with-logits loss used in this file"});
    TSNode holder = part_holder(h.class_index);
    if (!is_null(holder) && ctx.model.enclosing_class(ctx.model.scope_enclosing(logits_use)) != h.class_index) {
      const std::string& part = ctx.model.classes()[static_cast<size_t>(h.class_index)].name;
      f.severity = Severity::Note;
      f.message = "A Sequential of " + quote_code(part) + " ends in " + quote_code(text(h.head)) +
                  ", and this file trains with the with-logits loss; " + quote_code(part) +
                  " is a part of another module, so its output may be an intermediate (attention "
                  "weights, a gate) that never reaches the loss.";
      f.evidence.push_back({range_of(holder), quote_code(text(holder)) + " holds " + quote_code(part) +
                                                  " as a part of another module: whether its output "
                                                  "reaches the loss was not followed (a note, not a warning)"});
    }
    return f;
  }
};

}  // namespace

std::unique_ptr<RuleCheck> make_tg006(const RuleContext& ctx) { return std::make_unique<Checker>(ctx); }

}  // namespace preflight::rules
