// TG001 graph-retention: a tensor that still carries its autograd graph is stored in
// something that outlives the iteration (a list, a dict, a running total).
//
// Evidence chain: where the value got its graph (forward pass, loss, requires_grad, a name
// that is `.backward()`ed) -> the store and why its holder persists -> whether a backward in
// the same iteration already consumed the graph (warning: host-side bookkeeping leaks) or
// none ever does (error: every activation stays on the device).
// Exempt: stores under no_grad; subscript stores into a preallocated tensor or through
// `.data` (`delta.data[mask] = v` copies values with no history, TG001-NX51); an attribute
// emptied at the start of the routine (`self.acts = []`) and filled by a loop that does not
// train (TG001-NX53, recorded as a silence); a total rebound at the start of every pass of an
// enclosing loop, outliving only loops that do not train, and handed to a callee this file
// does not show (`inner_optimizer.step(loss_inner)`: it may differentiate the total, TG001-NX54,
// recorded as a silence; handed so without the per-pass rebinding: at most a warning, fix
// unsafe); a holder rebound at the start of every pass of an enclosing loop and filled in
// loops that neither train nor run over a loader's batches (per-head loss lists, one sample's
// steps, TG001-NX58, recorded as a silence; a total over a validation loader stays, PX58);
// a backward that keeps its graph
// (`autograd.grad(..., create_graph=True)`, `retain_graph=True`) consumes nothing (NX52); values not proven to hold tensors (an unseen callee's
// result is Unknown, a number or an array has no graph); holders that a later backward or a
// differentiable return reads (stacked RL objectives, chunked losses, pipeline getters),
// decided by reachability; per-call containers: a holder local to a function that has no
// backward and returns a graph to its caller (a forward's per-layer states, a criterion's
// logging dict) dies with the call, and the loop that fills it is not a training loop; a local
// holder that outlives only loops over entries (`d.items()`, `net.parameters()`), one value per
// entry per call; a holder made anew per call or per pass of an enclosing loop, filled after
// each member's own backward by loops over a fixed collection (`self.optimizers.items()`,
// `range(len(netsD))`, a loop stepping `optimizers[i]` by its own variable: one consumed value
// per member, TG001-NX64 and NX65, recorded as a silence); a subscript store keyed by the
// variable of a loop over entries that trains nothing (one slot per entry, overwritten by the
// next call, whoever owns the holder: TG001-NX66, recorded as a silence);
// `.add()` on an instance of a class of this file (a method call; on a class
// defined elsewhere, an unknown callee: note, unsafe fix); leaf tensors and containers of
// nothing but leaves (`t.detach().requires_grad_()`, `torch.zeros(n, requires_grad=True)`), which
// record later operations but hold no graph (TG001-NX41, recorded as a silence in a loop).
// Severity by proof: an error needs a graph proven from bindings at every step and a holder
// whose whole life is seen (local and not handed to the caller, or instance state); a model
// or criterion known by its name, or a holder returned to / passed in by a caller, caps the
// finding at warning, and the evidence names that step; so does a routine that never
// backwards and that no caller in this file is seen running with autograd on (every caller
// under no_grad: silent), rules/caller_grad.h. `.detach()` is a safe fix only on a
// proven tensor whose stored copy no caller can still need; otherwise it is offered unsafe.
#include <algorithm>
#include <functional>
#include <cctype>
#include <array>
#include <unordered_set>

#include "analysis/local_calls.h"
#include "analysis/frameworks.h"
#include "analysis/names.h"
#include "analysis/torch_facts.h"
#include "rules/caller_grad.h"
#include "rules/fix_builder.h"
#include "rules/rule.h"

namespace preflight::rules {
namespace {

using namespace preflight::analysis;

enum class StoreKind { Append, Augmented, Subscript };

struct Candidate {
  StoreKind kind;
  std::string holder;  // dotted name as written
  std::string method;  // append / add / ... for Append
  TSNode stored;       // the stored expression (the anchor)
  TSNode store;        // the whole store (call or assignment)
  TSNode holder_node;
  int scope;
  ByteRange region;    // innermost loop, or the function, where a backward counts as "same step"
  bool in_loop;
  TSNode loop;         // innermost loop (null outside any loop)
  TSNode constant_key{};  // `d["loss"] = v`: the literal key, which every pass overwrites
  std::vector<TSNode> outlived;  // the loops of the function the holder outlives, outermost first
  TSNode rebound_in{};           // the loop whose body last rebinds the holder (null: none)
  // `meter.add(v)` where `meter = Meter()` and `Meter` is not defined here: a method of an
  // object this file does not show, not a proven container store (empty otherwise).
  std::string object_class;
};

// How far the holder's life is seen.
enum class HolderLife {
  Seen,      // local and never handed out, or instance state: its whole life is in view
  Escapes,   // returned to the caller or passed in by it: what the caller does is not seen
};

std::string_view root_of(std::string_view dotted) { return dotted.substr(0, dotted.find('.')); }
// `per_ch_score` of `per_ch_score[0]`, `out` of `out.loss` or `out(x)`.
std::string root_name(std::string_view expr) {
  size_t end = expr.find_first_of(".[( ");
  return std::string(expr.substr(0, end));
}

constexpr std::array<std::string_view, 6> kAppendFamily = {"append", "add", "extend",
                                                           "insert", "put", "push"};

Finding make_finding(const RuleContext& ctx, const Candidate& c, TSNode backward, TSNode reset,
                     const CallerVerdict* callers, TSNode handed);

class Check final : public RuleCheck {
 public:
  explicit Check(const RuleContext& c) : ctx(c) {}
  void finish(std::vector<Finding>& out) override;
  // A holder keyed by the module (a module-level object a function stores into) is decided
  // by every function that names it: its store and the backward that reads it (if any) are
  // context, so an edit elsewhere that changes the answer re-checks the store.
  void context(std::vector<ContextFact>& facts) const override {
    callers_.report(facts);
    for (const ModuleHolder& h : module_holders_) {
      note_context(facts, "TG001 module-level holder " + h.holder + (h.load_bearing ? " read by a backward" : " unread"),
                   h.store);
      if (!is_null(h.backward)) note_context(facts, "TG001 backward reading " + h.holder, first_token(h.backward));
    }
  }

  struct ModuleHolder {
    std::string holder;
    TSNode store;
    bool load_bearing;
    TSNode backward;
  };
  std::vector<ModuleHolder> module_holders_;

 private:
  const RuleContext& ctx;
  // Whether a routine that never backwards runs with autograd on is its callers' business:
  // an error needs a caller in this file seen running it so (rules/caller_grad.h).
  CallerGradAnalysis callers_{ctx, "TG001"};
  const Kinds& k = kinds();
  std::vector<Candidate> found;

  // Does the holder outlive the iteration? Inside a loop: not rebound in the innermost loop
  // so far. Outside any loop: only instance state (`self.x`) outlives the call.
  bool persists(const std::string& holder, const WalkState& st) const {
    if (const LoopFrame* loop = st.innermost_loop()) return !loop->bound.count(holder);
    return holder.starts_with("self.");
  }

  ByteRange region_of(const WalkState& st) const {
    if (const LoopFrame* loop = st.innermost_loop()) return range_of(loop->node);
    int f = ctx.model.enclosing_function(st.scope);
    return f >= 0 ? range_of(ctx.model.functions()[f].node) : range_of(ctx.root);
  }

  // `buf[i] = v` into a preallocated tensor is an in-place copy inside one graph, not a
  // container that keeps one graph per iteration (`out = torch.zeros(...)`).
  bool is_tensor_holder(const std::string& holder, int scope) const {
    // `delta.data[I] = v`: writing through a tensor's `.data` copies values into its storage
    // with no autograd history (round 28: fast_adversarial's PGD step), so nothing of v's
    // graph is kept. Not an attribute that is bound to a container (`self.data = {}`).
    const std::vector<BindingSite>* sites = ctx.model.bindings_of(holder, scope);
    if (holder.ends_with(".data") && !(sites && std::any_of(sites->begin(), sites->end(), [&](const BindingSite& b) {
          return is_container_value(b.value);
        })))
      return true;
    if (sites)
      for (const BindingSite& b : *sites) {
        TSNode v = unparenthesize(b.value);
        if (!is(v, k.call)) continue;
        std::string_view leaf = ctx.model.callee_leaf(v);
        if (names::is_tensor_factory(leaf) || leaf.starts_with("new_") || leaf == "clone" ||
            leaf == "empty_strided")
          return true;
      }
    return false;
  }

  // `[]`, `{}`, a comprehension, or `list(...)` / `dict(...)` / `set(...)` / `defaultdict(...)` /
  // `OrderedDict(...)` / `deque(...)`.
  bool is_container_value(TSNode v) const {
    static constexpr std::string_view kContainers[] = {"list", "dict", "set", "defaultdict", "OrderedDict", "deque"};
    v = unparenthesize(v);
    if (is(v, k.list) || is(v, k.dictionary) || is(v, k.set) || is(v, k.list_comprehension) ||
        is(v, k.dictionary_comprehension) || is(v, k.set_comprehension))
      return true;
    if (!is(v, k.call)) return false;
    std::string_view leaf = ctx.model.callee_leaf(v);
    return std::find(std::begin(kContainers), std::end(kContainers), leaf) != std::end(kContainers);
  }

  // The class every binding of `holder` constructs, when it is not a container type
  // (`Averager()`, `utils.Meter()`; not `list()`, `deque(...)`, `defaultdict(list)`). Empty
  // when there is none.
  std::string constructed_class(const std::string& holder, int scope) const {
    static constexpr std::array<std::string_view, 4> kContainerClasses = {"OrderedDict", "Counter",
                                                                          "ChainMap", "UserList"};
    const std::vector<BindingSite>* sites = ctx.model.bindings_of(holder, scope);
    if (!sites || sites->empty()) return {};
    std::string cls;
    for (const BindingSite& b : *sites) {
      TSNode v = unparenthesize(b.value);
      if (is(v, k.none)) continue;
      if (b.arity > 1 || !is(v, k.call)) return {};
      // A function of this file is a call the analysis sees, whatever its spelling: not a class.
      if (local_callees(ctx.model, v)) return {};
      std::string_view leaf = ctx.model.callee_leaf(v);
      bool capwords = !leaf.empty() && std::isupper(static_cast<unsigned char>(leaf[0]));
      if ((!capwords && !made_by_project_module(v)) ||
          std::find(kContainerClasses.begin(), kContainerClasses.end(), leaf) != kContainerClasses.end())
        return {};
      if (!cls.empty() && cls != leaf) return {};
      cls = leaf;
    }
    return cls;
  }

  // `utils.averager()` (round 44: CRNN's loss averager, a lower-case class of the project's
  // `utils` module that keeps `v.data.sum()`): a call through an imported module that is not
  // torch, NumPy or the standard containers makes an object whose class this file does not
  // show, whatever its spelling.
  bool made_by_project_module(TSNode call) const {
    TSNode callee = field(call, k.f_function);
    if (!is(callee, k.attribute)) return false;
    auto q = ctx.model.qualified_callee(call);
    auto d = dotted_name(callee, ctx.source);
    if (!q || !d || !ctx.model.import_of(root_of(*d))) return false;
    for (std::string_view known : {"torch.", "numpy.", "collections.", "builtins.", "queue.", "array.", "heapq."})
      if (q->starts_with(known)) return false;
    return true;
  }

  bool carries_graph(TSNode e) const {
    const Value* v = ctx.provenance.value_of(e);
    return v && v->has_graph() && !v->leaf;  // a leaf tensor holds no graph (TG001-NX41)
  }

  void add(StoreKind kind, std::string holder, std::string method, TSNode stored, TSNode store,
           TSNode holder_node, const WalkState& st) {
    if (ctx.provenance.in_no_grad(store)) return;
    if (!carries_graph(stored)) {
      if (const Value* v = ctx.provenance.value_of(stored); v && v->has_graph() && v->leaf && st.innermost_loop())
        stay_silent("TG001", stored,
                    "a leaf tensor holds no graph: " + quote_code(std::string(text_of(stored, ctx.source))) +
                        " is a leaf (or leaves) that requires gradients, which records no operation of its own",
                    analysis::evidence_steps(v->why));
      return;
    }
    int f = ctx.model.enclosing_function(st.scope);
    if (f >= 0 && ctx.model.is_test_function(f)) return;  // tests: retention costs nothing
    // A constructor runs once per object, not once per step: a loop there stores a bounded
    // number of values, whatever they are (round 18: ClassyVision's AnyNet summing
    // `block.depth` of blocks a factory builds, taken for forward passes).
    if (f >= 0 && ctx.model.functions()[f].class_index >= 0 && ctx.model.functions()[f].name == "__init__" &&
        st.innermost_loop()) {
      stay_silent("TG001", stored,
                  "a constructor runs once per object: this loop stores a bounded number of values while "
                  "the object is built, not one per training step",
                  {{range_of(field(ctx.model.functions()[f].node, k.f_name)), "`__init__` builds the object"}});
      return;
    }
    const LoopFrame* loop = st.innermost_loop();
    found.push_back({kind, holder, std::move(method), stored, store, holder_node,
                     st.scope, region_of(st), loop != nullptr, loop ? loop->node : TSNode{}, TSNode{},
                     loops_outlived(holder, st), rebinding_loop(holder, st), {}});
  }

  // The innermost loop whose body (so far) rebinds `holder`: each of its passes starts afresh.
  static TSNode rebinding_loop(const std::string& holder, const WalkState& st) {
    for (size_t i = st.loops.size(); i-- > 0;)
      if (st.loops[i].bound.count(holder)) return st.loops[i].node;
    return TSNode{};
  }

  // The loops inside the holder's last rebinding: every pass of each adds to the same holder.
  static std::vector<TSNode> loops_outlived(const std::string& holder, const WalkState& st) {
    size_t first = 0;
    for (size_t i = 0; i < st.loops.size(); ++i)
      if (st.loops[i].bound.count(holder)) first = i + 1;
    std::vector<TSNode> out;
    for (size_t i = first; i < st.loops.size(); ++i) out.push_back(st.loops[i].node);
    return out;
  }

  void enter(TSNode n, const WalkState& st) override {
    TSSymbol s = sym(n);
    if (s == k.call) return on_call(n, st);
    if (s == k.augmented_assignment) return on_augmented(n, st);
    if (s == k.assignment) return on_assignment(n, st);
  }

  void on_call(TSNode call, const WalkState& st) {
    TSNode callee = field(call, k.f_function);
    if (!is(callee, k.attribute)) return;
    std::string_view method = text_of(field(callee, k.f_attribute), ctx.source);
    if (std::find(kAppendFamily.begin(), kAppendFamily.end(), method) == kAppendFamily.end()) return;
    // A store discards the call's result; `y = x.add(z)` is tensor arithmetic.
    if (!is(ctx.model.parent(call), k.expression_statement)) return;
    TSNode holder_node = field(callee, k.f_object);
    auto holder = dotted_name(holder_node, ctx.source);
    if (!holder || !persists(*holder, st) || is_tensor_holder(*holder, st.scope)) return;
    // `tracker.add(...)` on an imported module is that library's API (a logger that flushes
    // every step), not a container this file keeps.
    if (ctx.model.import_of(root_of(*holder)) && !ctx.model.bindings_of(*holder, st.scope)) return;
    TSNode stored = positional_arg(call, method == "insert" ? 1 : 0);
    if (is_null(stored)) return;
    std::string cls = constructed_class(*holder, st.scope);
    if (!cls.empty() && ctx.model.class_named(cls) >= 0) {
      if (!ctx.provenance.in_no_grad(call) && carries_graph(stored))
        stay_silent("TG001", stored,
                    "method of " + cls + ": `" + *holder + "` is an instance of `" + cls +
                        "`, a class of this file, so `." + std::string(method) +
                        "()` runs that method rather than storing into a container");
      return;
    }
    size_t before = found.size();
    add(StoreKind::Append, *holder, std::string(method), stored, call, holder_node, st);
    if (found.size() > before) found.back().object_class = cls;
  }

  void on_augmented(TSNode a, const WalkState& st) {
    std::string_view op = text_of(field(a, k.f_operator), ctx.source);
    if ((op != "+=" && op != "-=") || st.loops.empty()) return;
    TSNode left = field(a, k.f_left);
    auto holder = dotted_name(left, ctx.source);
    if (!holder || !persists(*holder, st) || sums_an_unseen_capitalised_call(field(a, k.f_right))) return;
    add(StoreKind::Augmented, *holder, {}, field(a, k.f_right), a, left, st);
  }

  // `epoch_mae += MAE(scores, targets)`: a class instance cannot be summed into a counter, so
  // the capitalised callee this file does not define is a metric function, unseen like any
  // other (round 15: benchmarking-gnns' `MAE` returns `.item()`). Appending `Record(x, y)`
  // still takes it for a class that keeps its arguments.
  bool sums_an_unseen_capitalised_call(TSNode value) const {
    value = unparenthesize(value);
    if (!is(value, k.call)) return false;
    auto q = ctx.model.qualified_callee(value);
    if (!q || q->starts_with("torch.")) return false;
    std::string_view leaf = names::last_segment(*q);
    return !leaf.empty() && std::isupper(static_cast<unsigned char>(leaf[0])) && ctx.model.class_named(leaf) < 0;
  }

  // A literal key (`"loss"`, `0`, `("d", 1)`): the same slot on every pass. An f-string is not one.
  bool is_literal_key(TSNode key) const {
    key = unparenthesize(key);
    TSSymbol s = sym(key);
    if (s == k.integer || s == k.float_ || s == k.true_ || s == k.false_ || s == k.none) return true;
    if (s == k.string) return text_of(key, ctx.source).find_first_of("fF") > text_of(key, ctx.source).find_first_of("\"'");
    if (s == k.tuple) {
      bool all = ts_node_named_child_count(key) > 0;
      for_each_named_child(key, [&](TSNode c) { all = all && is_literal_key(c); });
      return all;
    }
    return false;
  }

  // `d["d"]`, `d["score", 0]`: every index of the subscript (all children after its value).
  bool literal_keys(TSNode subscript) const {
    uint32_t n = ts_node_named_child_count(subscript);
    bool all = n > 1;
    for (uint32_t i = 1; i < n && all; ++i) {
      TSNode c = ts_node_named_child(subscript, i);
      all = is(c, k.comment) || is_literal_key(c);
    }
    return all;
  }

  void on_assignment(TSNode a, const WalkState& st) {
    for (TSNode t = a; is(t, k.assignment); t = field(t, k.f_right)) {
      TSNode left = field(t, k.f_left);
      if (!is(left, k.subscript)) continue;
      TSNode holder_node = field(left, k.f_value);
      auto holder = dotted_name(holder_node, ctx.source);
      if (!holder || !persists(*holder, st) || is_tensor_holder(*holder, st.scope)) continue;
      TSNode value = field(a, k.f_right);
      while (is(value, k.assignment)) value = field(value, k.f_right);
      size_t before = found.size();
      add(StoreKind::Subscript, *holder, {}, value, a, holder_node, st);
      if (found.size() > before && literal_keys(left)) found.back().constant_key = field(left, k.f_subscript);
      return;  // the first qualifying target
    }
  }
};

const FunctionInfo* function_at(const RuleContext& ctx, int scope) {
  int f = ctx.model.enclosing_function(scope);
  return f >= 0 ? &ctx.model.functions()[f] : nullptr;
}

bool is_name(TSNode e, std::string_view name, std::string_view src) {
  e = unparenthesize(e);
  return is(e, kinds().identifier) && text_of(e, src) == name;
}

// `return holder`, `return loss, n, holder`, `return [holder]`, `return {"k": holder}`: the
// holder itself is handed to the caller.
bool returned_to_caller(const RuleContext& ctx, const FunctionInfo& f, std::string_view holder) {
  const Kinds& k = kinds();
  for (TSNode ret : f.returns) {
    TSNode e = unparenthesize(ts_node_named_child(ret, 0));
    if (is_null(e)) continue;
    if (is_name(e, holder, ctx.source)) return true;
    if (!is(e, k.expression_list) && !is(e, k.tuple) && !is(e, k.list) && !is(e, k.dictionary)) continue;
    bool found = false;
    for_each_named_child(e, [&](TSNode el) {
      if (is(el, k.pair)) el = field(el, k.f_value);
      found = found || is_name(el, holder, ctx.source);
    });
    if (found) return true;
  }
  return false;
}

// Does a caller own the holder? A parameter was passed in; a returned holder is handed out.
// Instance state and module state are read in this file, so their whole life is in view.
HolderLife holder_life(const RuleContext& ctx, const Candidate& c) {
  if (c.holder.starts_with("self.")) return HolderLife::Seen;
  const FunctionInfo* f = function_at(ctx, c.scope);
  if (!f) return HolderLife::Seen;
  std::string_view root = root_of(c.holder);
  if (ctx.model.parameter(root, c.scope)) return HolderLife::Escapes;
  if (returned_to_caller(ctx, *f, root)) return HolderLife::Escapes;
  return HolderLife::Seen;
}

// A local holder (not state, not a parameter, not returned) none of whose outlived loops
// calls anything ending in `step`: a micro-batch loop of one training step (the optimizer
// steps after it, or in the caller), so what it keeps is bounded by the micro-batches of one
// step and freed with the call (TG001-NX43, round 13: xtuner's `train_step`).
bool within_one_step(const RuleContext& ctx, const Candidate& c) {
  if (c.outlived.empty() || holder_life(ctx, c) != HolderLife::Seen || c.holder.starts_with("self.") ||
      c.holder.find('.') != std::string::npos)
    return false;
  const FunctionInfo* f = function_at(ctx, c.scope);
  if (!f || !ctx.model.bindings_of(c.holder, c.scope)) return false;
  for (TSNode loop : c.outlived) {
    bool steps = false;
    ctx.model.for_each_call_in(loop, [&](TSNode call) { steps = steps || ctx.model.callee_leaf(call).ends_with("step"); });
    if (steps) return false;
  }
  return true;
}

// A training loop runs a backward (directly or through a function of this file that it
// calls) or an optimizer step each iteration.
bool trains(const RuleContext& ctx, TSNode loop, int scope) {
  if (runs_backward(ctx.model, loop)) return true;
  bool steps = false;
  ctx.model.for_each_call_in(loop, [&](TSNode call) {
    TSNode callee = ctx.model.callee_of(call);
    if (steps || ctx.model.callee_leaf(call) != "step" || !is(callee, kinds().attribute)) return;
    auto recv = dotted_name(field(callee, kinds().f_object), ctx.source);
    steps = recv && ctx.model.is_optimizer(*recv, scope);
  });
  return steps;
}

bool computes_a_loss(const RuleContext& ctx, const FunctionInfo& f);

// A call after the store, in the pass that rebinds the holder (or in its routine), handed the
// holder itself (`inner_optimizer.step(loss_inner)`, round 33: Transfer-Learning-Library's
// MLDG with `higher`'s differentiable optimizer) whose callee this file does not show: that
// callee may differentiate the total, so "nothing consumes it" is not proven. Builtins and
// torch's own functions are seen (a backward through torch is found by reachability). Null
// when there is none.
TSNode handed_to_unseen_callee(const RuleContext& ctx, const Candidate& c) {
  static constexpr std::array<std::string_view, 16> kBuiltins = {
      "print", "float", "int", "str", "len", "repr", "format", "round", "abs",
      "min",   "max",   "sum", "list", "tuple", "isinstance", "type"};
  if (c.kind != StoreKind::Augmented || c.holder.find('.') != std::string::npos) return TSNode{};
  TSNode within = c.rebound_in;
  if (is_null(within)) {
    const FunctionInfo* f = function_at(ctx, c.scope);
    if (!f) return TSNode{};
    within = f->node;
  }
  TSNode found{};
  ctx.model.for_each_call_in(within, [&](TSNode call) {
    if (!is_null(found) || ts_node_start_byte(call) < ts_node_end_byte(c.store)) return;
    bool handed = false;
    for_each_named_child(field(call, kinds().f_arguments), [&](TSNode a) {
      if (is(a, kinds().keyword_argument)) a = field(a, kinds().f_value);
      handed = handed || is_name(a, c.holder, ctx.source);
    });
    if (!handed || local_callees(ctx.model, call)) return;
    auto q = ctx.model.qualified_callee(call);
    if (q && (q->starts_with("torch.") || std::find(kBuiltins.begin(), kBuiltins.end(), *q) != kBuiltins.end()))
      return;
    found = call;
  });
  return found;
}

// The holder is rebound at every pass of an enclosing loop (`loss_inner = 0` heading the
// pass) and none of the loops it outlives trains: it sums one pass's terms (a loss over the
// chunks or domains of one batch), and the next pass drops them all.
bool rebound_before_its_loops(const RuleContext& ctx, const Candidate& c);

bool summed_per_pass(const RuleContext& ctx, const Candidate& c) {
  if (is_null(c.rebound_in) || c.outlived.empty()) return false;
  for (TSNode loop : c.outlived)
    if (trains(ctx, loop, c.scope)) return false;
  return rebound_before_its_loops(ctx, c);
}

bool rebound_before_its_loops(const RuleContext& ctx, const Candidate& c) {
  if (is_null(c.rebound_in) || c.outlived.empty()) return false;
  // The rebinding runs on every pass (not behind a branch) before the loops it heads, alone or
  // in a tuple (`total, parts = [], []`).
  bool every = false;
  for_each_named_child(field(c.rebound_in, kinds().f_body), [&](TSNode st) {
    TSNode a = is(st, kinds().expression_statement) ? ts_node_named_child(st, 0) : TSNode{};
    if (is_null(a) || !is(a, kinds().assignment) || ts_node_end_byte(a) > ts_node_start_byte(c.outlived.front())) return;
    TSNode left = field(a, kinds().f_left);
    if (is(left, kinds().pattern_list) || is(left, kinds().tuple_pattern))
      for_each_named_child(left, [&](TSNode e) { every = every || is_name(e, c.holder, ctx.source); });
    else every = every || is_name(left, c.holder, ctx.source);
  });
  return every;
}

// The loop runs over a data loader's batches (`for x, y in val_loader`, through `enumerate` /
// `tqdm`): its iterable is bound to torch's DataLoader, or named like a loader (`*loader*`, a
// naming heuristic that only keeps a finding). A total it outlives spans a pass over the data.
bool iterates_batches(const RuleContext& ctx, TSNode loop, int scope) {
  const Kinds& k = kinds();
  if (!is(loop, k.for_statement)) return false;
  TSNode it = unparenthesize(field(loop, k.f_right));
  while (is(it, k.call) && names::is_iterable_wrapper(ctx.model.callee_leaf(it)) && !is_null(positional_arg(it, 0)))
    it = unparenthesize(positional_arg(it, 0));
  if (is(it, k.call)) return is_torch_dataloader(ctx.model, it);
  auto name = dotted_name(it, ctx.source);
  if (!name) return false;
  if (names::lower(*name).find("loader") != std::string::npos) return true;
  if (const std::vector<BindingSite>* sites = ctx.model.bindings_of(*name, scope))
    for (const BindingSite& b : *sites)
      if (TSNode v = unparenthesize(b.value); is(v, k.call) && is_torch_dataloader(ctx.model, v)) return true;
  return false;
}

// Rebound at the start of every pass of an enclosing loop (`total, parts = [], []` after the
// forward of each batch; `loss = 0` before the steps of each sample) and filled in loops that
// neither train nor run over a loader's batches (the heads or terms of one batch, the steps of
// one sample): the holder lives one pass, like one rebound in the innermost loop (round 38: a
// clustering trainer's per-head loss lists, TG001-NX58; round 43: a graph generator's
// per-graph NLL, whose missing no_grad is TG002's to report). A total over a validation
// loader's batches keeps every batch's graph until the pass ends: still reported (PX58).
bool per_pass_of_enclosing_loop(const RuleContext& ctx, const Candidate& c) {
  if (!summed_per_pass(ctx, c)) return false;
  for (TSNode loop : c.outlived)
    if (iterates_batches(ctx, loop, c.scope)) return false;
  return true;
}

// `self.acts = []` as a statement of the routine's own body, before the loop that fills
// `self.acts`, in a routine that never backwards and a loop that does not train (round 30:
// a KAN-style MLP caching one forward's activations): instance state emptied on every call.
// Without a loop, before the body's statement that holds the store (round 46: a recommender's
// `forward` that empties `self.check_list` and appends one batch's intent scores for a debug
// check). Returns that assignment, or null.
TSNode reset_per_call(const RuleContext& ctx, const Candidate& c) {
  const Kinds& k = kinds();
  if (!c.holder.starts_with("self.")) return TSNode{};
  const FunctionInfo* f = function_at(ctx, c.scope);
  if (!f || f->calls_backward || f->calls_autograd_grad) return TSNode{};
  if (!is_null(c.loop) && trains(ctx, c.loop, c.scope)) return TSNode{};
  TSNode body = field(f->node, k.f_body);
  TSNode filler = c.loop;
  if (is_null(filler))
    for (TSNode n = c.store; !is_null(n) && is_null(filler); n = ctx.model.parent(n))
      if (ts_node_eq(ctx.model.parent(n), body)) filler = n;
  if (is_null(filler)) return TSNode{};
  TSNode found{};
  for_each_named_child(body, [&](TSNode st) {
    if (!is_null(found) || ts_node_start_byte(st) >= ts_node_start_byte(filler)) return;
    TSNode a = is(st, k.expression_statement) ? ts_node_named_child(st, 0) : TSNode{};
    if (!is(a, k.assignment) || text_of(field(a, k.f_left), ctx.source) != c.holder) return;
    TSNode v = unparenthesize(field(a, k.f_right));
    bool empty = ((is(v, k.list) || is(v, k.dictionary)) && ts_node_named_child_count(v) == 0) ||
                 (is(v, k.call) && (text_of(v, ctx.source) == "list()" || text_of(v, ctx.source) == "dict()"));
    if (empty) found = a;
  });
  return found;
}

// A container local to a function that has no backward of its own and returns a graph to its
// caller besides the container: a forward's per-layer states, a criterion's logging dict. The
// loop over layers, keys or loss terms is not a training loop, and the container dies with the
// call (or goes to the caller with the result it was built for).
const FunctionInfo* per_call_owner(const RuleContext& ctx, const Candidate& c) {
  if (c.holder.find('.') != std::string::npos) return nullptr;
  const FunctionInfo* f = function_at(ctx, c.scope);
  if (!f || f->calls_backward || ctx.model.parameter(c.holder, c.scope)) return nullptr;
  if (!ctx.model.scopes()[f->scope].bindings.count(c.holder)) return nullptr;
  // A module's `forward` is the forward pass itself: what it returns is the model's output,
  // whatever the analysis can show of it (TG001-NX39, round 10: Darknet's route outputs).
  bool module_forward = f->name == "forward" && f->class_index >= 0 && ctx.model.classes()[f->class_index].is_module;
  if (!module_forward && !ctx.provenance.return_value(ctx.model.function_of(f->node)).has_graph()) return nullptr;
  // Something besides the bare holder goes back: a loss, the output, or the holder as one
  // result among several (`return cls_preds, mask_preds`).
  bool returns_more = false;
  for (TSNode ret : f->returns) {
    TSNode e = unparenthesize(ts_node_named_child(ret, 0));
    bool several = is(e, kinds().expression_list) || is(e, kinds().tuple);
    // `p = torch.cat(p, 1)` before `return p` (round 34: Dassl's per-domain heads): the name
    // now holds a tensor built from the container, not the container.
    const Value* v = ctx.provenance.value_of(e);
    bool rebound_to_tensor = v && v->type == Type::Tensor;
    returns_more = returns_more || several || rebound_to_tensor || !is_name(e, c.holder, ctx.source);
  }
  if (!returns_more && !computes_a_loss(ctx, *f)) return nullptr;
  if (!is_null(c.loop) && trains(ctx, c.loop, c.scope)) return nullptr;
  return f;
}

// A loss function returning its terms (`losses[name] = F.cross_entropy(...)`; `return losses`):
// the container is the result the caller sums and backwards. Read from the function's or its
// class's name (`*loss*`, `*Loss`, `*Criterion`): a documented naming heuristic that only
// withholds a finding (round 8: DensePose's embedding losses).
bool computes_a_loss(const RuleContext& ctx, const FunctionInfo& f) {
  std::string name = names::lower(f.name);
  if (names::contains(name, "loss")) return true;
  if (f.class_index < 0) return false;
  std::string cls = names::lower(ctx.model.classes()[f.class_index].name);
  return cls.ends_with("loss") || cls.ends_with("criterion");
}

// Iterates what a model or a container already holds (`d.items()`, `net.parameters()`,
// `net.children()`): as many passes as entries, not data. `zip` stops at its shortest
// argument, so one such argument bounds it; `enumerate`/`tqdm`/`list`/... pass it through;
// `cycle` and `chain` do not.
bool bounded_by_entries(const RuleContext& ctx, TSNode it) {
  static constexpr std::array<std::string_view, 11> kEntryMethods = {
      "items", "keys", "values", "parameters", "named_parameters", "buffers", "named_buffers",
      "children", "named_children", "modules", "named_modules"};
  static constexpr std::array<std::string_view, 6> kPassThrough = {"enumerate", "tqdm", "iter",
                                                                    "list", "sorted", "reversed"};
  it = unparenthesize(it);
  if (!is(it, kinds().call)) return false;
  std::string_view leaf = ctx.model.callee_leaf(it);
  if (is(ctx.model.callee_of(it), kinds().attribute))
    return std::find(kEntryMethods.begin(), kEntryMethods.end(), leaf) != kEntryMethods.end();
  bool zip = leaf == "zip";
  if (!zip && std::find(kPassThrough.begin(), kPassThrough.end(), leaf) == kPassThrough.end()) return false;
  for (uint32_t i = 0;; ++i) {
    TSNode arg = positional_arg(it, i);
    if (is_null(arg)) return false;
    if (bounded_by_entries(ctx, arg)) return true;
    if (!zip) return false;  // only the first argument of a pass-through is iterated
  }
}

bool walks_entries(const RuleContext& ctx, TSNode loop) {
  return is(loop, kinds().for_statement) && bounded_by_entries(ctx, field(loop, kinds().f_right));
}

// The loops a holder outlives make no graph of their own: every value in them that carries a
// graph is a name, a container display, or an index / slice of one (`img_gen[i]`,
// `noise[i : i + 1]`), so each pass stores views into graphs made before the loops, which exist
// once however many passes run (round 17: style-based-gan's projector saving each input's
// image, latent and noise after the optimisation). The first view, or null when the loops
// compute anything that carries a graph (a forward, arithmetic, a call) or there are none.
TSNode views_only(const RuleContext& ctx, const Candidate& c) {
  if (c.outlived.empty()) return TSNode{};
  const Kinds& k = kinds();
  TSNode first_view{};
  bool computes = false;
  std::function<void(TSNode)> walk = [&](TSNode n) {
    if (computes) return;
    TSSymbol s = sym(n);
    if (s == k.function_definition || s == k.class_definition || s == k.lambda) return;
    const Value* v = ctx.provenance.value_of(n);
    if (v && v->has_graph()) {
      if (s == k.subscript) {
        if (is_null(first_view)) first_view = n;
      } else if (s != k.identifier && s != k.dictionary && s != k.list && s != k.tuple && s != k.pair &&
                 s != k.parenthesized_expression && s != k.expression_list && s != k.pattern_list) {
        computes = true;
        return;
      }
    }
    for_each_named_child(n, walk);
  };
  walk(field(c.outlived.front(), k.f_body));
  return computes ? TSNode{} : first_view;
}

// A holder local to its function that outlives only loops over entries (none of which trains):
// one value per entry per call, dropped or replaced by the next call (TG001-NX36). Its owner,
// or null.
// The function whose local the holder is (a plain name its own scope binds, not a
// parameter), or null.
const FunctionInfo* local_owner(const RuleContext& ctx, const Candidate& c) {
  if (c.holder.find('.') != std::string::npos) return nullptr;
  const FunctionInfo* f = function_at(ctx, c.scope);
  if (!f || ctx.model.parameter(c.holder, c.scope) || !ctx.model.scopes()[f->scope].bindings.count(c.holder))
    return nullptr;
  return f;
}

const FunctionInfo* filled_over_structure(const RuleContext& ctx, const Candidate& c) {
  const FunctionInfo* f = c.outlived.empty() ? nullptr : local_owner(ctx, c);
  if (!f) return nullptr;
  for (TSNode loop : c.outlived)
    if (!walks_entries(ctx, loop) || trains(ctx, loop, c.scope)) return nullptr;
  return f;
}

// `losses[f"{name}{postfix}"] = l * lbd` in `for name, lbd in self.loss_and_lambda.items():`
// (round 83: DiffSinger's loss helpers fill a dict their caller passes in and sums): a
// subscript store whose key is built from the variable of the entries loop around it, every
// loop the holder outlives walking entries and training nothing, writes one slot per entry,
// and the next call overwrites the same slots: at most one value per entry, whoever owns the
// holder (TG001-NX66). The key, or null.
TSNode slot_per_entry(const RuleContext& ctx, const Candidate& c) {
  const Kinds& k = kinds();
  if (c.kind != StoreKind::Subscript || c.outlived.empty()) return TSNode{};
  for (TSNode loop : c.outlived)
    if (!walks_entries(ctx, loop) || trains(ctx, loop, c.scope)) return TSNode{};
  TSNode left = field(c.store, k.f_left);
  if (!is(left, k.subscript)) return TSNode{};
  TSNode key = field(left, k.f_subscript);
  TSNode inner = c.outlived.back();
  std::vector<std::string> targets;
  std::function<void(TSNode)> collect = [&](TSNode n) {
    if (is(n, k.identifier)) targets.emplace_back(text_of(n, ctx.source));
    for_each_named_child(n, collect);
  };
  collect(field(inner, k.f_left));
  bool mentions = false;
  std::function<void(TSNode)> find = [&](TSNode n) {
    if (mentions) return;
    if (is(n, k.identifier) && std::find(targets.begin(), targets.end(), text_of(n, ctx.source)) != targets.end())
      mentions = true;
    for_each_named_child(n, find);
  };
  find(key);
  return mentions ? key : TSNode{};
}

// `for i in range(len(netsD))`: a loop over the indices of a collection named for models,
// optimizers, discriminators or heads (a naming step, which only quiets a finding).
bool walks_model_indices(const RuleContext& ctx, TSNode loop) {
  const Kinds& k = kinds();
  if (!is(loop, k.for_statement)) return false;
  TSNode it = unparenthesize(field(loop, k.f_right));
  if (!is(it, k.call) || ctx.model.callee_leaf(it) != "range" || !is_null(positional_arg(it, 1))) return false;
  TSNode n = unparenthesize(positional_arg(it, 0));
  if (!is(n, k.call) || ctx.model.callee_leaf(n) != "len") return false;
  auto name = dotted_name(unparenthesize(positional_arg(n, 0)), ctx.source);
  return name && names::names_a_model_collection(names::lower(names::last_segment(*name)));
}

// `for agent in range(self.n_agents): ... self.critic_optimizer[agent].step()` (round 80:
// MADDPG's per-agent updates): every pass steps the optimizer its own variable selects from a
// collection, so the loop walks the collection's members, one update each, not the data. The
// collection is known for optimizers by its name (its binding is a list or a comprehension,
// whose elements the module model does not classify): a naming step, which only quiets a
// finding.
bool steps_member_by_loop_variable(const RuleContext& ctx, TSNode loop) {
  const Kinds& k = kinds();
  if (!is(loop, k.for_statement)) return false;
  TSNode var = field(loop, k.f_left);
  if (!is(var, k.identifier)) return false;
  std::string_view v = text_of(var, ctx.source);
  bool found = false;
  ctx.model.for_each_call_in(field(loop, k.f_body), [&](TSNode call) {
    if (found || ctx.model.callee_leaf(call) != "step") return;
    TSNode callee = field(call, k.f_function);
    if (!is(callee, k.attribute)) return;
    TSNode member = unparenthesize(field(callee, k.f_object));
    if (!is(member, k.subscript)) return;
    TSNode index = unparenthesize(field(member, k.f_subscript));
    auto collection = dotted_name(field(member, k.f_value), ctx.source);
    found = is(index, k.identifier) && text_of(index, ctx.source) == v && collection &&
            names::is_optimizer_receiver_name(names::lower(names::last_segment(*collection)));
  });
  return found;
}

// Every loop the holder outlives walks a fixed collection (`self.optimizers.items()`, the
// indices of `netsD`), each pass training one of its members, and the holder is made anew by
// each call (a local) or each pass of an enclosing loop: it keeps one consumed value per
// entry, as many as the code names, whatever the data (round 66: AttnGAN's `errD_total` over
// its discriminators, VQ-Diffusion's per-optimizer loss dict; TG001-NX64). The first loop, or null.
TSNode one_value_per_member(const RuleContext& ctx, const Candidate& c) {
  if (c.outlived.empty() || c.holder.find('.') != std::string::npos) return TSNode{};
  for (TSNode loop : c.outlived)
    if (!walks_entries(ctx, loop) && !walks_model_indices(ctx, loop) && !steps_member_by_loop_variable(ctx, loop))
      return TSNode{};
  if (!local_owner(ctx, c) && !rebound_before_its_loops(ctx, c)) return TSNode{};
  return c.outlived.front();
}

// After a backward consumed the graph, a stored tensor pins only bookkeeping, and it grows
// only while the holder lives: a holder local to its function, neither passed in nor
// returned, that outlives no training loop is freed with the call (TG001-NX39, round 10:
// apex's transducer reference packs slices of its output into a list for `torch.cat`).
const FunctionInfo* bounded_by_the_call(const RuleContext& ctx, const Candidate& c) {
  const FunctionInfo* f = local_owner(ctx, c);
  if (!f || holder_life(ctx, c) != HolderLife::Seen) return nullptr;
  for (TSNode loop : c.outlived)
    if (trains(ctx, loop, c.scope)) return nullptr;
  return f;
}

std::string store_text(const Candidate& c) {
  switch (c.kind) {
    case StoreKind::Append: return "`" + c.holder + "." + c.method + "(...)`";
    case StoreKind::Augmented: return "`" + c.holder + " += ...`";
    case StoreKind::Subscript: return "`" + c.holder + "[...] = ...`";
  }
  return {};
}

// `stored` as the receiver of a method call: `loss * 2` needs parentheses before `.item()`.
std::string hint_for(const Candidate& c, std::string_view stored, bool primary, bool tensor) {
  std::string s = primary ? std::string(stored) : "(" + std::string(stored) + ")";
  if (!tensor)
    return "Store plain numbers (`.item()`) or detached tensors (`.detach()`) taken from " +
           quote_code(std::string(stored)) + ", not the value itself: it holds tensors that still carry a graph.";
  if (c.kind == StoreKind::Augmented)
    return "Accumulate a Python number instead: `" + c.holder + " += " + s + ".item()`.";
  return "Store `" + s + ".item()` if only the number matters, or `" + s +
         ".detach()` if a tensor is needed.";
}

bool container_written_between(const RuleContext& ctx, TSNode stored, TSNode backward);

// `loss.backward(); losses.append(loss)`, `accelerator.backward(loss)`,
// `scaler.scale(loss).backward()`: the stored expression is what the backward ran over, so it
// is a tensor whatever produced it. A value that only shares its graph with the backwarded
// one (`output` of `loss = output[0]`) may be a tuple or a dict (round 11: DeBERTa).
bool backwarded_itself(const RuleContext& ctx, TSNode stored, TSNode backward) {
  if (is_null(backward)) return false;
  const Kinds& k = kinds();

  std::string_view want = text_of(unparenthesize(stored), ctx.source);
  TSNode callee = field(backward, k.f_function);
  if (!is(callee, k.attribute)) return false;
  TSNode recv = unparenthesize(field(callee, k.f_object));
  if (is(recv, k.call) && ctx.model.callee_leaf(recv) == "scale") recv = positional_arg(recv, 0);
  // `loss.backward(context_id)`: a distributed-autograd RRef has `.backward(context_id)` too
  // (round 14: fairscale's RPC pipeline tests); only `x.backward()` without a positional
  // argument shows that `x` is a tensor.
  bool same = !is_null(recv) && text_of(unparenthesize(recv), ctx.source) == want;
  if (same && !is_null(positional_arg(backward, 0))) return false;
  TSNode arg = positional_arg(backward, 0);
  same = same || (!is_null(arg) && text_of(unparenthesize(arg), ctx.source) == want);
  return same && !container_written_between(ctx, unparenthesize(stored), backward);
}

// `loss_dict['loss'].backward()` ... `for key, value in loss_dict.items(): loss_dict[key] =
// value.item()` ... `train_loss += loss_dict['loss']` (round 58: a text-detection trainer;
// the `.detach()` offered as safe raised AttributeError): between the backward and the store,
// the entry's container was written (a subscript store, a rebinding, `update` / `setdefault`
// / `pop` / `clear`), so the backward no longer shows what the entry holds.
bool container_written_between(const RuleContext& ctx, TSNode stored, TSNode backward) {
  const Kinds& k = kinds();
  if (!is(stored, k.subscript)) return false;
  TSNode base = unparenthesize(field(stored, k.f_value));
  while (is(base, k.subscript)) base = unparenthesize(field(base, k.f_value));
  std::string_view container = text_of(base, ctx.source);
  uint32_t from = ts_node_end_byte(backward), to = ts_node_start_byte(stored);
  if (from >= to) return false;  // the store comes first: the backward runs over what was stored
  // A store under another string key (`loss_dict['lr'] = lr`) leaves the entry alone.
  TSNode own_key = unparenthesize(field(stored, k.f_subscript));
  auto writes = [&](TSNode target) {
    target = unparenthesize(target);
    if (is(target, k.subscript) && text_of(unparenthesize(field(target, k.f_value)), ctx.source) == container) {
      TSNode key = unparenthesize(field(target, k.f_subscript));
      if (is(key, k.string) && is(own_key, k.string) && string_content(key, ctx.source) != string_content(own_key, ctx.source))
        return false;
    }
    while (is(target, k.subscript)) target = unparenthesize(field(target, k.f_value));
    return text_of(target, ctx.source) == container;
  };
  bool written = false;
  auto visit = [&](auto&& self, TSNode n) -> void {
    if (written || ts_node_end_byte(n) <= from || ts_node_start_byte(n) >= to) return;
    if (is(n, k.assignment) || is(n, k.augmented_assignment)) {
      TSNode left = field(n, k.f_left);
      bool hit = writes(left);
      if (is(left, k.pattern_list) || is(left, k.tuple_pattern) || is(left, k.list_pattern))
        for_each_named_child(left, [&](TSNode el) { hit = hit || writes(el); });
      if (hit && ts_node_start_byte(n) >= from) written = true;
    } else if (is(n, k.call) && is(field(n, k.f_function), k.attribute) && ts_node_start_byte(n) >= from) {
      std::string_view leaf = ctx.model.callee_leaf(n);
      if ((leaf == "update" || leaf == "setdefault" || leaf == "pop" || leaf == "clear" || leaf == "__setitem__") &&
          text_of(unparenthesize(field(field(n, k.f_function), k.f_object)), ctx.source) == container)
        written = true;
    }
    for_each_named_child(n, [&](TSNode c) { self(self, c); });
  };
  visit(visit, ctx.root);
  return written;
}

// `.detach()` on the stored value; inside a tuple/list/dict literal, on each element that
// carries a graph (a container has no `.detach()`, TG001-P14). Safe only when every edited
// expression is a proven tensor and `unsafe_because` is empty (no caller, and no callee it is
// handed to, can still need the stored copy's gradient); an element that may not be a tensor at
// all gets no fix. When the backward ran over the stored value itself, how it was built no
// longer matters: it is a tensor.
std::optional<Fix> detach_fix(const RuleContext& ctx, TSNode stored, const std::string& unsafe_because,
                              bool consumed) {
  const Kinds& k = kinds();
  TSNode e = unparenthesize(stored);
  Fix fix{"add .detach()", FixSafety::Safe, {}};
  bool proven_tensors = true;
  auto add = [&](TSNode el, const Value& v) {
    if (v.type != Type::Tensor && v.type != Type::Tensors) return false;
    proven_tensors = proven_tensors && ((v.tensor() && v.proven()) || consumed);
    fix.edits.push_back(append_method(el, ".detach()", ctx.source));
    return true;
  };
  TSSymbol s = sym(e);
  if (s == k.tuple || s == k.list || s == k.dictionary || s == k.set) {
    uint32_t n = ts_node_named_child_count(e);
    for (uint32_t i = 0; i < n; ++i) {
      TSNode el = ts_node_named_child(e, i);
      if (is(el, k.pair)) el = field(el, k.f_value);
      const Value* v = ctx.provenance.value_of(el);
      if (!v || !v->has_graph()) continue;
      if (!add(el, *v)) return std::nullopt;  // a nested container or an unknown object
    }
    if (fix.edits.empty()) return std::nullopt;
    fix.description = "add .detach() to the stored tensor";
  } else {
    const Value* v = ctx.provenance.value_of(stored);
    if (!v || !add(stored, *v)) return std::nullopt;  // `.detach()` exists only on tensors
  }
  if (!proven_tensors) {
    fix.safety = FixSafety::Unsafe;
    fix.description += " (the value is not proven a tensor)";
  } else if (!unsafe_because.empty()) {
    fix.safety = FixSafety::Unsafe;
    fix.description += " (" + unsafe_because + ")";
  }
  return fix;
}

std::optional<Fix> item_fix(const RuleContext& ctx, TSNode stored) {
  const Kinds& k = kinds();
  TSSymbol s = sym(unparenthesize(stored));
  const Value* v = ctx.provenance.value_of(stored);
  if (s == k.tuple || s == k.list || s == k.dictionary || s == k.set || !v || !v->tensor())
    return std::nullopt;
  // Unsafe: `.item()` turns a tensor into a Python number on the host (type and device
  // change), and fails on a tensor with more than one element.
  return Fix{"store a Python number with .item()", FixSafety::Unsafe,
             {append_method(stored, ".item()", ctx.source)}};
}

// The anchor of a parenthesised tuple is its elements: `(step, loss)` -> `step, loss`.
ByteRange anchor_range(TSNode stored, std::string_view src) {
  ByteRange r = range_of(stored);
  if (is(stored, kinds().tuple) && r.end - r.begin >= 2 && src[r.begin] == '(' && src[r.end - 1] == ')')
    return {r.begin + 1, r.end - 1};
  return r;
}

// `running = running + loss ... if step % n == 0: running = 0`: an assignment to the holder
// after the store, inside the loop (null when none).
TSNode later_reset(const RuleContext& ctx, const Candidate& c) {
  if (is_null(c.loop) || c.holder.find('.') != std::string::npos) return TSNode{};
  TSNode found{};
  std::vector<TSNode> todo{field(c.loop, kinds().f_body)};
  while (!todo.empty() && is_null(found)) {
    TSNode n = todo.back();
    todo.pop_back();
    if (is(n, kinds().function_definition) || is(n, kinds().class_definition) || is(n, kinds().lambda)) continue;
    if (is(n, kinds().assignment) && ts_node_start_byte(n) > ts_node_end_byte(c.store) &&
        is_name(field(n, kinds().f_left), c.holder, ctx.source))
      found = n;
    for_each_named_child(n, [&](TSNode ch) { todo.push_back(ch); });
  }
  return found;
}

// True when `n` runs on every pass of `loop` (no branch, nested loop or handler between).
bool every_pass(const analysis::ModuleModel& model, TSNode n, TSNode loop) {
  const Kinds& k = kinds();
  for (TSNode a = model.parent(n); !is_null(a) && !ts_node_eq(a, loop); a = model.parent(a)) {
    TSSymbol s = sym(a);
    if (s == k.if_statement || s == k.elif_clause || s == k.else_clause || s == k.for_statement ||
        s == k.while_statement || s == k.try_statement || s == k.conditional_expression)
      return false;
  }
  return true;
}

// The last return of the routine enclosing `scope` when every return hands back host data
// only: each value (or each element of a returned tuple) is proven a NumPy array (a count or
// a float says nothing about what the routine is for). Null otherwise, or when the routine
// returns nothing.
TSNode host_only_return(const RuleContext& ctx, int scope) {
  const Kinds& k = kinds();
  int f = ctx.model.enclosing_function(scope);
  if (f < 0 || ctx.model.functions()[f].returns.empty()) return TSNode{};
  auto host = [&](TSNode e) {
    const Value* v = ctx.provenance.value_of(e);
    return v && !v->has_graph() && v->type == Type::Array;
  };
  TSNode last{};
  for (TSNode ret : ctx.model.functions()[f].returns) {
    TSNode value = unparenthesize(ts_node_named_child(ret, 0));
    if (is_null(value)) return TSNode{};
    if (is(value, k.expression_list) || is(value, k.tuple)) {
      for (TSNode el : named_children(value))
        if (!host(el)) return TSNode{};
    } else if (!host(value)) {
      return TSNode{};
    }
    last = ret;
  }
  return last;
}

// `reset`: the holder's later_reset (null when none), found once by the caller. `callers`:
// how the callers of the store's routine run it, when that decides the error (null otherwise).
// `handed`: an unseen callee handed the holder after the store (null when none).
Finding make_finding(const RuleContext& ctx, const Candidate& c, TSNode backward, TSNode reset,
                     const CallerVerdict* callers, TSNode handed) {
  const Value* v = ctx.provenance.value_of(c.stored);
  bool consumed = !is_null(backward) || (v && v->consumed);
  bool proven = v && v->proven();
  HolderLife life = holder_life(ctx, c);
  Finding f;
  f.code = "TG001";
  f.range = anchor_range(c.stored, ctx.source);
  std::string stored = std::string(text_of(c.stored, ctx.source));
  std::string shown = quote_code(stored);
  if (consumed) {
    f.severity = Severity::Warning;
    // The graph rests on a guess (an element of a result this file does not show) and the
    // value is not even named like a loss: a per-channel score or an accuracy handed back
    // beside the loss is usually a number (round 94: MedicalZooPytorch's `per_ch_score`; the
    // guessed elements read true in rounds 53-85 were all losses). A note (naming heuristic).
    if (v && v->weak_is_guessed_element() && !names::contains(names::lower(root_name(stored)), "loss"))
      f.severity = Severity::Note;
    f.category = Category::PerformanceWarn;
    f.message = store_text(c) + " keeps " + shown +
                " after a backward has consumed its graph: the activations are freed, but every "
                "stored tensor still pins its graph's bookkeeping and stays differentiable, so "
                "memory grows with every iteration.";
  } else {
    // A graph shown only by a name or a guess is a note: on code nobody tuned for, such
    // findings were mostly wrong (docs/real-code-precision.md, rounds 3 and 4).
    f.severity = !proven ? Severity::Note : life == HolderLife::Seen ? Severity::Error : Severity::Warning;
    // Autograd being on where the routine runs rests on its callers (TG001-NX40, round 11:
    // LAVIS' retrieval scoring, run by an evaluation loop under no_grad in another file).
    if (callers && callers->grad != CallerGrad::Grad && f.severity == Severity::Error)
      f.severity = Severity::Warning;
    // A routine that hands back only NumPy arrays (`.cpu().numpy()`) is an inference
    // routine: no caller can backward through it, and callers unseen here usually run it
    // under no_grad (round 11: LAVIS' compute_sim_matrix). The caller step is weaker still.
    if (callers && callers->grad == CallerGrad::Unknown && f.severity == Severity::Warning)
      if (TSNode host = host_only_return(ctx, c.scope); !is_null(host)) {
        f.severity = Severity::Note;
        f.evidence.push_back({range_of(host), quote_code(text_of(host, ctx.source)) +
                                                  " hands back host data only: an inference routine, which its "
                                                  "callers likely run under no_grad (weak step: a note)"});
      }
    f.category = Category::CriticalOom;
    f.message = store_text(c) + " keeps " + shown +
                " with its autograd graph attached, and no backward ever consumes it: every "
                "intermediate activation behind it stays on the device, and one more graph "
                "accumulates per " + std::string(c.in_loop ? "iteration" : "call") +
                " until memory runs out.";
  }
  bool short_text = stored.size() <= 40;
  f.hint = hint_for(c, short_text ? stored : "value", !short_text || is_primary_expression(c.stored),
                    v && v->tensor());
  if (v) f.evidence = evidence_steps(v->why, 5);
  std::string why_persist = c.in_loop
                                ? "`" + c.holder + "` is not rebound inside the loop, so it outlives every iteration"
                                : "`" + c.holder + "` is instance state, so it outlives this call";
  if (!is_null(reset))
    why_persist = "`" + c.holder + "` is reset later in the loop (" + quote_code(text_of(reset, ctx.source)) +
                  ") only on some iterations, so it keeps every graph stored in between";
  f.evidence.push_back({range_of(c.holder_node), why_persist});
  if (!is_null(backward))
    f.evidence.push_back({range_of(backward), quote_code(text_of(backward, ctx.source)) +
                                                  " consumes this graph in the same iteration"});
  else if (consumed)
    f.evidence.push_back({v->consumed->range, v->consumed->message + " before it is stored"});
  else
    f.evidence.push_back({range_of(c.store), "no `.backward()` and no differentiable return reads `" +
                                                 c.holder + "`"});
  if (!is_null(handed)) {
    // "Nothing consumes it" rests on a callee this file does not show: a warning at most.
    if (f.severity == Severity::Error) f.severity = Severity::Warning;
    f.evidence.push_back({range_of(handed), quote_code(text_of(handed, ctx.source)) +
                                                " receives `" + c.holder +
                                                "`: a callee not defined here, which may differentiate it (unknown callee: at most a warning)"});
  }
  if (!c.object_class.empty()) {
    // The store itself is not proven: a method of a class this file does not show.
    f.severity = Severity::Note;
    f.evidence.push_back({range_of(c.holder_node),
                          "`" + c.holder + "` is an instance of `" + c.object_class + "`, which is not defined here: whether `." +
                              c.method + "()` keeps the value is not seen (an unknown callee)"});
  }
  if (v && v->naming_only)
    f.evidence.push_back({range_of(c.stored), "the graph is inferred from a name alone (naming heuristic)"});
  else if (v && v->weak)
    f.evidence.push_back({v->weak->range, "a step rests on a heuristic, not a binding: " + v->weak->message});
  if (consumed && v && v->weak_is_guessed_element() && f.severity == Severity::Note)
    f.evidence.push_back({range_of(c.stored), quote_code(root_name(stored)) +
                                                  " is not named like a loss: that it carries a graph at all is a "
                                                  "guess (naming heuristic; a note)"});
  if (callers && !consumed) {
    if (callers->grad == CallerGrad::Grad)
      f.evidence.push_back({range_of(callers->witness), quote_code(text_of(callers->witness, ctx.source)) +
                                                            " runs it with autograd on"});
    else if (!is_null(callers->witness))
      f.evidence.push_back({range_of(callers->witness), callers->why + " (weak step: at most a warning)"});
  }
  if (life == HolderLife::Escapes && !consumed) {  // a consumed graph cannot be backwarded again
    bool passed_in = ctx.model.parameter(root_of(c.holder), c.scope) != nullptr;
    f.evidence.push_back({range_of(c.holder_node),
                          "`" + std::string(root_of(c.holder)) + "` is " +
                              (passed_in ? "passed in by" : "returned to") +
                              " the caller, which may still backward through it or free it (not seen here)"});
  }
  std::string unsafe_because = !(consumed || life == HolderLife::Seen) ? "a caller may still need its gradient"
                               : !is_null(handed)                     ? "the callee it is handed to may need its gradient"
                                                                      : "";
  if (auto fix = detach_fix(ctx, c.stored, unsafe_because, backwarded_itself(ctx, c.stored, backward))) {
    if (!c.object_class.empty() && fix->safety == FixSafety::Safe) {
      fix->safety = FixSafety::Unsafe;
      fix->description += " (what `" + c.method + "()` does with it is not seen)";
    }
    f.fixes.push_back(std::move(*fix));
  }
  if (auto fix = item_fix(ctx, c.stored)) f.fixes.push_back(std::move(*fix));
  return f;
}

// `loss.backward(); loss = loss.detach(); losses.append(loss)`: the stored name is rebound on
// every path from the backward to the store (a statement after the backward in its own block
// or an enclosing one, up to the store's region), so what is stored is not the graph that
// backward consumed.
bool rebound_after(const RuleContext& ctx, TSNode stored, TSNode backward, TSNode store, ByteRange region) {
  const Kinds& k = kinds();
  TSNode name = unparenthesize(stored);
  if (!is(name, k.identifier)) return false;
  std::string_view text = text_of(name, ctx.source);
  uint32_t until = ts_node_start_byte(store);
  for (TSNode n = backward; !is_null(n); n = ctx.model.parent(n)) {
    if (ts_node_start_byte(n) < region.begin || ts_node_end_byte(n) > region.end) return false;
    if (is(n, k.function_definition) || is(n, k.lambda)) return false;
    if (!is(ctx.model.parent(n), k.block)) continue;
    for (TSNode s = ts_node_next_named_sibling(n); !is_null(s) && ts_node_start_byte(s) < until;
         s = ts_node_next_named_sibling(s)) {
      TSNode a = is(s, k.expression_statement) ? ts_node_named_child(s, 0) : TSNode{};
      if (!is_null(a) && is(a, k.assignment) && is_name(field(a, k.f_left), text, ctx.source)) return true;
    }
  }
  return false;
}

bool keeps_graph(TSNode backward, std::string_view src) {
  for (std::string_view kw : {"create_graph", "retain_graph"})
    if (TSNode v = keyword_arg(backward, kw, src); !is_null(v) && is(unparenthesize(v), kinds().true_)) return true;
  return false;
}

void Check::finish(std::vector<Finding>& out) {
  const Reachability& reach = ctx.reachability;
  std::unordered_set<std::string> container_holders;
  for (const Candidate& c : found)
    if (c.kind != StoreKind::Augmented) container_holders.insert(reach.key(c.holder, c.scope));
  for (const Candidate& c : found) {
    TSNode backward = reach.backward_needing(c.region, c.scope, reach.reads(c.stored, c.scope));
    if (!is_null(backward) && rebound_after(ctx, c.stored, backward, c.store, c.region)) backward = TSNode{};
    // `autograd.grad(..., create_graph=True)` / `.backward(retain_graph=True)` keeps the graph
    // it differentiates: nothing is consumed (round 30: a Jacobian trace summed over input
    // dimensions and returned for the loss to differentiate).
    if (!is_null(backward) && keeps_graph(backward, ctx.source)) backward = TSNode{};
    const Value* v = ctx.provenance.value_of(c.stored);
    bool consumed = !is_null(backward) || (v && v->consumed);
    std::string holder_key = reach.key(c.holder, c.scope);
    bool load_bearing = reach.load_bearing(holder_key, container_holders, !consumed);
    if (holder_key.starts_with("0:") && ctx.model.enclosing_function(c.scope) >= 0)
      module_holders_.push_back({c.holder, c.store, load_bearing, reach.backward_reaching(holder_key)});
    if (load_bearing) continue;
    if (TSNode context = is_null(backward) ? TSNode{} : distributed_autograd_context(ctx.model, backward);
        !is_null(context)) {
      stay_silent("TG001", c.stored,
                  "distributed autograd: " + quote_code(text_of(backward, ctx.source)) +
                      " is an RRef's backward in its own context, so what is stored is a remote reference, not a "
                      "local graph",
                  {{range_of(context), quote_code(text_of(context, ctx.source)) + " opens the context"}});
      continue;
    }
    TSNode reset = later_reset(ctx, c);
    if (!is_null(reset) && every_pass(ctx.model, reset, c.loop)) {
      stay_silent("TG001", c.stored,
                  "`" + c.holder + "` is reset later in every pass (" + quote_code(text_of(reset, ctx.source)) +
                      "): it holds one pass's values at a time, nothing accumulates",
                  {{range_of(reset), "reset on every pass"}});
      continue;
    }
    if (!is_null(c.constant_key)) {
      stay_silent("TG001", c.stored,
                  "the key " + quote_code(text_of(c.constant_key, ctx.source)) +
                      " is a constant: each pass replaces what the last one stored there, so at most "
                      "one pass's graph is held and nothing accumulates",
                  {{range_of(c.constant_key), "the same slot of `" + c.holder + "` on every pass"}});
      continue;
    }
    if (const FunctionInfo* owner = filled_over_structure(ctx, c)) {
      stay_silent("TG001", c.stored,
                  "loop over entries: `" + c.holder + "` is local to `" + owner->name +
                      "` and filled by a loop over a container's entries, parameters or submodules, "
                      "not over data: it holds one value per entry per call, and the next call builds a new one",
                  {{range_of(c.outlived.front()), "the loop `" + c.holder + "` outlives walks entries"}});
      continue;
    }
    if (TSNode key = slot_per_entry(ctx, c); !is_null(key)) {
      stay_silent("TG001", c.stored,
                  "one slot per entry: the key " + quote_code(text_of(key, ctx.source)) + " is built from the "
                      "variable of a loop over a container's entries, which trains nothing, so each pass writes "
                      "its own entry's slot and the next call overwrites the same slots",
                  {{range_of(c.outlived.back()), "the loop walks entries, not data"}});
      continue;
    }
    if (TSNode loop = consumed ? one_value_per_member(ctx, c) : TSNode{}; !is_null(loop)) {
      TSNode head = field(loop, k.f_right);
      stay_silent("TG001", c.stored,
                  "one value per member: every loop `" + c.holder + "` outlives walks a fixed collection (" +
                      quote_code(text_of(head, ctx.source)) + "), each pass backwarding its own loss, and `" +
                      c.holder + "` is made anew by every call or pass: it holds one consumed value per "
                      "member, not one per batch",
                  {{range_of(head), "as many passes as the collection has members, whatever the data"}});
      continue;
    }
    if (const FunctionInfo* owner = consumed ? bounded_by_the_call(ctx, c) : nullptr) {
      stay_silent("TG001", c.stored,
                  "per-call after the backward: `" + c.holder + "` is local to `" + owner->name +
                      "` and no loop it outlives trains, so what it keeps is freed when the call returns");
      continue;
    }
    if (TSNode emptied = reset_per_call(ctx, c); !is_null(emptied)) {
      stay_silent("TG001", c.stored,
                  "reset every call: " + quote_code(text_of(emptied, ctx.source)) +
                      " empties it at the start of the routine, which does not train, so it holds one "
                      "call's values at most and the next call replaces them",
                  {{range_of(emptied), "empties `" + c.holder + "` before it is filled"}});
      continue;
    }
    if (const FunctionInfo* owner = per_call_owner(ctx, c)) {
      stay_silent("TG001", c.stored,
                  "per-call container: `" + c.holder + "` is local to `" + owner->name +
                      "`, which has no backward and returns a graph to its caller; the loop is not a training loop");
      continue;
    }
    if (consumed && within_one_step(ctx, c)) {
      stay_silent("TG001", c.stored,
                  "within one optimizer step: `" + c.holder + "` is local to `" + function_at(ctx, c.scope)->name +
                      "` and no loop it outlives steps an optimizer, so it collects one step's micro-batches "
                      "(their graphs already consumed) and dies with the call");
      continue;
    }
    if (TSNode view = consumed ? TSNode{} : views_only(ctx, c); !is_null(view)) {
      stay_silent("TG001", c.stored,
                  "views of graphs made before the loop: every value in the loops `" + c.holder +
                      "` outlives that carries a graph is an index or slice of a tensor made before them, so "
                      "each pass stores a view into a graph that exists once, not a new graph",
                  {{range_of(view), quote_code(text_of(view, ctx.source)) + " indexes a tensor made before the loop"}});
      continue;
    }
    TSNode handed = consumed ? TSNode{} : handed_to_unseen_callee(ctx, c);
    if (!is_null(handed) && summed_per_pass(ctx, c)) {
      stay_silent("TG001", c.stored,
                  "summed per pass: `" + c.holder + "` is rebound at the start of every pass of the enclosing loop, "
                      "the loop it outlives does not train, and the total is handed to " +
                      quote_code(text_of(handed, ctx.source)) + ", which this file does not show and may differentiate it",
                  {{range_of(handed), quote_code(text_of(handed, ctx.source)) + " receives the total"}});
      continue;
    }
    if (per_pass_of_enclosing_loop(ctx, c)) {
      stay_silent("TG001", c.stored,
                  "one pass's holder: `" + c.holder + "` is rebound at the start of every pass of an enclosing "
                      "loop, and the loop it outlives neither trains nor runs over a loader's batches, so each pass "
                      "drops the last pass's values",
                  {{range_of(c.outlived.front()), "the loop `" + c.holder + "` outlives does not train"}});
      continue;
    }
    const CallerVerdict* callers = nullptr;
    CallerVerdict verdict;
    if (int f = ctx.model.enclosing_function(c.scope); f >= 0 && !consumed && !ctx.model.functions()[f].calls_backward) {
      verdict = callers_.verdict(f);
      if (verdict.grad == CallerGrad::NoGrad) {
        stay_silent("TG001", c.stored,
                    callers_.no_grad_callers(verdict) + " runs `" + ctx.model.functions()[f].name +
                        "()` under no_grad / inference_mode: the stored values carry no graph",
                    callers_.no_grad_evidence(f, verdict));
        continue;
      }
      callers = &verdict;
    }
    out.push_back(make_finding(ctx, c, backward, reset, callers, handed));
  }
}

}  // namespace

std::unique_ptr<RuleCheck> make_tg001(const RuleContext& ctx) { return std::make_unique<Check>(ctx); }

}  // namespace preflight::rules
